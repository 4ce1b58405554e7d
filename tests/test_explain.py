"""Explain: pasted text → records, through the CLI, the Python API and the runtime hook."""

import io
import json
import logging
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import SEED_FILE, SEED_PATH, make_repo, seed_fixture_source
from corpus import unpacked_wheel
from hypothesis import given
from hypothesis import strategies as st

import errdex
from errdex.match.explain import Explainer
from errdex.match.interpreter import interpreter_message
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore

SITE = "/opt/venv/lib/python3.11/site-packages"
SEED_TRACEBACK = f"""Traceback (most recent call last):
  File "{SITE}/sglang/srt/managers/scheduler.py", line 310, in __init__
    self.num_tokens = resolve_num_tokens_per_req(spec, phase="draft")
  File "{SITE}/{SEED_PATH.removeprefix("python/")}", line 124, in resolve_num_tokens_per_req
    raise ValueError(f"Unknown speculative phase: {{phase}}")
ValueError: Unknown speculative phase: draft
"""


def explained(cli, text):
    """``errdex explain TEXT --json``, read."""
    return json.loads(cli("explain", text, "--json").output)


def mined(cli, tmp_path, files: dict[str, str]):
    """Mine a source made of ``files`` into the CLI's store; return its directory."""
    src = tmp_path / "proj"
    make_repo(src, files)
    cli("mine", str(src))
    return src


@pytest.fixture
def seeded(cli, tmp_path, seed):
    repo = tmp_path / "sglang"
    make_repo(repo, {SEED_PATH: seed_fixture_source(seed["record"])})
    assert cli("mine", str(repo), "--repo", "sgl-project/sglang").exit_code == 0
    return json.loads(cli("export", "--format", "seed").output.splitlines()[0])["record"]


def test_explain_a_traceback_finds_the_seed_site_with_captures(cli, seeded):
    result = cli("explain", SEED_TRACEBACK, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    best = answer["matches"][0]
    assert best["kind"] == "exact"
    assert best["record"]["filePath"] == SEED_PATH and best["record"]["lineNumber"] == 124
    assert best["captures"] == {"phase": "draft"}
    assert any("frame points at the record's line" in e for e in best["evidence"])
    assert answer["parsed"]["original"] == SEED_TRACEBACK
    assert list(best["record"]) == list(seeded)  # seed format


@pytest.mark.parametrize(
    "text",
    [
        "Unknown speculative phase: target-verify",
        "ValueError: Unknown speculative phase: target-verify",
        "2026-12-02 10:00:00,123 - sglang - ERROR - ValueError: Unknown speculative phase: x",
        # The exception's repr, as ``%r``, celery and asyncio log it.
        "ValueError('Unknown speculative phase: x')",
        "2026-12-02 10:00:00 ERROR worker: task failed: ValueError('Unknown speculative phase: x')",
        'Task sglang.run[1f0c] raised unexpected: ValueError("Unknown speculative phase: x")',
    ],
)
def test_explain_a_bare_message_or_line(cli, seeded, text):
    result = cli("explain", text, "--json")
    assert result.exit_code == 0, result.output
    best = json.loads(result.output)["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 124
    assert best["captures"]["phase"] in ("target-verify", "x")  # no quote or bracket of a repr


def test_explain_reads_stdin_and_files_and_renders(cli, seeded, tmp_path):
    assert cli("explain", input=SEED_TRACEBACK).exit_code == 0
    paste = tmp_path / "paste.txt"
    paste.write_text(SEED_TRACEBACK)
    rendered = cli("explain", "--file", str(paste))
    assert rendered.exit_code == 0
    assert (
        "EXACT" in rendered.output and "phase" in rendered.output and "'draft'" in rendered.output
    )
    assert "Unknown speculative phase: draft" in rendered.output  # the input is shown


def test_no_exact_match_is_an_explicit_answer_with_exit_1(cli, seeded):
    result = cli("explain", "TypeError: completely unrelated speculative failure", "--json")
    assert result.exit_code == 1
    answer = json.loads(result.output)
    assert all(match["kind"] == "approximate" for match in answer["matches"])
    rendered = cli("explain", "TypeError: completely unrelated speculative failure")
    assert "No exact match" in rendered.output


def test_a_class_contradiction_is_never_exact(cli, seeded):
    text = SEED_TRACEBACK.replace(
        "ValueError: Unknown speculative phase: draft",
        "TypeError: 'NoneType' object is not subscriptable",
    )
    answer = explained(cli, text)
    assert answer["matches"], "the frame still points at the record"
    assert all(match["kind"] == "approximate" for match in answer["matches"])


def test_identical_templates_are_reported_as_ambiguous_until_a_frame_decides(cli, tmp_path):
    message = "You must specify exactly one of {{x}} or inputs_embeds"
    body = 'def f{n}(x):\n    raise ValueError(f"' + message + '")\n'
    src = tmp_path / "proj"
    make_repo(src, {f"models/m{n}/modeling.py": body.format(n=n) for n in range(4)})
    cli("mine", str(src))
    text = "ValueError: You must specify exactly one of input_ids or inputs_embeds"
    answer = explained(cli, text)
    assert answer["ambiguous"] is True and answer["total"] == 4
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/x/site-packages/models/m2/modeling.py", line 2, in f2\n' + text + "\n"
    )
    answer = explained(cli, traceback)
    assert answer["ambiguous"] is False
    assert answer["matches"][0]["record"]["filePath"] == "models/m2/modeling.py"
    # A paste without frames that names the file and line decides as a frame does.
    for mention in ("models/m3/modeling.py:2", 'File "models/m3/modeling.py", line 2'):
        answer = explained(cli, f"{text}\n(raised at {mention})")
        assert answer["ambiguous"] is False, mention
        assert answer["matches"][0]["record"]["filePath"] == "models/m3/modeling.py", mention


def explain_mined(cli, tmp_path, path: str, body: str, paste: str) -> tuple[int, dict]:
    """Mine one file, then explain a paste naming it as ``{path}``: (exit code, answer)."""
    src = mined(cli, tmp_path, {path: body})
    result = cli("explain", textwrap.dedent(paste).format(path=src / path), "--json")
    return result.exit_code, json.loads(result.output)


def test_a_chained_error_raised_near_the_first_one_is_the_last_ones(cli, tmp_path):
    # `except KeyError: raise LookupError(...)` two lines below the failing lookup: the
    # KeyError's frame is near the LookupError's site, which must still be the answer.
    body = (
        "def lookup(table, key):\n"
        "    try:\n"
        "        return table[key]\n"
        "    except KeyError:\n"
        '        raise LookupError(f"Key {key!r} not found in table")\n'
    )
    paste = """\
        Traceback (most recent call last):
          File "{path}", line 3, in lookup
            return table[key]
                   ~~~~~^^^^^
        KeyError: 'zz'

        During handling of the above exception, another exception occurred:

        Traceback (most recent call last):
          File "<string>", line 3, in <module>
          File "{path}", line 5, in lookup
            raise LookupError(f"Key {{key!r}} not found in table")
        LookupError: Key 'zz' not found in table
        """
    code, answer = explain_mined(cli, tmp_path, "pkg/cfg.py", body, paste)
    assert code == 0
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 5
    assert list(best["captures"].values()) == ["'zz'"]


def test_a_message_holding_another_classes_template_still_finds_its_own(cli, tmp_path):
    # urllib3: the MaxRetryError message ends with the NewConnectionError it was caused by,
    # whose template (it begins with a hole) matches the whole message. That match, of a
    # class the paste contradicts, must not end the search for MaxRetryError's own template.
    body = (
        "class NewConnectionError(Exception):\n"
        "    pass\n"
        "class MaxRetryError(Exception):\n"
        "    pass\n"
        "def connect(self, e):\n"
        '    raise NewConnectionError(f"{self}: Failed to establish a new connection: {e}")\n'
        "def retry(pool, url, reason):\n"
        "    # (urllib3's base class puts the pool before it: the paste shows more)\n"
        "    raise MaxRetryError(\n"
        '        f"Max retries exceeded with url: {url} (Caused by {reason!r})"\n'
        "    )\n"
    )
    paste = (
        "urllib3.exceptions.MaxRetryError: HTTPConnectionPool(host='localhost', port=1): Max"
        " retries exceeded with url: /x (Caused by NewConnectionError('<HTTPConnection"
        " object>: Failed to establish a new connection: [Errno 111] Connection refused'))"
    )
    code, answer = explain_mined(cli, tmp_path, "urllib3/util/retry.py", body, paste)
    assert code == 0, answer
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["record"]["errorClass"] == "MaxRetryError"


def test_a_frame_at_the_line_and_the_messages_first_line_make_an_exact_match(cli, tmp_path):
    # PyYAML's errors print marks after the message; another site's "while scanning a {name}"
    # matches the whole text (its hole takes the marks), the frame's own site only its start.
    body = (
        "def fetch_more_tokens(self, key):\n"
        '    raise ScannerError("while scanning a simple key", key.mark)\n'
        "def scan_other(self, name):\n"
        '    raise ScannerError(f"while scanning a {name}", self.mark)\n'
    )
    paste = """\
        Traceback (most recent call last):
          File "{path}", line 2, in fetch_more_tokens
            raise ScannerError("while scanning a simple key", key.mark)
        yaml.scanner.ScannerError: while scanning a simple key
          in "<unicode string>", line 2, column 1:
            b
            ^
        could not find expected ':'
          in "<unicode string>", line 3, column 1:
            c: 2
            ^
        """
    code, answer = explain_mined(cli, tmp_path, "yaml/scanner.py", body, paste)
    assert code == 0
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 2
    assert any("first line matches" in e for e in best["evidence"])
    assert answer["ambiguous"] is False


def test_a_paste_hard_wrapped_mid_word_at_the_terminals_width(cli, tmp_path):
    body = (
        "def attach(state, session_id, key):\n"
        "    raise InvalidRequestError(\n"
        "        f\"Object '{state}' is already attached to session '{session_id}'\"\n"
        "        f\" (this is '{key}')\"\n"
        "    )\n"
    )
    line = (
        "sqlalchemy.exc.InvalidRequestError: Object '<User at 0x7f>' is already attached"
        " to session '5' (this is '6')"
    )
    # The first width from 60 that cuts a word in two.
    width = next(w for w in range(60, 90) if line[w - 1].isalpha() and line[w].isalpha())
    wrapped = "\n".join(line[i : i + width] for i in range(0, len(line), width))
    code, answer = explain_mined(cli, tmp_path, "sqlalchemy/orm/session.py", body, wrapped)
    assert code == 0
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["captures"]["state"] == "<User at 0x7f>"


def test_lines_a_class_prints_after_its_message_stay_out_of_the_values(cli, tmp_path):
    # jsonschema prints "Failed validating …" after the message; PyYAML its marks.
    body = (
        "def minimum(instance, minimum):\n"
        '    raise ValidationError(f"{instance!r} is less than the minimum of {minimum!r}")\n'
        "def quoted(self):\n"
        '    raise ScannerError("while scanning a quoted scalar", self.mark)\n'
        "def other(self, name):\n"
        '    raise ScannerError(f"while scanning a {name}", self.mark)\n'
    )
    paste = (
        "jsonschema.exceptions.ValidationError: -1 is less than the minimum of 0\n\n"
        "Failed validating 'minimum' in schema['properties']['age']:\n"
        "    {{'minimum': 0}}\n"
    )
    code, answer = explain_mined(cli, tmp_path, "jsonschema/_keywords.py", body, paste)
    best = answer["matches"][0]
    assert code == 0 and best["kind"] == "exact"
    assert best["captures"] == {"instance": "-1", "minimum": "0"}
    scanned = cli(
        "explain",
        "yaml.scanner.ScannerError: while scanning a quoted scalar\n"
        '  in "<unicode string>", line 1, column 6:\n'
        "found unexpected end of stream",
        "--json",
    )
    best = json.loads(scanned.output)["matches"][0]
    assert best["record"]["errorMessage"] == "while scanning a quoted scalar"


def test_a_class_raised_with_another_errors_message_does_not_contradict_it(cli, tmp_path):
    # packaging: ``except ParserSyntaxError as e: raise InvalidRequirement(str(e))``.
    body = (
        "class ParserSyntaxError(Exception):\n"
        "    pass\n"
        "class InvalidRequirement(ValueError):\n"
        "    pass\n"
        "def parse(after):\n"
        '    raise ParserSyntaxError(f"Expected end or semicolon (after {after})")\n'
        "def requirement(text):\n"
        "    try:\n"
        "        parse(text)\n"
        "    except ParserSyntaxError as e:\n"
        "        raise InvalidRequirement(str(e)) from None\n"
    )
    paste = (
        "packaging.requirements.InvalidRequirement: Expected end or semicolon"
        " (after name and no valid version specifier)"
    )
    code, answer = explain_mined(cli, tmp_path, "packaging/requirements.py", body, paste)
    best = answer["matches"][0]
    assert code == 0 and best["kind"] == "exact" and best["record"]["lineNumber"] == 6
    assert any("raised with the message of another error" in e for e in best["evidence"])


def test_a_traceback_that_ends_in_the_source_ranks_its_own_file_first(cli, tmp_path):
    # werkzeug: ``abort(404)`` ends in ``raise self.mapping[code](...)``, while other files
    # raise ``NotFound()``, whose message the paste shows.
    src = tmp_path / "proj"
    make_repo(
        src,
        {
            "werkzeug/utils.py": (
                "def send(path):\n"
                '    raise NotFound("The requested URL was not found on the server.")\n'
            ),
            "werkzeug/exceptions.py": (
                "class Aborter:\n"
                "    def __call__(self, code, *args):\n"
                "        raise self.mapping[code](*args)\n"
            ),
        },
    )
    cli("mine", str(src))
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/app/views.py", line 3, in show\n'
        "    abort(404)\n"
        f'  File "{src}/werkzeug/exceptions.py", line 3, in __call__\n'
        "    raise self.mapping[code](*args)\n"
        "werkzeug.exceptions.NotFound: The requested URL was not found on the server.\n"
    )
    answer = explained(cli, paste)
    assert answer["matches"][0]["record"]["filePath"] == "werkzeug/exceptions.py"
    other = next(m for m in answer["matches"] if m["record"]["filePath"] == "werkzeug/utils.py")
    assert "no frame of the traceback is in the record's file" in other["evidence"]


