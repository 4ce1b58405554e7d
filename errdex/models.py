"""The data errdex passes between stages: records, templates, sources, problems and reports.

The record is the contract. :class:`SeedRecord` holds exactly the fields of the error dataset
that errdex is compatible with (schema version 2), in its order and with its JSON types;
:class:`ErrorRecord` adds errdex's own fields *after* them. Python attributes are snake_case, the
JSON keys are the dataset's camelCase aliases. Every model is frozen.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime, timezone
from enum import Enum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
)
from pydantic.alias_generators import to_camel

SCHEMA_VERSION = 2
"""The record schema version errdex reads and writes."""


class ErrorType(str, Enum):
    """The category of an error (``errorType``)."""

    VALIDATION = "validation"
    TYPE = "type"
    NOT_FOUND = "not-found"
    CONFIGURATION = "configuration"
    DEPENDENCY = "dependency"
    IO = "io"
    NETWORK = "network"
    TIMEOUT = "timeout"
    PERMISSION = "permission"
    AUTHENTICATION = "authentication"
    STATE = "state"
    UNSUPPORTED = "unsupported"
    NOT_IMPLEMENTED = "not-implemented"
    RESOURCE = "resource"
    PARSE = "parse"
    COMPATIBILITY = "compatibility"
    INTERNAL = "internal"
    DEPRECATION = "deprecation"


class HandlingStrategy(str, Enum):
    """How a caller should handle the error (``handlingStrategy``)."""

    VALIDATION = "validation"
    RETRY = "retry"
    FALLBACK = "fallback"
    CONFIGURATION = "configuration"
    INSTALL = "install"
    UPGRADE = "upgrade"
    PROPAGATE = "propagate"
    CLEANUP = "cleanup"


class Severity(str, Enum):
    """How bad the event is (``severity``)."""

    CRITICAL = "critical"
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class SiteKind(str, Enum):
    """The statement that produces the message."""

    RAISE = "raise"
    ASSERT = "assert"
    LOG = "log"
    WARN = "warn"
    EXIT = "exit"
    HTTP = "http"
    OBJECT = "object"


class MatchKind(str, Enum):
    """How well a record explains a pasted error."""

    EXACT = "exact"
    APPROXIMATE = "approximate"


class ProblemKind(str, Enum):
    """Why one file (or archive entry) of a source could not be mined."""

    SYNTAX = "syntax-error"
    ENCODING = "encoding"
    BINARY = "binary"
    TOO_LARGE = "too-large"
    UNREADABLE = "unreadable"
    UNSAFE_ARCHIVE = "unsafe-archive"
    GENERATED = "generated"
    INTERNAL = "internal"


def _parse_timestamp(value: Any) -> Any:
    if isinstance(value, str):
        text = value[:-1] + "+00:00" if value.endswith("Z") else value
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc)
    return value


# Every record of a run carries the run's time: formatting it once saves a strftime per record.
@functools.lru_cache(maxsize=64)
def format_timestamp(value: datetime) -> str:
    """Format a time as the dataset does: ISO-8601 UTC with milliseconds and ``Z``.

    Args:
        value: An aware or naive (taken as UTC) datetime.

    Returns:
        Text such as ``2026-08-28T05:10:05.995Z``.
    """
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    value = value.astimezone(timezone.utc)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def utc_now() -> datetime:
    """Return the current UTC time truncated to milliseconds (what the format can hold)."""
    now = datetime.now(timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


Timestamp = Annotated[
    datetime,
    BeforeValidator(_parse_timestamp),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]
"""A UTC time that serialises as ``YYYY-MM-DDTHH:MM:SS.mmmZ``."""

RecordId = Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]

MAX_LINE = 2**31 - 1
"""The highest line a record brought in may name (:func:`errdex.store.jsonl.parse_line`
refuses others: indexes keep lines as 32-bit numbers). Records already stored are read as
they are."""


class _Model(BaseModel):
    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        extra="forbid",
    )


class TemplatePart(_Model):
    """One piece of a message template: literal text, or a hole filled at run time.

    Attributes:
        text: The literal text (for a hole: the expression's source text, e.g. ``phase``).
        hole: Whether this part is a hole.
        style: For a hole, how its value is formatted: a ``str.format``/f-string spec such as
            ``!r`` or ``:.2f``, or a ``%`` directive such as ``%d``; empty for plain ``{x}``.
    """

    text: str
    hole: bool = False
    style: str = ""


class MessageTemplate(_Model):
    """A message as written in the code: literal text with holes.

    Attributes:
        parts: The literal and hole parts in order; adjacent literals are merged.
    """

    parts: tuple[TemplatePart, ...] = ()

    @property
    def text(self) -> str:
        """The template as ``errorMessage`` shows it: each hole as ``{expr}``."""
        return "".join("{" + p.text + "}" if p.hole else p.text for p in self.parts)

    @property
    def holes(self) -> list[str]:
        """The source text of each hole, in order."""
        return [p.text for p in self.parts if p.hole]

    @property
    def literal_length(self) -> int:
        """The number of literal characters (how specific the template is)."""
        return sum(len(p.text) for p in self.parts if not p.hole)

    @property
    def is_opaque(self) -> bool:
        """Whether the template has no literal text at all (a pass-through message)."""
        return bool(self.parts) and self.literal_length == 0


class Location(_Model):
    """A place in a source: a path and a 1-based line."""

    path: str
    line: int


class RaiseSite(_Model):
    """One place in the code that produces an error message, before analysis.

    Attributes:
        path: The file, relative to the source root.
        kind: The statement kind.
        error_class: The class a user sees (``ValueError``; a level name for log sites).
        template: The message template.
        form: How the message is built (see :class:`~errdex.analyze.templates.Built`).
        line: The first line of the statement (the ``raise`` line).
        end_line: The statement's last line.
        message_line: The first line of the message expression.
        message_end_line: The message expression's last line.
        function: The enclosing function's qualified name.
        function_start: Its first line (decorators excluded).
        function_end: Its last line.
        severity: How bad the event is.
        http_status: The HTTP status the site carries.
        error_code: A stable code the site carries (errno name, ``id=``, ``code=``).
        defined_at: Where a resolved message constant is defined.
        i18n: The message is wrapped in a translation call.
        chained: The raise has ``from``.
        source_code: The lines around the site.
        source_code_start: The first line of ``source_code``.
        source_code_end: The last line of ``source_code``.
        factory: The function that builds the message when it is not built at the site
            (a factory returning the exception, a helper given the message).
        arguments: For ``raise`` of a call, how many arguments the call passes (``raise X()``
            is 0); None for other statements and for ``raise X``.
        facts: What the code around the site says (see :class:`CodeFacts`).
        context: What the classifier needs of the code around the site (Python sites).
        language: The source language (``python``, ``javascript``, ``go`` …).
    """

    path: str
    kind: SiteKind
    error_class: str
    template: MessageTemplate
    form: str
    line: int
    end_line: int
    message_line: int | None = None
    message_end_line: int | None = None
    function: str | None = None
    function_start: int | None = None
    function_end: int | None = None
    severity: Severity = Severity.ERROR
    http_status: int | None = None
    error_code: str | None = None
    defined_at: Location | None = None
    i18n: bool = False
    chained: bool = False
    source_code: str = ""
    source_code_start: int = 1
    source_code_end: int = 1
    factory: str | None = None
    arguments: int | None = None
    facts: CodeFacts | None = None
    context: SiteContext | None = None
    language: str = "python"


class FileResult(_Model):
    """What extracting one file gave: its sites and what other files may need from it.

    Results are cached by ``digest`` so that re-mining an unchanged file skips parsing.

    Attributes:
        path: The file, relative to the source root.
        digest: The git blob id of the file's bytes (the same for a directory and a git source).
        sites: The sites found in the file, before cross-file linking.
        exports: Language-specific facts other files may need (constants, exception classes,
            factories), as JSON values; only the extractor that wrote them reads them. Typed
            ``Any`` for pydantic, not ``JsonValue``: the extractors make them, and checking
            every value of them (or serialising them as ``JsonValue``) took a tenth of a
            second of mining transformers (#3); a value JSON cannot hold fails the file's
            serialisation, which the pipeline reports as the file's problem.
    """

    path: str
    digest: str
    sites: tuple[RaiseSite, ...] = ()
    exports: dict[str, Any] = Field(default_factory=dict)


class Parameter(_Model):
    """One parameter of a function's signature.

    Attributes:
        name: The parameter's name (``*args``/``**kwargs`` keep their stars).
        annotation: Its annotation's source text, if any.
        default: Its default value's source text, if any.
    """

    name: str
    annotation: str | None = None
    default: str | None = None


class Guard(_Model):
    """A condition the code tests on the way to a site.

    Attributes:
        kind: ``comparison``, ``membership``, ``isinstance``, ``none-check``,
            ``truthiness``, ``match``, ``dict-lookup`` or ``other``.
        text: The condition's source text, as written.
        subject: The name or expression tested (``phase``), when there is one.
        values: The literal values (or type names) it tests against, as source text.
        leads_to_site: True when the site runs when the condition holds (``if bad: raise``);
            False when the site runs after every tested branch failed (the fall-through
            ``raise`` after ``if x == "a": return …``).
        line: The condition's line.
    """

    kind: str
    text: str
    subject: str | None = None
    values: list[str] = Field(default_factory=list)
    leads_to_site: bool = True
    line: int = 0


class SiteContext(_Model):
    """What the extractor saw around a site that the classifier needs beyond the code facts.

    Computed from the real tree while extracting, so that classification never re-parses the
    site's snippet. Not part of a record.

    Attributes:
        caught: The bare class names the ``except`` clause holding the site catches
            (``BaseException`` for a bare ``except:``); empty outside one.
        except_line: That clause's line (0 outside one).
        try_catches: The bare class names caught, and not raised again, by the innermost
            ``try`` whose body holds the site.
        assigned: Names the guards test that the enclosing function (or module) assigns
            itself before the site, parameters excluded.
    """

    caught: tuple[str, ...] = ()
    except_line: int = 0
    try_catches: tuple[str, ...] = ()
    assigned: tuple[str, ...] = ()


class CodeFacts(_Model):
    """What the code around a site says, the ground truth for every narrative field.

    Attributes:
        function: The enclosing function's name.
        class_name: The enclosing class's name.
        signature: The function's signature as source text (``f(a, b: int = 1)``).
        parameters: The function's parameters.
        docstring: The first paragraph of the function's docstring.
        guards: The conditions that lead to the site, outermost first.
        subject: The name the error is about (the value tested, or the hole of the message).
        accepted_values: Values the code accepts for ``subject`` at the site (literals
            compared before a fall-through raise, a Literal annotation, keys of the dict or
            members of the set/tuple/Enum tested), as source text (``'draft_decode'``).
        exception_bases: The raised class's bases, as far as the source and builtins show.
        in_except: The site is inside an ``except`` block.
        caught: The exception classes that block catches.
        callers: In-source places that call the enclosing function.
    """

    function: str | None = None
    class_name: str | None = None
    signature: str | None = None
    parameters: list[Parameter] = Field(default_factory=list)
    docstring: str | None = None
    guards: list[Guard] = Field(default_factory=list)
    subject: str | None = None
    accepted_values: list[str] = Field(default_factory=list)
    exception_bases: list[str] = Field(default_factory=list)
    in_except: bool = False
    caught: list[str] = Field(default_factory=list)
    callers: list[Location] = Field(default_factory=list)


class Narrative(_Model):
    """The prose and code fields of a record, as a writer (offline or LLM) produces them.

    Field names and types are those of the record (see :class:`SeedRecord`).
    """

    documentation: str = ""
    trigger_scenarios: str = ""
    common_situations: str = ""
    solutions: list[str] = Field(default_factory=list)
    example_fix: str = ""
    validation_code: str | None = None
    type_guard: str | None = None
    try_catch_pattern: str | None = None
    prevention_tips: list[str] = Field(default_factory=list)


class Claim(_Model):
    """One statement of a narrative that the verifier checked against the facts.

    Attributes:
        field: The record field the claim is in (``documentation``).
        text: The claimed literal, name or class, as written.
        verdict: ``contradicted`` (the code says otherwise), ``unsupported`` (the facts do not
            show it) or ``unparsable`` (a code field that does not parse).
        reason: One sentence on what the code says instead.
    """

    field: str
    text: str
    verdict: str
    reason: str


class SeedRecord(_Model):
    """One error record, exactly the dataset's schema (version 2).

    Field order and JSON types are the seed's; see ``DESIGN.md`` for each field's rule.
    """

    id: RecordId
    repo: str
    slug: str
    error_code: str | None = None
    error_message: str
    message_pattern: str
    error_type: ErrorType
    error_class: str
    http_status: int | None = None
    severity: Severity
    file_path: str
    line_number: int = Field(ge=1)
    source_code: str
    source_code_start: int = Field(ge=1)
    source_code_end: int = Field(ge=1)
    github_url: str | None = None
    documentation: str = ""
    trigger_scenarios: str = ""
    common_situations: str = ""
    solutions: list[str] = Field(default_factory=list)
    example_fix: str = ""
    handling_strategy: HandlingStrategy
    validation_code: str | None = None
    type_guard: str | None = None
    try_catch_pattern: str | None = None
    prevention_tips: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    background_tag: str
    analyzed_sha: str | None = None
    analyzed_at: Timestamp
    schema_version: int = SCHEMA_VERSION


RaiseSite.model_rebuild()
FileResult.model_rebuild()

SEED_FIELDS: tuple[str, ...] = tuple(SeedRecord.model_fields)
"""The seed's fields, as Python attribute names, in the seed's order."""

SEED_KEYS: tuple[str, ...] = tuple(to_camel(name) for name in SEED_FIELDS)
"""The seed's JSON keys in the seed's order."""


class ErrorRecord(SeedRecord):
    """A record with errdex's own fields after the seed's.

    Attributes:
        language: The source language (``python``).
        kind: The statement that produces the message (raise, log, warn …).
        package: The distribution name when the source is a package.
        package_version: Its version.
        template: The message template with its holes, from which patterns are compiled.
        message_form: How the message is built (``constant``, ``f-string``, ``percent`` …).
        opaque: The message could not be reduced to a template (``{msg}``).
        message_line: The line where the message text starts (often not the raise line).
        message_end_line: The line where the message text ends.
        end_line_number: The last line of the raise statement.
        function: The enclosing function's qualified name, if any.
        function_start: The enclosing function's first line.
        function_end: The enclosing function's last line.
        defined_at: Where a resolved message constant is defined, when not at the site.
        ordinal: The rank of this record among identical (path, class, template) ones.
        i18n: The message is wrapped in a translation call; users may see a translation.
        factory: The function that builds the message when it is not built at the site.
        arguments: For ``raise`` of a call, how many arguments it passes; else None.
        facts: What the code around the site says (grounding for the prose).
        writer: Who wrote the prose fields: ``offline``, ``llm:<model>``, ``import`` or empty.
        claims: The verifier's findings on the prose (empty when everything checks out).
    """

    language: str = "python"
    kind: SiteKind = SiteKind.RAISE
    package: str | None = None
    package_version: str | None = None
    template: MessageTemplate = Field(default_factory=MessageTemplate)
    message_form: str = ""
    opaque: bool = False
    message_line: int | None = None
    message_end_line: int | None = None
    end_line_number: int | None = None
    function: str | None = None
    function_start: int | None = None
    function_end: int | None = None
    defined_at: Location | None = None
    ordinal: int = 0
    i18n: bool = Field(default=False, alias="i18n")
    factory: str | None = None
    arguments: int | None = None
    facts: CodeFacts | None = None
    writer: str = ""
    claims: list[Claim] = Field(default_factory=list)

    def seed_dict(self) -> dict[str, Any]:
        """Return the record as the seed's JSON object: exactly its keys, in its order."""
        return self.model_dump(mode="json", include=set(SEED_FIELDS))

    def full_dict(self) -> dict[str, Any]:
        """Return the record as errdex's full JSON object: the seed's keys, then errdex's."""
        return self.model_dump(mode="json")


class CapturedText(_Model):
    """A record whose message is a value a match captured: where that text comes from.

    django logs ``Forbidden ({reason}): {request.path}``; the ``reason`` a paste shows, ``CSRF
    cookie not set.``, is the message of the ``RejectRequest`` raised at ``csrf.py:362``.

    Attributes:
        hole: The hole whose value it is.
        id: The record's id.
        file_path: The record's file.
        line_number: The record's line.
        error_class: The record's class.
    """

    hole: str
    id: str
    file_path: str
    line_number: int
    error_class: str


class Match(_Model):
    """One record that may explain a pasted error, and why.

    Attributes:
        record: The record.
        kind: ``exact`` when the message is one the record's template produces and nothing
            contradicts it; ``approximate`` otherwise.
        score: Higher is better; comparable within one answer.
        evidence: Why it ranks where it does, one short sentence each.
        captures: The value of each hole in the pasted message, by hole name.
        error: Which parsed error (index into the parsed input's errors) it explains.
        captured_texts: The records whose message a captured value is.
    """

    record: ErrorRecord
    kind: MatchKind
    score: float
    evidence: list[str] = Field(default_factory=list)
    captures: dict[str, str] = Field(default_factory=dict)
    error: int = 0
    captured_texts: list[CapturedText] = Field(default_factory=list)


class RecordEnvelope(_Model):
    """One JSONL line of the dataset: a record and the dataset version it belongs to."""

    record: ErrorRecord
    dataset_version: Timestamp


class SourceInfo(_Model):
    """What was mined: a directory, a git revision, or a package version.

    Attributes:
        key: The identity of the source in a store; mining the same key again replaces
            its records. ``repo`` for directories and git repositories, ``repo==version``
            for packages.
        repo: ``owner/name``, ``pypi:NAME`` or a local name.
        kind: ``directory``, ``git``, ``pypi``, ``installed`` or ``import``.
        location: The path or specifier the user gave.
        revision: The git revision asked for.
        sha: The commit mined, when known.
        package: The distribution name.
        version: The distribution version.
        mined_at: When the source was mined.
    """

    key: str
    repo: str
    kind: str
    location: str = ""
    revision: str | None = None
    sha: str | None = None
    package: str | None = None
    version: str | None = None
    mined_at: Timestamp | None = None


class Problem(_Model):
    """A file (or archive entry) that could not be mined, and why.

    Attributes:
        path: The path inside the source.
        kind: The kind of problem.
        message: A one-line description.
        line: The 1-based line, when known.
    """

    path: str
    kind: ProblemKind
    message: str
    line: int = 0


class RunReport(_Model):
    """What one mining run of one source did.

    Attributes:
        source: The source mined.
        files: Files read and parsed.
        skipped: Files left out on purpose (not Python, tests, symlinks).
        sites: Sites found, by :class:`SiteKind` value.
        languages: Sites found, by language.
        forms: Sites found, by message form.
        opaque: Sites whose message is not a template.
        records: Records written.
        cached: Files whose previous extraction was reused (content unchanged).
        unchanged: Nothing changed since the last run, so the stored records were kept.
        problems: Files that could not be mined.
        seconds: Wall time of the run.
    """

    source: SourceInfo
    files: int = 0
    skipped: int = 0
    sites: dict[str, int] = Field(default_factory=dict)
    languages: dict[str, int] = Field(default_factory=dict)
    forms: dict[str, int] = Field(default_factory=dict)
    opaque: int = 0
    records: int = 0
    cached: int = 0
    unchanged: bool = False
    problems: list[Problem] = Field(default_factory=list)
    seconds: float = 0.0


class StoreStats(_Model):
    """Counts over a whole store."""

    records: int
    sources: int
    problems: int
    by_type: dict[str, int]
    by_class: dict[str, int]
    by_repo: dict[str, int]


_SLUG_RUN = re.compile(r"[^a-z0-9]+")


def slugify(template: str) -> str:
    """Make the dataset's slug of a template.

    The template lower-cased, each run of non-alphanumerics replaced by ``-``, trimmed.

    Args:
        template: The ``errorMessage`` text.

    Returns:
        For example ``unknown-speculative-phase-phase`` for ``Unknown speculative phase: {phase}``.
    """
    return _SLUG_RUN.sub("-", template.lower()).strip("-")
