"""Matcher benchmark: explain latency, index build/load and scan throughput vs the naive way.

Records: the records of a real store when one is given (``--db``, e.g. after ``make run``),
topped up with generated records whose templates have realistic literal lengths (words drawn
from the real templates, 0-3 holes). For each size (10k, 100k, 1M by default) a fresh process:

* builds the matcher index (time, peak RSS) and saves it; once that process has exited, a new
  process loads it back (time), as a new ``errdex explain`` does after the one that built the
  index: the best of three loads counts (each in its own process), the slowest is printed too;
* explains 2,000 messages (80% produced by a random template with random values, 20% not
  produced by any) through the index: candidates, verification, ranking — p50/p99;
* runs the naive baseline on a sample of the same messages: try every record's
  ``messagePattern`` with ``re.fullmatch`` in turn (what a simple tool does);
* does both in seven rounds, in turns: the ratio is the median of the rounds' ratios (each
  round's naive time over its mean explain time, both taken under the same machine conditions:
  on a shared machine one minute can be half again as slow as the next), printed with the
  lowest and highest round; the latencies are the fastest round's;
* at 100k, scans 200,000 log lines with 1% error lines and reports lines per second (the best
  of three scans).

Prints one line per measure with the ratio to the baseline. Usage::

    python benchmarks/match.py [--sizes 10000,100000,1000000] [--db PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from errdex import _native
from errdex.analyze.templates import seed_pattern
from errdex.match.explain import Explainer
from errdex.match.index import build_index, load_index, save_index
from errdex.match.scan import Scanner
from errdex.models import MessageTemplate, TemplatePart

ROUNDS = 7
"""Rounds of an explain pass then a naive pass: the median round's ratio counts."""

LOADS = 3
"""Loads of the saved index, each in a new process: the fastest counts."""

SCANS = 3
"""Scans of the log lines: the fastest counts."""

CLASSES = ["ValueError", "TypeError", "KeyError", "RuntimeError", "ConfigError", "ERROR", "WARNING"]


def real_templates(db: Path | None) -> list[tuple[str, str, str, int]]:
    """Return (class, path, template JSON, line) of a real store's records, if any."""
    if db is None or not db.exists():
        return []
    from errdex.store.sqlite import SQLiteStore

    with SQLiteStore(db) as store:
        return [(row[1], row[2], row[6], row[3]) for row in store.index_rows()]


def vocabulary(real: list[tuple[str, str, str, int]]) -> list[str]:
    words: list[str] = []
    for _, _, template, _ in real[:20000]:
        for text, hole in json.loads(template):
            if not hole:
                words.extend(re.findall(r"[A-Za-z_]{3,}", text))
    return words or [f"word{i}" for i in range(5000)]


def generated(count: int, words: list[str], rng: random.Random) -> list[tuple[str, str, str, int]]:
    rows = []
    for number in range(count):
        parts: list[list[object]] = []
        for position in range(rng.randint(1, 4)):
            if position:
                parts.append([f"v{position}", True])
            length = rng.choice((1, 2, 3, 3, 4, 5, 6, 8))
            text = " ".join(rng.choice(words) for _ in range(length))
            parts.append(
                [(" " if position else "") + text + rng.choice((": ", " ", ", ", " is ")), False]
            )
        if rng.random() < 0.3:
            parts.append(["tail", True])
        path = f"pkg{number % 997}/mod{number % 89}.py"
        rows.append((rng.choice(CLASSES), path, json.dumps(parts), 1 + number % 3000))
    return rows


def render(template: str, rng: random.Random) -> str:
    out = []
    for text, hole in json.loads(template):
        out.append(rng.choice(["x", "42", "'draft'", "a/b.py", "None", "3.5"]) if hole else text)
    return "".join(out)


