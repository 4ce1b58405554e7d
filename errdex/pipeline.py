"""The pipeline: source → extract → analyze → store, and the import/export of record files.

:class:`Pipeline` is the one entry point the interfaces call. It never prints: progress goes
to an optional callback, results come back as :class:`~errdex.models.RunReport` objects.
Per-file failures become :class:`~errdex.models.Problem` entries and never abort a run
(unless ``settings.strict``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic_core import PydanticSerializationError

from errdex.analyze.records import build_records
from errdex.errors import ExtractionError
from errdex.extract import Extractor, blob_digest, extractors
from errdex.extract.files import Source, SourceFile, open_source
from errdex.models import (
    FileResult,
    Problem,
    ProblemKind,
    RaiseSite,
    RecordEnvelope,
    RunReport,
    SourceInfo,
    utc_now,
)
from errdex.settings import Settings
from errdex.store.base import RecordStore
from errdex.store.jsonl import RecordFormat, read_jsonl, write_jsonl

ProgressCallback = Callable[[str], None]
"""Called with each file's path as it is mined (for progress bars)."""


@dataclass
class ImportReport:
    """What an import did.

    Attributes:
        files: Files read.
        records: Records written.
        formats: Lines read, by format (``seed``/``full``).
        repos: Records written, by repo.
    """

    files: int = 0
    records: int = 0
    formats: Counter[str] = field(default_factory=Counter)
    repos: Counter[str] = field(default_factory=Counter)


def mine_file(
    extractor: Extractor | None, file: SourceFile, *, strict: bool
) -> tuple[FileResult | None, Problem | None]:
    """Mine one file, turning its failure into a problem.

    Args:
        extractor: The language's extractor (unused for a file without data).
        file: The file.
        strict: Raise instead of returning a problem.

    Returns:
        The file's result or, when it could not be mined, the problem.

    Raises:
        ExtractionError: Only when ``strict``.
    """
    if file.data is None or extractor is None:
        kind = file.problem or ProblemKind.UNREADABLE
        if strict:
            raise ExtractionError(file.detail, path=file.path, kind=kind.value)
        return None, Problem(path=file.path, kind=kind, message=file.detail)
    try:
        return _encodable(extractor.extract(file)), None
    except ExtractionError as exc:
        if strict:
            raise
        return None, Problem(
            path=exc.path, kind=ProblemKind(exc.kind), message=str(exc), line=exc.line
        )
    except Exception as exc:  # a bug on one file must not lose the run: report it
        if strict:
            raise
        return None, Problem(
            path=file.path, kind=ProblemKind.INTERNAL, message=f"{type(exc).__name__}: {exc}"
        )


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


def _encodable(result: FileResult) -> FileResult:
    """Make a result storable: a string constant may hold a lone surrogate (U+D800).

    UTF-8 cannot encode those, so they are written as their backslash escape instead.
    """
    try:
        result.model_dump_json()
    except PydanticSerializationError:
        return FileResult.model_validate(_clean(result.model_dump()))
    return result


def _extract_chunk(
    window: int, strict: bool, files: list[SourceFile]
) -> list[tuple[FileResult | None, Problem | None]]:
    """Worker-process entry point: mine a batch of files with fresh extractors."""
    chosen = extractors(window=window)
    return [
        mine_file(next(e for e in chosen if f.path.endswith(e.suffixes)), f, strict=strict)
        for f in files
    ]


_CHUNK = 16


