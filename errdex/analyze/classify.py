"""Classification: category, handling strategy, root cause, severity, HTTP status and code of a site.

The classifier weighs the evidence a site offers, strongest first; the first piece that answers
decides the root cause (``backgroundTag``):

1. **A class that settles it**: ``NotImplementedError``, ``ImportError``, deprecation warnings,
   timeouts, connection errors, ``FileNotFoundError``, ``PermissionError``, ``StopIteration`` —
   the class, one of its bases when the code facts know them
   (``RaiseSite.facts.exception_bases``), or the words of a library class's name
   (``RemovedInDjango60Warning``, ``ConnectTimeout``). An exception used as a signal (a class
   named like ``CompilerExit`` or ``Impossible`` raised without a message, or a ``raise`` that
   its own ``try`` catches) is internal ``control-flow``.
2. **The message's wording**: ``"must be one of"`` → ``invalid-enum-value``, ``"mutually
   exclusive"`` → ``conflicting-options``, ``"pip install"`` → ``missing-dependency`` …
   (``_WORDING``: one named rule per pattern).
3. **An ``isinstance`` guard** → ``type-mismatch``.
4. **A library class's name** (``TemplateNotFound`` → ``file-not-found``, ``BadRequestKeyError``
   → ``missing-key``; the last words of the name count most) and telling builtins (``KeyError``).
5. **The ``except`` clause** the site is in (``except ImportError`` → ``missing-dependency``,
   ``except JSONDecodeError`` → ``invalid-format``, ``except KeyError`` → ``missing-key``).
6. **The other guards**, from the code facts when the site has them, else read from the site's
   own ``sourceCode``: ``x is None`` for a parameter → ``missing-argument``; a value tested
   against literals (or the fall-through after an ``if``/``elif`` chain of literal comparisons)
   → ``invalid-enum-value``; a name missing from a container → ``missing-key``; a comparison
   with a bound → ``out-of-range``; ``len(x) != n`` → ``shape-mismatch``; two options present at
   once → ``conflicting-options``; a falsy value → ``missing-argument`` (``empty-input`` for a
   collection).
7. **Defaults**: a log call carrying a traceback → ``unhandled-exception``; an ``assert`` →
   ``assertion-violation``; the class family's default (``ValueError`` → ``invalid-value``,
   ``RuntimeError`` → ``invalid-state`` …).

The category (``errorType``) follows from the root cause unless the class family says otherwise
(``ImproperlyConfigured`` stays ``configuration`` whatever the words; a ``TypeError`` about a
missing argument stays ``type``), and the strategy follows from the category and the root
cause. The vocabularies are DESIGN.md's, with four root causes added: ``invalid-value`` (a value
rejected for a reason none of the others names), ``control-flow`` (an exception the library
raises as a signal to itself), ``unhandled-exception`` (a log call reporting an exception that
escaped) and ``error-response`` (a server answered with an HTTP error status).

Accuracy is measured on hand-labelled sites of real packages (``tests/data/labels.jsonl``,
``tests/test_classify.py``; issue #5).
"""

from __future__ import annotations

import ast
import errno
import functools
import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Final

import ahocorasick

from errdex.analyze.nodes import (
    Assert,
    AsyncFunctionDef,
    Attribute,
    BoolOp,
    Break,
    Call,
    Compare,
    Constant,
    Continue,
    Eq,
    ExceptHandler,
    FunctionDef,
    GeneratorExp,
    Gt,
    GtE,
    If,
    In,
    Is,
    IsNot,
    List,
    Lt,
    LtE,
    Name,
    Not,
    NotIn,
    Raise,
    Return,
    Set,
    Store,
    Subscript,
    Try,
    Tuple,
    UnaryOp,
)
from errdex.analyze.templates import unparse
from errdex.models import (
    CodeFacts,
    ErrorType,
    Guard,
    HandlingStrategy,
    RaiseSite,
    Severity,
    SiteKind,
)
from errdex.values import finish_value

_E: Final = ErrorType
_H: Final = HandlingStrategy


@dataclass(unsafe_hash=True)
class Classification:
    """The classifier's answer for one site.

    Attributes:
        error_type: The category (``errorType``).
        strategy: How a caller should handle it (``handlingStrategy``).
        background: The root-cause pattern (``backgroundTag``).
        tags: The statement kind, the category, the root cause, ``http-NNN`` and ``i18n`` when
            they apply.
        severity: How bad the event is (``severity``).
        http_status: The HTTP status the site carries or its class implies (``httpStatus``).
        error_code: A stable code the site carries or its class implies (``errorCode``).
        evidence: What decided the root cause: ``class``, ``signal``, ``wording``, ``guard``,
            ``family``, ``except``, ``kind`` or ``default``.
    """

    error_type: Final[ErrorType]
    strategy: Final[HandlingStrategy]
    background: Final[str]
    tags: Final[tuple[str, ...]]
    severity: Final[Severity]
    http_status: Final[int | None]
    error_code: Final[str | None]
    evidence: Final[str]

    def __init__(
        self,
        error_type: ErrorType,
        strategy: HandlingStrategy,
        background: str,
        tags: tuple[str, ...],
        severity: Severity = Severity.ERROR,
        http_status: int | None = None,
        error_code: str | None = None,
        evidence: str = "default",
    ) -> None:
        self.error_type = error_type
        self.strategy = strategy
        self.background = background
        self.tags = tags
        self.severity = severity
        self.http_status = http_status
        self.error_code = error_code
        self.evidence = evidence


finish_value(Classification)


# ---------------------------------------------------------------------------------------------
# The class: builtins, names, bases.

_Family = tuple[ErrorType, str]

# Builtin classes that settle the root cause whatever the message says.
_DECISIVE: dict[str, _Family] = {
    "NotImplementedError": (_E.NOT_IMPLEMENTED, "not-implemented"),
    "ImportError": (_E.DEPENDENCY, "missing-dependency"),
    "ModuleNotFoundError": (_E.DEPENDENCY, "missing-dependency"),
    "DeprecationWarning": (_E.DEPRECATION, "version-mismatch"),
    "PendingDeprecationWarning": (_E.DEPRECATION, "version-mismatch"),
    "FutureWarning": (_E.DEPRECATION, "version-mismatch"),
    "TimeoutError": (_E.TIMEOUT, "timeout"),
    "ConnectionError": (_E.NETWORK, "connection-failure"),
    "ConnectionRefusedError": (_E.NETWORK, "connection-failure"),
    "ConnectionResetError": (_E.NETWORK, "connection-failure"),
    "ConnectionAbortedError": (_E.NETWORK, "connection-failure"),
    "BrokenPipeError": (_E.NETWORK, "connection-failure"),
    "FileNotFoundError": (_E.NOT_FOUND, "file-not-found"),
    "PermissionError": (_E.PERMISSION, "permission-denied"),
    "MemoryError": (_E.RESOURCE, "resource-exhausted"),
    "RecursionError": (_E.RESOURCE, "resource-exhausted"),
    "ResourceWarning": (_E.RESOURCE, "resource-exhausted"),
    "StopIteration": (_E.INTERNAL, "control-flow"),
    "StopAsyncIteration": (_E.INTERNAL, "control-flow"),
    "GeneratorExit": (_E.INTERNAL, "control-flow"),
    "KeyboardInterrupt": (_E.INTERNAL, "control-flow"),
}

# Builtin classes that say what went wrong, though the message or an isinstance guard may say
# more.
_SPECIFIC: dict[str, _Family] = {
    "KeyError": (_E.NOT_FOUND, "missing-key"),
    "LookupError": (_E.NOT_FOUND, "missing-key"),
    "IndexError": (_E.VALIDATION, "out-of-range"),
    "FileExistsError": (_E.IO, "duplicate-entry"),
    "IsADirectoryError": (_E.IO, "invalid-format"),
    "NotADirectoryError": (_E.IO, "invalid-format"),
    "EOFError": (_E.IO, "empty-input"),
    "UnicodeError": (_E.PARSE, "invalid-format"),
    "UnicodeDecodeError": (_E.PARSE, "invalid-format"),
    "UnicodeEncodeError": (_E.PARSE, "invalid-format"),
    "SyntaxError": (_E.PARSE, "invalid-format"),
    "IndentationError": (_E.PARSE, "invalid-format"),
    "JSONDecodeError": (_E.PARSE, "invalid-format"),
    "OverflowError": (_E.VALIDATION, "out-of-range"),
    "ZeroDivisionError": (_E.VALIDATION, "out-of-range"),
    "SyntaxWarning": (_E.PARSE, "invalid-format"),
    "ImportWarning": (_E.DEPENDENCY, "missing-dependency"),
    "UnicodeWarning": (_E.PARSE, "invalid-format"),
    "BytesWarning": (_E.TYPE, "type-mismatch"),
}

