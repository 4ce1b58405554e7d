"""Parse anything a user pastes — a message, a traceback, log lines — into plain dataclasses.

:func:`parse` is the input side of ``errdex explain``: it turns pasted text into a
:class:`ParsedInput` holding :class:`ParsedError` values (class, message, :class:`Frame` values,
notes, how each is chained to the previous one), in the order the errors happened. Nothing here
renders or matches; the matcher reads these values and the CLI renders them.

The parser is a registry (:data:`RECOGNISERS`) of small recognisers, one per format, each a
line-by-line state machine that reads one block (a traceback with its chain, a pytest failure,
a log record …) starting at a line and says where it ends. A driver walks the lines; a line no
recogniser claims is skipped; when no block yields an error, the whole text is read as a bare
message. Other languages' traces are added as more recognisers (:func:`register_recogniser`).

Formats: bare messages (``Class: message``, ``pkg.mod.Class: message``, or no class); CPython
tracebacks (3.8–3.13: chains, ``ExceptionGroup`` boxes, notes, ``^^^`` markers, SyntaxError
blocks, ``[Previous line repeated N more times]``, REPL prompts, Markdown quotes and fences);
Sentry excerpts (``Stacktrace (most recent call last):``, newest-first frames, ``N additional
frame(s) were not displayed``); pytest failures (long, short, native and line styles, captured
logs, the short summary); IPython/Jupyter tracebacks (7 and 8, ANSI colours); Python
``warnings`` lines; log lines (Python logging, uvicorn, gunicorn, celery, Django, loguru,
structlog, absl/glog, Airflow, env_logger, logfmt, AWS Lambda, ``[LEVEL]`` prefixes) and the
transports around them (syslog/journald, docker compose, kubectl/docker timestamps); JSON log
lines, whose ``exc_info``/``exception``/``stack`` traceback is parsed too, and docker's
json-file lines.

Hostile input is bounded: only the last :data:`MAX_SCAN_LINES` lines (about
:data:`MAX_SCAN_CHARS` characters) are scanned, lines are cut at :data:`MAX_LINE_CHARS`, errors,
frames, message lines and notes are capped, with counts of what was dropped. Every regex is
anchored and free of nested quantifiers over overlapping classes, so none can backtrack
catastrophically. The original text is always kept whole in :attr:`ParsedInput.original`.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
import sys
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final

from errdex.values import finish_value

__all__ = [
    "KINDS",
    "MAX_ERRORS",
    "MAX_FRAMES",
    "MAX_LINE_CHARS",
    "MAX_SCAN_CHARS",
    "MAX_SCAN_LINES",
    "POSSESSIVE",
    "RECOGNISERS",
    "Block",
    "Frame",
    "ParsedError",
    "ParsedInput",
    "Recogniser",
    "Scan",
    "parse",
    "register_recogniser",
    "repr_message",
    "strip_ansi",
]

MAX_SCAN_CHARS: Final = 500_000
"""About this many characters at the end of a paste are scanned (the rest is kept, not parsed)."""

MAX_SCAN_LINES: Final = 10_000
"""Only the last this many lines of a paste are scanned."""

MAX_LINE_CHARS: Final = 50_000
"""Longer lines are cut here and end with ``…`` (so a message cut this way is ``truncated``)."""

MAX_ERRORS: Final = 100
"""At most this many errors are kept: the first :data:`_ERROR_HEAD` and the last ones."""

MAX_FRAMES: Final = 100
"""At most this many frames are kept per error: the first :data:`_FRAME_HEAD` and the last ones."""

MAX_MESSAGE_LINES: Final = 200
MAX_MESSAGE_CHARS: Final = 50_000
MAX_NOTES: Final = 20
MAX_GROUP_DEPTH: Final = 16
MAX_NESTING: Final = 2
_ERROR_HEAD: Final = 10
_FRAME_HEAD: Final = 10
_HEAD_CHARS: Final = 256

KINDS: tuple[str, ...] = ("message", "traceback", "log", "ipython", "pytest", "json-log")
"""The kinds of input, from least to most specific (the most specific found wins)."""

_KIND_RANK: Final = {kind: rank for rank, kind in enumerate(KINDS)}


# -- the values ------------------------------------------------------------------------------
#
# Explain makes a parsed paste, its errors and the answer on every call: they are values whose
# constructor mypyc compiles (see :mod:`errdex.values`).


@dataclass(unsafe_hash=True)
class Frame:
    """One frame of a stack, as the paste shows it (an immutable value).

    Attributes:
        path: The file as written (absolute, relative, Windows, ``<stdin>``,
            ``<frozen importlib._bootstrap>``, ``Cell In[3]``); for a log record, the module or
            file its location names.
        line: The 1-based line, when shown.
        function: The function name, when shown (``<module>`` at module level).
        source: The code line shown under the frame, when present.
    """

    path: Final[str]
    line: Final[int | None]
    function: Final[str | None]
    source: Final[str | None]

    def __init__(
        self,
        path: str,
        line: int | None = None,
        function: str | None = None,
        source: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.function = function
        self.source = source


finish_value(Frame)


@dataclass(unsafe_hash=True)
class ParsedError:
    """One error of a paste: an exception, or a log record (an immutable value).

    Attributes:
        error_class: The bare class name (``HTTPError``); for a log record without an exception
            class, its level (``ERROR``); None when nothing names a class.
        qualified_class: The class as written (``requests.exceptions.HTTPError``); None when
            ``error_class`` is a log level or there is no class.
        message: The whole message; multi-line messages are kept whole.
        frames: The frames, outermost first (most recent call last), at most
            :data:`MAX_FRAMES`.
        notes: Lines added by ``add_note`` (told apart from the message by a ``Note:``-style
            prefix such as ``Note``, ``Hint``, ``Help`` or ``Tip``).
        relation: How this error is linked to the previous one: ``"cause"`` (``raise … from``),
            ``"context"`` (raised while handling it), ``"group"`` (the first error of a
            sub-exception of an ``ExceptionGroup``), or None.
        truncated: The message was visibly cut short (it ends with ``...`` or ``…``).
        language: The language of the trace (``"python"``).
        depth: The ``ExceptionGroup`` nesting depth (0 outside any group).
        level: The log level (``ERROR``, ``WARNING`` …) of a log record or a warning; None for an
            exception.
        logger: The logger name of a log record, when shown.
        omitted_frames: Frames that exist but are not in ``frames``: elided by the output
            itself (``[Previous line repeated N more times]``, ``N additional frame(s) were not
            displayed``) or dropped by the cap.
    """

    error_class: Final[str | None]
    qualified_class: Final[str | None]
    message: Final[str]
    frames: Final[tuple[Frame, ...]]
    notes: Final[tuple[str, ...]]
    relation: Final[str | None]
    truncated: Final[bool]
    language: Final[str]
    depth: Final[int]
    level: Final[str | None]
    logger: Final[str | None]
    omitted_frames: Final[int]

    def __init__(
        self,
        error_class: str | None,
        qualified_class: str | None,
        message: str,
        frames: tuple[Frame, ...] = (),
        notes: tuple[str, ...] = (),
        relation: str | None = None,
        truncated: bool = False,
        language: str = "python",
        depth: int = 0,
        level: str | None = None,
        logger: str | None = None,
        omitted_frames: int = 0,
    ) -> None:
        self.error_class = error_class
        self.qualified_class = qualified_class
        self.message = message
        self.frames = frames
        self.notes = notes
        self.relation = relation
        self.truncated = truncated
        self.language = language
        self.depth = depth
        self.level = level
        self.logger = logger
        self.omitted_frames = omitted_frames


finish_value(ParsedError)


_PRIMARY_RANK: Final = {None: 4, "CRITICAL": 3, "ERROR": 2, "WARNING": 1}


@dataclass(unsafe_hash=True)
class ParsedInput:
    """What a paste holds.

    Attributes:
        kind: ``"message"``, ``"traceback"``, ``"log"``, ``"pytest"``, ``"ipython"`` or
            ``"json-log"`` (the most specific format found).
        errors: The errors, in the order they happened: a chain from its root cause to the
            exception shown last, an ``ExceptionGroup`` followed by its sub-exceptions; several
            distinct errors in the order pasted. At most :data:`MAX_ERRORS`.
        lines_used: How many non-blank lines of the (scanned) text belong to the errors found.
        original: The input, unchanged.
        omitted_errors: Errors found but not kept (the cap), or elided by the output itself
            (``and N more exceptions``).
        skipped_lines: Lines before the scanned tail of a very large paste, not parsed.
    """

    kind: Final[str]
    errors: Final[tuple[ParsedError, ...]]
    lines_used: Final[int]
    original: Final[str]
    omitted_errors: Final[int]
    skipped_lines: Final[int]

    def __init__(
        self,
        kind: str,
        errors: tuple[ParsedError, ...],
        lines_used: int,
        original: str,
        omitted_errors: int = 0,
        skipped_lines: int = 0,
    ) -> None:
        self.kind = kind
        self.errors = errors
        self.lines_used = lines_used
        self.original = original
        self.omitted_errors = omitted_errors
        self.skipped_lines = skipped_lines

    @property
    def primary(self) -> ParsedError | None:
        """The error a user means: the last outermost exception (the bottom of a traceback).

        Outside ``ExceptionGroup`` members, an exception is preferred to a log record, and a
        log record at a higher level to one at a lower level; the last one wins a tie.
        """
        best: ParsedError | None = None
        best_key = (-1, -1)
        for position, error in enumerate(self.errors):
            if error.depth:
                continue
            key = (_PRIMARY_RANK.get(error.level, 0), position)
            if key > best_key:
                best, best_key = error, key
        if best is None and self.errors:
            return self.errors[-1]
        return best

    def to_dict(self) -> dict[str, Any]:
        """Return the parse as plain JSON-ready data (the original text included)."""
        return asdict(self)


finish_value(ParsedInput)


# -- the registry ----------------------------------------------------------------------------


@dataclass
class Scan:
    """The lines one parse walks, shared by the recognisers.

    Attributes:
        lines: The lines, ANSI codes and carriage returns removed, each at most
            :data:`MAX_LINE_CHARS` characters.
        nesting: How deep this scan is inside another (a traceback inside a JSON log line, the
            lines behind a syslog prefix); recognisers do not nest deeper than
            :data:`MAX_NESTING`.
    """

    lines: list[str]
    nesting: int = 0
    _headers: dict[int, _LogHeader | None] = field(default_factory=dict, repr=False)

    def log_header(self, index: int) -> _LogHeader | None:
        """The log header of line ``index`` (memoised: a record's end is the next one's start)."""
        if index not in self._headers:
            self._headers[index] = _parse_log_header(self.lines[index])
        return self._headers[index]


@dataclass
class Block:
    """What one recogniser read: a run of lines and the errors in it.

    Attributes:
        begin: The first line of the block (a recogniser may start before the line it was
            offered, never before the end of the previous block).
        end: The line after the block.
        kind: The kind of input the block shows.
        errors: The errors read.
        weak: The errors are only worth reporting when nothing else is found (log records
            below ``WARNING``, or without a level).
        omitted_errors: Errors the block knows of but does not hold.
    """

    begin: int
    end: int
    kind: str
    errors: list[ParsedError] = field(default_factory=list)
    weak: bool = False
    omitted_errors: int = 0


POSSESSIVE: Final = "+" if sys.version_info >= (3, 11) else ""
"""Put after a run's quantifier in a trigger to make the run possessive where the regex
engine can (Python 3.11 and later): a line that fails then fails without retrying every
shorter run. Use it only where what follows the run can never continue it; before 3.11 the
run stays greedy and matches the same lines, more slowly."""


@dataclass(frozen=True)
class Recogniser:
    """A named recogniser of one format.

    Attributes:
        name: A stable name (``python-traceback``).
        trigger: A regex for the start of a line (its first 256 characters) that may begin
            the format; lines that match no recogniser's trigger are skipped cheaply. A line
            never holds a line break, so a class need not exclude one (``[^:]`` runs much
            faster than a class that also excludes the line break).
        read: Reads a block at line ``start`` (not before line ``floor``) of a :class:`Scan`;
            returns None when the format is not there.
    """

    name: str
    trigger: str
    read: Callable[[Scan, int, int], Block | None]


RECOGNISERS: list[Recogniser] = []
"""The recognisers, tried in order at each line; the first that reads a block wins."""

_Readers = list[tuple[re.Pattern[str], Callable[[Scan, int, int], "Block | None"]]]


@dataclass
class _Triggers:
    """The compiled triggers of :data:`RECOGNISERS` (see :func:`_trigger`)."""

    union: re.Pattern[str]
    """Matches where any recogniser's trigger does."""
    readers: _Readers
    """Each recogniser's own trigger and reader, in registry order."""
    built_in: bool
    """The recognisers are the built-in ones, whose triggers :func:`_may_trigger` knows."""
    named: bool
    """The union's alternatives are groups named ``_r0``, ``_r1``, … in registry order (no
    trigger has groups of its own)."""
    following: dict[int, re.Pattern[str]] = field(default_factory=dict)
    """By position, the union of the triggers from that recogniser on, named alike (see
    :func:`_triggers_from`), made as they are needed."""


