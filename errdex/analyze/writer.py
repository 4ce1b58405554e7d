"""The offline writer: a record's prose and code fields, built from the facts of its site.

Deterministic and without network: every sentence and snippet comes from the record's
:class:`~errdex.models.CodeFacts` (the function, its signature, the guards on the way to the
site, the values it accepts, the class hierarchy, the ``except`` block it sits in, its callers)
and from the record itself (class, template and holes, kind, category, root cause, handling
strategy, HTTP status, error code). Where the facts are thin it says less: no accepted values
without facts that show them, no ``validationCode``/``typeGuard`` without a condition on the
subject, no ``pip install`` line unless the message gives one.

What the facts say, in shapes:

* **values** — the subject is compared with literals before a fall-through site, tested
  against a literal set, or matched by cases (enum-like);
* **rejected values** — the site runs when the subject *is* one of some literals;
* **types** — ``isinstance`` checks (accepted or rejected types);
* **missing** — an ``is None`` check (a missing argument);
* **range** — comparisons with numbers;
* **empty** — a truthiness check (``if not items``);
* **container** — membership in a named container (``if mode not in MODES``);
* **key** — a mapping lookup (``registry[name]``);
* **condition** — any other condition, quoted as written;
* **unguarded** — no condition leads to the site: the message and class say what it means.

Across shapes: ``except`` blocks (the caught class is named), imports (the module from the
message; an install hint), log and warn sites (*logs*/*warns*, never *raises*), HTTP sites
(the status). Every code field is checked with :func:`ast.parse` before it is returned.
"""

from __future__ import annotations

import ast
import builtins
import collections.abc
import numbers
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from http import HTTPStatus

from errdex.analyze.records import template_from_message
from errdex.analyze.verify import (
    Signature,
    Value,
    accepted_values,
    class_name_of,
    function_name,
    lookup_container,
    negate,
    parse_bounded,
    parse_expression,
    reach_condition,
    short_name,
    signature_of,
    subject_of,
    value_of,
    verify,
)
from errdex.models import (
    CodeFacts,
    ErrorRecord,
    ErrorType,
    Guard,
    HandlingStrategy,
    Narrative,
    RecordEnvelope,
    SiteKind,
)

WRITER_NAME = "offline"
"""The ``writer`` value of records this module writes."""


class Shape(str, Enum):
    """What the guards of a site say about its subject."""

    VALUES = "values"
    REJECTED_VALUES = "rejected-values"
    TYPES = "types"
    MISSING = "missing"
    RANGE = "range"
    EMPTY = "empty"
    CONTAINER = "container"
    KEY = "key"
    CONDITION = "condition"
    UNGUARDED = "unguarded"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Analysis:
    """A site's facts, read for writing.

    Attributes:
        shape: What the guards say about the subject.
        subject: The name the error is about, as the code writes it.
        accepted: The values the code accepts for the subject.
        rejected: The values that lead to the site (``rejected-values``).
        types: The type names of an ``isinstance`` check.
        types_accepted: Whether ``types`` are the accepted ones (else the rejected ones).
        container: The container or mapping the subject is looked up in.
        conditions: The conditions under which the site runs, as source text.
        fall_through: How many branches the site falls through (enum-like dispatch).
        reject: A condition on the subject alone that holds whenever the site runs; a caller
            that checks it never reaches the site.
    """

    shape: Shape
    subject: str | None = None
    accepted: tuple[Value, ...] = ()
    rejected: tuple[Value, ...] = ()
    types: tuple[str, ...] = ()
    types_accepted: bool = True
    container: str | None = None
    conditions: tuple[str, ...] = ()
    fall_through: int = 0
    reject: ast.expr | None = None

    @property
    def literal_values(self) -> bool:
        """Whether the accepted values are known and all literals."""
        return bool(self.accepted) and all(value.literal for value in self.accepted)


class _Matcher:
    def __init__(self, subject: str) -> None:
        node = parse_expression(subject)
        self.dump = ast.dump(node) if node is not None else None
        # Dumping every node visited is the writer's hot spot: only nodes of the subject's own
        # type can be equal to it.
        self.kind = type(node) if node is not None and not isinstance(node, ast.Name) else None
        self.name = short_name(subject)

    def __call__(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == self.name
        return type(node) is self.kind and ast.dump(node) == self.dump


_BUILTIN_NAMES = frozenset(dir(builtins))
_CONSTANT_NAME = re.compile(r"^_?[A-Z][A-Z0-9_]*$")


def _free_names(node: ast.AST, is_subject: _Matcher, found: set[str]) -> bool:
    """Collect the names a condition uses besides the subject; return whether it uses it."""
    if is_subject(node):
        return True
    uses = False
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass")
        and len(node.args) == 2
    ):
        return _free_names(node.args[0], is_subject, found)  # type names are fine
    if isinstance(node, ast.Name):
        found.add(node.id)
        return False
    for child in ast.iter_child_nodes(node):
        uses = _free_names(child, is_subject, found) or uses
    return uses


def _about_subject(node: ast.expr, is_subject: _Matcher) -> bool:
    """Whether a condition tests the subject and nothing but builtins and constants."""
    names: set[str] = set()
    uses = _free_names(node, is_subject, names)
    return uses and all(
        name in _BUILTIN_NAMES or _CONSTANT_NAME.match(name) is not None for name in names
    )


def _conjoin(parts: list[ast.expr]) -> ast.expr | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return ast.BoolOp(op=ast.And(), values=parts)


def _membership(subject: str, values: Iterable[Value], negated: bool) -> ast.expr | None:
    items = [value.code for value in values]
    operator = "not in" if negated else "in"
    trailing = "," if len(items) == 1 else ""
    return parse_expression(f"{subject} {operator} ({', '.join(items)}{trailing})")


def _isinstance_parts(node: ast.expr, is_subject: _Matcher) -> tuple[list[str], bool] | None:
    """``isinstance(x, T)`` → (types, True); ``not isinstance(x, T)`` → (types, False)."""
    positive = True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node, positive = node.operand, False
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "isinstance"
        and len(node.args) == 2
        and is_subject(node.args[0])
    ):
        return None
    spec = node.args[1]
    if isinstance(spec, ast.Tuple):
        types = [ast.unparse(element) for element in spec.elts]
    elif isinstance(spec, ast.BinOp):  # int | float
        types = [part.strip() for part in ast.unparse(spec).split("|")]
    else:
        types = [ast.unparse(spec)]
    return types, positive


def _is_none_test(node: ast.expr, is_subject: _Matcher) -> bool:
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.Is, ast.Eq))
        and is_subject(node.left)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def _is_range(node: ast.expr, is_subject: _Matcher) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _is_range(node.operand, is_subject)
    if isinstance(node, ast.BoolOp):
        return all(_is_range(value, is_subject) for value in node.values)
    if not isinstance(node, ast.Compare):
        return False
    operands = [node.left, *node.comparators]
    ordering = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
    return (
        all(isinstance(op, ordering) for op in node.ops)
        and any(_is_number(operand) for operand in operands)
        and any(_measures(operand, is_subject) for operand in operands)
    )


def _measures(node: ast.expr, is_subject: _Matcher) -> bool:
    """The subject, or ``len(subject)``."""
    if is_subject(node):
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "len"
        and len(node.args) == 1
        and is_subject(node.args[0])
    )


def _is_empty_test(node: ast.expr, is_subject: _Matcher) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return is_subject(node.operand)
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.Eq)
        and _measures(node.left, is_subject)
        and not is_subject(node.left)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value == 0
    )


