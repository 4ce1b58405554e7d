"""The verifier: a record's prose and code checked against the facts of its site.

Every narrative, whoever wrote it (the offline writer, an LLM, the dataset a record was imported
from), is checked against the :class:`~errdex.models.CodeFacts` of its site. Each finding is a
:class:`~errdex.models.Claim` naming the field (the record's JSON key: ``documentation``,
``validationCode`` …), the text claimed, a verdict and one sentence on what the code says.

The rules:

* **Values.** When the accepted values of the subject are known and are all literals, a quoted
  literal that the prose claims accepted (a sentence with an accepted-values word such as
  *accepted*, *valid*, *recognised*, *supported*, *only*, *one of*, that mentions the subject or
  another accepted value) but that is not accepted is *contradicted*; so is an accepted value
  that the prose says is rejected (*unknown*, *invalid*, *not supported* …) and, in
  ``triggerScenarios``, an accepted value given as a trigger. Quoted text that is not a value of
  the subject — the message itself, a call's message argument, a file name, a phrase with
  spaces, a parameter's name — is never checked, and neither is any sentence that says
  nothing about the subject's values.
* **Values in code**, analysed with :mod:`ast`, never executed: the literals a
  ``validationCode`` or ``typeGuard`` treats as valid for the subject (``assert x in (…)``,
  ``if x not in (…): raise``, ``return x in (…)``, ``==``/``!=`` chains) must be accepted, and
  every accepted value must be in such a set; the ``# before`` part of ``exampleFix`` must pass
  a value that fails and the ``# after`` part one that passes.
* **Classes.** An exception class named in any field must be the raised class, one of its bases,
  a class the site's ``except`` block catches, or a class the message names; *contradicted* when
  both hierarchies are known (builtin classes), else *unsupported*.
* **Parameters.** A call of the site's function (in a code field, or written out in prose) may
  only use keyword arguments the signature has, and no more positional ones than it takes.
* **Parsing.** ``exampleFix``, ``validationCode``, ``typeGuard`` and ``tryCatchPattern`` must
  parse as Python (``unparsable`` otherwise; the lines that parse are still checked).
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from errdex.models import Claim, CodeFacts, ErrorRecord, Guard, SiteKind


class Verdict(str, Enum):
    """What the code says about a claim."""

    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    UNPARSABLE = "unparsable"


PROSE_FIELDS: tuple[str, ...] = (
    "documentation",
    "triggerScenarios",
    "commonSituations",
    "solutions",
    "preventionTips",
)
"""The prose fields of a record (JSON keys), as the verifier reports them."""

CODE_FIELDS: tuple[str, ...] = ("exampleFix", "validationCode", "typeGuard", "tryCatchPattern")
"""The code fields of a record (JSON keys); each must parse as Python."""

_ATTRIBUTES = {
    "documentation": "documentation",
    "triggerScenarios": "trigger_scenarios",
    "commonSituations": "common_situations",
    "solutions": "solutions",
    "preventionTips": "prevention_tips",
    "exampleFix": "example_fix",
    "validationCode": "validation_code",
    "typeGuard": "type_guard",
    "tryCatchPattern": "try_catch_pattern",
}

_BUILTIN_EXCEPTIONS: dict[str, type[BaseException]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


MAX_DEPTH = 100
"""Trees nested deeper than this are refused: no fact or field needs them, and ``ast`` recurses."""

_PARSE_ERRORS = (SyntaxError, ValueError, MemoryError, RecursionError)


def parse_bounded(source: str, mode: str = "exec") -> ast.AST:
    """Parse Python source, refusing what would make later tree walks recurse too deep.

    Args:
        source: The source text.
        mode: ``exec`` or ``eval``.

    Returns:
        The tree.

    Raises:
        SyntaxError: The source does not parse, makes the parser give up (too deep for it),
            or nests deeper than :data:`MAX_DEPTH`.
    """
    try:
        tree = ast.parse(source, mode=mode)
    except SyntaxError:
        raise
    except (ValueError, MemoryError, RecursionError) as error:
        raise SyntaxError(f"cannot be parsed ({type(error).__name__})") from error
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SyntaxError(f"nested more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return tree


def _parse_expression_node(text: str) -> ast.expr | None:
    try:
        tree = parse_bounded(text, "eval")
    except SyntaxError:
        return None
    return tree.body if isinstance(tree, ast.Expression) else None


# ---------------------------------------------------------------------------------------------
# Facts: values, subjects, signatures (shared with the writers)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """One value as the code writes it.

    Attributes:
        code: Its source text, normalised (``repr`` of a literal: ``'draft_decode'``).
        literal: Whether it is a literal (string, bytes, number, bool or None).
        value: The literal's Python value (None when not a literal).
    """

    code: str
    literal: bool
    value: object = None

    def same(self, other: object) -> bool:
        """Whether ``other`` is this literal (same type and equal; ``True`` is not ``1``)."""
        return self.literal and type(other) is type(self.value) and other == self.value


def value_of(text: str) -> Value | None:
    """Read a value from its source text.

    Args:
        text: Source text such as ``"draft_decode"``, ``3`` or ``Phase.DECODE``.

    Returns:
        The value, or None when the text is not an expression.
    """
    node = _parse_expression_node(text.strip())
    return _value_of_node(node) if node is not None else None


def _value_of_node(node: ast.expr) -> Value:
    try:
        value = ast.literal_eval(node)
    except (TypeError, *_PARSE_ERRORS):
        return Value(code=ast.unparse(node), literal=False)
    if value is None or isinstance(value, (str, bytes, int, float, complex, bool)):
        return Value(code=repr(value), literal=True, value=value)
    return Value(code=ast.unparse(node), literal=False)


def parse_expression(text: str | None) -> ast.expr | None:
    """Parse a condition or expression as the facts write it.

    ``if``/``elif``/``assert`` prefixes and a trailing colon are dropped.

    Args:
        text: The source text.

    Returns:
        The expression, or None when it does not parse.
    """
    if not text:
        return None
    cleaned = text.strip()
    cleaned = re.sub(r"^(?:el)?if\s+|^assert\s+|^while\s+", "", cleaned)
    cleaned = cleaned.removesuffix(":").strip()
    return _parse_expression_node(cleaned)


def subject_of(facts: CodeFacts) -> str | None:
    """Return the name the site is about: the facts' subject, else the first guard's."""
    if facts.subject:
        return facts.subject
    for guard in facts.guards:
        if guard.subject:
            return guard.subject
    return None


def short_name(text: str | None) -> str | None:
    """Return the last dotted component of a name (``self.mode`` → ``mode``)."""
    if not text:
        return None
    tail = re.split(r"[.\[\]'\"()]+", text.strip())
    names = [part for part in tail if part.isidentifier()]
    return names[-1] if names else None


class _SubjectMatcher:
    """Tells whether an expression node is the subject (or its short name)."""

    def __init__(self, subject: str | None, aliases: Iterable[str] = ()) -> None:
        node = parse_expression(subject) if subject else None
        self.dump = ast.dump(node) if node is not None else None
        self.names = {name for name in (short_name(subject), *aliases) if name}

    def __call__(self, node: ast.AST) -> bool:
        if self.dump is not None and ast.dump(node) == self.dump:
            return True
        if isinstance(node, ast.Name):
            return node.id in self.names
        if isinstance(node, ast.Attribute):
            return node.attr in self.names
        return False


def negate(node: ast.expr) -> ast.expr:
    """Return the negation of a condition, simplified (``x < 0`` → ``x >= 0``).

    Args:
        node: The condition.

    Returns:
        A new expression that holds exactly when ``node`` does not.
    """
    inverse: dict[type[ast.cmpop], type[ast.cmpop]] = {
        ast.Eq: ast.NotEq,
        ast.NotEq: ast.Eq,
        ast.Lt: ast.GtE,
        ast.GtE: ast.Lt,
        ast.Gt: ast.LtE,
        ast.LtE: ast.Gt,
        ast.Is: ast.IsNot,
        ast.IsNot: ast.Is,
        ast.In: ast.NotIn,
        ast.NotIn: ast.In,
    }
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return ast.Compare(
            left=node.left, ops=[inverse[type(node.ops[0])]()], comparators=node.comparators
        )
    if isinstance(node, ast.BoolOp):
        flipped: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return ast.BoolOp(op=flipped, values=[negate(value) for value in node.values])
    return ast.UnaryOp(op=ast.Not(), operand=node)


def reach_condition(guard: Guard) -> ast.expr | None:
    """Return the condition under which the site runs, as far as one guard tells.

    Args:
        guard: A guard on the way to the site.

    Returns:
        The guard's condition when it leads to the site, its negation when the site runs
        after the guarded branch fails; None when the condition does not parse.
    """
    if guard.kind == "dict-lookup":
        container = lookup_container(guard)
        if container is None or not guard.subject:
            return None
        return parse_expression(f"{guard.subject} not in {container}")
    node = parse_expression(guard.text)
    if node is None:
        return None
    return node if guard.leads_to_site else negate(node)


def lookup_container(guard: Guard) -> str | None:
    """Return the mapping a ``dict-lookup`` guard looks its subject up in.

    Args:
        guard: The guard (``registry[name]``, ``registry.get(name)``, ``name not in registry``).

    Returns:
        The mapping's source text, or None when the guard does not show it.
    """
    node = parse_expression(guard.text)
    if node is None or not guard.subject:
        return None
    is_subject = _SubjectMatcher(guard.subject)
    for child in ast.walk(node):
        if isinstance(child, ast.Subscript) and is_subject(child.slice):
            return ast.unparse(child.value)
        if (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Attribute)
            and child.func.attr in ("get", "pop", "__getitem__")
            and child.args
            and is_subject(child.args[0])
        ):
            return ast.unparse(child.func.value)
        if (
            isinstance(child, ast.Compare)
            and len(child.ops) == 1
            and isinstance(child.ops[0], (ast.In, ast.NotIn))
            and is_subject(child.left)
        ):
            return ast.unparse(child.comparators[0])
    return None


def _literal_elements(node: ast.expr, constants: dict[str, list[Value]]) -> list[Value] | None:
    """The literal members of a tuple/list/set (or ``frozenset({...})``, or a named one)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        if node.func.id in ("frozenset", "set", "tuple", "list") and not node.keywords:
            return _literal_elements(node.args[0], constants)
        return None
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        values = [_value_of_node(element) for element in node.elts]
        return values if all(value.literal for value in values) else None
    if isinstance(node, ast.Dict) and all(key is not None for key in node.keys):
        keys = [_value_of_node(key) for key in node.keys if key is not None]
        return keys if all(value.literal for value in keys) else None
    return None


