r"""Go extraction: error values, panics, fatal logs, HTTP and gRPC errors (issue #7).

One tree-sitter query finds the calls and ``return`` values that can be sites; a pass over
the file's top-level declarations first collects its package name, string constants, struct
fields, sentinel errors and ``Error() string`` methods. Each message expression becomes a
template: Go string escapes are decoded (raw strings kept verbatim, ``\r`` dropped), a
``fmt`` format's verbs become holes whose ``style`` is the verb as written (``%-8s``, ``%q``,
``%w``; ``%%`` is a literal ``%``, explicit argument indexes ``%[2]d`` pick their argument,
``*`` widths consume one, a missing argument prints ``%!d(MISSING)`` and extra arguments
``%!(EXTRA …)`` as Go does), ``+`` concatenations and ``fmt.Sprint``/``Sprintln`` are joined,
and a name is resolved against the assignments of the enclosing function before the site (one
alternative per assignment, ``+=`` appended) and then against the file's constants.

Sites (``error_class`` in brackets):

* ``errors.New``/``fmt.Errorf``/``errors.Errorf``/``xerrors.*`` (the call as written);
  ``errors.Wrap``/``Wrapf``/``WithMessage``/``WithMessagef`` of ``github.com/pkg/errors``
  (``msg: {err}``); ``%w`` and wrapping calls set ``chained``;
* ``panic(…)`` [``panic``]; ``panic(err)`` is opaque;
* ``log.Fatal*`` (kind exit) [``log.Fatal``], ``log.Panic*`` (kind raise) [``log.Panic``];
  ``log.Print*`` only when the message looks like an error (an error word such as *failed*,
  *cannot*, *invalid*, or an ``err`` argument) [``log.Print``]; leveled loggers (a receiver
  whose name contains ``log``: ``logger``, ``s.log``, ``slog``, ``klog``, ``logrus`` …, and
  ``zap.L()``/``zap.S()``) ``Error*``/``Warn*``/``Fatal*``/``Panic*``/``Crit*`` [the level
  name, ``ERROR``…]: ``…f`` methods are formats, a message followed by key/value pairs or
  ``zap``/``slog`` fields is the first string argument (``ErrorS(err, "msg")`` and
  ``ErrorContext(ctx, "msg")`` too), other argument lists are ``fmt.Sprint``-ed;
* ``fmt.Fprint*(os.Stderr, …)`` followed by ``os.Exit`` (kind exit) [``os.Exit``], or alone
  when it looks like an error [``os.Stderr``];
* ``status.Errorf(codes.NotFound, …)`` and any ``Error``/``Errorf``/``New``/``Newf`` whose
  first argument is ``codes.X`` → ``errorCode`` ``NotFound``; the template is what the status
  error prints, ``rpc error: code = NotFound desc = …``;
* ``http.Error(w, msg, code)`` and calls whose first argument is an ``http.StatusXxx`` of 400
  or more with a message next (``echo.NewHTTPError(http.StatusBadRequest, "…")``,
  ``c.String(http.StatusNotFound, "…")``) → kind http, ``httpStatus`` resolved from the
  name (``NewHTTPError`` without a message has ``http.StatusText``'s text);
* sentinel errors ``var ErrX = errors.New("…")`` (and ``const ErrX = T("…")``) [``ErrX``],
  and each ``return ErrX``/``return nil, pkg.ErrX`` of a sentinel declared in the source;
* ``Error() string`` methods: a site per ``return`` [the receiver type], and each ``return
  &T{…}``/``panic(T{…})`` of such a type, its template with the receiver's fields replaced
  by the values the literal gives;
* ``t.Fatal*``/``t.Error*`` in ``_test.go`` files (kind assert).

What crosses files is finished by :meth:`GoExtractor.link`, per package (a directory and its
``package`` name): a message held in a constant of another file, a ``%w`` or ``%v`` of a
sentinel (the hole becomes the sentinel's text), ``return ErrX`` (dropped when ``ErrX`` is no
sentinel of the source), and constructions of error types (dropped when the type has no
``Error`` method). The exports of a Go file (keys only when non-empty; ``T`` is
``[[text, hole, style], …]``)::

    {
      "package": "mux",
      "strings": {"name": {"text": "…", "line": 12}},      # package-level string constants
      "sentinels": {"ErrNotFound": {"parts": T, "line": 21}},
      "errors": {"MyErr": {"receiver": "e", "templates": [T, …]}},   # Error() methods
      "fields": {"MyErr": ["Op", "Err"]},                   # struct fields, in order
      "constructs": [{"line": 40, "type": "MyErr", "values": [[key|null, source, text|null]]}]
    }
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from errdex.extract import code_version
from errdex.extract.treesitter import (
    FileContext,
    Scope,
    TreeSitterExtractor,
    hole,
    literal,
    merge,
    query_matches,
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
    from tree_sitter import Node

__all__ = ["GRPC_CODES", "HTTP_STATUS", "GoExtractor", "go_unescape", "printf_parts", "status_text"]

HTTP_STATUS: dict[str, int] = {
    "BadRequest": 400,
    "Unauthorized": 401,
    "PaymentRequired": 402,
    "Forbidden": 403,
    "NotFound": 404,
    "MethodNotAllowed": 405,
    "NotAcceptable": 406,
    "ProxyAuthRequired": 407,
    "RequestTimeout": 408,
    "Conflict": 409,
    "Gone": 410,
    "LengthRequired": 411,
    "PreconditionFailed": 412,
    "RequestEntityTooLarge": 413,
    "RequestURITooLong": 414,
    "UnsupportedMediaType": 415,
    "RequestedRangeNotSatisfiable": 416,
    "ExpectationFailed": 417,
    "Teapot": 418,
    "MisdirectedRequest": 421,
    "UnprocessableEntity": 422,
    "Locked": 423,
    "FailedDependency": 424,
    "TooEarly": 425,
    "UpgradeRequired": 426,
    "PreconditionRequired": 428,
    "TooManyRequests": 429,
    "RequestHeaderFieldsTooLarge": 431,
    "UnavailableForLegalReasons": 451,
    "InternalServerError": 500,
    "NotImplemented": 501,
    "BadGateway": 502,
    "ServiceUnavailable": 503,
    "GatewayTimeout": 504,
    "HTTPVersionNotSupported": 505,
    "VariantAlsoNegotiates": 506,
    "InsufficientStorage": 507,
    "LoopDetected": 508,
    "NotExtended": 510,
    "NetworkAuthenticationRequired": 511,
}
"""``net/http``'s error statuses: ``http.Status<Name>`` → code."""

_STATUS_TEXTS = {
    407: "Proxy Authentication Required",
    413: "Request Entity Too Large",
    414: "Request URI Too Long",
    416: "Requested Range Not Satisfiable",
    418: "I'm a teapot",
    505: "HTTP Version Not Supported",
}

GRPC_CODES = frozenset(
    {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    }
)
"""gRPC's ``codes.Code`` names (what ``Code.String()`` prints)."""

_ERROR_CONSTRUCTORS = frozenset({"New", "Errorf", "Wrap", "Wrapf", "WithMessage", "WithMessagef"})
_GRPC_CONSTRUCTORS = frozenset({"Errorf", "Error", "New", "Newf"})
_HTTP_HELPERS = frozenset({"NewHTTPError"})
_STDERR_PRINTS = frozenset({"Fprint", "Fprintf", "Fprintln"})
_TEST_RECEIVERS = frozenset({"t", "b", "tb", "f"})
_TEST_METHODS = frozenset({"Fatal", "Fatalf", "Error", "Errorf"})
_MAX_ALTERNATIVES = 4
_MAX_DEPTH = 8