# Builtin classes used for everything: only their default is theirs.
_GENERIC: dict[str, _Family] = {
    "ValueError": (_E.VALIDATION, "invalid-value"),
    "TypeError": (_E.TYPE, "type-mismatch"),
    "AttributeError": (_E.NOT_FOUND, "missing-key"),
    "NameError": (_E.NOT_FOUND, "missing-key"),
    "RuntimeError": (_E.STATE, "invalid-state"),
    "AssertionError": (_E.INTERNAL, "assertion-violation"),
    "OSError": (_E.IO, "invalid-state"),
    "IOError": (_E.IO, "invalid-state"),
    "EnvironmentError": (_E.IO, "invalid-state"),
    "SystemError": (_E.INTERNAL, "invalid-state"),
    "Exception": (_E.INTERNAL, "invalid-state"),
    "BaseException": (_E.INTERNAL, "invalid-state"),
    "SystemExit": (_E.CONFIGURATION, "invalid-state"),
    "RuntimeWarning": (_E.STATE, "invalid-state"),
    "UserWarning": (_E.VALIDATION, "invalid-value"),
    "Warning": (_E.VALIDATION, "invalid-value"),
    "EncodingWarning": (_E.CONFIGURATION, "invalid-format"),
}

_SUFFIXES: Final[tuple[str, ...]] = ("Error", "Exception", "Warning")
_CAMEL: Final = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")

# Words of a library class's name → (family, decisive, weak). A decisive family settles the root
# cause like the builtins above; a weak one names the category but not the cause, so guards and
# except clauses come first. Among the others, the match nearest the end of the name wins
# (``WebSocketRequestValidationError`` is a validation error).
_NAME_WORDS: tuple[tuple[re.Pattern[str], _Family, bool, bool], ...] = tuple(
    (re.compile(pattern), family, decisive, weak)
    for pattern, family, decisive, weak in (
        (r"deprecat|removedin", (_E.DEPRECATION, "version-mismatch"), True, False),
        (r"notimplemented", (_E.NOT_IMPLEMENTED, "not-implemented"), True, False),
        (r"timeout|timedout", (_E.TIMEOUT, "timeout"), True, False),
        (r"importerror|importstring", (_E.DEPENDENCY, "missing-dependency"), True, False),
        (r"notsupported|unsupported", (_E.UNSUPPORTED, "unsupported-option"), False, False),
        (
            r"permission|forbidden|denied|disallowed|reject",
            (_E.PERMISSION, "permission-denied"),
            False,
            False,
        ),
        (
            r"unauthori[sz]ed|authentication|credential",
            (_E.AUTHENTICATION, "permission-denied"),
            False,
            False,
        ),
        (
            r"connect|network|socket|proxyerror|ssl|transport|protocol|chunked",
            (_E.NETWORK, "connection-failure"),
            False,
            False,
        ),
        (
            r"httpstatus|httperror|responseerror|badstatus",
            (_E.NETWORK, "error-response"),
            False,
            False,
        ),
        (
            r"toomany|toolarge|toobig|toolong|maxlength|minlength|maxdigits|maxplaces|exceed",
            (_E.VALIDATION, "out-of-range"),
            False,
            False,
        ),
        (r"redirect", (_E.NETWORK, "out-of-range"), False, False),
        (
            r"(?:template|file|path|dir)s?(?:notfound|doesnotexist)",
            (_E.NOT_FOUND, "file-not-found"),
            False,
            False,
        ),
        (
            r"notfound|doesnotexist|notregistered|nomatch|missing",
            (_E.NOT_FOUND, "missing-key"),
            False,
            False,
        ),
        (r"^file(?:error|exception)$", (_E.IO, "file-not-found"), False, False),
        (r"syntax|parse|decod|lexer|token|markup", (_E.PARSE, "invalid-format"), False, False),
        (
            r"improperlyconfigured|misconfigured|settings",
            (_E.CONFIGURATION, "invalid-value"),
            False,
            False,
        ),
        (r"config", (_E.CONFIGURATION, "invalid-value"), False, True),
        (
            r"closed|consumed|notready|notread|state|interrupted",
            (_E.STATE, "invalid-state"),
            False,
            False,
        ),
        (
            r"alreadyregistered|duplicate|conflict|exists",
            (_E.VALIDATION, "duplicate-entry"),
            False,
            False,
        ),
        (r"keyerror|key$", (_E.NOT_FOUND, "missing-key"), False, False),
        (r"versionmismatch", (_E.COMPATIBILITY, "version-mismatch"), False, False),
        (r"(?:shape|size|length)mismatch", (_E.VALIDATION, "shape-mismatch"), False, False),
        (r"mismatch", (_E.VALIDATION, "invalid-value"), False, False),
        (
            r"typeerror|subclasserror|classerror|callableerror|hashableerror",
            (_E.TYPE, "type-mismatch"),
            False,
            False,
        ),
        (
            r"validation|validator|invalid|bad|incorrect|wrong|value|argument|parameter|usage"
            r"|usererror"
            r"|option",
            (_E.VALIDATION, "invalid-value"),
            False,
            True,
        ),
    )
)

# pydantic-style ``<Type>Error`` classes: the value is not of that type, or not in that format,
# or out of a bound.
_TYPE_NAMES: Final = re.compile(
    r"str|string|bytes|bool|boolean|int|integer|float|number|list|tuple|set|frozen|dict|deque"
    r"|decimal|callable|hashable|enum|class|subclass|arbitrary|none|sequence|mapping|iterable|strict"
)
_FORMAT_NAMES: Final = re.compile(
    r"date|datetime|time|duration|url|email|ip|pv4|ipv4|ipv6|uuid|json|path|pattern|colou?r|luhn"
    r"|regex|slug"
)
_RANGE_NAMES: Final = re.compile(r"min|max|length|gt|ge|lt|le|limit|digits|places|multiple|finite")
_URL_WORDS: Final = frozenset({"url", "uri", "header", "json", "format", "host", "schema"})

# Class words that mark an exception used as a signal by the library itself.
_SIGNAL_WORDS: Final[tuple[str, ...]] = ("exit", "impossible", "skip", "stop", "halt", "resultset")


def _camel_words(name: str) -> list[str]:
    return [word.lower() for word in _CAMEL.findall(name)]


@functools.lru_cache(maxsize=16384)
def _short(name: str) -> str:
    """The class a dotted name stands for.

    ``errors.StrError`` → ``StrError``; ``base.DeserializationError.WithData`` (a factory on a
    class) → ``DeserializationError``; an expression such as ``self.mapping[code]`` is kept.
    """
    if not re.fullmatch(r"[\w.]+", name):
        return name
    segments = name.split(".")
    if not segments[-1].endswith(_SUFFIXES):
        for segment in reversed(segments[:-1]):
            if segment[:1].isupper() and segment.endswith(_SUFFIXES):
                return segment
    return segments[-1]


_HTTP_TAILS: Final = frozenset({"", "Error", "Exception", "KeyError", "ValueError"})
_HTTP_ALIASES: Final = {"PermissionDenied": 403, "SuspiciousOperation": 400, "Unauthorized": 401}
_HTTP_PHRASES: Final = tuple(
    (re.sub(r"[^A-Za-z]", "", status.phrase.title()), status.value)
    for status in HTTPStatus
    if status.value >= 400
)


@functools.lru_cache(maxsize=16384)
def _http_status_of(name: str) -> int | None:
    """The HTTP status a class name implies: ``Http404``, ``NotFound``, ``BadRequestKeyError``."""
    match = re.fullmatch(r"(?:Http|HTTP)(\d{3})(?:Error|Exception)?", name)
    if match:
        return int(match.group(1))
    if name in _HTTP_ALIASES:
        return _HTTP_ALIASES[name]
    for phrase, status in _HTTP_PHRASES:
        if name.startswith(phrase) and name[len(phrase) :] in _HTTP_TAILS:
            return status
    return None


def _status_family(status: int) -> _Family:
    if status == 401:
        return (_E.AUTHENTICATION, "permission-denied")
    if status == 403:
        return (_E.PERMISSION, "permission-denied")
    if status in (404, 410):
        return (_E.NOT_FOUND, "missing-key")
    if status in (405, 415):
        return (_E.VALIDATION, "unsupported-option")
    if status in (408, 504):
        return (_E.TIMEOUT, "timeout")
    if status in (413, 414, 416, 431):
        return (_E.VALIDATION, "out-of-range")
    if status == 409:
        return (_E.STATE, "duplicate-entry")
    if status == 429:
        return (_E.RESOURCE, "resource-exhausted")
    if status >= 500:
        return (_E.INTERNAL, "invalid-state")
    return (_E.VALIDATION, "invalid-value")


@dataclass(unsafe_hash=True)
class _ClassEvidence:
    """What the class (and its bases) says, from strongest to weakest."""

    names: Final[tuple[str, ...]]
    decisive: Final[_Family | None]
    specific: Final[_Family | None]
    weak: Final[_Family | None]
    generic: Final[_Family | None]
    signal: Final[bool]
    http_status: Final[int | None]

    def __init__(
        self,
        names: tuple[str, ...],
        decisive: _Family | None = None,
        specific: _Family | None = None,
        weak: _Family | None = None,
        generic: _Family | None = None,
        signal: bool = False,
        http_status: int | None = None,
    ) -> None:
        self.names = names
        self.decisive = decisive
        self.specific = specific
        self.weak = weak
        self.generic = generic
        self.signal = signal
        self.http_status = http_status


