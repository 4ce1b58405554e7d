"""The matcher index: every record's template, a literal prefilter over them, and frame lookups.

Built once from a store and cached on disk next to it (``<db>.matcher``, or
``<db>.<engine>.matcher`` for another engine), keyed by the store's version token, so a new
process loads it instead of rebuilding it.

* Identical templates are stored once; each template lists its records (transformers repeats
  one message at 444 sites).
* Each template with a usable literal gets one **key**: a literal run of at most
  :data:`KEY_LENGTH` characters with at least three letters or digits, chosen to be the least
  shared among all templates. A pyahocorasick automaton over the keys finds, in one pass over a
  message, every template whose key occurs in it; only those are verified (Hyperscan does the
  same with ``errdex[fast]``, see :mod:`errdex.match.engines`). Every message a
  template produces contains its key, so the prefilter never loses a match.
* A whole message (what explain looks up) must begin with its template's first literal, so
  templates that begin with one are found by their **head** (up to the first 16 characters)
  in a dictionary, one lookup per head length, then by their **tail**; only the
  templates that begin with a hole (or with unusual whitespace) need the automaton then, and
  they have one of their own. That keeps a lookup from paying for every short key a message
  happens to contain (at a million templates, a walk of the whole automaton costs tens of
  microseconds in cache misses). Templates that share both head and tail with many others are
  told apart by a third automaton of their keys only.
* Templates without a usable literal (``{msg}``, ``{}: {}``) are **generic**: they are reached
  only through a traceback frame that points at their file.
* Records are kept as compact arrays (row id, class, path, lines, kind) for ranking; the full
  record is read from the store only for the answers shown.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from errdex.match.compile import (
    CompiledTemplate,
    by_words,
    filed_under,
    match_cut,
    match_literals,
    normal_space,
    normalize_space,
)
from errdex.match.engines import PrefilterEngine, make_engine
from errdex.memory import collector_paused

KEY_LENGTH: Final = 16
"""Longest prefilter key; longer literals contribute a window of this length."""

_MAX_LINE: Final = 2**31 - 1
"""Lines are kept as 32-bit numbers (``array("i")``); a higher one counts as this one."""

FORMAT_VERSION: Final = 16

IndexRow = tuple[int, str, str, int, int, str, str]
"""What the index reads per record: rowid, class, path, line, end line, kind, template JSON."""


_SPACES: Final = re.compile(r"\s+")
_SPACE_RUN: Final = re.compile(r"[ \t]{2}|\t")
_THREE_ALNUM: Final = re.compile(r"[^\W_][\W_]*[^\W_][\W_]*[^\W_]")


def _usable(text: str) -> bool:
    """Whether a key candidate holds at least three letters or digits."""
    return _THREE_ALNUM.search(text) is not None


SPECIFIC: Final = 12
"""Templates with fewer literal characters match too much to be evidence on their own: explain
needs a frame to call them exact, and a log scan does not group lines by them."""

MULTILINE: Final = 2
"""A template's shape flag (see ``MatcherIndex._shapes``): its literals hold a line break."""

SPACED: Final = 1
"""A template's shape flag: its literals hold a run of whitespace."""

SHARED_HEAD: Final = 4
"""Heads shared by more templates than this are split by the templates' tails."""

BIG_HEAD: Final = 32
"""Head and tail shared by more templates than this: they are split by their keys."""

_Members = int | tuple[int, ...]
_ByKey = dict[int, tuple[int, ...]]
_ByTail = dict[str, _Members | _ByKey]
_Heads = dict[str, _Members | _ByTail]

FREE: Final = 0
CROWDED: Final = 1
ALL: Final = 2
WORDLESS: Final = 3
"""The automata: of the templates a whole message cannot be placed by (no head), of those
whose head and tail many share, of all the specific ones (to search a line), and of the templates
without a head that no word of theirs finds either (see :attr:`MatcherIndex._free_words`)."""

HEAD_LENGTHS: Final[tuple[int, ...]] = (16, 12, 9, 7, 5, 3, 1)
"""How many leading characters of a template's first literal make its head: the most it has
of these. A lookup tries only the lengths that heads beginning as the message does have
(:meth:`MatcherIndex.head_groups`)."""

PREFIX_LENGTH: Final = 3
"""Heads are grouped by this many first characters to know which head lengths to try."""

MAX_CUT_CANDIDATES: Final = 2000
"""At most this many templates are tried against a message cut short."""

MAX_STARTS: Final = 16
"""A template is tried at most at this many places in a line (:meth:`MatcherIndex.find_in`)."""

LAYOUT_PREFIXES: Final[tuple[str, ...]] = ("src/", "python/", "lib/", "python3/")
"""Repository directories that are not part of the installed package's path."""


