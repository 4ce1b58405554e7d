"""What the routes share: connections to the store, the matcher index, ingest and facet counts.

One :class:`Services` object per application, made by :func:`errdex.web.app.create_app`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import anyio

from errdex.errors import RecordFormatError
from errdex.match.explain import Explainer, Explanation
from errdex.match.index import MatcherIndex
from errdex.models import ErrorRecord, RecordEnvelope
from errdex.pipeline import ImportReport, Pipeline
from errdex.settings import Settings
from errdex.store.base import RecordStore, SearchQuery
from errdex.store.jsonl import RecordFormat, parse_line
from errdex.store.sqlite import SQLiteStore, search_clause

T = TypeVar("T")

FACET_COLUMNS = {
    "repo": "r.repo",
    "language": "r.language",
    "errorType": "r.error_type",
    "errorClass": "r.error_class",
}
"""Facet name (as in the API's query string) → column of the ``records`` table."""

INGEST_LOCATION = "POST /api/ingest"
"""The location recorded on the sources of ingested records."""


@dataclass(frozen=True)
class WebOptions:
    """Limits and switches of the web application.

    Attributes:
        max_body_bytes: Request bodies larger than this are refused with 413.
        max_paste_chars: Pasted texts longer than this are refused with 413.
        max_page_size: The most records one API page may hold.
        page_size: Records per page on the HTML search page.
        max_page: The highest page number accepted.
        max_top: The most matches one explanation may ask for.
        time_limit: Seconds one explanation may take before the request fails with 503.
        facet_limit: Values shown per facet.
        source_limit: The most records listed on one source page.
        ingest_token: The bearer token ``POST /api/ingest`` requires; None turns ingest off
            (the route answers 404).
        max_ingest_problems: At most this many bad lines are described in an ingest's answer.
        concurrency: Requests whose work runs at once in one process; the others wait their
            turn in order. Each holds one connection to the store. More than a few only adds
            contention: the work is mostly Python, which runs one thread at a time.
    """

    max_body_bytes: int = 1_000_000
    max_paste_chars: int = 200_000
    max_page_size: int = 100
    page_size: int = 20
    max_page: int = 10_000
    max_top: int = 20
    time_limit: float = 10.0
    facet_limit: int = 15
    source_limit: int = 5_000
    ingest_token: str | None = field(default=None, repr=False)
    max_ingest_problems: int = 100
    concurrency: int = 4


@dataclass(frozen=True)
class LineProblem:
    """A line of an ingested body that is not a valid record.

    Attributes:
        line: Its 1-based number.
        error: Why, in one sentence.
    """

    line: int
    error: str


@dataclass
class IngestReport:
    """What an ingest did.

    Attributes:
        written: The records written, by format and repo (``files`` stays 0).
        lines: The non-blank lines of the body.
        rejected: How many of them were not valid records.
        problems: The first rejected lines, with why.
    """

    written: ImportReport
    lines: int = 0
    rejected: int = 0
    problems: list[LineProblem] = field(default_factory=list)


def parse_body(
    body: bytes, *, max_problems: int
) -> tuple[list[tuple[RecordEnvelope, RecordFormat]], IngestReport]:
    """Parse a JSON Lines body line by line: a bad line is reported, the good ones are kept.

    Args:
        body: The request body (UTF-8; blank lines are skipped).
        max_problems: Describe at most this many bad lines (all are counted).

    Returns:
        The good lines as :func:`~errdex.store.jsonl.parse_line` parses them, and a report
        with the line counts and problems (nothing written yet).
    """
    good: list[tuple[RecordEnvelope, RecordFormat]] = []
    report = IngestReport(written=ImportReport())
    for number, raw in enumerate(body.split(b"\n"), 1):
        if not raw.strip():
            continue
        report.lines += 1
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            good.append(parse_line(line, path="body", number=number))
        except (UnicodeDecodeError, RecordFormatError) as exc:
            report.rejected += 1
            if len(report.problems) < max_problems:
                reason = (
                    f"body:{number}: not UTF-8" if isinstance(exc, UnicodeDecodeError) else str(exc)
                )
                report.problems.append(LineProblem(line=number, error=reason))
    return good, report


@dataclass(eq=False)
class _Connection:
    """One connection of the pool: a store, and a read-only SQLite connection for facets."""

    store: RecordStore
    facets: sqlite3.Connection | None = None

    def close(self) -> None:
        """Close both connections."""
        self.store.close()
        if self.facets is not None:
            self.facets.close()


class Services:
    """The store, the matcher index built from it, and the work the routes share.

    A store in a SQLite file is read through a pool of connections of its own, one per
    request in progress, so requests do not wait for a lock; at most
    ``options.concurrency`` of them run at once (:attr:`limiter`, used by the routes), which
    also bounds the pool. The caller's store is used for writes (ingest) and, behind one lock,
    for reads of a store that is not a file. The matcher index is shared by every request and
    rebuilt (or loaded from its cache next to the database) when the store's version token
    changes: after an ingest, after ``errdex mine``/``import`` in another process, or after
    another worker's ingest.

    Args:
        settings: The effective settings (``db`` and ``engine`` are used).
        store: The store every route reads; it stays the caller's to close.
        options: The limits.
    """

    def __init__(self, settings: Settings, store: RecordStore, options: WebOptions) -> None:
        self.settings = settings
        self.store = store
        self.options = options
        self._lock = threading.RLock()
        self._pool_lock = threading.Lock()
        self._idle: list[_Connection] = []
        self._opened: set[_Connection] = set()
        self._index_lock = threading.Lock()
        self._index: MatcherIndex | None = None
        self._pipeline: Pipeline | None = None
        self._file = _store_file(store)
        self.limiter = anyio.CapacityLimiter(options.concurrency)

    @contextmanager
    def _connection(self) -> Iterator[_Connection]:
        """Lend a connection of the pool, or the caller's store behind the lock."""
        if self._file is None:
            with self._lock:
                yield _Connection(self.store)
            return
        with self._pool_lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = _Connection(SQLiteStore(self._file))
            with self._pool_lock:
                self._opened.add(connection)
        try:
            yield connection
        finally:
            # Connections past the limit (work abandoned at the time limit, ingests) and those
            # returned after close() are closed rather than kept.
            with self._pool_lock:
                keep = connection in self._opened and len(self._idle) < self.options.concurrency
                if keep:
                    self._idle.append(connection)
                else:
                    self._opened.discard(connection)
            if not keep:
                connection.close()

    def read(self, action: Callable[[RecordStore], T]) -> T:
        """Run ``action`` on a connection to the store that no other request uses meanwhile."""
        with self._connection() as connection:
            return action(connection.store)

    def explain(self, text: str, *, top: int) -> Explanation:
        """Explain a paste with the matcher index of the current store version."""
        with self._connection() as connection:
            index = self._current_index(connection.store)
            return Explainer(connection.store, index).explain(text, top=top)

    def _current_index(self, store: RecordStore, *, wait: bool = False) -> MatcherIndex:
        """Return the shared index of the store's version, loading or building it if stale.

        One request rebuilds it (seconds at 100,000 records); meanwhile the others answer
        from the previous index, unless ``wait``: records written since are found as soon as
        the new one is ready.
        """
        index = self._index
        if index is not None and index.version == store.version():
            return index
        if not self._index_lock.acquire(blocking=wait or index is None):
            assert index is not None
            return index
        try:
            index = self._index
            if index is None or index.version != store.version():
                index = Explainer.for_database(
                    store, Path(self.settings.db), engine=self.settings.engine
                ).index
                self._index = index
            return index
        finally:
            self._index_lock.release()

    def ingest(self, body: bytes) -> IngestReport:
        """Write the valid records of a JSON Lines body as ``errdex import`` writes a file.

        Bad lines are counted and described, the good ones written (filed under
        ``import:REPO``), and the matcher index is brought up to date before returning, so
        the next explanation finds the new records.

        Args:
            body: Seed-format or errdex JSON Lines, the format detected per line.

        Returns:
            What was written and which lines were refused.

        Raises:
            StoreError: The write failed.
        """
        good, report = parse_body(body, max_problems=self.options.max_ingest_problems)
        if good:
            with self._lock:
                if self._pipeline is None:
                    self._pipeline = Pipeline(self.settings, self.store)
                self._pipeline.import_records(good, location=INGEST_LOCATION, report=report.written)
            with self._connection() as connection:
                self._current_index(connection.store, wait=True)
        return report

    def search(
        self, query: SearchQuery
    ) -> tuple[list[ErrorRecord], int, dict[str, dict[str, int]]]:
        """One page of records matching a query, the total, and the facet counts (blocking)."""
        records, total = self.read(lambda store: store.search(query))
        return records, total, self.facets(query)

    def facets(self, query: SearchQuery) -> dict[str, dict[str, int]]:
        """Count the records matching a query by repo, language, category and class.

        Read through a read-only connection of its own to the store's SQLite file (the
        ``records`` and ``records_fts`` tables); a store that is not a file has no facets.
        """
        join, clause, params = search_clause(query)
        result: dict[str, dict[str, int]] = {name: {} for name in FACET_COLUMNS}
        with self._connection() as connection:
            database = self._facet_connection(connection)
            if database is None:
                return result
            for name, column in FACET_COLUMNS.items():
                try:
                    rows = database.execute(
                        f"SELECT {column}, count(*) AS n FROM records r {join} {clause}"
                        f" GROUP BY {column} ORDER BY n DESC, {column} LIMIT ?",
                        [*params, self.options.facet_limit],
                    ).fetchall()
                except sqlite3.Error:
                    rows = []
                result[name] = {str(value): int(count) for value, count in rows}
        return result

    def _facet_connection(self, connection: _Connection) -> sqlite3.Connection | None:
        if connection.facets is not None or self._file is None:
            return connection.facets
        try:
            connection.facets = sqlite3.connect(
                f"file:{quote(str(self._file.resolve()))}?mode=ro",
                uri=True,
                check_same_thread=False,
            )
        except sqlite3.Error:
            return None
        return connection.facets

    def close(self) -> None:
        """Close the pool's connections (the caller's store stays open: it is the caller's)."""
        with self._pool_lock:
            opened, self._opened, self._idle = self._opened, set(), []
        for connection in opened:
            connection.close()


def _store_file(store: RecordStore) -> Path | None:
    """Return the SQLite file of a store that is one, else None."""
    location = getattr(store, "location", None)
    if not isinstance(store, SQLiteStore) or not isinstance(location, str):
        return None
    if location == ":memory:" or not Path(location).exists():
        return None
    return Path(location)