def test_both_raise_sites_of_a_chain_a_few_lines_apart_are_exact(cli, tmp_path):
    body = (
        "def lookup(table, key):\n"
        "    try:\n"
        "        if key not in table:\n"
        '            raise KeyError(f"unknown setting {key}")\n'
        "        return table[key]\n"
        "    except KeyError as exc:\n"
        '        raise LookupError(f"configuration is invalid for {key}") from exc\n'
    )
    paste = """\
        Traceback (most recent call last):
          File "{path}", line 4, in lookup
            raise KeyError(f"unknown setting {{key}}")
        KeyError: 'unknown setting x'

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "{path}", line 7, in lookup
            raise LookupError(f"configuration is invalid for {{key}}") from exc
        LookupError: configuration is invalid for x
        """
    _, answer = explain_mined(cli, tmp_path, "app/conf.py", body, paste)
    found = [(m["kind"], m["record"]["lineNumber"]) for m in answer["matches"]]
    assert found[:2] == [("exact", 7), ("exact", 4)]


def test_aliases_variables_helpers_groups_and_filenames_find_their_site(cli, tmp_path):
    files = {
        "pkg/errors.py": "class Problem(Exception):\n    pass\n",
        "pkg/api.py": (
            "from pkg.errors import Problem as AliasProblem\n"
            "\n"
            "def load(name):\n"
            '    raise AliasProblem(f"cannot load {name} today")\n'
            "\n"
            "def fail(message):\n"
            "    raise ValueError(message)\n"
            "\n"
            "def check(value):\n"
            '    fail(f"{value!r} is not a valid integer for this option")\n'
            "\n"
            "def gather():\n"
            '    raise ExceptionGroup("worker failures happened here", [ValueError()])\n'
            "\n"
            "def read(path):\n"
            '    raise FileNotFoundError(2, "Config file not found anywhere", path)\n'
        ),
    }
    src = tmp_path / "proj"
    make_repo(src, files)
    cli("mine", str(src))
    api = src / "pkg" / "api.py"

    def best(text):
        answer = explained(cli, text)
        return answer["matches"][0]

    alias = best("pkg.errors.Problem: cannot load cfg today")
    assert alias["kind"] == "exact" and alias["record"]["errorClass"] == "Problem"
    # The caller's frame is a line off (another version of the file); the helper's frame is
    # innermost and at its `raise ValueError(message)`: the specific message must still win.
    helper = best(
        textwrap.dedent(
            f"""\
            Traceback (most recent call last):
              File "{api}", line 11, in check
                fail(f"{{value!r}} is not a valid integer for this option")
              File "{api}", line 7, in fail
                raise ValueError(message)
            ValueError: 'abc' is not a valid integer for this option
            """
        )
    )
    assert helper["kind"] == "exact" and helper["record"]["lineNumber"] == 10
    exc = textwrap.dedent(
        """\
        def fail(message, exc=ValueError):
            raise exc(message)

        def check(name, kind):
            fail(f"the name {name} is already taken by another", kind)
            fail(f"the id {name} is not a valid identifier")
        """
    )
    make_repo(tmp_path / "vars", {"vars/core.py": exc})
    cli("mine", str(tmp_path / "vars"))
    variable = best("TypeError: the name x is already taken by another")
    assert variable["kind"] == "exact" and variable["record"]["filePath"] == "vars/core.py"
    default = best("ValueError: the id x is not a valid identifier")
    assert (default["kind"], default["record"]["errorClass"]) == ("exact", "ValueError")
    group = best("ExceptionGroup: worker failures happened here (1 sub-exception)")
    assert group["kind"] == "exact" and group["record"]["lineNumber"] == 13
    missing = best("FileNotFoundError: [Errno 2] Config file not found anywhere: '/etc/x.yaml'")
    assert missing["kind"] == "exact" and missing["record"]["lineNumber"] == 16


def test_text_a_class_appends_after_the_message_still_finds_the_site(cli, tmp_path):
    # pydantic's errors end with "For further information visit …", a paragraph of their own
    # that the raise site does not write.
    body = 'def f(name):\n    raise ImportError(f"`{name}` has been moved to the `x` package.")\n'
    src = tmp_path / "proj"
    make_repo(src, {"pkg/migration.py": body})
    cli("mine", str(src))
    text = (
        "ImportError: `BaseSettings` has been moved to the `x` package.\n\n"
        "For further information visit https://errors.example/u/import-error"
    )
    answer = explained(cli, text)
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 2
    assert best["captures"] == {"name": "BaseSettings"}
    assert any("first 1 paragraph" in note for note in best["evidence"])
    # In a traceback, the message goes on past its blank lines: a shorter template of the
    # same start (``… for {x}.``) must not take the site the frame points at.
    make_repo(
        src,
        {
            "pkg/schema.py": (
                "def unknown(obj):\n"
                '    raise TypeError(f"No schema for {obj}. Set `allow=True` to allow it.\\n\\n"\n'
                '                    "If you called the handler, call generate_schema.")\n'
                "def pattern(kind):\n"
                '    raise TypeError(f"No schema for {kind}.")\n'
            )
        },
    )
    cli("mine", str(src))
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/venv/site-packages/pkg/schema.py", line 2, in unknown\n'
        '    raise TypeError(f"No schema for {obj}. Set `allow=True` to allow it.\\n\\n"\n'
        "TypeError: No schema for <class 'Foo'>. Set `allow=True` to allow it.\n\n"
        "If you called the handler, call generate_schema.\n\n"
        "For further information visit https://errors.example/u/schema\n"
    )
    answer = explained(cli, traceback)
    assert answer["parsed"]["errors"][0]["message"].endswith("/u/schema")
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 2)
    assert best["captures"] == {"obj": "<class 'Foo'>"}


def test_a_request_id_and_server_lines_a_client_adds_still_find_the_site(cli, tmp_path):
    # huggingface_hub's ``_format`` puts " (Request ID: …)" at the end of the message's first
    # line, and the server's own message on lines after it: neither is in the raise site.
    body = (
        "class RepositoryNotFoundError(Exception):\n"
        "    pass\n"
        "def check(response):\n"
        '    message = f"{response.status_code} Client Error." + "\\n\\n" + (\n'
        '        f"Repository Not Found for url: {response.url}.\\n"\n'
        '        "Please make sure you specified the correct `repo_id`.")\n'
        "    raise RepositoryNotFoundError(message)\n"
    )
    mined(cli, tmp_path, {"hub/http.py": body})
    pasted = (
        "hub.http.RepositoryNotFoundError: 401 Client Error. (Request ID: Root=1-65f2;ab-12)\n\n"
        "Repository Not Found for url: https://hub.example/api/models/org/x.\n"
        "Please make sure you specified the correct `repo_id`.\n"
        "Invalid username or password."
    )
    answer = explained(cli, pasted)
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 7)
    assert best["captures"] == {
        "response.status_code": "401",
        "response.url": "https://hub.example/api/models/org/x",
    }
    assert any("first 4 line(s) match" in note for note in best["evidence"])
    # Without the server's lines, the message without its note is the template's.
    whole = explained(cli, pasted.rsplit("\n", 1)[0])
    assert whole["matches"][0]["kind"] == "exact"
    assert whole["matches"][0]["captures"]["response.status_code"] == "401"


