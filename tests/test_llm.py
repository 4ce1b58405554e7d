"""The LLM writer against a real loopback server speaking the OpenAI chat-completions API."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import SEED_FILE
from openai_server import (
    COMPLETION_TOKENS,
    PROMPT_TOKENS,
    OpenAIServer,
    content,
    drop,
    good,
    narrative_from,
    rejects_response_format,
    sequence,
    slow,
    status,
)

from errdex.analyze.llm import (
    NARRATIVE_FIELDS,
    LLMWriter,
    build_messages,
    marked_snippet,
    parse_answer,
    retry_after_seconds,
)
from errdex.errors import MissingDependencyError, UsageError
from errdex.models import CodeFacts, ErrorRecord, Guard, Narrative, Parameter
from errdex.settings import SETTINGS, Settings, resolve_settings
from errdex.store.jsonl import read_jsonl

ACCEPTED = ["'draft_decode'", "'draft_extend'", "'target_verify'"]
FUNCTION = "resolve_num_tokens_per_req"
FACTS = CodeFacts(
    function=FUNCTION,
    signature=f"{FUNCTION}(phase: str, num_draft_tokens: int | None = None)",
    parameters=[
        Parameter(name="phase", annotation="str"),
        Parameter(name="num_draft_tokens", annotation="int | None", default="None"),
    ],
    guards=[
        Guard(
            kind="comparison",
            text=f"phase == {value}",
            subject="phase",
            values=[value],
            leads_to_site=False,
            line=line,
        )
        for value, line in zip(ACCEPTED, (114, 116, 118), strict=True)
    ],
    subject="phase",
    accepted_values=ACCEPTED,
    exception_bases=["Exception"],
)
DRAFT = Narrative(
    documentation=f"{FUNCTION} raises ValueError when phase is not one of {', '.join(ACCEPTED)}.",
    trigger_scenarios="Calling it with another phase.",
    common_situations="A typo in the phase name.",
    solutions=["Pass one of the accepted phases."],
    example_fix=f"{FUNCTION}(phase='draft_decode')",
    prevention_tips=["Keep phases in constants."],
)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def seed_record() -> ErrorRecord:
    (envelope, _), *_ = read_jsonl(SEED_FILE)
    return envelope.record.model_copy(update={"facts": FACTS})


def records(seed_record: ErrorRecord, count: int) -> list[tuple[ErrorRecord, Narrative]]:
    """`count` distinct records (distinct ids and templates, hence distinct prompts)."""
    return [
        (
            seed_record.model_copy(
                update={
                    "id": f"{index:016x}",
                    "error_message": f"Unknown speculative phase #{index}: {{phase}}",
                }
            ),
            DRAFT,
        )
        for index in range(count)
    ]


def make_writer(server: OpenAIServer, tmp_path: Path, **overrides) -> LLMWriter:
    values = {
        "llm_base_url": server.url,
        "llm_model": "test-model",
        "llm_api_key": "sk-test",
        "llm_timeout": 2.0,
        "llm_max_retries": 3,
        "llm_concurrency": 4,
        "cache_dir": tmp_path / "cache",
        **overrides,
    }
    cache_dir = values.pop("writer_cache_dir", None)
    return LLMWriter(Settings(**values), cache_dir=cache_dir, backoff_base=0.01, backoff_cap=0.05)


def run(writer: LLMWriter, items, **kwargs):
    return {result.record_id: result for result in writer.write_many(items, **kwargs)}


# --- the happy path and the prompt -------------------------------------------------------


def test_good_answers_are_validated_narratives_with_token_totals(seed_record, tmp_path):
    items = records(seed_record, 3)
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path)
        results = run(writer, items)
    assert set(results) == {record.id for record, _ in items}
    for result in results.values():
        assert result.ok and result.error is None and not result.cached
        assert result.writer == "llm:test-model"
        assert result.requests == 1
        assert result.tokens.prompt == PROMPT_TOKENS
        assert result.tokens.completion == COMPLETION_TOKENS
        # The server built the answer from the facts it was sent: they made the round trip.
        assert all(value in result.narrative.documentation for value in ACCEPTED)
        assert result.narrative.try_catch_pattern.endswith("except ValueError:\n    ...")
    report = writer.report
    assert (report.records, report.written, report.requests) == (3, 3, 3)
    assert (report.cached, report.failures, report.retries, report.repairs) == (0, 0, 0, 0)
    assert report.prompt_tokens == 3 * PROMPT_TOKENS
    assert report.completion_tokens == 3 * COMPLETION_TOKENS
    assert report.total_tokens == 3 * (PROMPT_TOKENS + COMPLETION_TOKENS)


def test_the_request_carries_facts_snippet_class_template_and_draft(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path)
        writer.write(record, draft)
    (seen,) = server.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-test"
    assert seen.body["model"] == "test-model"
    assert seen.body["temperature"] == 0
    assert [m["role"] for m in seen.messages] == ["system", "user"]
    assert "Stay within the facts" in seen.system
    assert "never call the error by another class" in seen.system
    for key, _, _ in NARRATIVE_FIELDS:
        assert key in seen.system
    prompt = seen.prompt
    for value in ACCEPTED:
        assert value in prompt
    assert FUNCTION in prompt
    assert "error class: ValueError" in prompt
    assert "message template: Unknown speculative phase #0: {phase}" in prompt
    assert "num_draft_tokens" in prompt  # the parameters
    assert seen.facts()["acceptedValues"] == ACCEPTED
    assert seen.facts()["exceptionBases"] == ["Exception"]
    # The snippet, with the site line (124) marked and the others not.
    assert '>> 124 |     raise ValueError(f"Unknown speculative phase: {phase}")' in prompt
    assert '   118 |     if phase == "target_verify":' in prompt
    assert prompt.count(">> ") == 1
    # The offline draft.
    assert json.dumps(DRAFT.documentation) in prompt
    # The schema asked for: the record's camelCase keys, all required, nothing else.
    schema = seen.body["response_format"]["json_schema"]["schema"]
    keys = [key for key, _, _ in NARRATIVE_FIELDS]
    assert sorted(schema["required"]) == sorted(keys)
    assert schema["additionalProperties"] is False


def test_answer_keys_are_the_narrative_fields():
    assert [key for key, _, _ in NARRATIVE_FIELDS] == [
        field.alias for field in Narrative.model_fields.values()
    ]


def test_marked_snippet_marks_a_multi_line_site(seed_record):
    record = seed_record.model_copy(update={"line_number": 120, "end_line_number": 121})
    lines = marked_snippet(record).splitlines()
    assert len(lines) == 142 - 106 + 1
    assert [line[:6] for line in lines if line.startswith(">>")] == [">> 120", ">> 121"]


def test_a_record_without_facts_still_gets_a_prompt(seed_record):
    messages = build_messages(seed_record.model_copy(update={"facts": None}), DRAFT)
    assert "No facts were extracted" in messages[1]["content"]


# --- fallbacks: response_format, repair ---------------------------------------------------


def test_a_server_rejecting_response_format_is_asked_again_without_it(seed_record, tmp_path):
    items = records(seed_record, 3)
    with OpenAIServer(rejects_response_format()) as server:
        writer = make_writer(server, tmp_path, llm_concurrency=1)
        results = run(writer, items)
    assert all(result.ok for result in results.values())
    assert [seen.structured for seen in server.requests] == [True, False, False, False]
    assert writer.report.format_fallbacks == 1
    assert writer.report.retries == 0 and writer.report.failures == 0


def test_malformed_json_is_repaired_once(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(sequence(content('{"documentation": "half'), good)) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert result.ok and result.requests == 2
    assert result.tokens.prompt == 2 * PROMPT_TOKENS
    first, repair = server.requests
    assert not first.repair and repair.repair
    assert repair.messages[:2] == first.messages
    assert repair.messages[2] == {"role": "assistant", "content": '{"documentation": "half'}
    assert repair.messages[3]["role"] == "user"
    assert "not valid JSON" in repair.messages[3]["content"]
    assert writer.report.repairs == 1 and writer.report.failures == 0


def test_a_schema_error_is_sent_back_naming_the_field(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]

    def wrong_type(seen):
        answer = narrative_from(seen)
        answer["solutions"] = "just fix it"
        return content(json.dumps(answer))(seen)

    with OpenAIServer(sequence(wrong_type, good)) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert result.ok
    assert "solutions" in server.requests[1].messages[3]["content"]


def test_always_malformed_fails_after_one_repair_and_is_not_cached(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(content("Sure! Here is the narrative you asked for.")) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
        assert not result.ok and result.narrative is None
        assert result.error.startswith("invalid answer after one repair")
        assert len(server.requests) == 2
        assert writer.report.failures == 1 and writer.report.repairs == 1
        assert result.applied_to(record) is record
        writer.write(record, draft)  # nothing was cached: it asks again
        assert len(server.requests) == 4


@pytest.mark.parametrize(
    "text",
    [
        "```json\n{answer}\n```",
        "<think>The phase must be one of three.</think>\n{answer}",
    ],
)
def test_parse_answer_tolerates_fences_and_think_blocks(text):
    answer = json.dumps(
        {key: "x" if "array" not in kind else ["x"] for key, kind, _ in NARRATIVE_FIELDS}
    )
    narrative, problem = parse_answer(text.replace("{answer}", answer))
    assert problem is None and narrative.documentation == "x"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (None, "empty"),
        ("[]", "one JSON object"),
        ('{"documentation": "x"}', "triggerScenarios"),
        ('{"documentation": " ", "bogus": 1}', "bogus"),
    ],
)
def test_parse_answer_explains_what_is_wrong(text, problem):
    narrative, message = parse_answer(text)
    assert narrative is None and problem in message


# --- retries ------------------------------------------------------------------------------


def test_429_with_retry_after_is_honoured(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(sequence(status(429, retry_after="0.3"), good)) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert result.ok and result.requests == 2
    first, second = server.requests
    assert second.received - first.finished >= 0.28  # backoff alone would be ≤ 0.01 s
    assert writer.report.retries == 1


def test_5xx_is_retried_with_backoff(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(sequence(status(500), status(503), good)) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert result.ok and result.requests == 3
    assert writer.report.retries == 2 and writer.report.failures == 0


def test_persistent_5xx_gives_up_after_max_retries(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(status(500, "overloaded")) as server:
        writer = make_writer(server, tmp_path, llm_max_retries=2)
        result = writer.write(record, draft)
    assert not result.ok
    assert "HTTP 500" in result.error and "overloaded" in result.error
    assert "gave up after 3 attempts" in result.error
    assert len(server.requests) == 3 and writer.report.retries == 2


def test_client_errors_are_not_retried(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(status(401, "invalid api key")) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert not result.ok and "HTTP 401" in result.error and "invalid api key" in result.error
    assert len(server.requests) == 1 and writer.report.retries == 0


def test_a_dropped_connection_is_retried(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(sequence(drop, good)) as server:
        writer = make_writer(server, tmp_path)
        result = writer.write(record, draft)
    assert result.ok and result.requests == 2 and writer.report.retries == 1


def test_always_dropped_fails_naming_the_connection(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(drop) as server:
        writer = make_writer(server, tmp_path, llm_max_retries=1)
        result = writer.write(record, draft)
    assert not result.ok and result.error.startswith("connection failed")
    assert len(server.requests) == 2


def test_a_slow_answer_times_out_and_is_retried(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(sequence(slow(3.0), good)) as server:
        writer = make_writer(server, tmp_path, llm_timeout=0.3)
        started = time.monotonic()
        result = writer.write(record, draft)
        elapsed = time.monotonic() - started
    assert result.ok and result.requests == 2 and writer.report.retries == 1
    assert 0.3 <= elapsed < 2.0


def test_always_slow_fails_with_the_timeout(seed_record, tmp_path):
    record, draft = records(seed_record, 1)[0]
    with OpenAIServer(slow(3.0)) as server:
        writer = make_writer(server, tmp_path, llm_timeout=0.2, llm_max_retries=1)
        started = time.monotonic()
        result = writer.write(record, draft)
        elapsed = time.monotonic() - started
    assert not result.ok and "no answer within 0.2 s" in result.error
    assert "gave up after 2 attempts" in result.error
    assert len(server.requests) == 2 and elapsed < 1.5


def test_retry_after_parsing():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("0.25") == 0.25
    assert retry_after_seconds("-4") == 0.0
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:07 GMT", now=now) == 7.0
    assert retry_after_seconds("Thu, 01 Jan 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


# --- concurrency ----------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 3])
def test_exactly_n_requests_are_in_flight(seed_record, tmp_path, concurrency):
    items = records(seed_record, 6)
    with OpenAIServer(slow(0.1)) as server:
        writer = make_writer(server, tmp_path, llm_concurrency=concurrency)
        results = run(writer, items)
    assert len(results) == 6 and all(result.ok for result in results.values())
    assert server.max_in_flight == concurrency


def test_async_api(seed_record, tmp_path):
    items = records(seed_record, 4)

    async def main(writer):
        return [result async for result in writer.awrite_many(items)]

    with OpenAIServer(slow(0.1)) as server:
        writer = make_writer(server, tmp_path, llm_concurrency=2)
        results = asyncio.run(main(writer))
    assert sorted(result.record_id for result in results) == [r.id for r, _ in items]
    assert server.max_in_flight == 2


def test_write_many_refuses_to_run_inside_an_event_loop(seed_record, tmp_path):
    async def main(writer):
        with pytest.raises(UsageError, match="awrite_many"):
            next(writer.write_many(records(seed_record, 1)))

    with OpenAIServer(good) as server:
        asyncio.run(main(make_writer(server, tmp_path)))
    assert server.requests == []


# --- cache and resume -----------------------------------------------------------------------


def test_a_second_run_is_answered_from_the_cache(seed_record, tmp_path):
    items = records(seed_record, 4)
    with OpenAIServer(good) as server:
        first = run(make_writer(server, tmp_path), items)
        assert len(server.requests) == 4
        writer = make_writer(server, tmp_path)
        second = run(writer, items)
        assert len(server.requests) == 4  # no new request
    assert all(result.cached and result.requests == 0 for result in second.values())
    assert {key: r.narrative for key, r in second.items()} == {
        key: r.narrative for key, r in first.items()
    }
    assert second[items[0][0].id].tokens.total == 0
    assert (writer.report.cached, writer.report.requests, writer.report.total_tokens) == (4, 0, 0)


def test_the_cache_is_keyed_by_model_and_prompt(seed_record, tmp_path):
    (record, draft), *_ = records(seed_record, 1)
    with OpenAIServer(good) as server:
        make_writer(server, tmp_path).write(record, draft)
        make_writer(server, tmp_path, llm_model="other-model").write(record, draft)
        assert len(server.requests) == 2
        other_draft = draft.model_copy(update={"documentation": "A different draft."})
        make_writer(server, tmp_path).write(record, other_draft)
        assert len(server.requests) == 3
        make_writer(server, tmp_path).write(record, draft)
        assert len(server.requests) == 3
    assert server.requests[1].body["model"] == "other-model"


def test_cache_dir_defaults_under_the_settings_cache_dir(seed_record, tmp_path):
    (record, draft), *_ = records(seed_record, 1)
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path)
        writer.write(record, draft)
    assert writer.cache.root == tmp_path / "cache" / "llm"
    assert len(list(writer.cache.root.glob("*/*.json"))) == 1


def test_an_interrupted_run_resumes_from_the_cache(seed_record, tmp_path):
    items = records(seed_record, 5)
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path, llm_concurrency=1)
        interrupted = []
        for result in writer.write_many(items):
            interrupted.append(result)
            if len(interrupted) == 2:
                break  # the run is stopped midway
        assert len(server.requests) == 2
        resumed = make_writer(server, tmp_path, llm_concurrency=1)
        results = run(resumed, items)
        assert len(server.requests) == 5  # only the three missing records were asked for
    assert len(results) == 5 and all(result.ok for result in results.values())
    assert resumed.report.cached == 2 and resumed.report.written == 3


def test_done_records_are_skipped(seed_record, tmp_path):
    items = records(seed_record, 5)
    done = {items[0][0].id, items[3][0].id}
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path)
        results = run(writer, items, done=done)
    assert set(results) == {record.id for record, _ in items} - done
    assert len(server.requests) == 3
    assert writer.report.skipped == 2 and writer.report.records == 3


def test_applied_to_sets_the_narrative_and_writer(seed_record, tmp_path):
    (record, draft), *_ = records(seed_record, 1)
    with OpenAIServer(good) as server:
        result = make_writer(server, tmp_path).write(record, draft)
    updated = result.applied_to(record)
    assert updated.writer == "llm:test-model"
    assert updated.documentation == result.narrative.documentation
    assert updated.solutions == result.narrative.solutions
    assert updated.error_class == record.error_class


def test_early_close_cancels_requests_in_flight(seed_record, tmp_path):
    items = records(seed_record, 6)

    def first_is_quick(seen):
        return slow(0.05 if "#0:" in seen.prompt else 5.0)(seen)

    with OpenAIServer(first_is_quick) as server:
        writer = make_writer(server, tmp_path, llm_concurrency=3)
        results = writer.write_many(items)
        assert next(results).record_id == items[0][0].id
        started = time.monotonic()
        results.close()
        assert time.monotonic() - started < 0.5
        assert len(server.requests) == 3  # nothing new was sent after the close
    assert writer.report.records == 1 and writer.report.failures == 0


def test_backoff_is_capped_jittered_and_honours_retry_after(tmp_path):
    settings = Settings(cache_dir=tmp_path, llm_base_url="http://x/v1", llm_model="m")
    writer = LLMWriter(settings, backoff_base=1.0, backoff_cap=4.0, retry_after_cap=60.0)
    bounds = {1: (0.5, 1.0), 2: (1.0, 2.0), 3: (2.0, 4.0), 6: (2.0, 4.0)}
    for attempt, (low, high) in bounds.items():
        delays = {writer._delay(attempt, None) for _ in range(20)}
        assert all(low <= delay <= high for delay in delays) and len(delays) > 1
    assert writer._delay(1, 10.0) == 10.0
    assert writer._delay(1, 500.0) == 60.0
    assert 0.5 <= writer._delay(1, 0.0) <= 1.0


def test_a_base_url_without_v1_is_used_as_given(seed_record, tmp_path):
    (record, draft), *_ = records(seed_record, 1)
    with OpenAIServer(good) as server:
        writer = make_writer(server, tmp_path, llm_base_url=server.url.removesuffix("/v1"))
        assert writer.write(record, draft).ok
    assert server.requests[0].path == "/chat/completions"


# --- configuration ----------------------------------------------------------------------------


def test_settings_come_from_the_environment(tmp_path):
    environ = {
        "ERRDEX_LLM_BASE_URL": "http://127.0.0.1:1/v1/",
        "ERRDEX_LLM_MODEL": "qwen",
        "ERRDEX_LLM_API_KEY": "sk-secret",
        "ERRDEX_LLM_CONCURRENCY": "8",
        "ERRDEX_LLM_TIMEOUT": "0.5",
        "ERRDEX_LLM_MAX_RETRIES": "0",
        "ERRDEX_LLM_MAX_TOKENS": "512",
    }
    resolved = resolve_settings({"cache_dir": str(tmp_path)}, environ=environ)
    writer = LLMWriter(resolved.settings)
    assert writer.endpoint == "http://127.0.0.1:1/v1/chat/completions"
    assert (writer.model, writer.concurrency, writer.timeout) == ("qwen", 8, 0.5)
    assert (writer.max_retries, writer.max_tokens) == (0, 512)
    assert resolved.origins["llm_model"] == "env ERRDEX_LLM_MODEL"
    assert "sk-secret" not in json.dumps(resolved.settings.model_dump(mode="json"))
    assert {s.name for s in SETTINGS} >= {
        "llm_base_url",
        "llm_model",
        "llm_api_key",
        "llm_concurrency",
        "llm_timeout",
        "llm_max_retries",
        "llm_max_tokens",
    }


@pytest.mark.parametrize(
    ("values", "missing"),
    [({"llm_model": "m"}, "llm_base_url"), ({"llm_base_url": "http://x/v1"}, "llm_model")],
)
def test_a_missing_endpoint_or_model_is_a_usage_error(values, missing, tmp_path):
    with pytest.raises(UsageError, match=missing):
        LLMWriter(Settings(cache_dir=tmp_path, **values))


def test_missing_httpx_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "httpx", None)
    settings = Settings(cache_dir=tmp_path, llm_base_url="http://x/v1", llm_model="m")
    with pytest.raises(MissingDependencyError, match=r"errdex\[llm\]") as caught:
        LLMWriter(settings)
    assert caught.value.extra == "llm"
