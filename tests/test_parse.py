"""The input parser of ``errdex explain``: the corpus of real-looking pastes, edges and bounds.

Each ``tests/corpus/messages/<case>.txt`` is parsed and compared with ``<case>.expected.json``:
the kind, the index of the primary error, and per error its class, qualified class, message,
relation and frames as ``[path, line, function]``; ``notes``, ``truncated``, ``depth``,
``level``, ``logger`` and ``omitted_frames`` appear in the JSON only when they are not the
default, and are compared either way.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import pickle
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from errdex.match import parse as parse_module
from errdex.match.explain import Explanation
from errdex.match.parse import (
    MAX_ERRORS,
    MAX_FRAMES,
    MAX_LINE_CHARS,
    RECOGNISERS,
    Block,
    Frame,
    ParsedError,
    ParsedInput,
    Recogniser,
    Scan,
    parse,
    register_recogniser,
    repr_message,
    strip_ansi,
)
from errdex.values import finish_value

CORPUS = Path(__file__).resolve().parent / "corpus" / "messages"
CASES = sorted(path.stem for path in CORPUS.glob("*.txt"))
OPTIONAL = {
    "notes": [],
    "truncated": False,
    "depth": 0,
    "level": None,
    "logger": None,
    "omitted_frames": 0,
}
BOUND = 1.0  # seconds: a safety bound, not a benchmark


def summarise(parsed: ParsedInput) -> dict[str, Any]:
    """The comparable summary of a parse, as the expected files hold it."""
    errors = []
    for error in parsed.errors:
        item: dict[str, Any] = {
            "error_class": error.error_class,
            "qualified_class": error.qualified_class,
            "message": error.message,
            "relation": error.relation,
            "frames": [[f.path, f.line, f.function] for f in error.frames],
        }
        for key, default in OPTIONAL.items():
            value = getattr(error, key)
            value = list(value) if isinstance(value, tuple) else value
            if value != default:
                item[key] = value
        errors.append(item)
    primary = parsed.primary
    return {
        "kind": parsed.kind,
        "primary": None if primary is None else parsed.errors.index(primary),
        "errors": errors,
    }


def timed(text: str) -> tuple[ParsedInput, float]:
    # CPU time of this process: what the parse costs, whatever else the machine is doing.
    start = time.process_time()
    parsed = parse(text)
    return parsed, time.process_time() - start


# -- the corpus ------------------------------------------------------------------------------


def test_corpus_is_complete() -> None:
    assert len(CASES) >= 30
    for case in CASES:
        assert (CORPUS / f"{case}.expected.json").is_file(), case
    for expected in CORPUS.glob("*.expected.json"):
        assert (CORPUS / expected.name.replace(".expected.json", ".txt")).is_file()


@pytest.mark.parametrize("case", CASES)
def test_corpus(case: str) -> None:
    text = (CORPUS / f"{case}.txt").read_text(encoding="utf-8")
    expected = json.loads((CORPUS / f"{case}.expected.json").read_text(encoding="utf-8"))
    parsed = parse(text)
    assert summarise(parsed) == expected
    assert parsed.original == text
    assert 0 < parsed.lines_used <= len(text.splitlines())
    json.dumps(parsed.to_dict())


def test_corpus_covers_every_kind() -> None:
    kinds = {
        json.loads((CORPUS / f"{case}.expected.json").read_text(encoding="utf-8"))["kind"]
        for case in CASES
    }
    assert kinds == {"message", "traceback", "log", "pytest", "ipython", "json-log"}


# -- values ----------------------------------------------------------------------------------


def test_values_are_frozen() -> None:
    # Compiled, a ``Final`` field is read-only (AttributeError); run from source, the class
    # refuses as a frozen dataclass does (FrozenInstanceError, an AttributeError).
    parsed = parse("ValueError: x")
    with pytest.raises(AttributeError):
        parsed.kind = "log"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        parsed.errors[0].message = "y"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        Frame("a.py").line = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del Frame("a.py").line  # type: ignore[misc]
    answer = Explanation(parsed=parsed, matches=[])
    with pytest.raises(AttributeError):
        answer.total = 2  # type: ignore[misc]


_ERROR = ParsedError("KeyError", "builtins.KeyError", "'a'")
_INPUT = ParsedInput("message", (_ERROR,), 1, "KeyError: 'a'")
VALUES = {
    # Each field set to a value other than its default (compiled, the types are checked).
    Frame: ("a.py", 3, "f", "g()"),
    ParsedError: (
        *("ValueError", "x.ValueError", "bad", (Frame("a.py"),), ("Note: n",), "cause"),
        *(True, "go", 2, "ERROR", "app", 4),
    ),
    ParsedInput: ("log", (_ERROR,), 3, "text", 1, 2),
    Explanation: (_INPUT, [], True, 3, "Python raises it"),
}


@pytest.mark.parametrize("cls", list(VALUES))
def test_hand_written_constructors_take_exactly_the_fields(cls: type) -> None:
    # These values set their fields in an ``__init__`` of their own (for speed): it must take
    # every field, by name and in order, and set it (compiled, it shows no signature).
    names = [spec.name for spec in dataclasses.fields(cls)]
    values = dict(zip(names, VALUES[cls], strict=True))
    for made in (cls(**values), cls(*values.values())):
        assert [getattr(made, name) for name in names] == list(values.values())
        assert dataclasses.replace(made) == made and dataclasses.replace(made) is not made


def test_values_compare_hash_and_pickle_by_their_fields() -> None:
    text = 'Traceback (most recent call last):\n  File "a.py", line 3, in f\n    g()\nKeyError: 1'
    parsed = parse(text)
    again = parse(text)
    assert parsed == again and hash(parsed) == hash(again) and parsed is not again
    assert parsed != parse(text.replace("KeyError", "IndexError"))
    assert {parsed.errors[0].frames[0], Frame("a.py", 3, "f", "g()")} == {
        Frame("a.py", 3, "f", "g()")
    }
    assert repr(Frame("a.py", 3)) == "Frame(path='a.py', line=3, function=None, source=None)"
    assert pickle.loads(pickle.dumps(parsed)) == parsed
    answer = Explanation(parsed=parsed, matches=[], total=0, interpreter="Python raises it")
    assert pickle.loads(pickle.dumps(answer)) == answer


def test_freezing_refuses_a_constructor_with_star_arguments() -> None:
    class Loose:
        def __init__(self, *parts: str) -> None:
            self.parts = parts

    with pytest.raises(TypeError, match=r"\*parts"):
        finish_value(Loose)


def test_a_finished_value_may_have_fields_named_as_the_made_constructor_s_names() -> None:
    # Run from source, the constructor finish_value makes stores into the instance's
    # ``__dict__``: by names no field has (the classifier's tests have ``values``).
    @dataclasses.dataclass(unsafe_hash=True)
    class Test:
        kind: Final[str]
        values: Final[tuple[str, ...]]
        _values: Final[int]

        def __init__(self, kind: str, values: tuple[str, ...] = (), _values: int = 0) -> None:
            self.kind = kind
            self.values = values
            self._values = _values

    finish_value(Test)
    made = Test("equals", ("0",), 2)
    assert (made.kind, made.values, made._values) == ("equals", ("0",), 2)
    assert Test("bound").values == () and Test("bound")._values == 0
    assert made == Test("equals", ("0",), 2) and made != Test("equals")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.values = ()  # type: ignore[misc]


def test_primary_is_the_last_outermost_exception() -> None:
    parsed = parse((CORPUS / "tb_exception_group.txt").read_text())
    assert parsed.primary is parsed.errors[0]
    assert parsed.primary.error_class == "ExceptionGroup"
    parsed = parse((CORPUS / "log_uvicorn_dash.txt").read_text())
    assert parsed.primary is not None and parsed.primary.error_class == "HTTPException"
    assert parse("").primary is None


def test_empty_and_blank_input() -> None:
    for text in ("", "\n\n", "   \t  \n "):
        parsed = parse(text)
        assert parsed.kind == "message"
        assert parsed.errors == ()
        assert parsed.lines_used == 0
        assert parsed.original == text


@pytest.mark.parametrize(
    ("text", "error_class", "qualified", "message"),
    [
        ("KeyError: 'phase'", "KeyError", "KeyError", "'phase'"),
        ("KeyboardInterrupt", "KeyboardInterrupt", "KeyboardInterrupt", ""),
        (
            "socket.gaierror: [Errno -2] Name or service not known",
            "gaierror",
            "socket.gaierror",
            "[Errno -2] Name or service not known",
        ),
        (
            "psycopg2.errors.UniqueViolation: duplicate key",
            "UniqueViolation",
            "psycopg2.errors.UniqueViolation",
            "duplicate key",
        ),
        ("Note: the cache is cold", None, None, "Note: the cache is cold"),
        ("Hello", None, None, "Hello"),
        ("see the docs: https://example.com/x", None, None, "see the docs: https://example.com/x"),
    ],
)
def test_bare_messages(
    text: str, error_class: str | None, qualified: str | None, message: str
) -> None:
    parsed = parse(text)
    assert parsed.kind == "message"
    (error,) = parsed.errors
    assert (error.error_class, error.qualified_class, error.message) == (
        error_class,
        qualified,
        message,
    )


def test_truncated_messages() -> None:
    assert parse("ValueError: the value was …").errors[0].truncated
    assert parse("ValueError: the value was...").errors[0].truncated
    assert not parse("ValueError: the value was bad").errors[0].truncated


def test_level_is_the_class_of_a_log_record() -> None:
    (error,) = parse("ERROR: could not find a version that satisfies foo").errors
    assert (error.error_class, error.qualified_class, error.level) == ("ERROR", None, "ERROR")
    assert error.message == "could not find a version that satisfies foo"
    (error,) = parse("2024-05-01 12:00:00,123 WARN [db] ValueError: bad port").errors
    assert (error.error_class, error.level, error.logger) == ("ValueError", "WARNING", "db")


def test_info_lines_only_count_when_nothing_else_is_found() -> None:
    parsed = parse("2024-05-01 12:00:00,001 INFO app: started\n")
    assert parsed.kind == "log"
    assert [e.error_class for e in parsed.errors] == ["INFO"]
    parsed = parse("2024-05-01 12:00:00,001 INFO app: started\nERROR:root:boom\n")
    assert [e.message for e in parsed.errors] == ["boom"]


def test_logger_first_format_and_a_hint_after_a_blank_line() -> None:
    # ``%(name)s - %(asctime)s - %(levelname)s - %(message)s``; the message goes on past a
    # blank line after "with:", and stops at the next record.
    parsed = parse(
        "fastapi - 2024-02-29 09:48:04,289 - ERROR - Form data requires python-multipart.\n"
        "You can install it with:\n"
        "\n"
        "pip install python-multipart\n"
        "fastapi - 2024-02-29 09:48:05,000 - WARNING - next record\n"
        "\n"
        "not part of it\n"
    )
    first, second = parsed.errors
    assert (first.level, first.logger) == ("ERROR", "fastapi")
    assert first.message == (
        "Form data requires python-multipart.\nYou can install it with:\n\n"
        "pip install python-multipart"
    )
    assert (second.level, second.message) == ("WARNING", "next record")


def test_syslog_line() -> None:
    (error,) = parse("May  1 12:00:00 web01 myapp[4242]: ERROR disk /var is 99% full").errors
    assert (error.level, error.message) == ("ERROR", "disk /var is 99% full")


def test_markers_are_not_source() -> None:
    parsed = parse((CORPUS / "tb_simple_311.txt").read_text())
    for frame in parsed.errors[0].frames:
        assert frame.source is not None and "^" not in frame.source and "~" not in frame.source


def test_carriage_returns_and_ansi_codes() -> None:
    text = (CORPUS / "tb_chain_cause.txt").read_text()
    assert summarise(parse(text.replace("\n", "\r\n"))) == summarise(parse(text))
    coloured = (
        "\x1b[31mValueError\x1b[0m: \x1b[1mbad\x1b[0m \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
    )
    (error,) = parse(coloured).errors
    assert (error.error_class, error.message) == ("ValueError", "bad link")
    assert strip_ansi("[0;31mKeyError[0m: [1m'x'[0m") == "KeyError: 'x'"
    assert strip_ansi("items[0m] is one bracket") == "items[0m] is one bracket"


def test_markdown_code_spans_around_traceback_lines_are_taken_off() -> None:
    # Copied from an issue's comment, where the lines were wrapped in `…`: a span on each
    # line, or one opening on a (cut) frame line and closing on its code line.
    wrapped = (
        "Traceback (most recent call last):\n"
        '`  File "/app/x.py", line 3, in main`\n'
        "    `run()`\n"
        "`requests.exceptions.ConnectionError: boom`"
    )
    parsed = parse(wrapped)
    (error,) = parsed.errors
    assert (error.qualified_class, error.message) == ("requests.exceptions.ConnectionError", "boom")
    assert [(f.path, f.line, f.source) for f in error.frames] == [("/app/x.py", 3, "run()")]
    cut = (
        '`\\aiohttp\\streams.py", line 640, in read\n'
        "    await self._waiter`\n"
        "`aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected`"
    )
    assert parse(cut).primary.error_class == "ServerDisconnectedError"
    assert parse(cut).primary.message == "Server disconnected"
    (one,) = parse("`ValueError: bad thing`\n").errors
    assert (one.error_class, one.message) == ("ValueError", "bad thing")
    # A message's own spans stay, also at the ends of its lines.
    for message in (
        "A non-annotated attribute was detected: `x = 1`.",
        "`x` must be positive",
        "set it with `model_config`",
        "run:\n`pip install accelerate`",
    ):
        assert parse(message).primary.message == message


def test_notes_are_kept_apart_from_the_message() -> None:
    (error,) = parse((CORPUS / "tb_notes.txt").read_text()).errors
    assert error.message == "expected a CUDA device, found cpu"
    assert error.notes == (
        "Note: set TRAINLIB_DEVICE=cpu to train on the CPU",
        "Hint: run `nvidia-smi` to check that the driver sees the GPU",
    )


def test_exception_group_elided_members_are_counted() -> None:
    parsed = parse((CORPUS / "tb_exception_group_nested.txt").read_text())
    assert parsed.omitted_errors == 4
    assert [e.depth for e in parsed.errors] == [0, 1, 1, 2, 2]


def test_parse_imports_only_the_standard_library() -> None:
    # The parser and its recognisers of other languages' traces need nothing outside the
    # standard library (explain works wherever errdex is installed, without extras).
    folder = Path(parse_module.__file__).parent  # the module may be compiled (errdex/_native.py)
    paths = [folder / "parse.py", *sorted(folder.glob("traces_*.py")), folder.parent / "values.py"]
    modules = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules.add(node.module)
    third_party = {
        name
        for name in modules
        if name.split(".")[0] not in sys.stdlib_module_names | {"__future__"}
        and name not in ("errdex.match", "errdex.match.parse", "errdex.values")
    }
    assert third_party == set()
    assert len(paths) >= 6  # the Node, Go, Rust and Java readers are checked too, and values


def test_a_recogniser_can_be_registered() -> None:
    def read_toy(scan: Scan, start: int, floor: int) -> Block | None:
        line = scan.lines[start]
        if not line.startswith("TOYERR! "):
            return None
        error = ParsedError("ToyError", "ToyError", line[8:], language="toy")
        return Block(start, start + 1, "traceback", [error])

    saved = list(RECOGNISERS)
    try:
        register_recogniser(Recogniser("toy", r"TOYERR! ", read_toy), before="log")
        names = [r.name for r in RECOGNISERS]
        assert names.index("toy") == names.index("log") - 1
        (error,) = parse("TOYERR! runtime error: index out of range [3] with length 3").errors
        assert (error.error_class, error.language) == ("ToyError", "toy")
        assert error.message == "runtime error: index out of range [3] with length 3"
    finally:
        RECOGNISERS[:] = saved
        parse_module._trigger_cache.clear()
    assert parse("TOYERR! x").errors[0].language == "python"


def test_when_the_first_recogniser_a_line_triggers_declines_the_next_one_reads() -> None:
    # The trigger union tells the first recogniser whose trigger matches; when its reader
    # declines, the ones after it are tried in order, those whose trigger matches only.
    calls: list[str] = []

    def declining(scan: Scan, start: int, floor: int) -> Block | None:
        calls.append("declining")
        return None

    def reading(scan: Scan, start: int, floor: int) -> Block | None:
        calls.append("reading")
        error = ParsedError("ToyError", "ToyError", scan.lines[start][4:], language="toy")
        return Block(start, start + 1, "traceback", [error])

    saved = list(RECOGNISERS)
    try:
        register_recogniser(Recogniser("toy-first", r"TOY ", declining), before=saved[0].name)
        register_recogniser(Recogniser("toy-never", r"NEVER", reading), before="toy-first")
        register_recogniser(Recogniser("toy-other", r"OTHER", reading))
        register_recogniser(Recogniser("toy-second", r"TOY", reading))
        (block,) = parse_module._scan(Scan(["TOY broke down"]))
        assert calls == ["declining", "reading"]
        (error,) = parse("TOY broke down").errors
        assert (error.language, error.message) == ("toy", "broke down")
    finally:
        RECOGNISERS[:] = saved
        parse_module._trigger_cache.clear()


@pytest.mark.parametrize("first", [True, False])
def test_a_trigger_with_groups_and_back_references_of_its_own_still_works(first: bool) -> None:
    # The union names each trigger by a group of its own only when no trigger has groups:
    # a group around one would renumber its groups, and ``\1`` would point elsewhere.
    def read(scan: Scan, start: int, floor: int) -> Block | None:
        error = ParsedError("Dup", "Dup", scan.lines[start], language="toy")
        return Block(start, start + 1, "traceback", [error])

    saved = list(RECOGNISERS)
    try:
        before = saved[0].name if first else None
        register_recogniser(Recogniser("toy-dup", r"(\w)\1!", read), before=before)
        register_recogniser(Recogniser("toy-tag", r"(<)?TAG(?(1)>)", read), before=before)
        assert [(e.language, e.message) for e in parse("zz! boom\nnext").errors] == [
            ("toy", "zz! boom")
        ]
        assert parse("<TAG x\nmore").errors[0].language == "python"  # its trigger rejects it
        assert parse("<TAG> x\nmore").errors[0].language == "toy"
    finally:
        RECOGNISERS[:] = saved
        parse_module._trigger_cache.clear()


# -- bounds ----------------------------------------------------------------------------------


def chain(depth: int) -> str:
    parts = []
    for number in range(depth):
        if number:
            parts.append("\nThe above exception was the direct cause of the following exception:\n")
        parts.append(
            "Traceback (most recent call last):\n"
            f'  File "/app/layer{number}.py", line {number + 1}, in call{number}\n'
            f"    raise LayerError{number}(f'layer {{n}} failed')\n"
            f"LayerError{number}: layer {number} failed\n"
        )
    return "".join(parts)


def test_a_deep_chain_is_capped_keeping_both_ends() -> None:
    parsed, seconds = timed(chain(1000))
    assert seconds < BOUND
    assert len(parsed.errors) == MAX_ERRORS
    assert parsed.omitted_errors == 1000 - MAX_ERRORS
    assert parsed.errors[0].error_class == "LayerError0"
    assert parsed.errors[0].relation is None
    assert parsed.errors[-1].error_class == "LayerError999"
    assert parsed.errors[-1].relation == "cause"
    assert parsed.primary is parsed.errors[-1]


def test_a_deep_stack_is_capped_keeping_both_ends() -> None:
    frames = "".join(
        f'  File "/app/m{n}.py", line {n + 1}, in f{n}\n    f{n + 1}()\n' for n in range(4000)
    )
    text = f"Traceback (most recent call last):\n{frames}RecursionError: too deep\n"
    parsed, seconds = timed(text)
    assert seconds < BOUND
    (error,) = parsed.errors
    assert len(error.frames) == MAX_FRAMES
    assert error.omitted_frames == 4000 - MAX_FRAMES
    assert error.frames[0].path == "/app/m0.py"
    assert error.frames[-1].path == "/app/m3999.py"


def test_deeply_nested_exception_groups() -> None:
    depth = 200
    lines = ["  + Exception Group Traceback (most recent call last):"]
    lines.append('  |   File "<stdin>", line 1, in <module>')
    lines.append("  | ExceptionGroup: level 0 (1 sub-exception)")
    for level in range(1, depth):
        pad = "  " * level
        lines.append(f"{pad}+-+---------------- 1 ----------------")
        lines.append(f"{pad}  | ExceptionGroup: level {level} (1 sub-exception)")
    for level in range(depth - 1, 0, -1):
        lines.append("  " * (level + 1) + "+------------------------------------")
    parsed, seconds = timed("\n".join(lines) + "\n")
    assert seconds < BOUND
    assert parsed.errors[0].message == "level 0 (1 sub-exception)"
    assert parsed.primary is parsed.errors[0]
    assert max(e.depth for e in parsed.errors) <= parse_module.MAX_GROUP_DEPTH


def test_ten_megabytes() -> None:
    record = (
        "2024-05-01 12:00:00,123 - app.jobs - INFO - job 7 picked up by worker 3\n"
        "2024-05-01 12:00:00,456 - app.jobs - ERROR - job 7 failed\n"
        "Traceback (most recent call last):\n"
        '  File "/app/jobs.py", line 40, in run\n'
        "    handler(payload)\n"
        "ValueError: bad payload\n"
    )
    text = record * (10_000_000 // len(record)) + "KeyError: 'last one'\n"
    assert len(text) >= 9_900_000
    parsed, seconds = timed(text)
    assert seconds < BOUND
    assert parsed.original is text
    assert parsed.kind == "log"
    assert parsed.skipped_lines > 0
    assert len(parsed.errors) == MAX_ERRORS
    assert parsed.errors[-1].error_class == "ValueError"


TEN_MEGABYTE_LINES = {
    "frames": '  File "/app/x.py", line 1, in f\n',
    "syslog": "May  1 12:00:00 web01 app[1]: ERROR something failed here\n",
    "json": json.dumps(
        {
            "level": "error",
            "message": "boom",
            "exc_info": 'Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
            "ValueError: x",
        }
    )
    + "\n",
    "pytest": "E       assert 1 == 2\ntests/test_x.py:12: AssertionError\n",
    "ipython": "-"
    * 75
    + "\nValueError      Traceback (most recent call last)\nCell In[3], line 5\n"
    "----> 5 f()\n\nValueError: x\n",
    "group": "  | ValueError: x\n  +---------------- 2 ----------------\n",
}


@pytest.mark.parametrize("kind", sorted(TEN_MEGABYTE_LINES))
def test_ten_megabytes_of_one_format(kind: str) -> None:
    unit = TEN_MEGABYTE_LINES[kind]
    text = unit * (10_000_000 // len(unit))
    parsed, seconds = timed(text)
    assert seconds < BOUND
    assert parsed.original is text
    assert len(parsed.errors) <= MAX_ERRORS


def test_binary_garbage() -> None:
    rng = random.Random(4)
    text = rng.randbytes(3_000_000).decode("utf-8", errors="replace")
    parsed, seconds = timed(text)
    assert seconds < BOUND
    assert parsed.original is text
    for error in parsed.errors:
        assert len(error.message) <= parse_module.MAX_MESSAGE_CHARS + 1


def test_a_line_of_a_million_characters() -> None:
    text = "ValueError: " + "x" * 1_000_000
    parsed, seconds = timed(text)
    assert seconds < BOUND
    (error,) = parsed.errors
    assert error.error_class == "ValueError"
    assert error.truncated
    assert len(error.message) <= MAX_LINE_CHARS + 1


@pytest.mark.parametrize(
    "text",
    [
        "a" * 100_000 + "!",
        "a." * 50_000 + "!",
        "Traceback (most recent call last):\n" + '  File "' + "a" * 100_000,
        "Traceback (most recent call last):\n" + "  " * 50_000 + "x",
        "[" * 100_000,
        "{" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "1:" * 100_000,
        "2024-05-01 12:00:00 " + "- " * 50_000 + "ERROR x",
        "[2024-05-01T12:00:00Z " + "ERROR " * 20_000 + "] x",
        "E" + " " * 100_000 + "x",
        "tests/" + "a" * 100_000 + ".py:12: in f",
        "File " + "a:1, in " * 20_000,
        "x" * 100_000 + " in <module>",
        ("  | " * 25_000) + "ValueError: x",
        ("  | " * 3_000) + "ExceptionGroup: x (1 sub-exception)",
        "".join("  " * n + "| ExceptionGroup: g (1 sub-exception)\n" for n in range(1, 3000)),
        "level=error " + 'msg="' + "\\" * 100_000,
        "\x1b[" + "1;" * 100_000,
        "-" * 100_000 + "\nValueError" + " " * 100_000 + "Traceback (most recent call last)",
        "ValueError: x\n" + "\n" * 100_000,
        "\n".join(["ValueError: " + "y" * 100] * 100_000),
    ],
    ids=lambda text: repr(text[:24]),
)
def test_hostile_input_is_bounded(text: str) -> None:
    parsed, seconds = timed(text)
    assert seconds < BOUND
    assert parsed.original is text


_LINE_PIECES = [
    "ValueError: ",
    "requests.exceptions.HTTPError: ",
    "KeyError: 'phase'",
    "Invalid value ",
    "for `x`",
    "[0m",
    "[1;31m",
    "ERROR ",
    "2026-12-02 10:00:00 ",
    "> ",
    "  ",
    "\t",
    'File "a.py", line 3',
    "Traceback (most recent call last):",
    "key=value ",
    "{",
    "(1, 2)",
    "...",
    "panic: ",
    "at Object.<anonymous> (/a.js:1:2)",
    "E   AssertionError",
    "thread 'main' panicked at ",
    "```",
    "a.py:3: UserWarning: x",
    "—",
    "é",
    " ",
    ":",
    "\x1f",
]


@given(
    st.lists(st.sampled_from(_LINE_PIECES) | st.text(max_size=12), max_size=8),
    st.sampled_from(["", "\n", "\r\n", "\n\n", " \n\t\n", "\x0b"]),
)
def test_one_line_pastes_parse_the_same_the_short_way(pieces, end):
    text = "".join(pieces) + end
    assert parse(text) == parse_module._parse_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "KeyError: 'phase'",
        "  requests.exceptions.HTTPError: 404 Client Error for url: https://x/[id]  ",
        "Invalid value for `x`: must be one of [a, b]",
        "something went wrong...",
        "ValueError: Unknown speculative phase: draft\n",  # as a shell or a file gives it
        "TypeError: x\r\n\n  \n",
    ],
)
def test_usual_one_line_pastes_take_the_short_way(text):
    quick = parse_module._parse_one_line(text)
    assert quick is not None and quick == parse_module._parse_lines(text)


_ASCII_LINE = st.characters(min_codepoint=32, max_codepoint=126) | st.just("\t")
"""Characters of a plain line: with them, most lines hypothesis makes from a trigger start
with a lowercase letter now and then, the lines :func:`_may_trigger` decides on."""


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_every_line_a_built_in_trigger_matches_passes_the_one_line_gate(data):
    # The short way tries the triggers only on the lines ``_may_trigger`` lets through; it
    # must let through every line that a built-in trigger matches. The lines are made from
    # the triggers themselves, as the short way sees them (blanks stripped at the start),
    # and words after them make lines of several words that do not end with a digit.
    name, trigger = data.draw(st.sampled_from(parse_module._BUILT_IN_TRIGGERS))
    alphabet = data.draw(st.sampled_from([None, _ASCII_LINE]))
    made = data.draw(st.from_regex(re.compile(rf"\A(?:{trigger})"), alphabet=alphabet))
    made += data.draw(st.sampled_from(["", " x", " was not found", "\tend"]))
    head = made.lstrip(" \t")[: parse_module._HEAD_CHARS]
    if re.compile(trigger).match(head) is not None:
        assert parse_module._may_trigger(head), (name, head)


@pytest.mark.parametrize(
    "line",
    [
        "thread 'main' panicked at src/main.rs:2:5:",
        "panic: runtime error: index out of range [3] with length 3",
        "fatal error: all goroutines are asleep - deadlock!",
        "goroutine 1 [running]:",
        "runtime stack:",
        "web-1  | ERROR something broke",
        "app.py:3: UserWarning: deprecated",
        "my app.pyi:3: UserWarning: deprecated",
        "myapp: (models.E001) Field names must not end with an underscore.",
        "cell Traceback (most recent call last)",
        "level=error msg=boom",
        "app - 2024-01-02 12:00:00 started",
        "src/pkg/file.go",
        "at f (/app/index.js:10",
        "pkg.errors.Failure: boom",
        'Exception in thread "main" java.lang.IllegalStateException',
        "Uncaught TypeError boom",
        "FAILED test_x",
        "E       assert 1 == 2",
        "E\t\tassert x",
        "Cell In[3], line 1",
        "Input In [3], in <cell line: 1>",
        "Stacktrace (most recent call last):",
        'File "app.py", line 3, in f',
        'Module "app", line 3',
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
        *(f"{level} boom" for level in ("CRITICAL", "FATAL", "ERROR", "WARNING", "WARN")),
        *(f"{level} boom" for level in ("INFO", "DEBUG", "EXCEPTION", "NOTICE", "TRACE")),
        "SEVERE boom",
        "Error: boom",
        "Disconnected",
        "Error [ERR_X]: boom",
        "E0102 12:00:00.000 boom",
        "Jan  2 12:00:00 host app: boom",
        "Jan 12 12:00:00 host app: boom",
        "Web-1  | boom",
        "Models: (models.E001) boom",
        "Cell Traceback (most recent call last)",
        "App - 2024-01-02 12:00:00 started",
        "Level=error msg=boom",
        "My app.py:3: UserWarning: deprecated",
        "At f (/app/index.js:10",
    ],
)
def test_the_one_line_gate_lets_through_each_kind_of_format_line(line):
    # One line per text, start or shape ``_may_trigger`` looks for; a built-in trigger
    # matches each, so none may be turned away.
    assert parse_module._trigger().union.match(line) is not None
    assert parse_module._may_trigger(line)


@pytest.mark.parametrize(
    "line",
    [
        "invalid value for x: 42 is not allowed",
        "cannot import name 'x' from 'y'",
        "expected str, got int instead",
        "no such file: a/b.py",
        "expected 3 items, got 42",
        "disconnected",
        "invalid literal for int() with base 10: 'x=1'",
        "Cannot implement 3.5 in a/b.py",
        "No module named 'x'",
        "Bad value: 42",
        "Requested 3 items, got 42",
        "Invalid value [x] given",
    ],
)
def test_the_one_line_gate_turns_away_plain_messages(line):
    assert parse_module._trigger().union.match(line) is None
    assert not parse_module._may_trigger(line)


def test_a_registered_recogniser_sees_lines_the_built_in_gate_turns_away() -> None:
    # The gate knows the built-in triggers only: once another is registered, every line is
    # tried against the triggers again.
    def read_toy(scan: Scan, start: int, floor: int) -> Block | None:
        line = scan.lines[start]
        error = ParsedError("ToyError", "ToyError", line[7:], language="toy")
        return Block(start, start + 1, "traceback", [error])

    line = "toyerr something broke"
    assert not parse_module._may_trigger(line)
    saved = list(RECOGNISERS)
    try:
        register_recogniser(Recogniser("toy-lower", r"toyerr ", read_toy))
        (error,) = parse(line).errors
        assert (error.error_class, error.language) == ("ToyError", "toy")
    finally:
        RECOGNISERS[:] = saved
        parse_module._trigger_cache.clear()
    assert parse(line).errors[0].language == "python"


@pytest.mark.parametrize("grouped", ["", "(toy) ", "(?P<toy>toy) "])
def test_after_a_recogniser_reads_nothing_the_next_whose_trigger_matches_reads(grouped):
    # The union of the triggers names the first recogniser whose trigger matches a line; when
    # it reads nothing, the next whose trigger matches reads (a union of the triggers after it
    # names it), and one whose trigger does not match is never asked. A trigger with groups
    # of its own, named or not, turns the named unions off: each trigger is then tried in
    # turn.
    asked: list[str] = []

    def reader(name: str, reads: bool) -> Any:
        def read(scan: Scan, start: int, floor: int) -> Block | None:
            asked.append(name)
            if not reads:
                return None
            error = ParsedError("ToyError", "ToyError", name, language=name)
            return Block(start, start + 1, "traceback", [error])

        return read

    saved = list(RECOGNISERS)
    try:
        for name, trigger, reads in (
            ("toy-first", grouped or r"toy ", False),
            ("toy-never", r"toy never", True),
            ("toy-second", r"toy b", False),
            ("toy-third", r"toy", True),
        ):
            recogniser = Recogniser(name, trigger, reader(name, reads))
            register_recogniser(recogniser, before="rust-panic")
        for text in ("toy b broke", "toy b broke\nnext line"):
            assert [e.language for e in parse(text).errors] == ["toy-third"]
        asked.clear()
        parse_module._scan(Scan(["toy b broke", "next line"]))
        assert asked == ["toy-first", "toy-second", "toy-third"]
    finally:
        RECOGNISERS[:] = saved
        parse_module._trigger_cache.clear()
    assert parse("toy b broke").errors[0].language == "python"


_PLAIN_TRIGGERS = """
import importlib, json, sys
import errdex.match.parse as parse
real = sys.version_info
sys.version_info = (3, 10, 0, "final", 0)  # no possessive runs before Python 3.11
try:
    parse = importlib.reload(parse)
    for name in ("traces_go", "traces_java", "traces_javascript", "traces_rust"):
        importlib.reload(importlib.import_module("errdex.match." + name))