def test_a_javascript_error_is_of_its_class_not_a_log_level(cli, tmp_path):
    # ``throw new Error(…)`` has the class ``Error``; read as the level ``ERROR``, it took
    # psycopg's ``UndefinedTable`` paste as an exact match.
    mined(
        cli,
        tmp_path,
        {"web/lookup.js": "function f(e) {\n  throw new Error(`${e} does not exist`);\n}\n"},
    )
    other = json.loads(
        cli(
            "explain", 'psycopg.errors.UndefinedTable: relation "users" does not exist', "--json"
        ).output
    )
    assert [m["kind"] for m in other["matches"]] == ["approximate"]
    assert any("the class differs" in note for note in other["matches"][0]["evidence"])
    same = explained(cli, 'Error: relation "users" does not exist')
    assert same["matches"][0]["kind"] == "exact"


def test_a_message_cut_short_finds_the_template_it_starts(cli, tmp_path):
    body = (
        "def f(phase, choices):\n"
        '    raise ValueError(f"Unknown speculative phase {phase}: expected one of {choices}")\n'
        "def g(phase):\n"
        '    raise ValueError(f"Unknown speculative phase {phase} in the scheduler")\n'
    )
    mined(cli, tmp_path, {"pkg/spec.py": body})
    text = "ValueError: Unknown speculative phase draft: expected on..."
    answer = explained(cli, text)
    assert answer["parsed"]["errors"][0]["truncated"] is True
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 2
    assert best["captures"] == {"phase": "draft", "choices": "…"}
    assert any("cut short" in note for note in best["evidence"])
    assert answer["total"] == 1
    # Too little of it left to tell anything: no exact match.
    answer = explained(cli, "ValueError: Unknown...")
    assert all(match["kind"] == "approximate" for match in answer["matches"])


UNKNOWN_TASK = (
    "import logging\n"
    "logger = logging.getLogger(__name__)\n"
    'UNKNOWN = """Received unregistered task of type %s.\n'
    "The message has been ignored and discarded.\n"
    "\n"
    "Did you remember to import the module containing this task?\n"
    "\n"
    "The full contents of the message body was:\n"
    '%s\n"""\n'
    "def on_unknown(name, body):\n"
    "    logger.error(UNKNOWN, name, body, exc_info=True)\n"
)


def _explain_unknown_task(cli, tmp_path, text):
    """Mine a log site with a multi-line message, explain ``text`` and return the best match."""
    src = tmp_path / "proj"
    make_repo(src, {"pkg/consumer.py": UNKNOWN_TASK})
    cli("mine", str(src))
    best = explained(cli, text)["matches"][0]
    assert best["kind"] == "exact" and best["record"]["lineNumber"] == 12
    return best


def test_the_message_logged_before_a_traceback_finds_its_log_site(cli, tmp_path):
    # ``logger.error(msg, exc_info=True)`` prints the message, then the traceback of the
    # exception being handled, whose own KeyError no record explains.
    text = (
        "Received unregistered task of type 'app.tasks.add'.\n"
        "The message has been ignored and discarded.\n\n"
        "Did you remember to import the module containing this task?\n\n"
        "The full contents of the message body was:\n"
        "b'[[], {}]' (9b)\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/pkg/consumer.py", line 40, in on_message\n'
        "    strategy = strategies[name]\n"
        "KeyError: 'app.tasks.add'\n"
    )
    best = _explain_unknown_task(cli, tmp_path, text)
    assert best["captures"] == {"name": "'app.tasks.add'", "body": "b'[[], {}]' (9b)"}
    assert "the text before the traceback matches the template" in best["evidence"]


def test_only_a_paste_of_one_traceback_chain_has_a_logged_message_before_it(cli, tmp_path):
    message = (
        "Received unregistered task of type 'app.tasks.add'.\n"
        "The message has been ignored and discarded.\n\n"
        "Did you remember to import the module containing this task?\n\n"
        "The full contents of the message body was:\n"
        "b'[[], {}]' (9b)\n"
    )
    traceback = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/pkg/consumer.py", line 40, in on_message\n'
        "    strategy = strategies[name]\n"
    )
    # Windows line ends change nothing.
    best = _explain_unknown_task(
        cli, tmp_path, (message + traceback + "KeyError: 'x'\n").replace("\n", "\r\n")
    )
    assert "the text before the traceback matches the template" in best["evidence"]
    # The text before the first of two unrelated tracebacks says nothing of the second.
    text = message + traceback + "KeyError: 'x'\n\n" + traceback + "TypeError: 'int' object\n"
    answer = explained(cli, text)
    assert all(match["kind"] == "approximate" for match in answer["matches"])


def test_an_unmarked_cut_counts_only_when_the_paste_stops_inside_the_text(cli, tmp_path):
    src = tmp_path / "proj"
    make_repo(
        src,
        {
            "pkg/pool.py": (
                "import logging\n"
                "def start(reason, path):\n"
                "    logging.getLogger(__name__).error(\n"
                '        "The worker pool could not be started because its configuration is'
                ' broken: %s\\nCheck the settings in %s and start it again", reason, path\n'
                "    )\n"
            )
        },
    )
    cli("mine", str(src))
    start = "The worker pool could not be started because its configuration is broken: bad"
    answer = explained(cli, start + "\nCheck the settings")
    assert answer["matches"][0]["kind"] == "exact"
    assert answer["matches"][0]["captures"] == {"reason": "bad", "path": "…"}
    # Stopping inside the hole, the message may go on with anything: no evidence.
    answer = explained(cli, start + "\nsomething else")
    assert all(match["kind"] == "approximate" for match in answer["matches"])


