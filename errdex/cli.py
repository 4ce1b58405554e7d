"""The ``errdex`` command: flags → settings → one library call → rendering.

Exit codes: 0 success, 1 nothing found, 2 usage or input error (one line on stderr), 3 an
internal error (a bug: one line on stderr, the traceback with ``ERRDEX_DEBUG=1``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from errdex import __version__, _native
from errdex.analyze.writer import ensure_envelope
from errdex.errors import ErrdexError, ExtractionError, RecordNotFoundError
from errdex.extract.files import Source
from errdex.match.explain import Explainer, Explanation
from errdex.match.scan import ScanGroup, ScanReport
from errdex.models import ErrorRecord, RecordEnvelope, RunReport
from errdex.pipeline import EnrichReport, Pipeline, VerifyRun
from errdex.render import (
    explanation_view,
    key_values_table,
    record_panel,
    records_table,
    reports_table,
    scan_view,
    settings_table,
    stats_table,
    verify_view,
)
from errdex.settings import ResolvedSettings, Settings, resolve_settings
from errdex.store.base import SearchQuery
from errdex.store.jsonl import RecordFormat, envelope_json
from errdex.store.sqlite import SQLiteStore


def _shown(text: str) -> str:
    """Help text as typed: typer reads help as rich markup, where ``[env X]`` is a tag."""
    return escape(text)


SERVE_HELP = "Serve the web UI and the JSON API (needs errdex[web]) until interrupted."

app = typer.Typer(
    name="errdex",
    help="The error index: mine the errors code can raise, then explain any pasted error.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_NOT_FOUND = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_BROKEN_PIPE = 141
"""As a shell reports a command stopped by SIGPIPE."""

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db", help=_shown("Path of the SQLite store [env ERRDEX_DB]."), show_default=False
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help=_shown("Config file (errdex.toml) [env ERRDEX_CONFIG]."),
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help=_shown(
            "Prefilter engine: aho-corasick, or hyperscan (errdex[fast]) [env ERRDEX_ENGINE]."
        ),
        show_default=False,
    ),
]

T = TypeVar("T")


class _Console(Console):
    """A console whose reader going away (``errdex search x | head``) ends the command quietly."""

    def on_broken_pipe(self) -> None:
        _reader_gone()


def _refuse_clashes(sources: Sequence[Source]) -> None:
    """Refuse two sources of one run that would be stored as one (two directories ``pkg``).

    The second would replace the first's records; naming them apart is the user's choice.
    """
    seen: dict[str, str] = {}
    for source in sources:
        info = source.info
        if info.kind not in ("directory", "git") or info.location is None:
            continue  # the ones the user names (installed packages are keyed by version)
        where = os.path.realpath(info.location)
        if seen.setdefault(info.key, where) != where:
            _fail(
                f"{seen[info.key]} and {where} would both be stored as {info.key!r}:"
                " mine them one at a time with --repo NAME to keep both",
                EXIT_USAGE,
            )


def _reader_gone() -> NoReturn:
    """Stop quietly because the reader of stdout went away, as other tools do.

    Python would complain when it flushes stdout at exit: stdout goes to /dev/null first.
    """
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise typer.Exit(EXIT_BROKEN_PIPE)


@contextmanager
def _to_stdout() -> Iterator[None]:
    """Writes to stdout: a reader that goes away ends the command quietly."""
    try:
        yield
    except BrokenPipeError:
        _reader_gone()


def _stdout() -> Console:
    # No markup: what is printed holds mined paths, repos and messages ("a[/]b.py").
    return _Console(highlight=False, markup=False)


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, markup=False)


def _fail(message: str, code: int) -> NoReturn:
    _stderr().print(Text.assemble(("error:", "red"), " ", message), soft_wrap=True)
    raise typer.Exit(code)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn library errors into one line on stderr and an exit code."""
    try:
        yield
    except typer.Exit:
        raise
    except RecordNotFoundError as exc:
        _fail(str(exc), EXIT_NOT_FOUND)
    except ExtractionError as exc:  # --strict: say which file
        where = f"{exc.path}:{exc.line}" if exc.line else exc.path
        _fail(f"{where}: {exc}", EXIT_USAGE)
    except ErrdexError as exc:
        _fail(str(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as exc:
        if os.environ.get("ERRDEX_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (ERRDEX_DEBUG=1 shows the traceback)",
            EXIT_INTERNAL,
        )


def _resolve(config: Path | None, **flags: Any) -> ResolvedSettings:
    return resolve_settings(flags, config_path=config)


def _settings(config: Path | None, **flags: Any) -> Settings:
    return _resolve(config, **flags).settings


def _print_json(data: Any) -> None:
    with _to_stdout():
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _with_store(settings: Settings, action: Callable[[Pipeline], T], *, create: bool = False) -> T:
    """Run ``action`` on the store; only the commands that fill one (``create``) make it."""
    with SQLiteStore(settings.db, create=create) as store:
        return action(Pipeline(settings, store))


def _explainer(pipeline: Pipeline, settings: Settings) -> Explainer:
    """The explainer of the pipeline's store, its index cached next to the database."""
    from errdex.match.explain import Explainer

    return Explainer.for_database(pipeline.store, settings.db, engine=settings.engine)


def _progress(console: Console, *, auto_refresh: bool = True) -> Progress:
    """A transient progress bar on a terminal (none elsewhere).

    ``auto_refresh=False`` draws only when :func:`_refreshed` asks, without rich's refresh
    thread: mining forks worker processes only when no other thread runs (#3).
    """
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[path]}", style="dim", markup=False),
        console=console,
        transient=True,
        disable=not console.is_terminal,
        auto_refresh=auto_refresh,
    )