def _accepting_values(
    node: ast.expr, is_subject: _SubjectMatcher, constants: dict[str, list[Value]]
) -> list[Value] | None:
    """The values that make ``node`` true: an ``==``/``in`` test, or an ``or`` of them."""
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        found: list[Value] = []
        for part in node.values:
            values = _accepting_values(part, is_subject, constants)
            if values is None:
                return None
            found += values
        return found
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if is_subject(right) and isinstance(op, (ast.Eq, ast.Is)):
        left, right = right, left
    if not is_subject(left):
        return None
    if isinstance(op, ast.Eq) or (
        isinstance(op, ast.Is) and isinstance(right, ast.Attribute)  # `x is Mode.A`
    ):
        return [_value_of_node(right)]
    if isinstance(op, ast.In):
        return _literal_elements(right, constants)
    return None


def accepted_values(facts: CodeFacts) -> list[Value]:
    """Return the values the code accepts for the subject at the site.

    The extractor's ``accepted_values`` when it gives them; else the values of the guards on
    the subject that the site avoids (``if phase == "a": return …`` before a fall-through
    ``raise``; ``if mode not in ("a", "b"): raise``; the cases of a ``match``).

    Args:
        facts: The site's facts.

    Returns:
        The values, in the code's order, without duplicates; empty when unknown.
    """
    if facts.accepted_values:
        found = [value_of(text) for text in facts.accepted_values]
        return _unique(value for value in found if value is not None)
    subject = subject_of(facts)
    if subject is None:
        return []
    is_subject = _SubjectMatcher(subject)
    collected: list[Value] = []
    for guard in facts.guards:
        if guard.subject not in (None, subject):
            continue
        node = parse_expression(guard.text)
        if node is None:
            if guard.kind == "match" and not guard.leads_to_site:
                collected += [v for v in (value_of(text) for text in guard.values) if v]
            continue
        accepting = negate(node) if guard.leads_to_site else node
        values = _accepting_values(accepting, is_subject, {})
        if values is None and guard.values and _is_membership(accepting, is_subject):
            values = [v for v in (value_of(text) for text in guard.values) if v]
        if values:
            collected += values
    return _unique(collected)


