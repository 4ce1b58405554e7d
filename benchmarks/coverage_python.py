"""How many raise sites of real packages errdex reduces to a template (issue #3).

Downloads pinned wheels once (``pip download`` into the same cache as the tests:
``$ERRDEX_TEST_CACHE`` or the user cache directory ``errdex-tests``), mines each with the
pipeline (test files excluded) and prints, per package:

* raise statements, and those whose call has at least one argument (the message argument);
* pass-through sites (the message is a caught exception: ``raise X(e)``), left out of the share;
* the opaque share of the rest (a message with no literal text, ``{msg}``) and the non-opaque %,
  counting a raise whose message is a helper's parameter as resolved when callers pass text;
* the same share for log, warn, assert and HTTP sites, and the time against bare ``ast.parse``.

The target is >= 95 % non-opaque raise sites per package.

    python benchmarks/coverage_python.py [NAME==VERSION ...] [--show-opaque N]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

import platformdirs

from errdex.extract.files import open_source
from errdex.models import ErrorRecord, SiteKind
from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.base import SearchQuery
from errdex.store.sqlite import SQLiteStore

PACKAGES = (
    "sglang==0.5.23",
    "transformers==5.24.0",
    "pandas==3.1.1",
    "django==5.2.19",
    "requests==2.34.2",
)


def cache_root() -> Path:
    root = os.environ.get("ERRDEX_TEST_CACHE") or platformdirs.user_cache_dir("errdex-tests")
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def unpacked(name: str, version: str) -> Path:
    """The unpacked wheel of ``name==version``, downloaded and unpacked once."""
    target = cache_root() / "unpacked" / f"{name}-{version}"
    if (target / ".complete").exists():
        return target
    wheels = cache_root() / "wheels" / f"{name}-{version}"
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not found:
        wheels.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(wheels),
                f"{name}=={version}",
            ],
            check=True,
            capture_output=True,
        )
        found = sorted(wheels.glob("*.whl"))
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(found[0]) as archive:
        for member in archive.namelist():
            if not member.startswith("/") and ".." not in Path(member).parts:
                archive.extract(member, target)
    (target / ".complete").write_text("ok")
    return target


def parse_seconds(root: Path) -> float:
    source = open_source(str(root))
    files = [
        f
        for f in source.files(wanted=(".py",), max_bytes=5_000_000, include_tests=False)
        if f.data is not None
    ]
    started = time.perf_counter()
    for file in files:
        with contextlib.suppress(SyntaxError, ValueError):
            ast.parse(file.data or b"")
    return time.perf_counter() - started


def records_of(root: Path, workdir: Path) -> tuple[list[ErrorRecord], float]:
    db = workdir / f"{root.name}.sqlite3"
    with SQLiteStore(db) as store:
        pipeline = Pipeline(Settings(db=db), store)
        report = pipeline.mine(open_source(str(root)))
        records, _ = store.search(SearchQuery(repo=report.source.repo, limit=10_000_000))
    return records, report.seconds


def is_opaque(record: ErrorRecord) -> bool:
    return record.message_form != "helper" and record.template.literal_length == 0


def is_raise(record: ErrorRecord) -> bool:
    if record.arguments is not None:
        return True
    return (
        record.kind is SiteKind.RAISE
        and record.message_form in ("none", "class-default")
        and record.factory is None
    )


def summarise(records: list[ErrorRecord]) -> dict[str, object]:
    by_site: dict[tuple[str, int], list[ErrorRecord]] = {}
    for record in records:
        if is_raise(record):
            by_site.setdefault((record.file_path, record.line_number), []).append(record)
    with_arguments = {k: v for k, v in by_site.items() if (v[0].arguments or 0) > 0}
    passthrough = {k for k, v in with_arguments.items() if v[0].message_form == "passthrough"}
    defaults = {
        k for k, v in by_site.items() if not v[0].arguments and v[0].message_form == "class-default"
    }
    counted = [k for k in with_arguments if k not in passthrough] + sorted(defaults)
    opaque = [k for k in counted if any(is_opaque(r) for r in by_site[k])]
    share = len(opaque) / len(counted) if counted else 0.0
    channels: dict[str, tuple[int, int]] = {}
    for kind in (SiteKind.LOG, SiteKind.WARN, SiteKind.ASSERT, SiteKind.HTTP, SiteKind.OBJECT):
        sites: dict[tuple[str, int], list[ErrorRecord]] = {}
        for record in records:
            if record.kind is kind and record.arguments is None:
                sites.setdefault((record.file_path, record.line_number), []).append(record)
        dark = sum(
            1
            for v in sites.values()
            if v[0].message_form != "passthrough" and any(is_opaque(r) for r in v)
        )
        channels[kind.value] = (len(sites), dark)
    return {
        "raise": len(by_site),
        "with_arguments": len(with_arguments),
        "passthrough": len(passthrough),
        "class_default": len(defaults),
        "counted": len(counted),
        "opaque": len(opaque),
        "share": share,
        "channels": channels,
        "forms": Counter(r.message_form for r in records),
        "opaque_sites": [by_site[k][0] for k in opaque],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("packages", nargs="*", default=list(PACKAGES))
    parser.add_argument("--show-opaque", type=int, default=0, metavar="N")
    options = parser.parse_args()
    print(
        f"{'package':24} {'raise':>6} {'w/ arg':>6} {'pass':>5} {'dflt':>5} {'opaque':>7} "
        f"{'opaque %':>8} {'non-opaque %':>12}  {'mine s':>6} {'parse s':>7}"
    )
    worst = 100.0
    with tempfile.TemporaryDirectory() as workdir:
        for spec in options.packages:
            name, _, version = spec.partition("==")
            root = unpacked(name, version)
            gc.collect()
            parse = parse_seconds(root)
            records, seconds = records_of(root, Path(workdir))
            s = summarise(records)
            share = float(s["share"])  # type: ignore[arg-type]
            worst = min(worst, 100 * (1 - share))
            print(
                f"{spec:24} {s['raise']:>6} {s['with_arguments']:>6} {s['passthrough']:>5} "
                f"{s['class_default']:>5} {s['opaque']:>7} {100 * share:>7.2f}% "
                f"{100 * (1 - share):>11.2f}%  {seconds:>6.1f} {parse:>7.1f}"
            )
            channels = s["channels"]
            assert isinstance(channels, dict)
            print(
                "    other channels (sites / opaque): "
                + ", ".join(f"{k} {n}/{d}" for k, (n, d) in channels.items())
            )
            forms = s["forms"]
            assert isinstance(forms, Counter)
            print("    forms: " + ", ".join(f"{k} {v}" for k, v in forms.most_common()))
            opaque_sites = s["opaque_sites"]
            assert isinstance(opaque_sites, list)
            for record in opaque_sites[: options.show_opaque]:
                lines = record.source_code.split("\n")
                line = lines[record.line_number - record.source_code_start].strip()
                print(f"      {record.file_path}:{record.line_number}: {line[:110]}")
    print(f"lowest non-opaque share: {worst:.2f}% (target >= 95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