def _container_of(node: ast.expr, is_subject: _Matcher) -> tuple[str, bool] | None:
    """``x not in C`` → (C, True: x must be in C); ``x in C`` → (C, False)."""
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], (ast.In, ast.NotIn))
        and is_subject(node.left)
    ):
        return ast.unparse(node.comparators[0]), isinstance(node.ops[0], ast.NotIn)
    return None


def analyse(facts: CodeFacts | None) -> Analysis:
    """Read a site's facts for writing: its shape, subject, values and reject condition.

    Args:
        facts: The site's facts (None when the record has none).

    Returns:
        The analysis; ``unknown`` without facts, ``unguarded`` without guards.
    """
    if facts is None:
        return Analysis(Shape.UNKNOWN)
    subject = subject_of(facts)
    accepted = tuple(accepted_values(facts))
    reaches = [(guard, reach_condition(guard)) for guard in facts.guards]
    conditions = tuple(
        ast.unparse(node) if node is not None else guard.text for guard, node in reaches
    )
    fall_through = sum(
        1 for guard in facts.guards if not guard.leads_to_site and guard.subject in (None, subject)
    )
    if subject is None or parse_expression(subject) is None:
        shape = Shape.CONDITION if facts.guards else Shape.UNGUARDED
        return Analysis(shape, subject=None, conditions=conditions)
    is_subject = _Matcher(subject)
    own = [
        (guard, node)
        for guard, node in reaches
        if guard.subject == subject or (node is not None and _free_names(node, is_subject, set()))
    ]
    reject = _conjoin(
        [node for _, node in own if node is not None and _about_subject(node, is_subject)]
    )
    base = Analysis(
        Shape.CONDITION,
        subject=subject,
        conditions=conditions,
        fall_through=fall_through,
        reject=reject,
    )
    if accepted:
        membership = _membership(subject, accepted, negated=True)
        return _replace(base, shape=Shape.VALUES, accepted=accepted, reject=membership)
    if not facts.guards:
        return _replace(base, shape=Shape.UNGUARDED, reject=None)
    return _shape_from_guards(base, own, is_subject)


def _replace(analysis: Analysis, **changes: object) -> Analysis:
    fields = {name: getattr(analysis, name) for name in Analysis.__dataclass_fields__}
    fields.update(changes)
    return Analysis(**fields)


def _shape_from_guards(
    base: Analysis, own: list[tuple[Guard, ast.expr | None]], is_subject: _Matcher
) -> Analysis:
    for guard, node in own:
        if node is None:
            if guard.kind == "isinstance" and guard.values:
                negated = guard.text.lstrip().startswith("not")
                return _replace(
                    base,
                    shape=Shape.TYPES,
                    types=tuple(guard.values),
                    types_accepted=negated == guard.leads_to_site,
                    reject=None,
                )
            continue
        parts = _isinstance_parts(node, is_subject)
        if parts is not None:
            types, positive = parts
            return _replace(
                base, shape=Shape.TYPES, types=tuple(types), types_accepted=not positive
            )
        if _is_none_test(node, is_subject):
            return _replace(base, shape=Shape.MISSING)
        container = _container_of(node, is_subject)
        if container is not None and guard.kind != "dict-lookup":
            name, must_be_in = container
            literals = [
                value
                for value in (parse_expression(name),)
                if isinstance(value, (ast.Tuple, ast.List, ast.Set))
            ]
            if literals and not must_be_in:
                listed = [value_of(ast.unparse(element)) for element in literals[0].elts]
                rejected = tuple(value for value in listed if value is not None and value.literal)
                return _replace(base, shape=Shape.REJECTED_VALUES, rejected=rejected)
            if must_be_in:
                return _replace(base, shape=Shape.CONTAINER, container=name)
        if guard.kind == "dict-lookup":
            return _replace(base, shape=Shape.KEY, container=lookup_container(guard))
        if _is_range(node, is_subject):
            return _replace(base, shape=Shape.RANGE)
        if _is_empty_test(node, is_subject):
            return _replace(base, shape=Shape.EMPTY)
    for guard, _ in own:
        if guard.kind == "dict-lookup":
            return _replace(base, shape=Shape.KEY, container=lookup_container(guard))
    return base


# ---------------------------------------------------------------------------------------------
# Example values: a mini evaluator over conditions on the subject alone (never exec)
# ---------------------------------------------------------------------------------------------


class _Unknown(Exception):
    """The condition cannot be evaluated without running code."""


_ABSTRACT: dict[str, type] = {
    **{name: getattr(collections.abc, name) for name in collections.abc.__all__},
    **{
        name: getattr(numbers, name)
        for name in ("Number", "Complex", "Real", "Rational", "Integral")
    },
    "List": list,
    "Dict": dict,
    "Tuple": tuple,
    "Set": set,
    "FrozenSet": frozenset,
}


def _resolve_type(text: str) -> type | None:
    name = text.strip().rsplit(".", 1)[-1]
    found = getattr(builtins, name, None) if "." not in text.strip() else None
    if isinstance(found, type):
        return found
    return _ABSTRACT.get(name)