def _refreshed(progress: Progress, every: float = 0.1) -> Callable[[], None]:
    """Return a function that redraws ``progress`` at most once every ``every`` seconds."""
    last = 0.0

    def refresh() -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= every:
            last = now
            progress.refresh()

    return refresh


@app.command()
def mine(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="Directories or git repositories.", show_default=False),
    ] = None,
    installed: Annotated[
        bool,
        typer.Option("--installed", help="Mine every distribution installed in this environment."),
    ] = False,
    repo: Annotated[
        str | None, typer.Option("--repo", help="Record the source as OWNER/NAME.")
    ] = None,
    rev: Annotated[
        str | None, typer.Option("--rev", help="Git revision to read (default HEAD).")
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", help=_shown("Processes that mine a source [env ERRDEX_JOBS].")
        ),
    ] = None,
    include_tests: Annotated[
        bool | None,
        typer.Option(
            "--include-tests/--no-include-tests", help="Also mine test files.", show_default=False
        ),
    ] = None,
    strict: Annotated[
        bool | None,
        typer.Option(
            "--strict/--no-strict",
            help="Stop at the first file that cannot be mined.",
            show_default=False,
        ),
    ] = None,
    language: Annotated[
        list[str] | None,
        typer.Option(
            "--language",
            "-l",
            help=_shown("Mine only this language (repeat for several) [env ERRDEX_LANGUAGES]."),
            show_default=False,
        ),
    ] = None,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Mine the error sites of sources into the store (replacing their previous records)."""
    with _errors():
        settings = _settings(
            config,
            db=db,
            jobs=jobs,
            include_tests=include_tests,
            strict=strict,
            languages=language or None,
        )
        if not sources and not installed:
            _fail("name at least one SOURCE, or use --installed", EXIT_USAGE)
        if installed and (repo or rev):
            _fail("--repo and --rev do not apply to --installed", EXIT_USAGE)
        if repo and sources and len(sources) > 1:
            _fail("--repo names one source; give one SOURCE with it", EXIT_USAGE)

        def run(pipeline: Pipeline) -> list[RunReport]:
            chosen: list[Source] = [
                pipeline.open(spec, repo=repo, revision=rev) for spec in sources or []
            ]
            if installed:
                from errdex.extract.packages import installed_sources

                chosen.extend(installed_sources())
            _refuse_clashes(chosen)
            reports: list[RunReport] = []
            with _progress(_stderr(), auto_refresh=False) as progress:
                refresh = _refreshed(progress)
                for source in chosen:
                    task = progress.add_task(f"mining {source.info.repo}", total=None, path="")

                    def advance(path: str, task: TaskID = task) -> None:
                        progress.update(task, advance=1, path=path)
                        refresh()

                    reports.append(pipeline.mine(source, progress=advance))
                    progress.remove_task(task)
            return reports

        reports = _with_store(settings, run, create=True)
        if as_json:
            _print_json(_reports_json(reports))
        else:
            _stdout().print(reports_table(reports))


def _reports_json(reports: list[RunReport]) -> dict[str, Any]:
    totals: dict[str, int] = {}
    for report in reports:
        for kind, count in report.sites.items():
            totals[kind] = totals.get(kind, 0) + count
    return {
        "files": sum(r.files for r in reports),
        "sites": sum(totals.values()),
        "sitesByKind": totals,
        "records": sum(r.records for r in reports),
        "opaque": sum(r.opaque for r in reports),
        "problems": [
            p.model_dump(mode="json") | {"source": r.source.key}
            for r in reports
            for p in r.problems
        ],
        "sources": [r.model_dump(mode="json") for r in reports],
    }


@app.command("import")
def import_(
    files: Annotated[
        list[Path], typer.Argument(help="Seed or errdex JSONL files (.gz too).", show_default=False)
    ],
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Import records from seed-format or errdex JSONL files (the format is detected)."""
    with _errors():
        settings = _settings(config, db=db)
        for path in files:
            if not _readable(path):
                _fail(f"no such file: {path}", EXIT_USAGE)
        report = _with_store(settings, lambda pipeline: pipeline.import_files(files), create=True)
        if as_json:
            _print_json(
                {
                    "files": report.files,
                    "records": report.records,
                    "formats": dict(report.formats),
                    "repos": dict(report.repos),
                }
            )
        else:
            formats = ", ".join(f"{n} {name}" for name, n in sorted(report.formats.items()))
            _stdout().print(
                f"imported {report.records} records from {report.files} file(s)"
                f" ({formats or 'empty'})"
            )