finally:
    sys.version_info = real
assert parse.POSSESSIVE == ""
print(json.dumps({r.name: r.trigger for r in parse.RECOGNISERS}))
"""


def test_triggers_compile_and_match_the_same_lines_without_possessive_runs():
    # Python 3.10 has no possessive quantifiers (``*+``): there the triggers keep plain greedy
    # runs, which must compile and start the same formats at the same lines.
    # The module's source, not its compiled form: mypyc settles version checks at build time.
    output = subprocess.run(
        [sys.executable, "-c", _PLAIN_TRIGGERS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ERRDEX_PURE": "1"},
    ).stdout
    plain = json.loads(output)
    own = {r.name: r.trigger for r in parse_module.RECOGNISERS}
    assert list(plain) == list(own)
    assert any(plain[name] != own[name] for name in own) == bool(parse_module.POSSESSIVE)
    corpus = Path(__file__).parent / "corpus" / "real"
    lines = {
        line[:256]
        for path in corpus.glob("*.json")
        for line in json.loads(path.read_text())["text"].splitlines()
    }
    rng = random.Random(7)
    pieces = ["a", "Z", "_", "$", ".", ":", "/", "-", "=", "|", " ", "'", "1", "x.y.Z", ".py"]
    pieces += ["Error: ", "INFO ", " - 2026-12-02", "Traceback (most recent", "Uncaught "]
    lines |= {"".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(5000)}
    for name, trigger in own.items():
        mine, theirs = re.compile(trigger), re.compile(plain[name])
        differ = [line for line in lines if bool(mine.match(line)) != bool(theirs.match(line))]
        assert differ == [], (name, differ[:3])


def test_a_pytest_section_of_an_exception_group_is_read() -> None:
    text = (
        "=================================== FAILURES ===================================\n"
        "__________________________________ test_group __________________________________\n"
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/src/tests/test_x.py", line 19, in test_group\n'
        "  |     core.group()\n"
        '  |   File "/src/pkg/core.py", line 46, in group\n'
        '  |     raise ExceptionGroup("worker failures", errors)\n'
        "  | ExceptionGroup: worker failures (2 sub-exceptions)\n"
        "  +-+---------------- 1 ----------------\n"
        "    | ValueError: Shard 0 is corrupt\n"
        "    +---------------- 2 ----------------\n"
        "    | KeyError: 'default'\n"
        "    +------------------------------------\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_x.py::test_group - ExceptionGroup: worker failures (2 sub-exceptions)\n"
    )
    parsed = parse(text)
    assert parsed.kind == "pytest"
    group = next(e for e in parsed.errors if e.error_class == "ExceptionGroup")
    assert [frame.path for frame in group.frames] == ["/src/tests/test_x.py", "/src/pkg/core.py"]
    members = [(e.error_class, e.relation) for e in parsed.errors if e.relation == "group"]
    assert members == [("ValueError", "group"), ("KeyError", "group")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("task failed: ValueError('bad phase: draft')", "bad phase: draft"),
        ('raised unexpected: KeyError("it\'s gone")', "it's gone"),
        ("requests.exceptions.ConnectionError('refused')", "refused"),
        ("x = E('a') and F('b')", "b"),
        ("E('a', 2)", None),  # more than one argument: not the message alone
        ("print('a')", None),  # a call, not a class
        ("E('')", None),
        ("E(')", None),
        ("no repr here", None),
    ],
)
def test_repr_message_reads_the_repr_that_ends_a_text(text, message):
    assert repr_message(text) == message


def test_a_message_over_text_a_format_reads_without_an_error_is_still_read():
    # jsonschema prints the schema and the instance (Python dicts, which the JSON log reader
    # takes as JSON lines) under its message: the paste held no error at all.
    text = (
        "jsonschema.exceptions.ValidationError: 'name' is a required property\n"
        "\n"
        "Failed validating 'required' in schema:\n"
        "    {'type': 'object', 'required': ['name']}\n"
        "\n"
        "On instance:\n"
        "    {}\n"
    )
    parsed = parse(text)
    assert parsed.primary is not None
    assert parsed.primary.qualified_class == "jsonschema.exceptions.ValidationError"
    assert parsed.primary.message.startswith("'name' is a required property\n\nFailed validating")
    assert parsed.primary.message.endswith("On instance:\n    {}")


def test_a_traceback_quoted_in_a_remote_traceback_ends_at_its_closing_quotes():
    # multiprocessing re-raises a worker's error with the worker's traceback quoted in a
    # ``RemoteTraceback`` as its cause.
    quotes = '"' * 3
    text = (
        "multiprocessing.pool.RemoteTraceback: \n"
        f"{quotes}\n"
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 125, in worker\n'
        "    result = (True, func(*args, **kwds))\n"
        '  File "/venv/site-packages/pandas/core/indexes/base.py", line 3812, in get_loc\n'
        "    raise KeyError(key) from err\n"
        "KeyError: 'price'\n"
        f"{quotes}\n"
        "\n"
        "The above exception was the direct cause of the following exception:\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/app/main.py", line 10, in <module>\n'
        "    pool.map(f, range(3))\n"
        "KeyError: 'price'\n"
    )
    worker, parent = parse(text).errors[-2:]
    assert (worker.error_class, worker.message) == ("KeyError", "'price'")
    assert worker.frames[-1].line == 3812
    assert (parent.relation, parent.message) == ("cause", "'price'")


def test_a_warning_whose_message_starts_on_the_next_line_is_read_without_its_source_line():
    # pandas' ``SettingWithCopyWarning`` as users paste it: the source line Python prints
    # under the message is often left out.
    text = (
        "/app/x.py:10: SettingWithCopyWarning: \n"
        "A value is trying to be set on a copy of a slice from a DataFrame.\n"
        "Try using .loc[row_indexer,col_indexer] = value instead\n"
    )
    error = parse(text).primary
    assert error is not None
    assert (error.error_class, error.level) == ("SettingWithCopyWarning", "WARNING")
    assert error.message == (
        "A value is trying to be set on a copy of a slice from a DataFrame.\n"
        "Try using .loc[row_indexer,col_indexer] = value instead"
    )
    assert (error.frames[0].path, error.frames[0].line) == ("/app/x.py", 10)
    # Another warning ends it.
    both = parse(text + "/app/y.py:3: FutureWarning: soon\n  f()\n")
    assert [e.error_class for e in both.errors] == ["SettingWithCopyWarning", "FutureWarning"]
    assert both.errors[0].message.endswith("= value instead")


def test_djangos_system_check_messages_are_read_by_their_level_without_the_object():
    text = (
        "SystemCheckError: System check identified some issues:\n"
        "\n"
        "ERRORS:\n"
        "app.Profile.user: (fields.E304) Reverse accessor 'User.profile' for"
        " 'app.Profile.user' clashes with reverse accessor for 'app.Account.user'.\n"
        "\tHINT: Add or change a related_name argument to the definition for"
        " 'app.Profile.user' or 'app.Account.user'.\n"
        "\n"
        "WARNINGS:\n"
        "?: (urls.W002) Your URL pattern '/api/' has a route beginning with a '/'.\n"
        "\n"
        "System check identified 2 issues (0 silenced).\n"
    )
    clash, route = parse(text).errors
    assert (clash.error_class, clash.level) == ("Error", None)
    assert clash.message == (
        "Reverse accessor 'User.profile' for 'app.Profile.user' clashes with reverse accessor"
        " for 'app.Account.user'."
    )
    assert clash.notes == (
        "HINT: Add or change a related_name argument to the definition for 'app.Profile.user'"
        " or 'app.Account.user'.",
    )
    assert (route.error_class, route.message) == (
        "Warning",
        "Your URL pattern '/api/' has a route beginning with a '/'.",
    )
    one = parse("blog.Post: (models.W042) Auto-created primary key used when not defining one.")
    assert (one.primary.error_class, one.primary.qualified_class) == ("Warning", "Warning")


def test_the_frames_colab_folds_are_counted_and_reading_goes_on():
    # Colab folds a traceback's middle frames into a line of its own, ``5 frames``.
    text = (
        "KeyError                                  Traceback (most recent call last)\n"
        "<ipython-input-40-6acb74aaf00d> in <module>()\n"
        "----> 8 sp500 = data[0].loc[1:,[0,1,6,7]]\n"
        "\n"
        "5 frames\n"
        "/usr/local/lib/python3.6/dist-packages/pandas/core/indexing.py in"
        " _validate_read_indexer(self, key, indexer, axis, raise_missing)\n"
        '-> 1640                 raise KeyError(f"None of [{key}] are in the [{axis_name}]")\n'
        "\n"
        "KeyError: \"None of [Int64Index([0, 1], dtype='int64')] are in the [columns]\"\n"
    )
    error = parse(text).primary
    assert error is not None and error.omitted_frames == 5
    assert error.message == "\"None of [Int64Index([0, 1], dtype='int64')] are in the [columns]\""
    assert [(frame.path.rsplit("/", 1)[-1], frame.line) for frame in error.frames] == [
        ("<ipython-input-40-6acb74aaf00d>", 8),
        ("indexing.py", 1640),
    ]


def test_a_rich_traceback_panel_reads_as_python_prints_its_frames():
    # ``rich.traceback`` (typer, many CLIs): ``path:line in function`` (the function on the
    # next line when the path is long), code lines with the frame's marked ``❱``.
    edge = "─" * 20
    body = [
        "/app/main.py:10 in <module>",
        "",
        "    8 │ import requests",
        "❱ 10 │ requests.get('example.com/api')",
        "",
        "/venv/lib/python3.11/site-packages/requests/models.py:438",
        "in prepare_url",
        "",
        "  436 │   │   │   raise MissingSchema(",
        "❱ 438 │   │   │   │   f'Perhaps you meant https://{url}?'",
        "  439 │   │   │   )",
    ]
    text = "\n".join(
        [f"╭{edge} Traceback (most recent call last) {edge}╮"]
        + [f"│ {line:<60} │" for line in body]
        + [f"╰{'─' * 62}╯", "MissingSchema: Invalid URL 'example.com/api': No scheme supplied."]
    )
    (error,) = parse(text).errors
    assert (error.error_class, error.message) == (
        "MissingSchema",
        "Invalid URL 'example.com/api': No scheme supplied.",
    )
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function, f.source) for f in error.frames] == [
        ("main.py", 10, "<module>", "requests.get('example.com/api')"),
        ("models.py", 438, "prepare_url", "f'Perhaps you meant https://{url}?'"),
    ]


def test_a_prefix_every_line_shares_is_stripped_unless_the_transport_reader_strips_it():
    # A relay's tag hides a traceback: the lines are parsed again without it.
    relayed = [
        "[rank0]: Traceback (most recent call last):",
        '[rank0]:   File "x.py", line 1, in f',
        "[rank0]: ValueError: x",
    ]
    assert parse_module._without_common_prefix(relayed) == [
        "Traceback (most recent call last):",
        '  File "x.py", line 1, in f',
        "ValueError: x",
    ]
    parsed = parse("\n".join(relayed))
    assert [(e.error_class, e.message, len(e.frames)) for e in parsed.errors] == [
        ("ValueError", "x", 1)
    ]
    # syslog's prefix is the transport reader's, which reads what is behind it: a second
    # parse without it would only repeat that work (twice the time of a 10 MB paste).
    syslog = ["May  1 12:00:00 web01 app[1]: ERROR something failed here"] * 5
    assert parse_module._without_common_prefix(syslog) is None
    parsed = parse("\n".join(syslog))
    assert [(e.level, e.message) for e in parsed.errors] == [("ERROR", "something failed here")] * 5