def _evaluate(node: ast.AST, is_subject: _Matcher, value: object) -> object:
    if is_subject(node):
        return value
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_evaluate(element, is_subject, value) for element in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, is_subject, value)
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.USub) and isinstance(operand, (int, float)):
            return -operand
        if isinstance(node.op, ast.UAdd) and isinstance(operand, (int, float)):
            return operand
        raise _Unknown
    if isinstance(node, ast.BoolOp):
        result: object = isinstance(node.op, ast.And)
        for part in node.values:
            result = _evaluate(part, is_subject, value)
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result
    if isinstance(node, ast.Compare):
        return _compare(node, is_subject, value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        return _evaluate_call(node, is_subject, value)
    raise _Unknown


_COMPARISONS: dict[type[ast.cmpop], Callable[[object, object], object]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,  # type: ignore[operator]
    ast.LtE: lambda a, b: a <= b,  # type: ignore[operator]
    ast.Gt: lambda a, b: a > b,  # type: ignore[operator]
    ast.GtE: lambda a, b: a >= b,  # type: ignore[operator]
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,  # type: ignore[operator]
    ast.NotIn: lambda a, b: a not in b,  # type: ignore[operator]
}


def _compare(node: ast.Compare, is_subject: _Matcher, value: object) -> object:
    left = _evaluate(node.left, is_subject, value)
    for op, comparator in zip(node.ops, node.comparators, strict=True):
        right = _evaluate(comparator, is_subject, value)
        try:
            if not _COMPARISONS[type(op)](left, right):
                return False
        except Exception as error:  # noqa: BLE001 - ``256 in b"…"``: ValueError; any is unknown
            raise _Unknown from error
        left = right
    return True


def _evaluate_call(node: ast.Call, is_subject: _Matcher, value: object) -> object:
    name = node.func.id if isinstance(node.func, ast.Name) else ""
    if name == "len" and len(node.args) == 1:
        target = _evaluate(node.args[0], is_subject, value)
        if isinstance(target, collections.abc.Sized):
            return len(target)
        raise _Unknown
    if name == "isinstance" and len(node.args) == 2:
        target = _evaluate(node.args[0], is_subject, value)
        spec = node.args[1]
        names = (
            [ast.unparse(e) for e in spec.elts]
            if isinstance(spec, ast.Tuple)
            else ast.unparse(spec).split("|")
        )
        types = [_resolve_type(text) for text in names]
        return any(cls is not None and isinstance(target, cls) for cls in types)
    raise _Unknown


def _holds(condition: ast.expr, is_subject: _Matcher, value: object) -> bool | None:
    try:
        return bool(_evaluate(condition, is_subject, value))
    except (_Unknown, RecursionError):
        return None


_POOL: tuple[tuple[str, object], ...] = (
    ("'text'", "text"),
    ("1", 1),
    ("0", 0),
    ("-1", -1),
    ("1.5", 1.5),
    ("''", ""),
    ("['item']", ["item"]),
    ("[]", []),
    ("{'key': 'value'}", {"key": "value"}),
    ("{}", {}),
    ("True", True),
    ("False", False),
    ("b'data'", b"data"),
    ("None", None),
)


def _annotation_types(annotation: str | None) -> tuple[list[type], bool] | None:
    """The builtin types an annotation allows, and whether None is allowed."""
    if not annotation:
        return None
    text = annotation.strip().strip("'\"")
    optional = "None" in re.split(r"[\s|\[\],]+", text) or text.startswith(
        ("Optional", "typing.Optional")
    )
    inner = re.sub(r"^(?:typing\.)?Optional\[(.*)\]$", r"\1", text)
    types: list[type] = []
    for part in re.split(r"\s*\|\s*|^(?:typing\.)?Union\[|,\s*|\]$", inner):
        head = part.split("[", 1)[0].strip()
        if not head or head == "None":
            continue
        resolved = _resolve_type(head)
        if resolved is None:
            return None  # a type errdex cannot build a value of: no filtering
        types.append(resolved)
    return types, optional


def _fits(value: object, allowed: tuple[list[type], bool] | None) -> bool:
    if allowed is None:
        return True
    types, optional = allowed
    if value is None:
        return optional
    if isinstance(value, bool) and bool not in types:
        return False
    return any(isinstance(value, cls) for cls in types)


def _numbers_near(condition: ast.expr) -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for node in ast.walk(condition):
        if not isinstance(node, ast.expr) or not _is_number(node):
            continue
        number = ast.literal_eval(node)
        if not isinstance(number, (int, float)) or isinstance(number, bool):
            continue
        steps: list[int | float] = [number, number + 1, number - 1]
        if isinstance(number, float):
            steps += [number + 0.5, number - 0.5]
        found += [(repr(step), step) for step in steps]
    return found


@dataclass(frozen=True)
class _Examples:
    bad: str | None
    good: str | None


def _near_miss(values: tuple[Value, ...]) -> str | None:
    strings = [value.value for value in values if isinstance(value.value, str)]
    taken = set(strings)
    for base in strings:
        variants = [
            base.replace("_", "-"),
            base.replace("-", "_"),
            base.upper() if base != base.upper() else base.lower(),
            base + "s",
        ]
        for variant in variants:
            if variant and variant not in taken:
                return repr(variant)
    integers = [
        v.value for v in values if isinstance(v.value, int) and not isinstance(v.value, bool)
    ]
    if integers:
        return repr(max(integers) + 1)
    return None


def _examples(analysis: Analysis, signature: Signature | None) -> _Examples:
    subject = analysis.subject
    if analysis.shape is Shape.VALUES:
        good = analysis.accepted[0].code if analysis.accepted else None
        bad = _near_miss(analysis.accepted) if analysis.literal_values else None
        return _Examples(bad=bad, good=good)
    if subject is None or analysis.reject is None:
        return _Examples(None, None)
    is_subject = _Matcher(subject)
    name = short_name(subject) or ""
    annotation = signature.annotation(name) if signature is not None else None
    allowed = _annotation_types(annotation)
    pool = [*_numbers_near(analysis.reject), *_POOL]
    if analysis.rejected:
        pool = [(value.code, value.value) for value in analysis.rejected] + pool
    if allowed is None and analysis.shape in (Shape.MISSING, Shape.CONDITION):
        pool.insert(0, ("...", Ellipsis))  # "any value": errdex does not know the type
    bad = good = None
    for code, value in pool:
        if not _fits(value, allowed) and value is not None:
            continue
        verdict = _holds(analysis.reject, is_subject, value)
        if verdict is True and bad is None:
            bad = code
        elif verdict is False and good is None and _fits(value, allowed):
            good = code
    if analysis.shape is Shape.TYPES and analysis.types_accepted and good is None:
        good = f"{analysis.types[0]}(...)"
    if analysis.shape is Shape.MISSING and allowed is None:
        good = "..."  # any value will do; errdex does not know the parameter's type
    return _Examples(bad=bad, good=good)


# ---------------------------------------------------------------------------------------------
# The site, as the writer sees it
# ---------------------------------------------------------------------------------------------

_MEANINGS = {
    "ValueError": "an argument has the right type but a value the code cannot use",
    "TypeError": "an operation or function received an object of a type it does not handle",
    "KeyError": "a key was not found in a mapping",
    "IndexError": "a sequence index is out of range",
    "LookupError": "a key or index used for a lookup is not there",
    "AttributeError": "an attribute reference or assignment failed",
    "FileNotFoundError": "a file or directory that was asked for does not exist",
    "FileExistsError": "a file or directory that is about to be created already exists",
    "PermissionError": "the process lacks the access rights the operation needs",
    "OSError": "a system call failed (a file, socket or process operation)",
    "ImportError": "a module, or a name from it, could not be imported",
    "ModuleNotFoundError": "a module could not be found on the import path",
    "NotImplementedError": "the code path exists but is not implemented",
    "RuntimeError": "the program is in a state the code does not handle",
    "AssertionError": "a condition the code assumes to be true is false",
    "TimeoutError": "an operation did not finish in time",
    "ConnectionError": "a connection failed, was refused or was reset",
    "ConnectionRefusedError": "the other side refused the connection",
    "ConnectionResetError": "the other side reset the connection",
    "OverflowError": "a number is too large for the operation",
    "ZeroDivisionError": "a division or modulo by zero was attempted",
    "MemoryError": "the process ran out of memory",
    "RecursionError": "the maximum recursion depth was exceeded",
    "StopIteration": "an iterator has no further items",
    "EOFError": "input ended before the data the code expected",
    "UnicodeDecodeError": "bytes could not be decoded with the given encoding",
    "UnicodeEncodeError": "text could not be encoded with the given encoding",
    "SystemExit": "the program asked to exit",
    "DeprecationWarning": "a feature that is deprecated was used",
    "PendingDeprecationWarning": "a feature that will be deprecated was used",
    "FutureWarning": "a behaviour will change in a future version",
    "UserWarning": "the code itself issued a warning",
    "RuntimeWarning": "something dubious happened at run time",
    "ResourceWarning": "a resource (a file, a socket) was not released",
}

_RAISE_VERBS = {
    "python": "raises",
    "javascript": "throws",
    "typescript": "throws",
    "java": "throws",
    "go": "returns",
    "rust": "returns",
}
"""How each language says that a site produces its error."""

_STATEMENTS = {
    SiteKind.RAISE: "`raise`",
    SiteKind.ASSERT: "`assert`",
    SiteKind.LOG: "log call",
    SiteKind.WARN: "warning",
    SiteKind.EXIT: "exit",
    SiteKind.HTTP: "`raise`",
    SiteKind.OBJECT: "line",
}

_SITUATIONS = {
    "invalid-enum-value": "A value for {subject} spelled differently (a typo, another case, a "
    "hyphen for an underscore) or taken from another version of the code, where the set of "
    "values differs.",
    "unsupported-option": "An option or combination that this version of the code does not "
    "support, often copied from documentation or a configuration written for another setup.",
    "missing-argument": "{subject} left unset (None) by a call site or by a configuration that "
    "does not provide it.",
    "type-mismatch": "An object of another type passed as {subject}, often from untyped input "
    "(JSON, the command line, environment variables) or after a refactor.",
    "out-of-range": "A value of {subject} outside the range the code handles, computed at run "
    "time or read from configuration.",
    "shape-mismatch": "Inputs whose sizes or shapes do not agree, often after changing one "
    "part of a pipeline but not the other.",
    "missing-key": "A name looked up before it was registered or created, or misspelled.",
    "file-not-found": "A relative path resolved against another working directory, or a file "
    "that has not been created or downloaded yet.",
    "missing-dependency": "An environment where an optional dependency is not installed (a "
    "slim install, another virtual environment, a container image without it).",
    "not-implemented": "A code path, backend or option that exists in the interface but not "
    "in this implementation.",
    "invalid-state": "Calling the code in the wrong order or in a state it does not handle "
    "(not initialised, already closed, concurrent use).",
    "conflicting-options": "Options that cannot be used together, set by different layers of "
    "configuration.",
    "invalid-format": "Input that does not have the format the code parses.",
    "permission-denied": "Running as a user or with credentials that lack the rights needed.",
    "timeout": "A slow or overloaded service, network or disk.",
    "connection-failure": "A service that is down, unreachable or refusing connections.",
    "resource-exhausted": "Too little memory, disk or file handles for the workload.",
    "version-mismatch": "Code written for another version of a package or of Python.",
    "assertion-violation": "An internal assumption broken by unexpected input or state.",
    "empty-input": "An empty input: no data, no items, or a stream already consumed.",
    "duplicate-entry": "Registering or creating something that already exists.",
}

_MODULE_PATTERNS = (
    re.compile(r"No module named\s+['\"`]?([A-Za-z_][\w.]*)"),
    re.compile(
        r"(?:requires?|needs?|install)\s+(?:the\s+)?['\"`]?([A-Za-z_][\w.\-]*)['\"`]?\s+"
        r"(?:package|library|module)",
        re.IGNORECASE,
    ),
    re.compile(
        r"['\"`]?([A-Za-z_][\w.\-]*)['\"`]?\s+(?:package|library|module)\s+(?:is\s+)?"
        r"(?:not\s+installed|required|missing)",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:failed to|could not|cannot|can't|unable to)\s+import\s+(?!name\b)['\"`]?"
        r"([A-Za-z_][\w.]*)",
        re.IGNORECASE,
    ),
)
_MISSING_NAME = re.compile(
    r"cannot import name\s+['\"]([A-Za-z_]\w*)['\"]\s+from\s+['\"]([A-Za-z_][\w.]*)['\"]"
)
_PIP = re.compile(r"pip\s+install\s+((?:['\"]?[\w.\-\[\],=<>~!]+['\"]?\s*)+)")
_IMPORT_CLASSES = frozenset({"ImportError", "ModuleNotFoundError"})


@dataclass(frozen=True)
class _Site:
    record: ErrorRecord
    facts: CodeFacts | None
    analysis: Analysis
    function: str | None
    owner: str | None
    signature: Signature | None
    holes: tuple[str, ...]

    @classmethod
    def of(cls, record: ErrorRecord) -> _Site:
        facts = record.facts
        template = record.template if record.template.parts else template_from_message(record)
        return cls(
            record=record,
            facts=facts,
            analysis=analyse(facts),
            function=function_name(record, facts),
            owner=class_name_of(record, facts),
            signature=signature_of(facts) if facts is not None else None,
            holes=tuple(dict.fromkeys(template.holes)),
        )

    @property
    def error_class(self) -> str:
        return self.record.error_class

    @property
    def kind(self) -> SiteKind:
        return self.record.kind

    @property
    def raises(self) -> bool:
        return self.kind not in (SiteKind.LOG, SiteKind.WARN)

    @property
    def handed(self) -> bool:
        """The site hands its message to another package's code, which raises it later."""
        return self.record.message_form == "handed"

    @property
    def subject(self) -> str | None:
        return self.analysis.subject

    @property
    def subject_name(self) -> str | None:
        return short_name(self.analysis.subject)

    @property
    def who(self) -> str:
        if self.function:
            return f"`{self.function}`"
        return f"the code at `{self.record.file_path}:{self.record.line_number}`"

    @property
    def where(self) -> str:
        return f"`{self.record.file_path}:{self.record.line_number}`"

    @property
    def statement(self) -> str:
        return _STATEMENTS[self.kind]

    @property
    def level(self) -> str:
        return self.record.severity.value

    @property
    def status(self) -> str | None:
        status = self.record.http_status
        if status is None:
            return None
        try:
            return f"{status} {HTTPStatus(status).phrase}"
        except ValueError:
            return str(status)

    def verb_phrase(self) -> str:
        """What the site does, with its class: ``raises `ValueError```."""
        name = f"`{self.error_class}`"
        if self.kind is SiteKind.LOG:
            return f"logs a message at {self.level} level"
        if self.kind is SiteKind.WARN:
            return f"warns with {name}"
        if self.kind is SiteKind.ASSERT:
            return f"fails an `assert` ({name})"
        if self.kind is SiteKind.EXIT:
            return f"exits the program ({name})"
        if self.kind is SiteKind.HTTP and self.status:
            return f"responds with HTTP {self.status} ({name})"
        if self.kind is SiteKind.OBJECT:
            return f"builds a {name}"
        if self.panics:
            return f"panics ({name})"
        if self.language in ("go", "rust"):
            return f"returns an error ({name})"
        return f"{_RAISE_VERBS.get(self.language, 'raises')} {name}"

    def verb(self) -> str:
        """What the site does, short: ``raises it``."""
        if self.kind is SiteKind.RAISE and self.panics:
            return "panics"
        return {
            SiteKind.LOG: "logs it",
            SiteKind.WARN: "warns",
            SiteKind.ASSERT: "fails the assertion",
            SiteKind.EXIT: "exits",
            SiteKind.OBJECT: "builds it",
        }.get(self.kind, _RAISE_VERBS.get(self.language, "raises") + " it")

    @property
    def language(self) -> str:
        return self.record.language

    @property
    def panics(self) -> bool:
        """A Go or Rust panic (not an error value the caller gets back)."""
        return self.language in ("go", "rust") and self.error_class.split("::")[0] in (
            "panic",
            "unreachable",
            "todo",
            "unimplemented",
        )

    @property
    def caught(self) -> list[str]:
        return list(self.facts.caught) if self.facts is not None else []

    @property
    def in_except(self) -> bool:
        return self.facts is not None and (self.facts.in_except or bool(self.facts.caught))

    def module(self) -> tuple[str | None, str | None] | None:
        """For an import failure: the module the message names and its pip command."""
        classes = {self.error_class.rsplit(".", 1)[-1], *self.caught}
        if not (
            classes & _IMPORT_CLASSES
            or self.record.background_tag == "missing-dependency"
            or self.record.handling_strategy is HandlingStrategy.INSTALL
        ):
            return None
        text = self.record.error_message
        if self.missing_name() is not None:
            return None  # the module imports; a name in it is missing (see missing_name)
        pip = _PIP.search(text)
        command = f"pip install {pip.group(1).strip()}" if pip and "{" not in pip.group(1) else None
        for pattern in _MODULE_PATTERNS:
            match = pattern.search(text)
            if match and "{" not in match.group(0):
                return match.group(1).strip(".-"), command
        return None, command

    def missing_name(self) -> tuple[str, str] | None:
        """For ``cannot import name 'x' from 'm'``: the name and the module."""
        match = _MISSING_NAME.search(self.record.error_message)
        return (match.group(1), match.group(2)) if match else None


def _span(code: str) -> str:
    """Markdown inline code; a double-backtick span when the code holds a backtick."""
    return f"`` {code} ``" if "`" in code else f"`{code}`"


def _quote_values(values: Iterable[Value]) -> str:
    items = [
        value.code if value.literal and "`" not in value.code else _span(value.code)
        for value in values
    ]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _code_list(names: Iterable[str], joiner: str = "or") -> str:
    items = [_span(name) for name in names]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {joiner} " + items[-1]


def _snake(name: str) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    return snake if snake.isidentifier() and snake not in _BUILTIN_NAMES else "instance"


# ---------------------------------------------------------------------------------------------
# Code
# ---------------------------------------------------------------------------------------------


def _callee(site: _Site) -> str | None:
    if site.function is None:
        return None
    owner, signature = site.owner, site.signature
    if owner is None:
        return site.function
    if site.function == "__init__":
        return owner
    first = signature.positional[0] if signature is not None and signature.positional else None
    if signature is None or first == "self":
        return f"{_snake(owner)}.{site.function}"
    return f"{owner}.{site.function}"


def _call_text(site: _Site, subject_code: str | None) -> str | None:
    """A call of the site's function, with ``subject_code`` for the subject (None: any args).

    Uses only parameters the signature has; None when the subject cannot be passed.
    """
    callee = _callee(site)
    if callee is None:
        return None
    signature = site.signature
    subject = site.subject_name
    if signature is None:
        return None if subject_code is not None else f"{callee}(...)"
    if subject_code is not None and (subject is None or subject not in signature.names):
        return None
    positional = list(signature.positional)
    if site.owner and positional[:1] in (["self"], ["cls"]):
        positional = positional[1:]
    arguments: list[str] = []
    keywords = False
    for name in positional:
        if name == subject and subject_code is not None:
            if name in signature.positional_only:
                if keywords:
                    return None
                arguments.append(subject_code)
            else:
                arguments.append(f"{name}={subject_code}")
                keywords = True
        elif name in signature.required:
            if keywords and name in signature.positional_only:
                return None
            arguments.append(f"{name}={name}" if keywords else name)
        else:
            keywords = True
    for name in signature.keyword_only:
        if name == subject and subject_code is not None:
            arguments.append(f"{name}={subject_code}")
        elif name in signature.required:
            arguments.append(f"{name}={name}")
    return f"{callee}({', '.join(arguments)})"


def _rename_subject(node: ast.expr, subject: str, name: str) -> ast.expr:
    is_subject = _Matcher(subject)

    class _Rename(ast.NodeTransformer):
        def visit(self, child: ast.AST) -> ast.AST:
            if isinstance(child, ast.expr) and is_subject(child):
                return ast.Name(id=name, ctx=ast.Load())
            visited: ast.AST = super().visit(child)
            return visited

    copy = parse_expression(ast.unparse(node))
    if copy is None:
        return node
    renamed = _Rename().visit(copy)
    return renamed if isinstance(renamed, ast.expr) else node


def _message_expression(site: _Site) -> str:
    subject = site.subject or ""
    name = site.subject_name or "value"
    label = "unexpected" if site.analysis.shape is not Shape.MISSING else "missing"
    if re.fullmatch(r"[A-Za-z_][\w.]*", subject):
        return f'f"{label} {name}: {{{subject}!r}}"'
    return f'"{label} {name}: " + repr({subject})'


def _raise_line(site: _Site, message: str) -> str:
    if site.error_class == "HTTPException" and site.record.http_status is not None:
        return f"raise HTTPException(status_code={site.record.http_status}, detail={message})"
    return f"raise {site.error_class}({message})"


def _validation_code(site: _Site) -> str | None:
    analysis = site.analysis
    module = site.module()
    if analysis.reject is None or analysis.subject is None:
        if module is not None and module[0] is not None and site.raises:
            top = module[0].split(".", 1)[0]
            return (
                "import importlib.util\n\n"
                f'if importlib.util.find_spec("{top}") is None:\n'
                f"    {_raise_line(site, repr(f'the module {top} is not installed'))}\n"
            )
        return None
    condition = ast.unparse(analysis.reject)
    if site.raises:
        body = _raise_line(site, _message_expression(site))
    else:
        body = f"...  # {site.function or 'the code'} {site.verb()} for this value: fix it first"
    return f"if {condition}:\n    {body}\n"


def _is_boolean(node: ast.expr) -> bool:
    """Whether an expression is a bool by construction (a comparison, ``not``, ``isinstance``)."""
    if isinstance(node, (ast.Compare,)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_is_boolean(value) for value in node.values)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass", "callable", "bool", "hasattr")
    )