@app.command()
def export(
    fmt: Annotated[
        RecordFormat,
        typer.Option("--format", help="seed: exactly the dataset's keys; full: errdex's too."),
    ] = RecordFormat.FULL,
    repo: Annotated[str | None, typer.Option("--repo", help="Only this repo's records.")] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Write to this file (.gz compresses) instead of stdout."),
    ] = None,
    db: DbOption = None,
    config: ConfigOption = None,
) -> None:
    """Export records as JSON Lines."""
    with _errors():
        settings = _settings(config, db=db)

        def run(pipeline: Pipeline) -> int:
            if out is None:
                with _to_stdout():
                    return pipeline.export(sys.stdout, flavour=fmt, repo=repo)
            import gzip

            tmp = out.with_name(out.name + ".part")
            try:
                with (
                    gzip.open(tmp, "wt", encoding="utf-8")
                    if out.suffix == ".gz"
                    else tmp.open("w", encoding="utf-8") as handle
                ):
                    count = pipeline.export(handle, flavour=fmt, repo=repo)
                if count:  # nothing to export leaves a file already there as it was
                    tmp.replace(out)
            except OSError as exc:
                _fail(f"cannot write {out}: {exc.strerror or exc}", EXIT_USAGE)
            finally:
                tmp.unlink(missing_ok=True)
            return count

        count = _with_store(settings, run)
        if count == 0:
            _fail("no records to export" + (f" for repo {repo!r}" if repo else ""), EXIT_NOT_FOUND)
        if out is not None:
            _stderr().print(f"wrote {count} records to {out}")


