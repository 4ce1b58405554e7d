"""The offline writer: narratives built from code facts, checked by running and parsing them."""

from __future__ import annotations

import ast
import re
import types
from datetime import datetime, timezone
from typing import Any

import pytest
from conftest import seed_fixture_source, seed_site_facts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from errdex.analyze.verify import accepted_values, example_sections, verify
from errdex.analyze.writer import Shape, analyse, enrich_offline, write_offline
from errdex.models import (
    CodeFacts,
    ErrorRecord,
    ErrorType,
    Guard,
    HandlingStrategy,
    Location,
    MessageTemplate,
    Severity,
    SiteKind,
    TemplatePart,
)

ACCEPTED = ("draft_decode", "draft_extend", "target_verify")
CODE_FIELDS = ("example_fix", "validation_code", "type_guard", "try_catch_pattern")
PROSE_FIELDS = ("documentation", "trigger_scenarios", "common_situations")
NARRATIVE_FIELDS = (
    "documentation",
    "trigger_scenarios",
    "common_situations",
    "solutions",
    "example_fix",
    "validation_code",
    "type_guard",
    "try_catch_pattern",
    "prevention_tips",
)


def seed_facts(*, with_accepted: bool = True) -> CodeFacts:
    """The facts of the seed's site, as they read in its code (lines 114–124)."""
    return seed_site_facts() if with_accepted else seed_site_facts(accepted_values=[])


@pytest.fixture
def seed_record(seed: dict[str, Any]) -> ErrorRecord:
    return ErrorRecord.model_validate(seed["record"]).model_copy(update={"facts": seed_facts()})


def template(text: str) -> MessageTemplate:
    parts = [
        TemplatePart(text=piece, hole=bool(index % 2))
        for index, piece in enumerate(re.split(r"\{([^{}]*)\}", text))
        if piece
    ]
    return MessageTemplate(parts=tuple(parts))


_CLASSIFICATION = {
    "ValueError": (ErrorType.VALIDATION, HandlingStrategy.VALIDATION, "invalid-enum-value"),
    "TypeError": (ErrorType.TYPE, HandlingStrategy.VALIDATION, "type-mismatch"),
    "KeyError": (ErrorType.NOT_FOUND, HandlingStrategy.VALIDATION, "missing-key"),
    "ImportError": (ErrorType.DEPENDENCY, HandlingStrategy.INSTALL, "missing-dependency"),
    "RuntimeError": (ErrorType.STATE, HandlingStrategy.PROPAGATE, "invalid-state"),
    "DeprecationWarning": (ErrorType.DEPRECATION, HandlingStrategy.UPGRADE, "version-mismatch"),
    "HTTPException": (ErrorType.NOT_FOUND, HandlingStrategy.VALIDATION, "missing-key"),
}


def make_record(
    message: str,
    *,
    error_class: str = "ValueError",
    kind: SiteKind = SiteKind.RAISE,
    facts: CodeFacts | None = None,
    function: str | None = None,
    severity: Severity = Severity.ERROR,
    http_status: int | None = None,
    **fields: Any,
) -> ErrorRecord:
    """A record for one site, built directly (the classifier is not under test here)."""
    error_type, strategy, background = _CLASSIFICATION.get(
        error_class, (ErrorType.INTERNAL, HandlingStrategy.PROPAGATE, "invalid-state")
    )
    values: dict[str, Any] = {
        "id": "0123456789abcdef",
        "repo": "owner/repo",
        "slug": "slug",
        "error_message": message,
        "message_pattern": re.escape(message),
        "error_type": error_type,
        "error_class": error_class,
        "http_status": http_status,
        "severity": severity,
        "file_path": "pkg/module.py",
        "line_number": 40,
        "source_code": "...",
        "source_code_start": 22,
        "source_code_end": 58,
        "handling_strategy": strategy,
        "background_tag": background,
        "analyzed_at": datetime(2026, 1, 1, tzinfo=timezone.utc),
        "kind": kind,
        "template": template(message),
        "opaque": not template(message).literal_length,
        "function": function or (facts.function if facts else None),
        "facts": facts,
    }
    values.update(fields)
    return ErrorRecord(**values)


def facts_for(function: str, *parameters: str, **fields: Any) -> CodeFacts:
    return CodeFacts(function=function, signature=f"{function}({', '.join(parameters)})", **fields)


