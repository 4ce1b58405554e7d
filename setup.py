"""Build errdex, compiling its hot modules with mypyc (the project's metadata is pyproject.toml).

The modules ``errdex/_native.py`` lists are compiled into extension modules next to their
sources, and each source's digest is written to ``errdex/_native.json``: errdex runs the
compiled modules only while those digests match (an edited checkout runs its sources).
``ERRDEX_PURE=1`` skips the compile; a compile that fails leaves a pure install, with a warning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def _load_native() -> ModuleType:
    """errdex/_native.py on its own (errdex is not installed yet; it needs nothing else)."""
    spec = importlib.util.spec_from_file_location("errdex_native", ROOT / "errdex" / "_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _load_native()


def _warn(message: str) -> None:
    sys.stderr.write(f"errdex: {message}; errdex is installed without its compiled modules\n")


def _ext_modules() -> list[object]:
    if os.environ.get(native.PURE_VARIABLE, "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify

        return list(
            mypycify(
                # Not the project's mypy settings (they check for Python 3.10, with pydantic's
                # plugin): compile for the running Python, with what the build has installed.
                ["--config-file=", "--ignore-missing-imports", "--follow-imports=silent"]
                + [str(native.source_path(module, Path("errdex"))) for module in native.COMPILED],
                opt_level="3",
                debug_level="0",
                separate=True,  # a library per module, next to it (its __file__ is right)
            )
        )
    except (Exception, SystemExit) as exc:  # no mypyc, or it cannot compile this Python
        _warn(f"mypyc did not compile ({exc})")
        return []


class BuildNative(build_ext):
    """Build the extension modules; on success, write the sources' digests next to them."""

    def finalize_options(self) -> None:
        """Build the modules in parallel (each is an extension of its own)."""
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        """Compile, then write the manifest; a failed compile leaves errdex pure."""
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as exc:  # no C compiler, or one that fails: stay pure
            _warn(f"the compiled modules did not build ({exc})")
            return
        inplace = self.inplace or getattr(self, "editable_mode", False)
        target = (ROOT if inplace else Path(self.build_lib)) / "errdex" / native.MANIFEST
        target.write_text(json.dumps(native.manifest(ROOT / "errdex"), indent=1), encoding="utf-8")


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": BuildNative})
