"""Mining benchmark: errdex's Python mining against a bare ``ast.parse`` of the same files.

Corpus: pinned wheels from PyPI (downloaded once into the test cache), tests left out as
errdex leaves them out. In one run it measures, in source lines per second:

* **baseline**: read, decode and ``ast.parse`` every file, dropping each tree (one process);
* **mine, 1 job**: ``Pipeline.mine`` into a fresh SQLite store (extract, link, records,
  write), and its ratio to the baseline (target: at least 0.5);
* **mine, 2 jobs**: the same with two worker processes, and its speed-up over one job;
* **re-mine unchanged**: mining the same source again, as a share of the full run (target:
  under 5%).

Each measure is the best of ``--repeat`` runs (3 by default), taken in turns (parse, one job,
two jobs, parse, …), as ``timeit`` does: on a shared machine a single run can be a quarter
slower than the next, and the two-job run suffers most.

Usage::

    python benchmarks/mine_python.py [--packages transformers==4.46.3,pandas==2.2.3] [--repeat 3]
"""

from __future__ import annotations

import argparse
import ast
import io
import sys
import tempfile
import time
import tokenize
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import unpacked_wheel  # noqa: E402

from errdex.extract.files import DirectorySource, is_test_path  # noqa: E402
from errdex.models import SourceInfo  # noqa: E402
from errdex.pipeline import Pipeline  # noqa: E402
from errdex.settings import Settings  # noqa: E402
from errdex.store.sqlite import SQLiteStore  # noqa: E402

DEFAULT = "transformers==4.46.3,pandas==2.2.3"


def files_of(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if not is_test_path(p.relative_to(root).as_posix()))


def bare_parse(files: list[Path]) -> tuple[float, int]:
    lines = 0
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            data = path.read_bytes()
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
                text = data.decode(encoding)
                ast.parse(text)
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            lines += text.count("\n") + 1
    return time.perf_counter() - started, lines


def mine(root: Path, name: str, version: str, db: Path, jobs: int) -> tuple[float, int]:
    info = SourceInfo(
        key=f"{name}=={version}", repo=f"pypi:{name}", kind="pypi", package=name, version=version
    )
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db, jobs=jobs), store)
        started = time.perf_counter()
        report = pipeline.mine(DirectorySource(root, info))
        return time.perf_counter() - started, report.records


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    totals = {"parse": 0.0, "mine1": 0.0, "mine2": 0.0, "again": 0.0, "lines": 0, "records": 0}
    for spec in args.packages.split(","):
        name, version = spec.split("==")
        root = unpacked_wheel(name, version)
        files = files_of(root)
        bare_parse(files)  # warm the page cache so both sides read from memory
        parse_s = one_s = two_s = float("inf")
        with tempfile.TemporaryDirectory() as directory:
            for turn in range(args.repeat):
                seconds, lines = bare_parse(files)
                parse_s = min(parse_s, seconds)
                seconds, records = mine(root, name, version, Path(directory) / f"1-{turn}", 1)
                one_s = min(one_s, seconds)
                seconds, _ = mine(root, name, version, Path(directory) / f"2-{turn}", 2)
                two_s = min(two_s, seconds)
            again_s, _ = mine(root, name, version, Path(directory) / "1-0", jobs=1)
        print(
            f"mine {spec}: {len(files)} files, {lines} lines, {records} records | "
            f"bare parse {lines / parse_s:,.0f} lines/s | "
            f"errdex 1 job {lines / one_s:,.0f} lines/s (ratio {parse_s / one_s:.2f}) | "
            f"2 jobs {lines / two_s:,.0f} lines/s (x{one_s / two_s:.2f}) | "
            f"re-mine unchanged {again_s:.2f} s = {again_s / one_s:.1%} of a full run"
        )
        totals["parse"] += parse_s
        totals["mine1"] += one_s
        totals["mine2"] += two_s
        totals["again"] += again_s
        totals["lines"] += lines
        totals["records"] += records
    lines = totals["lines"]
    print(
        f"mine total: {lines} lines | bare parse {lines / totals['parse']:,.0f} lines/s | "
        f"errdex 1 job {lines / totals['mine1']:,.0f} lines/s "
        f"(ratio {totals['parse'] / totals['mine1']:.2f}, target >= 0.5) | "
        f"2 jobs x{totals['mine1'] / totals['mine2']:.2f} | "
        f"re-mine unchanged {totals['again'] / totals['mine1']:.1%} (target < 5%)"
    )


if __name__ == "__main__":
    main()
