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
from typing import Any

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


MAX_RESTARTS = 5
"""A worker that ends after it was ready is started again, at most this often within
:data:`RESTART_WINDOW` seconds; beyond that, serve stops (something keeps killing them)."""

RESTART_WINDOW = 60.0

STOP_SECONDS = 30.0
"""How long a worker has to finish its requests once told to stop, before it is killed."""

_log = logging.getLogger("uvicorn.error")


def reuse_port_available() -> bool:
    """Whether workers can each have a socket on one port, the kernel spreading connections.

    Linux does that with ``SO_REUSEPORT``; other systems either lack the option or give
    every connection to the last socket bound.
    """
    return sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")


def _socket(host: str, port: int, *, shared: bool = True, reuse: bool = True) -> socket.socket:
    """A TCP socket bound to ``(host, port)``.

    An address with a colon is IPv6, any other IPv4 (``localhost`` is 127.0.0.1), as
    uvicorn binds.

    Args:
        host: The address.
        port: The port (0: any free one).
        shared: Other sockets of this user with ``SO_REUSEPORT`` may bind the port too.
        reuse: ``SO_REUSEADDR``: a port whose last connections are still closing binds.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Said to be TCP: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on connections
    # of such sockets, and with it on, a response waits for the client's delayed ACK (40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        if reuse:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if shared:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def _hold_port(host: str, port: int) -> socket.socket:
    """Reserve the port for the workers: a socket bound to it that does not listen.

    A plain bind first: a port that any program listens on (another ``errdex serve``, or
    workers left by one) is refused, as uvicorn refuses it, instead of sharing its
    connections with it. The socket kept has ``SO_REUSEPORT`` only: the workers join it,
    and another program's socket (``SO_REUSEADDR``) cannot take the port meanwhile.

    Raises:
        OSError: The port is taken (or the address is not this machine's).
    """
    with _socket(host, port, shared=False) as probe:
        port = probe.getsockname()[1]
    return _socket(host, port, reuse=False)


def _watch(server: Any, ready: Any) -> None:
    """Say when the worker's server is ready; stop it when the serve process is gone.

    Runs in a thread of the worker. A serve process that ends without stopping its workers
    (SIGKILL, the out-of-memory killer) must not leave them serving the port.
    """
    parent = multiprocessing.parent_process()
    while not server.should_exit:
        if server.started and not ready.is_set():
            ready.set()
        if parent is not None and not parent.is_alive():
            server.should_exit = True
            return
        time.sleep(0.1)


def _run_worker(host: str, port: int, access_log: bool, ready: Any) -> None:
    """One worker process: listen on a socket of its own and serve until told to stop.

    Ctrl-C reaches every process: a worker still starting just ends, and uvicorn, once it
    has shut down, raises it again; neither is worth a traceback.
    """
    with contextlib.suppress(KeyboardInterrupt):
        import threading

        import uvicorn

        sock = _socket(host, port)
        config = uvicorn.Config(
            WORKER_FACTORY, factory=True, log_level="info", access_log=access_log
        )
        server = uvicorn.Server(config)
        threading.Thread(target=_watch, args=(server, ready), daemon=True).start()
        server.run(sockets=[sock])


class _Worker:
    """A worker process of :func:`serve_workers`, and whether its server got ready."""

    def __init__(self, context: Any, host: str, port: int, access_log: bool) -> None:
        self.ready = context.Event()
        self.process: BaseProcess = context.Process(
            target=_run_worker,
            args=(host, port, access_log, self.ready),
            name="errdex-serve-worker",
        )
        # Started with SIGINT blocked, which a new process keeps: Ctrl-C reaches the whole
        # process group, and a worker still importing would print a traceback. The serve
        # process takes it (held until the worker is started, not lost) and stops the
        # workers with SIGTERM.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def serve_workers(host: str, port: int, workers: int, *, access_log: bool) -> bool:
    """Serve with ``workers`` processes, each listening on its own socket of one port.

    This process holds the port (bound, not listening: port 0 picks one), starts the
    workers and waits. A worker that ends after its server got ready is started again (at
    most :data:`MAX_RESTARTS` times in :data:`RESTART_WINDOW` seconds); one that ends
    before is a worker that cannot start, and serve stops. SIGINT, SIGTERM or SIGHUP stops
    them all: each finishes the requests it has. A worker whose serve process is gone
    stops by itself.

    Args:
        host: The address to listen on.
        port: The port (0: any free one).
        workers: How many worker processes.
        access_log: Whether the workers log every request.

    Returns:
        True when stopped by a signal, False when a worker could not start or kept ending.

    Raises:
        OSError: The port is taken, or the address cannot be bound.
    """
    from uvicorn.config import LOGGING_CONFIG

    holder = _hold_port(host, port)
    port = holder.getsockname()[1]
    logging.config.dictConfig(LOGGING_CONFIG)  # this process logs as its workers do
    _log.info(
        "Starting %d worker processes, each with a socket of its own on port %d", workers, port
    )
    context = multiprocessing.get_context("spawn")
    stopping: list[int] = []

    def stop(number: int, frame: FrameType | None) -> None:
        stopping.append(number)

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.getsignal(sig) for sig in signals}
    running: list[_Worker] = []
    restarts: list[float] = []
    healthy = True
    try:
        for sig in signals:
            signal.signal(sig, stop)
        running.extend(_Worker(context, host, port, access_log) for _ in range(workers))
        while not stopping:
            multiprocessing.connection.wait([w.process.sentinel for w in running], timeout=0.5)
            for position, worker in enumerate(running):
                process = worker.process
                if process.exitcode is None or stopping:
                    continue
                now = time.monotonic()
                restarts = [at for at in restarts if now - at < RESTART_WINDOW]
                if not worker.ready.is_set() or len(restarts) >= MAX_RESTARTS:
                    _log.error(
                        "worker process [%s] ended (exit code %s) %s: stopping",
                        process.pid,
                        process.exitcode,
                        "before it was ready"
                        if not worker.ready.is_set()
                        else f"and {len(restarts)} others ended in {RESTART_WINDOW:.0f} s",
                    )
                    healthy = False
                    stopping.append(0)
                    break
                _log.warning(
                    "worker process [%s] ended (exit code %s); starting another",
                    process.pid,
                    process.exitcode,
                )
                restarts.append(now)
                running[position] = _Worker(context, host, port, access_log)
    finally:
        for worker in running:
            if worker.process.exitcode is None:
                worker.process.terminate()  # SIGTERM: uvicorn finishes the requests it has
        deadline = time.monotonic() + STOP_SECONDS
        for worker in running:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
        holder.close()
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    return healthy
