"""Archives: safe unpacking of wheels and sdists, and the source that mines an unpacked one.

This module owns everything between an archive file (a zip such as a wheel, or a tar, plain or
compressed with gzip, bzip2 or xz, such as an sdist) and the files errdex mines from it:

* :func:`unpack_archive` writes an archive's regular files under a new directory and nothing
  anywhere else. It never calls :meth:`zipfile.ZipFile.extract` or :meth:`tarfile.TarFile.extract`;
  it creates every file itself, and refuses the entries that could write elsewhere or hurt the
  machine: absolute paths, ``..`` components, drive letters, backslashes, links, devices and
  fifos. It refuses a whole archive whose declared size is over a cap, and guards against
  decompression bombs by counting the bytes it actually writes (never trusting a header) and by
  a compression-ratio limit. The result is built in a temporary directory beside the target and
  renamed into place when complete, so a killed unpack never leaves a directory that looks done.
* :class:`ArchiveLimits` holds those caps; :class:`UnpackedArchive` says what was written and
  what was refused, and serialises to JSON so a cache can keep it.
* :class:`ArchiveSource` mines an unpacked archive; each refused entry comes back from
  :meth:`ArchiveSource.files` as a :class:`~errdex.extract.files.SourceFile` carrying the reason,
  which the pipeline turns into a :class:`~errdex.models.Problem` in the run report.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import lzma
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol

from pydantic import BaseModel, ConfigDict

from errdex.errors import SourceError
from errdex.extract.files import (
    SKIPPED_DIRECTORIES,
    SourceFile,
    read_file,
    text_path,
    wants_file,
)
from errdex.models import Problem, ProblemKind, SourceInfo
from errdex.settings import Settings

UNPACK_VERSION = 1
"""Changes whenever the same archive and limits would unpack differently (invalidates caches)."""

RATIO_FLOOR = 1 << 20
"""Below this many bytes an entry is never refused for its compression ratio.

Small, repetitive files (a run of spaces, an empty ``__init__.py``) compress far beyond any
sane ratio and are harmless.
"""

_CHUNK = 1 << 16
_READ_ERRORS = (
    zipfile.BadZipFile,
    tarfile.TarError,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    ValueError,
    OSError,
)
"""What reading a damaged entry or stream can raise (``gzip.BadGzipFile`` is an OSError)."""
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class ArchiveLimits:
    """The caps an archive is unpacked under.

    Attributes:
        max_total_bytes: An archive that declares, or actually inflates to, more than this many
            bytes in all is refused whole.
        max_file_bytes: An entry larger than this is skipped as too large.
        max_ratio: An entry (zip) or archive (tar) that inflates to more than this many times
            its compressed size is refused, once it is over :data:`RATIO_FLOOR` bytes.
        max_entries: An archive with more entries than this is refused whole.
    """

    max_total_bytes: int = 512_000_000
    max_file_bytes: int = 5_000_000
    max_ratio: int = 100
    max_entries: int = 100_000

    @classmethod
    def from_settings(cls, settings: Settings) -> ArchiveLimits:
        """Take the caps from the effective settings.

        Args:
            settings: ``max_archive_bytes``, ``max_file_bytes`` and ``max_compression_ratio``
                are used.

        Returns:
            The limits.
        """
        return cls(
            max_total_bytes=settings.max_archive_bytes,
            max_file_bytes=settings.max_file_bytes,
            max_ratio=settings.max_compression_ratio,
        )

    @property
    def key(self) -> str:
        """A short digest of the limits and the unpacker version, for cache directory names."""
        text = (
            f"{UNPACK_VERSION}:{self.max_total_bytes}:{self.max_file_bytes}:"
            f"{self.max_ratio}:{self.max_entries}"
        )
        return hashlib.sha256(text.encode()).hexdigest()[:12]


class UnpackedArchive(BaseModel):
    """What :func:`unpack_archive` wrote and what it refused.

    Attributes:
        format: ``zip`` or ``tar``; empty when the file is not an archive errdex reads.
        files: The regular files written, as normal POSIX paths relative to the target.
        problems: Each refused or skipped entry: ``unsafe-archive`` with the entry's name as
            written in the archive, or ``too-large`` with its normalised path. When the whole
            archive is refused, the one problem names the archive file.
        refused: The whole archive was refused; ``files`` is then empty and the target too.
        bytes_written: The bytes actually written (partial files removed on refusal included).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = ""
    files: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()
    refused: bool = False
    bytes_written: int = 0


