"""Load benchmark of ``errdex serve``: ``POST /api/explain`` under concurrent clients.

The store: 100,000 records (``--records``), built once and cached under
``~/.cache/errdex-bench/``. Real records are mined from a few packages installed in this
environment with the pipeline and enriched (``make run`` runs ``errdex enrich`` before it
serves); then each is copied with another repo, path, id and template (two words of the real
templates' vocabulary put before its text, so the copies' templates are distinct and as long
as real ones; copies keep their original's prose), until the store holds the wanted number.

The run: ``errdex serve`` starts as a real subprocess on a free loopback port (``--workers``,
``--no-access-log``). The load generator is one asyncio process with ``--concurrency``
keep-alive HTTP/1.1 connections (a minimal client: httpx's would take a core of the two),
each sending its next request as soon as the previous one answers:

* **explain**: ``--seconds`` of ``POST /api/explain`` with texts made from the stored records'
  templates with sample hole values (three in four ``Class: message`` or a log message, one in
  four a traceback whose last frame points at the record; ``--misses`` adds a share of texts
  no record produces, in the store's words), after a 10 s warm-up that lets every worker load
  the matcher index and fill its bounded caches;
* **baseline**: the same clients for the same time against ``GET /healthz`` (the framework's
  floor on this machine).

It prints requests/s, p50/p99 latency (also of the answers with an exact match alone),
errors, the server's RSS (all its processes) at the start, middle and end of the explain run,
the ratio to the targets (500 req/s, p99 100 ms) and explain's throughput as a share of the
baseline's. Usage::

    python benchmarks/serve.py [--seconds 30] [--concurrency 32] [--workers 2]
                               [--records 100000] [--misses 0.0]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from match import real_templates, render, vocabulary

from errdex.analyze.templates import seed_pattern
from errdex.extract.packages import installed_sources
from errdex.models import (
    ErrorRecord,
    MessageTemplate,
    RecordEnvelope,
    SourceInfo,
    TemplatePart,
    utc_now,
)
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.sqlite import STORE_VERSION, SQLiteStore

CACHE = Path.home() / ".cache" / "errdex-bench"
PACKAGES = (
    "pydantic",
    "fastapi",
    "starlette",
    "rich",
    "click",
    "typer",
    "jinja2",
    "httpx",
    "httpcore",
    "anyio",
    "uvicorn",
    "pygments",
)
TARGET_RPS = 500
TARGET_P99_MS = 100
SITE = "/srv/app/.venv/lib/python3.11/site-packages"
CLASS_NAME = re.compile(r"[A-Za-z_][\w.]*")
"""Records raised as ``raise self.error`` or ``raise exc_info[0]`` print another class."""


# -- the store -------------------------------------------------------------------------------


def mine_real(db: Path) -> None:
    """Mine the chosen installed packages into a new store at ``db`` and enrich it.

    As ``make run`` does before it serves: explaining a record without prose writes it on
    the fly, which would dominate the measure.
    """
    part = db.with_name(db.name + ".part")
    part.unlink(missing_ok=True)
    with SQLiteStore(part) as store:
        pipeline = Pipeline(Settings(db=part, jobs=2), store)
        for source in installed_sources():
            if source.info.package in PACKAGES:
                report = pipeline.mine(source)
                print(f"  mined {source.info.key}: {report.records} records", file=sys.stderr)
        print(f"  enriched {pipeline.enrich().records} records", file=sys.stderr)
    part.replace(db)


def variant(record: ErrorRecord, copy: int, words: list[str], rng: random.Random) -> ErrorRecord:
    """Return a copy of a record in another repo and path, with a template of its own.

    An empty template (``raise NotImplementedError``) stays empty, as every copy of it would be.
    """
    parts = list(record.template.parts)
    prefix = f"{rng.choice(words)} {rng.choice(words)} "
    if parts and not parts[0].hole:
        parts[0] = TemplatePart(text=prefix + parts[0].text)
    elif parts:
        parts.insert(0, TemplatePart(text=prefix))
    template = MessageTemplate(parts=tuple(parts))
    repo = f"{record.repo}-{copy}"
    path = f"copy{copy}/{record.file_path}"
    digest = hashlib.blake2b(f"{repo}\0{path}\0{record.id}".encode(), digest_size=8)
    return record.model_copy(
        update={
            "id": digest.hexdigest(),
            "repo": repo,
            "file_path": path,
            "template": template,
            "error_message": template.text,
            "message_pattern": seed_pattern(template),
        }
    )


def build_store(db: Path, size: int) -> None:
    """Build the benchmark store of ``size`` records at ``db`` (atomically: renamed at the end)."""
    real_db = CACHE / f"real-v{STORE_VERSION}.sqlite3"
    if not real_db.exists():
        print(f"mining {', '.join(PACKAGES)} into {real_db}", file=sys.stderr)
        mine_real(real_db)
    with SQLiteStore(real_db) as real:
        records = [envelope.record for envelope in real.iter_envelopes()]
        sources = {info.repo: info for info, _ in real.sources()}
    words = vocabulary(real_templates(real_db))
    rng = random.Random(size)
    part = db.with_name(db.name + ".part")
    part.unlink(missing_ok=True)
    started = time.perf_counter()
    written = 0
    with SQLiteStore(part) as store:
        copy = 0
        while written < size:
            batch: dict[tuple[str, str], list[RecordEnvelope]] = {}
            for record in records[: size - written]:
                chosen = record if copy == 0 else variant(record, copy, words, rng)
                envelope = RecordEnvelope(record=chosen, dataset_version=utc_now())
                batch.setdefault((record.repo, chosen.repo), []).append(envelope)
            for (original, repo), envelopes in batch.items():
                info = sources.get(original) or SourceInfo(key=repo, repo=repo, kind="bench")
                info = info.model_copy(update={"key": f"bench:{repo}", "repo": repo})
                written += store.upsert_records(info, envelopes)
            copy += 1
            print(f"  {written} records ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    part.replace(db)


def benchmark_store(size: int) -> Path:
    """Return the cached benchmark store of ``size`` records, building it when missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    db = CACHE / f"serve-{size}-v{STORE_VERSION}.sqlite3"
    if not db.exists():
        print(f"building {db} (once)", file=sys.stderr)
        build_store(db, size)
    return db