def _is_membership(node: ast.expr, is_subject: _SubjectMatcher) -> bool:
    return (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.In)
        and is_subject(node.left)
    )


def _unique(values: Iterable[Value]) -> list[Value]:
    seen: dict[str, Value] = {}
    for value in values:
        seen.setdefault(value.code, value)
    return list(seen.values())


@dataclass(frozen=True)
class Signature:
    """The parameters of a function, as a call sees them.

    Attributes:
        positional: Parameters that may be passed by position, in order (``self`` included).
        positional_only: Those that may only be passed by position.
        keyword_only: Parameters after ``*``.
        required: Parameters without a default.
        defaults: The default's source text, by parameter.
        annotations: The annotation's source text, by parameter.
        var_positional: The function takes ``*args``.
        var_keyword: The function takes ``**kwargs``.
    """

    positional: tuple[str, ...] = ()
    positional_only: frozenset[str] = frozenset()
    keyword_only: tuple[str, ...] = ()
    required: frozenset[str] = frozenset()
    defaults: tuple[tuple[str, str], ...] = ()
    annotations: tuple[tuple[str, str], ...] = ()
    var_positional: bool = False
    var_keyword: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """Every named parameter."""
        return self.positional + self.keyword_only

    @property
    def keyword_names(self) -> frozenset[str]:
        """The parameters a keyword argument may name."""
        return frozenset(self.names) - self.positional_only

    def annotation(self, name: str) -> str | None:
        """Return a parameter's annotation text, if any."""
        return dict(self.annotations).get(name)

    def default(self, name: str) -> str | None:
        """Return a parameter's default text, if any."""
        return dict(self.defaults).get(name)


def signature_of(facts: CodeFacts) -> Signature | None:
    """Return the signature of the site's function.

    Read from ``facts.signature`` when it parses, else from ``facts.parameters``.

    Args:
        facts: The site's facts.

    Returns:
        The signature, or None when the facts do not show it.
    """
    if facts.signature:
        parsed = _parse_signature(facts.signature)
        if parsed is not None:
            return parsed
    if not facts.parameters:
        return None
    positional: list[str] = []
    keyword_only: list[str] = []
    positional_only: set[str] = set()
    required: set[str] = set()
    defaults: list[tuple[str, str]] = []
    annotations: list[tuple[str, str]] = []
    var_positional = var_keyword = False
    after_star = False
    for parameter in facts.parameters:
        name = parameter.name
        if name == "/":
            positional_only.update(positional)
            continue
        if name == "*":
            after_star = True
            continue
        if name.startswith("**"):
            var_keyword = True
            continue
        if name.startswith("*"):
            var_positional = after_star = True
            continue
        (keyword_only if after_star else positional).append(name)
        if parameter.default is None:
            required.add(name)
        else:
            defaults.append((name, parameter.default))
        if parameter.annotation is not None:
            annotations.append((name, parameter.annotation))
    return Signature(
        positional=tuple(positional),
        positional_only=frozenset(positional_only),
        keyword_only=tuple(keyword_only),
        required=frozenset(required),
        defaults=tuple(defaults),
        annotations=tuple(annotations),
        var_positional=var_positional,
        var_keyword=var_keyword,
    )


