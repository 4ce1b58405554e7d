"""Message templates from Python expressions, and the patterns that match their messages.

:func:`build_template` turns the expression that makes a message (a constant, an f-string,
``str.format``, ``%`` formatting, ``+`` and implicit concatenation, ``str.join`` of literals,
translation and text wrappers) into a :class:`~errdex.models.MessageTemplate`: literal text
kept, each run-time value a hole named after its source text. Names are resolved through a
caller-supplied :data:`NameResolver` (local variables, constants), which may return several
alternatives (one per branch that assigns the message).

:func:`seed_pattern` writes the dataset's ``messagePattern`` (escaped literals, ``(.+?)`` per
hole).
"""

from __future__ import annotations

import ast
import inspect
import re
import string
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from errdex.models import Location, MessageTemplate, TemplatePart

MAX_ALTERNATIVES = 8
"""At most this many alternative templates are kept for one message expression."""

# Hole markers used while applying text functions (strip, dedent) to a template: characters
# from a Unicode private-use area that real messages do not contain.
_MARK_BASE = 0xF0000


@dataclass(frozen=True)
class Built:
    """A template built from an expression, and how it was built.

    Attributes:
        parts: The template parts (adjacent literals not yet merged).
        form: The message form (``constant``, ``f-string``, ``format``, ``percent``,
            ``concat``, ``join``, ``variable``, ``constant-ref``, ``opaque``).
        i18n: The text is wrapped in a translation call; users may see a translation.
        defined_at: Where a resolved constant or variable is defined.
    """

    parts: tuple[TemplatePart, ...]
    form: str
    i18n: bool = False
    defined_at: Location | None = None

    def template(self) -> MessageTemplate:
        """Return the parts as a normalised template (adjacent literals merged, empty dropped)."""
        return MessageTemplate(parts=merge_parts(self.parts))


NameResolver = Callable[[ast.expr], Sequence[Built] | None]
"""Resolves a name or attribute to the templates it may hold, or None when unknown."""


def merge_parts(parts: Sequence[TemplatePart]) -> tuple[TemplatePart, ...]:
    """Merge adjacent literal parts and drop empty literals."""
    merged: list[TemplatePart] = []
    for part in parts:
        if not part.hole and not part.text:
            continue
        if merged and not part.hole and not merged[-1].hole:
            merged[-1] = TemplatePart(text=merged[-1].text + part.text)
        else:
            merged.append(part)
    return tuple(merged)


def _literal(text: str) -> TemplatePart:
    return TemplatePart(text=text)


def _hole(node: ast.expr | str, style: str = "") -> TemplatePart:
    text = node if isinstance(node, str) else source_text(node)
    return TemplatePart(text=text, hole=True, style=style)


def source_text(node: ast.AST) -> str:
    """Return an expression's source text, normalised (``ast.unparse``)."""
    if isinstance(node, ast.Call) and _call_name(node) in ("str", "repr") and len(node.args) == 1:
        inner = ast.unparse(node.args[0])
        return inner if _call_name(node) == "str" else f"{inner}!r"
    return ast.unparse(node)


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


_TRANSLATORS = frozenset(
    {
        "_",
        "gettext",
        "gettext_lazy",
        "ugettext",
        "ugettext_lazy",
        "gettext_noop",
        "ngettext",
        "ngettext_lazy",
        "ungettext",
        "pgettext",
        "pgettext_lazy",
        "npgettext",
        "npgettext_lazy",
        "lazy_gettext",
        "N_",
    }
)
_TEXT_FUNCTIONS: dict[str, Callable[[str], str]] = {
    "dedent": textwrap.dedent,
    "cleandoc": inspect.cleandoc,
    "strip": str.strip,
    "rstrip": str.rstrip,
    "lstrip": str.lstrip,
}


