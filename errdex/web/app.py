"""The application factory: ``create_app(settings, store)`` → a FastAPI app.

Everything the routes share hangs off ``app.state`` (a :class:`~errdex.web.services.Services`
and the Jinja2 environment), made here per application: nothing is created at import time.

Every failure of an API route answers one JSON shape, ``{"ok": false, "error": …, "code": …,
"status": …}``; pages answer the same failure as an HTML page with the same status. Every
response carries a Content-Security-Policy that allows no script at all on the pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from errdex import __version__
from errdex.errors import ErrdexError, RecordNotFoundError, StoreError
from errdex.settings import Settings
from errdex.store.base import RecordStore
from errdex.web.api import api_router
from errdex.web.pages import ErrorContext, pages_router, render_page, safe_url
from errdex.web.services import Services, WebOptions

__all__ = ["WebOptions", "create_app", "error_body"]

STATIC = Path(__file__).resolve().parent / "static"

PAGE_CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
# The OpenAPI explorer at /docs loads its script and styles from a CDN and runs inline script.
DOCS_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "img-src 'self' data: https://fastapi.tiangolo.com; connect-src 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)

_STATUS_CODES = {
    400: "bad-request",
    401: "unauthorized",
    404: "not-found",
    405: "method-not-allowed",
    413: "too-large",
    422: "invalid-input",
    500: "internal",
    503: "timeout",
}


def error_body(message: str, *, status: int, code: str | None = None) -> dict[str, Any]:
    """Return the one JSON error shape: ``{ok, error, code, status}``.

    Args:
        message: One sentence for a person.
        status: The HTTP status.
        code: A stable kebab-case code; derived from the status when None.
    """
    return {
        "ok": False,
        "error": message,
        "code": code or _STATUS_CODES.get(status, "error"),
        "status": status,
    }


def _wants_json(scope: Scope) -> bool:
    path = str(scope.get("path", ""))
    return path.startswith(("/api", "/openapi")) or path == "/healthz"


class LimitsMiddleware:
    """Refuse bodies over the limit (413) and add the security headers to every response.

    Args:
        app: The wrapped application.
        max_body_bytes: The largest request body accepted.
        render_error: Renders the HTML error page for page routes.
    """

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, render_error: Any) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.render_error = render_error

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one ASGI request."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = DOCS_CSP if str(scope.get("path", "")).startswith("/docs") else PAGE_CSP

        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"x-frame-options", b"DENY"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(scope, send_with_headers)
            return
        # The body is read whole before the app runs (it is at most the limit), so that a
        # body over the limit is refused here and never reaches the route's body parsing.
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.max_body_bytes:
                await self._too_large(scope, send_with_headers)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        try:
            await self.app(scope, replay, send_with_headers)
        except Exception as exc:
            # Starlette answers an unhandled error outside every middleware, so without the
            # headers: answer it here, then let it go on to be logged.
            if not started:
                await self._error(
                    scope, send_with_headers, 500, f"internal error: {type(exc).__name__}"
                )
            raise

    async def _too_large(self, scope: Scope, send: Send) -> None:
        await self._error(scope, send, 413, f"request body over {self.max_body_bytes} bytes")

    async def _error(self, scope: Scope, send: Send, status: int, message: str) -> None:
        response: Response
        if _wants_json(scope):
            response = JSONResponse(error_body(message, status=status), status_code=status)
        else:
            response = self.render_error(status, message)
        await response(scope, _empty_receive, send)


async def _empty_receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def create_app(
    settings: Settings, store: RecordStore, *, options: WebOptions | None = None
) -> FastAPI:
    """Build the web application over a store.

    Args:
        settings: The effective settings (the store's path and the matcher engine are used).
        store: The store the pages and the API read; it stays the caller's to close.
        options: Limits (body size, page sizes, time limit) and the ingest token; the
            defaults (ingest off) when None.

    Returns:
        The FastAPI application: pages at ``/``, the JSON API under ``/api``, its OpenAPI
        explorer at ``/docs``. At shutdown it closes the connections it opened.
    """
    options = options or WebOptions()
    services = Services(settings, store, options)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        services.close()

    app = FastAPI(
        title="errdex",
        version=__version__,
        description="The error index: explain pasted errors, search and read error records.",
        redoc_url=None,
        lifespan=lifespan,
    )
    templates = Environment(
        loader=PackageLoader("errdex.web", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.filters["safe_url"] = safe_url
    app.state.services = services
    app.state.templates = templates

    def render_error(status: int, message: str) -> HTMLResponse:
        context = ErrorContext(
            title=f"Error {status}", status=status, message=message, code=_code(status)
        )
        return render_page(templates, "error.html", context, status=status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        message = str(exc.detail) if exc.detail else "error"
        if _wants_json(request.scope):
            return JSONResponse(
                error_body(message, status=exc.status_code),
                status_code=exc.status_code,
                headers=exc.headers,
            )
        return render_error(exc.status_code, message)

    async def validation_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        problems = []
        for error in exc.errors()[:5]:
            where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
            problems.append(f"{where}: {error.get('msg', 'invalid')}" if where else error["msg"])
        message = "; ".join(problems) or "invalid input"
        if _wants_json(request.scope):
            return JSONResponse(error_body(message, status=422), status_code=422)
        return render_error(422, message)

    async def errdex_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ErrdexError)
        # A store that cannot be read is the server's trouble, not the request's.
        status = (
            404
            if isinstance(exc, RecordNotFoundError)
            else 503
            if isinstance(exc, StoreError)
            else 400
        )
        if _wants_json(request.scope):
            return JSONResponse(
                error_body(str(exc), status=status, code=exc.code), status_code=status
            )
        return render_error(status, str(exc))

    async def internal_error(request: Request, exc: Exception) -> Response:
        message = f"internal error: {type(exc).__name__}"
        if _wants_json(request.scope):
            return JSONResponse(error_body(message, status=500), status_code=500)
        return render_error(500, message)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(ErrdexError, errdex_error)
    app.add_exception_handler(Exception, internal_error)
    app.include_router(api_router())
    app.include_router(pages_router())
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(
        LimitsMiddleware,
        max_body_bytes=options.max_body_bytes,
        render_error=render_error,
    )
    return app


def _code(status: int) -> str:
    return _STATUS_CODES.get(status, "error")
