"""The JSON API: explain, search with facets, records, sources, stats, health and ingest.

Routes are made by :func:`api_router` for each application; they read the application's
:class:`~errdex.web.services.Services` from ``request.app.state``. Failures are raised as
HTTP exceptions and turned into the one error shape by the application's handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import threading
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, TypeVar, cast

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, Field

from errdex.analyze.writer import ensure_envelope
from errdex.match.explain import Explanation
from errdex.models import ErrorRecord, RecordEnvelope
from errdex.store.base import SearchQuery
from errdex.store.jsonl import RecordFormat, envelope_json
from errdex.web.services import IngestReport, Services

T = TypeVar("T")

INGEST_BODY = {
    "required": True,
    "description": "JSON Lines: one envelope per line, in the seed format or errdex's full format"
    " (what `errdex import` reads and `errdex export` writes).",
    "content": {
        media: {"schema": {"type": "string"}}
        for media in ("application/x-ndjson", "application/jsonl", "text/plain")
    },
}
"""The OpenAPI description of ``POST /api/ingest``'s body (read raw, not as one JSON value)."""

IngestCredentials = Annotated[
    HTTPAuthorizationCredentials | None,
    Depends(
        HTTPBearer(
            auto_error=False,
            description="The token of `errdex serve --ingest-token` (or `ERRDEX_INGEST_TOKEN`).",
        )
    ),
]
"""The bearer token of ``POST /api/ingest``, if any (checked by :func:`check_token`)."""


class ExplainRequest(BaseModel):
    """The body of ``POST /api/explain``.

    Attributes:
        text: The error, traceback or log, as pasted.
        top: At most this many matches.
    """

    text: str = Field(description="The error, traceback or log, as pasted.")
    top: int = Field(default=5, ge=1, le=100, description="At most this many matches.")


class Flavour(str, Enum):
    """The record format of ``GET /api/records/{id}``."""

    SEED = "seed"
    FULL = "full"


def services_of(request: Request) -> Services:
    """Return the application's shared services."""
    return cast(Services, request.app.state.services)


async def run_limited(services: Services, action: Callable[[], T]) -> T:
    """Run blocking work in a worker thread, failing with 503 past the time limit.

    The worker is abandoned, not killed, at the limit; the explainer is linear in its input,
    so it finishes soon after. Its slot of :attr:`Services.limiter` stays taken until it
    does: the limit on work running at once holds for abandoned work too.
    """
    limiter = services.limiter
    loop = asyncio.get_running_loop()  # the server runs on asyncio (uvicorn)
    slot = object()  # the borrower of one slot: released by whoever sees the work end last
    handoff = threading.Lock()
    state = "waiting"  # then running, done; or dropped (never started), abandoned (running)

    def work() -> T:
        nonlocal state
        with handoff:
            if state == "dropped":  # the answer went out before a thread took the work
                raise RuntimeError("dropped: the request had timed out")
            state = "running"
        try:
            return action()
        finally:
            with handoff:
                release_here, state = state == "abandoned", "done"
            if release_here:
                # Without waiting: the loop may be closing (then the slot dies with it).
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(limiter.release_on_behalf_of, slot)

    with anyio.move_on_after(services.options.time_limit) as scope:
        await limiter.acquire_on_behalf_of(slot)
        try:
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        finally:
            with handoff:
                state = {"waiting": "dropped", "running": "abandoned"}.get(state, state)
                release_now = state != "abandoned"
            if release_now:
                limiter.release_on_behalf_of(slot)
    if scope.cancelled_caught:
        raise HTTPException(503, f"the request took longer than {services.options.time_limit:g} s")
    raise AssertionError("unreachable")  # pragma: no cover


