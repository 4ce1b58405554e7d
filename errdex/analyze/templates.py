"""Message templates from Python expressions, and the patterns that match their messages.

:class:`TemplateBuilder` turns the expression that makes a message (a constant, an f-string,
``str.format``, ``%`` formatting, ``+`` and implicit concatenation, ``str.join`` of literals,
conditional expressions, translation and text wrappers) into templates: literal text kept, each
run-time value a hole named after its source text. Names are resolved through a caller-supplied
:data:`NameResolver` (local variables, constants), which may return several alternatives (one
per branch that assigns the message).

A name that only another file can resolve (an imported constant, an inherited class
attribute, a message table) becomes a *reference*: a hole whose style carries what to look up
and the operations (``.format``, ``%``, ``.strip()``) to apply once it is found, so that the
extractor's link step can finish the template (:func:`apply_operations`, :func:`bind_holes`).

:func:`seed_pattern` writes the dataset's ``messagePattern`` (escaped literals, ``(.+?)`` per
hole).
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
import string
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from errdex.analyze.nodes import (
    Add,
    Attribute,
    BinOp,
    BoolOp,
    Call,
    Constant,
    Dict,
    FormattedValue,
    IfExp,
    JoinedStr,
    Lambda,
    List,
    Mod,
    Name,
    Or,
    Starred,
    Subscript,
    Tuple,
)
from errdex.models import Location, MessageTemplate, TemplatePart

MAX_ALTERNATIVES: Final = 8
"""At most this many alternative templates are kept for one message expression."""

VARIABLE_LITERAL: Final = 3
"""Literal characters each text of a local name needs to stand in an f-string for it when it
has holes of its own (see :meth:`TemplateBuilder._variable_texts`)."""

REFERENCE_STYLE: Final = "\0ref"
"""Style prefix of a reference hole; the JSON of the reference follows it."""

# Hole markers used while applying text functions (strip, dedent) to a template: characters
# from a Unicode private-use area that real messages do not contain.
_MARK_BASE: Final = 0xF0000


class Built:
    """A template built from an expression, and how it was built (an immutable value).

    A plain class with its own ``__init__``, ``__eq__`` and ``__hash__``, not a frozen
    dataclass: mypyc compiles these (a dataclass's are generated at import and interpreted),
    and mining transformers makes a hundred thousand of them (#3).

    Attributes:
        parts: The template parts (adjacent literals not yet merged).
        form: The message form (``constant``, ``f-string``, ``format``, ``percent``,
            ``concat``, ``join``, ``variable``, ``constant-ref``, ``reference``, ``opaque``).
        i18n: The text is wrapped in a translation call; users may see a translation.
        defined_at: Where a resolved constant or variable is defined.
    """

    def __init__(
        self,
        parts: tuple[TemplatePart, ...],
        form: str,
        i18n: bool = False,
        defined_at: Location | None = None,
    ) -> None:
        self.parts: Final = parts
        self.form: Final = form
        self.i18n: Final = i18n
        self.defined_at: Final = defined_at

    def _key(self) -> tuple[tuple[TemplatePart, ...], str, bool, Location | None]:
        return (self.parts, self.form, self.i18n, self.defined_at)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Built) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Built(parts={self.parts!r}, form={self.form!r}, i18n={self.i18n!r}, "
            f"defined_at={self.defined_at!r})"
        )

    def template(self) -> MessageTemplate:
        """Return the parts as a normalised template (adjacent literals merged, empty dropped)."""
        return MessageTemplate(parts=merge_parts(self.parts))


NameResolver = Callable[[ast.expr], Sequence[Built] | None]
"""Resolves a name, attribute, subscript or call to the templates it may hold, or None."""

ListResolver = Callable[[str], Sequence[Built] | None]
"""Resolves a local list's name to the templates its first item may hold (an empty template
where the list may still be empty), or None when that is not known."""


@functools.lru_cache(maxsize=1 << 16)
def template_part(text: str, hole: bool = False, style: str = "") -> TemplatePart:
    """Make a template part, the same object for the same values (#3).

    Parts are frozen, so sharing them is safe; mining makes the same few (``{name}``, ``: ``)
    again and again, and a lookup is far cheaper than validating a new model. Equal parts
    being one object also makes comparing templates cheap (identity is tried first).
    """
    return TemplatePart(text=text, hole=hole, style=style)


def merge_parts(parts: Sequence[TemplatePart]) -> tuple[TemplatePart, ...]:
    """Merge adjacent literal parts and drop empty literals."""
    merged: list[TemplatePart] = []
    for part in parts:
        if not part.hole and not part.text:
            continue
        if merged and not part.hole and not merged[-1].hole:
            merged[-1] = template_part(merged[-1].text + part.text)
        else:
            merged.append(part)
    return tuple(merged)


_COLOUR: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
"""A terminal control sequence (a colour) in a string literal: ``"\\033[1;33m"``."""


def literal_length(parts: Sequence[TemplatePart]) -> int:
    """How many literal characters template parts have (holes aside)."""
    return sum(len(part.text) for part in parts if not part.hole)


def _says_little(parts: Sequence[TemplatePart]) -> bool:
    """Whether a text with holes has fewer than :data:`VARIABLE_LITERAL` literal characters."""
    return literal_length(parts) < VARIABLE_LITERAL and any(part.hole for part in parts)


def _literal(text: str) -> TemplatePart:
    if "\x1b" in text:
        # sglang's ``logger.warning(f"\033[1;33m{message}\033[0m")``: a paste never shows
        # the colour codes (they are read out of pastes too), so templates do not keep them.
        text = _COLOUR.sub("", text)
    return template_part(text)


def _hole(node: ast.expr | str, style: str = "") -> TemplatePart:
    text = node if isinstance(node, str) else source_text(node)
    return template_part(text, True, style)


def source_text(node: ast.AST) -> str:
    """Return an expression's source text, normalised (``ast.unparse``)."""
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Call) and _call_name(node) in ("str", "repr") and len(node.args) == 1:
        inner = unparse(node.args[0])
        return inner if _call_name(node) == "str" else f"{inner}!r"
    return unparse(node)


def unparse(node: ast.AST) -> str:
    """``ast.unparse(node)``: the same text, written here for the common simple expressions.

    ``ast.unparse`` is a visitor written in Python, a few microseconds a call: mining calls
    it for most holes, guards and classes that are not plain names, 2% of a run (#3). Names,
    attributes, calls, subscripts, tuples, lists and constants without a float are written
    here (no operator, so no precedence to weigh); anything else is ``ast.unparse``'s.
    """
    text = simple_text(node)
    return ast.unparse(node) if text is None else text


def simple_text(node: ast.AST) -> str | None:
    """What :func:`unparse` writes itself for ``node``, or None when ``ast.unparse`` would."""
    out: list[str] = []
    return "".join(out) if _write_simple(node, out) else None


def _write_simple(node: ast.AST, out: list[str]) -> bool:
    """Append ``node``'s text as ``ast.unparse`` writes it; False when it is not simple."""
    kind = type(node)
    if kind is Name:
        out.append(node.id)  # type: ignore[attr-defined]
        return True
    if kind is Attribute:
        value = node.value  # type: ignore[attr-defined]
        if type(value) is Constant and type(value.value) is not str:
            return False  # ``1 .real``: ast.unparse spaces an integer apart
        if not _write_simple(value, out):
            return False
        out.append(".")
        out.append(node.attr)  # type: ignore[attr-defined]
        return True
    if kind is Constant:
        return _write_constant(node, out)  # type: ignore[arg-type]
    if kind is Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) not in _CALLABLE or not _write_simple(func, out):
            return False
        out.append("(")
        first = True
        for argument in node.args:  # type: ignore[attr-defined]
            if not first:
                out.append(", ")
            first = False
            if type(argument) is Starred:
                out.append("*")
                argument = argument.value
                if type(argument) not in _CALLABLE:
                    return False
            if not _write_simple(argument, out):
                return False
        for keyword in node.keywords:  # type: ignore[attr-defined]
            if not first:
                out.append(", ")
            first = False
            out.append("**" if keyword.arg is None else keyword.arg + "=")
            if not _write_simple(keyword.value, out):
                return False
        out.append(")")
        return True
    if kind is Subscript:
        value, index = node.value, node.slice  # type: ignore[attr-defined]
        if type(value) not in _CALLABLE or not _write_simple(value, out):
            return False
        out.append("[")
        if type(index) is Tuple and index.elts:
            # ``a[i, j]``: a tuple index is written bare (and ``a[i,]`` for one item).
            if not _write_items(index.elts, out):
                return False
        elif not _write_simple(index, out):
            return False
        out.append("]")
        return True
    if kind is Tuple:
        out.append("(")
        if not _write_items(node.elts, out):  # type: ignore[attr-defined]
            return False
        out.append(")")
        return True
    if kind is List:
        out.append("[")
        if not _write_items(node.elts, out, lone_comma=False):  # type: ignore[attr-defined]
            return False
        out.append("]")
        return True
    return False


