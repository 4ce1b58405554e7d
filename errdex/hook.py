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
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from errdex.match.explain import Explainer, Explanation
from errdex.settings import resolve_settings
from errdex.store.sqlite import SQLiteStore

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], object]

_lock = threading.Lock()


class _Session:
    """An explainer opened on first use and kept for the life of the hook or filter."""

    def __init__(self, db: Path | None) -> None:
        self._db = db
        self._explainer: Explainer | None = None

    def explainer(self) -> Explainer:
        with _lock:
            if self._explainer is None:
                settings = resolve_settings({"db": self._db}).settings
                store = SQLiteStore(settings.db)
                self._explainer = Explainer.for_database(store, settings.db)
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


def _summary(answer: Explanation) -> str:
    if not answer.matches:
        return "errdex: no record of this error in the index."
    lines = []
    for match in answer.matches:
        record = match.record
        where = f"{record.repo} {record.file_path}:{record.line_number}"
        lines.append(f"errdex: {match.kind.value} match {record.id} at {where}")
        if match.captures:
            values = ", ".join(f"{name} = {value!r}" for name, value in match.captures.items())
            lines.append(f"  captured: {values}")
        if record.documentation:
            lines.append(f"  {record.documentation}")
        if record.github_url:
            lines.append(f"  {record.github_url}")
    return "\n".join(lines)


def install(
    *, db: Path | str | None = None, top: int = 1, stream: IO[str] | None = None
) -> ExceptHook:
    """Explain uncaught exceptions under their normal traceback.

    Args:
        db: The store; the configured default when None.
        top: How many matches to print.
        stream: Where the explanation goes (``sys.stderr`` when None).

    Returns:
        The previous hook (pass it to :func:`uninstall` to restore it).
    """
    previous = sys.excepthook
    session = _Session(Path(db) if db is not None else None)

    def hook(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        previous(kind, error, tb)
        out = stream or sys.stderr
        try:
            text = "".join(traceback.format_exception(kind, error, tb))
            answer = session.explainer().explain(text, top=top)
            out.write(_summary(answer) + "\n")
        except Exception as failure:  # never break the host program
            out.write(
                f"errdex: could not explain this error ({type(failure).__name__}: {failure})\n"
            )

    hook.errdex_previous = previous  # type: ignore[attr-defined]
    sys.excepthook = hook
    return previous


def uninstall() -> None:
    """Restore the excepthook that :func:`install` replaced (no-op when not installed)."""
    previous = getattr(sys.excepthook, "errdex_previous", None)
    if previous is not None:
        sys.excepthook = previous


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