def _type_guard(site: _Site) -> str | None:
    analysis = site.analysis
    subject, name = analysis.subject, site.subject_name
    if analysis.reject is None or subject is None or name is None:
        module = site.module()
        if module is not None and module[0] is not None:
            top = module[0].split(".", 1)[0]
            function = "has_" + re.sub(r"\W", "_", top)
            return (
                "import importlib.util\n\n\n"
                f"def {function}() -> bool:\n"
                f'    return importlib.util.find_spec("{top}") is not None\n'
            )
        return None
    accepting = negate(_rename_subject(analysis.reject, subject, name))
    if not _is_boolean(accepting):
        accepting = ast.Call(
            func=ast.Name(id="bool", ctx=ast.Load()), args=[accepting], keywords=[]
        )
    if analysis.shape is Shape.RANGE:
        annotation = site.signature.annotation(name) if site.signature is not None else None
        allowed = _annotation_types(annotation)
        numeric = (
            [cls.__name__ for cls in allowed[0]] if allowed and allowed[0] else ["int", "float"]
        )
        spec = numeric[0] if len(numeric) == 1 else "(" + ", ".join(numeric) + ")"
        check = parse_expression(f"isinstance({name}, {spec})")
        if check is not None:
            accepting = ast.BoolOp(op=ast.And(), values=[check, accepting])
    body = ast.unparse(accepting)
    function = f"is_valid_{name}"
    if analysis.shape is Shape.TYPES and analysis.types_accepted:
        types = [_resolve_type(text) for text in analysis.types]
        if all(cls is not None and getattr(builtins, cls.__name__, None) is cls for cls in types):
            union = " | ".join(analysis.types)
            return (
                "from typing import TypeGuard\n\n\n"
                f"def {function}({name}: object) -> TypeGuard[{union}]:\n"
                f"    return {body}\n"
            )
    return f"def {function}({name}: object) -> bool:\n    return {body}\n"


