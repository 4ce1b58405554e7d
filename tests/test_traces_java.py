"""Java stack traces read from pasted text (errdex.match.traces_java)."""

from __future__ import annotations

import textwrap

from errdex.match.parse import Frame, parse
from errdex.match.traces_java import frame_path

TRACE = textwrap.dedent(
    """\
    Exception in thread "main" java.lang.IllegalStateException: could not start
    the second line of the message
    \tat org.foo.Bar$Inner.baz(Bar.java:123)
    \tat java.base/java.util.Objects.requireNonNull(Objects.java:233)
    \tat app//org.foo.Main.main(Main.java:5)
    Caused by: java.io.IOException: disk full
    \tat org.foo.io.Writer.write(Unknown Source)
    \tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method)
    \t... 3 more
    \tSuppressed: java.lang.RuntimeException: close failed
    \t\tat org.foo.io.Writer.close(Writer.java:40)
    \t\t... 4 more
    """
)


def test_frame_paths_come_from_the_class_package():
    assert frame_path("org.foo.Bar$Inner", "Bar.java") == "org/foo/Bar.java"
    assert frame_path("Main", "Main.java") == "Main.java"


def test_a_trace_with_a_cause_and_a_suppressed_exception():
    parsed = parse(TRACE)
    assert parsed.kind == "traceback"
    cause, outer, suppressed = parsed.errors
    assert (outer.error_class, outer.qualified_class, outer.language) == (
        "IllegalStateException",
        "java.lang.IllegalStateException",
        "java",
    )
    assert outer.message == "could not start\nthe second line of the message"
    assert outer.relation == "cause"
    # Outermost first: the innermost frame (where it was thrown) is last.
    assert outer.frames == (
        Frame("org/foo/Main.java", 5, "Main.main"),
        Frame("java/util/Objects.java", 233, "Objects.requireNonNull"),
        Frame("org/foo/Bar.java", 123, "Bar$Inner.baz"),
    )
    assert (cause.error_class, cause.message, cause.relation) == ("IOException", "disk full", None)
    assert cause.frames == (
        Frame("", None, "FileDispatcherImpl.write0"),
        Frame("org/foo/io/Writer.java", None, "Writer.write"),
    )
    assert cause.omitted_frames == 3
    assert (suppressed.error_class, suppressed.depth, suppressed.relation) == (
        "RuntimeException",
        1,
        "context",
    )
    assert parsed.primary is outer


def test_a_logged_trace_without_thread_prefix_and_a_nested_class_exception():
    text = "com.example.Outer$BadThing: nope\n\tat com.example.Outer.run(Outer.java:9)\n"
    (error,) = parse(text).errors
    assert (error.error_class, error.qualified_class, error.message) == (
        "BadThing",
        "com.example.Outer$BadThing",
        "nope",
    )


def test_an_exception_without_message_or_frames_after_the_thread_prefix():
    (error,) = parse('Exception in thread "main" java.lang.StackOverflowError\n').errors
    assert (error.error_class, error.message, error.frames) == ("StackOverflowError", "", ())


def test_dotted_names_without_frames_are_not_java():
    parsed = parse("requests.exceptions.HTTPError: 404 Client Error")
    assert parsed.errors[0].language == "python"