def test_a_one_line_paste_of_a_long_messages_first_sentences_finds_it(cli, tmp_path):
    # fastapi's ``Invalid args for response field! Hint: check that {type_} is a valid
    # Pydantic field type. If you are using …``: users paste its first sentences (#4).
    mined(
        cli,
        tmp_path,
        {
            "pkg/utils.py": (
                "def create(type_):\n"
                "    raise FastAPIError(\n"
                '        "Invalid args for response field! Hint: "\n'
                '        f"check that {type_} is a valid Pydantic field type. "\n'
                '        "If you are using a return type annotation that is not a valid field"\n'
                '        " you can disable it with response_model=None."\n'
                "    )\n"
                "def other():\n"
                '    raise FastAPIError("Prefix and path cannot be both empty")\n'
            )
        },
    )
    text = (
        "FastAPIError: Invalid args for response field! Hint: check that <class 'User'> is a"
        " valid Pydantic field type."
    )
    best = explained(cli, text)["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 2)
    assert best["captures"] == {"type_": "<class 'User'>"}
    assert any("not all of it was pasted" in note for note in best["evidence"])
    # Fewer literal characters than that may be another message's whole text: no evidence.
    short = explained(cli, "FastAPIError: Invalid args for response field!")
    assert all(match["kind"] == "approximate" for match in short["matches"])


_REASON_SOURCES = {
    "pkg/csrf.py": (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "def check(secret):\n"
        "    if secret is None:\n"
        '        raise RejectRequest("CSRF cookie not set.")\n'
        "def reject(reason, path):\n"
        '    logger.warning("Forbidden (%s): %s", reason, path)\n'
    )
}


def test_a_captured_value_that_is_another_records_message_names_it(cli, tmp_path):
    # django logs ``Forbidden (%s): %s`` with the reason of the ``RejectRequest`` it caught:
    # the reason's own record says why (#4).
    mined(cli, tmp_path, _REASON_SOURCES)
    best = explained(cli, "Forbidden (CSRF cookie not set.): /login/")["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 7)
    made = best["capturedTexts"]
    assert [(t["hole"], t["filePath"], t["lineNumber"], t["errorClass"]) for t in made] == [
        ("reason", "pkg/csrf.py", 5, "RejectRequest")
    ]
    shown = cli("explain", "Forbidden (CSRF cookie not set.): /login/", "--top", "1").output
    assert "the message of pkg/csrf.py:5 (RejectRequest)" in shown
    # A value no record makes, or too short to tell, names nothing.
    other = explained(cli, "Forbidden (a reason of its own): /login/")["matches"][0]
    assert other["kind"] == "exact" and other["capturedTexts"] == []


def test_a_class_of_the_same_name_from_another_package_is_not_the_records(cli, tmp_path):
    # ``pydantic_core._pydantic_core.ValidationError: 1 validation error for User`` is not
    # the ValidationError pydantic.v1 defines and raises with a message that starts alike.
    mined(
        cli,
        tmp_path,
        {
            "pkga/errors.py": (
                "class ValidationError(Exception):\n"
                "    pass\n"
                "class NotFound(Exception):\n"
                "    pass\n"
                "def validate(count, model):\n"
                '    raise ValidationError(f"{count} validation error for {model}")\n'
            ),
            "pkgb/views.py": (
                "from pkga.errors import NotFound\n"
                "def view():\n"
                '    raise NotFound("no page here at this address")\n'
            ),
        },
    )
    own = explained(cli, "pkga.errors.ValidationError: 1 validation error for User")
    assert own["matches"][0]["kind"] == "exact"
    other = explained(cli, "pkgcore._core.ValidationError: 1 validation error for User")
    best = other["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("approximate", "pkga/errors.py")
    assert "the input's pkgcore._core.ValidationError is pkgcore's" in " ".join(best["evidence"])
    # A package that raises a class it does not define raises the pasted one (flask's
    # ``NotFound()``, werkzeug's).
    raised = explained(cli, "pkga.errors.NotFound: no page here at this address")
    assert (raised["matches"][0]["kind"], raised["matches"][0]["record"]["filePath"]) == (
        "exact",
        "pkgb/views.py",
    )


def test_a_paraphrase_finds_the_pasted_classs_record_before_a_template_of_another(cli, tmp_path):
    # ``rich.errors.MarkupError: … does not match any open tag`` (the message says "doesn't")
    # fits pip's ``{fragment} does not match {canonical_name}``, a ValueError; the record of
    # the pasted class that shares the message's words is the better guess.
    mined(
        cli,
        tmp_path,
        {
            "rich/markup.py": (
                "class MarkupError(Exception):\n"
                "    pass\n"
                "def render(tag, position):\n"
                "    raise MarkupError(\n"
                '        f"closing tag {tag!r} at position {position}"\n'
                '        " doesn\'t match any open tag"\n'
                "    )\n"
            ),
            "pip/finder.py": (
                "def check(fragment, canonical_name):\n"
                '    raise ValueError(f"{fragment} does not match {canonical_name}")\n'
            ),
        },
    )
    pasted = "closing tag '[/bold]' at position 12 does not match any open tag"
    answer = explained(cli, f"rich.markup.MarkupError: {pasted}")
    first, second = answer["matches"][:2]
    assert (first["kind"], first["record"]["filePath"]) == ("approximate", "rich/markup.py")
    assert "the class is qualified with the record's package (rich)" in first["evidence"]
    assert second["record"]["filePath"] == "pip/finder.py"
    # Without a class, nothing contradicts the template that fits the message.
    bare = explained(cli, pasted)["matches"][0]
    assert (bare["kind"], bare["record"]["filePath"]) == ("exact", "pip/finder.py")
    # A class the word-near record does not raise gives it nothing.
    other = explained(cli, f"KeyError: {pasted}")["matches"]
    assert other[0]["record"]["filePath"] == "pip/finder.py"


def test_a_multi_line_message_pasted_without_its_end_finds_its_template(cli, tmp_path):
    text = (
        "[2019-08-13 13:56:43,760: ERROR/MainProcess] Received unregistered task of type"
        " 'app.tasks.add'.\nThe message has been ignored and discarded.\n"
    )
    best = _explain_unknown_task(cli, tmp_path, text)
    assert best["captures"] == {"name": "'app.tasks.add'", "body": "…"}
    assert any("not all of it was pasted" in note for note in best["evidence"])
    # Unmarked, a short start is no evidence: it may be another message's whole text.
    short = "Received unregistered task of type x.\nThe message"
    answer = explained(cli, short)
    assert all(match["kind"] == "approximate" for match in answer["matches"])


def test_the_index_is_cached_next_to_the_store_and_rebuilt_when_it_changes(
    cli, seeded, db, tmp_path
):
    cli("explain", "Unknown speculative phase: x")
    cache = db.with_name(db.name + ".matcher")
    assert cache.exists()
    stamp = cache.stat().st_mtime_ns
    cli("explain", "Unknown speculative phase: y")
    assert cache.stat().st_mtime_ns == stamp
    cli("import", str(SEED_FILE))
    cli("explain", "Unknown speculative phase: z")
    assert cache.stat().st_mtime_ns != stamp


@pytest.mark.parametrize(
    "hostile",
    [
        "a" * 100_000 + "!",
        "x" * 10_000_000,
        bytes(range(256)).decode("latin-1") * 4000,
        "".join(
            f"ValueError: e{n}\n\nDuring handling of the above exception, "
            "another exception occurred:\n\n"
            for n in range(1000)
        ),
        "a" * 10_000_000 + "('x')",
        "E('" * 3_000_000 + "')",
        "x" + " " * 5_000_000 + "(see https://example.com)",
        "[" * 100_000 + "'x'" + "]" * 100_000,
        "\u256d\u2500 Error \u2500\u256e\n" + "\u2502 x \u2502\n" * 200_000,
        "Error. (Request ID: r-1)\n" + "Server says no. (Request ID: r-2)\n" * 560,
        "httpx.ConnectError: [Errno 111] Connection refused" + " x" * 5_000_000,
    ],
    ids=[
        "a-bang",
        "10MB",
        "binary",
        "1000-chain",
        "repr-name",
        "repr-opens",
        "link",
        "lists",
        "open-panel",
        "id-notes",
        "errno-carried",
    ],
)
def test_hostile_pastes_answer_within_a_second(tmp_path, seeded, db, hostile):
    import time

    with SQLiteStore(db) as store:
        explainer = Explainer.for_database(store, db)
        started = time.process_time()
        answer = explainer.explain(hostile)
        assert time.process_time() - started < 1.0
        assert answer.parsed.original == hostile


def test_python_api_explains_text_and_live_exceptions(seeded, db):
    answer = errdex.explain("ValueError: Unknown speculative phase: draft", db=db)
    assert answer.found and answer.matches[0].captures == {"phase": "draft"}
    try:
        raise ValueError("Unknown speculative phase: live")
    except ValueError as error:
        answer = errdex.explain(error, db=db)
    assert answer.found and answer.matches[0].captures == {"phase": "live"}


def test_install_prints_the_normal_traceback_then_the_explanation(seeded, db, tmp_path):
    program = textwrap.dedent(
        f"""
        import errdex
        errdex.install(db={str(db)!r})
        raise ValueError("Unknown speculative phase: hooked")
        """
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.returncode == 1
    normal, _, explained = result.stderr.partition(
        "ValueError: Unknown speculative phase: hooked\n"
    )
    assert normal.startswith("Traceback (most recent call last):")
    assert "errdex: exact match" in explained and "spec_utils.py:124" in explained
    assert "phase = 'hooked'" in explained


def test_a_broken_store_never_breaks_the_host_program(tmp_path):
    bad = tmp_path / "not-a-db.sqlite3"
    bad.write_bytes(b"this is not sqlite" * 100)
    program = f"import errdex\nerrdex.install(db={str(bad)!r})\nraise KeyError('x')\n"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.returncode == 1
    assert "KeyError: 'x'" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("errdex: could not explain this error")


def test_install_twice_explains_once_and_covers_threads(seeded, db):
    program = textwrap.dedent(
        f"""
        import sys, threading, errdex
        original, original_thread = sys.excepthook, threading.excepthook
        errdex.install(db={str(db)!r})
        errdex.install(db={str(db)!r})
        thread = threading.Thread(
            target=lambda: exec('raise ValueError("Unknown speculative phase: threaded")')
        )
        thread.start()
        thread.join()
        errdex.uninstall()
        print(sys.excepthook is original, threading.excepthook is original_thread)
        errdex.install(db={str(db)!r})
        raise ValueError("Unknown speculative phase: hooked")
        """
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout.strip() == "True True"
    assert "ValueError: Unknown speculative phase: threaded" in result.stderr
    assert "phase = 'threaded'" in result.stderr
    assert result.stderr.count("errdex: exact match") == 2  # once per exception


def test_the_hook_cuts_a_long_captured_value(seeded, db):
    program = textwrap.dedent(
        f"""
        import errdex
        errdex.install(db={str(db)!r})
        raise ValueError("Unknown speculative phase: " + "x" * 100_000)
        """
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    explained = result.stderr.rpartition("x" * 1000)[2]  # after the traceback's message
    assert "errdex: exact match" in explained
    assert "phase = 'xxx" in explained and re.search(r"… \(\d{5,} chars\)", explained)
    assert len(explained) < 2000


def test_a_missing_store_is_said_and_never_created(tmp_path):
    missing = tmp_path / "typo" / "errors.sqlite3"
    program = textwrap.dedent(
        f"""
        import logging, errdex
        errdex.install(db={str(missing)!r})
        logger = logging.getLogger("host")
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(errdex_id)s %(message)s"))
        handler.addFilter(errdex.ErrdexLogFilter(db={str(missing)!r}))
        logger.addHandler(handler)
        logger.error("first")
        logger.error("second")
        raise KeyError("x")
        """
    )
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert lines[:2] == ["None first", "None second"]
    assert "KeyError: 'x'" in result.stderr
    assert lines[-1] == (
        f"errdex: could not explain this error (StoreError: no store at {missing}"
        " (errdex mine makes one))"
    )
    assert not missing.parent.exists()


def test_log_filter_tags_records_with_the_matched_id(seeded, db):
    stream = io.StringIO()
    logger = logging.getLogger("errdex-test")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(errdex_id)s %(message)s"))
    handler.addFilter(errdex.ErrdexLogFilter(db=db))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        logger.error("ValueError: Unknown speculative phase: %s", "logged")
        logger.info("nothing to see")
        logger.error("something errdex does not know")
    finally:
        logger.removeHandler(handler)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith(f"ERROR {seeded['id']} ")
    assert lines[1].startswith("INFO None ")
    assert lines[2].startswith("ERROR None ")


# -- accuracy on real mined code ---------------------------------------------------------------

REAL = [
    ("requests", "2.32.3"),
    ("click", "8.1.7"),
    ("jinja2", "3.1.4"),
    ("flask", "3.0.3"),
    ("werkzeug", "3.0.4"),
    ("httpx", "0.27.2"),
    ("django", "5.1.4"),
]
SIMPLE_HOLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")


@pytest.fixture(scope="session")
def real_store(tmp_path_factory):
    db = tmp_path_factory.mktemp("real") / "real.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for name, version in REAL:
            pipeline.mine(pipeline.open(str(unpacked_wheel(name, version)), repo=f"pypi:{name}"))
    return db


def best_match(db, text):
    """The best match of a paste explained against the store ``db``."""
    with SQLiteStore(db) as store:
        return Explainer.for_database(store, db).explain(text).matches[0]


def _value(style, number):
    value = 40 + number
    try:
        if style.startswith("%"):
            return style % value
        if style.startswith("!r"):
            return (
                repr(str(value))
                if ":" not in style
                else format(repr(str(value)), style.split(":", 1)[1])
            )
        if style.startswith(":"):
            return format(value, style[1:])
    except (ValueError, TypeError):
        pass
    return str(value)


def _render(record):
    parts = record.template.parts
    return "".join(_value(p.style, n) if p.hole else p.text for n, p in enumerate(parts))


def test_round_trip_accuracy_on_real_mined_code(real_store):
    with SQLiteStore(real_store) as store:
        explainer = Explainer.for_database(store, real_store)
        records = [e.record for e in store.iter_envelopes()]
        simple = [
            r
            for r in records
            if r.template.holes
            and all(SIMPLE_HOLE.match(h) for h in r.template.holes)
            and not r.opaque
        ]
        assert len(simple) > 500
        with_frame = alone = ambiguous = 0
        for record in simple:
            message = _render(record)
            same = {
                (r.file_path, r.line_number)
                for r in records
                if r.error_message == record.error_message
            }
            traceback = (
                "Traceback (most recent call last):\n"
                f'  File "/venv/lib/python3.11/site-packages/{record.file_path}", '
                f"line {record.line_number}, in {record.function or '<module>'}\n"
                f"{record.error_class}: {message}\n"
            )
            answer = explainer.explain(traceback, top=1)
            top = answer.matches[0].record if answer.matches else None
            with_frame += top is not None and (top.file_path, top.line_number) == (
                record.file_path,
                record.line_number,
            )
            answer = explainer.explain(message, top=1)
            top = answer.matches[0].record if answer.matches else None
            alone += top is not None and (top.file_path, top.line_number) in same
            ambiguous += answer.ambiguous
        total = len(simple)
        print(
            f"\nround trip over {total} records: with frame {with_frame / total:.1%}, "
            f"message alone {alone / total:.1%}, ambiguous {ambiguous / total:.1%}"
        )
        assert with_frame / total >= 0.99
        assert alone / total >= 0.95


def test_the_hyperscan_engine_gives_the_same_answers(real_store):
    with SQLiteStore(real_store) as store:
        reference = Explainer.open(store, cache=None)
        fast = Explainer.open(store, cache=None, engine="hyperscan")
        records = [e.record for e in store.iter_envelopes()][::7][:300]
        for record in records:
            message = f"{record.error_class}: {_render(record)}"
            ours, theirs = fast.explain(message), reference.explain(message)
            assert [(m.record.id, m.kind, m.score) for m in ours.matches] == [
                (m.record.id, m.kind, m.score) for m in theirs.matches
            ], message


def test_a_warning_printed_with_a_message_of_many_lines_is_explained(cli, tmp_path):
    # ``warnings.formatwarning``: "path:line: Category: message", the message's own lines,
    # then the source line indented by two spaces (sklearn's ConvergenceWarning).
    body = (
        "import warnings\n"
        "\n"
        "class ConvergenceWarning(UserWarning):\n"
        "    pass\n"
        "\n"
        "def check(solver, status, text):\n"
        "    warnings.warn(\n"
        '        f"{solver} failed to converge (status={status}):\\n{text}.\\n\\n"\n'
        '        "Increase the number of iterations (max_iter).",\n'
        "        ConvergenceWarning,\n"
        "    )\n"
    )
    mined(cli, tmp_path, {"sk/optimize.py": body})
    text = (
        "/venv/lib/python3.11/site-packages/sk/linear.py:469: ConvergenceWarning: lbfgs failed"
        " to converge (status=1):\nSTOP: TOTAL NO. of ITERATIONS REACHED LIMIT.\n\n"
        "Increase the number of iterations (max_iter).\n"
        "  n_iter_i = _check_optimize_result(\n"
    )
    answer = explained(cli, text)
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 7)
    assert best["captures"] == {
        "solver": "lbfgs",
        "status": "1",
        "text": "STOP: TOTAL NO. of ITERATIONS REACHED LIMIT",
    }


def test_a_message_whose_first_word_reads_as_a_logger_is_tried_whole(cli, tmp_path):
    # celery logs "consumer: Cannot connect to %s: %s." under its own format: "consumer:"
    # reads as the logger's name, but it is the message's.
    body = (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "\n"
        "def connect(uri, exc, step):\n"
        '    logger.error("consumer: Cannot connect to %s: %s.\\n%s", uri, exc, step)\n'
    )
    mined(cli, tmp_path, {"celery/consumer.py": body})
    text = (
        "[2024-05-02 10:15:32,123: ERROR/MainProcess] consumer: Cannot connect to"
        " amqp://guest:**@127.0.0.1:5672//: [Errno 111] Connection refused.\n"
        "Trying again in 2.00 seconds... (1/100)\n"
    )
    answer = explained(cli, text)
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 5)
    assert best["captures"]["exc"] == "[Errno 111] Connection refused"


def test_what_click_prints_for_a_missing_argument_is_its_raise_site(real_store):
    # ``raise MissingParameter(ctx=ctx, param=self)`` passes no message: click prints the
    # class's ``format_message`` text, "Missing argument 'SRC'.", under the usage lines.
    text = (
        "Usage: cli [OPTIONS] SRC\nTry 'cli --help' for help.\n\nError: Missing argument 'SRC'.\n"
    )
    best = best_match(real_store, text)
    assert (best.kind, best.record.file_path, best.record.line_number) == (
        "exact",
        "click/core.py",
        2359,
    )
    assert best.record.error_class == "MissingParameter"
    assert best.captures == {"param_hint": " 'SRC'"}


@pytest.mark.parametrize(
    ("message", "variant"),
    [
        ("('Invalid %s', 4)", "Invalid %s"),
        ('("it\'s bad: %r", None, 3)', "it's bad: %r"),
        ("('unterminated, 4)", None),
        ("(4, 'x')", None),
    ],
)
def test_a_message_raised_with_several_arguments_is_tried_by_its_first(message, variant):
    from errdex.match.explain import message_variants
    from errdex.match.parse import ParsedError

    variants = message_variants(
        ParsedError(error_class="ValueError", qualified_class=None, message=message)
    )
    assert variants[0] == message
    assert variants[1:] == ([variant] if variant else [])


@pytest.mark.parametrize(
    ("message", "leaves"),
    [
        ("['“abc” value must be an integer.']", ["“abc” value must be an integer."]),
        (
            "{'email': ['Enter a valid email address.'], 'name': ['This field is required.']}",
            ["Enter a valid email address.", "This field is required."],
        ),
        (
            "{'email': [ErrorDetail(string='Enter a valid email address.', code='invalid')]}",
            ["Enter a valid email address."],
        ),
        ("[Errno 2] No such file", []),
        ("['unterminated", []),
    ],
)
def test_a_list_or_dict_of_messages_is_tried_by_each(message, leaves):
    from errdex.match.explain import message_variants
    from errdex.match.parse import ParsedError

    variants = message_variants(
        ParsedError(error_class="ValidationError", qualified_class=None, message=message)
    )
    assert [v for v in variants[1:] if v in leaves] == leaves


def test_a_note_with_a_link_at_the_end_of_a_message_is_tried_without_it(cli, tmp_path):
    # SQLAlchemy's ``util.warn(msg, code="qzyx")`` warns ``SAWarning(msg, code=code)``, whose
    # text ends with a link to the code's page.
    body = (
        "import warnings\n"
        "\n"
        "def configure(name, other):\n"
        '    warnings.warn(f"relationship {name} will copy column {other}.", UserWarning)\n'
    )
    mined(cli, tmp_path, {"orm/relationships.py": body})
    text = (
        "UserWarning: relationship 'Child.parent' will copy column parent.id. (Background on"
        " this warning at: https://sqlalche.me/e/20/qzyx)"
    )
    best = explained(cli, text)["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 4)
    assert best["captures"] == {"name": "'Child.parent'", "other": "parent.id"}


def test_a_django_validation_error_is_explained_by_the_message_it_holds(real_store):
    # ``str(ValidationError)`` is the repr of its list of messages.
    text = "django.core.exceptions.ValidationError: ['“abc” value must be an integer.']"
    best = best_match(real_store, text)
    assert (best.kind, best.record.file_path, best.record.error_class) == (
        "exact",
        "django/db/models/fields/__init__.py",
        "ValidationError",
    )
    assert best.record.error_message == "“{value}” value must be an integer."
    assert best.captures == {"value": "abc"}


def test_a_printed_warning_of_a_class_warned_at_one_site_offers_that_site(cli, tmp_path):
    # langchain's ``warnings.warn(warning, category=LangChainDeprecationWarning)``: a text
    # built step by step, printed at the user's own line (``stacklevel``).
    body = (
        "import warnings\n"
        "\n"
        "class LangChainDeprecationWarning(DeprecationWarning):\n"
        "    pass\n"
        "\n"
        "def warn_deprecated(warning):\n"
        "    warnings.warn(warning, category=LangChainDeprecationWarning, stacklevel=4)\n"
    )
    mined(cli, tmp_path, {"langchain_core/_api/deprecation.py": body})
    text = (
        "/home/user/app.py:12: LangChainDeprecationWarning: The class `ChatOpenAI` was"
        " deprecated in LangChain 0.0.10 and will be removed in 1.0.\n"
        '  llm = ChatOpenAI(model="gpt-4o")\n'
    )
    best = explained(cli, text)["matches"][0]
    assert (best["record"]["lineNumber"], best["record"]["errorClass"]) == (
        7,
        "LangChainDeprecationWarning",
    )
    assert any("raised at 1 site(s) only" in note for note in best["evidence"])


def test_a_run_of_spaces_a_web_page_made_one_still_matches(cli, tmp_path):
    # stripe's "…from the Stripe web interface.  See https://stripe.com/api…": an issue's
    # page shows the two spaces as one, and that is what users copy.
    body = (
        "class AuthenticationError(Exception):\n"
        "    pass\n"
        "\n"
        "def request(options):\n"
        "    raise AuthenticationError(\n"
        '        "No API key provided. You can generate API keys "\n'
        '        "from the Stripe web interface.  See https://stripe.com/api for details."\n'
        "    )\n"
    )
    mined(cli, tmp_path, {"stripe/_api_requestor.py": body})
    # The raise's string literals, joined, every run of spaces one.
    one_space = " ".join(body.split("(\n", 1)[1].split('"')[1::2]).replace("  ", " ")
    best = explained(cli, f"stripe._error.AuthenticationError: {one_space}")["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"], best["evidence"][0]) == (
        "exact",
        5,
        "the message matches the template apart from its whitespace",
    )


def test_the_first_line_of_a_multi_line_message_finds_its_template(cli, tmp_path):
    # sklearn's check_array: users paste the first line of a message that goes on with the
    # array and a hint on lines of their own.
    body = (
        "def check_array(array):\n"
        "    raise ValueError(\n"
        '        "Expected 2D array, got 1D array instead:\\narray={}.\\n"\n'
        '        "Reshape your data either using array.reshape(-1, 1).".format(array)\n'
        "    )\n"
    )
    # httpx's begins with a hole: the key that finds it must be in its first line.
    models = (
        "class HTTPStatusError(Exception):\n"
        "    pass\n"
        "\n"
        "def raise_for_status(response, error_type):\n"
        "    message = (\n"
        "        \"{error_type} '{0.status_code} {0.reason_phrase}' for url '{0.url}'\\n\"\n"
        '        "For more information check: https://developer.mozilla.org/{0.status_code}"\n'
        "    )\n"
        "    raise HTTPStatusError(message.format(response, error_type=error_type))\n"
    )
    # fastapi's line ends with a space before its break, which a paste loses.
    utils = (
        "multipart_not_installed_error = (\n"
        "    'Form data requires \"python-multipart\" to be installed. \\n'\n"
        "    'You can install \"python-multipart\" with: \\n\\n'\n"
        "    'pip install python-multipart\\n'\n"
        ")\n"
        "\n"
        "def ensure_multipart_is_installed():\n"
        "    raise RuntimeError(multipart_not_installed_error)\n"
    )
    mined(
        cli,
        tmp_path,
        {
            "sklearn/utils/validation.py": body,
            "httpx/_models.py": models,
            "fastapi/dependencies/utils.py": utils,
        },
    )
    pasted = 'RuntimeError: Form data requires "python-multipart" to be installed.'
    best = explained(cli, pasted)["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("exact", "fastapi/dependencies/utils.py")
    best = explained(cli, "ValueError: Expected 2D array, got 1D array instead:")["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 2)
    assert any("first line of the template's text" in note for note in best["evidence"])
    pasted = "httpx.HTTPStatusError: Client error '404 Not Found' for url 'https://x.org/a'"
    best = explained(cli, pasted)["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("exact", "httpx/_models.py")
    # Stopping elsewhere than at a line's end is a paste cut short, which needs more text.
    for cut in (
        "ValueError: Expected 2D array, got 1D array",
        "ValueError: Expected 2D array, got 1D array instead:\narr",
    ):
        answer = explained(cli, cut)
        assert all(match["kind"] == "approximate" for match in answer["matches"]), cut


def test_a_pasted_class_that_derives_from_the_records_class_is_that_class(cli, tmp_path):
    # SQLAlchemy raises ``DBAPIError.instance(…)``, a classmethod whose ``cls(…)`` is the
    # subclass named after the driver's error: the user sees ``OperationalError``.
    exc = (
        "class SQLAlchemyError(Exception):\n"
        "    pass\n"
        "\n"
        "class DBAPIError(SQLAlchemyError):\n"
        "    @classmethod\n"
        "    def instance(cls, statement, orig):\n"
        "        for super_ in type(orig).__mro__:\n"
        "            if super_.__name__ in globals():\n"
        "                cls = globals()[super_.__name__]\n"
        "        return cls(statement, orig)\n"
        "\n"
        "    def __init__(self, statement, orig):\n"
        '        text = "(%s.%s) %s" % (type(orig).__module__, type(orig).__name__, orig)\n'
        "        super().__init__(text)\n"
        "\n"
        "class DatabaseError(DBAPIError):\n"
        "    pass\n"
        "\n"
        "class OperationalError(DatabaseError):\n"
        "    pass\n"
        "\n"
        "class ClientError(SQLAlchemyError):\n"
        "    def __init__(self, code, operation):\n"
        "        super().__init__(\n"
        '            f"An error occurred ({code}) when calling the {operation} operation"\n'
        "        )\n"
    )
    base = (
        "from sqla import exc\n"
        "\n"
        "def handle(statement, e):\n"
        "    raise exc.DBAPIError.instance(statement, e)\n"
        "\n"
        "def call(code, operation):\n"
        "    raise exc.ClientError(code, operation)\n"
    )
    djang = "def f():\n    raise ValueError('x')\n"
    mined(cli, tmp_path, {"sqla/exc.py": exc, "sqla/engine.py": base, "djang/utils.py": djang})
    wrapped = "sqla.exc.OperationalError: (sqlite3.OperationalError) no such table: users"
    best = explained(cli, wrapped)["matches"][0]
    assert (best["record"]["filePath"], best["record"]["lineNumber"]) == ("sqla/engine.py", 4)
    assert best["record"]["errorClass"] == "DBAPIError"
    assert (
        "the input's OperationalError derives from DBAPIError, a class of the source"
        in (best["evidence"])
    )
    assert list(best["captures"].values())[-1] == "no such table: users"
    # Another package's class of that name derives from nothing of this one (django's
    # ``OperationalError`` is not SQLAlchemy's).
    elsewhere = explained(cli, wrapped.replace("sqla.exc.", "djang.db.utils."))
    assert not any(
        "derives from" in note for match in elsewhere["matches"] for note in match["evidence"]
    )
    # Nor is a mined package's class raised at the sites of another's of its name.
    clash = explained(cli, "djang.utils.ClientError: something else entirely")
    assert not any(m["record"]["errorClass"] == "ClientError" for m in clash["matches"])
    assert (
        explained(cli, "ClientError: something else entirely")["matches"][0]["record"]["errorClass"]
        == "ClientError"
    )
    # A base's record whose template does not produce the message says nothing of it.
    unrelated = explained(cli, "sqla.exc.OperationalError: database is locked")
    assert not any(
        "site(s) only" in note for match in unrelated["matches"] for note in match["evidence"]
    )
    # A class no source defines, qualified with the record's package: made at run time
    # (botocore's errorfactory), so not a contradiction.
    made = (
        "sqla.errorfactory.ResourceNotFoundException: An error occurred"
        " (ResourceNotFoundException) when calling the GetItem operation"
    )
    best = explained(cli, made)["matches"][0]
    assert (best["kind"], best["record"]["errorClass"]) == ("exact", "ClientError")
    assert any("no class the source defines" in note for note in best["evidence"])
    # One the source defines, that is not a subclass, still contradicts.
    other = "sqla.exc.DatabaseError: An error occurred (X) when calling the Y operation"
    best = explained(cli, other)["matches"][0]
    assert best["kind"] == "approximate"
    assert any(note.startswith("the class differs") for note in best["evidence"])


def test_the_file_and_line_a_log_record_names_tells_identical_sites_apart(cli, tmp_path):
    # transformers' explicit format names the file (logging's bare ``%(filename)s``).
    body = (
        "import logging\n"
        "logger = logging.getLogger(__name__)\n"
        "\n"
        "def load(kwargs):\n"
        '    logger.warning("`torch_dtype` is deprecated! Use `dtype` instead!")\n'
    )
    mined(cli, tmp_path, {"tf/modeling_utils.py": body, "tf/configuration_utils.py": body})
    text = (
        "[WARNING|modeling_utils.py:5] 2025-06-01 12:00:00,123 >> `torch_dtype` is"
        " deprecated! Use `dtype` instead!"
    )
    answer = explained(cli, text)
    assert not answer["ambiguous"]
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("exact", "tf/modeling_utils.py")


def test_of_identical_sync_and_async_sites_the_synchronous_comes_first(cli, tmp_path):
    body = (
        "def select(timeout):\n"
        '    raise TimeoutError(f"No servers found yet, Timeout: {timeout}s")\n'
    )
    mined(cli, tmp_path, {"db/asynchronous/topology.py": body, "db/synchronous/topology.py": body})
    answer = explained(cli, "No servers found yet, Timeout: 30s")
    assert answer["ambiguous"]
    assert [m["record"]["filePath"] for m in answer["matches"]] == [
        "db/synchronous/topology.py",
        "db/asynchronous/topology.py",
    ]


def test_the_top_of_many_identical_sites_are_the_first_of_the_whole_ranking(cli, tmp_path):
    # Only the ``--top`` best are put in order: they must be those a sort of every match
    # puts first (the synchronous copies, then the stored order), and the count all of them.
    body = 'def select(timeout):\n    raise TimeoutError(f"No servers found yet: {timeout}s")\n'
    files = {f"db/{kind}/m{n}.py": body for kind in ("asynchronous", "sync") for n in range(6)}
    mined(cli, tmp_path, files)
    paths = {}
    for top in ("3", "20"):
        output = cli("explain", "No servers found yet: 30s", "--json", "--top", top).output
        answer = json.loads(output)
        assert answer["ambiguous"] and answer["total"] == 12
        paths[top] = [m["record"]["filePath"] for m in answer["matches"]]
    assert paths["20"] == sorted(files, key=lambda path: ("asynchronous" in path, path))
    assert paths["3"] == paths["20"][:3] == ["db/sync/m0.py", "db/sync/m1.py", "db/sync/m2.py"]


def test_a_logged_message_python_raised_is_told_as_such(cli, tmp_path):
    # uvicorn logs the OSError it caught: ``logger.error(exc)``.
    body = "import logging\n\ndef serve(exc):\n    logging.getLogger('uvicorn').error(exc)\n"
    mined(cli, tmp_path, {"uvicorn/server.py": body})
    answer = json.loads(
        cli("explain", "ERROR:    [Errno 98] Address already in use", "--json").output
    )
    assert answer["interpreter"] == (
        "Python itself raises this OSError: the operating system refused the operation:"
        " address already in use."
    )


def test_a_message_python_itself_raises_is_no_exact_match_without_a_frame(cli, tmp_path):
    # pytest's monkeypatch raises ``{target} has no attribute {name}``: the interpreter's
    # ``'NoneType' object has no attribute 'foo'`` fits it, but Python raised that one.
    body = (
        "def setattr(target, name):\n"
        '    raise AttributeError(f"{target!r} has no attribute {name!r}")\n'
    )
    src = mined(cli, tmp_path, {"pkg/monkeypatch.py": body})
    text = "AttributeError: 'NoneType' object has no attribute 'foo'"
    answer = explained(cli, text)
    assert answer["interpreter"].startswith("Python itself raises this AttributeError:")
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("approximate", 2)
    assert any("Python itself makes this message" in note for note in best["evidence"])
    shown = cli("explain", text)
    assert "Python itself raises this AttributeError" in shown.output
    # A frame at the record's line says the record raised it.
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "{src / "pkg" / "monkeypatch.py"}", line 2, in setattr\n'
        '    raise AttributeError(f"{target!r} has no attribute {name!r}")\n'
        f"{text}\n"
    )
    best = explained(cli, traceback)["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 2)
    # A library's own message, or its own class, is not the interpreter's.
    answer = explained(cli, "pkg.Missing: [Errno 2] No such file")
    assert answer["interpreter"] is None
    library = "requests.exceptions.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    assert explained(cli, library)["interpreter"] is None
    stdlib = library.replace("requests.exceptions.", "json.decoder.")
    said = explained(cli, stdlib)["interpreter"]
    assert said.startswith("Python's json module raises this JSONDecodeError:")
    # A database layer's PEP 249 class raises the driver's message again: SQLite's (#4).
    said = explained(cli, "django.db.utils.OperationalError: no such table: auth_user")
    assert said["interpreter"].startswith(
        "Python's sqlite3 module raises this OperationalError: a query names a table"
    )
    assert explained(cli, "pkg.errors.NoTable: no such table: auth_user")["interpreter"] is None


def test_a_pasted_class_the_records_class_derives_from_is_another_version_of_the_site(
    cli, tmp_path
):
    # starlette raised ``RuntimeError('Cannot call "send" once a close message has been
    # sent.')``; later versions raise ``WebSocketDisconnected``, a RuntimeError, there.
    body = (
        "class WebSocketDisconnected(RuntimeError):\n"
        "    pass\n"
        "def send(state):\n"
        "    raise WebSocketDisconnected(\n"
        "        'Cannot call \"send\" once a close message has been sent.'\n"
        "    )\n"
    )
    mined(cli, tmp_path, {"starlette/websockets.py": body})
    message = 'Cannot call "send" once a close message has been sent.'
    best = explained(cli, f"RuntimeError: {message}")["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 4)
    assert any("derives from the input's RuntimeError" in note for note in best["evidence"])
    # BaseException, which every class derives from, tells nothing; a class the record's
    # does not derive from contradicts it.
    for pasted in ("BaseException", "KeyError"):
        best = explained(cli, f"{pasted}: {message}")["matches"][0]
        assert (best["kind"], best["record"]["lineNumber"]) == ("approximate", 4), pasted


def test_an_operating_system_error_another_class_passes_on_is_told_as_such(cli, tmp_path):
    # httpx raises its own class with the text of the OSError it caught
    # (``raise mapped_exc(message) from exc``): the text says what happened.
    body = "def send(mapped_exc, exc):\n    raise mapped_exc(str(exc)) from exc\n"
    mined(cli, tmp_path, {"httpx/_transports/default.py": body})
    meaning = "the operating system refused the operation: connection refused."
    for pasted in ("httpx.ConnectError", "ConnectError"):
        answer = explained(cli, f"{pasted}: [Errno 111] Connection refused")
        assert (
            answer["interpreter"]
            == f"{pasted} passes on an error of the operating system: {meaning}"
        )
        assert all(match["kind"] == "approximate" for match in answer["matches"])
    # Not a text the operating system gives, or a built-in class that is no OSError.
    assert explained(cli, "httpx.ConnectError: [Errno 111] Not listening")["interpreter"] is None
    assert explained(cli, "ValueError: [Errno 111] Connection refused")["interpreter"] is None


@pytest.mark.parametrize(
    ("error_class", "message", "template"),
    [
        ("TypeError", "'NoneType' object is not subscriptable", "'{}' object is not subscriptable"),
        ("TypeError", "f() missing 1 required positional argument: 'x'", None),
        (None, "list index out of range", "list index out of range"),
        ("ModuleNotFoundError", "No module named 'torch'", "No module named '{}'"),
        ("FileNotFoundError", "[Errno 2] No such file or directory: 'a.yaml'", None),
        ("FileNotFoundError", "[Errno 2] Config not found: 'a.yaml'", "no"),
        ("ValueError", "Unknown speculative phase draft", "no"),
        ("KeyError", "'popitem(): dictionary is empty'", "'popitem(): dictionary is empty'"),
        # Python 3.10+'s suggestions, and a user's words under the error.
        ("NameError", "name 'sys' is not defined. Did you forget to import 'sys'?", None),
        ("AttributeError", "'Foo' object has no attribute 'bat'. Did you mean: 'bar'?", None),
        ("AttributeError", "'NoneType' object has no attribute 'x'\n\nAny idea why?", None),
        # The standard library's own, said as such.
        ("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", None),
        ("TypeError", "Object of type datetime is not JSON serializable", None),
        ("ValueError", "cannot convert float NaN to integer", None),
        # SQLite's, through the sqlite3 module.
        ("IntegrityError", "UNIQUE constraint failed: users.email", "UNIQUE constraint failed: {}"),
        ("OperationalError", "database is locked", "database is locked"),
        ("IntegrityError", "database is locked", "no"),
        # What asyncio logs, with the task it names on the next line.
        (
            None,
            "Task was destroyed but it is pending!\ntask: <Task pending name='Task-2'>",
            "Task was destroyed but it is pending!{}",
        ),
        # asyncio's, when a task awaits what belongs to another loop.
        (
            "RuntimeError",
            "Task <Task pending name='Task-1' coro=<main() running at x.py:3>> got Future"
            " <Future pending> attached to a different loop",
            "Task {} got Future {} attached to a different loop",
        ),
        # asyncio's, that uvicorn logs when its port is taken.
        (
            "OSError",
            "[Errno 98] error while attempting to bind on address ('0.0.0.0', 8000): address"
            " already in use",
            "[Errno {}] error while attempting to bind on address {}: {}",
        ),
    ],
)
def test_the_interpreters_messages(error_class, message, template):
    found = interpreter_message(error_class, message)
    if template == "no":
        assert found is None
    else:
        assert found is not None and (template is None or found.template == template)


def test_every_message_of_the_interpreter_is_found_by_its_words():
    from errdex.match.interpreter import _ENTRIES

    for entry in _ENTRIES:
        if entry.general or not entry.template:
            continue
        message = entry.template.replace("{}", "x1")
        for error_class in (entry.error_class, None):
            assert interpreter_message(error_class, message) is not None, (entry, message)


def test_a_message_the_standard_library_logs_is_said_to_be_logged():
    found = interpreter_message(None, "Future exception was never retrieved")
    assert found is not None
    assert found.describe().startswith("Python's asyncio module logs this at ERROR level: ")
    raised = interpreter_message("ValueError", "cannot convert float NaN to integer")
    assert raised is not None
    assert raised.describe().startswith("Python itself raises this ValueError: ")


def test_a_class_few_sites_raise_finds_them_when_no_template_matches(cli, tmp_path):
    # aiohttp raises ``NonHttpUrlClientError(url)`` at one place: its template is all hole.
    body = (
        "def request(url):\n"
        "    raise NonHttpUrlClientError(url)\n"
        "def warn(name):\n"
        '    raise UserWarning(f"Config file {name} not found for this client")\n'
        "def log(message):\n"
        "    logger.error(message)\n"
    )
    mined(cli, tmp_path, {"pkg/client.py": body})
    answer = json.loads(
        cli("explain", "pkg.client.NonHttpUrlClientError: ftp://example.com/x", "--json").output
    )
    best = answer["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("approximate", 2)
    assert best["captures"] == {"url": "ftp://example.com/x"}
    assert any("raised at 1 site(s) only" in note for note in best["evidence"])
    # Not for a log level, nor for a class of Python's own.
    for text in ("2026-12-03 10:00:00 ERROR app: Exception in handler", "UserWarning: ftp://x"):
        answer = explained(cli, text)
        assert not any(
            "site(s) only" in note for match in answer["matches"] for note in match["evidence"]
        )


def test_a_site_that_raises_an_object_is_exact_only_at_the_innermost_frame(cli, tmp_path):
    # redis's ``raise response`` (the server's error, made elsewhere and raised here) against
    # concurrent.futures' ``raise self._exception`` (raised in a worker, passed on here).
    body = "class Future:\n    def result(self):\n        raise self._exception\n"
    src = mined(cli, tmp_path, {"pkg/futures.py": body})
    here = f'  File "{src / "pkg" / "futures.py"}", line 3, in result\n    raise self._exception\n'
    head = 'Traceback (most recent call last):\n  File "/app/main.py", line 3, in <module>\n'
    deeper = '  File "/app/work.py", line 6, in work\n    data["user_id"]\n'
    passed_on = json.loads(
        cli("explain", head + here + deeper + "KeyError: 'user_id'\n", "--json").output
    )
    assert [m for m in passed_on["matches"] if m["kind"] == "exact"] == []
    raised = json.loads(
        cli("explain", head + here + "ResponseError: WRONGTYPE Operation\n", "--json").output
    )
    best = raised["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 3)


def test_the_site_of_the_error_pasted_last_outranks_one_of_its_cause_showing_its_text(
    cli, tmp_path
):
    # requests' ``raise ConnectionError(e)`` shows urllib3's MaxRetryError text, raised at
    # the earlier error's innermost frame: the pasted error was raised in the adapter.
    files = {
        "pkg/retry.py": (
            "def increment(pool, url):\n"
            '    raise MaxRetryError(f"{pool}: Max retries exceeded with url: {url}")\n'
        ),
        "pkg/adapters.py": (
            "def send(request):\n"
            "    try:\n"
            "        pass\n"
            "    except MaxRetryError as e:\n"
            "        raise ConnectionError(e, request=request)\n"
        ),
    }
    src = mined(cli, tmp_path, files)
    text = "HTTPConnectionPool(host='x', port=9): Max retries exceeded with url: /api"
    traceback = (
        "Traceback (most recent call last):\n"
        f'  File "{src / "pkg" / "retry.py"}", line 2, in increment\n'
        '    raise MaxRetryError(f"{pool}: Max retries exceeded with url: {url}")\n'
        f"pkg.retry.MaxRetryError: {text}\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        f'  File "{src / "pkg" / "adapters.py"}", line 5, in send\n'
        "    raise ConnectionError(e, request=request)\n"
        f"requests.exceptions.ConnectionError: {text}\n"
    )
    matches = explained(cli, traceback)["matches"]
    assert [(m["record"]["filePath"], m["kind"]) for m in matches[:2]] == [
        ("pkg/adapters.py", "exact"),
        ("pkg/retry.py", "exact"),
    ]


def test_a_key_error_is_said_to_be_a_lookup_unless_a_site_raises_its_message(cli, tmp_path):
    body = 'def get(name):\n    raise KeyError(f"no session named {name}")\n'
    mined(cli, tmp_path, {"pkg/sessions.py": body})
    lookup = explained(cli, "KeyError: 'username'")
    assert lookup["interpreter"].startswith("Python itself raises this KeyError: a dict")
    raised = explained(cli, "KeyError: 'no session named x'")
    assert raised["interpreter"] is None
    assert (raised["matches"][0]["kind"], raised["matches"][0]["record"]["lineNumber"]) == (
        "exact",
        2,
    )


def test_of_equal_evidence_the_closer_template_and_class_come_first(cli, tmp_path):
    # pydantic prints every ``PydanticUserError`` with a long link after it, and also raises
    # one with whatever text a mock holds: the site that spells the message out comes first.
    exc = (
        "class UserError(Exception):\n"
        "    def __init__(self, message, *, code):\n"
        "        self.message = message\n"
        "        self.code = code\n"
        "\n"
        "    def __str__(self):\n"
        '        return f"{self.message}\\n\\nFor further information visit'
        ' https://errors.example.dev/2.9/u/{self.code}"\n'
        "\n"
        "class InvalidJSONError(Exception):\n"
        "    pass\n"
        "\n"
        "class JSONDecodeError(InvalidJSONError, ValueError):\n"
        "    pass\n"
        "\n"
        "class TemplateNotFound(Exception):\n"
        "    pass\n"
    )
    mock = (
        "from pkg.errors import UserError\n"
        "\n"
        "class Mock:\n"
        "    def __getattr__(self, item):\n"
        "        raise UserError(self._error_message, code=self._code)\n"
    )
    model = (
        "from pkg.errors import UserError\n"
        "\n"
        "def inspect(name):\n"
        "    raise UserError(\n"
        '        f"A non-annotated attribute was detected: `{name}`. All model fields require'
        ' a type annotation.",\n'
        '        code="model-field-missing-annotation",\n'
        "    )\n"
    )
    # requests raises the base class and, further down, its subclass, each with the text of
    # the error it caught.
    models = (
        "from pkg.errors import InvalidJSONError, JSONDecodeError\n"
        "\n"
        "def body(data):\n"
        "    try:\n"
        "        return encode(data)\n"
        "    except ValueError as ve:\n"
        "        raise InvalidJSONError(ve)\n"
        "\n"
        "def json(text):\n"
        "    try:\n"
        "        return decode(text)\n"
        "    except ValueError as e:\n"
        "        raise JSONDecodeError(e.msg)\n"
    )
    # jinja2 raises ``TemplateNotFound(name)`` at a dozen places: no place is known, but its
    # sites are where to look, not a record that only shares the name's words.
    loaders = "from pkg.errors import TemplateNotFound\n\n" + "".join(
        f"def load_{number}(template):\n    raise TemplateNotFound(template)\n\n"
        for number in range(12)
    )
    html = "def check(name):\n    raise ValueError(f'{name}: index.html is not a valid page')\n"
    mined(
        cli,
        tmp_path,
        {
            "pkg/errors.py": exc,
            "pkg/_mock.py": mock,
            "pkg/_model.py": model,
            "pkg/models.py": models,
            "pkg/loaders.py": loaders,
            "pkg/html.py": html,
        },
    )
    pasted = (
        "pkg.errors.UserError: A non-annotated attribute was detected: `x`. All model fields"
        " require a type annotation.\n\nFor further information visit"
        " https://errors.example.dev/2.9/u/model-field-missing-annotation"
    )
    answer = explained(cli, pasted)
    assert [m["kind"] for m in answer["matches"][:2]] == ["exact", "exact"]
    assert answer["matches"][0]["record"]["filePath"] == "pkg/_model.py"
    assert not answer["ambiguous"]

    decoded = explained(cli, "pkg.errors.JSONDecodeError: Expecting value: line 1 column 1")
    best, second = decoded["matches"][:2]
    assert (best["record"]["errorClass"], best["record"]["lineNumber"]) == ("JSONDecodeError", 13)
    assert second["record"]["errorClass"] == "InvalidJSONError"
    assert best["score"] > second["score"]

    found = explained(cli, "pkg.errors.TemplateNotFound: index.html")
    assert {m["record"]["errorClass"] for m in found["matches"]} == {"TemplateNotFound"}
    assert {m["kind"] for m in found["matches"]} == {"approximate"}
    assert all(m["record"]["filePath"] == "pkg/loaders.py" for m in found["matches"])
    assert any("raised at 12 sites" in note for note in found["matches"][0]["evidence"])
    # A bare message of no class still gets the records that share its words.
    assert explained(cli, "index.html")["matches"][0]["record"]["filePath"] == "pkg/html.py"


@pytest.mark.parametrize(
    "error",
    [
        "\nError: Missing argument 'NAME'.\n",
        # typer prints click's errors in a box
        "╭─ Error ───────────────────────╮\n"
        "│ Missing argument 'NAME'.      │\n"
        "╰───────────────────────────────╯\n",
    ],
)
def test_a_usage_error_printed_by_click_is_clicks(cli, tmp_path, error):
    # SQLAlchemy's ``Missing argument {argument}`` prints click's text too; click's usage
    # lines above the error say whose it is.
    mined(
        cli,
        tmp_path,
        {
            "alchemy/orm.py": (
                "def check(argument):\n    raise ArgumentError(f'Missing argument {argument}.')\n"
            ),
            "click/core.py": (
                "def parse(hint):\n    raise MissingParameter(f'Missing argument {hint}.')\n"
            ),
        },
    )
    usage = "Usage: main.py [OPTIONS] NAME\nTry 'main.py --help' for help.\n"
    best = explained(cli, usage + error)["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("exact", "click/core.py")
    assert "the paste is how click prints an error" in best["evidence"]
    # Without the usage lines, nothing tells the two apart.
    bare = explained(cli, error)["matches"]
    assert {m["record"]["filePath"] for m in bare[:2]} == {"alchemy/orm.py", "click/core.py"}
    assert bare[0]["score"] == bare[1]["score"]


def test_what_argparse_prints_for_parser_error_is_its_call(cli, tmp_path):
    body = (
        "import argparse\n"
        "\n"
        "def main(argv):\n"
        "    parser = argparse.ArgumentParser(prog='tool')\n"
        "    args = parser.parse_args(argv)\n"
        "    if args.mode not in ('fast', 'slow'):\n"
        "        parser.error(f'unknown mode {args.mode!r}')\n"
        "    if not args.paths:\n"
        "        parser.error('no input')\n"
        "\n"
        "def read(path):\n"
        "    raise ValueError(f'no input file at {path}')\n"
    )
    mined(cli, tmp_path, {"tool/cli.py": body})
    text = "usage: tool [-h] [--mode MODE]\ntool: error: unknown mode 'x'\n"
    best = explained(cli, text)["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 7)
    assert best["record"]["errorClass"] == "SystemExit"
    assert best["captures"] == {"args.mode": "'x'"}
    # Too short to be told apart from other text without a frame, but still its call.
    best = explained(cli, "usage: tool [-h]\ntool: error: no input\n")["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("approximate", 9)
    assert best["captures"] == {}
    assert "the message matches the template (8 literal characters)" in best["evidence"]


def test_a_message_handed_to_another_packages_raise_finds_where_it_is_made(cli, tmp_path):
    # flask hands "Working outside of application context." to werkzeug's LocalProxy, which
    # raises it as ``RuntimeError(unbound_message)`` when nothing is bound.
    local = (
        "class LocalProxy:\n"
        "    def __init__(self, local, name=None, *, unbound_message=None):\n"
        "        def _get_current_object():\n"
        "            try:\n"
        "                return local.get()\n"
        "            except LookupError:\n"
        "                raise RuntimeError(unbound_message) from None\n"
        "        self._get_current_object = _get_current_object\n"
    )
    globals_ = (
        "from contextvars import ContextVar\n"
        "\n"
        "from werkzeug.local import LocalProxy\n"
        "\n"
        '_no_app_msg = """\\\n'
        "Working outside of application context.\n"
        "\n"
        "To solve this, set up an application context with app.app_context().\\\n"
        '"""\n'
        '_cv_app = ContextVar("flask.app_ctx")\n'
        'current_app = LocalProxy(_cv_app, "app", unbound_message=_no_app_msg)\n'
        'g = LocalProxy(_cv_app, "g", unbound_message=_no_app_msg)\n'
    )
    src = mined(cli, tmp_path, {"werkzeug/local.py": local, "flask/globals.py": globals_})
    bare = explained(cli, "RuntimeError: Working outside of application context.")
    best = bare["matches"][0]
    assert (best["kind"], best["record"]["filePath"]) == ("exact", "flask/globals.py")
    assert (best["record"]["lineNumber"], bare["matches"][1]["record"]["lineNumber"]) == (11, 12)
    assert bare["ambiguous"]
    assert "hands the message" in best["record"]["documentation"]
    # No traceback tells the two proxies apart: it ends in werkzeug's raise.
    shown = " ".join(
        cli("explain", "RuntimeError: Working outside of application context.").output.split()
    )
    assert "each hands it to the same code, which raises it" in shown
    # The traceback ends in werkzeug's raise of whatever it was given: flask's text first.
    paste = (
        "Traceback (most recent call last):\n"
        '  File "/app/app.py", line 3, in <module>\n'
        "    print(current_app.name)\n"
        f'  File "{src}/werkzeug/local.py", line 7, in _get_current_object\n'
        "    raise RuntimeError(unbound_message) from None\n"
        "RuntimeError: Working outside of application context.\n"
        "\n"
        "To solve this, set up an application context with app.app_context().\n"
    )
    first, second, third = explained(cli, paste)["matches"][:3]
    assert [m["record"]["filePath"] for m in (first, second, third)] == [
        "flask/globals.py",
        "flask/globals.py",
        "werkzeug/local.py",
    ]
    assert first["kind"] == third["kind"] == "exact"
    assert any("this record makes that text" in note for note in first["evidence"])


def test_a_django_system_check_message_finds_its_check(cli, tmp_path):
    body = (
        "from django.core import checks\n"
        "\n"
        "def _check_clashes(self, rel_name, clash_name):\n"
        "    return [\n"
        "        checks.Error(\n"
        "            f\"Reverse accessor '{rel_name}' for '{self}' clashes with reverse\"\n"
        "            f\" accessor for '{clash_name}'.\",\n"
        '            hint="Add or change a related_name argument.",\n'
        "            obj=self,\n"
        '            id="fields.E304",\n'
        "        )\n"
        "    ]\n"
    )
    mined(cli, tmp_path, {"django/db/models/fields/related.py": body})
    lines = [
        "ERRORS:",
        "app.Profile.user: (fields.E304) Reverse accessor 'User.profile' for 'app.Profile.user'"
        " clashes with reverse accessor for 'app.Account.user'.",
        "\tHINT: Add or change a related_name argument.",
    ]
    best = explained(cli, "\n".join(lines))["matches"][0]
    assert (best["kind"], best["record"]["lineNumber"]) == ("exact", 4)
    assert best["record"]["errorCode"] == "fields.E304"
    assert best["captures"]["rel_name"] == "User.profile"


def test_what_argparse_itself_prints_is_said_to_be_argparses(cli, tmp_path):
    # pytest's own parser prints any message under its usage; the message is argparse's.
    body = (
        "class UsageError(Exception):\n"
        "    pass\n"
        "\n"
        "class Parser:\n"
        "    def error(self, message):\n"
        '        raise UsageError(f"{self.usage}{self.prog}: error: {message}")\n'
    )
    mined(cli, tmp_path, {"_pytest/config/argparsing.py": body})
    lines = [
        "ERROR: usage: pytest [options] [file_or_dir] [file_or_dir] [...]",
        "pytest: error: unrecognized arguments: --cov=app",
        "  inifile: None",
    ]
    answer = explained(cli, "\n".join(lines))
    assert answer["interpreter"].startswith(
        "Python's argparse module prints this under the usage and exits with status 2: "
    )
    assert all(match["kind"] == "approximate" for match in answer["matches"])
    choice = "usage: tool [-h] {run,stop}\ntool: error: argument command: invalid choice: 'go'"
    assert "argparse" in explained(cli, choice + " (choose from 'run', 'stop')")["interpreter"]


def test_the_statement_a_frame_shows_finds_its_site_in_another_version(cli, tmp_path):
    # requests' ``raise ConnectionError(e, request=request)`` is at adapters.py:508 in the
    # version a user ran, 200 lines further down in the one mined.
    filler = "".join(f"def helper_{n}():\n    return {n}\n\n" for n in range(100))
    body = (
        filler
        + "def send(request, conn):\n"
        + "    try:\n"
        + "        return conn.urlopen(request)\n"
        + "    except ProtocolError as err:\n"
        + "        raise ConnectionError(err, request=request)\n"
        + "    except MaxRetryError as e:\n"
        + "        raise ConnectionError(e, request=request)\n"
    )
    src = mined(cli, tmp_path, {"requests/adapters.py": body})
    lines = [
        "Traceback (most recent call last):",
        '  File "/app/bing.py", line 416, in search',
        "    session.get(url)",
        f'  File "{src}/requests/adapters.py", line 58, in send',
        "    raise ConnectionError(e, request=request)",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='bing.comhttps',"
        " port=443): Max retries exceeded with url: /search",
    ]
    best, other = explained(cli, "\n".join(lines))["matches"][:2]
    assert (best["record"]["lineNumber"], other["record"]["lineNumber"]) == (307, 305)
    assert best["score"] > other["score"]
    assert any("shows the record's statement" in note for note in best["evidence"])


_RANKED_PATHS = [f"db/{'asynchronous/' if n % 3 == 0 else ''}m{n}.py" for n in range(12)]


@given(
    picks=st.lists(
        st.tuples(st.integers(0, 11), st.sampled_from([0.0, 5.0, 12.5]), st.integers(0, 2)),
        unique_by=lambda pick: pick[0],
        max_size=12,
    ),
    top=st.integers(1, 8),
)
def test_explain_ranks_candidates_as_two_sorts_of_them_all_would(picks, top):
    # The ranking sorts by record, by the asynchronous copy on a tie, then by score and
    # spelled-out text; it must give what a sort of every candidate by the tuple (score,
    # spelled, record), then again by (score, spelled, asynchronous) when the best two tie,
    # gave before it.
    from errdex.match.explain import _asynchronous, _best_scored, _best_shared, _Candidate
    from errdex.match.index import build_index

    template = json.dumps([["No servers found yet: ", False], ["timeout", True]])
    rows = [(n + 1, "E", p, 2, 2, "raise", template) for n, p in enumerate(_RANKED_PATHS)]
    explainer = Explainer(None, build_index(rows, version="v"))  # type: ignore[arg-type]
    pool = []
    for record, score, spelled in picks:
        candidate = _Candidate(record, 0, None)
        candidate.score, candidate.spelled = score, spelled
        pool.append(candidate)
    before = sorted(pool, key=lambda c: (-c.score, -c.spelled, c.record))
    if len(before) > 1 and before[0].score == before[1].score:
        before.sort(key=lambda c: (-c.score, -c.spelled, _asynchronous(_RANKED_PATHS[c.record])))
    tie = _best_shared(pool)
    assert tie == (len(_best_scored(pool)) > 1)
    assert [c.record for c in explainer._best(pool, top, tie=tie)] == [
        c.record for c in before[:top]
    ]