def explain_texts(db: Path, count: int, rng: random.Random, *, misses: float) -> list[bytes]:
    """Return ``count`` JSON bodies of ``POST /api/explain`` made from the store's templates.

    A share ``misses`` of them is an error no record produces, written in the store's own
    words (as an error of a library that is not indexed would be): the explainer then looks
    for the records sharing the most words. Of the others, one in four is a traceback.
    """
    with SQLiteStore(db) as store:
        rows = [row for row in store.index_rows() if CLASS_NAME.fullmatch(row[1])]
    words = vocabulary([(row[1], row[2], row[6], row[3]) for row in rows[:20000]])
    bodies: list[bytes] = []
    while len(bodies) < count:
        _, error_class, path, line, _, kind, template = rng.choice(rows)
        message = render(template, rng)
        if not message.strip() and kind != "raise":
            continue  # a log call of an empty string: nothing to paste
        # How Python prints the exception (`raise NotImplementedError` prints the class alone).
        printed = f"{error_class}: {message}" if message else error_class
        if rng.random() < misses:
            text = "RuntimeError: " + " ".join(rng.choice(words) for _ in range(6))
        elif rng.random() < 0.25:
            text = (
                "Traceback (most recent call last):\n"
                f'  File "{SITE}/app/main.py", line 88, in handle\n'
                "    return service.run(request)\n"
                f'  File "{SITE}/{path}", line {line}, in run\n'
                f"    raise {error_class}(message)\n"
                f"{printed}\n"
            )
        else:
            text = printed if kind == "raise" else message
        bodies.append(json.dumps({"text": text}).encode())
    return bodies


# -- the server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_rss_mb(pid: int) -> float:
    """The resident memory of a process and its descendants (uvicorn's workers), in MB."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    family, frontier = {pid}, [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        family.update(children)
        frontier.extend(children)
    total_kb = 0
    for member in family:
        try:
            status = Path(f"/proc/{member}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024


def start_server(db: Path, port: int, workers: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(db), "--port", str(port)]
    command += ["--workers", str(workers), "--no-access-log"]
    with log.open("wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600  # the first start builds the matcher index
    while True:
        if server.poll() is not None:
            raise SystemExit(f"errdex serve exited:\n{log.read_text()}")
        if time.monotonic() > deadline:
            server.terminate()
            raise SystemExit("errdex serve did not start in 600 s")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.2)


# -- the load --------------------------------------------------------------------------------


@dataclass
class Load:
    """What one load phase measured."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    found: list[float] = field(default_factory=list)  # the latencies of exact answers
    errors: int = 0
    rss_mb: dict[str, float] = field(default_factory=dict)

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, share: float, *, found: bool = False) -> float:
        ordered = sorted(self.found if found else self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * share))] * 1000 if ordered else 0