_CALLABLE: Final = frozenset({Name, Attribute, Call, Subscript})
"""What ast.unparse writes without parentheses where an atom goes (a call's function …)."""


def _write_items(items: list[ast.expr], out: list[str], *, lone_comma: bool = True) -> bool:
    """Items as ``ast.unparse`` writes them: ``a, b`` (a tuple's lone item as ``a,``)."""
    for number, item in enumerate(items):
        if number:
            out.append(", ")
        if not _write_simple(item, out):
            return False
    if lone_comma and len(items) == 1:
        out.append(",")
    return True


def _write_constant(node: ast.Constant, out: list[str]) -> bool:
    value = node.value
    if node.kind is not None:
        return False  # ``u"…"``
    if value is ...:
        out.append("...")
        return True
    kind = type(value)
    if value is None or kind is str or kind is int or kind is bool or kind is bytes:
        out.append(repr(value))
        return True
    return False  # a float or complex (ast.unparse spells infinities its own way)


def _call_name(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, Name):
        return func.id
    if isinstance(func, Attribute):
        return func.attr
    return ""


# -- references ---------------------------------------------------------------------------


def reference(text: str, target: dict[str, Any]) -> Built:
    """Make a template that stands for a message only the link step can resolve.

    Args:
        text: The expression's source text (the hole's name if it is never resolved).
        target: What to look up, as JSON: ``{"name": "errors.MSG"}``, ``{"self": "MSG"}``,
            optionally with ``"key"`` (a message-table entry).

    Returns:
        A one-hole template of form ``reference``.
    """
    try:
        # With each value's type: True and 1 are equal keys, but not the same JSON.
        style = _reference_style(tuple((k, type(v), v) for k, v in sorted(target.items())))
    except TypeError:  # a value that cannot be a cache key (a list): written each time
        style = REFERENCE_STYLE + json.dumps(target, separators=(",", ":"), sort_keys=True)
    return Built((template_part(text, True, style),), "reference")


