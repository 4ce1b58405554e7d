"""The runtime hook: explain uncaught exceptions and tag log records, inside any program.

* :func:`explain` answers a pasted text or a live exception object.
* :func:`install` replaces ``sys.excepthook``: the normal traceback is printed unchanged
  first, then errdex's explanation under it. If errdex itself fails, one line says so and the
  host program is otherwise unaffected.
* :class:`ErrdexLogFilter` adds ``errdex_id`` (the matched record's id, or None) to every log
  record at WARNING or above, so handlers and formatters can show or ship it.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from errdex.errors import StoreError
from errdex.match.explain import Explainer, Explanation
from errdex.settings import resolve_settings
from errdex.store.sqlite import SQLiteStore

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]

_lock = threading.Lock()


RETRY_SECONDS = 60.0
"""After the store fails to open, the hook and the log filter try again only this much later
(a program logging many warnings must not pay for the failure at each one)."""


class _Session:
    """An explainer opened on first use and kept for the life of the hook or filter.

    The store must exist: a hook or filter never creates one (a mistyped path would leave an
    empty store behind and answer "no record" for ever).
    """

    def __init__(self, db: Path | None) -> None:
        self._db = db
        self._explainer: Explainer | None = None
        self._failed: tuple[float, str] | None = None

    def explainer(self) -> Explainer:
        with _lock:
            if self._explainer is None:
                if self._failed is not None and time.monotonic() - self._failed[0] < RETRY_SECONDS:
                    raise StoreError(self._failed[1])
                try:
                    settings = resolve_settings({"db": self._db}).settings
                    store = SQLiteStore(settings.db, create=False)
                    self._explainer = Explainer.for_database(store, settings.db)
                except Exception as exc:
                    self._failed = (time.monotonic(), str(exc))
                    raise
            return self._explainer


def exception_text(error: BaseException) -> str:
    """Format an exception with its traceback and chain, as Python prints it."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


def explain(
    subject: str | BaseException, *, db: Path | str | None = None, top: int = 5
) -> Explanation:
    """Explain an error text (message, traceback, log) or a live exception.

    Args:
        subject: The pasted text, or an exception object (its traceback is used).
        db: The store; the configured default (``ERRDEX_DB``, user data dir) when None.
        top: At most this many matches.

    Returns:
        The parsed input and the ranked matches.
    """
    text = subject if isinstance(subject, str) else exception_text(subject)
    return _Session(Path(db) if db is not None else None).explainer().explain(text, top=top)


CAPTURE_CHARS = 200
"""A captured value longer than this is cut in the hook's lines (the traceback shows it)."""


def _shortened(text: str) -> str:
    return text if len(text) <= CAPTURE_CHARS else f"{text[:CAPTURE_CHARS]}… ({len(text)} chars)"


def _summary(answer: Explanation) -> str:
    if not answer.matches:
        return "errdex: no record of this error in the index."
    lines = []
    for match in answer.matches:
        record = match.record
        where = f"{record.repo} {record.file_path}:{record.line_number}"
        lines.append(f"errdex: {match.kind.value} match {record.id} at {where}")
        if match.captures:
            values = ", ".join(
                f"{name} = {_shortened(repr(value))}" for name, value in match.captures.items()
            )
            lines.append(f"  captured: {values}")
        if record.documentation:
            lines.append(f"  {record.documentation}")
        if record.github_url:
            lines.append(f"  {record.github_url}")
    return "\n".join(lines)


def install(
    *, db: Path | str | None = None, top: int = 1, stream: IO[str] | None = None
) -> ExceptHook:
    """Explain uncaught exceptions (of the main thread and of threads) under their traceback.

    Args:
        db: The store; the configured default when None.
        top: How many matches to print.
        stream: Where the explanation goes (``sys.stderr`` when None).

    Returns:
        The previous hook (pass it to :func:`uninstall` to restore it).
    """
    uninstall()  # a second install replaces the first instead of wrapping it
    previous = sys.excepthook
    previous_thread = threading.excepthook
    session = _Session(Path(db) if db is not None else None)

    def explain_under(
        kind: type[BaseException], error: BaseException | None, tb: TracebackType | None
    ) -> None:
        out = stream or sys.stderr
        try:
            text = "".join(traceback.format_exception(kind, error, tb))
            answer = session.explainer().explain(text, top=top)
            out.write(_summary(answer) + "\n")
        except Exception as failure:  # never break the host program
            out.write(
                f"errdex: could not explain this error ({type(failure).__name__}: {failure})\n"
            )

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous(kind, error, tb)
        explain_under(kind, error, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        previous_thread(args)
        if args.exc_type is not SystemExit:  # a thread's SystemExit is silent
            explain_under(args.exc_type, args.exc_value, args.exc_traceback)

    hook.errdex_previous = previous  # type: ignore[attr-defined]
    thread_hook.errdex_previous = previous_thread  # type: ignore[attr-defined]
    sys.excepthook = hook
    threading.excepthook = thread_hook
    return previous


def uninstall() -> None:
    """Restore the excepthooks that :func:`install` replaced (no-op when not installed)."""
    previous = getattr(sys.excepthook, "errdex_previous", None)
    if previous is not None:
        sys.excepthook = previous
    previous_thread = getattr(threading.excepthook, "errdex_previous", None)
    if previous_thread is not None:
        threading.excepthook = previous_thread


class ErrdexLogFilter(logging.Filter):
    """Add ``errdex_id`` to log records at ``level`` or above (None when nothing matches).

    The filter never drops a record, and a failure inside errdex leaves ``errdex_id`` None.

    Args:
        db: The store; the configured default when None.
        level: The lowest level that is looked up.
    """

    def __init__(self, *, db: Path | str | None = None, level: int = logging.WARNING) -> None:
        super().__init__()
        self._session = _Session(Path(db) if db is not None else None)
        self._level = level

    def filter(self, record: logging.LogRecord) -> bool:
        """Tag the record; always keep it."""
        record.errdex_id = None
        if record.levelno < self._level:
            return True
        try:
            text = f"{record.levelname}:{record.name}:{record.getMessage()}"
            if record.exc_info and record.exc_info[1] is not None:
                text = exception_text(record.exc_info[1]) + "\n" + text
            answer = self._session.explainer().explain(text, top=1)
            if answer.found:
                record.errdex_id = answer.matches[0].record.id
        except Exception:  # logging must never fail because of errdex
            record.errdex_id = None
        return True
