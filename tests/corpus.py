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
    if result.returncode != 0 and "invalid metadata" in result.stderr:
        # pip 24.1+ refuses old releases whose metadata no longer parses (celery 4.1.0); take
        # the wheel PyPI lists for that version, as ``errdex mine pypi:`` does.
        from errdex.errors import SourceNotFoundError
        from errdex.extract.pypi import PypiSpec, registry_download

        try:
            found = [registry_download(PypiSpec(name, name, version), target)]
        except SourceNotFoundError as exc:
            pytest.fail(f"cannot download {name}=={version}: {exc}", pytrace=False)
        if found[0].suffix != ".whl":
            pytest.fail(f"PyPI lists no wheel of {name}=={version}", pytrace=False)
        return found[0]
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


def _run_download(command: list[str], cwd: Path, what: str) -> None:
    """Run a download command in ``cwd``; a failure is a test error naming ``what``."""
    try:
        result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"cannot download {what}: {exc}", pytrace=False)
    if result.returncode != 0:
        pytest.fail(
            f"cannot download {what} ({command[0]} exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()[-500:]}",
            pytrace=False,
        )


def _unpack_tar(archive: Path, target: Path) -> None:
    import tarfile

    with tarfile.open(archive) as tar:
        tar.extractall(target, filter="data")


def npm_package(name: str, version: str) -> Path:
    """Return the unpacked ``npm pack`` of ``name@version`` (cached): its ``package/`` folder."""
    target = cache_root() / "npm" / f"{name.replace('/', '+')}-{version}"
    marker = target / ".complete"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        _run_download(
            ["npm", "pack", f"{name}@{version}", "--silent", "--pack-destination", str(target)],
            target,
            f"{name}@{version} from the npm registry",
        )
        archives = sorted(target.glob("*.tgz"))
        if not archives:
            pytest.fail(f"npm pack {name}@{version} wrote no archive", pytrace=False)
        _unpack_tar(archives[0], target)
        marker.write_text("ok")
    return target / "package"


def debian_package(name: str, version: str) -> Path:
    """Return the unpacked Debian package ``name=version`` (cached): the root of its files.

    ``golang-*-dev`` packages ship Go source under ``usr/share/gocode/src``, ``librust-*-dev``
    ones Rust crates under ``usr/share/cargo/registry``.
    """
    target = cache_root() / "debian" / f"{name}-{version}"
    marker = target / ".complete"
    if not marker.exists():
        target.mkdir(parents=True, exist_ok=True)
        _run_download(
            ["apt-get", "download", f"{name}={version}"],
            target,
            f"{name}={version} from Debian (is `apt-get update` done?)",
        )
        debs = sorted(target.glob("*.deb"))
        if not debs:
            pytest.fail(f"apt-get download {name}={version} wrote no .deb", pytrace=False)
        _run_download(["dpkg-deb", "-x", str(debs[0]), "root"], target, f"unpacking {debs[0]}")
        marker.write_text("ok")
    return target / "root"
