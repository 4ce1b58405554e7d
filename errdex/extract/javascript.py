"""JavaScript and TypeScript: the error sites of ``.js``/``.ts`` files and their siblings (#7).

The JavaScript extractor reads ``.js``/``.mjs``/``.cjs``/``.jsx``, the TypeScript one
``.ts``/``.mts``/``.cts`` and ``.tsx`` (its own grammar); both find the same forms.

Sites: ``throw new X(…)`` and ``throw X(…)``; errors handed to ``reject``, callbacks,
``next`` or ``Promise.reject``; any ``new …Error(…)``; ``console.error``/``console.warn``
(``util.format`` semantics: ``%s``/``%d``/``%o``… of the first argument take the next arguments,
extra arguments are appended space-separated); ``assert``, ``assert.ok``, ``assert.strictEqual``
and friends (``AssertionError``); ``process.emitWarning``, ``util.deprecate`` and ``depd``
deprecations; http-errors ``createError(404, …)``, ``ctx.throw(404, …)`` and
``res.status(404).send(…)``.

A message is read into a small JSON-ready expression tree (its node kinds are listed above
:func:`_literal`; :meth:`_Expander.expand` reads them): literal text and holes (``${a}``,
``+ a``), the enclosing function's parameters, ``a ?? b`` defaults, alternatives of a
variable assigned on several paths, the text a local message function returns, imported
constants and ``util.format`` calls. Expanding it gives one template per distinct message a
site can produce. A function that hands its ``message`` parameter to a site (commander's
``this.error(message, {code})``) is a *message helper*: each of its calls is a site too.

Error classes of the source (``class X extends Error``, or function constructors calling
``Base.call(this, …)``) are modelled the same way (what ``super(…)``, ``this.message``,
``this.code``, ``this.status`` and ``this.name`` are set to, in terms of the constructor's
parameters), so that ``throw new MyError(x)`` gets the class's message with the call's
arguments in its holes, and its code and HTTP status. What crosses files — a class or a
constant imported from another module (ES ``import``/``export`` and CommonJS
``require``/``exports``, by name) — is left in :attr:`~errdex.models.FileResult.exports` as a
*pending plan* and finished in :meth:`JavaScriptExtractor.link`; until then the site carries
the template read without it.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from errdex.extract import code_version
from errdex.extract.treesitter import (
    FileContext,
    Scope,
    TreeSitterExtractor,
    compiled_query,
    merge,
)
from errdex.models import (
    FileResult,
    Location,
    MessageTemplate,
    RaiseSite,
    Severity,
    SiteKind,
    TemplatePart,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Query

__all__ = ["JavaScriptExtractor", "TypeScriptExtractor"]

Ir = list[Any]
"""A message expression, JSON-ready (its node kinds are listed above :func:`_literal`)."""

BUILTIN_ERRORS = frozenset(
    {
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "ReferenceError",
        "EvalError",
        "URIError",
        "AggregateError",
        "SuppressedError",
    }
)
"""The error constructors of the language (``Error(…)`` works without ``new`` too)."""

_ERROR_SUFFIXES = ("Error", "Exception", "Failure", "Fault")

_SCOPE_TYPES = (
    "function_declaration",
    "generator_function_declaration",
    "function_expression",
    "generator_function",
    "arrow_function",
    "method_definition",
)
_CLASS_TYPES = ("class_declaration", "class", "abstract_class_declaration")
_WRAPPERS = frozenset(
    {
        "parenthesized_expression",
        "as_expression",
        "satisfies_expression",
        "non_null_expression",
        "type_assertion",
        "await_expression",
    }
)
"""Expressions whose value is their operand's (TypeScript's ``as``/``!``/``<T>``, parentheses)."""

_BLOCKS = frozenset({"statement_block", "program", "switch_case", "switch_default"})

_PASSING_CALLEES = frozenset(
    {"reject", "callback", "cb", "done", "next", "fail", "Promise.reject", "assert"}
)
"""Calls whose argument is an error handed on: whatever its class, it is a site."""
_PASSING_METHODS = frozenset({"reject", "emit", "destroy", "throw", "abort"})

_ASSERT_MESSAGE = {
    "": 1,
    "ok": 1,
    "equal": 2,
    "notEqual": 2,
    "strictEqual": 2,
    "notStrictEqual": 2,
    "deepEqual": 2,
    "notDeepEqual": 2,
    "deepStrictEqual": 2,
    "notDeepStrictEqual": 2,
    "partialDeepStrictEqual": 2,
    "match": 2,
    "doesNotMatch": 2,
    "fail": 0,
}
"""Where each ``assert`` function takes its message."""
_ASSERT_DIFF = frozenset({"strictEqual", "deepStrictEqual"})
"""Node 20+ appends a diff to these assertions' custom messages."""

_CONSTANT_TYPES = frozenset(
    {"string", "template_string", "binary_expression", "ternary_expression"}
)
"""Values a module constant other modules import can have (its message)."""

_SITE_METHODS = frozenset(
    {"error", "warn", "emitWarning", "deprecate", "throw", "sendStatus", "format"}
    | {"send", "json", "jsonp", "end"}
    | set(_ASSERT_MESSAGE)
)
"""Method names a site can be called by (a cheap test before reading the call)."""

_HTTP_ERROR_MODULES = frozenset({"http-errors", "httperrors", "create-error"})
_HTTP_ERROR_NAMES = frozenset({"createError", "createHttpError", "httpErrors", "HttpErrors"})
_RESPONSE_METHODS = frozenset({"send", "json", "jsonp", "end"})
_RESPONSE_KEYS = ("error", "message", "msg", "detail", "errors")

HTTP_PHRASES = {
    400: "Bad Request",
    401: "Unauthorized",
    402: "Payment Required",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    407: "Proxy Authentication Required",
    408: "Request Timeout",
    409: "Conflict",
    410: "Gone",
    411: "Length Required",
    412: "Precondition Failed",
    413: "Payload Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    416: "Range Not Satisfiable",
    417: "Expectation Failed",
    418: "I'm a Teapot",
    421: "Misdirected Request",
    422: "Unprocessable Entity",
    423: "Locked",
    424: "Failed Dependency",
    425: "Too Early",
    426: "Upgrade Required",
    428: "Precondition Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    451: "Unavailable For Legal Reasons",
    500: "Internal Server Error",
    501: "Not Implemented",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    505: "HTTP Version Not Supported",
    506: "Variant Also Negotiates",
    507: "Insufficient Storage",
    508: "Loop Detected",
    509: "Bandwidth Limit Exceeded",
    510: "Not Extended",
    511: "Network Authentication Required",
}
"""The reason phrases of the error statuses, as Node's ``http.STATUS_CODES`` has them."""

_CODE_NAME = re.compile(r"(?:[\w$]+\.)+(?P<name>E[A-Z0-9_]{2,})\Z")
"""A code constant written as a member (``AxiosError.ERR_NETWORK`` is ``'ERR_NETWORK'``)."""
_FORMAT = re.compile(r"%[sdifjoOc%]")
_MODULE_SUFFIXES = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")

MAX_ALTERNATIVES = 8
"""At most this many templates per message (variables assigned on several paths)."""
MAX_HOLE_SOURCE = 200
"""A hole keeps at most this much of its expression's source."""
MAX_OPERANDS = 200
"""A longer concatenation (generated code) is read as one hole."""
_MAX_DEPTH = 24


def http_error_class(status: int) -> str:
    """Return the class http-errors gives a status (``404`` → ``NotFoundError``)."""
    phrase = HTTP_PHRASES.get(status)
    if phrase is None:
        return "HttpError"
    words = re.findall(r"[A-Za-z0-9]+", phrase.replace("'", ""))
    name = "".join(word[:1].upper() + word[1:] for word in words)
    return name if name.endswith("Error") else name + "Error"


def _is_error_name(name: str) -> bool:
    return name in BUILTIN_ERRORS or name.endswith(_ERROR_SUFFIXES)


# -- the expression tree -------------------------------------------------------------------
#
# ["t", parts, form]            text: parts are [text, is_hole, style]
# ["p", index, props, source]   a parameter of the function (a property path in it), as written
# ["cat", items, form]          concatenation (template literal, ``+``)
# ["or", a, b]                  ``a ?? b``, ``a || b``, ``p == null ? b : p``: a unless missing
# ["alt", items]                one of several values (branches, ternaries)
# ["ref", inner, form, where]   a resolved variable or constant: its value, and where it is
# ["imp", name]                 an imported name, resolved at link
# ["obj", {key: ir}, source]    an object literal
# ["fmt", args]                 util.format / console.error arguments
# ["none"]                      undefined, null, or no argument


def _literal(text: str) -> Ir:
    return ["t", [[text, False, ""]], "literal"]


def _hole(source: str, style: str = "") -> Ir:
    text = " ".join(source[: MAX_HOLE_SOURCE * 4].split())
    if len(text) > MAX_HOLE_SOURCE:
        text = text[:MAX_HOLE_SOURCE] + "…"
    return ["t", [[text, True, style]], "opaque"]


_NONE: Ir = ["none"]


def _is_literal(ir: Ir) -> bool:
    """Whether an expression is plain literal text (no hole, one value)."""
    return ir[0] == "t" and all(not part[1] for part in ir[1])


def _literal_text(ir: Ir) -> str:
    return "".join(part[0] for part in ir[1])


class _Alt(NamedTuple):
    """One value an expression can have: template parts, how it was written, where defined."""

    parts: tuple[tuple[str, bool, str], ...]
    form: str
    where: tuple[str, int] | None = None


class _Deferred(Exception):
    """A name needs another file (raised while extracting one file; link resolves it)."""


@dataclass
class _Outcome:
    """What instantiating an error class gives: its message, class name, code and status."""

    message: Ir
    error_class: str
    code: Ir | None = None
    status: Ir | None = None
    label: str | None = None
    chained: bool = False


