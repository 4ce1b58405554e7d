import json

import pytest
from conftest import SEED_FILE

from errdex import __version__


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


def test_nothing_found_exits_1(cli):
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
    assert cli("--version", with_db=False).output.strip() == f"errdex {__version__}"


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