def _handler_body(site: _Site, indent: str) -> list[str]:
    strategy = site.record.handling_strategy
    lines: list[str] = []
    if site.in_except:
        caught = " or ".join(site.caught) if site.caught else "error"
        lines.append(f"cause = error.__cause__ or error.__context__  # the {caught} it handled")
    if site.error_class == "HTTPException" and site.record.http_status is not None:
        lines.append(f"if error.status_code == {site.record.http_status}:")
        lines.append("    raise  # " + (site.status or "") + ": report it to the client")
        return [indent + line for line in lines]
    module = site.module()
    if module is not None:
        hint = module[1] or (f"install the module {module[0]}" if module[0] else "install it")
        lines.append(f"raise  # {hint}, or take a path that does not need it")
    elif strategy is HandlingStrategy.FALLBACK:
        lines.append("result = None  # take another path: this one is not available here")
    elif strategy is HandlingStrategy.CLEANUP:
        lines.append("raise  # after releasing what the call held (files, memory)")
    elif strategy is HandlingStrategy.CONFIGURATION:
        lines.append("raise  # fix the configuration the message names")
    elif strategy is HandlingStrategy.UPGRADE:
        lines.append("raise  # upgrade or pin the package to a matching version")
    elif strategy is HandlingStrategy.VALIDATION and site.subject:
        lines.append(f"raise  # {site.subject} was rejected: the message shows the value")
    else:
        lines.append("raise  # add context, or let it propagate")
    return [indent + line for line in lines]