finish_value(_ClassEvidence)


def _name_family(name: str) -> tuple[_Family, bool, bool] | None:
    """The family a library class's name implies: (family, decisive, weak)."""
    if not name.isidentifier():
        return None
    lowered = name.lower()
    words = _camel_words(name)
    core = [w for w in words if w not in ("error", "exception", "warning", "pydantic")]
    if core and name.endswith(_SUFFIXES):
        ranged = any(_RANGE_NAMES.fullmatch(word) for word in core)
        if _TYPE_NAMES.fullmatch(core[0]) and not any(_RANGE_NAMES.fullmatch(w) for w in core[1:]):
            return (_E.TYPE, "type-mismatch"), False, False
        if ranged and not set(core) & {"invalid", "not"}:
            return (_E.VALIDATION, "out-of-range"), False, False
        if _FORMAT_NAMES.fullmatch(core[0]):
            return (_E.VALIDATION, "invalid-format"), False, False
    best: tuple[int, tuple[_Family, bool, bool]] | None = None
    for pattern, family, decisive, weak in _NAME_WORDS:
        for match in pattern.finditer(lowered):
            if decisive:
                return family, True, False
            if family[1] == "invalid-value" and set(words) & _URL_WORDS:
                family = (family[0], "invalid-format")
                weak = False
            if best is None or match.end() > best[0]:
                best = (match.end(), (family, decisive, weak))
    return best[1] if best else None


def _class_evidence(site: RaiseSite, facts: CodeFacts | None) -> _ClassEvidence:
    bases = tuple(facts.exception_bases) if facts is not None else ()
    return _evidence_of(site.error_class, bases, site.http_status, site.kind is SiteKind.RAISE)


@functools.lru_cache(maxsize=4096)
def _evidence_of(
    error_class: str, bases: tuple[str, ...], status: int | None, raised: bool
) -> _ClassEvidence:
    """What a class with these bases says (a source raises few classes, at many sites)."""
    names = [_short(error_class)]
    names.extend(_short(base) for base in bases if _short(base) not in names)
    decisive = specific = weak = generic = None
    for name in names:
        if status is None:
            status = _http_status_of(name)
        if name in _DECISIVE:
            decisive = decisive or _DECISIVE[name]
        elif name in _SPECIFIC:
            specific = specific or _SPECIFIC[name]
        elif name in _GENERIC:
            if name == names[0] or name not in ("Exception", "BaseException"):
                generic = generic or _GENERIC[name]
        elif (found := _name_family(name)) is not None:
            family, is_decisive, is_weak = found
            if is_decisive:
                decisive = decisive or family
            elif is_weak:
                weak = weak or family
            else:
                specific = specific or family
    if status is not None and specific is None and decisive is None:
        weak = _status_family(status)
    first = names[0]
    signal = (
        raised
        and first.isidentifier()
        and not first.endswith(_SUFFIXES)
        and any(word in first.lower() for word in _SIGNAL_WORDS)
    )
    return _ClassEvidence(tuple(names), decisive, specific, weak, generic, signal, status)


# ---------------------------------------------------------------------------------------------
# The wording of the message.

_FILE_WORDS: Final = re.compile(
    r"\b(?:file|files|path|paths|dir|directory|folder|template|templates|bundle|certificate)\b",
    re.IGNORECASE,
)