# Logger methods: name → (level, kind). The level names the class of a leveled logger's site.
_LEVEL_KIND: dict[str, tuple[str, SiteKind]] = {
    "Error": ("ERROR", SiteKind.LOG),
    "Warn": ("WARNING", SiteKind.LOG),
    "Warning": ("WARNING", SiteKind.LOG),
    "Crit": ("CRITICAL", SiteKind.LOG),
    "Fatal": ("CRITICAL", SiteKind.EXIT),
    "Panic": ("CRITICAL", SiteKind.RAISE),
    "DPanic": ("CRITICAL", SiteKind.LOG),
    "Print": ("ERROR", SiteKind.LOG),
}
_LOG_SUFFIXES = ("", "f", "ln", "w", "S", "Context")
_LOG_METHODS: dict[str, tuple[str, str]] = {
    base + suffix: (base, suffix) for base in _LEVEL_KIND for suffix in _LOG_SUFFIXES
}
"""``Errorf`` → (``Error``, ``f``): every logger method the extractor reads."""

_SEVERITY = {
    "ERROR": Severity.ERROR,
    "WARNING": Severity.WARNING,
    "CRITICAL": Severity.CRITICAL,
}

_ERROR_WORDS = re.compile(
    r"\b(?:errors?|err|fail(?:s|ed|ure|ing)?|cannot|can't|could ?not|couldn't|unable|invalid"
    r"|panic|fatal|warn(?:ing)?|denied|refused|time[d ]? ?out|unexpected|missing|not found"
    r"|bad|wrong|abort(?:ed|ing)?|crash(?:ed)?)\b",
    re.IGNORECASE,
)
_ERRORISH_HOLE = re.compile(r"(?:^|\.)(?:err|e|error)\b|Err\w*$|\.Error\(\)$")
_SENTINEL_NAME = re.compile(r"[Ee]rr[A-Z0-9_]\w*\Z")
_IDENTIFIER = re.compile(r"(?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*\Z")
_NAMED = re.compile(r"(?:[A-Za-z_]\w*\.)?[A-Za-z_]\w*(\.Error\(\))?\Z")
"""A hole the link step may resolve: a (qualified) name, or a sentinel's ``.Error()``."""
_GO_ESCAPES = {
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "n": b"\n",
    "r": b"\r",
    "t": b"\t",
    "v": b"\v",
    "\\": b"\\",
    "'": b"'",
    '"': b'"',
}

_STATEMENTS = frozenset(
    {
        "expression_statement",
        "return_statement",
        "short_var_declaration",
        "assignment_statement",
        "var_spec",
        "const_spec",
        "go_statement",
        "defer_statement",
        "if_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "for_statement",
        "send_statement",
        "select_statement",
    }
)
_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})

_METHOD_NAMES = sorted(
    {*_ERROR_CONSTRUCTORS, *_GRPC_CONSTRUCTORS, *_HTTP_HELPERS, *_STDERR_PRINTS, *_LOG_METHODS}
)
_SITE_QUERY = f"""
((call_expression function: (identifier) @name) @call
 (#any-of? @name "panic" "NewHTTPError"))
((call_expression function: (selector_expression field: (field_identifier) @name)) @call
 (#any-of? @name {" ".join(f'"{name}"' for name in _METHOD_NAMES)}))
((call_expression arguments: (argument_list . (selector_expression
    operand: (identifier) @package field: (field_identifier) @status))) @call
 (#eq? @package "http") (#match? @status "^Status"))
(return_statement (expression_list
    [(identifier) (selector_expression) (composite_literal) (unary_expression)] @returned))
"""
_ASSIGNMENT_QUERY = """
(short_var_declaration
    left: (expression_list . (identifier) @name .) right: (expression_list . (_) @value .))
(assignment_statement
    left: (expression_list . (identifier) @name .) right: (expression_list . (_) @value .))
(var_spec name: (identifier) @name . value: (expression_list . (_) @value .))
(const_spec name: (identifier) @name . value: (expression_list . (_) @value .))
"""


def status_text(code: int) -> str:
    """Return ``http.StatusText`` of an error status (``404`` → ``Not Found``)."""
    if code in _STATUS_TEXTS:
        return _STATUS_TEXTS[code]
    name = next((n for n, c in HTTP_STATUS.items() if c == code), "")
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)


def go_unescape(body: str) -> str:
    r"""Decode the escapes of a Go interpreted string's body (``\x41``, ``\u00e9``, ``\101``).

    Byte escapes are gathered into bytes first, so ``\xc3\xa9`` is ``é``; bytes that are not
    UTF-8 become U+FFFD, as a terminal shows them.
    """
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\" or i + 1 >= len(body):
            out += char.encode("utf-8", "surrogatepass")
            i += 1
            continue
        out += _escape_bytes(body[i : i + 10])
        i += _escape_length(body[i + 1])
    return out.decode("utf-8", "replace")


def _escape_length(kind: str) -> int:
    return {"x": 4, "u": 6, "U": 10}.get(kind, 4 if kind in "01234567" else 2)


def _escape_bytes(escape: str) -> bytes:
    r"""The bytes of one escape sequence (``\n``, ``\x41``, ``\101``, ``\u00e9``)."""
    kind = escape[1:2]
    if kind in _GO_ESCAPES:
        return _GO_ESCAPES[kind]
    try:
        if kind == "x":
            return bytes([int(escape[2:4], 16)])
        if kind in ("u", "U"):
            digits = escape[2 : _escape_length(kind)]
            return chr(int(digits, 16)).encode("utf-8", "surrogatepass")
        if kind and kind in "01234567":
            return bytes([int(escape[1:4], 8) & 0xFF])
    except ValueError:
        pass
    return escape[: _escape_length(kind)].encode("utf-8", "surrogatepass")


# -- printf ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Argument:
    """One argument of a formatting call: its source, and its text when it is a constant."""

    source: str
    text: str | None = None


def _parse_number(text: str, i: int) -> tuple[int | None, int]:
    start = i
    while i < len(text) and text[i].isdigit():
        i += 1
    return (int(text[start:i]) if i > start else None), i


def _arg_index(text: str, i: int) -> tuple[int | None, int, bool]:
    """Read ``[n]`` at ``i``: (zero-based index or None, new position, whether ``[`` was there).

    As ``fmt.parseArgNumber``: a malformed index (``[x]``, ``[0]``, no ``]``) is None.
    """
    if i >= len(text) or text[i] != "[":
        return None, i, False
    close = text.find("]", i + 1)
    if close < 0:
        return None, i + 1, True
    number, end = _parse_number(text, i + 1)
    if number is None or end != close or number < 1:
        return None, close + 1, True
    return number - 1, close + 1, True