def _parse_signature(text: str) -> Signature | None:
    cleaned = re.sub(r"^\s*(?:async\s+)?def\s+", "", text.strip()).removesuffix(":").strip()
    if cleaned.startswith("("):
        cleaned = "_function" + cleaned
    try:
        module = parse_bounded(f"def {cleaned}:\n    pass\n")
    except SyntaxError:
        return None
    if not isinstance(module, ast.Module) or len(module.body) != 1:
        return None
    function = module.body[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    arguments = function.args
    positional_nodes = [*arguments.posonlyargs, *arguments.args]
    positional_defaults = [None] * (len(positional_nodes) - len(arguments.defaults)) + list(
        arguments.defaults
    )
    defaults: list[tuple[str, str]] = []
    required: set[str] = set()
    for argument, default in zip(positional_nodes, positional_defaults, strict=True):
        if default is None:
            required.add(argument.arg)
        else:
            defaults.append((argument.arg, ast.unparse(default)))
    for argument, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if kw_default is None:
            required.add(argument.arg)
        else:
            defaults.append((argument.arg, ast.unparse(kw_default)))
    annotations = [
        (argument.arg, ast.unparse(argument.annotation))
        for argument in [*positional_nodes, *arguments.kwonlyargs]
        if argument.annotation is not None
    ]
    return Signature(
        positional=tuple(argument.arg for argument in positional_nodes),
        positional_only=frozenset(argument.arg for argument in arguments.posonlyargs),
        keyword_only=tuple(argument.arg for argument in arguments.kwonlyargs),
        required=frozenset(required),
        defaults=tuple(defaults),
        annotations=tuple(annotations),
        var_positional=arguments.vararg is not None,
        var_keyword=arguments.kwarg is not None,
    )


def function_name(record: ErrorRecord, facts: CodeFacts | None) -> str | None:
    """Return the short name of the site's function (``Scheduler.run`` → ``run``)."""
    name = (facts.function if facts else None) or record.function
    if not name or name.startswith("<"):
        return None
    return name.rsplit(".", 1)[-1]


def class_name_of(record: ErrorRecord, facts: CodeFacts | None) -> str | None:
    """Return the class the site's function belongs to, when it is a method."""
    if facts is not None and facts.class_name:
        return facts.class_name
    if record.function and "." in record.function:
        owner = record.function.rsplit(".", 2)[-2]
        return owner if owner[:1].isupper() else None
    return None


def exception_ancestors(name: str) -> list[str]:
    """Return a builtin exception class's ancestors, itself first (empty when not builtin)."""
    found = _BUILTIN_EXCEPTIONS.get(name.rsplit(".", 1)[-1])
    if found is None:
        return []
    return [cls.__name__ for cls in found.__mro__ if issubclass(cls, BaseException)]


# ---------------------------------------------------------------------------------------------
# The verifier
# ---------------------------------------------------------------------------------------------

_CLASS_WORD = re.compile(
    r"\b(?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)|StopIteration"
    r"|StopAsyncIteration|KeyboardInterrupt|SystemExit|GeneratorExit)\b"
)
_QUOTED = re.compile(r"""(?<![\w'"\\])(['"])([^'"\n]{1,120}?)\1(?![\w])""")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_CALL_BEFORE = re.compile(r"[A-Za-z_][\w.]*\(\s*$")
_FILE_LIKE = re.compile(
    r"[/\\]|\.(?:py|pyi|txt|json|ya?ml|toml|cfg|ini|md|rst|so|dll|dylib|csv|log|html|sh)$",
    re.IGNORECASE,
)
_POSITIVE = re.compile(
    r"\b(?:accept(?:s|ed|able)?|valid|recogni[sz](?:e|es|ed)|support(?:s|ed)?|allow(?:s|ed)?"
    r"|permitted|one of|only|known|expected|legal|possible values?|choices?)\b",
    re.IGNORECASE,
)
_NEGATED_POSITIVE = re.compile(
    r"\b(?:not|never|no longer)\s+(?:\w+\s+)?(?:accept(?:s|ed|able)?|valid|recogni[sz](?:e|es|ed)"
    r"|support(?:s|ed)?|allow(?:s|ed)?|permitted|known|expected|handled)\b|n't\s+(?:\w+\s+)?"
    r"(?:accept\w*|recogni\w*|support\w*|allow\w*|handle\w*)",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"\b(?:not|no|none|never|unknown|invalid|unsupported|unrecogni[sz]ed|other|others|typos?"
    r"|fails?|failed|instead|rather|wrong|bad|misspel\w*|reject\w*|trigger\w*|raises?|raised"
    r"|deprecated|removed|old|legacy|without|except|unlike|neither|nor)\b|n't\b",
    re.IGNORECASE,
)
_STRONG_NEGATIVE = re.compile(
    r"\b(?:unknown|invalid|unsupported|unrecogni[sz]ed|rejected|rejects)\b", re.IGNORECASE
)
_COMPLEMENT = re.compile(
    r"\b(?:outside(?: of)?|other than|apart from|besides|anything but|beyond|except(?: for)?"
    r"|not (?:one )?(?:of|in|among))\b[^'\"\n]{0,40}['\"]",
    re.IGNORECASE,
)
"""Words before a list of values that make them the ones left out ("outside 'a', 'b'")."""
_WINDOW = 120  # characters of context read around a quoted literal
_MARKER = re.compile(r"^\s*#\s*(before|after)\b", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class _Context:
    record: ErrorRecord
    facts: CodeFacts | None
    subject: str | None
    function: str | None
    callee_names: frozenset[str]
    signature: Signature | None
    accepted: tuple[Value, ...]
    checkable: bool
    allowed_classes: frozenset[str]
    hierarchy_known: bool
    template_literals: tuple[str, ...]
    skip_words: frozenset[str]

    @classmethod
    def build(cls, record: ErrorRecord, facts: CodeFacts | None) -> _Context:
        subject = subject_of(facts) if facts else None
        accepted = tuple(accepted_values(facts)) if facts else ()
        checkable = bool(accepted) and all(value.literal for value in accepted)
        function = function_name(record, facts)
        owner = class_name_of(record, facts)
        callees = {function} if function else set()
        if function == "__init__" and owner:
            callees = {owner}
        signature = signature_of(facts) if facts else None
        allowed, known = _allowed_classes(record, facts)
        literals = tuple(
            part.strip()
            for part in re.split(r"\{[^{}]*\}", record.error_message)
            if len(part.strip()) >= 4
        )
        skip = {name for name in (subject, short_name(subject), function) if name}
        if signature is not None:
            skip.update(signature.names)
        return cls(
            record=record,
            facts=facts,
            subject=subject,
            function=function,
            callee_names=frozenset(callees),
            signature=signature,
            accepted=accepted,
            checkable=checkable,
            allowed_classes=frozenset(allowed),
            hierarchy_known=known,
            template_literals=literals,
            skip_words=frozenset(skip),
        )

    def is_accepted(self, value: object) -> bool:
        return any(candidate.same(value) for candidate in self.accepted)

    @property
    def accepted_text(self) -> str:
        return ", ".join(value.code for value in self.accepted)

    @property
    def where(self) -> str:
        return f"`{self.function}`" if self.function else "the code"


def _allowed_classes(record: ErrorRecord, facts: CodeFacts | None) -> tuple[set[str], bool]:
    raised = record.error_class.rsplit(".", 1)[-1]
    allowed = {raised}
    known = bool(exception_ancestors(raised)) or record.kind is SiteKind.LOG
    bases = list(facts.exception_bases) if facts else []
    caught = list(facts.caught) if facts else []
    known = known or bool(bases)
    for name in [raised, *bases, *caught]:
        short = name.rsplit(".", 1)[-1]
        allowed.add(short)
        allowed.update(exception_ancestors(short))
    if not exception_ancestors(raised) and not any(exception_ancestors(b) for b in bases):
        allowed.update({"Exception", "BaseException"})  # a custom class's root is not shown
    if record.kind is SiteKind.LOG:
        allowed.update({"Exception", "BaseException"})
    texts = [record.error_message]
    if facts is not None:
        texts += [guard.text for guard in facts.guards]
    for text in texts:
        allowed.update(match.group(1) for match in _CLASS_WORD.finditer(text))
    return allowed, known


def verify(record: ErrorRecord, facts: CodeFacts | None = None) -> list[Claim]:
    """Check a record's prose and code fields against the facts of its site.

    Args:
        record: The record to check.
        facts: The facts to check against; the record's own ``facts`` when None. Without
            facts, only parsing and the raised class are checked.

    Returns:
        The findings, in field order; empty when nothing contradicts the facts.
    """
    context = _Context.build(record, facts if facts is not None else record.facts)
    claims: list[Claim] = []
    for name in (*PROSE_FIELDS, *CODE_FIELDS):
        for text in _field_texts(record, name):
            if name in CODE_FIELDS:
                if record.language != "python":
                    continue  # code in another language: not checkable as Python
                claims += _check_code(name, text, context)
            else:
                claims += _check_prose(name, text, context)
    unique: dict[tuple[str, str, str], Claim] = {}
    for claim in claims:
        unique.setdefault((claim.field, claim.text, claim.verdict), claim)
    return list(unique.values())


def _field_texts(record: ErrorRecord, name: str) -> list[str]:
    value = getattr(record, _ATTRIBUTES[name])
    if value is None:
        return []
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str) and item.strip()]
    return [value] if isinstance(value, str) and value.strip() else []


