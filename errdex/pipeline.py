"""The pipeline: source → extract → analyze → store, and the import/export of record files.

:class:`Pipeline` is the one entry point the interfaces call. It never prints: progress goes
to an optional callback, results come back as :class:`~errdex.models.RunReport` objects.
Per-file failures become :class:`~errdex.models.Problem` entries and never abort a run
(unless ``settings.strict``).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import itertools
import multiprocessing
import multiprocessing.connection
import os
import pickle
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from pydantic.alias_generators import to_camel
from pydantic_core import PydanticSerializationError

from errdex.analyze.records import build_records, permalink
from errdex.errors import ExtractionError
from errdex.extract import (
    ClassHierarchy,
    DeferredLink,
    Extractor,
    Finish,
    blob_digest,
    extractors,
)
from errdex.extract.files import Source, SourceFile, open_source
from errdex.memory import collector_paused
from errdex.models import (
    Claim,
    ErrorRecord,
    FileResult,
    Narrative,
    Problem,
    ProblemKind,
    RaiseSite,
    RecordEnvelope,
    RunReport,
    SourceInfo,
    utc_now,
)
from errdex.settings import Settings
from errdex.store.base import EncodedRecord, RecordStore
from errdex.store.jsonl import RecordFormat, read_jsonl, write_jsonl

if TYPE_CHECKING:
    from errdex.analyze.llm import LLMWriter

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
    """Mine one file, turning its failure into a problem (see :func:`mine_file_json`)."""
    mined, problem = mine_file_json(extractor, file, strict=strict)
    return (mined[0] if mined is not None else None), problem


def mine_file_json(
    extractor: Extractor | None, file: SourceFile, *, strict: bool
) -> tuple[tuple[FileResult, str] | None, Problem | None]:
    """Mine one file, turning its failure into a problem; give the result with its JSON.

    The JSON is what the store caches for the next run, and what worker processes send back
    (a string pickles far faster than the models).

    Args:
        extractor: The language's extractor (unused for a file without data).
        file: The file.
        strict: Raise instead of returning a problem.

    Returns:
        The file's result and its JSON or, when it could not be mined, the problem.

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


_PROBLEM_JSON = '{"problem":'
"""How the files cache marks a file that failed, in place of its result's JSON."""

_CONTENT_PROBLEMS = frozenset({ProblemKind.SYNTAX, ProblemKind.ENCODING, ProblemKind.GENERATED})
"""Failures the file's content decides: cached with its digest, not retried while unchanged."""


def _problem_payload(problem: Problem) -> str:
    """The files cache entry of a file that failed (read back by :func:`_cached_problem`)."""
    return _PROBLEM_JSON + problem.model_dump_json() + "}"


def _cached_problem(payload: str) -> Problem | None:
    """The problem a files cache entry holds for a file that failed, else None."""
    if not payload.startswith(_PROBLEM_JSON):
        return None
    return Problem.model_validate_json(payload[len(_PROBLEM_JSON) : -1])


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {key: _clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(item) for item in value]
    return value


def _encodable(result: FileResult) -> tuple[FileResult, str]:
    """Make a result storable, and return it with its JSON.

    A string constant may hold a lone surrogate (U+D800), which UTF-8 cannot encode: such
    strings are written as their backslash escape instead.
    """
    try:
        return result, result.model_dump_json()
    except PydanticSerializationError:
        result = FileResult.model_validate(_clean(result.model_dump()))
        return result, result.model_dump_json()


_CHUNK = 16
"""Files in a chunk at most (fewer when they are big: :data:`_CHUNK_BYTES`)."""

_CHUNK_BYTES = 128 * 1024
"""Source bytes that close a chunk before it has :data:`_CHUNK` files."""

_TAIL_SHARE = 0.1
"""The share of a run's source bytes, last in order, that is mined biggest chunk first."""

_AHEAD = 2
"""Chunks given to each worker process and not back yet, at most: the one it mines and the
next, so that it never waits for this process to give it one."""

STOP_SECONDS = 5.0
"""How long a worker process told to stop may take to finish its chunks before it is killed."""

_Mined = tuple[tuple[FileResult, str] | None, Problem | None]
"""A file's result and its JSON, or its problem."""

_Sent = list[tuple[str | None, Problem | None]]
"""A worker's results of a chunk: each file's JSON, or its problem."""