@dataclass
class _Printf:
    """The state of one ``doPrintf`` run (see :func:`printf_parts`)."""

    count: int
    variadic: bool
    argument: int = 0
    reordered: bool = False
    good: bool = True

    def index(self, text: str, i: int) -> tuple[int, bool]:
        """Read an explicit argument index at ``i``: (new position, whether it was valid)."""
        index, i, present = _arg_index(text, i)
        if not present:
            return i, False
        self.reordered = True
        if index is not None and (self.variadic or index < self.count):
            self.argument = index
            return i, True
        self.good = False
        return i, index is not None

    def has(self, index: int) -> bool:
        return index < self.count or (self.variadic and self.count > 0)

    def star(self, text: str, i: int, parts: list[TemplatePart], bad: str) -> tuple[int, bool]:
        """Read a ``*`` width or precision at ``i``: it consumes an argument (or is ``bad``)."""
        if text[i : i + 1] != "*":
            return i, False
        if not self.has(self.argument):
            parts.append(literal(f"%!({bad})"))
        self.argument += 1
        return i + 1, True


def printf_parts(
    text: str, args: Sequence[_Argument], *, variadic: bool = False
) -> tuple[list[TemplatePart], bool]:
    """Turn a Go format and its arguments into template parts, the way ``fmt`` prints them.

    Follows ``fmt.(*pp).doPrintf``: flags ``#0+- ``, a width or ``*``, a precision or ``.*``,
    explicit argument indexes ``[n]``; ``%%`` prints ``%``; a verb without its argument
    prints ``%!v(MISSING)``, a bad index ``%!v(BADINDEX)``, a format ending in ``%``
    ``%!(NOVERB)``; unused arguments (without explicit indexes) print ``%!(EXTRA …)``.

    Args:
        text: The format string, decoded.
        args: The arguments after the format.
        variadic: The last argument is spread (``args...``): any index may be there.

    Returns:
        The parts, and whether a ``%w`` verb was used.
    """
    parts: list[TemplatePart] = []
    state = _Printf(len(args), variadic)
    wrapped = False
    i, end = 0, len(text)
    while i < end:
        percent = text.find("%", i)
        if percent < 0:
            parts.append(literal(text[i:]))
            break
        parts.append(literal(text[i:percent]))
        i = percent + 1
        state.good = True
        while i < end and text[i] in "#0+- ":
            i += 1
        i, after = state.index(text, i)
        i, starred = state.star(text, i, parts, "BADWIDTH")
        if starred:
            after = False
        else:
            width, i = _parse_number(text, i)
            state.good = state.good and not (after and width is not None)
        if i < end and text[i] == ".":
            state.good = state.good and not after
            i, after = state.index(text, i + 1)
            i, starred = state.star(text, i, parts, "BADPREC")
            if starred:
                after = False
            else:
                _, i = _parse_number(text, i)
        if not after:
            i, after = state.index(text, i)
        if i >= end:
            parts.append(literal("%!(NOVERB)"))
            break
        verb = text[i]
        i += 1
        if verb == "%":
            parts.append(literal("%"))
        elif not state.good:
            parts.append(literal(f"%!{verb}(BADINDEX)"))
        elif not state.has(state.argument):
            parts.append(literal(f"%!{verb}(MISSING)"))
        else:
            value = args[min(state.argument, len(args) - 1)]
            state.argument += 1
            wrapped = wrapped or verb == "w"
            spec = re.sub(r"\[\d*\]", "", text[percent:i])
            if value.text is not None and spec in ("%s", "%v"):
                parts.append(literal(value.text))
            else:
                parts.append(hole(value.source, spec))
    if not state.reordered and not variadic and state.argument < len(args):
        parts.append(literal("%!(EXTRA "))
        for position, extra in enumerate(args[state.argument :]):
            if position:
                parts.append(literal(", "))
            parts.append(hole(extra.source, "%v"))
        parts.append(literal(")"))
    return parts, wrapped


# -- templates -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Built:
    """One way a message expression reads: its parts, form and where a constant is defined."""

    parts: tuple[TemplatePart, ...]
    form: str
    defined_at: Location | None = None
    wrapped: bool = False

    @property
    def is_literal(self) -> bool:
        return all(not part.hole for part in self.parts)

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)


@dataclass(frozen=True)
class _Where:
    """Where a site is: its statement, the function around it and the top-level declaration."""

    statement: Node
    function: Node | None
    top: Node | None


def _dump(parts: Iterable[TemplatePart]) -> list[list[Any]]:
    return [[p.text, p.hole, p.style] for p in parts]


def _load(rows: Iterable[Sequence[Any]]) -> tuple[TemplatePart, ...]:
    return tuple(TemplatePart(text=str(t), hole=bool(h), style=str(s)) for t, h, s in rows)


def _key(node: Node) -> tuple[int, int]:
    return node.start_byte, node.end_byte


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return []
    return [a for a in arguments.named_children if a.type != "comment"]


def _combine(left: Sequence[_Built], right: Sequence[_Built]) -> list[_Built]:
    """Concatenate each left alternative with each right one (at most a few)."""
    out: list[_Built] = []
    for a in left:
        for b in right:
            if not a.parts or not b.parts:
                out.append(b if not a.parts else a)
                continue
            parts = tuple(merge((*a.parts, *b.parts)))
            if all(not p.hole for p in parts):
                form = "constant" if "constant" in (a.form, b.form) else "literal"
            elif all(p.hole for p in parts):
                form = "opaque"
            else:
                form = "variable" if "variable" in (a.form, b.form) else "concat"
            out.append(_Built(parts, form, a.defined_at or b.defined_at, a.wrapped or b.wrapped))
            if len(out) >= _MAX_ALTERNATIVES:
                return out
    return out