# (name, pattern, root cause, category or None). First match wins; the names document the rule.
# Written in lower case and matched against the lowered text: ``re.IGNORECASE`` made the
# rules cost 40% more, and they are a quarter of classifying a site (#3).
_WORDING: tuple[tuple[str, re.Pattern[str], str, ErrorType | None], ...] = tuple(
    (name, re.compile(pattern), background, kind)
    for name, pattern, background, kind in (
        (
            "invariant",
            r"\b(?:should|must|can) never\b|\bshould not happen\b|\binternal error\b"
            r"|\bthis is a bug\b",
            "assertion-violation",
            _E.INTERNAL,
        ),
        (
            "deprecated",
            r"\bdeprecat\w*|\bwill be removed\b|\bno longer (?:be )?supported\b|\bremoved in\b",
            "version-mismatch",
            _E.DEPRECATION,
        ),
        (
            "version",
            r"\bversion\b.{0,40}\b(?:or (?:newer|higher|later|above)|(?:is )?required)\b"
            r"|\b(?:old|older|newer) version\b|\bsince (?:version )?v?\d+\.\d+|\bincompatible\b"
            r"|\bplease upgrade\b|\bnot an? \w+[ /]v?\d+(?:\.\d+)+|\brequires? \S+ [><=]=?\s*v?\d+(?:\.\d+)+",
            "version-mismatch",
            _E.COMPATIBILITY,
        ),
        (
            "not-installed",
            r"\b(?:is|are|isn't|aren't) not installed\b|\bnot installed\b(?! in a way)"
            r"|\b(?:must|to) be installed\b|\bpip install\b|\bno module named\b"
            r"|\brequires? (?:the )?['\"`]?[\w.-]+['\"`]? (?:package|library|module)\b",
            "missing-dependency",
            _E.DEPENDENCY,
        ),
        (
            "not-implemented",
            r"\bnot (?:yet )?implemented\b|\bmust be implemented\b|\bunimplemented\b"
            r"|\bsubclasses (?:of \S+ )?(?:must|should|may require)\b"
            r"|\babstract \w+ (?:are|is) not instantiable\b|\bcan't instantiate abstract\b",
            "not-implemented",
            _E.NOT_IMPLEMENTED,
        ),
        ("timeout", r"\btimed? ?out\b|\btimeout\b", "timeout", _E.TIMEOUT),
        (
            "unauthenticated",
            r"\bnot authenticated\b|\bunauthori[sz]ed\b|\bauthentication (?:failed|required)\b"
            r"|\binvalid credentials\b|\blogin required\b",
            "permission-denied",
            _E.AUTHENTICATION,
        ),
        (
            "permission",
            r"\bpermission denied\b|\b(?:insufficient|missing|lacks?|without) (?:the )?permissions?\b"
            r"|\b(?:do|does|did)(?: not|n't) have (?:the )?permissions?\b|\boperation not permitted\b"
            r"|\baccess denied\b|\bforbidden\b",
            "permission-denied",
            _E.PERMISSION,
        ),
        (
            "conflicting",
            r"\bmutually exclusive\b|\b(?:cannot|can't|may not) be (?:used|specified|given|set) "
            r"together\b|\bnot both\b|\bcannot (?:both|mix)\b|\btogether\b|\bonly one of\b"
            r"|\bat most one of\b|^when\b.{0,80}\b(?:must|is not used|cannot|can't)\b"
            r"|\bin \w+ mode\b.{0,40}\b(?:cannot|can't|must not|may not)\b"
            r"|\bwhen (?:the )?\S+ (?:parameter |argument |option )?(?:is|are) (?:provided|given|set"
            r"|used|specified)\b|\b(?:cannot|can't) have an? .{1,40} and\b|\bin both\b|\bclash\w*\b|\bconflict\w*\b",
            "conflicting-options",
            None,
        ),
        (
            "duplicate",
            r"\balready (?:registered|exists?|defined|in use|used|added|taken|mounted)\b"
            r"|\bduplicat\w*|\bused by another\b|\bin use by\b|\b(?:defined|registered|given|specified) twice\b|\boverwriting an existing\b|\bnot unique\b|\bcannot use the same\b",
            "duplicate-entry",
            None,
        ),
        (
            "unsupported",
            r"\bnot supported\b|\b(?:is|are)n't supported\b|\bunsupported\b|\bdoes not support\b|\bonly supports?\b"
            r"|\bis not possible\b|\bread[- ]only\b|\bimmutable\b|\b(?:won't|will not) be \w+ed\b|\bhas no equivalent\b",
            "unsupported-option",
            _E.UNSUPPORTED,
        ),
        (
            "unknown-option",
            r"\bunexpected keyword\b|\bno such option\b|\b(?:unknown|unrecogni[sz]ed|invalid) "
            r"(?:option|argument|keyword|flag)s?\b|\bcannot be specified for\b"
            r"|\bnot permitted (?:as|in|for)\b|\b(?:invalid|unrecogni[sz]ed|unsupported) "
            r"(?:\w+ ){0,3}signature\b",
            "unsupported-option",
            None,
        ),
        (
            "type",
            r"\bmust (?:not )?be (?:an? )?(?:\w+ )?(?:instance|subclass|list|tuple|dict|string|str"
            r"|int|integer|float|bool|boolean|callable|function|class|type|mapping|sequence"
            r"|iterable|bytes)s?\b|\bexpected (?:an? )?(?:dict|list|str|string|int|bytes|tuple"
            r"|callable|mapping|sequence)\b|\bis not (?:an? )?(?:subclass|instance|callable"
            r"|iterable|string)\b|\bnot (?:json )?serializable\b|\bnot callable\b"
            r"|\bnot iterable\b|\binstances? (?:of|are not allowed)\b|\binvalid (?:input )?type\b"
            r"|\brequires? '?\w+'?, got\b|\bcannot cast\b|\bobjects that are not\b"
            r"|\bdon't know how to\b|\bmust be (?:an? )?(?:\S+ )?instances?\b|\bunable to encode\b|\b(?:supported|valid|allowed) types\b",
            "type-mismatch",
            _E.TYPE,
        ),
        (
            "enum",
            r"\bmust be one of\b|\bone of the (?:supported|following|valid|allowed)\b"
            r"|\b(?:valid|allowed|supported|possible) (?:values|options|choices) (?:are|is)\b"
            r"|\bexpected one of\b|\bunknown\b|\bunrecogni[sz]ed\b|\bunexpected \w+ value\b"
            r"|\binvalid choice\b|\bnot a valid choice\b|\bnot one of\b|\bselect a valid choice\b|\bnot a (?:known|recogni[sz]ed)\b|\bthere is no \w+ (?:\w+ ){0,3}with\b"
            r"|\bcan only (?:\w+ ){0,4}(?:either\b|['\"])"
            r"|\b(?:must|should) be (?:either )?(?:'[^']+'|\"[^\"]+\"|true|false|none)(?:,? (?:or )?"
            r"(?:'[^']+'|\"[^\"]+\"|true|false|none))+",
            "invalid-enum-value",
            None,
        ),
        (
            "count",
            r"\btakes? exactly\b|\bexactly (?:one|two|three|\d+) \w+|\bexpected (?:one|two|three"
            r"|\d+|\{[^}]*\}) (?:columns|values|arguments|items|elements)\b"
            r"|\b(?:was|were) given\b|\bshould have a length of\b|\bnumber of (?:arguments|values"
            r"|items|elements|dimensions)\b|\bshapes?\b|\bsize mismatch\b|\blength mismatch\b",
            "shape-mismatch",
            None,
        ),
        (
            "range",
            r"\btoo (?:long|short|large|small|big|many|few)\b|\bmust be (?:at least|at most"
            r"|positive|non-negative|greater|less|between|larger|smaller)\b|\bout of (?:range"
            r"|bounds)\b|\bexceed(?:s|ed)?\b|\bnegative\b|\b(?:less|greater) than\b"
            r"|\bat (?:least|most) \d|\bin the range\b|\bwithin (?:the )?range\b",
            "out-of-range",
            None,
        ),
        (
            "empty",
            r"\bno (?:\w+ ){0,2}\w+[^s\W]s (?:provided|given|specified|found)\b|\bis empty\b"
            r"|\bempty (?:string|list|input|data|file|body|sequence)\b|^\W*empty\b|\bno (?:data|items|input)\b",
            "empty-input",
            None,
        ),
        (
            "missing",
            r"\bmissing\b|\bis required\b|\bmust (?:be )?(?:set|specified|provided|given|passed)\b"
            r"|\b(?:is|are) not (?:set|specified|provided|given)\b|\bmust (?:specify|provide|pass)\b"
            r"|\bno \w+ specified\b|\bneed to (?:explicitly )?provide\b|\btakes? at least one\b"
            r"|\brequires? (?:an? )?argument\b|\brequire a type annotation\b"
            r"|\bwithout (?:having )?(?:set|setting|specifying|providing)\b",
            "missing-argument",
            None,
        ),
        (
            "not-found",
            r"\bnot found\b|\b(?:could not|cannot|can't|failed to|unable to) find\b"
            r"|\bdo(?:es)?(?: not|n't) exist\b|\bno such\b|\bdoes not have\b|\bfailed lookup\b"
            r"|\bnot defined in\b|\bis not registered\b|\bundefined\b|\bnot available\b"
            r"|\bnon-?existent\b|\bhas no attribute\b",
            "missing-key",
            _E.NOT_FOUND,
        ),
        (
            "format",
            r"\binvalid (?:\w+ )?(?:format|syntax|label|address|header|literal|json|url|character"
            r"|escape|identifier|expression|string|date|time|datetime|email|number|ip address|uuid"
            r"|integer|slug|regex|path)\b|\bis not a valid (?:uuid|url|email|ip|ipv4|ipv6|date|time"
            r"|datetime|json|integer|number|path|regex|slug|identifier|hex)\b"
            r"|\benter a valid\b|\bmalformed\b|\b(?:could not|cannot|failed"
            r" to|unable to) (?:parse|decode)\b|\bdoes not match the format\b|\bexpected token\b"
            r"|\bunexpected (?:end|token|char\w*|eof)\b|\bexpected an expression\b"
            r"|\bmust (?:not )?(?:start|end|begin) with\b"
            r"|\b(?:cannot|can't|may not|must not|should not) contain\b"
            r"|\bun(?:closed|terminated|matched|balanced)\b|\b(?:decoding|decode|parse|parsing|syntax) error\b"
            r"|\bshould be (?:upper|lower) ?case\b|\bis a (?:directory|file)\b|\bvalid python "
            r"identifiers\b|\bchunk after\b|\bsyntax\b",
            "invalid-format",
            None,
        ),
        (
            "state",
            r"\balready (?:started|closed|running|consumed|streamed|read|been|popped|entered)\b"
            r"|\bhas been (?:closed|consumed|streamed)\b|\bis closed\b|\bnot (?:yet )?"
            r"(?:initiali[sz]ed|ready|started|running|open|opened|prepared|loaded|entered)\b"
            r"|\bhas not been (?:set|called|read)\b|\bbefore (?:calling|start\w*|it has)\b"
            r"|\w\(\) (?:called )?before\b"
            r"|\bonly be accessed after\b|\bonce (?:a |an |the )?\w+ has been\b"
            r"|\bin a with block\b|\bwrong \w+ context\b|\bcannot nest\b"
            r"|\bnot enabled\b|\bwas not created with\b|\bwithout stack change\b"
            r"|\bclosed the\b|\bno active\b",
            "invalid-state",
            _E.STATE,
        ),
    )
)

# Words that make a missing value or a wrong state a matter of configuration.
_CONFIG_WORDS: Final = re.compile(
    r"\benvironment variable\b|\bsettings?\b|\bconfig(?:uration|ured)?\b|\binstalled_apps\b"
    r"|\benabled?\b",
    re.IGNORECASE,
)
_PARSE_WORDS: Final = re.compile(
    r"\b(?:parse|parsing|syntax|decode|decoding|token|json)\b", re.IGNORECASE
)
_PARSER_MODULE: Final = re.compile(r"(?:^|/)(?:parser|lexer|tokenizer|grammar|_?parse)\.py$")
_WEAK_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bdimensions?\b", re.IGNORECASE), "shape-mismatch"),
    (re.compile(r"\bundefined\b", re.IGNORECASE), "missing-key"),
    (re.compile(r"\binvalid\b|\bnot (?:a )?valid\b", re.IGNORECASE), "invalid-value"),
)