class _Resolver:
    """Finds what a module's names refer to, across the modules it knows.

    Args:
        modules: Each module's exports (see :meth:`_FileReader.exports`), by path.
        defer: Raise :class:`_Deferred` for an imported name (extract time: only the file
            itself is known), instead of treating it as external.
    """

    def __init__(self, modules: dict[str, dict[str, Any]], *, defer: bool) -> None:
        self.modules = modules
        self.defer = defer

    def module_path(self, importer: str, spec: str) -> str | None:
        """Return the module a relative import names, when it is one of the known ones."""
        if not spec.startswith("."):
            return None
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        stem, extension = posixpath.splitext(base)
        candidates = [base]
        if extension in (".js", ".mjs", ".cjs", ".jsx"):
            candidates += [stem + s for s in (".ts", ".tsx", ".mts", ".cts")]
        candidates += [base + s for s in _MODULE_SUFFIXES]
        candidates += [f"{base}/index{s}" for s in _MODULE_SUFFIXES]
        return next((c for c in candidates if c in self.modules), None)

    def _find(self, module: str, name: str, kind: str, depth: int = 0) -> tuple[str, Any] | None:
        """Look a local or imported name up in a module: ``(module, value)`` or None."""
        facts = self.modules.get(module)
        if facts is None or depth > 8:
            return None
        local = facts.get(kind, {}).get(name)
        if local is not None:
            return module, local
        imported = facts.get("imports", {}).get(name)
        if imported is None:
            return None
        if self.defer:
            raise _Deferred(name)
        spec, exported = imported
        target = self.module_path(module, spec)
        if target is None:
            return None
        return self._exported(target, exported, kind, depth + 1)

    def _exported(self, module: str, name: str, kind: str, depth: int) -> tuple[str, Any] | None:
        facts = self.modules.get(module)
        if facts is None or depth > 8:
            return None
        if name in ("*", "default"):
            local = facts.get("default")
            return self._find(module, local, kind, depth) if local else None
        local = facts.get("exported", {}).get(name)
        if local is not None:
            return self._find(module, local, kind, depth)
        again = facts.get("reexports", {}).get(name)
        if again is not None:
            target = self.module_path(module, again[0])
            return self._exported(target, again[1], kind, depth + 1) if target else None
        for spec in facts.get("stars", ()):
            target = self.module_path(module, spec)
            found = self._exported(target, name, kind, depth + 1) if target else None
            if found is not None:
                return found
        return None

    def klass(self, module: str, reference: str) -> tuple[str, dict[str, Any]] | None:
        """Return the module and model of the class a reference (``X``, ``ns.X``) names."""
        head, _, rest = reference.partition(".")
        if not rest:
            return self._find(module, head, "classes")
        facts = self.modules.get(module, {})
        imported = facts.get("imports", {}).get(head)
        if imported is None or imported[1] != "*" or "." in rest:
            return None
        if self.defer:
            raise _Deferred(head)
        target = self.module_path(module, imported[0])
        return self._exported(target, rest, "classes", 1) if target else None

    def constant(self, module: str, name: str) -> tuple[str, Any] | None:
        """Return the module and ``[ir, line]`` of a constant a module can see."""
        return self._find(module, name, "constants")


class _Expander:
    """Expands expression trees into the templates they produce.

    Args:
        resolver: Where imported names and classes are looked up.
    """

    def __init__(self, resolver: _Resolver) -> None:
        self.resolver = resolver

    def expand(self, ir: Ir, module: str, depth: int = 0) -> list[_Alt]:  # noqa: C901
        """Return the distinct values of an expression (empty: it is missing)."""
        kind = ir[0]
        if depth > _MAX_DEPTH:
            return [_Alt(((("…", True, "")),), "opaque")]
        if kind == "t":
            return [_Alt(tuple((p[0], p[1], p[2]) for p in ir[1]), ir[2])]
        if kind == "none":
            return []
        if kind == "p":
            return [_Alt(((ir[3], True, ""),), "opaque")]
        if kind == "cat":
            values: list[_Alt] = [_Alt((), ir[2])]
            if not ir[2]:
                # A suffix added to a message keeps the message's form.
                first = self.expand(ir[1][0], module, depth + 1) if ir[1] else []
                values = [_Alt((), first[0].form if first else "literal")]
            expanded = [
                self.expand(item, module, depth + 1)
                or [_Alt((("undefined", False, ""),), "literal")]
                for item in ir[1]
            ]
            if all(len(options) == 1 for options in expanded):
                # One value per operand (the usual case): join them once. Folding them one
                # by one would copy the growing parts at each step (quadratic on a long
                # generated concatenation).
                where = next((o[0].where for o in expanded if o[0].where), None)
                parts = tuple(part for options in expanded for part in options[0].parts)
                return [_Alt(parts, values[0].form, where)]
            for options in expanded:
                values = _unique(
                    _Alt(value.parts + option.parts, value.form, value.where or option.where)
                    for value in values
                    for option in options
                )
            return values
        if kind == "or":
            first = self.expand(ir[1], module, depth + 1)
            if first and not any(_is_bare_hole(value) for value in first):
                return first
            return _unique([*first, *self.expand(ir[2], module, depth + 1)])
        if kind == "alt":
            return _unique(
                value for item in ir[1] for value in self.expand(item, module, depth + 1)
            )
        if kind == "ref":
            where = (str(ir[3][0]), int(ir[3][1])) if ir[3] else None
            return _unique(
                _Alt(value.parts, ir[2] or value.form, where or value.where)
                for value in self.expand(ir[1], module, depth + 1)
            )
        if kind == "imp":
            found = self.resolver.constant(ir[2] if len(ir) > 2 else module, ir[1])
            if found is None:
                return [_Alt(((ir[1], True, ""),), "opaque")]
            owner, (value, line) = found
            return _unique(
                _Alt(alt.parts, "constant", (owner, line))
                for alt in self.expand(value, owner, depth + 1)
            )
        if kind == "obj":
            return [_Alt(((ir[2], True, ""),), "opaque")]
        if kind == "fmt":
            return self._format(ir[1], module, depth)
        return [_Alt(((json.dumps(ir)[:40], True, ""),), "opaque")]

    def _format(self, arguments: list[Ir], module: str, depth: int) -> list[_Alt]:
        """Expand ``util.format(first, …rest)`` as Node formats it."""
        if not arguments:
            return [_Alt((), "empty")]
        first, rest = arguments[0], arguments[1:]
        rest_parts = [self._argument_text(argument) for argument in rest]
        results: list[_Alt] = []
        for value in self.expand(first, module, depth + 1) or [
            _Alt((("undefined", False, ""),), "literal")
        ]:
            if _is_bare_hole(value) or not rest:
                # Not known to be a string (or nothing to format): every argument is shown,
                # space-separated (unless the first is a string holding ``%s``).
                parts = list(value.parts)
                for extra in rest_parts:
                    parts += [("", False, ""), extra]
                form = value.form if not rest else "format"
                results.append(_Alt(tuple(parts), form, value.where))
                continue
            parts = []
            remaining = list(rest_parts)
            for text, is_hole, style in value.parts:
                if is_hole:
                    parts.append((text, is_hole, style))
                    continue
                position = 0
                for directive in _FORMAT.finditer(text):
                    spec = directive.group()
                    if spec != "%%" and not remaining:
                        continue
                    parts.append((text[position : directive.start()], False, ""))
                    position = directive.end()
                    if spec == "%%":
                        parts.append(("%", False, ""))
                    elif spec == "%c":
                        remaining.pop(0)
                    else:
                        source, is_hole, _ = remaining.pop(0)
                        if is_hole or spec != "%s":
                            parts.append((source, True, spec))
                        else:  # ``%s`` prints a string literal as it is
                            parts.append((source, False, ""))
                parts.append((text[position:], False, ""))
            # A hole of the format string may itself hold ``%s`` and take an argument: after
            # one, the arguments left are not known to be appended with their spaces.
            space = "" if any(part[1] for part in value.parts) else " "
            for extra in remaining:
                parts += [(space, False, ""), extra]
            results.append(_Alt(tuple(parts), "format", value.where))
        return _unique(results)

    @staticmethod
    def _argument_text(argument: Ir) -> tuple[str, bool, str]:
        """A formatted argument: a string literal is itself, anything else a hole."""
        if _is_literal(argument):
            return (_literal_text(argument), False, "")
        if argument[0] == "t" and len(argument[1]) == 1:
            part = argument[1][0]
            return (part[0], True, "")
        if argument[0] == "p":
            return (argument[3], True, "")
        if argument[0] == "obj":
            return (argument[2], True, "")
        return ("…", True, "")

    def code(self, ir: Ir | None, module: str) -> str | None:
        """The error code an expression holds, when it holds exactly one."""
        if ir is None:
            return None
        found: set[str] = set()
        for value in self.expand(ir, module):
            parts = _merge_tuples(value.parts)
            if len(parts) != 1:
                return None
            text, is_hole, _ = parts[0]
            if is_hole:
                match = _CODE_NAME.match(text)
                if match is None:
                    return None
                text = match["name"]
            if not text or len(text) > 100 or "\n" in text:
                return None
            found.add(text)
        return found.pop() if len(found) == 1 else None

    def status(self, ir: Ir | None, module: str) -> int | None:
        """The HTTP error status an expression holds, when it holds exactly one."""
        code = self.code(ir, module)
        if code is None or not code.isdigit() or not 400 <= int(code) <= 599:
            return None
        return int(code)

    # -- error classes ------------------------------------------------------------------

    def instantiate(
        self, module: str, reference: str, arguments: list[Ir], depth: int = 0
    ) -> list[_Outcome]:
        """Return what ``new <reference>(…arguments)`` builds (several when it branches)."""
        found = self.resolver.klass(module, reference) if depth < 8 else None
        if found is None:
            return [_generic(reference.rsplit(".", 1)[-1], arguments)]
        owner, model = found
        if model.get("ctor"):
            inherited = [_substitute(ir, arguments, owner) for ir in model.get("super") or []]
        else:
            inherited = arguments
        base = model.get("base")
        if base:
            outcomes = self.instantiate(owner, base, inherited, depth + 1)
        else:
            outcomes = [_Outcome(message=_NONE, error_class=model["name"])]
        for outcome in outcomes:
            outcome.error_class = model["name"]
            if model.get("message") is not None:
                outcome.message = _substitute(model["message"], arguments, owner)
            if model.get("code") is not None:
                outcome.code = _substitute(model["code"], arguments, owner)
            if model.get("status") is not None:
                outcome.status = _substitute(model["status"], arguments, owner)
            if model.get("label"):
                outcome.label = model["label"]
        return outcomes


def _is_bare_hole(value: _Alt) -> bool:
    """Whether a value is one hole and nothing else (its type, even its presence, unknown)."""
    return len(value.parts) == 1 and value.parts[0][1]


def _unique(values: Any) -> list[_Alt]:
    """Keep the first of equal values, at most :data:`MAX_ALTERNATIVES` of them."""
    seen: set[tuple[tuple[str, bool, str], ...]] = set()
    kept: list[_Alt] = []
    for value in values:
        # Values differing only in their holes' sources print the same messages: one is kept.
        marker = tuple(
            ("", True, "") if hole else (text, False, "")
            for text, hole, _ in _merge_tuples(value.parts)
        )
        if marker in seen:
            continue
        seen.add(marker)
        kept.append(value)
        if len(kept) >= MAX_ALTERNATIVES:
            break
    return kept