class _Miner:
    """Reads one Go file: top-level declarations first, then the query's sites in order."""

    def __init__(self, root: Node, context: FileContext) -> None:
        self.root = root
        self.context = context
        self.test_file = context.path.endswith("_test.go")
        self.package = ""
        self.strings: dict[str, tuple[str, int]] = {}
        self.sentinel_of: dict[tuple[int, int], str] = {}
        self.consumed: set[tuple[int, int]] = set()
        self.error_types: set[str] = set()
        self._locals: dict[int, dict[str, list[tuple[int, str, Node]]]] = {}
        self._scopes: dict[int, Scope] = {}
        self.sentinels: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, dict[str, Any]] = {}
        self.fields: dict[str, list[str]] = {}
        self.constructs: list[dict[str, Any]] = []

    # -- helpers ------------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.context.text(node)

    def string_value(self, node: Node) -> str | None:
        """The value of a string literal node (interpreted or raw), else None."""
        if node.type == "raw_string_literal":
            return self.text(node)[1:-1].replace("\r", "")
        if node.type != "interpreted_string_literal":
            return None
        data = self.context.data
        out = bytearray()
        for child in node.named_children:
            piece = data[child.start_byte : child.end_byte]
            if child.type == "escape_sequence":
                out += _escape_bytes(piece.decode("utf-8", "replace"))
            else:
                out += piece
        return out.decode("utf-8", "replace")

    def where(self, node: Node) -> _Where:
        """Climb from a node to its statement, its function and its top-level declaration."""
        statement: Node | None = None
        function: Node | None = None
        top: Node | None = None
        current: Node | None = node
        while current is not None:
            kind = current.type
            if statement is None and kind in _STATEMENTS:
                statement = current
            if kind in _FUNCTIONS:
                function = function or current
                top = current
            current = current.parent
        return _Where(statement or node, function, top)

    def scope(self, top: Node | None) -> Scope | None:
        """The scope of a top-level function or method, named as a Go stack trace names it."""
        if top is None or top.type == "func_literal":
            return None
        found = self._scopes.get(top.start_byte)
        if found is not None:
            return found
        name_node = top.child_by_field_name("name")
        name = self.text(name_node) if name_node is not None else "func"
        receiver = self.receiver(top)
        if receiver is not None:
            _, type_name, pointer, generic = receiver
            shown = type_name + ("[...]" if generic else "")
            name = f"(*{shown}).{name}" if pointer else f"{shown}.{name}"
        qualified = f"{self.package}.{name}" if self.package else name
        found = Scope(qualified, self.context.line(top), self.context.end_line(top))
        self._scopes[top.start_byte] = found
        return found

    def receiver(self, method: Node) -> tuple[str, str, bool, bool] | None:
        """A method's receiver: (variable name, type name, pointer, generic)."""
        if method.type != "method_declaration":
            return None
        receiver = method.child_by_field_name("receiver")
        parameter = (
            next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
            if receiver is not None
            else None
        )
        if parameter is None:
            return None
        name_node = parameter.child_by_field_name("name")
        type_node = parameter.child_by_field_name("type")
        pointer = type_node is not None and type_node.type == "pointer_type"
        if pointer and type_node is not None:
            type_node = type_node.named_children[0] if type_node.named_children else None
        generic = type_node is not None and type_node.type == "generic_type"
        if generic and type_node is not None:
            type_node = type_node.child_by_field_name("type")
        if type_node is None:
            return None
        variable = self.text(name_node) if name_node is not None else ""
        return variable, self.text(type_node), pointer, generic

    def locals(self, function: Node) -> dict[str, list[tuple[int, str, Node]]]:
        """The single-name assignments of a function: name → (start, operator, value)."""
        found = self._locals.get(function.start_byte)
        if found is not None:
            return found
        found = {}
        for _, captures in query_matches("go", _ASSIGNMENT_QUERY, function):
            name, value = captures["name"][0], captures["value"][0]
            assignment = value.parent.parent if value.parent is not None else None
            operator = assignment.child_by_field_name("operator") if assignment else None
            op = self.text(operator) if operator is not None else "="
            found.setdefault(self.text(name), []).append((name.start_byte, op, value))
        self._locals[function.start_byte] = found
        return found

    # -- messages -----------------------------------------------------------------------

    def build(self, node: Node, function: Node | None, before: int, depth: int = 0) -> list[_Built]:
        """Read a message expression as one or more templates (the alternatives it may be)."""
        opaque = [_Built((hole(self.text(node)),), "opaque")]
        if depth > _MAX_DEPTH:
            return opaque
        kind = node.type
        value = self.string_value(node)
        if value is not None:
            return [_Built((literal(value),), "literal")]
        if kind == "parenthesized_expression" and node.named_children:
            return self.build(node.named_children[0], function, before, depth + 1)
        if kind == "binary_expression":
            operator = node.child_by_field_name("operator")
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if operator is not None and self.text(operator) == "+" and left and right:
                built = _combine(
                    self.build(left, function, before, depth + 1),
                    self.build(right, function, before, depth + 1),
                )
                if all(b.form != "opaque" for b in built):
                    return built
            return opaque
        if kind == "identifier":
            return self.name(node, function, before, depth) or opaque
        if kind == "call_expression":
            return self.call_message(node, function, before, depth) or opaque
        return opaque

    def name(
        self, node: Node, function: Node | None, before: int, depth: int
    ) -> list[_Built] | None:
        """Resolve a name: its assignments in the function before the site, or a constant."""
        name = self.text(node)
        if function is not None:
            assignments = [a for a in self.locals(function).get(name, ()) if a[0] < before]
            if assignments:
                return self.variable(assignments, function, depth)
        constant = self.strings.get(name)
        if constant is not None:
            text, line = constant
            return [
                _Built((literal(text),), "constant", Location(path=self.context.path, line=line))
            ]
        return None

    def variable(
        self, assignments: list[tuple[int, str, Node]], function: Node, depth: int
    ) -> list[_Built] | None:
        """One alternative per plain assignment, each with the ``+=`` after it appended."""
        alternatives: list[_Built] = []
        for start, op, value in assignments:
            built = self.build(value, function, start, depth + 1)
            if any(b.form == "opaque" for b in built):
                return None
            if op == "+=":
                if not alternatives:
                    return None
                alternatives = _combine(alternatives, built)
            elif op in ("=", ":="):
                alternatives.extend(built)
            else:
                return None
        alternatives = alternatives[-_MAX_ALTERNATIVES:]
        return [
            _Built(b.parts, "variable" if b.form != "constant" else b.form, b.defined_at)
            for b in alternatives
        ]

    def argument(self, node: Node, function: Node | None, before: int) -> _Argument:
        """An argument of a format: its source, and its text when it is a constant string."""
        source = self.text(node)
        if node.type in ("interpreted_string_literal", "raw_string_literal"):
            return _Argument(source, self.string_value(node))
        if (
            node.type == "identifier"
            and source in self.strings
            and not (function is not None and source in self.locals(function))
        ):
            return _Argument(source, self.strings[source][0])
        return _Argument(source)

    def printf(
        self, nodes: Sequence[Node], function: Node | None, before: int, depth: int
    ) -> list[_Built] | None:
        """A format call's templates (``fmt.Sprintf(format, args…)``); None if none is known."""
        if not nodes:
            return None
        formats = self.build(nodes[0], function, before, depth + 1)
        if any(not f.is_literal for f in formats):
            return None
        variadic = nodes[-1].type == "variadic_argument"
        args = [self.argument(n, function, before) for n in nodes[1:]]
        if variadic:
            args[-1] = _Argument(self.text(nodes[-1]))
        out: list[_Built] = []
        for format_ in formats:
            parts, wrapped = printf_parts(format_.text, args, variadic=variadic)
            merged = merge(parts)
            holes = any(p.hole for p in merged)
            form = "format" if holes else format_.form
            out.append(_Built(merged, form, format_.defined_at, wrapped))
        return out

    def sprint(
        self, nodes: Sequence[Node], function: Node | None, before: int, depth: int, *, ln: bool
    ) -> list[_Built]:
        """``fmt.Sprint`` (operands joined, strings never spaced) or ``Sprintln`` (spaced)."""
        built: list[_Built] = [_Built((), "literal")]
        for position, node in enumerate(nodes):
            if ln and position:
                built = _combine(built, [_Built((literal(" "),), "literal")])
            operand = self.build(node, function, before, depth + 1)
            built = _combine(built, operand)
        return [
            _Built(b.parts, "concat" if b.form == "variable" else b.form, b.defined_at)
            for b in built
            if b.parts
        ]

    def call_message(
        self, call: Node, function: Node | None, before: int, depth: int
    ) -> list[_Built] | None:
        """The message a call inside a message builds (``fmt.Sprintf``, a nested error)."""
        callee = call.child_by_field_name("function")
        if callee is None or callee.type != "selector_expression":
            return None
        operand = callee.child_by_field_name("operand")
        field = callee.child_by_field_name("field")
        if operand is None or field is None:
            return None
        receiver, name = self.text(operand), self.text(field)
        args = _arguments(call)
        if receiver == "fmt" and name == "Sprintf":
            return self.printf(args, function, before, depth)
        if receiver == "fmt" and name in ("Sprint", "Sprintln"):
            built = self.sprint(args, function, before, depth, ln=name == "Sprintln")
            if name == "Sprintln":
                built = _combine(built, [_Built((literal("\n"),), "literal")])
            return built
        if self.is_error_constructor(receiver, name):
            self.consumed.add(_key(call))
            return self.constructor_message(name, args, function, before, depth)
        return None

    @staticmethod
    def is_error_constructor(receiver: str, name: str) -> bool:
        if name not in _ERROR_CONSTRUCTORS:
            return False
        if name == "Errorf" and receiver == "fmt":
            return True
        return receiver.lower().endswith("errors")

    def constructor_message(
        self, name: str, args: Sequence[Node], function: Node | None, before: int, depth: int
    ) -> list[_Built] | None:
        """The message of ``errors.New``/``fmt.Errorf``/``errors.Wrap`` … (None if odd)."""
        if not args:
            return None
        if name == "New":
            return self.build(args[0], function, before, depth + 1)
        if name == "Errorf":
            return self.printf(args, function, before, depth) or self.build(
                args[0], function, before, depth + 1
            )
        if len(args) < 2:
            return None
        if name in ("Wrap", "WithMessage"):
            message = self.build(args[1], function, before, depth + 1)
        else:
            message = self.printf(args[1:], function, before, depth) or self.build(
                args[1], function, before, depth + 1
            )
        tail = [_Built((literal(": "), hole(self.text(args[0]))), "opaque", wrapped=True)]
        return [
            _Built(b.parts, "format" if b.form == "opaque" else b.form, b.defined_at, True)
            for b in _combine(message, tail)
        ]

    # -- sites --------------------------------------------------------------------------

    def emit(
        self,
        call: Node,
        built: Sequence[_Built],
        where: _Where,
        *,
        message: Node | None,
        error_class: str,
        kind: SiteKind = SiteKind.RAISE,
        severity: Severity = Severity.ERROR,
        prefix: Sequence[TemplatePart] = (),
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
    ) -> None:
        """Record one site per alternative of the message (see :meth:`FileContext.site`).

        A call that only forwards its function's variadic arguments (``logger.Fatal(args...)``
        in a logging wrapper) has no message of its own and is no site.
        """
        arguments = _arguments(call) if call.type == "call_expression" else []
        if (
            arguments
            and arguments[-1].type == "variadic_argument"
            and all(all(p.hole for p in b.parts) for b in built)
        ):
            return
        sentinel = self.sentinel_of.get(_key(call))
        if sentinel is not None:
            error_class = sentinel
            if built:
                self.sentinels[sentinel] = {
                    "parts": _dump(merge((*prefix, *built[0].parts))),
                    "line": self.context.line(where.statement),
                }
        scope = self.scope(where.top)
        for alternative in built[:_MAX_ALTERNATIVES]:
            form = alternative.form
            if prefix and form == "opaque":
                form = "concat"
            self.context.site(
                where.statement,
                (*prefix, *alternative.parts),
                error_class=error_class,
                form=form,
                message=message,
                kind=kind,
                severity=severity,
                scope=scope,
                http_status=http_status,
                error_code=error_code,
                defined_at=alternative.defined_at,
                chained=chained or alternative.wrapped,
            )

    def site_call(self, call: Node) -> None:  # noqa: C901 - one dispatch over call shapes
        """Read a call the query found: which kind of site it is, if any."""
        if _key(call) in self.consumed:
            return
        self.consumed.add(_key(call))
        callee = call.child_by_field_name("function")
        if callee is None:
            return
        if callee.type == "identifier":
            receiver, name = "", self.text(callee)
        else:
            operand = callee.child_by_field_name("operand")
            field = callee.child_by_field_name("field")
            if operand is None or field is None:
                return
            receiver, name = self.text(operand), self.text(field)
        args = _arguments(call)
        first = self.text(args[0]) if args else ""
        where = self.where(call)
        function, before = where.function, call.start_byte
        if name == "panic" and not receiver:
            self.panic(call, args, where)
        elif (
            name in _GRPC_CONSTRUCTORS
            and len(args) >= 2
            and (first.startswith("codes.") or receiver in ("status", "grpc"))
        ):
            self.grpc(call, name, args, where)
        elif name in _HTTP_HELPERS or first.startswith("http.Status"):
            self.http(call, receiver, name, args, where)
        elif receiver == "http" and name == "Error" and len(args) >= 3:
            status = self.status(args[2])
            built = self.build(args[1], function, before)
            self.emit(
                call,
                built,
                where,
                message=args[1],
                error_class="http.Error",
                kind=SiteKind.HTTP,
                http_status=status,
            )
        elif self.is_error_constructor(receiver, name):
            found = self.constructor_message(name, args, function, before, 0)
            if found is None:
                return
            message = args[1] if name.startswith("W") and len(args) > 1 else args[0]
            self.emit(call, found, where, message=message, error_class=f"{receiver}.{name}")
        elif name in _STDERR_PRINTS and receiver == "fmt" and first == "os.Stderr":
            self.stderr(call, name, args[1:], where)
        elif self.test_file and receiver in _TEST_RECEIVERS and name in _TEST_METHODS:
            style = "Printf" if name.endswith("f") else "Println"
            built = self.formatted(style, args, where, call.start_byte)
            self.emit(
                call,
                built,
                where,
                message=args[0] if args else None,
                error_class=f"{receiver}.{name}",
                kind=SiteKind.ASSERT,
            )
        elif name in _LOG_METHODS and _is_logger(receiver):
            self.log(call, receiver, name, args, where)

    def panic(self, call: Node, args: Sequence[Node], where: _Where) -> None:
        if not args:
            return
        argument = args[0]
        if self.construct(argument, where, kind=SiteKind.RAISE):
            return
        # ``panic(ErrX)`` stays opaque here; the link step may resolve the sentinel.
        built = self.build(argument, where.function, call.start_byte)
        self.emit(
            call, built, where, message=argument, error_class="panic", severity=Severity.CRITICAL
        )

    def grpc(self, call: Node, name: str, args: Sequence[Node], where: _Where) -> None:
        code = self.text(args[0]).removeprefix("codes.")
        known = code in GRPC_CODES
        if name.endswith("f"):
            built = self.printf(args[1:], where.function, call.start_byte, 0)
        else:
            built = None
        built = built or self.build(args[1], where.function, call.start_byte)
        shown = literal(code) if known else hole(self.text(args[0]))
        prefix = (literal("rpc error: code = "), shown, literal(" desc = "))
        callee = call.child_by_field_name("function")
        self.emit(
            call,
            built,
            where,
            message=args[1],
            error_class=self.text(callee) if callee is not None else name,
            prefix=prefix,
            error_code=code if known else None,
        )

    def status(self, node: Node) -> int | None:
        """An HTTP status written as ``http.StatusNotFound`` or ``404``."""
        text = self.text(node)
        if text.startswith("http.Status"):
            return HTTP_STATUS.get(text.removeprefix("http.Status"))
        if node.type == "int_literal" and text.isdigit():
            return int(text)
        return None

    def http(
        self, call: Node, receiver: str, name: str, args: Sequence[Node], where: _Where
    ) -> None:
        """``echo.NewHTTPError(http.StatusBadRequest, "…")`` and helpers shaped like it."""
        if not args:
            return
        status = self.status(args[0])
        if status is None or status < 400:
            return
        callee = call.child_by_field_name("function")
        error_class = self.text(callee) if callee is not None else name
        rest = args[1:]
        function, before = where.function, call.start_byte
        if not rest:
            if name not in _HTTP_HELPERS:
                return
            built = [_Built((literal(status_text(status)),), "default")]
        elif (
            len(rest) > 1
            and name not in _HTTP_HELPERS
            and rest[0].type
            in (
                "interpreted_string_literal",
                "raw_string_literal",
            )
        ):
            built = self.printf(rest, function, before, 0) or self.build(rest[0], function, before)
        else:
            built = self.build(rest[0], function, before)
        if all(b.form == "opaque" for b in built) and not re.search("Error|Abort", name):
            return
        self.emit(
            call,
            built,
            where,
            message=rest[0] if rest else None,
            error_class=error_class,
            kind=SiteKind.HTTP,
            http_status=status,
        )

    def stderr(self, call: Node, name: str, args: Sequence[Node], where: _Where) -> None:
        """``fmt.Fprintf(os.Stderr, …)``: an exit site before ``os.Exit``, else a log site."""
        built = self.formatted("P" + name[2:], args, where, call.start_byte)
        if not built:
            return
        exits = self.exits_next(where.statement)
        if not exits and not self.looks_like_error(built):
            return
        self.emit(
            call,
            built,
            where,
            message=args[0] if args else None,
            error_class="os.Exit" if exits else "os.Stderr",
            kind=SiteKind.EXIT if exits else SiteKind.LOG,
            severity=Severity.CRITICAL if exits else Severity.ERROR,
        )

    def exits_next(self, statement: Node) -> bool:
        """Whether the statement after this one is ``os.Exit(n)`` with ``n`` not 0."""
        following = statement.next_named_sibling
        while following is not None and following.type == "comment":
            following = following.next_named_sibling
        if following is None or following.type != "expression_statement":
            return False
        text = self.text(following).replace(" ", "")
        return text.startswith("os.Exit(") and text != "os.Exit(0)"

    def formatted(
        self, style: str, args: Sequence[Node], where: _Where, before: int
    ) -> list[_Built]:
        """A print-family message: ``Printf`` (format), ``Println`` (spaced) or ``Print``.

        The newline a ``…ln`` call or a format ends with is the line's end, not the message.
        """
        if not args:
            return []
        function = where.function
        if style == "Printf":
            built = self.printf(args, function, before, 0) or self.build(args[0], function, before)
        else:
            built = self.sprint(args, function, before, 0, ln=style == "Println")
        return [_Built(_strip_newline(b.parts), b.form, b.defined_at, b.wrapped) for b in built]

    @staticmethod
    def looks_like_error(built: Sequence[_Built]) -> bool:
        """Whether a printed message reads like an error (an error word, an ``err`` value)."""
        for alternative in built:
            text = "".join(p.text for p in alternative.parts if not p.hole)
            if _ERROR_WORDS.search(text):
                return True
            if any(p.hole and _ERRORISH_HOLE.search(p.text) for p in alternative.parts):
                return True
        return False

    def log_message(
        self, suffix: str, args: Sequence[Node], where: _Where, *, std: bool = True
    ) -> list[_Built]:
        """The message of a logger call, by the method's suffix (see the module docstring)."""
        if not args:
            return []
        before = args[0].start_byte
        if suffix == "f":
            return self.formatted("Printf", args, where, before)
        if suffix == "ln":
            return self.formatted("Println", args, where, before)
        if suffix in ("w", "S", "Context") or (not std and self.structured(args)):
            candidates = [a for a in args[:2] if self.string_value(a) is not None]
            chosen = candidates[0] if candidates else args[0]
            if suffix in ("S", "Context") and not candidates and len(args) > 1:
                chosen = args[1]
            return self.build(chosen, where.function, before)
        return self.formatted("Print", args, where, before)

    def structured(self, args: Sequence[Node]) -> bool:
        """Whether arguments after a message are fields (``zap.Error(err)``, ``"key", v``)."""
        rest = args[1:]
        if not rest:
            return True
        if any(self.text(a).startswith(("zap.", "slog.", "attribute.")) for a in rest):
            return True
        return self.string_value(rest[0]) is not None and len(rest) % 2 == 0

    def log(
        self, call: Node, receiver: str, name: str, args: Sequence[Node], where: _Where
    ) -> None:
        base, suffix = _LOG_METHODS[name]
        level, kind = _LEVEL_KIND[base]
        std = receiver == "log"
        built = self.log_message(suffix, args, where, std=std)
        if not built:
            return
        if base == "Print" and not self.looks_like_error(built):
            return
        if base == "Print" and any(
            "warn" in "".join(p.text for p in b.parts if not p.hole).lower() for b in built
        ):
            level = "WARNING"
        if std and base in ("Fatal", "Panic", "Print"):
            error_class = f"log.{base}"
        elif base == "Panic":
            error_class = "panic"
        else:
            error_class = level
        self.emit(
            call,
            built,
            where,
            message=args[0],
            error_class=error_class,
            kind=kind,
            severity=_SEVERITY[level],
        )

    def returned(self, node: Node) -> None:
        """A value a ``return`` gives: a sentinel (``return ErrX``) or an error type literal."""
        if node.type in ("identifier", "selector_expression"):
            text = self.text(node)
            last = text.rsplit(".", 1)[-1]
            if not _SENTINEL_NAME.match(last) or not _IDENTIFIER.match(text):
                return
            where = self.where(node)
            self.context.site(
                where.statement,
                (hole(text),),
                error_class=last,
                form="sentinel",
                message=node,
                scope=self.scope(where.top),
            )
            return
        self.construct(node, self.where(node), kind=SiteKind.RAISE)

    def construct(self, node: Node, where: _Where, *, kind: SiteKind) -> bool:
        """Record ``&T{…}``/``T{…}`` of a (possible) error type of this package."""
        literal_node = node
        if node.type == "unary_expression":
            operand = node.child_by_field_name("operand")
            if operand is None or self.text(node)[:1] != "&":
                return False
            literal_node = operand
        if literal_node.type != "composite_literal":
            return False
        type_node = literal_node.child_by_field_name("type")
        if type_node is None or type_node.type != "type_identifier":
            return False
        type_name = self.text(type_node)
        if type_name not in self.error_types and "err" not in type_name.lower():
            return False
        body = literal_node.child_by_field_name("body")
        values: list[list[Any]] = []
        for element in body.named_children if body is not None else ():
            if element.type == "keyed_element":
                key_node, value_node = element.named_children[0], element.named_children[-1]
                key: str | None = self.text(key_node)
            elif element.type == "literal_element":
                key, value_node = None, element
            else:
                continue
            inner = value_node.named_children[0] if value_node.named_children else value_node
            values.append([key, self.value_source(inner), self.string_value(inner)])
        line = self.context.line(where.statement)
        self.constructs.append({"line": line, "type": type_name, "values": values})
        self.context.site(
            where.statement,
            (hole(f"{type_name}{{…}}"),),
            error_class=type_name,
            form="construct",
            message=node,
            kind=kind,
            scope=self.scope(where.top),
        )
        return True

    def value_source(self, node: Node) -> str:
        """A value's source, a composite literal shortened to ``T{…}`` (a hole's name)."""
        shown = node.named_children[0] if node.type == "unary_expression" else node
        if shown is not None and shown.type == "composite_literal":
            type_node = shown.child_by_field_name("type")
            prefix = "&" if shown is not node else ""
            return f"{prefix}{self.text(type_node) if type_node is not None else ''}{{…}}"
        return self.text(node)

    # -- declarations -------------------------------------------------------------------

    def declarations(self) -> None:
        """Read the top-level declarations: package, constants, types, sentinels, methods."""
        methods: list[Node] = []
        specs: list[Node] = []
        for node in self.root.named_children:
            kind = node.type
            if kind == "package_clause":
                name = next((c for c in node.named_children), None)
                self.package = self.text(name) if name is not None else ""
            elif kind in ("const_declaration", "var_declaration"):
                specs.extend(_specs(node))
            elif kind == "type_declaration":
                self.types(node)
            elif kind == "method_declaration":
                methods.append(node)
        for _ in range(2):  # constants may use constants declared after them
            for spec in specs:
                self.constant(spec)
        for spec in specs:
            self.sentinel(spec)
        for method in methods:
            self.error_method(method)

    def types(self, declaration: Node) -> None:
        for spec in declaration.named_children:
            if spec.type != "type_spec":
                continue
            name, body = spec.child_by_field_name("name"), spec.child_by_field_name("type")
            if name is None or body is None or body.type != "struct_type":
                continue
            fields: list[str] = []
            for field in walk_fields(body):
                names = [c for c in field.named_children if c.type == "field_identifier"]
                if names:
                    fields.extend(self.text(n) for n in names)
                else:
                    type_node = field.child_by_field_name("type")
                    if type_node is not None:
                        fields.append(self.text(type_node).lstrip("*").rsplit(".", 1)[-1])
            self.fields[self.text(name)] = fields

    def constant(self, spec: Node) -> None:
        """``const msg = "…"`` (or a string ``var``): a string constant of the file."""
        for name, expression in _assigned(spec):
            text = self.text(name)
            if text in self.strings or expression.type == "call_expression":
                continue
            built = self.build(expression, None, expression.start_byte)
            if len(built) == 1 and built[0].is_literal and built[0].form != "opaque":
                self.strings[text] = (built[0].text, self.context.line(spec))

    def sentinel(self, spec: Node) -> None:
        """``var ErrX = errors.New(…)``: mark the call; ``const ErrX = T("…")``: a site."""
        for name, expression in _assigned(spec):
            text = self.text(name)
            if expression.type != "call_expression":
                continue
            self.sentinel_of[_key(expression)] = text
            callee = expression.child_by_field_name("function")
            args = _arguments(expression)
            if (
                callee is not None
                and callee.type == "identifier"
                and _SENTINEL_NAME.match(text)
                and len(args) == 1
                and self.string_value(args[0]) is not None
            ):
                # A conversion to a string error type: ``const ErrX = Error("…")``.
                self.consumed.add(_key(expression))
                built = self.build(args[0], None, expression.start_byte)
                self.emit(
                    expression, built, self.where(expression), message=args[0], error_class=text
                )

    def error_method(self, method: Node) -> None:
        """``func (e *T) Error() string``: a site per ``return``; its templates are exported."""
        name = method.child_by_field_name("name")
        parameters = method.child_by_field_name("parameters")
        result = method.child_by_field_name("result")
        body = method.child_by_field_name("body")
        if (
            name is None
            or self.text(name) != "Error"
            or parameters is None
            or parameters.named_children
            or result is None
            or self.text(result) != "string"
            or body is None
        ):
            return
        receiver = self.receiver(method)
        if receiver is None:
            return
        variable, type_name, _, _ = receiver
        self.error_types.add(type_name)
        templates: list[list[list[Any]]] = []
        where = _Where(method, method, method)
        for statement in _returns(body):
            expressions = statement.named_children
            if len(expressions) != 1 or len(expressions[0].named_children) != 1:
                continue
            expression = expressions[0].named_children[0]
            built = self.build(expression, method, statement.start_byte)
            self.emit(
                statement,
                built,
                _Where(statement, where.function, where.top),
                message=expression,
                error_class=type_name,
            )
            templates.extend(_dump(b.parts) for b in built)
        self.errors[type_name] = {"receiver": variable, "templates": templates}

    def exports(self) -> dict[str, Any]:
        exports: dict[str, Any] = {"package": self.package}
        if self.strings:
            exports["strings"] = {
                name: {"text": text, "line": line} for name, (text, line) in self.strings.items()
            }
        for key, value in (
            ("sentinels", self.sentinels),
            ("errors", self.errors),
            ("fields", self.fields),
            ("constructs", self.constructs),
        ):
            if value:
                exports[key] = value
        return exports