_CAUGHT_HOLE: Final = re.compile(r"(?:str\()?(?:e|ex|exc|err|error|exception|cause|original)\)?")
"""The hole of a record that re-raises a caught error's message (``{str(e)}``, ``{exc}``)."""


def _head_start(message: str) -> str:
    """A message's first characters (as many as the longest head), as heads see them.

    Whitespace runs count as single spaces, as a re-wrapped paste is matched. Most messages
    begin so already, told from those characters alone; the others are normalised in a
    window four times as long, enough for a run of blanks (normalising that window for
    every message was a tenth of the time spent finding the candidates).
    """
    longest = HEAD_LENGTHS[0]
    start = message[:longest]
    if normal_space(start):
        return start  # whatever follows, the normalised text begins with these characters
    return normalize_space(message[: longest * 4])[:longest]


def _tail_end(message: str) -> str:
    """A message's last :data:`TAIL_LENGTH` characters, as tails are compared with them.

    Whitespace runs count as single spaces, as a re-wrapped paste is matched.
    """
    window = TAIL_LENGTH * 4
    end = normalize_space(message[-window:])
    if len(end) <= TAIL_LENGTH and len(message) > window:
        end = normalize_space(message)  # the window began inside a long whitespace run
    return end[-TAIL_LENGTH:]


def _add_members(group: object, found: list[int]) -> bool:
    """Add a head's or tail's templates to ``found``; False when they are split further."""
    if type(group) is int:
        found.append(group)
    elif type(group) is tuple:
        found.extend(group)
    else:
        return False
    return True


def _add_ending(group: _Members, end: str, tails: list[str], found: list[int]) -> None:
    """Add the templates of a group whose tail ends a message (``end``: its last characters)."""
    if isinstance(group, int):
        if end.endswith(tails[group]):
            found.append(group)
    else:
        for number in group:
            if end.endswith(tails[number]):
                found.append(number)


def path_variants(path: str) -> list[str]:
    """Return a record path and its forms without source-layout prefixes (``src/``, ``python/``)."""
    variants = [path]
    while True:
        for prefix in LAYOUT_PREFIXES:
            if variants[-1].startswith(prefix) and "/" in variants[-1][len(prefix) :]:
                variants.append(variants[-1][len(prefix) :])
                break
        else:
            return variants


def in_package(path: str, package: str) -> bool:
    """Whether a record path is in a top-level package (``django/…`` or ``django.py``)."""
    return any(v.startswith(package + "/") or v == package + ".py" for v in path_variants(path))


def candidate_keys(literals: Iterable[str]) -> list[str]:
    """List the prefilter keys a template could use (windows of its literal runs).

    Args:
        literals: The template's literal runs.

    Returns:
        Keys of at most :data:`KEY_LENGTH` characters holding at least three letters or
        digits; empty when the template has no usable literal.
    """
    keys: list[str] = []
    for literal in literals:
        if not _usable(literal):
            continue
        if len(literal) <= KEY_LENGTH:
            keys.append(literal)
            continue
        middle = (len(literal) - KEY_LENGTH) // 2
        for start in (0, middle, len(literal) - KEY_LENGTH):
            window = literal[start : start + KEY_LENGTH]
            if _usable(window) and window not in keys:
                keys.append(window)
    return keys


def _csr(groups: Sequence[Sequence[int]]) -> tuple[array[int], array[int]]:
    """Pack lists of ints as (starts, items): group ``g`` is ``items[starts[g]:starts[g+1]]``."""
    starts = array("i", [0])
    items = array("i")
    for group in groups:
        items.extend(group)
        starts.append(len(items))
    return starts, items


INDEX_FIELDS: Final[tuple[str, ...]] = (
    "version",
    "engines",
    "_literals",
    "_shapes",
    "_holes",
    "_generic",
    "_template_starts",
    "_template_items",
    "_bucket_starts",
    "_bucket_items",
    "_record_template",
    "_rowids",
    "_lines",
    "_end_lines",
    "_class_ids",
    "_path_ids",
    "_kind_ids",
    "_class_names",
    "_wrappers",
    "_by_class",
    "_path_names",
    "_kind_names",
    "_path_starts",
    "_path_items",
    "_by_basename",
    "_compiled",
    "_heads",
    "_head_lengths",
    "_shorter_heads",
    "_tails",
    "_free_words",
    "_ancestors",
    "_packages",
)
"""A :class:`MatcherIndex`'s attributes, as it is pickled (a test checks they are all)."""