def _substitute(ir: Ir, arguments: list[Ir], owner: str | None = None) -> Ir:
    """Put a call's arguments in the place of a function's (or constructor's) parameters.

    Args:
        ir: What the function builds, in terms of its parameters.
        arguments: What the call passes.
        owner: The module the function is written in, when it is not the caller's: its
            imported names are looked up there.
    """
    kind = ir[0]
    if kind == "p":
        index, props = ir[1], ir[2]
        value = arguments[index] if index < len(arguments) else _NONE
        return _member(value, props, ir[3])
    if kind == "imp" and owner is not None and len(ir) == 2:
        return ["imp", ir[1], owner]
    if kind in ("cat", "alt"):
        items = [_substitute(item, arguments, owner) for item in ir[1]]
        return [kind, items, ir[2]] if kind == "cat" else [kind, items]
    if kind == "or":
        return ["or", _substitute(ir[1], arguments, owner), _substitute(ir[2], arguments, owner)]
    if kind == "ref":
        return ["ref", _substitute(ir[1], arguments, owner), ir[2], ir[3]]
    if kind == "fmt":
        return ["fmt", [_substitute(item, arguments, owner) for item in ir[1]]]
    if kind == "obj":
        values = {k: _substitute(v, arguments, owner) for k, v in ir[1].items()}
        return ["obj", values, ir[2]]
    return ir


def _member(value: Ir, props: Sequence[str], source: str) -> Ir:
    """Return ``value.prop.prop…`` (through objects, defaults and alternatives)."""
    if not props:
        return value
    kind = value[0]
    if kind == "p":
        return ["p", value[1], [*value[2], *props], ".".join([value[3], *props])]
    if kind == "obj":
        inner = value[1].get(props[0])
        return _NONE if inner is None else _member(inner, props[1:], source)
    if kind == "none":
        return _NONE
    if kind == "or":
        return ["or", _member(value[1], props, source), _member(value[2], props, source)]
    if kind == "alt":
        return ["alt", [_member(item, props, source) for item in value[1]]]
    if kind == "ref":
        return _member(value[1], props, source)
    return _hole(source)


def _generic(name: str, arguments: list[Ir]) -> _Outcome:
    """What a class errdex does not model does: the built-in constructors, external classes.

    Built-ins take the message first (``AggregateError`` second); an unknown class is read
    the way most are written: an optional leading HTTP status, then the message or an
    options object with ``message``/``code``/``status`` properties.
    """
    options = next((a for a in arguments[1:] if a[0] == "obj"), None)
    chained = options is not None and "cause" in options[1]
    if name in BUILTIN_ERRORS:
        index = 1 if name == "AggregateError" else 0
        message = arguments[index] if index < len(arguments) else _NONE
        return _Outcome(message=message, error_class=name, chained=chained)
    position = 0
    status: Ir | None = None
    if arguments and _status_of(arguments[0]) is not None:
        status, position = arguments[0], 1
    message = arguments[position] if position < len(arguments) else _NONE
    code: Ir | None = None
    if message[0] == "obj":
        options, message = message, message[1].get("message", _NONE)
    if options is not None:
        code = options[1].get("code")
        status = status or options[1].get("status") or options[1].get("statusCode")
        chained = chained or "cause" in options[1]
    return _Outcome(message=message, error_class=name, code=code, status=status, chained=chained)


def _status_of(ir: Ir | None) -> int | None:
    if ir is None or not _is_literal(ir):
        return None
    text = _literal_text(ir)
    if text.isdigit() and 400 <= int(text) <= 599:
        return int(text)
    return None


def _code_of(ir: Ir | None) -> str | None:
    """Return the text of a literal code (a string written at the site), or None."""
    if ir is None or not _is_literal(ir):
        return None
    text = _literal_text(ir)
    return text if text and len(text) <= 100 and "\n" not in text else None


def _merge_tuples(
    parts: Sequence[tuple[str, bool, str]],
) -> tuple[tuple[str, bool, str], ...]:
    """Merge adjacent literal parts and drop empty ones (as :func:`merge`, on tuples)."""
    merged: list[tuple[str, bool, str]] = []
    for part in parts:
        if not part[1] and not part[0]:
            continue
        if merged and not part[1] and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + part[0], False, "")
        else:
            merged.append(part)
    return tuple(merged)


# -- strings -------------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}


def unescape(sequence: str) -> str:
    r"""Return the character(s) a JavaScript escape sequence stands for (``\x41`` → ``A``)."""
    body = sequence[1:]
    if not body or body[0] in "\r\n\u2028\u2029":
        return ""  # a line continuation
    first = body[0]
    try:
        if first == "x" and len(body) == 3:
            return chr(int(body[1:], 16))
        if first == "u" and body.startswith("u{"):
            return chr(int(body[2:-1], 16))
        if first == "u" and len(body) == 5:
            return chr(int(body[1:], 16))
        if first in "01234567":
            return chr(int(body, 8)) if body.isdigit() and "8" not in body else body
    except ValueError:
        return body
    return _ESCAPES.get(first, body)