_LOGGER_NAME = re.compile(r"(?:[a-z]?log(?:ger|rus)?|\w*Log(?:ger)?|sugar)\Z")
_LOGGER_PACKAGES = frozenset({"log", "slog", "klog", "glog", "logrus", "zerolog"})
_LOGGER_CALLS = frozenset({"zap.L", "zap.S"})
_CALL_ARGUMENTS = re.compile(r"\([^()]*\)")


def _is_logger(receiver: str) -> bool:
    """Whether a method's receiver is a logger (``logger``, ``s.log``, ``zap.L()`` …)."""
    head = receiver
    for _ in range(4):
        stripped = _CALL_ARGUMENTS.sub("", head)
        if stripped == head:
            break
        head = stripped
    segments = head.split(".")
    return (
        bool(_LOGGER_NAME.match(segments[-1]))
        or segments[0] in _LOGGER_PACKAGES
        or ".".join(segments[:2]) in _LOGGER_CALLS
    )


def walk_fields(struct: Node) -> list[Node]:
    """The field declarations of a struct type."""
    found: list[Node] = []
    for child in struct.named_children:
        if child.type == "field_declaration_list":
            found.extend(c for c in child.named_children if c.type == "field_declaration")
    return found


def _assigned(spec: Node) -> list[tuple[Node, Node]]:
    """The (name, value) pairs of a ``const``/``var`` spec that gives each name a value."""
    names = spec.children_by_field_name("name")
    value = spec.child_by_field_name("value")
    if value is None or len(names) != len(value.named_children):
        return []
    return list(zip(names, value.named_children, strict=True))