class TemplateBuilder:
    """Builds templates from message expressions of one module.

    Args:
        resolve: Resolves names and attributes to the templates they may hold.
    """

    def __init__(self, resolve: NameResolver | None = None) -> None:
        self._resolve = resolve

    def build(self, node: ast.expr) -> list[Built]:
        """Build every template an expression may produce.

        Args:
            node: The message expression.

        Returns:
            One or more alternatives; an expression that cannot be reduced gives one
            ``opaque`` template holding a single hole.
        """
        results = self._build(node)
        if not results:
            return [Built((_hole(node),), "opaque")]
        return results[:MAX_ALTERNATIVES]

    def is_string_like(self, node: ast.expr) -> bool:
        """Tell whether an expression evidently builds text (used to pick the message argument)."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)):
            return self.is_string_like(node.left) or (
                isinstance(node.op, ast.Add) and self.is_string_like(node.right)
            )
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in _TRANSLATORS or name in _TEXT_FUNCTIONS or name in ("format", "join"):
                return True
            return name == "str"
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and self._resolve:
            resolved = self._resolve(node)
            return resolved is not None and any(b.form != "opaque" for b in resolved)
        return False

    def _build(self, node: ast.expr) -> list[Built]:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return [Built((_literal(node.value),), "constant")]
            return []
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Mod):
                return self._percent(node)
            if isinstance(node.op, ast.Add):
                return self._concat(node)
            return []
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and self._resolve:
            return list(self._resolve(node) or [])
        return []

    def _operand(self, node: ast.expr) -> list[Built]:
        """Build a sub-expression; a value that is not text becomes one hole."""
        built = self._build(node)
        return built or [Built((_hole(node),), "opaque")]

    def _fstring(self, node: ast.JoinedStr) -> list[Built]:
        parts: list[TemplatePart] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(_literal(value.value))
            elif isinstance(value, ast.FormattedValue):
                parts.append(_hole(value.value, _fstring_style(value)))
        return [Built(tuple(parts), "f-string")]

    def _concat(self, node: ast.BinOp) -> list[Built]:
        lefts = self._operand(node.left)
        rights = self._operand(node.right)
        if all(b.form == "opaque" for b in lefts + rights):
            return []
        combined: list[Built] = []
        for left in lefts:
            for right in rights:
                combined.append(
                    Built(
                        left.parts + right.parts,
                        "concat",
                        left.i18n or right.i18n,
                        left.defined_at or right.defined_at,
                    )
                )
        return combined[:MAX_ALTERNATIVES]

    def _percent(self, node: ast.BinOp) -> list[Built]:
        formats = self._build(node.left)
        if not formats:
            return []
        values = node.right
        return [
            Built(
                apply_percent(f.parts, values),
                "percent" if f.form == "constant" else f.form,
                f.i18n,
                f.defined_at,
            )
            for f in formats
        ]

    def _call(self, node: ast.Call) -> list[Built]:
        name = _call_name(node)
        func = node.func
        if name in _TRANSLATORS and node.args:
            # pgettext(context, message) / npgettext(context, singular, plural, n)
            index = 1 if name.startswith(("pgettext", "npgettext")) and len(node.args) > 1 else 0
            return [
                Built(b.parts, b.form, True, b.defined_at) for b in self._operand(node.args[index])
            ]
        if name in ("str",) and len(node.args) == 1:
            return self._build(node.args[0])
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if name == "format" and not _is_module(receiver):
                formats = self._build(receiver)
                return [
                    Built(
                        apply_format(f.parts, node),
                        "format" if f.form == "constant" else f.form,
                        f.i18n,
                        f.defined_at,
                    )
                    for f in formats
                ]
            if name in ("strip", "rstrip", "lstrip") and not node.args:
                return [_transform(b, _TEXT_FUNCTIONS[name]) for b in self._build(receiver)]
            if name == "join" and len(node.args) == 1:
                return self._join(receiver, node.args[0])
        if name in ("dedent", "cleandoc") and len(node.args) == 1:
            return [_transform(b, _TEXT_FUNCTIONS[name]) for b in self._build(node.args[0])]
        return []

    def _join(self, separator: ast.expr, items: ast.expr) -> list[Built]:
        if not (isinstance(separator, ast.Constant) and isinstance(separator.value, str)):
            return []
        if not isinstance(items, (ast.List, ast.Tuple)):
            return []
        parts: list[TemplatePart] = []
        for index, item in enumerate(items.elts):
            if index:
                parts.append(_literal(separator.value))
            parts.extend(self._operand(item)[0].parts)
        return [Built(tuple(parts), "join")]


def _is_module(node: ast.expr) -> bool:
    # ``string.format`` style module functions are not str.format calls.
    return isinstance(node, ast.Name) and node.id in ("string",)


def _fstring_style(value: ast.FormattedValue) -> str:
    style = {-1: "", 115: "!s", 114: "!r", 97: "!a"}.get(value.conversion, "")
    spec = value.format_spec
    if spec is not None:
        if isinstance(spec, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) for v in spec.values
        ):
            style += ":" + "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))
        else:
            style += ":" + ast.unparse(spec)[2:-1]
    return style


def _transform(built: Built, function: Callable[[str], str]) -> Built:
    """Apply a text function (strip, dedent) to a template, holes kept as markers."""
    text = "".join(
        chr(_MARK_BASE + index) if part.hole else part.text
        for index, part in enumerate(built.parts)
    )
    changed = function(text)
    parts: list[TemplatePart] = []
    buffer: list[str] = []
    for char in changed:
        code = ord(char)
        if code >= _MARK_BASE and code - _MARK_BASE < len(built.parts):
            parts.append(_literal("".join(buffer)))
            buffer.clear()
            parts.append(built.parts[code - _MARK_BASE])
        else:
            buffer.append(char)
    parts.append(_literal("".join(buffer)))
    return Built(tuple(parts), built.form, built.i18n, built.defined_at)


# printf-style directive, as ``str.__mod__`` reads it.
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
    r"[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def apply_percent(
    parts: Sequence[TemplatePart], values: ast.expr | Sequence[ast.expr] | None
) -> tuple[TemplatePart, ...]:
    """Apply ``%`` formatting to a template's literal parts.

    Args:
        parts: The format string's template.
        values: The right-hand operand (a tuple, a dict, one value), a sequence of logging
            arguments, or None for logging's "no arguments, no formatting".

    Returns:
        The template with each directive replaced by a hole named after its value.
    """
    if values is None:
        return tuple(parts)
    if isinstance(values, ast.Tuple):
        positional: Sequence[ast.expr] | None = values.elts
    elif isinstance(values, Sequence):
        positional = values
    else:
        positional = None
    mapping: dict[str, ast.expr] = {}
    if isinstance(values, ast.Dict):
        for key, value in zip(values.keys, values.values, strict=True):
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                mapping[key.value] = value
    result: list[TemplatePart] = []
    index = 0
    for part in parts:
        if part.hole:
            result.append(part)
            continue
        position = 0
        for match in _PERCENT.finditer(part.text):
            result.append(_literal(part.text[position : match.start()]))
            position = match.end()
            directive = match.group(0)
            if match["type"] == "%":
                result.append(_literal("%"))
                continue
            mapping_key = match["key"]
            if mapping_key is not None:
                mapped = mapping.get(mapping_key)
                result.append(_hole(mapped if mapped is not None else mapping_key, directive))
                continue
            if positional is not None:
                item: ast.expr | str = (
                    positional[index] if index < len(positional) else f"arg{index}"
                )
            else:
                assert isinstance(values, ast.expr)
                item = values if index == 0 else f"{source_text(values)}[{index}]"
            index += 1
            result.append(_hole(item, directive))
        result.append(_literal(part.text[position:]))
    return tuple(result)


def apply_format(parts: Sequence[TemplatePart], call: ast.Call) -> tuple[TemplatePart, ...]:
    """Apply ``str.format`` with a call's arguments to a template's literal parts.

    Args:
        parts: The format string's template.
        call: The ``.format(...)`` call.

    Returns:
        The template with each replacement field a hole named after its argument.
    """
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    result: list[TemplatePart] = []
    auto = 0
    for part in parts:
        if part.hole:
            result.append(part)
            continue
        try:
            fields = list(string.Formatter().parse(part.text))
        except ValueError:
            result.append(part)
            continue
        for literal, field_name, spec, conversion in fields:
            result.append(_literal(literal))
            if field_name is None:
                continue
            style = (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            first, rest = _split_field(field_name)
            value: ast.expr | None
            if first == "":
                value = call.args[auto] if auto < len(call.args) else None
                first = str(auto)
                auto += 1
            elif first.isdigit():
                number = int(first)
                value = call.args[number] if number < len(call.args) else None
            else:
                value = keywords.get(first)
            text = (source_text(value) if value is not None else first) + rest
            result.append(_hole(text, style))
    return tuple(result)


def _split_field(field_name: str) -> tuple[str, str]:
    for index, char in enumerate(field_name):
        if char in ".[":
            return field_name[:index], field_name[index:]
    return field_name, ""


_SEED_SPECIAL = frozenset("\\.^$*+?{}[]|()")


def seed_escape(text: str) -> str:
    """Escape regex metacharacters only, as the dataset's patterns do (spaces stay bare)."""
    return "".join("\\" + char if char in _SEED_SPECIAL else char for char in text)


def seed_pattern(template: MessageTemplate) -> str:
    """Write a template's ``messagePattern`` in the dataset's style.

    Escaped literals and ``(.+?)`` per hole; it full-matches (with ``re.DOTALL``) every message
    the template produces with non-empty hole values.

    Args:
        template: The message template.

    Returns:
        For example ``Unknown speculative phase: (.+?)``.
    """
    return "".join("(.+?)" if part.hole else seed_escape(part.text) for part in template.parts)