def _claim(field: str, text: str, verdict: Verdict, reason: str) -> Claim:
    return Claim(field=field, text=text, verdict=verdict.value, reason=reason)


# --- classes -----------------------------------------------------------------------------------


def _code_words(code: str) -> str:
    """The names, operators and comments of code, without its string literals."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    kept = (tokenize.NAME, tokenize.OP, tokenize.COMMENT)
    return " ".join(token.string for token in tokens if token.type in kept)


def _prose_words(text: str) -> str:
    """Prose without its quoted single words (values such as ``'AError'``, not classes)."""
    return _QUOTED.sub(lambda match: " " if " " not in match.group(2) else match.group(0), text)


def _check_classes(field: str, text: str, context: _Context) -> list[Claim]:
    claims: list[Claim] = []
    raised = context.record.error_class
    words = _code_words(text) if field in CODE_FIELDS else _prose_words(text)
    for match in _CLASS_WORD.finditer(words):
        name = match.group(1)
        if name in context.allowed_classes:
            continue
        provable = context.hierarchy_known and name in _BUILTIN_EXCEPTIONS
        subclass = raised.rsplit(".", 1)[-1] in exception_ancestors(name)
        verdict = Verdict.CONTRADICTED if provable and not subclass else Verdict.UNSUPPORTED
        if context.record.kind is SiteKind.LOG:
            what = f"the code logs at {raised} level and raises nothing"
        else:
            what = f"the code raises {raised}"
        reason = f"{what}; {name} is not that class, one of its bases or a caught class"
        claims.append(_claim(field, name, verdict, reason + "."))
    return claims


# --- prose -------------------------------------------------------------------------------------


def _sentences(text: str) -> Iterator[str]:
    for sentence in _SENTENCE_END.split(text):
        if sentence.strip():
            yield sentence


def _value_like(literal: str, sentence: str, start: int, context: _Context) -> bool:
    """Whether a quoted literal in prose can be a value of the subject."""
    if not literal.strip() or "{" in literal or literal in context.skip_words:
        return False
    if literal == context.record.error_message or any(
        part in literal for part in context.template_literals
    ):
        return False
    if _CALL_BEFORE.search(sentence[max(0, start - _WINDOW) : start]):
        return False  # a call's argument in prose: `ValueError('Unknown phase')`
    if _FILE_LIKE.search(literal):
        return False
    has_space = any(
        isinstance(value.value, str) and re.search(r"\s", value.value) for value in context.accepted
    )
    return not (re.search(r"\s", literal) and not has_space)


_CONNECTORS = (
    r"is|are|was|be|must|should|can|may|only|always|to|as|such|like|e\.g\.|eg|i\.e\.|ie"
    r"|including|of|one|either|any|a|an|the|this|that|not|no|never|valid|invalid|known"
    r"|unknown|accepted|allowed|supported|unsupported|recogni[sz]ed|unrecogni[sz]ed|legal"
    r"|expected|values?|names?|strings?|set|equal|equals|than|other|besides|except|but"
)
_LIST_JOIN = re.compile(r"^[\s,;/]*(?:(?:and|or|nor)\b[\s,]*)?$", re.IGNORECASE)


def _tokens(text: str) -> set[str]:
    return {token for token in re.split(r"[\W_]+", text.lower()) if len(token) >= 3}


def _subject_literals(sentence: str, context: _Context) -> list[str]:
    """The quoted literals of a sentence that stand for values of the subject.

    A literal counts when it is in one list with an accepted value, when it is tied to the
    subject's name by nothing but connective words (``phase must be one of 'x'``, ``'x' is not
    a valid phase``), or when it shares a word with an accepted value (``'decode'`` and
    ``'draft_decode'``). Anything else quoted (a package, a file, another noun's values) is not.
    """
    found = [
        (match.group(2), match.start(), match.end())
        for match in _QUOTED.finditer(sentence)
        if _value_like(match.group(2), sentence, match.start(), context)
    ]
    if not found:
        return []
    groups: list[list[tuple[str, int, int]]] = [[found[0]]]
    for item in found[1:]:
        if _LIST_JOIN.match(sentence[groups[-1][-1][2] : item[1]]):
            groups[-1].append(item)
        else:
            groups.append([item])
    word = short_name(context.subject)
    name = rf"\b{re.escape(word)}s?\b" if word else None
    before = re.compile(rf"{name}(?:[\s:=(,]|\b(?:{_CONNECTORS})\b)*$", re.I) if name else None
    after = re.compile(rf"^(?:[\s:,)]|\b(?:{_CONNECTORS})\b)*{name}", re.I) if name else None
    accepted_tokens = set().union(
        *(_tokens(value.value) for value in context.accepted if isinstance(value.value, str))
    )
    literals: list[str] = []
    for group in groups:
        tied = any(context.is_accepted(literal) for literal, _, _ in group)
        # Connective phrases are short: a bounded window keeps long prose linear.
        start, end = group[0][1], group[-1][2]
        tied = tied or bool(before and before.search(sentence[max(0, start - _WINDOW) : start]))
        tied = tied or bool(after and after.search(sentence[end : end + _WINDOW]))
        for literal, _, _ in group:
            if tied or _tokens(literal) & accepted_tokens:
                literals.append(literal)
    return literals


def _check_prose(field: str, text: str, context: _Context) -> list[Claim]:
    claims = _check_classes(field, text, context)
    claims += _check_prose_calls(field, text, context)
    if not context.checkable or not any(isinstance(v.value, str) for v in context.accepted):
        return claims
    for raw in _sentences(text):
        sentence, spans = _split_code_spans(raw)
        if field == "triggerScenarios":
            claims += _check_trigger_spans(spans, context)
        literals = _subject_literals(sentence, context)
        if not literals:
            continue
        stripped = _NEGATED_POSITIVE.sub(" ", sentence)
        negated_phrase = stripped != sentence
        positive = bool(_POSITIVE.search(stripped))
        negative = bool(_NEGATIVE.search(stripped)) or negated_phrase
        strong = bool(_STRONG_NEGATIVE.search(sentence)) or negated_phrase
        if _COMPLEMENT.search(sentence):
            polarity = "accepted"
        elif field == "triggerScenarios":
            polarity = "accepted" if positive and not negative else "rejected"
        elif positive and not negative:
            polarity = "accepted"
        elif strong and not positive:
            polarity = "rejected"
        else:
            continue
        for literal in literals:
            accepted = context.is_accepted(literal)
            if polarity == "accepted" and not accepted:
                claims.append(
                    _claim(
                        field,
                        repr(literal),
                        Verdict.CONTRADICTED,
                        f"{context.where} does not accept {literal!r} for "
                        f"`{context.subject}`; it accepts {context.accepted_text}.",
                    )
                )
            elif polarity == "rejected" and accepted:
                claims.append(
                    _claim(
                        field,
                        repr(literal),
                        Verdict.CONTRADICTED,
                        f"{context.where} accepts {literal!r} for `{context.subject}`, so "
                        "it does not lead to this error.",
                    )
                )
    return claims


_CODE_SPAN = re.compile(r"``\s?([^\n]+?)\s?``|`([^`\n]+)`")


def _split_code_spans(sentence: str) -> tuple[str, list[ast.expr]]:
    """Replace the code spans of a sentence; a span that is a bare literal stays a literal.

    Returns:
        The sentence with each other span replaced by ``…``, and those spans parsed.
    """
    spans: list[ast.expr] = []

    def replace(match: re.Match[str]) -> str:
        node = parse_expression(match.group(1) or match.group(2))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return repr(node.value)
        if node is not None:
            spans.append(node)
        return "\u2026"

    return _CODE_SPAN.sub(replace, sentence), spans


def _check_trigger_spans(spans: list[ast.expr], context: _Context) -> list[Claim]:
    """In ``triggerScenarios`` a condition in code is one under which the error happens."""
    claims: list[Claim] = []
    is_subject = _SubjectMatcher(context.subject)
    for node in spans:
        out = _ValueClaims([], [], [])
        _collect(node, False, is_subject, {}, out)
        for value in out.rejected:
            if context.is_accepted(value.value):
                claims.append(
                    _claim(
                        "triggerScenarios",
                        value.code,
                        Verdict.CONTRADICTED,
                        f"{context.where} accepts {value.code} for `{context.subject}`, so "
                        f"`{ast.unparse(node)}` does not describe this error.",
                    )
                )
    return claims


def _balanced_calls(text: str, names: Iterable[str]) -> Iterator[str]:
    for name in names:
        for match in re.finditer(rf"(?<![\w.])(?:[A-Za-z_]\w*\.)*{re.escape(name)}\(", text):
            depth = 0
            for index in range(match.end() - 1, min(len(text), match.end() + 600)):
                if text[index] == "(":
                    depth += 1
                elif text[index] == ")":
                    depth -= 1
                    if depth == 0:
                        yield text[match.start() : index + 1]
                        break


def _check_prose_calls(field: str, text: str, context: _Context) -> list[Claim]:
    claims: list[Claim] = []
    for snippet in _balanced_calls(text, context.callee_names):
        try:
            tree = parse_bounded(snippet, "eval")
        except SyntaxError:
            continue
        claims += _check_calls(field, tree, context)
        if field == "triggerScenarios" and context.checkable:
            for value in _call_subject_values(tree, context):
                if context.is_accepted(value.value):
                    claims.append(
                        _claim(
                            field,
                            value.code,
                            Verdict.CONTRADICTED,
                            f"{context.where} accepts {value.code} for `{context.subject}`, "
                            "so that call does not lead to this error.",
                        )
                    )
    return claims


# --- code --------------------------------------------------------------------------------------


def parse_lenient(code: str) -> tuple[ast.Module, SyntaxError | None]:
    """Parse code; when it does not parse, keep the lines that parse on their own.

    Args:
        code: Python source.

    Returns:
        The module (whole, or assembled from the statements that parse line by line) and the
        syntax error of the whole, if any.
    """
    try:
        tree = parse_bounded(code)
        if isinstance(tree, ast.Module):
            return tree, None
        failure = SyntaxError("not a module")
    except SyntaxError as error:
        failure = error
    body: list[ast.stmt] = []
    for line in code.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        candidates = [stripped]
        if stripped.endswith(":"):
            candidates.append(stripped + "\n    pass")
        for candidate in candidates:
            try:
                parsed = parse_bounded(candidate)
            except SyntaxError:
                continue
            if isinstance(parsed, ast.Module):
                body += parsed.body
            break
    return ast.Module(body=body, type_ignores=[]), failure


def _check_code(field: str, code: str, context: _Context) -> list[Claim]:
    tree, failure = parse_lenient(code)
    claims: list[Claim] = []
    if failure is not None:
        line = failure.lineno or 1
        lines = code.splitlines()
        shown = lines[line - 1].strip() if 0 < line <= len(lines) else code.strip()[:80]
        claims.append(
            _claim(
                field,
                shown,
                Verdict.UNPARSABLE,
                f"{field} is not valid Python: {failure.msg} (line {line}).",
            )
        )
    claims += _check_classes(field, code, context)
    claims += _check_calls(field, tree, context)
    if not context.checkable or context.subject is None:
        return claims
    if field in ("validationCode", "typeGuard"):
        claims += _check_validation_values(field, tree, context)
    elif field == "exampleFix":
        claims += _check_example_values(code, context)
    return claims


def _callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _function_calls(tree: ast.AST, context: _Context) -> Iterator[ast.Call]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in context.callee_names:
            yield node


def _check_calls(field: str, tree: ast.AST, context: _Context) -> list[Claim]:
    signature = context.signature
    if signature is None:
        return []
    claims: list[Claim] = []
    parameters = ", ".join(signature.names) or "none"
    for call in _function_calls(tree, context):
        if not signature.var_keyword:
            for keyword in call.keywords:
                if keyword.arg is not None and keyword.arg not in signature.keyword_names:
                    claims.append(
                        _claim(
                            field,
                            keyword.arg,
                            Verdict.CONTRADICTED,
                            f"{context.where} has no parameter `{keyword.arg}` that a keyword "
                            f"can name (its parameters: {parameters}).",
                        )
                    )
        if signature.var_positional or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        capacity = len(signature.positional)
        if signature.positional[:1] in (("self",), ("cls",)):
            capacity -= 1
        if len(call.args) > capacity:
            claims.append(
                _claim(
                    field,
                    ast.unparse(call),
                    Verdict.CONTRADICTED,
                    f"{context.where} takes at most {capacity} positional arguments "
                    f"({parameters}); the call passes {len(call.args)}.",
                )
            )
    return claims


def _call_subject_values(tree: ast.AST, context: _Context) -> list[Value]:
    """Literal values a call of the function passes for the subject."""
    subject = short_name(context.subject)
    values: list[Value] = []
    if subject is None:
        return values
    signature = context.signature
    for call in _function_calls(tree, context):
        for keyword in call.keywords:
            if keyword.arg == subject:
                values.append(_value_of_node(keyword.value))
        if signature is not None and subject in signature.positional:
            index = signature.positional.index(subject)
            if signature.positional[:1] in (("self",), ("cls",)):
                index -= 1
            if 0 <= index < len(call.args) and not any(
                isinstance(argument, ast.Starred) for argument in call.args[: index + 1]
            ):
                values.append(_value_of_node(call.args[index]))
    return [value for value in values if value.literal]


def _constant_sets(tree: ast.AST) -> dict[str, list[Value]]:
    constants: dict[str, list[Value]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                elements = _literal_elements(node.value, {})
                if elements is not None:
                    constants[target.id] = elements
    return constants


@dataclass
class _ValueClaims:
    accepted: list[Value]
    rejected: list[Value]
    groups: list[list[Value]]


def _collect(
    node: ast.expr,
    accepting: bool,
    is_subject: _SubjectMatcher,
    constants: dict[str, list[Value]],
    out: _ValueClaims,
) -> None:
    """Gather the values a condition treats as valid (``accepting``: true means valid)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        _collect(node.operand, not accepting, is_subject, constants, out)
        return
    if isinstance(node, ast.BoolOp):
        for part in node.values:
            _collect(part, accepting, is_subject, constants, out)
        return
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return
    left, right, op = node.left, node.comparators[0], node.ops[0]
    if is_subject(right) and isinstance(op, (ast.Eq, ast.NotEq)):
        left, right = right, left
    if not is_subject(left):
        return
    if isinstance(op, (ast.In, ast.NotIn)):
        elements = _literal_elements(right, constants)
        if elements is None:
            return
        valid = accepting == isinstance(op, ast.In)
        (out.accepted if valid else out.rejected).extend(elements)
        if valid:
            out.groups.append(elements)
    elif isinstance(op, (ast.Eq, ast.NotEq)):
        literal = _value_of_node(right)
        if not literal.literal:
            return
        valid = accepting == isinstance(op, ast.Eq)
        (out.accepted if valid else out.rejected).append(literal)


def _body_verdict(body: Sequence[ast.stmt]) -> bool | None:
    """True when a branch body accepts (``return True``), False when it rejects."""
    for statement in body:
        if isinstance(statement, ast.Raise):
            return False
        if isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant):
            if statement.value.value is True:
                return True
            if statement.value.value is False:
                return False
    return None