_trigger_cache: list[_Triggers] = []
"""The compiled triggers, made on first use after a registration."""


def register_recogniser(recogniser: Recogniser, *, before: str | None = None) -> None:
    """Add a recogniser to :data:`RECOGNISERS` (replacing one of the same name).

    Args:
        recogniser: The recogniser.
        before: The name of a recogniser to insert it before; at the end when None or absent.
    """
    RECOGNISERS[:] = [r for r in RECOGNISERS if r.name != recogniser.name]
    names = [r.name for r in RECOGNISERS]
    position = names.index(before) if before in names else len(RECOGNISERS)
    RECOGNISERS.insert(position, recogniser)
    _trigger_cache.clear()


def _trigger() -> _Triggers:
    """The triggers of the registered recognisers, compiled.

    When no trigger has groups of its own, the union's alternatives are groups named ``_r0``,
    ``_r1``, … in registry order: the group a match ends with (``lastgroup``) is the first
    recogniser whose trigger matches, so the ones before it need not be tried. (A group
    around a trigger with groups would renumber them: a back-reference would point
    elsewhere.)
    """
    if not _trigger_cache:
        own = [(re.compile(r.trigger), r.read) for r in RECOGNISERS]
        named = all(pattern.groups == 0 for pattern, _ in own)
        union = _union(0, named=named)
        built_in = tuple((r.name, r.trigger) for r in RECOGNISERS) == _BUILT_IN_TRIGGERS
        _trigger_cache.append(_Triggers(union, own, built_in, named))
    return _trigger_cache[0]


def _triggers_from(position: int) -> re.Pattern[str]:
    """The union of the triggers of the recognisers from ``position`` on.

    Its groups are named as :func:`_trigger`'s union's (used only when no trigger has groups
    of its own).
    """
    following = _trigger().following
    union = following.get(position)
    if union is None:
        union = following[position] = _union(position, named=True)
    return union


def _union(start: int, *, named: bool) -> re.Pattern[str]:
    """One expression of the triggers of the recognisers from ``start`` on.

    Its alternatives are named groups when ``named`` (see :func:`_trigger`); it never
    matches when there are none.
    """
    return re.compile(
        "|".join(
            f"(?P<_r{n}>{RECOGNISERS[n].trigger})" if named else f"(?:{RECOGNISERS[n].trigger})"
            for n in range(start, len(RECOGNISERS))
        )
        or "(?!)"
    )


_BUILT_IN_TRIGGERS: tuple[tuple[str, str], ...] = ()
"""Each built-in recogniser's name and trigger, in registry order (set once they are all
registered, at the end of this module)."""

_MAY_START: Final[tuple[str, ...]] = (
    "thread '",
    "panic: ",
    "fatal error: ",
    "goroutine ",
    "runtime stack:",
)
"""The built-in triggers' texts that a line starting with a lowercase letter can begin with."""

_MAY_START_CAPITAL: Final[tuple[str, ...]] = (
    'Exception in thread "',
    "Uncaught ",
    "FAILED ",
    "E ",
    "E\t",
    "Cell In",
    "Input In",
    "Stacktrace ",
    'File "',
    'Module "',
    "The above exception was the direct cause",
    "During handling of the above exception",
    "CRITICAL",
    "FATAL",
    "ERROR",
    "WARN",
    "INFO",
    "DEBUG",
    "EXCEPTION",
    "NOTICE",
    "TRACE",
    "SEVERE",
)
"""Those that a line starting with a capital letter can begin with (but for shapes, see
:func:`_may_trigger`)."""

_MAY_HOLD: Final[tuple[str, ...]] = ("|", ": (", "Traceback", " - ")
"""Texts one of which most other built-in triggers need in a line that starts with a letter
(see :func:`_may_trigger`)."""

_SOURCE_LINE: Final = re.compile(r"\.py[iwx]?:\d")
"""A Python file and line (``app.py:3``), which Python's warning and pytest's lines hold."""


def _may_trigger(head: str) -> bool:
    """Whether a built-in recogniser's trigger may match a line (False: none can).

    One expression of all the triggers costs about 2 µs a line, tried alternative after
    alternative, and most one-line pastes are a message that starts with a word, which few
    triggers can match. Those begin with a given word (Rust's ``thread '``, a log's ``ERROR``,
    pytest's ``E``), have a first word with a dot (a Java class, a Go path), an ``=`` (a log's
    ``level=error``) or, after a capital, a colon (``Error:``), need a text the line lacks
    (a ``|`` of a relayed log, ``: (`` of a Django check, ``Traceback``, `` - `` of a log
    line, or a Python file and line, ``app.py:3``), or end with a colon and a number (Node's
    ``file:line``). After a capital letter, a few shapes too: one token (a Node class alone),
    a first word followed by `` [`` (``Error [ERR_X]:``), a level letter and digits
    (``E0102``), a syslog date (``Jan  2 …``). A test checks it on lines each trigger matches,
    made by hypothesis from the triggers themselves.

    Args:
        head: The line's first characters (as triggers see them), without leading blanks.
    """
    first = head[:1]
    code = ord(first) if first else 0  # compared as a number: no string comparison
    space = head.find(" ")
    word = head if space < 0 else head[:space]
    if 97 <= code <= 122:  # a to z
        if head.startswith(_MAY_START):
            return True
    elif 65 <= code <= 90:  # A to Z
        if (
            head.startswith(_MAY_START_CAPITAL)
            or ":" in word
            or space < 0
            or head[space : space + 2] == " ["
            or (first in "IWEF" and head[1:2].isdecimal())
            or (space == 3 and (head[4:5] == " " or head[4:5].isdecimal()))
        ):
            return True
    else:
        return True
    for text in _MAY_HOLD:
        if text in head:
            return True
    if "." in word or "=" in word or (".py" in head and _SOURCE_LINE.search(head)):
        return True
    # ``:\d+\Z``: the digits ``\d`` matches are those ``str.isdecimal`` accepts.
    end = len(head)
    while end and head[end - 1].isdecimal():
        end -= 1
    return end < len(head) and head[end - 1 : end] == ":"


# -- shared patterns and helpers -------------------------------------------------------------

_ANSI: Final = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[()][0-9A-Za-z]|[@-Z\\-_])"
)
_BARE_SGR: Final = re.compile(r"\[(?:\d{1,3};){0,8}\d{1,3}m")

_CLASS_LINE: Final = re.compile(
    r"(?P<cls>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?::[ \t]?(?P<msg>.*))?\Z"
)
_FRAME: Final = re.compile(
    r'[ \t]*(?:File|Module) "(?P<path>[^"\n]*)", line (?P<line>\d+)(?:, in (?P<func>.*))?\Z'
)
_TB_HEADERS: Final = frozenset(
    {
        "Traceback (most recent call last):",
        "Exception Group Traceback (most recent call last):",
        "Stacktrace (most recent call last):",
    }
)
_CHAIN: Final = {
    "The above exception was the direct cause of the following exception:": "cause",
    "During handling of the above exception, another exception occurred:": "context",
}
_REPEATED: Final = re.compile(r"\[Previous line repeated (\d+) more times?\]\Z")
_ADDITIONAL: Final = re.compile(
    r"(?:\.\.\.\s*)?\(?(\d+) additional frames?(?:\(s\))? (?:were|was) not displayed\)?\Z"
)
_MORE_EXCEPTIONS: Final = re.compile(r"and (\d+) more exceptions?\Z")
_NOTE_START: Final = re.compile(r"(?:Note|NOTE|Hint|HINT|Help|HELP|Tip|TIP)\b")
_BREAK: Final = re.compile(
    r"(?:Traceback|Stacktrace) \(most recent call last\):"
    r"|[ \t]*(?:File|Module) \"[^\"\n]*\", line \d"
    r"|\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
    r"|\[?\d{4}/\d{2}/\d{2} \d{2}:\d{2}"
    r"|\[\d{2}/[A-Z][a-z]{2}/\d{4}"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} "
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}"
    r"|(?:CRITICAL|ERROR|WARNING|INFO|DEBUG):(?:[\w.]+:|[ \t]{2,})"
    r"|\[(?:CRITICAL|ERROR|WARNING|INFO|DEBUG|critical|error|warning|info|debug)\] "
    r"|\{\""
    r"|-{20,}[ \t]*\Z"
    r"|={3,} |_{3,} "
    r"|>>>"
    r"|(?:START|END|REPORT) RequestId: "
    r"|[A-Za-z_][\w.]*[ \t]+Traceback \(most recent call last\)"
    r"|[ \t]*\+ Exception Group Traceback"
)
_DEF: Final = re.compile(r"[> \t]*(?:async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*[(\[]")

BUILTIN_EXCEPTIONS: Final = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
"""The names of Python's own exception classes."""

