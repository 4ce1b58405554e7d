"""Templates → matchers that can never backtrack catastrophically.

A template is literal text with holes, and a hole may hold any text (including nothing,
newlines, or text that looks like the template's own literals). Instead of a regex with one
``(.*?)`` per hole — whose backtracking is polynomial in the input with the number of holes —
:class:`CompiledTemplate` matches by plain string search: the first literal must be a prefix,
the last a suffix, and every literal between is found leftmost after the previous one. For
patterns whose only metacharacter is "any text" this greedy-leftmost strategy finds a match
whenever one exists (and gives the captures a lazy ``(.*?)`` regex would), in time linear in
the input per literal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, TypeVar

from errdex.models import MessageTemplate

_T = TypeVar("_T", bound=Hashable)


@dataclass(frozen=True)
class CompiledTemplate:
    """A template ready to match whole messages.

    Attributes:
        literals: The literal runs, ``len(holes) + 1`` of them (the first and last may be
            empty): literal, hole, literal, …, hole, literal.
        holes: The holes' source texts, in order.
    """

    literals: tuple[str, ...]
    holes: tuple[str, ...]
    literal_length: int = field(init=False, repr=False, compare=False)
    """How many literal characters the template has (its specificity); counted once."""
    multiline: bool = field(init=False, repr=False, compare=False)
    """Whether a literal holds a line break (then a re-wrapped message may still match)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "literal_length", sum(len(text) for text in self.literals))
        object.__setattr__(self, "multiline", any("\n" in text for text in self.literals))

    def match_loose(self, message: str, *, normalized: bool = False) -> tuple[str, ...] | None:
        """Match a message whose whitespace was changed (wrapped, re-indented, trimmed lines).

        Every run of whitespace in the message and in the template's literals counts as one
        space; the captures are taken from the normalised message.

        Args:
            message: The message.
            normalized: The message is already :func:`normalize_space`'d (a caller trying
                many templates normalises it once).
        """
        return _loose(self).match(message if normalized else normalize_space(message))

    def match(self, message: str, start: int = 0) -> tuple[str, ...] | None:
        """Match a whole message (or its end, from ``start``).

        Args:
            message: The text to match.
            start: Match ``message[start:]`` (without copying it).

        Returns:
            The value captured by each hole, or None when the message does not match.
        """
        return match_literals(self.literals, message, start)


def match_literals(
    literals: tuple[str, ...], message: str, start: int = 0
) -> tuple[str, ...] | None:
    """Match a whole message (or its end, from ``start``) against a template's literal runs.

    Args:
        literals: The literal runs around the holes (one more than the holes).
        message: The text to match.
        start: Match ``message[start:]`` (without copying it).

    Returns:
        The value captured by each hole, or None when the message does not match.
    """
    count = len(literals)
    if count == 1:
        return () if message[start:] == literals[0] else None
    first, last = literals[0], literals[-1]
    position = start + len(first)
    end = len(message) - len(last)
    if end < position or not message.startswith(first, start) or not message.endswith(last):
        return None
    if count == 2:  # one hole, the most common template
        return (message[position:end],)
    captures: list[str] = []
    for number in range(1, count - 1):  # the middle literals (a slice would be a new tuple)
        literal = literals[number]
        found = message.find(literal, position, end)
        if found < 0:
            return None
        captures.append(message[position:found])
        position = found + len(literal)
    captures.append(message[position:end])
    return tuple(captures)


def match_cut(literals: tuple[str, ...], message: str) -> tuple[tuple[str, ...], int] | None:
    """Match a message cut short (``…``) against the start of what a template produces.

    Args:
        literals: The literal runs around the holes.
        message: The message, without the mark that it was cut.

    Returns:
        The captures (a hole the message does not reach holds ``…``) and how many literal
        characters the message shows, or None when it cannot be the start of the template.
    """
    first, holes = literals[0], len(literals) - 1
    if not message.startswith(first):
        return (("…",) * holes, len(message)) if first.startswith(message) else None
    position = shown = len(first)
    captures: list[str] = []
    for number, literal in enumerate(literals[1:], 1):
        if number == holes:  # the last literal ends the message when the message is whole
            end = len(message) - len(literal)
            found = end if literal and end >= position and message.endswith(literal) else -1
        else:
            found = message.find(literal, position) if literal else -1
        if found >= 0:
            captures.append(message[position:found])
            position, shown = found + len(literal), shown + len(literal)
            continue
        # Cut inside this hole, or inside the literal after it (its start ends the message).
        cut = next(
            (
                at
                for at in range(max(position, len(message) - len(literal) + 1), len(message))
                if literal.startswith(message[at:])
            ),
            len(message),
        )
        captures.append(message[position:cut] + ("…" if cut == len(message) else ""))
        shown += len(message) - cut
        break
    captures += ["…"] * (holes - len(captures))
    return tuple(captures), shown


