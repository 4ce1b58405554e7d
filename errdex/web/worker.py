"""The worker processes of ``errdex serve --workers N``.

Each worker process builds its application with a factory imported by name
(:data:`WORKER_FACTORY`), so the serve command hands its resolved settings and options to
the workers in one environment variable, :data:`WORKER_ENV` (inherited by the processes it
starts). Each worker opens its own connection to the store and loads the matcher index from
its cache next to the database (``serve`` builds it before the workers start), so N workers
cost one index build.

On Linux each worker listens on a socket of its own, all bound to the same port with
``SO_REUSEPORT``, and the kernel spreads the connections over them (:func:`serve_workers`).
uvicorn's own workers share one listening socket, and the worker woken first takes every
connection waiting: clients that keep their connections open and connect together (a
reverse proxy's pool, a load test) all land on one worker while the others idle — two
workers answered 590 explain requests a second instead of 1,500. Elsewhere uvicorn's
workers serve.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import logging.config
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import time
from multiprocessing.process import BaseProcess
from types import FrameType

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


STARTUP_SECONDS = 10.0
"""A worker that ends sooner than this after it started did not start: serve stops."""

STOP_SECONDS = 30.0
"""How long a worker has to finish its requests once told to stop, before it is killed."""

_log = logging.getLogger("uvicorn.error")


def reuse_port_available() -> bool:
    """Whether workers can each have a socket on one port, the kernel spreading connections.

    Linux does that with ``SO_REUSEPORT``; other systems either lack the option or give
    every connection to the last socket bound.
    """
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def _socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``(host, port)`` that other sockets of this user may share.

    An address with a colon is IPv6, any other IPv4 (``localhost`` is 127.0.0.1), as
    uvicorn binds.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _run_worker(host: str, port: int, access_log: bool) -> None:
    """One worker process: listen on a socket of its own and serve until told to stop."""
    import uvicorn

    sock = _socket(host, port)
    config = uvicorn.Config(WORKER_FACTORY, factory=True, log_level="info", access_log=access_log)
    # Ctrl-C reaches every process: uvicorn shuts down, then raises it again.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run(sockets=[sock])


def serve_workers(host: str, port: int, workers: int, *, access_log: bool) -> bool:
    """Serve with ``workers`` processes, each listening on its own socket of one port.

    This process holds the port (bound, not listening: port 0 picks one), starts the
    workers and waits. A worker that ends is replaced, unless it ended within
    :data:`STARTUP_SECONDS` of its start (it cannot start: the others would not either).
    SIGINT or SIGTERM stops them all: each finishes the requests it has.

    Args:
        host: The address to listen on.
        port: The port (0: any free one).
        workers: How many worker processes.
        access_log: Whether the workers log every request.

    Returns:
        True when stopped by a signal, False when a worker could not start.

    Raises:
        OSError: The port cannot be bound.
    """
    from uvicorn.config import LOGGING_CONFIG

    logging.config.dictConfig(LOGGING_CONFIG)  # this process logs as its workers do
    holder = _socket(host, port)
    port = holder.getsockname()[1]
    _log.info(
        "Starting %d worker processes, each with a socket of its own on port %d", workers, port
    )
    context = multiprocessing.get_context("spawn")
    stopping: list[int] = []

    def stop(number: int, frame: FrameType | None) -> None:
        stopping.append(number)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}

    def start() -> tuple[BaseProcess, float]:
        process = context.Process(
            target=_run_worker, args=(host, port, access_log), name="errdex-serve-worker"
        )
        process.start()
        return process, time.monotonic()

    started_all = True
    running = [start() for _ in range(workers)]
    try:
        while not stopping:
            multiprocessing.connection.wait([p.sentinel for p, _ in running], timeout=0.5)
            for position, (process, started) in enumerate(running):
                if process.exitcode is None or stopping:
                    continue
                if time.monotonic() - started < STARTUP_SECONDS:
                    _log.error(
                        "worker process [%s] ended as it started (exit code %s): stopping",
                        process.pid,
                        process.exitcode,
                    )
                    started_all = False
                    stopping.append(0)
                    break
                _log.warning(
                    "worker process [%s] ended (exit code %s); starting another",
                    process.pid,
                    process.exitcode,
                )
                running[position] = start()
    finally:
        for process, _ in running:
            if process.exitcode is None:
                process.terminate()  # SIGTERM: uvicorn finishes the requests it has
        deadline = time.monotonic() + STOP_SECONDS
        for process, _ in running:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.exitcode is None:
                process.kill()
                process.join()
        holder.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return started_all
