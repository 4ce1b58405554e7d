r"""Go crashes in pasted text: panics, fatal errors, goroutine dumps and ``log`` lines (issue #7).

One recogniser (``go-crash``) reads what the Go runtime prints when a program dies::

    panic: runtime error: index out of range [5] with length 3   ← the message (may span lines)
    [signal SIGSEGV: segmentation violation code=… addr=0x0 pc=…]  ← optional

    goroutine 1 [running]:                                        ← the panicking goroutine
    main.(*Server).handle(0xc000010000, {0x4b2f60, 0x3})          ← function, then
    \t/home/u/src/app/server.go:42 +0x1d                         ← its file and line
    main.main()
    \t/home/u/src/app/main.go:12 +0x25
    created by main.main in goroutine 1                           ← where a goroutine started
    \t/home/u/src/app/main.go:10 +0x3c

    goroutine 7 [chan receive]:                                   ← other goroutines (ignored)
    …
    exit status 2                                                 ← ``go run``'s last line

Also: ``panic: … [recovered]`` followed by the re-panic (``\tpanic: …``), each panic an error
in the order printed (the last one killed the program and holds the frames); ``fatal error:
…`` (deadlocks, concurrent map writes, stack overflow with its ``runtime stack:``); a goroutine
dump without a header (``debug.Stack()``, ``SIGQUIT``), read as frames without a message; and
the standard ``log`` package's lines (``2024/01/02 15:04:05 [file.go:12: ]message``) when Go
clearly printed them: followed by a panic (``log.Panic``), by ``exit status 1`` (``log.Fatal``
under ``go run``, read at level ``CRITICAL``), by a goroutine dump, or carrying a ``file.go:N:``
location (other such lines are left to the generic log recogniser); and a stack without a
goroutine header, each function alone on its line then its indented ``file.go:N`` (zap's
``stacktrace`` field, ``github.com/pkg/errors``' ``%+v``), whose message is the line before.

The panic value is printed the runtime's way: an error or a string as its text (no class),
``runtime error: …`` (class ``runtime.Error``), a named basic type as ``main.Code(42)`` or
``main.Reason("text")`` and anything else as ``(main.T) 0xc000…`` (class ``T``, qualified
``main.T``); a value printed with ``%#v`` (``main.MyErr{Op:"x"}``) is classed the same way.
``fatal error: …`` has the class ``fatal error``.

Frames are outermost first, as :class:`~errdex.match.parse.Frame` values whose function is
what Go shows (``github.com/spf13/cobra.(*Command).ExecuteC``). A module path's version is
removed from frame paths (``…/pkg/mod/github.com/spf13/cobra@v1.6.1/command.go`` →
``…/pkg/mod/github.com/spf13/cobra/command.go``) so that the frame ends with the file path a
record mined from the module's source has, whichever directory the source was mined from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from errdex.match.parse import (
    MAX_FRAMES,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGE_LINES,
    Block,
    Frame,
    ParsedError,
    Recogniser,
    Scan,
    register_recogniser,
)

__all__ = ["read_go"]

_PANIC = re.compile(
    r"(?P<indent>[ \t]*)panic: (?P<msg>.*?)(?P<recovered> \[recovered(?:, repanicked)?\])?\Z"
)
_FATAL = re.compile(r"fatal error: (?P<msg>.*)\Z")
_GOROUTINE = re.compile(r"goroutine \d+(?: [^\[\n]*)? ?\[[^\]\n]*\]:\Z")
_SIGNAL = re.compile(r"\[signal [^\]\n]*\]\Z")
_FUNCTION = re.compile(r"(?P<func>\S+?)(?:\((?P<args>[^()]*)\))?\Z")
_BARE_FUNCTION = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.[^\s/]+\Z")
_SOURCE_LOCATION = re.compile(r"\s+\S.*?\.(?:go|s):\d{1,9}\Z")
_CREATED = re.compile(r"created by (?P<func>\S+?)(?: in goroutine \d+)?\Z")
_LOCATION = re.compile(
    r"[ \t]*(?P<path>\S.*?):(?P<line>\d{1,9})(?: \+0x[0-9a-fA-F]+)?"
    r"(?: fp=0x[0-9a-fA-F]+ sp=0x[0-9a-fA-F]+ pc=0x[0-9a-fA-F]+)?\Z"
)
_STDLOG = re.compile(
    r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})? "
    r"(?:(?P<path>[^\s:]+\.go):(?P<line>\d{1,9}): )?(?P<msg>.*)\Z"
)
_EXIT = re.compile(r"exit status \d{1,3}\Z")
_VERSION = re.compile(r"@v\d[^/\s]*(?=/)")
_RUNTIME_SECTIONS = frozenset({"runtime stack:", "...additional frames elided..."})
_CUSTOM_VALUE = re.compile(
    r"(?P<cls>[\w./-]*\.[A-Za-z_]\w*)\((?P<value>\".*\"|[^()\"]*)\)\Z"
    r"|\((?P<boxed>\*?[\w./-]*\.[A-Za-z_][\w.\[\]]*)\) (?P<address>0x[0-9a-f]+)\Z"
    r"|&?(?P<struct>[\w./-]*\.[A-Za-z_]\w*)\{.*\}\Z"
)

TRIGGER = (
    r"[ \t]*panic: |fatal error: |goroutine \d+ |\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}"
    r"|\[signal |runtime stack:|(?=\S+\Z)[\w.-]+(?:/[\w.-]+)*\.[^\s/]+\Z"
)
"""The lines a Go crash may begin with (a lone path holds no whitespace: the lookahead turns
other lines away before the path's runs are tried)."""


def frame_path(path: str) -> str:
    """Remove module versions from a frame's path (``cobra@v1.6.1/x.go`` → ``cobra/x.go``)."""
    return _VERSION.sub("", path) if "@v" in path else path


def _value(message: str) -> tuple[str | None, str | None, str]:
    """Read a printed panic value: (class, qualified class, message)."""
    if message.startswith("runtime error: "):
        return "runtime.Error", "runtime.Error", message
    custom = _CUSTOM_VALUE.match(message)
    if custom is None:
        return None, None, message
    if custom["struct"]:
        return custom["struct"].rsplit(".", 1)[-1], custom["struct"], message
    qualified = custom["cls"] or (custom["boxed"] or "").lstrip("*")
    bare = qualified.rsplit(".", 1)[-1].split("[", 1)[0]
    if custom["value"] is not None and custom["value"].startswith('"'):
        return bare, qualified, custom["value"][1:-1]
    return bare, qualified, custom["value"] or custom["address"] or ""


def _next_nonblank(lines: Sequence[str], start: int, limit: int = 3) -> int | None:
    for j in range(start, min(len(lines), start + limit)):
        if lines[j].strip():
            return j
    return None


class _Reader:
    """Reads one Go crash: its panics (or fatal error), then the goroutines and frames."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.messages: list[tuple[str, list[str]]] = []  # (kind, message lines)
        self.frames: list[Frame] = []
        self.goroutines = 0
        self.omitted = 0

    def read_messages(self, i: int) -> int:
        """Read ``panic:``/``fatal error:`` lines and the message lines after them."""
        lines = self.lines
        while i < len(lines):
            line = lines[i]
            panic = _PANIC.match(line)
            fatal = _FATAL.match(line) if panic is None else None
            if panic is not None and (not panic["indent"] or self.messages):
                self.messages.append(("panic", [panic["msg"]]))
            elif fatal is not None:
                self.messages.append(("fatal", [fatal["msg"]]))
            elif (
                not self.messages
                or not line.strip()
                or _GOROUTINE.match(line)
                or _SIGNAL.match(line)
                or line in _RUNTIME_SECTIONS
                or _EXIT.match(line)
            ):
                return i
            else:
                message = self.messages[-1][1]
                if len(message) < MAX_MESSAGE_LINES:
                    # Newer runtimes indent a multi-line message's lines with a tab.
                    message.append(line[1:] if line.startswith("\t") else line)
            i += 1
        return i

    def read_stacks(self, i: int) -> int:
        """Read goroutines (the first one's frames are kept) until the crash output ends."""
        lines = self.lines
        while i < len(lines):
            line = lines[i]
            text = line.strip()
            if not text or _SIGNAL.match(text):
                i += 1
                continue
            if _EXIT.match(text):
                return i + 1
            if _GOROUTINE.match(text) or text == "runtime stack:":
                keep = text != "runtime stack:" and self.goroutines == 0
                self.goroutines += text != "runtime stack:"
                i = self.read_frames(i + 1, keep=keep)
                continue
            return i
        return i

    def read_frames(self, i: int, *, keep: bool) -> int:
        """Read ``function(args)`` + location pairs; keep them (innermost first) when asked."""
        lines = self.lines
        found: list[Frame] = []
        while i < len(lines):
            line = lines[i]
            text = line.strip()
            if text == "...additional frames elided...":
                self.omitted += keep
                i += 1
                continue
            created = _CREATED.match(text)
            function = _FUNCTION.match(line) if created is None else None
            if (created is None and function is None) or i + 1 >= len(lines):
                break
            location = _LOCATION.match(lines[i + 1])
            if location is None:
                break
            name = created["func"] if created is not None else function["func"] if function else ""
            found.append(Frame(frame_path(location["path"]), int(location["line"]), name or None))
            i += 2
        if keep:
            self.frames = found[::-1]
        return i

    def errors(self) -> list[ParsedError]:
        frames = self.frames
        omitted = self.omitted
        if len(frames) > MAX_FRAMES:
            omitted += len(frames) - MAX_FRAMES
            frames = frames[:10] + frames[-(MAX_FRAMES - 10) :]
        out: list[ParsedError] = []
        for position, (kind, lines) in enumerate(self.messages):
            message = "\n".join(lines).rstrip()[:MAX_MESSAGE_CHARS]
            last = position == len(self.messages) - 1
            cls: str | None
            qualified: str | None
            if kind == "fatal":
                cls, qualified = "fatal error", None
            else:
                cls, qualified, message = _value(message)
            out.append(
                ParsedError(
                    error_class=cls,
                    qualified_class=qualified,
                    message=message,
                    frames=tuple(frames) if last else (),
                    relation="context" if position else None,
                    truncated=message.endswith(("...", "…")),
                    language="go",
                    omitted_frames=omitted if last else 0,
                )
            )
        if not out and frames:
            out.append(
                ParsedError(None, None, "", tuple(frames), language="go", omitted_frames=omitted)
            )
        return out


def _read_log_line(scan: Scan, start: int, floor: int) -> Block | None:
    """A standard ``log`` line that Go clearly printed (see the module docstring)."""
    lines = scan.lines
    match = _STDLOG.match(lines[start])
    if match is None:
        return None
    following = _next_nonblank(lines, start + 1)
    after = lines[following] if following is not None else ""
    if _PANIC.match(after) or _FATAL.match(after):
        # ``log.Panic``: the line, then the panic with the same message.
        block = read_go(scan, following or start + 1, floor)
        if block is not None:
            block.begin = start
        return block
    frames: tuple[Frame, ...] = ()
    if match["path"]:
        frames = (Frame(match["path"], int(match["line"])),)
    end = start + 1
    level: str | None = None
    if _EXIT.match(after.strip()) and following is not None:
        level, end = "CRITICAL", following + 1
    elif _GOROUTINE.match(after.strip()) and following is not None:
        reader = _Reader(lines)
        end = reader.read_stacks(following)
        frames = (*reader.frames, *frames)
    elif not frames:
        return None
    error = ParsedError(
        error_class=level,
        qualified_class=None,
        message=match["msg"].strip(),
        frames=frames,
        language="go",
        level=level,
    )
    return Block(start, end, "log", [error], weak=level is None and len(frames) <= 1)


def _read_bare_stack(scan: Scan, start: int, floor: int) -> Block | None:
    """A stack without a goroutine header: zap's ``stacktrace``, ``pkg/errors``' ``%+v``.

    Function names stand alone on their line (``main.run``), each followed by its indented
    ``file.go:N``. The line just before, when nothing read it, is the error's message.
    """
    lines = scan.lines
    if start + 1 >= len(lines) or not _SOURCE_LOCATION.match(lines[start + 1]):
        return None
    reader = _Reader(lines)
    end = reader.read_frames(start, keep=True)
    before = start - 1
    message = ""
    if before >= floor and lines[before].strip() and not lines[before][:1].isspace():
        message = lines[before].strip()
        start = before
    error = ParsedError(
        None, None, message, tuple(reader.frames), language="go", omitted_frames=reader.omitted
    )
    return Block(start, end, "traceback", [error])


def read_go(scan: Scan, start: int, floor: int) -> Block | None:
    """Read a Go crash starting at line ``start`` (see the module docstring).

    Args:
        scan: The lines being parsed.
        start: The line to read from.
        floor: The first line the block may include.

    Returns:
        The block of the crash and its errors, or None when no Go crash starts there.
    """
    lines = scan.lines
    first = lines[start]
    if _STDLOG.match(first):
        return _read_log_line(scan, start, floor)
    if _BARE_FUNCTION.match(first):
        return _read_bare_stack(scan, start, floor)
    reader = _Reader(lines)
    i = reader.read_messages(start)
    if not reader.messages:
        stripped = first.strip()
        if not (_GOROUTINE.match(stripped) or stripped == "runtime stack:"):
            return None
    end = reader.read_stacks(i)
    if not reader.messages and not reader.frames:
        return None
    # ``panic: x`` without a goroutine is a Go panic only as the paste's last words.
    if (
        reader.messages
        and reader.goroutines == 0
        and _next_nonblank(lines, end, len(lines)) is not None
    ):
        return None
    return Block(start, end, "traceback", reader.errors())


register_recogniser(Recogniser("go-crash", TRIGGER, read_go), before="log")