class _EntryRefusedError(Exception):
    """One entry is not written (it stays out of the tree, with this reason)."""

    def __init__(self, reason: str, *, kind: ProblemKind = ProblemKind.UNSAFE_ARCHIVE) -> None:
        super().__init__(reason)
        self.kind = kind


class _ArchiveRefusedError(Exception):
    """The whole archive is refused (nothing of it is kept)."""

    def __init__(self, reason: str, *, kind: ProblemKind = ProblemKind.UNSAFE_ARCHIVE) -> None:
        super().__init__(reason)
        self.kind = kind


def safe_member_path(name: str) -> str:
    """Normalise an archive entry's name into a path that stays inside the target.

    ``./`` and repeated slashes are dropped; anything that could point outside the target, or
    mean something else on another system, is refused rather than repaired.

    Args:
        name: The entry's name as the archive stores it.

    Returns:
        A relative POSIX path with no empty, ``.`` or ``..`` component.

    Raises:
        ValueError: The name is absolute, has a ``..`` component, a drive letter, a backslash,
            a colon, a control character, or names nothing; the message says which.
    """
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise ValueError("control character in the entry name")
    if any("\udc80" <= char <= "\udcff" for char in name):  # tarfile's surrogateescape
        raise ValueError("entry name is not UTF-8")
    if "\\" in name:
        raise ValueError("backslash in the entry name")
    if name.startswith("/"):
        raise ValueError("absolute path")
    if _DRIVE.match(name):
        raise ValueError("drive letter in the entry name")
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ValueError("'..' component in the entry name")
    if any(":" in part for part in parts):
        raise ValueError("colon (drive or stream separator) in the entry name")
    if not parts:
        raise ValueError("empty entry name")
    return "/".join(parts)