@functools.lru_cache(maxsize=1 << 14)
def _reference_style(items: tuple[tuple[str, type, Any], ...]) -> str:
    """A reference's style, written once per target (mining asks for the same ones often)."""
    target = {key: value for key, _, value in items}
    return REFERENCE_STYLE + json.dumps(target, separators=(",", ":"), sort_keys=True)


def part_reference(part: TemplatePart) -> dict[str, Any] | None:
    """Return the reference a hole stands for, or None for an ordinary part."""
    if part.hole and part.style.startswith(REFERENCE_STYLE):
        value = json.loads(part.style[len(REFERENCE_STYLE) :])
        return value if isinstance(value, dict) else None
    return None


def has_reference(parts: Sequence[TemplatePart]) -> bool:
    """Tell whether any part is a reference hole."""
    return any(p.hole and p.style.startswith(REFERENCE_STYLE) for p in parts)


def without_references(parts: Sequence[TemplatePart]) -> tuple[TemplatePart, ...]:
    """Turn reference holes into ordinary holes (what is left when they cannot be resolved)."""
    return tuple(
        TemplatePart(text=p.text, hole=True)
        if p.hole and p.style.startswith(REFERENCE_STYLE)
        else p
        for p in parts
    )


def _single_reference(built: Built) -> dict[str, Any] | None:
    parts = [p for p in built.parts if p.hole or p.text]
    if len(parts) == 1:
        return part_reference(parts[0])
    return None


def _with_operation(
    built: Built, target: dict[str, Any], operation: dict[str, Any], node: ast.expr
) -> Built:
    """Append an operation to a single-reference template (applied after resolution)."""
    updated = dict(target)
    updated["ops"] = [*target.get("ops", []), operation]
    result = reference(source_text(node), updated)
    return Built(result.parts, built.form, built.i18n, built.defined_at)


