import json
import sqlite3
import threading

import pytest
from conftest import SEED_FILE, records_in_the_file_alone

from errdex.errors import StoreError
from errdex.models import (
    Problem,
    ProblemKind,
    RecordEnvelope,
    RunReport,
    SourceInfo,
    utc_now,
)
from errdex.store import sqlite as sqlite_store
from errdex.store.base import SearchQuery
from errdex.store.jsonl import read_jsonl
from errdex.store.sqlite import STORE_VERSION, SQLiteStore


def seed_envelope():
    ((envelope, _),) = list(read_jsonl(SEED_FILE))
    return envelope


def fill(store, count, key="src", word="first"):
    base = seed_envelope().record
    records = [
        base.model_copy(update={"id": f"{n:016x}", "error_message": f"{word} message {n}"})
        for n in range(count)
    ]
    info = SourceInfo(key=key, repo=key, kind="directory")
    store.replace_source(
        info,
        records,
        problems=[Problem(path="bad.py", kind=ProblemKind.SYNTAX, message="x")],
        report=RunReport(source=info),
        dataset_version=utc_now(),
    )


def filled_file(path, count):
    """Write a store of ``count`` records at ``path`` and close it; return the path."""
    with SQLiteStore(path) as store:
        fill(store, count)
    return path


def test_version_token_changes_on_every_write(tmp_path):
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        first = store.version()
        fill(store, 3)
        second = store.version()
        store.upsert_records(SourceInfo(key="i", repo="i", kind="import"), [seed_envelope()])
        assert len({first, second, store.version()}) == 3


def test_readers_see_the_old_set_or_the_new_one_never_a_mix(tmp_path):
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path) as store:
        fill(store, 50)
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM records").fetchone()[0] == 50
        fill(store, 80, word="second")
        # The open read transaction still sees the whole old set …
        rows = reader.execute("SELECT error_message FROM records").fetchall()
        assert len(rows) == 50 and all(r[0].startswith("first") for r in rows)
        reader.execute("COMMIT")
        # … and a new one sees the whole new set.
        rows = reader.execute("SELECT error_message FROM records").fetchall()
        assert len(rows) == 80 and all(r[0].startswith("second") for r in rows)
        reader.close()


def test_a_failed_write_leaves_the_previous_records(tmp_path):
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        fill(store, 10)
        records = [seed_envelope().record] * 2  # the same id twice: the second insert fails

        class Boom(Exception):
            pass

        def exploding():
            yield records[0]
            raise Boom

        info = SourceInfo(key="src", repo="src", kind="directory")
        with pytest.raises(Boom):
            store.replace_source(
                info,
                exploding(),
                problems=[],
                report=RunReport(source=info),
                dataset_version=utc_now(),
            )
        assert store.stats().records == 10
        assert store.integrity() == "ok"


def checkpointing():
    return [thread for thread in threading.enumerate() if thread.name == "errdex-checkpoint"]


def test_a_big_write_is_copied_into_the_database_file_by_another_thread(tmp_path):
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path) as store:
        fill(store, 10)
        store.settle()
        fill(store, 1500, word="second")  # some 2,000 pages: over the automatic checkpoint's
        # The commit left the copy to a thread; the connection checkpoints as before after.
        assert store._db.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        store.settle()
        assert not checkpointing()
        assert records_in_the_file_alone(path, tmp_path / "copy.sqlite3") == 1500
        assert store.stats().records == 1500
        fill(store, 20, word="third")
    # Closing waits for the checkpoint too: the file is whole without its log.
    assert not checkpointing()
    assert records_in_the_file_alone(path, tmp_path / "copy.sqlite3") == 20


def test_the_checkpoint_finds_a_store_opened_by_a_relative_path(tmp_path, monkeypatch):
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    with SQLiteStore("s.sqlite3") as store:
        monkeypatch.chdir(tmp_path / "elsewhere")
        fill(store, 1500)
        store.settle()
        assert records_in_the_file_alone(tmp_path / "s.sqlite3", tmp_path / "copy") == 1500
    assert not (tmp_path / "elsewhere" / "s.sqlite3").exists()


