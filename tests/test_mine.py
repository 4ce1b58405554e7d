import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from conftest import SEED_PATH, make_repo, records_in_the_file_alone, seed_fixture_source

SEED_EQUAL_FIELDS = (
    "errorMessage",
    "messagePattern",
    "errorClass",
    "severity",
    "lineNumber",
    "sourceCode",
    "sourceCodeStart",
    "sourceCodeEnd",
    "slug",
    "schemaVersion",
)


def records_of(cli, repo=None):
    args = ["export", "--format", "full"] + (["--repo", repo] if repo else [])
    result = cli(*args)
    return [json.loads(line)["record"] for line in result.output.splitlines() if line.strip()]


def test_the_seed_site_mined_from_a_git_repository_equals_the_seed(cli, tmp_path, seed):
    repo = tmp_path / "sglang"
    sha = make_repo(repo, {SEED_PATH: seed_fixture_source(seed["record"]), "README.md": "x"})
    result = cli("mine", str(repo), "--repo", "sgl-project/sglang", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["files"] == 1 and report["records"] == 1 and report["problems"] == []

    (record,) = records_of(cli)
    expected = seed["record"]
    for field in SEED_EQUAL_FIELDS:
        assert record[field] == expected[field], field
    assert record["repo"] == "sgl-project/sglang"
    assert record["analyzedSha"] == sha
    assert record["githubUrl"] == (
        f"https://github.com/sgl-project/sglang/blob/{sha}/{SEED_PATH}#L106-L142"
    )
    assert record["errorType"] == "validation"
    assert record["function"] == "resolve_num_tokens_per_req"


def test_git_source_is_read_at_a_revision_without_checkout(cli, tmp_path):
    repo = tmp_path / "r"
    first = make_repo(repo, {"pkg/a.py": 'def f():\n    raise ValueError("old message")\n'})
    make_repo(repo, {"pkg/a.py": 'def f():\n    raise ValueError("new message")\n'})
    (repo / "pkg" / "a.py").write_text('raise ValueError("uncommitted")\n')

    assert cli("mine", str(repo)).exit_code == 0
    assert [r["errorMessage"] for r in records_of(cli)] == ["new message"]

    assert cli("mine", str(repo), "--rev", first[:10]).exit_code == 0
    (record,) = records_of(cli)
    assert record["errorMessage"] == "old message"
    assert record["analyzedSha"] == first
    assert record["repo"] == "r"


def test_a_directory_of_a_repository_at_a_revision_is_mined_alone(cli, tmp_path):
    repo = tmp_path / "r"
    make_repo(
        repo,
        {
            "a/x.py": 'raise ValueError("from a")\n',
            "b/y.py": 'raise ValueError("from b")\n',
        },
    )
    assert cli("mine", str(repo)).exit_code == 0
    result = cli("mine", str(repo / "a"), "--rev", "HEAD", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["files"] == 1
    records = sorted((r["filePath"], r["errorMessage"]) for r in records_of(cli))
    # Paths stay relative to the repository's top; the whole repository's records stay too.
    assert records == [("a/x.py", "from a"), ("a/x.py", "from a"), ("b/y.py", "from b")]
    (repo / "later").mkdir()
    (repo / "later" / "z.py").write_text('raise ValueError("not committed")\n')
    missing = cli("mine", str(repo / "later"), "--rev", "HEAD")
    assert missing.exit_code == 2 and "is not a directory of" in missing.output
    # The same directory named twice (relative and absolute) is one source, not a clash.
    same = cli("mine", str(repo / "a"), str(repo / "a" / ".." / "a"), "--rev", "HEAD")
    assert same.exit_code == 0, same.output


def test_remining_replaces_the_records_of_the_source(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "m.py").write_text('raise KeyError("one")\nraise KeyError("two")\n')
    cli("mine", str(src))
    (src / "m.py").write_text('raise KeyError("three")\n')
    cli("mine", str(src))
    assert [r["errorMessage"] for r in records_of(cli)] == ["three"]


def test_ids_survive_lines_inserted_above_and_identical_templates_differ(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    one = 'def f(x):\n    raise ValueError(f"bad {x}")\n'
    body = one + "\n" + one.replace("def f", "def g")
    (src / "m.py").write_text(body)
    cli("mine", str(src))
    before = records_of(cli)
    assert len({r["id"] for r in before}) == 2
    (src / "m.py").write_text("import os\n\n# a comment\n" + body)
    cli("mine", str(src))
    after = records_of(cli)
    assert [r["id"] for r in after] == [r["id"] for r in before]
    assert [r["lineNumber"] for r in after] == [r["lineNumber"] + 3 for r in before]


def test_directory_walk_skips_tests_symlinks_and_caches(cli, tmp_path):
    src = tmp_path / "proj"
    (src / "pkg").mkdir(parents=True)
    (src / "tests").mkdir()
    (src / "__pycache__").mkdir()
    (src / "pkg" / "a.py").write_text('raise ValueError("kept")\n')
    (src / "tests" / "test_a.py").write_text('raise ValueError("test only")\n')
    (src / "pkg" / "test_b.py").write_text('raise ValueError("test only")\n')
    (src / "__pycache__" / "c.py").write_text('raise ValueError("cache")\n')
    (src / "pkg" / "link.py").symlink_to(src / "pkg" / "a.py")
    cli("mine", str(src))
    assert [r["errorMessage"] for r in records_of(cli)] == ["kept"]
    cli("mine", str(src), "--include-tests")
    assert sorted(r["errorMessage"] for r in records_of(cli)) == ["kept", "test only", "test only"]


def test_bad_files_become_problems_and_the_rest_is_mined(cli, tmp_path, monkeypatch):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "good.py").write_text('raise ValueError("good one")\n')
    (src / "syntax.py").write_text("def broken(:\n    raise ValueError('x')\n")
    (src / "latin.py").write_bytes(b'raise ValueError("caf\xe9")\n')
    (src / "nul.py").write_bytes(b'raise ValueError("a")\x00\n')
    (src / "huge.py").write_text("x = 1\n" * 200_000)
    (src / "declared.py").write_bytes(b'# -*- coding: latin-1 -*-\nraise ValueError("caf\xe9")\n')
    monkeypatch.setenv("ERRDEX_MAX_FILE_BYTES", "1000000")
    result = cli("mine", str(src), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    kinds = {p["path"]: p["kind"] for p in report["problems"]}
    assert kinds == {
        "syntax.py": "syntax-error",
        "latin.py": "encoding",
        "nul.py": "binary",
        "huge.py": "too-large",
    }
    syntax = next(p for p in report["problems"] if p["path"] == "syntax.py")
    assert syntax["line"] == 1
    assert sorted(r["errorMessage"] for r in records_of(cli)) == ["café", "good one"]
    problems = cli("stats", "--json")
    assert json.loads(problems.output)["problems"] == 4


def test_odd_files_and_names_are_problems_not_a_crash_or_a_hang(cli, tmp_path, monkeypatch):
    # File names that are not UTF-8, a fifo named *.py (reading it would block for ever) and
    # a directory that cannot be listed: each is reported, the rest is mined.
    src = tmp_path / "proj"
    (src / "secret").mkdir(parents=True)
    (src / "ok.py").write_text('raise ValueError("fine")\n')
    os.mkfifo(src / "pipe.py")
    raw = os.fsencode(src)
    with open(raw + b"/bad\xff.py", "wb") as handle:
        handle.write(b"def broken(:\n")
    with open(raw + b"/w\xe9ird.py", "wb") as handle:
        handle.write(b'raise KeyError("weird name")\n')
    walk = os.walk

    def walk_failing_on_secret(top, onerror=None, **kwargs):
        for directory, subdirectories, names in walk(top, onerror=onerror, **kwargs):
            if "secret" in subdirectories:
                subdirectories.remove("secret")
                onerror(PermissionError(13, "Permission denied", os.path.join(directory, "secret")))
            yield directory, subdirectories, names

    monkeypatch.setattr("errdex.extract.files.os.walk", walk_failing_on_secret)
    result = cli("mine", str(src), "--json")
    assert result.exit_code == 0, result.output
    kinds = {p["path"]: (p["kind"], p["message"]) for p in json.loads(result.output)["problems"]}
    assert kinds["pipe.py"] == ("unreadable", "not a regular file")
    assert kinds["bad\\xff.py"][0] == "syntax-error"
    assert kinds["secret"] == ("unreadable", "cannot list the directory: Permission denied")
    paths = sorted(r["filePath"] for r in records_of(cli))
    assert paths == ["ok.py", "w\\xe9ird.py"]


def test_a_problem_gone_or_come_is_written_even_when_no_file_changed(cli, tmp_path, monkeypatch):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "ok.py").write_text('raise ValueError("fine")\n')
    (src / "bad.py").write_text("def broken(:\n")
    assert cli("mine", str(src)).exit_code == 0
    (src / "bad.py").unlink()
    report = json.loads(cli("mine", str(src), "--json").output)
    assert report["problems"] == []
    assert json.loads(cli("stats", "--json").output)["problems"] == 0
    (src / "big.py").write_text("x = 1\n" * 300)
    monkeypatch.setenv("ERRDEX_MAX_FILE_BYTES", "1000")
    report = json.loads(cli("mine", str(src), "--json").output)
    assert [p["path"] for p in report["problems"]] == ["big.py"]
    assert json.loads(cli("stats", "--json").output)["problems"] == 1


def test_two_directories_of_one_name_in_one_run_are_refused(cli, tmp_path):
    for parent in ("x", "y"):
        (tmp_path / parent / "pkg").mkdir(parents=True)
        (tmp_path / parent / "pkg" / "m.py").write_text(f'raise ValueError("from {parent}")\n')
    result = cli("mine", str(tmp_path / "x" / "pkg"), str(tmp_path / "y" / "pkg"))
    assert result.exit_code == 2 and "both be stored as 'pkg'" in result.output


def test_strict_stops_at_the_first_bad_file(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "syntax.py").write_text("def broken(:\n")
    result = cli("mine", str(src), "--strict")
    assert result.exit_code == 2
    assert "syntax.py:1: syntax error" in result.output


def test_strict_with_worker_processes_reports_the_file_not_a_broken_pool(cli, tmp_path):
    # The worker's ExtractionError crosses back to the parent whole (#3).
    src = _project(tmp_path / "proj")
    (src / "m39.py").write_text("def broken(:\n")
    result = cli("mine", str(src), "--strict", "--jobs", "2")
    assert result.exit_code == 2
    assert "syntax error" in result.output


def test_errdex_errors_survive_pickling():
    import pickle

    from errdex.errors import ExtractionError, MissingDependencyError, StoreError

    for error in (
        ExtractionError("syntax error: x", path="a.py", kind="syntax", line=3),
        StoreError("cannot write", location="/tmp/x"),
        MissingDependencyError("the web UI", extra="web"),
    ):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert vars(again) == vars(error)


def test_a_git_source_mined_with_worker_processes_equals_one_job(cli, tmp_path, db):
    # Workers forked while git cat-file was being read kept its input open: git never saw
    # its end and the run timed out (#3). They now start before anything is read.
    files = {
        f"m{n:02}.py": f"def f(x):\n    raise ValueError(f'v {{x}} in {n}')\n" for n in range(40)
    }
    make_repo(tmp_path / "repo", files)
    started = time.monotonic()
    parallel = cli("mine", str(tmp_path / "repo"), "--json", "--jobs", "2")
    assert parallel.exit_code == 0, parallel.output
    assert time.monotonic() - started < 20
    parallel_records = records_of(cli)
    db.unlink()
    assert cli("mine", str(tmp_path / "repo"), "--jobs", "1").exit_code == 0
    assert _comparable(records_of(cli)) == _comparable(parallel_records)
    assert len(parallel_records) == 40


def test_missing_path_and_revision_are_one_line_errors(cli, tmp_path):
    result = cli("mine", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "does not exist" in result.output

    repo = tmp_path / "r"
    make_repo(repo, {"a.py": "x = 1\n"})
    result = cli("mine", str(repo), "--rev", "no-such-branch")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "no-such-branch" in result.output

    plain = tmp_path / "plain"
    plain.mkdir()
    result = cli("mine", str(plain), "--rev", "main")
    assert result.exit_code == 2 and "git repository" in result.output

    assert cli("mine").exit_code == 2


def test_mine_installed_indexes_distributions_with_versions(tmp_path):
    """Mine the distributions installed beside the tests (real code nobody here wrote)."""
    from errdex.extract.packages import installed_sources
    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store.sqlite import SQLiteStore

    sources = {s.info.package: s for s in installed_sources()}
    assert "typer" in sources and "pydantic" in sources
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        report = Pipeline(Settings(db=tmp_path / "s.sqlite3"), store).mine(sources["typer"])
        assert report.source.version and report.records > 10
        assert report.source.repo == "fastapi/typer"
        records, total = store.search(
            __import__("errdex.store.base", fromlist=["SearchQuery"]).SearchQuery(
                repo="fastapi/typer", limit=1000
            )
        )
        assert total == report.records
        assert all(not r.file_path.startswith("/") for r in records)
        assert all(r.package == "typer" for r in records)


def _distribution(site, name, version, repo_url, module, message):
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Project-URL: Source, {repo_url}\n"
    )
    (site / module).mkdir()
    (site / module / "__init__.py").write_text(f'raise ValueError("{message}")\n')
    (info / "RECORD").write_text(f"{module}/__init__.py,,\n{info.name}/METADATA,,\n")


def test_packages_of_one_repository_and_version_are_stored_apart(tmp_path):
    """opentelemetry-api and -sdk: one GitHub repository, the same version, two sources."""
    from errdex.extract.packages import installed_sources
    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store.base import SearchQuery
    from errdex.store.sqlite import SQLiteStore

    site = tmp_path / "site"
    url = "https://github.com/acme/mono"
    _distribution(site, "acme-api", "1.0", url, "acme_api", "api message")
    _distribution(site, "acme-sdk", "1.0", url, "acme_sdk", "sdk message")
    _distribution(site, "mono", "1.0", url, "mono", "own package")
    sources = installed_sources([str(site)])
    assert sorted(s.info.key for s in sources) == [
        "acme/mono:acme-api==1.0",
        "acme/mono:acme-sdk==1.0",
        "acme/mono==1.0",  # the repository's own package keeps the short key
    ]
    db = tmp_path / "s.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for source in sources:
            pipeline.mine(source)
        assert sorted(r.error_message for r in store.search(SearchQuery(limit=10))[0]) == [
            "api message",
            "own package",
            "sdk message",
        ]
    # A store written when both were keyed "acme/mono==1.0": that source is this package's.
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM sources WHERE key = 'acme/mono==1.0'")
        connection.execute(
            "UPDATE sources SET key = 'acme/mono==1.0' WHERE key = 'acme/mono:acme-api==1.0'"
        )
    with SQLiteStore(db) as store:
        again = Pipeline(Settings(db=db), store).mine(sources[0])
        assert again.source.key == "acme/mono:acme-api==1.0" and again.unchanged
        assert sorted(info.key for info, _ in store.sources()) == [
            "acme/mono:acme-api==1.0",
            "acme/mono:acme-sdk==1.0",
        ]


def _count(db_path, repo):
    with sqlite3.connect(db_path) as connection:
        return connection.execute(
            "SELECT count(*) FROM records WHERE repo = ?", (repo,)
        ).fetchone()[0]


@pytest.mark.slow
def test_a_killed_run_leaves_the_previous_records_intact(tmp_path):
    src = tmp_path / "big"
    src.mkdir()
    for n in range(30):
        (src / f"m{n}.py").write_text(f'raise ValueError("first generation {n}")\n')
    db_path = tmp_path / "kill.sqlite3"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    subprocess.run(
        [sys.executable, "-m", "errdex", "mine", str(src), "--db", str(db_path)],
        check=True,
        env=env,
        capture_output=True,
    )
    assert _count(db_path, "big") == 30

    # A second generation big enough that mining takes seconds.
    filler = "".join(
        f"def f{i}(x):\n    if x > {i}:\n        raise ValueError(f'second {{x}} {i}')\n"
        for i in range(300)
    )
    for n in range(400):
        (src / f"m{n}.py").write_text(filler)
    process = subprocess.Popen(
        [sys.executable, "-m", "errdex", "mine", str(src), "--db", str(db_path)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with sqlite3.connect(db_path) as connection:
            running = connection.execute(
                "SELECT count(*) FROM runs WHERE status = 'running'"
            ).fetchone()[0]
        if running:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the mining run never started")
    time.sleep(1.0)
    assert process.poll() is None, (
        "the run finished before it could be killed; make the source bigger"
    )
    os.kill(process.pid, signal.SIGKILL)
    process.wait()

    assert _count(db_path, "big") == 30
    with sqlite3.connect(db_path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        messages = {row[0] for row in connection.execute("SELECT error_message FROM records")}
    assert messages == {f"first generation {n}" for n in range(30)}


def test_remining_an_unchanged_source_reuses_everything(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    for n in range(5):
        (src / f"m{n}.py").write_text(f'raise ValueError("message {n}")\n')
    first = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert first["cached"] == 0 and not first["unchanged"]
    ids = [r["id"] for r in records_of(cli)]

    again = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert again["cached"] == 5 and again["unchanged"] and again["records"] == 5
    assert [r["id"] for r in records_of(cli)] == ids

    (src / "m0.py").write_text('raise ValueError("changed")\n')
    changed = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert changed["cached"] == 4 and not changed["unchanged"]
    assert sorted(r["errorMessage"] for r in records_of(cli)) == [
        "changed",
        "message 1",
        "message 2",
        "message 3",
        "message 4",
    ]
    (src / "m4.py").unlink()
    removed = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert removed["records"] == 4 and not removed["unchanged"]


def test_a_file_that_fails_to_parse_is_not_parsed_again_while_unchanged(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "good.py").write_text('raise ValueError("fine")\n')
    (src / "bad.py").write_text("def (:\n")
    first = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert [p["kind"] for p in first["problems"]] == ["syntax-error"]

    again = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert again["unchanged"] and again["problems"] == first["problems"]
    assert again["records"] == 1

    # The cached failure is for that content only: fixed, the file is mined.
    (src / "bad.py").write_text('raise KeyError("now fine")\n')
    fixed = json.loads(cli("mine", str(src), "--json").output)["sources"][0]
    assert not fixed["unchanged"] and fixed["problems"] == [] and fixed["records"] == 2
    assert fixed["cached"] == 1
    # --strict still stops at a broken file, cached or not.
    (src / "bad.py").write_text("def (:\n")
    assert cli("mine", str(src)).exit_code == 0
    strict = cli("mine", str(src), "--strict")
    assert strict.exit_code != 0 and "bad.py:1" in strict.output


def test_parallel_mining_gives_the_same_records(cli, tmp_path, db):
    src = tmp_path / "proj"
    src.mkdir()
    for n in range(80):
        (src / f"m{n:02}.py").write_text(
            f'def f(x):\n    raise ValueError(f"value {{x}} in file {n}")\n'
        )
    (src / "broken.py").write_text("def (:\n")
    serial = json.loads(cli("mine", str(src), "--json", "--jobs", "1").output)
    serial_records = records_of(cli)
    db.unlink()
    parallel = json.loads(cli("mine", str(src), "--json", "--jobs", "2").output)
    assert parallel["records"] == serial["records"] == 80
    assert parallel["problems"] == serial["problems"] and len(serial["problems"]) == 1
    assert [r["id"] for r in records_of(cli)] == [r["id"] for r in serial_records]


def _project(root, files=40, sites=4):
    root.mkdir()
    for n in range(files):
        body = "".join(
            f"def f{k}(x):\n    raise ValueError(f'value {{x}} in file {n}, site {k}')\n"
            for k in range(sites)
        )
        # g calls f0 of every file (its records' callers are found across the files).
        same = "def g(x):\n    f0(x)\n    raise ValueError('same')\n"
        (root / f"m{n:02}.py").write_text(body + same * 2)
    return root


def _comparable(records):
    moving = {"analyzedAt", "datasetVersion"}
    return [{k: v for k, v in record.items() if k not in moving} for record in records]


_SPAN_SPY = """
import os, sys, time
from pathlib import Path
import errdex.pipeline as pipeline
pipeline.PARALLEL_BUILD_MIN = 10
spans, build_records, main = Path(sys.argv[1]), pipeline.build_records, os.getpid()
def spy(sites, *args, **kwargs):
    if os.environ.get("FAIL_IN_CHILD") and os.getpid() != main:
        raise RuntimeError("the build failed")
    if os.environ.get("SLOW_CHILD") and os.getpid() != main:
        time.sleep(0.1)
    (spans / f"{sites[0].path}-{len(sites)}-{os.getpid()}").touch()
    return build_records(sites, *args, **kwargs)
pipeline.build_records = spy
from errdex.cli import app
app(sys.argv[2:])
"""


def _mine_spied(src, db, spans, jobs, fail=False, slow=False):
    """Mine in a process of its own (no test thread in it), telling who built which span."""
    spans.mkdir()
    args = ["mine", str(src), "--jobs", str(jobs), "--db", str(db)]
    process = subprocess.Popen(
        [sys.executable, "-c", _SPAN_SPY, str(spans), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "FAIL_IN_CHILD": "1" if fail else "", "SLOW_CHILD": "1" if slow else ""},
    )
    output, _ = process.communicate(timeout=300)
    if fail:
        assert process.returncode != 0 and "RuntimeError: the build failed" in output, output
    else:
        assert process.returncode == 0, output
    made = [p.name.split("-") for p in spans.iterdir()]
    return process.pid, sorted((int(f[1:3]), int(size), int(pid)) for f, size, pid in made)


def test_records_built_in_forked_processes_equal_the_serial_ones(cli, tmp_path, db):
    # Classifying and encoding the records runs in forked processes with more than one job
    # (#3); each takes whole files, so the ordinals of identical messages stay the same.
    from errdex.pipeline import _PIECES

    src = _project(tmp_path / "proj")
    pid, made = _mine_spied(src, db, tmp_path / "serial", jobs=1)
    assert made == [(0, 240, pid)]  # one job: built here, as they are written
    serial = records_of(cli)
    for slow in (False, True):
        db.unlink()
        pid, made = _mine_spied(src, db, tmp_path / f"forked-{slow}", jobs=3, slow=slow)
        # 40 files (more than the two chunks that start the extraction processes) of 6
        # sites: whole files, each span built once, by whichever process was free first.
        assert len(made) == 3 * _PIECES
        assert all(
            first * 6 == sum(size for _, size, _ in made[:k])
            for k, (first, _, _) in enumerate(made)
        )
        assert sum(size for _, size, _ in made) == 240
        builders = [builder for _, _, builder in made]
        assert pid not in builders[:2]  # a span for each forked process to start with
        if slow:  # forked processes slower than this one: it builds most spans itself
            assert builders.count(pid) > len(made) / 2
        assert _comparable(records_of(cli)) == _comparable(serial)
    # The last step of linking runs where each record is built: callers found in other files.
    called = [r for r in serial if r["facts"].get("callers")]
    assert len(called) == 40 and all(len(r["facts"]["callers"]) > 1 for r in called)


def test_spans_cut_the_sites_at_file_boundaries():
    from types import SimpleNamespace

    import errdex.pipeline as pipeline
    from errdex.pipeline import PARALLEL_BUILD_MIN, _spans

    def site(path):  # _spans reads only the path
        return SimpleNamespace(path=path)

    # 2,400 sites in files of 7, one file of 1,000 in the middle.
    sites = [site(f"f{n // 7}.py") for n in range(1400)]
    sites[700:700] = [site("big.py")] * 1000
    for jobs in (2, 3, 8):
        spans = _spans(sites, jobs)
        assert spans[0][0] == 0 and spans[-1][1] == len(sites)
        assert all(a < b for a, b in spans) and all(
            left[1] == right[0] for left, right in itertools.pairwise(spans)
        )
        assert all(sites[a].path != sites[a - 1].path for a, _ in spans[1:])
        assert 1 < len(spans) <= jobs * pipeline._PIECES
        even = len(sites) / (jobs * pipeline._PIECES)
        assert all(b - a <= even + 7 for a, b in spans if sites[a].path != "big.py")
    assert _spans(sites, 1) == [(0, len(sites))]
    assert _spans(sites[: PARALLEL_BUILD_MIN - 1], 4) == [(0, PARALLEL_BUILD_MIN - 1)]
    assert _spans([site("one.py")] * 3000, 2) == [(0, 3000)]


def test_the_last_tenth_of_a_source_is_mined_biggest_chunk_first(tmp_path):
    # A process that starts a big chunk while the others take the last small ones keeps the
    # run waiting (#3): the tail of the source is mined biggest first, the rest in order.
    from errdex.extract.files import SourceFile
    from errdex.pipeline import Pipeline, _Extraction
    from errdex.settings import Settings
    from errdex.store.sqlite import SQLiteStore

    sizes = [100] * 20 + [30, 10, 60, 20, 50, 40]  # 2,210 bytes: the last 210 are reordered
    db = tmp_path / "s.sqlite3"
    with SQLiteStore(db) as store:
        extraction = _Extraction(Pipeline(Settings(db=db, jobs=1), store))
        extraction._chunks = [
            [SourceFile(path=f"f{n}.py", data=b"x" * size)] for n, size in enumerate(sizes)
        ]
        extraction._order = list(range(len(sizes)))
        extraction._next = 3  # given out already: they stay where they are
        extraction._biggest_last_first()
        assert extraction._order == [*range(20), 22, 24, 25, 20, 23, 21]
        extraction._next = 23  # all but three given out: only those are reordered
        extraction._order = list(range(len(sizes)))
        extraction._biggest_last_first()
        assert extraction._order == [*range(23), 24, 25, 23]


def test_a_forked_build_that_fails_keeps_the_previous_records(cli, tmp_path, db):
    src = _project(tmp_path / "proj")
    assert cli("mine", str(src), "--jobs", "1").exit_code == 0
    before = records_of(cli)
    (src / "m00.py").write_text("def f(x):\n    raise ValueError('changed')\n")
    pid, made = _mine_spied(src, db, tmp_path / "spans", jobs=2, fail=True)
    assert {builder for _, _, builder in made} <= {pid}  # the forked process's spans failed
    assert records_of(cli) == before


def test_mining_pauses_the_cyclic_collector_and_restores_it(tmp_path, monkeypatch):
    # Collecting walked every result alive again and again, up to a sixth of a run (#3).
    import gc

    from errdex.extract.files import open_source
    from errdex.extract.python import PythonExtractor
    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store.sqlite import SQLiteStore

    seen: list[bool] = []
    extract = PythonExtractor.extract

    def spy(self, file):
        seen.append(gc.isenabled())
        return extract(self, file)

    monkeypatch.setattr(PythonExtractor, "extract", spy)
    src = tmp_path / "proj"
    src.mkdir()
    (src / "m.py").write_text('raise ValueError("bad")\n')
    for enabled in (True, False):
        db = tmp_path / f"store-{enabled}.sqlite3"
        with SQLiteStore(db) as store:
            (gc.enable if enabled else gc.disable)()
            try:
                report = Pipeline(Settings(db=db), store).mine(open_source(str(src)))
                assert gc.isenabled() is enabled
            finally:
                gc.enable()
        assert report.records == 1
    assert seen == [False, False]


def test_a_run_ends_once_its_records_are_in_the_database_file(tmp_path, monkeypatch):
    # The store copies a run's log into the database in another thread while the run's
    # objects are freed (#3); the run waits for it, so that no thread outlives it (a later
    # run forks its workers).
    import threading

    from errdex.extract.files import open_source
    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store import sqlite as sqlite_store

    checkpoint = sqlite_store._checkpoint

    def slow(*args):
        time.sleep(0.3)
        checkpoint(*args)

    monkeypatch.setattr(sqlite_store, "_checkpoint", slow)
    src = tmp_path / "proj"
    src.mkdir()
    for n in range(40):
        (src / f"m{n}.py").write_text(f'raise ValueError("bad {n}")\n')
    db = tmp_path / "store.sqlite3"
    with sqlite_store.SQLiteStore(db) as store:
        report = Pipeline(Settings(db=db, jobs=2), store).mine(open_source(str(src)))
        assert report.records == 40
        assert "errdex-checkpoint" not in {thread.name for thread in threading.enumerate()}
        assert records_in_the_file_alone(db, tmp_path / "copy.sqlite3") == 40


_MINE_SPY = """
import os, sys, time
from pathlib import Path
import errdex.pipeline as pipeline
seen, mine_file_json, main = Path(sys.argv[1]), pipeline.mine_file_json, os.getpid()
(seen / f"main-{main}").touch()
def spy(extractor, file, **kwargs):
    if os.getpid() != main:
        if os.environ.get("DIE_IN_WORKER"):
            os._exit(7)
        time.sleep(0.02)  # a slow worker: this process surely mines chunks too
    (seen / f"{file.path}-{os.getpid()}").touch()
    return mine_file_json(extractor, file, **kwargs)
pipeline.mine_file_json = spy
from errdex.cli import app
app(sys.argv[2:])
"""


def _mine_watched(src, db, seen, *options, die=False):
    """Mine with two jobs in a process of its own; return it, its pid and who mined what."""
    seen.mkdir()
    process = subprocess.run(
        [sys.executable, "-c", _MINE_SPY, str(seen), "mine", str(src), "--db", str(db)]
        + ["--jobs", "2", "--json", *options],
        capture_output=True,
        text=True,
        env={**os.environ, "DIE_IN_WORKER": "1" if die else ""},
        timeout=300,
    )
    mined = {path: int(pid) for path, _, pid in (p.name.rpartition("-") for p in seen.iterdir())}
    return process, mined.pop("main"), mined


def test_the_mining_process_mines_chunks_beside_its_workers(cli, tmp_path, db):
    # With two jobs, one worker process and the mining process itself extract (#3): before,
    # two workers did, and this process took a core from them while it read their results.
    src = _project(tmp_path / "proj", files=80)
    process, pid, mined = _mine_watched(src, db, tmp_path / "seen")
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout)["records"] == 80 * 6
    assert sorted(mined) == sorted(p.name for p in src.iterdir())  # each file once
    pids = set(mined.values())
    assert len(pids) == 2 and pid in pids
    parallel = records_of(cli)
    db.unlink()
    assert cli("mine", str(src), "--jobs", "1").exit_code == 0
    assert _comparable(records_of(cli)) == _comparable(parallel)


def test_a_worker_process_that_dies_loses_only_its_files(cli, tmp_path, db):
    # Its files are problems that say why; the run goes on and mines the others here.
    src = _project(tmp_path / "proj", files=80)
    process, pid, mined = _mine_watched(src, db, tmp_path / "seen", die=True)
    assert process.returncode == 0, process.stderr
    report = json.loads(process.stdout)
    lost = {p["path"] for p in report["problems"]}
    assert lost and all(
        p["kind"] == "internal" and "worker process mining it ended (exit code 7)" in p["message"]
        for p in report["problems"]
    )
    assert set(mined.values()) == {pid}  # the worker died before it marked a file
    assert lost.isdisjoint(mined) and lost | set(mined) == {p.name for p in src.iterdir()}
    assert {r["filePath"] for r in records_of(cli)} == set(mined)
    assert report["records"] == 6 * len(mined)

    # A fresh store: in this one, the files mined are cached, and what is left to mine
    # may be too few to send to a worker (one chunk lost when the worker died before it
    # was given the second).
    fresh = tmp_path / "strict.sqlite3"
    strict, _, _ = _mine_watched(src, fresh, tmp_path / "strict", "--strict", die=True)
    assert strict.returncode == 2 and "worker process mining it ended" in strict.stderr


_FREED_HEAP_THEN_FORK = """
import os, sys
from errdex.pipeline import Pipeline, _Extraction
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore

def rss_mb():
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

# 200 MB of C-heap blocks, freed but for the last one, which holds the heap's top: glibc
# keeps all of it, as it keeps what a finished mining run freed.
blocks = [bytes(2000) + str(n).encode() for n in range(100_000)]
last = blocks[-1]
del blocks
before = rss_mb()
with SQLiteStore(sys.argv[1]) as store:
    with _Extraction(Pipeline(Settings(db=sys.argv[1], jobs=2), store)):
        print(before, rss_mb())
"""


def test_a_process_gives_its_free_heap_back_before_forking_workers(tmp_path):
    # A process that had mined forked workers that copied its freed pages as they allocated:
    # two jobs ran 25% slower than in a fresh process (#3).
    from errdex.pipeline import _malloc_trim

    if _malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (not glibc): nothing to give back")
    output = subprocess.run(
        [sys.executable, "-c", _FREED_HEAP_THEN_FORK, str(tmp_path / "store.sqlite3")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    before, after = map(float, output.split())
    assert before > 200 and after < before - 150, output


def test_lone_surrogates_in_string_constants_are_stored_escaped(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "m.py").write_text('raise ValueError("bad \\ud800 char")\nraise KeyError("fine")\n')
    result = cli("mine", str(src), "--json")
    assert result.exit_code == 0, result.output
    messages = sorted(r["errorMessage"] for r in records_of(cli))
    assert messages == ["bad \\ud800 char", "fine"]


def test_parser_warnings_of_mined_code_are_not_problems(cli, tmp_path):
    """Old code has invalid escapes; the parser's warnings must not fail or spam the run."""
    src = tmp_path / "proj"
    src.mkdir()
    (src / "old.py").write_text(
        'import re\nif not re.match("\\d+", x):\n    raise ValueError("no \\d here")\n'
    )
    result = cli("mine", str(src), "--json")
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["problems"] == [] and report["records"] == 1


def test_a_match_statement_guard_is_classified(cli, tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "m.py").write_text(
        "def f(mode):\n"
        "    match mode:\n"
        '        case "a":\n'
        "            return 1\n"
        '        case "b":\n'
        "            return 2\n"
        '    raise ValueError(f"unknown mode {mode}")\n'
    )
    assert cli("mine", str(src)).exit_code == 0
    (record,) = records_of(cli)
    assert record["errorType"] and record["facts"]["subject"] == "mode"


@pytest.mark.slow
def test_mine_installed_mines_every_distribution_of_the_environment(cli):
    """What `make run` does: every package installed beside errdex, without a crash."""
    result = cli("mine", "--installed", "--jobs", "2", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert len(report["sources"]) > 20 and report["records"] > 1000


def test_languages_are_detected_by_extension_and_limited_by_flag(cli, tmp_path):
    src = tmp_path / "poly"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text('raise ValueError(f"bad mode {mode}")\n')
    (src / "pkg" / "b.go").write_text(
        'package pkg\n\nimport "fmt"\n\nfunc F(n int) error {\n'
        '\treturn fmt.Errorf("bad count %d", n)\n}\n'
    )
    (src / "pkg" / "c.js").write_text("function f(x) {\n  throw new TypeError(`bad ${x}`);\n}\n")
    (src / "pkg" / "d.ts").write_text(
        "export function g(x: string): never {\n  throw new RangeError('too far: ' + x);\n}\n"
    )
    (src / "pkg" / "e.rs").write_text('fn h(n: u8) {\n    panic!("too big: {}", n);\n}\n')
    (src / "pkg" / "F.java").write_text(
        'class F {\n  void k(int n) {\n    throw new IllegalStateException("state " + n);\n  }\n}\n'
    )
    # Generated and test files of the other languages are left out, as Python's are.
    (src / "pkg" / "bundle.min.js").write_text('throw new Error("minified");\n')
    (src / "pkg" / "c.test.js").write_text('throw new Error("a test");\n')
    (src / "pkg" / "b_test.go").write_text('package pkg\n\nvar e = errors.New("a test")\n')
    report = json.loads(cli("mine", str(src), "--json").output)
    assert report["sources"][0]["languages"] == {
        "python": 1,
        "go": 1,
        "javascript": 1,
        "typescript": 1,
        "rust": 1,
        "java": 1,
    }
    found = {(r["language"], r["errorClass"], r["errorMessage"]) for r in records_of(cli)}
    assert found == {
        ("python", "ValueError", "bad mode {mode}"),
        ("go", "fmt.Errorf", "bad count {n}"),
        ("javascript", "TypeError", "bad {x}"),
        ("typescript", "RangeError", "too far: {x}"),
        ("rust", "panic", "too big: {n}"),
        ("java", "IllegalStateException", "state {n}"),
    }
    report = json.loads(cli("mine", str(src), "--language", "go", "-l", "rust", "--json").output)
    assert report["sources"][0]["languages"] == {"go": 1, "rust": 1}
    assert {r["language"] for r in records_of(cli)} == {"go", "rust"}
    bad = cli("mine", str(src), "--language", "cobol")
    assert bad.exit_code == 2
    assert "unknown language 'cobol'" in bad.output


def test_an_extractors_version_follows_its_code(tmp_path, monkeypatch):
    """The files cache is keyed by it: an errdex with other extraction code never reuses it."""
    from errdex.extract import code_version
    from errdex.extract.python import PythonExtractor

    (tmp_path / "fake_extractor.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    first = code_version("5", "fake_extractor")
    assert code_version("5", "fake_extractor") == first != code_version("6", "fake_extractor")
    (tmp_path / "fake_extractor.py").write_text("x = 2\n")
    assert code_version("5", "fake_extractor") != first
    version = PythonExtractor().version  # compiled (errdex/_native.py), it is an instance's
    assert version == code_version("5", "errdex.extract.python")
    assert version.startswith("5.") and len(version) == 14
