"""A real uvicorn server on loopback answers the API and the pages over TCP."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from test_web_helpers import (  # noqa: F401 (fixtures)
    SEED_TRACEBACK,
    live_server,
    soup,
    web_app,
    web_db,
    web_store,
)

from errdex.web.worker import STARTUP_SECONDS, reuse_port_available


def test_real_server_on_loopback(live_server):
    with httpx.Client(base_url=live_server, timeout=30) as client:
        assert client.get("/healthz").json()["ok"] is True
        answer = client.post("/api/explain", json={"text": SEED_TRACEBACK}).json()
        assert answer["found"] and answer["matches"][0]["record"]["lineNumber"] == 124
        too_big = client.post("/api/explain", content=b"x" * 1_100_000)
        assert too_big.status_code == 413 and too_big.json()["code"] == "too-large"
        html = client.post("/explain", data={"q": SEED_TRACEBACK})
        assert (
            html.status_code == 200
            and "default-src 'none'" in html.headers["content-security-policy"]
        )
        assert soup(html.text).select_one("article.match.exact")


def _workers_of(pid: int) -> list[int]:
    """The worker processes a serve process started (not multiprocessing's helpers)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    found = []
    for child in map(int, children):
        command = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
        if b"spawn_main" in command:
            found.append(child)
    return found


def _sockets(port: int, state: str) -> set[str]:
    """The inodes of the TCP sockets on local ``port`` in ``state`` (01 established, 0A listen)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                inodes.add(fields[9])
    return inodes


def _connections_of(pid: int, port: int) -> int:
    """How many established TCP connections to ``port`` the process ``pid`` holds."""
    inodes = _sockets(port, "01")
    held = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        held += target.startswith("socket:[") and target[8:-1] in inodes
    return held


@pytest.mark.skipif(not reuse_port_available(), reason="workers share one socket off Linux")
def test_workers_share_the_connections_and_a_worker_that_ends_is_replaced(web_db, tmp_path):
    """Keep-alive clients that connect together reach every worker (SO_REUSEPORT)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(web_db)]
    with log.open("wb") as output:
        server = subprocess.Popen(
            [*command, "--port", str(port), "--workers", "2", "--no-access-log"],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) for _ in range(16)]
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"errdex serve did not start: {log.read_text()}"
            try:
                if clients[0].get("/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        started = time.monotonic()
        while len(_sockets(port, "0A")) < 2:  # the other worker may still be loading
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        # 16 connections at once, as a proxy's pool opens them, each kept open: with one
        # socket shared, the worker woken first takes every connection waiting.
        burst = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
        for sock in burst:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: errdex\r\n\r\n")
        for sock in burst:
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        workers = _workers_of(server.pid)
        assert len(workers) == 2
        held = [_connections_of(worker, port) for worker in workers]
        assert sum(held) >= 16 and min(held) > 0, held  # one socket each: both took some
        for sock in burst:
            sock.close()
        for client in clients:
            assert client.post("/api/explain", json={"text": SEED_TRACEBACK}).json()["found"]
        # A worker killed once it is serving is replaced (one that ends as it starts is not).
        time.sleep(max(0.0, STARTUP_SECONDS + 0.5 - (time.monotonic() - started)))
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not (len(now := _workers_of(server.pid)) == 2 and workers[0] not in now):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        for _ in range(4):
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as fresh:
                assert fresh.post("/api/explain", json={"text": SEED_TRACEBACK}).json()["found"]
        assert "ended (exit code -9); starting another" in log.read_text()
    finally:
        for client in clients:
            client.close()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0, log.read_text()


@pytest.mark.skipif(not reuse_port_available(), reason="workers share one socket off Linux")
def test_workers_that_cannot_start_stop_the_server():
    """A worker that ends as it starts is not started again and again: serve stops."""
    script = (
        "import sys\n"
        "from errdex.web.worker import serve_workers\n"
        "sys.exit(0 if serve_workers('127.0.0.1', 0, 2, access_log=False) else 3)\n"
    )
    env = os.environ | {"ERRDEX_SERVE_WORKER": "{}"}  # no settings: the factory fails
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 3, done.stderr
    assert "ended as it started (exit code 1): stopping" in done.stderr
    assert done.stderr.count("Started server process") <= 2  # none started again
