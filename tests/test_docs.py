"""The README documents every command and every setting."""

from pathlib import Path

import pytest

from errdex.cli import app
from errdex.settings import SETTINGS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def command_names():
    return [command.name or command.callback.__name__ for command in app.registered_commands]


@pytest.mark.parametrize("name", command_names())
def test_every_command_is_documented_and_has_help(name, runner):
    assert f"`errdex {name}" in README
    result = runner.invoke(app, [name, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_setting_is_documented(setting):
    assert f"| `{setting.name}` | `{setting.env}` |" in README


def test_quick_start_is_exactly_the_two_commands():
    start = README.index("## Quick start")
    block = README[start:].split("```")[1]
    assert block.strip().splitlines() == ["make run", "make test"]


def _helps(command, path):
    yield path, "help", command.help or ""
    for parameter in command.params:
        yield path, parameter.name, getattr(parameter, "help", None) or ""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _helps(sub, f"{path} {name}")


def test_help_text_shows_brackets_as_typed(runner):
    # Typer reads help as rich markup: unescaped, "[env ERRDEX_DB]" and "errdex[fast]" vanish.
    import typer.main
    from rich.text import Text

    for path, name, text in _helps(typer.main.get_command(app), "errdex"):
        shown = Text.from_markup(text).plain
        assert shown == text.replace("\\[", "["), (path, name, text)
    assert "ERRDEX_JOBS" in runner.invoke(app, ["mine", "--help"]).output
