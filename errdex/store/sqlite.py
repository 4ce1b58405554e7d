"""The default store: one SQLite file, in WAL mode, with an FTS5 index.

Tables: ``sources`` (what was mined, at which revision and version, when), ``records`` (one
row per record and source, the full record as JSON in ``data`` plus the columns searches
filter on), ``records_fts`` (FTS5 over message, class, path and prose, kept in step by
triggers), ``problems`` (the files of each source's last run that could not be mined) and
``runs`` (every mining run, its status and report) and ``files`` (each mined file's
content digest and extraction result, so re-mining skips unchanged files). The file opens
in Datasette as it is.

Replacing a source happens in one ``BEGIN IMMEDIATE`` transaction: readers keep seeing the
old set until the commit, and a process killed mid-run leaves the old set intact.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from errdex.analyze.records import template_from_message
from errdex.errors import StoreError
from errdex.models import (
    ErrorRecord,
    Problem,
    RecordEnvelope,
    RunReport,
    SourceInfo,
    StoreStats,
    format_timestamp,
    utc_now,
)
from errdex.store.base import EncodedRecord, SearchQuery

STORE_VERSION = 5
"""Bumped whenever the tables change; older stores are migrated when opened."""

_SCHEMA: tuple[str, ...] = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)
""",
    """
CREATE TABLE IF NOT EXISTS sources (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    repo TEXT NOT NULL,
    kind TEXT NOT NULL,
    location TEXT NOT NULL DEFAULT '',
    revision TEXT,
    sha TEXT,
    package TEXT,
    version TEXT,
    mined_at TEXT
)
""",
    """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    source_key TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    report TEXT
)
""",
    """
CREATE TABLE IF NOT EXISTS records (
    rowid INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    repo TEXT NOT NULL,
    slug TEXT NOT NULL,
    error_class TEXT NOT NULL,
    error_type TEXT NOT NULL,
    severity TEXT NOT NULL,
    file_path TEXT NOT NULL,
    line_number INTEGER NOT NULL,
    error_message TEXT NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    language TEXT NOT NULL DEFAULT 'python',
    template TEXT NOT NULL,
    prose TEXT NOT NULL DEFAULT '',
    dataset_version TEXT NOT NULL,
    data TEXT NOT NULL,
    UNIQUE (source_id, id)
)
""",
    """
CREATE INDEX IF NOT EXISTS records_by_id ON records (id)
""",
    """
CREATE TABLE IF NOT EXISTS classes (
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    module TEXT NOT NULL,
    ancestors TEXT NOT NULL
)
""",
    """
CREATE INDEX IF NOT EXISTS records_by_class ON records (error_class)
""",
    """
CREATE INDEX IF NOT EXISTS records_by_repo ON records (repo)
""",
    """
CREATE TABLE IF NOT EXISTS problems (
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    line INTEGER NOT NULL DEFAULT 0
)
""",
    """
CREATE TABLE IF NOT EXISTS files (
    source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    digest TEXT NOT NULL,
    extractor TEXT NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (source_id, path)
)
""",
    """
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
    error_message, error_class, file_path, prose,
    content='records', content_rowid='rowid', tokenize='unicode61'
)
""",
    """
CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_deferred') BEGIN
    INSERT INTO records_fts (rowid, error_message, error_class, file_path, prose)
    VALUES (new.rowid, new.error_message, new.error_class, new.file_path, new.prose);
END
""",
    """
CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_deferred') BEGIN
    INSERT INTO records_fts (records_fts, rowid, error_message, error_class, file_path, prose)
    VALUES ('delete', old.rowid, old.error_message, old.error_class, old.file_path, old.prose);
END
""",
    """
CREATE TRIGGER IF NOT EXISTS records_au AFTER UPDATE ON records
WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_deferred') BEGIN
    INSERT INTO records_fts (records_fts, rowid, error_message, error_class, file_path, prose)
    VALUES ('delete', old.rowid, old.error_message, old.error_class, old.file_path, old.prose);
    INSERT INTO records_fts (rowid, error_message, error_class, file_path, prose)
    VALUES (new.rowid, new.error_message, new.error_class, new.file_path, new.prose);
END
""",
)
"""The tables, indexes and triggers, one statement each (run inside transactions)."""

_RECORD_COLUMNS = (
    "source_id, id, repo, slug, error_class, error_type, severity, file_path, line_number,"
    " error_message, end_line, kind, language, template, prose, dataset_version, data"
)
_RECORD_PLACEHOLDERS = ", ".join("?" * 17)


PAGE_SIZE = 16384
"""The page size of a new store, in bytes (SQLite's default is 4096)."""

_WRITE_BATCH = 500
"""Rows written per batch when records are updated or imported one by one (the search index
is kept per batch; SQLite's limit on ``?`` parameters is far above it)."""