def _specs(declaration: Node) -> list[Node]:
    specs: list[Node] = []
    for child in declaration.named_children:
        if child.type in ("const_spec", "var_spec"):
            specs.append(child)
        elif child.type in ("var_spec_list", "const_spec_list"):
            specs.extend(c for c in child.named_children if c.type in ("const_spec", "var_spec"))
    return specs


def _returns(body: Node) -> list[Node]:
    """The ``return`` statements of a function body, not those of closures inside it."""
    found: list[Node] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "return_statement":
            found.append(node)
            continue
        if node.type == "func_literal":
            continue
        stack.extend(reversed(node.named_children))
    return found


def _strip_newline(parts: Sequence[TemplatePart]) -> tuple[TemplatePart, ...]:
    if parts and not parts[-1].hole and parts[-1].text.endswith("\n"):
        last = parts[-1].text[:-1]
        return (*parts[:-1], literal(last)) if last else tuple(parts[:-1])
    return tuple(parts)


# -- linking ---------------------------------------------------------------------------------


@dataclass
class _Package:
    """What the files of one package (a directory and a package name) declare."""

    strings: dict[str, tuple[str, Location]]
    sentinels: dict[str, tuple[tuple[TemplatePart, ...], Location]]
    errors: dict[str, dict[str, Any]]
    fields: dict[str, list[str]]


