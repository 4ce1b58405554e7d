"""The pipeline: source → extract → analyze → store, and the import/export of record files.

:class:`Pipeline` is the one entry point the interfaces call. It never prints: progress goes
to an optional callback, results come back as :class:`~errdex.models.RunReport` objects.
Per-file failures become :class:`~errdex.models.Problem` entries and never abort a run
(unless ``settings.strict``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from errdex.analyze.records import build_records
from errdex.errors import ExtractionError
from errdex.extract import Extractor, extractors
from errdex.extract.files import Source, SourceFile, open_source
from errdex.models import (
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
    extractor: Extractor, file: SourceFile, *, strict: bool
) -> tuple[list[RaiseSite], Problem | None]:
    """Mine one file, turning its failure into a problem.

    Args:
        extractor: The language's extractor.
        file: The file.
        strict: Raise instead of returning a problem.

    Returns:
        The sites and, when the file could not be mined, the problem.

    Raises:
        ExtractionError: Only when ``strict``.
    """
    if file.data is None:
        problem = Problem(
            path=file.path, kind=file.problem or ProblemKind.UNREADABLE, message=file.detail
        )
        if strict:
            raise ExtractionError(problem.message, path=file.path, kind=problem.kind.value)
        return [], problem
    try:
        return extractor.extract(file), None
    except ExtractionError as exc:
        if strict:
            raise
        return [], Problem(
            path=exc.path, kind=ProblemKind(exc.kind), message=str(exc), line=exc.line
        )
    except Exception as exc:  # a bug on one file must not lose the run: report it
        if strict:
            raise
        return [], Problem(
            path=file.path, kind=ProblemKind.INTERNAL, message=f"{type(exc).__name__}: {exc}"
        )


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

    def open(self, spec: str, *, repo: str | None = None, revision: str | None = None) -> Source:
        """Open a source the user named (see :func:`errdex.extract.files.open_source`)."""
        return open_source(spec, repo=repo, revision=revision)

    def mine(self, source: Source, *, progress: ProgressCallback | None = None) -> RunReport:
        """Mine one source and replace its records in the store.

        Args:
            source: The source.
            progress: Called with each file's path.

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
        by_suffix = {
            suffix: extractor for extractor in self._extractors for suffix in extractor.suffixes
        }
        wanted = tuple(by_suffix)
        sites: list[RaiseSite] = []
        problems: list[Problem] = []
        files = 0
        for file in source.files(
            wanted=wanted,
            max_bytes=self.settings.max_file_bytes,
            include_tests=self.settings.include_tests,
        ):
            if progress is not None:
                progress(file.path)
            extractor = next(e for s, e in by_suffix.items() if file.path.endswith(s))
            found, problem = mine_file(extractor, file, strict=self.settings.strict)
            files += 1
            sites.extend(found)
            if problem is not None:
                problems.append(problem)
        records = build_records(sites, info, analyzed_at=mined_at)
        report = RunReport(
            source=info,
            files=files,
            sites=dict(Counter(site.kind.value for site in sites)),
            forms=dict(Counter(site.form for site in sites)),
            opaque=sum(1 for record in records if record.opaque),
            records=len(records),
            problems=problems,
            seconds=round(time.perf_counter() - started, 3),
        )
        self.store.replace_source(
            info, records, problems=problems, report=report, dataset_version=mined_at, run_id=run_id
        )
        return report

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