@app.command()
def show(
    record_id: Annotated[
        str, typer.Argument(metavar="ID", help="A record id (16 hex characters).")
    ],
    fmt: Annotated[
        RecordFormat, typer.Option("--format", help="JSON flavour with --json.")
    ] = RecordFormat.FULL,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a record: where it is raised, its code, pattern and explanation."""
    with _errors():
        settings = _settings(config, db=db)
        envelopes: list[RecordEnvelope] = _with_store(
            settings,
            lambda p: [ensure_envelope(e) for e in p.store.get(record_id.strip().lower())],
        )
        if not envelopes:
            raise RecordNotFoundError(f"no record with id {record_id!r}", record_id=record_id)
        if as_json:
            typer.echo(envelope_json(envelopes[0], fmt))
            return
        console = _stdout()
        for envelope in envelopes:
            console.print(record_panel(envelope.record))


@app.command()
def search(
    text: Annotated[
        str, typer.Argument(help="Words to look for in messages, classes, paths and prose.")
    ] = "",
    repo: Annotated[str | None, typer.Option("--repo", help="Only this repo.")] = None,
    error_class: Annotated[
        str | None, typer.Option("--class", help="Only this error class.")
    ] = None,
    error_type: Annotated[
        str | None, typer.Option("--type", help="Only this category (errorType).")
    ] = None,
    language: Annotated[
        str | None, typer.Option("--language", "-l", help="Only this language (go, java …).")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=1000, help="At most this many results.")
    ] = 20,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Full-text search over the records."""
    with _errors():
        settings = _settings(config, db=db)
        query = SearchQuery(
            text=text,
            repo=repo,
            error_class=error_class,
            error_type=error_type,
            language=language,
            limit=limit,
        )
        records, total = _with_store(settings, lambda p: p.store.search(query))
        if as_json:
            _print_json({"total": total, "records": [r.seed_dict() | _extra(r) for r in records]})
        elif records:
            _stdout().print(records_table(records, total=total))
        if not records:
            if not as_json:
                _stderr().print("no records found")
            raise typer.Exit(EXIT_NOT_FOUND)


def _extra(record: ErrorRecord) -> dict[str, Any]:
    return {"function": record.function, "kind": record.kind.value, "language": record.language}


def _read_input(text: str | None, file: Path | None) -> str:
    if file is not None:
        try:
            return file.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            _fail(f"cannot read {file}: {exc.strerror or exc}", EXIT_USAGE)
    if text is not None:
        return text
    if sys.stdin is None or sys.stdin.isatty():
        _fail("paste an error: give TEXT, --file F, or pipe it on stdin", EXIT_USAGE)
    return _stdin().read()


def _stdin() -> IO[str]:
    """Standard input as UTF-8 text, a byte that is not UTF-8 read as U+FFFD (as files are)."""
    if isinstance(sys.stdin, io.TextIOWrapper):
        sys.stdin.reconfigure(encoding="utf-8", errors="replace")
    return sys.stdin


def _readable(path: Path) -> bool:
    """Whether a path names something to read: a file, or a pipe (``<(cmd)``, /dev/stdin)."""
    return path.exists() and not path.is_dir()


@app.command()
def explain(
    text: Annotated[
        str | None,
        typer.Argument(help="The error, traceback or log text (else --file, else stdin)."),
    ] = None,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="Read the text from this file.")
    ] = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, max=100, help="At most N matches.")] = 5,
    engine: EngineOption = None,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Explain a pasted error, traceback or log: the exact raise site, captured values, cause."""
    with _errors():
        settings = _settings(config, db=db, engine=engine)
        pasted = _read_input(text, file)

        def run(pipeline: Pipeline) -> Explanation:
            explainer = _explainer(pipeline, settings)
            return explainer.explain(pasted, top=top)

        answer = _with_store(settings, run)
        if as_json:
            _print_json(answer.to_json())
        else:
            _stdout().print(explanation_view(answer))
        if not answer.found:
            raise typer.Exit(EXIT_NOT_FOUND)


@app.command()
def scan(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="Log files (.gz too); stdin when none.", show_default=False),
    ] = None,
    top: Annotated[int, typer.Option("--top", "-n", min=1, help="Show this many groups.")] = 20,
    engine: EngineOption = None,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Scan logs: group error occurrences by record, with counts and first/last seen."""
    with _errors():
        settings = _settings(config, db=db, engine=engine)
        for path in files or []:
            if not _readable(path):
                _fail(f"no such file: {path}", EXIT_USAGE)
        from errdex.match.scan import Scanner

        def run(pipeline: Pipeline) -> tuple[ScanReport, dict[int, ErrorRecord]]:
            explainer = _explainer(pipeline, settings)
            console = _stderr()
            with _progress(console) as progress:
                task = progress.add_task("scanning", total=None, path="")

                def advance(lines: int) -> None:
                    progress.update(task, completed=lines, path=f"{lines} lines")

                report = Scanner(explainer.index).scan(_log_lines(files or []), progress=advance)
            wanted = [group.rowids[0] for group in report.groups[:top]]
            rows = pipeline.store.get_rows(wanted)
            return report, {rowid: envelope.record for rowid, envelope in rows.items()}

        report, records = _with_store(settings, run)
        if as_json:
            _print_json(_scan_json(report, records, top))
        else:
            _stdout().print(scan_view(report, records, top=top))
        if not report.groups and not report.unknown:
            raise typer.Exit(EXIT_NOT_FOUND)