_FTS_COLUMNS = "rowid, error_message, error_class, file_path, prose"

_INDEX_BATCH = 500
"""Records a mining run writes and indexes at a time, the next ones still being built (in
forked processes: :meth:`errdex.pipeline.Pipeline._encoded_records`) meanwhile. What is
left to write once the last record is built is at most a batch: in a two-job pandas run,
its 915 last records took 0.03 s more than 500 do; a run of one job writes as fast."""

_T = TypeVar("_T")


def _batches(items: Iterable[_T], size: int) -> Iterator[list[_T]]:
    """Cut an iterable into lists of at most ``size`` items."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


class _CatchUp:
    """Indexes the rows a deferred block inserts as they come (see ``_search_index_deferred``).

    Row ids grow as rows are inserted, so the rows selected up to the highest row id at the
    last call are in the index, and the rest are the ones inserted since. A row an insert
    replaces (``INSERT OR REPLACE`` of an id inserted earlier in the block) leaves the index
    first: :meth:`replacing`.
    """

    def __init__(self, db: sqlite3.Connection, where: str, params: Sequence[Any]) -> None:
        self._db, self._where, self._params = db, where, tuple(params)
        self.indexed = -1
        """The selected rows up to this row id are in the index."""

    def replacing(self, source_id: int, ids: Sequence[str]) -> None:
        """Take out of the index the rows of ``source_id`` an insert of ``ids`` will replace."""
        if self.indexed < 0:
            return
        self._db.execute(
            f"INSERT INTO records_fts (records_fts, {_FTS_COLUMNS})"
            f" SELECT 'delete', {_FTS_COLUMNS} FROM records WHERE rowid <= ? AND ({self._where})"
            " AND source_id = ? AND id IN (SELECT value FROM json_each(?))",
            (self.indexed, *self._params, source_id, json.dumps(list(ids))),
        )

    def __call__(self) -> None:
        """Index the selected rows inserted since the last call (all of them at the first)."""
        top = int(self._db.execute("SELECT coalesce(max(rowid), -1) FROM records").fetchone()[0])
        if self.indexed < 0:
            self._db.execute(
                f"INSERT INTO records_fts ({_FTS_COLUMNS})"
                f" SELECT {_FTS_COLUMNS} FROM records WHERE {self._where}",
                self._params,
            )
        else:
            # By row id only: an index on the condition's columns would walk all the rows
            # it selects at every call.
            self._db.execute(
                f"INSERT INTO records_fts ({_FTS_COLUMNS}) SELECT {_FTS_COLUMNS}"
                f" FROM records NOT INDEXED WHERE rowid > ? AND rowid <= ? AND ({self._where})",
                (self.indexed, top, *self._params),
            )
        self.indexed = top


_TERM = re.compile(r"[^\W_]+")
"""A term as FTS5's ``unicode61`` tokenizer cuts it: a run of letters and digits."""

RARE_WORDS = 4
"""How many words an any-word search keeps (the rarest)."""

MAX_WORD_RECORDS = 2000
"""An any-word search ignores words that more records than this hold."""