class Pipeline:
    """Mines sources into a store, and moves records in and out of it.

    Args:
        settings: The effective settings.
        store: Where records are written and read.
    """

    def __init__(self, settings: Settings, store: RecordStore) -> None:
        self.settings = settings
        self.store = store
        self._extractors = extractors(window=settings.window)
        self._wanted = tuple(suffix for e in self._extractors for suffix in e.suffixes)

    def open(self, spec: str, *, repo: str | None = None, revision: str | None = None) -> Source:
        """Open a source the user named.

        ``pypi:NAME`` and ``pypi:NAME==VERSION`` are downloaded into the cache (see
        :class:`errdex.extract.pypi.PypiSource`); anything else is a path (see
        :func:`errdex.extract.files.open_source`).

        Raises:
            UsageError: A malformed ``pypi:`` spec, or ``revision`` with one.
            SourceNotFoundError: The path does not exist, or pip cannot download the package.
            SourceError: A downloaded archive was refused whole.
            RevisionNotFoundError: The revision names no commit.
        """
        # Imported lazily: only pypi: specs need the archive and download machinery (#3).
        from errdex.errors import UsageError
        from errdex.extract.archives import ArchiveLimits
        from errdex.extract.pypi import PypiSource, is_pypi_spec

        if is_pypi_spec(spec):
            if revision is not None:
                raise UsageError(f"--rev does not apply to {spec}; pin it as pypi:NAME==VERSION")
            limits = ArchiveLimits.from_settings(self.settings)
            return PypiSource.open(
                spec, cache_dir=self.settings.cache_dir, limits=limits, repo=repo
            )
        return open_source(spec, repo=repo, revision=revision)

    def _tag(self, extractor: Extractor) -> str:
        # Cached results are valid only for the same extractor version and window.
        return f"{extractor.language}:{extractor.version}:w{self.settings.window}"

    def mine(self, source: Source, *, progress: ProgressCallback | None = None) -> RunReport:
        """Mine one source and replace its records in the store.

        Files whose content digest is unchanged since the source's last run reuse that run's
        extraction; when nothing changed at all (same files, same revision), the stored
        records are kept as they are.

        Args:
            source: The source.
            progress: Called with each file's path as it is done.

        Returns:
            The run report.

        Raises:
            ExtractionError: A file cannot be mined and ``settings.strict`` is set.
            StoreError: The store cannot be written (the previous records stay).
        """
        started = time.perf_counter()
        mined_at = utc_now()
        info = source.info.model_copy(update={"mined_at": mined_at})
        run_id = self.store.begin_run(info)
        cached = self.store.cached_results(info.key)
        order: list[str] = []
        results: dict[str, tuple[Extractor, FileResult]] = {}
        problems: list[Problem] = []
        pending: list[SourceFile] = []
        reused = 0

        def done(path: str, result: FileResult | None, problem: Problem | None) -> None:
            if result is not None:
                results[path] = (self._pick(path), result)
            if problem is not None:
                problems.append(problem)
            if progress is not None:
                progress(path)

        for file in source.files(
            wanted=self._wanted,
            max_bytes=self.settings.max_file_bytes,
            include_tests=self.settings.include_tests,
        ):
            order.append(file.path)
            if file.data is None:
                # Unreadable or refused (too large, unsafe archive entry): no extractor needed.
                done(file.path, *mine_file(None, file, strict=self.settings.strict))
                continue
            hit = cached.get(file.path)
            if file.data is not None and hit is not None:
                digest, tag, payload = hit
                if tag == self._tag(self._pick(file.path)) and digest == blob_digest(file.data):
                    reused += 1
                    done(file.path, FileResult.model_validate_json(payload), None)
                    continue
            pending.append(file)

        for file, (result, problem) in zip(pending, self._extract(pending), strict=True):
            done(file.path, result, problem)

        ordered = [results[path] for path in order if path in results]
        sites = self._link(ordered)
        previous = self.store.source(info.key)
        unchanged = (
            previous is not None
            and not pending
            and set(order) == set(cached)
            and (previous[0].sha, previous[0].version) == (info.sha, info.version)
        )
        report = RunReport(
            source=info,
            files=len(order),
            sites=dict(Counter(site.kind.value for site in sites)),
            forms=dict(Counter(site.form for site in sites)),
            opaque=sum(1 for site in sites if site.template.is_opaque),
            records=previous[1] if unchanged and previous is not None else len(sites),
            cached=reused,
            unchanged=unchanged,
            problems=problems,
            seconds=0.0,
        )
        if unchanged:
            report = report.model_copy(update={"seconds": round(time.perf_counter() - started, 3)})
            self.store.finish_unchanged(info, report=report, run_id=run_id)
            return report
        records = build_records(sites, info, analyzed_at=mined_at)
        report = report.model_copy(update={"seconds": round(time.perf_counter() - started, 3)})
        self.store.replace_source(
            info,
            records,
            problems=problems,
            report=report,
            dataset_version=mined_at,
            run_id=run_id,
            files=[(self._tag(extractor), result) for extractor, result in ordered],
        )
        return report

    def _pick(self, path: str) -> Extractor:
        return next(e for e in self._extractors if path.endswith(e.suffixes))

    def _extract(
        self, files: list[SourceFile]
    ) -> Iterator[tuple[FileResult | None, Problem | None]]:
        """Extract files in this process, or in ``settings.jobs`` worker processes."""
        strict = self.settings.strict
        if self.settings.jobs <= 1 or len(files) < 2 * _CHUNK:
            for file in files:
                yield mine_file(self._pick(file.path), file, strict=strict)
            return
        chunks = [files[i : i + _CHUNK] for i in range(0, len(files), _CHUNK)]
        with ProcessPoolExecutor(max_workers=self.settings.jobs) as pool:
            batches = pool.map(
                _extract_chunk,
                [self.settings.window] * len(chunks),
                [strict] * len(chunks),
                chunks,
            )
            for batch in batches:
                yield from batch

    def _link(self, ordered: list[tuple[Extractor, FileResult]]) -> list[RaiseSite]:
        by_language: dict[str, list[FileResult]] = {}
        for extractor, result in ordered:
            by_language.setdefault(extractor.language, []).append(result)
        sites: list[RaiseSite] = []
        for extractor in self._extractors:
            if extractor.language in by_language:
                sites.extend(extractor.link(by_language[extractor.language]))
        return sites

    def import_files(self, paths: Sequence[Path]) -> ImportReport:
        """Import seed or errdex JSONL files (``.gz`` too), format detected per line.

        Records are filed under one source per repo (key ``import:REPO``) and replace records
        with the same id there. Each file is validated completely before anything is written.

        Args:
            paths: The files.

        Returns:
            What was imported.

        Raises:
            RecordFormatError: A line is invalid (nothing of that file is written).
        """
        report = ImportReport()
        for path in paths:
            by_repo: dict[str, list[RecordEnvelope]] = {}
            for envelope, flavour in read_jsonl(path):
                by_repo.setdefault(envelope.record.repo, []).append(envelope)
                report.formats[flavour.value] += 1
            for repo, envelopes in by_repo.items():
                info = SourceInfo(
                    key=f"import:{repo}",
                    repo=repo,
                    kind="import",
                    location=str(path),
                    mined_at=utc_now(),
                )
                written = self.store.upsert_records(info, envelopes)
                report.records += written
                report.repos[repo] += written
            report.files += 1
        return report

    def export(self, handle: IO[str], *, flavour: RecordFormat, repo: str | None = None) -> int:
        """Write the store's records (of one repo) as JSON Lines.

        Args:
            handle: A text stream.
            flavour: ``seed`` writes exactly the seed's keys; ``full`` adds errdex's.
            repo: Only this repo's records.

        Returns:
            How many records were written.
        """
        return write_jsonl(self.store.iter_envelopes(repo=repo), handle, flavour)


def mine_sources(
    pipeline: Pipeline, sources: Iterable[Source], *, progress: ProgressCallback | None = None
) -> list[RunReport]:
    """Mine several sources in turn, one report each."""
    return [pipeline.mine(source, progress=progress) for source in sources]
