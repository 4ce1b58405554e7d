r"""Python extraction: every place a module raises, asserts, logs, warns or exits with a message.

One pass over the module's statements (expressions are only entered where a site can be)
finds the sites; :class:`~errdex.analyze.templates.TemplateBuilder` turns each message
expression into a template. Names are resolved flow-sensitively inside a function (the
assignments that reach the site, one alternative per branch, ``msg +=`` appended), then
against class and module constants. What only other files can tell — an imported constant, an
inherited class attribute, a message table, the text an exception class builds, a factory
function, a message helper's callers — is written to :attr:`FileResult.exports` and finished
by :meth:`PythonExtractor.link`, which sees every file of the source.

The exports of a Python file (keys only when non-empty; ``T`` is a template)::

    {
      "module": "pkg.sub.mod",                  # dotted name from the path
      "imports": {"MSG": "pkg.errors.MSG"},     # local name -> absolute dotted target
      "stars": ["pkg.errors"],                  # modules imported with *
      "constants": {"MSG": [T, ...]},           # module-level message constants
      "tables": {"ERRORS": {"key": [T, ...]}},  # module-level dicts of messages
      "instances": {"DEPRECATED": "FooWarning"}, # warnings made once (text in constants)
      "objects": {"cache": "WarningCache"},     # module-level instances: their class
      "classes": {"Qual": C},                   # every class of the module
      "functions": {"qual": F},                 # factories and message helpers
      "pending": [P, ...],                      # sites the link step may complete
      "calls": [H, ...],                        # candidate calls of message helpers
      "called": "name 12 40\nother 7",          # lines that call a name (callers, #5)
    }
    T = {"parts": [[text, hole, style], ...], "line": 12, "i18n": false}
    C = {"line": 3, "bases": ["errors.Base"],            # base classes as written
         "status": 401,                                  # class attribute status_code
         "constants": {name: [T]}, "tables": {name: {key: [T]}},
         "init": {"params": ["path"], "star": true,      # __init__ after self; *args?
                  "attributes": {"path": "path"},        # self.path = path
                  "defaults": {name: [T]}},
         "text": {"how": "str" | "init" | "default" | "attribute",
                  "templates": [T], "param": "message"}} # the text the class builds
    F = {"line": 7, "params": [...], "method": "method" | "class" | "static",
         "defaults": {name: [T]}, "ints": {name: 400},
         "returns": [{"class": "ValueError", "line": 9, "templates": [T], "call": K,
                      "status": 400, "code": "E1"}],     # factory: returned exceptions
         "message": [T],                                 # returned message texts
         "helper": {"param": "msg", "sites": [index], "status": "status_code"}}
    K = {"callee": "errors.MyError" | None, "self": "method" | None, "class": "Qual",
         "args": [[part, ...], ...], "keywords": {name: [part, ...]}, "star": false,
         "ints": {name: 404},                            # a call, for binding
         "nullable": [0, "name"]}                        # arguments that may be None
    P = {"site": index, "message": [part, ...] | None, "form": "reference",
         "call": K | None, "given": true}                # given: a message is passed
    H = {"site": RaiseSite JSON, "call": K}

Every site carries :class:`~errdex.models.CodeFacts` (#5), gathered in the same pass: the walk
keeps a stack of the guards in force (the ``if``/``elif``/``else`` branches and ``match`` cases
it is inside, the sibling ``if`` statements before it in the same block that ``return``,
``continue``, ``break`` or ``raise``, and the ``except KeyError`` handlers around a ``d[k]``)
and of the ``except`` handlers it is inside. The stack holds AST nodes only; a guard's text,
kind, subject and values are worked out when a site needs them (cached per guard), so a
module without sites pays for pushes and pops alone. Containers named in a guard are resolved
by name against the module's and the class's constants and the Enum classes of the file.
The subject is the nearest tested name the message shows (else the nearest tested name); its
accepted values are the values other branches handle without raising, the members of a
container it must be in, or its ``Literal[...]`` annotation — none when the site runs for some
values only, or for the subject's type, size or truth. Exception bases are resolved against
the file's classes and Python's builtins. :meth:`PythonExtractor.link`
then completes bases from other files and adds the callers of each site's function (by name,
from ``called``).

A part whose style starts with ``"\0ref"`` is a reference (see
:func:`~errdex.analyze.templates.reference`). Resolution is by name through the module's
imports (relative imports resolved, re-exports followed, dotted names matched by suffix when
the source root is above the package), then by a unique class or function name in the source;
Python's full import semantics are not modelled.
"""

from __future__ import annotations

import ast
import builtins
import functools
import io
import re
import tokenize
import warnings
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Final

from errdex.analyze.nodes import (
    Add,
    And,
    AnnAssign,
    Assert,
    Assign,
    AsyncFor,
    AsyncFunctionDef,
    AsyncWith,
    Attribute,
    AugAssign,
    Await,
    BinOp,
    BitOr,
    BoolOp,
    Break,
    Call,
    ClassDef,
    Compare,
    Constant,
    Continue,
    Delete,
    Dict,
    Eq,
    Expr,
    For,
    FormattedValue,
    FunctionDef,
    GeneratorExp,
    If,
    IfExp,
    Import,
    ImportFrom,
    In,
    Is,
    IsNot,
    JoinedStr,
    List,
    ListComp,
    Load,
    Match,
    MatchAs,
    MatchClass,
    MatchOr,
    MatchSingleton,
    MatchValue,
    Mod,
    Name,
    Not,
    NotEq,
    NotIn,
    Or,
    Raise,
    Return,
    Set,
    SetComp,
    Slice,
    Starred,
    Subscript,
    Try,
    Tuple,
    UnaryOp,
    USub,
    While,
    With,
    Yield,
    YieldFrom,
)
from errdex.analyze.templates import (
    MAX_ALTERNATIVES,
    REFERENCE_STYLE,
    Built,
    TemplateBuilder,
    apply_format_arguments,
    apply_operations,
    apply_percent_values,
    bind_holes,
    has_reference,
    literal_length,
    merge_parts,
    part_reference,
    percent_values,
    reference,
    source_text,
    template_part,
    transform_parts,
    unparse,
    without_references,
)
from errdex.errors import ExtractionError
from errdex.extract import Finish, blob_digest, code_version
from errdex.extract.files import SourceFile
from errdex.models import (
    CodeFacts,
    FileResult,
    Guard,
    Location,
    MessageTemplate,
    Parameter,
    ProblemKind,
    RaiseSite,
    Severity,
    SiteContext,
    SiteKind,
    TemplatePart,
)

MESSAGE_KEYWORDS: Final[tuple[str, ...]] = (
    "msg",
    "message",
    "detail",
    "reason",
    "description",
    "text",
    "error",
)
"""Keyword arguments that carry the message when no positional argument is text."""

HELPER_PARAMETERS: Final = frozenset(
    {"msg", "message", "reason", "detail", "error_message", "error_msg", "err_msg"}
)
"""Parameter names that make a function a message helper when it raises or logs them."""

_CODE_KEYWORDS: Final[tuple[str, ...]] = ("error_code", "code", "id", "errno")
_STATUS_KEYWORDS: Final[tuple[str, ...]] = ("status_code", "status", "code", "http_status")

_LOG_LEVELS: Final = {
    "critical": Severity.CRITICAL,
    "fatal": Severity.CRITICAL,
    "error": Severity.ERROR,
    "exception": Severity.ERROR,
    "error_once": Severity.ERROR,
    "warning": Severity.WARNING,
    "warn": Severity.WARNING,
    "warning_once": Severity.WARNING,
    "warning_rank0_once": Severity.WARNING,
    "warning_advice": Severity.WARNING,
}
_LEVEL_CLASS: Final = {"fatal": "CRITICAL", "exception": "ERROR", "warn": "WARNING"}

_BUILTIN_EXCEPTIONS: Final = frozenset(
    name
    for name in dir(builtins)
    if isinstance(getattr(builtins, name), type)
    and issubclass(getattr(builtins, name), BaseException)
)
_BUILTIN_NAMES: Final = frozenset(dir(builtins))
_EXCEPTION_SUFFIXES: Final[tuple[str, ...]] = (
    "Error",
    "Exception",
    "Warning",
    "Exit",
    "Failure",
    "Interrupt",
    "Abort",
    "Fault",
    "Critical",
)
_CHECK_CLASSES: Final = frozenset({"Error", "Warning", "Critical", "Info", "Debug"})
_REBINDING: Final = r"\b{0}\s*:=|\bas\s+{0}\b"
"""A walrus or an ``as`` binding the name (formatted with it, escaped)."""
_EXCEPTION_ROOTS: Final = frozenset({"BaseException", "Exception", "Warning"})
_MAX_CLASS_TEXTS: Final = 4
"""At most this many records of the text of a class no site names (see ``class_texts``)."""
_MIN_CLASS_TEXT: Final = 8
"""A class's own text needs this many literal characters to be a record of its own."""
_MAX_HELPER_DEPTH: Final = 3
"""A message handed from helper to helper is followed this many calls deep."""
_GIVEN_HOLE: Final = "self.args[0]"
_SUPER_STR: Final = "super().__str__()"
_GIVEN_TEXTS: Final = frozenset({_GIVEN_HOLE, "str(self.args[0])"})
"""Holes that show the message an exception was given (see ``_with_given``)."""
_ARGS_TEXTS: Final = frozenset({"self.args", "str(self.args)", "repr(self.args)"})
"""Holes that show all the arguments an exception was given."""
_PROPERTIES: Final = frozenset({"property", "cached_property"})
"""Decorators that make ``self.name`` call the method (``functools.cached_property`` too)."""
_TEXT_METHODS: Final = frozenset({"__init__", "__str__"})
"""The methods where a class builds the text its instances show."""


_DEFAULT_ATTRIBUTES: Final[tuple[str, ...]] = (
    "message",
    "msg",
    "default_detail",
    "default_message",
    "default_msg",
    "detail",
    "description",
)
_MESSAGE_AT: Final = {"PydanticCustomError": (1, "message_template")}
"""Exception classes of other packages whose message is not their first text argument:
the position and keyword of their message (``PydanticCustomError("path_type", "Path
does not point to a {path_type}")``: the first is an error type)."""

_CONTEXT_TEMPLATES: Final = frozenset({"PydanticCustomError"})
"""Exception classes that fill the ``{name}`` fields of their message from a context."""

_SHOWN_METHODS: Final = frozenset({"format_message", "formatrepr"})
"""Methods of an exception class whose text a framework shows a user instead of ``str(e)``:
click's ``format_message`` (``Error: …``), pytest's ``formatrepr`` (``E   fixture 'x' not
found``)."""

_DEFAULT_PARAMETERS: Final = frozenset(
    {"message", "msg", "detail", "default_message", "description"}
)
# Names of functions whose calls may hand a message to a helper (checked before the link step
# knows which functions are helpers, so that only plausible calls are kept).
_HELPER_NAME: Final = re.compile(
    r"err|fail|raise|abort|warn|exception|invalid|reject|fatal|die|panic|complain|bad|log|"
    r"check|validate|ensure|require|assert|expect|verify",
    re.IGNORECASE,
)
_DEPRECATED_DECORATORS: Final = frozenset(
    {"warnings.deprecated", "typing_extensions.deprecated", "typing.deprecated"}
)
"""The PEP 702 decorator, wherever it is imported from."""

_WARNING_HELPER: Final = re.compile(r"(?:^|_)(?:warn|deprecation)(?:_once)?$|^warn_|_warn_")
"""A function that shows a warning by its name (``rank_zero_warn``, ``warn_once``)."""
_FACTORY_NAME: Final = re.compile(r"err|exc|fail|invalid|raise|warn|abort|problem", re.IGNORECASE)
_MESSAGE_NAME: Final = re.compile(
    r"msg|message|text|err|detail|reason|warning|fmt|template|description|hint", re.IGNORECASE
)
_MESSAGE_VARIABLE: Final = re.compile(r"msg|message|text|reason|detail|description", re.IGNORECASE)


# The walk asks these of nearly every call and name, and names recur: a dictionary lookup is
# several times cheaper than the search (#3).
@functools.lru_cache(maxsize=1 << 16)
def _helper_like(name: str) -> bool:
    """Tell whether a function of this name may hand a message to a helper (``_HELPER_NAME``)."""
    return _HELPER_NAME.search(name) is not None


@functools.lru_cache(maxsize=1 << 16)
def _message_like(name: str) -> bool:
    """Tell whether a name evidently holds or builds text (``_MESSAGE_NAME``)."""
    return _MESSAGE_NAME.search(name) is not None


_MAX_PENDING_DEPTH: Final = 8

_MAX_RETURNS: Final = 32
"""At most this many exceptions a factory returns are kept (one per class and text)."""

# -- code facts (#5)
# Guard entries on the walk's stack (see _ModuleExtractor._facts).
_IF: Final = 0
_CASE: Final = 1
_LOOKUP: Final = 2
_EXITS: Final[tuple[type[ast.stmt], ...]] = (Return, Raise, Continue, Break)
_ENUM_BASES: Final = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
_MAX_GUARDS: Final = 16  # the nearest ones are kept
_MAX_GUARD_ENTRIES: Final = 256  # guard entries read per site (enclosing ones first; see _facts)
_MAX_VALUES: Final = 64
_MAX_CALLERS: Final = 10
_MAX_DOCSTRING: Final = 400
_MAX_FRAGMENT: Final = 80  # annotations and defaults longer than this are written ``...``
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD: Final = re.compile(r"[^\W_]")  # a letter or a digit: text that says something
_SUBJECT_NODES: Final[tuple[type[ast.expr], ...]] = (Name, Attribute, Subscript)
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t]*\n")
_BUILTIN_ANCESTORS: dict[str, list[str]] = {
    name: [base.__name__ for base in getattr(builtins, name).__mro__[1:] if base is not object]
    for name in _BUILTIN_EXCEPTIONS
}


def decode_source(file: SourceFile) -> str:
    """Decode a Python file's bytes as the interpreter would (PEP 263 cookie, BOM, UTF-8).

    Args:
        file: The file, with its bytes.

    Returns:
        The text.

    Raises:
        ExtractionError: The file holds NUL bytes (``binary``) or cannot be decoded
            (``encoding``).
    """
    data = file.data or b""
    if b"\0" in data:
        raise ExtractionError(
            "the file contains NUL bytes (binary?)", path=file.path, kind=ProblemKind.BINARY.value
        )
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        raise ExtractionError(
            f"cannot decode: {exc}", path=file.path, kind=ProblemKind.ENCODING.value, line=line
        ) from exc


def split_lines(text: str) -> list[str]:
    """Split text into lines the way Python's tokenizer counts them (LF, CRLF, CR).

    Not :meth:`str.splitlines`, which also breaks at form feeds and Unicode line separators.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()  # the newline ending the last line opens no line of its own
    return lines


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _bare_names(node: ast.expr | None) -> list[str]:
    """The bare class names an ``except`` clause catches (``BaseException`` for a bare one)."""
    if node is None:
        return ["BaseException"]
    if type(node) is Tuple:
        return [name for element in node.elts for name in _bare_names(element)]
    return [unparse(node).rsplit(".", 1)[-1]]


def module_name(path: str) -> str:
    """Return the dotted module name of a path (``pkg/sub/__init__.py`` → ``pkg.sub``)."""
    stem = path[:-3] if path.endswith(".py") else path
    parts = [part for part in stem.split("/") if part]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


# -- JSON helpers -------------------------------------------------------------------------


def _dump_parts(parts: Sequence[TemplatePart]) -> list[list[Any]]:
    return [[p.text, p.hole, p.style] for p in parts]


def _load_parts(data: Sequence[Sequence[Any]]) -> tuple[TemplatePart, ...]:
    return tuple(template_part(str(t), bool(h), str(s)) for t, h, s in data)


def _dump_template(built: Built, line: int) -> dict[str, Any]:
    return {"parts": _dump_parts(merge_parts(built.parts)), "line": line, "i18n": built.i18n}


# -- small AST helpers --------------------------------------------------------------------


def _continued(before: dict[str, list[Built]], path: _Variables) -> _Variables:
    """The variables after a block when only ``path`` goes on past it."""
    if isinstance(before, _Variables):
        path.touched |= before.touched  # what the path around the block changed, as _merge
    return path


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value a call passes by keyword ``name`` (``warnings.warn(message=...)``), if any."""
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _ends_path(body: Sequence[ast.stmt]) -> bool:
    """Whether a block returns at its end, so that no code after it runs on its path.

    Only ``return``: after ``break`` or ``continue`` the code after the loop runs, and after
    ``raise`` an enclosing handler or ``finally`` may, with the variables the block left.
    """
    return bool(body) and type(body[-1]) is Return


def _class_name(node: ast.expr) -> str | None:
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Attribute):
        return node.attr
    return None


def _named_class(node: ast.expr) -> str | None:
    """The class a name or attribute names (``errors.NotFound``: ``NotFound``), if any."""
    name = _class_name(node)
    return name if name is not None and _is_class_like(name) else None


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner is not None else None
    return None


_OPTIONAL_HEADS: Final = frozenset({"Optional", "typing.Optional", "t.Optional", "te.Optional"})


def _annotated_class(node: ast.expr, depth: int = 0) -> str | None:
    """The class an annotation names (``Context``, ``"Context"``, ``Optional[Context]``).

    A union with None counts as its class; any other union, generic or expression is None.
    """
    if depth > 3:
        return None
    if isinstance(node, Constant) and isinstance(node.value, str):
        if len(node.value) > _MAX_FRAGMENT:
            return None
        try:
            inner = ast.parse(node.value.strip(), mode="eval").body
        except (SyntaxError, ValueError):
            return None
        return _annotated_class(inner, depth + 1)
    if isinstance(node, Subscript) and _dotted(node.value) in _OPTIONAL_HEADS:
        return _annotated_class(node.slice, depth + 1)
    if isinstance(node, BinOp) and isinstance(node.op, BitOr):
        kept = [
            side
            for side in (node.left, node.right)
            if not (isinstance(side, Constant) and side.value is None)
        ]
        return _annotated_class(kept[0], depth + 1) if len(kept) == 1 else None
    name = _dotted(node)
    return name if name is not None and _is_class_like(name.rpartition(".")[2]) else None


def _defaults(arguments: ast.arguments) -> list[tuple[str, ast.expr]]:
    """The parameters of a signature that have a default, with it."""
    positional = [*arguments.posonlyargs, *arguments.args]
    found = [
        (argument.arg, default)
        for argument, default in zip(
            positional[len(positional) - len(arguments.defaults) :], arguments.defaults, strict=True
        )
    ]
    found += [
        (argument.arg, default)
        for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    ]
    return found


def _enclosing(outer: _Scope) -> dict[str, list[Built]]:
    """The message variables a function defined in ``outer`` sees of the functions around it.

    A name ``outer`` binds to something other than a message (a parameter, ``msg =
    getattr(…)``) hides the one of a function further out.
    """
    seen = {k: v for k, v in outer.enclosing.items() if k not in outer.bound}
    seen.update(outer.variables)
    return seen


_BODIES: Final[tuple[str, ...]] = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields of a statement (or ``except`` clause, ``case`` block) that hold statements."""


def _statements(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and every statement in it at any depth (nested functions and classes too).

    Where only statements are asked for (assignments, ``raise``): ``ast.walk`` visits every
    expression as well, most of a tree (#3).
    """
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for name in _BODIES:
            children = getattr(current, name, None)
            if type(children) is list:
                stack.extend(children)


def _nullable_params(call: Mapping[str, Any], params: Sequence[str]) -> set[str]:
    """The parameters a call's arguments that may be None are bound to (``K``'s nullable)."""
    return {
        params[at] if type(at) is int and at < len(params) else str(at)
        for at in call.get("nullable") or ()
    }


def _class_defaults(
    node: ast.FunctionDef | ast.AsyncFunctionDef, defaults: list[tuple[str, ast.expr]]
) -> dict[str, str]:
    """The class each parameter stands for when a call passes none.

    Its default (``category=DeprecationWarning``), or the class the body puts in place of
    ``None`` first thing (``if category is None: category = SAWarning``).

    Args:
        node: The function.
        defaults: Its parameters with a default (:func:`_defaults`).
    """
    found: dict[str, str] = {}
    for name, default in defaults:
        chosen = _class_name(default)
        if chosen is not None and _is_class_like(chosen):
            found[name] = chosen
    replaced: set[str] = set()
    for statement in node.body[:4]:
        if (
            type(statement) is If
            and isinstance(test := statement.test, Compare)
            and isinstance(test.left, Name)
            and isinstance(test.ops[0], Is)
            and isinstance(test.comparators[0], Constant)
            and test.comparators[0].value is None
            and len(statement.body) == 1
            and isinstance(assign := statement.body[0], Assign)
            and [_dotted(t) for t in assign.targets] == [test.left.id]
            and (chosen := _class_name(assign.value)) is not None
            and _is_class_like(chosen)
        ):
            found[test.left.id] = chosen
            replaced.add(test.left.id)
    if not found:
        return found  # most functions: no walk of the body
    # A parameter the body sets otherwise (``if strict: error_class = StrictError``) may be
    # another class.
    assignments = Counter(
        target.id
        for child in _statements(node)
        if isinstance(child, (Assign, AugAssign, AnnAssign))
        for target in (child.targets if isinstance(child, Assign) else [child.target])
        if isinstance(target, Name) and target.id in found
    )
    return {
        name: chosen
        for name, chosen in found.items()
        if assignments[name] <= (1 if name in replaced else 0)
    }


def _with_message(
    spec: dict[str, Any] | None, message: ast.expr | None, parts: tuple[TemplatePart, ...]
) -> dict[str, Any] | None:
    """A raise's call spec with the message argument one alternative of it.

    ``raise ValidationError(f"{instance!r} {message}")`` with two texts of ``message``: each
    record binds the class's text to its own.
    """
    at = spec.get("message_at") if spec is not None else None
    if spec is None or at is None or message is None:
        return spec
    copy = dict(spec)
    if isinstance(at, int):
        copy["args"] = [*spec["args"][:at], _dump_parts(parts), *spec["args"][at + 1 :]]
    else:
        copy["keywords"] = {**spec["keywords"], at: _dump_parts(parts)}
    return copy


_STRIPS: Final = frozenset({"strip", "lstrip", "rstrip"})


def _stripped_parameter(
    value: ast.expr, params: Collection[str]
) -> tuple[str, str, str | None] | None:
    """The parameter, method and characters of ``param.rstrip(".")``, else None.

    Also ``strip`` and ``lstrip``, of no characters or constant ones.
    """
    if (
        type(value) is not Call
        or type(value.func) is not Attribute
        or value.func.attr not in _STRIPS
        or type(value.func.value) is not Name
        or value.func.value.id not in params
        or value.keywords
        or len(value.args) > 1
    ):
        return None
    chars: str | None = None
    if value.args:
        argument = value.args[0]
        if type(argument) is not Constant or not isinstance(argument.value, str):
            return None
        chars = argument.value
    return value.func.value.id, value.func.attr, chars


def _strip(text: str, *, method: str, chars: str | None) -> str:
    """Apply ``str.strip``, ``lstrip`` or ``rstrip`` (see :func:`_stripped_parameter`)."""
    stripped: str = getattr(text, method)(chars)
    return stripped


_SEVERITY_RANK: Final = {Severity.CRITICAL: 3, Severity.ERROR: 2, Severity.WARNING: 1}


MAX_NESTED_REFERENCE: Final = 2000
"""A call's argument keeps a reference to resolve at link only up to this long (its JSON)."""

_CLASS_VALUE_KINDS: Final = frozenset({Name, Attribute, BoolOp, IfExp, Subscript, Call})
"""The expressions that may name exception classes (see ``_class_options``)."""

_LIST_KEY: Final = "[]"
"""Prefix of the key under which a local list's first item is kept with the variables."""

_LIST_CHANGES: Final = frozenset(
    {"append", "insert", "extend", "sort", "reverse", "clear", "remove", "pop"}
)
"""The methods that change what a list's first item is (see ``_list_changed``)."""

_NO_ITEM: Final = Built((), "empty-list")
"""The first item of a list that may still be empty."""


def _choose_class(
    choices: dict[str, list[ast.expr]],
    name: str,
    value: ast.expr,
    tables: Mapping[str, list[ast.expr]],
) -> None:
    """Note that a local name is bound to exception classes, or to something else.

    Every class a name is bound to in the function counts (the branches of an ``if``), in
    the order they come; a binding to anything else forgets them. A value may name several:
    ``TABLE.get(key)`` or ``TABLE[key]`` of a module's table of classes, ``a or b``, ``a if c
    else b`` (anthropic's ``ERROR_CLASSES.get(…) or … or (InternalServerError if … else
    APIStatusError)``).
    """
    options = _class_options(value, tables, 0)
    if not options:
        choices.pop(name, None)
        return
    known = choices.setdefault(name, [])
    for option in options:
        if len(known) < _MAX_RETURNS and not any(
            _class_name(seen) == _class_name(option) for seen in known
        ):
            known.append(option)


def _class_options(
    value: ast.expr, tables: Mapping[str, list[ast.expr]], depth: int
) -> list[ast.expr] | None:
    """The exception classes an expression may evaluate to, or None when it may be another."""
    kind = type(value)
    if kind is Name or kind is Attribute:
        return [value] if _named_class(value) is not None else None
    if depth > 4:
        return None
    if kind is BoolOp and type(value.op) is Or:  # type: ignore[attr-defined]
        parts = [_class_options(v, tables, depth + 1) for v in value.values]  # type: ignore[attr-defined]
    elif kind is IfExp:
        parts = [
            _class_options(value.body, tables, depth + 1),  # type: ignore[attr-defined]
            _class_options(value.orelse, tables, depth + 1),  # type: ignore[attr-defined]
        ]
    elif kind is Subscript and type(value.value) is Name:  # type: ignore[attr-defined]
        return tables.get(value.value.id)  # type: ignore[attr-defined]
    elif (
        kind is Call
        and type(value.func) is Attribute  # type: ignore[attr-defined]
        and value.func.attr == "get"  # type: ignore[attr-defined]
        and type(value.func.value) is Name  # type: ignore[attr-defined]
        and value.func.value.id in tables  # type: ignore[attr-defined]
    ):
        table = tables[value.func.value.id]  # type: ignore[attr-defined]
        if len(value.args) < 2:  # type: ignore[attr-defined]
            return table
        parts = [table, _class_options(value.args[1], tables, depth + 1)]  # type: ignore[attr-defined]
    else:
        return None
    if any(part is None for part in parts):
        return None
    # The classes named outright first, then a table's: the first are the fallbacks every
    # other status gets (``InternalServerError``), and a long table may pass the cap.
    parts.sort(key=lambda part: len(part or ()))
    return [option for part in parts for option in part or ()]


def _class_table(value: ast.expr | None) -> list[ast.expr] | None:
    """The classes of a dict display whose every value is an exception class, else None."""
    if type(value) is not Dict or not value.values:
        return None
    classes: list[ast.expr] = []
    for item in value.values:
        held = _named_class(item)
        if held is None:
            return None
        if not any(_class_name(seen) == held for seen in classes):
            classes.append(item)
    return classes


_DOLLAR_FIELD: Final = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*)|(\$))")
"""A ``string.Template`` field: ``$NAME``, ``${NAME}``, or ``$$`` (a ``$``, or two where no
template fills the text: a hole either way)."""

_CALLS_SUBSTITUTE: Final = re.compile(r"^(?:safe_)?substitute ", re.MULTILINE)
"""A module's ``called`` export calls ``substitute`` or ``safe_substitute``."""