def required_words(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Literal text a match of ``pattern`` must contain: one of the words returned.

    A run of literal characters outside any repetition must be in every match; an
    alternation needs one of its alternatives' words. A text holding none of the words
    cannot match, which a substring test tells far sooner than a search trying every
    alternative at every position. None when no such words are found, the pattern ignores
    case, or Python's own parser of patterns (a private module) cannot read it: then only
    the search can tell.
    """
    try:
        from re import _constants as constants  # type: ignore[attr-defined]
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # Python 3.10
        import sre_constants as constants
        import sre_parse as parser

    def needs(items: Any) -> tuple[str, ...] | None:
        options: list[tuple[str, ...]] = []
        run = ""
        for op, value in items:
            if op is constants.LITERAL:
                run += chr(value)
                continue
            if run:
                options.append((run,))
                run = ""
            if op is constants.BRANCH:
                each = [needs(alternative) for alternative in value[1]]
                if all(each):
                    options.append(tuple(word for words in each if words for word in words))
            elif op is constants.SUBPATTERN and not value[1] & re.IGNORECASE:
                inner = needs(value[-1])
                if inner:
                    options.append(inner)
        if run:
            options.append((run,))
        # The words that are rarest in text: the longest shortest one.
        return max(options, key=lambda words: min(map(len, words)), default=None)

    try:
        parsed = parser.parse(pattern.pattern, pattern.flags)
        if parsed.state.flags & re.IGNORECASE:
            return None
        words = needs(parsed)
    except Exception:  # a change of the private module must not break classifying
        return None
    return tuple(dict.fromkeys(words)) if words else None


@functools.cache
def _wording_words() -> tuple[tuple[str, ...] | None, ...]:
    """Each wording rule's :func:`required_words`, worked out at the first use.

    Not at import: reading the patterns would cost 15 ms to a process that never classifies.
    """
    return tuple(required_words(pattern) for _, pattern, _, _ in _WORDING)


@functools.cache
def _wording_filter() -> tuple[Any, tuple[frozenset[int] | None, ...]]:
    """An automaton of every rule's :func:`required_words`, and each rule's words by number.

    One pass of the automaton over a text tells every rule whose words it holds, where a
    substring test per word took most of the time the rules took (about 200 words).
    """
    numbers: dict[str, int] = {}
    for words in _wording_words():
        for word in words or ():
            numbers.setdefault(word, len(numbers))
    automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
    for word, number in numbers.items():
        automaton.add_word(word, number)
    if numbers:
        automaton.make_automaton()
    needs = tuple(
        None if words is None else frozenset(numbers[word] for word in words)
        for words in _wording_words()
    )
    return automaton, needs


def _wording_rules(text: str) -> list[int]:
    """The wording rules that may match ``text`` (lower case): those holding one of its words."""
    automaton, needs = _wording_filter()
    held = {number for _, number in automaton.iter(text)} if len(automaton) else set()
    return [rule for rule, words in enumerate(needs) if words is None or not words.isdisjoint(held)]


@functools.lru_cache(maxsize=16384)
def _wording(text: str) -> tuple[str, ErrorType | None] | None:
    """Apply the wording rules to a message's literal text: (root cause, category or None)."""
    text = text.lower()
    for rule in _wording_rules(text):
        _, pattern, background, kind = _WORDING[rule]
        if pattern.search(text):
            if background == "missing-key" and _FILE_WORDS.search(text):
                return "file-not-found", kind
            return background, kind
    return None


# ---------------------------------------------------------------------------------------------
# The code around the site: from the code facts, else from the site's own source snippet.


@dataclass
class _Context:
    """What the code around a site says, as far as the classifier needs it.

    Attributes:
        guards: The conditions on the way to the site, innermost first, stopping at the
            ``except`` clause the site is in (for an ``assert``, its own test only).
        in_except: The site is in an ``except`` clause.
        caught: The classes that clause catches.
        try_catches: The classes caught, and not raised again, by the ``try`` whose body holds
            the site.
        statement: The site's statement as source text.
        except_line: The line of the ``except`` clause the site is in (0 when not in one).
        parameters: The enclosing function's parameter names (read from the snippet).
        facts: The site's code facts (their parameters count as parameters too).
        assigned: Names assigned in the enclosing code before the site.
    """

    guards: list[Guard]
    in_except: bool
    caught: list[str]
    try_catches: list[str]
    statement: str
    except_line: int
    parameters: set[str]
    facts: CodeFacts | None
    assigned: set[str]
    tree: ast.Module | None
    line: int
    walked: bool

    def __init__(  # its own, for mypyc to compile (see errdex.values)
        self,
        *,
        in_except: bool = False,
        caught: list[str] | None = None,
        try_catches: list[str] | None = None,
        statement: str = "",
        except_line: int = 0,
        assigned: set[str] | None = None,
        walked: bool = False,
    ) -> None:
        self.guards = []
        self.in_except = in_except
        self.caught = [] if caught is None else caught
        self.try_catches = [] if try_catches is None else try_catches
        self.statement = statement
        self.except_line = except_line
        self.parameters = set()
        self.facts = None
        self.assigned = set() if assigned is None else assigned
        self.tree = None
        self.line = 0
        self.walked = walked

    def read_names(self) -> None:
        """Collect parameters and assigned names from the snippet, once, when a rule asks.

        Walking the whole snippet is the classifier's main cost, and most sites never need it.
        """
        if self.walked or self.tree is None:
            return
        self.walked = True
        for node in ast.walk(self.tree):
            if isinstance(node, (FunctionDef, AsyncFunctionDef)) and node.lineno <= self.line:
                arguments = node.args
                self.parameters |= {
                    a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
                }
            elif isinstance(node, Name) and isinstance(node.ctx, Store) and node.lineno < self.line:
                self.assigned.add(node.id)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


_STATEMENT_START: Final = re.compile(
    r"^(?:@|(?:async\s+)?(?:def|class|if|for|while|with|try|return|raise|assert|import|from"
    r"|pass|del|global|nonlocal|yield|await|match)\b|[A-Za-z_][\w.]*\s*(?:[-+*/|&]?=|\(|\[|\.|,|:)"
    r"|[A-Za-z_][\w.]*$)"
)
_NOT_A_START: Final = re.compile(r"^(?:else|elif|except|finally|case)\b")
_MAX_PARSES: Final = 12


def _parse_snippet(site: RaiseSite) -> tuple[ast.Module, int] | None:
    """Parse the part of ``sourceCode`` that encloses the site.

    Tries the outermost statement starts first (a ``def`` line when the snippet holds it), each
    cut at the end of its block or at the end of the site, and gives up after a few attempts.

    Returns:
        The tree and the offset to add to its line numbers, or None.
    """
    lines = site.source_code.split("\n")
    target = site.line - site.source_code_start
    if not site.source_code or not 0 <= target < len(lines):
        return None
    last = min(len(lines) - 1, max(site.end_line, site.line) - site.source_code_start)
    starts: list[int] = []
    lowest = _indent(lines[target])
    for index in range(target, -1, -1):
        text = lines[index]
        if not text.strip():
            continue
        width = _indent(text)
        if width <= lowest:
            lowest = width
            stripped = text.strip()
            if _STATEMENT_START.match(stripped) and not _NOT_A_START.match(stripped):
                starts.append(index)
    attempts = 0
    for start in reversed(starts):
        width = _indent(lines[start])
        stop = last
        while stop + 1 < len(lines) and (
            not lines[stop + 1].strip() or _indent(lines[stop + 1]) >= width
        ):
            stop += 1
        for end in dict.fromkeys((stop, last)):
            attempts += 1
            if attempts > _MAX_PARSES:
                return None
            body = "\n".join(
                line[width:] if line.strip() else "" for line in lines[start : end + 1]
            )
            try:
                return ast.parse(body), site.source_code_start + start - 1
            except (SyntaxError, ValueError):
                continue
    return None


def _names_of(node: ast.expr | None) -> list[str]:
    if node is None:
        return ["BaseException"]
    if isinstance(node, Tuple):
        return [name for element in node.elts for name in _names_of(element)]
    return [unparse(node).rsplit(".", 1)[-1]]


def _terminates(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (Return, Raise, Continue, Break))


def _has_blocks(statement: ast.stmt) -> bool:
    return any(getattr(statement, name, None) for name in ("body", "orelse", "handlers", "cases"))


def _guard(test: ast.expr, line: int, *, leads: bool) -> Guard:
    """A guard as the code facts describe it (the kind of its main leaf)."""
    leaves = _leaves(test, leads)
    main = _main_leaf(leaves)
    return Guard(
        kind=main.kind if main else "other",
        text=unparse(test),
        subject=main.subject if main else None,
        values=list(main.values) if main else [],
        leads_to_site=leads,
        line=line,
    )


_Path = list[tuple[ast.AST, str]]


def _find_site(body: list[ast.stmt], line: int, path: _Path) -> ast.stmt | None:
    """The statement at ``line``, with the blocks that hold it appended to ``path``."""
    for statement in body:
        end = statement.end_lineno or statement.lineno
        if not statement.lineno <= line <= end:
            continue
        if statement.lineno == line and not _has_blocks(statement):
            return statement
        for name in ("body", "orelse", "finalbody"):
            children = getattr(statement, name, None)
            if children:
                path.append((statement, name))
                found = _find_site(children, line, path)
                if found is not None:
                    return found
                path.pop()
        for child in [*getattr(statement, "handlers", []), *getattr(statement, "cases", [])]:
            path.append((statement, "handlers"))
            path.append((child, "body"))
            found = _find_site(child.body, line, path)
            if found is not None:
                return found
            del path[-2:]
        return statement
    return None


def _local_context(site: RaiseSite) -> _Context:
    """Read the guards and the ``try``/``except`` around the site from its source snippet."""
    context = _Context()
    parsed = _parse_snippet(site)
    if parsed is None:
        return context
    tree, offset = parsed
    line = site.line - offset
    path: _Path = []
    site_node = _find_site(tree.body, line, path)
    if site_node is None:
        return context
    context.statement = unparse(site_node)
    context.tree, context.line = tree, line
    if isinstance(site_node, Assert):
        context.guards.append(_guard(site_node.test, site_node.lineno + offset, leads=False))
    else:
        owner, branch = path[-1] if path else (tree, "body")
        block: list[ast.stmt] = getattr(owner, branch, tree.body)
        for sibling in reversed([s for s in block if s.lineno < site_node.lineno][-6:]):
            if isinstance(sibling, If) and _terminates(sibling.body) and not sibling.orelse:
                context.guards.append(_guard(sibling.test, sibling.lineno + offset, leads=False))
    collecting = not isinstance(site_node, Assert)
    for node, branch in reversed(path):
        if isinstance(node, If) and collecting:
            context.guards.append(_guard(node.test, node.lineno + offset, leads=branch == "body"))
        elif isinstance(node, ExceptHandler) and not context.in_except:
            context.in_except = True
            context.caught = _names_of(node.type)
            context.except_line = node.lineno + offset
            collecting = False
        elif isinstance(node, Try) and branch == "body" and not context.try_catches:
            context.try_catches = [
                name
                for handler in node.handlers
                if not any(isinstance(sub, Raise) for sub in ast.walk(handler))
                for name in _names_of(handler.type)
            ]
    return context


def _statement(site: RaiseSite) -> str:
    """The site's statement as written (its lines of ``sourceCode``)."""
    lines = site.source_code.split("\n")
    first = site.line - site.source_code_start
    return "\n".join(
        lines[max(first, 0) : max(site.end_line, site.line) - site.source_code_start + 1]
    )


def _context(site: RaiseSite) -> _Context:
    """The code around the site: what the extractor saw, else what its snippet shows.

    The facts list guards outermost first; the classifier wants them innermost first, only
    the ``assert``'s own test for an ``assert``, and only those inside the ``except`` clause
    the site is in.
    """
    facts = site.facts
    seen = site.context
    if site.language != "python":
        # Another language's snippet is not Python: only its facts (if any) can tell.
        context = _Context(statement=_statement(site), walked=True)
    elif facts is not None and seen is not None:
        # The extractor walked the real tree: nothing to re-parse.
        context = _Context(
            in_except=bool(seen.caught),
            caught=list(seen.caught),
            try_catches=list(seen.try_catches),
            statement=_statement(site),
            except_line=seen.except_line,
            assigned=set(seen.assigned),
            walked=True,
        )
    else:
        context = _local_context(site)
    if facts is None:
        return context
    guards = list(reversed(facts.guards))
    if site.kind is SiteKind.ASSERT:
        guards = [guard for guard in guards if guard.line >= site.line]
    elif context.except_line:
        guards = [guard for guard in guards if guard.line > context.except_line]
    if guards or context.statement:
        context.guards = guards
    if facts.in_except and not context.in_except:
        context.in_except = True
        context.caught = list(facts.caught)
    context.facts = facts
    return context


# ---------------------------------------------------------------------------------------------
# Guards → root cause.


@dataclass(unsafe_hash=True)
class _Leaf:
    """One test of a condition, normalised.

    Attributes:
        kind: ``isinstance``, ``none-check``, ``literals`` (a value against literal values),
            ``key`` (a literal key in a container), ``container`` (a name in a container),
            ``equals`` (a value equal to a literal), ``length`` (``len(x) == n``), ``bound``
            (an ordering comparison), ``truthiness``, ``call`` or ``other``.
        site_when: The site runs when this test holds (after ``not`` and the branch).
        subject: The tested expression.
        values: The literal values it is compared with.
        sole: The test is its condition's only one.
        direct: Its condition leads to the site (``if bad: raise``), rather than being passed
            on the way (the fall-through after ``if ok: return``).
    """

    kind: Final[str]
    site_when: Final[bool]
    subject: Final[str]
    values: Final[tuple[str, ...]]
    sole: Final[bool]
    direct: Final[bool]

    def __init__(
        self,
        kind: str,
        site_when: bool,
        subject: str = "",
        values: tuple[str, ...] = (),
        sole: bool = True,
        direct: bool = True,
    ) -> None:
        self.kind = kind
        self.site_when = site_when
        self.subject = subject
        self.values = values
        self.sole = sole
        self.direct = direct

    def marked(self, *, sole: bool, direct: bool) -> _Leaf:
        """The same test, with whether it is its condition's only one and leads to the site.

        (Made here: ``dataclasses.replace`` runs interpreted, 4 µs a leaf.)
        """
        return _Leaf(self.kind, self.site_when, self.subject, self.values, sole, direct)


finish_value(_Leaf)


def _literal(node: ast.expr) -> bool:
    if isinstance(node, Constant):
        return True
    if isinstance(node, UnaryOp) and isinstance(node.operand, Constant):
        return True
    return isinstance(node, Attribute) and node.attr.isupper()


def _leaves(test: ast.expr, leads: bool) -> list[_Leaf]:
    found: list[_Leaf] = []

    def walk(node: ast.expr, when: bool) -> None:
        if isinstance(node, BoolOp):
            for value in node.values:
                walk(value, when)
        elif isinstance(node, UnaryOp) and isinstance(node.op, Not):
            walk(node.operand, not when)
        else:
            found.append(_leaf(node, when))

    walk(test, leads)
    sole = len(found) == 1
    return [leaf.marked(sole=sole, direct=leads) for leaf in found]


def _leaf(node: ast.expr, when: bool) -> _Leaf:
    if isinstance(node, Call):
        name = node.func.id if isinstance(node.func, Name) else ""
        if name in ("isinstance", "issubclass", "callable") and node.args:
            return _Leaf("isinstance", when, unparse(node.args[0]))
        if name in ("all", "any") and node.args and isinstance(node.args[0], GeneratorExp):
            inner = _leaf(node.args[0].elt, when)
            if inner.kind == "isinstance":
                return inner
        return _Leaf("call", when, unparse(node))
    if isinstance(node, (Name, Attribute, Subscript)):
        return _Leaf("truthiness", when, unparse(node))
    if not isinstance(node, Compare):
        return _Leaf("other", when)
    left, op, right = node.left, node.ops[0], node.comparators[0]
    subject = unparse(left)
    if len(node.ops) > 1 or isinstance(op, (Lt, LtE, Gt, GtE)):
        return _Leaf("bound", when, subject)
    if isinstance(op, (Is, IsNot)) and isinstance(right, Constant) and right.value is None:
        return _Leaf("none-check", when == isinstance(op, Is), subject)
    positive = isinstance(op, (Eq, Is, In))
    if isinstance(left, Call) and isinstance(left.func, Name):
        if left.func.id == "type":
            return _Leaf("isinstance", when, subject)
        if left.func.id == "len":
            return _Leaf("length", when == positive, subject)
    if isinstance(op, (In, NotIn)):
        if isinstance(right, (Set, Tuple, List)) and all(_literal(e) for e in right.elts):
            values = tuple(unparse(e) for e in right.elts)
            return _Leaf("literals", when == positive, subject, values)
        if _literal(left):
            return _Leaf("key", when == positive, unparse(right), (subject,))
        return _Leaf("container", when == positive, subject)
    if _literal(right):
        return _Leaf("equals", when == positive, subject, (unparse(right),))
    return _Leaf("other", when, subject)


_LEAF_RANK: Final[tuple[str, ...]] = (
    "isinstance",
    "literals",
    "key",
    "container",
    "length",
    "bound",
    "equals",
    "none-check",
    "truthiness",
    "call",
    "other",
)


def _main_leaf(leaves: list[_Leaf]) -> _Leaf | None:
    if not leaves:
        return None
    # A kind this table does not rank (``match``, ``dict-lookup`` …) ranks last.
    return min(
        leaves,
        key=lambda leaf: (
            _LEAF_RANK.index(leaf.kind) if leaf.kind in _LEAF_RANK else len(_LEAF_RANK)
        ),
    )


def _guard_leaves(guard: Guard) -> list[_Leaf]:
    # The same guard text recurs at many sites (every raise under one ``if``): parse it once.
    return list(
        _text_leaves(
            guard.text, guard.kind, guard.leads_to_site, guard.subject, tuple(guard.values)
        )
    )


@functools.lru_cache(maxsize=16384)
def _text_leaves(
    text: str, kind: str, leads: bool, subject: str | None, values: tuple[str, ...]
) -> tuple[_Leaf, ...]:
    try:
        test = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return (_Leaf(kind, leads, subject or "", values, direct=leads),)
    return tuple(_leaves(test, leads))


def _conditions(guards: list[Guard]) -> list[list[_Leaf]]:
    """Group guards into conditions (the code facts give one guard per ``and``/``or`` operand).

    Adjacent guards on the same line with the same ``leads_to_site`` are one condition; each
    condition is the list of its tests, innermost condition first.
    """
    grouped: list[tuple[tuple[int, bool], list[_Leaf]]] = []
    for guard in guards:
        key = (guard.line, guard.leads_to_site)
        leaves = _guard_leaves(guard)
        if grouped and grouped[-1][0] == key and guard.line:
            grouped[-1][1].extend(leaves)
        else:
            grouped.append((key, leaves))
    conditions = []
    for _, leaves in grouped:
        if len(leaves) > 1:
            leaves = [leaf.marked(sole=False, direct=leaf.direct) for leaf in leaves]
        conditions.append(leaves)
    return conditions


# A boolean flag (``self.in_atomic_block``, ``self.hasz``, ``self.entered``): a state, not a value.
_FLAG: Final = re.compile(
    r"_?(?:is|has|in|can|allow|allows|use|uses|should|was|did|enable)(?:_|[a-z]$|$)|\w+ed$"
)


def _is_parameter(subject: str, context: _Context) -> bool:
    context.read_names()
    root = subject.split(".", 1)[0].split("[", 1)[0]
    if root in ("self", "cls"):
        return True
    if context.facts is not None and any(
        parameter.name.lstrip("*") == root for parameter in context.facts.parameters
    ):
        return True
    return root in context.parameters or root not in context.assigned


def _type_cause(conditions: list[list[_Leaf]]) -> str | None:
    for leaves in conditions[:2]:
        for leaf in leaves:
            if leaf.kind == "isinstance" and (not leaf.site_when or (leaf.sole and leaf.direct)):
                return "type-mismatch"
    return None


# Tests of a value; a condition holding one is about that value, not about which options are set.
_VALUE_TESTS: Final = frozenset(
    {"isinstance", "literals", "container", "length", "bound", "equals"}
)


def _guard_cause(
    conditions: list[list[_Leaf]], context: _Context, accepted: list[str]
) -> str | None:
    """The root cause the guards on the way to a site point at (innermost first)."""
    present = [
        leaf
        for leaves in conditions[:3]
        if not any(leaf.kind in _VALUE_TESTS for leaf in leaves)
        for leaf in leaves
        if leaf.site_when
        and ((leaf.kind == "truthiness" and not leaf.subject.endswith(")")) or leaf.kind == "key")
        or (leaf.kind == "none-check" and not leaf.site_when)
    ]
    if len(present) >= 2:
        return "conflicting-options"
    equals = [leaf for leaves in conditions for leaf in leaves if leaf.kind == "equals"]
    for leaves in conditions[:3]:
        leaf = _main_leaf(leaves)
        if leaf is None:
            continue
        if leaf.kind == "literals" or (leaf.kind == "container" and accepted):
            return "invalid-enum-value" if not leaf.site_when else "unsupported-option"
        if leaf.kind == "key":
            return "unsupported-option" if leaf.site_when else "missing-key"
        if leaf.kind == "container":
            return "missing-key" if leaf.direct and not leaf.site_when else None
        if leaf.kind == "length":
            return "shape-mismatch"
        if leaf.kind == "bound":
            return "out-of-range"
        if leaf.kind == "equals":
            strings = [e for e in equals if not e.site_when and e.values[0][:1] in "'\"bf"]
            return "invalid-enum-value" if strings else None
        if leaf.kind == "none-check":
            if leaf.site_when and _is_parameter(leaf.subject, context):
                return "missing-argument"
            continue
        if leaf.kind == "truthiness" and not leaf.site_when:
            subject = leaf.subject.rsplit(".", 1)[-1]
            if _FLAG.match(subject):
                return "invalid-state"
            if not _is_parameter(leaf.subject, context):
                continue
            return "empty-input" if subject.endswith("s") else "missing-argument"
        if leaf.kind == "match":
            return "invalid-enum-value"
    return None


_DECODE_CLASSES: Final = re.compile(r"decode|json|unicode|parse|syntax", re.IGNORECASE)


def _except_cause(context: _Context) -> tuple[str, ErrorType | None] | None:
    """The root cause the caught classes point at, with the category they imply."""
    caught = " ".join(context.caught)
    if not context.in_except or not caught:
        return None
    if re.search(r"ImportError|ModuleNotFoundError", caught):
        return "missing-dependency", _E.DEPENDENCY
    if _DECODE_CLASSES.search(caught):
        return "invalid-format", None
    if re.search(r"KeyError|LookupError|IndexError|NameError|AttributeError|undefined", caught):
        return "missing-key", None
    if re.search(r"Timeout", caught):
        return "timeout", _E.TIMEOUT
    if re.search(r"Connection|Protocol|Socket", caught):
        return "connection-failure", _E.NETWORK
    if re.search(r"\bTypeError\b", caught):
        return "type-mismatch", None
    if re.search(r"FileNotFoundError", caught):
        return "file-not-found", None
    if re.search(r"\b(?:OSError|IOError|EnvironmentError)\b", caught):
        return "invalid-state", _E.IO
    return None


# ---------------------------------------------------------------------------------------------
# Category and strategy.

_TYPE_OF_CAUSE: dict[str, ErrorType] = {
    "type-mismatch": _E.TYPE,
    "missing-key": _E.NOT_FOUND,
    "file-not-found": _E.NOT_FOUND,
    "invalid-state": _E.STATE,
    "control-flow": _E.INTERNAL,
    "unhandled-exception": _E.INTERNAL,
    "assertion-violation": _E.INTERNAL,
    "not-implemented": _E.NOT_IMPLEMENTED,
    "missing-dependency": _E.DEPENDENCY,
    "timeout": _E.TIMEOUT,
    "connection-failure": _E.NETWORK,
    "permission-denied": _E.PERMISSION,
    "resource-exhausted": _E.RESOURCE,
    "version-mismatch": _E.COMPATIBILITY,
    "error-response": _E.NETWORK,
}

# Causes for which a ``TypeError`` keeps the ``type`` category (the others are about values or
# state, whatever class the library chose).
_TYPE_ERROR_CAUSES: Final = frozenset(
    {"type-mismatch", "shape-mismatch", "missing-argument", "unsupported-option", "not-implemented"}
)

# Library families that name the category whatever the root cause.
_CATEGORY_FAMILIES: Final = frozenset(
    {
        _E.CONFIGURATION,
        _E.PARSE,
        _E.NETWORK,
        _E.PERMISSION,
        _E.AUTHENTICATION,
        _E.TIMEOUT,
        _E.DEPENDENCY,
        _E.VALIDATION,
        _E.IO,
    }
)
_NOT_FOUND_CAUSES: Final = frozenset({"missing-key", "file-not-found", "missing-argument"})

_STRATEGY_OF_TYPE: dict[ErrorType, HandlingStrategy] = {
    _E.VALIDATION: _H.VALIDATION,
    _E.TYPE: _H.VALIDATION,
    _E.NOT_FOUND: _H.VALIDATION,
    _E.PARSE: _H.VALIDATION,
    _E.CONFIGURATION: _H.CONFIGURATION,
    _E.PERMISSION: _H.CONFIGURATION,
    _E.AUTHENTICATION: _H.CONFIGURATION,
    _E.DEPENDENCY: _H.INSTALL,
    _E.DEPRECATION: _H.UPGRADE,
    _E.COMPATIBILITY: _H.UPGRADE,
    _E.NETWORK: _H.RETRY,
    _E.TIMEOUT: _H.RETRY,
    _E.IO: _H.PROPAGATE,
    _E.STATE: _H.PROPAGATE,
    _E.INTERNAL: _H.PROPAGATE,
    _E.UNSUPPORTED: _H.FALLBACK,
    _E.NOT_IMPLEMENTED: _H.FALLBACK,
    _E.RESOURCE: _H.CLEANUP,
}


def _strategy(error_type: ErrorType, background: str) -> HandlingStrategy:
    """How to handle it: the category's strategy, refined by the root cause."""
    if background == "not-implemented":
        return _H.FALLBACK
    if background == "missing-dependency" and error_type is not _E.CONFIGURATION:
        return _H.INSTALL
    if background == "file-not-found" and error_type is _E.IO:
        return _H.VALIDATION
    if error_type is _E.NETWORK and background not in ("connection-failure", "timeout"):
        return _H.PROPAGATE
    return _STRATEGY_OF_TYPE[error_type]


# ---------------------------------------------------------------------------------------------
# Severity, HTTP status and error code.

_LEVELS: Final = {
    "CRITICAL": Severity.CRITICAL,
    "FATAL": Severity.CRITICAL,
    "ERROR": Severity.ERROR,
    "EXCEPTION": Severity.ERROR,
    "WARNING": Severity.WARNING,
    "WARN": Severity.WARNING,
    "INFO": Severity.INFO,
    "DEBUG": Severity.INFO,
}
_CODE_TEMPLATE: Final = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_ERRNO_BY_CLASS: Final = {
    "FileNotFoundError": "ENOENT",
    "FileExistsError": "EEXIST",
    "PermissionError": "EACCES",
    "IsADirectoryError": "EISDIR",
    "NotADirectoryError": "ENOTDIR",
    "ConnectionRefusedError": "ECONNREFUSED",
    "ConnectionResetError": "ECONNRESET",
    "ConnectionAbortedError": "ECONNABORTED",
    "BrokenPipeError": "EPIPE",
    "TimeoutError": "ETIMEDOUT",
    "ChildProcessError": "ECHILD",
    "InterruptedError": "EINTR",
    "ProcessLookupError": "ESRCH",
    "BlockingIOError": "EAGAIN",
}


def _severity(site: RaiseSite) -> Severity:
    """Log calls by level, warnings as ``warning``, check objects by class, else the site's."""
    name = _short(site.error_class)
    if site.kind is SiteKind.LOG and name.upper() in _LEVELS:
        return _LEVELS[name.upper()]
    if site.kind is SiteKind.WARN:
        return Severity.WARNING
    if site.kind is SiteKind.OBJECT:
        if name == "Critical":
            return Severity.CRITICAL
        if name.endswith("Warning"):
            return Severity.WARNING
        if name in ("Info", "Debug"):
            return Severity.INFO
    return site.severity


def _error_code(site: RaiseSite) -> str | None:
    """The site's own code, else the errno its class stands for, else a code-like message."""
    if site.error_code is not None:
        return site.error_code
    name = _short(site.error_class)
    if name in _ERRNO_BY_CLASS:
        return _ERRNO_BY_CLASS[name]
    text = site.template.text
    if _CODE_TEMPLATE.fullmatch(text) and site.kind is not SiteKind.LOG:
        return text  # ``PydanticCustomError('sequence_str', "…")``: a code, then the message
    match = re.search(r"\[Errno (\d+)\]", text)
    if match and int(match.group(1)) in errno.errorcode:
        return errno.errorcode[int(match.group(1))]
    return None


# ---------------------------------------------------------------------------------------------
# The classifier.


def _literal_text(site: RaiseSite) -> str:
    return "".join(" {} " if part.hole else part.text for part in site.template.parts)


def _words_of(name: str | None) -> str:
    """``get_missing_field_error`` → ``get missing field error``."""
    if not name:
        return ""
    return " ".join(_camel_words(name.rsplit(".", 1)[-1].replace("_", " ")))


def _assert_addresses_caller(text: str) -> bool:
    return bool(
        re.search(
            r"^\W*(?:use|pass|call|specify|provide|bad|invalid|wrong|illegal)\b"
            r"|\b(?:must|cannot|can't|should)\b",
            text,
            re.I,
        )
    )


def _is_unhandled_log(site: RaiseSite, context: _Context) -> bool:
    return site.kind is SiteKind.LOG and (
        "exc_info" in context.statement
        or ".exception(" in context.statement
        or (context.in_except and bool(set(context.caught) & {"Exception", "BaseException"}))
    )


def _decide(
    site: RaiseSite, evidence: _ClassEvidence, context: _Context
) -> tuple[str, str, ErrorType | None]:
    """Decide the root cause: (background, the evidence that decided, a category it implies)."""
    text = _literal_text(site)
    bare = not any(part.text.strip() for part in site.template.parts if not part.hole)
    if evidence.decisive is not None:
        return evidence.decisive[1], "class", evidence.decisive[0]
    if bare and (evidence.signal or set(context.try_catches) & set(evidence.names)):
        return "control-flow", "signal", _E.INTERNAL
    found = _wording(text)
    if found is not None:
        return found[0], "wording", found[1]
    conditions = _conditions(context.guards)
    type_cause = _type_cause(conditions)
    if type_cause is not None:
        return type_cause, "guard", None
    # A family whose cause is only ``invalid-value`` names the category, not the cause.
    if evidence.specific is not None and evidence.specific[1] != "invalid-value":
        return evidence.specific[1], "family", evidence.specific[0]
    caught = _except_cause(context)
    if caught is not None and caught[0] in ("missing-dependency", "invalid-format"):
        return caught[0], "except", caught[1]
    accepted = list(site.facts.accepted_values) if site.facts is not None else []
    cause = _guard_cause(conditions, context, accepted)
    if cause is not None:
        return cause, "guard", None
    if caught is not None:
        return caught[0], "except", caught[1]
    if _is_unhandled_log(site, context):
        return "unhandled-exception", "kind", _E.INTERNAL
    if bare:
        found = _wording(_words_of(site.function))
        if found is not None:
            return found[0], "wording", found[1]
    holes = " ".join(_words_of(hole) for hole in site.template.holes)
    for pattern, background in _WEAK_WORDS:
        if pattern.search(text) or pattern.search(holes):
            return background, "wording", None
    family = evidence.specific or evidence.weak
    if family is not None:
        return family[1], "family", family[0]
    if site.kind is SiteKind.ASSERT:
        return "assertion-violation", "kind", None
    if evidence.generic is not None:
        return evidence.generic[1], "family", evidence.generic[0]
    if _PARSER_MODULE.search(site.path):
        return "invalid-format", "kind", _E.PARSE
    if site.kind is SiteKind.LOG:
        return "invalid-state", "kind", _E.INTERNAL
    # A class named like a signal rather than an error (``RequestPath``, ``TruncationCompleted``)
    # that nothing else explains.
    name = evidence.names[0]
    if evidence.signal or (
        name.isidentifier() and name[:1].isupper() and not name.endswith(_SUFFIXES)
    ):
        return "control-flow", "default", _E.INTERNAL
    return "invalid-value", "default", None


def _is_system_check(site: RaiseSite) -> bool:
    """A configuration check's finding (Django's ``checks.Error(…, id="fields.E320")``)."""
    if site.kind is not SiteKind.OBJECT:
        return False
    if site.error_code and re.fullmatch(r"[\w.]+\.[EWCI]\d{3}", site.error_code):
        return True
    return _short(site.error_class) in ("Error", "Warning", "Critical", "Info", "Debug")


def _category(
    site: RaiseSite,
    evidence: _ClassEvidence,
    background: str,
    implied: ErrorType | None,
    source: str,
) -> ErrorType:
    """Decide the category from the class family, the root cause and what implied it."""
    text = _literal_text(site)
    name = evidence.names[0]
    if evidence.decisive is not None:
        return evidence.decisive[0]
    if background == "version-mismatch":
        if site.kind is SiteKind.WARN and implied is _E.DEPRECATION:
            return _E.DEPRECATION
        return implied or _E.COMPATIBILITY
    if background == "assertion-violation" and implied is _E.INTERNAL:
        return _E.INTERNAL
    # A weak family (a name like ``ConfigError``, an HTTP status) yields to a category the
    # message implies.
    weak = None if implied is not None and source == "wording" else evidence.weak
    family = evidence.specific or weak
    if family is weak and background == "invalid-format" and _PARSE_WORDS.search(text):
        return _E.PARSE
    if (
        family is not None
        and family[0] in _CATEGORY_FAMILIES
        and not (family[0] is _E.VALIDATION and background == "type-mismatch")
    ):
        return family[0]
    if family is not None and family[0] is _E.NOT_FOUND and background in _NOT_FOUND_CAUSES:
        return _E.NOT_FOUND
    if _is_system_check(site) and implied is not _E.UNSUPPORTED:
        return _E.CONFIGURATION
    if background in ("missing-argument", "missing-key", "invalid-state") and (
        _CONFIG_WORDS.search(text)
        or (background == "missing-argument" and name in ("RuntimeError", "Exception"))
    ):
        return _E.CONFIGURATION
    if implied is not None and (
        implied is _E.UNSUPPORTED or background not in _TYPE_ERROR_CAUSES or name != "TypeError"
    ):
        return implied
    if name == "TypeError" and background in _TYPE_ERROR_CAUSES:
        return _E.TYPE
    if background == "invalid-format" and (
        _PARSE_WORDS.search(text)
        or (family is not None and family[0] is _E.PARSE)
        or _PARSER_MODULE.search(site.path)
    ):
        return _E.PARSE
    if site.kind is SiteKind.ASSERT and background == "assertion-violation":
        return _E.VALIDATION if _assert_addresses_caller(text) else _E.INTERNAL
    if background in _TYPE_OF_CAUSE:
        return _TYPE_OF_CAUSE[background]
    if family is not None and family[0] not in (_E.NOT_FOUND, _E.TYPE):
        return family[0]
    generic = evidence.generic
    if generic is not None and generic[0] in (_E.IO, _E.CONFIGURATION):
        return generic[0]
    return _E.VALIDATION


def classify(site: RaiseSite) -> Classification:
    """Classify one site.

    Uses ``site.facts`` (guards, caught classes, parameters, exception bases, accepted values)
    when the extractor filled them, else reads the guards from the site's ``sourceCode``; with
    neither, the class and the message decide.

    Args:
        site: The site, with its class and template.

    Returns:
        The category, handling strategy, root cause, tags, severity, HTTP status and error code.
    """
    evidence = _class_evidence(site, site.facts)
    context = _context(site)
    background, source, implied = _decide(site, evidence, context)
    error_type = _category(site, evidence, background, implied, source)
    if site.http_status is not None and source not in ("class", "wording"):
        status_type = _status_family(site.http_status)[0]
        if status_type in (_E.AUTHENTICATION, _E.PERMISSION, _E.NOT_FOUND, _E.INTERNAL):
            error_type = status_type
    if evidence.http_status in (401, 403) and background == "missing-argument":
        background = "permission-denied"
    strategy = _strategy(error_type, background)
    tags = [site.kind.value, error_type.value, background]
    if evidence.http_status is not None:
        tags.append(f"http-{evidence.http_status}")
    if site.i18n:
        tags.append("i18n")
    return Classification(
        error_type=error_type,
        strategy=strategy,
        background=background,
        tags=tuple(dict.fromkeys(tags)),
        severity=_severity(site),
        http_status=evidence.http_status,
        error_code=_error_code(site),
        evidence=source,
    )