def _log_lines(files: list[Path]) -> Iterator[str]:
    import gzip

    if not files:
        yield from _stdin()
        return
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
                yield from handle
        except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
            _fail(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", EXIT_USAGE)


def _scan_json(report: ScanReport, records: dict[int, ErrorRecord], top: int) -> dict[str, Any]:
    def group(g: ScanGroup, record: ErrorRecord | None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "count": g.count,
            "firstLine": g.first_line,
            "lastLine": g.last_line,
            "firstSeen": g.first_seen,
            "lastSeen": g.last_seen,
            "sample": g.sample,
        }
        if record is not None:
            data["record"] = record.seed_dict()
            data["sites"] = len(g.rowids)
        else:
            data["text"] = g.key
        return data

    return {
        "lines": report.lines,
        "matched": report.matched,
        "unmatched": report.unmatched,
        "groups": [group(g, records.get(g.rowids[0])) for g in report.groups[:top]],
        "unknown": [group(g, None) for g in report.unknown[:top]],
    }


@app.command()
def enrich(
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help=_shown("Also ask the configured OpenAI-compatible endpoint (errdex[llm])."),
        ),
    ] = False,
    resume: Annotated[
        bool, typer.Option("--resume", help="Skip records this writer already wrote.")
    ] = False,
    repo: Annotated[str | None, typer.Option("--repo", help="Only this repo's records.")] = None,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Write the explanation fields of stored records (offline, or with an LLM), verified."""
    with _errors():
        settings = _settings(config, db=db)

        def run(pipeline: Pipeline) -> EnrichReport:
            writer = None
            if llm:
                from errdex.analyze.llm import LLMWriter

                writer = LLMWriter(settings)
            with _progress(_stderr()) as progress:
                task = progress.add_task("writing", total=None, path="")

                def advance(record_id: str, task: TaskID = task) -> None:
                    progress.update(task, advance=1, path=record_id)

                return pipeline.enrich(llm=writer, repo=repo, resume=resume, progress=advance)

        report = _with_store(settings, run)
        data = dataclasses.asdict(report)
        if as_json:
            _print_json(data)
        else:
            _stdout().print(key_values_table("enriched", data))
        if report.records == 0:
            raise typer.Exit(EXIT_NOT_FOUND)


@app.command()
def verify(
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="The code the records describe (a directory, git repository or pypi: spec).",
        ),
    ] = None,
    rev: Annotated[str | None, typer.Option("--rev", help="Git revision of --source.")] = None,
    repo: Annotated[str | None, typer.Option("--repo", help="Only this repo's records.")] = None,
    db: DbOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check records' prose against the code: contradicted claims, moved and stale sites.

    Exit 0 when every record checks out, 1 when a record is flagged or stale.
    """
    with _errors():
        settings = _settings(config, db=db)

        def run(pipeline: Pipeline) -> VerifyRun:
            opened = pipeline.open(source, revision=rev) if source is not None else None
            return pipeline.verify(source=opened, repo=repo)

        result = _with_store(settings, run)
        counts = result.counts()
        interesting = [o for o in result.outcomes if o.status != "ok" and o.status != "unchecked"]
        if as_json:
            _print_json(
                {
                    **counts,
                    "outcomes": [
                        {
                            "id": o.record_id,
                            "status": o.status,
                            "line": o.line,
                            "claims": [c.model_dump(mode="json") for c in o.claims],
                        }
                        for o in interesting
                    ],
                }
            )
        else:
            _stdout().print(verify_view(counts, interesting))
        if counts["records"] == 0:
            raise typer.Exit(EXIT_NOT_FOUND)
        if counts["flagged"] or counts["stale"] or any(o.claims for o in result.outcomes):
            raise typer.Exit(EXIT_NOT_FOUND)