class MatcherIndex:
    """Templates, their records and the prefilter, ready to answer lookups.

    Everything is kept in flat arrays and lists of plain tuples and strings, so that a cached
    index of a million records loads in seconds. Templates and records are numbered from 0;
    records in row id order.

    Args:
        version: The store version token the index was built from.
    """

    def __init__(self, version: str) -> None:
        self.version = version
        self.engines: tuple[PrefilterEngine | None, ...] = (None, None, None, None)
        self._literals: list[tuple[str, ...]] = []
        self._shapes = array("i")
        """Per template, in one number: its literal characters times 4 (``>> 2``), plus
        :data:`MULTILINE` when its literals hold a line break, plus :data:`SPACED` when they
        hold a run of whitespace (``"interface.  See"``). One read tells verification all
        three: it took 1.75 µs a message of ``benchmarks/match.py`` against 1.96 µs with an
        array each."""
        self._holes: list[tuple[str, ...]] = []
        self._generic = bytearray()
        self._template_starts = array("i", [0])
        self._template_items = array("i")
        self._bucket_starts = array("i", [0])
        self._bucket_items = array("i")
        self._record_template = array("i")
        self._rowids = array("q")
        self._lines = array("i")
        self._end_lines = array("i")
        self._class_ids = array("i")
        self._path_ids = array("i")
        self._kind_ids = array("i")
        self._class_names: list[str] = []
        self._wrappers: frozenset[str] | None = None
        self._by_class: dict[str, list[int]] | None = None
        self._path_names: list[str] = []
        self._kind_names: list[str] = []
        self._path_starts = array("i", [0])
        self._path_items = array("i")
        self._by_basename: dict[str, tuple[int, ...]] = {}
        self._compiled: dict[int, CompiledTemplate] = {}
        self._heads: _Heads = {}
        self._head_lengths: dict[str, tuple[int, ...]] = {}
        self._shorter_heads: dict[str, int] = {}
        """Of each head, which shorter heads begin it: bit ``i`` for the head of length
        ``HEAD_LENGTHS[i]``. Once the longest head a text begins with is found, only those
        are looked up, each found (a small int per head: a tuple of their entries doubled
        the time to load a cached index of a million records)."""
        self._tails: list[str] = []
        self._free_words: dict[str, _Members] = {}
        """The templates without a head, by a word of theirs (see
        :func:`~errdex.match.compile.bounded_words`): a whole message is split into words
        and each is looked up, where a scan of it for their keys costs more."""
        self._ancestors: dict[str, frozenset[str]] = {}
        self._packages: dict[str, bool] = {}
        """:meth:`has_package`'s answers, worked out on first use."""

    def __reduce__(self) -> tuple[object, tuple[dict[str, object]]]:
        # Explicit state, not ``__dict__``: compiled with mypyc (see errdex/_native.py) the
        # class has no ``__dict__``, and unpickling cannot call ``__init__`` without a version.
        state = {name: getattr(self, name) for name in INDEX_FIELDS}
        state["_compiled"] = {}  # rebuilt on use; not worth the bytes on disk
        state["_by_class"] = None
        return _restore_index, (state,)

    # -- templates ---------------------------------------------------------------------------

    @property
    def template_count(self) -> int:
        """How many distinct templates the index holds."""
        return len(self._literals)

    def template(self, number: int) -> CompiledTemplate:
        """Return a template's matcher (made on first use, then kept)."""
        compiled = self._compiled.get(number)
        if compiled is None:
            compiled = CompiledTemplate(literals=self._literals[number], holes=self._holes[number])
            self._compiled[number] = compiled
        return compiled

    def match(self, number: int, text: str, start: int = 0) -> tuple[str, ...] | None:
        """Match a whole message (or its end, from ``start``) against a template.

        Returns:
            The value captured by each hole, or None when the template does not produce it.
        """
        return match_literals(self._literals[number], text, start)

    def verify(
        self, numbers: Iterable[int], text: str, *, loose: bool = False
    ) -> list[tuple[int, tuple[str, ...], bool]]:
        """Match a whole message against templates; keep those that produce it.

        Args:
            numbers: The templates (the prefilter's candidates).
            text: The message.
            loose: Also try every template with whitespace runs made single spaces (else only
                those whose literals hold a line break or a run of spaces).

        Returns:
            ``(template, captures, loosely)`` for each template that produces the message;
            ``loosely`` when only its whitespace differs.
        """
        found: list[tuple[int, tuple[str, ...], bool]] = []
        literals_of, shapes = self._literals, self._shapes
        size = len(text)
        normalized = ""
        for number in numbers:
            # A message holds all its template's literal text: a longer template cannot match
            # (cheaper to tell than to try; a template with a short head is often such).
            shape = shapes[number]
            captures = match_literals(literals_of[number], text) if shape >> 2 <= size else None
            if captures is not None:
                found.append((number, captures, False))
            elif loose or shape & (MULTILINE | SPACED):
                # A page that shows the message (an issue's comment) makes a run of spaces one.
                normalized = normalized or normalize_space(text)
                captures = self.template(number).match_loose(normalized, normalized=True)
                if captures is not None:
                    found.append((number, captures, True))
        return found

    def verify_cut(
        self, text: str, *, multiline: bool = False, ends: tuple[str, ...] = ("",)
    ) -> list[tuple[int, tuple[str, ...], int]]:
        """Find the templates whose message a text cut short (``…``) can be the start of.

        Candidates come from the text's head (its end is gone, so no tail tells them apart)
        and from the automaton of templates that begin with a hole.

        Args:
            text: The message without its cut mark.
            multiline: Only the templates whose text has a line break.
            ends: Each is tried after the text in turn (a line break, say), the candidates
                found once.

        Returns:
            ``(template, captures, literal characters shown)`` for each template and end it
            fits (the end's characters not counted).
        """
        numbers = self._in_buckets(self.engines[FREE], text)
        for head in self.head_groups(_head_start(text)):
            pending: list[object] = [head]
            while pending and len(numbers) < MAX_CUT_CANDIDATES:
                group = pending.pop()
                if not _add_members(group, numbers):
                    assert isinstance(group, dict)  # split by tail, then by key
                    pending.extend(group.values())
        found: list[tuple[int, tuple[str, ...], int]] = []
        for number in numbers[:MAX_CUT_CANDIDATES]:
            if multiline and not self._shapes[number] & MULTILINE:
                continue
            for end in ends:
                matched = match_cut(self._literals[number], text + end)
                if matched is not None:
                    found.append((number, matched[0], matched[1] - len(end)))
        return found

    def literals(self, number: int) -> tuple[str, ...]:
        """Return a template's literal runs (one more than its holes)."""
        return self._literals[number]

    def literal_length(self, number: int) -> int:
        """How many literal characters a template has (its specificity)."""
        return self._shapes[number] >> 2

    def is_generic(self, number: int) -> bool:
        """Whether a template has no usable literal (reachable through frames only)."""
        return bool(self._generic[number])

    def records_of(self, number: int, limit: int | None = None) -> array[int]:
        """Return a template's records (its first ``limit`` when given)."""
        starts = self._template_starts
        start, end = starts[number], starts[number + 1]
        if limit is not None:
            end = min(end, start + limit)
        return self._template_items[start:end]

    def candidates(self, message: str, *, anchored: bool = False) -> list[int]:
        """Return the templates that may produce ``message`` (each once).

        Args:
            message: The text.
            anchored: The whole text must be the message (not a message inside a log line):
                then templates that begin with a literal come from their head, and only the
                others from the automaton. Otherwise the message may sit anywhere in the
                text, and only the templates of at least :data:`SPECIFIC` literal characters
                are looked for (a walk of the automaton costs per key it finds, and a log
                line holds the keys of many short templates: ``and``, ``request``).
        """
        if not message:
            return []
        if not anchored:
            return self._in_buckets(self.engines[ALL], message)
        # A whole message also ends with its template's tail: checking it is much cheaper
        # than verifying the template.
        end = _tail_end(message)
        tails = self._tails
        found: list[int] = []
        for number in self._in_buckets(self.engines[WORDLESS], message):
            if end.endswith(tails[number]):
                found.append(number)
        if self._free_words:
            for members in filed_under(self._free_words, message):
                _add_ending(members, end, tails, found)
        occurred: list[set[int]] = []  # the crowded automaton's buckets, walked once
        for group in self.head_groups(_head_start(message)):
            if isinstance(group, dict):
                self._by_tail(message, end, group, found, occurred)
            else:
                _add_ending(group, end, tails, found)
        return found

    def head_groups(self, start: str) -> list[_Members | _ByTail]:
        """Return the head table's entries for every head a text begins with, longest first.

        Args:
            start: The text's first characters, as :func:`_head_start` gives them.
        """
        heads, size = self._heads, len(start)
        for length in self._head_lengths.get(start[:PREFIX_LENGTH], ()):
            if length > size:
                continue
            head = start[:length]
            group = heads.get(head)
            if group is not None:
                # The longest head the text begins with: the shorter heads that begin it
                # begin the text too, and no other does.
                groups = [group]
                shorter = self._shorter_heads.get(head, 0)
                if shorter:
                    for bit, shorter_length in enumerate(HEAD_LENGTHS):
                        if shorter >> bit & 1:
                            groups.append(heads[head[:shorter_length]])
                return groups
        # Heads shorter than the prefix: a first literal of one or two characters ("'{x}'").
        group = heads.get(start[:1]) if start else None
        return [] if group is None else [group]

    def _in_buckets(self, engine: PrefilterEngine | None, text: str) -> list[int]:
        """The templates of every bucket whose key an automaton finds in ``text``."""
        found: list[int] = []
        if engine is not None:
            starts, items = self._bucket_starts, self._bucket_items
            few = engine.few  # searched here: cheaper than the engine's method (see its doc)
            buckets = [b for key, b in few if key in text] if few else set(engine.buckets(text))
            for bucket in buckets:
                found.extend(items[starts[bucket] : starts[bucket + 1]])
        return found

    def _by_tail(
        self,
        message: str,
        end: str,
        by_tail: _ByTail,
        found: list[int],
        occurred: list[set[int]],
    ) -> None:
        """Add the templates of a shared head whose tail ends the message (``end``: its tail)."""
        size = len(end)
        for length in range(size, -1, -1):
            group = by_tail.get(end[size - length :])
            if group is not None and not _add_members(group, found):
                # Still many ("Invalid {x}"): only those whose key occurs in the message.
                if not occurred:
                    crowded = self.engines[CROWDED]
                    occurred.append(set(crowded.buckets(message)) if crowded else set())
                for bucket in occurred[0]:
                    found.extend(group.get(bucket, ()))  # type: ignore[union-attr]

    def find_in(self, text: str) -> list[tuple[int, tuple[str, ...]]]:
        """Find the specific templates that produced the *end* of a line (behind a log prefix).

        Only templates of at least :data:`SPECIFIC` literal characters are looked for: a
        shorter one found inside a line is no evidence (see :meth:`candidates`). Each is tried
        at every place its first literal occurs; a template that starts with a hole absorbs
        the prefix into that hole.

        Args:
            text: One line.

        Returns:
            ``(template, captures)`` for each template that matches, in candidate order.
        """
        found: list[tuple[int, tuple[str, ...]]] = []
        for number in self.candidates(text):
            literals = self._literals[number]
            first = literals[0]
            start = text.find(first) if first else 0
            tries = 0
            while start >= 0 and tries < MAX_STARTS:
                captures = match_literals(literals, text, start)
                if captures is not None:
                    found.append((number, captures))
                    break
                tries += 1
                start = text.find(first, start + 1) if first else -1
        return found

    # -- records -----------------------------------------------------------------------------

    @property
    def record_count(self) -> int:
        """How many records the index holds."""
        return len(self._rowids)

    @property
    def rowids(self) -> array[int]:
        """Per record, its row id in the store (ascending)."""
        return self._rowids

    def template_of(self, record: int) -> int:
        """Return a record's template."""
        return self._record_template[record]

    def error_class(self, record: int) -> str:
        """Return a record's error class."""
        return self._class_names[self._class_ids[record]]

    def wrapper_classes(self) -> frozenset[str]:
        """Classes the source raises with another error's message (``X(str(e)) from e``).

        Their records are one hole that shows a caught error (``{str(e)}``, ``{e}``): a
        paste of such a class shows the message of some other record. Worked out once.
        """
        found = self._wrappers
        if found is None:
            lone = {
                number
                for number, holes in enumerate(self._holes)
                if len(holes) == 1
                and not any(self._literals[number])
                and _CAUGHT_HOLE.fullmatch(holes[0]) is not None
            }
            found = self._wrappers = frozenset(
                self._class_names[self._class_ids[record]]
                for record, template in enumerate(self._record_template)
                if template in lone
            )
        return found

    def has_package(self, package: str) -> bool:
        """Whether some record's file is in this top-level package (worked out once each)."""
        known = self._packages
        if package not in known:
            known[package] = any(in_package(path, package) for path in self._path_names)
        return known[package]

    def knows_classes(self) -> bool:
        """Whether the store told the sources' exception classes (stores before version 5 not)."""
        return bool(self._ancestors)

    def defines(self, name: str, package: str = "") -> bool:
        """Whether a mined source defines an exception class of this name.

        Args:
            name: The class's name.
            package: Only in this top-level package (``django``), when given.
        """
        return f"{package}:{name}" in self._ancestors

    def ancestors(self, name: str, package: str = "") -> frozenset[str]:
        """The ancestors' names of the exception classes of this name the sources define.

        Args:
            name: The class's name.
            package: Only of the classes in this top-level package, when given: django's
                ``OperationalError`` is not SQLAlchemy's, which derives from ``DBAPIError``.
        """
        return self._ancestors.get(f"{package}:{name}", frozenset())

    def records_of_class(self, name: str) -> list[int]:
        """Return the records that raise a class (by its name), worked out on first use."""
        by_class = self._by_class
        if by_class is None:
            by_id: dict[int, list[int]] = {}
            for record, class_id in enumerate(self._class_ids):
                by_id.setdefault(class_id, []).append(record)
            names = self._class_names
            by_class = self._by_class = {names[i]: found for i, found in by_id.items()}
        return by_class.get(name, [])

    def path(self, record: int) -> str:
        """Return a record's file path."""
        return self._path_names[self._path_ids[record]]

    def line(self, record: int) -> int:
        """Return the first line of a record's statement."""
        return self._lines[record]

    def end_line(self, record: int) -> int:
        """Return the last line of a record's statement or message."""
        return self._end_lines[record]

    def kind(self, record: int) -> str:
        """Return a record's site kind."""
        return self._kind_names[self._kind_ids[record]]

    def records_in_file(self, frame_path: str, *, logged: bool = False) -> list[int]:
        """Return the records whose file path is a suffix of a frame's path.

        A repository path may carry a source-layout prefix that an installed package does not
        (``python/sglang/…`` is ``site-packages/sglang/…``; ``src/pkg/…`` is ``pkg/…``), so
        the record's path also counts without those prefixes.

        Args:
            frame_path: A path as a traceback shows it (absolute, relative, Windows).
            logged: The path is where a log record was made: a bare file name (logging's
                ``%(filename)s``: ``[WARNING|modeling_utils.py:1404]``) is every file of that
                name. (In a traceback it is the user's own script.)

        Returns:
            Record indexes, in index order.
        """
        normalized = frame_path.replace("\\", "/")
        name = normalized.rsplit("/", 1)[-1]
        # A package-relative frame path (Java's ``org/foo/Bar.java``, derived from the frame's
        # class) is a suffix of the record's ``src/main/java/org/foo/Bar.java`` (#7).
        relative = (
            "/" in normalized and not normalized.startswith(("/", ".")) and ":" not in normalized
        )
        found: list[int] = []
        starts, items = self._path_starts, self._path_items
        bare = logged and "/" not in normalized
        for path_id in self._by_basename.get(name, ()):
            if bare or any(
                normalized == variant
                or normalized.endswith("/" + variant)
                or (relative and variant.endswith("/" + normalized))
                for variant in path_variants(self._path_names[path_id])
            ):
                found.extend(items[starts[path_id] : starts[path_id + 1]])
        return sorted(found)


