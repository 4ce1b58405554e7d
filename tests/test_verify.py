"""The verifier: narratives checked against code facts (the seed's 'decode' must be caught)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import SEED_PHASES, seed_site_facts

from errdex.analyze.verify import (
    Verdict,
    accepted_values,
    signature_of,
    verify,
    verify_many,
)
from errdex.analyze.writer import enrich_offline
from errdex.models import CodeFacts, ErrorRecord, Guard, Parameter

ACCEPTED = SEED_PHASES


def seed_facts(**changes: Any) -> CodeFacts:
    """The seed site's facts, as its code reads (three comparisons, then the raise)."""
    return seed_site_facts(**{"accepted_values": [f'"{v}"' for v in ACCEPTED], **changes})


@pytest.fixture
def seed_record(seed: dict[str, Any]) -> ErrorRecord:
    return ErrorRecord.model_validate(seed["record"])


def with_fields(record: ErrorRecord, **fields: Any) -> ErrorRecord:
    """The record with its narrative emptied, then the given fields set."""
    blank = {
        "documentation": "",
        "trigger_scenarios": "",
        "common_situations": "",
        "solutions": [],
        "example_fix": "",
        "validation_code": None,
        "type_guard": None,
        "try_catch_pattern": None,
        "prevention_tips": [],
    }
    return record.model_copy(update={**blank, **fields})


def claimed(claims: list[Any], field: str | None = None) -> set[tuple[str, str, str]]:
    return {
        (claim.field, claim.text, claim.verdict)
        for claim in claims
        if field is None or claim.field == field
    }


# --- the seed ----------------------------------------------------------------------------------


def test_the_seed_prose_is_flagged_on_decode(seed_record: ErrorRecord) -> None:
    claims = verify(seed_record, seed_facts())
    contradicted = {
        (claim.field, claim.text) for claim in claims if claim.verdict == Verdict.CONTRADICTED
    }
    for field in ("documentation", "solutions", "validationCode", "typeGuard"):
        assert (field, "'decode'") in contradicted, field
    # Accepted values the seed's checks would reject are named too.
    for field in ("validationCode", "typeGuard"):
        assert (field, "'draft_decode'") in contradicted
        assert (field, "'draft_extend'") in contradicted
    # What the seed gets right is left alone.
    texts = {claim.text for claim in claims}
    assert "'target_verify'" not in texts
    assert not any("Unknown speculative phase" in text for text in texts)
    assert not claimed(claims, "triggerScenarios")  # 'draft' and 'target-verify' do fail
    assert not claimed(claims, "exampleFix")  # 'target-verify' → 'target_verify' is right
    for claim in claims:
        assert claim.reason.endswith(".")


def test_the_seed_validation_code_does_not_parse(seed_record: ErrorRecord) -> None:
    claims = verify(seed_record, seed_facts())
    unparsable = [claim for claim in claims if claim.verdict == Verdict.UNPARSABLE]
    assert [claim.field for claim in unparsable] == ["validationCode"]
    assert "positional argument follows keyword argument" in unparsable[0].reason


def test_the_record_own_facts_are_used(seed_record: ErrorRecord) -> None:
    with_facts = seed_record.model_copy(update={"facts": seed_facts()})
    assert claimed(verify(with_facts)) == claimed(verify(seed_record, seed_facts()))


def test_accepted_values_from_guards_alone(seed_record: ErrorRecord) -> None:
    facts = seed_facts(accepted_values=[])
    assert [value.value for value in accepted_values(facts)] == list(ACCEPTED)
    assert ("documentation", "'decode'", "contradicted") in claimed(verify(seed_record, facts))


def test_without_facts_only_parsing_and_classes_are_checked(seed_record: ErrorRecord) -> None:
    claims = verify(seed_record)
    assert {claim.verdict for claim in claims} == {Verdict.UNPARSABLE}


def test_the_offline_narrative_is_not_flagged(seed_record: ErrorRecord) -> None:
    (enriched,) = enrich_offline([seed_record.model_copy(update={"facts": seed_facts()})])
    assert verify(enriched) == []
    assert enriched.claims == []