def timed_load(path: Path) -> float:
    """Seconds a new process takes to load a saved index, as ``errdex explain`` does.

    Called once the process that built the index has exited, as in use (``errdex explain``
    builds and saves the index, and a later one loads it): started beside the process still
    holding a million records' index, loads took 1.9 to 4.9 s (three runs of three, the
    slowest right after the build), against 1.9 to 2.5 s once that process had freed it.
    """
    command = [sys.executable, __file__, "--load", str(path)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return float(output.strip().splitlines()[-1])


def run_size(size: int, db: Path | None, seed: int, saved: Path) -> dict[str, float]:
    """Build, save (to ``saved``) and query an index of ``size`` records, in this process."""
    rng = random.Random(seed)
    real = real_templates(db)[:size]
    rows = real + generated(size - len(real), vocabulary(real), rng)
    # Streamed, as errdex streams them from the store (``SQLiteStore.index_rows``): the peak
    # memory is the index's, plus this benchmark's own list of the records.
    index_rows = (
        (number + 1, cls, path, line, line, "raise", template)
        for number, (cls, path, template, line) in enumerate(rows)
    )
    started = time.perf_counter()
    index = build_index(index_rows, version="bench")
    # The build pauses the cyclic collector (errdex/memory.py): the collection of its new
    # objects, due after it, is the build's to pay, and must not run during the load below.
    gc.collect()
    build = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    save_index(index, saved)

    queries = []
    for _ in range(2000):
        if rng.random() < 0.8:
            queries.append(render(rng.choice(rows)[2], rng))
        else:
            queries.append(
                " ".join(rng.choice(["zork", "quux", "plugh", "xyzzy"]) for _ in range(6))
            )

    class NoStore:
        def get_rows(self, rowids):  # the in-process measure stops before reading records
            return {}

        def search_rowids(self, query):
            return []

    explainer = Explainer(NoStore(), index)  # type: ignore[arg-type]
    for query in queries[:20]:  # the first explain compiles the parser's patterns once
        explainer.explain(query, top=5)
    naive_sample = queries[: max(5, min(50, 2_000_000 // size))]
    patterns = [
        re.compile(
            seed_pattern(
                MessageTemplate(
                    parts=tuple(TemplatePart(text=t, hole=h) for t, h in json.loads(r[2]))
                )
            ),
            re.DOTALL,
        )
        for r in rows
    ]
    best: list[float] = []
    naive = float("inf")
    ratios: list[float] = []
    for _ in range(ROUNDS):
        timings = []
        hits = 0
        for query in queries:
            started = time.perf_counter()
            answer = explainer.explain(query, top=5)
            timings.append(time.perf_counter() - started)
            hits += bool(answer.total)
        if not best or statistics.mean(timings) < statistics.mean(best):
            best = timings
        started = time.perf_counter()
        for query in naive_sample:
            for pattern in patterns:
                pattern.fullmatch(query)
        naive_round = (time.perf_counter() - started) / len(naive_sample)
        naive = min(naive, naive_round)
        ratios.append(naive_round / statistics.mean(timings))
    timings = sorted(best)
    p50 = timings[len(timings) // 2]
    p99 = timings[int(len(timings) * 0.99)]
    result = {
        "size": size,
        "real": len(real),
        "build_s": build,
        "peak_rss_mb": peak,
        "p50_us": p50 * 1e6,
        "p99_us": p99 * 1e6,
        "naive_ms": naive * 1e3,
        "speedup": statistics.median(ratios),
        "speedup_low": min(ratios),
        "speedup_high": max(ratios),
        "hit_rate": hits / len(queries),
    }
    if size == 100_000:
        lines = []
        for number in range(200_000):
            stamp = (
                f"2026-12-02 13:{number // 6000 % 60:02}:{number // 100 % 60:02},{number % 1000:03}"
            )
            if rng.random() < 0.01:
                lines.append(f"{stamp} ERROR app: {render(rng.choice(rows)[2], rng)}")
            else:
                lines.append(
                    f"{stamp} INFO app.worker: handled request {number} in {rng.random():.3f}s"
                )
        scan_s = float("inf")
        for _ in range(SCANS):
            started = time.perf_counter()
            report = Scanner(index).scan(lines)
            scan_s = min(scan_s, time.perf_counter() - started)
        result["scan_lines_per_s"] = len(lines) / scan_s
        result["scan_matched"] = report.matched
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--save", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--load", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.load is not None:
        started = time.perf_counter()
        loaded = load_index(args.load, version="bench")
        print(time.perf_counter() - started)
        assert loaded is not None
        return
    if args.one is not None:
        print(json.dumps(run_size(args.one, args.db, seed=args.one, saved=args.save)))
        return
    print(f"errdex modules: {_native.MODE} (see errdex/_native.py)")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as directory:
            saved = Path(directory) / "bench.matcher"
            command = [sys.executable, __file__, "--one", str(size), "--save", str(saved)] + (
                ["--db", str(args.db)] if args.db else []
            )
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            r = json.loads(output.strip().splitlines()[-1])
            loads = [timed_load(saved) for _ in range(LOADS)]
        print(
            f"match {r['size']:>8} records ({r['real']} real): explain p50 {r['p50_us']:.0f} µs, "
            f"p99 {r['p99_us']:.0f} µs | naive {r['naive_ms']:.2f} ms/msg | "
            f"ratio naive/errdex {r['speedup']:.0f}x (rounds {r['speedup_low']:.0f}-"
            f"{r['speedup_high']:.0f}x) | build {r['build_s']:.1f} s, "
            f"load {min(loads):.2f} s (slowest {max(loads):.2f} s), "
            f"peak RSS {r['peak_rss_mb']:.0f} MB | "
            f"hits {r['hit_rate']:.0%}"
        )
        if "scan_lines_per_s" in r:
            print(
                f"scan   {r['size']:>8} records: {r['scan_lines_per_s']:.0f} lines/s on one core "
                f"(1% error lines, {r['scan_matched']} matched)"
            )


if __name__ == "__main__":
    main()