def _mine_chunks(
    tasks: Connection, results: Connection, strict: bool, window: int, languages: tuple[str, ...]
) -> None:
    """A worker process: mine the chunks it is given until it is given None.

    A chunk comes as the path of its pickle in the run's spool directory, and its results go
    back the same way: a pipe never fills, so neither process ever waits for the other to
    read. An error (``strict``) goes back in place of the results.
    """
    gc.disable()  # as in the mining process (see errdex.memory)
    chosen = extractors(window=window, languages=languages)
    while (task := tasks.recv()) is not None:
        number, path = task
        try:
            with open(path, "rb") as handle:
                files: list[SourceFile] = pickle.load(handle)
            batch: _Sent = []
            for file in files:
                extractor = next(e for e in chosen if file.path.endswith(e.suffixes))
                mined, problem = mine_file_json(extractor, file, strict=strict)
                batch.append((mined[1] if mined is not None else None, problem))
            with open(path, "wb") as handle:
                pickle.dump(batch, handle, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # strict: the file's error; else a bug: the run reports it
            results.send((number, exc))
        else:
            results.send((number, None))


@dataclass
class _Worker:
    """A worker process of an extraction, and the ends of its two pipes held here."""

    process: multiprocessing.process.BaseProcess
    tasks: Connection
    results: Connection
    given: list[int] = field(default_factory=list)
    """The chunks it has and has not given back, in order."""


class _Extraction:
    """Extracts a run's files as they are read: here, or here and in worker processes.

    With ``jobs`` above one, this process is one of the jobs and ``jobs - 1`` worker processes
    are the others. They start on entering, before any file is read (reading may hold pipes
    open, as ``git cat-file --batch`` does: workers forked later would keep git's input open,
    and git would never see its end). The files are cut into chunks as they are read, and each
    worker is kept :data:`_AHEAD` chunks ahead. Once all are read, this process mines the next
    chunk no worker has, and between two of its files takes in what the workers gave back and
    gives them more: every job works until the last chunk.

    No thread helps (a pool's threads wait for this process's interpreter lock while it mines,
    and the workers waited for them a third of the time): chunks and results go through files
    of a spool directory, and the pipes carry only their numbers.

    Fewer files than two chunks are all mined here.

    Args:
        pipeline: The pipeline whose settings and extractors are used.
    """

    def __init__(self, pipeline: Pipeline) -> None:
        self._pipeline = pipeline
        self.files: list[SourceFile] = []
        """The files added, in order."""
        self._unsent: list[SourceFile] = []
        self._unsent_bytes = 0
        self._workers: list[_Worker] = []
        self._spool: tempfile.TemporaryDirectory[str] | None = None
        self._chunks: list[list[SourceFile]] = []
        """The chunks cut, in order (their results come out in this order)."""
        self._order: list[int] = []
        """The chunks in the order they are mined; those from :attr:`_next` on are not
        given out yet."""
        self._next = 0
        self._done: dict[int, list[_Mined] | _Sent] = {}
        """The results of the chunks mined (here, or sent back by a worker)."""

    def __enter__(self) -> _Extraction:
        settings = self._pipeline.settings
        if settings.jobs > 1:
            _trim_heap()
            self._spool = tempfile.TemporaryDirectory(prefix="errdex-mine-")
            for _ in range(settings.jobs - 1):
                tasks, their_tasks = multiprocessing.Pipe()
                their_results, results = multiprocessing.Pipe()
                process = multiprocessing.Process(
                    target=_mine_chunks,
                    args=(
                        their_tasks,
                        their_results,
                        settings.strict,
                        settings.window,
                        settings.languages,
                    ),
                    daemon=True,
                )
                process.start()
                their_tasks.close()
                their_results.close()
                self._workers.append(_Worker(process, tasks, results))
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc_info: object) -> None:
        self._stop(now=kind is not None)

    def _stop(self, *, now: bool = False) -> None:
        """End the worker processes (``now``: without letting them finish their chunks)."""
        for worker in self._workers:
            if now:
                worker.process.kill()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                worker.tasks.send(None)  # (unless it has ended already)
        for worker in self._workers:
            worker.process.join(timeout=STOP_SECONDS)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.tasks.close()
            worker.results.close()
        self._workers = []
        if self._spool is not None:
            self._spool.cleanup()
            self._spool = None

    def add(self, file: SourceFile) -> None:
        """Queue a file; full chunks go to the worker processes as they have room."""
        self.files.append(file)
        if self._spool is None:  # one job
            return
        self._unsent.append(file)
        self._unsent_bytes += len(file.data or b"")
        if (
            self._chunks
            or len(self._unsent) >= 2 * _CHUNK
            or self._unsent_bytes >= 2 * _CHUNK_BYTES
        ):
            self._cut(final=False)
            self._serve()

    def _cut(self, *, final: bool) -> None:
        """Cut the unsent files into chunks of :data:`_CHUNK` files or :data:`_CHUNK_BYTES`.

        A big file closes its chunk early, so that the last chunks are small and the
        processes finish together. Unless ``final``, a chunk not yet full stays.
        """
        chunk: list[SourceFile] = []
        size = 0
        last = self._unsent[-1] if self._unsent else None
        for file in self._unsent:
            chunk.append(file)
            size += len(file.data or b"")
            if len(chunk) >= _CHUNK or size >= _CHUNK_BYTES or (final and file is last):
                self._order.append(len(self._chunks))
                self._chunks.append(chunk)
                chunk, size = [], 0
        self._unsent, self._unsent_bytes = chunk, size
        if final:
            self._biggest_last_first()

    def _biggest_last_first(self) -> None:
        """Mine the chunks of the source's last :data:`_TAIL_SHARE` biggest first.

        The run waits at its end for the slowest process: a process that starts a big chunk
        while the others take the last small ones. Ordered so, the last chunks are the
        smallest. Only the tail: each file's result is taken in source order, so a chunk
        mined late holds back those after it (the progress a user sees).
        """
        sizes = [sum(len(file.data or b"") for file in chunk) for chunk in self._chunks]
        start, rest = len(self._order), sum(sizes) * _TAIL_SHARE
        while start > self._next and rest > 0:
            start -= 1
            rest -= sizes[self._order[start]]
        self._order[start:] = sorted(self._order[start:], key=lambda n: (-sizes[n], n))

    def _serve(self, *, wait: bool = False) -> None:
        """Take in the workers' results, and give each the next chunks while it has room.

        Args:
            wait: Block until one worker gives a chunk back (when this process has no
                chunk left to mine).
        """
        busy = [w for w in self._workers if w.given]
        if wait:
            if not busy:  # every chunk is mined here, given to a worker, or lost with one
                raise RuntimeError("extraction waits for a chunk that no worker has")
            multiprocessing.connection.wait(
                [w.results for w in busy] + [w.process.sentinel for w in busy]
            )
        for worker in list(self._workers):
            failed: BaseException | None = None
            try:
                while failed is None and worker.results.poll():
                    number, failed = worker.results.recv()
                    if failed is not None:
                        break  # raised below: the worker lives on, it is no lost one
                    path = self._chunk_path(number)
                    with open(path, "rb") as handle:
                        self._done[number] = pickle.load(handle)
                    os.unlink(path)
                    worker.given.remove(number)
                while (
                    failed is None and len(worker.given) < _AHEAD and self._next < len(self._order)
                ):
                    number = self._order[self._next]
                    path = self._chunk_path(number)
                    with open(path, "wb") as handle:
                        pickle.dump(self._chunks[number], handle, pickle.HIGHEST_PROTOCOL)
                    worker.tasks.send((number, path))  # (a lost worker's chunk stays next)
                    worker.given.append(number)
                    self._next += 1
            except (EOFError, BrokenPipeError, ConnectionResetError):
                self._lost(worker)  # its end of a pipe closed: it has ended
            if failed is not None:
                raise failed

    def _lost(self, worker: _Worker) -> None:
        """Report the files of a worker process that ended before giving their results back.

        The run goes on without it (a file that crashes Python's parser would crash this
        process too if it were mined here): each file of its chunks is a problem.

        Raises:
            ExtractionError: With ``settings.strict``.
        """
        worker.process.join(timeout=STOP_SECONDS)
        self._workers.remove(worker)
        worker.tasks.close()
        worker.results.close()
        message = (
            f"not mined: the worker process mining it ended "
            f"(exit code {worker.process.exitcode}); --jobs 1 mines every file here"
        )
        for number in worker.given:
            chunk = self._chunks[number]
            if self._pipeline.settings.strict:
                raise ExtractionError(message, path=chunk[0].path, kind=ProblemKind.INTERNAL.value)
            lost: list[_Mined] = [
                (None, Problem(path=file.path, kind=ProblemKind.INTERNAL, message=message))
                for file in chunk
            ]
            self._done[number] = lost

    def _chunk_path(self, number: int) -> str:
        assert self._spool is not None
        return os.path.join(self._spool.name, f"{number}.pickle")

    def _mine_here(self, chunk: list[SourceFile], *, serve: bool = False) -> list[_Mined]:
        strict, pick = self._pipeline.settings.strict, self._pipeline._pick
        mined: list[_Mined] = []
        for file in chunk:
            mined.append(mine_file_json(pick(file.path), file, strict=strict))
            if serve:
                self._serve()
        return mined

    def results(
        self,
    ) -> Iterator[tuple[SourceFile, tuple[FileResult, str] | None, Problem | None]]:
        """Yield each file added with its result (and JSON) or its problem, in order."""
        if not self._chunks:
            # No worker, or too few files to be worth sending: mined here.
            self._stop()
            for file, mined in zip(self.files, self._mine_here(self.files), strict=True):
                yield file, *mined
            return
        self._cut(final=True)
        files = iter(self.files)
        for number in range(len(self._chunks)):
            self._serve()
            while number not in self._done:
                if self._next < len(self._order):
                    mine, self._next = self._order[self._next], self._next + 1
                    # Serving between files gives out further chunks: ``mine`` stays.
                    self._done[mine] = self._mine_here(self._chunks[mine], serve=True)
                else:
                    self._serve(wait=True)
            for item in self._done.pop(number):
                payload, problem = item
                if isinstance(payload, str):  # a worker's
                    item = (FileResult.model_validate_json(payload), payload), problem
                yield next(files), *item
        # Done: no worker process may outlive extraction (see _can_fork).
        self._stop()