def _package_key(result: FileResult) -> tuple[str, str]:
    package = result.exports.get("package")
    return posixpath.dirname(result.path), package if isinstance(package, str) else ""


def _packages(results: Sequence[FileResult]) -> dict[tuple[str, str], _Package]:
    packages: dict[tuple[str, str], _Package] = {}
    for result in results:
        exports: dict[str, Any] = result.exports
        package = packages.setdefault(_package_key(result), _Package({}, {}, {}, {}))
        for name, entry in exports.get("strings", {}).items():
            location = Location(path=result.path, line=int(entry["line"]))
            package.strings.setdefault(name, (str(entry["text"]), location))
        for name, entry in exports.get("sentinels", {}).items():
            location = Location(path=result.path, line=int(entry["line"]))
            package.sentinels.setdefault(name, (_load(entry["parts"]), location))
        package.errors.update(exports.get("errors", {}))
        package.fields.update(exports.get("fields", {}))
    return packages


class _Linker:
    """Finishes the sites of a source with what other files of their package declare."""

    def __init__(self, results: Sequence[FileResult]) -> None:
        self.packages = _packages(results)
        by_name: dict[str, list[_Package]] = {}
        for (_, name), package in self.packages.items():
            by_name.setdefault(name, []).append(package)
        self.by_name = {name: found[0] for name, found in by_name.items() if len(found) == 1}

    def lookup(self, package: _Package, name: str) -> tuple[_Package, str] | None:
        """Find the package a (possibly qualified) name is declared in."""
        if "." not in name:
            return package, name
        qualifier, _, bare = name.partition(".")
        other = self.by_name.get(qualifier)
        return (other, bare) if other is not None else None

    def sentinel(
        self, package: _Package, name: str
    ) -> tuple[tuple[TemplatePart, ...], Location] | None:
        found = self.lookup(package, name)
        return found[0].sentinels.get(found[1]) if found is not None else None

    def string(self, package: _Package, name: str) -> tuple[str, Location] | None:
        found = self.lookup(package, name)
        return found[0].strings.get(found[1]) if found is not None else None

    def link(self, result: FileResult) -> list[RaiseSite]:
        package = self.packages[_package_key(result)]
        exports: dict[str, Any] = result.exports
        constructs: dict[tuple[int, str], dict[str, Any]] = {}
        for entry in exports.get("constructs", []):
            constructs.setdefault((int(entry["line"]), str(entry["type"])), entry)
        out: list[RaiseSite] = []
        for site in result.sites:
            if site.form == "sentinel":
                linked = self.sentinel_use(site, package)
            elif site.form == "construct":
                entry = constructs.get((site.line, site.error_class))
                linked = self.construction(site, package, entry)
            else:
                linked = self.holes(site, package)
            if linked is not None:
                out.append(linked)
        return out

    def sentinel_use(self, site: RaiseSite, package: _Package) -> RaiseSite | None:
        found = self.sentinel(package, site.template.parts[0].text)
        if found is None:
            return None
        parts, location = found
        return site.model_copy(
            update={"template": MessageTemplate(parts=parts), "defined_at": location}
        )

    def construction(
        self, site: RaiseSite, package: _Package, entry: dict[str, Any] | None
    ) -> RaiseSite | None:
        error = package.errors.get(site.error_class)
        if error is None:
            return None
        templates = error.get("templates", [])
        if len(templates) != 1 or entry is None:
            return site.model_copy(update={"form": "opaque"})
        receiver = str(error.get("receiver", ""))
        fields = package.fields.get(site.error_class, [])
        given: dict[str, tuple[str, str | None]] = {}
        for position, (key, source, text) in enumerate(entry.get("values", [])):
            name = key if key is not None else (fields[position] if position < len(fields) else "")
            if name:
                given[name] = (str(source), text)
        parts: list[TemplatePart] = []
        for part in _load(templates[0]):
            parts.extend(_fill_field(part, receiver, given))
        filled = site.model_copy(update={"template": MessageTemplate(parts=merge(parts))})
        return self.holes(filled, package)

    def holes(self, site: RaiseSite, package: _Package) -> RaiseSite:
        """Replace holes naming a constant or a sentinel of the package by their text."""
        if not any(p.hole and _NAMED.match(p.text) for p in site.template.parts):
            return site
        parts: list[TemplatePart] = []
        defined_at = site.defined_at
        changed = False
        for part in site.template.parts:
            if not part.hole or part.style not in ("", "%s", "%v", "%w"):
                parts.append(part)
                continue
            name = _NAMED.match(part.text)
            if name is None:
                parts.append(part)
                continue
            constant = (
                self.string(package, part.text) if part.style != "%w" and not name[1] else None
            )
            sentinel = self.sentinel(package, name[0].removesuffix(".Error()"))
            sentinel = sentinel if constant is None else None
            if constant is not None:
                parts.append(literal(constant[0]))
                defined_at = defined_at or constant[1]
            elif sentinel is not None:
                parts.extend(sentinel[0])
                defined_at = defined_at or sentinel[1]
            else:
                parts.append(part)
                continue
            changed = True
        if not changed:
            return site
        form = site.form
        if site.template.is_opaque and len(site.template.parts) == 1:
            form = "constant" if all(not p.hole for p in parts) else "sentinel"
        return site.model_copy(
            update={
                "template": MessageTemplate(parts=merge(parts)),
                "form": form,
                "defined_at": defined_at,
            }
        )


