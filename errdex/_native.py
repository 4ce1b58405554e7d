"""errdex's compiled modules: which they are, and whether this process runs them.

The modules of the two hot paths, mining Python and explain, are compiled with mypyc when
errdex is installed (``setup.py``). The compiled and the pure modules give the same results;
the compiled ones are faster (figures in the README). Installing with ``ERRDEX_PURE=1`` skips
the compile, and a compile that fails leaves errdex pure, with a warning.

A compiled module runs only while it was built from the very source next to it: the build
writes each source's digest to :data:`MANIFEST`, and when one differs (an edited checkout), or
``ERRDEX_PURE=1`` is set when errdex is imported, every compiled module is loaded from its
``.py`` instead. Compiled modules call each other directly, so it is all of them or none.

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
"""Written next to this module by the build: each compiled module's source digest."""

PURE_VARIABLE = "ERRDEX_PURE"
"""Set to 1 (at install or at import) to run every module from its source."""

ROOT = Path(__file__).resolve().parent


def source_path(module: str, root: Path = ROOT) -> Path:
    """Return the ``.py`` file of a compiled module (``errdex.match.index`` → …/match/index.py)."""
    return root.joinpath(*module.split(".")[1:]).with_suffix(".py")


def source_digest(path: Path) -> str:
    """Return the digest the manifest keeps of a source file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest(root: Path = ROOT) -> dict[str, str]:
    """Return what the build writes to :data:`MANIFEST`: each compiled module's digest."""
    return {module: source_digest(source_path(module, root)) for module in COMPILED}


def _is_extension(module: str) -> bool:
    spec = importlib.machinery.PathFinder.find_spec(
        module.rsplit(".", 1)[1], [str(source_path(module).parent)]
    )
    return spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)


def _mode() -> str:
    """Which modules this process runs: ``compiled``, ``pure``, ``stale`` or ``disabled``."""
    if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
        return "disabled"
    return build_state()


def build_state() -> str:
    """What the build left, whatever ``ERRDEX_PURE`` says: ``compiled``, ``pure`` or ``stale``."""
    try:
        built = json.loads((ROOT / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "pure"  # never compiled (ERRDEX_PURE=1 at install, or a compile that failed)
    if not all(_is_extension(module) for module in COMPILED):
        return "pure"
    try:
        current = manifest()
    except OSError:  # pragma: no cover - an install without its sources: trust the build
        return "compiled"
    return "compiled" if built == current else "stale"


class _SourceFinder(MetaPathFinder):
    """Loads the compiled modules from their ``.py`` files (ahead of the extension modules)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in COMPILED:
            return None
        return importlib.util.spec_from_file_location(fullname, source_path(fullname))


MODE = "pure"
"""``compiled`` when the compiled modules run; else why not: ``pure`` (none were built),
``stale`` (a source changed since the build) or ``disabled`` (``ERRDEX_PURE=1``)."""

if __name__ == "errdex._native":
    MODE = _mode()
    if MODE != "compiled" and not any(isinstance(f, _SourceFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder())