def _dollar_holes(site: RaiseSite) -> RaiseSite:
    """A site whose literals hold ``$NAME`` fields, with a hole for each (see ``_DOLLAR_FIELD``).

    A hole matches the field's own text too, so a ``$`` that no template fills still matches.
    """
    parts = site.template.parts
    if not any(not part.hole and "$" in part.text for part in parts):
        return site
    made: list[TemplatePart] = []
    for part in parts:
        if part.hole or "$" not in part.text:
            made.append(part)
            continue
        position = 0
        for found in _DOLLAR_FIELD.finditer(part.text):
            made.append(template_part(part.text[position : found.start()]))
            made.append(template_part(found[1] or found[2] or found[3], True))
            position = found.end()
        made.append(template_part(part.text[position:]))
    return site.model_copy(update={"template": MessageTemplate(parts=merge_parts(made))})


_STDERR_WRITERS: Final = frozenset({"print", "echo", "secho"})
"""The functions that may print to standard error (see :func:`_to_stderr`)."""

_DISPLAYS: Final = frozenset({"display", "_display"})
"""Receivers that log as a logger does: ansible's ``display.warning(msg)``, printed as
``[WARNING]: msg``."""

_ARGUMENT_PARSER: Final = re.compile(r"parser$", re.IGNORECASE)
"""What an argparse or optparse parser is named (``parser``, ``self.arg_parser``)."""

_PYTEST_OUTCOMES: Final = {"fail": "Failed", "exit": "Exit"}
"""pytest's functions that end a test or a session with a message, and what they raise."""

_HANDED_MESSAGES: Final = {"werkzeug.local.LocalProxy": ("unbound_message", "RuntimeError")}
"""Callables of other packages that keep a message given by keyword and raise it later, with
the class they raise it with: flask's ``current_app = LocalProxy(_cv_app, "app",
unbound_message=_no_app_msg)`` is where "Working outside of application context." comes
from, though werkzeug raises it (``raise RuntimeError(unbound_message)``)."""


def _to_stderr(call: ast.Call, name: str, func: ast.expr) -> bool:
    """Whether a call prints to standard error.

    ``print(…, file=sys.stderr)``, and click's and typer's ``echo(…, err=True)``.
    """
    if name == "print" and type(func) is Name:
        target = _keyword(call, "file")
        return target is not None and _dotted(target) == "sys.stderr"
    if name in ("echo", "secho"):
        err = _keyword(call, "err")
        return type(err) is Constant and err.value is True
    return False


def _log_method(value: ast.expr) -> str | None:
    """The logger method a value is (``logger.error``), the most severe of an ``a if c else b``."""
    if type(value) is IfExp:
        methods = [m for m in (_log_method(value.body), _log_method(value.orelse)) if m]
        return max(methods, key=lambda m: _SEVERITY_RANK[_LOG_LEVELS[m]], default=None)
    if (
        type(value) is Attribute
        and value.attr in _LOG_LEVELS
        and "log" in _receiver_name(value.value).lower()
    ):
        return value.attr
    return None


def _calls_a_function(parts: Sequence[TemplatePart]) -> bool:
    """Whether a text is what a function of the source returns, resolved at link.

    pymongo's ``super().__init__(_format_detailed_error(error, details))``.
    """
    return any((part_reference(p) or {}).get("call") is not None for p in parts)


def _own_message(site: RaiseSite) -> bool:
    """Whether a raise gives its exception a message (not only other values, or nothing)."""
    if site.form in ("class-default", "class-template"):
        return False  # the message is the class's own text
    parts = site.template.parts
    return not site.template.is_opaque or any(p.hole and _carries_message(p.text) for p in parts)


def _carries_message(hole: str) -> bool:
    """Whether a hole of a class's text is the message the class is given (``self.msg``)."""
    name = hole.removeprefix("self.").removeprefix("str(").removesuffix(")")
    return hole == _GIVEN_HOLE or name in HELPER_PARAMETERS or name in _DEFAULT_PARAMETERS


def _class_held(node: ast.expr) -> str | None:
    """The exception class a value names, as written (``UndefinedError``, ``exc.Invalid``)."""
    name = _dotted(node)
    if name is None:
        return None
    last = name.rpartition(".")[2]
    return name if _is_class_like(last) and _looks_like_exception(last) else None


def _is_class_like(name: str) -> bool:
    return name[:1].isupper()


def _looks_like_exception(name: str) -> bool:
    return name in _BUILTIN_EXCEPTIONS or name.endswith(_EXCEPTION_SUFFIXES)


def _receiver_name(node: ast.expr) -> str:
    if isinstance(node, Name):
        return node.id
    if isinstance(node, Attribute):
        return node.attr
    if isinstance(node, Call):
        return _receiver_name(node.func)
    return ""


_STATUS_NAME: Final = re.compile(r"HTTP_(\d{3})(?:_|$)")