def check_paste(services: Services, text: str) -> None:
    """Refuse an empty paste or one that is not valid Unicode (422), or an over-long one (413)."""
    if not text.strip():
        raise HTTPException(422, "text: paste an error, a traceback or log lines")
    if len(text) > services.options.max_paste_chars:
        raise HTTPException(413, f"paste over {services.options.max_paste_chars} characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # JSON's "\ud800": half a surrogate pair, alone
        raise HTTPException(422, "text: not valid Unicode (a lone surrogate)") from exc


async def explain_text(services: Services, text: str, *, top: int) -> Explanation:
    """Check a paste and explain it within the limits."""
    check_paste(services, text)
    top = min(top, services.options.max_top)
    return await run_limited(services, lambda: services.explain(text, top=top))


def record_summary(record: ErrorRecord) -> dict[str, Any]:
    """Return a record as the search results list it: seed format plus function and kind."""
    return record.seed_dict() | {
        "function": record.function,
        "kind": record.kind.value,
        "language": record.language,
    }


def find_record(services: Services, record_id: str) -> RecordEnvelope:
    """Return the record with an id, or fail with 404 (malformed ids are unknown ids)."""
    wanted = record_id.strip().lower()
    envelopes = (
        services.read(lambda store: store.get(wanted))
        if len(wanted) == 16 and all(c in "0123456789abcdef" for c in wanted)
        else []
    )
    if not envelopes:
        raise HTTPException(404, f"no record with id {record_id[:40]!r}")
    return ensure_envelope(envelopes[0])


def check_token(services: Services, credentials: HTTPAuthorizationCredentials | None) -> None:
    """Let an ingest through only when ingest is on and the bearer token is the server's.

    Raises:
        HTTPException: 404 when ingest is off (the route does not exist for the client), 401
            with ``WWW-Authenticate: Bearer`` when the token is missing or wrong.
    """
    expected = services.options.ingest_token
    if expected is None:
        raise HTTPException(404, "ingest is off: start the server with errdex serve --allow-ingest")
    # Headers arrive decoded as latin-1: encoding back gives the bytes the client sent.
    given = credentials.credentials.encode("latin-1") if credentials is not None else b""
    if not hmac.compare_digest(given, expected.encode("utf-8")):
        raise HTTPException(
            401,
            "a valid token is required: Authorization: Bearer <token>",
            headers={"WWW-Authenticate": "Bearer"},
        )


def ingest_json(report: IngestReport) -> dict[str, Any]:
    """Return an ingest's answer: counts by format and repo, and the bad lines."""
    written = report.written
    return {
        "ok": True,
        "lines": report.lines,
        "records": written.records,
        "formats": dict(written.formats),
        "repos": dict(written.repos),
        "rejected": report.rejected,
        "problems": [{"line": p.line, "error": p.error} for p in report.problems],
    }


def api_router() -> APIRouter:
    """Make the router of the JSON API (``/api/…`` and ``/healthz``)."""
    router = APIRouter()

    @router.post("/api/explain", tags=["explain"])
    async def api_explain(request: Request, body: ExplainRequest) -> dict[str, Any]:
        """Explain a pasted error: the same structure as ``errdex explain --json``."""
        services = services_of(request)
        answer = await explain_text(services, body.text, top=body.top)
        return answer.to_json() | {"found": answer.found}

    @router.get("/api/records", tags=["records"])
    async def api_records(
        request: Request,
        q: Annotated[str, Query(max_length=1000, description="Full-text query.")] = "",
        repo: Annotated[str | None, Query(max_length=300)] = None,
        error_type: Annotated[str | None, Query(alias="errorType", max_length=100)] = None,
        error_class: Annotated[str | None, Query(alias="errorClass", max_length=300)] = None,
        language: Annotated[str | None, Query(max_length=50)] = None,
        page: Annotated[int, Query(ge=1, le=10_000)] = 1,
        page_size: Annotated[int, Query(alias="pageSize", ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Search records (FTS5 over message, class, path and prose) with facet counts."""
        services = services_of(request)
        size = min(page_size, services.options.max_page_size)
        query = SearchQuery(
            text=q,
            repo=repo or None,
            error_type=error_type or None,
            error_class=error_class or None,
            language=language or None,
            limit=size,
            offset=(page - 1) * size,
        )
        records, total, facets = await run_limited(services, lambda: services.search(query))
        return {
            "ok": True,
            "total": total,
            "page": page,
            "pageSize": size,
            "pages": max(1, -(-total // size)),
            "records": [record_summary(record) for record in records],
            "facets": facets,
        }

    @router.get(
        "/api/records/{record_id}",
        tags=["records"],
        response_model=None,
        responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
    )
    async def api_record(
        request: Request, record_id: str, format: Flavour = Flavour.FULL
    ) -> Response:
        """One record as ``{"record", "datasetVersion"}``; ``format=seed`` gives the seed's keys."""
        services = services_of(request)
        envelope = await run_limited(services, lambda: find_record(services, record_id))
        flavour = RecordFormat.SEED if format is Flavour.SEED else RecordFormat.FULL
        # The JSON line errdex export writes, sent as it is (not parsed and written again).
        return Response(envelope_json(envelope, flavour), media_type="application/json")

    @router.get("/api/sources", tags=["store"])
    async def api_sources(request: Request) -> dict[str, Any]:
        """Every mined source with its version and record count."""
        services = services_of(request)
        sources = await run_limited(services, lambda: services.read(lambda s: s.sources()))
        return {
            "ok": True,
            "sources": [
                info.model_dump(mode="json") | {"records": count} for info, count in sources
            ],
        }

    @router.get("/api/stats", tags=["store"])
    async def api_stats(request: Request) -> dict[str, Any]:
        """Counts of records by category, class and repo."""
        services = services_of(request)
        stats = await run_limited(services, lambda: services.read(lambda s: s.stats()))
        return {"ok": True} | stats.model_dump(mode="json")

    @router.get("/healthz", tags=["store"])
    async def healthz(request: Request) -> dict[str, Any]:
        """Liveness: the store answers."""
        services = services_of(request)
        version = await run_limited(services, lambda: services.read(lambda s: s.version()))
        return {"ok": True, "storeVersion": version}

    # Uptime monitors often ask with HEAD.
    router.add_api_route("/healthz", healthz, methods=["HEAD"], include_in_schema=False)

    @router.post("/api/ingest", tags=["ingest"], openapi_extra={"requestBody": INGEST_BODY})
    async def api_ingest(
        request: Request,
        credentials: IngestCredentials,
    ) -> dict[str, Any]:
        """Add records: a JSON Lines body, as ``errdex import`` reads a file.

        Off unless the server runs with ``errdex serve --allow-ingest`` (404 otherwise); needs
        ``Authorization: Bearer <token>`` (401 otherwise). Each line is checked on its own: the
        valid ones are written (by id, under the source ``import:REPO``), the others are
        counted in ``rejected`` and described in ``problems``. Explanations and searches see
        the new records as soon as the answer arrives.
        """
        services = services_of(request)
        check_token(services, credentials)
        body = await request.body()
        if not body.strip():
            raise HTTPException(422, "body: send records as JSON Lines, one per line")
        report = await anyio.to_thread.run_sync(
            lambda: services.ingest(body), limiter=services.limiter
        )
        return ingest_json(report)

    return router
