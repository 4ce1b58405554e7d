"""Rust panics and anyhow error reports, read from pasted text (issue #7).

Formats:

- a panic, as Rust ≥ 1.73 prints it — ``thread 'main' panicked at src/main.rs:10:5:`` (newer
  releases add the thread id: ``thread 'main' (4242) panicked at …``), the message on the
  following lines — and as older releases do: ``thread 'main' panicked at 'msg',
  src/main.rs:10:5``;
- the ``note: run with `RUST_BACKTRACE=1` …`` line after it, and a ``stack backtrace:`` of
  numbered frames (``   4: app::parse``) with their ``at ./src/main.rs:10:5`` lines, innermost
  first (they are returned outermost first, the panic's location last);
- the report of an ``anyhow`` (or ``eyre``) error returned from ``main``: ``Error: msg``, a
  blank line, ``Caused by:`` and the causes (``    0: …`` numbered when there are several),
  then maybe ``Stack backtrace:``. Its errors run from the deepest cause to ``msg``.

A panic's class is ``panic`` (as the Rust extractor classes every panicking site); an anyhow
report names no class.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from errdex.match.parse import (
    MAX_MESSAGE_LINES,
    RECOGNISERS,
    Block,
    Frame,
    ParsedError,
    Recogniser,
    Scan,
    register_recogniser,
)

__all__ = ["read_anyhow", "read_panic"]

_PANIC = re.compile(
    r"thread '(?P<thread>[^'\n]*)'(?: \(\d+\))? panicked at "
    r"(?:(?P<path>[^'\n]+?):(?P<line>\d+):(?P<column>\d+):\s*\Z|'(?P<message>.*))"
)
_OLD_END = re.compile(r"(?P<message>.*)', (?P<path>[^\n]+?):(?P<line>\d+):(?P<column>\d+)\s*\Z")
_NOTE = re.compile(r"note: (?:run with `RUST_BACKTRACE|Some details are omitted)")
_BACKTRACE = re.compile(r"(?:stack|Stack) backtrace:\s*\Z")
_FRAME = re.compile(r"\s*(?P<number>\d+): (?P<function>.+?)\s*\Z")
_AT = re.compile(r"\s+at (?P<path>.+?):(?P<line>\d+)(?::\d+)?\s*\Z")
_CAUSE = re.compile(r"(?: {4}|\t)(?:(?P<number>\d+): )?(?P<message>.*)\Z")
_MAX_FRAMES = 200


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= 9 else None


def _backtrace(lines: Sequence[str], start: int) -> tuple[list[Frame], int]:
    """Read the numbered frames of a backtrace from ``start``; return them outermost first."""
    frames: list[Frame] = []
    i = start
    while i < len(lines) and len(frames) < _MAX_FRAMES:
        match = _FRAME.match(lines[i])
        if match is None:
            break
        path, line = "", None
        if i + 1 < len(lines):
            at = _AT.match(lines[i + 1])
            if at is not None:
                path, line = at["path"], _int(at["line"])
                i += 1
        frames.append(Frame(path, line, match["function"]))
        i += 1
    frames.reverse()
    return frames, i


def _skip_notes(lines: Sequence[str], i: int) -> int:
    while i < len(lines) and _NOTE.match(lines[i].strip()):
        i += 1
    return i


def read_panic(scan: Scan, start: int, floor: int) -> Block | None:
    """Read a panic (with its notes and backtrace) starting at line ``start``."""
    del floor
    lines = scan.lines
    head = _PANIC.match(lines[start].strip())
    if head is None:
        return None
    i = start + 1
    if head["path"] is not None:
        path, line = head["path"], _int(head["line"])
        message: list[str] = []
        while i < len(lines) and len(message) < MAX_MESSAGE_LINES:
            text = lines[i]
            if _NOTE.match(text.strip()) or _BACKTRACE.match(text.strip()):
                break
            if _PANIC.match(text.strip()):
                break
            if not text.strip() and (i + 1 >= len(lines) or not lines[i + 1].startswith(" ")):
                break
            message.append(text)
            i += 1
    else:
        found = _OLD_END.match(head["message"])
        message = [head["message"]]
        while found is None and i < len(lines) and len(message) < MAX_MESSAGE_LINES:
            message.append(lines[i])
            found = _OLD_END.match(lines[i])
            i += 1
        if found is None:
            return None
        message[-1] = found["message"]
        path, line = found["path"], _int(found["line"])
    i = _skip_notes(lines, i)
    frames: list[Frame] = []
    if i < len(lines) and _BACKTRACE.match(lines[i].strip()):
        frames, i = _backtrace(lines, i + 1)
        i = _skip_notes(lines, i)
    location = Frame(path, line, None)
    if not frames or (frames[-1].path, frames[-1].line) != (path, line):
        frames.append(location)
    error = ParsedError(
        error_class="panic",
        qualified_class=None,
        message="\n".join(message).strip("\n"),
        frames=tuple(frames),
        language="rust",
    )
    return Block(begin=start, end=i, kind="traceback", errors=[error])


def read_anyhow(scan: Scan, start: int, floor: int) -> Block | None:
    """Read ``Error: msg`` followed by ``Caused by:`` (an anyhow report) at line ``start``."""
    del floor
    lines = scan.lines
    first = lines[start]
    if not first.startswith("Error: "):
        return None
    message = [first[len("Error: ") :]]
    i = start + 1
    while i < len(lines) and lines[i].strip() and len(message) < MAX_MESSAGE_LINES:
        message.append(lines[i])
        i += 1
    if i + 1 >= len(lines) or lines[i + 1].strip() != "Caused by:":
        return None
    i += 2
    causes: list[list[str]] = []
    while i < len(lines):
        cause = _CAUSE.match(lines[i])
        if cause is None or not lines[i].strip():
            break
        if cause["number"] is not None or not causes:
            causes.append([cause["message"]])
        elif len(causes[-1]) < MAX_MESSAGE_LINES:
            causes[-1].append(lines[i].strip())
        i += 1
    frames: list[Frame] = []
    j = i + 1 if i < len(lines) and not lines[i].strip() else i
    if j < len(lines) and _BACKTRACE.match(lines[j].strip()):
        frames, i = _backtrace(lines, j + 1)
    errors = [
        ParsedError(
            error_class=None,
            qualified_class=None,
            message="\n".join(text).strip(),
            relation="cause" if position else None,
            language="rust",
        )
        for position, text in enumerate([*reversed(causes), message])
    ]
    errors[-1] = ParsedError(
        error_class=None,
        qualified_class=None,
        message=errors[-1].message,
        frames=tuple(frames),
        relation=errors[-1].relation,
        language="rust",
    )
    return Block(begin=start, end=i, kind="traceback", errors=errors)


# Both formats are unambiguous: they are tried before the readers of looser formats (a bare
# ``Error: msg`` line is also JavaScript's).
_FIRST = RECOGNISERS[0].name if RECOGNISERS else None
register_recogniser(
    Recogniser("rust-panic", r"[ \t]*thread '[^']*'(?: \(\d+\))? panicked at ", read_panic),
    before=_FIRST,
)
register_recogniser(Recogniser("rust-anyhow", r"Error: ", read_anyhow), before=_FIRST)
