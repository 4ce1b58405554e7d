"""PyPI sources: ``pypi:NAME`` and ``pypi:NAME==VERSION``, downloaded with pip and cached.

This module owns the ``pypi:`` source spec, the download (``python -m pip download --no-deps``
run as a subprocess, so pip's index, proxy and certificate configuration all apply) and the
cache of downloaded and unpacked releases. pip picks what it would install here: the release
asked for (the latest when no version is given), as a wheel compatible with this machine when
there is one, else the sdist. For an sdist, pip itself prepares the metadata, which runs the
sdist's build backend as every ``pip download`` does; errdex never runs package code.

The cache lives in ``settings.cache_dir / "pypi"``::

    requests-2.32.3/                       one release; renamed into place once downloaded
        requests-2.32.3-py3-none-any.whl    the file pip downloaded
        unpacked-<limits key>/              renamed into place once unpacked (per set of caps)
            manifest.json                   name, version, repo and what was refused
            tree/                           the archive's files
    .work-*/                                downloads and unpacks in progress, never read

Every directory that is read was renamed into place complete, so a run killed midway leaves
only a ``.work-*`` directory behind (swept after a day); ``pypi:NAME==VERSION`` is read from
the cache without any network once it is there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from errdex.errors import SourceError, SourceNotFoundError, UsageError
from errdex.extract.archives import ArchiveLimits, ArchiveSource, UnpackedArchive, unpack_archive
from errdex.extract.packages import normalize_name, package_key, repo_of
from errdex.models import SourceInfo

SPEC_PREFIX = "pypi:"
"""How a PyPI source spec starts."""

PIP_TIMEOUT = 600
"""Seconds a ``pip download`` may take."""

_SPEC = re.compile(
    r"^pypi:(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?:==(?P<version>[A-Za-z0-9](?:[A-Za-z0-9._+!-]*[A-Za-z0-9])?))?$"
)
_VERSION = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._+!-]*[A-Za-z0-9])?$")
_MANIFEST = "manifest.json"
_STALE_SECONDS = 24 * 3600

PYPI_SIMPLE_URL = "https://pypi.org/simple"
"""PyPI's simple index, asked for a release's files when pip refuses the release's metadata."""

MAX_DOWNLOAD_BYTES = 512 * 1024 * 1024
"""The largest archive the simple-index fallback downloads."""


@dataclass(frozen=True)
class PypiSpec:
    """A parsed ``pypi:`` source spec.

    Attributes:
        text: The spec as the user wrote it.
        name: The distribution name, normalised (PEP 503).
        version: The pinned version, or None for the latest release.
    """

    text: str
    name: str
    version: str | None

    @property
    def requirement(self) -> str:
        """The requirement handed to pip (``name==version`` or ``name``)."""
        return f"{self.name}=={self.version}" if self.version else self.name


def is_pypi_spec(spec: str) -> bool:
    """Tell whether a source spec names a PyPI package (starts with ``pypi:``)."""
    return spec.startswith(SPEC_PREFIX)


def parse_spec(spec: str) -> PypiSpec:
    """Parse ``pypi:NAME`` or ``pypi:NAME==VERSION``.

    Args:
        spec: The spec.

    Returns:
        The parsed spec.

    Raises:
        UsageError: Anything else (other version operators, extras, options).
    """
    match = _SPEC.match(spec.strip())
    if match is None:
        raise UsageError(f"invalid PyPI source {spec!r}: write pypi:NAME or pypi:NAME==VERSION")
    return PypiSpec(spec, normalize_name(match["name"]), match["version"])