_Finishing = list[tuple[int, int, Finish]]
"""Runs ``(start, stop, finish)`` of a source's linked sites that their extractor finishes
(see :class:`errdex.extract.DeferredLink`); the other sites are finished."""

_BUILD_JOB: (
    tuple[list[RaiseSite], _Finishing, SourceInfo, datetime, Callable[..., EncodedRecord]] | None
) = None
"""The sites forked processes build records of (inherited at the fork, never pickled)."""

PARALLEL_BUILD_MIN = 2000
"""Fewer sites than this are built in one process: a fork costs more than it saves."""

_PIECES = 12
"""Spans the sites are cut into for each job: each is written while later ones are built,
and the last one a forked process builds, written after it is done, is small."""


def _encode_span(start: int, stop: int) -> list[EncodedRecord]:
    """Build and encode the records of ``sites[start:stop]`` of :data:`_BUILD_JOB`."""
    if _BUILD_JOB is None:
        raise RuntimeError("no records to build: _encode_span runs only under _encoded_records")
    sites, finishing, info, mined_at, encode = _BUILD_JOB  # the collector is paused (mine)
    return [
        encode(record, mined_at)
        for record in build_records(
            _finished(sites, start, stop, finishing), info, analyzed_at=mined_at
        )
    ]


def _finished(
    sites: Sequence[RaiseSite], start: int, stop: int, finishing: _Finishing
) -> list[RaiseSite]:
    """``sites[start:stop]``, each run of them finished by its extractor (see _Finishing)."""
    span = list(sites[start:stop])
    for first, last, finish in finishing:
        low, high = max(start, first), min(stop, last)
        if low < high:
            span[low - start : high - start] = finish(sites[low:high])
    return span


