r"""Rust: the errors a crate panics with, returns, logs and declares (issue #7).

Sites, each with the class a user sees:

- panics (class ``panic``): ``panic!``, ``unreachable!``, ``todo!``, ``unimplemented!`` (with
  the standard library's own text when they have no message, and as its prefix when they
  have one), ``.expect("…")`` (``msg: {err:?}`` for a ``Result``, ``msg`` for an ``Option``
  when the receiver is a call known to return one), and the assertions ``assert!``,
  ``assert_eq!``, ``assert_ne!`` and their ``debug_`` forms (kind ``assert``; without a
  message, ``assertion failed: <cond>`` or ``assertion `left == right` failed`` as std prints
  them);
- anyhow/eyre errors (class ``anyhow``): ``bail!``, ``anyhow!``, ``eyre!``, ``format_err!``,
  ``ensure!`` (``Condition failed: `cond``` without a message) and ``.context("…")`` /
  ``.with_context(|| format!(…))``;
- string errors: ``Err(format!(…))``, ``Err("…".to_string())``, ``Err("…".into())``,
  ``Err(String::from("…"))`` (class ``String``) and ``Err("…")`` (class ``&str``);
  ``io::Error::new(ErrorKind::X, …)`` and ``io::Error::other(…)`` (class ``io::Error``, code
  ``X``);
- logs: ``error!``/``warn!`` of ``log`` and ``tracing`` (class ``ERROR``/``WARN``; ``target:``
  and structured fields skipped, tracing's fields kept as one trailing hole) and
  ``eprintln!``/``eprint!`` (class ``ERROR``);
- declared messages: thiserror's ``#[error("…")]`` on enum variants and structs (fields as holes,
  class ``Enum::Variant``) and ``impl Display for E`` of an error type (one site per ``match``
  arm, the arm's variant as class).

Format strings are read the way ``std::fmt`` reads them: ``{}``, ``{:?}``, ``{0}``, ``{name}``,
inline captures, fill/align/width/precision (``.*`` takes an argument), ``{{``/``}}``; each
placeholder becomes a hole whose ``style`` is its spec (``:?``, ``:>8``, empty for ``{}``).
String literals are unescaped as Rust does (``\n``, ``\u{e9}``, ``\x41``, line continuations,
raw strings). A message the code does not spell out (``panic!("{}", msg)`` where ``msg`` is a
``const`` or a ``let`` of a literal or ``format!`` in the same function is resolved) is one hole
(form ``opaque``).

Not read: code inside the token trees of macros other than those above (``cfg_if!``,
``select!`` bodies are scanned for nested error macros; ``quote!`` bodies are not), panics with
a non-literal payload in 2018-edition style, and messages assembled across functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from errdex.extract import code_version
from errdex.extract.treesitter import (
    FileContext,
    Scope,
    TreeSitterExtractor,
    dump_parts,
    hole,
    literal,
    load_parts,
    query_matches,
)
from errdex.models import (
    FileResult,
    MessageTemplate,
    RaiseSite,
    Severity,
    SiteKind,
    TemplatePart,
)

if TYPE_CHECKING:
    from pydantic import JsonValue
    from tree_sitter import Node

__all__ = ["RustExtractor", "format_parts", "unescape"]

_QUERY_SOURCE = """
(macro_invocation macro: [(identifier) (scoped_identifier)] @name) @macro
(call_expression function: (identifier) @function (#eq? @function "Err")) @err
(call_expression
  function: (field_expression field: (field_identifier) @method
    (#any-of? @method "expect" "context" "with_context" "wrap_err" "wrap_err_with"
      "ok_or" "ok_or_else" "map_err"))) @call
(call_expression function: (scoped_identifier) @path
  (#match? @path "Error::(new|other)$")) @io
(attribute_item (attribute (identifier) @attribute (#eq? @attribute "error"))) @thiserror
(impl_item) @impl
[(const_item) (static_item)] @constant
"""

_PANICS = {
    "panic": "explicit panic",
    "unreachable": "internal error: entered unreachable code",
    "todo": "not yet implemented",
    "unimplemented": "not implemented",
}
"""Each panicking macro and what it prints without a message (with one: ``<text>: <message>``;
``panic!`` prints the message alone)."""

_ASSERTS = frozenset({"assert", "debug_assert"})
_COMPARISONS = {
    "assert_eq": "==",
    "debug_assert_eq": "==",
    "assert_ne": "!=",
    "debug_assert_ne": "!=",
}
_ANYHOW = frozenset({"bail", "anyhow", "eyre", "format_err", "ensure"})
_LOGS = {"error": ("ERROR", Severity.ERROR), "warn": ("WARN", Severity.WARNING)}
_LOG_CRATES = frozenset({"log", "tracing", "slog"})
_PRINTS = frozenset({"eprintln", "eprint"})
_UNSCANNED = frozenset({"quote", "quote_spanned", "parse_quote", "parse_quote_spanned"})
"""Macros whose bodies are generated code, not code of the crate."""

_STRING_CONVERSIONS = frozenset({"to_string", "into", "to_owned", "from", "new"})
_OPTION_METHODS = frozenset(
    {
        "parent",
        "file_name",
        "file_stem",
        "extension",
        "to_str",
        "split_once",
        "rsplit_once",
        "ok",
        "err",
        "take",
        "as_deref",
        "upgrade",
        "and_then",
        "remove",
        "filter",
    }
)
_OPTION_PREFIXES = (
    "get",
    "find",
    "first",
    "last",
    "next",
    "nth",
    "peek",
    "pop",
    "position",
    "rposition",
    "checked_",
    "strip_",
    "max",
    "min",
)
"""Methods returning an ``Option`` (and name prefixes of such methods): ``.expect`` on them
prints the message alone."""

_TEST_ATTRIBUTE = re.compile(r"^#\[(?:cfg\(test\)|(?:\w+::)*test(?:\(.*\))?)\]$", re.DOTALL)
_VARIANT = re.compile(r"[A-Z][A-Za-z0-9_]*::[A-Z][A-Za-z0-9_]*$")
_ERROR_TYPE = re.compile(r"(?:Error|Err|Failure|Fault)(?:Kind)?$")
_COMPARISON_OPS = frozenset({"==", "!=", "<", "<=", ">", ">="})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPE = re.compile(
    r"\\(?:u\{([0-9A-Fa-f_]{1,8})\}|x([0-9A-Fa-f]{2})|\n[ \t\r\n]*|(.))", re.DOTALL
)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", "'": "'", '"': '"'}
_STRING_TYPES = frozenset({"string_literal", "raw_string_literal"})


def unescape(source: str) -> str | None:
    r"""Return the value of a Rust string literal's source text, or None when it is not one.

    Args:
        source: The literal as written (``"a\n"``, ``r#"raw"#``, ``b"bytes"``, ``c"…"``).
    """
    text = source
    if text[:1] in "bc" and text[1:2] in ('"', "r"):
        text = text[1:]
    if text.startswith("r"):
        hashes = len(text) - len(text[1:].lstrip("#")) - 1
        body = text[1 + hashes :]
        closing = '"' + "#" * hashes
        if not body.startswith('"') or not body.endswith(closing) or len(body) < 1 + len(closing):
            return None
        return body[1 : len(body) - len(closing)]
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return None
    return _ESCAPE.sub(_unescape_one, text[1:-1])


def _unescape_one(match: re.Match[str]) -> str:
    unicode, byte, simple = match.groups()
    if unicode is not None:
        code = int(unicode.replace("_", ""), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    if byte is not None:
        return chr(int(byte, 16))
    if simple is not None:
        return _SIMPLE_ESCAPES.get(simple, "\\" + simple)
    return ""  # a line continuation: the newline and the leading blanks go


def format_parts(
    text: str,
    positional: Sequence[str] = (),
    named: dict[str, str] | None = None,
) -> list[TemplatePart]:
    """Read a ``std::fmt`` format string into literal parts and holes.

    Args:
        text: The format string's value (already unescaped).
        positional: The source text of each positional argument.
        named: The source text of each named argument (``name = expr``).

    Returns:
        The parts: ``{{``/``}}`` as one brace, each placeholder as a hole whose text is its
        argument's source (a captured identifier, or the field name of a thiserror message,
        when no argument is given) and whose style is its spec (``:?``).
    """
    named = named or {}
    parts: list[TemplatePart] = []
    buffer: list[str] = []
    implicit = 0
    position = 0
    length = len(text)
    while position < length:
        char = text[position]
        if char == "}" and text.startswith("}}", position):
            buffer.append("}")
            position += 2
            continue
        if char != "{":
            buffer.append(char)
            position += 1
            continue
        if text.startswith("{{", position):
            buffer.append("{")
            position += 2
            continue
        close = text.find("}", position + 1)
        if close < 0:
            buffer.append(text[position:])
            break
        inner = text[position + 1 : close].strip()
        position = close + 1
        argument, _, spec = inner.partition(":")
        argument = argument.strip()
        if ".*" in spec:
            implicit += 1  # the precision comes first, from the next argument
        if not argument:
            argument = str(implicit)
            implicit += 1
        if argument.isdigit():
            index = int(argument)
            expression = positional[index] if index < len(positional) else argument
        else:
            expression = named.get(argument, argument)
        if buffer:
            parts.append(literal("".join(buffer)))
            buffer = []
        parts.append(hole(expression, ":" + spec if spec else ""))
    if buffer:
        parts.append(literal("".join(buffer)))
    return parts


def _has_holes(parts: Sequence[TemplatePart]) -> bool:
    return any(part.hole for part in parts)


def _last_segment(path: str) -> str:
    return path.rsplit("::", 1)[-1].strip()


def _type_name(node: Node | None, context: FileContext) -> str:
    """The bare name of a type node (``fmt::Display`` → ``Display``, ``Error<T>`` → ``Error``)."""
    if node is None:
        return ""
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    return _last_segment(context.text(node))


class _Argument:
    """One comma-separated argument of a macro's token tree."""

    def __init__(self, tokens: list[Node], context: FileContext) -> None:
        self.tokens = tokens
        self.context = context
        self.name: str | None = None
        self.value = tokens
        if len(tokens) >= 3 and tokens[0].type == "identifier" and tokens[1].type == "=":
            self.name = context.text(tokens[0])
            self.value = tokens[2:]

    @property
    def text(self) -> str:
        """The argument's value as source text."""
        if not self.value:
            return ""
        data = self.context.data
        return data[self.value[0].start_byte : self.value[-1].end_byte].decode("utf-8", "replace")

    @property
    def string(self) -> str | None:
        """The argument's value when it is one string literal."""
        if len(self.tokens) == 1 and self.tokens[0].type in _STRING_TYPES:
            return unescape(self.context.text(self.tokens[0]))
        return None


def _arguments(tree: Node, context: FileContext) -> list[_Argument]:
    """Split a macro's token tree at its top-level commas (and semicolons)."""
    arguments: list[_Argument] = []
    current: list[Node] = []
    for child in tree.children[1:-1]:
        if child.type in (",", ";"):
            arguments.append(_Argument(current, context))
            current = []
        else:
            current.append(child)
    if current:
        arguments.append(_Argument(current, context))
    return [a for a in arguments if a.tokens]


def _nested_macros(tree: Node) -> Iterator[tuple[str, Node]]:
    """Yield ``name!(…)`` invocations written inside a token tree (``cfg_if!`` bodies)."""
    stack = [tree]
    while stack:
        current = stack.pop()
        children = current.children
        for index, child in enumerate(children):
            if child.type == "token_tree":
                stack.append(child)
            elif (
                child.type == "identifier"
                and index + 2 < len(children)
                and children[index + 1].type == "!"
                and children[index + 2].type == "token_tree"
            ):
                name = child.text.decode("utf-8", "replace") if child.text else ""
                yield name, children[index + 2]


def _attributes(node: Node) -> Iterator[Node]:
    """The attributes written before an item (``#[cfg(test)]``, ``#[test]``)."""
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in (
        "attribute_item",
        "line_comment",
        "block_comment",
    ):
        if sibling.type == "attribute_item":
            yield sibling
        sibling = sibling.prev_named_sibling


class _File:
    """One Rust file being mined: resolves names and emits sites."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        self.constants: dict[str, tuple[list[TemplatePart], str]] = {}
        self.scopes: dict[int, Scope | None] = {}
        self.locals: dict[int, dict[str, list[tuple[int, Node]]]] = {}
        self.error_types: set[str] = set()
        self.tests: dict[int, bool] = {}
        self.variants: dict[str, JsonValue] = {}
        self.constructions: dict[str, list[str]] = {}

    def declare(self, variant: str, parts: Sequence[TemplatePart]) -> None:
        """Remember the message a variant (or error type) is displayed with."""
        if variant not in self.variants:
            self.variants[variant] = dump_parts(parts)

    # -- names and scopes ------------------------------------------------------------------

    def scope(self, node: Node) -> Scope | None:
        """The function around a node (``Type::method`` inside an ``impl``)."""
        function = node.parent
        while function is not None and function.type != "function_item":
            function = function.parent
        if function is None:
            return None
        key = function.id
        if key not in self.scopes:
            name = self.context.text(function.child_by_field_name("name") or function)
            owner = function.parent.parent if function.parent is not None else None
            if owner is not None and owner.type in ("impl_item", "trait_item"):
                field = "type" if owner.type == "impl_item" else "name"
                name = f"{_type_name(owner.child_by_field_name(field), self.context)}::{name}"
            self.scopes[key] = Scope(
                name, FileContext.line(function), FileContext.end_line(function)
            )
        return self.scopes[key]

    def in_test(self, node: Node) -> bool:
        """Whether a node is in a ``#[cfg(test)]`` module or a ``#[test]`` function."""
        current = node.parent
        while current is not None:
            if current.type in ("mod_item", "function_item"):
                key = current.id
                if key not in self.tests:
                    self.tests[key] = any(
                        _TEST_ATTRIBUTE.search(self.context.text(attribute)) is not None
                        for attribute in _attributes(current)
                    )
                if self.tests[key]:
                    return True
            current = current.parent
        return False

    def local(self, name: str, node: Node) -> Node | None:
        """The value of the last ``let name = …`` before a node in its function."""
        function = node.parent
        while function is not None and function.type not in ("function_item", "closure_expression"):
            function = function.parent
        if function is None:
            return None
        table = self.locals.get(function.id)
        if table is None:
            table = {}
            body = function.child_by_field_name("body")
            stack = [body] if body is not None else []
            while stack:
                current = stack.pop()
                if current.type == "let_declaration":
                    pattern = current.child_by_field_name("pattern")
                    value = current.child_by_field_name("value")
                    if pattern is not None and value is not None and pattern.type == "identifier":
                        entry = (current.end_byte, value)
                        table.setdefault(self.context.text(pattern), []).append(entry)
                if current.type not in ("function_item", "closure_expression"):
                    stack.extend(current.named_children)
            self.locals[function.id] = table
        found = [value for end, value in table.get(name, []) if end <= node.start_byte]
        return max(found, key=lambda value: value.start_byte) if found else None

    def constant(self, node: Node) -> None:
        """Remember a ``const``/``static`` string (or ``format!``-free literal)."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None or value.type not in _STRING_TYPES:
            return
        text = unescape(self.context.text(value))
        if text is not None:
            self.constants[self.context.text(name)] = ([literal(text)], "constant")

    # -- messages --------------------------------------------------------------------------

    def message(self, node: Node, *, depth: int = 0) -> tuple[list[TemplatePart], str]:
        """The template of a message expression and its form."""
        context = self.context
        kind = node.type
        if kind in _STRING_TYPES:
            text = unescape(context.text(node))
            if text is not None:
                return [literal(text)], "literal"
        elif kind == "macro_invocation":
            name = _last_segment(context.text(node.child_by_field_name("macro") or node))
            tree = next((c for c in node.named_children if c.type == "token_tree"), None)
            if name in ("format", "format_args") and tree is not None:
                found = self.format(_arguments(tree, context), depth=depth + 1)
                if found is not None:
                    return found
        elif kind in ("reference_expression", "parenthesized_expression") and depth < 8:
            inner = node.child_by_field_name("value") or (
                node.named_children[0] if node.named_children else None
            )
            if inner is not None:
                return self.message(inner, depth=depth + 1)
        elif kind == "call_expression" and depth < 8:
            converted = self.conversion(node)
            if converted is not None:
                return self.message(converted, depth=depth + 1)
        elif kind == "closure_expression" and depth < 8:
            body = node.child_by_field_name("body")
            if body is not None and body.type == "block" and body.named_child_count == 1:
                body = body.named_children[0]
            if body is not None:
                return self.message(body, depth=depth + 1)
        elif kind == "identifier" and depth < 8:
            resolved = self.resolve(context.text(node), node, depth)
            if resolved is not None:
                return resolved
        return [hole(context.text(node))], "opaque"

    def resolve(self, name: str, node: Node, depth: int) -> tuple[list[TemplatePart], str] | None:
        """The template of a name: a ``let`` earlier in the function, or a constant."""
        value = self.local(name, node)
        if value is not None:
            parts, form = self.message(value, depth=depth + 1)
            if form != "opaque":
                return parts, "variable"
            return None
        return self.constants.get(name)

    def conversion(self, node: Node) -> Node | None:
        """The string inside ``"…".to_string()``, ``"…".into()`` or ``String::from("…")``."""
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None:
            return None
        if function.type == "field_expression":
            field = function.child_by_field_name("field")
            value = function.child_by_field_name("value")
            if (
                field is not None
                and value is not None
                and self.context.text(field) in _STRING_CONVERSIONS
                and arguments.named_child_count == 0
            ):
                return value
        elif function.type == "scoped_identifier" and arguments.named_child_count == 1:
            path = self.context.text(function)
            if path in ("String::from", "String::new", "Box::from", "Cow::from", "Cow::Borrowed"):
                return arguments.named_children[0]
        return None

    def format(
        self, arguments: list[_Argument], *, depth: int = 0
    ) -> tuple[list[TemplatePart], str] | None:
        """The template of format-macro arguments (``"fmt", args…``), or None without a string.

        A ``{}`` of a name bound to a string (a ``let`` earlier in the function, a ``const``)
        is replaced by that string's template (``panic!("{}", MSG)``).
        """
        if not arguments:
            return None
        text = arguments[0].string
        if text is None:
            return None
        positional = [a.text for a in arguments[1:] if a.name is None]
        named = {a.name: a.text for a in arguments[1:] if a.name is not None}
        parts = format_parts(text, positional, named)
        if not _has_holes(parts):
            return parts, "literal"
        anchor = arguments[0].tokens[0]
        resolved: list[TemplatePart] = []
        form = "format"
        for part in parts:
            found = None
            if part.hole and not part.style and _NAME.match(part.text) and depth < 8:
                found = self.resolve(part.text, anchor, depth)
            if found is None:
                resolved.append(part)
            else:
                resolved.extend(found[0])
                form = found[1]
        if form != "format":
            return resolved, form
        return resolved, "format" if any(not p.hole for p in resolved) else "opaque"

    def macro_message(
        self, arguments: list[_Argument]
    ) -> tuple[list[TemplatePart], str, Node | None]:
        """The message of a macro whose arguments are ``"fmt", args…`` or one expression."""
        if not arguments:
            return [], "literal", None
        first = arguments[0]
        found = self.format(arguments)
        node = first.tokens[0]
        if found is not None:
            return found[0], found[1], node
        if len(first.tokens) == 1 and len(arguments) == 1:
            parts, form = self.message(first.tokens[0])
            return parts, form, node
        return [hole(first.text)], "opaque", node

    # -- sites -----------------------------------------------------------------------------

    def site(self, node: Node, parts: Sequence[TemplatePart], **options: Any) -> None:
        """Record a site in the function around ``node`` (unless it is test code).

        Args:
            node: The panicking macro, call or declaration.
            parts: The message template.
            **options: The other arguments of :meth:`FileContext.site` (``error_class``, …).
        """
        if not self.in_test(node):
            self.context.site(node, parts, scope=self.scope(node), **options)

    def macro(self, node: Node, path: str, tree: Node) -> None:
        """A macro invocation: a panic, an assertion, an anyhow error or a log line."""
        name = _last_segment(path)
        crate = path.split("::", 1)[0] if "::" in path else ""
        if name in _PANICS:
            self.panic(node, name, _arguments(tree, self.context))
        elif name in _ASSERTS:
            self.assertion(node, _arguments(tree, self.context))
        elif name in _COMPARISONS:
            self.comparison(node, _COMPARISONS[name], _arguments(tree, self.context))
        elif name in _ANYHOW:
            self.anyhow(node, name, _arguments(tree, self.context))
        elif name in _LOGS and (not crate or crate in _LOG_CRATES):
            self.log(node, name, _arguments(tree, self.context))
        elif name in _PRINTS:
            parts, form, message = self.macro_message(_arguments(tree, self.context))
            if parts:
                self.site(
                    node, parts, error_class="ERROR", form=form, message=message, kind=SiteKind.LOG
                )
        elif name not in _UNSCANNED and tree.children and tree.children[0].type == "{":
            # Items written inside a braced macro (`cfg_if! { … }`, `select! { … }`) are token
            # trees to tree-sitter: look for the error macros among their tokens.
            for nested, nested_tree in _nested_macros(tree):
                if nested in _PANICS or nested in _ANYHOW or nested in _ASSERTS:
                    self.macro(nested_tree, nested, nested_tree)

    def panic(self, node: Node, name: str, arguments: list[_Argument]) -> None:
        default = _PANICS[name]
        parts, form, message = self.macro_message(arguments)
        if not parts:
            parts, form = [literal(default)], "literal"
        elif name != "panic":
            parts = [literal(default + ": "), *parts]
        self.site(node, parts, error_class="panic", form=form, message=message)

    def assertion(self, node: Node, arguments: list[_Argument]) -> None:
        if not arguments:
            return
        if len(arguments) == 1:
            condition = " ".join(arguments[0].text.split())
            parts: list[TemplatePart] = [literal(f"assertion failed: {condition}")]
            self.site(node, parts, error_class="panic", form="literal", kind=SiteKind.ASSERT)
            return
        parts, form, message = self.macro_message(arguments[1:])
        self.site(
            node, parts, error_class="panic", form=form, message=message, kind=SiteKind.ASSERT
        )

    def comparison(self, node: Node, operator: str, arguments: list[_Argument]) -> None:
        if len(arguments) < 2:
            return
        head = f"assertion `left {operator} right` failed"
        parts: list[TemplatePart] = [literal(head)]
        form, message = "format", None
        if len(arguments) > 2:
            custom, form, message = self.macro_message(arguments[2:])
            parts = [literal(head + ": "), *custom]
        parts += [
            literal("\n  left: "),
            hole(arguments[0].text, ":?"),
            literal("\n right: "),
            hole(arguments[1].text, ":?"),
        ]
        self.site(
            node, parts, error_class="panic", form=form, message=message, kind=SiteKind.ASSERT
        )

    def anyhow(self, node: Node, name: str, arguments: list[_Argument]) -> None:
        if name != "ensure":
            parts, form, message = self.macro_message(arguments)
            if parts:
                self.site(node, parts, error_class="anyhow", form=form, message=message)
            return
        if not arguments:
            return
        if len(arguments) > 1:
            parts, form, message = self.macro_message(arguments[1:])
            self.site(node, parts, error_class="anyhow", form=form, message=message)
            return
        condition = arguments[0]
        text = " ".join(condition.text.split())
        parts = [literal(f"Condition failed: `{text}`")]
        operators = [
            index
            for index, token in enumerate(condition.tokens)
            if token.type in _COMPARISON_OPS and 0 < index < len(condition.tokens) - 1
        ]
        if len(operators) == 1:
            # anyhow's "fancy" ensure adds both sides' Debug: "Condition failed: `a == b` (1 vs 2)".
            split = operators[0]
            data = self.context.data
            tokens = condition.tokens
            left = data[tokens[0].start_byte : tokens[split - 1].end_byte].decode(
                "utf-8", "replace"
            )
            right = data[tokens[split + 1].start_byte : tokens[-1].end_byte].decode(
                "utf-8", "replace"
            )
            parts += [
                literal(" ("),
                hole(left, ":?"),
                literal(" vs "),
                hole(right, ":?"),
                literal(")"),
            ]
        self.site(node, parts, error_class="anyhow", form="literal")

    def log(self, node: Node, name: str, arguments: list[_Argument]) -> None:
        level, severity = _LOGS[name]
        fields: list[str] = []
        for index, argument in enumerate(arguments):
            if argument.string is not None:
                parts, form, message = self.macro_message(arguments[index:])
                break
            tokens = argument.tokens
            if len(tokens) >= 2 and tokens[1].type == ":":
                continue  # `target: "…"`, `parent: span`: not printed with the message
            if argument.name is None and tokens[0].type not in ("%", "?", "identifier"):
                return  # the message is not a literal
            fields.append(argument.name or argument.text.lstrip("%?"))
        else:
            return
        if fields:
            # tracing's fmt output prints the fields after the message: "msg key=value".
            parts = [*parts, literal(" "), hole(", ".join(fields))]
        self.site(
            node,
            parts,
            error_class=level,
            form=form,
            message=message,
            kind=SiteKind.LOG,
            severity=severity,
        )

    def err(self, node: Node) -> None:
        """``Err(<string>)``: a string error."""
        arguments = node.child_by_field_name("arguments")
        if arguments is None or arguments.named_child_count != 1:
            return
        value = arguments.named_children[0]
        if value.type in _STRING_TYPES:
            parts, form = self.message(value)
            self.site(node, parts, error_class="&str", form=form, message=value)
            return
        is_format = value.type == "macro_invocation" and _last_segment(
            self.context.text(value.child_by_field_name("macro") or value)
        ) in ("format",)
        if is_format or (value.type == "call_expression" and self.conversion(value) is not None):
            parts, form = self.message(value)
            if form != "opaque":
                self.site(node, parts, error_class="String", form=form, message=value)
                return
        self.construction(node, value)

    def construction(self, node: Node, value: Node) -> None:
        """An error value built from an enum variant (``Err(Error::new(Kind::Overflow(p)))``).

        The variant's message is declared elsewhere (a thiserror attribute or a ``Display``
        arm, maybe in another file): the site is kept with form ``variant`` and the variants it
        names, and :meth:`RustExtractor.link` gives it the first one's template (or drops it).
        """
        keys: list[str] = []
        stack = [value]
        while stack:
            current = stack.pop()
            if current.type in ("scoped_identifier", "scoped_type_identifier"):
                found = _VARIANT.search(self.context.text(current))
                if found is not None and found[0] not in keys:
                    keys.append(found[0])
                continue
            if current.type != "closure_parameters":
                stack.extend(reversed(current.named_children))
        if not keys:
            return
        self.site(
            node,
            [hole(self.context.text(value))],
            error_class=keys[0],
            form="variant",
            message=value,
        )
        self.constructions[f"{FileContext.line(node)}:{FileContext.end_line(node)}"] = list(keys)

    def method(self, node: Node, method: str) -> None:
        """``.expect("…")``, ``.context("…")``, ``.with_context(|| …)``."""
        arguments = node.child_by_field_name("arguments")
        function = node.child_by_field_name("function")
        if arguments is None or function is None or arguments.named_child_count != 1:
            return
        value = arguments.named_children[0]
        if method in ("ok_or", "ok_or_else", "map_err"):
            self.construction(node, value)
            return
        parts, form = self.message(value)
        if method == "expect":
            if form == "opaque" and value.type != "identifier":
                return
            receiver = function.child_by_field_name("value")
            if not self.returns_option(receiver):
                parts = [*parts, literal(": "), hole("err", ":?")]
            self.site(node, parts, error_class="panic", form=form, message=value)
            return
        if form == "opaque":
            return
        self.site(node, parts, error_class="anyhow", form=form, message=value, chained=True)

    def returns_option(self, receiver: Node | None) -> bool:
        """Whether an ``.expect`` receiver is a call of a method that returns an ``Option``."""
        if receiver is None or receiver.type != "call_expression":
            return False
        function = receiver.child_by_field_name("function")
        if function is not None and function.type == "generic_function":
            function = function.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            return False
        field = function.child_by_field_name("field")
        if field is None:
            return False
        name = self.context.text(field)
        return name in _OPTION_METHODS or name.startswith(_OPTION_PREFIXES)

    def io_error(self, node: Node, path: str) -> None:
        """``io::Error::new(ErrorKind::X, msg)`` and ``io::Error::other(msg)``."""
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            return
        values = arguments.named_children
        code = None
        if path.endswith("::new"):
            if len(values) != 2 or "ErrorKind::" not in self.context.text(values[0]):
                return
            code = _last_segment(self.context.text(values[0]))
            value = values[1]
        elif len(values) == 1:
            value = values[0]
        else:
            return
        parts, form = self.message(value)
        if form != "opaque":
            self.site(
                node, parts, error_class="io::Error", form=form, message=value, error_code=code
            )

    def thiserror(self, node: Node) -> None:
        """``#[error("…")]`` before an enum variant or a struct."""
        attribute = node.named_children[0] if node.named_children else None
        tree = attribute.child_by_field_name("arguments") if attribute is not None else None
        if tree is None:
            return
        target = node.next_named_sibling
        while target is not None and target.type in (
            "attribute_item",
            "line_comment",
            "block_comment",
        ):
            target = target.next_named_sibling
        if target is None:
            return
        name = self.context.text(target.child_by_field_name("name") or target)
        if target.type == "enum_variant":
            enum = target.parent.parent if target.parent is not None else None
            if enum is None or enum.type != "enum_item":
                return
            name = f"{self.context.text(enum.child_by_field_name('name') or enum)}::{name}"
        elif target.type != "struct_item":
            return
        found = self.format(_arguments(tree, self.context))
        if found is None:
            return  # #[error(transparent)]: the wrapped error's message
        parts, form = found
        self.site(node, parts, error_class=name, form=form, message=tree)
        self.declare(name, parts)

    # -- Display implementations -------------------------------------------------------------

    def display(self, node: Node) -> None:
        """``impl Display for E`` of an error type: one site per ``match`` arm that writes."""
        context = self.context
        if _type_name(node.child_by_field_name("trait"), context) != "Display":
            return
        owner = _type_name(node.child_by_field_name("type"), context)
        if not (_ERROR_TYPE.search(owner) or owner in self.error_types):
            return
        body = node.child_by_field_name("body")
        function = next(
            (
                child
                for child in (body.named_children if body is not None else [])
                if child.type == "function_item"
                and context.text(child.child_by_field_name("name") or child) == "fmt"
            ),
            None,
        )
        if function is None:
            return
        parameters = function.child_by_field_name("parameters")
        names = [
            context.text(p.child_by_field_name("pattern") or p)
            for p in (parameters.named_children if parameters is not None else [])
            if p.type == "parameter"
        ]
        formatter = names[0] if names else "f"
        groups: dict[int, tuple[Node, str, list[Node]]] = {}
        order: list[int] = []
        block = function.child_by_field_name("body")
        stack = [block] if block is not None else []
        while stack:
            current = stack.pop()
            if current.type in ("closure_expression", "function_item"):
                continue
            if self.writer(current, formatter) is not None:
                arm = current.parent
                while arm is not None and arm is not function and arm.type != "match_arm":
                    arm = arm.parent
                if arm is None or arm.type != "match_arm":
                    key, anchor, variant = 0, current, owner
                else:
                    key, anchor, variant = arm.id, arm, self.variant(arm, owner)
                if key not in groups:
                    groups[key] = (anchor, variant, [])
                    order.append(key)
                groups[key][2].append(current)
                continue
            stack.extend(reversed(current.named_children))
        for key in order:
            anchor, variant, writers = groups[key]
            self.display_site(anchor, variant, writers, formatter)

    def display_site(self, anchor: Node, variant: str, writers: list[Node], formatter: str) -> None:
        """One arm's message: its writers' templates, joined when they run in sequence."""
        templates = [self.writer(w, formatter) for w in writers]
        sequential = len({self.statement_parent(w) for w in writers}) == 1
        chunks = (
            [[t for t in templates if t is not None]]
            if sequential
            else [[t] for t in templates if t is not None]
        )
        for chunk in chunks:
            parts = [p for t in chunk for p in t[0]]
            if not parts or all(p.hole for p in parts):
                continue
            form = "format" if _has_holes(parts) else "literal"
            self.site(anchor, parts, error_class=variant, form=form, message=writers[0])
            self.declare(variant, parts)

    @staticmethod
    def statement_parent(node: Node) -> int:
        parent = node.parent
        if parent is not None and parent.type in ("expression_statement", "try_expression"):
            parent = parent.parent
        if parent is not None and parent.type == "expression_statement":
            parent = parent.parent
        return parent.id if parent is not None else 0

    def writer(self, node: Node, formatter: str) -> tuple[list[TemplatePart], str] | None:
        """The template a ``write!(f, …)``/``f.write_str(…)``/``f.pad(…)`` call writes."""
        context = self.context
        if node.type == "macro_invocation":
            name = _last_segment(context.text(node.child_by_field_name("macro") or node))
            if name not in ("write", "writeln"):
                return None
            tree = next((c for c in node.named_children if c.type == "token_tree"), None)
            arguments = _arguments(tree, context) if tree is not None else []
            if not arguments or arguments[0].text != formatter:
                return None
            found = self.format(arguments[1:])
            if found is None:
                return None
            parts = found[0] + ([literal("\n")] if name == "writeln" else [])
            return parts, found[1]
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            values = node.child_by_field_name("arguments")
            if function is None or function.type != "field_expression" or values is None:
                return None
            receiver = function.child_by_field_name("value")
            field = function.child_by_field_name("field")
            if (
                receiver is None
                or field is None
                or context.text(receiver) != formatter
                or context.text(field) not in ("write_str", "pad")
                or values.named_child_count != 1
            ):
                return None
            return self.message(values.named_children[0])
        return None

    def variant(self, arm: Node, owner: str) -> str:
        """The variant an arm's pattern names (``Self::Io(e)`` → ``Owner::Io``)."""
        pattern = arm.child_by_field_name("pattern")
        stack = [pattern] if pattern is not None else []
        while stack:
            current = stack.pop(0)
            if current.type in ("scoped_identifier", "scoped_type_identifier", "identifier"):
                path = self.context.text(current)
                if path.startswith("Self::"):
                    return owner + path[4:]
                if current.type != "identifier" or path[:1].isupper():
                    return path
                return owner
            stack.extend(current.named_children)
        return owner


class RustExtractor(TreeSitterExtractor):
    """Finds the panics, errors, logs and error messages of Rust files (see the module docstring).

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "rust"
    suffixes: tuple[str, ...] = (".rs",)
    version = code_version("1", __name__)
    grammars: ClassVar[dict[str, str]] = {".rs": "rust"}

    def find_sites(self, root: Node, context: FileContext) -> None:
        """Find the sites of one file's tree with one query."""
        file = _File(context)
        matches = query_matches("rust", _QUERY_SOURCE, root)
        # Constants and error types first: a use may come before the definition.
        impls: list[Node] = []
        for _, captures in matches:
            if "constant" in captures:
                file.constant(captures["constant"][0])
            elif "impl" in captures:
                impl = captures["impl"][0]
                impls.append(impl)
                trait = _type_name(impl.child_by_field_name("trait"), context)
                if trait == "Error":
                    file.error_types.add(_type_name(impl.child_by_field_name("type"), context))
        for _, captures in matches:
            if "macro" in captures:
                node = captures["macro"][0]
                tree = next((c for c in node.named_children if c.type == "token_tree"), None)
                if tree is not None:
                    file.macro(node, context.text(captures["name"][0]), tree)
            elif "err" in captures:
                file.err(captures["err"][0])
            elif "call" in captures:
                file.method(captures["call"][0], context.text(captures["method"][0]))
            elif "io" in captures:
                file.io_error(captures["io"][0], context.text(captures["path"][0]))
            elif "thiserror" in captures:
                file.thiserror(captures["thiserror"][0])
        for impl in impls:
            file.display(impl)
        if file.variants:
            context.exports["variants"] = dict(file.variants)
        if file.constructions:
            context.exports["constructions"] = dict(file.constructions)

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Give each site that builds an enum variant the message the variant is displayed with.

        Variants are looked up by their last two path segments (``ErrorKind::Overflow``) among
        every file's thiserror attributes and ``Display`` arms; a site whose variants are all
        unknown is dropped (its message is not in the source).
        """
        variants: dict[str, tuple[TemplatePart, ...]] = {}
        for result in results:
            declared = result.exports.get("variants")
            if isinstance(declared, dict):
                for name, parts in declared.items():
                    if name not in variants and isinstance(parts, list):
                        variants[name] = load_parts(parts)
        sites: list[RaiseSite] = []
        for result in results:
            constructions = result.exports.get("constructions")
            for site in result.sites:
                if site.form != "variant":
                    sites.append(site)
                    continue
                keys = (
                    constructions.get(f"{site.line}:{site.end_line}")
                    if isinstance(constructions, dict)
                    else None
                )
                known = (
                    [k for k in keys if isinstance(k, str) and k in variants]
                    if isinstance(keys, list)
                    else []
                )
                if known:
                    template = MessageTemplate(parts=variants[known[0]])
                    sites.append(
                        site.model_copy(update={"template": template, "error_class": known[0]})
                    )
        return sites