class PypiManifest(BaseModel):
    """What the cache knows about one unpacked release; its presence marks it complete.

    Attributes:
        archive: The file pip downloaded.
        kind: ``wheel`` or ``sdist``.
        name: The distribution name from the metadata (else from the spec), normalised.
        version: The version from the metadata (else from the spec).
        repo: ``owner/name`` from the metadata's URLs, else ``pypi:NAME``.
        prefix: For an sdist, its top directory (``name-version``), which paths are relative to.
        unpacked: What the unpacker wrote and refused.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    archive: str
    kind: Literal["wheel", "sdist"]
    name: str
    version: str | None
    repo: str
    prefix: str = ""
    unpacked: UnpackedArchive


def _one_line(text: str) -> str:
    errors = [
        line[len("ERROR:") :].strip() for line in text.splitlines() if line.startswith("ERROR:")
    ]
    lines = errors or [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def pip_download(spec: PypiSpec, dest: Path) -> Path:
    """Download one release (no dependencies) with pip into an empty directory.

    Args:
        spec: What to download.
        dest: The directory (pip writes the one file it picks there).

    Returns:
        The downloaded archive.

    Raises:
        SourceNotFoundError: pip failed: no such package or version, no network, a timeout.
    """
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-input",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "--dest",
        str(dest),
        spec.requirement,
    ]
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=PIP_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise SourceNotFoundError(
            f"cannot download {spec.text}: pip took more than {PIP_TIMEOUT} s",
            source=spec.text,
        ) from exc
    files = [path for path in dest.iterdir() if path.is_file()]
    if result.returncode != 0 and spec.version and "invalid metadata" in result.stderr:
        # pip 24.1 and newer refuse old releases whose metadata no longer parses (celery
        # 4.1.0's ``pytz (>dev)``); errdex only reads their source, so it takes the file the
        # index lists for that version instead.
        return registry_download(spec, dest)
    if result.returncode != 0 or len(files) != 1:
        reason = _one_line(result.stderr) if result.returncode else f"{len(files)} files"
        raise SourceNotFoundError(
            f"cannot download {spec.text} with pip: {reason}", source=spec.text
        )
    return files[0]


def _release_file(filename: str) -> tuple[str, str] | None:
    """Read ``(normalised name, version)`` from a wheel's or an sdist's file name."""
    if filename.endswith(".whl"):
        parts = filename[: -len(".whl")].split("-")
        return (normalize_name(parts[0]), parts[1]) if len(parts) >= 5 else None
    for suffix in (".tar.gz", ".zip"):
        if filename.endswith(suffix):
            stem, _, version = filename[: -len(suffix)].rpartition("-")
            return (normalize_name(stem), version) if stem else None
    return None


def _remove_partial(dest: Path) -> None:
    for path in dest.iterdir():
        if path.is_file():
            path.unlink()


def registry_download(spec: PypiSpec, dest: Path, *, index: str = PYPI_SIMPLE_URL) -> Path:
    """Download a pinned release's file as the index's JSON simple API lists it (PEP 691).

    Takes what pip would take: a pure-Python wheel, else the sdist, and checks its sha256.
    Used when pip refuses the release (its metadata does not parse under today's rules).

    Args:
        spec: The release (its version must be pinned).
        dest: An empty directory the file is written to.
        index: The simple index's address.

    Returns:
        The downloaded archive.

    Raises:
        SourceNotFoundError: The release, or a file errdex can read, is not on the index; the
            download failed, is too large, or does not match its digest.
    """
    if spec.version is None:
        raise SourceNotFoundError(f"cannot download {spec.text}: no version", source=spec.text)
    url = f"{index}/{urllib.parse.quote(spec.name)}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            project = json.loads(response.read(64 * 1024 * 1024))
        files = [
            f
            for f in project.get("files") or []
            if _release_file(str(f.get("filename", ""))) == (spec.name, spec.version)
        ]
        wheels = [f for f in files if str(f["filename"]).endswith("-none-any.whl")]
        sdists = [f for f in files if not str(f["filename"]).endswith(".whl")]
        chosen = (wheels or sdists or [None])[0]
        if chosen is None:
            raise SourceNotFoundError(
                f"cannot download {spec.text}: {index} lists no pure wheel or sdist of it",
                source=spec.text,
            )
        name = Path(str(chosen["filename"])).name
        digest = hashlib.sha256()
        target = dest / name
        size = 0
        address = urllib.parse.urljoin(url, str(chosen["url"]))
        with (
            urllib.request.urlopen(address, timeout=PIP_TIMEOUT) as response,
            target.open("wb") as stream,
        ):
            while block := response.read(1 << 20):
                size += len(block)
                if size > MAX_DOWNLOAD_BYTES:
                    raise SourceNotFoundError(
                        f"cannot download {spec.text}: {name} is larger than "
                        f"{MAX_DOWNLOAD_BYTES // (1024 * 1024)} MB",
                        source=spec.text,
                    )
                digest.update(block)
                stream.write(block)
    except SourceNotFoundError:
        _remove_partial(dest)
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        # urllib's errors are OSErrors; a malformed answer is a ValueError or a KeyError.
        _remove_partial(dest)
        raise SourceNotFoundError(
            f"cannot download {spec.text} from {url}: {exc}", source=spec.text
        ) from exc
    expected = (chosen.get("hashes") or {}).get("sha256")
    if expected and digest.hexdigest() != expected:
        target.unlink(missing_ok=True)
        raise SourceNotFoundError(
            f"cannot download {spec.text}: {name} does not match the index's sha256",
            source=spec.text,
        )
    return target


def _metadata_file(tree: Path, kind: str, prefix: str) -> Path | None:
    if kind == "wheel":
        candidates = sorted(tree.glob("*.dist-info/METADATA"))
    else:
        top = tree / prefix if prefix else tree
        candidates = [top / "PKG-INFO", *sorted(top.glob("*.egg-info/PKG-INFO"))]
        candidates += sorted(top.glob("src/*.egg-info/PKG-INFO"))
    return next((path for path in candidates if path.is_file()), None)


def _first(meta: metadata.PackageMetadata, field: str) -> str | None:
    values = meta.get_all(field)
    return str(values[0]).strip() if values else None


def _single_top_directory(files: tuple[str, ...]) -> str:
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        return tops.pop()
    return ""


def _describe(archive: Path, spec: PypiSpec, unpacked: UnpackedArchive, tree: Path) -> PypiManifest:
    """Read an unpacked release's metadata into its manifest."""
    kind: Literal["wheel", "sdist"] = "wheel" if archive.name.endswith(".whl") else "sdist"
    prefix = _single_top_directory(unpacked.files) if kind == "sdist" else ""
    name, version, repo = spec.name, spec.version, f"pypi:{spec.name}"
    found = _metadata_file(tree, kind, prefix)
    if found is not None:
        try:
            meta = metadata.PathDistribution(found.parent).metadata
            name = normalize_name(_first(meta, "Name") or spec.name)
            version = _first(meta, "Version") or version
            repo = repo_of(meta, name)
        except (OSError, ValueError, TypeError):
            pass  # unreadable metadata: keep what the spec says
    return PypiManifest(
        archive=archive.name,
        kind=kind,
        name=name,
        version=version,
        repo=repo,
        prefix=prefix,
        unpacked=unpacked,
    )


def _load_manifest(variant: Path) -> PypiManifest | None:
    try:
        return PypiManifest.model_validate_json((variant / _MANIFEST).read_bytes())
    except (OSError, ValidationError):
        return None


def _archive_of(entry: Path) -> Path | None:
    if not entry.is_dir():
        return None
    files = [p for p in entry.iterdir() if p.is_file() and not p.name.startswith(".")]
    return files[0] if len(files) == 1 else None


def _work_dir(parent: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix=".work-", dir=parent))


