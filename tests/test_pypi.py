"""``pypi:`` sources, for real: pip downloads pinned releases from the package index.

The pypi cache (``ERRDEX_CACHE_DIR``) is one directory per test session, so each release is
downloaded once per session and never lands in the user's cache. The wheel tests/corpus.py
keeps per machine is the reference the mined files and lines are checked against.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import threading

import pytest
from corpus import download_wheel, unpacked_wheel

from errdex.errors import SourceNotFoundError
from errdex.extract.archives import ArchiveLimits
from errdex.extract.pypi import PypiSource, parse_spec, registry_download

pytestmark = pytest.mark.network

REQUESTS = "pypi:requests==2.32.3"


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("errdex-cache")


@pytest.fixture
def cache_dir(session_cache, monkeypatch, clean_environment):
    monkeypatch.setenv("ERRDEX_CACHE_DIR", str(session_cache))
    return session_cache


@pytest.fixture(scope="session")
def requests_reference():
    """requests 2.32.3 as tests/corpus.py downloaded and unpacked it (cached per machine)."""
    return download_wheel("requests", "2.32.3"), unpacked_wheel("requests", "2.32.3")


def mine_json(cli, *args):
    result = cli("mine", *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def records(cli, repo):
    result = cli("export", "--format", "full", "--repo", repo)
    assert result.exit_code == 0, result.output
    return [json.loads(line)["record"] for line in result.output.splitlines() if line.strip()]


def test_mine_a_pinned_wheel_through_the_cli(cli, cache_dir, requests_reference):
    reference_wheel, reference = requests_reference

    report = mine_json(cli, REQUESTS)

    (run,) = report["sources"]
    assert run["source"] == run["source"] | {
        "key": "psf/requests==2.32.3",
        "repo": "psf/requests",
        "kind": "pypi",
        "location": REQUESTS,
        "package": "requests",
        "version": "2.32.3",
    }
    assert report["problems"] == []
    # pip picked the very wheel the corpus holds, and every module of it was mined.
    (archive,) = (cache_dir / "pypi" / "requests-2.32.3").glob("*.whl")
    assert archive.name == reference_wheel.name
    assert hashlib.sha256(archive.read_bytes()).digest() == (
        hashlib.sha256(reference_wheel.read_bytes()).digest()
    )
    modules = sorted(p.relative_to(reference).as_posix() for p in reference.rglob("*.py"))
    assert report["files"] == len(modules) == 18

    mined = records(cli, "psf/requests")
    assert {r["filePath"] for r in mined} <= set(modules)
    assert all(r["package"] == "requests" and r["packageVersion"] == "2.32.3" for r in mined)
    by_site = {(r["filePath"], r["lineNumber"]): r for r in mined}
    no_host = by_site["requests/models.py", 444]
    assert no_host["errorClass"] == "InvalidURL"
    assert no_host["errorMessage"] == "Invalid URL {url}: No host supplied"
    assert no_host["githubUrl"] is None  # a release has no commit to link to
    labels = [by_site["requests/models.py", line] for line in (454, 456)]
    assert [r["errorMessage"] for r in labels] == ["URL has an invalid label."] * 2
    assert labels[0]["id"] != labels[1]["id"]
    # Each of those lines is what requests 2.32.3 has there.
    lines = (reference / "requests" / "models.py").read_text().splitlines()
    assert lines[443].strip() == 'raise InvalidURL(f"Invalid URL {url!r}: No host supplied")'
    assert (
        lines[453].strip() == lines[455].strip() == 'raise InvalidURL("URL has an invalid label.")'
    )
    for record in mined:
        if record["kind"] == "raise":
            source = (reference / record["filePath"]).read_text().splitlines()
            assert "raise" in source[record["lineNumber"] - 1], record["id"]


def test_second_run_reuses_the_cache_without_pip(cli, cache_dir, monkeypatch):
    mine_json(cli, REQUESTS)  # downloads, unless an earlier test of the session did
    entry = cache_dir / "pypi" / "requests-2.32.3"
    (variant,) = entry.glob("unpacked-*")

    def state():
        watched = [cache_dir / "pypi", entry, variant, variant / "manifest.json"]
        watched += list(entry.glob("*.whl"))
        return (
            sorted(os.listdir(cache_dir / "pypi")),
            [(p.stat().st_ino, p.stat().st_mtime_ns) for p in watched],
        )

    before = state()
    # From here on pip can reach no index and no local wheels: any download would fail.
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)

    again = mine_json(cli, REQUESTS)

    assert again["sources"][0]["source"]["version"] == "2.32.3"
    assert again["sources"][0]["files"] == 18
    assert state() == before
    # ... and pip is indeed unusable now: the unpinned spec must ask it, and fails.
    unpinned = cli("mine", "pypi:requests")
    assert unpinned.exit_code == 2 and "cannot download pypi:requests" in unpinned.output


def test_unknown_package_exits_2_with_one_line(cli, cache_dir):
    spec = "pypi:no-such-package-errdex-xyz==1.0"
    result = cli("mine", spec)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert spec in lines[0] and "No matching distribution" in lines[0]
    pypi = cache_dir / "pypi"
    assert not [p for p in pypi.iterdir() if p.name.startswith((".work-", "no-such"))]


@pytest.mark.parametrize(
    "spec", ["pypi:", "pypi:requests>=2", "pypi:requests[socks]", "pypi:--index-url=http://x"]
)
def test_malformed_spec_exits_2(cli, cache_dir, spec):
    result = cli("mine", spec)
    assert result.exit_code == 2
    assert "invalid PyPI source" in result.output and "pypi:NAME==VERSION" in result.output


def test_rev_does_not_apply_to_pypi(cli, cache_dir):
    result = cli("mine", REQUESTS, "--rev", "v2.32.3")
    assert result.exit_code == 2 and "--rev does not apply" in result.output


def test_sdist_only_release_is_mined_from_its_top_directory(cli, cache_dir):
    # docopt 0.6.2 has no wheel on PyPI; its metadata links no GitHub repository.
    report = mine_json(cli, "pypi:docopt==0.6.2")

    (run,) = report["sources"]
    assert run["source"]["key"] == "pypi:docopt==0.6.2"
    assert run["source"]["repo"] == "pypi:docopt"
    assert run["source"]["package"] == "docopt"
    assert [p.name for p in (cache_dir / "pypi" / "docopt-0.6.2").glob("*.tar.gz")] == [
        "docopt-0.6.2.tar.gz"
    ]
    assert report["problems"] == []
    mined = records(cli, "pypi:docopt")
    paths = {r["filePath"] for r in mined}
    assert "docopt.py" in paths
    assert not any(p.startswith("docopt-0.6.2/") or ".egg-info" in p for p in paths)
    by_site = {(r["filePath"], r["lineNumber"]): r for r in mined}
    usage = by_site["docopt.py", 468]
    assert usage["errorClass"] == "DocoptLanguageError"
    assert usage["errorMessage"] == '"usage:" (case-insensitive) not found.'
    assert by_site["docopt.py", 470]["errorMessage"] == 'More than one "usage:" (case-insensitive).'


def test_unpinned_spec_takes_the_latest_release(cli, cache_dir):
    # docopt's last release is 0.6.2 (2014), so "the latest" is stable.
    report = mine_json(cli, "pypi:docopt")
    source = report["sources"][0]["source"]
    assert (source["version"], source["location"]) == ("0.6.2", "pypi:docopt")
    assert source["key"] == "pypi:docopt==0.6.2"
    assert (cache_dir / "pypi" / "docopt-0.6.2").is_dir()
    assert not list((cache_dir / "pypi").glob(".work-*"))


def test_open_downloads_once_into_a_fresh_cache(tmp_path):
    limits = ArchiveLimits()
    first = PypiSource.open(REQUESTS, cache_dir=tmp_path, limits=limits)
    second = PypiSource.open(REQUESTS, cache_dir=tmp_path, limits=limits)
    assert (first.downloaded, second.downloaded) == (True, False)
    assert second.archive == first.archive and second.archive.is_file()
    assert second.info == first.info
    files = list(second.files(wanted=(".py",), max_bytes=10**7, include_tests=False))
    assert [f.path for f in files][:2] == ["requests/__init__.py", "requests/__version__.py"]
    assert all(f.data is not None for f in files)
    # Other caps unpack the same download again, beside the first copy (no new download).
    third = PypiSource.open(REQUESTS, cache_dir=tmp_path, limits=ArchiveLimits(max_file_bytes=1000))
    assert third.downloaded is False and third.variant != first.variant
    assert {p.kind.value for p in third.problems} == {"too-large"}


def test_parse_spec_normalises_the_name():
    spec = parse_spec("pypi:Requests_Toolbelt==1.0.0")
    assert (spec.name, spec.version, spec.requirement) == (
        "requests-toolbelt",
        "1.0.0",
        "requests-toolbelt==1.0.0",
    )
    assert parse_spec("pypi:docopt").version is None


def test_release_with_metadata_pip_refuses_is_taken_from_the_index(tmp_path):
    # celery 4.1.0 declares ``pytz (>dev)``, which pip 24.1+ refuses as invalid metadata; its
    # source is still what users of that version run, so errdex takes the file the index lists.
    source = PypiSource.open("pypi:celery==4.1.0", cache_dir=tmp_path, limits=ArchiveLimits())
    assert source.downloaded and source.archive.name == "celery-4.1.0-py2.py3-none-any.whl"
    assert (source.info.package, source.info.version) == ("celery", "4.1.0")
    paths = {f.path for f in source.files(wanted=(".py",), max_bytes=10**7, include_tests=False)}
    assert "celery/worker/consumer/consumer.py" in paths


class _Index(http.server.BaseHTTPRequestHandler):
    """A PEP 691 simple index on loopback listing one wheel, whose digest may be wrong."""

    wheel = b""
    digest = ""

    def do_GET(self):  # noqa: N802 - http.server's name
        if self.path == "/simple/demo/":
            body = json.dumps(
                {
                    "files": [
                        {"filename": "demo-1.0.tar.gz", "url": "/f/demo-1.0.tar.gz", "hashes": {}},
                        {
                            "filename": "demo-1.0-py3-none-any.whl",
                            "url": "/f/demo-1.0-py3-none-any.whl",
                            "hashes": {"sha256": self.digest},
                        },
                        {"filename": "demo-2.0-py3-none-any.whl", "url": "/f/x", "hashes": {}},
                    ]
                }
            ).encode()
        elif self.path == "/f/demo-1.0-py3-none-any.whl":
            body = self.wheel
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        pass


@pytest.fixture
def simple_index():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


def test_registry_download_prefers_the_pure_wheel_and_checks_its_digest(tmp_path, simple_index):
    _Index.wheel = b"PK not really a zip"
    _Index.digest = hashlib.sha256(_Index.wheel).hexdigest()
    spec = parse_spec("pypi:demo==1.0")
    archive = registry_download(spec, tmp_path, index=simple_index)
    assert archive == tmp_path / "demo-1.0-py3-none-any.whl"
    assert archive.read_bytes() == _Index.wheel

    _Index.digest = "0" * 64
    again = tmp_path / "again"
    again.mkdir()
    with pytest.raises(SourceNotFoundError, match="does not match the index's sha256"):
        registry_download(spec, again, index=simple_index)
    assert not list(again.iterdir())

    with pytest.raises(SourceNotFoundError, match="lists no pure wheel or sdist"):
        registry_download(parse_spec("pypi:demo==3.0"), again, index=simple_index)
    with pytest.raises(SourceNotFoundError, match="404"):
        registry_download(parse_spec("pypi:absent==1.0"), again, index=simple_index)
