r"""Java: the exceptions a code base throws, the checks that throw for it, and its error logs (#7).

Sites, each classed by the exception's simple name (what a stack trace's ``Class: message``
line gives once its package is dropped):

- ``throw new X(…)`` and every ``new X(…)`` of an exception class (one handed to
  ``reject(promise, new Exception(…))`` or returned by a factory): the message is the first
  argument unless it is the cause (``new RuntimeException(e)`` prints the cause: one hole);
  ``new X()`` has no message (form ``empty``);
- project exception classes (``class MyException extends RuntimeException``): the constructor
  that the call's arity selects gives the message, following ``super(…)``/``this(…)`` through
  the class's ancestors, across files (:meth:`JavaExtractor.link`);
- checks: ``Objects.requireNonNull(x, "…")`` (``NullPointerException``), Guava's
  ``Preconditions.checkArgument/checkState/checkNotNull(cond, "… %s", args)`` and
  ``assert cond : "…"`` (kind ``assert``, ``AssertionError``);
- logs (kind ``log``, the level as class): SLF4J/Log4j/commons-logging ``log.error``/``warn``
  (``{}`` placeholders; a trailing exception argument is not a placeholder's),
  ``java.util.logging`` ``severe``/``warning``/``log(Level.SEVERE, "… {0}", …)``, Android
  ``Log.e``/``Log.w``/``Log.wtf`` and ``System.err.println``.

Messages: string literals and text blocks (unescaped as ``javac`` does, text blocks with their
incidental indentation removed), ``+`` concatenation, ``String.format``/``"…".formatted``
(``java.util.Formatter`` conversions as holes: ``%s``, ``%5d``, ``%2$s``, ``%<s``, ``%%``,
``%n``), ``MessageFormat.format`` (``{0}``, ``{1,number}``, ``''`` quotes), and names: a local
variable assigned earlier in the method (one site per assignment), or a ``static final``
constant of the file. Anything else is one hole (form ``opaque``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, ClassVar

from errdex.extract import code_version
from errdex.extract.treesitter import (
    FileContext,
    Scope,
    TreeSitterExtractor,
    dump_parts,
    hole,
    literal,
    load_parts,
    merge,
    query_matches,
)
from errdex.models import FileResult, RaiseSite, Severity, SiteKind, TemplatePart

if TYPE_CHECKING:
    from pydantic import JsonValue
    from tree_sitter import Node

__all__ = ["JavaExtractor", "formatter_parts", "message_format_parts", "unescape"]

_QUERY_SOURCE = """
(object_creation_expression) @new
(method_invocation
  name: (identifier) @name
  (#any-of? @name "error" "warn" "warning" "severe" "fatal" "log" "e" "w" "wtf"
     "requireNonNull" "checkArgument" "checkState" "checkNotNull" "println" "print" "printf"))
  @call
