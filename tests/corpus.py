"""Real third-party code for tests: pinned PyPI wheels, downloaded once and cached.

The cache lives in ``$ERRDEX_TEST_CACHE`` or the user cache directory (``errdex-tests``), so
CI runs on the same machine reuse it. A failed download is a test *error* naming the package,
never a skip.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import platformdirs
import pytest


def cache_root() -> Path:
    root = os.environ.get("ERRDEX_TEST_CACHE") or platformdirs.user_cache_dir("errdex-tests")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def download_wheel(name: str, version: str) -> Path:
    """Download ``name==version``'s wheel (no dependencies) into the cache; return its path."""
    target = cache_root() / "wheels" / f"{name}-{version}"
    found = sorted(target.glob("*.whl")) if target.is_dir() else []
    if found:
        return found[0]
    target.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            str(target),
            f"{name}=={version}",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = sorted(target.glob("*.whl"))
    if result.returncode != 0 or not found:
        pytest.fail(
            f"cannot download {name}=={version} from the package index "
            f"(pip exit {result.returncode}): {result.stderr.strip()[-500:]}",
            pytrace=False,
        )
    return found[0]


def unpacked_wheel(name: str, version: str) -> Path:
    """Return a directory holding the unpacked wheel of ``name==version`` (cached)."""
    target = cache_root() / "unpacked" / f"{name}-{version}"
    marker = target / ".complete"
    if not marker.exists():
        wheel = download_wheel(name, version)
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.startswith("/") or ".." in Path(member).parts:
                    continue
                archive.extract(member, target)
        marker.write_text("ok")
    return target