_CLASS_SUFFIXES: Final[tuple[str, ...]] = (
    "Error",
    "Exception",
    "Warning",
    "Exit",
    "Interrupt",
    "Failure",
    "Fault",
    "Violation",
    "Timeout",
    "Refused",
    "Denied",
    "NotFound",
    "Unavailable",
    "Invalid",
    "Forbidden",
    "Unauthorized",
    "Cancelled",
    "Canceled",
    "Aborted",
    "Group",
)


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor moves, hyperlinks) from text.

    Colour codes whose escape character was lost in copying (``[0;31m``) are removed too when
    the text has at least two of them.

    Args:
        text: Any text.

    Returns:
        The text without escape sequences.
    """
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "m" in text and "[" in text:
        found = _BARE_SGR.findall(text, 0, len(text))
        if len(found) >= 2:
            text = _BARE_SGR.sub("", text)
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _is_break(line: str) -> bool:
    return _BREAK.match(line[:_HEAD_CHARS]) is not None


def _is_marker(text: str) -> bool:
    """Whether a stripped line is a 3.11+ ``^^^``/``~~~`` position marker (or a caret)."""
    return bool(text) and not text.strip("^~ \t")


def _next_nonblank(lines: Sequence[str], start: int, limit: int) -> int | None:
    end = min(len(lines), start + limit + 1)
    for j in range(start, end):
        if lines[j].strip():
            return j
    return None


def _after_paragraph(lines: Sequence[str], start: int) -> str | None:
    """The first line after the paragraph that starts at ``start`` (and its blank lines)."""
    end = start
    while end < len(lines) and lines[end].strip():
        end += 1
    following = _next_nonblank(lines, end, 3)
    return None if following is None else lines[following]


def _looks_like_class(name: str) -> bool:
    """Whether a name written before ``:`` is an exception class rather than a word."""
    if len(name) > 200:
        return False
    last = name.rsplit(".", 1)[-1]
    if not last or last.isupper():
        return False
    if last in BUILTIN_EXCEPTIONS:
        return True
    if last[0].isupper() and last.endswith(_CLASS_SUFFIXES):
        return True
    if "." in name:
        return last[0].isupper() or last.lower().endswith(("error", "exception", "timeout"))
    return last[0].isupper() and last.isalnum() and any(c.isupper() for c in last[1:])


def _split_class(text: str, *, strict: bool) -> tuple[str | None, str]:
    """Split ``Class: message`` (or a lone ``Class``); return (qualified class, message)."""
    colon = text.find(":")
    if text.find(" ", 0, len(text) if colon < 0 else colon) >= 0:
        # A class runs to the first colon, or to the end, without a blank: most messages
        # fail here, where the expression tries each end of their first word before failing.
        return None, text
    match = _CLASS_LINE.match(text)
    if match is None:
        return None, text
    cls = match["cls"]
    if strict and not _looks_like_class(cls):
        return None, text
    if not strict and match["msg"] is None and not _looks_like_class(cls) and "_" not in cls:
        # A lone word after a traceback is a class only when it looks like one ("Exit").
        return None, text
    return cls, (match["msg"] or "").strip()


def _bare(cls: str | None) -> str | None:
    return cls.rsplit(".", 1)[-1] if cls else None


def _function(name: str | None) -> str | None:
    """Normalise a displayed function (``fn(a, b)`` → ``fn``; ``<cell line: 5>()`` kept)."""
    if name is None:
        return None
    name = name.strip()
    if not name:
        return None
    if name.startswith("<"):
        close = name.find(">")
        return name[: close + 1] if close > 0 else name
    return name.split("(", 1)[0].strip() or None


def _int(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 9:
        return None
    return int(text)


# -- building one error ----------------------------------------------------------------------


class _Builder:
    """Accumulates one error while a recogniser reads it."""

    def __init__(self, relation: str | None = None, *, headerless: bool = False) -> None:
        self.relation = relation
        self.headerless = headerless
        self.cls: str | None = None
        self.location_class: str | None = None
        self.has_exception = False
        self.message: list[str] = []
        self.chars = 0
        self.notes: list[str] = []
        self.head: list[Frame] = []
        self.tail: deque[Frame] = deque(maxlen=MAX_FRAMES - _FRAME_HEAD)
        self.frame_count = 0
        self.omitted = 0
        self.pending: list[Any] | None = None
        self.truncated = False
        self.paragraphs = False
        self.exception_first = False
        self.level: str | None = None
        self.logger: str | None = None
        self.depth = 0

    # frames

    def add_frame(
        self, path: str, line: int | None, function: str | None, source: str | None = None
    ) -> None:
        self.flush_frame()
        self.pending = [path, line, function, [source] if source else []]
        self.frame_count += 1

    def add_source(self, text: str) -> None:
        if self.pending is not None and len(self.pending[3]) < 20:
            self.pending[3].append(text)

    def set_frame_line(self, line: int | None, source: str | None) -> None:
        """Fill the pending frame's line (when its header had none) and source."""
        if self.pending is None:
            return
        if self.pending[1] is None:
            self.pending[1] = line
        if source and not self.pending[3]:
            self.pending[3].append(source)

    def flush_frame(self) -> None:
        if self.pending is None:
            return
        path, line, function, source = self.pending
        self.pending = None
        frame = Frame(path, line, function, "\n".join(source) if source else None)
        if len(self.head) < _FRAME_HEAD:
            self.head.append(frame)
            return
        if len(self.tail) == self.tail.maxlen:
            self.omitted += 1
        self.tail.append(frame)

    # message and notes

    def set_exception(self, text: str, *, strict: bool = False) -> None:
        self.flush_frame()
        cls, message = _split_class(text.strip(), strict=strict)
        self.cls = cls
        self.message = [message]
        self.chars = len(message)
        self.has_exception = True
        self.paragraphs = not message
        if self.headerless and self.frame_count == 0:
            self.exception_first = True

    def set_message(self, cls: str | None, message: str) -> None:
        self.cls = cls
        self.message = [message]
        self.chars = len(message)
        self.has_exception = True

    def add_line(self, line: str) -> None:
        """Add a line after the exception line: more message, or a note."""
        stripped = line.strip()
        if self.notes or (stripped and _NOTE_START.match(stripped)):
            if _NOTE_START.match(stripped) or not self.notes:
                if len(self.notes) < MAX_NOTES:
                    self.notes.append(stripped)
                else:
                    self.truncated = True
            else:
                self.notes[-1] += "\n" + stripped
            return
        if len(self.message) >= MAX_MESSAGE_LINES or self.chars >= MAX_MESSAGE_CHARS:
            self.truncated = True
            return
        self.message.append(line.rstrip())
        self.chars += len(line) + 1

    def wants_paragraph(self) -> bool:
        """Whether a blank line may be inside the message.

        It may when the exception line had no text (the message is all in the paragraphs
        below it, as NumPy's ``ImportError``) or the message so far ends with ``:``.
        """
        if self.notes or len(self.message) >= MAX_MESSAGE_LINES:
            return False
        return self.paragraphs or "\n".join(self.message).rstrip().endswith(":")

    def takes_paragraph(self, first: str, after: str | None) -> bool:
        """Whether the paragraph starting with line ``first`` goes on a traceback's message.

        Python prints the message whole, blank lines and all (pydantic's hints, the "For
        further information visit …" line): after frames, a paragraph is more message
        unless it starts something else (another ``Class: …``) or is followed, ``after``
        it, by a traceback or a log line (what a user wrote between two tracebacks). Text
        a user wrote under the last traceback joins it; explain also matches a message's
        leading paragraphs on their own.
        """
        if self.wants_paragraph():
            return True
        if self.notes or not self.frame_count or len(self.message) >= MAX_MESSAGE_LINES:
            return False
        if after is not None and _is_break(after):
            return False
        return _split_class(first.strip(), strict=True)[0] is None

    def is_empty(self) -> bool:
        return not self.has_exception and self.frame_count == 0 and self.pending is None

    def build(self, *, depth: int = 0) -> ParsedError:
        self.flush_frame()
        frames = [*self.head, *self.tail]
        if self.exception_first:
            frames.reverse()
        message = "\n".join(self.message).strip("\n")
        message = message.strip() if "\n" not in message else message.rstrip()
        truncated = self.truncated
        if len(message) > MAX_MESSAGE_CHARS:
            message = message[:MAX_MESSAGE_CHARS] + "…"
        if message.endswith(("...", "…")):
            truncated = True
        cls = self.cls if self.cls is not None else self.location_class
        # A log record without an exception class is classed by its level (``ERROR``).
        error_class = _bare(cls) if cls is not None else self.level
        return ParsedError(
            error_class=error_class,
            qualified_class=cls,
            message=message,
            frames=tuple(frames),
            notes=tuple(self.notes),
            relation=self.relation,
            truncated=truncated,
            depth=depth or self.depth,
            level=self.level,
            logger=self.logger,
            omitted_frames=self.omitted,
        )


# -- CPython tracebacks ----------------------------------------------------------------------

_START: Final = 0
_FRAMES: Final = 1
_FRAME_SRC: Final = 2
_MESSAGE: Final = 3
_BETWEEN: Final = 4
_AFTER: Final = 5

_QUOTE_CLOSES: Final = frozenset({'"""', "'''"})
"""Lines that close a traceback another error's message quotes (``RemoteTraceback``)."""


def _box_line(line: str) -> tuple[str, int, str] | None:
    """Classify a line of an ``ExceptionGroup`` box: (kind, depth, text) or None.

    Content lines are ``'  ' * depth + '| ' + text`` (``'+ '`` for the top-level header);
    separators ``+-+---------------- 1 ----------------`` and ``+---------------- 2 ---…``;
    the closing line ``+------------------------------------``. For separators and closing
    lines the depth is that of the sub-exceptions they delimit.
    """
    line = line.rstrip()
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if indent % 2 or not stripped or stripped[0] not in "|+":
        return None
    depth = indent // 2
    if stripped == "|":
        return ("content", depth, "")
    if stripped.startswith(("| ", "+ ")):
        return ("content", depth, stripped[2:])
    if stripped.startswith("+-+-"):
        title = stripped[3:].strip("- ")
        if title.isdigit() or title == "...":
            return ("sep", depth + 1, title)
        return None
    if stripped.startswith("+----"):
        title = stripped[1:].strip("- ")
        if not title:
            return ("close", depth, "")
        if title.isdigit() or title == "...":
            return ("sep", depth, title)
    return None


def _is_group_start(line: str) -> bool:
    box = _box_line(line)
    if box is None or box[0] != "content":
        return False
    text = box[2].strip()
    return text == "Exception Group Traceback (most recent call last):" or (
        text.endswith(("sub-exceptions)", "sub-exception)")) and ": " in text
    )


def _parse_box(
    entries: Sequence[tuple[str, int, str]], depth: int, top: int, level: int
) -> tuple[list[ParsedError], int]:
    """Read the errors of an ``ExceptionGroup`` box at one depth, then of its members.

    ``level`` counts the boxes being read (it bounds the recursion, whatever the margins).
    """
    own: list[str] = []
    subs: list[list[tuple[str, int, str]]] = []
    current: list[tuple[str, int, str]] | None = None
    for entry in entries:
        kind, at, _ = entry
        if kind == "sep" and at == depth + 1:
            current = []
            subs.append(current)
        elif kind == "close" and at == depth + 1:
            current = None
        elif current is not None:
            current.append(entry)
        elif kind == "content" and at == depth:
            own.append(entry[2])
    errors = _read_traceback_lines(own, depth - top, level)
    omitted = 0
    for sub in subs:
        texts = [text.strip() for kind, _, text in sub if kind == "content" and text.strip()]
        more = _MORE_EXCEPTIONS.match(texts[0]) if texts else None
        if more is not None:
            omitted += int(more[1])
            continue
        if not texts:
            continue
        if level >= MAX_GROUP_DEPTH:
            omitted += 1
            continue
        found, dropped = _parse_box(sub, depth + 1, top, level + 1)
        omitted += dropped
        if found and found[0].relation is None:
            found[0] = replace(found[0], relation="group")
        errors.extend(found)
    return errors, omitted


def _read_traceback_lines(lines: Sequence[str], depth: int, level: int) -> list[ParsedError]:
    """Read every traceback in lines that hold nothing else (the inside of a box)."""
    reader = _TracebackReader(lines, depth, level)
    position = 0
    while position < len(lines):
        end = reader.read(position, _BETWEEN)
        position = end if end > position else position + 1
    return reader.out


class _TracebackReader:
    """Reads a CPython traceback and its chain, line by line."""

    def __init__(self, lines: Sequence[str], depth: int = 0, level: int = 0) -> None:
        self.lines = lines
        self.depth = depth
        self.level = level
        self.out: list[ParsedError] = []
        self.cur: _Builder | None = None
        self.relation: str | None = None
        self.base = 0
        self.omitted_errors = 0

    def finish(self) -> None:
        if self.cur is not None and not self.cur.is_empty():
            self.out.append(self.cur.build(depth=self.depth))
        self.cur = None

    def new(self, *, headerless: bool) -> _Builder:
        self.finish()
        self.cur = _Builder(self.relation, headerless=headerless)
        self.relation = None
        return self.cur

    def read(self, start: int, state: int) -> int:  # noqa: C901 - one state machine
        """Read from ``start`` in ``state``; return the index of the first line not read."""
        lines = self.lines
        count = len(lines)
        i = start
        while i < count:
            raw = lines[i]
            text = raw.strip()
            if not text:
                if state in (_MESSAGE, _AFTER):
                    j = _next_nonblank(lines, i + 1, 3)
                    if j is not None and lines[j].strip() in _CHAIN:
                        i = j
                        continue
                    cur = self.cur
                    if (
                        state == _MESSAGE
                        and j is not None
                        and cur is not None
                        and not _is_break(lines[j])
                        and cur.takes_paragraph(lines[j], _after_paragraph(lines, j))
                    ):
                        cur.add_line("")
                        i += 1
                        continue
                    break
                if state in (_FRAMES, _FRAME_SRC):
                    j = _next_nonblank(lines, i + 1, 2)
                    if j is None:
                        break
                    after = lines[j]
                    if not (_FRAME.match(after) or not _is_break(after)):
                        break
                i += 1
                continue
            if text in _TB_HEADERS:
                if state not in (_START, _BETWEEN) and not (
                    state == _FRAMES and self.cur is not None and self.cur.frame_count == 0
                ):
                    if state == _AFTER:
                        break
                    self.finish()
                self.new(headerless=False)
                self.base = _indent(raw)
                state = _FRAMES
                i += 1
                continue
            relation = _CHAIN.get(text)
            if relation is not None:
                self.finish()
                self.relation = relation
                state = _BETWEEN
                i += 1
                continue
            if (
                state in (_START, _BETWEEN)
                and self.level < MAX_GROUP_DEPTH
                and _is_group_start(raw)
            ):
                i = self.read_box(i)
                state = _AFTER
                continue
            frame = _FRAME.match(raw)
            if frame is not None:
                if state == _AFTER:
                    break
                cur = self.cur
                attach = cur is not None and (
                    state in (_FRAMES, _FRAME_SRC) or (state == _MESSAGE and cur.exception_first)
                )
                if not attach:
                    cur = self.new(headerless=True)
                    self.base = max(0, _indent(raw) - 2)
                assert cur is not None
                cur.add_frame(frame["path"], _int(frame["line"]), _function(frame["func"]))
                state = _FRAME_SRC
                i += 1
                continue
            repeated = _REPEATED.match(text)
            if repeated is not None and self.cur is not None:
                self.cur.omitted += int(repeated[1])
                i += 1
                continue
            additional = _ADDITIONAL.match(text) if "additional frame" in text else None
            if additional is not None and state != _AFTER:
                cur = self.cur or self.new(headerless=True)
                cur.omitted += int(additional[1])
                i += 1
                continue
            if text == "..." and state in (_FRAMES, _FRAME_SRC):
                i += 1
                continue
            indent = _indent(raw)
            if state in (_FRAMES, _FRAME_SRC) and indent > self.base:
                if state == _FRAME_SRC and self.cur is not None and not _is_marker(text):
                    self.cur.add_source(text)
                i += 1
                continue
            if state in (_FRAMES, _FRAME_SRC, _BETWEEN, _START):
                if _is_break(raw):
                    break
                cur = self.cur
                if cur is None or cur.has_exception:
                    cur = self.new(headerless=True)
                cur.set_exception(text)
                state = _MESSAGE
                i += 1
                continue
            if state == _MESSAGE and self.cur is not None:
                if _is_break(raw) or _is_group_start(raw):
                    break
                if text in _QUOTE_CLOSES:
                    # The end of a traceback quoted in another error's message:
                    # multiprocessing's ``RemoteTraceback`` (joblib's, concurrent.futures').
                    self.finish()
                    state = _BETWEEN
                    i += 1
                    continue
                self.cur.add_line(raw)
                i += 1
                continue
            break
        self.finish()
        return i

    def read_box(self, start: int) -> int:
        """Read an ``ExceptionGroup`` box starting at ``start``; return the line after it."""
        lines = self.lines
        entries: list[tuple[str, int, str]] = []
        i = start
        while i < len(lines):
            entry = _box_line(lines[i])
            if entry is None:
                break
            entries.append(entry)
            i += 1
        top = entries[0][1]
        errors, omitted = _parse_box(entries, top, top - self.depth, self.level + 1)
        self.omitted_errors += omitted
        if errors and self.relation is not None:
            errors[0] = replace(errors[0], relation=self.relation)
        self.relation = None
        self.out.extend(errors)
        return i


def _chain_lookback(lines: Sequence[str], start: int, floor: int) -> int:
    """Before a chain sentence, find the exception line of a cause shown without traceback."""
    j = start - 1
    while j >= floor and j > start - 4 and not lines[j].strip():
        j -= 1
    if j < floor or not lines[j].strip():
        return start
    top = j
    while top - 1 >= floor and top > j - 30 and lines[top - 1].strip():
        top -= 1
    first = lines[top]
    if _indent(first) == 0 and _split_class(first.strip(), strict=False)[0] is not None:
        return top
    return start


def _frame_lookback(lines: Sequence[str], start: int, floor: int) -> int:
    """Before frames with no header, find an exception line printed first (Sentry, newest first)."""
    j = start - 1
    while j >= floor and j > start - 4:
        text = lines[j].strip()
        if text and not _ADDITIONAL.match(text):
            break
        j -= 1
    if j < floor or j <= start - 4:
        return start
    line = lines[j]
    if _indent(line) == 0 and _split_class(line.strip(), strict=True)[0] is not None:
        return j
    return start


def _read_python(scan: Scan, start: int, floor: int) -> Block | None:
    lines = scan.lines
    raw = lines[start]
    text = raw.strip()
    begin, state = start, _START
    if text in _TB_HEADERS or _is_group_start(raw):
        pass
    elif text in _CHAIN:
        begin = _chain_lookback(lines, start, floor)
        state = _BETWEEN if begin < start else _START
    elif _FRAME.match(raw):
        begin = _frame_lookback(lines, start, floor)
        state = _BETWEEN if begin < start else _START
    else:
        return None
    reader = _TracebackReader(lines)
    end = reader.read(begin, state)
    if end <= start:
        return None
    return Block(begin, end, "traceback", reader.out, omitted_errors=reader.omitted_errors)


# -- Python warnings -------------------------------------------------------------------------

_WARNING_LINE: Final = re.compile(
    r"[ \t]*(?P<path>(?:[A-Za-z]:)?[^:\n]+?\.py[iwx]?|<[^>\n]{1,200}>):(?P<line>\d+): "
    r"(?P<cls>[A-Za-z_][\w.]*Warning):(?: (?P<msg>.*))?\Z"
)

MAX_WARNING_LINES: Final = 40
"""At most this many lines of a warning's message are read before its source line."""


def _warning_source(lines: Sequence[str], start: int, stop: int) -> int | None:
    """The line of the source ``warnings.formatwarning`` prints after a message of many lines.

    It prints ``path:line: Category: message`` and then the source line stripped, indented by
    two spaces; a message may run over lines of its own (sklearn's ``ConvergenceWarning``,
    pandas' ``SettingWithCopyWarning``, whose first line is empty). None when no such line
    comes before ``stop`` (see :func:`_warning_stop`).
    """
    indent = " " * (_indent(lines[start]) + 2)
    for number in range(start + 1, stop):
        raw = lines[number]
        if raw.startswith(indent) and raw[len(indent) : len(indent) + 1].strip():
            return number
    return None


def _warning_stop(lines: Sequence[str], start: int) -> int:
    """Where the lines that may follow a warning's first line stop.

    At another warning, a traceback, or :data:`MAX_WARNING_LINES` lines on.
    """
    last = min(len(lines), start + 1 + MAX_WARNING_LINES)
    for number in range(start + 1, last):
        raw = lines[number]
        if _WARNING_LINE.match(raw) is not None or raw.strip() in _TB_HEADERS:
            return number
    return last


# -- Django's system checks ------------------------------------------------------------------

_CHECK_LINE: Final = re.compile(
    r"(?P<obj>[^:\n]*?): \((?P<id>[a-z_]\w*(?:\.[a-z_]\w*)*\.(?P<level>[CEWID])\d{3})\) "
    r"(?P<msg>.*\S)\s*\Z"
)
_CHECK_LEVELS: Final = {"C": "Critical", "E": "Error", "W": "Warning", "I": "Info", "D": "Debug"}
"""The check class each id letter stands for (``fields.E304`` is an ``Error``)."""


def _read_check(scan: Scan, start: int, floor: int) -> Block | None:
    """A message of Django's system checks: ``obj: (fields.E304) message``, then its hint.

    ``manage.py check`` and a ``SystemCheckError`` print each as one line, the hint on the
    next (a tab, then ``HINT: …``). The check's class (``Error``, ``Warning`` …, as
    ``checks.Error(msg, id="fields.E304")`` makes it) comes from the id's letter; the object
    it names, before the id, is not part of the message.
    """
    match = _CHECK_LINE.match(scan.lines[start])
    if match is None:
        return None
    builder = _Builder()
    builder.set_message(_CHECK_LEVELS[match["level"]], match["msg"])
    end = start + 1
    lines = scan.lines
    if end < len(lines) and lines[end].strip().startswith("HINT:"):
        builder.notes.append(lines[end].strip())
        end += 1
    return Block(start, end, "message", [builder.build()])


def _read_warning(scan: Scan, start: int, floor: int) -> Block | None:
    match = _WARNING_LINE.match(scan.lines[start])
    if match is None:
        return None
    builder = _Builder()
    builder.level = "WARNING"
    source = None
    message = (match["msg"] or "").strip()
    end = start + 1
    lines = scan.lines
    if end < len(lines) and _indent(lines[end]) == _indent(lines[start]) + 2 and lines[end].strip():
        # The source line: two spaces in. A message's own lines may be indented otherwise
        # (gradio's "    Output components:", FastAPI's deprecation text after an empty first
        # line), and go on to the source line further down.
        source = lines[end].strip()
        end += 1
    else:
        stop = _warning_stop(lines, start)
        found = _warning_source(lines, start, stop)
        if found is not None:
            message = "\n".join([message, *lines[end:found]]).strip()
            source = lines[found].strip()
            end = found + 1
        elif not message:
            # The message starts on the next line, and the paste stops before the source.
            message = "\n".join(lines[end:stop]).strip()
            end = stop
    builder.add_frame(match["path"], _int(match["line"]), None, source)
    builder.set_message(match["cls"], message)
    return Block(start, end, "message", [builder.build()])


# -- pytest ----------------------------------------------------------------------------------

_PYTEST_LOCATION: Final = re.compile(
    r"(?P<path>(?:[A-Za-z]:)?[^:\n]+?\.(?:py[iwx]?|rst|txt|md)|<[^>\n]{1,200}>):(?P<line>\d+):"
    r"(?: (?P<rest>.*))?\Z"
)
_PYTEST_SUMMARY: Final = re.compile(r"(?P<what>FAILED|ERROR) (?P<node>\S+)(?: - (?P<msg>.*))?\Z")
_PYTEST_SESSION_END: Final = re.compile(
    r"\d+ (?:failed|passed|error|errors|skipped|xfailed|xpassed|deselected|warnings?)\b"
)


def _rule(text: str) -> tuple[str, str] | None:
    """A pytest rule line (``=== FAILURES ===``, ``___ test_x ___``): (character, title)."""
    if len(text) < 7 or text[0] not in "=_-" or text[:3] != text[0] * 3 or text[-1] != text[0]:
        return None
    return text[0], text.strip(text[0] + " ")


def _is_pytest_start(lines: Sequence[str], start: int) -> bool:
    raw = lines[start]
    text = raw.strip()
    rule = _rule(text)
    if rule is not None:
        char, title = rule
        if char == "=":
            return title in ("FAILURES", "ERRORS") or title.startswith(
                ("short test summary", "test session starts")
            )
        if char == "_":
            return bool(title) and not title.startswith("_ _")
        return False
    if raw.startswith("E ") and raw[1:].strip() and _indent(raw[1:]) >= 2:
        return True
    if raw.startswith(">   "):
        return any(lines[j].startswith("E ") for j in range(start + 1, min(len(lines), start + 8)))
    if _PYTEST_SUMMARY.match(raw) and "::" in raw.split(" ", 2)[1]:
        return True
    location = _PYTEST_LOCATION.match(raw)
    if location is None:
        return False
    rest = location["rest"] or ""
    if rest.startswith(("in ", "assert ")):
        return True
    # --tb=line: "path:line: Class: message"
    cls, message = _split_class(rest, strict=True)
    return cls is not None and bool(message)


class _PytestReader:
    """Reads pytest failure output: tests, entries, ``E`` lines and location lines."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.out: list[ParsedError] = []
        self.summary: list[ParsedError] = []
        self.cur: _Builder | None = None
        self.relation: str | None = None
        self.pending_source: str | None = None
        self.pending_def: str | None = None
        self.e_indent = 0
        self.e_open = False
        self.source_open = False

    def finish(self) -> None:
        if self.cur is not None and not self.cur.is_empty():
            self.out.append(self.cur.build())
        self.cur = None
        self.e_open = False
        self.source_open = False

    def builder(self) -> _Builder:
        if self.cur is None:
            self.cur = _Builder(self.relation)
            self.relation = None
        return self.cur

    def read(self, start: int) -> int:  # noqa: C901 - one state machine
        lines = self.scan.lines
        i = start
        quiet = 0
        while i < len(lines):
            raw = lines[i]
            text = raw.strip()
            if quiet > 500:
                break
            if not text:
                self.source_open = False
                self.e_open = False
                i += 1
                continue
            quiet += 1
            rule = _rule(text)
            if rule is not None:
                char, title = rule
                if char == "_" and title.startswith("_ _"):
                    self.pending_source = self.pending_def = None
                    i += 1
                    continue
                if char == "-" and title.startswith("Captured"):
                    self.finish()
                    i = self.captured(i + 1)
                    quiet = 0
                    continue
                self.finish()
                self.relation = None
                self.pending_source = self.pending_def = None
                if char == "=" and not (
                    title in ("FAILURES", "ERRORS")
                    or title.startswith(("short test summary", "test session starts"))
                ):
                    if _PYTEST_SESSION_END.match(title):
                        i += 1
                    break
                quiet = 0
                i += 1
                continue
            relation = _CHAIN.get(text)
            if relation is not None:
                self.finish()
                self.relation = relation
                quiet = 0
                i += 1
                continue
            if text == "Traceback (most recent call last):" or _is_group_start(raw):
                # A test that raised an exception group shows its box instead of a traceback.
                reader = _TracebackReader(lines)
                reader.relation = self.relation
                self.finish()
                self.relation = None
                end = reader.read(i, _START)
                self.out.extend(reader.out)
                i = max(end, i + 1)
                quiet = 0
                continue
            if raw.startswith("E") and (len(raw) == 1 or raw[1] in " \t"):
                self.e_line(raw[1:])
                quiet = 0
                i += 1
                continue
            if raw.startswith(">") and self.e_open:
                # A repr pytest prints with flow markers under its ``E`` line (a missing
                # fixture's "available fixtures: …"): the message goes on.
                self.e_line(raw[1:])
                quiet = 0
                i += 1
                continue
            self.e_open = False
            summary = _PYTEST_SUMMARY.match(raw)
            if summary is not None:
                self.add_summary(summary)
                quiet = 0
                i += 1
                continue
            location = _PYTEST_LOCATION.match(raw)
            if location is not None:
                self.location(location)
                quiet = 0
                i += 1
                continue
            if raw.startswith(">"):
                if self.pending_source is None:
                    self.pending_source = raw[1:].strip()
                quiet = 0
            elif (
                self.source_open
                and raw[:1] in " \t"
                and self.cur is not None
                and not _is_marker(text)
            ):
                self.cur.add_source(text)
            definition = _DEF.match(raw)
            if definition is not None and raw[:1] in " \t>":
                self.pending_def = definition["name"]
            i += 1
        self.finish()
        return i

    def captured(self, start: int) -> int:
        """Read a ``Captured log/stdout/stderr`` section: keep its log records at WARNING+."""
        lines = self.scan.lines
        i = start
        while i < len(lines) and _rule(lines[i].strip()) is None:
            header = self.scan.log_header(i) if lines[i].strip() else None
            if header is not None and header.level in _REPORTED_LEVELS:
                self.out.append(_log_builder(header).build())
            i += 1
        return i

    def e_line(self, text: str) -> None:
        cur = self.cur
        if cur is not None and cur.has_exception and not self.e_open:
            self.finish()
            cur = None
        cur = self.builder()
        if not cur.has_exception:
            self.e_indent = _indent(text)
            cur.set_exception(text.strip())
        else:
            prefix = text[: self.e_indent]
            cur.add_line(text[self.e_indent :] if not prefix.strip() else text.strip())
        self.e_open = True
        self.source_open = False

    def location(self, match: re.Match[str]) -> None:
        rest = (match["rest"] or "").strip()
        path, line = match["path"], _int(match["line"])
        if rest.startswith("in "):
            cur = self.builder()
            if cur.has_exception:
                self.finish()
                cur = self.builder()
            cur.add_frame(path, line, _function(rest[3:]))
            self.source_open = True
            return
        self.source_open = False
        cls, message = _split_class(rest, strict=False)
        if rest.startswith("assert "):
            cls, message = "AssertionError", rest
        if rest and cls is not None and message:
            # --tb=line: "path:line: Class: message" ("assert …" for a rewritten assert)
            self.finish()
            builder = self.builder()
            builder.add_frame(path, line, None)
            builder.set_message(cls, message)
            self.finish()
            return
        cur = self.builder()
        cur.add_frame(path, line, self.pending_def, self.pending_source)
        if cls is not None and not message:
            cur.location_class = _bare(cls)
            if not cur.has_exception:
                cur.has_exception = True
        self.pending_source = self.pending_def = None

    def add_summary(self, match: re.Match[str]) -> None:
        node = match["node"]
        path, _, rest = node.partition("::")
        function = rest.rsplit("::", 1)[-1].split("[", 1)[0] or None if rest else None
        builder = _Builder()
        builder.add_frame(path, None, function)
        message = match["msg"]
        if message is not None:
            builder.set_exception(message)
            # The summary shows the message's first line only (and cuts that at the width).
            builder.truncated = True
        self.summary.append(builder.build())


def _read_pytest(scan: Scan, start: int, floor: int) -> Block | None:
    if not _is_pytest_start(scan.lines, start):
        return None
    reader = _PytestReader(scan)
    end = reader.read(start)
    if end <= start:
        return None
    # A failure pytest shows without a traceback (``fail(msg, pytrace=False)``: a fixture's
    # ScopeMismatch) leaves only locations: the summary line tells its class and message.
    errors = [e for e in reader.out if e.error_class or e.message]
    if len(errors) < len(reader.out):
        shown = [e.message for e in errors]
        errors += [
            summary
            for summary in reader.summary
            if not any(m.startswith(summary.message.removesuffix("...")) for m in shown)
        ]
    return Block(start, end, "pytest", errors or reader.summary)


# -- IPython / Jupyter -----------------------------------------------------------------------

_IPY_DASHES: Final = re.compile(r"-{40,}[ \t]*\Z")
_IPY_HEADER: Final = re.compile(
    r"(?P<cls>[A-Za-z_][\w.]*)[ \t]+Traceback \(most recent call last\)(?P<rest>.*)\Z"
)
_IPY_CELL: Final = re.compile(
    r"[ \t]*Cell In ?\[(?P<n>\d+)\], line (?P<line>\d+)(?:, in (?P<func>.*))?\Z"
)
_IPY_INPUT: Final = re.compile(r"[ \t]*Input In ?\[(?P<n>\d+)\](?:, in (?P<func>.*))?\Z")
_IPY_ARROW: Final = re.compile(r"-+>[ \t]*(?P<line>\d+)(?:[ \t](?P<source>.*))?\Z")
_IPY_CONTEXT: Final = re.compile(r"[ \t]+\d+(?:[ \t]|\Z)")
_IPY_HIDDEN: Final = re.compile(
    r"(?:\[\.\.\. skipping hidden (?P<n>\d+) frames?\]|(?P<m>\d+) frames)\Z"
)
"""Frames IPython hides (``[... skipping hidden 1 frame]``), or Colab folds (``5 frames``)."""


def _ipython_frame(raw: str) -> tuple[str, int | None, str | None] | None:
    """Read an IPython frame header (``Cell In[3], line 5``, ``File path:124, in fn(a)`` …)."""
    cell = _IPY_CELL.match(raw)
    if cell is not None:
        return f"Cell In[{cell['n']}]", _int(cell["line"]), _function(cell["func"])
    cell = _IPY_INPUT.match(raw)
    if cell is not None:
        return f"Input In [{cell['n']}]", None, _function(cell["func"])
    text = raw.strip()
    if text.startswith("File ") and raw[:1] not in " \t":
        body = text[5:]
        cut = body.find(", in ")
        head, function = (body[:cut], body[cut + 5 :]) if cut >= 0 else (body, None)
        path, colon, number = head.rpartition(":")
        if colon and number.isdigit():
            return path, _int(number), _function(function)
        return head, None, _function(function)
    if raw[:1] not in " \t" and " in " in text:
        head, _, function = text.partition(" in ")
        if " " not in head and (
            head.startswith("<ipython-input-") or head.endswith((".py", ".pyx"))
        ):
            return head, None, _function(function)
    return None


def _is_ipython_start(lines: Sequence[str], start: int) -> bool:
    raw = lines[start]
    if _IPY_DASHES.match(raw):
        j = _next_nonblank(lines, start + 1, 1)
        return j is not None and _IPY_HEADER.match(lines[j]) is not None
    if _IPY_HEADER.match(raw):
        return True
    return _IPY_CELL.match(raw) is not None or _IPY_INPUT.match(raw) is not None


class _IPythonReader:
    """Reads IPython 7/8 tracebacks (``Cell In[3], line 5``, ``----> 5`` arrows)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.out: list[ParsedError] = []
        self.cur: _Builder | None = None
        self.relation: str | None = None

    def finish(self) -> None:
        if self.cur is not None and not self.cur.is_empty():
            self.out.append(self.cur.build())
        self.cur = None

    def new(self) -> _Builder:
        self.finish()
        self.cur = _Builder(self.relation)
        self.relation = None
        return self.cur

    def read(self, start: int) -> int:  # noqa: C901 - one state machine
        lines = self.lines
        i = start
        state = _FRAMES
        while i < len(lines):
            raw = lines[i]
            text = raw.strip()
            if not text:
                if state == _MESSAGE:
                    j = _next_nonblank(lines, i + 1, 3)
                    if j is None:
                        break
                    after = lines[j]
                    if not (
                        after.strip() in _CHAIN
                        or _IPY_DASHES.match(after)
                        or _IPY_HEADER.match(after)
                    ):
                        break
                i += 1
                continue
            if _IPY_DASHES.match(raw):
                i += 1
                continue
            header = _IPY_HEADER.match(raw)
            if header is not None:
                cur = self.cur
                if cur is None or cur.has_exception or cur.frame_count:
                    cur = self.new()
                cur.location_class = _bare(header["cls"])
                state = _FRAMES
                i += 1
                continue
            relation = _CHAIN.get(text)
            if relation is not None:
                self.finish()
                self.relation = relation
                state = _BETWEEN
                i += 1
                continue
            frame = _ipython_frame(raw) if state != _MESSAGE else None
            if frame is not None:
                cur = (
                    self.cur if self.cur is not None and not self.cur.has_exception else self.new()
                )
                cur.add_frame(*frame)
                state = _FRAME_SRC
                i += 1
                continue
            if state in (_FRAMES, _FRAME_SRC, _BETWEEN):
                arrow = _IPY_ARROW.match(text)
                if arrow is not None:
                    if self.cur is not None:
                        self.cur.set_frame_line(
                            _int(arrow["line"]), (arrow["source"] or "").strip()
                        )
                    i += 1
                    continue
                hidden = _IPY_HIDDEN.match(text)
                if hidden is not None:
                    if self.cur is not None:
                        self.cur.omitted += int(hidden["n"] or hidden["m"])
                    i += 1
                    continue
                if _IPY_CONTEXT.match(raw) or raw[:1] in " \t" or text == "...":
                    if (
                        state == _FRAME_SRC
                        and self.cur is not None
                        and raw[:1] in " \t"
                        and not _IPY_CONTEXT.match(raw)
                        and not _is_marker(text)
                    ):
                        self.cur.add_source(text)
                    i += 1
                    continue
                if _is_break(raw):
                    break
                cur = (
                    self.cur if self.cur is not None and not self.cur.has_exception else self.new()
                )
                cur.set_exception(text)
                state = _MESSAGE
                i += 1
                continue
            if state == _MESSAGE and self.cur is not None:
                if _is_break(raw):
                    break
                self.cur.add_line(raw)
                i += 1
                continue
            break
        self.finish()
        return i


def _read_ipython(scan: Scan, start: int, floor: int) -> Block | None:
    if not _is_ipython_start(scan.lines, start):
        return None
    reader = _IPythonReader(scan.lines)
    end = reader.read(start)
    if end <= start:
        return None
    return Block(start, end, "ipython", reader.out)


# -- log lines -------------------------------------------------------------------------------

_LEVELS: Final = {
    "critical": "CRITICAL",
    "crit": "CRITICAL",
    "fatal": "CRITICAL",
    "alert": "CRITICAL",
    "emerg": "CRITICAL",
    "emergency": "CRITICAL",
    "panic": "CRITICAL",
    "error": "ERROR",
    "err": "ERROR",
    "exception": "ERROR",
    "severe": "ERROR",
    "warning": "WARNING",
    "warn": "WARNING",
    "info": "INFO",
    "notice": "INFO",
    "information": "INFO",
    "debug": "DEBUG",
    "trace": "DEBUG",
    "verbose": "DEBUG",
}
_REPORTED_LEVELS: Final = frozenset({"CRITICAL", "ERROR", "WARNING"})
_GLOG_LEVELS: Final = {"E": "ERROR", "W": "WARNING", "F": "CRITICAL", "I": "INFO"}

_TS: Final = (
    r"(?:\d{4}-\d{2}-\d{2}(?:[T ]|, )\d{2}:\d{2}(?::\d{2})?(?:[.,]\d{1,9})?"
    r"|\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}[: ]\d{2}:\d{2}:\d{2}"
    r"|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}"
    r"|\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)"
    r"(?: ?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?"
)
_TIMESTAMP: Final = re.compile(_TS)
_PY_BASIC: Final = re.compile(
    r"(?P<level>CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG|EXCEPTION):"
    r"(?:(?P<logger>[\w.\-]+):)?[ \t]*(?P<msg>.*)\Z"
)
_GLOG: Final = re.compile(
    r"(?P<level>[IWEF])\d{4} \d{2}:\d{2}:\d{2}(?:\.\d+)? +(?:\d+ )?"
    r"(?P<file>[^:\s\]]+):(?P<line>\d+)\] ?(?P<msg>.*)\Z"
)
_LOGFMT_PAIR: Final = re.compile(r'(?P<key>[A-Za-z_][\w.\-]*)=(?P<value>"(?:[^"\\]|\\.)*"|[^\s"]*)')
_LOGFMT_START: Final = re.compile(r"[A-Za-z_][\w.\-]*=")
_POST_LOCATION: Final = re.compile(r"(?P<a>[\w.<>\-]+):(?P<b>[\w.<>\-]+):(?P<line>\d+)(?= |\Z)")
_LOGGER_COLON: Final = re.compile(r"(?P<logger>[a-z_][\w\-]*(?:\.[\w\-]+)*):(?= |\Z)")
_DJANGO_TAIL: Final = re.compile(r"[\w.]+ \d+ \d+ ")
_FILE_LINE: Final = re.compile(r"(?P<file>[\w./\\\-]+\.py[iwx]?|[\w.\-]+):(?P<line>\d+)\Z")
_WORD: Final = re.compile(r"[\w.\-/@]+(?:::[\w.\-]+)*(?:\[\d+\])?:?\Z")


@dataclass
class _LogHeader:
    level: str | None
    logger: str | None
    message: str
    frame: Frame | None
    timestamped: bool


def _level(word: str, *, strict: bool) -> str | None:
    """The normalised level a word names (``[error]``, ``WARN``, ``ERROR/MainProcess``)."""
    word = word.strip("[]<>():,").split("/", 1)[0].strip()
    if not word or len(word) > 12:
        return None
    if strict and not word.isupper():
        return None
    return _LEVELS.get(word.lower())


def _module_frame(module: str, function: str | None, line: str) -> Frame:
    path = (
        module
        if module.endswith((".py", ".pyx")) or "/" in module
        else module.replace(".", "/") + ".py"
    )
    return Frame(path, _int(line), function)


def _separators(line: str, pos: int) -> int:
    n = len(line)
    while pos < n:
        c = line[pos]
        if c in " \t|" or (c in "-:," and (pos + 1 == n or line[pos + 1] in " \t")):
            pos += 1
        elif c == ">" and line.startswith(">> ", pos):
            pos += 2  # transformers' explicit format: ``… 2025-06-01 12:00:00,123 >> msg``
        else:
            break
    return pos


def _bracket(line: str, pos: int) -> tuple[str, int] | None:
    close = {"[": "]", "(": ")", "{": "}", "<": ">"}[line[pos]]
    end = line.find(close, pos + 1, pos + 202)
    if end < 0:
        return None
    return line[pos + 1 : end], end + 1


_LEVEL_AND_FILE: Final = re.compile(
    r"(?P<level>[A-Za-z]{4,9})\|(?P<file>[\w.\-/\\]+\.py):(?P<line>\d{1,7})\Z"
)
"""``WARNING|modeling_utils.py:1404``: a level and the file and line that logged."""


def _parse_log_header(line: str) -> _LogHeader | None:  # noqa: C901 - a tokenizer
    """Read the header of a log line: timestamp, level, logger, location; None if not a log line."""
    if not line or line[0] in " \t":
        return None
    match = _PY_BASIC.match(line)
    if match is not None:
        return _LogHeader(
            _LEVELS[match["level"].lower()], match["logger"], match["msg"], None, False
        )
    match = _GLOG.match(line)
    if match is not None:
        origin = Frame(match["file"], _int(match["line"]))
        return _LogHeader(_GLOG_LEVELS[match["level"]], None, match["msg"], origin, True)
    if _LOGFMT_START.match(line):
        return _parse_logfmt(line)
    n = len(line)
    pos = 0
    timestamped = False
    level: str | None = None
    logger: str | None = None
    frame: Frame | None = None
    floor = 0
    fields = 0
    while pos < n and fields < 8:
        pos = _separators(line, pos)
        if pos >= n:
            break
        char = line[pos]
        if char in "[({<":
            found = _bracket(line, pos)
            if found is None:
                break
            inner, after = found
            inner = inner.strip()
            stamp = _TIMESTAMP.match(inner)
            if stamp is not None:
                timestamped = True
                for word in inner[stamp.end() :].split()[:4]:
                    word = word.strip(":|,")
                    found_level = _level(word, strict=False)
                    if found_level and level is None:
                        level = found_level
                    elif word and level is not None and logger is None and _WORD.match(word):
                        logger = word
            elif _level(inner, strict=False) and level is None:
                level = _level(inner, strict=False)
            elif level is None and (explicit := _LEVEL_AND_FILE.match(inner)) is not None:
                # transformers' explicit format: ``[WARNING|modeling_utils.py:1404] … >> msg``
                level = _level(explicit["level"], strict=False)
                frame = Frame(explicit["file"], _int(explicit["line"]))
            elif inner.isdigit() or inner.startswith(("pid", "tid")):
                pass
            elif (location := _FILE_LINE.match(inner)) is not None:
                frame = Frame(location["file"], _int(location["line"]))
            elif level is not None:
                break
            elif not timestamped and fields == 0:
                return None
            elif logger is None and _WORD.match(inner):
                logger = inner
            pos = floor = after
            fields += 1
            continue
        if not timestamped and level is None:
            stamp = _TIMESTAMP.match(line, pos)
            if stamp is not None:
                timestamped = True
                pos = floor = stamp.end()
                fields += 1
                continue
        end = line.find(" ", pos)
        end = n if end < 0 else end
        word = line[pos:end]
        found_level = (
            _level(word, strict=not timestamped) if level is None and len(word) <= 24 else None
        )
        if found_level is not None:
            level = found_level
            pos = floor = end
            fields += 1
            break
        if not timestamped and fields == 0 and _WORD.match(word):
            # ``%(name)s - %(asctime)s - %(levelname)s - %(message)s``: the logger first.
            stamp = _TIMESTAMP.match(line, _separators(line, end))
            if stamp is not None:
                logger = word.rstrip(":")
                timestamped = True
                pos = floor = stamp.end()
                fields += 2
                continue
        if level is not None or not timestamped:
            break
        if _WORD.match(word) and fields < 6:
            if logger is None or "." in word:
                logger = word.rstrip(":")
            pos = end
            fields += 1
            continue
        break
    if level is None:
        if not timestamped:
            return None
        return _LogHeader(None, None, line[_separators(line, floor) :].strip(), frame, True)
    # After the level: optional logger/location fields (a thread name in parentheses, then
    # the logger in brackets: ``(worker-1) [urllib3.connectionpool]``), then the message.
    pos = _separators(line, pos)
    if pos < n and line[pos] in "[({":
        for _ in range(2):
            found = _bracket(line, pos) if pos < n and line[pos] in "[({" else None
            if found is None:
                break
            inner, after = found
            location = _FILE_LINE.match(inner.strip())
            if location is not None:
                frame = Frame(location["file"], _int(location["line"]))
            elif _WORD.match(inner.strip()) and " " not in inner.strip():
                logger = inner.strip()
            else:
                break
            pos = _separators(line, after)
    elif not timestamped and (stamp := _TIMESTAMP.match(line, pos)) is not None:
        timestamped = True
        pos = _separators(line, stamp.end())
        tail = _DJANGO_TAIL.match(line, pos)
        if tail is not None:
            logger = tail[0].split(" ", 1)[0]
            pos = tail.end()
    else:
        location_match = _POST_LOCATION.match(line, pos)
        if location_match is not None:
            first, second = location_match["a"], location_match["b"]
            if second.endswith((".py", ".pyx")):
                logger = first
                frame = Frame(second, _int(location_match["line"]))
            else:
                frame = _module_frame(first, second, location_match["line"])
            pos = location_match.end()
        else:
            named = _LOGGER_COLON.match(line, pos)
            if named is not None and ("." in named["logger"] or timestamped):
                logger = named["logger"]
                pos = named.end()
    message = line[_separators(line, pos) :].strip()
    return _LogHeader(level, logger, message, frame, timestamped)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value[1:-1]
    return value


def _parse_logfmt(line: str) -> _LogHeader | None:
    pairs: dict[str, str] = {}
    pos = 0
    for _ in range(64):
        match = _LOGFMT_PAIR.match(line, pos)
        if match is None:
            break
        pairs.setdefault(match["key"].lower(), _unquote(match["value"]))
        pos = match.end()
        while pos < len(line) and line[pos] == " ":
            pos += 1
    level_text = pairs.get("level") or pairs.get("lvl") or pairs.get("severity")
    if level_text is None:
        return None
    message = pairs.get("msg") or pairs.get("message") or ""
    error = pairs.get("error") or pairs.get("err")
    if error:
        message = f"{message}: {error}" if message else error
    return _LogHeader(
        _level(level_text, strict=False),
        pairs.get("logger") or pairs.get("module"),
        message,
        None,
        True,
    )


def _log_builder(header: _LogHeader) -> _Builder:
    builder = _Builder()
    builder.level = header.level
    builder.logger = header.logger
    if header.frame is not None:
        builder.add_frame(header.frame.path, header.frame.line, header.frame.function)
        builder.flush_frame()
    cls, message = _split_class(header.message, strict=True)
    builder.set_message(cls, message if cls else header.message)
    builder.has_exception = cls is not None
    return builder


def _is_log_continuation(scan: Scan, index: int) -> bool:
    line = scan.lines[index]
    if not line.strip() or _is_break(line):
        return False
    if _FRAME.match(line) or line.strip() in _CHAIN or line.lstrip().startswith("{"):
        return False
    return scan.log_header(index) is None


def _read_log(scan: Scan, start: int, floor: int) -> Block | None:
    lines = scan.lines
    header = scan.log_header(start)
    if header is None:
        return None
    builder = _log_builder(header)
    end = start + 1
    while end < len(lines) and end - start <= MAX_MESSAGE_LINES:
        if _is_log_continuation(scan, end):
            builder.add_line(lines[end])
            end += 1
            continue
        # A blank line inside the message, after ``…with:`` (a hint and its command).
        following = _next_nonblank(lines, end, 2) if not lines[end].strip() else None
        if following is None or not builder.wants_paragraph():
            break
        if not _is_log_continuation(scan, following):
            break
        for blank in lines[end:following]:
            builder.add_line(blank)
        end = following
    error = builder.build()
    if header.level is None and not error.message:
        return Block(start, end, "log", [], weak=True)
    weak = header.level not in _REPORTED_LEVELS
    return Block(start, end, "log", [error], weak=weak)


# -- JSON log lines --------------------------------------------------------------------------

_JSON_LEVEL_KEYS: Final[tuple[str, ...]] = (
    "level",
    "levelname",
    "severity",
    "lvl",
    "log.level",
    "loglevel",
    "log_level",
)
_JSON_MESSAGE_KEYS: Final[tuple[str, ...]] = (
    "message",
    "msg",
    "event",
    "@message",
    "text",
    "short_message",
)
_JSON_TRACE_KEYS: Final[tuple[str, ...]] = (
    "exc_info",
    "exception",
    "exc_text",
    "stack",
    "stack_trace",
    "stacktrace",
    "traceback",
    "error.stack_trace",
    "full_message",
)
_JSON_ERROR_KEYS: Final[tuple[str, ...]] = ("error", "err", "error.message")
_PINO_LEVELS: Final = {
    60: "CRITICAL",
    50: "ERROR",
    40: "WARNING",
    30: "INFO",
    20: "DEBUG",
    10: "DEBUG",
}
_PYTHON_LEVELS: Final = {50: "CRITICAL", 40: "ERROR", 30: "WARNING", 20: "INFO", 10: "DEBUG"}


def _get(record: dict[str, Any], key: str) -> Any:
    if key in record:
        return record[key]
    value: Any = record
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _json_level(record: dict[str, Any]) -> str | None:
    for key in _JSON_LEVEL_KEYS:
        value = _get(record, key)
        if isinstance(value, str):
            return _level(value, strict=False) or value.upper()
        if isinstance(value, int) and not isinstance(value, bool):
            return _PINO_LEVELS.get(value)
    number = record.get("levelno")
    if isinstance(number, int):
        return _PYTHON_LEVELS.get(number)
    return None


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return None


def _json_errors(record: dict[str, Any], nesting: int) -> tuple[list[ParsedError], bool]:
    """The errors of one JSON log record: the record itself, then its embedded traceback."""
    level = _json_level(record)
    message = next(
        (v for key in _JSON_MESSAGE_KEYS if isinstance(v := _get(record, key), str)), None
    )
    trace = next((t for key in _JSON_TRACE_KEYS if (t := _text(_get(record, key)))), None)
    error_value: Any = next(
        (v for key in _JSON_ERROR_KEYS if (v := _get(record, key)) is not None), None
    )
    error_text: str | None = None
    if isinstance(error_value, dict):
        trace = trace or _text(error_value.get("stack")) or _text(error_value.get("stack_trace"))
        kind = error_value.get("type") or error_value.get("kind") or error_value.get("name")
        inner = error_value.get("message") or error_value.get("msg")
        if isinstance(inner, str):
            error_text = f"{kind}: {inner}" if isinstance(kind, str) else inner
    elif isinstance(error_value, str):
        error_text = error_value
    if message is None and error_text is not None and trace is None:
        message, error_text = error_text, None
    if message is None and level is None and trace is None:
        return [], True
    builder = _Builder()
    builder.level = level
    logger = next(
        (
            v
            for key in ("logger", "name", "logger_name", "log.logger")
            if isinstance(v := _get(record, key), str)
        ),
        None,
    )
    builder.logger = logger
    path = (
        _get(record, "pathname") or _get(record, "filename") or _get(record, "log.origin.file.name")
    )
    line = _get(record, "lineno") or _get(record, "log.origin.file.line")
    function = _get(record, "funcName") or _get(record, "log.origin.function")
    if isinstance(path, str):
        builder.add_frame(
            path,
            line if isinstance(line, int) and not isinstance(line, bool) else None,
            function if isinstance(function, str) else None,
        )
    text = (message or "")[:MAX_MESSAGE_CHARS]
    first, *rest = text.split("\n", MAX_MESSAGE_LINES)
    cls, body = _split_class(first, strict=True)
    builder.set_message(cls, body if cls else first)
    builder.has_exception = cls is not None
    for extra in rest:
        builder.add_line(extra)
    errors = [builder.build()]
    embedded = trace or error_text
    if embedded and nesting < MAX_NESTING:
        errors.extend(_scan_text(embedded[: MAX_SCAN_CHARS // 4], nesting + 1))
    weak = level not in _REPORTED_LEVELS and len(errors) == 1
    return errors, weak


def _read_json(scan: Scan, start: int, floor: int) -> Block | None:
    lines = scan.lines
    text = lines[start].strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    record = _load_json(text)
    if record is None:
        return None
    log = record.get("log")
    if isinstance(log, str) and ("stream" in record or "time" in record) and len(record) <= 4:
        return _read_docker_json(scan, start, log)
    errors, weak = _json_errors(record, scan.nesting)
    return Block(start, start + 1, "json-log", errors, weak=weak)


def _load_json(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _read_docker_json(scan: Scan, start: int, first: str) -> Block | None:
    """Read docker's json-file lines (``{"log": "…", "stream": …}``): join them, then parse."""
    lines = scan.lines
    parts = [first]
    end = start + 1
    while end < len(lines) and len(parts) < MAX_SCAN_LINES:
        text = lines[end].strip()
        record = _load_json(text) if text.startswith('{"log"') and text.endswith("}") else None
        value = record.get("log") if record is not None else None
        if not isinstance(value, str):
            break
        parts.append(value)
        end += 1
    errors = _scan_text("".join(parts), scan.nesting + 1) if scan.nesting < MAX_NESTING else []
    return Block(start, end, "json-log", errors)


# -- transport prefixes ----------------------------------------------------------------------

_TRANSPORTS: Final[tuple[re.Pattern[str], ...]] = (
    # syslog / journald: "May  1 12:00:00 host tag[pid]: "
    re.compile(r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} [^\s]+ [^\s\[:]+(?:\[\d+\])?: ?"),
    # rsyslog with an ISO time: "2024-05-01T12:00:00.123+00:00 host tag[pid]: "
    re.compile(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}) [^\s]+ "
        r"[^\s\[:]+\[\d+\]: ?"
    ),
    # docker compose: "web-1  | "
    re.compile(r"[A-Za-z][\w.\-]+ +\| ?"),
    # kubectl/docker --timestamps, GitHub Actions: "2024-05-01T12:00:00.123456789Z "
    re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7,9}Z ?"),
)


def _read_transport(scan: Scan, start: int, floor: int) -> Block | None:
    """Lines that all carry a transport prefix: strip it and parse what is behind it."""
    if scan.nesting >= MAX_NESTING:
        return None
    lines = scan.lines
    for pattern in _TRANSPORTS:
        match = pattern.match(lines[start])
        if match is None:
            continue
        inner = [lines[start][match.end() :]]
        end = start + 1
        while end < len(lines):
            more = pattern.match(lines[end])
            if more is None:
                break
            inner.append(lines[end][more.end() :])
            end += 1
        blocks = _scan(Scan(inner, scan.nesting + 1))
        if not blocks:
            return Block(start, end, "log", _fallback(inner)[0], weak=True)
        kind = max(["log", *(b.kind for b in blocks)], key=lambda k: _KIND_RANK[k])
        weak = all(b.weak for b in blocks)
        return Block(start, end, kind, _collect(blocks), weak=weak)
    return None


# -- the driver ------------------------------------------------------------------------------


def _scan(scan: Scan) -> list[Block]:
    """Walk the lines; at each line a trigger matches, let the recognisers read a block."""
    lines = scan.lines
    trigger = _trigger().union
    blocks: list[Block] = []
    floor = 0
    i = 0
    count = len(lines)
    while i < count:
        line = lines[i]
        head = line[:_HEAD_CHARS]
        triggered = None if not line or line.isspace() else trigger.match(head)
        block = None if triggered is None else _read_block(scan, i, floor, head, triggered)
        if block is None:
            i += 1
            continue
        blocks.append(block)
        floor = i = block.end
    return blocks


def _read_block(
    scan: Scan, i: int, floor: int, head: str, triggered: re.Match[str]
) -> Block | None:
    """Let the recognisers whose trigger matches line ``i`` read a block there, in order.

    Args:
        scan: The lines.
        i: The line.
        floor: The first line a block may take (the lines before are read).
        head: The line's first characters, as triggers see them.
        triggered: The union of the triggers' match of ``head`` (see :func:`_trigger`).

    Returns:
        The first block read, or None.
    """
    triggers = _trigger()
    recognisers = triggers.readers
    if not triggers.named:  # a trigger has groups of its own: each is tried
        for own, read in recognisers:
            if own.match(head) is not None:
                block = read(scan, i, floor)
                if block is not None and block.end > i and block.begin >= floor:
                    return block
        return None
    named = triggered.lastgroup
    while named is not None:
        # The union names the first recogniser whose trigger matches; when it reads nothing,
        # the union of the triggers after it names the next (one match, not one per trigger).
        position = int(named[2:])
        block = recognisers[position][1](scan, i, floor)
        if block is not None and block.end > i and block.begin >= floor:
            return block
        if position + 1 == len(recognisers):
            return None
        following = _triggers_from(position + 1).match(head)
        if following is None:
            return None
        named = following.lastgroup
    return None


def _collect(blocks: Iterable[Block]) -> list[ParsedError]:
    blocks = list(blocks)
    strong = [e for b in blocks if not b.weak for e in b.errors]
    if strong:
        return strong
    return [e for b in blocks for e in b.errors]


def _fallback(lines: Sequence[str]) -> tuple[list[ParsedError], int]:
    """Read text no recogniser claimed as bare messages: ``Class: message`` or just a message."""
    errors: list[ParsedError] = []
    builder: _Builder | None = None
    first = last = -1
    for i, line in enumerate(lines):
        text = line.strip()
        if _indent(line) == 0 and text:
            cls, _ = _split_class(text, strict=True)
            if (
                cls is not None
                and builder is not None
                and last == i - 1
                and "." in (builder.cls or "")
                and "." not in cls
            ):
                # A message's own next line that reads as an error: werkzeug's
                # ``BadRequestKeyError: 400 Bad Request: …`` then ``KeyError: 'name'``, as the
                # traceback printed it (a traceback's reader takes it so).
                cls = None
            if cls is not None:
                if builder is not None:
                    errors.append(builder.build())
                builder = _Builder()
                builder.set_exception(text, strict=True)
                first = i if first < 0 else first
                last = i
                continue
        if builder is not None:
            if not text and (builder.message[-1:] == [""]):
                continue
            builder.add_line(line)
            last = i if text else last
    if builder is not None:
        errors.append(builder.build())
        return errors, sum(1 for line in lines[first : last + 1] if line.strip())
    nonblank = [i for i, line in enumerate(lines) if line.strip()]
    if not nonblank:
        return [], 0
    builder = _Builder()
    body = lines[nonblank[0] : nonblank[-1] + 1]
    builder.set_message(None, body[0].strip())
    for line in body[1:]:
        builder.add_line(line)
    return [builder.build()], sum(1 for line in body if line.strip())


def _scan_text(text: str, nesting: int) -> list[ParsedError]:
    """Parse a text found inside another (a JSON record's traceback): its errors only."""
    lines = _prepare(text)
    if lines and lines[0] in _TB_HEADERS:
        # The common case (``exc_info``): one traceback and nothing else; read it directly.
        reader = _TracebackReader(lines)
        end = reader.read(0, _START)
        if reader.out and all(not line for line in lines[end:]):
            return reader.out
    blocks = _scan(Scan(lines, nesting))
    errors = _collect(blocks)
    if not errors and not blocks:
        errors, _ = _fallback(lines)
    return errors


def _cap_line(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


def _prepare(text: str) -> list[str]:
    """Normalise a text into lines: see :func:`_clean`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _clean([_cap_line(line) for line in text.split("\n")])


def _clean(lines: list[str]) -> list[str]:
    """Remove ANSI codes, trailing blanks, code fences, panels and a common indent or quote."""
    if any("\x1b" in line or "[" in line for line in lines):
        stripped = strip_ansi("\n".join(lines))
        lines = stripped.split("\n")
    lines = _dedent([line.rstrip() for line in lines])
    if any("\u256d" in line for line in lines):
        lines = _unpanelled(lines)
    if any("`" in line for line in lines):
        lines = _without_code_spans(lines)
    if not any("```" in line for line in lines):
        return lines
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            lines[i] = ""
    return _dedent(lines)


_CUT_FRAME: Final = re.compile(r'.*", line \d+(?:, in .*)?\Z')
"""A frame line, whole or with its start cut off (``\\aiohttp\\streams.py", line 640, in read``)."""


def _without_code_spans(lines: list[str]) -> list[str]:
    """Take off the backticks of Markdown code spans around a traceback's lines.

    Pasted from an issue's comment: `` `aiohttp.client_exceptions.ServerDisconnectedError:
    Server disconnected` ``, or a span that opens on a frame line and closes on its code
    line. Only at the ends of a line that then reads as a frame, the code line under one, or
    ``Class: message``: a message's own backticks (`` `x = 1` ``) stay.
    """
    result: list[str] = []
    after_frame = False
    for line in lines:
        body = line.strip()
        marks = body.count("`")
        inner = None
        if marks == 2 and len(body) > 2 and body[0] == body[-1] == "`":
            inner = body[1:-1]
        elif marks == 1 and body[0] == "`":
            inner = body[1:]
        elif marks == 1 and body[-1] == "`":
            inner = body[:-1]
        frame = _CUT_FRAME.match(inner if inner is not None else body) is not None
        if inner is not None and (frame or after_frame or _is_class_line(inner)):
            line = line[: len(line) - len(line.lstrip())] + inner
        after_frame = frame
        result.append(line)
    return result


def _is_class_line(text: str) -> bool:
    """Whether a line reads as ``Class: message`` or a bare class, the class's name a class's."""
    found = _CLASS_LINE.match(text)
    return found is not None and _looks_like_class(found["cls"])


_PANEL_TOP: Final = re.compile(
    r"^(?P<indent>\s*)\u256d\u2500*(?: (?P<title>[^\u2500\u256e]+?) \u2500*)?\u256e$"
)
"""The top edge of a Rich panel, with its title: ``╭─ Error ───╮`` (typer's errors)."""


_RICH_FRAME: Final = re.compile(r"(?P<path>\S.*?):(?P<line>\d+)(?: in (?P<func>\S+))?\Z")
_RICH_CODE: Final = re.compile(r"(?P<mark>\u2771)?\s*\d+ \u2502(?P<code>.*)\Z")
"""A line of code Rich shows under a frame: ``❱ 438 │ │ raise X(…)`` (``❱`` at the frame's)."""


def _rich_frames(body: list[str]) -> list[str]:
    """Write the frames of a Rich traceback panel as Python prints them.

    ``rich.traceback`` (typer's and many CLIs' tracebacks) shows ``path:line in function``
    (the function on the next line when the path is long) over a few lines of code, the
    frame's marked ``❱``; Python shows ``File "path", line N, in function`` and that line.
    """
    out: list[str] = []
    i = 0
    while i < len(body):
        text = body[i].strip()
        frame = _RICH_FRAME.match(text)
        if frame is not None and "\u2502" not in text:
            function = frame["func"]
            if function is None and i + 1 < len(body) and body[i + 1].strip().startswith("in "):
                i += 1
                function = body[i].strip()[3:].strip()
            out.append(f'  File "{frame["path"]}", line {frame["line"]}, in {function or "?"}')
        else:
            code = _RICH_CODE.match(text)
            if code is not None:
                if code["mark"]:
                    out.append("    " + code["code"].replace("\u2502", " ").strip())
            elif text:
                out.append(body[i])
        i += 1
    return out


def _unpanelled(lines: list[str]) -> list[str]:
    """Take the text out of Rich panels: ``╭─ Error ─╮`` / ``│ text │`` / ``╰───╯``.

    typer prints click's errors so: the panel's title becomes the text's class as click
    prints it plain (``Error: Missing argument 'NAME'.``), its lines the message.
    """
    result: list[str] = []
    i = 0
    while i < len(lines):
        top = _PANEL_TOP.match(lines[i])
        end = i + 1
        indent = top["indent"] if top else ""
        while top and end < len(lines) and lines[end].startswith(indent + "\u2502"):
            end += 1
        if top is None or end >= len(lines) or not lines[end].startswith(indent + "\u2570"):
            result.append(lines[i])
            i += 1
            continue
        body = [
            line[len(indent) + 1 :].rstrip().removesuffix("\u2502").rstrip()
            for line in lines[i + 1 : end]
        ]
        body = [line[1:] if line.startswith(" ") else line for line in body]
        title = (top["title"] or "").strip()
        if title.startswith("Traceback"):
            body = _rich_frames(body)
        if title and body and not title.startswith("Traceback"):
            body[0] = f"{title}: {body[0]}"
        elif title:
            body.insert(0, f"{title}:")
        result.extend(indent + line for line in body)
        i = end + 1
    return result


def _dedent(lines: list[str]) -> list[str]:
    """Remove an indentation or a ``> `` quote shared by every non-blank line."""
    nonblank = [line for line in lines if line]
    if not nonblank:
        return lines
    if all(line.startswith(">") for line in nonblank) and any(
        line.startswith("> ") for line in nonblank
    ):
        lines = [line[2:] if line.startswith("> ") else line[1:] for line in lines]
        nonblank = [line for line in lines if line]
        if not nonblank:
            return lines
    prefix = min(_indent(line) for line in nonblank)
    if prefix == 0:
        return lines
    first = nonblank[0][:prefix]
    if any(not line.startswith(first) for line in nonblank):
        return lines
    return [line[prefix:] for line in lines]


def _tail(text: str) -> tuple[list[str], int]:
    """The lines of a paste that are scanned, and how many lines come before them.

    A paste is scanned whole unless it has more than :data:`MAX_SCAN_LINES` lines or
    :data:`MAX_SCAN_CHARS` characters; then its last lines are, each counted at most
    :data:`MAX_LINE_CHARS` long (so one huge line does not push everything else out), and a
    line is never cut at its start.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if len(text) <= MAX_SCAN_CHARS and text.count("\n") < MAX_SCAN_LINES:
        return [_cap_line(line) for line in text.split("\n")], 0
    lines: list[str] = []
    budget = MAX_SCAN_CHARS
    end = len(text)
    first = end
    while len(lines) < MAX_SCAN_LINES:
        start = text.rfind("\n", 0, end) + 1
        cost = min(end - start, MAX_LINE_CHARS) + 1
        if lines and cost > budget:
            break
        budget -= cost
        lines.append(_cap_line(text[start : min(end, start + MAX_LINE_CHARS + 1)]))
        first = start
        if start == 0:
            break
        end = start - 1
    lines.reverse()
    return lines, text.count("\n", 0, first)


def _merge_bare_tracebacks(errors: list[ParsedError]) -> list[ParsedError]:
    """Give a log record the frames of a traceback printed after it without an exception line.

    AWS Lambda prints ``[ERROR] KeyError: 'body'``, then ``Traceback …`` and the frames only.
    """
    merged: list[ParsedError] = []
    for error in errors:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and error.error_class is None
            and not error.message
            and error.frames
            and previous.level is not None
            and not previous.frames
            and previous.depth == error.depth
        ):
            merged[-1] = replace(previous, frames=error.frames, omitted_frames=error.omitted_frames)
            continue
        merged.append(error)
    return merged


_PREFIX_END: Final = re.compile(r"[|\]:>] ?")


def _without_common_prefix(lines: Sequence[str]) -> list[str] | None:
    """Strip a prefix most lines share (a container or rank tag), or None when there is none.

    The prefix must start with a non-blank character, end with ``|``, ``]``, ``:`` or ``>``
    and one blank), be at most 60 characters, and begin at least half of the non-blank lines
    (and three at least). A prefix the transport reader strips (syslog's, docker compose's)
    is left to it: it has read what is behind it already.
    """
    sample = [line for line in lines[:400] if line.strip()]
    if len(sample) < 3:
        return None
    counts: dict[str, int] = {}
    for line in sample:
        if line[:1].isspace():
            continue
        for match in _PREFIX_END.finditer(line, 0, min(len(line), 60)):
            prefix = line[: match.end()]
            counts[prefix] = counts.get(prefix, 0) + 1
    needed = max(3, len(sample) // 2)
    chosen = max((p for p, n in counts.items() if n >= needed), key=len, default=None)
    if chosen is None or any(pattern.fullmatch(chosen) for pattern in _TRANSPORTS):
        return None
    return [line[len(chosen) :] if line.startswith(chosen) else line for line in lines]


MAX_REPR_CHARS: Final = 10_000
"""An exception's repr ending a message is read only when its text is at most this long."""
_REPR_TRIES: Final = 4
_REPR_NAME_CHARS: Final = 200


def repr_message(message: str) -> str | None:
    """The text of an exception's repr that ends a message (``… ValueError('bad x')``), or None.

    Logs show it where ``%r``, celery (``raised unexpected: KeyError('x')``) or asyncio print
    an exception. Only a class-like name (its last part capitalised) with one string argument
    counts; the message must end with ``')`` or ``")``.

    Examples:
        >>> repr_message("task failed: ValueError('bad phase: draft')")
        'bad phase: draft'
    """
    if not message.endswith(("')", '")')):
        return None
    quote = message[-2]
    position = len(message) - 1
    for _ in range(_REPR_TRIES):
        position = message.rfind("(" + quote, max(0, len(message) - MAX_REPR_CHARS), position)
        if position <= 0:
            return None
        start = position
        lowest = max(0, position - _REPR_NAME_CHARS)
        while start > lowest and (message[start - 1].isalnum() or message[start - 1] in "._"):
            start -= 1
        name = message[start:position].rpartition(".")[2]
        if not name[:1].isupper():
            continue
        try:
            value = ast.literal_eval(message[position + 1 : -1])
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, str):
            return value or None
    return None


def _strength(blocks: Sequence[Block]) -> tuple[int, int]:
    errors = [e for b in blocks for e in b.errors if not b.weak]
    return (
        sum(1 for e in errors if e.error_class and e.level is None),
        sum(len(e.frames) for e in errors),
    )


def _parse_one_line(text: str) -> ParsedInput | None:
    """Parse a one-line paste no recogniser reads (most pastes) the short way, else None.

    Gives what :func:`parse` gives for it (a test compares both ways): a bare message or
    ``Class: message``, the line breaks that end a paste included. Other line breaks, ANSI
    codes, code fences, backticks around the line and quotes take the whole way.
    """
    body = text.rstrip()
    if (
        len(text) > MAX_LINE_CHARS
        or "\n" in body
        or "\r" in body
        or "\x1b" in text
        or "```" in text
        or body.lstrip().startswith("`")
        or body.endswith("`")
        or ("[" in text and strip_ansi(text) != text)
    ):
        return None
    line = body.lstrip(" \t")
    if not line or line[0] == ">":
        return None
    head = line[:_HEAD_CHARS]
    triggers = _trigger()
    if not triggers.built_in or _may_trigger(head):
        triggered = triggers.union.match(head)
        if triggered is not None and _read_block(Scan([line]), 0, 0, head, triggered):
            return None
    # What :func:`_fallback` builds for one line, without a builder.
    cls, message = _split_class(line.strip(), strict=True)
    message = message.strip()
    error = ParsedError(
        error_class=_bare(cls),
        qualified_class=cls,
        message=message,
        truncated=message.endswith(("...", "…")),
    )
    return ParsedInput(kind="message", errors=(error,), lines_used=1, original=text)


def parse(text: str) -> ParsedInput:
    """Parse anything a user pastes into errors, frames and notes.

    Args:
        text: A message, a traceback, pytest or IPython output, log lines, JSON log lines — or
            several of them, or none (any text is accepted; nothing raises).

    Returns:
        The kind of input, its errors in the order they happened (see
        :attr:`ParsedInput.primary` for the one to explain), and the original text.

    Examples:
        >>> parse("KeyError: 'phase'").primary.error_class
        'KeyError'
    """
    quick = _parse_one_line(text)
    return quick if quick is not None else _parse_lines(text)


def _parse_lines(text: str) -> ParsedInput:
    """Parse a paste line by line with every recogniser (the whole way of :func:`parse`)."""
    scanned, skipped = _tail(text)
    lines = _clean(scanned)
    blocks = _scan(Scan(lines))
    stripped = _without_common_prefix(lines)
    if stripped is not None:
        # Output relayed by another tool prefixes every line (``core-1  | ``, ``[rank0]: ``);
        # parse it without the prefix when that finds more.
        retry = _scan(Scan(stripped))
        if _strength(retry) > _strength(blocks):
            lines, blocks = stripped, retry
    strong = [b for b in blocks if b.errors and not b.weak]
    kept = strong or [b for b in blocks if b.errors]
    errors = [e for b in kept for e in b.errors]
    omitted = sum(b.omitted_errors for b in blocks)
    used = sum(1 for b in kept for line in lines[b.begin : b.end] if line.strip())
    if kept:
        kind = max((b.kind for b in kept), key=lambda k: _KIND_RANK[k])
    else:
        # No recogniser found an error: read the text as bare messages. A format found
        # without one (jsonschema prints the schema, a Python dict a JSON reader takes, under
        # its message) still names the input.
        kind = max((b.kind for b in blocks), key=lambda k: _KIND_RANK[k]) if blocks else "message"
        errors, used = _fallback(lines)
    errors = _merge_bare_tracebacks(errors)
    if len(errors) > MAX_ERRORS:
        tail = MAX_ERRORS - _ERROR_HEAD
        omitted += len(errors) - MAX_ERRORS
        errors = errors[:_ERROR_HEAD] + errors[-tail:]
    return ParsedInput(
        kind=kind,
        errors=tuple(errors),
        lines_used=used,
        original=text,
        omitted_errors=omitted,
        skipped_lines=skipped,
    )


for _recogniser in (
    Recogniser("json-log", r"[ \t]*\{", _read_json),
    Recogniser(
        "transport",
        r"[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} |\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"
        r"|[A-Za-z][\w.\-]+" + POSSESSIVE + r" +\|",
        _read_transport,
    ),
    # Triggers only tell whether a line may start a block, and most lines start none: greedy
    # runs (``[^:]+``, not ``+?``) match the same lines in half the time. (These two runs
    # cannot be possessive: ``.py`` continues them.)
    Recogniser("python-warning", r"[ \t]*(?:[A-Za-z]:)?[^:]+\.py[iwx]?:\d+: \w", _read_warning),
    Recogniser(
        "pytest",
        r"={3,}|_{3,}|E[ \t]{2,}\S|>   |(?:FAILED|ERROR) \S"
        r"|(?:[A-Za-z]:)?[^:]+\.py[iwx]?:\d+: ",
        _read_pytest,
    ),
    Recogniser(
        "ipython",
        r"-{40,}|[A-Za-z_][\w.]*" + POSSESSIVE + r"[ \t]+Traceback \(most recent"
        r"|[ \t]*Cell In ?\[|[ \t]*Input In ?\[",
        _read_ipython,
    ),
    Recogniser(
        "python-traceback",
        r"[ \t]*(?:Traceback|Stacktrace|Exception Group Traceback) \(most recent call last\):"
        r"|[ \t]*(?:File|Module) \""
        r"|[ \t]*[+|] "
        r"|The above exception was the direct cause|During handling of the above exception",
        _read_python,
    ),
    Recogniser("django-check", r"[^:]*: \([a-z_][\w.]*\.[CEWID]\d{3}\) ", _read_check),
    Recogniser(
        "log",
        r"\[|\(|<|\{|\d"
        r"|(?:CRITICAL|FATAL|ERROR|WARNING|WARN|INFO|DEBUG|EXCEPTION|NOTICE|TRACE|SEVERE)\b"
        r"|[IWEF]\d{4} |[A-Za-z_][\w.\-]*" + POSSESSIVE + r"(?:=| +- +\d{4}-\d\d-\d\d)",
        _read_log,
    ),
):
    register_recogniser(_recogniser)

from errdex.match import traces_go as _traces_go  # noqa: E402,F401
from errdex.match import traces_java as _traces_java  # noqa: E402,F401
from errdex.match import traces_javascript as _traces_javascript  # noqa: E402,F401
from errdex.match import traces_rust as _traces_rust  # noqa: E402,F401

_BUILT_IN_TRIGGERS = tuple((r.name, r.trigger) for r in RECOGNISERS)