def build_index(
    rows: Iterable[IndexRow],
    *,
    version: str,
    engine: str = "aho-corasick",
    classes: Iterable[tuple[str, str, str]] = (),
) -> MatcherIndex:
    """Build an index from a store's index rows.

    A template's leading and trailing whitespace is not kept: pasted messages come trimmed.

    Args:
        rows: ``(rowid, class, path, line, end line, kind, template JSON)`` per record, in
            row id order.
        version: The store's version token.
        engine: The prefilter engine (``aho-corasick`` or ``hyperscan``).
        classes: ``(name, module, ancestors JSON)`` of the exception classes the sources define
            (:meth:`RecordStore.class_rows`); a name several define has all their ancestors,
            under the name alone and under each top-level package's.

    Returns:
        The index.
    """
    with collector_paused():
        return _build_index(rows, version=version, engine=engine, classes=classes)


def _build_index(
    rows: Iterable[IndexRow],
    *,
    version: str,
    engine: str,
    classes: Iterable[tuple[str, str, str]],
) -> MatcherIndex:
    index = MatcherIndex(version)
    ancestors: dict[str, set[str]] = {}
    for name, module, found in classes:
        bases = {str(a).rpartition(".")[2] for a in json.loads(found)}
        ancestors.setdefault(f":{name}", set()).update(bases)
        ancestors.setdefault(f"{module.partition('.')[0]}:{name}", set()).update(bases)
    index._ancestors = {name: frozenset(found) for name, found in ancestors.items()}
    template_ids: dict[str, int] = {}
    members: list[list[int]] = []
    names: dict[str, dict[str, int]] = {"class": {}, "path": {}, "kind": {}}
    lists = {
        "class": index._class_names,
        "path": index._path_names,
        "kind": index._kind_names,
    }

    def intern(table: str, value: str) -> int:
        known = names[table]
        number = known.get(value)
        if number is None:
            number = known[value] = len(known)
            lists[table].append(value)
        return number

    path_records: list[list[int]] = []
    hole_sets: dict[tuple[str, ...], tuple[str, ...]] = {}
    for record, (rowid, error_class, path, line, end_line, kind, template) in enumerate(rows):
        number = template_ids.get(template)
        if number is None:
            number = template_ids[template] = len(members)
            members.append([])
            literals, holes = _split(template)
            index._literals.append(literals)
            # Hole names repeat across templates (``name``, ``value``): one tuple for each set.
            index._holes.append(hole_sets.setdefault(holes, holes))
            index._shapes.append(
                sum(map(len, literals)) << 2
                | (MULTILINE if any("\n" in literal for literal in literals) else 0)
                | (SPACED if any(_SPACE_RUN.search(literal) for literal in literals) else 0)
            )
        members[number].append(record)
        index._record_template.append(number)
        index._rowids.append(rowid)
        # Lines the record model bounds; a store written otherwise must not stop the index.
        line = min(line, _MAX_LINE)
        index._lines.append(line)
        index._end_lines.append(min(max(line, end_line), _MAX_LINE))
        index._class_ids.append(intern("class", error_class))
        index._kind_ids.append(intern("kind", kind))
        path_id = intern("path", path)
        index._path_ids.append(path_id)
        if path_id == len(path_records):
            path_records.append([])
        path_records[path_id].append(record)
    index._template_starts, index._template_items = _csr(members)
    index._path_starts, index._path_items = _csr(path_records)
    by_basename: dict[str, list[int]] = {}
    for path_id, path in enumerate(index._path_names):
        by_basename.setdefault(path.rsplit("/", 1)[-1], []).append(path_id)
    index._by_basename = {name: tuple(ids) for name, ids in by_basename.items()}
    _build_prefilter(index, engine)
    return index


