"""The record store protocol every backend implements, and the shapes it returns."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from errdex.models import (
    ErrorRecord,
    Problem,
    RecordEnvelope,
    RunReport,
    SourceInfo,
    StoreStats,
)


@dataclass(frozen=True, slots=True)
class EncodedRecord:
    """A record as its store writes it, made by :meth:`RecordStore.encode_record`.

    Mining builds and encodes records in its worker processes; only this crosses back.

    Attributes:
        values: What the store writes, in the store's own layout.
    """

    values: tuple[Any, ...]


@dataclass(frozen=True)
class SearchQuery:
    """A record search.

    Attributes:
        text: Full-text query over message, class, path and prose; empty for filters only.
        repo: Only records of this repo.
        error_class: Only records of this class.
        error_type: Only records of this category.
        language: Only records of this language (``go``).
        any_words: Match records holding any of the words (ranked), not all of them.
        limit: At most this many results.
        offset: Skip this many results (paging).
    """

    text: str = ""
    repo: str | None = None
    error_class: str | None = None
    error_type: str | None = None
    language: str | None = None
    any_words: bool = False
    limit: int = 20
    offset: int = 0


class RecordStore(Protocol):
    """Where records live. Writes are transactional: readers see a whole run or none of it."""

    location: str

    def begin_run(self, source: SourceInfo) -> int:
        """Record that a run of ``source`` started; return its run id."""
        ...

    def encode_record(self, record: ErrorRecord, dataset_version: datetime) -> EncodedRecord:
        """Encode a record for :meth:`replace_source`; safe to call in a forked process."""
        ...

    def replace_source(
        self,
        source: SourceInfo,
        records: Iterable[ErrorRecord | EncodedRecord],
        *,
        problems: Sequence[Problem],
        report: RunReport,
        dataset_version: datetime,
        run_id: int | None = None,
        files: Sequence[tuple[str, str, str, str]] = (),
        classes: Sequence[tuple[str, str, list[str]]] = (),
    ) -> None:
        """Replace every record of ``source`` with ``records``, atomically.

        ``classes``: the exception classes the source defines, ``(name, module, ancestors)``.
        """
        ...

    def settle(self) -> None:
        """Wait for what :meth:`replace_source` left running in the background, if anything."""
        ...

    def finish_unchanged(self, source: SourceInfo, *, report: RunReport, run_id: int) -> None:
        """Mark a run that found nothing changed; the stored records stay."""
        ...

    def cached_results(self, source_key: str) -> dict[str, tuple[str, str, str]]:
        """Return the previous run's ``(digest, extractor, result JSON)`` per path."""
        ...

    def last_report(self, source_key: str) -> RunReport | None:
        """Return the report of a source's last finished run, or None."""
        ...

    def source(self, source_key: str) -> tuple[SourceInfo, int] | None:
        """Return one source and its record count, or None."""
        ...

    def rename_source(self, old_key: str, new_key: str, *, package: str | None) -> bool:
        """File a source of ``package`` under a new key; False when there is none to rename."""
        ...

    def upsert_records(self, source: SourceInfo, envelopes: Iterable[RecordEnvelope]) -> int:
        """Add or replace records (by id) of ``source``; return how many were written."""
        ...

    def version(self) -> str:
        """Return a token that changes whenever the records change."""
        ...

    def get_rows(self, rowids: Sequence[int]) -> dict[int, RecordEnvelope]:
        """Return records by row id."""
        ...

    def iter_rows(self, *, repo: str | None = None) -> Iterator[tuple[int, RecordEnvelope]]:
        """Yield every record (of one repo) with its row id."""
        ...

    def update_rows(self, rows: Sequence[tuple[int, ErrorRecord]]) -> int:
        """Rewrite records in place; return how many were rewritten."""
        ...

    def index_rows(self) -> Iterator[tuple[int, str, str, int, int, str, str]]:
        """Yield ``(rowid, class, path, line, end line, kind, template JSON)`` per record."""
        ...

    def class_rows(self) -> Iterator[tuple[str, str, str]]:
        """Yield ``(name, module, ancestors JSON)`` of every exception class of the sources."""
        ...

    def get(self, record_id: str) -> list[RecordEnvelope]:
        """Return the records with this id (one per source holding it)."""
        ...

    def search(self, query: SearchQuery) -> tuple[list[ErrorRecord], int]:
        """Return one page of matching records, best first, and the total count."""
        ...

    def search_rowids(self, query: SearchQuery) -> list[int]:
        """Return the row ids of one page of matching records, best first."""
        ...

    def iter_envelopes(self, *, repo: str | None = None) -> Iterator[RecordEnvelope]:
        """Yield every record (of one repo) with its dataset version, in a stable order."""
        ...

    def sources(self) -> list[tuple[SourceInfo, int]]:
        """Return every source with its record count."""
        ...

    def problems(self, *, source_key: str | None = None) -> list[Problem]:
        """Return the problems of the last run of each source (or of one source)."""
        ...

    def stats(self) -> StoreStats:
        """Return counts over the whole store."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...
