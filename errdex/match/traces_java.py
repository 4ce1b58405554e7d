r"""Java stack traces, read from pasted text (issue #7).

A trace is an exception line — ``Exception in thread "main" java.lang.IllegalStateException:
msg`` or just ``com.example.AppException: msg`` (as loggers print it), its message maybe over
several lines — then frames ``\tat org.foo.Bar.baz(Bar.java:123)`` (also with a module or class
loader, ``at java.base/java.util.Objects.requireNonNull(Objects.java:233)``, ``(Unknown
Source)``, ``(Native Method)``), ``\t... 5 more``, and chained ``Caused by: …`` and
``Suppressed: …`` blocks.

A Java frame names a file but not its directory: the frame's path is derived from the package
of its class (``org.foo.Bar$Inner`` in ``Bar.java`` → ``org/foo/Bar.java``), which the record
of ``src/main/java/org/foo/Bar.java`` ends with. Errors run from the deepest cause to the
exception printed first; the class is the simple name (``IllegalStateException``), the
qualified one is kept as written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from errdex.match.parse import (
    MAX_MESSAGE_LINES,
    POSSESSIVE,
    RECOGNISERS,
    Block,
    Frame,
    ParsedError,
    Recogniser,
    Scan,
    register_recogniser,
)

__all__ = ["frame_path", "read_java"]

_HEADER = re.compile(
    r"(?P<prefix>Exception in thread \"[^\"\n]*\" |(?P<chain>Caused by|Suppressed): )?"
    r"(?P<cls>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?:: ?(?P<message>.*))?\Z"
)
_AT = re.compile(
    r"at (?:[^\s/()]*/){0,2}(?P<cls>[\w$.]+)\.(?P<method>[\w$<>]+)\((?P<where>[^()]*)\)\s*\Z"
)
_MORE = re.compile(r"\.\.\. (?P<count>\d+) (?:more|common frames omitted)\s*\Z")
_LOCATION = re.compile(r"(?P<file>[^:]+?)(?::(?P<line>\d+))?\Z")
_MAX_FRAMES = 400


def frame_path(class_name: str, file_name: str) -> str:
    """Return the source path a frame points at: its class's package as directories + the file.

    Args:
        class_name: The frame's class (``org.foo.Bar$Inner``).
        file_name: The file the frame names (``Bar.java``).

    Returns:
        ``org/foo/Bar.java``; the file name alone for a class in the default package.
    """
    package, _, _ = class_name.rpartition(".")
    return f"{package.replace('.', '/')}/{file_name}" if package else file_name


def _frame(match: re.Match[str]) -> Frame:
    cls, method, where = match["cls"], match["method"], match["where"].strip()
    simple = cls.rsplit(".", 1)[-1]
    location = _LOCATION.match(where) if where not in ("Native Method", "Unknown Source") else None
    if location is not None and location["file"].endswith((".java", ".kt", ".scala", ".groovy")):
        path = frame_path(cls, location["file"])
        line = int(location["line"]) if location["line"] and len(location["line"]) < 9 else None
    else:
        outer = simple.split("$", 1)[0]
        path = frame_path(cls, f"{outer}.java") if where == "Unknown Source" else ""
        line = None
    return Frame(path, line, f"{simple}.{method}")


class _Error:
    """One exception of a trace while it is read."""

    def __init__(self, qualified: str, message: str, relation: str | None, depth: int) -> None:
        self.qualified = qualified
        self.message = [message]
        self.frames: list[Frame] = []
        self.omitted = 0
        self.relation = relation
        self.depth = depth

    def build(self) -> ParsedError:
        frames = list(reversed(self.frames[:_MAX_FRAMES]))
        simple = self.qualified.rsplit(".", 1)[-1].rsplit("$", 1)[-1]
        return ParsedError(
            error_class=simple,
            qualified_class=self.qualified,
            message="\n".join(self.message).strip(),
            frames=tuple(frames),
            relation=self.relation,
            language="java",
            depth=self.depth,
            omitted_frames=self.omitted + max(0, len(self.frames) - _MAX_FRAMES),
        )


def _is_frame(line: str) -> bool:
    return _AT.match(line.strip()) is not None


def _message_end(lines: Sequence[str], start: int) -> int | None:
    """The line of the first frame after an exception line's message, or None."""
    i = start
    while i < len(lines) and i - start < MAX_MESSAGE_LINES:
        if _is_frame(lines[i]):
            return i
        if _HEADER.match(lines[i].strip()) and lines[i].strip().startswith(
            ("Caused by", "Suppressed")
        ):
            return None
        i += 1
    return None


def read_java(scan: Scan, start: int, floor: int) -> Block | None:
    """Read a Java stack trace (with its causes) starting at line ``start``."""
    del floor
    lines = scan.lines
    if start + 1 == len(lines) and not lines[start].lstrip().startswith('Exception in thread "'):
        # The last line (a one-line paste): a trace needs its frames, but for the thread's
        # prefix (``Exception in thread "main" …``). ``pkg.Error: message`` is told here.
        return None
    head = _HEADER.match(lines[start].strip())
    if head is None or head["chain"] is not None:
        return None
    if not head["prefix"] and "." not in head["cls"]:
        return None
    first_frame = _message_end(lines, start + 1)
    if first_frame is None and not head["prefix"]:
        return None
    chain: list[_Error] = []
    current = _Error(head["cls"], head["message"] or "", None, 0)
    chain.append(current)
    i = start + 1
    while i < len(lines):
        raw = lines[i]
        text = raw.strip()
        at = _AT.match(text)
        if at is not None:
            current.frames.append(_frame(at))
            i += 1
            continue
        more = _MORE.match(text)
        if more is not None:
            current.omitted += int(more["count"])
            i += 1
            continue
        header = _HEADER.match(text)
        if header is not None and header["chain"] is not None:
            relation = "cause" if header["chain"] == "Caused by" else "context"
            depth = 1 if header["chain"] == "Suppressed" else 0
            current = _Error(header["cls"], header["message"] or "", relation, depth)
            chain.append(current)
            i += 1
            continue
        if not current.frames and text and len(current.message) < MAX_MESSAGE_LINES:
            current.message.append(raw.rstrip())
            i += 1
            continue
        break
    # Printed outermost first, each "Caused by" deeper: the errors run from the deepest cause.
    main = [e for e in chain if e.depth == 0]
    errors = [e.build() for e in reversed(main)]
    errors = [replace(error, relation="cause" if n else None) for n, error in enumerate(errors)]
    errors += [e.build() for e in chain if e.depth]
    return Block(begin=start, end=i, kind="traceback", errors=errors)


# Tried before the readers of looser formats: a Java trace needs its ``at`` frames (or the
# ``Exception in thread`` prefix), which nothing else has. The name runs are possessive
# where Python can: a dot or a colon ends them, so shorter runs need not be retried.
register_recogniser(
    Recogniser(
        "java-trace",
        rf"Exception in thread \"|[A-Za-z_$][\w$]*{POSSESSIVE}"
        rf"(?:\.[A-Za-z_$][\w$]*{POSSESSIVE})+(?::|\s*\Z)",
        read_java,
    ),
    before=RECOGNISERS[0].name if RECOGNISERS else None,
)
