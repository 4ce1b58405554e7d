"""Rust panics and anyhow reports read from pasted text (errdex.match.traces_rust)."""

from __future__ import annotations

import textwrap

from errdex.match.parse import Frame, parse

NEW_PANIC = textwrap.dedent(
    """\
    thread 'main' (21925) panicked at src/main.rs:10:5:
    assertion `left == right` failed: sizes differ
      left: 1
     right: 2
    stack backtrace:
       0: __rustc::rust_begin_unwind
                 at /rustc/5980761/library/std/src/panicking.rs:689:5
       1: core::panicking::panic_fmt
                 at /rustc/5980761/library/core/src/panicking.rs:80:14
       2: app::check
                 at ./src/main.rs:10:5
       3: app::main
                 at ./src/main.rs:4:5
       4: core::ops::function::FnOnce::call_once
    note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
    """
)


def test_a_panic_with_its_message_on_the_next_lines_and_a_backtrace():
    parsed = parse(NEW_PANIC)
    assert parsed.kind == "traceback"
    (error,) = parsed.errors
    assert (error.error_class, error.language) == ("panic", "rust")
    assert error.message == ("assertion `left == right` failed: sizes differ\n  left: 1\n right: 2")
    assert error.frames[0] == Frame("", None, "core::ops::function::FnOnce::call_once")
    assert Frame("./src/main.rs", 4, "app::main") in error.frames
    # The innermost frame is the panic's location.
    assert error.frames[-1] == Frame("src/main.rs", 10, None)


def test_a_panic_without_backtrace_and_its_note():
    text = (
        "thread 'main' panicked at src/lib.rs:3:9:\n"
        "called `Option::unwrap()` on a `None` value\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    (error,) = parse(text).errors
    assert error.message == "called `Option::unwrap()` on a `None` value"
    assert error.frames == (Frame("src/lib.rs", 3, None),)


def test_the_old_single_line_panic_format_and_an_unnamed_thread():
    text = (
        "thread '<unnamed>' panicked at 'index out of range: the len is 3 but the index is 7\n"
        "second line', src/worker.rs:88:13\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
    )
    (error,) = parse(text).errors
    assert error.message == ("index out of range: the len is 3 but the index is 7\nsecond line")
    assert error.frames == (Frame("src/worker.rs", 88, None),)


def test_two_panics_in_one_paste_and_text_around_them():
    text = (
        "Running `target/debug/app`\n"
        "thread 'a' panicked at src/a.rs:1:1:\nfirst\n"
        "thread 'b' panicked at src/b.rs:2:2:\nsecond\n"
    )
    errors = parse(text).errors
    assert [(e.message, e.frames[-1].path) for e in errors] == [
        ("first", "src/a.rs"),
        ("second", "src/b.rs"),
    ]


def test_an_anyhow_report_reads_causes_innermost_first():
    text = textwrap.dedent(
        """\
        Error: failed to load config

        Caused by:
            0: reading /etc/app.toml
            1: No such file or directory (os error 2)
        """
    )
    errors = parse(text).errors
    assert [(e.message, e.relation, e.error_class) for e in errors] == [
        ("No such file or directory (os error 2)", None, None),
        ("reading /etc/app.toml", "cause", None),
        ("failed to load config", "cause", None),
    ]
    assert parse(text).primary.message == "failed to load config"


def test_an_anyhow_report_with_one_cause_and_a_backtrace():
    text = textwrap.dedent(
        """\
        Error: bad input

        Caused by:
            invalid digit found in string

        Stack backtrace:
           0: anyhow::error::<impl anyhow::Error>::msg
                     at /src/anyhow/src/error.rs:83:36
           1: app::run
                     at ./src/main.rs:7:5
        """
    )
    errors = parse(text).errors
    assert [e.message for e in errors] == ["invalid digit found in string", "bad input"]
    assert errors[-1].frames[-1] == Frame(
        "/src/anyhow/src/error.rs", 83, "anyhow::error::<impl anyhow::Error>::msg"
    )


def test_a_bare_error_line_is_left_to_the_other_readers():
    parsed = parse("Error: something failed")
    assert parsed.errors[0].language != "rust"
