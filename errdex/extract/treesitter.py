"""What the tree-sitter extractors share: parsers, decoding, positions and sites.

Every non-Python language (JavaScript/TypeScript, Go, Rust, Java) is read with tree-sitter
through :mod:`tree_sitter_language_pack`. A language's extractor subclasses
:class:`TreeSitterExtractor` and implements :meth:`TreeSitterExtractor.find_sites`, which walks
one file's tree and calls :meth:`FileContext.site` for each error site it recognises; the base
class decodes the file, parses it, and turns each site into a
:class:`~errdex.models.RaiseSite` with the same snippet window, function range and line
conventions as the Python extractor.

Templates are :class:`~errdex.models.TemplatePart` tuples: literal text, and holes whose
``text`` is the expression's source and whose ``style`` names the language's formatting of the
value (``%d`` for a Go verb, ``:?`` for Rust's Debug, empty for plain interpolation).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from errdex.analyze.templates import merge_parts as merge
from errdex.errors import ExtractionError
from errdex.extract import blob_digest
from errdex.extract.files import SourceFile
from errdex.models import (
    CodeFacts,
    FileResult,
    Location,
    MessageTemplate,
    ProblemKind,
    RaiseSite,
    Severity,
    SiteKind,
    TemplatePart,
)

if TYPE_CHECKING:
    from pydantic import JsonValue
    from tree_sitter import Node, Parser, Query, Tree

__all__ = [
    "FileContext",
    "Scope",
    "TreeSitterExtractor",
    "compiled_query",
    "dump_parts",
    "hole",
    "literal",
    "load_parts",
    "merge",
    "parser_for",
    "query_matches",
    "walk",
]


@functools.cache
def parser_for(grammar: str) -> Parser:
    """Return this process's parser for a grammar of :mod:`tree_sitter_language_pack`.

    Args:
        grammar: The grammar's name (``javascript``, ``typescript``, ``tsx``, ``go``, ``rust``,
            ``java``).

    Raises:
        MissingDependencyError: tree-sitter or the language pack is not installed.
    """
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError as exc:  # pragma: no cover - both are core dependencies
        from errdex.errors import MissingDependencyError

        raise MissingDependencyError(f"mining {grammar}", extra="all") from exc
    return get_parser(grammar)  # type: ignore[arg-type]


def query_matches(grammar: str, source: str, root: Node) -> list[tuple[int, dict[str, list[Node]]]]:
    """Run a tree-sitter query (compiled once per process) over a tree; return its matches.

    Args:
        grammar: The grammar's name (``rust``).
        source: The query's source (S-expressions with ``@captures`` and predicates).
        root: The node to search (usually a file's root).
    """
    from tree_sitter import QueryCursor

    return QueryCursor(compiled_query(grammar, source)).matches(root)


@functools.cache
def compiled_query(grammar: str, source: str) -> Query:
    """Compile a tree-sitter query for a grammar, once per process."""
    from tree_sitter import Query
    from tree_sitter_language_pack import get_language

    query: Query = Query(get_language(grammar), source)  # type: ignore[arg-type]
    return query


def literal(text: str) -> TemplatePart:
    """Return a literal part."""
    return TemplatePart(text=text)


def hole(expression: str, style: str = "") -> TemplatePart:
    """Return a hole for an expression's value, formatted as ``style`` says."""
    return TemplatePart(text=" ".join(expression.split()), hole=True, style=style)


def dump_parts(parts: Sequence[TemplatePart]) -> list[JsonValue]:
    """Write template parts as JSON (``[text, hole, style]`` each) for ``exports``."""
    return [[part.text, part.hole, part.style] for part in parts]


def load_parts(value: JsonValue) -> tuple[TemplatePart, ...]:
    """Read template parts written by :func:`dump_parts` (anything else is skipped)."""
    loaded: list[TemplatePart] = []
    for entry in value if isinstance(value, list) else []:
        if isinstance(entry, list) and len(entry) == 3:
            text, is_hole, style = entry
            loaded.append(TemplatePart(text=str(text), hole=bool(is_hole), style=str(style)))
    return tuple(loaded)


def walk(node: Node) -> Iterator[Node]:
    """Yield a node and its named descendants in source order (iteratively, any depth)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.named_children))


@dataclass(frozen=True)
class Scope:
    """The function (or method) around a site.

    Attributes:
        name: Its qualified name as the language shows it in stack traces (``Router.handle``).
        start: Its first line.
        end: Its last line.
    """

    name: str
    start: int
    end: int


class FileContext:
    """One file being mined: its bytes, lines and the sites found so far.

    Args:
        path: The file's path in the source.
        data: Its bytes (tree-sitter positions are byte offsets into them).
        lines: Its decoded lines.
        window: Lines of source kept on each side of a site.
        language: The extractor's language (``javascript``).
    """

    def __init__(
        self, path: str, data: bytes, lines: list[str], window: int, language: str
    ) -> None:
        self.path = path
        self.data = data
        self.lines = lines
        self.window = window
        self.language = language
        self.sites: list[RaiseSite] = []
        self.exports: dict[str, Any] = {}

    def text(self, node: Node) -> str:
        """Return a node's source text."""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    @staticmethod
    def line(node: Node) -> int:
        """Return a node's first line (1-based)."""
        return node.start_point[0] + 1

    @staticmethod
    def end_line(node: Node) -> int:
        """Return a node's last line (1-based)."""
        return node.end_point[0] + 1

    def location(self, node: Node) -> Location:
        """Return where a node starts."""
        return Location(path=self.path, line=self.line(node))

    def site(
        self,
        node: Node,
        parts: Sequence[TemplatePart],
        *,
        error_class: str,
        form: str,
        message: Node | None = None,
        kind: SiteKind = SiteKind.RAISE,
        severity: Severity = Severity.ERROR,
        scope: Scope | None = None,
        http_status: int | None = None,
        error_code: str | None = None,
        defined_at: Location | None = None,
        chained: bool = False,
        facts: CodeFacts | None = None,
    ) -> RaiseSite:
        """Record a site and return it.

        Args:
            node: The statement or expression that raises (``throw``, ``panic!(…)``, …): its
                first line is the record's ``lineNumber``.
            parts: The message template.
            error_class: The error's class or kind (``TypeError``, ``errors.New``, ``panic``).
            form: How the message is written (``literal``, ``template``, ``format``,
                ``concat``, ``variable``, ``constant``, ``opaque`` …); counted in the run report.
            message: The message expression, when there is one (its lines are kept).
            kind: Raise, log, warning, assert or exit.
            severity: How serious the site is.
            scope: The enclosing function.
            http_status: The HTTP status the site answers with.
            error_code: A code carried by the error (``ERR_INVALID_ARG``).
            defined_at: Where a resolved constant message is defined.
            chained: Whether the error wraps another one.
            facts: Grounded facts of the site, when the language gathers them.
        """
        line = self.line(node)
        start = max(1, line - self.window)
        end = min(len(self.lines), line + self.window)
        site = RaiseSite(
            path=self.path,
            kind=kind,
            error_class=error_class,
            template=MessageTemplate(parts=merge(parts)),
            form=form,
            line=line,
            end_line=self.end_line(node),
            message_line=self.line(message) if message is not None else None,
            message_end_line=self.end_line(message) if message is not None else None,
            function=scope.name if scope is not None else None,
            function_start=scope.start if scope is not None else None,
            function_end=scope.end if scope is not None else None,
            severity=severity,
            http_status=http_status,
            error_code=error_code,
            defined_at=defined_at,
            chained=chained,
            source_code="\n".join(self.lines[start - 1 : end]),
            source_code_start=start,
            source_code_end=max(start, end),
            facts=facts,
            language=self.language,
        )
        self.sites.append(site)
        return site


def decode(file: SourceFile) -> tuple[bytes, list[str]]:
    """Return a file's bytes and its lines, refusing binary and non-UTF-8 files.

    Raises:
        ExtractionError: NUL bytes (``binary``) or invalid UTF-8 (``encoding``).
    """
    data = file.data or b""
    if b"\0" in data:
        raise ExtractionError(
            "the file contains NUL bytes (binary?)", path=file.path, kind=ProblemKind.BINARY.value
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ExtractionError(
            f"cannot decode: {exc}", path=file.path, kind=ProblemKind.ENCODING.value, line=line
        ) from exc
    return data, [line.rstrip("\r") for line in text.removeprefix("\ufeff").split("\n")]


MINIFIED_LINE_CHARS = 110
"""A file whose lines are longer than this on average is minified (GitHub Linguist's test)."""

MINIFIED_MIN_BYTES = 4096
"""Smaller files are never taken for minified (a one-line module is not a bundle)."""


def is_minified(data: bytes, lines: list[str]) -> bool:
    """Whether a file is a minified bundle: long lines on average, as no one writes code.

    Wheels ship their web front ends built (streamlit's ``static/js/*.js``, gradio's
    ``templates/**/assets/*.js``, with hashed names that no suffix gives away): their
    messages are real, but no site in them is code a user could be sent to.
    """
    return len(data) >= MINIFIED_MIN_BYTES and len(data) / max(1, len(lines)) > MINIFIED_LINE_CHARS


class TreeSitterExtractor:
    """Base of the tree-sitter extractors (see the module docstring).

    Subclasses set :attr:`language`, :attr:`suffixes`, :attr:`version` and :attr:`grammars`
    and implement :meth:`find_sites`; those whose sites cross files (a Go sentinel error used
    in another file) also put what others need in :attr:`FileContext.exports` and override
    :meth:`link`.

    Args:
        window: Lines of source kept on each side of a site.
    """

    # Plain annotations (not ClassVar): the Extractor protocol reads them as instance attributes.
    language: str
    suffixes: tuple[str, ...]
    version: str
    grammars: ClassVar[dict[str, str]]
    """The grammar of each suffix (``.tsx`` → ``tsx``)."""
    minifies: ClassVar[bool] = False
    """The language's files may be minified bundles (refused: see :func:`is_minified`)."""

    def __init__(self, *, window: int = 18) -> None:
        self.window = window

    def grammar(self, path: str) -> str:
        """Return the grammar that reads a path."""
        return next(g for suffix, g in self.grammars.items() if path.endswith(suffix))

    def parse(self, path: str, data: bytes) -> Tree:
        """Parse a file's bytes with its grammar."""
        return parser_for(self.grammar(path)).parse(data)

    def extract(self, file: SourceFile) -> FileResult:
        """Extract the sites of one file.

        tree-sitter recovers from syntax errors, so a file with a few unparsable statements
        still gives the sites of the rest; a file whose whole tree is an error is a problem.

        Raises:
            ExtractionError: The file is binary, not UTF-8, or not this language at all.
        """
        data, lines = decode(file)
        if self.minifies and is_minified(data, lines):
            raise ExtractionError(
                f"a minified bundle ({len(data) // len(lines)} characters a line on average):"
                " generated code, no site a user could be sent to",
                path=file.path,
                kind=ProblemKind.GENERATED.value,
            )
        tree = self.parse(file.path, data)
        root = tree.root_node
        if root.type == "ERROR" or (root.has_error and not root.named_children):
            raise ExtractionError(
                f"syntax error: not valid {self.language}",
                path=file.path,
                kind=ProblemKind.SYNTAX.value,
                line=1,
            )
        context = FileContext(file.path, data, lines, self.window, self.language)
        self.find_sites(root, context)
        context.sites.sort(key=lambda site: (site.line, site.end_line))
        return FileResult(
            path=file.path,
            digest=blob_digest(data),
            sites=tuple(context.sites),
            exports=context.exports,
        )

    def find_sites(self, root: Node, context: FileContext) -> None:
        """Find the error sites of a file's tree and record each with :meth:`FileContext.site`."""
        raise NotImplementedError

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Return every site of a source, in file order (override to resolve across files)."""
        return [site for result in results for site in result.sites]
