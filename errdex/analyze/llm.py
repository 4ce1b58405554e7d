"""The LLM writer: a record's narrative fields from any OpenAI-compatible chat endpoint (#5).

:class:`LLMWriter` sends each record's code facts, its snippet (the site line marked), its
class and template and the offline writer's draft to ``POST {llm_base_url}/chat/completions``
(SGLang, vLLM, Ollama, llama.cpp's server, hosted APIs) and validates the answer against the
:class:`~errdex.models.Narrative` schema. What it does for a run over many records:

- **Structured output.** Requests carry a ``response_format`` JSON schema; a server that rejects
  it (HTTP 400/422 naming ``response_format`` or ``json_schema``) is asked again without it, and
  the writer stops sending it. The system prompt always spells out the JSON it wants.
- **Repair.** An answer that is not JSON or breaks the schema is sent back once with the error
  and a request for corrected JSON; a second bad answer is a failed :class:`LLMResult` (the
  caller keeps the offline draft).
- **Concurrency and retries.** ``llm_concurrency`` requests in flight (asyncio and one
  ``httpx.AsyncClient``), each bounded by ``llm_timeout``; timeouts, dropped connections, HTTP
  408/409/429 and 5xx are retried up to ``llm_max_retries`` times with capped exponential backoff
  and jitter, waiting at least what ``Retry-After`` asks.
- **Cache.** Every valid answer is stored under ``cache_dir`` in one JSON file per key, the
  SHA-256 of the model and the prompt; a cached answer costs no request.
- **Resume.** An interrupted run is resumed by running it again: answers already received are
  in the cache. Records already enriched and stored can be skipped without even building their
  prompt by passing their ids as ``done`` (e.g. the ids of the store's records whose ``writer``
  is :attr:`LLMWriter.writer`).

The answer is *not* checked against the facts here: the verifier does that for every writer.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import os
import random
import re
import tempfile
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Container,
    Generator,
    Iterable,
)
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from errdex.errors import MissingDependencyError, StoreError, UsageError
from errdex.models import ErrorRecord, Narrative

if TYPE_CHECKING:
    import httpx

    from errdex.settings import Settings

PROMPT_VERSION = 1
"""Part of every cache key: bump it when the prompt changes so old answers are not reused."""

NARRATIVE_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("documentation", "string", "what the error means and why this code raises it"),
    ("triggerScenarios", "string", "the calls or inputs that make this code raise it"),
    ("commonSituations", "string", "how developers usually end up there"),
    ("solutions", "array of strings", "concrete fixes, the most likely first"),
    ("exampleFix", "string", "a short Python snippet: the failing call, then the fixed one"),
    ("validationCode", "string or null", "Python that checks the input before the call"),
    ("typeGuard", "string or null", "a Python function telling whether a value is accepted"),
    ("tryCatchPattern", "string or null", "Python that catches and handles this error"),
    ("preventionTips", "array of strings", "how to avoid the error in the first place"),
)
"""The JSON keys of the answer (the record's camelCase names), their types and meanings."""

SYSTEM_PROMPT = """\
You document one error that a program can raise, for the developers who run into it.

Rules:
- Stay within the facts and the code you are given. The accepted values, the function, its \
parameters and the error class are exactly those shown; never invent other values, parameters, \
functions, options or classes, and never call the error by another class.
- Quote values exactly as the facts write them.
- The offline draft is correct but plain: keep what it says, improve the wording, add what the \
code shows, and drop anything the facts contradict.
- Code fields are short Python snippets that use only names from the facts or the code; use \
null for validationCode, typeGuard or tryCatchPattern when it does not apply.
- Answer with one JSON object and nothing else (no Markdown fence, no prose around it), with \
exactly these keys:
{fields}"""

REPAIR_PROMPT = """\
That answer cannot be used: {problem}
Answer again with only the corrected JSON object, with exactly the keys asked for."""

_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCED = re.compile(r"^\s*```[\w-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class ChatMessage(TypedDict):
    """One message of a chat-completions request."""

    role: str
    content: str


@dataclass(frozen=True)
class TokenUsage:
    """Tokens an endpoint reported (its ``usage`` field).

    Attributes:
        prompt: Prompt tokens.
        completion: Completion tokens.
    """

    prompt: int = 0
    completion: int = 0

    @property
    def total(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt + self.completion

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.prompt + other.prompt, self.completion + other.completion)


@dataclass(frozen=True)
class LLMResult:
    """What the LLM writer gave for one record.

    Attributes:
        record_id: The record's id.
        narrative: The validated narrative, or None when the writer failed.
        error: Why it failed (the last HTTP error, timeout or schema error), else None.
        cached: The narrative came from the cache (no request was sent).
        tokens: Tokens spent on this record by this run (zero when cached).
        requests: HTTP requests sent for this record (retries and the repair included).
        writer: The value for the record's ``writer`` field (``llm:<model>``).
    """

    record_id: str
    narrative: Narrative | None
    error: str | None = None
    cached: bool = False
    tokens: TokenUsage = TokenUsage()
    requests: int = 0
    writer: str = ""

    @property
    def ok(self) -> bool:
        """Whether a narrative was written."""
        return self.narrative is not None

    def applied_to(self, record: ErrorRecord) -> ErrorRecord:
        """Return the record with this result's narrative fields and ``writer``.

        Args:
            record: The record the result is for.

        Returns:
            The updated copy, or the record unchanged when the writer failed.
        """
        if self.narrative is None:
            return record
        return record.model_copy(update={**dict(self.narrative), "writer": self.writer})


@dataclass
class LLMReport:
    """Running totals of an :class:`LLMWriter`, over every run it made.

    Attributes:
        records: Results yielded (written, cached and failed).
        written: Narratives received and validated in this run.
        cached: Narratives taken from the cache.
        failures: Records left to the offline draft.
        skipped: Records skipped because their id was in ``done``.
        requests: HTTP requests sent (retries and repairs included).
        retries: Requests sent again after a timeout, dropped connection, 429 or 5xx.
        repairs: Invalid answers sent back once for correction.
        format_fallbacks: Requests repeated without ``response_format`` after a server
            rejected it.
        prompt_tokens: Prompt tokens the endpoint reported.
        completion_tokens: Completion tokens the endpoint reported.
    """

    records: int = 0
    written: int = 0
    cached: int = 0
    failures: int = 0
    skipped: int = 0
    requests: int = 0
    retries: int = 0
    repairs: int = 0
    format_fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


class _Answer(BaseModel):
    """The answer's schema: every :class:`Narrative` field, required, camelCase keys."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        extra="forbid",
        title="Narrative",
    )

    documentation: str
    trigger_scenarios: str
    common_situations: str
    solutions: list[str]
    example_fix: str
    validation_code: str | None
    type_guard: str | None
    try_catch_pattern: str | None
    prevention_tips: list[str]

    @field_validator("documentation")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value


class _RequestFailedError(Exception):
    """One chat-completions call failed for good (internal: becomes a failed result)."""


def build_messages(record: ErrorRecord, draft: Narrative) -> list[ChatMessage]:
    """Build the chat messages the LLM writer sends for one record.

    Args:
        record: The record: its class, template, location, facts and source code.
        draft: The offline writer's narrative for it.

    Returns:
        The system message (the rules and the answer's keys) and the user message.
    """
    fields = "\n".join(f"  {key} ({kind}): {meaning}" for key, kind, meaning in NARRATIVE_FIELDS)
    template = record.template.text if record.template.parts else record.error_message
    site = [
        f"repo: {record.repo}",
        f"file: {record.file_path}",
        f"line: {record.line_number}",
        f"statement: {record.kind.value}",
        f"error class: {record.error_class}",
        f"message template: {template}",
        f"category: {record.error_type.value}",
    ]
    if record.function:
        site.append(f"function: {record.function}")
    if record.package:
        site.append(f"package: {record.package} {record.package_version or ''}".rstrip())
    if record.facts is None:
        facts = "No facts were extracted for this site; rely on the code only."
    else:
        facts = _fenced(
            _json_lines(record.facts.model_dump(mode="json", exclude_defaults=True)), "json"
        )
    draft_json = _json_lines(draft.model_dump(mode="json"))
    user = "\n\n".join(
        [
            "Write the narrative of this error site.",
            "## Site\n" + "\n".join(site),
            "## Facts (from the code; the ground truth)\n" + facts,
            "## Code (the site is marked with >>)\n" + _fenced(marked_snippet(record), "python"),
            "## Offline draft\n" + _fenced(draft_json, "json"),
        ]
    )
    return [
        ChatMessage(role="system", content=SYSTEM_PROMPT.format(fields=fields)),
        ChatMessage(role="user", content=user),
    ]


def marked_snippet(record: ErrorRecord) -> str:
    """Number the record's ``sourceCode`` lines and mark the site's lines with ``>>``.

    Args:
        record: The record.

    Returns:
        One line per source line: the marker, the line number, ``|`` and the code.
    """
    lines = record.source_code.splitlines()
    first = record.source_code_start
    last_site = max(record.end_line_number or record.line_number, record.line_number)
    width = len(str(first + max(len(lines) - 1, 0)))
    out = []
    for number, line in enumerate(lines, first):
        marker = ">>" if record.line_number <= number <= last_site else "  "
        out.append(f"{marker} {number:>{width}} | {line}".rstrip())
    return "\n".join(out)


def parse_answer(content: str | None) -> tuple[Narrative | None, str | None]:
    """Validate an answer's text against the narrative schema.

    A ``<think>`` block before the JSON and a Markdown fence around it are tolerated.

    Args:
        content: The message content the endpoint returned.

    Returns:
        The narrative and None, or None and what is wrong with the answer.
    """
    if content is None or not content.strip():
        return None, "the answer is empty"
    text = _THINK.sub("", content, count=1).strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"it is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return None, f"it must be one JSON object, not {type(data).__name__}"
    try:
        answer = _Answer.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(part) for part in error['loc']) or 'answer'}: {error['msg']}"
            for error in exc.errors()[:10]
        ]
        return None, "it does not match the schema: " + "; ".join(problems)
    return Narrative.model_validate(dict(answer)), None


def prompt_key(messages: list[ChatMessage], model: str) -> str:
    """Return the cache key of a prompt: the SHA-256 of the model, the prompt and its version.

    Args:
        messages: The chat messages.
        model: The model name.

    Returns:
        64 hex characters.
    """
    payload = json.dumps(
        {"version": PROMPT_VERSION, "model": model, "messages": messages},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Parse a ``Retry-After`` header: seconds (decimals tolerated) or an HTTP date.

    Args:
        value: The header's value, if any.
        now: The current time (for dates); the clock by default.

    Returns:
        Seconds to wait (never negative), or None when absent or unparsable.
    """
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


class AnswerCache:
    """Validated answers on disk, one JSON file per key (``<root>/<k[:2]>/<key>.json``).

    Files are written to a temporary name and renamed, so a killed run never leaves a torn
    entry; an unreadable entry counts as a miss.

    Args:
        root: The cache directory (created on first write).
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """Return the file of a key."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Narrative | None:
        """Return the cached narrative of a key, or None.

        Args:
            key: A :func:`prompt_key`.
        """
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
            return Narrative.model_validate(data["narrative"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, *, model: str, narrative: Narrative, tokens: TokenUsage) -> None:
        """Store a narrative under a key.

        Args:
            key: A :func:`prompt_key`.
            model: The model that wrote it.
            narrative: The validated narrative.
            tokens: What it cost.

        Raises:
            StoreError: The cache directory cannot be written.
        """
        path = self.path(key)
        entry = {
            "model": model,
            "narrative": narrative.model_dump(mode="json"),
            "usage": {"promptTokens": tokens.prompt, "completionTokens": tokens.completion},
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, suffix=".tmp", delete=False
            ) as handle:
                json.dump(entry, handle, ensure_ascii=False)
            os.replace(handle.name, path)
        except OSError as exc:
            raise StoreError(f"cannot write the LLM cache: {exc}", location=str(path)) from exc


class LLMWriter:
    """Writes narratives with an OpenAI-compatible chat-completions endpoint.

    One writer may run :meth:`write_many` (or :meth:`awrite_many`) several times; its
    :attr:`report` adds up over all of them. It is not thread-safe.

    Args:
        settings: ``llm_base_url``, ``llm_model``, ``llm_api_key``, ``llm_concurrency``,
            ``llm_timeout``, ``llm_max_retries`` and ``llm_max_tokens`` are used, and
            ``cache_dir`` when ``cache_dir`` is not given.
        cache_dir: Where answers are cached; ``settings.cache_dir / "llm"`` by default.
        backoff_base: The first retry's delay in seconds; each retry doubles it.
        backoff_cap: The longest backoff delay in seconds.
        retry_after_cap: The longest ``Retry-After`` wait honoured, in seconds.

    Attributes:
        model: The model asked for.
        endpoint: The chat-completions URL (``{llm_base_url}/chat/completions``).
        concurrency: Requests in flight at once.
        timeout: Seconds one request may take.
        max_retries: Retries of one request after a transient failure.
        max_tokens: Most tokens one answer may have.
        cache: The answer cache.
        report: Running totals (requests, cache hits, retries, failures, tokens).

    Raises:
        MissingDependencyError: httpx is not installed (the ``llm`` extra).
        UsageError: No base URL or no model is configured.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        cache_dir: Path | None = None,
        backoff_base: float = 0.5,
        backoff_cap: float = 30.0,
        retry_after_cap: float = 120.0,
    ) -> None:
        try:
            import httpx  # noqa: F401 - checked here so a missing extra fails early
        except ImportError as exc:
            raise MissingDependencyError("the LLM writer", extra="llm") from exc
        if not settings.llm_base_url:
            raise UsageError(
                "the LLM writer needs an endpoint: set llm_base_url (ERRDEX_LLM_BASE_URL), "
                "e.g. http://127.0.0.1:30000/v1"
            )
        if not settings.llm_model:
            raise UsageError("the LLM writer needs a model: set llm_model (ERRDEX_LLM_MODEL)")
        self.model = settings.llm_model
        self.endpoint = settings.llm_base_url.rstrip("/") + "/chat/completions"
        self.concurrency = settings.llm_concurrency
        self.timeout = settings.llm_timeout
        self.max_retries = settings.llm_max_retries
        self.max_tokens = settings.llm_max_tokens
        self.cache = AnswerCache(cache_dir if cache_dir is not None else settings.cache_dir / "llm")
        self.report = LLMReport()
        self._api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else ""
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._retry_after_cap = retry_after_cap
        self._random = random.Random()
        # Cleared the first time the server rejects response_format; plain JSON instructions
        # (always in the system prompt) then do the job alone.
        self._structured = True
        self._response_format = {
            "type": "json_schema",
            "json_schema": {
                "name": "narrative",
                "strict": True,
                "schema": _Answer.model_json_schema(by_alias=True),
            },
        }

    @property
    def writer(self) -> str:
        """The ``writer`` value of the records it writes: ``llm:<model>``."""
        return f"llm:{self.model}"

    def write(self, record: ErrorRecord, draft: Narrative) -> LLMResult:
        """Write one record's narrative (see :meth:`write_many`).

        Args:
            record: The record.
            draft: The offline writer's narrative for it.

        Returns:
            The result.
        """
        results = self.write_many([(record, draft)])
        try:
            return next(results)
        finally:
            results.close()

    def write_many(
        self,
        items: Iterable[tuple[ErrorRecord, Narrative]],
        *,
        done: Container[str] | None = None,
    ) -> Generator[LLMResult, None, None]:
        """Write the narratives of many records, ``llm_concurrency`` requests at a time.

        Runs its own event loop; from async code use :meth:`awrite_many`. Stopping the
        iteration early cancels the requests in flight; the answers received so far are
        cached, so running again resumes where it stopped.

        Args:
            items: Each record with the offline writer's draft, read lazily.
            done: Ids of records to skip (already enriched); they yield nothing.

        Yields:
            One result per record not skipped, in the order they finish.

        Raises:
            UsageError: Called while an event loop is running in this thread.
            StoreError: The cache cannot be written.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            raise UsageError("write_many cannot run inside an event loop; use awrite_many")
        loop = asyncio.new_event_loop()
        results = self.awrite_many(items, done=done)
        try:
            while True:
                try:
                    yield loop.run_until_complete(_next(results))
                except StopAsyncIteration:
                    return
        finally:
            try:
                loop.run_until_complete(results.aclose())
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    async def awrite_many(
        self,
        items: Iterable[tuple[ErrorRecord, Narrative]],
        *,
        done: Container[str] | None = None,
    ) -> AsyncGenerator[LLMResult, None]:
        """Write the narratives of many records: the async form of :meth:`write_many`.

        Args:
            items: Each record with the offline writer's draft, read lazily.
            done: Ids of records to skip (already enriched); they yield nothing.

        Yields:
            One result per record not skipped, in the order they finish.

        Raises:
            StoreError: The cache cannot be written.
        """
        import httpx

        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        limits = httpx.Limits(
            max_connections=self.concurrency, max_keepalive_connections=self.concurrency
        )
        pending: set[asyncio.Task[LLMResult]] = set()
        source = iter(items)
        exhausted = False
        async with httpx.AsyncClient(
            headers=headers, timeout=httpx.Timeout(self.timeout), limits=limits
        ) as client:
            try:
                while True:
                    while not exhausted and len(pending) < self.concurrency:
                        item = next(source, None)
                        if item is None:
                            exhausted = True
                        elif done is not None and item[0].id in done:
                            self.report.skipped += 1
                        else:
                            pending.add(asyncio.create_task(self._write_one(client, *item)))
                    if not pending:
                        return
                    finished, pending = await asyncio.wait(
                        pending, return_when=asyncio.FIRST_COMPLETED
                    )
                    for task in finished:
                        result = task.result()
                        self.report.records += 1
                        yield result
            finally:
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)

    async def _write_one(
        self, client: httpx.AsyncClient, record: ErrorRecord, draft: Narrative
    ) -> LLMResult:
        messages = build_messages(record, draft)
        key = prompt_key(messages, self.model)
        hit = self.cache.get(key)
        if hit is not None:
            self.report.cached += 1
            return LLMResult(record.id, hit, cached=True, writer=self.writer)
        calls = _Calls()
        try:
            content = await self._complete(client, messages, calls)
            narrative, problem = parse_answer(content)
            if narrative is None:
                self.report.repairs += 1
                repair = [
                    *messages,
                    ChatMessage(role="assistant", content=content or ""),
                    ChatMessage(role="user", content=REPAIR_PROMPT.format(problem=problem)),
                ]
                narrative, problem = parse_answer(await self._complete(client, repair, calls))
                if narrative is None:
                    raise _RequestFailedError(f"invalid answer after one repair: {problem}")
        except _RequestFailedError as exc:
            self.report.failures += 1
            return LLMResult(
                record.id,
                None,
                error=str(exc),
                tokens=calls.tokens,
                requests=calls.requests,
                writer=self.writer,
            )
        self.cache.put(key, model=self.model, narrative=narrative, tokens=calls.tokens)
        self.report.written += 1
        return LLMResult(
            record.id, narrative, tokens=calls.tokens, requests=calls.requests, writer=self.writer
        )

    async def _complete(
        self, client: httpx.AsyncClient, messages: list[ChatMessage], calls: _Calls
    ) -> str | None:
        """Send one chat completion, retrying transient failures; return the content."""
        import httpx

        attempt = 0
        while True:
            body: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                "temperature": 0,
                "max_tokens": self.max_tokens,
            }
            if self._structured:
                body["response_format"] = self._response_format
            self.report.requests += 1
            calls.requests += 1
            retry_after: float | None = None
            try:
                response = await asyncio.wait_for(
                    client.post(self.endpoint, json=body), timeout=self.timeout
                )
            except (asyncio.TimeoutError, httpx.TimeoutException):
                failure = f"no answer within {self.timeout:g} s"
            except httpx.TransportError as exc:
                failure = f"connection failed: {exc or type(exc).__name__}"
            else:
                status = response.status_code
                if status == 200:
                    return self._content(response, calls)
                if "response_format" in body and _rejects_response_format(response):
                    self._structured = False
                    self.report.format_fallbacks += 1
                    continue
                failure = f"HTTP {status} from {self.endpoint}: {_excerpt(response.text)}"
                if status not in _RETRYABLE_STATUS and status < 500:
                    raise _RequestFailedError(failure)
                retry_after = retry_after_seconds(response.headers.get("retry-after"))
            if attempt >= self.max_retries:
                raise _RequestFailedError(f"{failure} (gave up after {attempt + 1} attempts)")
            attempt += 1
            self.report.retries += 1
            await asyncio.sleep(self._delay(attempt, retry_after))

    def _content(self, response: httpx.Response, calls: _Calls) -> str | None:
        try:
            data = response.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _RequestFailedError(
                f"not a chat completion from {self.endpoint}: {_excerpt(response.text)}"
            ) from exc
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            tokens = TokenUsage(
                _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
            )
            calls.tokens += tokens
            self.report.prompt_tokens += tokens.prompt
            self.report.completion_tokens += tokens.completion
        content = message.get("content") if isinstance(message, dict) else None
        return content if isinstance(content, str) else None

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Capped exponential backoff with jitter, at least what ``Retry-After`` asked."""
        backoff = min(self._backoff_cap, self._backoff_base * 2.0 ** (attempt - 1))
        delay = backoff * (0.5 + self._random.random() / 2)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self._retry_after_cap))
        return delay


@dataclass
class _Calls:
    """What one record's requests cost."""

    requests: int = 0
    tokens: TokenUsage = field(default_factory=TokenUsage)


async def _next(results: AsyncIterator[LLMResult]) -> LLMResult:
    return await results.__anext__()


def _fenced(text: str, language: str) -> str:
    """Fence text in Markdown with more backticks than it contains in a row."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _json_lines(data: dict[str, Any]) -> str:
    """Serialise an object as JSON with one top-level key per line (compact, yet readable)."""
    lines = [
        f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in data.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}" if lines else "{}"


def _rejects_response_format(response: httpx.Response) -> bool:
    if response.status_code not in (400, 422):
        return False
    text = response.text.lower()
    return any(word in text for word in ("response_format", "json_schema", "response format"))


def _excerpt(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _count(value: object) -> int:
    return value if isinstance(value, int) and value >= 0 else 0