class Connection:
    """One keep-alive HTTP/1.1 connection, as lean as a load generator's should be.

    httpx's async client spends about 2 ms of CPU per request with 32 connections, a whole
    core at 450 req/s on this 2-core machine, so the load would mostly measure the client.
    uvicorn answers with a Content-Length, so a response is its head and that many bytes.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        response = await self.reader.readuntil(b"\r\n\r\n")
        status = int(response[9:12])
        length = 0
        for line in response.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


async def run_load(
    port: int,
    path: str,
    bodies: list[bytes] | None,
    *,
    seconds: float,
    concurrency: int,
    server_pid: int,
) -> Load:
    """Send requests from ``concurrency`` connections for ``seconds``; sample RSS meanwhile."""
    result = Load()
    started = time.perf_counter()
    deadline = started + seconds

    async def client_loop(number: int) -> None:
        rng = random.Random(number)
        connection = Connection("127.0.0.1", port)
        try:
            while time.perf_counter() < deadline:
                sent = time.perf_counter()
                try:
                    if bodies is None:
                        status, answer = await connection.request("GET", path)
                    else:
                        body = bodies[rng.randrange(len(bodies))]
                        status, answer = await connection.request("POST", path, body)
                    ok = status == 200
                except (OSError, asyncio.IncompleteReadError, ValueError):
                    ok, answer = False, b""
                    connection.close()
                elapsed = time.perf_counter() - sent
                result.latencies.append(elapsed)
                result.errors += not ok
                if ok and b'"found":true' in answer:
                    result.found.append(elapsed)
        finally:
            connection.close()

    async def sample_rss() -> None:
        result.rss_mb["start"] = tree_rss_mb(server_pid)
        await asyncio.sleep(seconds / 2)
        result.rss_mb["middle"] = tree_rss_mb(server_pid)

    await asyncio.gather(sample_rss(), *(client_loop(n) for n in range(concurrency)))
    result.seconds = time.perf_counter() - started
    result.rss_mb["end"] = tree_rss_mb(server_pid)
    return result


def report(name: str, load: Load) -> None:
    p50, p99 = load.percentile(0.5), load.percentile(0.99)
    print(
        f"{name:<8} {load.rps:7.0f} req/s | p50 {p50:6.1f} ms | p99 {p99:6.1f} ms | "
        f"{len(load.latencies)} requests, {load.errors} errors"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--misses", type=float, default=0.0, help="share of texts no record makes")
    args = parser.parse_args()

    db = benchmark_store(args.records)
    bodies = explain_texts(db, 3000, random.Random(7), misses=args.misses)
    port = free_port()
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        server = start_server(db, port, args.workers, Path(directory) / "serve.log")
        print(
            f"errdex serve: {args.records} records, {args.workers} worker(s), ready in "
            f"{time.perf_counter() - started:.1f} s, RSS {tree_rss_mb(server.pid):.0f} MB | "
            f"{args.concurrency} connections, {args.seconds:g} s per phase, {os.cpu_count()} CPUs"
        )
        try:
            options = {"concurrency": args.concurrency, "server_pid": server.pid}
            # Warm-up: every worker loads the matcher index from its cache at its first explain
            # and fills its (bounded) caches of compiled templates.
            warm = asyncio.run(run_load(port, "/api/explain", bodies, seconds=10, **options))
            print(f"warm-up  {len(warm.latencies)} requests, RSS {warm.rss_mb['end']:.0f} MB")
            explain = asyncio.run(
                run_load(port, "/api/explain", bodies, seconds=args.seconds, **options)
            )
            healthz = asyncio.run(run_load(port, "/healthz", None, seconds=args.seconds, **options))
        finally:
            server.terminate()
            server.wait(timeout=60)
    report("explain", explain)
    report("healthz", healthz)
    rss = explain.rss_mb
    p99 = explain.percentile(0.99)
    share = len(explain.found) / max(1, len(explain.latencies))
    print(
        f"explain found an exact match for {share:.0%} of the texts"
        f" (p50 {explain.percentile(0.5, found=True):.1f} ms,"
        f" p99 {explain.percentile(0.99, found=True):.1f} ms of those answers)"
    )
    print(
        f"server RSS start {rss['start']:.0f} MB, middle {rss['middle']:.0f} MB,"
        f" end {rss['end']:.0f} MB ({rss['end'] - rss['start']:+.0f} MB)"
    )
    print(
        f"target ratio: {explain.rps / TARGET_RPS:.2f}x of {TARGET_RPS} req/s, "
        f"{TARGET_P99_MS / p99 if p99 else 0:.2f}x of p99 {TARGET_P99_MS} ms (>= 1 meets it) | "
        f"explain/healthz throughput {explain.rps / max(healthz.rps, 1e-9):.2f}"
    )


if __name__ == "__main__":
    main()