def _try_catch(site: _Site) -> str | None:
    if site.kind is SiteKind.LOG:
        return None  # a log call raises nothing
    call = _call_text(site, site.subject) if site.subject else None
    call = call or _call_text(site, None)
    body = f"result = {call}" if call else f"...  # the code that runs {site.where}"
    cls = site.error_class
    if site.kind is SiteKind.WARN:
        return (
            "import warnings\n\n"
            "with warnings.catch_warnings():\n"
            f'    warnings.simplefilter("error", {cls})\n'
            "    try:\n"
            f"        {body}\n"
            f"    except {cls} as warning:\n"
            "        ...  # the message says what to change; the warning is now an error\n"
        )
    if site.record.handling_strategy is HandlingStrategy.RETRY:
        return _retry(body, cls)
    handler = "\n".join(_handler_body(site, "    "))
    return f"try:\n    {body}\nexcept {cls} as error:\n{handler}\n"


def _example_fix(site: _Site) -> str:
    analysis = site.analysis
    examples = _examples(analysis, site.signature)
    if examples.bad is not None and examples.good is not None:
        before = _call_text(site, examples.bad)
        after = _call_text(site, examples.good)
        if before is not None and after is not None:
            return f"# before\nresult = {before}\n# after\nresult = {after}\n"
    call = _call_text(site, site.subject) if site.subject else None
    call = call or _call_text(site, None)
    if call is None:
        return ""
    if analysis.reject is not None and analysis.subject is not None:
        condition = ast.unparse(analysis.reject)
        return (
            f"# before\nresult = {call}\n"
            f"# after\nif {condition}:\n"
            f"    ...  # handle the bad {site.subject_name} here\n"
            f"else:\n    result = {call}\n"
        )
    recovery = _recovery(site, call)
    if recovery is None:
        return ""  # nothing the caller can change is known: no invented fix
    return f"# before\nresult = {call}\n# after\n{recovery}"


def _recovery(site: _Site, call: str) -> str | None:
    """Code that handles the error where handling is a fix: retry, fall back, install, HTTP."""
    if not site.raises:
        return None
    cls = site.error_class
    module = site.module()
    strategy = site.record.handling_strategy
    if strategy is HandlingStrategy.RETRY:
        return _retry(f"result = {call}", cls)
    if module is not None:
        name, command = module
        hint = command or (f"install the module {name}" if name else "install the dependency")
        return (
            f"try:\n    result = {call}\nexcept {cls}:\n"
            f"    result = None  # {hint}, or take a path that does not need it\n"
        )
    if strategy is HandlingStrategy.FALLBACK:
        return (
            f"try:\n    result = {call}\nexcept {cls}:\n"
            "    result = None  # take another path: this one is not available here\n"
        )
    if site.kind is SiteKind.HTTP and site.record.http_status is not None:
        handler = "\n".join(_handler_body(site, "    "))
        return f"try:\n    result = {call}\nexcept {cls} as error:\n{handler}\n"
    return None


def _retry(body: str, cls: str) -> str:
    return (
        "import time\n\n"
        "for attempt in range(3):\n"
        "    try:\n"
        f"        {body}\n"
        "        break\n"
        f"    except {cls}:\n"
        "        if attempt == 2:\n"
        "            raise\n"
        "        time.sleep(2**attempt)\n"
    )


# ---------------------------------------------------------------------------------------------
# Prose
# ---------------------------------------------------------------------------------------------


def _condition_sentence(site: _Site) -> str | None:
    if site.handed:
        return None  # what leads here hands the message on; it is raised elsewhere, later
    analysis, subject = site.analysis, f"`{site.subject}`"
    conditions = _code_list(analysis.conditions, "and")
    if analysis.shape is Shape.VALUES:
        listing = _quote_values(analysis.accepted)
        if analysis.fall_through:
            tests = (
                "the comparison"
                if analysis.fall_through == 1
                else f"the {analysis.fall_through} comparisons"
            )
            rest = f"any other value falls through {tests} to this {site.statement}"
        else:
            rest = f"any other value reaches this {site.statement}"
        if len(analysis.accepted) == 1:
            return f"It accepts one value for {subject}: {listing}; {rest}."
        return f"It accepts these values for {subject}: {listing}; {rest}."
    if analysis.shape is Shape.REJECTED_VALUES:
        return f"It {site.verb()} when {subject} is one of {_quote_values(analysis.rejected)}."
    if analysis.shape is Shape.TYPES:
        types = _code_list(analysis.types)
        if analysis.types_accepted:
            return f"{subject} must be an instance of {types}; the check is {conditions}."
        return f"It {site.verb()} when {subject} is an instance of {types}."
    if analysis.shape is Shape.MISSING:
        return f"It {site.verb()} when {subject} is None: {subject} needs a value."
    if analysis.shape is Shape.RANGE and analysis.reject is not None:
        accepted = ast.unparse(negate(analysis.reject))
        return f"It {site.verb()} when {conditions}; {subject} must satisfy {_span(accepted)}."
    if analysis.shape is Shape.EMPTY:
        return f"It {site.verb()} when {subject} is empty or otherwise false ({conditions})."
    if analysis.shape is Shape.CONTAINER:
        container = _span(analysis.container or "")
        return f"{subject} must be a member of {container}; the check is {conditions}."
    if analysis.shape is Shape.KEY:
        if analysis.container:
            return f"{subject} must be a key of {_span(analysis.container)}."
        return f"It {site.verb()} when {subject} is not found where it is looked up."
    if analysis.shape is Shape.CONDITION and analysis.conditions:
        return f"It {site.verb()} when {conditions}."
    if analysis.shape is Shape.UNGUARDED:
        if site.in_except:
            return None
        return f"No condition in {site.who} leads to it: it {site.verb()} whenever this line runs."
    return None


def _class_sentence(site: _Site) -> str | None:
    name = site.error_class.rsplit(".", 1)[-1]
    if site.kind is SiteKind.LOG:
        return None
    if name in _MEANINGS:
        return f"`{name}` means that {_MEANINGS[name]}."
    bases = list(site.facts.exception_bases) if site.facts is not None else []
    for base in bases:
        short = base.rsplit(".", 1)[-1]
        if short in _MEANINGS:
            return f"`{name}` derives from `{short}`: {_MEANINGS[short]}."
    if bases:
        return f"`{name}` derives from {_code_list(bases, 'and')}."
    return None


def _except_sentence(site: _Site) -> str | None:
    if not site.in_except:
        return None
    caught = site.caught
    block = f"`except {', '.join(caught)}`" if caught else "`except`"
    handled = _code_list(caught) if caught else "the error it caught"
    verb = {
        SiteKind.LOG: "logged",
        SiteKind.WARN: "issued",
        SiteKind.OBJECT: "built",
    }.get(site.kind, "raised")
    sentence = f"It is {verb} inside an {block} block of {site.who}, while handling {handled}"
    if site.raises and site.kind is not SiteKind.OBJECT:
        return sentence + "; the original error is kept as its `__context__` (or `__cause__`)."
    return sentence + "."


def _module_sentence(site: _Site) -> str | None:
    missing = site.missing_name()
    if missing is not None:
        attribute, module_name = missing
        return (
            f"`{module_name}` imports, but it has no `{attribute}`: the code expects another "
            f"version of `{module_name}`."
        )
    module = site.module()
    if module is None:
        return None
    name, command = module
    if name:
        return f"The module `{name}` cannot be imported in this environment."
    if command:
        return f"A dependency is missing; the message gives the command `{command}`."
    return "A dependency the code imports is missing from this environment."