(assert_statement) @assert
(class_declaration) @class
(field_declaration) @field
"""

_EXCEPTION_NAME = re.compile(r"(?:Exception|Error|Throwable|Failure|Fault)$")
_CAUSE_NAMES = frozenset(
    {"e", "ex", "exc", "err", "error", "t", "th", "cause", "throwable", "exception", "ioe", "re"}
)
_LEVELS = {
    "error": ("ERROR", Severity.ERROR),
    "fatal": ("CRITICAL", Severity.CRITICAL),
    "warn": ("WARN", Severity.WARNING),
    "severe": ("ERROR", Severity.ERROR),
    "warning": ("WARNING", Severity.WARNING),
    "e": ("ERROR", Severity.ERROR),
    "wtf": ("ERROR", Severity.ERROR),
    "w": ("WARN", Severity.WARNING),
}
_JUL_LEVELS = {"SEVERE": ("ERROR", Severity.ERROR), "WARNING": ("WARNING", Severity.WARNING)}
_ANDROID_LOGS = frozenset({"Log", "FLog", "Slog"})
_CHECKS = {
    "requireNonNull": "NullPointerException",
    "checkNotNull": "NullPointerException",
    "checkArgument": "IllegalArgumentException",
    "checkState": "IllegalStateException",
}
_SCOPES = frozenset(
    {"method_declaration", "constructor_declaration", "lambda_expression", "static_initializer"}
)
_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "object_creation_expression",
    }
)
_FORMATTER = re.compile(
    r"%(?:(?P<index>\d+\$|<)?(?P<flags>[-#+ 0,(]*)(?P<width>\d+)?(?:\.(?P<precision>\d+))?"
    r"(?P<conversion>[tT][a-zA-Z]|[bBhHsScCdoxXeEfgGaA%n]))"
)
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "b": "\b",
    "r": "\r",
    "f": "\f",
    "s": " ",
    '"': '"',
    "'": "'",
    "\\": "\\",
}
_ESCAPE = re.compile(r"\\(?:u+([0-9A-Fa-f]{4})|([0-3][0-7]{0,2}|[4-7][0-7]?)|\n|(.))", re.DOTALL)
_MAX_DEPTH = 8
_MAX_BRANCHES = 4


def _unescape_one(match: re.Match[str]) -> str:
    unicode, octal, simple = match.groups()
    if unicode is not None:
        return chr(int(unicode, 16))
    if octal is not None:
        return chr(int(octal, 8))
    if simple is not None:
        return _ESCAPES.get(simple, simple)
    return ""  # a line continuation in a text block


def _text_block(body: str) -> str:
    """The content of a text block (after its opening ``\"\"\"`` line), as javac strips it."""
    lines = body.split("\n")
    closing_alone = not lines[-1].strip()
    significant = [line for line in lines if line.strip()]
    if closing_alone:
        significant.append(lines[-1])
    indent = min((len(line) - len(line.lstrip(" \t")) for line in significant), default=0)
    stripped = [line[indent:].rstrip(" \t") for line in lines]
    if closing_alone:
        stripped[-1] = ""
    return "\n".join(stripped)


def unescape(source: str) -> str | None:
    r"""Return the value of a Java string literal or text block, or None when it is not one.

    Args:
        source: The literal as written (``"a\n"``, ``\"\"\"`` text blocks).
    """
    if source.startswith('"""') and source.endswith('"""') and len(source) >= 6:
        newline = source.find("\n")
        if newline < 0:
            return None
        return _ESCAPE.sub(_unescape_one, _text_block(source[newline + 1 : -3]))
    if len(source) < 2 or source[0] != '"' or source[-1] != '"':
        return None
    return _ESCAPE.sub(_unescape_one, source[1:-1])


def formatter_parts(text: str, arguments: Sequence[str]) -> list[TemplatePart]:
    """Read a ``java.util.Formatter`` string (``String.format``) into literals and holes.

    Args:
        text: The format string's value.
        arguments: The source text of each argument after it.

    Returns:
        The parts; ``%%`` is ``%``, ``%n`` a newline, each other conversion a hole styled by
        the whole specifier (``%-5s``).
    """
    parts: list[TemplatePart] = []
    position = 0
    implicit = 0
    previous = -1
    for match in _FORMATTER.finditer(text):
        parts.append(literal(text[position : match.start()]))
        position = match.end()
        conversion = match["conversion"]
        if conversion == "%":
            parts.append(literal("%"))
            continue
        if conversion == "n":
            parts.append(literal("\n"))
            continue
        index = match["index"]
        if index == "<":
            chosen = previous
        elif index:
            chosen = int(index[:-1]) - 1
        else:
            chosen = implicit
            implicit += 1
        previous = chosen
        expression = arguments[chosen] if 0 <= chosen < len(arguments) else f"arg{chosen + 1}"
        parts.append(hole(expression, match[0]))
    parts.append(literal(text[position:]))
    return list(merge(parts))


def message_format_parts(text: str, arguments: Sequence[str]) -> list[TemplatePart]:
    """Read a ``java.text.MessageFormat`` pattern (``{0}``, ``{1,number,#}``, ``''``).

    Args:
        text: The pattern.
        arguments: The source text of each argument.
    """
    parts: list[TemplatePart] = []
    buffer: list[str] = []
    position = 0
    quoted = False
    while position < len(text):
        char = text[position]
        if char == "'":
            if text.startswith("''", position):
                buffer.append("'")
                position += 2
                continue
            quoted = not quoted
            position += 1
            continue
        if char == "{" and not quoted:
            close = text.find("}", position)
            if close < 0:
                buffer.append(text[position:])
                break
            index, _, style = text[position + 1 : close].partition(",")
            number = int(index.strip()) if index.strip().isdigit() else -1
            parts.append(literal("".join(buffer)))
            buffer = []
            expression = (
                arguments[number] if 0 <= number < len(arguments) else f"{{{index.strip()}}}"
            )
            parts.append(hole(expression, "{" + text[position + 1 : close] + "}" if style else ""))
            position = close + 1
            continue
        buffer.append(char)
        position += 1
    parts.append(literal("".join(buffer)))
    return list(merge(parts))


def _slf4j_parts(text: str, arguments: Sequence[str]) -> list[TemplatePart]:
    r"""Read an SLF4J/Log4j message: ``{}`` placeholders filled in order, ``\\{}`` kept."""
    parts: list[TemplatePart] = []
    pieces = re.split(r"(\\?\{\})", text)
    used = 0
    for piece in pieces:
        if piece == "{}" and used < len(arguments):
            parts.append(hole(arguments[used], "{}"))
            used += 1
        elif piece == "\\{}":
            parts.append(literal("{}"))
        else:
            parts.append(literal(piece))
    return parts


def _simple(name: str) -> str:
    """``java.io.IOException`` → ``IOException``; ``Outer.Inner`` → ``Inner``; no generics."""
    return name.split("<", 1)[0].rsplit(".", 1)[-1].strip()


def _has_literal(parts: Sequence[TemplatePart]) -> bool:
    return any(not part.hole and part.text for part in parts)


Built = tuple[list[TemplatePart], str]
"""A message's template and its form."""

_Reader = Callable[[str, Sequence[str]], list[TemplatePart]]
"""Reads a format string and its arguments' source into parts."""


class _File:
    """One Java file being mined: names, scopes, messages and sites."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.constants: dict[str, Built] = {}
        self.scopes: dict[int, Scope | None] = {}
        self.assignments: dict[int, dict[str, list[tuple[int, Node]]]] = {}
        self.exceptions: dict[str, JsonValue] = {}
        self.creations: dict[str, JsonValue] = {}

    def text(self, node: Node | None) -> str:
        return self.context.text(node) if node is not None else ""

    # -- scopes and names --------------------------------------------------------------------

    def owner(self, node: Node) -> str:
        """The ``Outer$Inner`` name of the type around a node, as stack traces write it."""
        names: list[str] = []
        current = node.parent
        while current is not None:
            if current.type in _TYPES and current.type != "object_creation_expression":
                names.append(self.text(current.child_by_field_name("name")))
            current = current.parent
        return "$".join(reversed(names))

    def scope(self, node: Node) -> Scope | None:
        """The method around a node (``Class.method``, ``Class.<init>``, ``Class.<clinit>``)."""
        method = node.parent
        while method is not None and method.type not in (
            "method_declaration",
            "constructor_declaration",
            "static_initializer",
        ):
            method = method.parent
        if method is None:
            return None
        if method.id not in self.scopes:
            if method.type == "method_declaration":
                name = self.text(method.child_by_field_name("name"))
            else:
                name = "<init>" if method.type == "constructor_declaration" else "<clinit>"
            qualified = f"{self.owner(method)}.{name}"
            self.scopes[method.id] = Scope(
                qualified, FileContext.line(method), FileContext.end_line(method)
            )
        return self.scopes[method.id]

    def values_of(self, name: str, node: Node) -> list[Node]:
        """The values assigned to a local ``name`` before ``node`` in its method."""
        method = node.parent
        while method is not None and method.type not in _SCOPES:
            method = method.parent
        if method is None:
            return []
        table = self.assignments.get(method.id)
        if table is None:
            table = {}
            stack = [method.child_by_field_name("body")]
            while stack:
                current = stack.pop()
                if current is None:
                    continue
                target = value = None
                if current.type == "variable_declarator":
                    target = current.child_by_field_name("name")
                    value = current.child_by_field_name("value")
                elif current.type == "assignment_expression":
                    target = current.child_by_field_name("left")
                    value = current.child_by_field_name("right")
                    if self.text(current.child_by_field_name("operator")) not in ("=", ""):
                        value = None
                if target is not None and value is not None and target.type == "identifier":
                    table.setdefault(self.text(target), []).append((current.end_byte, value))
                if current.type not in _SCOPES or current is method:
                    stack.extend(current.named_children)
            self.assignments[method.id] = table
        return [value for end, value in table.get(name, []) if end <= node.start_byte]

    def constant(self, node: Node) -> None:
        """Remember a ``static final String`` (or any ``final`` field) initialised with a string."""
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        if modifiers is None or "final" not in self.text(modifiers).split():
            return
        owner = self.owner(node).rsplit("$", 1)[-1]
        for declarator in node.named_children:
            if declarator.type != "variable_declarator":
                continue
            name = self.text(declarator.child_by_field_name("name"))
            value = declarator.child_by_field_name("value")
            if value is None:
                continue
            parts, form = self.message(value, depth=1)
            if form != "opaque":
                self.constants[name] = (parts, "constant")
                self.constants[f"{owner}.{name}"] = (parts, "constant")

    # -- messages ----------------------------------------------------------------------------

    def messages(self, node: Node, *, depth: int = 0) -> list[Built]:
        """The templates of a message expression: one per assignment of a local variable."""
        if node.type == "identifier" and depth < _MAX_DEPTH:
            values = self.values_of(self.text(node), node)
            if values:
                found = [self.message(v, depth=depth + 1) for v in values[-_MAX_BRANCHES:]]
                built = [(parts, "variable") for parts, form in found if form != "opaque"]
                if built:
                    unique: list[Built] = []
                    for item in built:
                        if item not in unique:
                            unique.append(item)
                    return unique
        return [self.message(node, depth=depth)]

    def message(self, node: Node, *, depth: int = 0) -> Built:
        """The template of a message expression and its form."""
        kind = node.type
        if kind == "string_literal":
            text = unescape(self.text(node))
            if text is not None:
                return [literal(text)], "literal"
        elif kind == "character_literal":
            text = unescape('"' + self.text(node)[1:-1] + '"')
            if text is not None:
                return [literal(text)], "literal"
        elif kind in ("decimal_integer_literal", "true", "false", "null_literal"):
            # Text only inside a concatenation ("code " + 0): a string operand decides that.
            value = self.text(node).rstrip("lL").replace("_", "")
            return [literal(value)], "number"
        elif kind == "parenthesized_expression" and node.named_children and depth < _MAX_DEPTH:
            return self.message(node.named_children[0], depth=depth + 1)
        elif kind == "binary_expression" and depth < _MAX_DEPTH:
            concatenated = self.concatenation(node, depth)
            if concatenated is not None:
                return concatenated, "concat"
        elif kind == "method_invocation" and depth < _MAX_DEPTH:
            formatted = self.formatted(node, depth)
            if formatted is not None:
                return formatted
        elif kind in ("identifier", "field_access") and depth < _MAX_DEPTH:
            name = self.text(node)
            if kind == "identifier":
                values = self.values_of(name, node)
                if values:
                    parts, form = self.message(values[-1], depth=depth + 1)
                    if form != "opaque":
                        return parts, "variable"
                    return [hole(name)], "opaque"
            found = self.constants.get(name) or self.constants.get(name.removeprefix("this."))
            if found is not None:
                return list(found[0]), "constant"
        return [hole(self.text(node))], "opaque"

    def concatenation(self, node: Node, depth: int) -> list[TemplatePart] | None:
        """The parts of a ``+`` chain holding a string (None for arithmetic)."""
        operands: list[Node] = []
        stack = [node]
        while stack:
            current = stack.pop()
            if (
                current.type == "binary_expression"
                and self.text(current.child_by_field_name("operator")) == "+"
            ):
                right = current.child_by_field_name("right")
                left = current.child_by_field_name("left")
                stack.extend(n for n in (right, left) if n is not None)
            else:
                operands.append(current)
        built = [self.message(operand, depth=depth + 1) for operand in operands]
        if all(form in ("opaque", "number") for _, form in built):
            return None  # arithmetic, or nothing known about any string operand
        parts: list[TemplatePart] = []
        for operand, (operand_parts, form) in zip(operands, built, strict=True):
            parts.extend(operand_parts if form != "opaque" else [hole(self.text(operand))])
        return parts

    def formatted(self, node: Node, depth: int) -> Built | None:
        """``String.format``, ``"…".formatted``, ``MessageFormat.format``, ``String.valueOf``."""
        name = self.text(node.child_by_field_name("name"))
        receiver = node.child_by_field_name("object")
        arguments = node.child_by_field_name("arguments")
        values = arguments.named_children if arguments is not None else []
        owner = self.text(receiver)
        if name == "formatted" and receiver is not None:
            pattern, rest = receiver, values
            reader = formatter_parts
        elif name == "format" and owner in ("String", "java.lang.String") and values:
            if (
                values[0].type != "string_literal"
                and len(values) > 1
                and "Locale" in self.text(values[0])
            ):
                values = values[1:]
            pattern, rest = values[0], values[1:]
            reader = formatter_parts
        elif name == "format" and owner.endswith("MessageFormat") and values:
            pattern, rest = values[0], values[1:]
            reader = message_format_parts
        else:
            return None
        text, _ = self.message(pattern, depth=depth + 1)
        if any(p.hole for p in text):
            return None
        return reader("".join(p.text for p in text), [self.text(v) for v in rest]), "format"

    # -- sites -------------------------------------------------------------------------------

    def site(
        self,
        node: Node,
        built: Built,
        *,
        error_class: str,
        message: Node | None = None,
        kind: SiteKind = SiteKind.RAISE,
        severity: Severity = Severity.ERROR,
        chained: bool = False,
    ) -> None:
        """Record a site in the method around ``node``."""
        parts, form = built
        self.context.site(
            node,
            parts,
            error_class=error_class,
            form=form,
            message=message,
            kind=kind,
            severity=severity,
            scope=self.scope(node),
            chained=chained,
        )

    def creation(self, node: Node) -> None:
        """``new X(…)`` of an exception class (thrown, returned or handed on)."""
        type_node = node.child_by_field_name("type")
        name = _simple(self.text(type_node))
        thrown = node.parent is not None and node.parent.type == "throw_statement"
        if not (thrown or _EXCEPTION_NAME.search(name) or name in self.exceptions):
            return
        arguments = node.child_by_field_name("arguments")
        values = arguments.named_children if arguments is not None else []
        anchor = node.parent if thrown and node.parent is not None else node
        chained = any(self.is_cause(v) for v in values)
        if not values:
            builts: list[Built] = [([], "empty")]
        elif self.is_cause(values[0]) and len(values) == 1:
            builts = [([hole(self.text(values[0]))], "opaque")]
        else:
            builts = self.messages(values[0])
        for built in builts:
            self.site(
                anchor,
                built,
                error_class=name,
                message=values[0] if values else None,
                chained=chained,
            )
        # A project exception's constructor decides its message: link() may rewrite it.
        key = f"{FileContext.line(anchor)}:{FileContext.end_line(anchor)}"
        self.creations[key] = {
            "class": name,
            "arguments": [dump_parts(self.message(v)[0]) for v in values],
        }

    def is_cause(self, node: Node) -> bool:
        """Whether an argument is (very likely) a Throwable: the cause."""
        return node.type == "identifier" and self.text(node) in _CAUSE_NAMES

    def call(self, node: Node) -> None:
        """Checks (``requireNonNull``, ``checkArgument``…) and log calls."""
        name = self.text(node.child_by_field_name("name"))
        receiver = self.text(node.child_by_field_name("object"))
        arguments = node.child_by_field_name("arguments")
        values = arguments.named_children if arguments is not None else []
        if name in _CHECKS:
            if len(values) < 2 or receiver not in (
                "Objects",
                "Preconditions",
                "java.util.Objects",
                "",
            ):
                return
            if name == "requireNonNull":
                builts = self.messages(values[1])
            else:
                text, form = self.message(values[1])
                if form in ("literal", "constant") and len(values) > 2:
                    template = "".join(p.text for p in text)
                    builts = [
                        (_guava_parts(template, [self.text(v) for v in values[2:]]), "format")
                    ]
                else:
                    builts = [(text, form)]
            for built in builts:
                self.site(node, built, error_class=_CHECKS[name], message=values[1])
            return
        if name in ("println", "print", "printf"):
            if receiver == "System.err" and values:
                built = (
                    self.formatted_printf(values) if name == "printf" else self.message(values[0])
                )
                self.site(node, built, error_class="ERROR", message=values[0], kind=SiteKind.LOG)
            return
        self.log(node, name, receiver, values)

    def formatted_printf(self, values: list[Node]) -> Built:
        text, form = self.message(values[0])
        if form in ("literal", "constant"):
            return formatter_parts(
                "".join(p.text for p in text), [self.text(v) for v in values[1:]]
            ), "format"
        return text, form

    def log(self, node: Node, name: str, receiver: str, values: list[Node]) -> None:
        """A logger call: SLF4J/Log4j (``{}``), java.util.logging, Android ``Log``."""
        bare = receiver.rsplit(".", 1)[-1]
        if bare in _ANDROID_LOGS:
            if name not in ("e", "w", "wtf") or len(values) < 2:
                return
            level, severity = _LEVELS[name]
            self.log_site(node, values[1], [], level, severity, reader=None)
            return
        if name in ("e", "w", "wtf") or not re.search(r"(?i)log", bare):
            return
        if name == "log":
            if len(values) < 2:
                return
            level_name = self.text(values[0]).rsplit(".", 1)[-1]
            if level_name not in _JUL_LEVELS:
                return
            level, severity = _JUL_LEVELS[level_name]
            rest = values[2:]
            if len(rest) == 1 and self.is_cause(rest[0]):
                rest = []
            self.log_site(node, values[1], rest, level, severity, reader=message_format_parts)
            return
        if not values:
            return
        level, severity = _LEVELS[name]
        rest = values[1:]
        if rest and self.is_cause(rest[-1]):
            rest = rest[:-1]
        reader = None if name in ("severe", "warning") else _slf4j_parts
        self.log_site(node, values[0], rest, level, severity, reader=reader)

    def log_site(
        self,
        node: Node,
        message: Node,
        rest: list[Node],
        level: str,
        severity: Severity,
        *,
        reader: _Reader | None,
    ) -> None:
        for parts, form in self.messages(message):
            if (
                reader is not None
                and rest
                and form in ("literal", "constant", "variable", "concat")
            ) and all(not p.hole for p in parts):
                parts, form = (
                    reader("".join(p.text for p in parts), [self.text(v) for v in rest]),
                    "format",
                )
            self.site(
                node,
                (parts, form),
                error_class=level,
                message=message,
                kind=SiteKind.LOG,
                severity=severity,
            )

    def assertion(self, node: Node) -> None:
        """``assert cond : message`` (``AssertionError``; without a message, none)."""
        children = node.named_children
        if len(children) < 2:
            built: list[Built] = [([], "empty")]
            message = None
        else:
            message = children[1]
            built = self.messages(message)
        for item in built:
            self.site(
                node, item, error_class="AssertionError", message=message, kind=SiteKind.ASSERT
            )

    def declaration(self, node: Node) -> None:
        """A class extending an exception: its base and how each constructor builds the message."""
        name = self.text(node.child_by_field_name("name"))
        superclass = node.child_by_field_name("superclass")
        base = (
            _simple(self.text(superclass.named_children[0]))
            if superclass is not None and superclass.named_children
            else ""
        )
        if not base or not (_EXCEPTION_NAME.search(base) or _EXCEPTION_NAME.search(name)):
            return
        constructors: list[JsonValue] = []
        body = node.child_by_field_name("body")
        for member in body.named_children if body is not None else []:
            if member.type != "constructor_declaration":
                continue
            parameters = member.child_by_field_name("parameters")
            names = [
                self.text(p.child_by_field_name("name"))
                for p in (parameters.named_children if parameters is not None else [])
                if p.type in ("formal_parameter", "spread_parameter")
            ]
            call = next(
                (
                    c
                    for c in (member.child_by_field_name("body") or member).named_children
                    if c.type == "explicit_constructor_invocation"
                ),
                None,
            )
            target = "super"
            arguments: list[JsonValue] = []
            if call is not None:
                target = self.text(call.child_by_field_name("constructor"))
                values = call.child_by_field_name("arguments")
                arguments = [
                    dump_parts(self.message(v)[0])
                    for v in (values.named_children if values is not None else [])
                ]
            constructors.append(
                {"parameters": list(names), "target": target, "arguments": arguments}
            )
        self.exceptions[name] = {"base": base, "constructors": constructors}


def _guava_parts(text: str, arguments: Sequence[str]) -> list[TemplatePart]:
    """Guava's lenient format: each ``%s`` takes the next argument; extra ones go in ``[…]``."""
    pieces = text.split("%s")
    parts: list[TemplatePart] = [literal(pieces[0])]
    for index, piece in enumerate(pieces[1:]):
        parts.append(hole(arguments[index], "%s") if index < len(arguments) else literal("%s"))
        parts.append(literal(piece))
    if len(arguments) > len(pieces) - 1:
        extra = arguments[len(pieces) - 1 :]
        parts += [literal(" ["), hole(", ".join(extra)), literal("]")]
    return parts


class JavaExtractor(TreeSitterExtractor):
    """Finds the exceptions, checks and error logs of Java files (see the module docstring).

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "java"
    suffixes: tuple[str, ...] = (".java",)
    version = code_version("1", __name__)
    grammars: ClassVar[dict[str, str]] = {".java": "java"}

    def find_sites(self, root: Node, context: FileContext) -> None:
        """Find the sites of one file's tree with one query."""
        file = _File(context)
        matches = query_matches("java", _QUERY_SOURCE, root)
        # Declarations first: a constant or an exception class may be used above its definition.
        for _, captures in matches:
            if "class" in captures:
                file.declaration(captures["class"][0])
            elif "field" in captures:
                file.constant(captures["field"][0])
        for _, captures in matches:
            if "new" in captures:
                file.creation(captures["new"][0])
            elif "call" in captures:
                file.call(captures["call"][0])
            elif "assert" in captures:
                file.assertion(captures["assert"][0])
        if file.exceptions:
            context.exports["exceptions"] = dict(file.exceptions)
        if file.creations:
            context.exports["creations"] = dict(file.creations)

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Give each ``new X(…)`` of a project exception the message its constructors build.

        The constructor is chosen by the call's arity; its ``super(…)``/``this(…)`` arguments,
        with the parameters replaced by the call's arguments, go up the class's ancestors
        (in any file of the source) until a JDK class takes the first one as its message.
        """
        classes: dict[str, dict[str, JsonValue]] = {}
        for result in results:
            declared = result.exports.get("exceptions")
            if isinstance(declared, dict):
                for name, entry in declared.items():
                    if isinstance(entry, dict):
                        classes.setdefault(name, entry)
        sites: list[RaiseSite] = []
        for result in results:
            creations = result.exports.get("creations")
            seen: set[tuple[int, str, tuple[TemplatePart, ...]]] = set()
            for site in result.sites:
                creation = (
                    creations.get(f"{site.line}:{site.end_line}")
                    if isinstance(creations, dict)
                    else None
                )
                if isinstance(creation, dict) and creation.get("class") in classes:
                    arguments = creation.get("arguments")
                    resolved = _construct(
                        str(creation["class"]),
                        [list(load_parts(a)) for a in arguments]
                        if isinstance(arguments, list)
                        else [],
                        classes,
                        0,
                    )
                    if resolved is not None:
                        site = site.model_copy(
                            update={
                                "template": site.template.model_copy(
                                    update={"parts": tuple(resolved)}
                                ),
                                "form": "constructor",
                            }
                        )
                key = (site.line, site.error_class, site.template.parts)
                if key not in seen:
                    seen.add(key)
                    sites.append(site)
        return sites


def _construct(
    name: str,
    arguments: list[list[TemplatePart]],
    classes: dict[str, dict[str, JsonValue]],
    depth: int,
) -> list[TemplatePart] | None:
    """The message ``new name(arguments)`` has, or None when the source does not tell."""
    entry = classes.get(name)
    if entry is None or depth > _MAX_DEPTH:
        # A JDK class: the first argument is the message, unless it is the cause.
        if not arguments:
            return []
        first = arguments[0]
        if (
            len(arguments) == 1
            and len(first) == 1
            and first[0].hole
            and first[0].text in _CAUSE_NAMES
        ):
            return [hole(first[0].text)]
        return first
    constructors = entry.get("constructors")
    constructors = constructors if isinstance(constructors, list) else []
    base = str(entry.get("base") or "")
    if not constructors:
        return _construct(base, [], classes, depth + 1) if not arguments else None
    for constructor in constructors:
        if not isinstance(constructor, dict):
            continue
        parameters = constructor.get("parameters")
        if not isinstance(parameters, list) or len(parameters) != len(arguments):
            continue
        values = dict(zip([str(p) for p in parameters], arguments, strict=True))
        passed = constructor.get("arguments")
        forwarded = [
            _substitute(list(load_parts(a)), values)
            for a in (passed if isinstance(passed, list) else [])
        ]
        target = name if constructor.get("target") == "this" else base
        return _construct(target, forwarded, classes, depth + 1)
    return None


def _substitute(
    parts: list[TemplatePart], values: dict[str, list[TemplatePart]]
) -> list[TemplatePart]:
    """Replace the holes that are constructor parameters by the call's argument."""
    replaced: list[TemplatePart] = []
    for part in parts:
        if part.hole and part.text in values and part.style in ("", "%s", "{}"):
            replaced.extend(values[part.text])
        else:
            replaced.append(part)
    return replaced