def _split(template: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    literals = [""]
    holes: list[str] = []
    for text, hole in json.loads(template):
        if hole:
            holes.append(text)
            literals.append("")
        else:
            literals[-1] += text
    literals[0] = literals[0].lstrip()
    literals[-1] = literals[-1].rstrip()
    return tuple(literals), tuple(holes)


def template_head(first: str) -> str:
    """What a whole message a template produces must start with: its first characters.

    Empty (anything may start it) when the template starts with a hole, or when those
    characters hold whitespace other than single spaces, which a re-wrapped paste may have
    changed (the loose match still finds it).
    """
    length = next((n for n in HEAD_LENGTHS if len(first) >= n), 0)
    head = first[:length]
    if "  " in head or any(char.isspace() and char != " " for char in head):
        return ""
    return head


TAIL_LENGTH: Final = 4
"""How many trailing characters of a template's last literal make its tail."""


def template_tail(last: str) -> str:
    """What a whole message a template produces must end with: its last characters.

    At most :data:`TAIL_LENGTH` characters of its last literal, whitespace runs counted as
    single spaces (a re-wrapped paste may have changed them); empty when the template ends
    with a hole or with whitespace.
    """
    if not last or last[-1].isspace():
        return ""
    return _SPACES.sub(" ", last[-TAIL_LENGTH * 4 :])[-TAIL_LENGTH:]


def _members(group: list[int]) -> _Members:
    return group[0] if len(group) == 1 else tuple(group)


def _first_line(literals: tuple[str, ...]) -> list[str]:
    """The literal runs of a template's first line (those before its first line break)."""
    found: list[str] = []
    for literal in literals:
        before, newline, _ = literal.partition("\n")
        found.append(before)
        if newline:
            break
    return found


def _build_prefilter(index: MatcherIndex, engine: str) -> None:
    """Choose each template's key and head, and build the automata and the head table."""
    literals_of = index._literals
    interned: dict[str, str] = {}
    tails = index._tails = [
        interned.setdefault(tail, tail)
        for tail in (template_tail(literals[-1]) for literals in literals_of)
    ]
    interned.clear()
    heads: dict[str, list[int]] = {}
    for number, literals in enumerate(literals_of):
        head = template_head(literals[0])
        if head:
            heads.setdefault(head, []).append(number)
    # Templates that neither their head nor their tail tell apart from many others.
    crowded: dict[str, set[str]] = {}
    for head, group in heads.items():
        if len(group) > SHARED_HEAD:
            counts = Counter(tails[number] for number in group)
            crowded[head] = {tail for tail, count in counts.items() if count > BIG_HEAD}
    # Two passes over the templates instead of keeping every template's keys: at a million
    # templates those lists would be a few hundred megabytes at the build's peak.
    shared = Counter(key for literals in literals_of for key in candidate_keys(literals))
    # The templates without a head, filed by a word (those with a usable key: the others are
    # generic).
    free = [
        number
        for number, literals in enumerate(literals_of)
        if not template_head(literals[0]) and candidate_keys(literals)
    ]
    filed, wordless = by_words([literals_of[number] for number in free])
    index._free_words = {
        word: _members([free[position] for position in positions])
        for word, positions in filed.items()
    }
    wordless_numbers = {free[position] for position in wordless}
    del free, filed, wordless
    bucket_of: tuple[dict[str, int], ...] = ({}, {}, {}, {})
    members: tuple[list[list[int]], ...] = ([], [], [], [])
    crowded_bucket_of = array("i")  # per template, its bucket in the crowded automaton
    for number, literals in enumerate(literals_of):
        keys = candidate_keys(literals)
        if not keys:
            index._generic.append(1)
            crowded_bucket_of.append(-1)
            continue
        index._generic.append(0)
        head = template_head(literals[0])
        if not head and index._shapes[number] & MULTILINE:
            # A template that begins with a hole is found in a paste of its first line alone
            # (httpx's ``{error_type} '{code} {phrase}' for url '{url}'`` goes on with a
            # line of advice) only by a key of that line (see ``Explainer._verify_first_line``).
            keys = candidate_keys(_first_line(literals)) or keys
        # The least shared key keeps candidate lists short; longer wins a tie.
        key = min(keys, key=lambda k: (shared[k], -len(k)))
        # Inside a line only a specific template is looked for (see :meth:`find_in`).
        automata = [ALL] if index._shapes[number] >> 2 >= SPECIFIC else []
        if not head:
            automata.append(FREE)
            if number in wordless_numbers:
                automata.append(WORDLESS)
        elif tails[number] in crowded.get(head, ()):
            automata.append(CROWDED)
        crowded_bucket = -1
        for automaton in automata:
            bucket = bucket_of[automaton].get(key)
            if bucket is None:
                bucket = bucket_of[automaton][key] = len(members[automaton])
                members[automaton].append([])
            members[automaton][bucket].append(number)
            if automaton == CROWDED:
                crowded_bucket = bucket
        crowded_bucket_of.append(crowded_bucket)
    shared.clear()  # not needed while the automata are built (the peak)
    # Buckets are numbered across the automata, in their order.
    offsets = [0]
    for buckets in members[:-1]:
        offsets.append(offsets[-1] + len(buckets))
    engines: list[PrefilterEngine | None] = []
    for automaton, offset in enumerate(offsets):
        keys = list(bucket_of[automaton])
        bucket_of[automaton].clear()
        engines.append(make_engine(engine, keys, offset=offset) if keys else None)
    index.engines = tuple(engines)
    index._bucket_starts, index._bucket_items = _csr(
        [group for found in members for group in found]
    )
    table: _Heads = {}
    for head, group in heads.items():
        group = [number for number in group if not index._generic[number]]
        if not group:
            continue
        if len(group) <= SHARED_HEAD:
            table[head] = _members(group)
            continue
        # A head several templates share ("Invalid "): split them by their tails.
        by_tail: dict[str, list[int]] = {}
        for number in group:
            by_tail.setdefault(tails[number], []).append(number)
        split: _ByTail = {}
        for tail, numbers in by_tail.items():
            if tail not in crowded.get(head, ()):
                split[tail] = _members(numbers)
                continue
            # Still many: split by their key's bucket.
            by_key: dict[int, list[int]] = {}
            for number in numbers:
                bucket = crowded_bucket_of[number] + offsets[CROWDED]
                by_key.setdefault(bucket, []).append(number)
            split[tail] = {bucket: tuple(found) for bucket, found in by_key.items()}
        table[head] = split
    index._heads = table
    lengths: dict[str, set[int]] = {}
    for head in table:
        if len(head) >= PREFIX_LENGTH:
            lengths.setdefault(head[:PREFIX_LENGTH], set()).add(len(head))
    index._head_lengths = {
        prefix: tuple(sorted(found, reverse=True)) for prefix, found in lengths.items()
    }
    shorter: dict[str, int] = {}
    for head in table:
        bits = 0
        for bit, length in enumerate(HEAD_LENGTHS):
            if length < len(head) and head[:length] in table:
                bits |= 1 << bit
        if bits:
            shorter[head] = bits
    index._shorter_heads = shorter


def index_path(db_path: Path, engine: str = "aho-corasick") -> Path:
    """Return where the matcher index of a store is cached (one file per engine)."""
    infix = "" if engine == "aho-corasick" else f".{engine}"
    return db_path.with_name(f"{db_path.name}{infix}.matcher")


def save_index(index: MatcherIndex, path: Path) -> None:
    """Write an index atomically (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            pickle.dump(
                (FORMAT_VERSION, index.version, index), stream, protocol=pickle.HIGHEST_PROTOCOL
            )
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _restore_index(state: dict[str, object]) -> MatcherIndex:
    """Rebuild a pickled index from its state (see :meth:`MatcherIndex.__reduce__`)."""
    index = MatcherIndex(str(state["version"]))
    for name, value in state.items():
        setattr(index, name, value)
    return index


def load_index(path: Path, *, version: str) -> MatcherIndex | None:
    """Load a cached index when it was built from the store's current version.

    The file is errdex's own cache next to the store (never downloaded or shared), which is
    why unpickling it is acceptable.

    Args:
        path: The cache file.
        version: The store's current version token.

    Returns:
        The index, or None when it is missing, stale or unreadable.
    """
    try:
        with path.open("rb") as stream:
            loaded = pickle.load(stream)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError):
        return None
    if (
        not isinstance(loaded, tuple)
        or len(loaded) != 3
        or loaded[0] != FORMAT_VERSION
        or loaded[1] != version
        or not isinstance(loaded[2], MatcherIndex)
    ):
        return None
    return loaded[2]
