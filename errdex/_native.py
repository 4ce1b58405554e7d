"""errdex's compiled modules: which they are, and whether this process runs them.

The modules of the two hot paths, mining Python and explain, are compiled with mypyc when
errdex is installed (``setup.py``). The compiled and the pure modules give the same results;
the compiled ones are faster (figures in the README). Installing with ``ERRDEX_PURE=1`` skips
the compile, and a compile that fails leaves errdex pure, with a warning.

Compiled code holds what the build knew: its own source, and the types of every errdex module
it imports. So the build writes the digest of *every* source of the package to
:data:`MANIFEST`, and the compiled modules run only while all of them match the sources, and
no other errdex module is an extension (one left from an older build). Otherwise, or when
``ERRDEX_PURE=1`` is set when errdex is imported, every errdex module that has an extension
is loaded from its ``.py`` instead: compiled modules call each other directly, so it is all of
them or none.

This module is imported first (``errdex/__init__.py``). It uses the standard library only, and
does nothing when loaded under another name: ``setup.py`` loads it on its own, before errdex is
installed, for :data:`COMPILED` and :func:`manifest`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from pathlib import Path
from types import ModuleType

COMPILED = (
    "errdex.analyze.classify",
    "errdex.analyze.nodes",
    "errdex.analyze.templates",
    "errdex.extract.python",
    "errdex.match.compile",
    "errdex.match.explain",
    "errdex.match.index",
    "errdex.match.interpreter",
    "errdex.match.parse",
)
"""The modules compiled with mypyc (they call each other directly)."""

MANIFEST = "_native.json"
"""Written next to this module by the build: the digest of every source of the package."""

PURE_VARIABLE = "ERRDEX_PURE"
"""Set to 1 (at install or at import) to run every module from its source."""

ROOT = Path(__file__).resolve().parent

EXTENSION_SUFFIXES = tuple(importlib.machinery.EXTENSION_SUFFIXES)
"""The endings of this Python's extension modules (``.cpython-311-x86_64-linux-gnu.so``)."""

_MYPYC_LIBRARY = "__mypyc"
"""How the name of a module's mypyc library ends (``index__mypyc.cpython-311-….so``)."""


def source_path(module: str, root: Path = ROOT) -> Path:
    """Return the ``.py`` file of a module (``errdex.match.index`` → …/match/index.py)."""
    return root.joinpath(*module.split(".")[1:]).with_suffix(".py")


def extension_source(origin: str) -> Path:
    """Return the ``.py`` next to an extension module (``index.cpython-311-….so`` → index.py)."""
    path = Path(origin)
    return path.with_name(path.name.split(".", 1)[0] + ".py")


def _package_files(root: Path) -> tuple[dict[str, Path], set[str]]:
    """The package's sources (by path relative to it) and the modules that are extensions."""
    sources: dict[str, Path] = {}
    extensions: set[str] = set()
    for folder, directories, names in os.walk(root):
        directories[:] = sorted(d for d in directories if d != "__pycache__")
        relative = Path(folder).relative_to(root)
        for name in names:
            if name.endswith(".py"):
                sources[(relative / name).as_posix()] = Path(folder, name)
            elif name.endswith(EXTENSION_SUFFIXES):
                stem = name.split(".", 1)[0]
                if not stem.endswith(_MYPYC_LIBRARY):
                    extensions.add(".".join(("errdex", *relative.parts, stem)))
    return sources, extensions


def _digests(sources: dict[str, Path]) -> dict[str, str]:
    return {
        name: hashlib.sha256(path.read_bytes()).hexdigest()
        for name, path in sorted(sources.items())
    }


def manifest(root: Path = ROOT) -> dict[str, str]:
    """Return what the build writes to :data:`MANIFEST`: every source's SHA-256."""
    return _digests(_package_files(root)[0])


def build_state(root: Path = ROOT) -> str:
    """What the build left, whatever ``ERRDEX_PURE`` says: ``compiled``, ``pure`` or ``stale``.

    ``pure``: no compiled module (never compiled, or a compile that failed); ``stale``: they
    are there, but a source changed since, or an extension is not one of :data:`COMPILED`.
    """
    return _state(root, *_package_files(root))


def _state(root: Path, sources: dict[str, Path], extensions: set[str]) -> str:
    if not extensions.issuperset(COMPILED):
        return "pure"
    try:
        built = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "pure"  # a build that did not finish: its manifest is written last
    if extensions != set(COMPILED) or built != _digests(sources):
        return "stale"
    return "compiled"


class _SourceFinder(MetaPathFinder):
    """Loads an errdex module that has an extension from its ``.py`` file instead."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("errdex.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return None  # a source (or a zip's) module: found as usual
        source = extension_source(str(spec.origin))
        return importlib.util.spec_from_file_location(fullname, source) if source.exists() else None


MODE = "pure"
"""``compiled`` when the compiled modules run; else why not: ``pure`` (none were built),
``stale`` (a source changed since the build) or ``disabled`` (``ERRDEX_PURE=1``)."""

if __name__ == "errdex._native":
    _sources, _extensions = _package_files(ROOT)
    if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
        MODE = "disabled"
    else:
        MODE = _state(ROOT, _sources, _extensions)
    if (
        MODE != "compiled"
        and _extensions  # else nothing to keep from running
        and not any(isinstance(f, _SourceFinder) for f in sys.meta_path)
    ):
        sys.meta_path.insert(0, _SourceFinder())
