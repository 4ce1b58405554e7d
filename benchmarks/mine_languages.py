"""Mining benchmark of the tree-sitter languages: each extractor next to the bare parse.

For every non-Python language registered in :func:`errdex.extract.extractors` that has a
corpus in :data:`CORPORA`, the files its extractor reads (tests left out, as errdex leaves
them) are read into memory once, then timed, best of ``--repeat`` runs:

* **bare parse**: ``parser_for(grammar).parse(data)`` of every file;
* **extract**: ``extractor.extract(file)`` of every file, then ``extractor.link(results)``
  (decoding, the parse, the query, the sites, cross-file linking);

and one line per language gives files/s and lines/s of both, and the ratio of their speeds
(extract / bare parse). Corpora are pinned packages downloaded once into the test cache
(``tests/corpus.py``).

Usage::

    python benchmarks/mine_languages.py [--languages javascript,typescript] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from corpus import debian_package, npm_package  # noqa: E402

from errdex.extract import extractors  # noqa: E402
from errdex.extract.files import DirectorySource, SourceFile  # noqa: E402
from errdex.extract.treesitter import TreeSitterExtractor, parser_for  # noqa: E402
from errdex.models import SourceInfo  # noqa: E402

CORPORA: dict[str, list[Callable[[], Path]]] = {
    "javascript": [
        functools.partial(npm_package, "express", "4.21.2"),
        functools.partial(npm_package, "commander", "12.1.0"),
        functools.partial(npm_package, "axios", "1.7.9"),
    ],
    "typescript": [
        functools.partial(npm_package, "@trpc/server", "10.45.2"),
    ],
    "go": [
        lambda: (
            debian_package("golang-github-spf13-cobra-dev", "1.6.1-1")
            / "usr/share/gocode/src/github.com/spf13/cobra"
        ),
        lambda: (
            debian_package("golang-github-gorilla-mux-dev", "1.8.0-1")
            / "usr/share/gocode/src/github.com/gorilla/mux"
        ),
        lambda: (
            debian_package("golang-github-labstack-echo-dev", "4.2.1-3")
            / "usr/share/gocode/src/github.com/labstack/echo"
        ),
        lambda: (
            debian_package("golang-google-grpc-dev", "1.33.3-2")
            / "usr/share/gocode/src/google.golang.org/grpc"
        ),
    ],
    "rust": [
        lambda: (
            debian_package("librust-semver-dev", "1.0.14-1")
            / "usr/share/cargo/registry/semver-1.0.14"
        ),
        lambda: (
            debian_package("librust-syntect-dev", "5.0.0-1")
            / "usr/share/cargo/registry/syntect-5.0.0"
        ),
    ],
    "java": [
        # No registry reachable here has a small Java source package; these npm packages
        # carry their Android sources.
        functools.partial(npm_package, "react-native-fs", "2.20.0"),
        functools.partial(npm_package, "react-native-webview", "11.26.1"),
    ],
}
"""Each language's corpora: callables returning a directory of its sources."""


def corpus_files(extractor: TreeSitterExtractor, roots: Sequence[Path]) -> list[SourceFile]:
    """The files of the corpora the extractor reads, with their bytes."""
    files: list[SourceFile] = []
    for root in roots:
        info = SourceInfo(key=str(root), repo=str(root), kind="directory")
        source = DirectorySource(root, info)
        found = source.files(wanted=extractor.suffixes, max_bytes=5_000_000, include_tests=False)
        files += [file for file in found if file.data is not None]
    return files


def best(runs: int, work: Callable[[], object]) -> float:
    """The shortest of ``runs`` timings of ``work``, in seconds."""
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        timings.append(time.perf_counter() - started)
    return min(timings)


def bare_parse(extractor: TreeSitterExtractor, files: Sequence[SourceFile]) -> None:
    for file in files:
        parser_for(extractor.grammar(file.path)).parse(file.data or b"")


def extract(extractor: TreeSitterExtractor, files: Sequence[SourceFile]) -> int:
    results = [extractor.extract(file) for file in files]
    return len(extractor.link(results))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--languages", default="", help="comma-separated; all when empty")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    wanted = [name for name in args.languages.split(",") if name]
    for extractor in extractors(window=18, languages=wanted):
        corpora = CORPORA.get(extractor.language)
        if extractor.language == "python" or not corpora:
            continue
        assert isinstance(extractor, TreeSitterExtractor)
        files = corpus_files(extractor, [make() for make in corpora])
        if not files:
            print(f"{extractor.language}: no files in its corpora")
            continue
        lines = sum((file.data or b"").count(b"\n") + 1 for file in files)
        sites = extract(extractor, files)  # warm the parsers and queries
        parse_s = best(args.repeat, functools.partial(bare_parse, extractor, files))
        extract_s = best(args.repeat, functools.partial(extract, extractor, files))
        count = len(files)
        print(
            f"{extractor.language}: {count} files, {lines} lines, {sites} sites | "
            f"bare parse {count / parse_s:,.0f} files/s {lines / parse_s:,.0f} lines/s | "
            f"extract {count / extract_s:,.0f} files/s {lines / extract_s:,.0f} lines/s | "
            f"ratio {parse_s / extract_s:.2f} (extract is {extract_s / parse_s:.1f}x the parse)"
        )


if __name__ == "__main__":
    main()
