"""Go crashes pasted into ``errdex explain``: panics, fatal errors, goroutine dumps, ``log`` lines.

The traces below are what the Go runtime prints (formats of Go 1.19–1.23: ``created by … in
goroutine N`` is 1.21+, ``[recovered, repanicked]`` 1.23+, tab-indented multi-line panic
messages 1.23+); the end-to-end test mines a small Go module and explains a panic of it.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from errdex.extract.files import open_source
from errdex.match.explain import Explainer
from errdex.match.parse import RECOGNISERS, parse
from errdex.match.traces_go import frame_path
from errdex.models import MatchKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore

COBRA = "/root/go/pkg/mod/github.com/spf13/cobra@v1.6.1"

RUNTIME_ERROR = f"""\
panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.pick(...)
\t/home/u/src/app/main.go:12
main.run({{0xc000012345, 0x3, 0x3}})
\t/home/u/src/app/main.go:20 +0x1d
github.com/spf13/cobra.(*Command).execute(0xc000004300, {{0xc00001e0a0, 0x1, 0x1}})
\t{COBRA}/command.go:916 +0x862
main.main()
\t/home/u/src/app/main.go:31 +0x25
exit status 2
"""


def only(text: str):
    parsed = parse(text)
    assert len(parsed.errors) == 1, parsed.errors
    return parsed, parsed.errors[0]


def test_the_recogniser_is_registered_before_the_generic_log_lines():
    names = [r.name for r in RECOGNISERS]
    assert names.index("go-crash") < names.index("log")


def test_a_runtime_error_with_its_frames_outermost_first():
    parsed, error = only(RUNTIME_ERROR)
    assert parsed.kind == "traceback"
    assert error.language == "go"
    assert (error.error_class, error.qualified_class) == ("runtime.Error", "runtime.Error")
    assert error.message == "runtime error: index out of range [5] with length 3"
    assert [(f.path, f.line, f.function) for f in error.frames] == [
        ("/home/u/src/app/main.go", 31, "main.main"),
        (
            "/root/go/pkg/mod/github.com/spf13/cobra/command.go",
            916,
            "github.com/spf13/cobra.(*Command).execute",
        ),
        ("/home/u/src/app/main.go", 20, "main.run"),
        ("/home/u/src/app/main.go", 12, "main.pick"),
    ]
    assert parsed.lines_used == len(RUNTIME_ERROR.strip().splitlines()) - 1  # no blank line


def test_a_nil_dereference_keeps_its_signal_line_out_of_the_message():
    text = textwrap.dedent(
        """\
        panic: runtime error: invalid memory address or nil pointer dereference
        [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x47e5d6]

        goroutine 1 [running]:
        main.(*Server).Start(0x0)
        \t/app/server.go:44 +0x16
        main.main()
        \t/app/main.go:9 +0x1d
        """
    )
    _, error = only(text)
    assert error.message == "runtime error: invalid memory address or nil pointer dereference"
    assert error.frames[-1] == error.frames[-1].__class__(
        "/app/server.go", 44, "main.(*Server).Start"
    )


def test_a_plain_panic_has_no_class_and_a_multi_line_message():
    text = (
        "panic: config: missing key\nsecond line of the value\n\tthird, tab-indented\n\n"
        "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:7 +0x1d\n"
    )
    _, error = only(text)
    assert error.error_class is None and error.qualified_class is None
    assert error.message == "config: missing key\nsecond line of the value\nthird, tab-indented"
    assert error.frames[0].line == 7


def test_a_recovered_and_repanicked_chain_gives_the_frames_to_the_last_panic():
    text = textwrap.dedent(
        """\
        panic: first failure [recovered]
        \tpanic: second failure

        goroutine 6 [running]:
        testing.tRunner.func1.2({0x5d1e00, 0x6b6c90})
        \t/usr/local/go/src/testing/testing.go:1526 +0x24e
        panic({0x5d1e00?, 0x6b6c90?})
        \t/usr/local/go/src/runtime/panic.go:884 +0x213
        example.com/app.TestX(0x0?)
        \t/src/app/x_test.go:11 +0x39
        """
    )
    parsed = parse(text)
    first, second = parsed.errors
    assert (first.message, first.frames, first.relation) == ("first failure", (), None)
    assert (second.message, second.relation) == ("second failure", "context")
    assert second.frames[-1].function == "testing.tRunner.func1.2"
    assert parsed.primary is second
    assert parse("panic: boom [recovered, repanicked]\n").errors[0].message == "boom"


@pytest.mark.parametrize(
    ("value", "cls", "qualified", "message"),
    [
        ('main.Reason("disk full")', "Reason", "main.Reason", "disk full"),
        ("example.com/app/errs.Code(42)", "Code", "example.com/app/errs.Code", "42"),
        ("(main.T) 0xc000012345", "T", "main.T", "0xc000012345"),
        ("(*main.MyErr) 0xc000012345", "MyErr", "main.MyErr", "0xc000012345"),
        ('main.MyErr{Op:"read", Code:3}', "MyErr", "main.MyErr", 'main.MyErr{Op:"read", Code:3}'),
        ("open /etc/app.conf: no such file or directory", None, None, None),
    ],
)
def test_panic_values_print_as_the_runtime_prints_them(value, cls, qualified, message):
    _, error = only(f"panic: {value}\n\ngoroutine 1 [running]:\nmain.main()\n\t/a/main.go:3\n")
    assert (error.error_class, error.qualified_class) == (cls, qualified)
    assert error.message == (message if message is not None else value)


def test_a_goroutine_dump_keeps_the_first_goroutine_and_its_creator():
    text = textwrap.dedent(
        """\
        fatal error: all goroutines are asleep - deadlock!

        goroutine 1 [chan receive]:
        main.main()
        \t/app/main.go:14 +0x5c

        goroutine 7 [chan send]:
        main.worker(0xc000020060)
        \t/app/main.go:22 +0x3d
        created by main.main in goroutine 1
        \t/app/main.go:11 +0x45
        exit status 2
        """
    )
    parsed, error = only(text)
    assert (error.error_class, error.message) == (
        "fatal error",
        "all goroutines are asleep - deadlock!",
    )
    assert [(f.path, f.line) for f in error.frames] == [("/app/main.go", 14)]
    assert parsed.lines_used == 10


def test_created_by_is_the_outermost_frame_of_a_goroutine():
    text = textwrap.dedent(
        """\
        panic: send on closed channel

        goroutine 18 [running]:
        main.produce(0xc00001c0c0)
        \t/app/main.go:30 +0x45
        created by main.start
        \t/app/main.go:25 +0x6f
        """
    )
    _, error = only(text)
    assert [(f.function, f.line) for f in error.frames] == [
        ("main.start", 25),
        ("main.produce", 30),
    ]


def test_a_headerless_dump_gives_frames_without_a_message():
    text = (
        "goroutine 1 [running]:\nruntime/debug.Stack()\n\t/go/src/runtime/debug/stack.go:24 +0x5e\n"
        "main.main()\n\t/app/main.go:8 +0x1d\n"
    )
    _, error = only(text)
    assert (error.error_class, error.message) == (None, "")
    assert error.frames[-1].function == "runtime/debug.Stack"


def test_a_stack_overflow_skips_the_runtime_stack():
    text = textwrap.dedent(
        """\
        runtime: goroutine stack exceeds 1000000000-byte limit
        runtime: sp=0xc020160398 stack=[0xc020160000, 0xc040160000]
        fatal error: stack overflow

        runtime stack:
        runtime.throw({0x4a0b5e?, 0x0?})
        \t/usr/local/go/src/runtime/panic.go:1047 +0x5d fp=0x7ffd sp=0x7ffd pc=0x432a1d

        goroutine 1 [running]:
        main.f()
        \t/app/main.go:4 +0x2e fp=0xc0201603a8 sp=0xc0201603a0 pc=0x457a2e
        ...additional frames elided...
        """
    )
    error = parse(text).primary
    assert error is not None and error.message == "stack overflow"
    assert [(f.path, f.line) for f in error.frames] == [("/app/main.go", 4)]
    assert error.omitted_frames == 1


def test_a_zap_stacktrace_in_a_json_log_line_gives_the_record_its_frames():
    record = {
        "level": "error",
        "caller": "app/main.go:31",
        "msg": "request failed",
        "stacktrace": "main.handle\n\t/app/main.go:31\nnet/http.HandlerFunc.ServeHTTP\n"
        "\t/usr/local/go/src/net/http/server.go:2136",
    }
    _, error = only(json.dumps(record))
    assert (error.level, error.message) == ("ERROR", "request failed")
    assert [(f.function, f.line) for f in error.frames] == [
        ("net/http.HandlerFunc.ServeHTTP", 2136),
        ("main.handle", 31),
    ]


def test_a_pkg_errors_stack_takes_the_line_before_as_its_message():
    text = (
        "open config: no such file or directory\nmain.open\n\t/app/main.go:12\n"
        "main.main\n\t/app/main.go:20\nruntime.goexit\n\t/usr/local/go/src/runtime/asm_amd64.s:1571\n"
    )
    _, error = only(text)
    assert error.message == "open config: no such file or directory"
    assert [f.line for f in error.frames] == [1571, 20, 12]
    assert parse("see docs.go for details\nfoo.bar\n").errors[0].language == "python"


def test_log_fatal_under_go_run_is_a_critical_log_record():
    text = "2024/01/02 15:04:05 open config.yaml: permission denied\nexit status 1\n"
    parsed, error = only(text)
    assert parsed.kind == "log"
    assert (error.level, error.error_class) == ("CRITICAL", "CRITICAL")
    assert error.message == "open config.yaml: permission denied"


def test_log_with_a_short_file_location_gives_a_frame():
    _, error = only("2024/01/02 15:04:05.123456 server.go:88: listen tcp :80: bind failed\n")
    assert error.message == "listen tcp :80: bind failed"
    assert error.frames == (error.frames[0].__class__("server.go", 88),)


def test_log_panic_reads_the_line_and_the_panic_as_one_error():
    text = textwrap.dedent(
        """\
        2024/01/02 15:04:05 bad state 3
        panic: bad state 3

        goroutine 1 [running]:
        log.Panicf({0x4b1f2c?, 0x0?}, {0xc000057f28?, 0x1?, 0x1?})
        \t/usr/local/go/src/log/log.go:395 +0x67
        main.main()
        \t/app/main.go:9 +0x45
        exit status 2
        """
    )
    parsed, error = only(text)
    assert error.message == "bad state 3"
    assert error.frames[-1].path == "/usr/local/go/src/log/log.go"
    assert parsed.lines_used == 8


def test_a_plain_go_log_line_is_left_to_the_generic_log_reader():
    parsed = parse("2024/01/02 15:04:05 starting server on :8080\n")
    assert parsed.errors[0].language == "python"  # the generic recogniser's default


def test_a_panic_line_in_prose_is_not_a_go_crash():
    parsed = parse("panic: this is prose\nand more prose that follows it\n\nthe end\n")
    assert all(e.language != "go" for e in parsed.errors)


def test_pasted_traces_may_be_indented_or_quoted_and_lose_their_tabs():
    quoted = "\n".join("> " + line for line in RUNTIME_ERROR.splitlines())
    assert parse(quoted).primary.frames[0].line == 31
    flat = RUNTIME_ERROR.replace("\t", "")
    assert len(parse(flat).primary.frames) == 4
    spaced = textwrap.indent(RUNTIME_ERROR.replace("\t", "        "), "    ")
    assert len(parse(spaced).primary.frames) == 4


def test_a_trace_inside_docker_compose_output_is_read():
    text = "\n".join("api-1  | " + line for line in RUNTIME_ERROR.splitlines())
    error = parse(text).primary
    assert error is not None and error.error_class == "runtime.Error"
    assert len(error.frames) == 4


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (f"{COBRA}/command.go", "/root/go/pkg/mod/github.com/spf13/cobra/command.go"),
        (
            "/go/pkg/mod/golang.org/x/net@v0.0.0-20220722155237-a158d28d115b/http2/server.go",
            "/go/pkg/mod/golang.org/x/net/http2/server.go",
        ),
        (
            "/go/pkg/mod/github.com/a/b/v2@v2.1.0+incompatible/b.go",
            "/go/pkg/mod/github.com/a/b/v2/b.go",
        ),
        ("C:/Users/me/go/src/app/main.go", "C:/Users/me/go/src/app/main.go"),
    ],
)
def test_module_versions_are_removed_from_frame_paths(path, expected):
    assert frame_path(path) == expected


def test_windows_paths_keep_their_drive():
    text = "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\tC:/Users/me/app/main.go:5 +0x1d\n"
    assert parse(text).primary.frames[0].path == "C:/Users/me/app/main.go"


APP = {
    "go.mod": "module example.com/app\n",
    "store/store.go": textwrap.dedent(
        """\
        package store

        import "fmt"

        type Store struct{ items []string }

        func (s *Store) Get(i int) string {
        \tif i >= len(s.items) {
        \t\tpanic(fmt.Sprintf("store: item %d of %d requested", i, len(s.items)))
        \t}
        \treturn s.items[i]
        }

        func (s *Store) Put(i int, v string) string {
        \tif i >= len(s.items) {
        \t\tpanic(fmt.Sprintf("store: item %d of %d requested", i, len(s.items)))
        \t}
        \ts.items[i] = v
        }
        """
    ),
}


@pytest.mark.parametrize("root", ["module", "gopath"])
def test_explain_picks_the_panic_site_its_frame_points_at(tmp_path, root):
    base = tmp_path / "src" / "example.com" / "app"
    for name, text in APP.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    mined = base if root == "module" else tmp_path / "src"
    trace = textwrap.dedent(
        """\
        panic: store: item 4 of 2 requested

        goroutine 1 [running]:
        example.com/app/store.(*Store).Put(0xc000010030, 0x4, {0x4b2f60, 0x3})
        \t/root/go/pkg/mod/example.com/app@v1.2.0/store/store.go:16 +0x1d
        main.main()
        \t/home/u/cmd/main.go:9 +0x25
        exit status 2
        """
    )
    db = tmp_path / "s.sqlite3"
    with SQLiteStore(db) as store:
        Pipeline(Settings(db=db), store).mine(open_source(str(mined), repo="example/app"))
        answer = Explainer.open(store, cache=None).explain(trace)
    best = answer.matches[0]
    assert best.kind is MatchKind.EXACT and not answer.ambiguous
    assert best.record.line_number == 16 and best.record.file_path.endswith("store/store.go")
    assert best.record.function == "store.(*Store).Put"
    assert best.captures == {"i": "4", "len(s.items)": "2"}
    assert any("frame points at the record's line" in e for e in best.evidence)
