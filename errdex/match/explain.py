"""Explain: pasted text → the records that produced it, ranked by evidence.

Steps: parse the text into errors with frames (:mod:`errdex.match.parse`); for each error, the
prefilter proposes templates whose key occurs in the message, and each template's matcher
verifies the whole message (linear time); frames add the records of the files they point at.
Candidates are ranked by, in order of strength: a frame at the record's line (or within its
statement), the same file at a nearby line, the error class, and how much literal text the
template has. Identical templates that nothing tells apart are reported as ambiguous. When no
template matches, the nearest records come back marked approximate, never as exact.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Final

from errdex.analyze.writer import ensure_narrative
from errdex.match.index import (
    SPECIFIC,
    MatcherIndex,
    build_index,
    in_package,
    index_path,
    load_index,
    save_index,
)
from errdex.match.interpreter import (
    DBAPI_ERRORS,
    InterpreterMessage,
    interpreter_message,
    passed_on,
)
from errdex.match.parse import (
    BUILTIN_EXCEPTIONS,
    Frame,
    ParsedError,
    ParsedInput,
    parse,
    repr_message,
)
from errdex.models import CapturedText, ErrorRecord, Match, MatchKind
from errdex.store.base import RecordStore, SearchQuery
from errdex.values import finish_value

NEARBY_LINES: Final = 40
"""A frame this close to a record's line in the same file counts as another version of it."""

MAX_CAPTURED_TEXTS: Final = 3
"""At most this many records are named for the text a match captured (identical ones)."""

SAME_STATEMENT_GAIN: Final = 25.0
"""What the innermost frame gives a record whose statement is the code line it shows, at
another line (another version of the file): more than a nearby line, less than its own."""

MAX_STATEMENT_READS: Final = 200
"""At most this many records of the innermost frame's file are read to compare statements."""

INNERMOST_GAIN: Final = 40.0
"""What the innermost frame at a record's line gives (4 less inside its statement)."""

OUTER_GAIN: Final = 30.0
"""What another frame at a record's line gives (4 less inside its statement)."""

INSIDE_STATEMENT: Final = 4.0
"""What a frame inside a record's statement, not at its first line, gives less."""

MAX_CANDIDATES: Final = 5000
"""At most this many verified records are ranked per error (identical templates)."""

_ALIASES: Final = {
    "EnvironmentError": "OSError",
    "IOError": "OSError",
    "WindowsError": "OSError",
    "socket.error": "OSError",
    "select.error": "OSError",
    "socket.timeout": "TimeoutError",
}
"""Names that are the same class at run time (a traceback prints the real one)."""


UNMARKED_CUT: Final = 60
"""A message that stops before its template's end, with no ``...`` to say it was cut, counts
only when it shows at least this many of the template's literal characters."""

MAX_PARAGRAPHS: Final = 10
"""A message's leading paragraphs are tried alone (text appended after a message) up to this."""

MAX_LEADING_LINES: Final = 40
"""A message's leading lines are tried alone (text appended after a message) up to this."""

MAX_LEADING_CHARS: Final = 20_000
"""A longer message's leading lines are not tried (they keep a lookup fast on hostile pastes)."""

MAX_LINES: Final = 40
"""At most this many lines are searched when the message itself matches nothing."""

MAX_PASTE_LINES: Final = 400
"""The last lines of a paste that the fallbacks look at."""

FALLBACK_LINE_CHARS: Final = 4000
"""Longer lines are left out of the fallbacks (they keep a lookup fast on hostile pastes)."""

_MENTION: Final = re.compile(r"(?P<path>[\w./\\-]+\.py)(?::|\", line |, line )(?P<line>\d{1,7})\b")
"""A ``path.py:LINE`` (or ``path.py", line LINE``) mention in a paste without frames."""

_MENTION_HINTS: Final[tuple[str, ...]] = (".py:", '.py"', ".py,")
"""What a line holds when :data:`_MENTION` can match in it (found without running it)."""

_WORD: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
"""A word a message is searched by when no template matches it."""


def same_class(pasted: str, recorded: str) -> bool:
    """Tell whether a pasted class name and a record's class name are the same class."""
    return _ALIASES.get(pasted, pasted) == _ALIASES.get(recorded, recorded)


def _names_a_class(name: str) -> bool:
    """Whether a record's class is a class's name, not a variable or helper the code raises.

    ``raise exc(msg)`` (a parameter whose default is the class) and ``raise
    self._undefined_exception(msg)`` give records whose "class" a traceback never prints, so a
    pasted class is no contradiction of them. Class names begin with a capital letter.
    """
    last = name.rsplit(".", 1)[-1]
    return last[:1].isupper()


OFF_TRACEBACK: Final = 20.0
"""What a record loses when a traceback reaches the source but none of its frames its file."""

_CLASS_CHECKS: Final = 50
"""At most this many records of a matching template are checked against the pasted class."""

_CLASSLESS: Final[tuple[str, ...]] = (".go", ".rs")
"""Sources whose errors carry no class a trace prints: Go shows ``panic:`` or nothing, Rust's
``main`` prints ``Error:`` whatever the error type, so a different pasted class is no
contradiction."""

_LEVELS: Final = frozenset(
    {"CRITICAL", "FATAL", "ERROR", "WARNING", "WARN", "INFO", "DEBUG", "EXCEPTION"}
)
_ERRNO: Final = re.compile(r"^\[(?:Errno|WinError) -?\d+\] ")
_FILENAME: Final = re.compile(r": '(?:[^'\\]|\\.)*'(?: -> '(?:[^'\\]|\\.)*')?\Z")
"""The filename (and, for a rename, the target) OSError prints after its message."""
_TUPLE_HEAD: Final = re.compile(r"""\((?P<text>'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"), """)
"""The first argument of an exception raised with several, as it prints them (a tuple)."""
_SUB_EXCEPTIONS: Final = re.compile(r" \(\d+ sub-exceptions?\)\Z")
_LINK_NOTE: Final = re.compile(r"\([^()\n]{0,80}https?://[^()\s]{1,200}\)\Z")
"""A note in parentheses with a link that ends a message."""
MAX_LINK_NOTE: Final = 300
"""Such a note is looked for in this many last characters of a message only."""

_ID_NOTE: Final = re.compile(r" \((?:[A-Za-z][A-Za-z -]{0,30} )?ID: [^()\n]{1,200}\)")
"""The ID of a request that a client adds to a message at run time, at the end of its first
line (huggingface_hub's ``403 Client Error. (Request ID: Root=1-…)``)."""


class _Candidate:
    """A record under consideration for one parsed error (scored once, at the end).

    A plain class, not a dataclass: compiled (see errdex/_native.py), its ``__init__`` is
    native, where a dataclass's is made at run time in Python (explain makes a few per paste).
    """

    __slots__ = (
        "record",
        "error",
        "captures",
        "frame_gain",
        "frame_note",
        "line_note",
        "line_bonus",
        "logger_gain",
        "class_sites",
        "score",
        "spelled",
        "evidence",
        "exact",
    )

    def __init__(
        self,
        record: int,
        error: int,
        captures: tuple[str, ...] | None,
        *,
        line_note: str = "",
        line_bonus: float = 0.0,
        class_sites: int = 0,
        evidence: list[str] | None = None,
    ) -> None:
        self.record = record
        self.error = error
        self.captures = captures
        self.frame_gain = 0.0
        self.frame_note = ""
        self.line_note = line_note
        self.line_bonus = line_bonus
        self.logger_gain = 0.0
        self.class_sites = class_sites
        """Without a template that matches: of how many sites its class is (see
        ``_of_the_class``)."""
        self.score = 0.0
        self.spelled = 0
        """Set when scored: how many characters of the message its template spells out (0
        if none). It ranks equal scores, and tells what comes after scoring whether the
        record's text is specific."""
        self.evidence: list[str] = [] if evidence is None else evidence
        self.exact = False

    def __repr__(self) -> str:
        return (
            f"_Candidate(record={self.record}, error={self.error}, score={self.score},"
            f" exact={self.exact}, evidence={self.evidence!r})"
        )