# --- values in prose ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "resolve_num_tokens_per_req accepts 'draft_decode', 'draft_extend' and 'target_verify'.",
        "Valid phases: 'draft_decode', 'draft_extend', 'target_verify'.",
        "Other phases such as 'decode' or 'draft' are not recognised.",
        "Install 'torch' to use the supported phases.",
        "The phase dispatch lives in 'python/sglang/srt/speculative/spec_utils.py'.",
        "See 'spec_utils.py' for the only phases it knows.",
        "The message 'Unknown speculative phase' names the phase it got.",
        "It raises ValueError('Unknown speculative phase: decode') for a phase it does not know.",
        "Phases are described in the 'Speculative decoding' guide, which lists the valid ones.",
        "It's the caller's job to pass a valid phase; the worker's phase is set at start-up.",
        "Set 'SGLANG_OPT_USE_GUMBEL_SAMPLE' to '0' to fall back to torch.multinomial.",
        "Only 'eagle' and 'eagle3' algorithms support draft phases.",
        "The 'phase' argument accepts one of the three phase names.",
        "Use `phase='draft_extend'` for the draft worker's extend step.",
        "The accepted values are `'draft_decode'` and `'target_verify'` (and 'draft_extend').",
        "Calling it with phase='decode' fails: 'decode' is not one of the accepted phases.",
        "A value like 'target-verify' (a hyphen) is rejected.",
    ],
)
def test_neutral_and_true_texts_are_not_flagged(seed_record: ErrorRecord, text: str) -> None:
    record = with_fields(
        seed_record,
        documentation=text,
        common_situations=text,
        solutions=[text],
        prevention_tips=[text],
    )
    assert verify(record, seed_facts()) == []


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("Only 'decode' and 'target_verify' are recognized.", "'decode'"),
        ("Valid values for phase: 'draft', 'draft_extend'.", "'draft'"),
        ("The phase must be one of 'prefill', 'draft_decode'.", "'prefill'"),
        ("'target_verify' is not a recognised phase.", "'target_verify'"),
        ("An unknown phase such as 'draft_extend' raises this error.", "'draft_extend'"),
        ("Use `'decode'`, the only phase besides 'draft_decode'.", "'decode'"),
    ],
)
def test_false_value_claims_in_prose_are_contradicted(
    seed_record: ErrorRecord, text: str, literal: str
) -> None:
    claims = verify(with_fields(seed_record, documentation=text), seed_facts())
    assert ("documentation", literal, "contradicted") in claimed(claims)


def test_trigger_scenarios_must_not_name_accepted_values(seed_record: ErrorRecord) -> None:
    for text in (
        "Calling resolve_num_tokens_per_req(spec, phase='draft_extend').",
        "Passing 'target_verify' from the scheduler.",
        "Running it when `phase == 'draft_decode'`.",
    ):
        claims = verify(with_fields(seed_record, trigger_scenarios=text), seed_facts())
        assert {claim.verdict for claim in claims} == {"contradicted"}, text
    for text in (
        "Calling resolve_num_tokens_per_req(spec, phase='draft').",
        "A typo like 'target-verify' or 'Draft_Decode'.",
        "Running it when `phase not in ('draft_decode', 'draft_extend', 'target_verify')`.",
    ):
        assert verify(with_fields(seed_record, trigger_scenarios=text), seed_facts()) == [], text


def test_value_checks_need_literal_accepted_values(seed_record: ErrorRecord) -> None:
    facts = seed_facts(accepted_values=["Phase.DRAFT_DECODE", "Phase.TARGET_VERIFY"])
    record = with_fields(seed_record, documentation="Only 'decode' is accepted as a phase.")
    assert verify(record, facts) == []


# --- values in code ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "flagged"),
    [
        ("if phase != 'draft_decode' and phase != 'decode':\n    raise ValueError(phase)\n", True),
        (
            "VALID = {'decode', 'target_verify'}\nif phase not in VALID:\n    raise ValueError\n",
            True,
        ),
        ("assert phase in ['draft_decode', 'draft_extend'], phase\n", True),
        ("if phase in ('draft_decode', 'x'):\n    raise ValueError(phase)\n", True),
        ("def ok(p):\n    return p == 'draft_decode' or p == 'nope'\n", True),
        ("ALL = ('draft_decode', 'draft_extend', 'target_verify')\nassert phase in ALL\n", False),
        ("if phase in ('decode', 'draft'):\n    raise ValueError(phase)\n", False),
        ("if phase is None:\n    raise ValueError('phase is required')\n", False),
        ("if not isinstance(phase, str):\n    raise ValueError(phase)\n", False),
    ],
)
def test_validation_code_values(seed_record: ErrorRecord, code: str, flagged: bool) -> None:
    for field in ("validation_code", "type_guard"):
        claims = verify(with_fields(seed_record, **{field: code}), seed_facts())
        contradicted = [claim for claim in claims if claim.verdict == "contradicted"]
        assert bool(contradicted) is flagged, (field, code, claims)