def _sweep(parent: Path) -> None:
    """Remove work directories left by runs killed more than a day ago."""
    cutoff = time.time() - _STALE_SECONDS
    for path in parent.glob(".work-*"):
        try:
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


def _move_into_place(work: Path, final: Path) -> bool:
    """Rename a complete directory into place; False when another run got there first."""
    try:
        os.rename(work, final)
    except OSError:
        if not final.exists():
            raise
        shutil.rmtree(work, ignore_errors=True)
        return False
    return True


def _unpacked(entry: Path, archive: Path, spec: PypiSpec, limits: ArchiveLimits) -> Path:
    """Return the complete unpacked variant of a release for these limits, making it if needed."""
    variant = entry / f"unpacked-{limits.key}"
    if variant.is_dir() and _load_manifest(variant) is not None:
        return variant
    if variant.exists():  # renamed in complete, then damaged: start again
        shutil.rmtree(variant)
    _sweep(entry)
    work = _work_dir(entry)
    try:
        unpacked = unpack_archive(archive, work / "tree", limits=limits)
        manifest = _describe(archive, spec, unpacked, work / "tree")
        (work / _MANIFEST).write_text(manifest.model_dump_json(indent=1), encoding="utf-8")
        _move_into_place(work, variant)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return variant


class PypiSource(ArchiveSource):
    """One release of a PyPI package, downloaded with pip and unpacked into the cache.

    Use :meth:`open`; paths are relative to the wheel's root (``requests/api.py``) or to an
    sdist's top directory.

    Args:
        variant: The cache directory of the unpacked release (holds ``tree`` and the manifest).
        manifest: Its manifest.
        info: What to record about the source.
        archive: The downloaded archive.
        downloaded: Whether this :meth:`open` downloaded it (False when the cache had it).
    """

    def __init__(
        self,
        variant: Path,
        manifest: PypiManifest,
        info: SourceInfo,
        *,
        archive: Path,
        downloaded: bool,
    ) -> None:
        super().__init__(variant / "tree", manifest.unpacked, info, prefix=manifest.prefix)
        self.variant = variant
        self.manifest = manifest
        self.archive = archive
        self.downloaded = downloaded

    @classmethod
    def open(
        cls, spec: str, *, cache_dir: Path, limits: ArchiveLimits, repo: str | None = None
    ) -> PypiSource:
        """Find a release in the cache, or download and unpack it there.

        ``pypi:NAME==VERSION`` is served from the cache without pip once it is there;
        ``pypi:NAME`` asks pip for the latest release every time, and reuses the unpacked
        copy of that release when the cache has it.

        Args:
            spec: ``pypi:NAME`` or ``pypi:NAME==VERSION``.
            cache_dir: The cache directory (``settings.cache_dir``); ``pypi/`` is used in it.
            limits: The caps the archive is unpacked under.
            repo: ``owner/name`` to record instead of the one from the metadata.

        Returns:
            The source.

        Raises:
            UsageError: The spec is malformed.
            SourceNotFoundError: pip cannot download it (no such package or version, no
                network).
            SourceError: The archive was refused whole (corrupt, not an archive, over the
                caps), or the cache cannot be written.
        """
        parsed = parse_spec(spec)
        root = cache_dir / "pypi"
        try:
            root.mkdir(parents=True, exist_ok=True)
            _sweep(root)
            return cls._open(parsed, root, limits, repo)
        except OSError as exc:
            raise SourceError(
                f"cannot use the cache {root} for {spec}: {exc.strerror or exc}", source=spec
            ) from exc

    @classmethod
    def _open(
        cls, spec: PypiSpec, root: Path, limits: ArchiveLimits, repo: str | None
    ) -> PypiSource:
        downloaded = False
        if spec.version is not None:
            entry = root / f"{spec.name}-{spec.version}"
            archive = _archive_of(entry)
            if archive is None:
                if entry.exists():  # not made by a rename of a finished download
                    shutil.rmtree(entry)
                work = _work_dir(root)
                try:
                    pip_download(spec, work)
                    _move_into_place(work, entry)
                except BaseException:
                    shutil.rmtree(work, ignore_errors=True)
                    raise
                downloaded = True
                archive = _archive_of(entry)
                if archive is None:  # pragma: no cover - a foreign file raced into the entry
                    raise SourceError(f"the cache entry {entry} is damaged", source=spec.text)
        else:
            entry, archive = cls._download_latest(spec, root, limits)
            downloaded = True
        variant = _unpacked(entry, archive, spec, limits)
        manifest = _load_manifest(variant)
        if manifest is None:  # pragma: no cover - _unpacked just checked it
            raise SourceError(f"the cache entry {variant} is damaged", source=spec.text)
        if manifest.unpacked.refused:
            raise _refusal(spec, manifest)
        chosen = repo or manifest.repo
        info = SourceInfo(
            key=package_key(chosen, manifest.name, manifest.version),
            repo=chosen,
            kind="pypi",
            location=spec.text,
            package=manifest.name,
            version=manifest.version,
        )
        return cls(
            variant,
            manifest,
            info,
            archive=variant.parent / manifest.archive,
            downloaded=downloaded,
        )

    @staticmethod
    def _download_latest(spec: PypiSpec, root: Path, limits: ArchiveLimits) -> tuple[Path, Path]:
        """Download the latest release and file it under its version (unless already there)."""
        work = _work_dir(root)
        try:
            archive = pip_download(spec, work)
            # The version is only known from the metadata inside the archive.
            manifest = _load_manifest(_unpacked(work, archive, spec, limits))
            if manifest is not None and manifest.unpacked.refused:
                raise _refusal(spec, manifest)
            version = manifest.version if manifest is not None else None
            if version is None or not _VERSION.match(version):
                raise SourceError(
                    f"cannot tell the version of {archive.name} downloaded for {spec.text}",
                    source=spec.text,
                )
            entry = root / f"{spec.name}-{version}"
            if _archive_of(entry) is None:
                if entry.exists():
                    shutil.rmtree(entry)
                if _move_into_place(work, entry):
                    return entry, entry / archive.name
            # Another run, or an earlier pinned one, filed this release: use that copy.
            shutil.rmtree(work, ignore_errors=True)
            cached = _archive_of(entry)
            if cached is None:  # pragma: no cover - entries are renamed in complete
                raise SourceError(f"the cache entry {entry} is damaged", source=spec.text)
            return entry, cached
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def _refusal(spec: PypiSpec, manifest: PypiManifest) -> SourceError:
    problem = manifest.unpacked.problems[0]
    return SourceError(f"{spec.text}: {problem.path} was {problem.message}", source=spec.text)