def _int_constant(node: ast.expr | None) -> int | None:
    """Read an integer constant, or an HTTP status written by name.

    ``HTTPStatus.NOT_FOUND``, ``status.HTTP_404_NOT_FOUND`` and ``HTTP_403_FORBIDDEN`` all
    give 403/404.
    """
    if (
        isinstance(node, Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    ):
        return node.value
    name = None
    if isinstance(node, Attribute):
        if node.attr == "value":
            return _int_constant(node.value)
        name = node.attr
    elif isinstance(node, Name):
        name = node.id
    if name is None:
        return None
    match = _STATUS_NAME.match(name)
    if match:
        return int(match.group(1))
    if isinstance(node, Attribute) and name.isupper():
        try:
            return int(HTTPStatus[name])
        except KeyError:
            return None
    return None


def _code_constant(node: ast.expr) -> str | None:
    if (
        isinstance(node, Constant)
        and isinstance(node.value, (str, int))
        and not isinstance(node.value, bool)
    ):
        return str(node.value)
    if isinstance(node, Attribute) and isinstance(node.value, Name) and node.value.id == "errno":
        return node.attr
    return None


def _short_source(node: ast.expr) -> str:
    text = source_text(node)
    return text if len(text) <= 60 else text[:57] + "..."


def _has_text(parts: Sequence[TemplatePart]) -> bool:
    """Whether a class text says something: literal text, or a class attribute of its own."""
    return bool(literal_length(parts)) or any(
        (target := part_reference(part)) is not None and target.get("constant") for part in parts
    )


def _formats_arguments(parts: Sequence[TemplatePart]) -> bool:
    """Whether a class text is its message %-formatted with its other arguments."""
    return any(
        (target := part_reference(part)) is not None and target.get("percent") for part in parts
    )


def _literal_text(parts: Sequence[TemplatePart]) -> str:
    return "".join(p.text for p in parts if not p.hole)


# -- code facts helpers (#5) --------------------------------------------------------------


def _value_text(node: ast.expr) -> str | None:
    """A value a guard tests against, as source text.

    A literal (``'draft_decode'``), a constant name (``MAX``) or an Enum-like member
    (``Mode.DRAFT``); None for anything else.
    """
    kind = type(node)
    if kind is Constant:
        value = node.value  # type: ignore[attr-defined]
        if value is Ellipsis:
            return None
        text = repr(value)
        return text if len(text) <= 200 else None
    if kind is UnaryOp and type(node.op) is USub:  # type: ignore[attr-defined]
        operand = node.operand  # type: ignore[attr-defined]
        if (
            type(operand) is Constant
            and isinstance(operand.value, (int, float))
            and not isinstance(operand.value, bool)
        ):
            return f"-{operand.value!r}"
        return None
    if kind is Name:
        name: str = node.id  # type: ignore[attr-defined]
        return name if len(name) > 1 and name.isupper() else None
    if kind is Attribute:
        chain = _dotted(node)
        if chain is None:
            return None
        parts = chain.split(".")
        if parts[-1].isupper() and len(parts[-1]) > 1:
            return chain
        if parts[0] not in ("self", "cls") and any(part[:1].isupper() for part in parts[:-1]):
            return chain
    return None


_NORMALISERS: Final = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip"})


def _normalised(node: ast.expr) -> ast.expr:
    """``mode.lower()`` → ``mode``: the values compared are still values of ``mode``."""
    if (
        type(node) is Call
        and not node.args
        and type(node.func) is Attribute
        and node.func.attr in _NORMALISERS
        and type(node.func.value) in _SUBJECT_NODES
    ):
        return node.func.value
    return node


def _is_none(node: ast.expr) -> bool:
    return type(node) is Constant and node.value is None


def _is_type_call(node: ast.expr) -> bool:
    return (
        type(node) is Call
        and type(node.func) is Name
        and node.func.id == "type"
        and len(node.args) == 1
    )


def _enum_members(node: ast.ClassDef) -> list[tuple[str, ast.expr]] | None:
    """The members of an Enum class (name, value), None when the class is no Enum."""
    for base in node.bases:
        name = (_dotted(base) or "").rpartition(".")[2]
        if name in _ENUM_BASES or name.endswith("Enum"):
            break
    else:
        return None
    members: list[tuple[str, ast.expr]] = []
    for statement in node.body:
        kind = type(statement)
        if kind is Assign:
            targets = statement.targets  # type: ignore[attr-defined]
            if len(targets) == 1 and type(targets[0]) is Name:
                name = targets[0].id
                if not name.startswith("_"):
                    members.append((name, statement.value))  # type: ignore[attr-defined]
        elif kind is AnnAssign and statement.value is not None:  # type: ignore[attr-defined]
            target = statement.target  # type: ignore[attr-defined]
            if type(target) is Name and not target.id.startswith("_"):
                members.append((target.id, statement.value))  # type: ignore[attr-defined]
    return members


def _class_constant(node: ast.ClassDef, name: str) -> ast.expr | None:
    """The value assigned to a name in a class body."""
    for statement in node.body:
        kind = type(statement)
        if kind is Assign:
            targets = statement.targets  # type: ignore[attr-defined]
            if len(targets) == 1 and type(targets[0]) is Name and targets[0].id == name:
                value: ast.expr = statement.value  # type: ignore[attr-defined]
                return value
        elif kind is AnnAssign:
            target = statement.target  # type: ignore[attr-defined]
            if type(target) is Name and target.id == name:
                return statement.value  # type: ignore[attr-defined,no-any-return]
    return None


def _pattern_values(pattern: ast.pattern) -> tuple[tuple[str, ...], bool] | None:
    """The values (or class names) a ``case`` pattern tests, and whether all are values.

    None when the pattern always matches (``case _``, ``case name``).
    """
    kind = type(pattern)
    if kind is MatchValue:
        value = pattern.value  # type: ignore[attr-defined]
        text = _value_text(value) or _dotted(value)
        return ((text,), True) if text else ((), False)
    if kind is MatchSingleton:
        return ((repr(pattern.value),), True)  # type: ignore[attr-defined]
    if kind is MatchAs:
        inner = pattern.pattern  # type: ignore[attr-defined]
        return _pattern_values(inner) if inner is not None else None
    if kind is MatchOr:
        values: list[str] = []
        literal = True
        for alternative in pattern.patterns:  # type: ignore[attr-defined]
            shown = _pattern_values(alternative)
            if shown is None:
                return None
            values.extend(shown[0])
            literal = literal and shown[1]
        return tuple(values), literal and bool(values)
    if kind is MatchClass:
        name = _dotted(pattern.cls)  # type: ignore[attr-defined]
        return ((name,) if name else ()), False
    return (), False


# -- what one module knows ----------------------------------------------------------------


@dataclass
class _ClassInfo:
    """What a class tells about its messages (see the module docstring, ``C``)."""

    qualname: str
    line: int
    bases: list[str]
    constants: dict[str, list[Built]] = field(default_factory=dict)
    tables: dict[str, dict[str, list[Built]]] = field(default_factory=dict)
    instance: dict[str, list[Built]] = field(default_factory=dict)
    attribute_params: dict[str, str] = field(default_factory=dict)
    attribute_strips: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """The ``self.x = param.rstrip(".")`` of ``attribute_params``: the method and its chars."""
    super_call: dict[str, Any] | None = None
    """What the ``__init__`` gives the base's (``super().__init__(pool, message)``)."""
    assigned: set[str] = field(default_factory=set)
    """The ``self.x`` the ``__init__`` sets to a text (one set to two has no one value)."""
    has_init: bool = False
    star: bool = False
    params: list[str] = field(default_factory=list)
    defaults: dict[str, list[Built]] = field(default_factory=dict)
    str_text: list[Built] = field(default_factory=list)
    shown_text: list[Built] = field(default_factory=list)
    """What its ``format_message`` or ``formatrepr`` returns: the text a tool shows a user
    (click's ``Error: …``, pytest's ``E   fixture 'x' not found``)."""
    init_text: list[Built] = field(default_factory=list)
    default_text: tuple[str, list[Built]] | None = None
    status: int | None = None

    def export(self) -> dict[str, Any]:
        data: dict[str, Any] = {"line": self.line, "bases": self.bases}
        if self.status is not None:
            data["status"] = self.status
        if self.constants:
            data["constants"] = _export_table(self.constants)
        if self.tables:
            data["tables"] = {name: _export_table(t) for name, t in self.tables.items()}
        if self.has_init:
            init: dict[str, Any] = {"params": self.params}
            if self.star:
                init["star"] = True
            if self.attribute_params:
                init["attributes"] = self.attribute_params
            if self.attribute_strips:
                init["strips"] = {
                    name: list(strip) for name, strip in self.attribute_strips.items()
                }
            if self.defaults:
                init["defaults"] = _export_table(self.defaults)
            if self.super_call is not None:
                init["super"] = self.super_call
            data["init"] = init
        text = self._text()
        if text is not None:
            data["text"] = text
        if self.init_text:
            # What its __init__ gives its base (a __str__ may decorate it: ``self.args[0]``).
            data["builds"] = _export_list(self.init_text)
        if self.str_text:
            data["str"] = True  # it defines __str__ (with text or not)
        shown = [b for b in self.shown_text if literal_length(b.parts)]
        if shown:
            data["shown"] = _export_list(shown)
        return data

    def _text(self) -> dict[str, Any] | None:
        formatted = [b for b in self.str_text if _formats_arguments(b.parts)]
        if formatted:
            # ``try: return self.args[0] % self.args[1:]`` with a fallback for when the
            # arguments do not fit: the formatted message is what users see.
            return {"how": "str", "templates": _export_list(formatted)}
        if any(_has_text(b.parts) for b in self.str_text):
            return {"how": "str", "templates": _export_list(self.str_text)}
        if self.init_text:
            return {"how": "init", "templates": _export_list(self.init_text)}
        if self.default_text is not None:
            param, built = self.default_text
            return {"how": "default", "templates": _export_list(built), "param": param}
        for name in _DEFAULT_ATTRIBUTES:
            if name in self.constants:
                return {"how": "attribute", "templates": _export_list(self.constants[name])}
        return None


class _FunctionInfo:
    """A function's parameters, and what it returns or passes on (``F``).

    A plain class, not a dataclass: mypyc compiles its ``__init__`` (a dataclass's is
    generated at import and interpreted), and mining makes one per function (#3).

    Attributes:
        qualname: The function's qualified name.
        line: Its ``def`` line.
        params: Its parameters, positional then keyword-only.
        method: ``"method"``, ``"class"`` or ``"static"`` for a method, else empty.
        defaults: The string defaults of its parameters, as templates.
        ints: Its integer defaults.
        classes: The class a parameter stands for when a call passes none
            (``category=SAWarning``).
        helper_param: The parameter a message helper takes its message by.
        helper_sites: The sites a message helper raises or logs its message at.
        helper_status: The HTTP status a helper's sites give.
        returns: What it returns (exceptions, templates), as exports.
        messages: The templates it returns as text.
        is_property: It is a property.
        forwards: The calls it passes its message on to.
        class_param: The parameter whose class the function returns an instance of
            (``return error_type(…)``).
        positional: How many parameters a call may pass by position (before ``*args``).
        vararg: Its ``*args`` name.
        helper_percent: The helper logs its message with its ``*args``
            (``logger.warning(message, *args)``): logging formats the message with the
            caller's further arguments.
    """

    def __init__(
        self,
        *,
        qualname: str,
        line: int,
        params: list[str],
        method: str,
        positional: int = 0,
        vararg: str | None = None,
        is_property: bool = False,
    ) -> None:
        self.qualname = qualname
        self.line = line
        self.params = params
        self.method = method
        self.defaults: dict[str, list[Built]] = {}
        self.ints: dict[str, int] = {}
        self.classes: dict[str, str] = {}
        self.helper_param: str | None = None
        self.helper_sites: list[int] = []
        self.helper_status: str | None = None
        self.returns: list[dict[str, Any]] = []
        self.messages: list[Built] = []
        self.is_property = is_property
        self.forwards: list[dict[str, Any]] = []
        self.class_param: str | None = None
        self.positional = positional
        self.vararg = vararg
        self.helper_percent = False

    def export(self) -> dict[str, Any] | None:
        texts = any(literal_length(b.parts) or has_reference(b.parts) for b in self.messages)
        if (
            not self.returns
            and not self.helper_sites
            and not texts
            and not self.forwards
            and not self.class_param
        ):
            return None
        data: dict[str, Any] = {"line": self.line, "params": self.params}
        if self.method:
            data["method"] = self.method
        if self.is_property:
            data["property"] = True
        if self.defaults:
            data["defaults"] = _export_table(self.defaults)
        if self.ints:
            data["ints"] = self.ints
        if self.classes:
            data["classes"] = self.classes
        if self.returns:
            data["returns"] = self.returns
        if texts:
            data["message"] = _export_list(self.messages[:8])
        if self.forwards:
            data["forwards"] = {"param": self.helper_param, "calls": self.forwards[:4]}
        if self.class_param:
            data["class_param"] = self.class_param
        if self.helper_sites:
            data["helper"] = {
                "param": self.helper_param,
                "sites": self.helper_sites,
                "status": self.helper_status,
            }
            if self.helper_percent:
                data["helper"]["percent"] = self.positional
        return data


def _line_of(built: Built, default: int) -> int:
    return built.defined_at.line if built.defined_at is not None else default


def _export_list(built: Sequence[Built]) -> list[dict[str, Any]]:
    return [_dump_template(b, _line_of(b, 0)) for b in built]


def _export_table(table: Mapping[str, Sequence[Built]]) -> dict[str, Any]:
    return {name: _export_list(built) for name, built in table.items()}


class _Variables(dict[str, list["Built"]]):
    """The message variables of a path, remembering which names the path assigned or dropped.

    A branch starts from a copy of the variables before it; :meth:`_ModuleExtractor._merge`
    then works out only the names some branch touched.
    """

    def __init__(self, before: dict[str, list[Built]]) -> None:
        super().__init__(before)
        self.touched: set[str] = set()

    def __setitem__(self, name: str, value: list[Built]) -> None:
        self.touched.add(name)
        super().__setitem__(name, value)

    def pop(self, name: str, default: Any = None) -> Any:
        """Drop a name (and remember it)."""
        self.touched.add(name)
        return super().pop(name, default)


class _Scope:
    """Where the walker is: class and function, and the message variables reaching here.

    A plain class, not a dataclass: mypyc compiles its ``__init__`` (a dataclass's is
    generated at import and interpreted), and mining makes one per function and class (#3).

    Attributes:
        qualname: The qualified name of the function or class (empty at module level).
        function: The function, when in one.
        cls: The class, when in one.
        method: The method's name, when directly in a class.
        info: The function's facts.
        variables: The message variables reaching here, by name.
        enclosing: The message variables of the functions around this one, where it is
            defined.
        bound: Names bound in the function.
        params: Its parameters.
        caught: Names of caught exceptions.
        header: The facts of the function and class, once worked out.
        containers: Names bound to containers (their values).
        built: Exceptions built into a variable: the span of their object sites, the call and
            the statement (``raise exc``).
        raised: Those of them raised once already (their sites moved to that raise): each
            further ``raise exc`` is a site of its own too.
        assigned: Names the function assigns (a parameter among them no longer holds what
            was passed).
        nested: The functions defined in this one, by name: their qualified names.
        log_aliases: Names bound here to a logger's method, with its level (gunicorn's
            ``log_func``).
        made_by_param: Names bound here to an instance of a parameter
            (``err = error_type(…)``): the parameter.
        class_choices: Names bound here to exception classes, each class they were bound to
            in any branch (docker's ``cls = APIError`` … ``cls = NotFound`` …
            ``raise cls(e, …)``).
        nullable: Names that may hold None: parameters that default to it, names the
            function sets to it (aiohttp's ``uncompleted = None`` …
            ``raise ServerDisconnectedError(uncompleted)``).
    """

    def __init__(
        self,
        *,
        qualname: str = "",
        function: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
        cls: _ClassInfo | None = None,
        method: str = "",
        info: _FunctionInfo | None = None,
        enclosing: dict[str, list[Built]] | None = None,
        bound: set[str] | None = None,
        params: frozenset[str] = frozenset(),
        nullable: set[str] | None = None,
    ) -> None:
        self.qualname = qualname
        self.function = function
        self.cls = cls
        self.method = method
        self.info = info
        self.variables: dict[str, list[Built]] = {}
        self.enclosing: dict[str, list[Built]] = {} if enclosing is None else enclosing
        self.bound: set[str] = set() if bound is None else bound
        self.params = params
        self.caught: frozenset[str] = frozenset()
        self.header: _Header | None = None
        self.containers: dict[str, ast.expr] = {}
        self.built: dict[str, tuple[int, int, ast.Call, ast.stmt]] = {}
        self.raised: dict[str, tuple[int, int, ast.Call, ast.stmt]] = {}
        self.assigned: set[str] = set()
        self.nested: dict[str, str] = {}
        self.log_aliases: dict[str, str] = {}
        self.made_by_param: dict[str, str] = {}
        self.class_choices: dict[str, list[ast.expr]] = {}
        self.nullable: set[str] = set() if nullable is None else nullable


@dataclass(frozen=True)
class _Header:
    """The facts of a site's function and class, worked out once per function."""

    function: str | None
    class_name: str | None
    signature: str | None
    parameters: tuple[Parameter, ...]
    docstring: str | None
    annotations: dict[str, ast.expr]


@dataclass(frozen=True)
class _Found:
    """One guard, worked out: the :class:`~errdex.models.Guard` and what it says of values.

    ``accepts`` holds the values of the subject for which the site is *not* reached because
    another branch handles them (``if x == "a": return``), None when the guard shows none.
    ``rejects``: the site runs only for some values of the subject (``if x == "a": raise``;
    ``if x != "a": return`` before it). ``other``: the guard leads to the site for another
    property of the subject (its type, its size, its truth).
    """

    guard: Guard
    accepts: tuple[str, ...] | None = None
    rejects: bool = False
    other: bool = False


class _ModuleExtractor:
    """Extracts the sites (and exports) of one parsed module."""

    def __init__(self, path: str, lines: list[str], window: int) -> None:
        self.path = path
        self.lines = lines
        self.window = window
        self.module = module_name(path)
        self.package = (
            self.module if path.endswith("__init__.py") else self.module.rpartition(".")[0]
        )
        self.module_constants: dict[str, list[Built]] = {}
        self.module_instances: dict[str, str] = {}
        """Module-level warnings and exceptions made once (``YIELD_FIXTURE =
        PytestDeprecationWarning("…")``): their class; their text is a constant."""
        self.module_objects: dict[str, str] = {}
        """Module-level instances of any class (``warning_cache = WarningCache()``): the class."""
        self.class_tables: dict[str, list[ast.expr]] = {}
        """Module-level dicts whose values are exception classes (anthropic's ``ERROR_CLASSES``)."""
        self.log_aliases: dict[str, str] = {}
        self.module_tables: dict[str, dict[str, list[Built]]] = {}
        self.top_names: set[str] = set()
        self.imports: dict[str, str] = {}
        self.stars: list[str] = []
        self.classes: dict[str, _ClassInfo] = {}
        self.functions: dict[str, _FunctionInfo] = {}
        self.sites: list[RaiseSite] = []
        self.pending: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.called: dict[str, list[int]] = {}
        self._scope = _Scope()
        # Code facts (#5): the guards and except handlers in force where the walk is, and what
        # resolving them needs (module constants, classes by qualified and by short name).
        self._guards: list[tuple[Any, ...]] = []
        self._handlers: list[ast.ExceptHandler] = []
        # The ``try`` statements whose body the walk is in, and what each catches for good.
        self._trys: list[tuple[str, ...]] = []
        self._values: dict[str, ast.expr] = {}
        self._class_defs: dict[str, ast.ClassDef] = {}
        self._class_names: dict[str, ast.ClassDef] = {}
        self._found: dict[tuple[Any, ...], list[_Found]] = {}
        self._bases: dict[str, list[str]] = {}
        self._facts_cache: tuple[ast.stmt, tuple[str, ...], str, CodeFacts] | None = None
        self.builder = TemplateBuilder(self._resolve, self._is_message_name, self._list_start)

    def release(self) -> None:
        """Drop every reference to the tree, so that it is freed as soon as the file is done.

        The extractor and its template builder refer to each other: the builder is replaced
        by one without callbacks, so that reference counting frees the extractor too (the
        pipeline pauses the cyclic collector while it mines, #3).
        """
        self.builder = TemplateBuilder()
        self._guards = []
        self._handlers = []
        self._trys = []
        self._values = {}
        self._class_defs = {}
        self._class_names = {}
        self._found = {}
        self._facts_cache = None
        self._scope = _Scope()

    # -- name resolution -------------------------------------------------------------------

    def _resolve(self, node: ast.expr) -> Sequence[Built] | None:
        scope = self._scope
        kind = type(node)
        if kind is Call or kind is Subscript:
            given = self._given_reference(node)
            if given is not None:
                # What the exception was given (SQLAlchemy's ``message = super().__str__()``,
                # then ``message + " (Background …)"``): bound to the raise's argument at link.
                return [Built((given,), "reference")]
        if kind is Name:
            name: str = node.id  # type: ignore[attr-defined]
            if name in scope.variables:
                return scope.variables[name]
            if name in scope.bound:
                return None
            if name in scope.enclosing:
                # networkx's ``errmsg = f"not implemented for {…} type"`` in the decorator,
                # raised by the function it wraps.
                return scope.enclosing[name]
            if scope.function is None and scope.cls is not None and name in scope.cls.constants:
                return scope.cls.constants[name]
            if name in self.module_constants:
                return self.module_constants[name]
            if name in self.imports or (
                self.stars and name not in self.top_names and name not in _BUILTIN_NAMES
            ):
                return [reference(name, {"name": name})]
            return None
        if kind is Attribute:
            chain = _dotted(node)
            if chain is None:
                return None
            head, _, rest = chain.partition(".")
            if head in ("self", "cls") and "." not in rest:
                cls = scope.cls
                if cls is None:
                    return None
                if rest in cls.constants:
                    if scope.method in _TEXT_METHODS:
                        # A subclass may set its own (botocore's ``fmt``, DRF's
                        # ``default_detail``): the linker reads it from the raised class.
                        target = {"self": rest, "class": cls.qualname, "constant": True}
                        return [reference(chain, target)]
                    return cls.constants[rest]
                if rest in cls.instance:
                    return cls.instance[rest]
                if rest in cls.attribute_params:
                    return None
                return [reference(chain, {"self": rest, "class": cls.qualname})]
            if head in scope.bound or head in scope.variables:
                return None
            if head in self.imports or head in self.top_names:
                return [reference(chain, {"name": chain})]
            return None
        if kind is Call:
            return self._resolve_call(node)  # type: ignore[arg-type]
        if kind is Subscript:
            key_node = node.slice  # type: ignore[attr-defined]
            if (
                isinstance(key_node, IfExp)
                and isinstance(key_node.body, Constant)
                and isinstance(key_node.orelse, Constant)
            ):
                # ``table["a" if flag else "b"]``: both entries are alternatives.
                found: list[Built] = []
                for branch in (key_node.body, key_node.orelse):
                    entry = Subscript(value=node.value, slice=branch, ctx=Load())  # type: ignore[attr-defined]
                    found.extend(self._resolve(entry) or [])
                return found or None
            if (
                isinstance(key_node, Name)
                and key_node.id in scope.params
                and scope.cls is not None
                and (_dotted(node.value) or "").startswith("self.")  # type: ignore[attr-defined]
            ):
                # ``self.error_messages[key]`` in marshmallow's ``make_error(self, key)``: the
                # entry the caller names, in the caller's class's table (bound at link).
                attribute = str(_dotted(node.value))[len("self.") :]  # type: ignore[attr-defined]
                if "." not in attribute:
                    target = {
                        "self": attribute,
                        "key_param": key_node.id,
                        "class": scope.cls.qualname,
                    }
                    return [reference(source_text(node), target)]
            if not (isinstance(key_node, Constant) and isinstance(key_node.value, str)):
                return None
            key = key_node.value
            chain = _dotted(node.value)  # type: ignore[attr-defined]
            if chain is None:
                return None
            head, _, rest = chain.partition(".")
            text = source_text(node)
            if head in ("self", "cls") and rest and "." not in rest:
                cls = scope.cls
                if cls is None:
                    return None
                table = cls.tables.get(rest) or cls.tables.get(f"default_{rest}")
                if table is not None and key in table:
                    return table[key]
                return [reference(text, {"self": rest, "key": key, "class": cls.qualname})]
            if head in scope.bound or head in scope.variables:
                return None
            if not rest and head in self.module_tables:
                return self.module_tables[head].get(key)
            if head in self.imports or head in self.top_names:
                return [reference(text, {"name": chain, "key": key})]
        return None

    def _with_given(self, built: Sequence[Built]) -> list[Built]:
        """Make the holes that show the message the exception was given references to it.

        ``"%s (see %s)" % (message, self.code)`` after ``message = super().__str__()``: the
        hole ``message`` is that message (a hole only shows its expression otherwise).
        """
        scope = self._scope
        variables = scope.variables

        def given(part: TemplatePart) -> TemplatePart | None:
            if not part.hole or part.style.startswith(REFERENCE_STYLE):
                return None
            if part.text == _SUPER_STR and scope.cls is not None:
                return reference(_GIVEN_HOLE, {"args": 0, "super": scope.cls.qualname}).parts[0]
            if part.text in _GIVEN_TEXTS and scope.cls is not None:
                return reference(_GIVEN_HOLE, {"args": 0, "index": True}).parts[0]
            held = variables.get(part.text)
            if held and len(held) == 1 and len(held[0].parts) == 1:
                target = part_reference(held[0].parts[0])
                if target is not None and "args" in target:
                    return held[0].parts[0]
            return None

        result: list[Built] = []
        for b in built:
            swapped = [given(p) for p in b.parts]
            if any(swapped):
                parts = tuple(g or p for g, p in zip(swapped, b.parts, strict=True))
                b = Built(parts, b.form, b.i18n, b.defined_at)
            result.append(b)
        return result

    def _given_reference(self, node: ast.expr) -> TemplatePart | None:
        """A reference to the message an exception was given, if ``node`` reads it, else None.

        In an exception class's method: ``self.args[0]`` (the first argument, whatever their
        number), ``Exception.__str__(self)`` (the one argument), ``super().__str__()`` (what
        the next ``__str__`` up the classes shows: that one argument when none of the
        source's).
        """
        scope = self._scope
        if scope.cls is None or scope.function is None:
            return None
        if (
            isinstance(node, Call)
            and isinstance(node.func, Name)
            and node.func.id == "str"
            and len(node.args) == 1
        ):
            node = node.args[0]  # str(self.args[0])
        target: dict[str, Any] | None = None
        if isinstance(node, Subscript):
            if (
                isinstance(node.value, Attribute)
                and node.value.attr == "args"
                and isinstance(node.value.value, Name)
                and node.value.value.id == "self"
                and isinstance(node.slice, Constant)
                and node.slice.value == 0
            ):
                target = {"args": 0, "index": True}
        elif (
            isinstance(node, Call)
            and isinstance(node.func, Attribute)
            and node.func.attr == "__str__"
            and not node.keywords
        ):
            owner = node.func.value
            if isinstance(owner, Call):  # super().__str__(), super(Cls, self).__str__()
                if isinstance(owner.func, Name) and owner.func.id == "super" and not node.args:
                    target = {"args": 0, "super": scope.cls.qualname}
            elif (
                isinstance(owner, Name)
                and owner.id in _BUILTIN_EXCEPTIONS
                and len(node.args) == 1
                and isinstance(node.args[0], Name)
                and node.args[0].id == "self"
            ):
                target = {"args": 0}
        return None if target is None else reference(_GIVEN_HOLE, target).parts[0]

    def _formats_its_arguments(self, value: ast.expr) -> list[Built] | None:
        """Read ``self.args[0] % self.args[1:]`` in a ``__str__``, else None.

        The message, %-formatted with the other arguments: dateutil's
        ``ParserError("Unknown string format: %s", timestr)``.
        """
        if not (isinstance(value, BinOp) and isinstance(value.op, Mod)):
            return None
        rest = value.right
        if isinstance(rest, Call) and _dotted(rest.func) == "tuple" and len(rest.args) == 1:
            rest = rest.args[0]
        given = self._given_reference(value.left)
        if (
            given is None
            or not isinstance(rest, Subscript)
            or _dotted(rest.value) != "self.args"
            or not isinstance(rest.slice, Slice)
            or not isinstance(rest.slice.lower, Constant)
            or rest.slice.lower.value != 1
            or rest.slice.upper is not None
        ):
            return None
        return [Built(reference(_GIVEN_HOLE, {"args": 0, "percent": True}).parts, "reference")]

    def _resolve_call(self, call: ast.Call) -> Sequence[Built] | None:
        """A call of a function of the source that may return a message (``self.msg(x)``)."""
        func = call.func
        chain = _dotted(func)
        if chain is None:
            return None
        head, _, rest = chain.partition(".")
        scope = self._scope
        if head in ("self", "cls"):
            if scope.cls is None or not rest or "." in rest:
                return None
        elif (
            head in scope.bound
            or head in scope.variables
            or not (head in self.imports or head in self.top_names)
        ):
            return None
        if _is_class_like(chain.rpartition(".")[2]):
            return None
        text = source_text(call)
        for argument in (*call.args, *(k.value for k in call.keywords if k.arg is not None)):
            if type(argument) is not Name or argument.id not in scope.variables:
                continue
            built = scope.variables[argument.id]
            if 1 < len(built) <= MAX_ALTERNATIVES and all(b.form != "opaque" for b in built):
                # hydra's ``_with_full_key(msg, full_key)`` with ``msg`` set on two branches:
                # the function makes its text of each.
                spec = self._call_spec(call, func, argument)
                return [
                    reference(text, {"call": _with_message(spec, argument, merge_parts(b.parts))})
                    for b in built
                ]
            break  # one argument's alternatives at most
        return [reference(text, {"call": self._call_spec(call, func)})]

    def _is_message_name(self, node: ast.expr) -> bool:
        """Tell whether an unresolved name evidently holds text (``MSG``, ``self.message``)."""
        if isinstance(node, Subscript):
            inner = _class_name(node.value)
            return inner is not None and "message" in inner.lower()
        if isinstance(node, Call):
            callee = _class_name(node.func)
            return callee is not None and _message_like(callee)
        name = _class_name(node)
        if name is None:
            return False
        if isinstance(node, Name) and node.id in self._scope.caught:
            return False
        return _message_like(name) or (name.isupper() and len(name) > 1)

    def _list_start(self, name: str) -> Sequence[Built] | None:
        """What a local list's first item may be (see :meth:`TemplateBuilder._joined_list`)."""
        return self._scope.variables.get(_LIST_KEY + name)

    def _list_bound(self, name: str, value: ast.expr) -> None:
        """Note a name bound to a list display (its first item, if any), or to anything else.

        The list's first item is kept under a key no name can have, so that it goes through
        branches as the message variables do.
        """
        variables, key = self._scope.variables, _LIST_KEY + name
        if type(value) is not List:
            if key in variables:
                variables.pop(key)
            return
        items = value.elts
        if not items:
            variables[key] = [_NO_ITEM]
        elif type(items[0]) is not Starred and self.builder.is_string_like(items[0]):
            variables[key] = self.builder.build(items[0])
        else:
            variables.pop(key, None)

    def _list_changed(self, call: ast.Call) -> None:
        """``lines.append(text)`` of a list that may be empty: its first item is that text.

        Any other change of such a list (``insert``, ``extend``, ``sort`` …) leaves its first
        item unknown.
        """
        func = call.func
        if type(func) is not Attribute or type(func.value) is not Name:
            return
        variables, key = self._scope.variables, _LIST_KEY + func.value.id
        starts = variables.get(key)
        if starts is None:
            return
        if func.attr == "append" and len(call.args) == 1 and not call.keywords:
            if any(b is _NO_ITEM for b in starts):
                added = [b for b in starts if b is not _NO_ITEM]
                for built in self.builder.build(call.args[0]):
                    if built not in added:
                        added.append(built)
                variables[key] = added[:MAX_ALTERNATIVES]
        else:
            variables.pop(key)

    def _constant_templates(self, value: ast.expr, form: str) -> list[Built] | None:
        if not self.builder.is_string_like(value):
            return None
        built = self.builder.build(value)
        if all(b.form == "opaque" for b in built):
            return None
        return [
            Built(b.parts, form if b.form == "constant" else b.form, b.i18n, b.defined_at)
            for b in built
        ]

    # -- walking ---------------------------------------------------------------------------

    def run(self, module: ast.Module) -> list[RaiseSite]:
        for statement in module.body:
            kind = type(statement)
            if kind is Import or kind is ImportFrom:
                self._import(statement)  # type: ignore[arg-type]
            elif kind in (ClassDef, FunctionDef, AsyncFunctionDef):
                self.top_names.add(statement.name)  # type: ignore[attr-defined]
                if kind is ClassDef:
                    self._class_defs[statement.name] = statement  # type: ignore[attr-defined,assignment]
                    self._class_names[statement.name] = statement  # type: ignore[attr-defined,assignment]
        values = self._values
        for statement in module.body:
            self._collect_constant(
                statement, self.module_constants, self.module_tables, "constant-ref"
            )
            if type(statement) is If:
                self._branch_constants(statement, 0)
            self._collect_instance(statement)
            self._collect_classes(statement)
            self._collect_log_aliases(statement)
            kind = type(statement)
            if kind is Assign:
                targets = statement.targets  # type: ignore[attr-defined]
                if len(targets) == 1 and type(targets[0]) is Name:
                    values[targets[0].id] = statement.value  # type: ignore[attr-defined]
            elif kind is AnnAssign:
                target = statement.target  # type: ignore[attr-defined]
                if type(target) is Name and statement.value is not None:  # type: ignore[attr-defined]
                    values[target.id] = statement.value  # type: ignore[attr-defined]
        self._walk(module.body)
        return self.sites

    def _collect_log_aliases(self, statement: ast.stmt) -> None:
        """Note module-level names bound to logger methods (celery's ``error = logger.error``)."""
        if not isinstance(statement, Assign) or len(statement.targets) != 1:
            return
        target, value = statement.targets[0], statement.value
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(target, Name):
            pairs.append((target, value))
        elif (
            isinstance(target, Tuple)
            and isinstance(value, Tuple)
            and len(target.elts) == len(value.elts)
        ):
            pairs.extend(zip(target.elts, value.elts, strict=True))
        for name, bound in pairs:
            if (
                isinstance(name, Name)
                and isinstance(bound, Attribute)
                and bound.attr in _LOG_LEVELS
                and "log" in _receiver_name(bound.value).lower()
            ):
                self.log_aliases[name.id] = bound.attr

    def _class_export(self, cls: _ClassInfo) -> dict[str, Any]:
        """A class's exports, with the code around where it builds its own text."""
        data = cls.export()
        built = cls.str_text if any(_has_text(b.parts) for b in cls.str_text) else cls.init_text
        line = next((b.defined_at.line for b in built if b.defined_at is not None), None)
        if line is not None and line <= len(self.lines):
            start = max(1, line - self.window)
            end = min(len(self.lines), line + self.window)
            data["source"] = [start, end, "\n".join(self.lines[start - 1 : end])]
        return data

    def exports(self) -> dict[str, Any]:
        """The facts other files may need (see the module docstring)."""
        data: dict[str, Any] = {"module": self.module}
        if self.imports:
            data["imports"] = self.imports
        if self.stars:
            data["stars"] = self.stars
        if self.module_constants:
            data["constants"] = _export_table(self.module_constants)
        if self.module_tables:
            data["tables"] = {n: _export_table(t) for n, t in self.module_tables.items()}
        if self.module_instances:
            data["instances"] = self.module_instances
        if self.module_objects:
            data["objects"] = self.module_objects
        if self.classes:
            data["classes"] = {q: self._class_export(c) for q, c in self.classes.items()}
        functions = {}
        for qualname, info in self.functions.items():
            exported = info.export()
            if exported is not None:
                functions[qualname] = exported
        if functions:
            data["functions"] = functions
        if self.pending:
            data["pending"] = self.pending
        if self.calls:
            data["calls"] = self.calls
        if self.called:
            # One string ("name 12 40" a line): cheap to validate, store and collect.
            data["called"] = "\n".join(
                f"{name} {' '.join(map(str, lines))}" for name, lines in self.called.items()
            )
        return data

    def _import(self, statement: ast.Import | ast.ImportFrom) -> None:
        if isinstance(statement, Import):
            for alias in statement.names:
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    self.imports.setdefault(head, head)
            return
        base = statement.module or ""
        if statement.level:
            package = self.package.split(".") if self.package else []
            up = statement.level - 1
            if up > len(package):
                return
            prefix = package[: len(package) - up] if up else package
            base = ".".join([*prefix, base] if base else prefix)
        for alias in statement.names:
            if alias.name == "*":
                if base and base not in self.stars:
                    self.stars.append(base)
                continue
            target = f"{base}.{alias.name}" if base else alias.name
            self.imports[alias.asname or alias.name] = target

    def _collect_constant(
        self,
        statement: ast.stmt,
        table: dict[str, list[Built]],
        tables: dict[str, dict[str, list[Built]]],
        form: str,
    ) -> None:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(statement, Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        if not isinstance(target, Name) or value is None:
            return
        line = statement.lineno
        if isinstance(value, Dict):
            entries: dict[str, list[Built]] = {}
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, Constant) and isinstance(key.value, str):
                    built = self._constant_templates(item, form)
                    if built:
                        entries[key.value] = [
                            Built(b.parts, "table", b.i18n, Location(path=self.path, line=line))
                            for b in built
                        ]
            if entries:
                tables[target.id] = entries
            return
        built = self._constant_templates(value, form)
        if built:
            table[target.id] = [
                Built(b.parts, b.form, b.i18n, Location(path=self.path, line=line)) for b in built
            ]

    def _branch_constants(self, statement: ast.If, depth: int) -> None:
        """A module's text constant set again in an ``if``'s branches holds each of its texts.

        bitsandbytes' ``BNB_BACKEND = "CPU"``, then ``"ROCm"``, ``"CUDA"`` or ``"XPU"`` by
        platform: ``f"No compatible {BNB_BACKEND} binary found …"`` is each of them.
        """
        constants = self.module_constants
        for branch in (statement.body, statement.orelse):
            for inner in branch:
                if type(inner) is If and depth < 3:
                    self._branch_constants(inner, depth + 1)
                    continue
                found: dict[str, list[Built]] = {}
                self._collect_constant(inner, found, {}, "constant-ref")
                for name, built in found.items():
                    known = constants.setdefault(name, [])
                    for item in built:
                        if len(known) < MAX_ALTERNATIVES and all(
                            item.parts != seen.parts for seen in known
                        ):
                            known.append(item)

    def _collect_classes(self, statement: ast.stmt) -> None:
        """Note a module-level name bound to classes: a table of them, or an instance of one.

        ``ERROR_CLASSES = {(400, None): BadRequestError, …}`` (anthropic) is a table;
        ``warning_cache = WarningCache()`` an object whose ``warn`` comes from where its class
        does.
        """
        if type(statement) is Assign and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif type(statement) is AnnAssign and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            return
        if type(target) is not Name:
            return
        table = _class_table(value)
        if table is not None:
            self.class_tables[target.id] = table
        elif type(value) is Call and (made := _named_class(value.func)) is not None:
            self.module_objects[target.id] = made

    def _collect_instance(self, statement: ast.stmt) -> None:
        """``NAME = SomeWarning("text")`` at module level: a warning made once, warned later."""
        if not (
            isinstance(statement, Assign)
            and len(statement.targets) == 1
            and isinstance(target := statement.targets[0], Name)
            and isinstance(call := statement.value, Call)
            and (name := _class_name(call.func)) is not None
            and _is_class_like(name)
            and (_looks_like_exception(name) or name.endswith("Warning"))
            and call.args
            and self.builder.is_string_like(call.args[0])
        ):
            return
        built = self._constant_templates(call.args[0], "constant-ref")
        if built:
            self.module_instances[target.id] = name
            self.module_constants[target.id] = [
                Built(b.parts, b.form, b.i18n, Location(path=self.path, line=statement.lineno))
                for b in built
            ]

    def _walk(self, body: Iterable[ast.stmt]) -> None:
        guards = self._guards
        mark = len(guards)  # guards of fall-through ``if``s in this block end with the block
        for statement in body:
            kind = type(statement)
            if kind is Raise:
                self._raise(statement)  # type: ignore[arg-type]
            elif kind is Expr:
                value = statement.value  # type: ignore[attr-defined]
                if type(value) is Await:
                    value = value.value
                if type(value) is Call:
                    self._note_call(value)
                    if type(value.func) is Attribute and value.func.attr in _LIST_CHANGES:
                        self._list_changed(value)
                    self._call(value, statement)
                elif type(value) in (Yield, YieldFrom) and value.value is not None:
                    self._objects(value.value, statement, 0)
            elif kind is Assign or kind is AnnAssign or kind is AugAssign:
                self._assignment(statement)
            elif kind is Return:
                self._return(statement)  # type: ignore[arg-type]
            elif kind is Assert:
                self._assert(statement)  # type: ignore[arg-type]
            elif kind is FunctionDef or kind is AsyncFunctionDef:
                self._function(statement)  # type: ignore[arg-type]
            elif kind is ClassDef:
                self._class(statement)  # type: ignore[arg-type]
            elif kind is If:
                self._if(statement)  # type: ignore[arg-type]
            elif kind is Try or kind.__name__ == "TryStar":
                self._try(statement)
            elif kind is Match:
                self._match(statement)  # type: ignore[arg-type]
            elif kind in (For, AsyncFor, While):
                target = getattr(statement, "target", None)
                if isinstance(target, Name):
                    self._scope.bound.add(target.id)
                    self._scope.variables.pop(target.id, None)
                if target is not None:
                    self._unbuilt(target)
                self._branches([statement.body, statement.orelse])  # type: ignore[attr-defined]
            elif kind in (With, AsyncWith):
                for item in statement.items:  # type: ignore[attr-defined]
                    if isinstance(item.optional_vars, Name):
                        self._scope.bound.add(item.optional_vars.id)
                    if item.optional_vars is not None:
                        self._unbuilt(item.optional_vars)
                self._walk(statement.body)  # type: ignore[attr-defined]
            elif kind is Delete:
                for target in statement.targets:  # type: ignore[attr-defined]
                    self._unbuilt(target)
            elif (kind is Import or kind is ImportFrom) and self._scope.function:
                self._import(statement)  # type: ignore[arg-type]
        del guards[mark:]

    def _if(self, statement: ast.If) -> None:
        """Walk both branches of an ``if`` with its condition on the guard stack.

        Afterwards, when the body leaves the block (``return``, ``raise`` …), the condition
        failed for everything that follows in the block: it stays on the stack, negated (and
        so does each ``elif`` of the chain whose body leaves the block too).
        """
        scope = self._scope
        guards = self._guards
        test = statement.test
        body = statement.body
        before = scope.variables
        scope.variables = _Variables(before)
        guards.append((_IF, test, True, True))
        self._walk(body)
        guards.pop()
        first = scope.variables
        scope.variables = _Variables(before)
        if statement.orelse:
            # An ``else``/``elif`` runs when the test failed; values the body handles without
            # raising are accepted ones.
            guards.append((_IF, test, False, type(body[-1]) is not Raise))
            self._walk(statement.orelse)
            guards.pop()
        # A branch that ends its path (`return`, `raise` …) leaves nothing to the code after:
        # when one of the two does, the variables are the other's.
        outcomes = [
            outcome
            for outcome, block in ((first, body), (scope.variables, statement.orelse))
            if not _ends_path(block)
        ]
        if len(outcomes) == 2:
            scope.variables = self._merge(before, [first, scope.variables])
        elif outcomes:
            scope.variables = _continued(before, outcomes[0])
        else:
            scope.variables = before
        node = statement
        while type(node.body[-1]) in _EXITS:
            guards.append((_IF, node.test, False, type(node.body[-1]) is not Raise))
            if len(node.orelse) != 1 or type(node.orelse[0]) is not If:
                break
            node = node.orelse[0]

    def _match(self, statement: ast.Match) -> None:
        """Walk the cases of a ``match``: a case runs when the cases before it failed."""
        scope = self._scope
        guards = self._guards
        subject = statement.subject
        before = scope.variables
        outcomes: list[dict[str, list[Built]]] = []
        mark = len(guards)
        for case in statement.cases:
            scope.variables = _Variables(before)
            guards.append((_CASE, subject, case, True, True))
            self._walk(case.body)
            guards.pop()
            outcomes.append(scope.variables)
            if case.guard is None:
                guards.append((_CASE, subject, case, False, type(case.body[-1]) is not Raise))
        del guards[mark:]
        scope.variables = self._merge(before, outcomes)
        for case in statement.cases:
            if case.guard is not None or type(case.body[-1]) not in _EXITS:
                break
            guards.append((_CASE, subject, case, False, type(case.body[-1]) is not Raise))

    def _try(self, statement: ast.stmt) -> None:
        self._trys.append(
            tuple(
                name
                for handler in statement.handlers  # type: ignore[attr-defined]
                if not any(type(sub) is Raise for sub in _statements(handler))
                for name in _bare_names(handler.type)
            )
        )
        scope = self._scope
        entry = dict(scope.variables)
        scope.variables = _Variables(scope.variables)
        try:
            self._walk(statement.body)  # type: ignore[attr-defined]
        finally:
            self._trys.pop()
        before = scope.variables
        # Names the body set, also to what no template says (gunicorn's ``sig_name =
        # signal.Signals(sig).name``, with ``"code {}".format(sig)`` in the handler): after
        # the statement, such a name may hold what the body left in it.
        assigned = before.touched if isinstance(before, _Variables) else set()
        # The body may fail before or after any of its assignments: a handler starts with each
        # variable the body changed holding what it held before the body or after it.
        changed = {
            name for name in entry.keys() | before.keys() if entry.get(name) != before.get(name)
        }
        start: dict[str, list[Built]] = before
        if changed:
            failed = _Variables(before)  # the body failed before its assignments
            for name in changed:
                if name in entry:
                    failed[name] = entry[name]
                else:
                    failed.pop(name)
            start = self._merge(before, [_Variables(before), failed])
        outcomes: list[dict[str, list[Built]]] = []
        guards = self._guards
        handlers = self._handlers
        for handler in statement.handlers:  # type: ignore[attr-defined]
            caught = scope.caught
            scope.variables = _Variables(start)
            scope.variables.touched |= changed | assigned
            if handler.name:
                scope.caught = caught | {handler.name}
                scope.bound.add(handler.name)
                self._forget_built(handler.name)
            handlers.append(handler)
            guards.append((_LOOKUP, statement, handler))
            try:
                self._walk(handler.body)
            finally:
                scope.caught = caught
                handlers.pop()
                guards.pop()
            if not _ends_path(handler.body):
                outcomes.append(scope.variables)
        scope.variables = _Variables(before)
        scope.variables.touched |= assigned
        self._walk(statement.orelse)  # type: ignore[attr-defined]
        outcomes.append(scope.variables)
        scope.variables = self._merge(before, outcomes)
        self._walk(statement.finalbody)  # type: ignore[attr-defined]

    def _branches(self, bodies: Sequence[list[ast.stmt]]) -> None:
        """Walk alternative bodies; afterwards a variable may hold what any of them assigned."""
        before = self._scope.variables
        outcomes: list[dict[str, list[Built]]] = []
        for body in bodies:
            self._scope.variables = _Variables(before)
            self._walk(body)
            outcomes.append(self._scope.variables)
        self._scope.variables = self._merge(before, outcomes)

    def _merge(
        self, before: dict[str, list[Built]], outcomes: list[dict[str, list[Built]]]
    ) -> dict[str, list[Built]]:
        """The variables after alternative paths: each may hold what any path left in it.

        Only the names some path assigned are worked out again (the others keep their values),
        so a long function of ``if``s stays linear in its variables.
        """
        merged = _Variables(before)
        names: set[str] = set()
        for outcome in outcomes:
            names |= outcome.touched if isinstance(outcome, _Variables) else set(outcome)
        # The path around this one changed what it changed before, and now these names too.
        merged.touched = (before.touched if isinstance(before, _Variables) else set()) | names
        params = self._scope.params
        for name in names:
            values: list[Built] = []
            for outcome in outcomes:
                found = outcome.get(name, before.get(name))
                if found is None and (
                    name in params or (isinstance(outcome, _Variables) and name in outcome.touched)
                ):
                    # A parameter reassigned on some paths keeps the caller's value on others;
                    # a path that set the name to what no template says leaves a value too
                    # (pip's ``info = text_join(…) if triggers else "the requested packages"``).
                    found = [Built((template_part(name, True),), "opaque")]
                for built in found or []:
                    if built not in values:
                        values.append(built)
            if len(outcomes) < 2 and name in before:
                for built in before[name]:
                    if built not in values:
                        values.append(built)
            dict.__setitem__(merged, name, values[:8])
        return merged

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.decorator_list:
            self._deprecations(node)
        outer = self._scope
        qualname = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
        arguments = node.args
        positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        keyword_only = [a.arg for a in arguments.kwonlyargs]
        bound = {*positional, *keyword_only}
        if arguments.vararg:
            bound.add(arguments.vararg.arg)
        if arguments.kwarg:
            bound.add(arguments.kwarg.arg)
        direct_method = outer.cls is not None and outer.function is None
        decorators = {d.id for d in node.decorator_list if isinstance(d, Name)}
        info = _FunctionInfo(
            qualname=qualname,
            line=node.lineno,
            params=positional + keyword_only,
            positional=len(positional),
            vararg=arguments.vararg.arg if arguments.vararg else None,
            method=(
                ("static" if "staticmethod" in decorators else "class")
                if direct_method and decorators & {"staticmethod", "classmethod"}
                else ("method" if direct_method else "")
            ),
            is_property=direct_method
            and any(
                (_dotted(d) or "").rpartition(".")[2] in _PROPERTIES for d in node.decorator_list
            ),
        )
        defaults = _defaults(arguments)
        for name, default in defaults:
            if isinstance(default, Constant) and isinstance(default.value, str):
                info.defaults[name] = [
                    Built(
                        (template_part(default.value),),
                        "constant",
                        defined_at=Location(path=self.path, line=default.lineno),
                    )
                ]
            else:
                number = _int_constant(default)
                if number is not None:
                    info.ints[name] = number
        info.classes = _class_defaults(node, defaults)
        info.helper_param = next((p for p in info.params if p in HELPER_PARAMETERS), None)
        self.functions[qualname] = info
        if outer.function is not None:
            outer.nested[node.name] = qualname
        cls = outer.cls
        if direct_method and cls is not None and node.name == "__init__":
            cls.has_init = True
            cls.star = arguments.vararg is not None
            cls.params = positional[1:]
            cls.defaults = info.defaults
            for name in _DEFAULT_PARAMETERS:
                if name in info.defaults and cls.default_text is None:
                    cls.default_text = (name, info.defaults[name])
        self._scope = _Scope(
            qualname=qualname,
            function=node,
            cls=cls,
            method=node.name if direct_method else "",
            info=info,
            enclosing=_enclosing(outer) if outer.function else {},
            bound=bound,
            params=frozenset(bound),
            nullable={
                name
                for name, default in defaults
                if type(default) is Constant and default.value is None
            },
        )
        # Guards, handlers and trys outside a function do not lead into its body.
        saved = self._guards, self._handlers, self._trys
        self._guards, self._handlers, self._trys = [], [], []
        try:
            self._walk(node.body)
        finally:
            self._scope = outer
            self._guards, self._handlers, self._trys = saved

    def _deprecations(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        """``@deprecated("…")`` (PEP 702): calling the function warns with that message.

        From ``warnings`` (3.13) or ``typing_extensions``; the class is the ``category``
        given (``DeprecationWarning`` by default), and the warning shows the caller's line.
        FastAPI's ``@deprecated("on_event is deprecated, use lifespan …")``.
        """
        for decorator in node.decorator_list:
            if type(decorator) is not Call or not decorator.args:
                continue
            name = _dotted(decorator.func)
            origin = self.imports.get(name or "", name or "")
            if origin not in _DEPRECATED_DECORATORS:
                continue
            category = _keyword(decorator, "category")
            if type(category) is Constant:
                continue  # ``category=None``: no warning at run time
            error_class = (_class_name(category) if category is not None else None) or (
                "DeprecationWarning"
            )
            self._emit(
                decorator,  # type: ignore[arg-type]
                kind=SiteKind.WARN,
                error_class=error_class.rpartition(".")[2],
                message=decorator.args[0],
                severity=Severity.WARNING,
            )

    def _class(self, node: ast.ClassDef) -> None:
        self._deprecations(node)
        outer = self._scope
        qualname = f"{outer.qualname}.{node.name}" if outer.qualname else node.name
        # ``class SyncAPIClient(BaseClient[httpx.Client, Stream[Any]])``: a generic base is
        # the class it subscripts.
        bases = [
            text
            for text in (_dotted(b.value if type(b) is Subscript else b) for b in node.bases)
            if text is not None
        ]
        info = _ClassInfo(qualname=qualname, line=node.lineno, bases=bases)
        for statement in node.body:
            self._collect_constant(statement, info.constants, info.tables, "constant-ref")
            if (
                isinstance(statement, (Assign, AnnAssign))
                and isinstance(
                    target := (
                        statement.targets[0] if isinstance(statement, Assign) else statement.target
                    ),
                    Name,
                )
                and target.id == "status_code"
            ):
                status = _int_constant(statement.value)
                if status is not None and 400 <= status < 600:
                    info.status = status
        self.classes[qualname] = info
        self._class_defs[qualname] = node
        self._class_names.setdefault(node.name, node)
        self._scope = _Scope(qualname=qualname, cls=info)
        saved = self._guards, self._handlers, self._trys
        self._guards, self._handlers, self._trys = [], [], []
        try:
            self._walk(node.body)
        finally:
            self._scope = outer
            self._guards, self._handlers, self._trys = saved

    def _assignment(self, statement: ast.stmt) -> None:
        scope = self._scope
        value = statement.value  # type: ignore[attr-defined]
        if type(value) is Call and (handed := self._handed_message(value)) is not None:
            error_class, message = handed
            builds = [
                Built(b.parts, "handed", b.i18n, b.defined_at) for b in self.builder.build(message)
            ]
            self._emit_builds(
                statement,
                builds,
                message,
                kind=SiteKind.RAISE,
                error_class=error_class,
                severity=Severity.ERROR,
            )
        if scope.function is None:
            return
        variables = scope.variables
        assigned = scope.assigned
        for target in (
            statement.targets if type(statement) is Assign else [statement.target]  # type: ignore[attr-defined]
        ):
            if type(target) is Name:
                assigned.add(target.id)
            elif type(target) is Tuple or type(target) is List:
                assigned.update(e.id for e in target.elts if type(e) is Name)
        if isinstance(statement, AugAssign):
            if (
                isinstance(statement.op, Add)
                and isinstance(statement.target, Name)
                and statement.target.id in variables
            ):
                additions = self.builder.build(statement.value)
                variables[statement.target.id] = [
                    Built(b.parts + a.parts, "variable", b.i18n or a.i18n, b.defined_at)
                    for b in variables[statement.target.id]
                    for a in additions
                ][:8]
            return
        if value is None:
            return
        targets = statement.targets if isinstance(statement, Assign) else [statement.target]  # type: ignore[attr-defined]
        if type(value) is Constant and value.value is None:
            scope.nullable.update(t.id for t in targets if type(t) is Name)
        built: list[Built] | None = None
        for target in targets:
            if isinstance(target, Name):
                if built is None:
                    built = self._constant_templates(value, "variable") or []
                    if (
                        not built
                        and isinstance(value, Call)
                        and (
                            _MESSAGE_VARIABLE.search(target.id)
                            # vLLM's ``base = super().__str__()`` in ``__str__``
                            or (
                                scope.cls is not None
                                and type(value.func) is Attribute
                                and value.func.attr == "__str__"
                                and self._given_reference(value) is not None
                            )
                        )
                    ):
                        built = [b for b in self.builder.build(value) if b.form != "opaque"]
                scope.bound.add(target.id)
                if built and scope.cls is not None:
                    built = self._with_given(built)
                if built:
                    variables[target.id] = [
                        Built(
                            b.parts,
                            "variable" if b.form not in ("opaque", "reference") else b.form,
                            b.i18n,
                            b.defined_at,
                        )
                        for b in built
                    ]
                else:
                    variables.pop(target.id, None)
                if type(value) is List or _LIST_KEY + target.id in variables:
                    self._list_bound(target.id, value)
            elif (
                scope.method == "__init__"
                and scope.cls is not None
                and isinstance(target, Attribute)
                and isinstance(target.value, Name)
                and target.value.id == "self"
            ):
                if (
                    target.attr == "args"
                    and type(value) is Tuple
                    and len(value.elts) == 1
                    and not scope.cls.init_text
                ):
                    # aiohttp's ``self.args = (message,)``: what ``str()`` shows, as
                    # ``super().__init__(message)`` would make it.
                    self._init_text(value.elts[0], statement.lineno)
                else:
                    self._instance_attribute(scope.cls, target.attr, value, statement.lineno)
            elif isinstance(target, (Tuple, List)):
                self._unbuilt(target)
                if (
                    scope.method == "__init__"
                    and scope.cls is not None
                    and isinstance(value, (Tuple, List))
                    and len(value.elts) == len(target.elts)
                ):
                    # ``self.message, self.code = message, code``: each as if on its own.
                    for element, item in zip(target.elts, value.elts, strict=True):
                        if (
                            isinstance(element, Attribute)
                            and isinstance(element.value, Name)
                            and element.value.id == "self"
                            and not isinstance(item, Starred)
                        ):
                            self._instance_attribute(
                                scope.cls, element.attr, item, statement.lineno
                            )
                for element in target.elts:
                    if isinstance(element, Name):
                        scope.bound.add(element.id)
                        variables.pop(element.id, None)
        kind = type(value)
        if kind in (Tuple, List, Set, Dict) and type(targets[0]) is Name:
            # ``valid = ("a", "b")`` … ``if x not in valid``: the container a guard names (#5).
            scope.containers[targets[0].id] = value
        if kind is Await:
            value = value.value
            kind = type(value)
        if len(targets) == 1 and type(targets[0]) is Name:
            self._forget_built(targets[0].id)
            if kind is Call and type(value.func) is Name and value.func.id in scope.params:
                scope.made_by_param[targets[0].id] = value.func.id
            else:
                scope.made_by_param.pop(targets[0].id, None)
            if kind in _CLASS_VALUE_KINDS or targets[0].id in scope.class_choices:
                _choose_class(scope.class_choices, targets[0].id, value, self.class_tables)
            method = _log_method(value) if kind is Attribute or kind is IfExp else None
            if method is not None:
                # gunicorn's ``log_func = self.log.info if status == 0 else self.log.error``
                scope.log_aliases[targets[0].id] = method
            else:
                scope.log_aliases.pop(targets[0].id, None)
        if kind is Call:
            self._note_call(value)
            before = len(self.sites)
            if not self._helper_call(value, statement):
                self._objects(value, statement, 0)
            if len(targets) == 1 and type(targets[0]) is Name:
                name = _class_name(value.func)
                if len(self.sites) > before and all(
                    site.kind is SiteKind.OBJECT for site in self.sites[before:]
                ):
                    # ``exc = ValidationError(errors)`` … ``raise exc``: raised later, maybe.
                    scope.built[targets[0].id] = (before, len(self.sites), value, statement)
                elif len(self.sites) == before and name is not None and _is_class_like(name):
                    # Built with no message of its own (``CommandFailed(command=c)``): a raise
                    # of the name later says it is an exception.
                    scope.built[targets[0].id] = (before, before, value, statement)
        elif kind in (List, Tuple, ListComp):
            self._objects(value, statement, 0)

    def _handed_message(self, call: ast.Call) -> tuple[str, ast.expr] | None:
        """The class and message of a call that hands a message on to be raised later.

        None when the call is not one (see :data:`_HANDED_MESSAGES`).
        """
        if not call.keywords:
            return None
        dotted = _dotted(call.func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        origin = self.imports.get(head, head) + (f".{rest}" if rest else "")
        handed = _HANDED_MESSAGES.get(origin)
        if handed is None:
            return None
        keyword, error_class = handed
        message = _keyword(call, keyword)
        if message is None or not self.builder.is_string_like(message):
            return None
        return error_class, message

    def _instance_attribute(self, cls: _ClassInfo, name: str, value: ast.expr, line: int) -> None:
        if isinstance(value, Name) and value.id in self._scope.params:
            cls.attribute_params.setdefault(name, value.id)
            return
        stripped = _stripped_parameter(value, self._scope.params)
        if stripped is not None and name not in cls.attribute_params:
            # pydantic's ``self.message = message.rstrip(".")``, shown as ``{self.message}.``
            cls.attribute_params[name] = stripped[0]
            cls.attribute_strips[name] = stripped[1:]
            return
        built = self._constant_templates(value, "constant-ref")
        if built and name in cls.assigned:
            # Set to two texts (PyYAML's ``self.name = "<unicode string>"`` or ``"<byte
            # string>"`` by the stream's type): no one text is the attribute's. (A parameter
            # or the default, as django's ``violation_error_message``, keeps the default.)
            cls.instance.pop(name, None)
            return
        if built:
            cls.assigned.add(name)
            cls.instance[name] = [
                Built(b.parts, b.form, b.i18n, b.defined_at or Location(path=self.path, line=line))
                for b in built
            ]

    # -- sites -----------------------------------------------------------------------------

    def _message_argument(self, call: ast.Call) -> ast.expr | None:
        """The message among a call's arguments.

        The first positional argument that evidently builds text, else a ``msg=``-like
        keyword, else the first positional argument whose name looks like a message
        (``MSG``), else the first positional argument. A class known to take its message
        elsewhere has it there (:data:`_MESSAGE_AT`: pydantic-core's
        ``PydanticCustomError(error_type, message_template)``).
        """
        at = _MESSAGE_AT.get(_class_name(call.func) or "")
        if at is not None:
            position, name = at
            for item in call.keywords:
                if item.arg == name:
                    return item.value
            if len(call.args) > position and not isinstance(call.args[position], Starred):
                return call.args[position]
        starred: ast.expr | None = None
        positional: list[ast.expr] = []
        for argument in call.args:
            if isinstance(argument, Starred):
                starred = starred or argument.value
            elif self.builder.is_string_like(argument, guess=False):
                return argument
            else:
                positional.append(argument)
        for keyword in call.keywords:
            if keyword.arg in MESSAGE_KEYWORDS:
                return keyword.value
        for argument in positional:
            if self.builder.is_string_like(argument):
                return argument
        return positional[0] if positional else starred

    def _argument_parts(self, node: ast.expr) -> list[list[Any]]:
        if (
            isinstance(node, Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            return [[repr(node.value), False, type(node.value).__name__]]
        if self.builder.is_string_like(node):
            return [
                # A reference whose own target nests references (``text = re.sub(…, text)``
                # sixty times) grew by half its size again at each level: it stays a hole.
                [text, hole, style if len(style) <= MAX_NESTED_REFERENCE else ""]
                for text, hole, style in _dump_parts(merge_parts(self.builder.build(node)[0].parts))
            ]
        return [[source_text(node), True, ""]]

    def _call_spec(
        self, call: ast.Call | None, func: ast.expr, message: ast.expr | None = None
    ) -> dict[str, Any]:
        """Describe a call for the link step (``K`` in the module docstring).

        With the call's ``message`` argument, its place among the arguments is noted too
        (``message_at``: each alternative of the message binds the class's text apart).
        """
        spec: dict[str, Any] = {}
        if (
            isinstance(func, Attribute)
            and isinstance(func.value, Name)
            and func.value.id in ("self", "cls")
        ):
            spec["self"] = func.attr
            spec["class"] = self._scope.cls.qualname if self._scope.cls is not None else None
        elif isinstance(func, Name) and func.id in self._scope.nested:
            # matplotlib's ``raise invalid_shape_exception(c.size, xsize)``, a factory
            # defined in the function that raises.
            spec["callee"] = self._scope.nested[func.id]
        else:
            spec["callee"] = _dotted(func)
            if (
                isinstance(func, Attribute)
                and isinstance(func.value, Name)
                and func.value.id in self._scope.params
            ):
                # ``ctx.fail(...)`` with ``ctx: Context``: the method of the annotated class.
                annotation = self._header().annotations.get(func.value.id)
                receiver = _annotated_class(annotation) if annotation is not None else None
                if receiver is not None:
                    spec["receiver"] = receiver
        if call is None:
            return spec
        args: list[list[list[Any]]] = []
        for argument in call.args:
            if isinstance(argument, Starred):
                spec["star"] = True
                break
            args.append(self._argument_parts(argument))
        spec["args"] = args
        keywords: dict[str, Any] = {}
        ints: dict[str, int] = {}
        for keyword in call.keywords:
            if keyword.arg is None:
                spec["star"] = True
                continue
            keywords[keyword.arg] = self._argument_parts(keyword.value)
            number = _int_constant(keyword.value)
            if number is not None:
                ints[keyword.arg] = number
        spec["keywords"] = keywords
        if ints:
            spec["ints"] = ints
        nullable = self._scope.nullable
        if nullable:
            maybe_none: list[int | str] = [
                position
                for position, argument in enumerate(call.args[: len(args)])
                if type(argument) is Name and argument.id in nullable
            ]
            maybe_none.extend(
                keyword.arg
                for keyword in call.keywords
                if keyword.arg is not None
                and type(keyword.value) is Name
                and keyword.value.id in nullable
            )
            if maybe_none:
                spec["nullable"] = maybe_none
        if message is not None:
            for position, argument in enumerate(call.args[: len(args)]):
                if argument is message:
                    spec["message_at"] = position
            for keyword in call.keywords:
                if keyword.value is message and keyword.arg is not None:
                    spec["message_at"] = keyword.arg
        return spec

    def _raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if exc is None:
            return  # bare re-raise
        chained = node.cause is not None
        scope = self._scope
        if isinstance(exc, Name) and (exc.id in scope.built or exc.id in scope.raised):
            again = exc.id not in scope.built
            entry = scope.raised[exc.id] if again else scope.built.pop(exc.id)
            start, end, call, built_at = entry
            # Unless a walrus or a ``case … as`` rebound it (a re-raise of something else).
            if not self._rebound(exc.id, built_at, node):
                scope.raised[exc.id] = entry
                if start < end:
                    if again:
                        # fastapi's ``raise invalid_user_credentials_exc`` twice: the sites
                        # the first raise took (and what the link step completes of them),
                        # at this one too.
                        offset = len(self.sites) - start
                        self.pending.extend(
                            {**entry, "site": entry["site"] + offset}
                            for entry in list(self.pending)
                            if start <= entry["site"] < end
                        )
                        self.sites.extend(self.sites[start:end])
                        start, end = start + offset, end + offset
                    self._raised_later((start, end), node)
                else:
                    raised = ast.copy_location(Raise(exc=call, cause=node.cause), node)
                    raised.end_lineno = node.end_lineno
                    self._raise(raised)
                return
        if type(exc) is Name and exc.id not in scope.bound and exc.id not in scope.assigned:
            made = self._values.get(exc.id)
            held = _class_name(made.func) if type(made) is Call else None
            if held is not None and _is_class_like(held) and _looks_like_exception(held):
                # twisted's ``_unsupportedOption = SystemExit("Unsupported option.")`` at the
                # module's top, then ``raise _unsupportedOption``: as ``raise SystemExit(…)``.
                raised = ast.copy_location(Raise(exc=made, cause=node.cause), node)
                raised.end_lineno = node.end_lineno
                self._raise(raised)
                return
        if not isinstance(exc, Call):
            name = _class_name(exc)
            if name is not None and _is_class_like(name):
                spec = None if name in _BUILTIN_EXCEPTIONS else self._call_spec(None, exc)
                self._emit(
                    node,
                    kind=SiteKind.RAISE,
                    error_class=name,
                    message=None,
                    chained=chained,
                    call_spec=spec,
                )
            elif name is not None and scope.function is not None:
                self._raise_object(node, exc)
            return
        call = exc
        func = call.func
        if isinstance(func, Attribute) and func.attr == "with_traceback":
            if isinstance(func.value, Call):
                call, func = func.value, func.value.func
            else:
                self._emit(
                    node,
                    kind=SiteKind.RAISE,
                    error_class=_short_source(func.value),
                    message=func.value,
                    chained=chained,
                    arguments=len(exc.args) + len(exc.keywords),
                )
                return
        choices = self._class_choices(func)
        if choices:
            # ``raise cls(e, …)``: a site of each class the local name may hold.
            for choice in choices:
                self._raise_call(node, call, choice, _class_name(choice), chained)
            return
        name = _class_name(func)
        held = self._held_class(func)
        if held is not None:
            # ``raise self._undefined_exception(msg)`` with ``exc=UndefinedError`` by default.
            name, func = held.rpartition(".")[2], ast.parse(held, mode="eval").body
        self._raise_call(node, call, func, name, chained)

    def _class_choices(self, func: ast.expr) -> list[ast.expr] | None:
        """The classes a local name called as ``func`` may hold (see ``_choose_class``)."""
        scope = self._scope
        if type(func) is not Name or func.id in scope.params:
            return None
        return scope.class_choices.get(func.id)

    def _raise_call(
        self, node: ast.Raise, call: ast.Call, func: ast.expr, name: str | None, chained: bool
    ) -> None:
        """Emit the site of ``raise func(…)``: its message, status, code and class."""
        arguments = len(call.args) + len(call.keywords)
        message = self._message_argument(call)
        if (
            (name is None or not _is_class_like(name))
            and arguments
            and (message is None or not self.builder.is_string_like(message))
        ):
            message = call  # a factory: what it returns, unless the link step finds it
        http_status = None
        error_code = None
        for keyword in call.keywords:
            if keyword.arg == "status_code":
                http_status = _int_constant(keyword.value)
            elif keyword.arg in _CODE_KEYWORDS and error_code is None:
                error_code = _code_constant(keyword.value)
        if (
            name is not None
            and http_status is None
            and name.endswith("HTTPException")
            and call.args
        ):
            http_status = _int_constant(call.args[0])
        if error_code is None and call.args and name is not None and name.endswith("Error"):
            first = call.args[0]
            if (
                isinstance(first, Attribute)
                and isinstance(first.value, Name)
                and first.value.id == "errno"
            ):
                error_code = first.attr
        spec = None
        if name is not None and not (name in _BUILTIN_EXCEPTIONS or name in _BUILTIN_NAMES):
            spec = self._call_spec(call, func, message)
        self._emit(
            node,
            kind=SiteKind.HTTP if http_status is not None else SiteKind.RAISE,
            error_class=name if name is not None else _short_source(func),
            message=message,
            http_status=http_status,
            error_code=error_code,
            chained=chained,
            call_spec=spec,
            arguments=arguments,
            params=self._params_keyword(call),
        )

    def _raise_object(self, node: ast.Raise, exc: ast.expr) -> None:
        """``raise response``: an exception object made elsewhere, raised here.

        redis's ``response = self._parser.read_response()`` … ``raise response`` (the
        server's ``WRONGTYPE …``): a traceback's innermost frame is this line, so it is a
        site, of a class and message known only at run time (a pass-through). A caught
        exception raised again is not: its traceback goes on to where it was raised.
        """
        chain = _dotted(exc)
        if chain is None or chain.partition(".")[0] in self._scope.caught:
            return
        built = Built((TemplatePart(text=chain, hole=True),), "passthrough")
        self._emit_builds(
            node,
            [built],
            exc,
            kind=SiteKind.RAISE,
            error_class=chain,
            severity=Severity.ERROR,
            chained=node.cause is not None,
        )

    def _rebound(self, name: str, built_at: ast.stmt, node: ast.Raise) -> bool:
        """Whether the lines from an exception's building to its raise bind ``name`` again.

        The walk follows assignments, loops, handlers and ``with``; a walrus and a ``case …
        as`` it does not see are found in the source text between.
        """
        text = "\n".join(self.lines[built_at.end_lineno or built_at.lineno : node.lineno - 1])
        return name in text and re.search(_REBINDING.format(re.escape(name)), text) is not None

    def _unbuilt(self, target: ast.expr) -> None:
        """Forget the exceptions built into the names a ``for``, ``with`` or ``del`` rebinds."""
        if self._scope.built or self._scope.raised:
            for node in ast.walk(target):
                if isinstance(node, Name):
                    self._forget_built(node.id)

    def _forget_built(self, name: str) -> None:
        """Forget an exception built into ``name``: the name is bound to something else."""
        self._scope.built.pop(name, None)
        self._scope.raised.pop(name, None)

    def _raised_later(self, span: tuple[int, int], node: ast.Raise) -> None:
        """Make the object sites of an exception built into a variable the raise of it.

        A traceback shows the ``raise exc`` line, not the line that built the exception.
        """
        line = node.lineno
        start = max(1, line - self.window)
        end = min(len(self.lines), line + self.window)
        for index in range(*span):
            site = self.sites[index]
            self.sites[index] = site.model_copy(
                update={
                    "kind": SiteKind.HTTP if site.http_status is not None else SiteKind.RAISE,
                    "line": line,
                    "end_line": node.end_lineno or line,
                    "chained": node.cause is not None,
                    "source_code": "\n".join(self.lines[start - 1 : end]),
                    "source_code_start": start,
                    "source_code_end": max(start, end),
                }
            )

    def _held_class(self, func: ast.expr) -> str | None:
        """The exception class ``self.attr`` holds: the ``__init__`` default it is set from.

        jinja's ``raise self._undefined_exception(msg)`` with ``exc=UndefinedError``. A class
        attribute (``error_class = ValidationError``) is not taken: subclasses set their own,
        so the name the code binds at run time stays the record's class. A parameter of the
        function is the class its default names (aiohttp's ``raise client_error(key, exc)``
        with ``client_error=ClientConnectorError``), what the site raises unless a caller
        passes another.
        """
        own = self._own_class(func)
        if own is not None:
            return own
        if isinstance(func, Name) and func.id in self._scope.params:
            if func.id in self._scope.assigned:
                return None  # ``if strict: error_class = StrictError``: not the default
            default = self._param_default(func.id)
            return _class_held(default) if default is not None else None
        if not (
            isinstance(func, Attribute)
            and isinstance(func.value, Name)
            and func.value.id == "self"
            and self._scope.cls is not None
        ):
            return None
        cls = self._scope.cls
        param = cls.attribute_params.get(func.attr)
        node = self._class_defs.get(cls.qualname)
        if param is None or node is None:
            return None
        for statement in node.body:
            if (
                isinstance(statement, (FunctionDef, AsyncFunctionDef))
                and statement.name == "__init__"
            ):
                for name, default in _defaults(statement.args):
                    if name == param:
                        return _class_held(default)
        return None

    def _own_class(self, func: ast.expr) -> str | None:
        """The class a classmethod's ``cls`` stands for, when ``func`` is that name.

        ``raise cls(f"negative: {value}")``, SQLAlchemy's ``return cls(statement, params,
        orig, …)`` in ``DBAPIError.instance``: the class, or a subclass that inherits its
        text (also where the name is set to a subclass found at run time).
        """
        scope = self._scope
        function, info, cls = scope.function, scope.info, scope.cls
        if (
            type(func) is not Name
            or function is None
            or info is None
            or cls is None
            or info.method != "class"
            or not function.args.args
            or func.id != function.args.args[0].arg
        ):
            return None
        return cls.qualname

    def _param_default(self, name: str) -> ast.expr | None:
        """The default of a parameter of the function being walked, if it has one."""
        function = self._scope.function
        if function is None or name not in self._scope.params:
            return None
        return next((d for n, d in _defaults(function.args) if n == name), None)

    def _params_keyword(self, call: ast.Call) -> dict[str, Any] | None:
        """Django's ``ValidationError(msg, params={...})``: ``%(name)s`` holes filled later."""
        for keyword in call.keywords:
            if keyword.arg == "params":
                values = percent_values(keyword.value)
                if values is not None and "mapping" not in values:
                    return {"mapping": {}}
                return values
        return None

    def _assert(self, node: ast.Assert) -> None:
        if node.msg is None:
            return
        self._emit(node, kind=SiteKind.ASSERT, error_class="AssertionError", message=node.msg)

    def _return(self, statement: ast.Return) -> None:
        scope = self._scope
        value = statement.value
        if scope.function is None or value is None:
            return
        if scope.method in _SHOWN_METHODS and scope.cls is not None:
            shown: ast.expr | None = value
            if type(value) is Call:
                callee = _class_name(value.func)
                if callee is not None and _is_class_like(callee):
                    # pytest's ``return FixtureLookupErrorRepr(fspath, lineno, tblines, msg,
                    # …)``: the text is the first argument that is one.
                    shown = next((a for a in value.args if self.builder.is_string_like(a)), None)
            if shown is not None and len(scope.cls.shown_text) < 8:
                scope.cls.shown_text.extend(
                    Built(b.parts, b.form, b.i18n, Location(path=self.path, line=statement.lineno))
                    for b in self.builder.build(shown)
                )
            return
        if scope.method == "__str__" and scope.cls is not None:
            # Every return is an alternative; the class text is used only if one has text.
            if len(scope.cls.str_text) < 8:
                formatted = self._formats_its_arguments(value)
                scope.cls.str_text.extend(
                    Built(b.parts, b.form, b.i18n, Location(path=self.path, line=statement.lineno))
                    for b in (formatted or self._with_given(self.builder.build(value)))
                )
            return
        if isinstance(value, Await):
            value = value.value
        if scope.info is not None:
            # ``return error_type(message, …)``, or ``err = error_type(…)`` … ``return err``
            if type(value) is Name and value.id in scope.made_by_param:
                scope.info.class_param = scope.made_by_param[value.id]
            elif type(value) is Call and type(value.func) is Name and value.func.id in scope.params:
                scope.info.class_param = value.func.id
        if isinstance(value, Name) and value.id in scope.built:
            # ``exc = InvalidMetadata(…)`` … ``return exc``: as ``return InvalidMetadata(…)``.
            value = scope.built[value.id][2]
        if isinstance(value, Call):
            call = value
            self._note_call(call)
            name = _class_name(call.func)
            own = self._own_class(call.func)
            if own is not None:
                name = own.rpartition(".")[2]
                func = ast.copy_location(ast.parse(own, mode="eval").body, call.func)
                call = ast.copy_location(Call(func, call.args, call.keywords), call)
            choices = self._class_choices(call.func)
            if choices and scope.info is not None:
                # anthropic's ``return error_class(err_msg, response=response, body=body)``
                for choice in choices:
                    held = _class_name(choice)
                    if held is not None:
                        made = ast.copy_location(
                            Call(func=choice, args=call.args, keywords=call.keywords), call
                        )
                        self._factory_return(scope.info, made, held, statement.lineno)
                return
            if (
                name is not None
                and _is_class_like(name)
                and scope.info is not None
                and (
                    _looks_like_exception(name)
                    or _FACTORY_NAME.search(scope.info.qualname.rpartition(".")[2])
                )
                and not any(k.arg == "id" for k in call.keywords)
            ):
                self._factory_return(scope.info, call, name, statement.lineno)
                return
            self._delegate_return(scope.info, call, name, statement.lineno)
            if self._helper_call(call, statement):
                return
        if scope.info is not None and len(scope.info.messages) < 8:
            self._message_return(scope.info, value, statement.lineno)
        self._objects(value, statement, 0)

    def _message_return(self, info: _FunctionInfo, value: ast.expr, line: int) -> None:
        """``return f"..."`` in a function that builds a message for its callers."""
        kind = type(value)
        if kind is Constant or kind is Name or kind is Attribute:
            if not self.builder.is_string_like(value):
                return
        elif kind not in (JoinedStr, BinOp, Call, IfExp, BoolOp):
            return
        if not self.builder.is_string_like(value):
            return
        built = self.builder.build(value)
        info.messages.extend(
            Built(b.parts, b.form, b.i18n, Location(path=self.path, line=line))
            for b in (self._with_given(built) if self._scope.cls is not None else built)
        )

    def _factory_return(self, info: _FunctionInfo, call: ast.Call, name: str, line: int) -> None:
        message = self._message_argument(call)
        params = self._params_keyword(call)
        built = self.builder.build(message) if message is not None else [Built((), "none")]
        entry: dict[str, Any] = {"class": name, "line": line}
        for keyword in call.keywords:
            if keyword.arg == "status_code":
                status = _int_constant(keyword.value)
                if status is not None:
                    entry["status"] = status
            elif keyword.arg in _CODE_KEYWORDS and "code" not in entry:
                code = _code_constant(keyword.value)
                if code is not None:
                    entry["code"] = code
        if name.endswith("HTTPException") and call.args and "status" not in entry:
            status = _int_constant(call.args[0])
            if status is not None:
                entry["status"] = status
        if name not in _BUILTIN_EXCEPTIONS:
            entry["call"] = self._call_spec(call, call.func)
        templates = []
        for b in built[:4]:
            parts = b.parts
            if params is not None:
                parts = apply_percent_values(parts, params)
            templates.append(
                {"parts": _dump_parts(merge_parts(parts)), "line": line, "i18n": b.i18n}
            )
        entry["templates"] = templates
        info.returns.append(entry)

    def _delegate_return(
        self, info: _FunctionInfo | None, call: ast.Call, name: str | None, line: int
    ) -> None:
        """Note a factory's ``return self._make_status_error(err_msg, …)``.

        The exception is the one another function of the source makes of this one's message
        (the openai SDK's, whose subclass returns ``RateLimitError(err_msg, …)`` by status).
        """
        if (
            info is None
            or name is None
            or _is_class_like(name)
            or not _FACTORY_NAME.search(info.qualname.rpartition(".")[2])
            or len(info.returns) >= _MAX_RETURNS
        ):
            return
        message = self._message_argument(call)
        if message is None:
            return
        if type(message) is Name and message.id in self._scope.params:
            # anthropic's ``_make_status_error(self, err_msg, …)``: ``return
            # make_status_error(err_msg, …)``, the caller's message handed on as it is.
            built = [Built((template_part(message.id, True),), "variable")]
        else:
            built = [b for b in self.builder.build(message) if literal_length(b.parts)]
        if not built:
            return
        at: int | str | None = next((n for n, a in enumerate(call.args) if a is message), None)
        if at is None:
            at = next((k.arg for k in call.keywords if k.value is message), None)
        if at is None:
            return
        info.returns.append(
            {
                "delegate": self._call_spec(call, call.func),
                "at": at,
                "line": line,
                "templates": [
                    {"parts": _dump_parts(merge_parts(b.parts)), "line": line, "i18n": b.i18n}
                    for b in built[:4]
                ],
            }
        )

    def _helper_of(self, message: ast.expr | None) -> _FunctionInfo | None:
        """The function whose message parameter ``message`` is, still as the caller passed it."""
        info = self._scope.info
        if (
            info is not None
            and info.helper_param is not None
            and isinstance(message, Name)
            and message.id == info.helper_param
            and message.id not in self._scope.assigned
        ):
            return info
        return None

    def _log(self, call: ast.Call, message: ast.expr, level: str, statement: ast.stmt) -> None:
        """A logging call's site: ``logger.<level>(message, *args)``, ``%`` applied to args."""
        extra = call.args[1:]
        values = percent_values(list(extra)) if extra else None
        builds = [
            b if values is None else _with_percent(b, values) for b in self.builder.build(message)
        ]
        info = self._helper_of(message)
        if info is not None and info.vararg is not None and any(type(a) is Starred for a in extra):
            # django's ``log_response(message, *args, …)`` logs ``(message, *args)`` (5.2.8 on:
            # ``*escaped_args``, made from them): the caller's further arguments fill it.
            info.helper_percent = True
        self._emit_builds(
            statement,
            builds,
            message,
            kind=SiteKind.LOG,
            error_class=_LEVEL_CLASS.get(level, level.split("_")[0].upper()),
            severity=_LOG_LEVELS[level],
        )

    def _dynamic_log(self, call: ast.Call, func: ast.Call, statement: ast.stmt) -> None:
        """Read ``getattr(logger, level)(message, *args)`` as a logging call.

        A literal level is that level; one chosen at run time is recorded as a warning.
        """
        if not (
            type(func.func) is Name
            and func.func.id == "getattr"
            and len(func.args) >= 2
            and "log" in _receiver_name(func.args[0]).lower()
        ):
            return
        level = func.args[1]
        name = level.value if type(level) is Constant else None
        message = call.args[0] if call.args else _keyword(call, "msg")
        if message is not None:
            self._log(call, message, name if name in _LOG_LEVELS else "warning", statement)

    def _call(self, call: ast.Call, statement: ast.stmt) -> None:
        func = call.func
        if type(func) is Call:
            self._dynamic_log(call, func, statement)
            return
        if not isinstance(func, (Attribute, Name)):
            return
        scope = self._scope
        if type(func) is Name and func.id in scope.params and func.id not in scope.assigned:
            default = self._param_default(func.id)
            if type(default) in (Name, Attribute):
                # psycopg's ``def __del__(self, __warn=warn)``: ``__warn(…)`` is ``warn(…)``.
                func = default  # type: ignore[assignment]
        name = func.attr if isinstance(func, Attribute) else func.id
        receiver = _receiver_name(func.value) if isinstance(func, Attribute) else ""
        if receiver in self._scope.params:
            # aiohttp's ``def __del__(self, _warnings=warnings)``: the module, kept for exit.
            default = self._param_default(receiver)
            receiver = (_dotted(default) if default is not None else None) or receiver
        alias = (
            self._scope.log_aliases.get(name) or self.log_aliases.get(name)
            if isinstance(func, Name)
            else None
        )
        if alias is not None:
            name, receiver = alias, "logger"
        if (
            name in _LOG_LEVELS
            and (alias or isinstance(func, Attribute))
            and ("log" in receiver.lower() or receiver in _DISPLAYS)
        ):
            message = call.args[0] if call.args else _keyword(call, "msg")
            if message is None:
                return
            self._log(call, message, name, statement)
        elif name == "warn" and (
            receiver == "warnings"
            or (
                isinstance(func, Name)
                # ``from warnings import warn``, not a ``warn`` of the module's own
                and (
                    self.imports.get("warn") == "warnings.warn"
                    or ("warn" not in self.top_names and "warn" not in self.imports)
                )
            )
        ):
            message = call.args[0] if call.args else _keyword(call, "message")
            if message is None:
                return
            category = call.args[1] if len(call.args) > 1 else _keyword(call, "category")
            if (
                isinstance(message, Call)
                and (inner := _class_name(message.func))
                and _is_class_like(inner)
            ):
                category = message.func
                message = self._message_argument(message) or message
            error_class = (_class_name(category) if category is not None else None) or "UserWarning"
            spec = None
            if category is not None and error_class not in _BUILTIN_EXCEPTIONS:
                # What is shown is ``str(category(message))``: the category's own text, if it
                # builds one (pydantic's "… Deprecated in Pydantic V2.0 …" after the message).
                made = Call(func=category, args=[message], keywords=[])
                spec = self._call_spec(made, category, message)
            instance = None
            if category is None and isinstance(message, Name):
                # ``warnings.warn(YIELD_FIXTURE)``: a warning made once, with its class.
                if message.id in self.module_instances:
                    error_class = self.module_instances[message.id]
                elif message.id in self.imports:
                    instance = message.id  # its class is known at link
            self._emit(
                statement,
                kind=SiteKind.WARN,
                error_class=error_class,
                message=message,
                severity=Severity.WARNING,
                call_spec=spec,
                instance=instance,
            )
        elif name in _STDERR_WRITERS and call.args and _to_stderr(call, name, func):
            # werkzeug's ``print(f"Port {port} is in use by another program. …",
            # file=sys.stderr)``, click's ``echo(msg, err=True)``: an error the user is shown.
            message = call.args[0]
            if self.builder.is_string_like(message) and any(
                literal_length(b.parts) for b in self.builder.build(message)
            ):
                self._emit(
                    statement,
                    kind=SiteKind.LOG,
                    error_class="ERROR",
                    message=message,
                    severity=Severity.ERROR,
                )
        elif name == "error" and call.args and _ARGUMENT_PARSER.search(receiver):
            # argparse's (and optparse's) ``parser.error(msg)``: the usage, then
            # ``prog: error: msg``, and a ``SystemExit`` with status 2.
            if self.builder.is_string_like(call.args[0]):
                self._emit(
                    statement, kind=SiteKind.EXIT, error_class="SystemExit", message=call.args[0]
                )
        elif name in _PYTEST_OUTCOMES and (
            receiver == "pytest"
            or (isinstance(func, Name) and self.imports.get(name) == f"pytest.{name}")
        ):
            # ``pytest.fail(msg)``, ``pytest.exit(msg)``, as plugins and conftest files call them.
            message = call.args[0] if call.args else _keyword(call, "reason")
            if message is not None and self.builder.is_string_like(message):
                self._emit(
                    statement,
                    kind=SiteKind.RAISE,
                    error_class=_PYTEST_OUTCOMES[name],
                    message=message,
                )
        elif name == "exit" and receiver == "sys" and call.args:
            if self.builder.is_string_like(call.args[0]):
                self._emit(
                    statement, kind=SiteKind.EXIT, error_class="SystemExit", message=call.args[0]
                )
        elif name == "abort" and call.args and _int_constant(call.args[0]) is not None:
            status = _int_constant(call.args[0])
            if status is not None and 400 <= status < 600:
                description: ast.expr | None = call.args[1] if len(call.args) > 1 else None
                for keyword in call.keywords:
                    if keyword.arg == "description" or keyword.arg in MESSAGE_KEYWORDS:
                        description = keyword.value
                self._emit(
                    statement,
                    kind=SiteKind.HTTP,
                    error_class="HTTPException",
                    message=description,
                    http_status=status,
                )
        elif name == "__init__" and self._scope.method == "__init__":
            self._super_init(call)
        elif not self._helper_call(call, statement):
            self._objects(call, statement, 0)

    def _super_init(self, call: ast.Call) -> None:
        """Take ``super().__init__(text)`` / ``Base.__init__(self, text)`` in ``__init__``."""
        cls = self._scope.cls
        if cls is None or (cls.init_text and cls.super_call is not None):
            return
        func = call.func
        args = list(call.args)
        if isinstance(func, Attribute) and not isinstance(func.value, Call) and args:
            args = args[1:]  # Base.__init__(self, ...)
        candidate = Call(func=func, args=args, keywords=call.keywords)
        if cls.super_call is None:
            # What the base's __init__ is given, to compose its text (urllib3's
            # ``PoolError``: ``f"{pool}: {message}"``) with this class's (see ``_init_texts``).
            spec = self._call_spec(candidate, func)
            cls.super_call = {k: v for k, v in spec.items() if k in ("args", "keywords", "star")}
        message = self._message_argument(candidate)
        if message is not None and not cls.init_text:
            self._init_text(message, call.lineno)

    def _init_text(self, message: ast.expr, line: int) -> None:
        """Keep the text an exception class's ``__init__`` makes its message of."""
        cls = self._scope.cls
        built = self.builder.build(message)
        if cls is not None and any(_has_text(b.parts) or _calls_a_function(b.parts) for b in built):
            cls.init_text = [
                Built(b.parts, b.form, b.i18n, Location(path=self.path, line=line)) for b in built
            ]

    def _helper_call(self, call: ast.Call, statement: ast.stmt) -> bool:
        """Keep a call that may pass a message to a helper, as a candidate site for link."""
        func = call.func
        name = _class_name(func)
        if name is None or _is_class_like(name) or not _helper_like(name):
            return False
        if name in _LOG_LEVELS or name in ("warn", "warning"):
            # ``warnings.warn`` and ``logger.warning`` are sites; ``util.warn`` and a ``warn``
            # of the source's own may be helpers.
            if isinstance(func, Attribute):
                receiver = _dotted(func.value)
                if receiver is None or receiver == "warnings" or "log" in receiver.lower():
                    return False
            elif self.imports.get(name, "").startswith(("warnings.", "logging.")) or (
                name not in self.top_names and name not in self.imports
            ):
                return False
        message: ast.expr | None = None
        for keyword in call.keywords:
            if keyword.arg in HELPER_PARAMETERS:
                message = keyword.value
                break
        else:
            for argument in call.args:
                if not isinstance(argument, Starred) and self.builder.is_string_like(argument):
                    message = argument
                    break
        info = self._helper_of(message)
        if info is not None:
            # A helper of a helper (SQLAlchemy's ``warn(msg)`` → ``_warnings_warn(msg, …)``):
            # the link step makes this function a helper too.
            info.forwards.append(self._call_spec(call, func))
            return False
        if message is None or not self.builder.is_string_like(message):
            return False
        alternatives = self.builder.build(message)
        if not literal_length(alternatives[0].parts):
            return False
        spec = self._call_spec(call, func, message)
        # pytest's ``fail(f"… uses no {name} '{arg}'")`` with ``name`` "fixture" or
        # "argument": one candidate per text of the message.
        for built in alternatives:
            if literal_length(built.parts):
                site = self._site(
                    statement,
                    built,
                    message,
                    kind=SiteKind.RAISE,
                    error_class=name,
                    severity=Severity.ERROR,
                )
                self.calls.append(
                    {
                        "site": site.model_dump(mode="json"),
                        "call": _with_message(spec, message, built.parts),
                    }
                )
        return True

    def _objects(self, node: ast.expr, statement: ast.stmt, depth: int) -> None:
        """Error objects built without ``raise`` (``errors.append(checks.Error(..., id=...))``)."""
        kind = type(node)
        if kind is Call:
            call: ast.Call = node  # type: ignore[assignment]
            name = _class_name(call.func)
            if name is not None and _is_class_like(name) and (call.args or call.keywords):
                identifier = next(
                    (k.value for k in call.keywords if k.arg in ("id", "code", "error_code")),
                    None,
                )
                code = _code_constant(identifier) if identifier is not None else None
                helper = self._scope.info
                passes_parameter = (
                    helper is not None
                    and helper.helper_param is not None
                    and any(
                        k.arg in MESSAGE_KEYWORDS
                        and isinstance(k.value, Name)
                        and k.value.id == helper.helper_param
                        for k in call.keywords
                    )
                )
                if (
                    name.endswith(_EXCEPTION_SUFFIXES)
                    or name in _BUILTIN_EXCEPTIONS
                    or (code is not None and name in _CHECK_CLASSES)
                    or passes_parameter
                ):
                    message = self._message_argument(call)
                    if message is not None:
                        status = None
                        for keyword in call.keywords:
                            if keyword.arg in _STATUS_KEYWORDS:
                                status = _int_constant(keyword.value)
                                if (
                                    status is None
                                    and helper is not None
                                    and isinstance(keyword.value, Name)
                                ):
                                    status = helper.ints.get(keyword.value.id)
                                    if passes_parameter and keyword.value.id in helper.params:
                                        helper.helper_status = keyword.value.id
                        severity = Severity.ERROR
                        if name.endswith("Warning") or name == "Info" or name == "Debug":
                            severity = Severity.WARNING if name != "Info" else Severity.INFO
                        elif name == "Critical":
                            severity = Severity.CRITICAL
                        http = status if status and 400 <= status < 600 else None
                        self._emit(
                            statement,
                            kind=SiteKind.HTTP if http is not None else SiteKind.OBJECT,
                            error_class=name,
                            message=message,
                            severity=severity,
                            error_code=code,
                            http_status=http,
                            arguments=None,
                            params=self._params_keyword(call),
                            call_spec=None
                            if name in _BUILTIN_EXCEPTIONS
                            else self._call_spec(call, call.func, message),
                        )
                        return
            if depth < 3:
                for argument in call.args:
                    self._objects(argument, statement, depth + 1)
                for keyword in call.keywords:
                    # omegaconf's ``self._format_and_raise(key=key, value=None,
                    # cause=ConfigAttributeError(msg))``: raised by the helper it is given to.
                    if type(keyword.value) is Call:
                        self._objects(keyword.value, statement, depth + 1)
        elif kind in (List, Tuple, Set):
            if depth < 3:
                for element in node.elts:  # type: ignore[attr-defined]
                    self._objects(element, statement, depth + 1)
        elif kind in (Starred, Await, Yield, YieldFrom):
            inner = node.value  # type: ignore[attr-defined]
            if inner is not None and depth < 3:
                self._objects(inner, statement, depth + 1)

    def _is_passthrough(self, node: ast.expr) -> bool:
        """Tell whether a message is only a caught exception (``X(e)``, ``str(e)``, ``e.args``)."""
        kind = type(node)
        if kind is Name:
            return node.id in self._scope.caught  # type: ignore[attr-defined]
        if kind in (Attribute, Subscript, Starred):
            return self._is_passthrough(node.value)  # type: ignore[attr-defined]
        if kind is Call:
            call: ast.Call = node  # type: ignore[assignment]
            if isinstance(call.func, Attribute) and not call.args:
                return self._is_passthrough(call.func.value)
            return (
                _class_name(call.func) in ("str", "repr", "format_exception_only")
                and len(call.args) == 1
                and self._is_passthrough(call.args[0])
            )
        if kind is JoinedStr:
            values = node.values  # type: ignore[attr-defined]
            return all(
                isinstance(v, FormattedValue) and self._is_passthrough(v.value) for v in values
            )
        return False

    def _emit(
        self,
        node: ast.stmt,
        *,
        kind: SiteKind,
        error_class: str,
        message: ast.expr | None,
        severity: Severity = Severity.ERROR,
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
        call_spec: dict[str, Any] | None = None,
        arguments: int | None = None,
        params: dict[str, Any] | None = None,
        instance: str | None = None,
    ) -> None:
        if type(message) is Constant and not isinstance(message.value, str):
            # ``raise SystemExit(2)``, ``KeyError(0)``: the exception shows ``str(value)``.
            builds = [Built((TemplatePart(text=str(message.value)),), "constant")]
        else:
            builds = self.builder.build(message) if message is not None else [Built((), "none")]
        if params is not None:
            builds = [_apply_params(b, params) for b in builds]
        if error_class in _CONTEXT_TEMPLATES:
            builds = [
                Built(apply_format_arguments(b.parts, {}), b.form, b.i18n, b.defined_at)
                for b in builds
            ]
        self._emit_builds(
            node,
            builds,
            message,
            kind=kind,
            error_class=error_class,
            severity=severity,
            http_status=http_status,
            error_code=error_code,
            chained=chained,
            call_spec=call_spec,
            arguments=arguments,
            instance=instance,
        )

    def _site(
        self,
        node: ast.stmt,
        built: Built,
        message: ast.expr | None,
        *,
        kind: SiteKind,
        error_class: str,
        severity: Severity,
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
        arguments: int | None = None,
    ) -> RaiseSite:
        line = node.lineno
        end_line = node.end_lineno or line
        start = max(1, line - self.window)
        end = min(len(self.lines), line + self.window)
        function = self._scope.function
        facts = self._facts(node, built.parts, error_class, kind)
        form = built.form
        if form == "reference":
            form = "opaque"
        elif form == "opaque" and message is not None and self._is_passthrough(message):
            form = "passthrough"
        return RaiseSite(
            path=self.path,
            kind=kind,
            error_class=error_class,
            template=MessageTemplate(parts=without_references(merge_parts(built.parts))),
            form=form,
            line=line,
            end_line=end_line,
            message_line=message.lineno if message is not None else None,
            message_end_line=message.end_lineno if message is not None else None,
            function=(self._scope.qualname or None) if function is not None else None,
            function_start=function.lineno if function is not None else None,
            function_end=function.end_lineno if function is not None else None,
            severity=severity,
            http_status=http_status,
            error_code=error_code,
            defined_at=built.defined_at,
            i18n=built.i18n,
            chained=chained,
            source_code="\n".join(self.lines[start - 1 : end]),
            source_code_start=start,
            source_code_end=max(start, end),
            arguments=arguments,
            facts=facts,
            context=self._site_context(facts),
        )

    def _site_context(self, facts: CodeFacts) -> SiteContext:
        """What the classifier needs of the code around the site being emitted."""
        handler = self._handlers[-1] if self._handlers else None
        scope = self._scope
        tested = {name for guard in facts.guards for name in _IDENTIFIER.findall(guard.text)}
        return SiteContext(
            caught=tuple(_bare_names(handler.type)) if handler is not None else (),
            except_line=handler.lineno if handler is not None else 0,
            try_catches=self._trys[-1] if self._trys else (),
            assigned=tuple(
                sorted(name for name in tested & scope.bound if name not in scope.params)
            ),
        )

    def _emit_builds(
        self,
        node: ast.stmt,
        builds: Sequence[Built],
        message: ast.expr | None,
        *,
        kind: SiteKind,
        error_class: str,
        severity: Severity,
        http_status: int | None = None,
        error_code: str | None = None,
        chained: bool = False,
        call_spec: dict[str, Any] | None = None,
        arguments: int | None = None,
        instance: str | None = None,
    ) -> None:
        """Add a site per distinct template; note what the link step completes.

        ``instance``: the imported name of a warning made once (``YIELD_FIXTURE``), whose
        class the link step finds.
        """
        seen: set[tuple[TemplatePart, ...]] = set()
        helper = self._scope.info
        if len(builds) > 1 and any(merge_parts(b.parts) for b in builds):
            # ``msg = ""`` … ``if msg: raise X(msg)``: the empty start is never the message.
            builds = [b for b in builds if merge_parts(b.parts)]
        for built in builds:
            parts = merge_parts(built.parts)
            if parts in seen:
                continue
            seen.add(parts)
            index = len(self.sites)
            self.sites.append(
                self._site(
                    node,
                    built,
                    message,
                    kind=kind,
                    error_class=error_class,
                    severity=severity,
                    http_status=http_status,
                    error_code=error_code,
                    chained=chained,
                    arguments=arguments,
                )
            )
            referenced = has_reference(parts)
            if referenced or call_spec is not None or instance is not None:
                entry = {
                    "site": index,
                    "message": _dump_parts(parts) if referenced else None,
                    "form": built.form,
                    "call": _with_message(call_spec, message, parts)
                    if len(builds) > 1
                    else call_spec,
                    "given": message is not None,
                }
                if instance is not None:
                    entry["instance"] = instance
                self.pending.append(entry)
            if (
                helper is not None
                and helper.helper_param is not None
                and any(p.hole and p.text == helper.helper_param for p in parts)
            ):
                helper.helper_sites.append(index)

    # -- code facts (#5) -------------------------------------------------------------------

    def _note_call(self, call: ast.Call) -> None:
        """Remember a call's line by the name it calls (the callers of functions, at link)."""
        func = call.func
        kind = type(func)
        if kind is Attribute:
            name: str = func.attr  # type: ignore[attr-defined]
        elif kind is Name:
            name = func.id  # type: ignore[attr-defined]
            if name in _BUILTIN_NAMES:
                return
        else:
            return
        lines = self.called.get(name)
        if lines is None:
            self.called[name] = [call.lineno]
        elif len(lines) < _MAX_CALLERS:
            lines.append(call.lineno)

    def _text(self, node: ast.expr | ast.pattern) -> str:
        """A node's source text as written when it fits on one line, else ``ast.unparse``'s."""
        line = node.lineno
        end = node.end_col_offset
        if line == node.end_lineno and end is not None and 0 < line <= len(self.lines):
            text = self.lines[line - 1]
            if text.isascii():
                return text[node.col_offset : end]
            # Column offsets count UTF-8 bytes.
            return text.encode("utf-8", "surrogatepass")[node.col_offset : end].decode(
                "utf-8", "replace"
            )
        return unparse(node)

    def _fragment(self, node: ast.expr) -> str:
        text = self._text(node)
        return text if len(text) <= _MAX_FRAGMENT and "\n" not in text else "..."

    def _facts(
        self,
        node: ast.stmt,
        parts: Sequence[TemplatePart],
        error_class: str,
        kind: SiteKind,
    ) -> CodeFacts:
        """The code facts of a site: its function, the guards in force, subject, values."""
        holes = tuple(p.text for p in parts if p.hole)
        cached = self._facts_cache
        if (
            cached is not None
            and cached[0] is node
            and cached[1] == holes
            and cached[2] == error_class
        ):
            return cached[3]
        header = self._header()
        found: list[_Found] = []
        guards = self._guards
        if len(guards) > _MAX_GUARD_ENTRIES:
            # A dispatch of thousands of ``if x == …: return``: the conditions that lead to
            # the site and the nearest others say all there is to say, and reading every one
            # at every site would be quadratic.
            recent = len(guards) - _MAX_GUARD_ENTRIES // 2
            guards = [
                entry
                for position, entry in enumerate(guards)
                if position >= recent or (entry[0] != _LOOKUP and entry[-2] is True)
            ][-_MAX_GUARD_ENTRIES:]
        for entry in guards:
            found.extend(self._resolve_guard(entry))
        if isinstance(node, Assert):
            # ``assert cond, msg`` fails when ``cond`` does not hold.
            found.extend(self._condition(node.test, False, True))
        subject = self._subject(found, holes, header)
        handler = self._handlers[-1] if self._handlers else None
        facts = CodeFacts(
            function=header.function,
            class_name=header.class_name,
            signature=header.signature,
            parameters=list(header.parameters),
            docstring=header.docstring,
            guards=[f.guard for f in found[-_MAX_GUARDS:]],
            subject=subject,
            accepted_values=self._accepted(found, subject, header) if subject else [],
            exception_bases=[] if kind is SiteKind.LOG else self._exception_bases(error_class),
            in_except=handler is not None,
            caught=self._caught(handler) if handler is not None else [],
        )
        self._facts_cache = (node, holes, error_class, facts)
        return facts

    def _header(self) -> _Header:
        scope = self._scope
        header = scope.header
        if header is None:
            header = scope.header = self._make_header(scope)
        return header

    def _make_header(self, scope: _Scope) -> _Header:
        class_name = scope.cls.qualname.rpartition(".")[2] if scope.cls is not None else None
        node = scope.function
        if node is None:
            return _Header(None, class_name, None, (), None, {})
        parameters, pieces, annotations = self._parameters(node.args)
        docstring = None
        first = node.body[0] if node.body else None
        if (
            type(first) is Expr
            and type(first.value) is Constant
            and isinstance(first.value.value, str)
        ):
            # The first paragraph, its whitespace collapsed (no need for inspect.cleandoc).
            paragraph = _PARAGRAPH_BREAK.split(first.value.value.strip(), maxsplit=1)[0]
            docstring = " ".join(paragraph.split())
            if len(docstring) > _MAX_DOCSTRING:
                docstring = docstring[: _MAX_DOCSTRING - 3].rstrip() + "..."
        return _Header(
            node.name,
            class_name,
            f"{node.name}({', '.join(pieces)})",
            tuple(parameters),
            docstring or None,
            annotations,
        )

    def _parameters(
        self, arguments: ast.arguments
    ) -> tuple[list[Parameter], list[str], dict[str, ast.expr]]:
        """The parameters of a signature, their source text, and their annotations by name."""
        parameters: list[Parameter] = []
        pieces: list[str] = []
        annotations: dict[str, ast.expr] = {}

        def add(name: str, argument: ast.arg, default: ast.expr | None) -> None:
            annotation = None
            if argument.annotation is not None:
                annotations[argument.arg] = argument.annotation
                annotation = self._fragment(argument.annotation)
            value = self._fragment(default) if default is not None else None
            parameters.append(Parameter(name=name, annotation=annotation, default=value))
            piece = name if annotation is None else f"{name}: {annotation}"
            if value is not None:
                piece += f"={value}" if annotation is None else f" = {value}"
            pieces.append(piece)

        def marker(name: str) -> None:
            parameters.append(Parameter(name=name))
            pieces.append(name)

        positional = [*arguments.posonlyargs, *arguments.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(arguments.defaults))
        defaults += arguments.defaults
        for index, (argument, default) in enumerate(zip(positional, defaults, strict=True)):
            add(argument.arg, argument, default)
            if index == len(arguments.posonlyargs) - 1:
                marker("/")
        if arguments.vararg is not None:
            add(f"*{arguments.vararg.arg}", arguments.vararg, None)
        elif arguments.kwonlyargs:
            marker("*")
        for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
            add(argument.arg, argument, kw_default)
        if arguments.kwarg is not None:
            add(f"**{arguments.kwarg.arg}", arguments.kwarg, None)
        return parameters, pieces, annotations

    # The guard stack holds (_IF, test, leads, accepting), (_CASE, subject, case, leads,
    # accepting) and (_LOOKUP, try, handler); ``accepting`` is False when the branch that
    # handles the tested values raises (those values are rejected, not accepted).

    def _resolve_guard(self, entry: tuple[Any, ...]) -> list[_Found]:
        found = self._found.get(entry)
        if found is None:
            tag = entry[0]
            if tag == _IF:
                found = self._condition(entry[1], entry[2], entry[3])
            elif tag == _CASE:
                found = self._case(entry[1], entry[2], entry[3], entry[4])
            else:
                found = self._lookup(entry[1], entry[2])
            self._found[entry] = found
        return found

    def _condition(
        self, test: ast.expr, leads: bool, accepting: bool, depth: int = 0
    ) -> list[_Found]:
        """The guards one condition makes: ``a and b`` leading to the site is two of them."""
        kind = type(test)
        if depth < 4:
            if kind is BoolOp and (type(test.op) is And) == leads:  # type: ignore[attr-defined]
                found: list[_Found] = []
                for value in test.values:  # type: ignore[attr-defined]
                    found.extend(self._condition(value, leads, accepting, depth + 1))
                return found
            if (
                kind is UnaryOp
                and type(test.op) is Not  # type: ignore[attr-defined]
                and type(test.operand) is BoolOp  # type: ignore[attr-defined]
            ):
                return self._condition(test.operand, not leads, accepting, depth + 1)  # type: ignore[attr-defined]
        name, subject, values, positive = self._classify(test, 0)
        accepts = None
        rejects = other = False
        if positive is None:
            other = leads
        elif positive == leads:  # the site runs when the subject is one of the values
            rejects = True
        elif accepting and values and name != "none-check":
            accepts = values
        guard = Guard(
            kind=name,
            text=self._text(test),
            subject=subject,
            values=list(values[:_MAX_VALUES]),
            leads_to_site=leads,
            line=test.lineno,
        )
        return [_Found(guard, accepts, rejects, other)]

    def _classify(
        self, node: ast.expr, depth: int
    ) -> tuple[str, str | None, tuple[str, ...], bool | None]:
        """A condition's kind, subject and values.

        The last item is True when the condition says "the subject is one of the values"
        (``==``, ``in``, ``is`` an Enum member), False when it says "none of them", None when
        it says neither.
        """
        kind = type(node)
        if kind is UnaryOp and type(node.op) is Not:  # type: ignore[attr-defined]
            name, subject, values, positive = self._classify(node.operand, depth + 1)  # type: ignore[attr-defined]
            return name, subject, values, None if positive is None else not positive
        if kind is Compare:
            return self._compare(node)  # type: ignore[arg-type]
        if kind is Call:
            call: ast.Call = node  # type: ignore[assignment]
            callee = _class_name(call.func)
            args = call.args
            if callee in ("isinstance", "issubclass") and len(args) == 2:
                return "isinstance", self._subject_text(args[0]), self._type_names(args[1]), None
            if callee == "len" and len(args) == 1:
                return "truthiness", self._subject_text(args[0]), (), None
            func = call.func
            if type(func) is Attribute and type(func.value) in (Name, Attribute):
                # ``name.startswith("_")``: about ``name``, unless it is a module or ``self``.
                head = _dotted(func.value)
                root = head.partition(".")[0] if head else ""
                if head and root not in ("self", "cls") and root not in self.imports:
                    return "other", head, (), None
            if args and type(args[0]) in (Name, Attribute):
                return "other", self._subject_text(args[0]), (), None
            return "other", None, (), None
        if kind is Name or kind is Attribute or kind is Subscript:
            return "truthiness", self._subject_text(node), (), None
        if kind is BoolOp and depth < 4:
            parts = [self._classify(value, depth + 1) for value in node.values]  # type: ignore[attr-defined]
            kinds = {part[0] for part in parts}
            subjects = {part[1] for part in parts}
            same = len(kinds) == 1
            return (
                kinds.pop() if same else "other",
                subjects.pop() if len(subjects) == 1 else None,
                tuple(value for part in parts for value in part[2]) if same else (),
                None,
            )
        return "other", None, (), None

    def _compare(self, node: ast.Compare) -> tuple[str, str | None, tuple[str, ...], bool | None]:
        left = node.left
        if len(node.ops) != 1:  # 0 <= x < n
            operands = [left, *node.comparators]
            texts = [_value_text(operand) for operand in operands]
            tested = next((o for o, t in zip(operands, texts, strict=True) if t is None), None)
            return (
                "comparison",
                self._subject_text(tested) if tested is not None else None,
                tuple(t for t in texts if t is not None),
                None,
            )
        op = type(node.ops[0])
        right = node.comparators[0]
        if op is In or op is NotIn:
            members = self._members(right, 0)
            left = _normalised(left)
            return (
                "membership",
                self._subject_text(left),
                members,
                (op is In) if members and type(left) in _SUBJECT_NODES else None,
            )
        equality = op is Eq or op is NotEq or op is Is or op is IsNot
        if equality and (_is_none(right) or _is_none(left)):
            other = left if _is_none(right) else right
            return "none-check", self._subject_text(other), ("None",), op is Is or op is Eq
        if equality and _is_type_call(left):
            return "isinstance", self._subject_text(left.args[0]), self._type_names(right), None  # type: ignore[attr-defined]
        value = _value_text(right)
        subject: ast.expr = left
        if value is None:
            value = _value_text(left)
            if value is not None:
                subject = right
        subject = _normalised(subject)
        positive: bool | None = None
        if (
            value is not None
            and type(subject) in _SUBJECT_NODES  # not ``len(x) == 0``: 0 is no value of x
            and (op is Eq or op is NotEq or ("." in value and (op is Is or op is IsNot)))
        ):
            positive = op is Eq or op is Is
        return "comparison", self._subject_text(subject), (value,) if value else (), positive

    def _subject_text(self, node: ast.expr) -> str | None:
        if isinstance(node, Name):
            return node.id
        if isinstance(node, Constant):
            return None
        if (
            isinstance(node, Call)
            and _class_name(node.func) in ("len", "type")
            and len(node.args) == 1
        ):
            return self._subject_text(node.args[0])
        text = _dotted(node) if isinstance(node, Attribute) else None
        return text or self._text(node)

    def _type_names(self, node: ast.expr) -> tuple[str, ...]:
        if type(node) is Tuple:
            return tuple(name for e in node.elts for name in self._type_names(e))[:_MAX_VALUES]
        if type(node) is BinOp and type(node.op) is BitOr:
            return self._type_names(node.left) + self._type_names(node.right)
        return (_dotted(node) or self._text(node),)

    def _members(self, node: ast.expr, depth: int) -> tuple[str, ...]:
        """The members of a container a guard tests (tuple, set, list, dict keys, Enum).

        Names are resolved against the function's container literals, the module's and the
        class's constants and the Enum classes of the file; empty when any member is unknown.
        """
        if depth > 4:
            return ()
        kind = type(node)
        if kind is Tuple or kind is List or kind is Set:
            values: list[str] = []
            for element in node.elts:  # type: ignore[attr-defined]
                if type(element) is Starred:
                    inner = self._members(element.value, depth + 1)
                    if not inner:
                        return ()
                    values.extend(inner)
                    continue
                text = _value_text(element)
                if text is None:
                    return ()
                values.append(text)
            return tuple(values[:_MAX_VALUES])
        if kind is Dict:
            keys: list[str] = []
            for key, value in zip(node.keys, node.values, strict=True):  # type: ignore[attr-defined]
                if key is None:  # {**OTHER, ...}
                    inner = self._members(value, depth + 1)
                    if not inner:
                        return ()
                    keys.extend(inner)
                    continue
                text = _value_text(key)
                if text is None:
                    return ()
                keys.append(text)
            return tuple(keys[:_MAX_VALUES])
        if kind is Name:
            name: str = node.id  # type: ignore[attr-defined]
            scope = self._scope
            if name in scope.containers:
                return self._members(scope.containers[name], depth + 1)
            if name in scope.bound:
                return ()
            if name in self._values:
                return self._members(self._values[name], depth + 1)
            cls = self._class_names.get(name)
            members = _enum_members(cls) if cls is not None else None
            return tuple(f"{name}.{member}" for member, _ in members or ())[:_MAX_VALUES]
        if kind is Attribute:
            return self._attribute_members(node, depth)  # type: ignore[arg-type]
        if kind is Call:
            func = node.func  # type: ignore[attr-defined]
            args = node.args  # type: ignore[attr-defined]
            if (
                type(func) is Name
                and func.id in ("frozenset", "set", "tuple", "list", "sorted")
                and len(args) == 1
            ):
                return self._members(args[0], depth + 1)
            if type(func) is Attribute and func.attr == "keys" and not args:
                return self._members(func.value, depth + 1)
            return ()
        if kind is ListComp or kind is SetComp or kind is GeneratorExp:
            return self._enum_comprehension(node)  # type: ignore[arg-type]
        return ()

    def _attribute_members(self, node: ast.Attribute, depth: int) -> tuple[str, ...]:
        """``self.CHOICES``, ``Cls.CHOICES``, ``Mode.__members__``, ``Mode._value2member_map_``."""
        owner = node.value
        if type(owner) is not Name:
            return ()
        cls: ast.ClassDef | None
        if owner.id in ("self", "cls"):
            current = self._scope.cls
            cls = self._class_defs.get(current.qualname) if current is not None else None
        else:
            cls = self._class_names.get(owner.id)
        if cls is None:
            return ()
        attribute = node.attr
        if attribute in ("__members__", "_member_map_", "_member_names_", "_value2member_map_"):
            members = _enum_members(cls)
            if members is None:
                return ()
            if attribute != "_value2member_map_":
                return tuple(repr(name) for name, _ in members)[:_MAX_VALUES]
            texts = [_value_text(value) for _, value in members]
            return tuple(t for t in texts if t is not None)[:_MAX_VALUES] if all(texts) else ()
        value = _class_constant(cls, attribute)
        return self._members(value, depth + 1) if value is not None else ()

    def _enum_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp
    ) -> tuple[str, ...]:
        """``[m.value for m in Mode]`` / ``{m.name for m in Mode}`` over an Enum of the file."""
        if len(node.generators) != 1:
            return ()
        generator = node.generators[0]
        element = node.elt
        if (
            generator.ifs
            or type(generator.target) is not Name
            or type(generator.iter) is not Name
            or type(element) is not Attribute
            or type(element.value) is not Name
            or element.value.id != generator.target.id
        ):
            return ()
        cls = self._class_names.get(generator.iter.id)
        members = _enum_members(cls) if cls is not None else None
        if not members:
            return ()
        if element.attr == "name":
            return tuple(repr(name) for name, _ in members)[:_MAX_VALUES]
        if element.attr == "value":
            texts = [_value_text(value) for _, value in members]
            return tuple(t for t in texts if t is not None)[:_MAX_VALUES] if all(texts) else ()
        return ()

    def _case(
        self, subject: ast.expr, case: ast.match_case, leads: bool, accepting: bool
    ) -> list[_Found]:
        """The guard of a ``match`` case (an equivalent condition when it only has values)."""
        found: list[_Found] = []
        pattern = case.pattern
        shown = _pattern_values(pattern)
        if shown is not None:
            values, literal = shown
            subject_text = self._subject_text(subject) or self._text(subject)
            if literal and values:
                listed = values[0] if len(values) == 1 else f"({', '.join(values)})"
                text = f"{subject_text} {'==' if len(values) == 1 else 'in'} {listed}"
            else:
                text = f"case {self._text(pattern)}"
            guard = Guard(
                kind="match",
                text=text,
                subject=subject_text,
                values=list(values[:_MAX_VALUES]),
                leads_to_site=leads,
                line=pattern.lineno,
            )
            accepted = values if literal and values and accepting and not leads else None
            found.append(_Found(guard, accepted, leads and literal, leads and not literal))
        if leads and case.guard is not None:
            found.extend(self._condition(case.guard, True, True))
        return found

    def _lookup(self, statement: ast.stmt, handler: ast.ExceptHandler) -> list[_Found]:
        """``try: x = d[k] except KeyError: …`` (or ``Mode(v)`` with ``except ValueError``)."""
        names = {name.rpartition(".")[2] for name in self._caught(handler)}
        key_error = bool(names & {"KeyError", "LookupError"})
        value_error = "ValueError" in names
        if not (key_error or value_error):
            return []
        body: list[ast.stmt] = statement.body  # type: ignore[attr-defined]
        for inner in body[:4]:
            kind = type(inner)
            if kind not in (Assign, AnnAssign, AugAssign, Return, Expr):
                continue
            value = inner.value  # type: ignore[attr-defined]
            if isinstance(value, Await):
                value = value.value
            if value is None:
                continue
            candidates = [value, *value.args] if type(value) is Call else [value]
            for candidate in candidates:
                found = self._lookup_in(candidate, key_error, value_error)
                if found is not None:
                    return [found]
        return []

    def _lookup_in(self, node: ast.expr, key_error: bool, value_error: bool) -> _Found | None:
        kind = type(node)
        container: ast.expr | None = None
        key: ast.expr | None = None
        values: tuple[str, ...] = ()
        if kind is Subscript and key_error:
            container, key = node.value, node.slice  # type: ignore[attr-defined]
        elif kind is Call:
            func = node.func  # type: ignore[attr-defined]
            args = node.args  # type: ignore[attr-defined]
            if len(args) != 1:
                return None
            if key_error and type(func) is Attribute and func.attr in ("pop", "__getitem__"):
                container, key = func.value, args[0]
            elif value_error and type(func) is Name:
                cls = self._class_names.get(func.id)
                members = _enum_members(cls) if cls is not None else None
                if not members:
                    return None
                texts = [_value_text(value) for _, value in members]
                values = tuple(t for t in texts if t is not None) if all(texts) else ()
                key = args[0]
        if key is None or type(key) in (Constant, Slice):
            return None
        if container is not None:
            cls = self._class_names.get(container.id) if type(container) is Name else None
            members = _enum_members(cls) if cls is not None else None
            if members is not None:  # Mode[name]
                values = tuple(repr(name) for name, _ in members)
            else:
                values = self._members(container, 0)
        guard = Guard(
            kind="dict-lookup",
            text=self._text(node),
            subject=self._subject_text(key),
            values=list(values[:_MAX_VALUES]),
            leads_to_site=True,
            line=node.lineno,
        )
        return _Found(guard, values[:_MAX_VALUES] or None)

    def _caught(self, handler: ast.ExceptHandler) -> list[str]:
        caught = handler.type
        if caught is None:
            return []
        elements = caught.elts if type(caught) is Tuple else [caught]
        return [_dotted(element) or self._text(element) for element in elements][:8]

    def _subject(
        self, found: Sequence[_Found], holes: tuple[str, ...], header: _Header
    ) -> str | None:
        """The name a site is about.

        A tested name that the message shows, else the nearest tested name (the conditions
        that lead to the site first), else a parameter that the message shows.
        """
        subjects = [f.guard.subject for f in found if f.guard.subject]
        if subjects:
            if holes:
                names: set[str] = set()
                for hole in holes:
                    names.update(_IDENTIFIER.findall(hole))
                for subject in reversed(subjects):
                    if subject in holes or subject.rpartition(".")[2] in names:
                        return subject
            direct = [f.guard.subject for f in found if f.guard.subject and f.guard.leads_to_site]
            return direct[-1] if direct else subjects[-1]
        if holes and header.parameters:
            parameters = {p.name for p in header.parameters} - {"self", "cls"}
            for hole in holes:
                if hole in parameters:
                    return hole
        return None

    def _accepted(self, found: Sequence[_Found], subject: str, header: _Header) -> list[str]:
        """The values the code accepts for the subject.

        Those other branches handle, else those of a ``Literal[...]`` annotation of the
        subject parameter.
        """
        values: dict[str, None] = {}
        other = False
        for f in found:
            if f.guard.subject != subject:
                continue
            if f.rejects:
                return []  # the site runs for some values only: it accepts no list of them
            other = other or f.other
            if f.accepts:
                values.update(dict.fromkeys(f.accepts))
        if other:
            values.clear()  # the site is about the subject's type, size or truth, not its value
        if not values:
            annotation = header.annotations.get(subject)
            if annotation is not None:
                values.update(dict.fromkeys(self._literal_values(annotation, 0)))
        return list(values)[:_MAX_VALUES]

    def _literal_values(self, node: ast.expr, depth: int) -> tuple[str, ...]:
        """The values of ``Literal[...]`` in an annotation (``Optional``, ``|``, aliases)."""
        if depth > 4:
            return ()
        kind = type(node)
        if kind is Subscript:
            head = _class_name(node.value)  # type: ignore[attr-defined]
            inner = node.slice  # type: ignore[attr-defined]
            elements = inner.elts if type(inner) is Tuple else [inner]
            if head == "Literal":
                texts = [_value_text(element) for element in elements]
                return tuple(t for t in texts if t is not None)
            if head in ("Optional", "Union"):
                return tuple(v for e in elements for v in self._literal_values(e, depth + 1))
            if head == "Annotated":
                return self._literal_values(elements[0], depth + 1)
            return ()
        if kind is BinOp and type(node.op) is BitOr:  # type: ignore[attr-defined]
            operation: ast.BinOp = node  # type: ignore[assignment]
            left = self._literal_values(operation.left, depth + 1)
            return left + self._literal_values(operation.right, depth + 1)
        if kind is Name and node.id in self._values:  # type: ignore[attr-defined]
            return self._literal_values(self._values[node.id], depth + 1)  # type: ignore[attr-defined]
        if kind is Constant and isinstance(node.value, str):  # type: ignore[attr-defined]
            try:
                parsed = ast.parse(node.value.strip(), mode="eval").body  # type: ignore[attr-defined]
            except (SyntaxError, ValueError):
                return ()
            return self._literal_values(parsed, depth + 1)
        return ()

    def _exception_bases(self, name: str) -> list[str]:
        found = self._bases.get(name)
        if found is None:
            found = self._bases[name] = self._ancestors(name, set())
        return found

    def _ancestors(self, name: str, seen: set[str]) -> list[str]:
        """A class's ancestors as far as this file and the builtins show, nearest first."""
        node = self._class_names.get(name)
        if node is None:
            # An imported name may shadow a builtin one (requests' ConnectionError): link knows.
            return [] if name in self.imports else list(_BUILTIN_ANCESTORS.get(name, ()))
        seen.add(name)
        result: list[str] = []
        for base in node.bases:
            written = _dotted(base)
            if written is None or written == "object":
                continue
            short = written.rpartition(".")[2]
            result.append(written)
            if short in seen:
                continue
            if "." not in written:
                result.extend(self._ancestors(short, seen))
            else:
                result.extend(_BUILTIN_ANCESTORS.get(short, ()))
        return _linear(result)


def _with_percent(built: Built, values: Mapping[str, Any]) -> Built:
    """Apply ``%`` formatting, or record it on a reference for the link step to apply."""
    if len(built.parts) == 1 and (target := part_reference(built.parts[0])) is not None:
        updated = dict(target)
        updated["ops"] = [*target.get("ops", []), {"op": "percent", "values": values}]
        return Built(reference(built.parts[0].text, updated).parts, built.form, built.i18n)
    return Built(
        apply_percent_values(built.parts, values),
        "percent" if built.form == "constant" else built.form,
        built.i18n,
        built.defined_at,
    )


def _apply_params(built: Built, params: Mapping[str, Any]) -> Built:
    """Django's ``ValidationError(msg, params=...)``: fill ``%(name)s`` holes, if any."""
    if has_reference(built.parts) or any(not p.hole and "%(" in p.text for p in built.parts):
        return _with_percent(built, params)
    return built


# -- the link step ------------------------------------------------------------------------


def _exports(result: FileResult) -> Mapping[str, Any]:
    return result.exports


def _linear(ancestors: Iterable[str]) -> list[str]:
    """Ancestors without repeats, the roots every exception shares last (as in an MRO)."""
    unique = list(dict.fromkeys(ancestors))
    roots = [name for name in ("Exception", "BaseException") if name in unique]
    return [name for name in unique if name not in roots] + roots


def _caller_name(facts: CodeFacts | None) -> str | None:
    """The name calls of a site's function use: the function's, a constructor's class's."""
    if facts is None or not facts.function:
        return None
    name = facts.function
    if name == "__init__":
        return facts.class_name
    if name.startswith("__") and name.endswith("__"):
        return None
    return name


_Given = tuple[int, tuple[TemplatePart, ...], tuple[tuple[TemplatePart, ...], ...]]
"""What a raise gives an exception: how many arguments, the first, the others."""


def _passed_class(
    error_class: str,
    values: Mapping[str, Sequence[TemplatePart]],
    passed: set[str],
    function: Mapping[str, Any],
) -> str:
    """The class a helper's site raises or warns with when its class is a parameter.

    ``warnings.warn(message, category)`` or ``raise exc(message)`` in the helper (the site's
    class is then the parameter's name, or the class its default names): the class the call
    passes, the parameter's name when what it passes is bound at run time, else the one the
    helper stands for when none is passed (see :func:`_class_defaults`).
    """
    classes: dict[str, str] = function.get("classes") or {}
    param = next((p for p, c in classes.items() if c == error_class), error_class)
    if param not in passed:
        return classes.get(param, error_class)
    given = values.get(param)
    if given and len(given) == 1:
        name = given[0].text.rpartition(".")[2]
        return name if _is_class_like(name) else param
    return error_class


def _implicit(function: Mapping[str, Any], through_instance: bool) -> int:
    """How many leading parameters a call binds implicitly (``self``, ``cls``)."""
    kind = function.get("method")
    return 1 if kind == "class" or (kind == "method" and through_instance) else 0


@dataclass(frozen=True)
class _Text:
    """A resolved message: its parts and where it comes from."""

    parts: tuple[TemplatePart, ...]
    i18n: bool = False
    defined_at: Location | None = None
    form: str | None = None


@dataclass
class _Module:
    path: str
    exports: Mapping[str, Any]

    def get(self, key: str) -> Any:
        return self.exports.get(key) or {}


_Entity = tuple[str, str, str]
"""(kind, module, name): ``constant``, ``table``, ``class``, ``function``, ``module``, or
``attribute`` with name ``Class.attr``."""


class _Linker:
    """Resolves what crosses files, on the exports of every file of a source."""

    def __init__(self, results: Sequence[FileResult]) -> None:
        self.results = results
        self.modules: dict[str, _Module] = {}
        self.module_of: dict[str, str] = {}
        self.by_path = {result.path: result for result in results}
        for result in results:
            name = str(result.exports.get("module") or module_name(result.path))
            self.modules.setdefault(name, _Module(result.path, result.exports))
            self.module_of[result.path] = name
        self.suffixes: dict[str, str | None] = {}
        for name in self.modules:
            parts = name.split(".")
            for k in range(1, len(parts)):
                suffix = ".".join(parts[k:])
                if suffix in self.suffixes and self.suffixes[suffix] != name:
                    self.suffixes[suffix] = None
                else:
                    self.suffixes[suffix] = name
        self.class_names: dict[str, list[tuple[str, str]]] = {}
        self.function_names: dict[str, list[tuple[str, str]]] = {}
        for name, module in self.modules.items():
            for qualname in module.get("classes"):
                self.class_names.setdefault(qualname.rpartition(".")[2], []).append(
                    (name, qualname)
                )
            for qualname, function in module.get("functions").items():
                if "helper" in function:
                    self.function_names.setdefault(qualname.rpartition(".")[2], []).append(
                        (name, qualname)
                    )
        self._mro: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._text: dict[tuple[str, str], tuple[str, str, dict[str, Any]] | None] = {}
        self._subclasses: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        self._ancestors: dict[tuple[str, str], list[str]] = {}
        self._instance: tuple[str, str] | None = None
        """The raised class whose inherited text is being bound (its ``self.x`` come first)."""
        self._caller: tuple[str, str] | None = None
        """The class of the code that calls the factory whose texts are being resolved."""
        self._call_values: Mapping[str, Sequence[TemplatePart]] | None = None
        """The arguments of the factory call whose texts are being resolved, by parameter."""
        self._given: _Given | None = None
        """The message the raise gives the class whose text is being bound (``self.args[0]``)."""
        self._callers: dict[str, list[Location]] = {}
        """Where each function the linked sites are in is called from (see :meth:`linked`)."""

    # -- lookups ---------------------------------------------------------------------------

    def _module(self, dotted: str) -> str | None:
        if dotted in self.modules:
            return dotted
        return self.suffixes.get(dotted)

    def lookup(self, module: str, dotted: str, depth: int = 0) -> _Entity | None:
        """Find what a dotted name used in a module refers to."""
        info = self.modules.get(module)
        if info is None or depth > _MAX_PENDING_DEPTH:
            return None
        parts = dotted.split(".")
        classes = info.get("classes")
        for k in range(len(parts), 0, -1):
            qualname = ".".join(parts[:k])
            if qualname in classes:
                if k == len(parts):
                    return ("class", module, qualname)
                if k == len(parts) - 1:
                    return ("attribute", module, f"{qualname}.{parts[k]}")
                return None
        head = parts[0]
        if len(parts) == 1:
            for kind, key in (
                ("constant", "constants"),
                ("table", "tables"),
                ("function", "functions"),
            ):
                if head in info.get(key):
                    return (kind, module, head)
        imports = info.get("imports")
        if head in imports:
            target = imports[head] + ("." + ".".join(parts[1:]) if len(parts) > 1 else "")
            return self.absolute(target, depth + 1)
        for star in info.get("stars"):
            found = self.absolute(f"{star}.{dotted}", depth + 1)
            if found is not None:
                return found
        return None

    def outside(self, module: str, dotted: str, depth: int = 0) -> bool:
        """Whether a dotted name used in a module comes, through imports, from another package.

        A module instance's attribute (``warning_cache.warn``) comes from where its class does.
        """
        info = self.modules.get(module)
        if info is None or depth > _MAX_PENDING_DEPTH:
            return False
        parts = dotted.split(".")
        head = parts[0]
        objects = info.get("objects")
        if len(parts) > 1 and head in objects:
            return self.outside(module, str(objects[head]), depth + 1)
        imports = info.get("imports")
        if head not in imports:
            return False  # defined in the module (or a built-in)
        target = (imports[head] + "." + ".".join(parts[1:])).rstrip(".").split(".")
        for k in range(len(target), 0, -1):
            found = self._module(".".join(target[:k]))
            if found is not None:
                return k < len(target) and self.outside(found, ".".join(target[k:]), depth + 1)
        return True

    def absolute(self, target: str, depth: int) -> _Entity | None:
        """Find what an absolute dotted name refers to."""
        parts = target.split(".")
        for k in range(len(parts), 0, -1):
            module = self._module(".".join(parts[:k]))
            if module is not None:
                if k == len(parts):
                    return ("module", module, "")
                return self.lookup(module, ".".join(parts[k:]), depth)
        return None

    def find_class(self, module: str, dotted: str) -> tuple[str, str] | None:
        """Find a class by a name used in a module, else by a unique class name in the source."""
        entity = self.lookup(module, dotted)
        if entity is not None:
            return (entity[1], entity[2]) if entity[0] == "class" else None
        name = dotted.rpartition(".")[2]
        if name in _BUILTIN_NAMES:
            return None
        found = self.class_names.get(name, [])
        return found[0] if len(found) == 1 else None

    def mro(self, module: str, qualname: str) -> list[tuple[str, str]]:
        """The class and its bases found in the source, nearest first."""
        key = (module, qualname)
        if key in self._mro:
            return self._mro[key]
        self._mro[key] = [key]
        result = [key]
        cls = self.modules[module].get("classes").get(qualname) or {}
        for base in cls.get("bases", []):
            found = self.find_class(module, base)
            if found is None:
                continue
            for item in self.mro(*found):
                if item not in result:
                    result.append(item)
        self._mro[key] = result
        return result

    def _class(self, module: str, qualname: str) -> dict[str, Any]:
        return dict(self.modules[module].get("classes").get(qualname) or {})

    def _location(self, module: str, line: int) -> Location | None:
        return Location(path=self.modules[module].path, line=line) if line else None

    def _texts(self, module: str, templates: Sequence[Mapping[str, Any]], form: str) -> list[_Text]:
        texts: list[_Text] = []
        for template in templates:
            for text in self.expand(module, _load_parts(template["parts"])):
                texts.append(
                    _Text(
                        text.parts,
                        bool(template.get("i18n")) or text.i18n,
                        self._location(module, int(template.get("line") or 0)) or text.defined_at,
                        form,
                    )
                )
        return texts[:8]

    # -- references ------------------------------------------------------------------------

    def expand(self, module: str, parts: Sequence[TemplatePart], depth: int = 0) -> list[_Text]:
        """Replace every reference hole by what it resolves to (unresolved → a plain hole)."""
        results = [_Text(())]
        for part in parts:
            target = part_reference(part)
            texts: list[_Text] | None = None
            if target is not None and depth < _MAX_PENDING_DEPTH:
                texts = self.resolve_reference(module, target, depth)
            if target is None:
                texts = [_Text((part,))]
            elif not texts:
                texts = [_Text((TemplatePart(text=part.text, hole=True),))]
            else:
                operations = target.get("ops") or []
                if operations:
                    texts = [
                        _Text(apply_operations(t.parts, operations), t.i18n, t.defined_at, t.form)
                        for t in texts
                    ]
            results = [
                _Text(
                    r.parts + t.parts,
                    r.i18n or t.i18n,
                    r.defined_at or t.defined_at,
                    r.form or t.form,
                )
                for r in results
                for t in texts
            ][:8]
        return results

    def resolve_reference(
        self, module: str, target: Mapping[str, Any], depth: int
    ) -> list[_Text] | None:
        """Resolve one reference (a constant, a class attribute, a table entry)."""
        key = target.get("key")
        if "key_param" in target:
            # A table entry a factory's parameter names: the key the call passes.
            passed = (self._call_values or {}).get(str(target["key_param"]))
            if not passed or len(passed) != 1 or passed[0].hole:
                return None
            key = passed[0].text
            caller = self._caller
            if caller is not None and (module, str(target["class"])) in self.mro(*caller):
                found = self._attribute_in(module, *caller, str(target["self"]), key, depth)
                if found is not None:
                    return found
            target = {"self": target["self"], "key": key, "class": target["class"]}
        if "args" in target:  # the message the raise gives (see ``_with_given``)
            return self._given_text(module, target, depth)
        if "call" in target:
            return self.function_message(module, target["call"], depth)
        if "self" in target:
            qualname = target.get("class")
            if not qualname or module not in self.modules:
                return None
            attribute = str(target["self"])
            instance = self._instance
            if instance is not None and (module, qualname) in self.mro(*instance):
                # ``self.fmt`` in a base's ``__init__`` is the raised class's own ``fmt``.
                found = self._attribute_in(module, *instance, attribute, key, depth)
                if found is not None:
                    return found
            found = self._attribute_in(module, module, qualname, attribute, key, depth)
            if found is not None:
                return found
            if key is None:
                found = self._property_message(module, qualname, attribute, depth)
                if found is not None:
                    return found
            # An abstract base that only its subclasses complete: one alternative each.
            texts: list[_Text] = []
            for sub_module, sub_name in self.subclasses(module, qualname):
                texts.extend(
                    self._attribute_in(module, sub_module, sub_name, attribute, key, depth) or []
                )
            unique = list(dict.fromkeys(texts))
            return unique[:8] or None
        entity = self.lookup(module, str(target.get("name", "")))
        if entity is None:
            return None
        kind, owner, name = entity
        info = self.modules[owner]
        if kind == "constant" and key is None:
            form = "constant-ref" if owner == module else "imported"
            return self._texts_deep(owner, info.get("constants")[name], form, depth)
        if kind == "table" and key is not None:
            table = info.get("tables")[name]
            if key in table:
                return self._texts_deep(owner, table[key], "table", depth)
            return None
        if kind == "attribute":
            qualname, _, attribute = name.rpartition(".")
            inherited = self.resolve_reference(
                owner, {"self": attribute, "class": qualname, "key": key}, depth + 1
            )
            if inherited and owner != module and key is None:
                inherited = [_Text(t.parts, t.i18n, t.defined_at, "imported") for t in inherited]
            return inherited
        return None

    def _property_message(
        self, module: str, qualname: str, attribute: str, depth: int
    ) -> list[_Text] | None:
        """The messages a property returns (jinja's ``self._undefined_message``)."""
        found = self.method(module, qualname, attribute)
        if found is None:
            return None
        owner, name = found
        function = self.modules[owner].get("functions")[name]
        if not function.get("property") or not function.get("message"):
            return None
        return self._texts_deep(owner, function["message"], "function", depth) or None

    def _attribute_in(
        self,
        module: str,
        owner_module: str,
        qualname: str,
        attribute: str,
        key: str | None,
        depth: int,
    ) -> list[_Text] | None:
        """A class constant or table entry, looked up through a class's MRO."""
        for owner, cls_name in self.mro(owner_module, qualname):
            cls = self._class(owner, cls_name)
            if key is None:
                templates = (cls.get("constants") or {}).get(attribute)
                if templates:
                    form = "constant-ref" if owner == module else "imported"
                    return self._texts_deep(owner, templates, form, depth)
            else:
                tables = cls.get("tables") or {}
                table = tables.get(attribute) or tables.get(f"default_{attribute}")
                if table and key in table:
                    return self._texts_deep(owner, table[key], "table", depth)
        return None

    def subclasses(self, module: str, qualname: str) -> list[tuple[str, str]]:
        """The classes of the source that have this class among their bases."""
        if self._subclasses is None:
            self._subclasses = {}
            for name, info in self.modules.items():
                for cls_name in info.get("classes"):
                    for base in self.mro(name, cls_name)[1:]:
                        self._subclasses.setdefault(base, []).append((name, cls_name))
        return self._subclasses.get((module, qualname), [])

    def _texts_deep(
        self, module: str, templates: Sequence[Mapping[str, Any]], form: str, depth: int
    ) -> list[_Text]:
        texts: list[_Text] = []
        for template in templates:
            location = self._location(module, int(template.get("line") or 0))
            for text in self.expand(module, _load_parts(template["parts"]), depth + 1):
                texts.append(
                    _Text(text.parts, bool(template.get("i18n")) or text.i18n, location, form)
                )
        return texts[:8]

    # -- calls -----------------------------------------------------------------------------

    def _arguments(
        self,
        module: str,
        call: Mapping[str, Any],
        params: Sequence[str],
        defaults: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> tuple[dict[str, tuple[TemplatePart, ...]], set[str]]:
        """Bind a call's arguments to parameters; return the values and the names passed."""
        values: dict[str, tuple[TemplatePart, ...]] = {}
        passed: set[str] = set()
        for name, argument in zip(params, call.get("args") or [], strict=False):
            values[name] = self.expand(module, _load_parts(argument))[0].parts
            passed.add(name)
        for name, argument in (call.get("keywords") or {}).items():
            values[name] = self.expand(module, _load_parts(argument))[0].parts
            passed.add(name)
        for name, templates in defaults.items():
            if name not in values and templates:
                values[name] = _load_parts(templates[0]["parts"])
        return values, passed

    def class_text(self, module: str, qualname: str) -> tuple[str, str, dict[str, Any]] | None:
        """The nearest class in the MRO that builds its own text: (module, qualname, class).

        A class attribute that names a message (``description = "…"``) is that text only
        when no base defines a ``__str__`` with text: Python prints the nearest ``__str__``,
        which reads the attribute if it wants it (werkzeug's ``NotFound`` prints
        ``f"{code} {self.name}: {self.description}"``, the ``__str__`` of ``HTTPException``).
        """
        key = (module, qualname)
        if key not in self._text:
            self._text[key] = None
            for owner, name in self.mro(module, qualname):
                cls = self._class(owner, name)
                if "text" not in cls:
                    continue
                if self._text[key] is None:
                    self._text[key] = (owner, name, cls)
                if cls["text"]["how"] != "attribute":
                    if cls["text"]["how"] == "str":
                        self._text[key] = (owner, name, cls)
                    break
        return self._text[key]

    def class_status(self, module: str, qualname: str) -> int | None:
        """The HTTP status a class declares (``status_code = 404``), through its bases."""
        for owner, name in self.mro(module, qualname):
            status = self._class(owner, name).get("status")
            if status is not None:
                return int(status)
        return None

    def class_call(
        self,
        module: str,
        qualname: str,
        call: Mapping[str, Any],
        given: bool,
        found: tuple[str, str, dict[str, Any]] | None = None,
    ) -> list[_Text] | None:
        """The message of ``raise Cls(...)`` when the class builds or defaults its text.

        The call's arguments are bound to the parameters of the nearest ``__init__`` in the
        class's MRO; ``self.attr`` holes of a ``__str__`` follow the ``self.attr = param``
        assignments of the ``__init__`` methods. A text whose holes need an argument that
        cannot be bound (a subclass's ``__init__(*args)`` in between) is not used.

        Args:
            module: The raised class's module.
            qualname: The raised class.
            call: The raise's call.
            given: The raise passes a message of its own.
            found: The text to bind instead of the class's (an ``__init__``'s, to know what
                it gives its base: see :meth:`_given_message`).
        """
        nested = found is not None
        found = found or self.class_text(module, qualname)
        if found is None:
            return None
        owner, owner_name, cls = found
        text = cls["text"]
        how = text["how"]
        mro = self.mro(module, qualname)
        init_owner: tuple[str, str] | None = None
        init: dict[str, Any] = {}
        attributes: dict[str, str] = {}
        strips: dict[str, list[Any]] = {}
        for item in mro:
            data = self._class(*item).get("init")
            if data is None:
                continue
            if init_owner is None:
                init_owner, init = item, data
            for attribute, param in (data.get("attributes") or {}).items():
                attributes.setdefault(attribute, param)
            for attribute, strip in (data.get("strips") or {}).items():
                strips.setdefault(attribute, strip)
        params: list[str] = list(init.get("params") or [])
        values, passed = self._arguments(module, call, params, init.get("defaults") or {})
        unmapped = len(call.get("args") or []) > len(params) or bool(call.get("star"))
        if how in ("default", "attribute"):
            param = text.get("param")
            if (param is not None and param in passed) or (param is None and given):
                return None
            if param is None and (call.get("args") or call.get("star")):
                return None
            return self._texts(owner, text["templates"], "class-default")
        names: dict[str, str] = {f"self.{a}": p for a, p in attributes.items()}
        saved = self._instance, self._given
        self._instance = (module, qualname)
        passed_message = None if nested else self._given_message(module, qualname, call)
        self._given = passed_message
        try:
            # urllib3's MaxRetryError → RequestError → PoolError: the base's text with what
            # each ``__init__`` gives the next, in the raised class's ``__init__`` parameters.
            composed = self._init_texts(*init_owner, 0) if how == "init" and init_owner else None
            texts = composed or self._texts(owner, text["templates"], "class-template")
        finally:
            self._instance, self._given = saved
        if composed or (how == "init" and init_owner == (owner, owner_name)):
            names.update({p: p for p in params})
        elif how == "init":
            unmapped = True
        for attribute, param in attributes.items():
            if param not in passed and f"self.{attribute}" in names:
                # ``if description is not None: self.description = description``: when the
                # raise passes none, the attribute is the raised class's own text.
                own = self._attribute_in(module, module, qualname, attribute, None, 0)
                if own is not None and len(own) == 1:
                    values[f"self.{attribute}"] = own[0].parts
                    del names[f"self.{attribute}"]
        for attribute, (method, chars) in strips.items():
            param = names.get(f"self.{attribute}")
            if param is not None and param in values:
                values[f"self.{attribute}"] = transform_parts(
                    values[param], functools.partial(_strip, method=method, chars=chars)
                )
                del names[f"self.{attribute}"]
        if passed_message is not None and passed_message[0] == 1:
            # ``if len(self.args) == 1: … else: return str(self.args)``: one argument given.
            one = [t for t in texts if not any(p.hole and p.text in _ARGS_TEXTS for p in t.parts)]
            texts = one or texts
        # ``message = message or default``: the bare parameter is what a caller passes, the
        # other alternatives what is used when it passes nothing.
        # A text that decorates the parameter (pymongo's ``f"{message}, full error:
        # {details}"``) is not such a default: it stays with the bare one.
        direct = [
            t for t in texts if len(t.parts) == 1 and t.parts[0].hole and t.parts[0].text in names
        ]
        carried = {t.parts[0].text for t in direct}
        decorated = [
            t
            for t in texts
            if t not in direct and any(p.hole and p.text in carried for p in t.parts)
        ]
        if direct and len(direct) + len(decorated) < len(texts):
            carrying = {names[t.parts[0].text] for t in direct} & passed
            if carrying - _nullable_params(call, params):
                texts = direct + decorated
            elif not carrying:
                texts = [t for t in texts if t not in direct]
            # else: what the raise passes may be None, and then the other text is the one
        bound: list[_Text] = []
        for t in texts:
            needed = [names[p.text] for p in t.parts if p.hole and p.text in names]
            if unmapped and any(name not in values for name in needed):
                return None
            bound.append(
                _Text(bind_holes(t.parts, values, names=names), t.i18n, t.defined_at, t.form)
            )
        return bound

    def _init_texts(self, module: str, qualname: str, depth: int) -> list[_Text] | None:
        """The text a class's ``__init__`` chain gives, in its own ``__init__`` parameters.

        Its own text (``super().__init__(f"…")``) when no base's ``__init__`` builds one;
        else the base's, bound to what this ``__init__`` gives it. None when there is no
        text, or what a base is given cannot be told (``*args``).
        """
        init = self._class(module, qualname).get("init")
        if init is None or depth > _MAX_PENDING_DEPTH:
            return None
        given = init.get("super")
        mro = self.mro(module, qualname)
        if given and not given.get("star") and len(mro) > 1:
            base = self._init_texts(*mro[1], depth + 1)
            base_init = self._class(*mro[1]).get("init") or {}
            if base:
                params = list(base_init.get("params") or [])
                values, _ = self._arguments(module, given, params, base_init.get("defaults") or {})
                names = {p: p for p in params}
                if all(
                    p.text in values for t in base for p in t.parts if p.hole and p.text in names
                ):
                    return [
                        _Text(
                            bind_holes(t.parts, values, names=names), t.i18n, t.defined_at, t.form
                        )
                        for t in base
                    ]
        builds = self._class(module, qualname).get("builds")
        return self._texts(module, builds, "class-template") if builds else None

    def _given_message(self, module: str, qualname: str, call: Mapping[str, Any]) -> _Given | None:
        """What a raise gives the exception: (how many arguments, the first, the others).

        None when what it gives cannot be told.

        Unknown when an ``__init__`` of the class or its bases builds a message of its own
        (``super().__init__(f"E{code}: {msg}")``: what the raise gives is not what reaches
        ``args``), or when the call passes ``*args``.
        """
        args = call.get("args") or []
        if call.get("star"):
            return None
        for item in self.mro(module, qualname):
            cls = self._class(*item)
            init = cls.get("init")
            if init is not None and not init.get("star") and not cls.get("builds"):
                # ``__init__(self, message, *, parameter=None): super().__init__(message)``
                # (vLLM's errors): what reaches ``args`` is what the raise gives those
                # parameters. Anything else handed on, the record cannot tell.
                return self._forwarded(module, init, call)
            if cls.get("builds"):
                # ``super().__init__("prefix: " + msg)``: that text is what ``args`` holds.
                text = {"how": "init", "templates": cls["builds"]}
                built = self.class_call(module, qualname, call, True, (*item, {"text": text}))
                if not built or len(built) != 1:
                    return None
                return 1, built[0].parts, ()
        given = [self.expand(module, _load_parts(argument))[0].parts for argument in args]
        return len(args), (given[0] if given else ()), tuple(given[1:])

    def _forwarded(
        self, module: str, init: Mapping[str, Any], call: Mapping[str, Any]
    ) -> _Given | None:
        """What reaches ``args`` when an ``__init__`` hands its own parameters up as they are."""
        handed = init.get("super")
        params = list(init.get("params") or [])
        if not handed or handed.get("star") or handed.get("keywords"):
            return None
        names: list[str] = []
        for argument in handed.get("args") or []:
            parts = _load_parts(argument)
            if len(parts) != 1 or not parts[0].hole or parts[0].text not in params:
                return None
            names.append(parts[0].text)
        values, _ = self._arguments(module, call, params, init.get("defaults") or {})
        if not names or any(name not in values for name in names):
            return None
        given = [values[name] for name in names]
        return len(given), given[0], tuple(given[1:])

    def _given_text(self, module: str, target: Mapping[str, Any], depth: int) -> list[_Text] | None:
        """Resolve a reference to the message the raised exception was given."""
        if self._given is None:
            return None
        if target.get("super"):
            # ``super().__str__()``: the next ``__str__`` up the classes, if the source has one.
            for owner, name in self.mro(module, str(target["super"]))[1:]:
                cls = self._class(owner, name)
                text = cls.get("text")
                if text and text["how"] == "str":
                    return self._texts_deep(owner, text["templates"], "class-template", depth)
                if cls.get("str"):
                    return None  # a __str__ whose text is not known (``return self.reason``)
        count, first, others = self._given
        if target.get("percent"):
            # ``self.args[0] % self.args[1:]``: formatted when there are arguments to format,
            # a hole for each, named after it (its text, when it is text).
            if not others:
                return [_Text(first)]
            names = ["".join(p.text for p in parts) for parts in others]
            texts = {
                n: parts
                for n, parts in zip(names, others, strict=True)
                if not any(p.hole for p in parts)
            }
            formatted = apply_percent_values(first, {"items": names})
            return [_Text(bind_holes(formatted, texts) if texts else formatted)]
        if count == 1 or (count > 1 and target.get("index")):
            return [_Text(first)]
        if count == 0 and not target.get("index"):
            return [_Text((TemplatePart(text=""),))]  # str(Exception()) is empty
        return None

    def method(self, module: str, qualname: str | None, name: str) -> tuple[str, str] | None:
        """Find ``self.name`` of a class through its bases."""
        if not qualname or module not in self.modules:
            return None
        for owner, cls_name in self.mro(module, qualname):
            if f"{cls_name}.{name}" in self.modules[owner].get("functions"):
                return (owner, f"{cls_name}.{name}")
        return None

    def function_of(self, module: str, call: Mapping[str, Any]) -> tuple[str, str, bool] | None:
        """The function a call names: (module, qualname, skip the first parameter)."""
        if call.get("self"):
            found = self.method(module, call.get("class"), str(call["self"]))
            return (*found, True) if found else None
        callee = call.get("callee")
        if not callee:
            return None
        if "." in str(callee) and str(callee) in self.modules[module].get("functions"):
            return (module, str(callee), False)  # a function defined in the one that calls it
        entity = self.lookup(module, callee)
        if entity is not None and entity[0] == "function":
            return (entity[1], entity[2], False)
        if entity is not None and entity[0] == "attribute":
            qualname, _, attribute = entity[2].rpartition(".")
            found = self.method(entity[1], qualname, attribute)
            return (*found, False) if found else None
        receiver = call.get("receiver")
        if entity is None and receiver:
            # A parameter's method (``ctx.fail(...)``), through the parameter's annotation.
            cls = self.lookup(module, str(receiver))
            if cls is not None and cls[0] == "class":
                found = self.method(cls[1], cls[2], str(callee).rpartition(".")[2])
                return (*found, True) if found else None
        return None

    def _called_function(
        self, module: str, call: Mapping[str, Any], wanted: str
    ) -> tuple[str, str, Mapping[str, Any], Any] | None:
        """The source function a call names, if it has ``wanted`` exports, and the bound values.

        Returns:
            ``(owner module, qualified name, the function's exports, the call's values)``.
        """
        found = self.function_of(module, call)
        if found is None:
            return None
        owner, qualname, skip = found
        function = self.modules[owner].get("functions")[qualname]
        if not function.get(wanted):
            return None
        params = list(function.get("params") or [])[_implicit(function, skip) :]
        values, _ = self._arguments(module, call, params, function.get("defaults") or {})
        return owner, qualname, function, values

    def function_message(
        self, module: str, call: Mapping[str, Any], depth: int
    ) -> list[_Text] | None:
        """The message a function of the source returns, bound to a call's arguments."""
        bound = self._called_function(module, call, "message")
        if bound is None:
            return None
        owner, qualname, function, values = bound
        templates = function["message"]
        return [
            _Text(bind_holes(t.parts, values), t.i18n, t.defined_at, "function")
            for t in self._texts_deep(owner, templates, "function", depth)
        ]

    def factory_call(
        self, module: str, call: Mapping[str, Any]
    ) -> list[tuple[str, _Text, str, Mapping[str, Any]]] | None:
        """What a factory ``raise make_error(...)`` returns: (class, text, factory, entry)."""
        bound = self._called_function(module, call, "returns")
        if bound is None:
            return None
        owner, qualname, function, values = bound
        returns = function["returns"]
        saved = self._call_values, self._caller
        self._call_values = values
        # ``self.make_error("invalid")``: the caller's class's own table entries first.
        self._caller = (
            (module, str(call["class"])) if call.get("self") and call.get("class") else None
        )
        try:
            return self._factory_results(owner, qualname, returns, values)
        finally:
            self._call_values, self._caller = saved

    def _factory_results(
        self,
        owner: str,
        qualname: str,
        returns: Sequence[Mapping[str, Any]],
        values: Mapping[str, Sequence[TemplatePart]],
        depth: int = 0,
    ) -> list[tuple[str, _Text, str, Mapping[str, Any]]] | None:
        results: list[tuple[str, _Text, str, Mapping[str, Any]]] = []
        for entry in returns:
            if "delegate" in entry:
                for made in self._delegated(owner, entry, values, depth):
                    if not any(r[0] == made[0] and r[1].parts == made[1].parts for r in results):
                        results.append(made)
                continue
            texts: list[_Text] | None = None
            inner = entry.get("call")
            if inner is not None:
                cls = self.find_class(owner, str(inner.get("callee") or ""))
                if cls is not None:
                    texts = self.class_call(*cls, inner, bool(entry.get("templates")))
            if not texts:
                texts = self._texts(owner, entry.get("templates") or [], "factory")
            for text in texts:
                parts = merge_parts(bind_holes(text.parts, values))
                if any(found[0] == entry["class"] and found[1].parts == parts for found in results):
                    continue  # ``msg`` and ``msg.format(**kwargs)`` of a text without fields
                results.append(
                    (
                        str(entry["class"]),
                        _Text(
                            parts, text.i18n, self._location(owner, int(entry["line"])), "factory"
                        ),
                        qualname,
                        entry,
                    )
                )
        delegates = depth or any("delegate" in entry for entry in returns)
        return results[: _MAX_RETURNS if delegates else 8] or None

    def _class_argument(self, module: str, call: Mapping[str, Any]) -> str | None:
        """The class a call passes to a function that returns an instance of its parameter.

        huggingface_hub's ``raise _format(GatedRepoError, message, response)``, where
        ``_format`` ends with ``return error_type(message, …)``.
        """
        bound = self._called_function(module, call, "class_param")
        if bound is None:
            return None
        _, _, function, values = bound
        given = values.get(str(function["class_param"]))
        if not given or len(given) != 1:
            return None
        name = given[0].text.rpartition(".")[2]
        return name if _is_class_like(name) else None

    def _returns_of(self, found: tuple[str, str, bool] | None) -> bool:
        """Whether a function :meth:`function_of` found returns exceptions."""
        if found is None:
            return False
        return bool((self.modules[found[0]].get("functions").get(found[1]) or {}).get("returns"))

    def _delegated(
        self,
        owner: str,
        entry: Mapping[str, Any],
        values: Mapping[str, Sequence[TemplatePart]],
        depth: int,
    ) -> list[tuple[str, _Text, str, Mapping[str, Any]]]:
        """What the function a factory delegates to returns, for each text of its message.

        A method of the base class that only raises ``NotImplementedError`` stands for the
        subclasses' own (the openai SDK's ``_make_status_error``).
        """
        if depth >= _MAX_PENDING_DEPTH:
            return []
        call = entry["delegate"]
        found = self.function_of(owner, call)
        candidates = [found] if found is not None else []
        if call.get("self") and call.get("class") and not self._returns_of(found):
            candidates = [
                (*method, True)
                for sub in self.subclasses(owner, str(call["class"]))
                if (method := self.method(*sub, str(call["self"]))) is not None
                and (found is None or method != found[:2])
            ]
        candidates = [c for c in candidates if self._returns_of(c)]
        results: list[tuple[str, _Text, str, Mapping[str, Any]]] = []
        at = entry["at"]
        for template in entry.get("templates") or []:
            message = _dump_parts(bind_holes(_load_parts(template["parts"]), values))
            if isinstance(at, int):
                args = list(call.get("args") or [])
                if at >= len(args):
                    continue
                args[at] = message
                bound_call = {**call, "args": args}
            else:
                bound_call = {**call, "keywords": {**(call.get("keywords") or {}), at: message}}
            for module, qualname, skip in candidates:
                function = self.modules[module].get("functions")[qualname]
                params = list(function.get("params") or [])[_implicit(function, skip) :]
                inner, _ = self._arguments(
                    owner, bound_call, params, function.get("defaults") or {}
                )
                made = self._factory_results(
                    module, qualname, function["returns"], inner, depth + 1
                )
                results.extend(made or [])
        return results

    # -- the sites -------------------------------------------------------------------------

    def complete(self, module: str, site: RaiseSite, pending: Mapping[str, Any]) -> list[RaiseSite]:
        """Finish one pending site: resolve its references, its class's text, its factory."""
        instance = pending.get("instance")
        if instance is not None:
            entity = self.lookup(module, str(instance))
            if entity is not None and entity[0] == "constant":
                made = (self.modules[entity[1]].get("instances") or {}).get(entity[2])
                if made is not None:
                    site = site.model_copy(update={"error_class": str(made)})
        call = pending.get("call")
        if call is not None:
            given = bool(pending.get("given"))
            if call.get("self") or (
                call.get("callee") and not _is_class_like(str(call["callee"]).rpartition(".")[2])
            ):
                made = self.factory_call(module, call)
                if made:
                    return [
                        site.model_copy(
                            update={
                                "error_class": error_class,
                                "template": MessageTemplate(parts=merge_parts(text.parts)),
                                "form": "factory",
                                "defined_at": text.defined_at,
                                "i18n": site.i18n or text.i18n,
                                "factory": factory,
                                "http_status": entry.get("status") or site.http_status,
                                "kind": SiteKind.HTTP if entry.get("status") else site.kind,
                                "error_code": site.error_code or entry.get("code"),
                            }
                        )
                        for error_class, text, factory, entry in made
                    ]
                passed_class = self._class_argument(module, call)
                if passed_class is not None:
                    site = site.model_copy(update={"error_class": passed_class})
            else:
                cls = self.find_class(module, str(call.get("callee") or ""))
                texts = self.class_call(*cls, call, given) if cls is not None else None
                if texts and site.kind is SiteKind.WARN:
                    # A category's text counts only with the message warned in it (not
                    # pydantic's ``{self.message}``, an attribute made of it).
                    args = call.get("args") or [[]]
                    shown = _literal_text(self.expand(module, _load_parts(args[0]))[0].parts)
                    texts = [t for t in texts if shown in _literal_text(t.parts)]
                status = self.class_status(*cls) if cls is not None else None
                if (
                    status is not None
                    and site.http_status is None
                    and site.kind is not SiteKind.WARN
                ):
                    site = site.model_copy(update={"http_status": status, "kind": SiteKind.HTTP})
                if texts:
                    return [
                        site.model_copy(
                            update={
                                "template": MessageTemplate(parts=merge_parts(t.parts)),
                                "form": t.form or site.form,
                                "defined_at": t.defined_at,
                                "i18n": site.i18n or t.i18n,
                            }
                        )
                        for t in texts
                    ]
        message = pending.get("message")
        if message:
            texts = self.expand(module, _load_parts(message))
            if any(t.form is not None for t in texts):
                whole = pending.get("form") == "reference"
                return [
                    site.model_copy(
                        update={
                            "template": MessageTemplate(parts=merge_parts(t.parts)),
                            "form": (t.form or site.form) if whole else site.form,
                            "defined_at": t.defined_at or site.defined_at,
                            "i18n": site.i18n or t.i18n,
                        }
                    )
                    for t in texts
                ]
        return [site]

    def outside_warning(self, module: str, candidate: Mapping[str, Any]) -> RaiseSite | None:
        """A call of a warning helper the source does not define: a warning site of its own.

        Lightning's ``rank_zero_warn(f"The '{name}' does not have many workers …",
        category=PossibleUserWarning)`` and ``warning_cache.warn(m)`` come from
        ``lightning_utilities``, another package: the message is this call's, the class its
        ``category`` (else ``UserWarning``, what ``warnings.warn`` gives by default).
        """
        call = candidate["call"]
        callee = str(call.get("callee") or "")
        if not _WARNING_HELPER.search(callee.rpartition(".")[2]) or not self.outside(
            module, callee
        ):
            return None
        category = _load_parts((call.get("keywords") or {}).get("category") or [])
        named = category[0].text if len(category) == 1 and category[0].hole else ""
        error_class = named.rpartition(".")[2]
        if not _is_class_like(error_class):
            error_class = ""
        site = RaiseSite.model_validate(candidate["site"])
        return site.model_copy(
            update={
                "kind": SiteKind.WARN,
                "error_class": error_class or "UserWarning",
                "severity": Severity.WARNING,
            }
        )

    def helper_call(
        self, module: str, candidate: Mapping[str, Any]
    ) -> tuple[RaiseSite, tuple[str, str]] | None:
        """A call that passes a message to a helper becomes a site of its own."""
        call = candidate["call"]
        found = self.function_of(module, call)
        if found is None and call.get("callee") and "." not in str(call["callee"]):
            named = self.function_names.get(str(call["callee"]), [])
            found = (*named[0], False) if len(named) == 1 else None
        if found is None:
            return None
        owner, qualname, skip = found
        function = self.modules[owner].get("functions")[qualname]
        target = self._helper_target(owner, qualname, 0)
        if target is None:
            return None
        inner, parameter, parts, error_class, last = target
        params = list(function.get("params") or [])
        params = params[_implicit(function, skip) :]
        values, passed = self._arguments(module, call, params, function.get("defaults") or {})
        if parameter not in passed or not literal_length(values[parameter]):
            return None
        helper = function.get("helper") or {}
        positional = helper.get("percent")
        if positional is not None:
            # ``log_response("Forbidden (%s): %s", reason, request.path, …)``: logging formats
            # the message with the arguments after the named ones.
            if call.get("star"):
                return None  # ``log_response("… %s", *names)``: its arguments are not known
            positional -= _implicit(function, skip)
            extra = list(call.get("args") or [])[positional:]
            for name in params[positional:]:
                if name not in (call.get("keywords") or {}):
                    values.pop(name, None)  # bound by position, wrongly: they are keywords
            if extra:
                items = ["".join(str(p[0]) for p in argument) for argument in extra]
                values[parameter] = apply_percent_values(values[parameter], {"items": items})
            if not any(not p.hole and _WORD.search(p.text) for p in values[parameter]):
                return None  # ``"%s: %s"``: no text of the caller's, the helper's record says all
        error_class = _passed_class(error_class, values, passed, function)
        status = inner.http_status
        status_param = helper.get("status")
        if status_param:
            status = (call.get("ints") or {}).get(status_param, status)
        site = RaiseSite.model_validate(candidate["site"])
        return (
            site.model_copy(
                update={
                    "kind": inner.kind,
                    "error_class": error_class,
                    "severity": inner.severity,
                    "http_status": status,
                    "error_code": inner.error_code,
                    "template": MessageTemplate(parts=merge_parts(bind_holes(parts, values))),
                    "form": "helper",
                    "defined_at": Location(path=inner.path, line=inner.line),
                    "factory": qualname,
                }
            ),
            last,
        )

    def _helper_target(
        self, owner: str, qualname: str, depth: int
    ) -> tuple[RaiseSite, str, tuple[TemplatePart, ...], str, tuple[str, str]] | None:
        """Where a helper's message ends up, through helpers it hands the message on to.

        Returns:
            ``(the site that raises or logs it, the helper's message parameter, that site's
            template in terms of the helper's parameters, the class, the last helper)``.
        """
        function = self.modules[owner].get("functions")[qualname]
        helper = function.get("helper")
        if helper:
            result = self._result_of(owner)
            index = helper["sites"][0]
            if result is None or index >= len(result.sites):
                return None
            inner = result.sites[index]
            parts = inner.template.parts
            return inner, str(helper.get("param")), parts, inner.error_class, (owner, qualname)
        forwards = function.get("forwards")
        if not forwards or depth >= _MAX_HELPER_DEPTH:
            return None
        for forward in forwards["calls"]:
            found = self.function_of(owner, forward)
            if found is None:
                continue
            next_owner, next_name, skip = found
            target = self._helper_target(next_owner, next_name, depth + 1)
            if target is None:
                continue
            inner, parameter, parts, error_class, last = target
            called = self.modules[next_owner].get("functions")[next_name]
            params = list(called.get("params") or [])[_implicit(called, skip) :]
            values, passed = self._arguments(owner, forward, params, called.get("defaults") or {})
            if parameter not in passed:
                continue
            error_class = _passed_class(error_class, values, passed, called)
            return inner, str(forwards["param"]), bind_holes(parts, values), error_class, last
        return None

    def shown_texts(self, site: RaiseSite) -> list[RaiseSite]:
        """A site, and one more per text its class shows a user (see :data:`_SHOWN_METHODS`).

        click prints ``Error: {e.format_message()}``: ``BadParameter`` shows ``Invalid
        value for {param_hint}: {self.message}``, the message the site raises inside it.
        A traceback shows ``str(e)``, the site's own text; both are records. A raise that
        gives no message (``MissingParameter(ctx=ctx, param=self)``, pytest's
        ``FixtureLookupError(argname, self)``) has the texts the class shows without one.
        """
        if site.kind not in (SiteKind.RAISE, SiteKind.HTTP):
            return [site]
        module = self.module_of.get(site.path)
        cls = self.find_class(module, site.error_class) if module is not None else None
        if cls is None:
            return [site]
        shown = None
        text = None
        for owner, name in self.mro(*cls):
            data = self._class(owner, name)
            text = text or data.get("text")
            shown = shown or data.get("shown")
        if not shown:
            return [site]
        # A raise that gives no message, of a class that passes none up: the class shows its
        # text without one (click's ``MissingParameter(param=p)``: "Missing argument 'SRC'.").
        # Its ``str(e)`` is then its ``__str__``'s own text, or there is none.
        empty = not _own_message(site) and (
            text is None
            or (
                text.get("how") == "str"
                and site.template.parts in (_load_parts(t["parts"]) for t in text["templates"])
            )
        )
        found = [site]
        for template in shown:
            parts = _load_parts(template["parts"])
            holes = {p.text for p in parts if p.hole and _carries_message(p.text)}
            if empty:
                bound = bind_holes(parts, dict.fromkeys(holes, (TemplatePart(text=""),)))
            elif len(holes) == 1:
                bound = bind_holes(parts, {holes.pop(): site.template.parts})
            else:
                continue  # the message is not in it, or more than once
            if not literal_length(bound):
                continue
            found.append(
                site.model_copy(
                    update={
                        "template": MessageTemplate(parts=merge_parts(bound)),
                        "form": "class-template",
                    }
                )
            )
        return found

    def _result_of(self, module: str) -> FileResult | None:
        return self.by_path.get(self.modules[module].path)

    def run(self) -> list[RaiseSite]:
        return self.finish(self.linked())

    def linked(self) -> list[RaiseSite]:
        """Every site of the source, linked but not finished (see :meth:`finish`)."""
        extra: dict[str, list[RaiseSite]] = {}
        used: set[tuple[str, str]] = set()
        for result in self.results:
            module = self.module_of[result.path]
            for candidate in _exports(result).get("calls") or []:
                made = self.helper_call(module, candidate)
                if made is not None:
                    extra.setdefault(result.path, []).append(made[0])
                    used.add(made[1])
                else:
                    warned = self.outside_warning(module, candidate)
                    if warned is not None:
                        extra.setdefault(result.path, []).append(warned)
        helper_sites: dict[str, set[int]] = {}
        for owner, qualname in used:
            function = self.modules[owner].get("functions")[qualname]
            helper_sites.setdefault(self.modules[owner].path, set()).update(
                function["helper"]["sites"]
            )
        sites: list[RaiseSite] = []
        for result in self.results:
            module = self.module_of[result.path]
            pending = {int(p["site"]): p for p in _exports(result).get("pending") or []}
            marked = helper_sites.get(result.path, set())
            ordered: list[tuple[int, int, RaiseSite]] = []
            for index, site in enumerate(result.sites):
                done = self.complete(module, site, pending[index]) if index in pending else [site]
                for item in done:
                    if index in marked and item.template.is_opaque:
                        item = item.model_copy(update={"form": "helper"})
                    ordered.append((item.line, len(ordered), item))
            for item in extra.get(result.path, []):
                ordered.append((item.line, len(ordered), item))
            ordered.sort(key=lambda entry: (entry[0], entry[1]))
            sites.extend(item for _, _, item in ordered)
        raised = {name for site in sites for name in (site.error_class, self._real_class(site))}
        # ``raise error_class(parsed_response, operation_name)`` (botocore): a class bound at
        # run time is called, which may be a base whose subclasses are raised by name too.
        bound = {
            site.arguments
            for site in sites
            if site.kind is SiteKind.RAISE
            and site.arguments
            and site.form != "passthrough"
            and not _is_class_like(site.error_class.rpartition(".")[2])
        }
        sites.extend(self.class_texts(raised, bound))
        if any(
            cls.get("shown")
            for info in self.modules.values()
            for cls in info.get("classes").values()
        ):
            # Only a source with a class that has a text of its own to show (click, pytest).
            sites = [shown for site in sites for shown in self.shown_texts(site)]
        if self._substitutes_dollars():
            sites = [_dollar_holes(site) for site in sites]
        self._callers = self.callers(sites)
        return sites

    def finish(self, sites: Sequence[RaiseSite]) -> list[RaiseSite]:
        """Finish sites :meth:`linked` gave: their facts, then their class's own name.

        Each site on its own, with what :meth:`linked` found of the whole source: a run's
        forked processes finish the sites they build records of.
        """
        # Facts first, while the class's name is the one the file resolves.
        return [self.unaliased(self.complete_facts(site)) for site in sites]

    def _substitutes_dollars(self) -> bool:
        """Whether the source fills ``$NAME`` fields with ``string.Template`` anywhere.

        omegaconf raises ``ValidationError("Value '$VALUE' of type '$VALUE_TYPE' could not be
        converted to Integer")`` and fills the fields where it formats every error.
        """
        return any(
            _CALLS_SUBSTITUTE.search(str(info.get("called") or ""))
            and any(
                origin in ("string", "string.Template") for origin in info.get("imports").values()
            )
            for info in self.modules.values()
        )

    def _takes(self, module: str, qualname: str, counts: Collection[int | None]) -> bool:
        """Whether a class's ``__init__`` takes one of these counts of arguments."""
        init = self._class(module, qualname).get("init")
        if not counts or init is None:
            return False
        params = list(init.get("params") or [])
        required = len([p for p in params if p not in (init.get("defaults") or {})])
        return any(count is not None and required <= count <= len(params) for count in counts)

    def class_texts(self, raised: set[str], bound: Collection[int | None] = ()) -> list[RaiseSite]:
        """A record for each text an exception class builds itself, when no site names it.

        botocore raises ``error_class(parsed_response, operation_name)``, a class made at run
        time from ``ClientError``, whose ``__init__`` builds "An error occurred ({error_code})
        when calling the {operation_name} operation…": no raise site carries that text.

        Args:
            raised: The classes the sites raise by name.
            bound: How many arguments the calls of classes bound at run time pass: a base
                whose ``__init__`` takes as many may be such a class, even when subclasses
                of it are raised by name (botocore's ``EventStreamError``).
        """
        found: list[RaiseSite] = []
        for result in self.results:
            module = self.module_of[result.path]
            for qualname, cls in (self.modules[module].get("classes") or {}).items():
                name = qualname.rpartition(".")[2]
                text = cls.get("text")
                source = cls.get("source")
                if (
                    name in raised
                    or not text
                    or text["how"] not in ("init", "str")
                    or not source
                    or not _EXCEPTION_ROOTS & set(self.ancestors(module, qualname))
                    # a private base of public classes (jsonschema's ``_Error``); other
                    # private classes are raised elsewhere (numpy's ``_ArrayMemoryError`` and
                    # ``_UFuncNoLoopError``, from C)
                    or (
                        name.startswith("_")
                        and any(
                            not sub.rpartition(".")[2].startswith("_")
                            for _, sub in self.subclasses(module, qualname)
                        )
                    )
                    # a base whose subclasses are raised: its text is in their records, unless
                    # a class bound at run time may be the base itself
                    or (
                        not self._takes(module, qualname, bound)
                        and any(
                            sub.rpartition(".")[2] in raised
                            for _, sub in self.subclasses(module, qualname)
                        )
                    )
                ):
                    continue
                texts = self.class_call(module, qualname, {"args": [], "keywords": {}}, False)
                for item in (texts or [])[:_MAX_CLASS_TEXTS]:
                    parts = merge_parts(item.parts)
                    if literal_length(parts) < _MIN_CLASS_TEXT or any(
                        p.hole and _carries_message(p.text) for p in parts
                    ):
                        # ``{self.message}\n\nFailed validating …``: a frame around every
                        # message of the source, not a message of its own.
                        continue
                    line = item.defined_at.line if item.defined_at else int(cls["line"])
                    method = "__init__" if text["how"] == "init" else "__str__"
                    found.append(
                        RaiseSite(
                            path=result.path,
                            kind=SiteKind.OBJECT,
                            error_class=name,
                            template=MessageTemplate(parts=parts),
                            form="class-template",
                            line=line,
                            end_line=line,
                            message_line=line,
                            message_end_line=line,
                            function=f"{qualname}.{method}",
                            severity=(
                                Severity.WARNING if name.endswith("Warning") else Severity.ERROR
                            ),
                            defined_at=item.defined_at,
                            i18n=item.i18n,
                            source_code=str(source[2]),
                            source_code_start=int(source[0]),
                            source_code_end=int(source[1]),
                        )
                    )
        return found

    def unaliased(self, site: RaiseSite) -> RaiseSite:
        """Give a site the class's own name when the code raises it by an import alias.

        ``from .exceptions import JSONDecodeError as RequestsJSONDecodeError`` then ``raise
        RequestsJSONDecodeError(...)``: a traceback prints ``JSONDecodeError``. Only a class
        the site's own file names: a helper's or factory's class is named in their module.
        """
        real = self._real_class(site)
        return site if real == site.error_class else site.model_copy(update={"error_class": real})

    def _real_class(self, site: RaiseSite) -> str:
        """The class a site raises, by its own name (see :meth:`unaliased`)."""
        if site.form in ("helper", "factory"):
            return site.error_class
        imports = self.modules[self.module_of[site.path]].exports.get("imports")
        target = imports.get(site.error_class) if isinstance(imports, dict) else None
        if not isinstance(target, str):
            return site.error_class
        real = target.rpartition(".")[2]
        return real if real[:1].isupper() else site.error_class

    # -- code facts (#5) -------------------------------------------------------------------

    def ancestors(self, module: str, name: str) -> list[str]:
        """A class's ancestors as far as the source and the builtins show, nearest first."""
        key = (module, name)
        found = self._ancestors.get(key)
        if found is not None:
            return found
        result: list[str] = []
        cls = self.find_class(module, name)
        if cls is None:
            result = list(_BUILTIN_ANCESTORS.get(name.rpartition(".")[2], ()))
        else:
            self._visit_bases(cls, {cls}, result)
            result = _linear(result)
        self._ancestors[key] = result
        return result

    def hierarchy(self) -> list[tuple[str, str, list[str]]]:
        """Every exception class the source defines: its name, module and ancestors.

        The ancestors nearest first, as :meth:`ancestors` gives them; a class counts when its
        name or an ancestor's reads as an exception's (``…Error``, a builtin exception).
        """
        found: list[tuple[str, str, list[str]]] = []
        known: dict[tuple[str, str], bool] = {}
        for module, info in self.modules.items():
            for qualname in info.get("classes"):
                if self._exceptional((module, qualname), known):
                    name = qualname.rpartition(".")[2]
                    found.append((name, module, self.ancestors(module, qualname)))
        return found

    def _exceptional(self, cls: tuple[str, str], known: dict[tuple[str, str], bool]) -> bool:
        """Whether a class or one of its ancestors reads as an exception (see hierarchy).

        Asked of every class of the source (transformers has 10,000, few of them
        exceptions): each class is decided once, without building its ancestors' list.
        """
        found = known.get(cls)
        if found is not None:
            return found
        known[cls] = False  # a cycle of bases decides nothing
        owner, qualname = cls
        found = _looks_like_exception(qualname.rpartition(".")[2])
        cls_info = self.modules[owner].get("classes").get(qualname) or {}
        for base in [] if found else cls_info.get("bases") or []:
            parent = self.find_class(owner, base)
            if (
                self._exceptional(parent, known)
                if parent is not None
                else _looks_like_exception(base.rpartition(".")[2])
            ):
                found = True
                break
        known[cls] = found
        return found

    def _visit_bases(
        self, cls: tuple[str, str], seen: set[tuple[str, str]], result: list[str]
    ) -> None:
        """Append a class's ancestors to ``result``, depth first (see :meth:`ancestors`).

        A method rather than a nested recursive function: such a function refers to itself
        through its closure, and the cycle would keep the linker (every result) alive until
        the cyclic collector runs (#3).
        """
        owner, qualname = cls
        for base in self._class(owner, qualname).get("bases") or []:
            if base == "object":
                continue
            parent = self.find_class(owner, base)
            if parent is not None:
                if parent not in seen:
                    seen.add(parent)
                    result.append(parent[1].rpartition(".")[2])
                    self._visit_bases(parent, seen, result)
                continue
            short = base.rpartition(".")[2]
            builtin = _BUILTIN_ANCESTORS.get(short)
            result.extend([base if builtin is None else short, *(builtin or ())])

    def callers(self, sites: Sequence[RaiseSite]) -> dict[str, list[Location]]:
        """Where the functions the sites are in are called from, by name.

        From every file's ``called``; a constructor is called by its class's name.
        """
        wanted: dict[str, list[Location]] = {}
        for site in sites:
            name = _caller_name(site.facts)
            if name is not None:
                wanted[name] = []
        if wanted:
            for result in self.results:
                called = result.exports.get("called")
                if not isinstance(called, str):
                    continue
                for entry in called.split("\n"):
                    name, _, lines = entry.partition(" ")
                    found = wanted.get(name)
                    if found is None or len(found) >= _MAX_CALLERS:
                        continue
                    for line in lines.split()[: _MAX_CALLERS - len(found)]:
                        found.append(Location(path=result.path, line=int(line)))
        return wanted

    def complete_facts(self, site: RaiseSite) -> RaiseSite:
        """Add what only the whole source shows to a site's facts.

        The callers of its function (:meth:`callers`) and the exception bases the file alone
        could not show (classes of other files, factories' and helpers' classes).
        """
        facts = site.facts
        if facts is None:
            return site
        update: dict[str, Any] = {}
        name = _caller_name(facts)
        found = self._callers.get(name) if name is not None else None
        if found:
            update["callers"] = list(found)
        bases = facts.exception_bases
        if site.kind is not SiteKind.LOG and (
            site.form in ("factory", "helper") or not bases or bases[-1] != "BaseException"
        ):
            linked = self.ancestors(self.module_of[site.path], site.error_class)
            if linked != bases and (linked or site.form in ("factory", "helper")):
                update["exception_bases"] = linked
        if update:
            site = site.model_copy(update={"facts": facts.model_copy(update=update)})
        return site


OLD_GRAMMAR: Final[tuple[int, int]] = (3, 6)
"""The grammar a file is parsed with again when this Python's refuses it: code written before
Python 3.7 may use ``async`` and ``await`` as names (celery 4.1's ``from kombu.async import
…``), which that grammar still accepts."""


def _parse_module(text: str, path: str) -> ast.Module:
    """Parse a file with this Python's grammar, else with :data:`OLD_GRAMMAR`.

    Raises:
        SyntaxError: Neither grammar reads it (the error of this Python's grammar).
    """
    with warnings.catch_warnings():
        # Old code is full of invalid escapes ("\d" in a plain string): the parser warns
        # about each, which is the mined project's business, not the user's.
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, filename=path)
        except SyntaxError as exc:
            try:
                return ast.parse(text, filename=path, feature_version=OLD_GRAMMAR)
            except SyntaxError:
                raise exc from None


class PythonExtractor:
    """Finds the error sites of Python files.

    Args:
        window: Lines of source kept on each side of a site.
    """

    language = "python"
    suffixes: tuple[str, ...] = (".py",)
    version = code_version("5", __name__)

    def __init__(self, *, window: int = 18) -> None:
        self.window = window

    def extract(self, file: SourceFile) -> FileResult:
        """Extract the sites of one file.

        Args:
            file: The file, with its bytes.

        Returns:
            The file's sites, in source order, and its exports (see the module docstring).

        Raises:
            ExtractionError: The file cannot be decoded or parsed.
        """
        data = file.data or b""
        text = decode_source(file)
        try:
            module = _parse_module(text, file.path)
        except SyntaxError as exc:
            raise ExtractionError(
                f"syntax error: {exc.msg}",
                path=file.path,
                kind=ProblemKind.SYNTAX.value,
                line=exc.lineno or 0,
            ) from exc
        except (ValueError, RecursionError, MemoryError) as exc:
            raise ExtractionError(
                f"cannot parse: {type(exc).__name__}: {exc}",
                path=file.path,
                kind=ProblemKind.SYNTAX.value,
            ) from exc
        extractor = _ModuleExtractor(file.path, split_lines(text), self.window)
        try:
            sites = extractor.run(module)
            exports = extractor.exports()
        except RecursionError as exc:
            raise ExtractionError(
                "the module is nested too deeply to analyse",
                path=file.path,
                kind=ProblemKind.INTERNAL.value,
            ) from exc
        finally:
            extractor.release()
        return FileResult(
            path=file.path, digest=blob_digest(data), sites=tuple(sites), exports=exports
        )

    def link(self, results: Sequence[FileResult]) -> list[RaiseSite]:
        """Resolve what crosses files and return every site of a source, in file order.

        Imported and inherited constants, message tables, exception classes that build their
        own text, factories and message helpers are resolved here, from the exports.

        Args:
            results: Every file result of one source.

        Returns:
            The sites, completed; helper calls add sites of their own.
        """
        return _Linker(results).run()

    def link_deferred(self, results: Sequence[FileResult]) -> tuple[list[RaiseSite], Finish]:
        """Link, and leave each site's last step to the caller (see :class:`DeferredLink`).

        Returns:
            The sites as :meth:`link` returns them but unfinished, and what finishes any run
            of them: ``finish(sites)`` of all of them is what :meth:`link` gives.
        """
        linker = _Linker(results)
        return linker.linked(), linker.finish

    def hierarchy(self, results: Sequence[FileResult]) -> list[tuple[str, str, list[str]]]:
        """The exception classes a source defines: ``(name, module, ancestors)`` each.

        Explain reads a pasted class that derives from a record's (SQLAlchemy's
        ``OperationalError``, raised as ``cls(…)`` of ``DBAPIError.instance``) from it, and
        one the source does not define as made at run time (botocore's ``errorfactory``).
        """
        return _Linker(results).hierarchy()