def test_example_fix_must_go_from_failing_to_passing(seed_record: ErrorRecord) -> None:
    backwards = (
        "# before\nn = resolve_num_tokens_per_req(spec, phase='draft_decode')\n"
        "# after\nn = resolve_num_tokens_per_req(spec, phase='decode')\n"
    )
    claims = verify(with_fields(seed_record, example_fix=backwards), seed_facts())
    assert claimed(claims) == {
        ("exampleFix", "'draft_decode'", "contradicted"),
        ("exampleFix", "'decode'", "contradicted"),
    }
    positional = (
        "# before\nresolve_num_tokens_per_req(spec, 'decode')\n"
        "# after\nresolve_num_tokens_per_req(spec, 'draft_extend')\n"
    )
    assert verify(with_fields(seed_record, example_fix=positional), seed_facts()) == []


# --- parameters --------------------------------------------------------------------------------


def test_unknown_keyword_arguments_are_contradicted(seed_record: ErrorRecord) -> None:
    fix = (
        "# before\nn = resolve_num_tokens_per_req(spec, phase_name='draft')\n"
        "# after\nn = resolve_num_tokens_per_req(spec, phase='draft_decode', spec_config=cfg)\n"
    )
    claims = verify(with_fields(seed_record, example_fix=fix), seed_facts())
    assert {claim.text for claim in claims} == {"phase_name", "spec_config"}
    assert all(claim.verdict == "contradicted" for claim in claims)
    prose = "Calling resolve_num_tokens_per_req(spec, mode='draft') triggers it."
    claims = verify(with_fields(seed_record, trigger_scenarios=prose), seed_facts())
    assert {claim.text for claim in claims} == {"mode"}


def test_keyword_arguments_pass_when_the_function_takes_kwargs(seed_record: ErrorRecord) -> None:
    facts = seed_facts(signature="resolve_num_tokens_per_req(spec_algorithm, phase, **kwargs)")
    fix = "resolve_num_tokens_per_req(spec, phase='draft_decode', anything=1)\n"
    assert verify(with_fields(seed_record, try_catch_pattern=fix), facts) == []


def test_too_many_positional_arguments(seed_record: ErrorRecord) -> None:
    code = (
        "try:\n    resolve_num_tokens_per_req(a, 'draft_decode', None, False, 5)\n"
        "except ValueError:\n    pass\n"
    )
    claims = verify(with_fields(seed_record, try_catch_pattern=code), seed_facts())
    assert [claim.verdict for claim in claims] == ["contradicted"]
    assert "at most 4 positional" in claims[0].reason


def test_methods_do_not_count_self(seed_record: ErrorRecord) -> None:
    facts = seed_facts(function="run", class_name="Worker", signature="run(self, phase)")
    record = with_fields(seed_record, try_catch_pattern="worker.run('draft_decode')\n")
    assert verify(record, facts) == []


def test_signature_from_parameters_alone() -> None:
    facts = CodeFacts(
        parameters=[
            Parameter(name="a"),
            Parameter(name="/"),
            Parameter(name="b", default="1"),
            Parameter(name="*"),
            Parameter(name="c"),
            Parameter(name="**options"),
        ]
    )
    signature = signature_of(facts)
    assert signature is not None
    assert signature.positional == ("a", "b")
    assert signature.keyword_only == ("c",)
    assert "a" not in signature.keyword_names and signature.var_keyword
    assert signature.required == {"a", "c"}


# --- classes -----------------------------------------------------------------------------------


def test_a_class_the_code_does_not_raise_is_contradicted(seed_record: ErrorRecord) -> None:
    text = "Calling it with a bad phase raises TypeError."
    claims = verify(with_fields(seed_record, documentation=text), seed_facts())
    assert claimed(claims) == {("documentation", "TypeError", "contradicted")}
    code = "try:\n    f()\nexcept KeyError:\n    pass\n"
    claims = verify(with_fields(seed_record, try_catch_pattern=code), seed_facts())
    assert claimed(claims) == {("tryCatchPattern", "KeyError", "contradicted")}