@dataclass(unsafe_hash=True)
class Explanation:
    """The answer to one paste.

    Attributes:
        parsed: The parsed input (the original text is in ``parsed.original``).
        matches: The best matches, best first.
        ambiguous: The best exact matches share a template and nothing tells them apart.
        total: How many records matched before the list was cut to ``top``.
        interpreter: When Python itself raises the pasted message (``'NoneType' object has
            no attribute 'x'``), what it says happened; else None.
    """

    parsed: Final[ParsedInput]
    matches: Final[list[Match]]
    ambiguous: Final[bool]
    total: Final[int]
    interpreter: Final[str | None]

    def __init__(
        self,
        parsed: ParsedInput,
        matches: list[Match],
        ambiguous: bool = False,
        total: int = 0,
        interpreter: str | None = None,
    ) -> None:
        self.parsed = parsed
        self.matches = matches
        self.ambiguous = ambiguous
        self.total = total
        self.interpreter = interpreter

    @property
    def found(self) -> bool:
        """Whether at least one exact match was found."""
        return any(match.kind is MatchKind.EXACT for match in self.matches)

    def to_json(self) -> dict[str, Any]:
        """Return the answer as ``errdex explain --json`` prints it (records in seed format)."""
        return {
            "parsed": asdict(self.parsed),
            "ambiguous": self.ambiguous,
            "total": self.total,
            "interpreter": self.interpreter,
            "matches": [
                {
                    "record": match.record.seed_dict(),
                    "kind": match.kind.value,
                    "score": round(match.score, 3),
                    "evidence": match.evidence,
                    "captures": match.captures,
                    "capturedTexts": [
                        text.model_dump(mode="json") for text in match.captured_texts
                    ],
                    "error": match.error,
                    "function": match.record.function,
                }
                for match in self.matches
            ],
        }


finish_value(Explanation)


def message_variants(error: ParsedError) -> list[str]:
    """Return the texts a record's template may have produced for a parsed error.

    ``KeyError`` shows the repr of its argument (``KeyError: 'missing x'``), ``OSError`` puts
    ``[Errno N]`` before its message (and the filename after it), an exception group its
    count of sub-exceptions after it; all are undone here.
    """
    message = error.message.strip()
    variants = [message]
    if len(message) >= 2 and message[0] == message[-1] and message[0] in "'\"":
        try:
            value = ast.literal_eval(message)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if isinstance(value, str):
            variants.append(value)
    if message and message[0] in "[{" and message[-1] in "]}":  # "" is in every string
        # Django's ``ValidationError: ['Enter a valid email address.']`` (a list or dict of
        # messages, DRF's ``ErrorDetail(string=…)`` too): each message is a variant.
        variants.extend(_repr_leaves(message))
    if message.startswith("["):
        stripped = _ERRNO.sub("", message)
        if stripped != message:
            variants.append(stripped)
            # OSError(errno, message, filename) prints "[Errno 2] message: 'filename'".
            named = _FILENAME.sub("", stripped)
            if named != stripped:
                variants.append(named)
    if "\n" in message:
        # A paste hard-wrapped at the terminal's width, words cut mid-way ("sessio\nn 5").
        unwrapped = _unwrapped(message, error.qualified_class)
        if unwrapped is not None:
            variants.append(unwrapped)
    if message.endswith(")"):
        variants.extend(_parenthesised_variants(message, error.error_class))
    unnoted = _without_id_note(message)
    if unnoted is not None:
        variants.append(unnoted)
    said = _argparse_said(error)
    if said is not None:
        variants.append(said)
    if error.logger and "." not in error.logger and "/" not in error.logger:
        # What reads as a logger's name may be the message's own first word (celery's
        # "consumer: Cannot connect to %s: %s." logged under its own logger).
        variants.append(f"{error.logger}: {message}")
    return variants


_ARGPARSE_ERROR: Final = re.compile(r"^[\w.-]+: error: (?P<message>[^\n]*\S)", re.M)
"""The line argparse prints for ``parser.error(msg)``: ``prog: error: msg``."""


def _argparse_said(error: ParsedError) -> str | None:
    """The message of argparse's ``prog: error: msg`` line in an error of no class, if any.

    argparse's ``parser.error(msg)`` prints the usage, then that line, and exits (pytest
    prints ``ERROR: `` before the usage).
    """
    if ": error: " not in error.message or not (
        error.error_class is None or _class_is_a_level(error)
    ):
        return None
    said = _ARGPARSE_ERROR.search(error.message)
    return said["message"] if said is not None else None


MAX_REPR_CHARS: Final = 4000
"""A message longer than this is not read as a list or dict of messages."""

MAX_REPR_LEAVES: Final = 8
"""At most this many messages of such a list or dict are tried."""