_TRANSLATORS: Final = frozenset(
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
_PLURALS: Final = frozenset(
    {"ngettext", "ngettext_lazy", "ungettext", "ungettext_lazy", "npgettext", "npgettext_lazy"}
)
_STRING_METHODS: Final = frozenset({"format", "format_map", "join"})
"""Calls that build text from a string (``"…".format(…)``), whatever their receiver."""

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
        is_message_name: Tells whether an unresolved name or attribute evidently holds text
            (used to pick the message among a call's arguments).
        list_start: Resolves a local list's name to what its first item may be (for
            ``sep.join(lines)``).
    """

    def __init__(
        self,
        resolve: NameResolver | None = None,
        is_message_name: Callable[[ast.expr], bool] | None = None,
        list_start: ListResolver | None = None,
    ) -> None:
        self._resolve = resolve
        self._is_message_name = is_message_name
        self._list_start = list_start

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

    def is_string_like(self, node: ast.expr, *, guess: bool = True) -> bool:
        """Tell whether an expression evidently builds text (used to pick the message argument).

        Args:
            node: The expression.
            guess: Also trust names that look like messages (``MSG``, ``error_message``)
                when they cannot be resolved.
        """
        kind = type(node)
        if kind is Constant:
            return isinstance(node.value, str)  # type: ignore[attr-defined]
        if kind is JoinedStr:
            return True
        if kind is BinOp:
            op = node.op  # type: ignore[attr-defined]
            if isinstance(op, (Mod, Add)):
                return self.is_string_like(node.left, guess=guess) or (  # type: ignore[attr-defined]
                    isinstance(op, Add) and self.is_string_like(node.right, guess=guess)  # type: ignore[attr-defined]
                )
            return False
        if kind is Call:
            name = _call_name(node)  # type: ignore[arg-type]
            if name in _TRANSLATORS or name in _TEXT_FUNCTIONS or name in _STRING_METHODS:
                return True
            if name == "str":
                return True
            return guess and self._is_message_name is not None and self._is_message_name(node)
        if kind is IfExp:
            return self.is_string_like(node.body, guess=guess) or self.is_string_like(  # type: ignore[attr-defined]
                node.orelse,  # type: ignore[attr-defined]
                guess=guess,
            )
        if kind is BoolOp:
            # stripe's ``msg = self._message or "<empty message>"``
            return type(node.op) is Or and any(  # type: ignore[attr-defined]
                self.is_string_like(value, guess=guess)
                for value in node.values  # type: ignore[attr-defined]
            )
        if kind in (Name, Attribute, Subscript):
            if self._resolve:
                resolved = self._resolve(node)
                if resolved is not None and any(
                    b.form not in ("opaque", "reference") for b in resolved
                ):
                    return True
            return guess and self._is_message_name is not None and self._is_message_name(node)
        return False

    def _build(self, node: ast.expr) -> list[Built]:
        kind = type(node)
        if kind is Constant:
            if isinstance(node.value, str):  # type: ignore[attr-defined]
                return [Built((_literal(node.value),), "constant")]  # type: ignore[attr-defined]
            return []
        if kind is JoinedStr:
            return self._fstring(node)  # type: ignore[arg-type]
        if kind is BinOp:
            op = node.op  # type: ignore[attr-defined]
            if isinstance(op, Mod):
                return self._percent(node)  # type: ignore[arg-type]
            if isinstance(op, Add):
                return self._concat(node)  # type: ignore[arg-type]
            return []
        if kind is Call:
            return self._call(node)  # type: ignore[arg-type]
        if kind in (Name, Attribute, Subscript):
            return list(self._resolve(node) or []) if self._resolve else []
        if kind is IfExp:
            return self._alternatives([node.body, node.orelse], keep_holes=True)  # type: ignore[attr-defined]
        if kind is BoolOp and isinstance(node.op, Or):  # type: ignore[attr-defined]
            return self._alternatives(node.values, keep_holes=False)  # type: ignore[attr-defined]
        return []

    def _alternatives(self, nodes: Sequence[ast.expr], *, keep_holes: bool) -> list[Built]:
        """Templates of ``a if c else b`` / ``a or b``: each operand is one alternative.

        For ``or``, an operand that gives no text stays as a hole when it is a name or an
        attribute (``message or "default"``: the message passed through) and is dropped
        otherwise; for a conditional every branch stays.
        """
        built = [self._build(node) for node in nodes]
        if not any(built):
            return []
        result: list[Built] = []
        for node, alternatives in zip(nodes, built, strict=True):
            if alternatives:
                result.extend(alternatives)
            elif (keep_holes or isinstance(node, (Name, Attribute))) and not (
                isinstance(node, Constant) and node.value is None
            ):
                result.append(Built((_hole(node),), "opaque"))
        unique: list[Built] = []
        for item in result:
            if item not in unique:
                unique.append(item)
        return unique[:MAX_ALTERNATIVES]

    def _operand(self, node: ast.expr) -> list[Built]:
        """Build a sub-expression; a value that is not text becomes one hole."""
        built = self._build(node)
        return built or [Built((_hole(node),), "opaque")]

    def _fstring(self, node: ast.JoinedStr) -> list[Built]:
        alternatives: list[tuple[TemplatePart, ...]] = [()]
        for value in node.values:
            if isinstance(value, Constant) and isinstance(value.value, str):
                alternatives = [parts + (_literal(value.value),) for parts in alternatives]
            elif isinstance(value, FormattedValue):
                texts = self._variable_texts(value)
                shown = None if texts else self._class_constant(value)
                hole = (_hole(value.value, _fstring_style(value)),)
                pieces = texts or [shown or hole]
                alternatives = [a + piece for a in alternatives for piece in pieces]
                alternatives = alternatives[:MAX_ALTERNATIVES]
        return [Built(parts, "f-string") for parts in alternatives]

    def _class_constant(self, value: ast.FormattedValue) -> tuple[TemplatePart, ...] | None:
        """A class attribute a class's text shows as it is (``{self.detail}`` in ``__str__``).

        The resolver makes it a reference the link step reads from the raised class, which
        may set its own (a subclass's ``detail = "You are not allowed to do this"``).
        """
        if (
            type(value.value) is not Attribute
            or value.conversion not in (-1, ord("s"))
            or value.format_spec is not None
            or self._resolve is None
        ):
            return None
        resolved = self._resolve(value.value)
        if not resolved or len(resolved) != 1 or len(resolved[0].parts) != 1:
            return None
        target = part_reference(resolved[0].parts[0])
        return resolved[0].parts if target is not None and target.get("constant") else None

    def _name_texts(self, name: ast.Name) -> list[tuple[TemplatePart, ...]]:
        """The texts a local name may hold, when each says something.

        A text with holes counts with :data:`VARIABLE_LITERAL` literal characters; a bare
        hole (``self._message``, which the link step binds to what the exception was given)
        counts as it is, next to a text.
        """
        resolved = self._resolve(name) if self._resolve is not None else None
        if not resolved or len(resolved) > MAX_ALTERNATIVES:
            return []
        if all(built.form == "opaque" for built in resolved):
            return []
        texts: list[tuple[TemplatePart, ...]] = []
        for built in resolved:
            if built.form == "opaque" and len(built.parts) == 1:
                pass  # a hole the link step may bind (``self._message``, set from a parameter)
            elif built.form in ("opaque", "reference") or _says_little(built.parts):
                return []
            texts.append(built.parts)
        return texts

    def _variable_texts(self, value: ast.FormattedValue) -> list[tuple[TemplatePart, ...]]:
        """The texts a local name shown as it is holds, when each says something, else none.

        ``message = "is too short" if x else "is too long"`` then ``f"{instance!r} {message}"``:
        one template per text (jsonschema's keywords). A text may have holes of its own
        (click's ``missing = _("Missing {param_type}").format(…)`` next to ``_("Missing
        argument")``), if each text has :data:`VARIABLE_LITERAL` literal characters: a name
        that is ``f" {hint}"`` or ``""`` stays a hole (that matches both), rather than
        doubling the templates. A conversion or a format spec would change the text, so
        only a plain ``{name}`` counts.
        """
        if (
            type(value.value) is not Name
            or value.conversion not in (-1, ord("s"))
            or value.format_spec is not None
            or self._resolve is None
        ):
            return []
        resolved = self._resolve(value.value)
        if not resolved:
            return []
        texts: list[tuple[TemplatePart, ...]] = []
        unsaid = False  # a text that says little (``f"{e}"``, ``f" {hint}"``) or is not known
        for built in resolved:
            if built.form in ("reference", "opaque") or _says_little(built.parts):
                unsaid = True
            else:
                texts.append(built.parts)
        if not unsaid:
            return texts
        said = [text for text in texts if literal_length(text) >= VARIABLE_LITERAL]
        if not said:
            return []
        # hydra's ``msg`` is ``f"Error parsing override '{override}'\n{e}"`` or ``f"{e}"``: the
        # texts that say something, and the name as a hole for the others.
        return [*said, (_hole(value.value),)]

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
        values = percent_values(node.right)
        result: list[Built] = []
        for f in formats:
            target = _single_reference(f)
            if target is not None:
                result.append(_with_operation(f, target, {"op": "percent", "values": values}, node))
                continue
            result.append(
                Built(
                    apply_percent_values(f.parts, values),
                    "percent" if f.form == "constant" else f.form,
                    f.i18n,
                    f.defined_at,
                )
            )
        return result

    def _call(self, node: ast.Call) -> list[Built]:
        name = _call_name(node)
        func = node.func
        if name in _TRANSLATORS and node.args:
            # pgettext(context, message) / npgettext(context, singular, plural, n)
            index = 1 if name.startswith(("pgettext", "npgettext")) and len(node.args) > 1 else 0
            forms = [node.args[index]]
            if name in _PLURALS and len(node.args) > index + 1:
                forms.append(node.args[index + 1])  # the plural is a second alternative
            return [
                Built(b.parts, b.form, True, b.defined_at)
                for form in forms
                for b in self._operand(form)
            ][:MAX_ALTERNATIVES]
        if name == "str" and len(node.args) == 1:
            return self._build(node.args[0])
        if (
            len(node.args) == 1
            and type(node.args[0]) is Lambda
            and not node.args[0].args.args
            and name.endswith("Message")
        ):
            # sympy's ``LazyExceptionMessage(lambda: f"cannot determine truth value of
            # Relational: {self}")``: the text the lambda makes when it is shown.
            return self._build(node.args[0].body)
        if isinstance(func, Attribute):
            receiver = func.value
            if name == "format" and not _is_module(receiver):
                return self._format(receiver, node)
            if name == "format_map" and len(node.args) == 1:
                # ``msg.format_map({"field": x})`` is ``msg.format(field=x)``.
                mapping = node.args[0]
                if isinstance(mapping, Dict) and all(
                    isinstance(k, Constant) and isinstance(k.value, str) for k in mapping.keys
                ):
                    keywords = [
                        ast.keyword(arg=k.value, value=v)  # type: ignore[union-attr]
                        for k, v in zip(mapping.keys, mapping.values, strict=True)
                    ]
                    return self._format(receiver, Call(func=func, args=[], keywords=keywords))
            if name in ("strip", "rstrip", "lstrip") and not node.args:
                return [self._text_function(b, name, node) for b in self._build(receiver)]
            if name == "join" and len(node.args) == 1:
                return self._join(receiver, node.args[0])
        if name in ("dedent", "cleandoc") and len(node.args) == 1:
            return [self._text_function(b, name, node) for b in self._build(node.args[0])]
        # A function that returns a message (resolved by the caller's resolver, if at all).
        return list(self._resolve(node) or []) if self._resolve else []

    def _format(self, receiver: ast.expr, node: ast.Call) -> list[Built]:
        formats = self._build(receiver)
        arguments = format_arguments(node)
        texts = self._text_arguments(node)
        result: list[Built] = []
        for f in formats:
            target = _single_reference(f)
            if target is not None:
                result.append(
                    _with_operation(f, target, {"op": "format", "arguments": arguments}, node)
                )
                continue
            bound = [apply_format_arguments(f.parts, arguments)]
            for name, options in texts.items():
                bound = [
                    bind_holes(parts, {name: option}) for parts in bound for option in options
                ][:MAX_ALTERNATIVES]
            form = "format" if f.form == "constant" else f.form
            result.extend(Built(parts, form, f.i18n, f.defined_at) for parts in bound)
        return result[:MAX_ALTERNATIVES]

    def _text_arguments(self, node: ast.Call) -> dict[str, list[tuple[TemplatePart, ...]]]:
        """The ``.format`` arguments that are text, or templates, by their source text.

        sklearn's ``msg.format("in {0}s with".format(axis1))``: the field shows that text. A
        local name shows each text it may hold (stripe's ``"Request {0}: {1}".format(
        self.request_id, msg)`` with ``msg = self._message or "<empty message>"``), as an
        f-string does (see :meth:`_variable_texts`).
        """
        texts: dict[str, list[tuple[TemplatePart, ...]]] = {}
        values = [*node.args, *(k.value for k in node.keywords if k.arg is not None)]
        for value in values:
            if type(value) is Starred:
                break
            if type(value) is Constant:
                if isinstance(value.value, str):
                    texts[source_text(value)] = [(_literal(value.value),)]
            elif type(value) in (Call, JoinedStr, BinOp) and self.is_string_like(
                value, guess=False
            ):
                built = self._build(value)
                if len(built) == 1 and built[0].form not in ("opaque", "reference"):
                    texts[source_text(value)] = [built[0].parts]
            elif type(value) is Name:
                options = self._name_texts(value)
                if options:
                    texts[value.id] = options
        return texts

    def _text_function(self, built: Built, name: str, node: ast.expr) -> Built:
        target = _single_reference(built)
        if target is not None:
            return _with_operation(built, target, {"op": "text", "function": name}, node)
        return _transform(built, _TEXT_FUNCTIONS[name])

    def _join(self, separator: ast.expr, items: ast.expr) -> list[Built]:
        if not (isinstance(separator, Constant) and isinstance(separator.value, str)):
            return []
        if type(items) is Name and self._list_start is not None:
            return self._joined_list(items)
        if type(items) is BinOp and type(items.op) is Add:
            return self._joined_sum(separator, items)
        if not isinstance(items, (List, Tuple)):
            return []
        parts: list[TemplatePart] = []
        for index, item in enumerate(items.elts):
            if index:
                parts.append(_literal(separator.value))
            parts.extend(self._operand(item)[0].parts)
        return [Built(tuple(parts), "join")]

    def _joined_sum(self, separator: ast.expr, items: ast.BinOp) -> list[Built]:
        """``sep.join([first, …] + more + others)``: the literal list's items, then a hole.

        pydantic's ``sep.join(['Valid config keys have changed in V2:'] + renamed_bullets
        + removed_bullets)``: the hole takes the separator and the lists added after it, or
        nothing when they are empty.
        """
        operands: list[ast.expr] = []
        node: ast.expr = items
        while type(node) is BinOp and type(node.op) is Add:
            operands.append(node.right)
            node = node.left
        if not isinstance(node, (List, Tuple)) or not node.elts:
            return []
        rest = _hole(" + ".join(source_text(operand) for operand in reversed(operands)))
        return [
            Built((*built.parts, rest), "join", built.i18n, built.defined_at)
            for built in self._join(separator, node)
        ]

    def _joined_list(self, items: ast.Name) -> list[Built]:
        """``sep.join(parts)`` of a list the function fills: its first item, then the rest.

        pip's ``parts = []``, ``parts.append("pip's dependency resolver does not …")``, more
        appends in loops, then ``logger.critical(sep.join(parts))``: the message starts with
        the first item, and a hole takes the separator and the items after it (or nothing).
        Where the list may still be empty, or its first item is not known, that path's
        message is opaque.
        """
        starts = self._list_start(items.id) if self._list_start is not None else None
        if not starts:
            return []
        rest = _hole(items)
        built: list[Built] = []
        for start in starts:
            if start.form == "opaque" or not start.parts:
                alternative = Built((rest,), "opaque")
            else:
                alternative = Built((*start.parts, rest), "join", start.i18n, start.defined_at)
            if alternative not in built:
                built.append(alternative)
        return built


def _is_module(node: ast.expr) -> bool:
    # ``string.format`` style module functions are not str.format calls.
    return isinstance(node, Name) and node.id in ("string",)


def _fstring_style(value: ast.FormattedValue) -> str:
    style = {-1: "", 115: "!s", 114: "!r", 97: "!a"}.get(value.conversion, "")
    spec = value.format_spec
    if spec is not None:
        if isinstance(spec, JoinedStr) and all(isinstance(v, Constant) for v in spec.values):
            style += ":" + "".join(str(v.value) for v in spec.values if isinstance(v, Constant))
        else:
            style += ":" + ast.unparse(spec)[2:-1]
    return style


def _transform(built: Built, function: Callable[[str], str]) -> Built:
    """Apply a text function (strip, dedent) to a template, holes kept as markers."""
    return Built(transform_parts(built.parts, function), built.form, built.i18n, built.defined_at)


def transform_parts(
    parts: Sequence[TemplatePart], function: Callable[[str], str]
) -> tuple[TemplatePart, ...]:
    """Apply a text function (strip, dedent) to template parts, holes kept as markers.

    Args:
        parts: The template parts.
        function: The text function.

    Returns:
        The parts of the transformed text.
    """
    text = "".join(
        chr(_MARK_BASE + index) if part.hole else part.text for index, part in enumerate(parts)
    )
    changed = function(text)
    result: list[TemplatePart] = []
    buffer: list[str] = []
    for char in changed:
        code = ord(char)
        if code >= _MARK_BASE and code - _MARK_BASE < len(parts):
            result.append(_literal("".join(buffer)))
            buffer.clear()
            result.append(parts[code - _MARK_BASE])
        else:
            buffer.append(char)
    result.append(_literal("".join(buffer)))
    return tuple(result)


# -- % formatting -------------------------------------------------------------------------

# printf-style directive, as ``str.__mod__`` reads it.
_PERCENT: Final = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?(?P<flags>[-#0 +]*)(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
    r"[hlL]?(?P<type>[diouxXeEfFgGcrsa%])"
)


def _formatted_constant(item: str, kind: str) -> str | None:
    """What a plain ``%s`` or ``%r`` makes of a value that is a string literal, else None.

    celery's ``error(CONNECTION_ERROR, uri, exc, "Trying to reconnect...")``: the text is
    known (a width, a flag or another type keeps the hole).
    """
    if kind not in ("s", "r") or item[:1] not in ("'", '"'):
        return None
    try:
        value = ast.literal_eval(item)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, str):
        return None
    return value if kind == "s" else repr(value)


def percent_values(values: ast.expr | Sequence[ast.expr] | None) -> dict[str, Any] | None:
    """Describe the right-hand side of ``%`` as JSON (source texts only).

    Args:
        values: The right-hand operand (a tuple, a dict, one value), a sequence of logging
            arguments, or None for logging's "no arguments, no formatting".

    Returns:
        ``{"items": [...]}`` for a tuple or logging arguments, ``{"mapping": {...}}`` for a
        dict display, ``{"one": "x"}`` for any other value, or None.
    """
    if values is None:
        return None
    if isinstance(values, Tuple):
        return {"items": [source_text(v) for v in values.elts]}
    if isinstance(values, Dict):
        mapping = {
            key.value: source_text(value)
            for key, value in zip(values.keys, values.values, strict=True)
            if isinstance(key, Constant) and isinstance(key.value, str)
        }
        return {"mapping": mapping}
    if isinstance(values, ast.expr):
        return {"one": source_text(values)}
    if len(values) == 1 and isinstance(values[0], Dict):
        # logging: a single mapping argument fills %(name)s directives.
        return percent_values(values[0])
    return {"items": [source_text(v) for v in values]}


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
    return apply_percent_values(parts, percent_values(values))


def apply_percent_values(
    parts: Sequence[TemplatePart], values: Mapping[str, Any] | None
) -> tuple[TemplatePart, ...]:
    """Apply ``%`` formatting described by :func:`percent_values` to literal parts.

    Args:
        parts: The format string's template.
        values: The description of the values, or None for no formatting.

    Returns:
        The template with each directive replaced by a hole named after its value.
    """
    if values is None:
        return tuple(parts)
    items: Sequence[str] | None = values.get("items")
    mapping: Mapping[str, str] = values.get("mapping") or {}
    one: str | None = values.get("one")
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
                item = mapping.get(mapping_key, mapping_key)
            else:
                # ``*`` width and precision each take one value first.
                index += (match["width"] == "*") + (match["precision"] == "*")
                if items is not None:
                    item = items[index] if index < len(items) else f"arg{index}"
                elif one is not None:
                    item = one if index == 0 else f"{one}[{index}]"
                else:
                    item = f"arg{index}"
                index += 1
            plain = not (match["flags"] or match["width"] or match["precision"])
            text = _formatted_constant(item, match["type"]) if plain else None
            result.append(_hole(item, directive) if text is None else _literal(text))
        result.append(_literal(part.text[position:]))
    return tuple(result)


# -- str.format ---------------------------------------------------------------------------


def format_arguments(call: ast.Call) -> dict[str, Any]:
    """Describe a ``.format(...)`` call's arguments as JSON (source texts only).

    Args:
        call: The call.

    Returns:
        ``{"args": [...], "keywords": {...}}``; positional arguments after a ``*args`` are
        unknown, and so are keywords after ``**kwargs``.
    """
    args: list[str] = []
    for argument in call.args:
        if isinstance(argument, Starred):
            break
        args.append(source_text(argument))
    keywords = {k.arg: source_text(k.value) for k in call.keywords if k.arg is not None}
    return {"args": args, "keywords": keywords}


def apply_format(parts: Sequence[TemplatePart], call: ast.Call) -> tuple[TemplatePart, ...]:
    """Apply ``str.format`` with a call's arguments to a template's literal parts.

    Args:
        parts: The format string's template.
        call: The ``.format(...)`` call.

    Returns:
        The template with each replacement field a hole named after its argument.
    """
    return apply_format_arguments(parts, format_arguments(call))


def apply_format_arguments(
    parts: Sequence[TemplatePart], arguments: Mapping[str, Any]
) -> tuple[TemplatePart, ...]:
    """Apply ``str.format`` described by :func:`format_arguments` to literal parts.

    Args:
        parts: The format string's template.
        arguments: The description of the call's arguments.

    Returns:
        The template with each replacement field a hole named after its argument.
    """
    args: Sequence[str] = arguments.get("args", [])
    keywords: Mapping[str, str] = arguments.get("keywords", {})
    result: list[TemplatePart] = []
    auto = 0
    # Literal runs a first ``.format`` left apart ("{{0}}" gives "{" and "0}") are one field
    # for a second one (sklearn's ``msg = msg.format("due to")``).
    for part in merge_parts(parts):
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
            value: str | None
            if first == "":
                value = args[auto] if auto < len(args) else None
                first = str(auto)
                auto += 1
            elif first.isdigit():
                number = int(first)
                value = args[number] if number < len(args) else None
            else:
                value = keywords.get(first)
            text = (value if value is not None else first) + rest
            result.append(_hole(text, style))
    return tuple(result)


def _split_field(field_name: str) -> tuple[str, str]:
    for index, char in enumerate(field_name):
        if char in ".[":
            return field_name[:index], field_name[index:]
    return field_name, ""


def apply_operations(
    parts: Sequence[TemplatePart], operations: Sequence[Mapping[str, Any]]
) -> tuple[TemplatePart, ...]:
    """Apply the operations a reference carried (``.format``, ``%``, text functions).

    Args:
        parts: The resolved template.
        operations: The reference's ``ops``, in the order the code applies them.

    Returns:
        The template the expression produces.
    """
    result = tuple(parts)
    for operation in operations:
        kind = operation.get("op")
        if kind == "format":
            result = apply_format_arguments(result, operation.get("arguments") or {})
        elif kind == "percent":
            result = apply_percent_values(result, operation.get("values"))
        elif kind == "text" and operation.get("function") in _TEXT_FUNCTIONS:
            result = transform_parts(result, _TEXT_FUNCTIONS[operation["function"]])
    return result


# -- binding holes to values --------------------------------------------------------------

_CONVERSIONS: dict[str, Callable[[object], str]] = {"r": repr, "s": str, "a": ascii}
_MAPPING_KEY: Final = re.compile(r"^%\([^)]*\)")


NUMBER_STYLES: Final = {"int": int, "float": float}
"""Style of a literal part that stands for a number constant (``404``), not for text."""


def format_literal(value: object, style: str) -> str | None:
    """Format a known value as a hole's style would, or None when it cannot be known.

    Args:
        value: The value (a string or a number).
        style: The hole's style (``!r``, ``:>10``, ``%s``, ``%(name)r`` …).

    Returns:
        The formatted text.
    """
    try:
        if style.startswith("%"):
            return _MAPPING_KEY.sub("%", style) % (value,)
        conversion, _, spec = style.partition(":")
        converted: object = value
        if conversion.startswith("!"):
            converted = _CONVERSIONS[conversion[1:]](value)
        return format(converted, spec)
    except (TypeError, ValueError, KeyError):
        return None


def bind_holes(
    parts: Sequence[TemplatePart],
    values: Mapping[str, Sequence[TemplatePart]],
    *,
    names: Mapping[str, str] | None = None,
) -> tuple[TemplatePart, ...]:
    """Replace holes by what the code passes for them.

    A hole is bound when its text (or ``names[text]``) is a key of ``values``. A bound value
    that is pure text is formatted with the hole's style; a template is spliced in when the
    hole formats plainly; anything else renames the hole after the value.

    Args:
        parts: The template (for example an exception class's ``__str__``).
        values: The template of each bound name (parameter), e.g. a call's arguments.
        names: Maps hole texts to parameter names (``self.path`` → ``path``).

    Returns:
        The bound template.
    """
    result: list[TemplatePart] = []
    for part in parts:
        key = (names or {}).get(part.text, part.text) if part.hole else None
        if key is None or key not in values or part_reference(part) is not None:
            result.append(part)
            continue
        value = [p for p in values[key] if p.hole or p.text]
        if not any(p.hole for p in value):
            known: object = "".join(p.text for p in value)
            if len(value) == 1 and value[0].style in NUMBER_STYLES:
                known = NUMBER_STYLES[value[0].style](value[0].text)
            formatted = format_literal(known, part.style)
            if formatted is not None:
                result.append(_literal(formatted))
                continue
        if part.style in ("", "!s", "%s"):
            result.extend(value)
        elif len(value) == 1 and value[0].hole:
            result.append(TemplatePart(text=value[0].text, hole=True, style=part.style))
        else:
            result.append(part)
    return tuple(result)


# -- patterns -----------------------------------------------------------------------------

_SEED_ESCAPES: Final = str.maketrans({char: "\\" + char for char in "\\.^$*+?{}[]|()"})


def seed_escape(text: str) -> str:
    """Escape regex metacharacters only, as the dataset's patterns do (spaces stay bare)."""
    return text.translate(_SEED_ESCAPES)


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
