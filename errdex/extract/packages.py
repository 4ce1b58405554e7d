"""Package sources: the distributions installed in an environment, one source each.

Each installed distribution is mined from the files its own metadata lists (``RECORD``), so
a package's source holds exactly its files, with paths relative to the directory it is
installed in (``requests/api.py``). Its ``repo`` is ``owner/name`` when the metadata points at
a GitHub repository, else ``pypi:NAME``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path

from errdex.extract.files import SourceFile, github_repo_from_url, read_file, wants_file
from errdex.models import SourceInfo

_REPO_LABELS = ("source", "source code", "repository", "code", "github", "homepage", "home")


def normalize_name(name: str) -> str:
    """Normalise a distribution name as PyPI does (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def package_key(repo: str, package: str, version: str | None) -> str:
    """The store key of a package release.

    ``repo==version`` when the repository is the package's own; with the package named when
    the repository holds others (``open-telemetry/opentelemetry-python:opentelemetry-sdk``
    and ``…:opentelemetry-api`` share versions), so that mining one never replaces another.

    Examples:
        >>> package_key("psf/requests", "requests", "2.32.3")
        'psf/requests==2.32.3'
        >>> package_key("pallets/jinja", "Jinja2", "3.1.4")
        'pallets/jinja:jinja2==3.1.4'
    """
    name = normalize_name(package)
    if repo.startswith("pypi:") or normalize_name(repo.rpartition("/")[2]) == name:
        return f"{repo}=={version}"
    return f"{repo}:{name}=={version}"


def repo_of(meta: metadata.PackageMetadata, name: str) -> str:
    """Find the GitHub repository a distribution's metadata points at.

    Args:
        meta: The distribution's metadata.
        name: Its name, for the ``pypi:NAME`` fallback.

    Returns:
        ``owner/name`` from a Source/Repository/Homepage URL on GitHub, else ``pypi:NAME``.
    """
    candidates: list[tuple[int, str]] = []
    for entry in meta.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        label = label.strip().lower()
        rank = _REPO_LABELS.index(label) if label in _REPO_LABELS else len(_REPO_LABELS)
        candidates.append((rank, url.strip()))
    home = meta.get("Home-page", None)  # type: ignore[attr-defined]
    if home:
        candidates.append((len(_REPO_LABELS) - 2, home))
    for _, url in sorted(candidates, key=lambda item: item[0]):
        repo = github_repo_from_url(url.split("#")[0].split("?")[0].rstrip("/"))
        if repo is None:
            # https://github.com/owner/name/tree/main/sub → owner/name
            match = re.match(r"https?://github\.com/([\w.-]+)/([\w.-]+)", url)
            repo = f"{match[1]}/{match[2].removesuffix('.git')}" if match else None
        if repo is not None:
            return repo
    return f"pypi:{normalize_name(name)}"


class DistributionSource:
    """The Python files of one installed distribution.

    Args:
        distribution: The distribution, as :mod:`importlib.metadata` found it.
    """

    def __init__(self, distribution: metadata.Distribution) -> None:
        self.distribution = distribution
        name = distribution.metadata["Name"] or "unknown"
        version = distribution.version
        repo = repo_of(distribution.metadata, name)
        self._info = SourceInfo(
            key=package_key(repo, name, version),
            repo=repo,
            kind="installed",
            location=str(distribution.locate_file("")),
            package=normalize_name(name),
            version=version,
        )

    @property
    def info(self) -> SourceInfo:
        """What is mined."""
        return self._info

    def files(
        self, *, wanted: tuple[str, ...], max_bytes: int, include_tests: bool
    ) -> Iterator[SourceFile]:
        """Yield the distribution's wanted files (see :class:`~errdex.extract.files.Source`)."""
        root = Path(str(self.distribution.locate_file("")))
        seen: set[str] = set()
        for entry in sorted(self.distribution.files or [], key=str):
            rel = entry.as_posix()
            # Files installed outside the distribution's directory (scripts in bin/) are not
            # part of the package's importable source.
            if rel.startswith("../") or rel in seen or not wants_file(rel, wanted, include_tests):
                continue
            seen.add(rel)
            path = root / rel
            if path.is_symlink() or not path.is_file():
                continue
            yield read_file(path, rel, max_bytes)


def installed_sources(paths: Sequence[str] | None = None) -> list[DistributionSource]:
    """List the distributions installed on ``paths`` (``sys.path`` by default), one source each.

    Args:
        paths: Directories to look in; the running interpreter's path when None.

    Returns:
        The sources, by package name; a distribution found twice is listed once.
    """
    found: dict[str, DistributionSource] = {}
    search = list(paths) if paths is not None else sys.path
    for distribution in metadata.distributions(path=search):
        name = distribution.metadata["Name"]
        if not name or not distribution.files:
            continue
        key = normalize_name(name)
        if key not in found:
            found[key] = DistributionSource(distribution)
    return [found[key] for key in sorted(found)]