def _spool_span(start: int, stop: int, path: str) -> str:
    """Build and encode a span in a forked process, into a file of the mining process's.

    A file rather than the pool's pipe: the mining process is busy building its own span,
    and the thread that reads the pipe gets the interpreter lock only every few
    milliseconds, so a child sending megabytes through a 64 KiB pipe would mostly wait.
    """
    with open(path, "wb") as handle:
        pickle.dump(_encode_span(start, stop), handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _collected(
    pool: ProcessPoolExecutor,
    spans: Sequence[tuple[int, int]],
    futures: Sequence[Future[str]],
    reserved: int,
) -> Iterator[EncodedRecord]:
    """Yield the spans' records in order, building here the spans no forked process started.

    Each span is given to the forked processes, and each is taken back here (its future
    cancelled) when this process would otherwise wait: while the span to write next is not
    built yet, this process builds the first span after it that no forked process has
    started. So every process works until the last span, however fast each one builds and
    this one writes. The first ``reserved`` spans are left to the forked processes (each
    starts with one). The children may exit once the last span is in.
    """
    built: dict[int, list[EncodedRecord]] = {}
    untried = reserved  # the spans before it are started, done, or built here
    for index, future in enumerate(futures):
        untried = max(untried, index)
        while index not in built and not future.done() and untried < len(spans):
            taken, untried = untried, untried + 1
            if futures[taken].cancel():
                built[taken] = _encode_span(*spans[taken])
        batch = built.pop(index, None)
        if batch is None:
            path = future.result()
            with open(path, "rb") as handle:
                batch = pickle.load(handle)  # our own child's file
            os.unlink(path)
        if index == len(futures) - 1:
            pool.shutdown(wait=False)
        yield from batch


def _spans(sites: Sequence[RaiseSite], jobs: int) -> list[tuple[int, int]]:
    """Cut ``sites`` into :data:`_PIECES` spans a job, at the file boundaries nearest to even cuts.

    One span (no parallel build) for one job or fewer than :data:`PARALLEL_BUILD_MIN` sites.
    """
    if jobs <= 1 or len(sites) < PARALLEL_BUILD_MIN:
        return [(0, len(sites))]
    piece = len(sites) / (jobs * _PIECES)
    cuts = [0]
    for k in range(1, jobs * _PIECES):
        target = round(piece * k)
        after = before = target
        while 0 < after < len(sites) and sites[after].path == sites[after - 1].path:
            after += 1
        while before > cuts[-1] and sites[before].path == sites[before - 1].path:
            before -= 1
        cut = before if before > cuts[-1] and target - before < after - target else after
        cuts.append(max(cut, cuts[-1]))
    cuts.append(len(sites))
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """C's ``malloc_trim``, where the C library has it (glibc), else None."""
    try:
        return cast("Callable[[int], int]", ctypes.CDLL(None).malloc_trim)
    except (AttributeError, OSError, TypeError):  # musl, macOS, Windows: nothing to trim with
        return None


def _trim_heap() -> None:
    """Give the C heap's free pages back to the system before this process forks.

    A process that has mined already keeps much of what it freed (after a transformers run,
    about 200 of its 410 MB) and a forked child takes its first allocations from there: each
    page it writes is one it must copy from its parent first. Two jobs in a process that had
    mined before extracted 25% slower than in a fresh one (#3); returning the free pages
    first (glibc's ``malloc_trim``, about 10 ms) brings them back to a fresh process's speed.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _can_fork() -> bool:
    """Whether forking this process is safe: see :meth:`Pipeline._encoded_records`."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform != "darwin"
        and threading.active_count() == 1
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
        self._extractors = extractors(window=settings.window, languages=settings.languages)
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
        with collector_paused(), _Extraction(self) as extraction:
            report = self._mine(source, progress, extraction)
        # The run's objects were freed as _mine returned, while the store copied its log into
        # the database in another thread: wait for that copy (no thread outlives a run).
        self.store.settle()
        return report

    def _mine(
        self, source: Source, progress: ProgressCallback | None, extraction: _Extraction
    ) -> RunReport:
        started = time.perf_counter()
        mined_at = utc_now()
        info = source.info.model_copy(update={"mined_at": mined_at})
        legacy = f"{info.repo}=={info.version}"
        if info.kind in ("pypi", "installed") and info.key != legacy:
            # Stores written before a package of a shared repository was keyed apart.
            self.store.rename_source(legacy, info.key, package=info.package)
        run_id = self.store.begin_run(info)
        cached = self.store.cached_results(info.key)
        order: list[str] = []
        results: dict[str, tuple[Extractor, FileResult, str]] = {}
        problems: list[Problem] = []
        hits: dict[str, str] = {}
        # Files that failed for their content, cached like results: (tag, path, digest, JSON).
        failed: list[tuple[str, str, str, str]] = []
        reused = 0

        def done(path: str, mined: tuple[FileResult, str] | None, problem: Problem | None) -> None:
            if mined is not None:
                results[path] = (self._pick(path), *mined)
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
                done(file.path, *mine_file_json(None, file, strict=self.settings.strict))
                continue
            hit = cached.get(file.path)
            if hit is not None:
                digest, tag, payload = hit
                problem = _cached_problem(payload)
                if (
                    tag == self._tag(self._pick(file.path))
                    and digest == blob_digest(file.data)
                    and not (problem is not None and self.settings.strict)  # strict: it raises
                ):
                    hits[file.path] = payload
                    if problem is not None:
                        # A file that failed for its content (a syntax error) fails again.
                        failed.append((tag, file.path, digest, payload))
                        done(file.path, None, problem)
                    continue
            extraction.add(file)

        previous = self.store.source(info.key)
        last = self.store.last_report(info.key)
        if (
            previous is not None
            and last is not None
            and not extraction.files
            and set(hits) == set(cached)
            and (previous[0].sha, previous[0].version) == (info.sha, info.version)
            # A problem that went away (a broken file deleted) or came (a file grown too
            # large) changes what the store says even when no mined file changed.
            and set(problems) == set(last.problems)
        ):
            # Nothing changed since the last run: keep its records, reuse its counts.
            report = last.model_copy(
                update={
                    "source": info,
                    "cached": len(hits),
                    "unchanged": True,
                    "records": previous[1],
                    "problems": problems,
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
            self.store.finish_unchanged(info, report=report, run_id=run_id)
            return report
        for path, payload in hits.items():
            if not payload.startswith(_PROBLEM_JSON):
                reused += 1
                done(path, (FileResult.model_validate_json(payload), payload), None)

        for file, mined, problem in extraction.results():
            done(file.path, mined, problem)
            if problem is not None and problem.kind in _CONTENT_PROBLEMS and file.data is not None:
                failed.append(
                    (
                        self._tag(self._pick(file.path)),
                        file.path,
                        blob_digest(file.data),
                        _problem_payload(problem),
                    )
                )

        ordered = [results[path] for path in order if path in results]
        pairs = [(extractor, result) for extractor, result, _ in ordered]
        sites, finishing = self._linked(pairs)
        with self._encoded_records(sites, finishing, info, mined_at) as records:
            # What needs no record is made here while forked processes build the records
            # (0.15 s of a two-job transformers run).
            classes = self._hierarchy(pairs)
            report = RunReport(
                source=info,
                files=len(order),
                sites=dict(Counter(site.kind.value for site in sites)),
                languages=dict(Counter(site.language for site in sites)),
                forms=dict(Counter(site.form for site in sites)),
                opaque=sum(1 for site in sites if site.template.is_opaque),
                records=len(sites),
                cached=reused,
                problems=problems,
                seconds=round(time.perf_counter() - started, 3),
            )
            self.store.replace_source(
                info,
                records,
                problems=problems,
                report=report,
                dataset_version=mined_at,
                run_id=run_id,
                files=[
                    (self._tag(extractor), result.path, result.digest, payload)
                    for extractor, result, payload in ordered
                ]
                + failed,
                classes=classes,
            )
        return report

    @contextmanager
    def _encoded_records(
        self,
        sites: list[RaiseSite],
        finishing: _Finishing,
        info: SourceInfo,
        mined_at: datetime,
    ) -> Iterator[Iterable[EncodedRecord]]:
        """Build and encode the records of a source's sites, in forked processes when allowed.

        Classifying and serialising cost about a sixth of a run, after the last file is
        extracted. With ``jobs`` above one, the sites are cut into spans (whole files, so
        each file's ordinals stay right; see :func:`_spans`) that ``jobs - 1`` forked
        processes build in turn, while this process does what needs no record, then writes
        each span's records in order and builds spans no forked process has started
        whenever the next one is not ready (see :func:`_collected`). The children inherit
        the sites (nothing is pickled but the encoded records coming back), finish the ones
        they build (``finishing``: the linking each site takes on its own), and the records
        come out in site order whatever the processes.

        Forking is used only where it is safe: POSIX but macOS, and no other thread running
        (a lock held by another thread at the fork would stay held in the child). Elsewhere
        the records are built here, the same ones.
        """
        encode = self.store.encode_record
        spans = _spans(sites, self.settings.jobs)
        if len(spans) < 2 or not _can_fork():
            finished = _finished(sites, 0, len(sites), finishing)
            yield (
                encode(record, mined_at)
                for record in build_records(finished, info, analyzed_at=mined_at)
            )
            return
        global _BUILD_JOB
        _BUILD_JOB = (sites, finishing, info, mined_at, encode)
        _trim_heap()
        try:
            context = multiprocessing.get_context("fork")
            workers = min(self.settings.jobs - 1, len(spans) - 1)
            with (
                tempfile.TemporaryDirectory(prefix="errdex-build-") as spool,
                ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool,
            ):
                futures = [
                    pool.submit(_spool_span, start, stop, os.path.join(spool, f"{start}.pickle"))
                    for start, stop in spans
                ]
                try:
                    yield _collected(pool, spans, futures, workers)
                finally:
                    for future in futures:
                        future.cancel()
        finally:
            _BUILD_JOB = None

    def _pick(self, path: str) -> Extractor:
        return next(e for e in self._extractors if path.endswith(e.suffixes))

    def _link(self, ordered: list[tuple[Extractor, FileResult]]) -> list[RaiseSite]:
        sites, finishing = self._linked(ordered)
        return _finished(sites, 0, len(sites), finishing)

    def _linked(
        self, ordered: list[tuple[Extractor, FileResult]]
    ) -> tuple[list[RaiseSite], _Finishing]:
        """Link each language's files: the sites, and the runs of them left to finish."""
        by_language: dict[str, list[FileResult]] = {}
        for extractor, result in ordered:
            by_language.setdefault(extractor.language, []).append(result)
        sites: list[RaiseSite] = []
        finishing: _Finishing = []
        for extractor in self._extractors:
            results = by_language.get(extractor.language)
            if results is None:
                continue
            if isinstance(extractor, DeferredLink):
                start = len(sites)
                linked, finish = extractor.link_deferred(results)
                sites.extend(linked)
                finishing.append((start, len(sites), finish))
            else:
                sites.extend(extractor.link(results))
        return sites, finishing

    def _hierarchy(
        self, ordered: list[tuple[Extractor, FileResult]]
    ) -> list[tuple[str, str, list[str]]]:
        """The exception classes the source defines, of the extractors that tell them."""
        found: list[tuple[str, str, list[str]]] = []
        for extractor in self._extractors:
            if isinstance(extractor, ClassHierarchy):
                results = [r for e, r in ordered if e is extractor]
                if results:
                    found.extend(extractor.hierarchy(results))
        return found

    def enrich(
        self,
        *,
        llm: LLMWriter | None = None,
        repo: str | None = None,
        resume: bool = False,
        progress: ProgressCallback | None = None,
    ) -> EnrichReport:
        """Write the narrative fields of stored records, and verify them.

        The offline writer always runs (it is the LLM's draft and its fallback); with an LLM
        writer, each answer is verified and a flagged field falls back to the offline text.

        Args:
            llm: The LLM writer, or None for the offline writer alone.
            repo: Only this repo's records.
            resume: Skip records this writer already wrote (an interrupted run goes on).
            progress: Called with each record id as it is done.

        Returns:
            What was written.
        """
        return _Enricher(self, llm).run(repo=repo, resume=resume, progress=progress)

    def verify(
        self, *, source: Source | None = None, repo: str | None = None, update: bool = True
    ) -> VerifyRun:
        """Check stored records' prose against the facts of their sites.

        Without a source, a record is checked against the facts stored with it. With one, the
        source is mined (nothing is written for it) and each record is found again by file,
        class and template: a record whose site is at another line is ``moved`` (and updated
        to the new line and code), one whose site is gone is ``stale``; the prose is checked
        against the fresh facts. Imported records (the seed's) are checked the same way.

        Args:
            source: The code the records describe, as it is now.
            repo: Only this repo's records.
            update: Store the findings (and moved lines) in the records.

        Returns:
            One outcome per record.
        """
        from errdex.analyze.verify import verify as check

        sites = self._sites_of(source) if source is not None else None
        run = VerifyRun()
        updates: list[tuple[int, ErrorRecord]] = []
        for rowid, envelope in self.store.iter_rows(repo=repo):
            record = envelope.record
            facts = record.facts
            status = "ok"
            changes: dict[str, Any] = {}
            if sites is not None:
                site = _find_site(record, sites)
                if site is None:
                    run.outcomes.append(VerifyOutcome(record.id, "stale"))
                    continue
                facts = site.facts
                changes["facts"] = site.facts
                if site.line != record.line_number:
                    status = "moved"
                    changes.update(_site_position(site))
                    # The permalink and sha described the old commit; point them at this one.
                    sha = source.info.sha if source is not None else None
                    changes["analyzed_sha"] = sha
                    changes["github_url"] = permalink(
                        record.repo, sha, site.path, site.source_code_start, site.source_code_end
                    )
            elif facts is None:
                status = "unchecked"
            claims = check(record, facts)
            if claims and status == "ok":
                status = "flagged"
            run.outcomes.append(
                VerifyOutcome(record.id, status, claims, changes.get("line_number"))
            )
            if update:
                updates.append((rowid, record.model_copy(update={**changes, "claims": claims})))
        if update and updates:
            self.store.update_rows(updates)
        return run

    def _sites_of(self, source: Source) -> dict[str, list[RaiseSite]]:
        """Mine a source without storing it; return its sites by file path."""
        results: list[tuple[Extractor, FileResult]] = []
        by_path: dict[str, list[RaiseSite]] = {}
        with collector_paused():
            for file in source.files(
                wanted=self._wanted,
                max_bytes=self.settings.max_file_bytes,
                include_tests=self.settings.include_tests,
            ):
                if file.data is None:
                    continue
                extractor = self._pick(file.path)
                result, _ = mine_file(extractor, file, strict=False)
                if result is not None:
                    results.append((extractor, result))
            for site in self._link(results):
                by_path.setdefault(site.path, []).append(site)
        return by_path

    def import_files(self, paths: Sequence[Path]) -> ImportReport:
        """Import seed or errdex JSONL files (``.gz`` too), format detected per line.

        Records are filed as :meth:`import_records` files them. Each file is validated
        completely before anything of it is written.

        Args:
            paths: The files.

        Returns:
            What was imported.

        Raises:
            RecordFormatError: A line is invalid (nothing of that file is written).
        """
        report = ImportReport()
        for path in paths:
            self.import_records(read_jsonl(path), location=str(path), report=report)
            report.files += 1
        return report

    def import_records(
        self,
        lines: Iterable[tuple[RecordEnvelope, RecordFormat]],
        *,
        location: str,
        report: ImportReport | None = None,
    ) -> ImportReport:
        """Write parsed JSONL records, filed under one source per repo (key ``import:REPO``).

        Records replace records with the same id there. ``lines`` is read to its end before
        anything is written, so an error it raises writes nothing. Shared by ``errdex import``
        and the web's ``POST /api/ingest``.

        Args:
            lines: Each envelope with the format its line was in (as
                :func:`~errdex.store.jsonl.read_jsonl` yields them).
            location: Where the records came from (the file), kept on their source.
            report: Add the counts to this report; a new one when None.

        Returns:
            The report, with the lines by format and the records written by repo added.
        """
        report = report if report is not None else ImportReport()
        by_repo: dict[str, list[RecordEnvelope]] = {}
        for envelope, flavour in lines:
            by_repo.setdefault(envelope.record.repo, []).append(envelope)
            report.formats[flavour.value] += 1
        for repo, envelopes in by_repo.items():
            # Imported prose is the dataset's: mark it so the writers leave it alone.
            envelopes = [
                e
                if e.record.writer
                else e.model_copy(
                    update={"record": e.record.model_copy(update={"writer": "import"})}
                )
                for e in envelopes
            ]
            info = SourceInfo(
                key=f"import:{repo}",
                repo=repo,
                kind="import",
                location=location,
                mined_at=utc_now(),
            )
            written = self.store.upsert_records(info, envelopes)
            report.records += written
            report.repos[repo] += written
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
        from errdex.analyze.writer import ensure_envelope

        envelopes = (ensure_envelope(e) for e in self.store.iter_envelopes(repo=repo))
        return write_jsonl(envelopes, handle, flavour)


def mine_sources(
    pipeline: Pipeline, sources: Iterable[Source], *, progress: ProgressCallback | None = None
) -> list[RunReport]:
    """Mine several sources in turn, one report each."""
    return [pipeline.mine(source, progress=progress) for source in sources]


@dataclass
class EnrichReport:
    """What an enrichment run did.

    Attributes:
        records: Records looked at.
        written: Records whose narrative was rewritten.
        skipped: Records left alone (``resume``: already written by this writer).
        fallbacks: LLM answers (or fields) replaced by the offline text because they failed
            or the verifier flagged them.
        flagged: Records whose final narrative still has claims.
        llm: The LLM writer's counts (requests, cache hits, retries, tokens), when used.
    """

    records: int = 0
    written: int = 0
    skipped: int = 0
    fallbacks: int = 0
    flagged: int = 0
    llm: dict[str, int] = field(default_factory=dict)


@dataclass
class VerifyOutcome:
    """One record's verification.

    Attributes:
        record_id: The record.
        status: ``ok``, ``flagged``, ``moved`` (its site is at another line now; updated),
            ``stale`` (its site is gone from the source) or ``unchecked`` (no site facts).
        claims: What the verifier found.
        line: The site's line now, for moved records.
    """

    record_id: str
    status: str
    claims: list[Claim] = field(default_factory=list)
    line: int | None = None


@dataclass
class VerifyRun:
    """What ``errdex verify`` found over a store."""

    outcomes: list[VerifyOutcome] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Records by status, and the number of claims."""
        counts = Counter(outcome.status for outcome in self.outcomes)
        result = {status: counts.get(status, 0) for status in _STATUSES}
        result["records"] = len(self.outcomes)
        result["claims"] = sum(len(outcome.claims) for outcome in self.outcomes)
        return result


_STATUSES = ("ok", "flagged", "moved", "stale", "unchecked")


class _Enricher:
    """Writes narratives for stored records: offline always, the LLM on top when asked.

    An LLM answer is kept field by field: a field the verifier flags falls back to the offline
    text, and the record's writer says so (``llm:MODEL+offline``).
    """

    def __init__(self, pipeline: Pipeline, llm: LLMWriter | None) -> None:
        self.pipeline = pipeline
        self.llm = llm

    def run(
        self, *, repo: str | None, resume: bool, progress: ProgressCallback | None
    ) -> EnrichReport:
        from errdex.analyze.writer import apply_narrative, write_offline

        store = self.pipeline.store
        report = EnrichReport()
        target = self.llm.writer if self.llm is not None else "offline"
        pending: dict[str, tuple[int, ErrorRecord, Narrative]] = {}
        updates: list[tuple[int, ErrorRecord]] = []
        for rowid, envelope in store.iter_rows(repo=repo):
            record = envelope.record
            report.records += 1
            if resume and record.writer.startswith(target):
                report.skipped += 1
                continue
            draft = write_offline(record)
            offline = apply_narrative(record, draft, writer="offline")
            if self.llm is None:
                report.flagged += bool(offline.claims)
                updates.append((rowid, offline))
                if progress is not None:
                    progress(record.id)
            else:
                pending[record.id] = (rowid, offline, draft)
        if self.llm is not None:
            llm = self.llm
            items = [(offline, draft) for _, offline, draft in pending.values()]
            for result in llm.write_many(items):
                rowid, offline, draft = pending[result.record_id]
                final = offline
                if result.narrative is not None:
                    final = self._keep_verified(offline, draft, result.narrative, llm.writer)
                report.fallbacks += final.writer != llm.writer
                report.flagged += bool(final.claims)
                updates.append((rowid, final))
                if progress is not None:
                    progress(result.record_id)
            counts = llm.report
            report.llm = {
                "requests": counts.requests,
                "cached": counts.cached,
                "retries": counts.retries,
                "failures": counts.failures,
                "promptTokens": counts.prompt_tokens,
                "completionTokens": counts.completion_tokens,
            }
        report.written = store.update_rows(updates)
        return report

    @staticmethod
    def _keep_verified(
        offline: ErrorRecord, draft: Narrative, answer: Narrative, writer: str
    ) -> ErrorRecord:
        from errdex.analyze.writer import apply_narrative

        candidate = apply_narrative(offline, answer, writer=writer)
        if not candidate.claims:
            return candidate
        flagged = {claim.field for claim in candidate.claims}
        merged = answer.model_copy(
            update={
                name: getattr(draft, name)
                for name in Narrative.model_fields
                if to_camel(name) in flagged
            }
        )
        return apply_narrative(offline, merged, writer=f"{writer}+offline")


def _find_site(record: ErrorRecord, sites: dict[str, list[RaiseSite]]) -> RaiseSite | None:
    """Find a record's site again: same file, class and template; the nearest line wins."""
    same = [
        site
        for site in sites.get(record.file_path, [])
        if site.error_class == record.error_class and site.template.text == record.error_message
    ]
    if not same:
        return None
    return min(same, key=lambda site: abs(site.line - record.line_number))


def _site_position(site: RaiseSite) -> dict[str, Any]:
    """The record fields that say where a site is, from the site as it is now."""
    return {
        "line_number": site.line,
        "end_line_number": site.end_line,
        "message_line": site.message_line,
        "message_end_line": site.message_end_line,
        "source_code": site.source_code,
        "source_code_start": site.source_code_start,
        "source_code_end": site.source_code_end,
        "function": site.function,
        "function_start": site.function_start,
        "function_end": site.function_end,
    }