def test_a_checkpoint_that_cannot_run_loses_nothing(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path) as store:

        def refused(*args, **kwargs):
            raise sqlite3.OperationalError("unable to open database file")

        monkeypatch.setattr(sqlite_store.sqlite3, "connect", refused)
        fill(store, 300)
        store.settle()
        monkeypatch.undo()
        assert store.stats().records == 300
    with SQLiteStore(path) as store:  # the log was copied when the store closed
        assert store.stats().records == 300
    assert records_in_the_file_alone(path, tmp_path / "copy.sqlite3") == 300


def test_the_search_index_follows_bulk_writes(tmp_path):
    # Writes of many rows keep the search index in bulk, not row by row: it must still hold
    # exactly the records' text after a first run, a re-run, an update and a removal.
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        fill(store, 40)
        fill(store, 30, word="second")
        fill(store, 5, key="other", word="zebra")
        assert store.integrity() == "ok"
        assert store.search(SearchQuery(text="first"))[1] == 0
        assert store.search(SearchQuery(text="second"))[1] == 30
        rows = [
            (rowid, envelope.record.model_copy(update={"error_message": f"third message {n}"}))
            for n, (rowid, envelope) in enumerate(
                (rowid, envelope)
                for rowid, envelope in store.iter_rows()
                if envelope.record.error_message.startswith("second")
            )
            if n % 3 == 0
        ]
        assert store.update_rows(rows) == 10
        assert store.integrity() == "ok"
        assert store.search(SearchQuery(text="third"))[1] == 10
        assert store.search(SearchQuery(text="second"))[1] == 20
        assert store.search(SearchQuery(text="zebra"))[1] == 5
        # An import repeats ids within and across its batches of 500: the last one wins.
        base = seed_envelope()
        envelopes = [
            base.model_copy(
                update={
                    "record": base.record.model_copy(
                        update={"id": f"{n % 700:016x}", "error_message": f"imported {n}"}
                    )
                }
            )
            for n in range(1200)
        ]
        assert store.upsert_records(SourceInfo(key="i", repo="i", kind="import"), envelopes)
        assert store.integrity() == "ok"
        assert store.search(SearchQuery(text="imported"))[1] == 700
        assert store.search(SearchQuery(text="1199"))[1] == 1
        assert store.search(SearchQuery(text="499"))[1] == 0  # replaced by 1199


def test_a_mining_run_indexes_its_records_batch_by_batch(tmp_path, monkeypatch):
    # A run's records enter the search index a batch at a time, as they are written; an id
    # written again in a later batch (the last one wins) must leave the index with its row.
    monkeypatch.setattr(sqlite_store, "_INDEX_BATCH", 4)
    base = seed_envelope().record
    records = [
        base.model_copy(update={"id": f"{n % 9:016x}", "error_message": f"batched item{n}"})
        for n in range(11)  # ids 0 and 1 come again in the third batch
    ]
    info = SourceInfo(key="src", repo="src", kind="directory")
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        fill(store, 3, key="other", word="kept")
        for _ in range(2):  # a first run, then a re-run replacing it
            store.replace_source(
                info, records, problems=[], report=RunReport(source=info), dataset_version=utc_now()
            )
            assert store.integrity() == "ok"
            assert store.search(SearchQuery(text="batched"))[1] == 9
            assert store.search(SearchQuery(text="item9"))[1] == 1
            assert store.search(SearchQuery(text="item0"))[1] == 0  # replaced by item9
            assert store.search(SearchQuery(text="kept"))[1] == 3


def test_a_search_index_out_of_step_is_reported(tmp_path):
    path = filled_file(tmp_path / "s.sqlite3", 3)
    with sqlite3.connect(path) as raw:
        raw.execute("DROP TRIGGER records_au")
        raw.execute("UPDATE records SET error_message = 'changed behind its back'")
    with SQLiteStore(path) as store:
        assert store.integrity().startswith("search index:")