@app.command()
def stats(db: DbOption = None, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Counts of records by type, class and repo."""
    with _errors():
        settings = _settings(config, db=db)
        result = _with_store(settings, lambda p: p.store.stats())
        if as_json:
            _print_json(result.model_dump(mode="json") | {"store": str(settings.db)})
        else:
            _stdout().print(stats_table(result, str(settings.db)))
        if result.records == 0:
            raise typer.Exit(EXIT_NOT_FOUND)


@app.command(help=_shown(SERVE_HELP))
def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port to listen on.")
    ] = 8000,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            help="Worker processes; each loads the matcher index from its cache.",
        ),
    ] = 1,
    allow_ingest: Annotated[
        bool,
        typer.Option("--allow-ingest", help="Accept records on POST /api/ingest (needs a token)."),
    ] = False,
    ingest_token: Annotated[
        str | None,
        typer.Option(
            "--ingest-token",
            envvar="ERRDEX_INGEST_TOKEN",
            show_envvar=False,
            help=_shown(
                "The bearer token of POST /api/ingest, at least 16 characters"
                " [env ERRDEX_INGEST_TOKEN]."
            ),
            show_default=False,
        ),
    ] = None,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log every request.")
    ] = True,
    db: DbOption = None,
    config: ConfigOption = None,
) -> None:
    """Serve the web UI and the JSON API until interrupted (help: :data:`SERVE_HELP`)."""
    with _errors():
        settings = _settings(config, db=db)
        token = None
        if allow_ingest:
            token = ingest_token or ""
            if len(token) < 16:
                _fail(
                    "--allow-ingest needs a token of at least 16 characters:"
                    " set ERRDEX_INGEST_TOKEN (or --ingest-token)",
                    EXIT_USAGE,
                )
        try:
            import uvicorn

            from errdex.web import WebOptions, create_app
            from errdex.web.worker import (
                WORKER_ENV,
                WORKER_FACTORY,
                reuse_port_available,
                serve_workers,
                worker_environment,
            )
        except ImportError as exc:
            from errdex.errors import MissingDependencyError

            raise MissingDependencyError("errdex serve", extra="web") from exc
        options = WebOptions(ingest_token=token)
        # Only a server that takes records (ingest) starts a store; else a mistyped --db
        # would serve an empty one and leave a stray file.
        with SQLiteStore(settings.db, create=token is not None) as store:
            # Built (or loaded) once here, so that each worker only loads the cached file.
            Explainer.for_database(store, settings.db, engine=settings.engine)
            ingest = " (ingest on)" if token is not None else ""
            _stderr().print(
                f"errdex: serving {settings.db} on http://{host}:{port}"
                f" with {workers} worker(s){ingest}"
            )
            if workers == 1:
                app_ = create_app(settings, store, options=options)
                uvicorn.run(app_, host=host, port=port, log_level="info", access_log=access_log)
                return
        os.environ[WORKER_ENV] = worker_environment(settings, options)
        if reuse_port_available():
            # Each worker has a socket of its own: the kernel spreads the connections.
            try:
                healthy = serve_workers(host, port, workers, access_log=access_log)
            except OSError as exc:
                _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", EXIT_USAGE)
            if not healthy:
                _fail("the worker processes could not serve (their log is above)", EXIT_INTERNAL)
            return
        uvicorn.run(
            WORKER_FACTORY,
            factory=True,
            host=host,
            port=port,
            workers=workers,
            log_level="info",
            access_log=access_log,
        )


@app.command()
def schema(
    fmt: Annotated[
        RecordFormat,
        typer.Option("--format", help="seed: the dataset's record; full: with errdex's fields."),
    ] = RecordFormat.FULL,
) -> None:
    """Print the JSON Schema of a record."""
    from errdex.models import ErrorRecord, SeedRecord

    model = SeedRecord if fmt is RecordFormat.SEED else ErrorRecord
    _print_json(model.model_json_schema(by_alias=True, mode="serialization"))


@app.command("settings")
def settings_command(config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """Print the effective settings and where each value came from."""
    with _errors():
        resolved = _resolve(config)
        if as_json:
            values = resolved.settings.model_dump(mode="json")
            _print_json(
                {
                    name: {"value": values[name], "from": origin}
                    for name, origin in resolved.origins.items()
                }
            )
        else:
            _stdout().print(settings_table(resolved))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"errdex {__version__} ({_native.MODE} modules)")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """The error index: mine the errors code can raise, then explain any pasted error."""


def main() -> None:
    """Run the CLI (the ``errdex`` console script)."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal that cannot show a character (an ASCII locale) gets an escape for it,
        # not a failed command: records hold any text, and the snippet marks its line "❱".
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    app()
