"""What the routes share: the store behind a lock, the cached explainer and facet counts.

One :class:`Services` object per application, made by :func:`errdex.web.app.create_app`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from errdex.match.explain import Explainer, Explanation
from errdex.settings import Settings
from errdex.store.base import RecordStore, SearchQuery
from errdex.store.sqlite import fts_query

T = TypeVar("T")

FACET_COLUMNS = {"repo": "r.repo", "errorType": "r.error_type", "errorClass": "r.error_class"}
"""Facet name (as in the API's query string) → column of the ``records`` table."""


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


class Services:
    """The store, serialised behind one lock, and the explainer built from it.

    The SQLite connection is shared by the worker threads, so every use of it goes through
    :meth:`read`. The explainer's index is rebuilt when the store's version changes.

    Args:
        settings: The effective settings (``db`` and ``engine`` are used).
        store: The store every route reads.
        options: The limits.
    """

    def __init__(self, settings: Settings, store: RecordStore, options: WebOptions) -> None:
        self.settings = settings
        self.store = store
        self.options = options
        self._lock = threading.RLock()
        self._explainer: Explainer | None = None
        self._facets_db: sqlite3.Connection | None = None

    def read(self, action: Callable[[RecordStore], T]) -> T:
        """Run ``action`` on the store while holding the lock."""
        with self._lock:
            return action(self.store)

    def explain(self, text: str, *, top: int) -> Explanation:
        """Explain a paste with the (cached) explainer of the current store version."""
        with self._lock:
            explainer = self._explainer
            if explainer is None or explainer.index.version != self.store.version():
                explainer = Explainer.for_database(
                    self.store, Path(self.settings.db), engine=self.settings.engine
                )
                self._explainer = explainer
            return explainer.explain(text, top=top)

    def facets(self, query: SearchQuery) -> dict[str, dict[str, int]]:
        """Count the records matching a query by repo, category and class.

        Read through a read-only connection of its own to the store's SQLite file (the
        ``records`` and ``records_fts`` tables); a store that is not a file has no facets.
        """
        connection = self._facet_connection()
        if connection is None:
            return {name: {} for name in FACET_COLUMNS}
        where: list[str] = []
        params: list[Any] = []
        join = ""
        if query.text.strip():
            join = "JOIN records_fts f ON f.rowid = r.rowid"
            where.append("records_fts MATCH ?")
            params.append(fts_query(query.text, any_words=query.any_words))
        for column, value in (
            ("r.repo", query.repo),
            ("r.error_class", query.error_class),
            ("r.error_type", query.error_type),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = ("WHERE " + " AND ".join(where)) if where else ""
        result: dict[str, dict[str, int]] = {}
        with self._lock:
            for name, column in FACET_COLUMNS.items():
                try:
                    rows = connection.execute(
                        f"SELECT {column}, count(*) AS n FROM records r {join} {clause}"
                        f" GROUP BY {column} ORDER BY n DESC, {column} LIMIT ?",
                        [*params, self.options.facet_limit],
                    ).fetchall()
                except sqlite3.Error:
                    rows = []
                result[name] = {str(value): int(count) for value, count in rows}
        return result

    def _facet_connection(self) -> sqlite3.Connection | None:
        if self._facets_db is not None:
            return self._facets_db
        location = getattr(self.store, "location", None)
        if not isinstance(location, str) or location == ":memory:" or not Path(location).exists():
            return None
        try:
            self._facets_db = sqlite3.connect(
                f"file:{quote(str(Path(location).resolve()))}?mode=ro",
                uri=True,
                check_same_thread=False,
            )
        except sqlite3.Error:
            return None
        return self._facets_db

    def close(self) -> None:
        """Close the facet connection (the store belongs to the caller)."""
        if self._facets_db is not None:
            self._facets_db.close()
            self._facets_db = None