def test_a_version_3_store_gets_the_triggers_that_bulk_writes_pause(tmp_path):
    path = filled_file(tmp_path / "v3.sqlite3", 4)
    with sqlite3.connect(path) as raw:
        for trigger in ("records_ai", "records_ad", "records_au"):
            sql = raw.execute(
                "SELECT sql FROM sqlite_master WHERE name = ?", (trigger,)
            ).fetchone()[0]
            raw.execute(f"DROP TRIGGER {trigger}")
            raw.execute(
                sql.replace("WHEN NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts_deferred')", "")
            )
        raw.execute("UPDATE meta SET value = '3' WHERE key = 'store_version'")
        files = raw.execute("SELECT count(*) FROM files").fetchone()[0]
    with SQLiteStore(path) as store:
        fill(store, 6, word="after")
        assert store.integrity() == "ok"
        assert store.search(SearchQuery(text="after"))[1] == 6
    with sqlite3.connect(path) as raw:
        triggers = raw.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        assert len(triggers) == 3 and all("fts_deferred" in sql for (sql,) in triggers)
        assert raw.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (
            str(STORE_VERSION),
        )
        assert files == 0 or raw.execute("SELECT count(*) FROM files").fetchone()[0] == files


def test_a_version_4_store_gains_the_classes_table_and_extracts_again(tmp_path):
    # Version 5 keeps the exception classes of each source; the file results a version 4
    # store cached were extracted without them, so they go and the next run extracts again.
    path = filled_file(tmp_path / "v4.sqlite3", 3)
    with sqlite3.connect(path) as raw:
        raw.execute("DROP TABLE classes")
        source = raw.execute("SELECT id FROM sources").fetchone()[0]
        raw.execute(
            "INSERT INTO files (source_id, path, digest, extractor, result) VALUES (?, ?, ?, ?, ?)",
            (source, "m.py", "d", "python:5", "{}"),
        )
        raw.execute("UPDATE meta SET value = '4' WHERE key = 'store_version'")
    with SQLiteStore(path) as store:
        assert list(store.class_rows()) == []
        assert store.stats().records == 3
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM files").fetchone() == (0,)
        assert raw.execute("SELECT value FROM meta WHERE key = 'store_version'").fetchone() == (
            str(STORE_VERSION),
        )


def test_a_sources_classes_are_replaced_with_its_records(tmp_path):
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        for classes in (
            [("DBAPIError", "sqla.exc", ["SQLAlchemyError", "Exception"])],
            [("OperationalError", "sqla.exc", ["DBAPIError", "SQLAlchemyError"])],
        ):
            store.replace_source(
                SourceInfo(key="sqla", repo="o/sqla", kind="directory"),
                [],
                problems=[],
                report=RunReport(source=SourceInfo(key="sqla", repo="o/sqla", kind="directory")),
                dataset_version=utc_now(),
                classes=classes,
            )
            assert [(n, m, json.loads(a)) for n, m, a in store.class_rows()] == classes


def test_stores_of_an_older_version_are_migrated(tmp_path):
    path = filled_file(tmp_path / "old.sqlite3", 5)
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE meta SET value = '1' WHERE key = 'store_version'")
        raw.execute("DROP TRIGGER records_ai")
    with SQLiteStore(path) as store:
        assert store.stats().records == 5
        records, total = store.search(SearchQuery(text="message"))
        assert total == 5
        fill(store, 2, word="after")
        assert store.search(SearchQuery(text="after"))[1] == 2
    with sqlite3.connect(path) as raw:
        version = raw.execute("SELECT value FROM meta WHERE key='store_version'").fetchone()[0]
        assert version == str(STORE_VERSION)


def test_a_version_2_store_gains_the_language_column_from_its_records(tmp_path):
    # Version 2 had no language column: the migration reads it back from each record's JSON.
    path = tmp_path / "v2.sqlite3"
    with SQLiteStore(path) as store:
        fill(store, 2)
        base = store.search(SearchQuery())[0][0]
        go = base.model_copy(update={"id": "00000000000000aa", "language": "go"})
        store.upsert_records(
            SourceInfo(key="g", repo="g", kind="import"),
            [RecordEnvelope(record=go, dataset_version=utc_now())],
        )
    with sqlite3.connect(path) as raw:
        raw.execute("DROP TRIGGER records_ai")
        raw.execute("DROP TRIGGER records_ad")
        raw.execute("DROP TRIGGER records_au")
        raw.execute("ALTER TABLE records DROP COLUMN language")
        raw.execute("UPDATE meta SET value = '2' WHERE key = 'store_version'")
    with SQLiteStore(path) as store:
        assert [r.id for r in store.search(SearchQuery(language="go"))[0]] == [go.id]
        assert store.search(SearchQuery(language="python"))[1] == 2
        assert store.search(SearchQuery(text="message", language="go"))[1] == 1