def test_bases_caught_and_quoted_classes_are_allowed(seed_record: ErrorRecord) -> None:
    text = (
        "It raises ValueError, an Exception; catching Exception works too. "
        "It wraps the KeyError it caught."
    )
    facts = seed_facts(in_except=True, caught=["KeyError"])
    assert verify(with_fields(seed_record, documentation=text), facts) == []
    message = seed_record.model_copy(update={"error_message": "expected ValueError or TypeError"})
    assert verify(with_fields(message, documentation="It mentions TypeError."), seed_facts()) == []


def test_custom_classes_are_unsupported_not_contradicted(seed_record: ErrorRecord) -> None:
    record = seed_record.model_copy(update={"error_class": "SpecError"})
    claims = verify(with_fields(record, documentation="It raises PhaseError."), seed_facts())
    assert claimed(claims) == {("documentation", "PhaseError", "unsupported")}
    facts = seed_facts(exception_bases=["ValueError"])
    assert verify(with_fields(record, documentation="A ValueError subclass."), facts) == []


def test_a_log_site_raises_nothing(seed_record: ErrorRecord) -> None:
    record = seed_record.model_copy(update={"error_class": "WARNING", "kind": "log"})
    claims = verify(with_fields(record, documentation="It raises ValueError."), seed_facts())
    assert claimed(claims) == {("documentation", "ValueError", "contradicted")}


# --- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "field", ["example_fix", "validation_code", "type_guard", "try_catch_pattern"]
)
def test_code_that_does_not_parse(seed_record: ErrorRecord, field: str) -> None:
    claims = verify(with_fields(seed_record, **{field: "if phase\n    pass"}), seed_facts())
    assert [claim.verdict for claim in claims] == ["unparsable"]


def test_prose_fields_are_not_parsed(seed_record: ErrorRecord) -> None:
    record = with_fields(seed_record, documentation="if phase:", solutions=["def ("])
    assert verify(record, seed_facts()) == []


# --- many records ------------------------------------------------------------------------------


def test_verify_many_counts(seed_record: ErrorRecord) -> None:
    bad = seed_record.model_copy(update={"facts": seed_facts()})
    (good,) = enrich_offline([bad])
    good = good.model_copy(update={"id": "0" * 16})
    report = verify_many([bad, good])
    assert report.records == 2 and report.flagged == 1
    assert report.claims == len(verify(bad)) == sum(report.by_verdict.values())
    assert set(report.by_verdict) == {"contradicted", "unsupported", "unparsable"}
    assert report.by_verdict["unparsable"] == 1
    assert set(report.findings) == {bad.id}
    assert report.by_field["documentation"] == 1
    assert report.model_dump(mode="json")["byVerdict"]["unsupported"] == 0


# --- hostile input -----------------------------------------------------------------------------


def test_long_prose_is_checked_in_linear_time(seed_record: ErrorRecord) -> None:
    import time

    record = with_fields(
        seed_record,
        documentation="phase 'x' " * 20_000,
        common_situations="'a', " * 30_000,
        solutions=["`" * 50_000, "resolve_num_tokens_per_req(" * 5_000],
    )
    started = time.perf_counter()
    verify(record, seed_facts())
    assert time.perf_counter() - started < 10  # quadratic scans took minutes here


def test_deeply_nested_code_and_facts_do_not_crash(seed_record: ErrorRecord) -> None:
    deep = "-" * 100_000 + "1"
    record = with_fields(
        seed_record, validation_code=f"phase == {deep}", trigger_scenarios=f"`{deep}`"
    )
    claims = verify(record, seed_facts())
    assert ("validationCode", "unparsable") in {(claim.field, claim.verdict) for claim in claims}
    facts = seed_facts(
        accepted_values=[deep],
        signature=f"f(a={deep})",
        guards=[Guard(kind="comparison", text=f"phase == {deep}", subject="phase")],
    )
    verify(record, facts)
    from errdex.analyze.writer import write_offline

    write_offline(record.model_copy(update={"facts": facts}))


def test_values_listed_after_a_complement_word_are_the_accepted_ones(seed_record):
    """'phase outside a, b, c' names the accepted values, it does not claim they fail."""
    record = with_fields(
        seed_record,
        trigger_scenarios="Calling resolve_num_tokens_per_req with phase outside "
        "'draft_decode', 'draft_extend', 'target_verify'.",
    )
    assert [c for c in verify(record, seed_facts()) if c.field == "triggerScenarios"] == []