def _opening(site: _Site) -> str:
    message = f'"{site.record.error_message}"'
    who = site.who[:1].upper() + site.who[1:]
    if site.kind is SiteKind.LOG:
        return f"{who} logs {message} at {site.level} level; nothing is raised."
    if site.kind in (SiteKind.WARN, SiteKind.HTTP):
        return f"{who} {site.verb_phrase()}: {message}."
    if site.handed:
        return (
            f"{who} hands the message {message} to code of another package, which raises"
            f" `{site.error_class}` with it later, not when this line runs."
        )
    return f"{who} {site.verb_phrase()} with the message {message}."


def _documentation(site: _Site) -> str:
    record = site.record
    sentences = [_opening(site)]
    for sentence in (
        _condition_sentence(site),
        _except_sentence(site),
        _module_sentence(site),
    ):
        if sentence:
            sentences.append(sentence)
    if site.holes and record.opaque:
        sentences.append(
            f"The message text is built elsewhere and passed in as {_code_list(site.holes)}."
        )
    elif site.holes:
        placeholders = _code_list(("{" + hole + "}" for hole in site.holes), "and")
        plural = len(site.holes) > 1
        sentences.append(
            f"In the message, {placeholders} {'show' if plural else 'shows'} the "
            f"{'values' if plural else 'value'} of {_code_list(site.holes, 'and')} at run time."
        )
    class_sentence = _class_sentence(site)
    if class_sentence:
        sentences.append(class_sentence)
    if record.http_status is not None and site.kind is not SiteKind.HTTP and site.status:
        sentences.append(f"Clients receive HTTP {site.status}.")
    if record.error_code:
        sentences.append(f"It carries the error code `{record.error_code}`.")
    return " ".join(sentences)


def _trigger_scenarios(site: _Site) -> str:
    analysis = site.analysis
    sentences: list[str] = []
    examples = _examples(analysis, site.signature)
    bad_call = _call_text(site, examples.bad) if examples.bad is not None else None
    if bad_call is not None:
        if analysis.shape is Shape.VALUES:
            bad = examples.bad or ""
            bad = bad if "`" not in bad else _span(bad)
            why = f"{bad} is none of the values it compares `{site.subject}` with"
        elif analysis.reject is not None:
            why = f"{_span(ast.unparse(analysis.reject))} holds for it"
        else:
            why = "the condition holds"
        sentences.append(f"Calling {_span(bad_call)} reaches the {site.statement}: {why}.")
    elif analysis.reject is not None:
        sentences.append(f"Running {site.who} when {_span(ast.unparse(analysis.reject))}.")
    elif analysis.conditions and analysis.shape is not Shape.UNGUARDED:
        sentences.append(f"Running {site.who} when {_code_list(analysis.conditions, 'and')}.")
    if site.in_except:
        caught = _code_list(site.caught) if site.caught else "an error"
        sentences.append(f"{caught} raised inside the `try` block that this handler covers.")
    module = site.module()
    if module is not None and module[0]:
        sentences.append(f"Running it where `{module[0]}` is not installed.")
    callers = site.facts.callers if site.facts is not None else []
    if callers and site.function:
        shown = ", ".join(f"{c.path}:{c.line}" for c in callers[:5])
        more = f" and {len(callers) - 5} more" if len(callers) > 5 else ""
        sentences.append(
            f"`{site.function}` is called from {shown}{more}; a value passed from there can "
            "reach this line."
        )
    if not sentences:
        sentences.append(f"Any run of {site.who} that reaches line {site.record.line_number}.")
    return " ".join(sentences)


def _common_situations(site: _Site) -> str:
    subject = f"`{site.subject}`" if site.subject else "the value"
    text = _SITUATIONS.get(site.record.background_tag)
    sentences = []
    if text:
        sentence = text.format(subject=subject)
        sentences.append(sentence[0].upper() + sentence[1:])
    if site.kind is SiteKind.LOG:
        sentences.append("The program goes on after logging it, so later errors may follow.")
    if site.kind is SiteKind.ASSERT:
        sentences.append("Running under `python -O` removes the `assert`, and the check with it.")
    if site.in_except and site.caught:
        sentences.append(f"Whatever makes the guarded code raise {_code_list(site.caught)}.")
    if not sentences:
        sentences.append(f"Any input or state that makes {site.who} reach this line.")
    return " ".join(sentences)


def _solutions(site: _Site, has_validation: bool) -> list[str]:
    analysis = site.analysis
    subject = f"`{site.subject}`"
    function = site.who
    items: list[str] = []
    if analysis.shape is Shape.VALUES:
        items.append(
            f"Pass one of the accepted values for {subject}: {_quote_values(analysis.accepted)}."
        )
        items.append(
            f"Check how the call site spells {subject}: another case, a hyphen for an "
            "underscore or an old name falls through."
        )
    elif analysis.shape is Shape.REJECTED_VALUES:
        items.append(f"Choose a value of {subject} other than {_quote_values(analysis.rejected)}.")
    elif analysis.shape is Shape.TYPES:
        if analysis.types_accepted:
            items.append(
                f"Pass an instance of {_code_list(analysis.types)} as {subject}; convert it "
                "first when it comes from text or JSON."
            )
        else:
            items.append(f"Do not pass an instance of {_code_list(analysis.types)} as {subject}.")
    elif analysis.shape is Shape.MISSING:
        items.append(f"Give {subject} a value before calling {function}.")
    elif analysis.shape is Shape.RANGE and analysis.reject is not None:
        items.append(f"Keep {subject} within {_span(ast.unparse(negate(analysis.reject)))}.")
    elif analysis.shape is Shape.EMPTY:
        items.append(f"Pass a non-empty {subject}.")
    elif analysis.shape is Shape.CONTAINER:
        items.append(f"Use a member of {_span(analysis.container or '')} for {subject}.")
    elif analysis.shape is Shape.KEY:
        where = f" in {_span(analysis.container)}" if analysis.container else ""
        items.append(f"Check the name in {subject}, or register it{where} before the lookup.")
    elif analysis.shape is Shape.CONDITION and analysis.conditions:
        items.append(
            f"Avoid the state in which {_code_list(analysis.conditions, 'and')} when "
            f"{function} runs."
        )
    module = site.module()
    if module is not None:
        name, command = module
        if command:
            items.append(f"Install it: `{command}` (the command the message gives).")
        elif name:
            items.append(
                f"Install the distribution that provides the module `{name}` in the "
                "environment that runs the code."
            )
        else:
            items.append("Install the dependency the message names.")
    missing = site.missing_name()
    if missing is not None:
        items.append(
            f"Install the version of `{missing[1]}` the code was written for (one that has "
            f"`{missing[0]}`), or pin it in the requirements."
        )
    if site.in_except:
        handled = _code_list(site.caught) if site.caught else "the error it handled"
        items.append(
            f"Fix the first failure: the traceback shows {handled} above this one, "
            "and that is what went wrong."
        )
    if has_validation and site.function:
        if analysis.reject is not None:
            items.append(f"Check {subject} before calling {function} (see validationCode).")
        else:
            items.append(
                f"Check that the module imports before calling {function} (see validationCode)."
            )
    strategy = site.record.handling_strategy
    if site.record.error_type is ErrorType.DEPRECATION:
        strategy = HandlingStrategy.VALIDATION  # the fix is in the calling code, not an upgrade
        items.append("Change the calling code as the message says, before the feature is removed.")
    advice = {
        HandlingStrategy.RETRY: "Retry with a backoff when the failure is transient.",
        HandlingStrategy.CONFIGURATION: "Check the configuration the message refers to "
        "(settings, environment variables, files).",
        HandlingStrategy.UPGRADE: "Upgrade or pin the package to a version that matches.",
        HandlingStrategy.FALLBACK: "Take another path when this one is not available.",
        HandlingStrategy.CLEANUP: "Release resources (files, memory, handles), then try again.",
    }.get(strategy)
    if advice and module is None:
        items.append(advice)
    if site.kind is SiteKind.HTTP and site.status:
        items.append(f"Handle HTTP {site.status} in the client.")
    if site.kind is SiteKind.LOG:
        items.append("Nothing is raised: look at what the program does after this log line.")
    if not items:
        items.append(
            f"Read the message: it is the only account {site.who} gives; the code around "
            f"{site.where} shows how it is reached."
        )
    return items