def test_a_store_from_a_newer_errdex_is_refused(tmp_path):
    path = tmp_path / "new.sqlite3"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE meta SET value = '99' WHERE key = 'store_version'")
    with pytest.raises(StoreError, match="newer errdex"):
        SQLiteStore(path)


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path):
    path = tmp_path / "junk.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError):
        SQLiteStore(path)


def test_any_words_search_ranks_partial_matches(tmp_path):
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        fill(store, 3)
        assert store.search(SearchQuery(text="message nothing"))[1] == 0
        assert len(store.search_rowids(SearchQuery(text="message nothing", any_words=True))) == 3


def test_any_word_search_ranks_by_the_rare_words_only(tmp_path, monkeypatch):
    import errdex.store.sqlite as sqlite_module

    monkeypatch.setattr(sqlite_module, "MAX_WORD_RECORDS", 5)
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        fill(store, 12, word="common")  # "common message N": two words every record holds
        (rowid,) = store.search_rowids(SearchQuery(text="message 7"))
        # The common words are dropped, the rare one decides; nothing common alone is searched.
        found = store.search_rowids(
            SearchQuery(text="common message 7 zzz", any_words=True, limit=3)
        )
        assert found == [rowid]
        assert store.search_rowids(SearchQuery(text="common message", any_words=True)) == []
        assert store.search_rowids(SearchQuery(text="common message")) != []


def test_opening_a_store_never_waits_for_a_writer(tmp_path):
    # A mining run holds the write lock while it writes; readers (explain, the runtime hook,
    # the log filter) must open the store and read meanwhile, not wait for the lock.
    path = filled_file(tmp_path / "s.sqlite3", 3)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE meta SET value = value WHERE key = 'generation'")
    try:
        with SQLiteStore(path) as store:
            assert store.stats().records == 3
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_a_stored_line_past_32_bits_is_still_read(tmp_path):
    # Import and ingest refuse such lines now; a store an older errdex filled may hold them.
    from errdex.match.explain import Explainer

    far = seed_envelope().record.model_copy(update={"line_number": 2**40, "id": "f" * 16})
    info = SourceInfo(key="old", repo="old", kind="import")
    path = tmp_path / "s.sqlite3"
    with SQLiteStore(path) as store:
        store.replace_source(
            info, [far], problems=[], report=RunReport(source=info), dataset_version=utc_now()
        )
        assert store.get("f" * 16)[0].record.line_number == 2**40
        assert store.search(SearchQuery(text="speculative"))[1] == 1
        answer = Explainer.for_database(store, path).explain(far.error_message)
        assert answer.matches and answer.matches[0].record.line_number == 2**40


def test_a_rename_with_nothing_to_rename_writes_nothing(tmp_path):
    # Mining a package of a shared repository asks for one on every run: the matcher index,
    # keyed by the store's version token, must stay valid when there is nothing to rename.
    with SQLiteStore(tmp_path / "s.sqlite3") as store:
        token = store.version()
        assert store.rename_source("acme/mono==1.0", "acme/mono:api==1.0", package="api") is False
        assert store.version() == token


def test_a_new_store_keeps_a_record_in_one_page_and_an_old_one_keeps_its_pages(tmp_path):
    # A record's row (about 5 KB of JSON) fits in a 16 KiB page: no overflow pages to write.
    new = filled_file(tmp_path / "new.sqlite3", 3)
    old = tmp_path / "old.sqlite3"
    with sqlite3.connect(old) as db:
        db.execute("PRAGMA page_size=4096")
        db.execute("CREATE TABLE unrelated (x)")  # the page size is fixed from here on
    filled_file(old, 3)
    sizes = {}
    for path in (new, old):
        with sqlite3.connect(path) as db:
            sizes[path] = db.execute("PRAGMA page_size").fetchone()[0]
            largest = db.execute("SELECT max(length(data)) FROM records").fetchone()[0]
        with SQLiteStore(path) as store:
            assert store.stats().records == 3
    assert sizes == {new: sqlite_store.PAGE_SIZE, old: 4096}
    assert 4096 < largest < sizes[new] // 2