def _fill_field(
    part: TemplatePart, receiver: str, given: dict[str, tuple[str, str | None]]
) -> list[TemplatePart]:
    """Replace ``e.Field`` in a hole of an ``Error()`` template by the literal's value."""
    if not part.hole or not receiver:
        return [part]
    match = re.match(rf"{re.escape(receiver)}\.(\w+)(.*)\Z", part.text)
    if match is None or match[1] not in given:
        return [part]
    source, text = given[match[1]]
    if text is not None and not match[2] and part.style in ("", "%s", "%v"):
        return [literal(text)]
    return [hole(source + match[2], part.style)]


class GoExtractor(TreeSitterExtractor):
    """Finds the error sites of Go files (see the module docstring).

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "go"
    suffixes: tuple[str, ...] = (".go",)
    version = code_version("1", __name__)
    grammars: ClassVar[dict[str, str]] = {".go": "go"}

    def find_sites(self, root: Node, context: FileContext) -> None:
        """Read the declarations, then each call and ``return`` value the query finds."""
        miner = _Miner(root, context)
        miner.declarations()
        found: list[tuple[int, int, str, Node]] = []
        for _, captures in query_matches("go", _SITE_QUERY, root):
            if "call" in captures:
                node = captures["call"][0]
                found.append((node.start_byte, -node.end_byte, "call", node))
            for node in captures.get("returned", ()):
                found.append((node.start_byte, -node.end_byte, "returned", node))
        found.sort(key=lambda item: (item[0], item[1]))
        for _, _, what, node in found:
            if what == "call":
                miner.site_call(node)
            else:
                miner.returned(node)
        context.exports.update(miner.exports())

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Resolve constants, sentinels and error types across the files of each package."""
        linker = _Linker(results)
        return [site for result in results for site in linker.link(result)]
