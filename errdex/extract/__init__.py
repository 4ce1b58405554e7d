"""Extraction: source files → :class:`~errdex.models.RaiseSite` objects, one module per language.

Extraction runs in two steps so that it can be parallel and cached:

1. :meth:`Extractor.extract` reads one file and returns a :class:`~errdex.models.FileResult`
   (its sites, plus the facts other files may need: constants, exception classes, factories).
   It depends on that file alone, so it runs in worker processes and is cached by the file's
   content digest.
2. :meth:`Extractor.link` sees every result of a source at once and resolves what crosses
   files (an imported message constant, the default message of a project exception class).
"""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable, Sequence
from importlib.abc import InspectLoader
from importlib.machinery import ExtensionFileLoader
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version
from typing import Protocol, runtime_checkable

from errdex._native import extension_source
from errdex.extract.files import SourceFile
from errdex.models import FileResult, RaiseSite

try:
    errdex_version = distribution_version("errdex")
except PackageNotFoundError:  # pragma: no cover - run from a source tree
    errdex_version = "unknown"


class Extractor(Protocol):
    """Finds the error sites of files of one language.

    Attributes:
        language: The language name (``python``).
        suffixes: The file-name suffixes it reads.
        version: Changes whenever its output for the same file changes (invalidates caches).
    """

    language: str
    suffixes: tuple[str, ...]
    version: str

    def extract(self, file: SourceFile) -> FileResult:
        """Extract one file; raise ExtractionError when it cannot be read or parsed."""
        ...

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Resolve cross-file references of a whole source; return every site, in file order."""
        ...


@runtime_checkable
class ClassHierarchy(Protocol):
    """An extractor that also tells the exception classes a source defines (Python's)."""

    def hierarchy(self, results: Sequence[FileResult]) -> list[tuple[str, str, list[str]]]:
        """Return ``(name, module, ancestors nearest first)`` of each exception class."""
        ...


Finish = Callable[[Sequence[RaiseSite]], list[RaiseSite]]
"""Finishes linked sites, each on its own (see :class:`DeferredLink`)."""


@runtime_checkable
class DeferredLink(Protocol):
    """An extractor whose link can leave a last step of each site for later.

    A mining run builds records in forked processes: the step each site takes on its own
    runs there, on the sites each builds, instead of on all of them before the fork.
    """

    def link_deferred(self, results: Sequence[FileResult]) -> tuple[list[RaiseSite], Finish]:
        """Return the sites :meth:`Extractor.link` would, unfinished, and what finishes them."""
        ...


_SHARED_CODE = ("errdex.analyze.templates", "errdex.extract.treesitter", "errdex.models")
"""Modules every extractor's output depends on (see :func:`code_version`)."""


def code_version(base: str, module: str) -> str:
    """An extractor version that changes whenever the code its output depends on changes.

    The files cache keeps each file's extraction under its extractor's version: a version
    written by hand is easily left behind by a change (and a new errdex would then reuse what
    an older one extracted). This digest of the code's sources cannot be. The sources are
    read through the import system (a zipped errdex too), without importing anything.

    Args:
        base: The version written by hand (for a change of the cached format itself).
        module: The extractor's module (``__name__``); the shared modules are added.

    Returns:
        ``base`` and the first 12 hex digits of the sources' digest.
    """
    digest = hashlib.sha1(usedforsecurity=False)
    for name in (module, *_SHARED_CODE):
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        source = None
        if isinstance(loader, InspectLoader):
            try:
                source = loader.get_source(name)
            except (ImportError, OSError):  # pragma: no cover - a build without its sources
                source = None
        if source is None and isinstance(loader, ExtensionFileLoader) and spec is not None:
            source = compiled_source(str(spec.origin))  # the same digest compiled or not
        digest.update((source if source is not None else f"{name} {errdex_version}").encode())
    return f"{base}.{digest.hexdigest()[:12]}"


def compiled_source(origin: str) -> str | None:
    """The source of a module compiled with mypyc (``python.cpython-311-….so``), else None.

    errdex ships each compiled module's ``.py`` next to it (see ``errdex/_native.py``).
    """
    try:
        return extension_source(origin).read_text(encoding="utf-8")
    except OSError:  # pragma: no cover - a build without its sources
        return None


def blob_digest(data: bytes) -> str:
    """Return the git blob id of some bytes (so directory and git sources agree)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


LANGUAGES: tuple[str, ...] = ("python", "javascript", "typescript", "go", "rust", "java")
"""Every language errdex mines, as ``--language`` names them."""


def extractors(*, window: int, languages: Sequence[str] = ()) -> list[Extractor]:
    """Return an instance of every registered extractor (of the chosen languages).

    Args:
        window: Lines of source kept on each side of a site.
        languages: Names from :data:`LANGUAGES`; empty for all of them.
    """
    from errdex.extract.go import GoExtractor
    from errdex.extract.java import JavaExtractor
    from errdex.extract.javascript import JavaScriptExtractor, TypeScriptExtractor
    from errdex.extract.python import PythonExtractor
    from errdex.extract.rust import RustExtractor

    chosen: list[Extractor] = [
        PythonExtractor(window=window),
        GoExtractor(window=window),
        RustExtractor(window=window),
        JavaExtractor(window=window),
        JavaScriptExtractor(window=window),
        TypeScriptExtractor(window=window),
    ]
    return [e for e in chosen if not languages or e.language in languages]