def bounded_words(literals: tuple[str, ...]) -> list[str]:
    """The words of a template's literal text that every message it produces splits into.

    A word (a run of non-whitespace) counts when whitespace or the template's start is before
    it, and whitespace or the template's end after it: no hole's value can join it to other
    text. So ``message.split()`` of any message the template produces holds each of them,
    which finds a template in a dictionary by the message's words, where a scan of the
    message for its literal text costs more.

    Args:
        literals: The literal runs around the holes (one more than the holes).

    Returns:
        The words, in order (a word may repeat).
    """
    found: list[str] = []
    last = len(literals) - 1
    for number, literal in enumerate(literals):
        words = literal.split()
        if not words:
            continue
        if number and not literal[0].isspace():
            words = words[1:]  # the hole before it may end with more of it
        if words and number < last and not literal[-1].isspace():
            words = words[:-1]
        found.extend(words)
    return found


def by_words(templates: list[tuple[str, ...]]) -> tuple[dict[str, list[int]], list[int]]:
    """File templates under a word of theirs, the least shared one (longer wins a tie).

    Args:
        templates: Each template's literal runs.

    Returns:
        The templates' positions in ``templates`` by word, and the positions of those without
        a word (see :func:`bounded_words`).
    """
    words = [bounded_words(literals) for literals in templates]
    shared = Counter(word for found in words for word in set(found))
    filed: dict[str, list[int]] = {}
    wordless: list[int] = []
    for position, found in enumerate(words):
        if found:
            word = min(found, key=lambda w: (shared[w], -len(w)))
            filed.setdefault(word, []).append(position)
        else:
            wordless.append(position)
    return filed, wordless


_last_split: tuple[str, list[str]] = ("", [])
"""The last text :func:`filed_under` split, and its words: explain looks one message up in
two tables (the index's and the interpreter's), and the words' hashes are then computed once."""

_SPLIT_KEPT: Final = 4096
"""Longer texts are not kept in :data:`_last_split`."""


def filed_under(table: dict[str, _T], text: str) -> list[_T]:
    """The entries of a table of words (see :func:`by_words`) that a text's words find.

    Each entry comes once, in the order its word first occurs in the text.
    """
    global _last_split
    last = _last_split
    if last[0] is text:
        words = last[1]
    else:
        words = text.split()
        if len(text) <= _SPLIT_KEPT:
            _last_split = (text, words)
    hits = [entry for word in words if (entry := table.get(word)) is not None]
    return hits if len(hits) < 2 else list(dict.fromkeys(hits))


_SPACE: Final = re.compile(r"\s+")


def normal_space(text: str) -> bool:
    """Whether :func:`normalize_space` leaves a text as it is.

    Told by a few scans in C: the text is printable (``str.isprintable`` refuses every
    whitespace character ``str.split`` splits at but the space, a test checks them all),
    with one space between words and none at either end.
    """
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def normalize_space(text: str) -> str:
    """Collapse each run of whitespace into one space and trim the ends.

    Most texts already are so (:func:`normal_space`): they are returned as they are, where
    splitting made a string per word (explain normalises each message's first and last
    characters, #4). Other texts are split and joined.
    """
    if normal_space(text):
        return text
    return " ".join(text.split())  # what ``\s`` matches is what ``str.split`` splits at


@lru_cache(maxsize=4096)
def _loose(template: CompiledTemplate) -> CompiledTemplate:
    literals = [_SPACE.sub(" ", literal) for literal in template.literals]
    literals[0] = literals[0].lstrip()
    literals[-1] = literals[-1].rstrip()
    return CompiledTemplate(literals=tuple(literals), holes=template.holes)


@lru_cache(maxsize=65536)
def _compile(parts: tuple[tuple[str, bool], ...]) -> CompiledTemplate:
    literals: list[str] = [""]
    holes: list[str] = []
    for text, hole in parts:
        if hole:
            holes.append(text)
            literals.append("")
        else:
            literals[-1] += text
    return CompiledTemplate(literals=tuple(literals), holes=tuple(holes))


def compile_template(template: MessageTemplate) -> CompiledTemplate:
    """Compile a template into a matcher (cached).

    Args:
        template: The message template.

    Returns:
        The matcher; a message matches when it is what the template produces for some hole
        values (empty ones included).
    """
    return _compile(tuple((part.text, part.hole) for part in template.parts))