def search_clause(query: SearchQuery, text: str | None = None) -> tuple[str, str, list[Any]]:
    """The join, ``WHERE`` clause and parameters that select a query's records (``r``).

    Args:
        query: The search.
        text: The words to match instead of ``query.text`` (an any-word search narrows them).

    Returns:
        The FTS join (empty without words), the clause (empty without conditions), the
        parameters in order.
    """
    text = query.text if text is None else text
    where: list[str] = []
    params: list[Any] = []
    join = ""
    words = fts_query(text, any_words=query.any_words)
    if words:
        join = "JOIN records_fts f ON f.rowid = r.rowid"
        where.append("records_fts MATCH ?")
        params.append(words)
    for column, value in (
        ("r.repo", query.repo),
        ("r.error_class", query.error_class),
        ("r.error_type", query.error_type),
        ("r.language", query.language),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    return join, ("WHERE " + " AND ".join(where)) if where else "", params


def fts_query(text: str, *, any_words: bool = False) -> str:
    """Quote each word of a user's text so FTS5 reads it as plain terms, never as syntax.

    Args:
        text: The user's words.
        any_words: Join them with OR instead of FTS5's implicit AND.

    Returns:
        The FTS5 query; empty when the text holds no word.
    """
    joiner = " OR " if any_words else " "
    words = text.translate(_CONTROLS).split()  # FTS5 ends a quoted string at a NUL
    return joiner.join('"' + word.replace('"', '""') + '"' for word in words)


_CONTROLS = dict.fromkeys(range(32), " ")
"""Control characters, read as spaces in a search (FTS5's tokenizer separates words at them)."""


def _prose(record: ErrorRecord) -> str:
    return "\n".join(
        [
            record.documentation,
            record.trigger_scenarios,
            record.common_situations,
            *record.solutions,
            *record.tags,
            record.background_tag,
        ]
    )


_FIELD_KEYS = frozenset(field.alias or name for name, field in ErrorRecord.model_fields.items())


def load_record(data: str) -> ErrorRecord:
    """Read a stored record, tolerating keys a different errdex version wrote.

    A store outlives the code that wrote it: keys this version does not know are dropped
    (fields it added since get their defaults).
    """
    try:
        return ErrorRecord.model_validate_json(data)
    except ValidationError:
        raw = json.loads(data)
        return ErrorRecord.model_validate({k: v for k, v in raw.items() if k in _FIELD_KEYS})


def template_json(record: ErrorRecord) -> str:
    """Return a record's template as compact JSON ``[[text, is_hole], …]`` (what matchers read).

    Imported records that carry no template get one parsed back from ``errorMessage``.
    """
    template = record.template if record.template.parts else template_from_message(record)
    return json.dumps(
        [[part.text, part.hole] for part in template.parts],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _row(source_id: int, record: ErrorRecord, dataset_version: str) -> tuple[Any, ...]:
    return (source_id, *_values(record, dataset_version))


def _values(record: ErrorRecord, dataset_version: str) -> tuple[Any, ...]:
    """A record's ``records`` columns but its source (see :meth:`SQLiteStore.encode_record`)."""
    return (
        record.id,
        record.repo,
        record.slug,
        record.error_class,
        record.error_type.value,
        record.severity.value,
        record.file_path,
        record.line_number,
        record.error_message,
        max(record.end_line_number or record.line_number, record.message_end_line or 0),
        record.kind.value,
        record.language,
        template_json(record),
        _prose(record),
        dataset_version,
        # The same JSON as ``json.dumps(record.full_dict())``, written by pydantic's serializer.
        record.model_dump_json(),
    )


_AUTOCHECKPOINT = 1000
"""Pages in the write-ahead log that make a commit checkpoint it (SQLite's default)."""


def _checkpoint(db: sqlite3.Connection, started: threading.Event) -> None:
    """Checkpoint a store's write-ahead log on a connection of its own (a thread's target).

    ``started`` is set just before SQLite runs, and SQLite runs without Python's lock. A
    failure loses nothing: the log keeps the pages, and the next commit's automatic
    checkpoint, or closing the store, copies them.
    """
    with contextlib.closing(db):
        started.set()
        with contextlib.suppress(sqlite3.Error):
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")


class SQLiteStore:
    """A record store in one SQLite file.

    Args:
        path: The database file; created with its directory when missing. ``:memory:``
            gives a private in-memory store.
        create: Make the file when it is missing; else a missing file is an error (readers
            never leave an empty store behind a mistyped path).

    Raises:
        StoreError: The file cannot be opened, is not an errdex database, or is missing and
            ``create`` is false.
    """

    def __init__(self, path: Path | str, *, create: bool = True) -> None:
        self.location = str(path)
        self._file = self.location if self.location == ":memory:" else str(Path(path).absolute())
        """The database file, for a connection of another thread (wherever the process is)."""
        if not create and self.location != ":memory:" and not Path(path).is_file():
            raise StoreError(f"no store at {path} (errdex mine makes one)", location=self.location)
        try:
            if self.location != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.location, isolation_level=None, check_same_thread=False, timeout=30
            )
            # A new file only (a store's page size is fixed once it has tables): a record's
            # row (its JSON, about 5 KB) fits in one page instead of spilling into overflow
            # pages, and a transformers run writes its rows 20% faster.
            self._db.execute(f"PRAGMA page_size={PAGE_SIZE}")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
            for statement in _SCHEMA:
                self._db.execute(statement)  # no write when the objects exist
            known = self._db.execute(
                "SELECT count(*) FROM meta WHERE key IN ('store_version', 'store_id', 'generation')"
            ).fetchone()[0]
            if known < 3:
                # A write: done only for a new store, so that opening one never waits for
                # another process's write (a mining run holds the lock while it writes).
                self._db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_version', ?),"
                    " ('store_id', ?), ('generation', '0')",
                    (str(STORE_VERSION), uuid.uuid4().hex),
                )
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot open store {self.location}: {exc}", location=self.location
            ) from exc
        self._checkpointing: threading.Thread | None = None
        """The checkpoint a mining run's write left running, until :meth:`settle`."""

    def _migrate(self) -> None:
        """Bring a store written by an older errdex to the current tables.

        The full record is kept as JSON in every row, so the records table is rebuilt from it;
        cached file results are dropped (the next run re-extracts). All in one transaction.
        """
        exists = self._db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if not exists:
            return
        row = self._db.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone()
        version = int(row[0]) if row else 0
        if version == STORE_VERSION:
            return
        if version > STORE_VERSION:
            raise StoreError(
                f"{self.location} was written by a newer errdex (store version {version})",
                location=self.location,
            )
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if version in (3, 4):
                # Version 4 only lets writes of many rows pause the search index triggers:
                # the schema below makes them again. Version 5 adds the sources' exception
                # classes: the file results cached without them go, so that the next run of
                # each source extracts again and writes them.
                for trigger in ("records_ai", "records_ad", "records_au"):
                    self._db.execute(f"DROP TRIGGER IF EXISTS {trigger}")
                self._db.execute("DELETE FROM files")
                for statement in _SCHEMA:
                    self._db.execute(statement)
                self._db.execute(
                    "UPDATE meta SET value = ? WHERE key = 'store_version'", (str(STORE_VERSION),)
                )
                self._db.execute("COMMIT")
                return
            old = self._db.execute(
                "SELECT source_id, data, dataset_version FROM records ORDER BY rowid"
            ).fetchall()
            for statement in (
                "DROP TRIGGER IF EXISTS records_ai",
                "DROP TRIGGER IF EXISTS records_ad",
                "DROP TRIGGER IF EXISTS records_au",
                "DROP TABLE IF EXISTS records_fts",
                "DROP TABLE IF EXISTS records",
                "DROP TABLE IF EXISTS files",
            ):
                self._db.execute(statement)
            for statement in _SCHEMA:
                self._db.execute(statement)
            self._db.executemany(
                f"INSERT INTO records ({_RECORD_COLUMNS}) VALUES ({_RECORD_PLACEHOLDERS})",
                (
                    _row(source_id, load_record(data), version_text)
                    for source_id, data, version_text in old
                ),
            )
            self._db.execute(
                "UPDATE meta SET value = ? WHERE key = 'store_version'", (str(STORE_VERSION),)
            )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Close the connection (after the checkpoint a mining run left, if any)."""
        self.settle()
        self._db.close()

    def settle(self) -> None:
        """Wait for the checkpoint that :meth:`replace_source` left running, if any."""
        thread, self._checkpointing = self._checkpointing, None
        if thread is not None:
            thread.join()

    def _checkpoint_apart(self) -> None:
        """Copy the write-ahead log into the database file in another thread.

        A mining run's transaction puts all its pages in the log (about 110 MB for
        transformers): copying them into the database and syncing both files took 0.2 s,
        most of it waiting for the disk, at the commit. Another connection does it while
        this thread goes on (the mining pipeline frees the run's objects meanwhile and
        waits in :meth:`settle`). Readers and writers are not held up: the checkpoint is
        SQLite's passive one, as the automatic one is.
        """
        if self._file == ":memory:":
            return
        self.settle()
        try:
            db = sqlite3.connect(self._file, timeout=30, check_same_thread=False)
            db.execute("PRAGMA synchronous=NORMAL")  # the checkpoint syncs as this one's would
        except sqlite3.Error:
            return  # the next commit's automatic checkpoint, or closing the store, does it
        started = threading.Event()
        self._checkpointing = threading.Thread(
            target=_checkpoint, args=(db, started), name="errdex-checkpoint", daemon=True
        )
        self._checkpointing.start()
        # Until the thread is in SQLite: this one may next free a run's objects, which holds
        # Python's lock throughout, and the thread would only start after.
        started.wait()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------

    def _upsert_source(self, source: SourceInfo) -> int:
        mined_at = format_timestamp(source.mined_at) if source.mined_at else None
        self._db.execute(
            "INSERT INTO sources"
            " (key, repo, kind, location, revision, sha, package, version, mined_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (key) DO UPDATE SET repo=excluded.repo, kind=excluded.kind,"
            " location=excluded.location, revision=excluded.revision, sha=excluded.sha,"
            " package=excluded.package, version=excluded.version, mined_at=excluded.mined_at",
            (
                source.key,
                source.repo,
                source.kind,
                source.location,
                source.revision,
                source.sha,
                source.package,
                source.version,
                mined_at,
            ),
        )
        row = self._db.execute("SELECT id FROM sources WHERE key = ?", (source.key,)).fetchone()
        return int(row[0])

    @contextmanager
    def _write(self, *, checkpoint_apart: bool = False) -> Iterator[None]:
        """One write transaction: all or nothing, and a new version token when it commits.

        Args:
            checkpoint_apart: Leave the write-ahead log's checkpoint to another thread
                instead of doing it at the commit (see :meth:`_checkpoint_apart`).

        Raises:
            StoreError: SQLite failed; the transaction was rolled back.
        """
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                self._bump_generation()
                if checkpoint_apart:
                    self._db.execute("PRAGMA wal_autocheckpoint=0")
                try:
                    self._db.execute("COMMIT")
                finally:
                    if checkpoint_apart:
                        self._db.execute(f"PRAGMA wal_autocheckpoint={_AUTOCHECKPOINT}")
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            message = f"cannot write to {self.location}: {exc}"
            raise StoreError(message, location=self.location) from exc
        if checkpoint_apart:
            self._checkpoint_apart()

    @contextmanager
    def _search_index_deferred(self, where: str, params: Sequence[Any]) -> Iterator[_CatchUp]:
        """Keep the search index of the records ``where`` selects in a few bulk statements.

        Inside a write transaction only. The triggers keep the index row by row, and FTS5
        writes out its pending terms at every statement: for thousands of rows that cost more
        than the rows themselves (0.6 s of a transformers run's 1.9 s write). So the triggers
        pause (a ``meta`` row no other connection sees before the commit), the selected
        records leave the index before the block and the ones selected after it enter it.

        A block that only inserts rows may index them as it goes with the :class:`_CatchUp`
        it is given (a mining run indexes each batch of records while the next is still
        being built); the end then indexes only the rest.

        Args:
            where: An SQL condition on ``records`` (no alias) selecting every row the block
                inserts, replaces, updates or deletes.
            params: Its parameters.
        """
        self._db.execute("INSERT INTO meta (key, value) VALUES ('fts_deferred', '1')")
        self._db.execute(
            f"INSERT INTO records_fts (records_fts, {_FTS_COLUMNS})"
            f" SELECT 'delete', {_FTS_COLUMNS} FROM records WHERE {where}",
            params,
        )
        catch_up = _CatchUp(self._db, where, params)
        yield catch_up
        catch_up()
        self._db.execute("DELETE FROM meta WHERE key = 'fts_deferred'")

    def _bump_generation(self) -> None:
        self._db.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )

    def version(self) -> str:
        """Return a token that changes whenever the records change (for derived caches)."""
        rows = dict(
            self._db.execute("SELECT key, value FROM meta WHERE key IN ('store_id', 'generation')")
        )
        return f"{rows.get('store_id', '')}:{rows.get('generation', '0')}"

    def begin_run(self, source: SourceInfo) -> int:
        """Record that a run of ``source`` started (committed at once); return its id."""
        cursor = self._db.execute(
            "INSERT INTO runs (source_key, started_at, status) VALUES (?, ?, 'running')",
            (source.key, format_timestamp(utc_now())),
        )
        return int(cursor.lastrowid or 0)

    @staticmethod
    def encode_record(record: ErrorRecord, dataset_version: datetime) -> EncodedRecord:
        """Turn a record into the values its row holds (in any process: no connection used).

        Serialising a record costs a fifth of what building it does; mining does both in its
        worker processes and hands :meth:`replace_source` the result.
        """
        return EncodedRecord(_values(record, format_timestamp(dataset_version)))

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
        """Replace every record, problem and cached file result of ``source`` in one transaction.

        The records are read last: they may still be in the making in other processes
        (see :meth:`errdex.pipeline.Pipeline.mine`) while the rest is written. The write lock
        is held until the last one is in; other writers wait (up to the busy timeout). The
        commit leaves copying the write-ahead log into the database file to another thread:
        :meth:`settle` (or :meth:`close`) waits for it.

        Args:
            source: The source (its ``key`` says which rows are replaced).
            records: The new records, or what :meth:`encode_record` made of them with the
                same ``dataset_version``.
            problems: The files of this run that could not be mined.
            report: The run report, stored with the run.
            dataset_version: The dataset version stamped on the records.
            run_id: The run started by :meth:`begin_run`, marked finished here.
            files: ``(extractor, path, digest, result JSON)`` for every file mined, kept for
                the next run.
            classes: ``(name, module, ancestors)`` of each exception class the source
                defines (explain reads a pasted class by its ancestors).

        Raises:
            StoreError: The write failed; the previous records are unchanged.
        """
        version = format_timestamp(dataset_version)
        with self._write(checkpoint_apart=True):
            source_id = self._upsert_source(source)
            self._db.execute("DELETE FROM problems WHERE source_id = ?", (source_id,))
            self._db.execute("DELETE FROM files WHERE source_id = ?", (source_id,))
            self._db.execute("DELETE FROM classes WHERE source_id = ?", (source_id,))
            self._db.executemany(
                "INSERT INTO classes (source_id, name, module, ancestors) VALUES (?, ?, ?, ?)",
                (
                    (source_id, name, module, json.dumps(ancestors))
                    for name, module, ancestors in classes
                ),
            )
            self._db.executemany(
                "INSERT INTO files (source_id, path, digest, extractor, result)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    (source_id, path, digest, extractor, payload)
                    for extractor, path, digest, payload in files
                ),
            )
            self._db.executemany(
                "INSERT INTO problems (source_id, path, kind, message, line)"
                " VALUES (?, ?, ?, ?, ?)",
                ((source_id, p.path, p.kind.value, p.message, p.line) for p in problems),
            )
            with self._search_index_deferred("source_id = ?", (source_id,)) as catch_up:
                self._db.execute("DELETE FROM records WHERE source_id = ?", (source_id,))
                rows = (
                    (source_id, *record.values)
                    if isinstance(record, EncodedRecord)
                    else _row(source_id, record, version)
                    for record in records
                )
                for batch in _batches(rows, _INDEX_BATCH):
                    catch_up.replacing(source_id, [row[1] for row in batch])
                    self._db.executemany(
                        f"INSERT OR REPLACE INTO records ({_RECORD_COLUMNS})"
                        f" VALUES ({_RECORD_PLACEHOLDERS})",
                        batch,
                    )
                    catch_up()
            if run_id is not None:
                self._db.execute(
                    "UPDATE runs SET finished_at = ?, status = 'ok', report = ? WHERE id = ?",
                    (format_timestamp(utc_now()), report.model_dump_json(), run_id),
                )

    def finish_unchanged(self, source: SourceInfo, *, report: RunReport, run_id: int) -> None:
        """Mark a run that found nothing changed: the stored records stay as they are."""
        try:
            self._db.execute(
                "UPDATE runs SET finished_at = ?, status = 'unchanged', report = ? WHERE id = ?",
                (format_timestamp(utc_now()), report.model_dump_json(), run_id),
            )
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot write to {self.location}: {exc}", location=self.location
            ) from exc

    def cached_results(self, source_key: str) -> dict[str, tuple[str, str, str]]:
        """Return the previous run's file results of a source.

        Args:
            source_key: The source's key.

        Returns:
            For each path: ``(digest, extractor, result JSON)``.
        """
        rows = self._db.execute(
            "SELECT f.path, f.digest, f.extractor, f.result FROM files f"
            " JOIN sources s ON s.id = f.source_id WHERE s.key = ?",
            (source_key,),
        )
        return {path: (digest, extractor, result) for path, digest, extractor, result in rows}

    def last_report(self, source_key: str) -> RunReport | None:
        """Return the report of a source's last finished run, or None."""
        row = self._db.execute(
            "SELECT report FROM runs WHERE source_key = ? AND status IN ('ok', 'unchanged')"
            " AND report IS NOT NULL ORDER BY id DESC LIMIT 1",
            (source_key,),
        ).fetchone()
        return RunReport.model_validate_json(row[0]) if row else None

    def source(self, source_key: str) -> tuple[SourceInfo, int] | None:
        """Return one source and its record count, or None when it was never mined."""
        for info, count in self.sources():
            if info.key == source_key:
                return info, count
        return None

    def rename_source(self, old_key: str, new_key: str, *, package: str | None) -> bool:
        """File a source's records, runs and cache under a new key (a key's format changed).

        Only a source of that package is renamed, and only while nothing has the new key.

        Returns:
            Whether a source was renamed.
        """
        found = self._db.execute(
            "SELECT 1 FROM sources WHERE key = ? AND package IS ?", (old_key, package)
        ).fetchone()
        if found is None:
            return False  # the common case: no write, so the matcher index stays valid
        with self._write():
            renamed = self._db.execute(
                "UPDATE sources SET key = ? WHERE key = ? AND package IS ?"
                " AND NOT EXISTS (SELECT 1 FROM sources WHERE key = ?)",
                (new_key, old_key, package, new_key),
            ).rowcount
            if renamed:
                self._db.execute(
                    "UPDATE runs SET source_key = ? WHERE source_key = ?", (new_key, old_key)
                )
        return bool(renamed)

    def upsert_records(self, source: SourceInfo, envelopes: Iterable[RecordEnvelope]) -> int:
        """Add or replace records by id within ``source``, in one transaction.

        Args:
            source: The source the records are filed under.
            envelopes: The records with their dataset versions.

        Returns:
            How many records were written.

        Raises:
            StoreError: The write failed; nothing was written.
        """
        count = 0
        with self._write():
            source_id = self._upsert_source(source)
            for batch in _batches(envelopes, _WRITE_BATCH):
                ids = list({envelope.record.id: None for envelope in batch})
                where = f"source_id = ? AND id IN ({', '.join('?' * len(ids))})"
                with self._search_index_deferred(where, [source_id, *ids]):
                    for envelope in batch:
                        self._db.execute(
                            "DELETE FROM records WHERE source_id = ? AND id = ?",
                            (source_id, envelope.record.id),
                        )
                        self._db.execute(
                            f"INSERT INTO records ({_RECORD_COLUMNS})"
                            f" VALUES ({_RECORD_PLACEHOLDERS})",
                            _row(
                                source_id,
                                envelope.record,
                                format_timestamp(envelope.dataset_version),
                            ),
                        )
                        count += 1
        return count

    # -- reading -----------------------------------------------------------------------------

    @staticmethod
    def _envelope(data: str, dataset_version: str) -> RecordEnvelope:
        return RecordEnvelope(record=load_record(data), dataset_version=dataset_version)

    def get(self, record_id: str) -> list[RecordEnvelope]:
        """Return the records with this id (one per source holding it), newest source first."""
        rows = self._db.execute(
            "SELECT r.data, r.dataset_version FROM records r JOIN sources s ON s.id = r.source_id"
            " WHERE r.id = ? ORDER BY s.mined_at DESC, r.rowid",
            (record_id,),
        ).fetchall()
        return [self._envelope(data, version) for data, version in rows]

    def iter_rows(self, *, repo: str | None = None) -> Iterator[tuple[int, RecordEnvelope]]:
        """Yield every record (of one repo) with its row id, in row id order."""
        sql = "SELECT rowid, data, dataset_version FROM records"
        params: tuple[str, ...] = ()
        if repo is not None:
            sql += " WHERE repo = ?"
            params = (repo,)
        rows = self._db.execute(sql + " ORDER BY rowid", params).fetchall()
        for rowid, data, version in rows:
            yield int(rowid), self._envelope(data, version)

    def update_rows(self, rows: Sequence[tuple[int, ErrorRecord]]) -> int:
        """Rewrite records in place (same row, same source), in one transaction.

        Args:
            rows: ``(rowid, record)`` pairs; a row id that no longer exists is skipped.

        Returns:
            How many rows were rewritten.

        Raises:
            StoreError: The write failed; nothing was changed.
        """
        changed = 0
        assignments = ", ".join(f"{column.strip()} = ?" for column in _RECORD_COLUMNS.split(","))
        with self._write():
            for batch in _batches(rows, _WRITE_BATCH):
                rowids = [rowid for rowid, _ in batch]
                where = f"rowid IN ({', '.join('?' * len(rowids))})"
                with self._search_index_deferred(where, rowids):
                    for rowid, record in batch:
                        found = self._db.execute(
                            "SELECT source_id, dataset_version FROM records WHERE rowid = ?",
                            (rowid,),
                        ).fetchone()
                        if found is None:
                            continue
                        values = _row(int(found[0]), record, str(found[1]))
                        self._db.execute(
                            f"UPDATE records SET {assignments} WHERE rowid = ?", (*values, rowid)
                        )
                        changed += 1
        return changed

    def get_rows(self, rowids: Sequence[int]) -> dict[int, RecordEnvelope]:
        """Return records by their row ids (the ids matcher indexes refer to)."""
        found: dict[int, RecordEnvelope] = {}
        for start in range(0, len(rowids), 500):
            chunk = list(rowids[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            for rowid, data, version in self._db.execute(
                f"SELECT rowid, data, dataset_version FROM records WHERE rowid IN ({marks})", chunk
            ):
                found[int(rowid)] = self._envelope(data, version)
        return found

    def index_rows(self) -> Iterator[tuple[int, str, str, int, int, str, str]]:
        """Yield what a matcher index needs of every record, by row id.

        Yields:
            ``(rowid, error_class, file_path, line_number, end_line, kind, template JSON)``.
        """
        yield from self._db.execute(
            "SELECT rowid, error_class, file_path, line_number, end_line, kind, template"
            " FROM records ORDER BY rowid"
        )

    def class_rows(self) -> Iterator[tuple[str, str, str]]:
        """Yield ``(name, module, ancestors JSON)`` of every exception class of the sources."""
        yield from self._db.execute("SELECT name, module, ancestors FROM classes ORDER BY rowid")

    def search(self, query: SearchQuery) -> tuple[list[ErrorRecord], int]:
        """Return one page of records matching a query, best first, and the total count.

        Args:
            query: The text and filters.

        Returns:
            The page and the number of matches in all.
        """
        rows, total = self._search(query, "r.data", count=True)
        return [load_record(row[0]) for row in rows], total

    def search_rowids(self, query: SearchQuery) -> list[int]:
        """Return the row ids of one page of records matching a query, best first."""
        rows, _ = self._search(query, "r.rowid", count=False)
        return [int(row[0]) for row in rows]

    def _search(self, query: SearchQuery, columns: str, *, count: bool) -> tuple[list[Any], int]:
        text = query.text
        if query.any_words and text.strip():
            text = " ".join(self._rare_words(text))
            if not text:
                return [], 0
        join, clause, params = search_clause(query, text)
        order = "bm25(records_fts), r.rowid" if join else "r.repo, r.file_path, r.line_number"
        try:
            total = (
                self._db.execute(
                    f"SELECT count(*) FROM records r {join} {clause}", params
                ).fetchone()[0]
                if count
                else 0
            )
            rows = self._db.execute(
                f"SELECT {columns} FROM records r {join} {clause}"
                f" ORDER BY {order} LIMIT ? OFFSET ?",
                [*params, query.limit, query.offset],
            ).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"search failed: {exc}", location=self.location) from exc
        return rows, int(total)

    def _rare_words(self, text: str) -> list[str]:
        """The words of a text worth an any-word search: the rarest few the records hold.

        A word most records hold ("error", "value") says nothing about which record is near,
        and ranking every record that holds it costs a scan of the whole index; so only the
        :data:`RARE_WORDS` words held by the fewest records, each by at most
        :data:`MAX_WORD_RECORDS`, are searched.
        """
        terms = list(dict.fromkeys(term.lower() for term in _TERM.findall(text)))[:16]
        counts: list[tuple[int, str]] = []
        try:
            for term in terms:
                # Counted up to the cap only: a common term's whole posting list is never read.
                (count,) = self._db.execute(
                    "SELECT count(*) FROM (SELECT rowid FROM records_fts"
                    " WHERE records_fts MATCH ? LIMIT ?)",
                    (fts_query(term), MAX_WORD_RECORDS + 1),
                ).fetchone()
                counts.append((int(count), term))
        except sqlite3.Error as exc:
            raise StoreError(f"search failed: {exc}", location=self.location) from exc
        usable = sorted(count for count in counts if 0 < count[0] <= MAX_WORD_RECORDS)
        return [term for _, term in usable[:RARE_WORDS]]

    def iter_envelopes(self, *, repo: str | None = None) -> Iterator[RecordEnvelope]:
        """Yield every record (of one repo) with its dataset version, in a stable order."""
        sql = "SELECT data, dataset_version FROM records"
        params: tuple[str, ...] = ()
        if repo is not None:
            sql += " WHERE repo = ?"
            params = (repo,)
        for data, version in self._db.execute(sql + " ORDER BY rowid", params):
            yield self._envelope(data, version)

    def sources(self) -> list[tuple[SourceInfo, int]]:
        """Return every source with its record count, by key."""
        rows = self._db.execute(
            "SELECT s.key, s.repo, s.kind, s.location, s.revision, s.sha, s.package, s.version,"
            " s.mined_at, (SELECT count(*) FROM records r WHERE r.source_id = s.id)"
            " FROM sources s ORDER BY s.key"
        ).fetchall()
        return [
            (
                SourceInfo(
                    key=row[0],
                    repo=row[1],
                    kind=row[2],
                    location=row[3],
                    revision=row[4],
                    sha=row[5],
                    package=row[6],
                    version=row[7],
                    mined_at=row[8],
                ),
                int(row[9]),
            )
            for row in rows
        ]

    def problems(self, *, source_key: str | None = None) -> list[Problem]:
        """Return the problems of each source's last run (or of one source)."""
        sql = (
            "SELECT p.path, p.kind, p.message, p.line"
            " FROM problems p JOIN sources s ON s.id = p.source_id"
        )
        params: tuple[str, ...] = ()
        if source_key is not None:
            sql += " WHERE s.key = ?"
            params = (source_key,)
        return [
            Problem(path=path, kind=kind, message=message, line=line)
            for path, kind, message, line in self._db.execute(sql + " ORDER BY p.rowid", params)
        ]

    def stats(self) -> StoreStats:
        """Return counts over the whole store."""

        def grouped(column: str, limit: int = 20) -> dict[str, int]:
            rows = self._db.execute(
                f"SELECT {column}, count(*) AS n FROM records GROUP BY {column}"
                f" ORDER BY n DESC, {column} LIMIT ?",
                (limit,),
            )
            return {str(key): int(count) for key, count in rows}

        one = self._db.execute
        return StoreStats(
            records=int(one("SELECT count(*) FROM records").fetchone()[0]),
            sources=int(one("SELECT count(*) FROM sources").fetchone()[0]),
            problems=int(one("SELECT count(*) FROM problems").fetchone()[0]),
            by_type=grouped("error_type"),
            by_class=grouped("error_class"),
            by_repo=grouped("repo"),
        )

    def integrity(self) -> str:
        """Check the file and the search index; return ``ok`` when both are sound.

        ``PRAGMA integrity_check`` checks the tables; FTS5's ``integrity-check`` command
        checks that the search index holds exactly the records' text.
        """
        verdict = str(self._db.execute("PRAGMA integrity_check").fetchone()[0])
        if verdict != "ok":
            return verdict
        try:
            self._db.execute(
                "INSERT INTO records_fts (records_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError as exc:
            return f"search index: {exc}"
        return "ok"