class _Tree:
    """The directory an archive is unpacked into, and the account of what went in."""

    def __init__(self, root: Path, limits: ArchiveLimits) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.limits = limits
        self.total = 0
        self.files: list[str] = []
        self.problems: list[Problem] = []
        self._seen: set[str] = set()

    def refuse(self, name: str, error: _EntryRefusedError) -> None:
        self.problems.append(Problem(path=text_path(name), kind=error.kind, message=str(error)))

    def _place(self, rel: str) -> Path:
        path = self.root.joinpath(*rel.split("/"))
        # Every directory under the root was made here and no link is ever created, so this
        # only fails on a bug; checking costs little and keeps a bug from writing elsewhere.
        parent = os.path.realpath(path.parent)
        if parent != self.real_root and not parent.startswith(self.real_root + os.sep):
            raise _EntryRefusedError("resolves outside the target directory")
        return path

    def directory(self, rel: str) -> None:
        try:
            self._place(rel + "/x").parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _EntryRefusedError(f"cannot create the directory: {exc.strerror}") from exc

    def write(self, rel: str, declared: int, data: IO[bytes], *, compressed: int | None) -> None:
        """Copy one regular file in, counting what is really written.

        Errors reading ``data`` propagate (after the partial file is removed): a broken zip
        entry costs that entry, a broken tar stream the whole archive.

        Args:
            rel: The normalised path.
            declared: The size the archive declares.
            data: The entry's decompressed bytes.
            compressed: The entry's compressed size (zip), for the per-entry ratio limit.
        """
        limits = self.limits
        if rel in self._seen:
            raise _EntryRefusedError("duplicate entry; the first one is kept")
        ratio_cap = (
            None if compressed is None else max(RATIO_FLOOR, limits.max_ratio * max(compressed, 1))
        )
        if ratio_cap is not None and declared > ratio_cap:
            raise _EntryRefusedError(
                f"declares {declared} bytes from {compressed} compressed, over the "
                f"{limits.max_ratio}:1 compression-ratio limit (a decompression bomb)"
            )
        if declared > limits.max_file_bytes:
            raise _EntryRefusedError(
                f"{declared} bytes is over the {limits.max_file_bytes}-byte cap",
                kind=ProblemKind.TOO_LARGE,
            )
        # Headers can lie: whatever was declared, no more than this is ever written.
        allowed = min(declared, limits.max_file_bytes, ratio_cap or declared)
        try:
            path = self._place(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            handle = os.fdopen(os.open(path, flags, 0o644), "wb")
        except OSError as exc:
            raise _EntryRefusedError(f"cannot be written: {exc.strerror or exc}") from exc
        self._seen.add(rel)
        written = 0
        try:
            with handle:
                while chunk := data.read(_CHUNK):
                    written += len(chunk)
                    self.total += len(chunk)
                    if self.total > limits.max_total_bytes:
                        raise _ArchiveRefusedError(
                            f"inflates to more than the {limits.max_total_bytes}-byte cap"
                        )
                    if written > allowed:
                        raise _EntryRefusedError(
                            f"inflates to more than the {allowed} bytes allowed by its header "
                            "and the caps"
                        )
                    try:
                        handle.write(chunk)
                    except OSError as exc:
                        raise _EntryRefusedError(
                            f"cannot be written: {exc.strerror or exc}"
                        ) from exc
        except BaseException:
            path.unlink(missing_ok=True)
            self._seen.discard(rel)
            raise
        self.files.append(rel)


def _zip_kind(info: zipfile.ZipInfo) -> str | None:
    """Return why a zip entry is not a plain file or directory, from its Unix mode bits."""
    mode = info.external_attr >> 16
    if not mode:
        return None
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device file"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def _unpack_zip(archive: Path, tree: _Tree) -> None:
    limits = tree.limits
    try:
        with zipfile.ZipFile(archive) as bundle:
            infos = bundle.infolist()
            if len(infos) > limits.max_entries:
                raise _ArchiveRefusedError(
                    f"{len(infos)} entries is over the {limits.max_entries}-entry cap"
                )
            declared = sum(info.file_size for info in infos)
            if declared > limits.max_total_bytes:
                raise _ArchiveRefusedError(
                    f"declares {declared} bytes uncompressed, over the "
                    f"{limits.max_total_bytes}-byte cap"
                )
            for info in infos:
                try:
                    _unpack_zip_entry(bundle, info, tree)
                except _EntryRefusedError as exc:
                    tree.refuse(info.filename, exc)
    except _READ_ERRORS as exc:
        raise _ArchiveRefusedError(f"corrupt zip archive: {exc}") from exc


def _unpack_zip_entry(bundle: zipfile.ZipFile, info: zipfile.ZipInfo, tree: _Tree) -> None:
    try:
        rel = safe_member_path(info.filename)
    except ValueError as exc:
        raise _EntryRefusedError(str(exc)) from exc
    odd = _zip_kind(info)
    if odd is not None:
        raise _EntryRefusedError(f"{odd}; links and special files are never unpacked")
    if info.is_dir():
        tree.directory(rel)
        return
    if info.flag_bits & 0x1:
        raise _EntryRefusedError("encrypted entry")
    try:
        data = bundle.open(info)
    except _READ_ERRORS as exc:
        raise _EntryRefusedError(f"corrupt entry: {exc}") from exc
    with data:
        try:
            tree.write(rel, info.file_size, data, compressed=info.compress_size)
        except _READ_ERRORS as exc:
            raise _EntryRefusedError(f"corrupt entry: {exc}") from exc


def _tar_kind(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return f"symbolic link to {member.linkname!r}"
    if member.islnk():
        return f"hard link to {member.linkname!r}"
    if member.ischr() or member.isblk():
        return "device file"
    if member.isfifo():
        return "fifo"
    if not (member.isreg() or member.isdir()):
        return f"unsupported entry type {member.type!r}"
    return None


_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _BoundedStream(io.RawIOBase):
    """The decompressed bytes of a tar, refused once more than ``cap`` of them were read.

    tarfile reads long names and pax headers into memory before it returns an entry, so the
    bound has to sit below tarfile, on the stream itself.
    """

    def __init__(self, inner: _Readable, cap: int, reason: str) -> None:
        super().__init__()
        self._inner = inner
        self._cap = cap
        self._reason = reason
        self._position = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._inner.read(min(len(view), self._cap + 1 - self._position))
        self._position += len(data)
        if self._position > self._cap:
            raise _ArchiveRefusedError(self._reason)
        view[: len(data)] = data
        return len(data)


def _decompressed(raw: IO[bytes], head: bytes) -> _Readable:
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    return raw


def _unpack_tar(archive: Path, tree: _Tree) -> None:
    limits = tree.limits
    size = archive.stat().st_size
    # A tar has no table of contents: sizes are learnt entry by entry, and the position in the
    # decompressed stream, known before an entry's data is read, bounds the ratio for the
    # archive as a whole. Crossing a cap stops before that entry is decompressed; the bounded
    # stream below is the backstop for what tarfile reads on its own (headers, long names).
    stream_cap = max(RATIO_FLOOR, limits.max_ratio * max(size, 1))
    bound = min(stream_cap, 2 * limits.max_total_bytes + RATIO_FLOOR)
    declared = 0
    entries = 0
    with archive.open("rb") as raw:
        head = raw.read(6)
        raw.seek(0)
        stream = io.BufferedReader(
            _BoundedStream(
                _decompressed(raw, head),
                bound,
                f"inflates {size} bytes to more than {bound}, over the {limits.max_ratio}:1 "
                f"compression-ratio limit or the {limits.max_total_bytes}-byte cap",
            )
        )
        try:
            # Opened apart from the `with` below to tell "not a tar" from "a broken tar".
            bundle = tarfile.open(fileobj=stream, mode="r|")  # noqa: SIM115
        except _READ_ERRORS as exc:
            if head.startswith(_COMPRESSED_MAGIC):
                raise _ArchiveRefusedError(f"corrupt tar archive: {exc}") from exc
            raise _ArchiveRefusedError("not a zip or tar archive") from exc
        try:
            with bundle:
                for member in bundle:
                    entries += 1
                    if entries > limits.max_entries:
                        raise _ArchiveRefusedError(
                            f"more than the {limits.max_entries}-entry cap of entries"
                        )
                    if member.isreg():
                        declared += member.size
                        if declared > limits.max_total_bytes:
                            raise _ArchiveRefusedError(
                                f"declares more than the {limits.max_total_bytes}-byte cap "
                                f"uncompressed (at {member.name!r})"
                            )
                        if member.offset_data + member.size > stream_cap:
                            raise _ArchiveRefusedError(
                                f"inflates {size} bytes to more than {stream_cap} "
                                f"(at {member.name!r}), over the {limits.max_ratio}:1 "
                                "compression-ratio limit (a decompression bomb)"
                            )
                    try:
                        _unpack_tar_entry(bundle, member, tree)
                    except _EntryRefusedError as exc:
                        tree.refuse(member.name, exc)
        except _READ_ERRORS as exc:
            raise _ArchiveRefusedError(f"corrupt tar archive: {exc}") from exc


def _unpack_tar_entry(bundle: tarfile.TarFile, member: tarfile.TarInfo, tree: _Tree) -> None:
    try:
        rel = safe_member_path(member.name)
    except ValueError as exc:
        raise _EntryRefusedError(str(exc)) from exc
    odd = _tar_kind(member)
    if odd is not None:
        raise _EntryRefusedError(f"{odd}; links and special files are never unpacked")
    if member.isdir():
        tree.directory(rel)
        return
    if member.size > tree.limits.max_file_bytes:
        # Refused before extractfile: tarfile skips the data instead of it being written.
        raise _EntryRefusedError(
            f"{member.size} bytes is over the {tree.limits.max_file_bytes}-byte cap",
            kind=ProblemKind.TOO_LARGE,
        )
    data = bundle.extractfile(member)
    if data is None:  # pragma: no cover - isreg() members always have data
        raise _EntryRefusedError("no data")
    with data:
        tree.write(rel, member.size, data, compressed=None)


def _archive_format(archive: Path) -> str:
    """Tell a zip from anything else, which is then tried as a tar (plain or compressed)."""
    if zipfile.is_zipfile(archive):
        return "zip"
    with archive.open("rb") as handle:
        if handle.read(4) == b"PK\x03\x04":
            raise _ArchiveRefusedError("corrupt zip archive: no central directory (truncated?)")
    return "tar"


def unpack_archive(archive: Path, target: Path, *, limits: ArchiveLimits) -> UnpackedArchive:
    """Unpack a zip or tar archive safely into a new directory.

    The format is detected from the content, not the name. Entries are refused one by one
    (and listed in the result) when unsafe; the whole archive is refused when it is not an
    archive, is corrupt, or crosses the total-size, ratio or entry-count caps — then the
    target is created empty. Nothing is ever written outside ``target`` and the temporary
    directory beside it, which is renamed to ``target`` once complete.

    Args:
        archive: The archive file.
        target: The directory to create; its parent is created when missing.
        limits: The caps.

    Returns:
        What was written and what was refused.

    Raises:
        SourceError: ``target`` already exists, or its parent cannot be written.
    """
    if target.exists():
        raise SourceError(f"cannot unpack into {target}: it already exists", source=str(archive))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
    except OSError as exc:
        raise SourceError(
            f"cannot write the directory {target.parent}: {exc.strerror or exc}",
            source=str(archive),
        ) from exc
    try:
        tree = _Tree(work, limits)
        fmt = ""
        refusal: Problem | None = None
        try:
            fmt = _archive_format(archive)
            if fmt == "zip":
                _unpack_zip(archive, tree)
            else:
                _unpack_tar(archive, tree)
        except _ArchiveRefusedError as exc:
            refusal = Problem(path=archive.name, kind=exc.kind, message=f"refused: {exc}")
        except OSError as exc:  # the archive itself cannot be read
            refusal = Problem(
                path=archive.name,
                kind=ProblemKind.UNREADABLE,
                message=f"cannot be read: {exc.strerror or exc}",
            )
        if refusal is not None:
            shutil.rmtree(work)
            work.mkdir()
            result = UnpackedArchive(format=fmt, problems=(refusal,), refused=True)
        else:
            result = UnpackedArchive(
                format=fmt,
                files=tuple(sorted(tree.files)),
                problems=tuple(tree.problems),
                bytes_written=tree.total,
            )
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return result


_WHEEL_DATA = re.compile(r"[^/]+\.data/(?:(?:purelib|platlib)/(?P<rest>.+)|.*)\Z", re.DOTALL)
"""A wheel's ``.data`` directory entry; ``rest`` is where a purelib or platlib file installs."""


def _skipped(rel: str) -> bool:
    parents = PurePosixPath(rel).parts[:-1]
    return any(part in SKIPPED_DIRECTORIES or part.endswith(".egg-info") for part in parents)


class ArchiveSource:
    """The files of an archive that :func:`unpack_archive` unpacked.

    Files are read from the unpacked tree; what the unpacker refused comes back from
    :meth:`files` as files without data, carrying the reason, so the pipeline reports them.

    Args:
        tree: The directory the archive was unpacked into.
        unpacked: What :func:`unpack_archive` returned for it.
        info: What to record about the source.
        prefix: A directory of the tree to use as the source root (an sdist's
            ``name-version``); paths in records are relative to it.
    """

    def __init__(
        self, tree: Path, unpacked: UnpackedArchive, info: SourceInfo, *, prefix: str = ""
    ) -> None:
        self.tree = tree
        self.unpacked = unpacked
        self.prefix = prefix.strip("/")
        self._info = info

    @property
    def info(self) -> SourceInfo:
        """What is mined."""
        return self._info

    @property
    def root(self) -> Path:
        """The source root: the tree, or its ``prefix`` directory."""
        return self.tree / self.prefix if self.prefix else self.tree

    def _relative(self, path: str) -> str | None:
        if not self.prefix:
            data = _WHEEL_DATA.match(path)
            # A wheel's NAME.data/purelib/pkg/x.py installs as pkg/x.py; its scripts, headers
            # and data are not the package's importable source.
            return path if data is None else data["rest"]
        head = self.prefix + "/"
        return path[len(head) :] if path.startswith(head) else None

    @property
    def problems(self) -> tuple[Problem, ...]:
        """Every entry the unpacker refused or skipped, whatever its name.

        A wheel's scripts and data are not mined, so they are no problem either. ``too-large``
        paths are relative to the source root; ``unsafe-archive`` paths are the entry names as
        the archive wrote them.
        """
        found: list[Problem] = []
        for problem in self.unpacked.problems:
            rel = self._relative(problem.path) if problem.kind is ProblemKind.TOO_LARGE else None
            if rel is None and not self.prefix and problem.kind is ProblemKind.TOO_LARGE:
                continue  # a wheel's scripts or data: not mined, so not a problem either
            found.append(problem if rel is None else problem.model_copy(update={"path": rel}))
        return tuple(found)

    def files(
        self, *, wanted: tuple[str, ...], max_bytes: int, include_tests: bool
    ) -> Iterator[SourceFile]:
        """Yield the wanted files and refused entries, by path (see ``Source``).

        A refused entry is yielded when its name ends with a wanted suffix (the pipeline picks
        an extractor by suffix); a ``too-large`` one also follows the test-file rule, like the
        files of other sources. :attr:`problems` lists them all.
        """
        found: dict[str, SourceFile] = {}
        for problem in self.problems:
            if not problem.path.endswith(wanted) or problem.path in found:
                continue
            if problem.kind is ProblemKind.TOO_LARGE and not wants_file(
                problem.path, wanted, include_tests
            ):
                continue
            found[problem.path] = SourceFile(problem.path, None, problem.kind, problem.message)
        for name in self.unpacked.files:
            rel = self._relative(name)
            if rel is None or _skipped(rel) or not wants_file(rel, wanted, include_tests):
                continue
            # A file wins over a refused duplicate of the same name: its bytes are real.
            where = self.tree.joinpath(*name.split("/"))  # rel may differ (a wheel's .data)
            found[rel] = read_file(where, rel, max_bytes)
        for path in sorted(found):
            yield found[path]
