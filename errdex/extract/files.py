"""Sources: where the files to mine come from, and how they are read.

A :class:`Source` describes what is mined (:class:`~errdex.models.SourceInfo`) and yields its
files as :class:`SourceFile` objects, lazily, each with its bytes or the reason it cannot be
read. Two kinds live here:

* :class:`DirectorySource` walks a directory on disk (symlinks are not followed);
* :class:`GitSource` reads a git repository at a revision straight from its objects
  (``git ls-tree`` + ``git cat-file --batch``), so nothing is checked out and the work tree
  may be dirty or absent (bare repositories work).

:func:`open_source` turns what the user typed into one of them.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from errdex.errors import RevisionNotFoundError, SourceError, SourceNotFoundError
from errdex.models import ProblemKind, SourceInfo

SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".venv",
        "node_modules",
        ".eggs",
    }
)
"""Directory names never descended into when walking a directory."""

_TEST_DIRECTORIES = frozenset({"test", "tests", "testing", "__tests__", "__mocks__", "testdata"})
_TEST_SUFFIXES = (
    "_test.py",
    "_test.go",
    ".test.js",
    ".test.ts",
    ".test.mjs",
    ".test.cjs",
    ".test.tsx",
    ".spec.js",
    ".spec.ts",
    ".spec.tsx",
    "Test.java",
    "Tests.java",
)
_GENERATED_SUFFIXES = (".min.js", ".min.mjs", ".bundle.js", ".d.ts", ".d.mts", ".d.cts")
"""Minified bundles and type declarations: no error site a user could be sent to."""


def is_test_path(path: str) -> bool:
    """Tell whether a source-relative path is a test file.

    Test code raises errors users never see, so it is left out unless asked for.

    Args:
        path: A POSIX path relative to the source root.

    Returns:
        True for files under ``test/``/``tests/``/``__tests__/``, ``test_*.py``,
        ``*_test.py``, ``conftest.py``, ``*_test.go``, ``*.test.js``/``*.spec.ts`` (and their
        siblings) and ``*Test.java``.
    """
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (
        any(part in _TEST_DIRECTORIES for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith(_TEST_SUFFIXES)
        or name == "conftest.py"
    )


@dataclass(frozen=True)
class SourceFile:
    """One file of a source.

    Attributes:
        path: POSIX path relative to the source root (the record's ``filePath``).
        data: The file's bytes, or None when it could not be read.
        problem: Why it could not be read, when ``data`` is None.
        detail: A one-line explanation of the problem.
    """

    path: str
    data: bytes | None
    problem: ProblemKind | None = None
    detail: str = ""


class Source(Protocol):
    """Anything errdex can mine."""

    @property
    def info(self) -> SourceInfo:
        """What is mined: repository, revision, package and version."""
        ...

    def files(
        self, *, wanted: tuple[str, ...], max_bytes: int, include_tests: bool
    ) -> Iterator[SourceFile]:
        """Yield the files whose names end with one of ``wanted``.

        Args:
            wanted: File-name suffixes to mine (``(".py",)``).
            max_bytes: Files larger than this come back with a ``too-large`` problem.
            include_tests: Whether test files are yielded.

        Yields:
            The files, in a stable order.
        """
        ...


def wants_file(path: str, wanted: tuple[str, ...], include_tests: bool) -> bool:
    """Tell whether a file is mined: a wanted suffix, not generated, not a test unless wanted."""
    return (
        path.endswith(wanted)
        and not path.endswith(_GENERATED_SUFFIXES)
        and (include_tests or not is_test_path(path))
    )


def _too_large(path: str, size: int, max_bytes: int) -> SourceFile:
    return SourceFile(
        path, None, ProblemKind.TOO_LARGE, f"{size} bytes is over the {max_bytes}-byte cap"
    )


class DirectorySource:
    """The files of a directory on disk, as they are now.

    Args:
        root: The directory.
        info: What to record about it.
    """

    def __init__(self, root: Path, info: SourceInfo) -> None:
        self.root = root
        self._info = info

    @property
    def info(self) -> SourceInfo:
        """What is mined."""
        return self._info

    def files(
        self, *, wanted: tuple[str, ...], max_bytes: int, include_tests: bool
    ) -> Iterator[SourceFile]:
        """Walk the directory and yield the wanted files (see :class:`Source`).

        A directory that cannot be listed is a problem of its own (its files are unknown).
        """
        failed: list[OSError] = []
        for directory, subdirectories, names in os.walk(self.root, onerror=failed.append):
            yield from self._unlisted(failed)
            subdirectories[:] = sorted(
                d
                for d in subdirectories
                if d not in SKIPPED_DIRECTORIES
                and not d.endswith(".egg-info")
                and not os.path.islink(os.path.join(directory, d))
            )
            for name in sorted(names):
                full = os.path.join(directory, name)
                rel = text_path(Path(full).relative_to(self.root).as_posix())
                if not wants_file(rel, wanted, include_tests) or os.path.islink(full):
                    continue
                yield read_file(Path(full), rel, max_bytes)
        yield from self._unlisted(failed)

    def _unlisted(self, failed: list[OSError]) -> Iterator[SourceFile]:
        for error in failed:
            where = Path(str(error.filename or self.root))
            rel = where.relative_to(self.root).as_posix() if where != self.root else "."
            detail = f"cannot list the directory: {error.strerror or error}"
            yield SourceFile(text_path(rel), None, ProblemKind.UNREADABLE, detail)
        failed.clear()


def text_path(path: str) -> str:
    r"""A path as text: bytes of a name that are not UTF-8 become escapes (``\xff``).

    Names come from the file system and from git as bytes; Python keeps the bytes that are not
    UTF-8 as lone surrogates, which no store, JSON or terminal can hold.
    """
    if path.isascii():
        return path
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def read_file(path: Path, rel: str, max_bytes: int) -> SourceFile:
    """Read one file from disk into a :class:`SourceFile`, never raising.

    Args:
        path: The file on disk.
        rel: Its path relative to the source root.
        max_bytes: The size cap.

    Returns:
        The file with its bytes, or with the problem that stopped the read.
    """
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # a fifo or a device would block or never end
            return SourceFile(rel, None, ProblemKind.UNREADABLE, "not a regular file")
        if status.st_size > max_bytes:
            return _too_large(rel, status.st_size, max_bytes)
        return SourceFile(rel, path.read_bytes())
    except OSError as exc:
        return SourceFile(rel, None, ProblemKind.UNREADABLE, exc.strerror or str(exc))


_GITHUB_REMOTE = re.compile(
    r"^(?:https?://|ssh://)?(?:[^@/]+@)?github\.com[:/](?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?$"
)


def github_repo_from_url(url: str) -> str | None:
    """Return ``owner/name`` when a URL points at a GitHub repository.

    Args:
        url: A remote or project URL (https, ssh or scp-like).

    Returns:
        ``owner/name``, or None for other hosts.
    """
    match = _GITHUB_REMOTE.match(url.strip())
    return f"{match['owner']}/{match['name']}" if match else None


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", str(cwd), *args], capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError as exc:  # pragma: no cover - git is a documented requirement
        raise SourceError("git is not installed; it is needed to read repositories") from exc


def is_git_root(path: Path) -> bool:
    """Tell whether a directory is the top of a git work tree or a bare repository."""
    if (path / ".git").exists():
        return True
    result = _git(path, "rev-parse", "--is-bare-repository")
    return result.returncode == 0 and result.stdout.strip() == b"true"


class GitSource:
    """A git repository read at one revision from its objects; nothing is checked out.

    Args:
        root: The repository (work tree top or bare repository).
        sha: The resolved commit.
        info: What to record about it.
    """

    def __init__(self, root: Path, sha: str, info: SourceInfo, *, subdir: str = "") -> None:
        self.root = root
        self.sha = sha
        self._info = info
        self.subdir = subdir
        """A directory of the repository to read alone (paths stay relative to its top)."""

    @property
    def info(self) -> SourceInfo:
        """What is mined."""
        return self._info

    @classmethod
    def open(
        cls, root: Path, *, revision: str | None, repo: str | None, subdir: str = ""
    ) -> GitSource:
        """Resolve a revision of a repository.

        Args:
            root: The repository.
            revision: A branch, tag or commit; HEAD when None.
            repo: ``owner/name`` to record; from the ``origin`` remote (GitHub) or the
                directory name when None.
            subdir: Read only this directory of it (POSIX, relative to its top); the source
                is then stored apart from the whole repository's (``repo:subdir``).

        Returns:
            The source.

        Raises:
            RevisionNotFoundError: The revision names no commit.
        """
        rev = revision or "HEAD"
        result = _git(
            root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
        )
        if result.returncode != 0:
            raise RevisionNotFoundError(
                f"revision {rev!r} is not a commit of {root}", source=str(root), revision=rev
            )
        sha = result.stdout.decode().strip()
        if subdir and _git(root, "cat-file", "-e", f"{sha}:{subdir}").returncode != 0:
            raise SourceNotFoundError(
                f"{subdir!r} is not a directory of {root} at {rev}", source=str(root / subdir)
            )
        if repo is None:
            remote = _git(root, "config", "--get", "remote.origin.url").stdout.decode()
            repo = github_repo_from_url(remote) or root.resolve().name.removesuffix(".git")
        info = SourceInfo(
            key=f"{repo}:{text_path(subdir)}" if subdir else repo,
            repo=repo,
            kind="git",
            location=text_path(str(root / subdir)),
            revision=rev,
            sha=sha,
        )
        return cls(root, sha, info, subdir=subdir)

    def files(
        self, *, wanted: tuple[str, ...], max_bytes: int, include_tests: bool
    ) -> Iterator[SourceFile]:
        """List the revision's tree and stream the wanted blobs (see :class:`Source`)."""
        scope = ["--", f"{self.subdir}/"] if self.subdir else []
        listing = _git(self.root, "ls-tree", "-r", "-z", "--long", "--full-tree", self.sha, *scope)
        if listing.returncode != 0:
            raise SourceError(
                f"cannot list {self.sha} in {self.root}: {listing.stderr.decode().strip()}",
                source=str(self.root),
            )
        entries: list[tuple[str, str, int]] = []
        for entry in listing.stdout.split(b"\0"):
            if not entry:
                continue
            header, _, raw_path = entry.partition(b"\t")
            mode, kind, obj, size = header.split()
            path = text_path(raw_path.decode("utf-8", "surrogateescape"))
            # Symlinks (120000) and submodules (commit) are not files of this revision.
            if kind != b"blob" or mode == b"120000" or not wants_file(path, wanted, include_tests):
                continue
            entries.append((path, obj.decode(), int(size)))
        entries.sort()
        yield from self._read_blobs(entries, max_bytes)

    def _read_blobs(
        self, entries: list[tuple[str, str, int]], max_bytes: int
    ) -> Iterator[SourceFile]:
        process = subprocess.Popen(
            ["git", "-C", str(self.root), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            for path, obj, size in entries:
                if size > max_bytes:
                    yield _too_large(path, size, max_bytes)
                    continue
                process.stdin.write(obj.encode() + b"\n")
                process.stdin.flush()
                header = process.stdout.readline().split()
                if len(header) != 3:
                    yield SourceFile(path, None, ProblemKind.UNREADABLE, "git cat-file failed")
                    continue
                data = process.stdout.read(int(header[2]))
                process.stdout.read(1)  # the newline after each object
                yield SourceFile(path, data)
        finally:
            process.stdin.close()
            process.stdout.close()
            process.wait(timeout=30)


def open_source(spec: str, *, repo: str | None = None, revision: str | None = None) -> Source:
    """Open what the user named as a source.

    A directory that is the top of a git repository (or any directory when ``revision`` is
    given) is read from git at ``revision`` (HEAD by default); any other directory is walked
    as it is on disk.

    Args:
        spec: A path.
        repo: ``owner/name`` to record instead of the detected one.
        revision: The git revision to read.

    Returns:
        The source.

    Raises:
        SourceNotFoundError: The path does not exist or is not a directory.
        RevisionNotFoundError: The revision names no commit.
    """
    path = Path(spec).expanduser()
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise SourceNotFoundError(f"source {spec!r} {what}", source=spec)
    if revision is not None or is_git_root(path):
        top = _git(path, "rev-parse", "--show-toplevel")
        root = (
            Path(top.stdout.decode().strip())
            if top.returncode == 0 and top.stdout.strip()
            else path
        )
        if revision is not None and not is_git_root(root):
            raise RevisionNotFoundError(
                f"--rev needs a git repository, and {spec!r} is not one",
                source=spec,
                revision=revision,
            )
        # A directory inside the repository: only its files (paths from the repository's top).
        inside = path.resolve().relative_to(root.resolve()) if root != path else Path()
        subdir = "" if str(inside) == "." else inside.as_posix()
        return GitSource.open(root, revision=revision, repo=repo, subdir=subdir)
    name = repo or text_path(path.resolve().name)
    return DirectorySource(
        path, SourceInfo(key=name, repo=name, kind="directory", location=text_path(str(path)))
    )
