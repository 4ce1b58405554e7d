"""The worker processes of ``errdex serve --workers N``.

uvicorn starts each worker process by importing an application factory by name, so the serve
command hands its resolved settings and options to the workers in one environment variable,
:data:`WORKER_ENV` (inherited by the processes it starts). Each worker opens its own
connection to the store and loads the matcher index from its cache next to the database
(``serve`` builds it before the workers start), so N workers cost one index build.
"""

from __future__ import annotations

import dataclasses
import json
import os

from fastapi import FastAPI

from errdex.errors import UsageError
from errdex.settings import Settings
from errdex.store.sqlite import SQLiteStore
from errdex.web.app import create_app
from errdex.web.services import WebOptions

WORKER_ENV = "ERRDEX_SERVE_WORKER"
"""The environment variable that carries the serve command's configuration to its workers."""

WORKER_FACTORY = "errdex.web.worker:worker_app"
"""The import string of :func:`worker_app`, for ``uvicorn.run(..., factory=True)``."""


def worker_environment(settings: Settings, options: WebOptions) -> str:
    """Return the value of :data:`WORKER_ENV` that makes workers serve as this process would.

    Args:
        settings: The effective settings. The LLM key is left out: the web never uses it.
        options: The web options, the ingest token included (the variable is only ever in
            the environment of the serve command's own processes).
    """
    return json.dumps(
        {
            "settings": settings.model_dump(mode="json", exclude={"llm_api_key"}),
            "options": dataclasses.asdict(options),
        }
    )


def worker_app() -> FastAPI:
    """Build one worker's application from :data:`WORKER_ENV` (uvicorn's factory).

    The worker's store stays open for the life of the process.

    Raises:
        UsageError: The variable is not set (the factory was not started by ``serve``).
    """
    raw = os.environ.get(WORKER_ENV)
    if not raw:
        raise UsageError(f"{WORKER_ENV} is not set: start workers with errdex serve --workers N")
    data = json.loads(raw)
    settings = Settings.model_validate(data["settings"])
    store = SQLiteStore(settings.db)
    return create_app(settings, store, options=WebOptions(**data["options"]))
