"""Build errdex, compiling its hot modules with mypyc (the project's metadata is pyproject.toml).

The modules ``errdex/_native.py`` lists are compiled into extension modules next to their
sources, and the digest of every source of the package is written to ``errdex/_native.json``:
errdex runs the compiled modules only while those digests match (an edited checkout runs its
sources). ``ERRDEX_PURE=1`` skips the compile (and needs no mypy); a compile that fails leaves
a pure install, with a warning.
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

MYPY = "mypy>=1.10"
"""mypyc's distribution (a build requirement only, unless ERRDEX_PURE=1)."""

BUILDING = {"bdist_wheel", "editable_wheel", "build", "build_ext", "develop", "install"}
"""The commands that compile: metadata and sdists need no mypyc run."""

INPLACE = {"editable_wheel", "develop"}
"""The commands that compile into the checkout itself."""


def _load_native() -> ModuleType:
    """errdex/_native.py on its own (errdex is not installed yet; it needs nothing else)."""
    spec = importlib.util.spec_from_file_location("errdex_native", ROOT / "errdex" / "_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


native = _load_native()
pure = os.environ.get(native.PURE_VARIABLE, "") not in ("", "0")
digests: dict[str, str] = {}
"""The sources' digests, taken before mypyc reads them (an edit during the build is stale)."""


def _warn(message: str) -> None:
    sys.stderr.write(f"errdex: {message}; errdex is installed without its compiled modules\n")


def _clear_inplace_build() -> None:
    """Remove what an earlier build compiled into the checkout (a module since dropped, too)."""
    package = ROOT / "errdex"
    (package / native.MANIFEST).unlink(missing_ok=True)
    for path in package.rglob("*"):
        if path.name.endswith(native.EXTENSION_SUFFIXES):
            path.unlink()


def _ext_modules() -> list[object]:
    if pure and INPLACE.intersection(sys.argv[1:]):
        _clear_inplace_build()  # an editable install asked to be pure is pure
    if pure or not BUILDING.intersection(sys.argv[1:]):
        return []
    digests.update(native.manifest(ROOT / "errdex"))
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
        inplace = self.inplace or getattr(self, "editable_mode", False)
        if inplace:
            _clear_inplace_build()
        try:
            super().run()
        except Exception as exc:  # no C compiler, or one that fails: stay pure
            _warn(f"the compiled modules did not build ({exc})")
            return
        package = (ROOT if inplace else Path(self.build_lib)) / "errdex"
        # The sources the package holds (a wheel leaves out what is not part of it).
        shipped = {name: digest for name, digest in digests.items() if (package / name).exists()}
        (package / native.MANIFEST).write_text(json.dumps(shipped, indent=1), encoding="utf-8")


setup(
    ext_modules=_ext_modules(),
    # setuptools' build backend adds these to the build's requirements.
    setup_requires=[] if pure else [MYPY],
    cmdclass={"build_ext": BuildNative},
)