def _fix_surrogates(text: str) -> str:
    r"""Join ``\ud83d\ude00``-style pairs written as two escapes."""
    if not any("\ud800" <= c <= "\udfff" for c in text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# -- the query -----------------------------------------------------------------------------


@functools.cache
def _query(grammar: str) -> Query:
    classes = " ".join(
        f"({t})" for t in _CLASS_TYPES if grammar != "javascript" or "abstract" not in t
    )
    source = f"""
        [{" ".join(f"({t})" for t in _SCOPE_TYPES)}] @scope
        [{classes}] @class
        (new_expression) @new
        (call_expression) @call
        (variable_declarator) @declarator
        (assignment_expression) @assign
        (augmented_assignment_expression) @augment
        (import_statement) @import
        (export_statement) @export
    """
    return compiled_query(grammar, source)


def _unwrap(node: Node) -> Node:
    while node.type in _WRAPPERS:
        inner = node.named_children
        if not inner:
            break
        node = inner[-1] if node.type == "type_assertion" else inner[0]
    return node


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    if arguments is None or arguments.type != "arguments":
        return []
    return [a for a in arguments.named_children if a.type != "comment"]


def _statement(node: Node) -> Node:
    """The statement an expression is part of (the node itself at most 3 levels up)."""
    current = node
    for _ in range(4):
        parent = current.parent
        if parent is None:
            break
        if current.type.endswith(("_statement", "_declaration")):
            return current
        if parent.type in _BLOCKS:
            return current
        current = parent
    return node


@dataclass
class _Assignment:
    """A value given to a name: ``const x = …``, ``x = …``, ``x += …`` or ``err.code = …``."""

    scope: int
    start: int
    operator: str
    value: Node | None
    node: Node
    block: Node | None


@dataclass
class _Site:
    """A site read from the tree, waiting to be expanded into records."""

    node: Node
    plan: dict[str, Any]
    scope: int
    message: Node | None = None
    factory: str | None = None


@dataclass
class _FileReader:
    """Reads one file's tree: its scopes, assignments, classes, imports and sites."""

    context: FileContext
    root: Node
    grammar: str
    scope_nodes: list[Node] = field(default_factory=list)
    scope_starts: list[int] = field(default_factory=list)
    scope_ends: list[int] = field(default_factory=list)
    scope_parents: list[int] = field(default_factory=list)
    scope_index: dict[int, int] = field(default_factory=dict)
    _raw: dict[str, list[tuple[str, Node, Node | None]]] = field(default_factory=dict)
    _assignments: dict[str, list[_Assignment]] = field(default_factory=dict)
    imports: dict[str, list[str]] = field(default_factory=dict)
    exported: dict[str, str] = field(default_factory=dict)
    reexports: dict[str, list[str]] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    default: str | None = None
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)
    constants: dict[str, list[Any]] = field(default_factory=dict)
    error_names: set[str] = field(default_factory=set)
    module_bindings: dict[str, str] = field(default_factory=dict)
    super_calls: dict[int, Node] = field(default_factory=dict)
    sites: list[_Site] = field(default_factory=list)
    calls: list[tuple[str, Node]] = field(default_factory=list)
    _params: dict[int, dict[str, tuple[int, list[str]]]] = field(default_factory=dict)
    _names: dict[int, str] = field(default_factory=dict)
    _resolving: set[tuple[str, int, int]] = field(default_factory=set)
    _functions: dict[str, int] | None = None
    _building: set[int] = field(default_factory=set)

    # -- reading ---------------------------------------------------------------------------

    def read(self) -> None:
        """Run the query once and read every capture."""
        from tree_sitter import QueryCursor

        captures = QueryCursor(_query(self.grammar)).captures(self.root)
        self._read_scopes(captures.get("scope", []))
        for node in captures.get("import", []):
            self._read_import(node)
        for node in captures.get("declarator", []):
            self._read_declarator(node)
        for name in ("assign", "augment"):
            for node in captures.get(name, []):
                self._read_assignment(node)
        for node in captures.get("export", []):
            self._read_export(node)
        calls: list[tuple[Node, Node]] = []
        for node in captures.get("call", []):
            function = node.child_by_field_name("function")
            if function is None:
                continue
            calls.append((node, function))
            if function.type == "super" or self._is_base_call(function, node):
                self.super_calls.setdefault(self.enclosing(node), node)
        for node in captures.get("class", []):
            self._read_class(node)
        for index, node in enumerate(self.scope_nodes):
            self._read_function_class(index, node)
        self._settle_error_names()
        for node in captures.get("new", []):
            self._read_new(node)
        for node, function in calls:
            self._read_call(node, function)
        self._read_helper_calls()

    def _read_scopes(self, nodes: list[Node]) -> None:
        nodes = sorted(nodes, key=lambda n: (n.start_byte, -n.end_byte))
        stack: list[int] = []
        for index, node in enumerate(nodes):
            while stack and self.scope_ends[stack[-1]] < node.end_byte:
                stack.pop()
            self.scope_nodes.append(node)
            self.scope_starts.append(node.start_byte)
            self.scope_ends.append(node.end_byte)
            self.scope_parents.append(stack[-1] if stack else -1)
            self.scope_index[node.id] = index
            stack.append(index)

    def enclosing(self, node: Node) -> int:
        """Return the index of the innermost function around a node (-1: module level)."""
        index = bisect_right(self.scope_starts, node.start_byte) - 1
        while index >= 0 and (
            self.scope_ends[index] < node.end_byte or self.scope_nodes[index].id == node.id
        ):
            index = self.scope_parents[index]
        return index

    def text(self, node: Node) -> str:
        return self.context.text(node)

    def _read_import(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        if source is None:
            return
        spec = self._string(source)
        if spec is None:
            return
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for child in clause.named_children:
                if child.type == "identifier":
                    self._bind_import(self.text(child), spec, "default")
                elif child.type == "namespace_import":
                    names = [c for c in child.named_children if c.type == "identifier"]
                    if names:
                        self._bind_import(self.text(names[-1]), spec, "*")
                elif child.type == "named_imports":
                    for specifier in child.named_children:
                        if specifier.type != "import_specifier":
                            continue
                        name = specifier.child_by_field_name("name")
                        alias = specifier.child_by_field_name("alias") or name
                        if name is not None and alias is not None:
                            self._bind_import(self.text(alias), spec, self.text(name))

    def _bind_import(self, local: str, spec: str, name: str) -> None:
        self.imports[local] = [spec, name]
        if spec in _HTTP_ERROR_MODULES and name in ("*", "default"):
            self.module_bindings[local] = "http-errors"
        elif spec in ("assert", "node:assert", "assert/strict", "node:assert/strict"):
            if name in ("*", "default", "strict", "ok"):
                self.module_bindings[local] = "assert"
        elif spec in ("util", "node:util") and name in ("format", "deprecate", "*", "default"):
            self.module_bindings[local] = "util" if name in ("*", "default") else f"util.{name}"
        elif spec == "depd" and name in ("*", "default"):
            self.module_bindings[local] = "depd"

    def _require(self, node: Node | None) -> str | None:
        """The module a ``require('…')`` call names."""
        if node is None or node.type != "call_expression":
            return None
        function = node.child_by_field_name("function")
        if function is None or function.type != "identifier" or self.text(function) != "require":
            return None
        arguments = _arguments(node)
        return self._string(arguments[0]) if arguments else None

    def _read_declarator(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        value_node = _unwrap(value) if value is not None else None
        spec = self._require(value_node)
        if spec is None and value_node is not None and value_node.type == "member_expression":
            inner = value_node.child_by_field_name("object")
            spec = self._require(inner)
            prop = value_node.child_by_field_name("property")
            if spec is not None and name.type == "identifier" and prop is not None:
                self._bind_import(self.text(name), spec, self.text(prop))
                return
        if spec is not None and self.enclosing(node) == -1:
            if name.type == "identifier":
                self._bind_import(self.text(name), spec, "*")
            elif name.type == "object_pattern":
                for local, key in self._pattern_names(name):
                    self._bind_import(local, spec, key)
            return
        if (
            value_node is not None
            and value_node.type == "call_expression"
            and self._require(value_node.child_by_field_name("function")) == "depd"
            and name.type == "identifier"
        ):
            self.module_bindings[self.text(name)] = "depd-deprecate"
            return
        if name.type != "identifier":
            return
        text = self.text(name)
        self._raw.setdefault(text, []).append(("decl", node, value))
        if (
            value_node is not None
            and value_node.type == "identifier"
            and self.text(value_node) in self.module_bindings
        ):
            self.module_bindings[text] = self.module_bindings[self.text(value_node)]

    def _pattern_names(self, pattern: Node) -> Iterator[tuple[str, str]]:
        """The (local, key) names an object pattern binds (``{a, b: c}`` → a/a, c/b)."""
        for child in pattern.named_children:
            if child.type == "shorthand_property_identifier_pattern":
                yield self.text(child), self.text(child)
            elif child.type == "pair_pattern":
                key = child.child_by_field_name("key")
                value = child.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier":
                    yield self.text(value), self.text(key)
            elif child.type == "object_assignment_pattern":
                left = child.child_by_field_name("left")
                if left is not None and left.type == "shorthand_property_identifier_pattern":
                    yield self.text(left), self.text(left)

    def assignments(self, name: str) -> list[_Assignment]:
        """The assignments of a name (read when first asked for: most are never needed)."""
        found = self._assignments.get(name)
        if found is not None:
            return found
        found = []
        for operator, node, value in self._raw.get(name, ()):
            if operator == "decl":
                statement = node.parent
                block = statement.parent if statement is not None else None
            else:
                parent = node.parent
                block = (
                    parent.parent
                    if parent is not None and parent.type == "expression_statement"
                    else None
                )
            found.append(
                _Assignment(
                    scope=self.enclosing(node),
                    start=node.start_byte,
                    operator=operator,
                    value=value,
                    node=node,
                    block=block,
                )
            )
        self._assignments[name] = found
        return found

    def _read_assignment(self, node: Node) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        if left is None:
            return
        left = _unwrap(left)
        operator = "="
        if node.type == "augmented_assignment_expression":
            op = node.child_by_field_name("operator")
            operator = op.type if op is not None else "?="
            if operator != "+=":
                return
        name: str | None = None
        if left.type == "identifier":
            name = self.text(left)
        elif left.type == "member_expression":
            name = self._member_name(left)
            if name is not None and name.startswith(("module.exports", "exports")):
                self._read_commonjs_export(name, right, self.enclosing(node))
        if name is None:
            return
        self._raw.setdefault(name, []).append((operator, node, right))

    def _member_name(self, node: Node) -> str | None:
        """``a.b.c`` for a member chain of plain names (``this`` included), else None."""
        names: list[str] = []
        current: Node | None = node
        while current is not None and current.type == "member_expression":
            prop = current.child_by_field_name("property")
            if prop is None or prop.type not in (
                "property_identifier",
                "private_property_identifier",
            ):
                return None
            names.append(self.text(prop))
            current = current.child_by_field_name("object")
            if current is not None:
                current = _unwrap(current)
        if current is None or current.type not in ("identifier", "this"):
            return None
        names.append(self.text(current))
        return ".".join(reversed(names))

    def _read_commonjs_export(self, name: str, right: Node | None, scope: int) -> None:
        if scope != -1 or right is None:
            return
        value = _unwrap(right)
        if name in ("module.exports", "exports"):
            if value.type == "identifier":
                self.default = self.text(value)
            elif value.type in ("class", "function_expression") and value.child_by_field_name(
                "name"
            ):
                self.default = self.text(value.child_by_field_name("name"))  # type: ignore[arg-type]
            elif value.type == "object":
                for child in value.named_children:
                    if child.type == "shorthand_property_identifier":
                        self.exported[self.text(child)] = self.text(child)
                    elif child.type == "pair":
                        key = child.child_by_field_name("key")
                        inner = child.child_by_field_name("value")
                        if key is not None and inner is not None and inner.type == "identifier":
                            self.exported[self.text(key).strip("'\"")] = self.text(inner)
            return
        for prefix in ("module.exports.", "exports."):
            if name.startswith(prefix) and "." not in name[len(prefix) :]:
                exported = name[len(prefix) :]
                if value.type == "identifier":
                    self.exported[exported] = self.text(value)
                elif value.type == "class":
                    self.exported[exported] = exported
                elif value.type in ("string", "template_string", "binary_expression"):
                    self.exported[exported] = exported
                    self.constants.setdefault(exported, [None, self.context.line(right), right])

    def _read_export(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        spec = self._string(source) if source is not None else None
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        is_default = any(c.type == "default" for c in node.children)
        if declaration is not None:
            for name in self._declared_names(declaration):
                self.exported[name] = name
                if is_default:
                    self.default = name
            return
        if is_default and value is not None:
            value = _unwrap(value)
            if value.type == "identifier":
                self.default = self.text(value)
            return
        for child in node.named_children:
            if child.type == "export_clause":
                for specifier in child.named_children:
                    if specifier.type != "export_specifier":
                        continue
                    original = specifier.child_by_field_name("name")
                    alias = specifier.child_by_field_name("alias") or original
                    if original is None or alias is None:
                        continue
                    if spec is not None:
                        self.reexports[self.text(alias)] = [spec, self.text(original)]
                    else:
                        self.exported[self.text(alias)] = self.text(original)
                return
        if spec is not None:
            self.stars.append(spec)

    def _declared_names(self, declaration: Node) -> list[str]:
        if declaration.type in ("lexical_declaration", "variable_declaration"):
            names = []
            for child in declaration.named_children:
                name = (
                    child.child_by_field_name("name")
                    if child.type == "variable_declarator"
                    else None
                )
                if name is not None and name.type == "identifier":
                    names.append(self.text(name))
            return names
        name = declaration.child_by_field_name("name")
        return [self.text(name)] if name is not None else []

    # -- names and strings ----------------------------------------------------------------

    def _string(self, node: Node) -> str | None:
        """The value of a string literal, or None."""
        node = _unwrap(node)
        if node.type != "string":
            return None
        pieces: list[str] = []
        position = node.start_byte + 1
        end = node.end_byte - 1
        for child in node.named_children:
            if child.start_byte > position:
                pieces.append(
                    self.context.data[position : child.start_byte].decode("utf-8", "replace")
                )
            if child.type == "escape_sequence":
                pieces.append(unescape(self.text(child)))
            elif child.type == "html_character_reference":
                pieces.append(self.text(child))
            else:
                pieces.append(self.text(child))
            position = child.end_byte
        if end > position:
            pieces.append(self.context.data[position:end].decode("utf-8", "replace"))
        return _fix_surrogates("".join(pieces))

    def params(self, scope: int) -> dict[str, tuple[int, list[str]]]:
        """The parameters of a function: name → (position, property path)."""
        if scope < 0:
            return {}
        found = self._params.get(scope)
        if found is not None:
            return found
        node = self.scope_nodes[scope]
        found = {}
        single = node.child_by_field_name("parameter")
        if single is not None:
            found[self.text(single)] = (0, [])
        parameters = node.child_by_field_name("parameters")
        if parameters is not None:
            position = 0
            for child in parameters.named_children:
                if child.type in ("comment", "decorator"):
                    continue
                self._bind_parameter(child, position, found)
                position += 1
        self._params[scope] = found
        return found

    def defaults(self, scope: int) -> dict[str, Node]:
        """Default values of a function's parameters (``x = 'a'``), by name."""
        if scope < 0:
            return {}
        parameters = self.scope_nodes[scope].child_by_field_name("parameters")
        values: dict[str, Node] = {}
        for child in parameters.named_children if parameters is not None else ():
            left = child.child_by_field_name("left") or child.child_by_field_name("pattern")
            right = child.child_by_field_name("right") or child.child_by_field_name("value")
            if left is not None and right is not None and left.type == "identifier":
                values[self.text(left)] = right
        return values

    def _bind_parameter(
        self, node: Node, position: int, found: dict[str, tuple[int, list[str]]]
    ) -> None:
        if node.type in ("required_parameter", "optional_parameter"):
            pattern = node.child_by_field_name("pattern")
            if pattern is not None:
                self._bind_parameter(pattern, position, found)
            return
        if node.type == "identifier":
            found[self.text(node)] = (position, [])
        elif node.type == "assignment_pattern":
            left = node.child_by_field_name("left")
            if left is not None:
                self._bind_parameter(left, position, found)
        elif node.type == "object_pattern":
            for local, key in self._pattern_names(node):
                found[local] = (position, [key])
        elif node.type == "rest_pattern":
            found[self.text(node).lstrip(".")] = (position, [])

    def scope(self, index: int) -> Scope | None:
        """The :class:`Scope` of a function index (None at module level)."""
        if index < 0:
            return None
        node = self.scope_nodes[index]
        return Scope(
            name=self.function_name(index),
            start=self.context.line(node),
            end=self.context.end_line(node),
        )

    def function_name(self, index: int) -> str:
        """Name a function as V8 stack traces do (``Command.parse``, ``new Foo``)."""
        found = self._names.get(index)
        if found is not None:
            return found
        node = self.scope_nodes[index]
        name = node.child_by_field_name("name")
        parent = node.parent
        if node.type == "method_definition":
            method = self.text(name) if name is not None else "<anonymous>"
            owner = parent.parent if parent is not None and parent.type == "class_body" else None
            klass = self._class_name(owner) if owner is not None else None
            if klass and method == "constructor":
                result = f"new {klass}"
            else:
                result = f"{klass}.{method}" if klass else method
        elif name is not None:
            result = self.text(name)
        elif parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            result = self.text(target) if target is not None else "<anonymous>"
        elif parent is not None and parent.type == "assignment_expression":
            target = parent.child_by_field_name("left")
            result = (
                self.text(target).replace(".prototype.", ".").removeprefix("this.")
                if target is not None
                else "<anonymous>"
            )
        elif parent is not None and parent.type == "pair":
            key = parent.child_by_field_name("key")
            result = self.text(key).strip("'\"") if key is not None else "<anonymous>"
        else:
            result = "<anonymous>"
        self._names[index] = result
        return result

    def _class_name(self, node: Node) -> str | None:
        name = node.child_by_field_name("name")
        if name is not None:
            return self.text(name)
        parent = node.parent
        while parent is not None and parent.type in _WRAPPERS:
            parent = parent.parent
        if parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            return self.text(target) if target is not None else None
        if parent is not None and parent.type == "assignment_expression":
            target = parent.child_by_field_name("left")
            return self.text(target).rsplit(".", 1)[-1] if target is not None else None
        return None

    # -- expressions ------------------------------------------------------------------------

    def ir(self, node: Node | None, scope: int, depth: int = 0) -> Ir:  # noqa: C901
        """Read an expression into the expression tree (node kinds above :func:`_literal`)."""
        if node is None:
            return _NONE
        node = _unwrap(node)
        kind = node.type
        if depth > _MAX_DEPTH:
            return _hole(self.text(node))
        if kind == "string":
            return _literal(self._string(node) or "")
        if kind == "template_string":
            return self._template(node, scope, depth)
        if kind == "binary_expression":
            operator = node.child_by_field_name("operator")
            op = operator.type if operator is not None else ""
            if op == "+":
                return self._concat(node, scope, depth)
            if op in ("??", "||"):
                return [
                    "or",
                    self.ir(node.child_by_field_name("left"), scope, depth + 1),
                    self.ir(node.child_by_field_name("right"), scope, depth + 1),
                ]
            return _hole(self.text(node))
        if kind == "ternary_expression":
            return self._ternary(node, scope, depth)
        if kind in ("identifier", "shorthand_property_identifier"):
            return self._name(self.text(node), node, scope, depth)
        if kind in ("null", "undefined"):
            return _NONE
        if kind in ("number", "true", "false"):
            return _literal(self.text(node))
        if kind in ("member_expression", "subscript_expression"):
            return self._member_ir(node, scope, depth)
        if kind == "object":
            return self._object(node, scope, depth)
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and self._callee_binding(function) in ("util.format", "format"):
                return ["fmt", [self.ir(a, scope, depth + 1) for a in _arguments(node)]]
            if function is not None and function.type == "identifier":
                built = self._message_function(self.text(function), depth)
                if built is not None:
                    values = [self.ir(a, scope, depth + 1) for a in _arguments(node)]
                    return ["ref", _substitute(built, values), "", None]
        return _hole(self.text(node))

    def _message_function(self, name: str, depth: int) -> Ir | None:
        """What a local function that returns a message returns, in terms of its parameters.

        ``function formatMessage(opt, desc) { return '[v1] option ' + opt + desc }`` (or an
        arrow function with that body): its calls are read as the text it builds.
        """
        if self._functions is None:
            self._functions = {}
            for index, node in enumerate(self.scope_nodes):
                if node.type in ("function_declaration", "arrow_function", "function_expression"):
                    called = self.function_name(index)
                    if called[:1] != "<" and "." not in called:
                        self._functions.setdefault(called, index)
        found = self._functions.get(name)
        if found is None or found in self._building:
            return None
        index = found
        body = self.scope_nodes[index].child_by_field_name("body")
        if body is not None and body.type == "statement_block":
            statements = [c for c in body.named_children if c.type != "comment"]
            if len(statements) != 1 or statements[0].type != "return_statement":
                return None
            returned = [c for c in statements[0].named_children if c.type != "comment"]
            body = returned[0] if returned else None
        if body is None:
            return None
        self._building.add(index)
        try:
            built = self.ir(body, index, depth + 1)
        finally:
            self._building.discard(index)
        return built if built[0] in ("cat", "fmt") or _is_literal(built) else None

    def _callee_binding(self, function: Node) -> str | None:
        """What a callee is bound to (``util.format``, ``assert``, ``http-errors`` …)."""
        if function.type == "identifier":
            return self.module_bindings.get(self.text(function))
        if function.type == "member_expression":
            name = self._member_name(function)
            if name is None:
                return None
            head, _, rest = name.partition(".")
            bound = self.module_bindings.get(head)
            if bound is not None and rest:
                return f"{bound}.{rest}"
            return name
        return None

    def _template(self, node: Node, scope: int, depth: int) -> Ir:
        items: list[Ir] = []
        position = node.start_byte + 1
        data = self.context.data
        holes = False
        for child in node.named_children:
            if child.start_byte > position:
                items.append(_literal(_raw(data[position : child.start_byte])))
            if child.type == "escape_sequence":
                items.append(_literal(unescape(self.text(child))))
            elif child.type == "template_substitution":
                inner = [c for c in child.named_children if c.type != "comment"]
                items.append(self._operand(inner[0], scope, depth) if inner else _literal(""))
                holes = True
            elif child.type == "string_fragment":
                items.append(_literal(_raw(data[child.start_byte : child.end_byte])))
            position = child.end_byte
        if node.end_byte - 1 > position:
            items.append(_literal(_raw(data[position : node.end_byte - 1])))
        if not holes:
            return _literal(_fix_surrogates("".join(_literal_text(item) for item in items)))
        return ["cat", items, "template"]

    def _operand(self, node: Node, scope: int, depth: int) -> Ir:
        """A value put in a template or concatenation: a literal, a parameter, or a hole."""
        node = _unwrap(node)
        if node.type in ("string", "template_string") or (
            node.type == "binary_expression"
            and (op := node.child_by_field_name("operator")) is not None
            and op.type == "+"
        ):
            value = self.ir(node, scope, depth + 1)
            if value[0] in ("t", "cat"):
                return value
        if node.type in ("identifier", "member_expression"):
            value = self.ir(node, scope, depth + 1)
            if value[0] == "p" or (value[0] == "or" and value[1][0] == "p"):
                return value
            if value[0] == "ref" and _is_literal(value[1]):
                inner: Ir = value[1]
                return inner
        if node.type == "call_expression":
            value = self.ir(node, scope, depth + 1)
            if value[0] in ("ref", "fmt"):
                return value
        return _hole(self.text(node))

    def _concat(self, node: Node, scope: int, depth: int) -> Ir:
        operands: list[Node] = []
        stack = [node]
        while stack and len(operands) <= MAX_OPERANDS:
            current = _unwrap(stack.pop())
            operator = (
                current.child_by_field_name("operator")
                if current.type == "binary_expression"
                else None
            )
            # (Never ask a node for its ``parent`` here: tree-sitter finds it by walking down
            # from the root, which made long generated concatenations quadratic.)
            if operator is not None and operator.type == "+":
                right = current.child_by_field_name("right")
                left = current.child_by_field_name("left")
                if left is not None and right is not None:
                    stack += [right, left]
                    continue
            operands.append(current)
        if len(operands) > MAX_OPERANDS or not any(
            o.type in ("string", "template_string") for o in operands
        ):
            return _hole(self.text(node))
        items: list[Ir] = []
        for operand in operands:
            value = self._operand(operand, scope, depth)
            items.extend(value[1] if value[0] == "cat" else [value])
        return ["cat", items, "concat"]

    def _ternary(self, node: Node, scope: int, depth: int) -> Ir:
        condition = node.child_by_field_name("condition")
        yes = node.child_by_field_name("consequence")
        no = node.child_by_field_name("alternative")
        tested = self._nullish_test(condition)
        if tested is not None and yes is not None and no is not None:
            # ``m == null ? 'default' : m`` and ``m ? m : 'default'``: a default value
            name, missing_first = tested
            value, fallback = (no, yes) if missing_first else (yes, no)
            if self.text(_unwrap(value)) == name:
                return ["or", self.ir(value, scope, depth + 1), self.ir(fallback, scope, depth + 1)]
        return ["alt", [self.ir(yes, scope, depth + 1), self.ir(no, scope, depth + 1)]]

    def _nullish_test(self, condition: Node | None) -> tuple[str, bool] | None:
        """``(name, True)`` for ``name == null``/``!name``; ``(name, False)`` for ``name``."""
        if condition is None:
            return None
        condition = _unwrap(condition)
        if condition.type in ("identifier", "member_expression"):
            return self.text(condition), False
        if condition.type == "unary_expression" and self.text(condition).startswith("!"):
            inner = condition.child_by_field_name("argument")
            return (self.text(_unwrap(inner)), True) if inner is not None else None
        if condition.type == "binary_expression":
            operator = condition.child_by_field_name("operator")
            right = condition.child_by_field_name("right")
            left = condition.child_by_field_name("left")
            if (
                operator is not None
                and operator.type in ("==", "===")
                and right is not None
                and left is not None
                and self.text(right) in ("null", "undefined")
            ):
                return self.text(_unwrap(left)), True
        return None

    def _object(self, node: Node, scope: int, depth: int) -> Ir:
        values: dict[str, Ir] = {}
        for child in node.named_children:
            if child.type == "pair":
                key = child.child_by_field_name("key")
                if key is None or key.type == "computed_property_name":
                    continue
                name = self._string(key) if key.type == "string" else self.text(key)
                if name is not None:
                    values[name] = self.ir(child.child_by_field_name("value"), scope, depth + 1)
            elif child.type == "shorthand_property_identifier":
                values[self.text(child)] = self.ir(child, scope, depth + 1)
        return ["obj", values, self.text(node)]

    def _member_ir(self, node: Node, scope: int, depth: int) -> Ir:
        props: list[str] = []
        current = node
        while current.type in ("member_expression", "subscript_expression"):
            if current.type == "member_expression":
                prop = current.child_by_field_name("property")
                if prop is None:
                    return _hole(self.text(node))
                props.append(self.text(prop))
            else:
                index = current.child_by_field_name("index")
                key = self._string(index) if index is not None else None
                if key is None:
                    return _hole(self.text(node))
                props.append(key)
            inner = current.child_by_field_name("object")
            if inner is None:
                return _hole(self.text(node))
            current = _unwrap(inner)
        if current.type != "identifier":
            return _hole(self.text(node))
        base = self._name(self.text(current), current, scope, depth)
        if base[0] in ("imp",) or (base[0] == "t" and not _is_literal(base)):
            return _hole(self.text(node))
        return _member(base, list(reversed(props)), self.text(node))

    def _name(self, name: str, node: Node, scope: int, depth: int) -> Ir:
        """Resolve a name: a parameter, a variable assigned earlier, a constant, an import."""
        if name == "undefined":
            return _NONE
        current = scope
        while True:
            entries = [a for a in self.assignments(name) if a.scope == current]
            if current == scope:
                entries = [a for a in entries if a.start < node.start_byte]
            params = self.params(current)
            if name in params and current == scope:
                reassigned = [a for a in entries if a.operator != "decl"]
                position, props = params[name]
                initial: Ir = ["p", position, props, name]
                default = self.defaults(current).get(name)
                if default is not None:
                    initial = ["or", initial, self.ir(default, current, depth + 1)]
                if not reassigned:
                    return initial
                return self._flow(name, reassigned, node, current, depth, initial)
            if name in params:
                return _hole(name)
            if entries:
                key = (name, current, node.start_byte)
                if key in self._resolving:
                    return _hole(name)
                self._resolving.add(key)
                try:
                    value = self._flow(name, entries, node, current, depth, None)
                finally:
                    self._resolving.discard(key)
                if current == -1:
                    where = [self.context.path, self.context.line(entries[0].node)]
                    return ["ref", value, "constant", where]
                return ["ref", value, "variable", None]
            if current == -1:
                break
            current = self.scope_parents[current]
        if name in self.imports:
            return ["imp", name]
        return _hole(name)

    def _flow(
        self,
        name: str,
        entries: list[_Assignment],
        use: Node,
        scope: int,
        depth: int,
        initial: Ir | None,
    ) -> Ir:
        """The values a name can hold at a use, from its assignments before it.

        An assignment in a block that also holds the use replaces what came before; one in
        another branch adds an alternative. ``+=`` appends to every value so far.
        """
        values: list[Ir] = [initial] if initial is not None else []
        for entry in sorted(entries, key=lambda a: a.start):
            on_path = (
                entry.block is not None
                and entry.block.type in _BLOCKS
                and entry.block.start_byte <= use.start_byte < entry.block.end_byte
            )
            if entry.operator == "decl" and entry.value is None:
                if on_path:
                    values = []
                continue
            value = self.ir(entry.value, entry.scope, depth + 1)
            if entry.operator == "+=":
                grown = [["cat", [v, value], "concat"] for v in values] or [value]
                values = grown if on_path else values + grown
            else:
                values = [value] if on_path else [*values, value]
            values = values[-MAX_ALTERNATIVES:]
        if not values:
            return _hole(name)
        return values[0] if len(values) == 1 else ["alt", values]

    # -- classes ---------------------------------------------------------------------------

    def _is_base_call(self, function: Node, call: Node) -> bool:
        """``Base.call(this, …)``: a function constructor's super call."""
        if function.type != "member_expression":
            return False
        prop = function.child_by_field_name("property")
        if prop is None or self.text(prop) != "call":
            return False
        arguments = _arguments(call)
        return bool(arguments) and arguments[0].type == "this"

    def _read_class(self, node: Node) -> None:
        name = self._class_name(node)
        if not name or name in self.classes:
            return
        base: str | None = None
        for child in node.named_children:
            if child.type != "class_heritage":
                continue
            value = child.named_children[0] if child.named_children else None
            if value is not None and value.type == "extends_clause":
                value = value.child_by_field_name("value")
            if value is not None and value.type in ("identifier", "member_expression"):
                base = self.text(value)
        model: dict[str, Any] = {"name": name, "base": base, "line": self.context.line(node)}
        body = node.child_by_field_name("body")
        constructor = None
        for member in body.named_children if body is not None else ():
            if member.type == "method_definition":
                method = member.child_by_field_name("name")
                if method is not None and self.text(method) == "constructor":
                    constructor = member
            elif member.type in ("field_definition", "public_field_definition"):
                self._read_field(member, model)
        if constructor is not None:
            self._read_constructor(self.scope_index.get(constructor.id, -1), model, base)
        self.classes[name] = model

    def _read_field(self, member: Node, model: dict[str, Any]) -> None:
        key = member.child_by_field_name("property") or member.child_by_field_name("name")
        value = member.child_by_field_name("value")
        if key is None or value is None or any(c.type == "static" for c in member.children):
            return
        slot = {
            "message": "message",
            "code": "code",
            "status": "status",
            "statusCode": "status",
            "name": "label",
        }.get(self.text(key))
        if slot is None:
            return
        ir = self.ir(value, -1)
        if slot == "label":
            if _is_literal(ir):
                model["label"] = _literal_text(ir)
        else:
            model[slot] = _mark_class(ir)

    def _read_constructor(self, scope: int, model: dict[str, Any], base: str | None) -> None:
        """Read what a constructor sets: super's arguments, message, code, status, name."""
        if scope < 0:
            return
        model["ctor"] = True
        model["params"] = list(self.params(scope))
        call = self.super_calls.get(scope)
        if call is not None:
            arguments = _arguments(call)
            function = call.child_by_field_name("function")
            if function is not None and self._is_base_call(function, call):
                arguments = arguments[1:]
            model["super"] = [_mark_class(self.ir(a, scope)) for a in arguments]
        elif base is None:
            model["super"] = []
        slots = {
            "message": "message",
            "code": "code",
            "status": "status",
            "statusCode": "status",
            "name": "label",
        }
        for prop, slot in slots.items():
            entries = [a for a in self.assignments(f"this.{prop}") if a.scope == scope]
            if not entries:
                continue
            value = self.ir(entries[-1].value, scope)
            if slot == "label":
                if _is_literal(value):
                    model["label"] = _literal_text(value)
            else:
                model[slot] = _mark_class(value)

    def _read_function_class(self, index: int, node: Node) -> None:
        """Model a function constructor (``function XError(m) { Base.call(this, m) }``)."""
        if node.type not in ("function_declaration", "function_expression"):
            return
        name_node = node.child_by_field_name("name")
        parent = node.parent
        if name_node is None and parent is not None and parent.type == "variable_declarator":
            name_node = parent.child_by_field_name("name")
        if name_node is None:
            return
        name = self.text(name_node)
        if not name[:1].isupper() or name in self.classes:
            return
        call = self.super_calls.get(index)
        base = None
        if call is not None:
            function = call.child_by_field_name("function")
            target = function.child_by_field_name("object") if function is not None else None
            base = self.text(target) if target is not None else None
        sets_message = any(a.scope == index for a in self.assignments("this.message"))
        if base is None and not sets_message:
            return
        model: dict[str, Any] = {"name": name, "base": base, "line": self.context.line(node)}
        self._read_constructor(index, model, base)
        if base is None:
            model["base"] = None
        self.classes[name] = model

    def _settle_error_names(self) -> None:
        """Decide which of the file's classes are errors (their bases lead to one)."""
        changed = True
        while changed:
            changed = False
            for name, model in self.classes.items():
                if name in self.error_names:
                    continue
                base = model.get("base") or ""
                if (
                    _is_error_name(name)
                    or _is_error_name(base.rsplit(".", 1)[-1])
                    or base in self.error_names
                    or model.get("message") is not None
                ):
                    self.error_names.add(name)
                    changed = True

    def is_error_class(self, reference: str) -> bool:
        """Whether a constructor reference names an error class."""
        last = reference.rsplit(".", 1)[-1]
        return _is_error_name(last) or reference in self.error_names

    # -- sites -------------------------------------------------------------------------------

    def _context(self, node: Node) -> tuple[Node, bool, Node | None, Node | None]:
        """Where an error object goes: (site node, handed on?, variable, Object.assign props).

        The site node is the statement or call that throws or hands the error on (its first
        line is the record's line); the variable is the name the error is stored in
        (``const err = new Error(…)``), whose later ``err.code = …`` count.
        """
        current = node
        parent = current.parent
        props: Node | None = None
        while parent is not None:
            if (
                parent.type in _WRAPPERS
                or parent.type == "ternary_expression"
                or (parent.type == "binary_expression" and _operator(parent) in ("||", "??", "&&"))
            ):
                current, parent = parent, parent.parent
                continue
            break
        if parent is None:
            return node, False, None, None
        if parent.type == "throw_statement":
            return parent, True, None, props
        if parent.type == "arguments" and parent.parent is not None:
            call = parent.parent
            function = call.child_by_field_name("function")
            callee = self.text(function) if function is not None else ""
            arguments = _arguments(call)
            if callee == "Object.assign" and arguments and arguments[0].id == current.id:
                site, handed, variable, _ = self._context(call)
                return site, handed, variable, arguments[1] if len(arguments) > 1 else None
            method = callee.rsplit(".", 1)[-1]
            is_method = function is not None and function.type == "member_expression"
            handed = (
                callee in _PASSING_CALLEES
                or (is_method and method in _PASSING_METHODS)
                or (function is not None and self._callee_binding(function) == "assert")
            )
            return (_statement(call) if handed else call), handed, None, props
        if parent.type == "variable_declarator":
            name = parent.child_by_field_name("name")
            statement = parent.parent if parent.parent is not None else parent
            return (
                statement,
                False,
                name if name is not None and name.type == "identifier" else None,
                props,
            )
        if parent.type == "assignment_expression":
            left = parent.child_by_field_name("left")
            statement = _statement(parent)
            return (
                statement,
                False,
                left if left is not None and left.type == "identifier" else None,
                props,
            )
        if parent.type == "return_statement":
            return parent, False, None, props
        return node, False, None, props

    def _read_new(self, node: Node) -> None:
        constructor = node.child_by_field_name("constructor")
        if constructor is None:
            return
        constructor = _unwrap(constructor)
        if constructor.type not in ("identifier", "member_expression"):
            return
        reference = self.text(constructor)
        parent = node.parent
        while parent is not None and parent.type in _WRAPPERS:
            parent = parent.parent
        if parent is not None and parent.type == "member_expression":
            return  # ``new Error().stack``: not an error raised
        head = reference.split(".", 1)[0]
        if self.module_bindings.get(head) == "http-errors" and "." in reference:
            self._http_error(node, node, reference.split(".", 1)[1])
            return
        self._error_site(node, reference, _arguments(node))

    def _error_site(self, node: Node, reference: str, arguments: list[Node]) -> None:
        site_node, handed, variable, props = self._context(node)
        if not handed and not self.is_error_class(reference):
            return
        scope = self.enclosing(node)
        extra: dict[str, Any] = {}
        if variable is not None:
            name = self.text(variable)
            for key, slot in (
                ("message", "message"),
                ("code", "code"),
                ("status", "status"),
                ("statusCode", "status"),
                ("name", "label"),
            ):
                entries = [
                    a
                    for a in self.assignments(f"{name}.{key}")
                    if a.scope == scope and a.start > node.start_byte
                ]
                if entries and slot not in extra:
                    extra[slot] = self.ir(_chained_value(entries[0].value), scope)
        if props is not None:
            values = self.ir(props, scope)
            if values[0] == "obj":
                for key, slot in (
                    ("message", "message"),
                    ("code", "code"),
                    ("status", "status"),
                    ("statusCode", "status"),
                    ("name", "label"),
                ):
                    if key in values[1] and slot not in extra:
                        extra[slot] = values[1][key]
        if "label" in extra:
            extra["label"] = _literal_text(extra["label"]) if _is_literal(extra["label"]) else None
        if not (handed or arguments or "message" in extra) and reference in BUILTIN_ERRORS:
            return  # ``dummy = new Error()``: made for its stack, not raised
        plan = {
            "new": reference,
            "args": [self.ir(a, scope) for a in arguments],
            "extra": extra,
        }
        message = arguments[0] if arguments else None
        if message is not None and _unwrap(message).type == "object":
            message = self._property(_unwrap(message), "message") or message
        self.sites.append(_Site(site_node, plan, scope, message))

    def _property(self, node: Node, key: str) -> Node | None:
        """The value of an object literal's property, when it is written there."""
        for pair in node.named_children:
            name = pair.child_by_field_name("key") if pair.type == "pair" else None
            if name is not None and self.text(name).strip("'\"") == key:
                return pair.child_by_field_name("value")
        return None

    def _read_call(self, node: Node, function: Node) -> None:  # noqa: C901 - one dispatch
        function = _unwrap(function)
        if function.type == "identifier":
            name = self.text(function)
            self.calls.append((name, node))
            binding = self.module_bindings.get(name)
            if not (
                name in BUILTIN_ERRORS
                or binding is not None
                or name in _HTTP_ERROR_NAMES
                or name == "assert"
            ):
                return
            arguments = _arguments(node)
            if name in BUILTIN_ERRORS:
                parent = node.parent
                if parent is None or parent.type != "member_expression":
                    self._error_site(node, name, arguments)
            elif binding == "http-errors" or (
                binding is None and name in _HTTP_ERROR_NAMES and name not in self._raw
            ):
                self._http_error(node, node, None)
            elif binding == "assert" or (name == "assert" and binding is None):
                self._assert(node, "", arguments)
            elif binding in ("depd-deprecate",):
                self._message_site(
                    node,
                    arguments[0] if arguments else None,
                    kind=SiteKind.WARN,
                    error_class="DeprecationWarning",
                    severity=Severity.WARNING,
                )
            elif binding == "util.deprecate" and len(arguments) > 1:
                self._deprecate(node, arguments)
            return
        if function.type != "member_expression":
            return
        prop = function.child_by_field_name("property")
        target = function.child_by_field_name("object")
        if prop is None or target is None:
            return
        method = self.text(prop)
        if target.type == "this":
            self.calls.append((method, node))
        if method not in _SITE_METHODS and not method[:1].isupper():
            return
        arguments = _arguments(node)
        target = _unwrap(target)
        receiver = (
            self._member_name(target)
            if target.type == "member_expression"
            else (self.text(target) if target.type == "identifier" else None)
        )
        binding = (
            self.module_bindings.get(receiver or "") if receiver and "." not in receiver else None
        )
        if receiver == "console" and method in ("error", "warn"):
            if not arguments:
                return
            warn = method == "warn"
            scope = self.enclosing(node)
            plan = {
                "message": ["fmt", [self.ir(a, scope) for a in arguments]],
                "class": "WARNING" if warn else "ERROR",
                "kind": (SiteKind.WARN if warn else SiteKind.LOG).value,
                "severity": (Severity.WARNING if warn else Severity.ERROR).value,
            }
            self.sites.append(_Site(_statement(node), plan, scope, arguments[0]))
        elif (
            binding == "assert"
            or receiver == "assert"
            or (receiver or "").endswith("assert.strict")
        ):
            self._assert(node, method, arguments)
        elif receiver == "process" and method == "emitWarning":
            self._emit_warning(node, arguments)
        elif (
            (binding == "util" or receiver == "util")
            and method == "deprecate"
            and len(arguments) > 1
        ):
            self._deprecate(node, arguments)
        elif binding == "http-errors" and method[:1].isupper():
            self._http_error(node, node, method)
        elif method == "throw" and arguments and _status_value(self, arguments[0]) is not None:
            self._http_error(node, node, None)
        elif method == "sendStatus" and arguments:
            status = _status_value(self, arguments[0])
            if status is not None:
                self._response(node, status, None, receiver or "res", method)
        elif method in _RESPONSE_METHODS and target.type == "call_expression":
            inner = target.child_by_field_name("function")
            if inner is None or inner.type != "member_expression":
                return
            inner_prop = inner.child_by_field_name("property")
            inner_arguments = _arguments(target)
            if inner_prop is None or self.text(inner_prop) != "status" or not inner_arguments:
                return
            status = _status_value(self, inner_arguments[0])
            if status is None:
                return
            owner = inner.child_by_field_name("object")
            name = self.text(owner) if owner is not None and owner.type == "identifier" else "res"
            self._response(node, status, arguments[0] if arguments else None, name, method)

    def _message_site(
        self,
        node: Node,
        message: Node | None,
        *,
        kind: SiteKind,
        error_class: str,
        severity: Severity = Severity.ERROR,
        code: str | None = None,
        status: int | None = None,
        suffix: Ir | None = None,
        default: Ir | None = None,
    ) -> None:
        scope = self.enclosing(node)
        ir = self.ir(message, scope) if message is not None else (default or _NONE)
        if suffix is not None:
            ir = ["cat", [ir, suffix], ""] if message is not None else ir
        plan: dict[str, Any] = {
            "message": ir,
            "class": error_class,
            "kind": kind.value,
            "severity": severity.value,
        }
        if code is not None:
            plan["code"] = code
        if status is not None:
            plan["status"] = status
        self.sites.append(_Site(_statement(node), plan, scope, message))

    def _assert(self, node: Node, method: str, arguments: list[Node]) -> None:
        index = _ASSERT_MESSAGE.get(method)
        if index is None:
            return
        message = arguments[index] if index < len(arguments) else None
        if message is not None and _unwrap(message).type == "new_expression":
            return  # assert throws that error: read as the error's own site
        default = None
        if message is None and method in ("", "ok") and node.start_point[0] == node.end_point[0]:
            default = _literal(
                f"The expression evaluated to a falsy value:\n\n  {self.text(node)}\n"
            )
        elif message is None:
            default = _hole(self.text(node))
        self._message_site(
            node,
            message,
            kind=SiteKind.ASSERT,
            error_class="AssertionError",
            code="ERR_ASSERTION",
            suffix=_hole("diff") if method in _ASSERT_DIFF else None,
            default=default,
        )

    def _emit_warning(self, node: Node, arguments: list[Node]) -> None:
        if not arguments:
            return
        warning_class, code = "Warning", None
        if len(arguments) > 1:
            option = _unwrap(arguments[1])
            if option.type == "object":
                values = self.ir(option, self.enclosing(node))[1]
                kind_ir = values.get("type")
                code = _code_of(values.get("code"))
                if kind_ir is not None and _is_literal(kind_ir):
                    warning_class = _literal_text(kind_ir)
            else:
                warning_class = self._string(option) or warning_class
                if len(arguments) > 2:
                    code = self._string(arguments[2])
        self._message_site(
            node,
            arguments[0],
            kind=SiteKind.WARN,
            error_class=warning_class,
            severity=Severity.WARNING,
            code=code,
        )

    def _deprecate(self, node: Node, arguments: list[Node]) -> None:
        self._message_site(
            node,
            arguments[1],
            kind=SiteKind.WARN,
            error_class="DeprecationWarning",
            severity=Severity.WARNING,
            code=self._string(arguments[2]) if len(arguments) > 2 else None,
        )

    def _http_error(self, node: Node, call: Node, name: str | None) -> None:
        """``createError(404, 'msg', {code})``, ``createError.NotFound('msg')``, ``ctx.throw``."""
        arguments = _arguments(call)
        scope = self.enclosing(node)
        status: int | None = None
        message: Node | None = None
        code: str | None = None
        chained = False
        for argument in arguments:
            value = _unwrap(argument)
            number = _status_value(self, value)
            if number is not None and status is None and message is None:
                status = number
            elif value.type == "object":
                props = self.ir(value, scope)[1]
                code = _code_of(props.get("code")) or code
                status = status or _status_of(props.get("status") or props.get("statusCode"))
            elif value.type in ("string", "template_string", "binary_expression") or (
                value.type == "identifier" and message is None and status is not None
            ):
                message = message or argument
            else:
                chained = True
        error_class = name or http_error_class(status or 500)
        if name is not None and status is None:
            status = next(
                (s for s in HTTP_PHRASES if http_error_class(s) in (name, name + "Error")), None
            )
            if not error_class.endswith("Error"):
                error_class += "Error"
        phrase = HTTP_PHRASES.get(status or 500, "Internal Server Error")
        site_node, _, _, _ = self._context(node)
        plan: dict[str, Any] = {
            "message": self.ir(message, scope) if message is not None else _literal(phrase),
            "class": error_class,
            "kind": SiteKind.HTTP.value,
            "severity": Severity.ERROR.value,
            "status": status or 500,
        }
        if code is not None:
            plan["code"] = code
        if chained:
            plan["chained"] = True
        self.sites.append(_Site(site_node, plan, scope, message))

    def _response(
        self, node: Node, status: int, body: Node | None, receiver: str, method: str
    ) -> None:
        scope = self.enclosing(node)
        message: Node | None = body
        if body is not None and _unwrap(body).type == "object":
            found = (self._property(_unwrap(body), key) for key in _RESPONSE_KEYS)
            message = next((value for value in found if value is not None), None)
            if message is None:
                return
        plan: dict[str, Any] = {
            "message": self.ir(message, scope)
            if message is not None
            else _literal(HTTP_PHRASES.get(status, str(status))),
            "class": f"{receiver}.{method}",
            "kind": SiteKind.HTTP.value,
            "severity": (Severity.ERROR if status >= 500 else Severity.WARNING).value,
            "status": status,
        }
        self.sites.append(_Site(_statement(node), plan, scope, message))

    # -- message helpers ---------------------------------------------------------------------

    def _read_helper_calls(self) -> None:
        """Sites at the calls of message helpers (a function handing its ``message`` on).

        ``error(message, options) { …; this._exit(1, code, message) }`` passes its parameter
        to a site (there, an opaque one); each call ``this.error(`unknown '${x}'`, {…})``
        is then a site of its own, with the call's arguments in the helper's place (through
        helpers calling helpers, a few levels deep).
        """
        helpers: dict[str, list[tuple[int, dict[str, Any], int]]] = {}
        queue = list(self.sites)
        done: set[tuple[int, int]] = set()
        for _ in range(4):
            for site in queue:
                index = _helper_parameter(site.plan)
                name = self._callable_name(site.scope)
                if index is not None and name is not None:
                    helpers.setdefault(name, []).append((site.scope, site.plan, index))
            queue = []
            for name, call in self.calls:
                for scope, plan, index in helpers.get(name, ()):
                    key = (call.id, id(plan))
                    caller = self.enclosing(call)
                    if key in done or caller == scope:
                        continue
                    done.add(key)
                    arguments = _arguments(call)
                    values = [self.ir(argument, caller) for argument in arguments]
                    message = arguments[index] if index < len(arguments) else None
                    site = _Site(_statement(call), _apply(plan, values), caller, message, name)
                    self.sites.append(site)
                    queue.append(site)
            if not queue:
                break

    def _callable_name(self, scope: int) -> str | None:
        """The name a function is called by (``error`` for ``this.error(…)``), if any."""
        if scope < 0:
            return None
        name = self.function_name(scope)
        if name.startswith(("new ", "<")):
            return None
        return name.rsplit(".", 1)[-1]

    # -- what other files need ------------------------------------------------------------

    def exports(self) -> dict[str, Any]:
        """The facts other files may need: classes, constants, imports and exports."""
        constants: dict[str, list[Any]] = {}
        for name, raw in self._raw.items():
            if "." in name or not any(
                value is not None and _unwrap(value).type in _CONSTANT_TYPES for _, _, value in raw
            ):
                continue
            module_level = [a for a in self.assignments(name) if a.scope == -1]
            if len(module_level) != 1 or module_level[0].value is None:
                continue
            value = _unwrap(module_level[0].value)
            if value.type not in _CONSTANT_TYPES:
                continue
            constants[name] = [self.ir(value, -1), self.context.line(module_level[0].node)]
        for name, entry in list(self.constants.items()):
            if entry[0] is None:
                constants[name] = [self.ir(entry[2], -1), entry[1]]
        facts: dict[str, Any] = {}
        for key, fact in (
            ("classes", self.classes),
            ("constants", constants),
            ("imports", self.imports),
            ("exported", self.exported),
            ("reexports", self.reexports),
            ("stars", self.stars),
            ("default", self.default),
        ):
            if fact:
                facts[key] = fact
        return facts


def _operator(node: Node) -> str:
    """The operator of a binary or augmented assignment expression."""
    operator = node.child_by_field_name("operator")
    return operator.type if operator is not None else ""


_MESSAGE_PARAMETER = re.compile(
    r"(?:msg|message|text|reason|description|details?|warning)\Z|\w*(?:Message|Msg)\Z"
)
"""Parameter names that make a function a message helper when it hands them to a site."""


def _helper_parameter(plan: dict[str, Any]) -> int | None:
    """The parameter a plan's message comes from, when it is one named like a message."""
    candidates = list(plan["args"] if "new" in plan else [plan["message"]])
    if candidates and candidates[0][0] == "fmt":
        candidates = list(candidates[0][1])
    for ir in candidates:
        while ir[0] in ("or", "ref") and ir[1]:
            ir = ir[1]
        if ir[0] == "p" and not ir[2] and _MESSAGE_PARAMETER.match(ir[3]):
            return int(ir[1])
    return None


def _apply(plan: dict[str, Any], values: list[Ir]) -> dict[str, Any]:
    """A helper's plan with a call's arguments in place of the helper's parameters."""
    if "new" in plan:
        extra = {
            key: _substitute(value, values) if isinstance(value, list) else value
            for key, value in plan.get("extra", {}).items()
        }
        return {
            "new": plan["new"],
            "args": [_substitute(argument, values) for argument in plan["args"]],
            "extra": extra,
        }
    return {**plan, "message": _substitute(plan["message"], values)}


def _chained_value(node: Node | None) -> Node | None:
    """The value of ``a.b = a.c = 400`` (through chained assignments)."""
    while node is not None and node.type == "assignment_expression":
        node = node.child_by_field_name("right")
    return node


def _status_value(reader: _FileReader, node: Node) -> int | None:
    node = _unwrap(node)
    if node.type != "number":
        return None
    text = reader.text(node)
    return int(text) if text.isdigit() and 400 <= int(text) <= 599 else None


def _raw(data: bytes) -> str:
    r"""Literal template text as the runtime has it (line ends normalised to ``\n``)."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


def _mark_class(ir: Ir) -> Ir:
    """Mark the text a class writes itself (as opposed to the arguments it is given)."""
    kind = ir[0]
    if kind == "t":
        return ["t", ir[1], "class-template"]
    if kind == "cat":
        return ["cat", [_mark_class(i) for i in ir[1]], "class-template"]
    if kind == "alt":
        return ["alt", [_mark_class(i) for i in ir[1]]]
    if kind == "or":
        return ["or", _mark_class(ir[1]), _mark_class(ir[2])]
    if kind == "ref":
        return ["ref", _mark_class(ir[1]), "", ir[3]]
    return ir


# -- from plans to sites ---------------------------------------------------------------------


def _outcomes(plan: dict[str, Any], module: str, expander: _Expander) -> list[_Outcome]:
    """The error objects a site's plan produces."""
    if "new" in plan:
        outcomes = expander.instantiate(module, plan["new"], plan["args"])
        extra = plan.get("extra", {})
        for outcome in outcomes:
            for slot in ("message", "code", "status"):
                if extra.get(slot) is not None:
                    setattr(outcome, slot, extra[slot])
            if extra.get("label"):
                outcome.label = extra["label"]
        return outcomes
    return [
        _Outcome(
            message=plan["message"],
            error_class=plan["class"],
            code=_literal(plan["code"]) if plan.get("code") else plan.get("code_ir"),
            status=_literal(str(plan["status"])) if plan.get("status") else None,
            chained=bool(plan.get("chained")),
        )
    ]


@dataclass(frozen=True)
class _Record:
    """One expanded site: the fields that differ between a plan's templates."""

    parts: tuple[TemplatePart, ...]
    form: str
    error_class: str
    kind: SiteKind
    severity: Severity
    code: str | None
    status: int | None
    where: Location | None
    chained: bool

    def update(self) -> dict[str, Any]:
        """The fields to set on a provisional site (at link)."""
        return {
            "template": MessageTemplate(parts=merge(self.parts)),
            "form": self.form,
            "error_class": self.error_class,
            "kind": self.kind,
            "severity": self.severity,
            "error_code": self.code,
            "http_status": self.status,
            "defined_at": self.where,
            "chained": self.chained,
        }


def _records(plan: dict[str, Any], module: str, expander: _Expander) -> list[_Record]:
    """Expand a plan into its records (one per distinct template)."""
    records: list[_Record] = []
    for outcome in _outcomes(plan, module, expander):
        code = expander.code(outcome.code, module)
        status = expander.status(outcome.status, module)
        if "kind" in plan:
            kind = SiteKind(plan["kind"])
            severity = Severity(plan["severity"])
        else:
            kind = SiteKind.HTTP if status is not None else SiteKind.RAISE
            severity = Severity.ERROR
        values = expander.expand(outcome.message, module) or [_Alt((), "empty")]
        for value in values:
            parts = merge([TemplatePart(text=t, hole=h, style=s) for t, h, s in value.parts])
            form = value.form
            if parts and all(p.hole for p in parts):
                form = "opaque"
            elif not parts:
                form = "empty"
            where = Location(path=value.where[0], line=value.where[1]) if value.where else None
            records.append(
                _Record(
                    parts=parts,
                    form=form,
                    error_class=outcome.label or outcome.error_class,
                    kind=kind,
                    severity=severity,
                    code=code,
                    status=status,
                    where=where,
                    chained=outcome.chained,
                )
            )
    return records


def _with_factory(context: FileContext, factory: str | None, site: RaiseSite) -> RaiseSite:
    """Note the helper a site's message is handed to (replacing the site just recorded)."""
    if factory is None:
        return site
    site = site.model_copy(update={"factory": factory})
    context.sites[-1] = site
    return site


class JavaScriptExtractor(TreeSitterExtractor):
    """Finds the error sites of JavaScript files (see the module docstring).

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "javascript"
    suffixes: tuple[str, ...] = (".js", ".mjs", ".cjs", ".jsx")
    version = code_version("1", __name__)
    minifies = True
    grammars: ClassVar[dict[str, str]] = {
        ".js": "javascript",
        ".mjs": "javascript",
        ".cjs": "javascript",
        ".jsx": "javascript",
    }

    def find_sites(self, root: Node, context: FileContext) -> None:
        """Read the file's tree and record its sites; leave what needs other files pending."""
        reader = _FileReader(context, root, self.grammar(context.path))
        reader.read()
        facts = reader.exports()
        strict = _Expander(_Resolver({context.path: facts}, defer=True))
        lenient = _Expander(_Resolver({context.path: facts}, defer=False))
        pending: list[tuple[dict[str, Any], list[RaiseSite]]] = []
        for site in reader.sites:
            try:
                records = _records(site.plan, context.path, strict)
                deferred = False
            except _Deferred:
                records = _records(site.plan, context.path, lenient)
                deferred = True
            made = [
                _with_factory(
                    context,
                    site.factory,
                    context.site(
                        site.node,
                        record.parts,
                        error_class=record.error_class,
                        form=record.form,
                        message=site.message,
                        kind=record.kind,
                        severity=record.severity,
                        scope=reader.scope(site.scope),
                        http_status=record.status,
                        error_code=record.code,
                        defined_at=record.where,
                        chained=record.chained,
                    ),
                )
                for record in records
            ]
            if deferred and made:
                pending.append((site.plan, made))
        # The base class sorts the sites the same way: sorted here, the indices stay right.
        context.sites.sort(key=lambda s: (s.line, s.end_line))
        if pending:
            position = {id(s): i for i, s in enumerate(context.sites)}
            facts["pending"] = [
                {"plan": plan, "sites": [position[id(s)] for s in made]} for plan, made in pending
            ]
        context.exports.update(facts)

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Finish the sites that need other files: imported error classes and constants."""
        modules = {result.path: dict(result.exports) for result in results}
        expander = _Expander(_Resolver(modules, defer=False))
        sites: list[RaiseSite] = []
        for result in results:
            pending = result.exports.get("pending")
            if not isinstance(pending, list) or not pending:
                sites.extend(result.sites)
                continue
            replaced: dict[int, list[RaiseSite]] = {}
            for entry in pending:
                plan: Any = entry.get("plan") if isinstance(entry, dict) else None
                numbers: Any = entry.get("sites") if isinstance(entry, dict) else None
                indexes = [i for i in numbers or () if isinstance(i, int)]
                if not isinstance(plan, dict) or not indexes:
                    continue
                first = result.sites[indexes[0]]
                records = _records(plan, result.path, expander)
                replaced[indexes[0]] = [first.model_copy(update=r.update()) for r in records]
                for index in indexes[1:]:
                    replaced[index] = []
            for index, site in enumerate(result.sites):
                sites.extend(replaced.get(index, [site]))
        return sites


class TypeScriptExtractor(JavaScriptExtractor):
    """Finds the error sites of TypeScript files (the JavaScript forms, through the types)."""

    language = "typescript"
    suffixes: tuple[str, ...] = (".ts", ".mts", ".cts", ".tsx")
    version = code_version("1", __name__)
    grammars: ClassVar[dict[str, str]] = {
        ".tsx": "tsx",
        ".ts": "typescript",
        ".mts": "typescript",
        ".cts": "typescript",
    }
