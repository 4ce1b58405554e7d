"""Scan logs: stream lines, find each error occurrence's record, group and count them.

Every line goes through the matcher index's literal prefilter (one Aho-Corasick pass); a
candidate template is verified at each place its first literal occurs, up to the end of the
line, so log prefixes (timestamps, levels, logger names) need no format-specific parsing.
Lines that look like errors but match no record are grouped by their text with numbers,
hexadecimal ids and quoted values masked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from errdex.match.index import MatcherIndex
from errdex.match.parse import repr_message

MAX_LINE = 20_000
"""Longer lines are cut to this many characters before matching (a scan must keep pace)."""

_ERROR_LOOKING = re.compile(
    r"\b(?:ERROR|CRITICAL|FATAL|WARN(?:ING)?|[Ee]rror|[Ee]xception|[Ff]ailed|[Pp]anic)\b"
)
_ERROR_HINT = re.compile("ERROR|CRITICAL|FATAL|WARN|rror|xception|ailed|anic")
"""What a line :data:`_ERROR_LOOKING` finds something in holds: a search of plain words,
which the regex engine skips through a line four times as fast (most log lines hold none)."""
_NOT_A_MESSAGE = re.compile(r"^\s*(?:File \"|Traceback \(most recent call last\)|\^+\s*$|~+)")
_TIMESTAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
)
_MASKS = (
    (
        re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
        "<time>",
    ),
    (re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\""), "<str>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{8,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),
)


@dataclass
class ScanGroup:
    """The occurrences of one error in the scanned logs.

    Attributes:
        key: What the occurrences share: ``record:<rowid>`` for a known error, else the
            masked text.
        rowids: The records (several when identical templates exist at several sites).
        count: How many lines.
        first_line: The number of the first line (1-based, across all inputs).
        last_line: The number of the last line.
        first_seen: The first timestamp seen on such a line, if any.
        last_seen: The last timestamp seen on such a line, if any.
        sample: One line, as it appeared.
        captures: The hole values of the first occurrence.
    """

    key: str
    rowids: list[int] = field(default_factory=list)
    count: int = 0
    first_line: int = 0
    last_line: int = 0
    first_seen: str | None = None
    last_seen: str | None = None
    sample: str = ""
    captures: tuple[str, ...] = ()


@dataclass
class ScanReport:
    """What a scan found.

    Attributes:
        lines: Lines read.
        matched: Lines that matched a record.
        unmatched: Error-looking lines that matched none.
        groups: Known errors, most frequent first.
        unknown: Unmatched error-looking lines grouped by masked text, most frequent first.
    """

    lines: int = 0
    matched: int = 0
    unmatched: int = 0
    groups: list[ScanGroup] = field(default_factory=list)
    unknown: list[ScanGroup] = field(default_factory=list)


def mask(text: str) -> str:
    """Mask the variable parts of a log message (times, quoted values, ids, numbers)."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text.strip()


class Scanner:
    """Matches log lines against an index and groups the occurrences.

    Args:
        index: The matcher index.
    """

    def __init__(self, index: MatcherIndex) -> None:
        self.index = index

    def match_line(self, line: str) -> tuple[int, tuple[str, ...]] | None:
        """Find the template that produced (the end of) a line.

        Args:
            line: One log line, without its newline.

        Returns:
            ``(template, captures)`` of the most specific matching template (one with at least
            :data:`~errdex.match.index.SPECIFIC` literal characters), or None.
        """
        found = self._most_specific(line)
        # A line that ends with an exception's repr (``failed: KeyError('x')``): the template
        # of its text, when it says more than the line's (the log call's ``failed: {exc}``);
        # its captured values hold no quote or bracket of the repr.
        inner = repr_message(line) if line.endswith(")") else None
        if inner is not None:
            within = self._most_specific(inner)
            length = self.index.literal_length
            if within is not None and (found is None or length(within[0]) >= length(found[0])):
                return within
        return found

    def _most_specific(self, line: str) -> tuple[int, tuple[str, ...]] | None:
        best: tuple[int, tuple[str, ...]] | None = None
        best_length = -1
        for number, captures in self.index.find_in(line):
            length = self.index.literal_length(number)
            if length > best_length:
                best, best_length = (number, captures), length
        return best

    def scan(
        self, lines: Iterable[str], *, progress: Callable[[int], None] | None = None
    ) -> ScanReport:
        """Scan log lines.

        Args:
            lines: The lines (with or without newlines).
            progress: Called with the number of lines read, every 10,000 lines.

        Returns:
            The grouped occurrences.
        """
        report = ScanReport()
        known: dict[int, ScanGroup] = {}
        unknown: dict[str, ScanGroup] = {}
        for number, raw in enumerate(lines, 1):
            line = raw[:MAX_LINE].rstrip()
            if progress is not None and number % 10_000 == 0:
                progress(number)
            report.lines = number
            if not line or _NOT_A_MESSAGE.match(line):
                continue
            found = self.match_line(line)
            if found is not None:
                template, captures = found
                group = known.get(template)
                if group is None:
                    records = self.index.records_of(template)
                    group = ScanGroup(
                        key=f"template:{template}",
                        rowids=[self.index.rowids[r] for r in records],
                        captures=captures,
                    )
                    known[template] = group
                _count(group, number, line)
                report.matched += 1
            elif _ERROR_HINT.search(line) and _ERROR_LOOKING.search(line):
                key = mask(line)
                group = unknown.get(key)
                if group is None:
                    group = unknown[key] = ScanGroup(key=key)
                _count(group, number, line)
                report.unmatched += 1
        report.groups = sorted(known.values(), key=lambda g: (-g.count, g.first_line))
        report.unknown = sorted(unknown.values(), key=lambda g: (-g.count, g.first_line))
        return report


def _count(group: ScanGroup, number: int, line: str) -> None:
    group.count += 1
    if not group.first_line:
        group.first_line = number
        group.sample = line
    group.last_line = number
    stamp = _TIMESTAMP.search(line, 0, 64)
    if stamp is not None:
        group.first_seen = group.first_seen or stamp.group(0)
        group.last_seen = stamp.group(0)