def _check_validation_values(field: str, tree: ast.Module, context: _Context) -> list[Claim]:
    aliases = [
        node.args.args[0].arg
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.args.args
    ]
    is_subject = _SubjectMatcher(context.subject, aliases)
    constants = _constant_sets(tree)
    out = _ValueClaims([], [], [])
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            _collect(node.test, True, is_subject, constants, out)
        elif isinstance(node, ast.If):
            verdict = _body_verdict(node.body)
            if verdict is None and node.orelse:
                other = _body_verdict(node.orelse)
                verdict = None if other is None else not other
            if verdict is not None:
                _collect(node.test, verdict, is_subject, constants, out)
        elif isinstance(node, ast.Return) and node.value is not None:
            _collect(node.value, True, is_subject, constants, out)
    claims: list[Claim] = []
    for value in out.accepted:
        if not context.is_accepted(value.value):
            claims.append(
                _claim(
                    field,
                    value.code,
                    Verdict.CONTRADICTED,
                    f"{field} treats {value.code} as valid for `{context.subject}`, but "
                    f"{context.where} accepts only {context.accepted_text}.",
                )
            )
    for value in out.rejected:
        if context.is_accepted(value.value):
            claims.append(
                _claim(
                    field,
                    value.code,
                    Verdict.CONTRADICTED,
                    f"{field} rejects {value.code}, which {context.where} accepts for "
                    f"`{context.subject}`.",
                )
            )
    for group in out.groups:
        for accepted in context.accepted:
            if not any(accepted.same(value.value) for value in group):
                claims.append(
                    _claim(
                        field,
                        accepted.code,
                        Verdict.CONTRADICTED,
                        f"{field} would reject {accepted.code}, which {context.where} "
                        f"accepts for `{context.subject}`.",
                    )
                )
    return claims


