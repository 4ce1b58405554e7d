"""Prefilter engines: find which template keys occur in a message, in one pass.

Both engines answer the same question with the same result — the buckets of every key that
occurs in the text — so the matcher gives the same answers whichever runs:

* :class:`AhoCorasickEngine` (default): pyahocorasick, fast to build, pure in-process.
* :class:`HyperscanEngine` (``errdex[fast]``): Hyperscan's literal mode, for bulk log scans;
  its compiled database is serialised with the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import ahocorasick

from errdex.errors import MissingDependencyError, UsageError

ENGINES = ("aho-corasick", "hyperscan")
"""The engine names settings and flags accept."""


FEW_KEYS = 8
"""An engine of at most this many keys searches the text for each (see
:class:`AhoCorasickEngine`)."""


class PrefilterEngine(Protocol):
    """Finds the keys occurring in a text."""

    name: str
    few: tuple[tuple[str, int], ...]
    """Each key with its bucket, when the text is best searched for each key in turn (an
    engine of at most :data:`FEW_KEYS` keys); else empty. The matcher index does that search
    itself, in its compiled code, instead of calling :meth:`buckets`."""

    def buckets(self, text: str) -> list[int]:
        """Return the bucket of every key occurring in ``text`` (a bucket may repeat)."""
        ...


class AhoCorasickEngine:
    """An Aho-Corasick automaton over the keys (pyahocorasick).

    Args:
        keys: The keys; the bucket of ``keys[i]`` is ``offset + i``.
        offset: The first key's bucket.
    """

    name = "aho-corasick"

    def __init__(self, keys: Sequence[str], *, offset: int = 0) -> None:
        self._automaton = ahocorasick.Automaton(ahocorasick.STORE_INTS)
        self.few: tuple[tuple[str, int], ...] = ()
        if len(keys) <= FEW_KEYS:
            # A walk of the automaton costs per character of the text, a search for a few
            # keys much less (``str.find`` skips along the text).
            self.few = tuple(zip(keys, range(offset, offset + len(keys)), strict=True))
        else:
            for bucket, key in enumerate(keys, offset):
                self._automaton.add_word(key, bucket)
            self._automaton.make_automaton()
        self._empty = not keys

    def buckets(self, text: str) -> list[int]:
        """Return the bucket of every key occurring in ``text``."""
        if self._empty or not text:
            return []
        if self.few:
            return [bucket for key, bucket in self.few if key in text]
        return [bucket for _, bucket in self._automaton.iter(text)]


class HyperscanEngine:
    """Hyperscan in literal mode over the keys (``pip install 'errdex[fast]'``).

    Args:
        keys: The keys; the bucket of ``keys[i]`` is ``offset + i``.
        offset: The first key's bucket.

    Raises:
        MissingDependencyError: hyperscan is not installed.
    """

    name = "hyperscan"
    few: tuple[tuple[str, int], ...] = ()  # a compiled database scans any number of keys

    def __init__(self, keys: Sequence[str], *, offset: int = 0) -> None:
        hyperscan = _hyperscan()
        self._database: Any = None
        if keys:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            encoded = [key.encode("utf-8") for key in keys]
            database.compile(
                expressions=encoded,
                ids=list(range(offset, offset + len(encoded))),
                elements=len(encoded),
                flags=[hyperscan.HS_FLAG_SINGLEMATCH] * len(encoded),
                literal=True,
            )
            self._database = database

    def buckets(self, text: str) -> list[int]:
        """Return the bucket of every key occurring in ``text``."""
        if self._database is None or not text:
            return []
        found: list[int] = []

        def on_match(bucket: int, start: int, end: int, flags: int, context: object) -> None:
            found.append(bucket)

        self._database.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match)
        return found

    def __getstate__(self) -> dict[str, Any]:
        hyperscan = _hyperscan()
        data = hyperscan.dumpb(self._database) if self._database is not None else None
        return {"database": data}

    def __setstate__(self, state: dict[str, Any]) -> None:
        hyperscan = _hyperscan()
        data = state["database"]
        self._database = hyperscan.loadb(data, mode=hyperscan.HS_MODE_BLOCK) if data else None
        if self._database is not None:
            # A loaded database has no scratch space yet; scanning needs one.
            self._database.scratch = hyperscan.Scratch(self._database)


def _hyperscan() -> Any:
    try:
        import hyperscan
    except ImportError as exc:
        raise MissingDependencyError("the hyperscan engine", extra="fast") from exc
    return hyperscan


def make_engine(name: str, keys: Sequence[str], *, offset: int = 0) -> PrefilterEngine:
    """Build a prefilter engine by name.

    Args:
        name: ``aho-corasick`` or ``hyperscan``.
        keys: The keys, in bucket order.
        offset: The first key's bucket.

    Returns:
        The engine.

    Raises:
        UsageError: The name is unknown.
        MissingDependencyError: The engine's extra is not installed.
    """
    if name == "aho-corasick":
        return AhoCorasickEngine(keys, offset=offset)
    if name == "hyperscan":
        return HyperscanEngine(keys, offset=offset)
    raise UsageError(f"unknown matcher engine {name!r}; choose one of {', '.join(ENGINES)}")