def defined_function(code: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    functions = [
        value
        for name, value in namespace.items()
        if isinstance(value, types.FunctionType) and not name.startswith("__")
    ]
    assert len(functions) == 1
    return functions[0]


def calls_of(code: str, name: str) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    ]


def keyword_value(call: ast.Call, name: str) -> Any:
    for keyword in call.keywords:
        if keyword.arg == name:
            return ast.literal_eval(keyword.value)
    raise AssertionError(f"no {name}= in {ast.unparse(call)}")


def assert_code_parses(narrative: Any) -> None:
    for field in CODE_FIELDS:
        code = getattr(narrative, field)
        if code is not None:
            ast.parse(code)


# --- the seed site ------------------------------------------------------------------------------


@pytest.fixture
def seed_module(seed: dict[str, Any]) -> dict[str, Any]:
    """The seed's real function, run with stand-ins for what it reads."""
    spec = types.SimpleNamespace(speculative_eagle_topk=4, speculative_num_draft_tokens=8)
    namespace: dict[str, Any] = {
        "get_spec": lambda: spec,
        "torch": types.SimpleNamespace(Tensor=object),
        "spec_algorithm": types.SimpleNamespace(
            get_num_tokens_per_req_for_target_verify=lambda tokens, is_draft: tokens
        ),
    }
    exec(compile(seed_fixture_source(seed["record"]), "spec_utils.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("with_accepted", [True, False], ids=["extractor-values", "from-guards"])
def test_seed_documentation_names_the_accepted_phases(
    seed_record: ErrorRecord, with_accepted: bool
) -> None:
    record = seed_record.model_copy(update={"facts": seed_facts(with_accepted=with_accepted)})
    narrative = write_offline(record)
    text = narrative.documentation
    for value in ACCEPTED:
        assert repr(value) in text
    assert "resolve_num_tokens_per_req" in text
    assert "`phase`" in text
    assert "ValueError" in text
    assert "'decode'" not in " ".join([text, *narrative.solutions])
    assert any(all(repr(value) in item for value in ACCEPTED) for item in narrative.solutions)


def test_seed_validation_code_accepts_exactly_the_accepted_phases(seed_record: ErrorRecord) -> None:
    code = write_offline(seed_record).validation_code
    assert code is not None
    for value in ACCEPTED:
        exec(code, {"phase": value})
    for value in ("decode", "draft", "target-verify", "DRAFT_DECODE", "", None, 3):
        with pytest.raises(ValueError):
            exec(code, {"phase": value})


def test_seed_validation_code_agrees_with_the_real_function(
    seed_record: ErrorRecord, seed_module: dict[str, Any]
) -> None:
    code = write_offline(seed_record).validation_code
    assert code is not None
    function = seed_module["resolve_num_tokens_per_req"]
    for value in (*ACCEPTED, "decode", "draft_decode ", "target-verify", None):
        try:
            function(seed_module["spec_algorithm"], value)
            real_fails = False
        except ValueError:
            real_fails = True
        try:
            exec(code, {"phase": value})
            check_fails = False
        except ValueError:
            check_fails = True
        assert check_fails == real_fails, value


def test_seed_type_guard(seed_record: ErrorRecord) -> None:
    code = write_offline(seed_record).type_guard
    assert code is not None
    guard = defined_function(code)
    assert all(guard(value) is True for value in ACCEPTED)
    assert not any(guard(value) for value in ("decode", "target-verify", None, 0, "Draft_decode"))


def test_seed_example_fix_turns_a_failing_call_into_a_passing_one(
    seed_record: ErrorRecord, seed_module: dict[str, Any]
) -> None:
    fix = write_offline(seed_record).example_fix
    sections = example_sections(fix)
    assert sections is not None, fix
    before, after = sections
    parameters = {"spec_algorithm", "phase", "num_draft_tokens", "is_draft_worker"}
    for part in (before, after):
        (call,) = calls_of(part, "resolve_num_tokens_per_req")
        assert {keyword.arg for keyword in call.keywords} <= parameters
        assert len(call.args) + len(call.keywords) <= len(parameters)
    assert keyword_value(calls_of(before, "resolve_num_tokens_per_req")[0], "phase") not in ACCEPTED
    assert keyword_value(calls_of(after, "resolve_num_tokens_per_req")[0], "phase") in ACCEPTED
    with pytest.raises(ValueError, match="Unknown speculative phase"):
        exec(before, dict(seed_module))
    exec(after, dict(seed_module))


def test_seed_try_catch_pattern_catches_the_real_class(seed_record: ErrorRecord) -> None:
    code = write_offline(seed_record).try_catch_pattern
    assert code is not None
    handlers = [node for node in ast.walk(ast.parse(code)) if isinstance(node, ast.ExceptHandler)]
    assert [ast.unparse(handler.type) for handler in handlers if handler.type] == ["ValueError"]
    assert calls_of(code, "resolve_num_tokens_per_req")


def test_seed_offline_narrative_passes_the_verifier(seed_record: ErrorRecord) -> None:
    narrative = write_offline(seed_record)
    assert_code_parses(narrative)
    assert verify(seed_record.model_copy(update=dict(narrative))) == []


def test_enrich_offline_changes_only_the_narrative(seed_record: ErrorRecord) -> None:
    (enriched,) = enrich_offline([seed_record])
    assert enriched.writer == "offline"
    assert enriched.claims == []
    before = seed_record.model_dump(by_alias=False)
    after = enriched.model_dump(by_alias=False)
    changed = {key for key in before if before[key] != after[key]}
    assert changed <= {*NARRATIVE_FIELDS, "writer", "claims"}
    assert "documentation" in changed and "validation_code" in changed
    assert enriched.seed_dict().keys() == seed_record.seed_dict().keys()


def test_the_writer_is_deterministic(seed_record: ErrorRecord) -> None:
    assert write_offline(seed_record) == write_offline(seed_record)


# --- other shapes of facts ---------------------------------------------------------------------


def test_membership_in_a_literal_set() -> None:
    facts = facts_for(
        "open_store",
        "path",
        "mode='r'",
        subject="mode",
        guards=[Guard(kind="membership", text="mode not in ('r', 'w', 'a')", subject="mode")],
    )
    record = make_record("Unsupported mode {mode}", facts=facts)
    narrative = write_offline(record)
    assert analyse(facts).shape is Shape.VALUES
    for value in ("'r'", "'w'", "'a'"):
        assert value in narrative.documentation
    assert narrative.validation_code is not None
    for good in ("r", "w", "a"):
        exec(narrative.validation_code, {"mode": good})
    with pytest.raises(ValueError):
        exec(narrative.validation_code, {"mode": "rw"})
    sections = example_sections(narrative.example_fix)
    assert sections is not None
    before, after = sections
    assert keyword_value(calls_of(before, "open_store")[0], "mode") not in "rwa"
    assert keyword_value(calls_of(after, "open_store")[0], "mode") in ("r", "w", "a")


def test_a_comparison_python_refuses_for_a_value_is_no_crash() -> None:
    # ``-1 not in b"\\r\\n"`` raises ValueError (a byte must be in range(0, 256)): the writer
    # cannot tell that value's outcome, and writes the rest.
    facts = facts_for(
        "read_line",
        "marker",
        subject="marker",
        guards=[Guard(kind="membership", text="marker not in b'\\r\\n'", subject="marker")],
    )
    narrative = write_offline(make_record("Unexpected marker {marker}", facts=facts))
    assert "marker" in narrative.documentation


def test_membership_in_a_named_container() -> None:
    facts = facts_for(
        "open_store",
        "path",
        "mode='r'",
        subject="mode",
        guards=[Guard(kind="membership", text="mode not in SUPPORTED_MODES", subject="mode")],
    )
    narrative = write_offline(make_record("Unsupported mode {mode}", facts=facts))
    assert "SUPPORTED_MODES" in narrative.documentation
    assert narrative.validation_code is not None
    exec(narrative.validation_code, {"mode": "x", "SUPPORTED_MODES": {"x"}})
    with pytest.raises(ValueError):
        exec(narrative.validation_code, {"mode": "y", "SUPPORTED_MODES": {"x"}})
    assert "accepts" not in narrative.documentation  # the values themselves are not known


def test_isinstance_check() -> None:
    facts = facts_for(
        "scale",
        "x",
        "factor: float = 1.0",
        subject="x",
        guards=[
            Guard(
                kind="isinstance",
                text="not isinstance(x, (int, float))",
                subject="x",
                values=["int", "float"],
            )
        ],
    )
    record = make_record(
        "expected a number, got {type(x).__name__}", error_class="TypeError", facts=facts
    )
    narrative = write_offline(record)
    assert analyse(facts).shape is Shape.TYPES
    assert "`int`" in narrative.documentation and "`float`" in narrative.documentation
    assert narrative.validation_code is not None and narrative.type_guard is not None
    for good in (1, 2.5):
        exec(narrative.validation_code, {"x": good})
    for bad in ("1", None, [1]):
        with pytest.raises(TypeError):
            exec(narrative.validation_code, {"x": bad})
    guard = defined_function(narrative.type_guard)
    assert guard(3) and guard(3.0) and not guard("3")


def test_none_check_is_a_missing_argument() -> None:
    facts = facts_for(
        "load",
        "model_path: str | None = None",
        subject="model_path",
        guards=[Guard(kind="none-check", text="model_path is None", subject="model_path")],
    )
    narrative = write_offline(make_record("model_path is required", facts=facts))
    assert analyse(facts).shape is Shape.MISSING
    assert "None" in narrative.documentation
    assert narrative.validation_code is not None
    exec(narrative.validation_code, {"model_path": "model.bin"})
    with pytest.raises(ValueError):
        exec(narrative.validation_code, {"model_path": None})
    sections = example_sections(narrative.example_fix)
    assert sections is not None
    assert keyword_value(calls_of(sections[0], "load")[0], "model_path") is None
    assert isinstance(keyword_value(calls_of(sections[1], "load")[0], "model_path"), str)


@pytest.mark.parametrize(
    ("condition", "good", "bad"),
    [
        ("batch_size <= 0", [1, 64], [0, -3]),
        ("batch_size < 1 or batch_size > 512", [1, 512], [0, 513]),
        ("not 0 < batch_size <= 10", [1, 10], [0, 11]),
    ],
)
def test_numeric_ranges(condition: str, good: list[int], bad: list[int]) -> None:
    facts = facts_for(
        "make_loader",
        "data",
        "batch_size: int = 32",
        subject="batch_size",
        guards=[Guard(kind="comparison", text=condition, subject="batch_size")],
    )
    narrative = write_offline(make_record("bad batch_size {batch_size}", facts=facts))
    assert analyse(facts).shape is Shape.RANGE
    assert narrative.validation_code is not None and narrative.type_guard is not None
    guard = defined_function(narrative.type_guard)
    for value in good:
        exec(narrative.validation_code, {"batch_size": value})
        assert guard(value) is True
    for value in bad:
        with pytest.raises(ValueError):
            exec(narrative.validation_code, {"batch_size": value})
        assert guard(value) is False
    assert guard("7") is False  # a guard answers, it does not raise
    sections = example_sections(narrative.example_fix)
    assert sections is not None
    before = keyword_value(calls_of(sections[0], "make_loader")[0], "batch_size")
    after = keyword_value(calls_of(sections[1], "make_loader")[0], "batch_size")
    assert eval(condition, {"batch_size": before})
    assert not eval(condition, {"batch_size": after})


def test_dict_lookup_is_a_missing_key() -> None:
    facts = facts_for(
        "get_backend",
        "name",
        subject="name",
        guards=[Guard(kind="dict-lookup", text="_BACKENDS[name]", subject="name")],
        in_except=True,
        caught=["KeyError"],
    )
    record = make_record("Unknown backend: {name}", error_class="KeyError", facts=facts)
    narrative = write_offline(record)
    assert analyse(facts).shape is Shape.KEY
    assert "_BACKENDS" in narrative.documentation
    assert narrative.validation_code is not None
    exec(narrative.validation_code, {"name": "cuda", "_BACKENDS": {"cuda": 1}})
    with pytest.raises(KeyError):
        exec(narrative.validation_code, {"name": "rocm", "_BACKENDS": {"cuda": 1}})


def test_except_block_names_what_was_caught() -> None:
    facts = facts_for(
        "read_config", "path", subject="path", in_except=True, caught=["json.JSONDecodeError"]
    )
    narrative = write_offline(make_record("could not parse config {path}", facts=facts))
    assert "json.JSONDecodeError" in narrative.documentation
    assert "json.JSONDecodeError" in " ".join(narrative.solutions)
    assert narrative.try_catch_pattern is not None and "__cause__" in narrative.try_catch_pattern
    assert narrative.validation_code is None and narrative.type_guard is None


def test_import_error_names_the_module_without_inventing_a_pip_line() -> None:
    facts = facts_for("attention", "q", "k", "v", in_except=True, caught=["ModuleNotFoundError"])
    record = make_record("No module named 'flash_attn'", error_class="ImportError", facts=facts)
    narrative = write_offline(record)
    text = " ".join([narrative.documentation, *narrative.solutions])
    assert "flash_attn" in text
    assert "ModuleNotFoundError" in narrative.documentation
    assert all("pip install" not in (getattr(narrative, f) or "") for f in CODE_FIELDS)
    assert "pip install" not in text
    assert narrative.validation_code is not None and "find_spec" in narrative.validation_code


def test_import_hint_uses_the_command_the_message_gives() -> None:
    facts = facts_for("make_engine", "backend")
    record = make_record(
        "vllm backend requires the vllm package: pip install vllm",
        error_class="RuntimeError",
        facts=facts,
        error_type=ErrorType.DEPENDENCY,
        background_tag="missing-dependency",
    )
    narrative = write_offline(record)
    assert any("`pip install vllm`" in item for item in narrative.solutions)


def test_a_missing_name_is_not_a_missing_module() -> None:
    record = make_record(
        "cannot import name 'flash_fn' from 'flash_attn'",
        error_class="ImportError",
        facts=facts_for("load"),
    )
    narrative = write_offline(record)
    assert "`flash_fn`" in narrative.documentation and "`flash_attn`" in narrative.documentation
    assert "cannot be imported" not in narrative.documentation
    assert any("version" in item for item in narrative.solutions)
    assert narrative.validation_code is None  # find_spec would find the module: no check


def test_log_sites_log_and_raise_nothing() -> None:
    facts = facts_for(
        "step",
        "phase",
        subject="phase",
        guards=[
            Guard(kind="comparison", text="phase == 'a'", subject="phase", leads_to_site=False)
        ],
    )
    record = make_record(
        "Unknown phase {phase}, skipping",
        error_class="WARNING",
        kind=SiteKind.LOG,
        severity=Severity.WARNING,
        facts=facts,
    )
    narrative = write_offline(record)
    assert "logs" in narrative.documentation
    assert "raises" not in narrative.documentation
    assert "warning level" in narrative.documentation
    assert narrative.try_catch_pattern is None
    assert narrative.validation_code is not None and "raise" not in narrative.validation_code
    exec(narrative.validation_code, {"phase": "b"})  # flags, never raises


def test_warn_sites_warn() -> None:
    facts = facts_for(
        "train",
        "fp16=None",
        subject="fp16",
        guards=[Guard(kind="none-check", text="fp16 is not None", subject="fp16")],
    )
    record = make_record(
        "the fp16 argument is deprecated",
        error_class="DeprecationWarning",
        kind=SiteKind.WARN,
        severity=Severity.WARNING,
        facts=facts,
    )
    narrative = write_offline(record)
    assert "warns" in narrative.documentation
    assert "raises" not in narrative.documentation
    assert narrative.try_catch_pattern is not None
    assert "catch_warnings" in narrative.try_catch_pattern


def test_http_sites_give_the_status() -> None:
    facts = facts_for(
        "read_item",
        "item_id: int",
        subject="item_id",
        guards=[Guard(kind="membership", text="item_id not in items", subject="item_id")],
    )
    record = make_record(
        "Item {item_id} not found",
        error_class="HTTPException",
        kind=SiteKind.HTTP,
        http_status=404,
        facts=facts,
    )
    narrative = write_offline(record)
    assert "404" in narrative.documentation
    assert any("404" in item for item in narrative.solutions)
    # `items` is local state a caller cannot see: no validation is invented around it.
    assert narrative.validation_code is None


def test_no_guard_says_what_the_message_means() -> None:
    facts = CodeFacts(function="submit", class_name="Scheduler", signature="submit(self, job)")
    record = make_record("the scheduler is shutting down", error_class="RuntimeError", facts=facts)
    narrative = write_offline(record)
    assert analyse(facts).shape is Shape.UNGUARDED
    assert "the scheduler is shutting down" in narrative.documentation
    assert "RuntimeError" in narrative.documentation
    assert narrative.validation_code is None and narrative.type_guard is None
    assert "accept" not in narrative.documentation
    assert narrative.try_catch_pattern is not None
    assert calls_of(narrative.try_catch_pattern, "submit")


def test_without_facts_the_writer_says_less() -> None:
    record = make_record("bad thing {x}", function="thing")
    narrative = write_offline(record)
    assert "thing" in narrative.documentation
    assert narrative.validation_code is None and narrative.type_guard is None
    assert "accept" not in narrative.documentation
    assert not re.search(r"'[^']+'", narrative.documentation)  # no values claimed
    assert_code_parses(narrative)


def test_a_method_is_called_on_an_instance_with_its_keyword_only_subject() -> None:
    facts = CodeFacts(
        function="run",
        class_name="SpecWorker",
        signature="run(self, batch, *, phase)",
        subject="phase",
        guards=[
            Guard(kind="comparison", text='phase == "x"', subject="phase", leads_to_site=False),
            Guard(kind="comparison", text='phase == "y"', subject="phase", leads_to_site=False),
        ],
    )
    narrative = write_offline(make_record("Unknown phase {phase}", facts=facts))
    sections = example_sections(narrative.example_fix)
    assert sections is not None
    (call,) = calls_of(sections[1], "run")
    assert isinstance(call.func, ast.Attribute)
    assert len(call.args) == 1 and keyword_value(call, "phase") in ("x", "y")


def test_callers_are_named() -> None:
    facts = facts_for(
        "f",
        "x",
        subject="x",
        guards=[Guard(kind="none-check", text="x is None", subject="x")],
        callers=[Location(path="pkg/a.py", line=12), Location(path="pkg/b.py", line=30)],
    )
    narrative = write_offline(make_record("x is required", facts=facts))
    assert "pkg/a.py:12" in narrative.trigger_scenarios
    assert "pkg/b.py:30" in narrative.trigger_scenarios


# --- every code field parses, and the writer agrees with the verifier --------------------------

_IDENTIFIERS = st.sampled_from(["phase", "mode", "name", "x", "batch_size", "items", "backend"])
_STRINGS = st.text(
    alphabet=st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"]),
    min_size=1,
    max_size=12,
)
_LITERALS = st.one_of(
    _STRINGS.map(repr), st.integers(-1000, 1000).map(repr), st.sampled_from(["None", "True"])
)


@st.composite
def guards(draw: st.DrawFn, subject: str) -> Guard:
    values = draw(st.lists(_LITERALS, min_size=1, max_size=4, unique=True))
    number = draw(st.integers(-50, 50))
    text, kind, leads = draw(
        st.sampled_from(
            [
                (f"{subject} == {values[0]}", "comparison", False),
                (f"{subject} not in ({', '.join(values)},)", "membership", True),
                (f"{subject} in ({', '.join(values)},)", "membership", True),
                (f"{subject} not in ALLOWED", "membership", True),
                (f"not isinstance({subject}, (int, str))", "isinstance", True),
                (f"isinstance({subject}, bytes)", "isinstance", True),
                (f"{subject} is None", "none-check", True),
                (f"{subject} < {number}", "comparison", True),
                (f"{subject} > {number} or {subject} < -100", "comparison", True),
                (f"not {subject}", "truthiness", True),
                (f"len({subject}) == 0", "truthiness", True),
                (f"REGISTRY[{subject}]", "dict-lookup", True),
                (f"self.ready and {subject}", "other", True),
                ("case 'a'", "match", False),
                (f"{subject} ==", "comparison", True),  # a guard that does not parse
            ]
        )
    )
    return Guard(kind=kind, text=text, subject=subject, values=values, leads_to_site=leads)


@st.composite
def records(draw: st.DrawFn) -> ErrorRecord:
    subject = draw(_IDENTIFIERS)
    function = draw(st.sampled_from(["resolve", "load", "__init__", "run", "get"]))
    others = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3, unique=True))
    parameters = [*others]
    if draw(st.booleans()):
        parameters.insert(draw(st.integers(0, len(parameters))), subject)
    star = draw(st.sampled_from(["", "*, ", "*args, "]))
    tail = draw(st.sampled_from(["", ", key=None", ", **kwargs"]))
    owner = draw(st.sampled_from([None, "Engine"]))
    if owner:
        parameters.insert(0, "self")
    signature = f"{function}({star if not parameters else ''}{', '.join(parameters)}{tail})"
    facts = CodeFacts(
        function=function,
        class_name=owner,
        signature=signature if draw(st.booleans()) else None,
        subject=subject if draw(st.booleans()) else None,
        guards=draw(st.lists(guards(subject), max_size=3)),
        in_except=draw(st.booleans()),
        caught=draw(st.lists(st.sampled_from(["KeyError", "OSError", "ImportError"]), max_size=2)),
        exception_bases=draw(st.lists(st.sampled_from(["ValueError", "Exception"]), max_size=1)),
        callers=[Location(path="pkg/c.py", line=3)] if draw(st.booleans()) else [],
    )
    if draw(st.booleans()):
        # What an extractor would report: the values the guards accept, as source text.
        derived = [value.code for value in accepted_values(facts)]
        facts = facts.model_copy(update={"accepted_values": derived})
    kind = draw(st.sampled_from(list(SiteKind)))
    error_class = {
        SiteKind.LOG: "ERROR",
        SiteKind.WARN: "UserWarning",
        SiteKind.EXIT: "SystemExit",
        SiteKind.ASSERT: "AssertionError",
        SiteKind.HTTP: "HTTPException",
    }.get(kind) or draw(
        st.sampled_from(["ValueError", "TypeError", "KeyError", "ImportError", "SpecError"])
    )
    message = draw(
        st.sampled_from(
            [
                "Unknown value {" + subject + "}",
                "No module named 'torch'",
                "needs the numpy package: pip install numpy",
                "{msg}",
                "bad input",
            ]
        )
    )
    return make_record(
        message,
        error_class=error_class,
        kind=kind,
        facts=draw(st.sampled_from([facts, None])),
        http_status=404 if kind is SiteKind.HTTP else None,
        handling_strategy=draw(st.sampled_from(list(HandlingStrategy))),
        error_type=draw(st.sampled_from(list(ErrorType))),
        background_tag=draw(
            st.sampled_from(["invalid-enum-value", "missing-dependency", "timeout", "new-tag"])
        ),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records())
