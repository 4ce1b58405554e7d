"""Shared fixtures: a clean environment, the seed record, git repositories, a CLI runner."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

DATA = Path(__file__).resolve().parent / "data"
# The one record of the dataset errdex is compatible with (a copy of shared/seed/).
SEED_FILE = DATA / "sglang-spec-utils-record.json"
SEED_PATH = "python/sglang/srt/speculative/spec_utils.py"


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"sqlite {sqlite3.sqlite_version}"]


@pytest.fixture(autouse=True)
def clean_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No ERRDEX_* or colour variables leak in; user directories point at a temporary home."""
    for name in list(os.environ):
        if name.startswith("ERRDEX_") or name in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(name)
    home = tmp_path_factory.mktemp("home")
    for variable in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(variable, str(home / variable.lower()))
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture(scope="session")
def seed_text() -> str:
    return SEED_FILE.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def seed(seed_text: str) -> dict[str, Any]:
    return json.loads(seed_text)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.sqlite3"


@pytest.fixture
def cli(runner: CliRunner, db: Path) -> Callable[..., Any]:
    """Run the CLI against the test's own store."""
    from errdex.cli import app

    def invoke(*args: str, input: str | None = None, with_db: bool = True) -> Any:
        argv = [*args, "--db", str(db)] if with_db else list(args)
        return runner.invoke(app, argv, input=input, catch_exceptions=False)

    return invoke


def git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )
    return result.stdout.strip()


def make_repo(root: Path, files: dict[str, str | bytes], message: str = "init") -> str:
    """Write files, commit them in a git repository at ``root``, return the commit sha."""
    if not (root / ".git").exists():
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def records_in_the_file_alone(path: Path, copy: Path) -> int:
    """Count the records of a store's database file read without its write-ahead log."""
    copy.write_bytes(path.read_bytes())
    with sqlite3.connect(copy) as db:
        return int(db.execute("SELECT count(*) FROM records").fetchone()[0])


def seed_fixture_source(seed_record: dict[str, Any]) -> str:
    """A valid module whose lines 106–142 are the seed's ``sourceCode`` (other lines filler)."""
    head = [f"# filler line {n}" for n in range(1, 101)]
    head += [
        "def resolve_num_tokens_per_req(",
        "    spec_algorithm, phase, num_draft_tokens=None, is_draft_worker=False",
        "):",
        '    """Resolve how many tokens each request carries in a speculative phase.',
        "",
    ]
    assert len(head) == 105
    body = seed_record["sourceCode"].split("\n")
    tail = ["    return probs.gather(1, scores.argmax(dim=1, keepdim=True))", ""]
    return "\n".join(head + body + tail)


SEED_PHASES = ("draft_decode", "draft_extend", "target_verify")
"""The phases the seed site's code accepts (its three ``if phase == …: return`` branches)."""


def seed_site_facts(**changes: Any) -> Any:
    """The seed site's code facts as its code reads (three comparisons, then the raise)."""
    from errdex.models import CodeFacts, Guard, Parameter

    facts = CodeFacts(
        function="resolve_num_tokens_per_req",
        signature=(
            "resolve_num_tokens_per_req(spec_algorithm, phase, num_draft_tokens=None, "
            "is_draft_worker=False)"
        ),
        parameters=[
            Parameter(name="spec_algorithm"),
            Parameter(name="phase"),
            Parameter(name="num_draft_tokens", default="None"),
            Parameter(name="is_draft_worker", default="False"),
        ],
        guards=[
            Guard(
                kind="comparison",
                text=f'phase == "{value}"',
                subject="phase",
                values=[f'"{value}"'],
                leads_to_site=False,
                line=line,
            )
            for value, line in zip(SEED_PHASES, (114, 116, 118), strict=True)
        ],
        subject="phase",
        accepted_values=[repr(value) for value in SEED_PHASES],
        exception_bases=["Exception"],
    )
    return facts.model_copy(update=changes)