def example_sections(code: str) -> tuple[str, str] | None:
    """Split an ``exampleFix`` into its ``# before`` and ``# after`` parts.

    Args:
        code: The example.

    Returns:
        The two parts' text, or None when the example has no such markers.
    """
    markers = list(_MARKER.finditer(code))
    befores = [m for m in markers if m.group(1).lower() == "before"]
    afters = [m for m in markers if m.group(1).lower() == "after"]
    if not befores or not afters or afters[0].start() < befores[0].start():
        return None
    return code[befores[0].end() : afters[0].start()], code[afters[0].end() :]


def _section_values(text: str, context: _Context) -> list[Value]:
    tree, _ = parse_lenient(text)
    values = _call_subject_values(tree, context)
    subject = short_name(context.subject)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)) and short_name(
                    ast.unparse(target)
                ) == (subject or ""):
                    value = _value_of_node(node.value)
                    if value.literal:
                        values.append(value)
    return values


def _check_example_values(code: str, context: _Context) -> list[Claim]:
    sections = example_sections(code)
    if sections is None:
        return []
    before, after = sections
    claims: list[Claim] = []
    for value in _section_values(before, context):
        if context.is_accepted(value.value):
            claims.append(
                _claim(
                    "exampleFix",
                    value.code,
                    Verdict.CONTRADICTED,
                    f"the 'before' code passes {value.code}, which {context.where} accepts "
                    f"for `{context.subject}`, so it does not fail here.",
                )
            )
    for value in _section_values(after, context):
        if not context.is_accepted(value.value):
            claims.append(
                _claim(
                    "exampleFix",
                    value.code,
                    Verdict.CONTRADICTED,
                    f"the 'after' code passes {value.code}, which {context.where} does not "
                    f"accept for `{context.subject}` (it accepts {context.accepted_text}).",
                )
            )
    return claims