def test_every_code_field_parses_and_verifies(record: ErrorRecord) -> None:
    narrative = write_offline(record)
    assert_code_parses(narrative)
    for field in PROSE_FIELDS:
        assert getattr(narrative, field).strip()
    assert narrative.solutions and narrative.prevention_tips
    assert verify(record.model_copy(update=dict(narrative))) == []


# -- other languages ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "error_class", "verb", "handler"),
    [
        ("javascript", "TypeError", "throws `TypeError`", "instanceof TypeError"),
        ("typescript", "Error", "throws `Error`", "catch (error)"),
        ("java", "IllegalStateException", "throws `IllegalStateException`", "catch (Illegal"),
        ("go", "ErrNotFound", "returns an error (`ErrNotFound`)", "errors.Is(err, ErrNotFound)"),
        ("go", "panic", "panics (`panic`)", None),
        ("rust", "anyhow", "returns an error (`anyhow`)", "Err(error)"),
    ],
)
def test_other_languages_get_their_own_verbs_and_handling_and_no_python(
    language: str, error_class: str, verb: str, handler: str | None
) -> None:
    record = make_record(
        "unknown flag: {name}",
        error_class=error_class,
        function="parseFlags",
        language=language,
        file_path="src/flags.x",
    )
    narrative = write_offline(record)
    assert narrative.documentation.startswith(f"`parseFlags` {verb} with the message")
    assert "raise" not in " ".join([narrative.documentation, *narrative.solutions])
    # The Python-only code fields are left out; the handling pattern is in the language.
    assert narrative.validation_code is None
    assert narrative.type_guard is None
    assert narrative.example_fix == ""
    if handler is None:
        assert narrative.try_catch_pattern is None  # a panic reaches no caller
    else:
        assert narrative.try_catch_pattern is not None
        assert handler in narrative.try_catch_pattern
        assert "except" not in narrative.try_catch_pattern
    # The verifier does not read another language's code as Python.
    assert verify(record.model_copy(update=dict(narrative))) == []