def _prevention_tips(site: _Site) -> list[str]:
    analysis = site.analysis
    subject = f"`{site.subject}`"
    tips: list[str] = []
    if analysis.shape is Shape.VALUES:
        tips.append(
            f"Keep the accepted values of {subject} in one place (an Enum or a module "
            "constant) and use it at every call site."
        )
        if analysis.literal_values:
            codes = ", ".join(value.code for value in analysis.accepted)
            literal = _span(f"Literal[{codes}]")
            tips.append(f"Annotate {subject} as {literal} so that a type checker sees it.")
    elif analysis.shape is Shape.TYPES and analysis.types_accepted:
        tips.append(
            f"Annotate {subject} as `{' | '.join(analysis.types)}` and run a type checker on "
            "the callers."
        )
    elif analysis.shape is Shape.MISSING:
        default = (
            site.signature.default(site.subject_name or "") if site.signature is not None else None
        )
        if default == "None":
            tips.append(f"{subject} defaults to None: pass it explicitly at every call site.")
        else:
            tips.append(f"Set {subject} where it is created, not just before it is used.")
    elif analysis.shape in (Shape.RANGE, Shape.EMPTY, Shape.CONTAINER, Shape.KEY):
        tips.append(f"Validate {subject} where it enters the program (configuration, input).")
    if site.module() is not None:
        tips.append("Declare the dependency (a requirement or an extra) so installs include it.")
    if site.function and analysis.shape not in (Shape.UNGUARDED, Shape.UNKNOWN):
        tips.append(f"Add a test that calls {site.who} with a bad value and expects this error.")
    if site.kind is SiteKind.ASSERT:
        tips.append("Check user input with an explicit `if` instead of an `assert`.")
    if not tips:
        tips.append(f"Watch for this message in logs and tests; it comes from {site.where}.")
    return tips


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _parses(code: str | None) -> bool:
    if code is None:
        return True
    try:
        parse_bounded(code)
    except SyntaxError:
        return False
    return True


def _foreign_handler(site: _Site) -> str | None:
    """How a caller handles the error in the site's own language (not Python)."""
    if site.kind in (SiteKind.LOG, SiteKind.WARN) or site.panics:
        return None  # nothing reaches the caller to handle
    cls = site.error_class
    where = f"the code that reaches {site.where}"
    if site.language in ("javascript", "typescript"):
        test = "" if cls == "Error" else f"  if (!(error instanceof {cls})) throw error;\n"
        return (
            f"try {{\n  // {where}\n}} catch (error) {{\n{test}"
            "  // the message says what to change; add context or recover here\n"
            "  throw error;\n}\n"
        )
    if site.language == "java":
        return (
            f"try {{\n    // {where}\n}} catch ({cls} e) {{\n"
            "    // the message says what to change; add context or recover here\n"
            "    throw e;\n}\n"
        )
    if site.language == "go":
        check = f"errors.Is(err, {cls})" if cls.startswith("Err") else "err != nil"
        return (
            f"// {where}\nif {check} {{\n"
            '\treturn fmt.Errorf("doing X: %w", err) // keep the cause for errors.Is/As\n}\n'
        )
    if site.language == "rust":
        return (
            f"// {where}\nmatch result {{\n    Ok(value) => value,\n"
            "    Err(error) => return Err(error.into()), // or recover here\n}\n"
        )
    return None


def _write_foreign(site: _Site) -> Narrative:
    """The narrative of a site in another language: prose, and its own handling pattern.

    The Python code fields (validation, type guard, example fix) do not apply.
    """
    return Narrative(
        documentation=_documentation(site),
        trigger_scenarios=_trigger_scenarios(site),
        common_situations=_common_situations(site),
        solutions=_solutions(site, False),
        example_fix="",
        validation_code=None,
        type_guard=None,
        try_catch_pattern=_foreign_handler(site),
        prevention_tips=_prevention_tips(site),
    )


def write_offline(record: ErrorRecord) -> Narrative:
    """Write a record's prose and code fields from the facts of its site.

    Args:
        record: The record, with its ``facts`` when the extractor found them.

    Returns:
        The narrative: prose that names the function, the subject, the accepted values and
        the real class; code fields that parse (``validationCode`` and ``typeGuard`` are None
        when nothing about the subject can be checked). Records of other languages get prose
        and a handling pattern in their own language.
    """
    site = _Site.of(record)
    if record.language != "python":
        return _write_foreign(site)
    validation = _validation_code(site)
    guard = _type_guard(site)
    try_catch = _try_catch(site)
    example = _example_fix(site)
    # A last net: a code field that does not parse is left out rather than shipped.
    validation = validation if _parses(validation) else None
    guard = guard if _parses(guard) else None
    try_catch = try_catch if _parses(try_catch) else None
    example = example if _parses(example) else ""
    return Narrative(
        documentation=_documentation(site),
        trigger_scenarios=_trigger_scenarios(site),
        common_situations=_common_situations(site),
        solutions=_solutions(site, validation is not None),
        example_fix=example,
        validation_code=validation,
        type_guard=guard,
        try_catch_pattern=try_catch,
        prevention_tips=_prevention_tips(site),
    )


def apply_narrative(record: ErrorRecord, narrative: Narrative, *, writer: str) -> ErrorRecord:
    """Return a copy of a record with a narrative's fields and the writer's name set.

    Nothing else of the record changes.

    Args:
        record: The record.
        narrative: The prose and code fields.
        writer: Who wrote them (``offline``, ``llm:<model>``).

    Returns:
        The new record; its ``claims`` are the verifier's findings on the new narrative.
    """
    updated = record.model_copy(update={**dict(narrative), "writer": writer})
    return updated.model_copy(update={"claims": verify(updated)})


def enrich_offline(records: Iterable[ErrorRecord]) -> list[ErrorRecord]:
    """Write every record's narrative with the offline writer.

    Args:
        records: The records.

    Returns:
        Copies with the narrative fields set, ``writer="offline"`` and the verifier's
        ``claims``; every other field is unchanged.
    """
    return [
        apply_narrative(record, write_offline(record), writer=WRITER_NAME) for record in records
    ]


def ensure_narrative(record: ErrorRecord) -> ErrorRecord:
    """Give a record its offline narrative when it has none yet (never overwrites prose).

    Mining stores records without prose, to stay fast; they get it when they are shown,
    exported or explained, and ``errdex enrich`` stores it. Records with prose of their own
    (imported, written by an LLM) are returned unchanged.

    Args:
        record: The record.

    Returns:
        The record, with the offline narrative if it had neither a writer nor prose.
    """
    if record.writer or record.documentation:
        return record
    return apply_narrative(record, write_offline(record), writer=WRITER_NAME)


def ensure_envelope(envelope: RecordEnvelope) -> RecordEnvelope:
    """:func:`ensure_narrative` for a record in its envelope."""
    record = ensure_narrative(envelope.record)
    return envelope if record is envelope.record else envelope.model_copy(update={"record": record})