# ---------------------------------------------------------------------------------------------
# Many records
# ---------------------------------------------------------------------------------------------


class VerifyReport(BaseModel):
    """What verifying a set of records found.

    Attributes:
        records: Records checked.
        flagged: Records with at least one claim.
        claims: Claims in all.
        by_verdict: Claims by verdict (every verdict present, zero when none).
        by_field: Claims by field.
        findings: The claims of each flagged record, by record id.
    """

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    records: int = 0
    flagged: int = 0
    claims: int = 0
    by_verdict: dict[str, int] = Field(default_factory=dict)
    by_field: dict[str, int] = Field(default_factory=dict)
    findings: dict[str, list[Claim]] = Field(default_factory=dict)


def verify_many(records: Iterable[ErrorRecord]) -> VerifyReport:
    """Verify records against their own facts and count what was found.

    Args:
        records: The records (each checked against its ``facts``).

    Returns:
        The counts, and the claims of each record that has any.
    """
    checked = 0
    findings: dict[str, list[Claim]] = {}
    verdicts: Counter[str] = Counter({verdict.value: 0 for verdict in Verdict})
    fields: Counter[str] = Counter()
    for record in records:
        checked += 1
        claims = verify(record)
        if claims:
            findings.setdefault(record.id, []).extend(claims)
        verdicts.update(claim.verdict for claim in claims)
        fields.update(claim.field for claim in claims)
    return VerifyReport(
        records=checked,
        flagged=len(findings),
        claims=sum(len(claims) for claims in findings.values()),
        by_verdict=dict(verdicts),
        by_field=dict(fields),
        findings=findings,
    )