def _repr_leaves(message: str) -> list[str]:
    """The messages a list or dict repr holds (its values, not its keys), first first."""
    if len(message) > MAX_REPR_CHARS:
        return []
    try:
        tree = ast.parse(message, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    leaves: list[str] = []
    pending: list[ast.expr] = [tree]
    while pending and len(leaves) < MAX_REPR_LEAVES:
        node = pending.pop()
        if type(node) is ast.Constant and isinstance(node.value, str):
            leaves.append(node.value)
        elif type(node) is ast.Dict:
            pending.extend(reversed(node.values))
        elif type(node) in (ast.List, ast.Tuple, ast.Set):
            pending.extend(reversed(node.elts))  # type: ignore[attr-defined]
        elif type(node) is ast.Call:
            # DRF's ``ErrorDetail(string='This field is required.', code='required')``
            texts = [k.value for k in node.keywords if k.arg in ("string", "message")]
            pending.extend(reversed(texts or node.args[:1]))
    return [leaf for leaf in leaves if leaf.strip()]


def _without_id_note(message: str) -> str | None:
    """The message without a request's ID note (:data:`_ID_NOTE`), or None when it has none."""
    if "ID: " not in message or len(message) > MAX_LEADING_CHARS:
        return None
    unnoted = _ID_NOTE.sub("", message, count=1)
    return unnoted if unnoted != message else None


def _leading_parts(message: str) -> Iterator[tuple[str, str]]:
    """A message's leading paragraphs, then its leading lines, longest first, with a note each.

    Lines only up to :data:`MAX_LEADING_CHARS` characters, and only those that end inside a
    paragraph (the others are a paragraph's end, given already).
    """
    paragraphs = message.split("\n\n")[:MAX_PARAGRAPHS]
    for count in range(len(paragraphs) - 1, 0, -1):
        leading = "\n\n".join(paragraphs[:count]).strip()
        yield (
            leading,
            (f"the message's first {count} paragraph(s) match the template; the rest follows it"),
        )
    if len(message) > MAX_LEADING_CHARS:
        return
    lines = message.strip().split("\n")[:MAX_LEADING_LINES]
    for count in range(len(lines) - 1, 0, -1):
        if lines[count].strip() and lines[count - 1].strip():
            leading = "\n".join(lines[:count]).strip()
            yield (
                leading,
                (f"the message's first {count} line(s) match the template; the rest follows it"),
            )


def _parenthesised_variants(message: str, error_class: str | None) -> list[str]:
    """The variants of a message that ends with ``)`` (see :func:`message_variants`)."""
    variants: list[str] = []
    if message.startswith(("('", '("')):
        # ``raise ValueError("Invalid %s", x)`` prints its arguments: ``('Invalid %s', 4)``.
        head = _TUPLE_HEAD.match(message)
        if head is not None:
            try:
                first = ast.literal_eval(head["text"])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                first = None
            if isinstance(first, str) and first:
                variants.append(first)
    # A note with a link a class adds at the end (SQLAlchemy's " (Background on this warning
    # at: https://sqlalche.me/e/20/qzyx)", when the site passes ``code=``).
    linked = _LINK_NOTE.search(message, max(0, len(message) - MAX_LINK_NOTE))
    if linked is not None and message[: linked.start()].strip():
        variants.append(message[: linked.start()].rstrip())
    # A log line that shows the exception's repr: ``task failed: KeyError('phase')``.
    text = repr_message(message)
    if text is not None:
        variants.append(text)
    if (error_class or "").endswith("ExceptionGroup"):
        # An exception group prints its message with " (3 sub-exceptions)" after it.
        grouped = _SUB_EXCEPTIONS.sub("", message)
        if grouped != message:
            variants.append(grouped)
    return variants


_TRACEBACK_HEADER: Final = re.compile(
    r"^[ \t]*Traceback \(most recent call last\):[ \t]*\r?$", re.MULTILINE
)

MAX_LEAD_CHARS: Final = 8000
"""At most this much text before a traceback is tried as the message logged with it."""


def _offer(
    candidates: dict[int, _Candidate],
    records: Iterable[int],
    number: int,
    captures: tuple[str, ...],
    note: str,
    bonus: float = 0.0,
) -> int:
    """Make the records of a template that produces error ``number``'s message candidates.

    A record already there only for a frame near it (another error of the chain) takes this
    message, keeping its frame evidence; one already matched by a message stays as it is.

    Returns:
        How many records were offered.
    """
    offered = 0
    for record in records:
        offered += 1
        candidate = candidates.get(record)
        if candidate is None:
            candidates[record] = _Candidate(
                record, number, captures, line_note=note, line_bonus=bonus
            )
        elif candidate.captures is None:
            candidate.error, candidate.captures = number, captures
            candidate.line_note, candidate.line_bonus = note, bonus
    return offered


SAME_CLASS_GAIN: Final = 15.0
"""What a record gains when the pasted class is its class."""

BASE_CLASS_GAIN: Final = 10.0
"""What it gains when the pasted class derives from its class: less than the class itself."""

CLASS_SITES: Final = 8
"""Without a template that matches, the records of a class raised at most this often come in."""

CLASS_GAIN: Final = 20.0
"""What such a record gains: more than a loose match of a class the paste contradicts."""

CROWDED_CLASS_GAIN: Final = 10.0
"""What a record of a class raised at more places gains, when its template prints the message."""

MAX_CLASS_RECORDS: Final = 50
"""At most this many records of a class raised at many places come in that way."""

HANDED_GAIN: Final = 10.0
"""What a specific record off a traceback gains when the traceback's raise passes on a text
it was given (``raise RuntimeError(unbound_message)``): more than the raise's frame."""

MAX_HANDED_READS: Final = 50
"""At most this many records off a traceback are read to tell whether they hand their text on."""

PACKAGE_GAIN: Final = 8.0
"""What a record gains when the pasted class is qualified with its package (or the paste is
how its package prints an error)."""


def _packaged(package: str) -> str:
    return f"the class is qualified with the record's package ({package})"


_ROOT_CLASSES: Final = frozenset({"Exception", "BaseException"})
"""Classes nearly every class derives from: a record's deriving from one tells nothing."""

NEAR_SAME_CLASS_GAIN: Final = 40.0
"""What a record found only by its words scores when it raises the pasted class: more than a
template that fits the message but contradicts the class (at most 43 without a frame at it)."""

INTERPRETER_PENALTY: Final = 20.0
"""What a record loses when Python itself raises the pasted message and no frame is at it."""


def _innermost_at(candidate: _Candidate) -> bool:
    """Whether the innermost frame is at the candidate's statement: the error was raised there.

    An outer frame there passed the error on (``raise self._exception`` of an exception
    raised deeper, in another thread).
    """
    return candidate.frame_gain >= INNERMOST_GAIN - INSIDE_STATEMENT


def _class_is_a_level(error: ParsedError) -> bool:
    """Whether a parsed error's class is a log level (``ERROR: …``, a log record's)."""
    return (error.error_class or "").upper() in _LEVELS


def _interpreter_message(error: ParsedError) -> InterpreterMessage | None:
    """The interpreter's message an error shows: only with a built-in class, or none.

    Or an operating system error's text that another class passes on (see
    :func:`~errdex.match.interpreter.passed_on`).

    A log line's message is compared with every class's (uvicorn's ``ERROR:    [Errno 98]
    Address already in use`` logs the ``OSError`` it caught).
    """
    qualified = error.qualified_class
    said = _argparse_said(error)
    if said is not None:
        # argparse's own messages (``unrecognized arguments: --cov``), under its usage.
        return interpreter_message(None, said)
    if error.level is not None and _class_is_a_level(error):
        return interpreter_message(None, error.message)
    if (
        qualified is not None
        and "." in qualified
        and qualified.split(".", 1)[0] not in sys.stdlib_module_names
        # django's ``django.db.utils.OperationalError`` raises the driver's message again
        and error.error_class not in DBAPI_ERRORS
    ):
        # A library's own class (``requests.exceptions.ConnectionError``), which may pass on
        # an operating system error's text.
        return passed_on(qualified, error.message)
    said_by = interpreter_message(error.error_class, error.message)
    if said_by is None and qualified is not None and error.error_class not in BUILTIN_EXCEPTIONS:
        return passed_on(qualified, error.message)  # ``ConnectError: [Errno 111] …``
    return said_by


def _not_the_interpreter(
    candidates: dict[int, _Candidate], primary: int, interpreter: InterpreterMessage
) -> None:
    """Make no exact match of a record that produces a message Python itself raises.

    ``AttributeError: 'NoneType' object has no attribute 'foo'`` fits pytest's
    ``{target} has no attribute {name}``, but the interpreter raised it: only the innermost
    frame at a record's line says the record raised it (torch's ``__getattr__`` raises the
    same text).
    """
    note = (
        f"{interpreter.maker} makes this message ({interpreter.template.replace('{}', '…')}),"
        " and no frame points at this record's line"
    )
    for candidate in candidates.values():
        if candidate.error == primary and not _innermost_at(candidate):
            if candidate.exact:
                candidate.exact = False
                candidate.evidence.append(note)
            candidate.score -= INTERPRETER_PENALTY


def _logged_message(parsed: ParsedInput, text: str) -> str:
    """The text a paste shows before its one traceback (chain), trimmed; else empty.

    ``logger.exception(msg)`` and ``exc_info=True`` print the message, then the traceback of
    the exception being handled. Only a paste that is one exception chain, each exception
    with its own traceback header, counts: text before one of several unrelated tracebacks
    says nothing of the last.
    """
    errors = parsed.errors
    if "Traceback (most recent call last):" not in text or not errors:
        return ""
    for position, error in enumerate(errors):
        if error.level is not None or (position and error.relation not in ("cause", "context")):
            return ""
    headers = 0
    first = -1
    for header in _TRACEBACK_HEADER.finditer(text):
        headers += 1
        if headers > len(errors):
            return ""
        first = header.start() if first < 0 else first
    if headers != len(errors):
        return ""
    return text[max(0, first - MAX_LEAD_CHARS) : first].strip()


_FIRST_LINE_NOTE: Final = (
    "the message's first line matches the template; the lines after it follow it"
)


MIN_WRAP_WIDTH: Final = 40
"""A message whose lines all end at one column at least this far is taken as hard-wrapped."""


def _unwrapped(message: str, qualified_class: str | None) -> str | None:
    """A hard-wrapped message's lines joined as they were before the wrap, else None.

    Every line but the last ends at the same column (the first counts the ``Class: `` before
    it), at least :data:`MIN_WRAP_WIDTH`, and the last is no longer.
    """
    lines = message.split("\n")
    if len(lines) > 200:
        return None
    shown = len(lines[0]) + (len(qualified_class) + 2 if qualified_class else 0)
    widths = {shown, *(len(line) for line in lines[1:-1])}
    if len(widths) != 1 or shown < MIN_WRAP_WIDTH or len(lines[-1]) > shown:
        return None
    return "".join(lines)


def _spans_lines(captures: tuple[str, ...] | None) -> bool:
    """Whether a match took line breaks into one of its values."""
    return captures is not None and any("\n" in value for value in captures)


def _first_line(message: str) -> str:
    """A multi-line message's first line, stripped; empty for a one-line message."""
    text = message.strip()
    end = text.find("\n")
    return text[:end].strip() if end > 0 else ""


def _cut_in_hole(value: str) -> bool:
    """Whether a captured value is a hole's start that a cut message stops inside."""
    return len(value) > 1 and value.endswith("…")


def _paste_lines(text: str) -> list[str]:
    """The lines of a paste the fallbacks look at: the last ones, without very long lines."""
    tail = text[-MAX_PASTE_LINES * FALLBACK_LINE_CHARS :]
    return [
        line for line in tail.splitlines()[-MAX_PASTE_LINES:] if len(line) <= FALLBACK_LINE_CHARS
    ]


_ASYNC_PATH: Final = re.compile(
    r"(?:^|/)(?:asynchronous|aio|_async|async_?)(?:/|\.py\Z)|_async\.py\Z"
)


_BY_RECORD: Final = attrgetter("record")
_BY_SCORE: Final = attrgetter("score", "spelled")


def _best_shared(candidates: list[_Candidate]) -> bool:
    """Whether two candidates or more have the best score.

    What ``len(_best_scored(candidates)) > 1`` tells, without the list: the hundreds of sites
    of one message tie.
    """
    if len(candidates) < 2:
        return False
    best = _top_score(candidates)
    seen = False
    for candidate in candidates:
        if candidate.score == best:
            if seen:
                return True
            seen = True
    return False


def _best_scored(candidates: list[_Candidate]) -> list[_Candidate]:
    """The candidates that have the best score (every one of fewer than two)."""
    if len(candidates) < 2:
        return candidates
    best = _top_score(candidates)
    return [c for c in candidates if c.score == best]


def _top_score(candidates: list[_Candidate]) -> float:
    """The best score of some candidates (at least one).

    A loop: compiled, ``max(c.score for c in …)`` makes a generator and looks ``max`` up in
    the builtins at every call, twice per explain.
    """
    best = candidates[0].score
    for candidate in candidates:
        if candidate.score > best:
            best = candidate.score
    return best


def _most_shown(fits: list[tuple[int, tuple[str, ...], int]]) -> int:
    """The most literal characters a template a cut message fits shows (0 with none).

    A loop: ``max(…, default=0)`` parses its keyword on every call, a fifth of the time a
    message that matches nothing spends looking for the template whose first line it is.
    """
    most = 0
    for _, _, shown in fits:
        if shown > most:
            most = shown
    return most


@functools.lru_cache(maxsize=4096)
def _asynchronous(path: str) -> bool:
    """Whether a file is the asynchronous copy of a synchronous one.

    pymongo's ``asynchronous/``, kubernetes' ``aio/``: of two sites that tie, the synchronous
    one is listed first, as more users call it.
    """
    return _ASYNC_PATH.search(path) is not None


_CLICK_TRY: Final = re.compile(r"""^Try (['"])\S.* --help\1 for help\.[ \t]*$""", re.M)
"""The line click prints under the usage of a command a usage error stopped."""


def _printed_by(paste: str) -> str:
    """The package whose way of printing errors the paste shows without their class, if any.

    click (and typer, which raises click's errors) prints a usage error as ``Usage: …``,
    ``Try 'cli --help' for help.``, then ``Error: …``: its ``Missing argument 'NAME'.`` is
    click's, not SQLAlchemy's ``Missing argument {argument}``.
    """
    if "Usage: " in paste and " --help" in paste and _CLICK_TRY.search(paste):
        return "click"
    return ""


def _package_of(qualified: str | None) -> str:
    """The top-level package a pasted class names (``django`` of ``django.db.utils.X``)."""
    return qualified.partition(".")[0] if qualified and "." in qualified else ""


class Explainer:
    """Answers pasted errors from a store, through its matcher index.

    Args:
        store: The store the records are read from.
        index: The matcher index built from that store.
    """

    def __init__(self, store: RecordStore, index: MatcherIndex) -> None:
        self.store = store
        self.index = index

    @classmethod
    def open(
        cls, store: RecordStore, *, cache: Path | None, engine: str = "aho-corasick"
    ) -> Explainer:
        """Load the store's cached index, or build (and cache) it when missing or stale.

        Args:
            store: The store.
            cache: Where the index is cached (``<db>.matcher``); None to never cache.
            engine: The prefilter engine (``aho-corasick``, or ``hyperscan`` with
                ``errdex[fast]``).

        Returns:
            The explainer.
        """
        version = store.version()
        index = load_index(cache, version=version) if cache is not None else None
        if index is None:
            index = build_index(
                store.index_rows(), version=version, engine=engine, classes=store.class_rows()
            )
            if cache is not None:
                save_index(index, cache)
        return cls(store, index)

    @classmethod
    def for_database(
        cls, store: RecordStore, db: Path, *, engine: str = "aho-corasick"
    ) -> Explainer:
        """Open an explainer whose index is cached next to the database file ``db``."""
        cache = None if str(db) == ":memory:" else index_path(db, engine)
        return cls.open(store, cache=cache, engine=engine)

    def explain(self, text: str, *, top: int = 5) -> Explanation:
        """Explain a pasted error, traceback or log.

        Args:
            text: Anything a user pastes.
            top: At most this many matches are returned.

        Returns:
            The parsed input and the ranked matches.
        """
        parsed = parse(text)
        candidates: dict[int, _Candidate] = {}
        primary = len(parsed.errors) - 1
        lead = _logged_message(parsed, text)
        # The error the paste ends with first: a record its message matches is its, even when
        # an earlier error of the chain has a frame near that record's line (the
        # ``except KeyError: raise LookupError(...)`` a few lines below the failing lookup).
        if parsed.errors:
            self._collect(primary, parsed.errors[primary], candidates, text, lead)
        for number in range(primary - 1, -1, -1):
            self._collect(number, parsed.errors[number], candidates, "", "")
        plain: dict[tuple[int, int, bool, str, bool], _Candidate] = {}
        printer = _printed_by(text)
        for candidate in candidates.values():
            self._score(candidate, parsed.errors[candidate.error], plain, printer)
        errors = parsed.errors
        if errors and (len(errors) > 1 or errors[0].frames):
            self._off_the_traceback(parsed, candidates)
        interpreter = _interpreter_message(errors[primary]) if errors else None
        if interpreter is not None and not interpreter.general:
            _not_the_interpreter(candidates, primary, interpreter)
        ranked = list(candidates.values())
        exact = [c for c in ranked if c.exact]
        ambiguous = self._mark_ambiguity(exact)
        chosen = self._best(exact or ranked, top, tie=_best_shared(ranked))
        if not exact:
            chosen = self._nearest_by_words(parsed, chosen, top)
        return Explanation(
            parsed=parsed,
            matches=self._materialise(chosen),
            ambiguous=ambiguous,
            total=len(exact) if exact else len(chosen),
            interpreter=(
                interpreter.describe(
                    None if _class_is_a_level(errors[primary]) else errors[primary].error_class
                )
                if interpreter and not (interpreter.general and exact)
                else None
            ),
        )

    # -- candidates ----------------------------------------------------------------------

    def _collect(
        self,
        number: int,
        error: ParsedError,
        candidates: dict[int, _Candidate],
        paste: str,
        lead: str,
    ) -> None:
        """Add the records whose template produces the message, and those frames point at.

        Args:
            number: The error's position in the parse.
            error: The error.
            candidates: Where candidates are collected.
            paste: The pasted text, searched when the message itself matches nothing
                specific (the primary error only; else empty).
            lead: The text the paste shows before its traceback, tried as the message when
                the error's own matches nothing (see :func:`_logged_message`).
        """
        index = self.index
        variants = message_variants(error)
        if not self._verify_variants(
            number, variants, candidates, note="", wanted=error.error_class
        ):
            self._fall_back(number, error, candidates, paste, lead)
        first_line = _first_line(error.message) if "\n" in error.message else ""
        if first_line:
            self._first_line_matches(number, first_line, candidates)
        frames = error.frames or self._mentions(paste)
        # A log record's own place (not a printed warning's, which is the user's line).
        logged = _class_is_a_level(error) and not error.frames[1:]
        for position, frame in enumerate(frames):
            innermost = position == len(frames) - 1
            in_file = index.records_in_file(frame.path, logged=logged)
            for record in in_file:
                candidate = candidates.get(record)
                if candidate is None:
                    near = (
                        frame.line is not None
                        and abs(frame.line - index.line(record)) <= NEARBY_LINES
                    )
                    captures = self._verify(record, variants)
                    if captures is None and not near:
                        continue
                    note = ""
                    if captures is None and first_line and frame.line == index.line(record):
                        # The class prints more lines after the message (PyYAML's marks,
                        # notes, hints): at the frame's own line, its first line is enough.
                        captures = self._verify(record, [first_line])
                        note = "" if captures is None else _FIRST_LINE_NOTE
                    candidate = _Candidate(record, number, captures, line_note=note)
                    candidates[record] = candidate
                self._frame_evidence(candidate, frame.line, innermost, number)
            if innermost:
                self._same_statement(frame, in_file, number, candidates)
        if error.logger:
            module = error.logger.replace(".", "/")
            for path in (f"{module}.py", f"{module}/__init__.py"):
                for record in index.records_in_file(path):
                    hinted = candidates.get(record)
                    if hinted is not None:
                        hinted.logger_gain = 20.0

    def _fall_back(
        self,
        number: int,
        error: ParsedError,
        candidates: dict[int, _Candidate],
        paste: str,
        lead: str,
    ) -> None:
        """Look further when the whole message matches no specific template.

        In turn, until one finds a specific template: the message's leading paragraphs or
        lines (also without a request's ID note), the start of a message cut short, the text
        before the traceback, and the templates found inside the message's lines, then inside
        the paste's (see :meth:`_collect`).
        """
        message = error.message
        unnoted = _without_id_note(message)
        for text in (message,) if unnoted is None else (message, unnoted):
            if self._leading_part(number, text, error.error_class, candidates):
                return
        if error.truncated:
            if self._verify_cut(number, message, candidates):
                return
        elif (
            "\n" not in message.strip() and self._verify_first_line(number, message, candidates)
        ) or self._verify_cut(number, message, candidates, marked=False):
            # Its first line, or its start: a paste cut at a line, or a one-line paste of its
            # first sentences (fastapi's long ``Invalid args for response field! …``).
            return
        if lead and lead != message.strip():
            note = "the text before the traceback matches the template"
            if self._verify_variants(
                number, [lead], candidates, note=note, wanted=error.error_class
            ):
                return
            if "\n" in lead and self._verify_cut(number, lead, candidates, marked=False):
                return
        # The error may sit inside other text: context lines printed around it (pip's
        # "Collecting …"), a log prefix the parser does not know, or a format the parser
        # misread. Look for a specific template in each line, the last (where the error
        # usually is) counting most.
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        found = self._search_lines(number, lines, candidates, "the message")
        pasted = [line.strip() for line in _paste_lines(paste) if line.strip()]
        if not found and pasted and pasted != lines:
            found = self._search_lines(number, pasted, candidates, "the paste")
        if not found and error.error_class:
            self._of_the_class(number, error, candidates)

    def _leading_part(
        self, number: int, message: str, wanted: str | None, candidates: dict[int, _Candidate]
    ) -> int:
        """Add the records whose specific template produces the message's leading part.

        Text that a class, a framework or a server adds after the message: a paragraph of
        its own (pydantic's "For further information visit …"), or lines (the server's
        message that huggingface_hub's ``_format`` appends). Longest first.

        Returns:
            How many specific templates were found (see :meth:`_verify_variants`).
        """
        for leading, note in _leading_parts(message):
            found = self._verify_variants(number, [leading], candidates, note=note, wanted=wanted)
            if found:
                return found
        return 0

    def _of_the_class(
        self, number: int, error: ParsedError, candidates: dict[int, _Candidate]
    ) -> None:
        """Add the records of the pasted class, when no template matches the message.

        ``NonHttpUrlClientError: ftp://…``: aiohttp raises that class at one place, and its
        template (the URL) is all hole. Of a class raised at many places, only the records
        whose template can print the message (all hole, too) come in, and gain less.
        """
        if (
            not error.error_class
            or _class_is_a_level(error)
            or error.error_class in BUILTIN_EXCEPTIONS
        ):
            return  # a log level, or a class Python and every library raise
        index = self.index
        name = str(error.error_class)
        package = _package_of(error.qualified_class)
        # A class of the source it derives from counts as well: SQLAlchemy raises
        # ``DBAPIError.instance(…)``, which makes the ``OperationalError`` a user sees.
        # A class qualified with a mined package is that package's: django's
        # ``OperationalError`` is not raised at SQLAlchemy's sites of one of that name.
        own = bool(package) and index.has_package(package)
        classes = [(name, own)] + [
            (ancestor, bool(package))
            for ancestor in sorted(index.ancestors(name, package))
            if index.defines(ancestor, package)
        ]
        groups = [
            [
                record
                for record in index.records_of_class(cls)
                if not scoped or in_package(index.path(record), package)
            ]
            for cls, scoped in classes
        ]
        variants: list[str] | None = None
        for position, records in enumerate(groups):
            crowded = len(records) > CLASS_SITES
            if not records or (crowded and position):
                continue  # a base class raised all over says nothing of this one
            variants = variants or message_variants(error)
            offered = 0
            for record in records:
                if record in candidates:
                    continue
                captures = self._verify(record, variants)  # a template of almost no text
                if captures is None and (position or crowded):
                    # A base's other errors say nothing of this one; of a class raised at
                    # many places (jinja2's ``TemplateNotFound: index.html``), only the sites
                    # whose template can print the message (the name passed through) count.
                    continue
                candidates[record] = _Candidate(record, number, captures, class_sites=len(records))
                offered += 1
                if offered >= MAX_CLASS_RECORDS:
                    break

    def _search_lines(
        self, number: int, lines: list[str], candidates: dict[int, _Candidate], what: str
    ) -> int:
        """Add records whose specific template is found inside one of the lines."""
        found = 0
        lines = [line for line in lines if len(line) <= FALLBACK_LINE_CHARS]
        last = len(lines) - 1
        for position in range(last, max(-1, last - MAX_LINES), -1):
            where = f"line {position + 1} of {what}" if last else what
            for template, captures in self.index.find_in(lines[position]):
                records = self.index.records_of(template, MAX_CANDIDATES)
                note = f"{where} contains the template"
                bonus = 12.0 * position / last if last else 12.0
                found += _offer(candidates, records, number, captures, note, bonus)
        return found

    @staticmethod
    def _mentions(paste: str) -> tuple[Frame, ...]:
        """Read ``path.py:LINE`` mentions as frames, for formats the parser has no frames for."""
        if ".py" not in paste or not any(hint in paste for hint in _MENTION_HINTS):
            return ()
        frames: list[Frame] = []
        for line in _paste_lines(paste):
            if not any(hint in line for hint in _MENTION_HINTS):
                continue
            for match in _MENTION.finditer(line):
                frames.append(Frame(path=match["path"], line=int(match["line"])))
                if len(frames) >= 50:
                    return tuple(frames)
        return tuple(frames)

    def _verify_variants(
        self,
        number: int,
        variants: list[str],
        candidates: dict[int, _Candidate],
        *,
        note: str,
        wanted: str | None,
    ) -> int:
        """Add the records whose template produces one of the variants.

        Args:
            number: The error's position in the parse.
            variants: The texts its message may be (see :func:`message_variants`).
            candidates: Where candidates are collected.
            note: The evidence to give matches instead of the plain one.
            wanted: The pasted class, if any.

        Returns:
            How many of them have a specific template (:data:`SPECIFIC` literal characters)
            with a record of a class the pasted one does not contradict: only such a match
            makes the further searches of :meth:`_fall_back` needless (urllib3's
            ``MaxRetryError`` message holds a ``NewConnectionError`` template).
        """
        index = self.index
        specific = 0
        loose = any("\n" in v or "  " in v for v in variants)
        for variant in variants:
            proposed = index.candidates(variant, anchored=True)
            for template, captures, loosely in index.verify(proposed, variant, loose=loose):
                if loosely and not note:
                    note = "the message matches the template apart from its whitespace"
                if index.literal_length(template) >= SPECIFIC and (
                    not wanted
                    or not all(
                        self._contradicts(wanted, record)
                        for record in index.records_of(template, _CLASS_CHECKS)
                    )
                ):
                    specific += 1
                self._add_records(template, number, captures, note, candidates)
            if specific:
                break
        return specific

    def _off_the_traceback(self, parsed: ParsedInput, candidates: dict[int, _Candidate]) -> None:
        """Rank below the others a record whose file no frame of a traceback passes through.

        When a paste's frames reach the source, the error was raised in one of their files:
        a site elsewhere that raises the same message (werkzeug's ``NotFound()`` in three
        places, while the traceback ends in ``abort``) is another site. Unless the record
        hands its text to the code the traceback ends in, which raises whatever text it was
        given: flask's ``LocalProxy(…, unbound_message=_no_app_msg)``, raised by werkzeug's
        ``raise RuntimeError(unbound_message)``, then ranks above that raise.
        """
        index = self.index
        framed: set[int] = set()
        for error in parsed.errors:
            for frame in error.frames:
                framed.update(index.records_in_file(frame.path))
        if not framed:
            return
        files = {index.path(record) for record in framed}
        # A frame at a record that raises whatever text it is handed (werkzeug's ``raise
        # RuntimeError(unbound_message)``): the text is made elsewhere, and a specific template
        # off the traceback may be where (flask's ``_no_app_msg``, bound at import).
        handed = any(
            candidate.frame_gain and candidate.captures is not None and candidate.spelled < SPECIFIC
            for candidate in candidates.values()
        )
        off = [
            candidate
            for candidate in candidates.values()
            if not candidate.frame_gain and index.path(candidate.record) not in files
        ]
        makers = self._handed_records(off) if handed else set()
        for candidate in off:
            if candidate.record in makers:
                candidate.score += HANDED_GAIN
                candidate.evidence.append(
                    "no frame of the traceback is in the record's file, but the one at the"
                    " raise passes on a text it was given: this record makes that text"
                )
                continue
            candidate.score -= OFF_TRACEBACK
            candidate.evidence.append("no frame of the traceback is in the record's file")

    def _handed_records(self, candidates: list[_Candidate]) -> set[int]:
        """Those of the candidates whose record hands its text on to be raised elsewhere.

        Read from the store (the form ``handed``): a traceback shows the other code's raise.
        """
        specific = [c.record for c in candidates if c.spelled >= SPECIFIC]
        stored = self._stored(specific[:MAX_HANDED_READS])
        return {record for record, found in stored.items() if found.message_form == "handed"}

    def _stored(self, records: list[int]) -> dict[int, ErrorRecord]:
        """Read records of the index from the store, by their index number (those it has)."""
        rowids = self.index.rowids
        rows = self.store.get_rows([rowids[record] for record in records])
        return {
            record: row.record
            for record in records
            if (row := rows.get(rowids[record])) is not None
        }

    def _first_line_matches(
        self, number: int, first_line: str, candidates: dict[int, _Candidate]
    ) -> None:
        """Add the records whose template produces a multi-line message's first line.

        A class may print lines after its message (PyYAML's marks, jsonschema's "Failed
        validating …"). A template that matched the whole message only because its last hole
        took those lines takes the first line's values instead; one that matches the first
        line alone comes in with that said (and ranks below a match of the whole message).
        """
        index = self.index
        for template, captures, _ in index.verify(
            index.candidates(first_line, anchored=True), first_line
        ):
            if index.literal_length(template) < SPECIFIC:
                continue
            for record in index.records_of(template, MAX_CANDIDATES):
                candidate = candidates.get(record)
                if candidate is None:
                    candidates[record] = _Candidate(
                        record, number, captures, line_note=_FIRST_LINE_NOTE
                    )
                elif candidate.error == number and _spans_lines(candidate.captures):
                    candidate.captures, candidate.line_note = captures, _FIRST_LINE_NOTE

    def _contradicts(self, wanted: str, record: int) -> bool:
        """Whether a pasted class rules a record out (the test :meth:`_score` penalises)."""
        return self._class_verdict(wanted, record)[0] == "contradicts"

    def _class_verdict(
        self, wanted: str, record: int, qualified: str | None = None
    ) -> tuple[str, str]:
        """How a pasted class bears on a record (``same``, ``base``, ``derived``, …).

        The verdicts: ``same``, ``base``, ``derived``, ``other`` or ``contradicts``.

        ``base``: the record raises a class the pasted one derives from (a factory's
        ``cls(…)``, or a base class that a subclass of the same text inherits); the record
        may be the site, but a record of the pasted class itself is the better evidence.
        ``derived``: the record raises a class that derives from the pasted one (but
        ``Exception`` or ``BaseException``), as a source does that gives an error a class of
        its own and keeps the old one as its base: another version of the site.

        Args:
            wanted: The pasted class, without its module.
            record: The record.
            qualified: The pasted class with its module, when the paste shows it.

        Returns:
            The verdict and the evidence that says why.
        """
        index = self.index
        have = index.error_class(record)
        # A pasted ``Error:`` may be a level; a record's level is its class in capitals (a
        # JavaScript ``throw new Error(…)`` is of the class ``Error``).
        wanted_level, have_level = wanted.upper() in _LEVELS, have in _LEVELS
        if same_class(wanted, have):
            return self._same_name(have, record, qualified)
        if wanted_level and have_level:
            return "other", f"logged at {have}, pasted at {wanted}"
        if wanted_level or have_level or index.path(record).endswith(_CLASSLESS):
            return "other", f"the record is {have}; the input shows {wanted}"
        if not _names_a_class(have):
            return "other", f"the record raises {have}, a name the code binds at run time"
        if wanted in index.wrapper_classes():
            return "other", (
                f"the record is {have}; the input's {wanted} is raised with the message of"
                f" another error (raise {wanted}(str(e)))"
            )
        package = _package_of(qualified)
        if have in index.ancestors(wanted, package) and index.defines(have, package):
            return "base", f"the input's {wanted} derives from {have}, a class of the source"
        if (
            package
            and index.knows_classes()
            and not index.defines(wanted, package)
            and in_package(index.path(record), package)
        ):
            # botocore's ``botocore.errorfactory.ResourceNotFoundException``, a subclass of
            # ``ClientError`` made from the service's model when the client is created.
            return "other", (
                f"the record is {have}; the input's {qualified} is no class the source defines"
                " (one made at run time)"
            )
        if wanted not in _ROOT_CLASSES and wanted in index.ancestors(have):
            # starlette raised ``RuntimeError('Cannot call "send" once a close message has been
            # sent.')``, and now ``WebSocketDisconnected``, a RuntimeError, at the same place.
            return "derived", (
                f"the record raises {have}, which derives from the input's {wanted}: a version"
                f" of the source that raised {wanted} there printed this"
            )
        return "contradicts", f"the class differs: the input shows {wanted}, the record {have}"

    def _same_name(self, have: str, record: int, qualified: str | None) -> tuple[str, str]:
        """Judge a record of the pasted class's name: the same class, unless another package's.

        ``pydantic_core._pydantic_core.ValidationError: 1 validation error for User`` is
        pydantic-core's (compiled), not the ``ValidationError`` that ``pydantic.v1`` defines
        and raises with a message of the same start; django's ``OperationalError`` is not
        SQLAlchemy's. A record of a package that raises a class it does not define (flask's
        ``NotFound()``, werkzeug's) stays the same class.
        """
        package = _package_of(qualified)
        path = self.index.path(record)
        if package and not in_package(path, package):
            own = path.partition("/")[0]
            if self.index.defines(have, own):
                return "contradicts", (
                    f"the input's {qualified} is {package}'s; the record raises {own}'s own {have}"
                )
        return "same", f"the error class is {have}"

    def _verify_cut(
        self,
        number: int,
        message: str,
        candidates: dict[int, _Candidate],
        *,
        marked: bool = True,
    ) -> int:
        """Add the records whose message starts as a message cut short does.

        Only the templates of which the message shows the most literal text count, and only
        with at least :data:`SPECIFIC` characters of it when the message is marked as cut
        (``...``, ``…``), :data:`UNMARKED_CUT` when it is not (a paste that stops early).

        Returns:
            How many templates were added.
        """
        text = message.rstrip().removesuffix("...").removesuffix("…").rstrip()
        least = SPECIFIC if marked else UNMARKED_CUT
        if len(text) < least:
            return 0  # it cannot show that many of a template's characters
        fits = self.index.verify_cut(text)
        if not marked:
            # Unmarked, only a paste that stops inside the template's text counts: one that
            # stops inside a hole may as well go on with other text.
            fits = [fit for fit in fits if not any(_cut_in_hole(value) for value in fit[1])]
        most = _most_shown(fits)
        if most < least:
            return 0
        note = (
            f"the message is cut short; the {most} literal characters it shows match"
            if marked
            else f"the message stops before the template's end (not all of it was pasted?);"
            f" the {most} literal characters it shows match"
        )
        best = [(template, captures) for template, captures, shown in fits if shown == most]
        for template, captures in best:
            self._add_records(template, number, captures, note, candidates)
        return len(best)

    def _verify_first_line(
        self, number: int, message: str, candidates: dict[int, _Candidate]
    ) -> int:
        """Add the records whose template's first line a one-line message is.

        sklearn's ``Expected 2D array, got 1D array instead:`` goes on with ``array=[…]`` and
        a hint, each on a line of its own, and users paste the first line. The message must
        end where a line of the template ends, showing at least :data:`SPECIFIC` literal
        characters (anywhere else, only :data:`UNMARKED_CUT` make a paste that stops early).

        Returns:
            How many templates were added.
        """
        text = message.strip()
        if len(text) < SPECIFIC:
            return 0  # it cannot show that many of a template's characters
        # With a line break after it, the message ends in the template's text exactly where
        # that text breaks its line: no capture stops inside a hole. A space before the break
        # is lost in a paste (fastapi's ``… to be installed. \n``).
        fits = [
            (template, captures, shown)
            for template, captures, shown in self.index.verify_cut(
                text, multiline=True, ends=("\n", " \n")
            )
            if not any(_cut_in_hole(value) for value in captures)
        ]
        most = _most_shown(fits)
        if most < SPECIFIC:
            return 0
        note = (
            f"the message is the first line of the template's text (the rest was not pasted?);"
            f" the {most} literal characters it shows match"
        )
        best = [(template, captures) for template, captures, shown in fits if shown == most]
        for template, captures in best:
            self._add_records(template, number, captures, note, candidates)
        return len(best)

    def _add_records(
        self,
        template: int,
        number: int,
        captures: tuple[str, ...],
        note: str,
        candidates: dict[int, _Candidate],
    ) -> None:
        """Add a matching template's records not yet considered (at most MAX_CANDIDATES)."""
        _offer(candidates, self.index.records_of(template, MAX_CANDIDATES), number, captures, note)

    def _verify(self, record: int, variants: list[str]) -> tuple[str, ...] | None:
        template = self.index.template_of(record)
        for variant in variants:
            captures = self.index.match(template, variant)
            if captures is not None:
                return captures
        return None

    def _frame_evidence(
        self, candidate: _Candidate, line: int | None, innermost: bool, error: int
    ) -> None:
        """Keep the strongest frame evidence a candidate has.

        A frame of another error of the chain than the one whose message the record
        produces counts half: requests' ``ConnectionError(e)`` shows urllib3's
        ``MaxRetryError`` text, and urllib3's site, at the earlier error's innermost frame,
        is where that error was raised, not the one pasted last.
        """
        index = self.index
        record = candidate.record
        start, end = index.line(record), index.end_line(record)
        if line is not None and start <= line <= end:
            # The statement's first line beats a line inside it (another version's statement
            # may span the same line).
            gain = (INNERMOST_GAIN if innermost else OUTER_GAIN) - (
                0.0 if line == start else INSIDE_STATEMENT
            )
            note = f"a frame points at the record's line ({index.path(record)}:{line})"
        elif line is not None and abs(line - start) <= NEARBY_LINES:
            gain = 15.0 - abs(line - start) / NEARBY_LINES * 5
            note = (
                f"a frame is in the same file at line {line}, near the record's line {start}"
                " (another version of the file?)"
            )
        else:
            gain, note = 5.0, "a frame is in the record's file"
        if candidate.captures is not None and error != candidate.error:
            gain /= 2
            note = f"{note}, in the traceback of another error of the chain"
        if gain > candidate.frame_gain:
            candidate.frame_gain, candidate.frame_note = gain, note

    def _same_statement(
        self, frame: Frame, in_file: list[int], number: int, candidates: dict[int, _Candidate]
    ) -> None:
        """Credit the records whose statement is the code line the innermost frame shows.

        Python prints the frame's line of code: in another version of the file, where the
        line number has moved (requests' ``raise ConnectionError(e, request=request)`` at
        ``adapters.py`` 508, at 700 in the version mined), the same statement still tells
        which site it is. Read from the store, for the records of the frame's file
        (``in_file``) that are candidates and that the frame's line is not at.
        """
        if not frame.source or frame.line is None:
            return
        index = self.index
        line = frame.line
        records = [
            record
            for record in in_file
            if record in candidates and not index.line(record) <= line <= index.end_line(record)
        ][:MAX_STATEMENT_READS]
        if not records:
            return
        shown = " ".join(frame.source.split())
        for record, stored in self._stored(records).items():
            code = stored.source_code.splitlines()
            at = stored.line_number - stored.source_code_start
            if not (0 <= at < len(code) and " ".join(code[at].split()) == shown):
                continue
            candidate = candidates[record]
            # Of several such statements in the file, the nearest to the frame's line first.
            gain = SAME_STATEMENT_GAIN - min(abs(line - index.line(record)), 1000) / 1000
            if candidate.captures is not None and number != candidate.error:
                gain /= 2
            if gain > candidate.frame_gain:
                candidate.frame_gain = gain
                candidate.frame_note = (
                    f"the innermost frame shows the record's statement (`{shown[:80]}`) at"
                    f" line {line}, the record's at {index.line(record)}"
                    " (another version of the file?)"
                )

    def _score(
        self,
        candidate: _Candidate,
        error: ParsedError,
        plain: dict[tuple[int, int, bool, str, bool], _Candidate],
        printer: str = "",
    ) -> None:
        """Score a candidate from its evidence; exact needs the message and no contradiction.

        ``printer`` is the package whose way of printing errors the paste shows (see
        :func:`_printed_by`): its records gain as those of a class qualified with it do.

        Candidates with nothing of their own (no frame, logger or line evidence) score alike
        when they share the template, the class and the package test — the hundreds of sites
        of one message in a big package — so each such group is scored once (``plain``).
        """
        index = self.index
        record = candidate.record
        template_number = index.template_of(record)
        literal = index.literal_length(template_number)
        candidate.spelled = 0 if candidate.captures is None else literal
        have = index.error_class(record)
        qualified = error.qualified_class
        package = _package_of(qualified)
        printed = not package and bool(printer)
        if printed:
            package = printer
        packaged = bool(package) and in_package(index.path(record), package)
        key = None
        if not (
            candidate.frame_gain
            or candidate.logger_gain
            or candidate.line_note
            or candidate.frame_note
            or candidate.evidence
            or candidate.class_sites
        ):
            key = (
                candidate.error,
                template_number,
                candidate.captures is not None,
                have,
                packaged,
            )
            same = plain.get(key)
            if same is not None:
                candidate.score, candidate.exact = same.score, same.exact
                candidate.evidence = list(same.evidence)
                return
        evidence = candidate.evidence
        score = candidate.frame_gain + candidate.logger_gain
        if candidate.captures is not None:
            score += 50.0 + min(literal, 60) / 6
            evidence.append(
                candidate.line_note
                or f"the message matches the template ({literal} literal characters)"
            )
            if candidate.line_note:
                score += candidate.line_bonus - 12.0
        else:
            evidence.append("the message does not match this record's template")
        if candidate.class_sites > CLASS_SITES:
            score += CROWDED_CLASS_GAIN
            evidence.append(
                f"the pasted class is raised at {candidate.class_sites} sites; the template"
                " of this one can print the message"
            )
        elif candidate.class_sites:
            score += CLASS_GAIN
            evidence.append(
                f"the pasted class (or a class of the source it derives from) is raised at"
                f" {candidate.class_sites} site(s) only, this one among them"
            )
        if candidate.frame_note:
            evidence.append(candidate.frame_note)
        if candidate.logger_gain:
            evidence.append(f"the logger {error.logger} is the record's module")
        contradiction = False
        wanted = error.error_class
        if wanted:
            verdict, said = self._class_verdict(wanted, record, qualified)
            evidence.append(said)
            if verdict == "same":
                score += SAME_CLASS_GAIN
            elif verdict == "base" or verdict == "derived":
                score += BASE_CLASS_GAIN
            elif verdict == "contradicts":
                contradiction = True
                score -= 25.0
        weak = literal < SPECIFIC
        if weak:
            # More than a frame's place can win back: where the helper a specific message is
            # passed to raises it (`self.fail(message)`), the innermost frame points at the
            # helper's `{message}`, and the caller's specific template must still come first.
            score -= 25.0
            evidence.append("the template has almost no literal text")
        if packaged:
            score += PACKAGE_GAIN
            evidence.append(
                f"the paste is how {printer} prints an error" if printed else _packaged(package)
            )
        candidate.score = score
        # A template that matches almost anything is evidence only with the innermost frame
        # at its line.
        candidate.exact = (
            candidate.captures is not None
            and not contradiction
            and (not weak or _innermost_at(candidate))
        )
        if key is not None:
            plain[key] = candidate

    def _best(self, pool: list[_Candidate], top: int, *, tie: bool) -> list[_Candidate]:
        """The ``top`` best candidates of ``pool``, best first.

        Of equal scores, the template that spells out more of the message first: pydantic's
        own text of an error before the wrapper that prints any message of its class. When
        the two best scores of all candidates tie (``tie``), the synchronous copy of a site
        before the asynchronous one; then the record stored first. Stable sorts on plain
        attributes, the last key first: a message that several hundred records print
        (pyparsing's ``… (at char {}), (line:{}, col:{})``) spent a third of its explain in
        the key function of one sort of them all by a tuple of the three, made twice.
        """
        if len(pool) < 2:
            return pool[:top]
        ordered = sorted(pool, key=_BY_RECORD)  # record numbers follow the stored order
        ordered.sort(key=_BY_SCORE, reverse=True)  # stable: equal keys keep their order
        if not tie or top < 1:
            return ordered[:top]
        # Of equal keys, the synchronous copies first: walked in order, only as far as the
        # answer goes (the hundreds of sites of one message tie, and telling each site's
        # file took a sixth of such an explain).
        path = self.index.path
        chosen: list[_Candidate] = []
        later: list[_Candidate] = []  # the asynchronous copies of the current run of equals
        score, spelled = ordered[0].score, ordered[0].spelled
        for candidate in ordered:
            if candidate.score != score or candidate.spelled != spelled:
                chosen.extend(later[: top - len(chosen)])
                if len(chosen) >= top:
                    return chosen
                later = []
                score, spelled = candidate.score, candidate.spelled
            if _asynchronous(path(candidate.record)):
                later.append(candidate)
            else:
                chosen.append(candidate)
                if len(chosen) >= top:
                    return chosen
        chosen.extend(later[: top - len(chosen)])
        return chosen

    def _mark_ambiguity(self, exact: list[_Candidate]) -> bool:
        """Note when the best exact matches are identical templates nothing tells apart."""
        tied = _best_scored(exact)
        if len(tied) < 2:
            return False
        index = self.index
        first = index.template_of(tied[0].record)
        best = index.literals(first)
        for candidate in tied:
            # Templates that differ only in their holes' names print the same messages.
            template = index.template_of(candidate.record)
            if template != first and index.literals(template) != best:
                return False
        note = f"{len(tied)} sites raise this same message; nothing in the input tells them apart"
        for candidate in tied:
            candidate.evidence.append(note)
        return True

    def _nearest_by_words(
        self, parsed: ParsedInput, chosen: list[_Candidate], top: int
    ) -> list[_Candidate]:
        """Without an exact match, fill the answer with records sharing the message's words."""
        if len(chosen) >= top or not parsed.errors:
            return chosen
        error = len(parsed.errors) - 1
        words = _WORD.findall(parsed.errors[error].message)[:12]
        if not words:
            return chosen
        rowids = self.store.search_rowids(
            SearchQuery(text=" ".join(words), any_words=True, limit=top)
        )
        known = {self.index.rowids[c.record] for c in chosen}
        wanted = [rowid for rowid in rowids if rowid not in known][: top - len(chosen)]
        rows = self.index.rowids  # ascending: the index is built in row id order
        nearest: list[_Candidate] = []
        for rowid in wanted:
            position = bisect_left(rows, rowid)
            if position < len(rows) and rows[position] == rowid:
                note = ["no template matches; this record shares words with the message"]
                nearest.append(_Candidate(position, error, None, evidence=note))
        pasted = parsed.errors[error]
        if nearest and pasted.error_class and not _class_is_a_level(pasted):
            for candidate in nearest:
                self._near_by_class(candidate, pasted)
            chosen = sorted(chosen + nearest, key=_BY_SCORE, reverse=True)  # stable
        else:
            chosen.extend(nearest)
        return chosen

    def _near_by_class(self, candidate: _Candidate, error: ParsedError) -> None:
        """Score a record found by its words from the pasted class: its own class comes first.

        A paraphrased ``rich.errors.MarkupError: … does not match any open tag`` fits pip's
        ``{fragment} does not match {canonical_name}``, a ``ValueError``: a record of the
        pasted class (in the pasted class's package) that shares the message's words is the
        better guess.
        """
        wanted = str(error.error_class)
        verdict, said = self._class_verdict(wanted, candidate.record, error.qualified_class)
        if verdict != "same":
            return
        candidate.score = NEAR_SAME_CLASS_GAIN
        candidate.evidence.append(said)
        package = _package_of(error.qualified_class)
        if package and in_package(self.index.path(candidate.record), package):
            candidate.score += PACKAGE_GAIN
            candidate.evidence.append(_packaged(package))

    def _materialise(self, chosen: list[_Candidate]) -> list[Match]:
        rows = self.store.get_rows([self.index.rowids[c.record] for c in chosen])
        matches: list[Match] = []
        for candidate in chosen:
            envelope = rows.get(self.index.rowids[candidate.record])
            if envelope is None:
                continue
            record = ensure_narrative(envelope.record)
            template = self.index.template(self.index.template_of(candidate.record))
            captures: dict[str, str] = {}
            if candidate.captures is not None:
                for name, value in zip(template.holes, candidate.captures, strict=True):
                    key = name
                    suffix = 2
                    while key in captures:
                        key = f"{name}#{suffix}"
                        suffix += 1
                    captures[key] = value
            matches.append(
                Match(
                    record=record,
                    kind=MatchKind.EXACT if candidate.exact else MatchKind.APPROXIMATE,
                    score=candidate.score,
                    evidence=candidate.evidence,
                    captures=captures,
                    error=candidate.error,
                    captured_texts=self._captured_texts(candidate, captures)
                    if candidate.exact
                    else [],
                )
            )
        return matches

    def _captured_texts(
        self, candidate: _Candidate, captures: dict[str, str]
    ) -> list[CapturedText]:
        """The records whose message a value the match captured is, whole.

        django logs ``Forbidden (%s): %s`` with the reason of a ``RejectRequest`` it caught:
        ``CSRF cookie not set.`` is the message of that raise, which says why. Only specific
        templates (:data:`SPECIFIC` literal characters) other than the match's own count, and
        of those the ones that spell out most of the text.
        """
        index = self.index
        own = index.template_of(candidate.record)
        found: dict[int, str] = {}
        for name, value in captures.items():
            text = value.strip()
            if len(text) < SPECIFIC:
                continue
            proposed = index.candidates(text, anchored=True)
            templates = [
                template
                for template, _, _ in index.verify(proposed, text)
                if template != own and index.literal_length(template) >= SPECIFIC
            ]
            # The templates that spell out most of it (``CSRF cookie not set.`` before
            # ``CSRF cookie {exc.reason}.``).
            most = max(map(index.literal_length, templates), default=0)
            for template in templates:
                if index.literal_length(template) == most:
                    for record in index.records_of(template, MAX_CAPTURED_TEXTS):
                        found.setdefault(record, name)
        stored = self._stored(list(found)[:MAX_CAPTURED_TEXTS])
        return [
            CapturedText(
                hole=found[number],
                id=record.id,
                file_path=record.file_path,
                line_number=record.line_number,
                error_class=record.error_class,
            )
            for number, record in stored.items()
        ]
