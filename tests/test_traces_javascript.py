"""Node.js/V8 stack traces: parsing every format, and explaining real traces of real packages.

The traces marked "real" were printed by node 20.20.2 running the pinned npm packages (their
``/tmp/app`` prefix replaced by ``/app``); the others follow V8's format.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from corpus import npm_package

from errdex.match.explain import Explainer
from errdex.match.parse import Frame, parse
from errdex.match.traces_javascript import frame_location
from errdex.models import MatchKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore


def trace(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# Real: commander's unknown option with exitOverride() (commander 12.1.0, node 20.20.2).
COMMANDER_UNKNOWN_OPTION = trace(
    """
    error: unknown option '--x'
    /app/node_modules/commander/lib/command.js:488
              throw err;
              ^

    CommanderError: error: unknown option '--x'
        at Command._exit (/app/node_modules/commander/lib/command.js:509:26)
        at Command.error (/app/node_modules/commander/lib/command.js:1831:10)
        at Command.unknownOption (/app/node_modules/commander/lib/command.js:2010:10)
        at checkForUnknownOptions (/app/node_modules/commander/lib/command.js:1490:14)
        at Command._parseCommand (/app/node_modules/commander/lib/command.js:1535:7)
        at Command.parse (/app/node_modules/commander/lib/command.js:1064:10)
        at Object.<anonymous> (/app/index.js:4:9)
        at Module._compile (node:internal/modules/cjs/loader:1521:14)
        at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
        at Module.load (node:internal/modules/cjs/loader:1266:32) {
      code: 'commander.unknownOption',
      exitCode: 1,
      nestedError: undefined
    }

    Node.js v20.20.2
    """
)

# Real: program.parse('notarray') (commander 12.1.0, node 20.20.2).
COMMANDER_PARSE = trace(
    """
    /app/node_modules/commander/lib/command.js:975
          throw new Error('first parameter to parse must be array or undefined');
          ^

    Error: first parameter to parse must be array or undefined
        at Command._prepareUserArgs (/app/node_modules/commander/lib/command.js:975:13)
        at Command.parse (/app/node_modules/commander/lib/command.js:1063:27)
        at Object.<anonymous> (/app/parse.js:2:9)
        at Module._compile (node:internal/modules/cjs/loader:1521:14)
        at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
        at Module.load (node:internal/modules/cjs/loader:1266:32)
        at Module._load (node:internal/modules/cjs/loader:1091:12)
        at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
        at node:internal/main/run_main_module:28:49

    Node.js v20.20.2
    """
)

# express 4.21.2: app.use() without a function (lib/application.js:217), as node prints it.
EXPRESS_USE = trace(
    """
    /app/node_modules/express/lib/application.js:217
        throw new TypeError('app.use() requires a middleware function')
        ^

    TypeError: app.use() requires a middleware function
        at Function.use (/app/node_modules/express/lib/application.js:217:11)
        at Object.<anonymous> (/app/server.js:4:5)
        at Module._compile (node:internal/modules/cjs/loader:1521:14)
        at Module.load (node:internal/modules/cjs/loader:1266:32)
        at node:internal/main/run_main_module:28:49

    Node.js v20.20.2
    """
)

# @trpc/server 10.45.2 under --enable-source-maps: frames in the TypeScript sources.
TRPC_NOT_FOUND = trace(
    """
    TRPCError: No "query"-procedure on path "user.byId"
        at callProcedure (/app/node_modules/@trpc/server/src/core/router.ts:288:11)
        at async /app/node_modules/@trpc/server/src/http/resolveHTTPResponse.ts:356:24
        at async Promise.all (index 0) {
      code: 'NOT_FOUND',
      [cause]: undefined
    }
    """
)


# -- parsing ---------------------------------------------------------------------------------


def test_an_uncaught_error_with_its_header_properties_and_footer():
    parsed = parse(COMMANDER_UNKNOWN_OPTION)
    (error,) = parsed.errors
    assert parsed.kind == "traceback"
    assert (error.error_class, error.message, error.language) == (
        "CommanderError",
        "error: unknown option '--x'",
        "javascript",
    )
    # Outermost first, as for Python tracebacks.
    assert error.frames[-1] == Frame(
        "/app/node_modules/commander/lib/command.js", 509, "Command._exit"
    )
    assert error.frames[-3].function == "Command.unknownOption"
    assert error.frames[0] == Frame("node:internal/modules/cjs/loader", 1266, "Module.load")
    assert (
        parsed.lines_used
        == len([line for line in COMMANDER_UNKNOWN_OPTION.splitlines() if line.strip()]) - 1
    )


def test_the_code_in_brackets_and_node_internal_frames():
    text = trace(
        """
        node:internal/errors:541
              throw error;
              ^

        TypeError [ERR_INVALID_ARG_TYPE]: The "path" argument must be of type string. Received null
            at Object.openSync (node:fs:571:10)
            at Object.readFileSync (node:fs:452:35)
            at [eval]:1:15
            at node:internal/main/eval_string:51:3 {
          code: 'ERR_INVALID_ARG_TYPE'
        }

        Node.js v20.20.2
        """
    )
    (error,) = parse(text).errors
    assert (error.error_class, error.qualified_class, error.message) == (
        "TypeError",
        "TypeError",
        'The "path" argument must be of type string. Received null',
    )
    assert [f.path for f in error.frames] == [
        "node:internal/main/eval_string",
        "[eval]",
        "node:fs",
        "node:fs",
    ]
    assert error.frames[1] == Frame("[eval]", 1, None)


def test_causes_come_first_each_with_its_frames():
    text = trace(
        """
        /app/a.js:1
        class Foo { constructor(x) { const e = new Error(`bad ${x}`); throw e; } }
                                               ^

        Error: bad 1
            at new Foo (/app/a.js:1:40)
            at run (/app/a.js:2:36) {
          code: 'ERR_X',
          cause: TypeError: inner
              at new Foo (/app/a.js:1:91)
              at run (/app/a.js:2:36) {
            [cause]: RangeError: deep
                at new Foo (/app/a.js:1:123)
                at run (/app/a.js:2:36)
          }
        }

        Node.js v20.20.2
        """
    )
    parsed = parse(text)
    assert [(e.error_class, e.message, e.relation) for e in parsed.errors] == [
        ("RangeError", "deep", None),
        ("TypeError", "inner", "cause"),
        ("Error", "bad 1", "cause"),
    ]
    assert parsed.primary is not None and parsed.primary.message == "bad 1"
    assert parsed.errors[0].frames == (
        Frame("/app/a.js", 2, "run"),
        Frame("/app/a.js", 1, "new Foo"),
    )


def test_frame_forms():
    text = trace(
        """
        Error: in forEach
            at file:///app/b.mjs:1:27
            at Array.forEach (<anonymous>)
            at async Promise.all (index 0)
            at new Widget (C:\\Users\\me\\app\\widget.js:10:5)
            at Object.method [as alias] (/app/m.js:3:1)
            at eval (eval at compile (/app/c.js:9:3), <anonymous>:1:1)
            at async run (file:///C:/app/x.mjs:3:9)
            at https://example.com/static/js/main.js?v=3:12:7
        """
    )
    (error,) = parse(text).errors
    assert list(reversed(error.frames)) == [
        Frame("/app/b.mjs", 1, None),
        Frame("<anonymous>", None, "Array.forEach"),
        Frame("index 0", None, "Promise.all"),
        Frame("C:\\Users\\me\\app\\widget.js", 10, "new Widget"),
        Frame("/app/m.js", 3, "Object.method"),
        Frame("/app/c.js", 9, "eval"),
        Frame("C:/app/x.mjs", 3, "run"),
        Frame("/static/js/main.js", 12, None),
    ]


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("/app/x.js:3:9", ("/app/x.js", 3)),
        ("file:///app/x.mjs:3:9", ("/app/x.mjs", 3)),
        ("node:fs:571:10", ("node:fs", 571)),
        ("<anonymous>", ("<anonymous>", None)),
        ("native", ("native", None)),
        ("webpack:///./src/app.js:4:2", ("/src/app.js", 4)),
        ("http://localhost:8080/app.js:10:5", ("/app.js", 10)),
    ],
)
def test_frame_locations(location, expected):
    assert frame_location(location) == expected


def test_browser_and_repl_errors():
    text = trace(
        """
        Uncaught (in promise) TypeError: Cannot read properties of undefined (reading 'id')
            at loadUser (https://example.com/static/js/main.js:10:5)
            at <anonymous>:1:1
        """
    )
    (error,) = parse(text).errors
    assert (error.error_class, error.message, error.language) == (
        "TypeError",
        "Cannot read properties of undefined (reading 'id')",
        "javascript",
    )
    assert error.frames[-1] == Frame("/static/js/main.js", 10, "loadUser")
    (error,) = parse("Uncaught Error: boom").errors
    assert (error.error_class, error.message, error.language) == ("Error", "boom", "javascript")
    (error,) = parse("Uncaught:\nRangeError: bad\n    at f (/app/f.js:1:1)\n").errors
    assert (error.error_class, error.frames) == ("RangeError", (Frame("/app/f.js", 1, "f"),))


def test_multi_line_messages_keep_their_lines():
    text = trace(
        """
        AssertionError [ERR_ASSERTION]: mismatch 0

        0 !== 1

            at check (/app/check.js:3:10)
            at Object.<anonymous> (/app/check.js:5:1)
        """
    )
    (error,) = parse(text).errors
    assert (error.error_class, error.message) == ("AssertionError", "mismatch 0\n\n0 !== 1")
    text = trace(
        """
        Error: Unexpected value for event passed to hook : 'x'.
        Expecting one of 'preSubcommand', 'preAction', 'postAction'
            at Command.hook (/app/node_modules/commander/lib/command.js:464:13)
        """
    )
    (error,) = parse(text).errors
    assert (
        error.message.splitlines()[1]
        == "Expecting one of 'preSubcommand', 'preAction', 'postAction'"
    )


def test_a_thrown_value_that_is_not_an_error():
    text = trace(
        """
        /app/x.js:3
          throw "boom";
          ^
        boom
        (Use `node --trace-uncaught ...` to show where the exception was thrown)

        Node.js v20.20.2
        """
    )
    (error,) = parse(text).errors
    assert (error.error_class, error.message, error.frames) == (
        None,
        "boom",
        (Frame("/app/x.js", 3, None, 'throw "boom";'),),
    )


def test_process_warnings():
    text = trace(
        """
        (node:23235) [DEP0005] DeprecationWarning: Buffer() is deprecated due to security issues.
        (Use `node --trace-warnings ...` to show where the warning was created)
        (node:23235) Warning: plain
        """
    )
    parsed = parse(text)
    assert [(e.error_class, e.message, e.level, e.language) for e in parsed.errors] == [
        (
            "DeprecationWarning",
            "Buffer() is deprecated due to security issues.",
            "WARNING",
            "javascript",
        ),
        ("Warning", "plain", "WARNING", "javascript"),
    ]


def test_a_stack_in_a_json_log_line():
    record = {
        "level": 50,
        "msg": "request failed",
        "err": {
            "type": "Error",
            "message": "connect ECONNREFUSED",
            "stack": "Error: connect ECONNREFUSED\n    at connect (/app/db.js:12:11)",
        },
    }
    parsed = parse(json.dumps(record))
    node = [e for e in parsed.errors if e.language == "javascript"]
    assert [(e.error_class, e.message, e.frames) for e in node] == [
        ("Error", "connect ECONNREFUSED", (Frame("/app/db.js", 12, "connect"),))
    ]


@pytest.mark.parametrize(
    "text",
    [
        "ValueError: invalid literal for int() with base 10: 'x'",
        'Traceback (most recent call last):\n  File "/app/x.py", line 3, in f\n'
        "    g()\nValueError: bad\n",
        'Exception in thread "main" java.lang.IllegalStateException: x\n'
        "\tat org.foo.Bar.baz(Bar.java:12)\n",
        "error: unknown option '--x'",
        "INFO: started\nDEBUG: at startup (ok)\n",
    ],
    ids=["python-message", "python-traceback", "java", "cli-error", "log"],
)
def test_other_formats_are_not_read_as_javascript(text):
    assert all(e.language != "javascript" for e in parse(text).errors)


def test_hostile_lines_stay_linear():
    import time

    line = "Error: " + " (" * 20_000
    frames = "\n".join("    at f" + " (" * 2_000 + ":1:1)" for _ in range(50))
    started = time.perf_counter()
    parse(line + "\n" + frames + "\n" + "x:1\n" * 5_000)
    assert time.perf_counter() - started < 10


# -- explaining real traces ------------------------------------------------------------------

PACKAGES = {"commander": "12.1.0", "express": "4.21.2", "@trpc/server": "10.45.2"}


@pytest.fixture(scope="session")
def npm_store(tmp_path_factory) -> Path:
    roots = {name: npm_package(name, version) for name, version in PACKAGES.items()}
    db = tmp_path_factory.mktemp("npm") / "store.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        for name, root in roots.items():
            report = pipeline.mine(pipeline.open(str(root), repo=f"npm:{name}"))
            assert report.problems == [], name
    return db


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "path", "line", "error_class", "message"),
    [
        (
            COMMANDER_UNKNOWN_OPTION,
            "lib/command.js",
            2010,
            "CommanderError",
            "error: unknown option '{flag}'{suggestion}",
        ),
        (
            COMMANDER_PARSE,
            "lib/command.js",
            975,
            "Error",
            "first parameter to parse must be array or undefined",
        ),
        (
            EXPRESS_USE,
            "lib/application.js",
            217,
            "TypeError",
            "app.use() requires a middleware function",
        ),
        (
            TRPC_NOT_FOUND,
            "src/core/router.ts",
            288,
            "TRPCError",
            'No "{type}"-procedure on path "{path}"',
        ),
    ],
    ids=["commander-unknown-option", "commander-parse", "express-use", "trpc-not-found"],
)
def test_real_traces_are_explained_by_their_site(npm_store, text, path, line, error_class, message):
    with SQLiteStore(npm_store) as store:
        answer = Explainer.for_database(store, npm_store).explain(text, top=3)
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert (best.record.file_path, best.record.line_number) == (path, line)
    assert (best.record.error_class, best.record.error_message) == (error_class, message)
    assert any("a frame points at the record's line" in e for e in best.evidence)
    assert not answer.ambiguous


@pytest.mark.network
@pytest.mark.slow
def test_the_message_alone_finds_the_commander_record(npm_store):
    with SQLiteStore(npm_store) as store:
        answer = Explainer.for_database(store, npm_store).explain(
            "error: unknown option '--verbose'", top=3
        )
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT
    assert (best.record.file_path, best.record.line_number, best.record.error_code) == (
        "lib/command.js",
        2010,
        "commander.unknownOption",
    )
