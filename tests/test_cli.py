import json
import subprocess
import sys

import pytest
from conftest import SEED_FILE

from errdex import __version__, _native


def test_seed_import_then_seed_export_gives_back_the_seed_exactly(cli, tmp_path, seed, seed_text):
    result = cli("import", str(SEED_FILE))
    assert result.exit_code == 0, result.output
    assert "1 seed" in result.output
    out = tmp_path / "out.jsonl"
    result = cli("export", "--format", "seed", "--out", str(out))
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    exported = json.loads(lines[0])
    assert exported == seed
    assert list(exported["record"]) == list(seed["record"])
    assert lines[0] == seed_text.strip()


def test_full_export_reimports_as_full_and_keeps_records(cli, tmp_path):
    cli("import", str(SEED_FILE))
    full = tmp_path / "full.jsonl.gz"
    assert cli("export", "--format", "full", "--out", str(full)).exit_code == 0
    other = tmp_path / "other.sqlite3"
    from typer.testing import CliRunner

    from errdex.cli import app

    result = CliRunner().invoke(app, ["import", str(full), "--db", str(other), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "files": 1,
        "records": 1,
        "formats": {"full": 1},
        "repos": {"sgl-project/sglang": 1},
    }


def test_show_search_stats_after_import(cli, seed):
    cli("import", str(SEED_FILE))
    record_id = seed["record"]["id"]

    shown = cli("show", record_id, "--json", "--format", "seed")
    assert shown.exit_code == 0
    assert json.loads(shown.output)["record"] == seed["record"]

    rich = cli("show", record_id)
    assert rich.exit_code == 0
    assert "Unknown speculative phase" in rich.output and "124" in rich.output

    found = cli("search", "speculative", "--json")
    assert found.exit_code == 0
    data = json.loads(found.output)
    assert data["total"] == 1 and data["records"][0]["id"] == record_id

    assert cli("search", "speculative", "--class", "TypeError", "--json").exit_code == 1
    assert cli("search", "speculative", "--type", "validation").exit_code == 0

    stats = json.loads(cli("stats", "--json").output)
    assert stats["records"] == 1 and stats["byClass"] == {"ValueError": 1}


def test_a_missing_store_is_said_and_never_created(cli, db):
    for command in (["show", "0123456789abcdef"], ["search", "x"], ["stats"], ["explain", "x"]):
        result = cli(*command)
        assert result.exit_code == 2 and f"no store at {db}" in result.output
    assert not db.exists()


def test_serve_refuses_a_missing_store_unless_it_takes_ingested_records(tmp_path, db):
    # In a subprocess with a timeout: a server that did start would never return.
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(db), "--port", "0"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and f"no store at {db}" in refused.stderr
    assert not db.exists()


def test_nothing_found_exits_1(cli, db):
    from errdex.store.sqlite import SQLiteStore

    SQLiteStore(db).close()  # an empty store
    assert cli("show", "0123456789abcdef").exit_code == 1
    assert cli("search", "anything").exit_code == 1
    assert cli("stats").exit_code == 1
    assert cli("export").exit_code == 1


def test_search_text_with_fts_syntax_is_plain_words(cli):
    cli("import", str(SEED_FILE))
    for text in ['"unbalanced', "phase AND OR NOT", "col:umn*", "(", "NEAR(a b)"]:
        assert cli("search", text).exit_code in (0, 1)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("not json\n", "not JSON"),
        ('{"record": {"id": "x"}}\n', "missing keys"),
        ("[1, 2]\n", "expected an object"),
    ],
)
def test_import_of_a_bad_file_is_a_one_line_error_and_writes_nothing(
    cli, tmp_path, content, reason
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(SEED_FILE.read_text() + "\n" + content)
    result = cli("import", str(bad))
    assert result.exit_code == 2
    assert reason in result.output and ":2:" in result.output
    assert cli("stats", "--json").exit_code == 1  # nothing imported


def test_import_of_a_missing_file_exits_2(cli, tmp_path):
    result = cli("import", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2 and "no such file" in result.output


def test_schema_prints_the_json_schema(cli):
    seed_schema = json.loads(cli("schema", "--format", "seed", with_db=False).output)
    full_schema = json.loads(cli("schema", with_db=False).output)
    assert "errorMessage" in seed_schema["properties"]
    assert "language" not in seed_schema["properties"]
    assert "language" in full_schema["properties"]


def test_version(cli):
    shown = cli("--version", with_db=False).output.strip()
    assert shown == f"errdex {__version__} ({_native.MODE} modules)"
    assert _native.MODE in ("compiled", "pure", "stale", "disabled")


def test_settings_precedence_default_file_env_flag(cli, runner, tmp_path, monkeypatch):
    from errdex.cli import app

    config = tmp_path / "errdex.toml"
    config.write_text("[errdex]\nwindow = 5\njobs = 3\n")
    monkeypatch.setenv("ERRDEX_JOBS", "4")
    result = runner.invoke(app, ["settings", "--json", "--config", str(config)])
    data = json.loads(result.output)
    assert data["window"] == {"value": 5, "from": str(config)}
    assert data["jobs"] == {"value": 4, "from": "env ERRDEX_JOBS"}
    assert data["strict"]["from"] == "default"


def test_bad_setting_values_are_usage_errors(runner, tmp_path, monkeypatch):
    from errdex.cli import app

    monkeypatch.setenv("ERRDEX_STRICT", "maybe")
    result = runner.invoke(app, ["settings"])
    assert result.exit_code == 2 and "ERRDEX_STRICT" in result.output
    monkeypatch.delenv("ERRDEX_STRICT")
    config = tmp_path / "c.toml"
    config.write_text("nonsense = 1\n")
    result = runner.invoke(app, ["settings", "--config", str(config)])
    assert result.exit_code == 2 and "unknown setting" in result.output
    config.write_text("[errdex]\nwindow = 5\nwindwo = 6\n")
    result = runner.invoke(app, ["settings", "--config", str(config)])
    assert result.exit_code == 2 and "unknown setting 'windwo'" in result.output


def test_another_tools_table_in_the_config_file_is_left_alone(runner, tmp_path):
    from errdex.cli import app

    config = tmp_path / "shared.toml"
    config.write_text(
        "jobs = 2\n[errdex]\nwindow = 5\n[tool.other]\nanything = 1\n[server]\nport = 1\n"
    )
    result = runner.invoke(app, ["settings", "--json", "--config", str(config)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["window"]["value"] == 5 and data["jobs"]["value"] == 2


def test_errdex_db_env_chooses_the_store(runner, tmp_path, monkeypatch):
    from errdex.cli import app

    target = tmp_path / "env.sqlite3"
    monkeypatch.setenv("ERRDEX_DB", str(target))
    assert runner.invoke(app, ["import", str(SEED_FILE)]).exit_code == 0
    assert target.exists()


def test_default_store_lives_in_the_user_data_dir(runner, tmp_path, monkeypatch):
    from errdex.cli import app
    from errdex.settings import default_db_path

    assert runner.invoke(app, ["import", str(SEED_FILE)]).exit_code == 0
    assert default_db_path().exists()
    assert str(default_db_path()).startswith(str(tmp_path.parent.parent)) or "xdg_data_home" in str(
        default_db_path()
    )


def test_no_color_is_honoured(runner, monkeypatch, tmp_path):
    from errdex.cli import app

    db = tmp_path / "c.sqlite3"
    runner.invoke(app, ["import", str(SEED_FILE), "--db", str(db)])
    monkeypatch.setenv("FORCE_COLOR", "1")
    coloured = runner.invoke(app, ["show", "6d46981c2eb2f8c3", "--db", str(db)]).output
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FORCE_COLOR")
    plain = runner.invoke(app, ["show", "6d46981c2eb2f8c3", "--db", str(db)]).output
    assert "\x1b[" in coloured
    assert "\x1b[" not in plain


def test_mined_text_with_rich_markup_prints_as_it_is(cli, tmp_path):
    # Paths, repos and messages come from other people's code: "[/]" in them is text.
    source = tmp_path / "src"
    (source / "a[").mkdir(parents=True)
    (source / "a[" / "]b.py").write_text(  # the path a[/]b.py: markup that closes nothing
        'def g(x):\n    raise OSError(f"Disk quota exceeded while writing the checkpoint {x}")\n'
    )
    mined = cli("mine", str(source), "--repo", "own/[/]repo")
    assert mined.exit_code == 0, mined.output
    assert "own/[/]repo" in mined.output
    found = cli("search", "quota")
    assert found.exit_code == 0, found.output
    assert "a[/]b.py:2" in found.output.replace("\n", "").replace("│", "").replace(" ", "")
    missing = cli("scan", str(tmp_path / "logs[/]"))
    assert (
        missing.exit_code == 2 and "no such file" in missing.output and "logs[/]" in missing.output
    )


def test_stdin_that_is_not_utf8_is_read_with_replacements(cli):
    cli("import", str(SEED_FILE))
    scanned = cli(
        "scan", "--json", input=b"ERROR x \xff\nValueError: Unknown speculative phase: z\n"
    )
    assert scanned.exit_code == 0, scanned.output
    assert json.loads(scanned.output)["lines"] == 2
    explained = cli("explain", input=b"ValueError: Unknown speculative phase: \xff")
    assert explained.exit_code == 0, explained.output


def test_unreadable_inputs_are_usage_errors(cli, tmp_path):
    cli("import", str(SEED_FILE))
    fake = tmp_path / "fake.log.gz"
    fake.write_text("not gzip")
    for command in ("scan", "import"):
        result = cli(command, str(fake))
        assert result.exit_code == 2, result.output
        assert f"{fake}" in result.output and "internal error" not in result.output
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b"\n\xe9t\xe9\n")
    result = cli("import", str(latin))
    assert result.exit_code == 2 and f"{latin}:2: not UTF-8" in result.output


def test_export_never_clobbers_a_file_when_it_has_nothing_to_write(cli, tmp_path):
    cli("import", str(SEED_FILE))
    out = tmp_path / "keep.jsonl"
    assert cli("export", "--out", str(out)).exit_code == 0
    kept = out.read_bytes()
    assert cli("export", "--repo", "typo/name", "--out", str(out)).exit_code == 1
    assert out.read_bytes() == kept and not list(tmp_path.glob("*.part"))
    result = cli("export", "--out", str(tmp_path / "nodir" / "x.jsonl"))
    assert result.exit_code == 2 and "cannot write" in result.output


def test_an_ascii_terminal_and_a_closed_pipe_are_not_failures(tmp_path, seed, seed_text):
    import subprocess
    import sys

    db = tmp_path / "s.sqlite3"
    env = {"PATH": "/usr/bin:/bin", "ERRDEX_DB": str(db), "PYTHONIOENCODING": "ascii"}
    run = [sys.executable, "-m", "errdex"]
    many = tmp_path / "many.jsonl"  # far more than a pipe holds
    copies = []
    for number in range(40):
        envelope = json.loads(seed_text)
        envelope["record"]["id"] = f"{number:016x}"
        copies.append(json.dumps(envelope))
    many.write_text("\n".join(copies) + "\n")
    subprocess.run([*run, "import", str(many)], env=env, check=True, capture_output=True)
    shown = subprocess.run([*run, "show", f"{0:016x}"], env=env, capture_output=True)
    assert shown.returncode == 0, shown.stderr
    assert b"\\u2771" in shown.stdout  # the snippet's marker, escaped
    for command in (["export"], ["export", "--format", "seed"]):
        reader = subprocess.Popen(
            [*run, *command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert reader.stdout.read(10)
        reader.stdout.close()  # the reader goes away, as `| head -c 10` does
        errors = reader.stderr.read()
        reader.stderr.close()
        assert reader.wait(timeout=60) == 141, (command, errors)
        assert errors == b"", (command, errors)


def test_a_broken_pipe_that_is_not_stdout_is_an_internal_error(cli, tmp_path, monkeypatch):
    from errdex.pipeline import Pipeline

    def git_died(self, source, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(Pipeline, "mine", git_died)
    (tmp_path / "src").mkdir()
    result = cli("mine", str(tmp_path / "src"))
    assert result.exit_code == 3 and "internal error: BrokenPipeError" in result.output


def test_stdin_without_a_byte_buffer_is_read_as_it_is(monkeypatch):
    import io
    import sys

    from errdex import cli as cli_module

    monkeypatch.setattr(sys, "stdin", io.StringIO("ValueError: x\n"))
    assert cli_module._stdin().read() == "ValueError: x\n"


def test_config_at_the_top_level_and_in_the_table_merge(tmp_path, monkeypatch):
    from errdex.errors import SettingsError
    from errdex.settings import resolve_settings

    config = tmp_path / "config.toml"
    config.write_text("jobs = 3\n[errdex]\nwindow = 5\n")
    resolved = resolve_settings({}, config_path=config, environ={})
    assert (resolved.settings.jobs, resolved.settings.window) == (3, 5)
    config.write_text("errdex = 5\n")
    with pytest.raises(SettingsError, match="must be a table"):
        resolve_settings({}, config_path=config, environ={})


def test_a_match_title_too_long_for_the_terminal_ends_with_an_ellipsis(seed):
    from rich.console import Console

    from errdex.match.explain import Match, MatchKind
    from errdex.models import ErrorRecord
    from errdex.render import match_panel

    record = ErrorRecord.model_validate(seed["record"]).model_copy(
        update={"function": "PreparedRequest.prepare_url_with_a_long_name"}
    )
    console = Console(width=60, record=True)
    console.print(match_panel(Match(record=record, kind=MatchKind.EXACT, score=80.0)))
    title = console.export_text().splitlines()[0]
    assert title.endswith("…─╮") and "prepare_url_with_a_long_name" not in title
