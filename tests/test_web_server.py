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

from errdex.web.worker import reuse_port_available


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


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting for its parent to read its status does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _fds(pid: int) -> set[str]:
    """The inodes of the sockets the process ``pid`` holds."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith("socket:["):
            found.add(target[8:-1])
    return found


def _connections_of(pid: int, port: int) -> int:
    """How many established TCP connections to ``port`` the process ``pid`` holds."""
    return len(_fds(pid) & _sockets(port, "01"))


def _healthz(sock: socket.socket) -> int:
    """Ask ``GET /healthz`` on an open connection; read the whole answer; return its status."""
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: errdex\r\n\r\n")
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536) or b"?"  # (a closed connection ends the status check)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return int(head[9:12])


def _serve_two_workers(db: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``errdex serve --workers 2`` on a free port; return it once both workers listen."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(db), "--port", str(port)]
    with log.open("wb") as output:
        server = subprocess.Popen(
            [*command, "--workers", "2", "--no-access-log"],
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while len(_sockets(port, "0A")) < 2:  # a worker may still be loading
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise AssertionError(f"errdex serve did not start: {log.read_text()}")
        time.sleep(0.1)
    return server, port


@pytest.mark.skipif(not reuse_port_available(), reason="workers share one socket off Linux")
def test_workers_share_the_connections_and_a_worker_that_ends_is_replaced(web_db, tmp_path):
    """Keep-alive clients that connect together reach every worker (SO_REUSEPORT)."""
    log = tmp_path / "serve.log"
    server, port = _serve_two_workers(web_db, log)
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(web_db)]
    clients = [httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) for _ in range(16)]
    try:
        # 16 connections at once, as a proxy's pool opens them, each kept open: with one
        # socket shared, the worker woken first takes every connection waiting.
        burst = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
        assert [_healthz(sock) for sock in burst] == [200] * 16
        workers = _workers_of(server.pid)
        assert len(workers) == 2
        listening = _sockets(port, "0A")
        assert [len(_fds(worker) & listening) for worker in workers] == [1, 1]  # one each
        held = [_connections_of(worker, port) for worker in workers]
        assert sum(held) >= 16 and min(held) > 0, held  # one socket each: both took some
        # Requests on one connection do not wait for delayed ACKs (40 ms each with Nagle's
        # algorithm on, as on a socket not said to be TCP): ten take well under 400 ms.
        began = time.monotonic()
        assert [_healthz(burst[0]) for _ in range(10)] == [200] * 10
        assert time.monotonic() - began < 0.3
        for sock in burst:
            sock.close()
        for client in clients:
            assert client.post("/api/explain", json={"text": SEED_TRACEBACK}).json()["found"]
        # Another serve on the port is refused, as uvicorn refuses it, not let in to share.
        second = subprocess.run(
            [*command, "--port", str(port), "--workers", "2"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in second.stderr
        # A worker killed once it is serving is replaced (one that ends as it starts is not).
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
    assert done.stderr.count("before it was ready: stopping") == 1
    assert "starting another" not in done.stderr  # none started again


@pytest.mark.skipif(not reuse_port_available(), reason="workers share one socket off Linux")
def test_workers_stop_when_their_serve_process_is_killed(web_db, tmp_path):
    """SIGKILL of serve (the out-of-memory killer, say) leaves no worker serving the port."""
    log = tmp_path / "serve.log"
    server, port = _serve_two_workers(web_db, log)
    try:
        workers = _workers_of(server.pid)
        assert len(workers) == 2
    finally:
        server.kill()
        server.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(map(_alive, workers)) or _sockets(port, "0A"):
        assert time.monotonic() < deadline, f"workers still serve: {log.read_text()}"
        time.sleep(0.1)
