"""JSON Lines: the dataset's seed format and errdex's full format, read and written exactly.

Each line is an envelope ``{"record": {...}, "datasetVersion": "..."}``. The seed format holds
exactly the seed's keys in its order; the full format adds errdex's keys after them. Reading
detects which one a line is; writing is compact (no spaces) with non-ASCII kept, as the dataset
writes it. ``.gz`` files are read and written compressed.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from errdex.errors import RecordFormatError
from errdex.models import MAX_LINE, SEED_KEYS, ErrorRecord, RecordEnvelope


class RecordFormat(str, Enum):
    """The JSONL flavours errdex reads and writes."""

    SEED = "seed"
    FULL = "full"


_SEED_KEY_SET = frozenset(SEED_KEYS)


def detect_format(record: dict[str, Any]) -> RecordFormat:
    """Tell whether a record object is in the seed format or errdex's full format.

    Args:
        record: The ``record`` object of one line.

    Returns:
        SEED when it holds exactly the seed's keys, FULL when it holds more.

    Raises:
        ValueError: Some of the seed's keys are missing.
    """
    keys = set(record)
    missing = _SEED_KEY_SET - keys
    if missing:
        raise ValueError(f"missing keys: {', '.join(sorted(missing))}")
    return RecordFormat.SEED if keys == _SEED_KEY_SET else RecordFormat.FULL


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A JSON escape of half a surrogate pair (``\\ud83d``), valid only as half of one."""


def parse_line(
    line: str, *, path: str = "", number: int = 0
) -> tuple[RecordEnvelope, RecordFormat]:
    """Parse one JSONL line into an envelope.

    Args:
        line: The line's text.
        path: The file, for error messages.
        number: The 1-based line number, for error messages.

    Returns:
        The envelope and the format the line was in.

    Raises:
        RecordFormatError: The line is not a valid seed or errdex record.
    """
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:  # also over-long integers and deep nesting
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise RecordFormatError(
            f"{path}:{number}: not JSON: {reason}", path=path, line=number
        ) from exc
    if _SURROGATE_ESCAPE.search(line) is not None:
        try:  # a pair is one character once parsed; a lone half cannot be written as UTF-8
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise RecordFormatError(
                f"{path}:{number}: not valid Unicode: a lone surrogate"
                f" ({exc.object[exc.start : exc.end].encode('unicode_escape').decode()})",
                path=path,
                line=number,
            ) from exc
    if not isinstance(data, dict) or not isinstance(data.get("record"), dict):
        raise RecordFormatError(
            f"{path}:{number}: expected an object with a 'record' object and a 'datasetVersion'",
            path=path,
            line=number,
        )
    try:
        flavour = detect_format(data["record"])
        envelope = RecordEnvelope.model_validate(data)
    except (ValueError, ValidationError) as exc:
        reason = _describe(exc)
        raise RecordFormatError(f"{path}:{number}: {reason}", path=path, line=number) from exc
    record = envelope.record
    for key, value in (
        ("lineNumber", record.line_number),
        ("sourceCodeStart", record.source_code_start),
        ("sourceCodeEnd", record.source_code_end),
        ("endLineNumber", record.end_line_number),
    ):
        if value is not None and value > MAX_LINE:
            raise RecordFormatError(
                f"{path}:{number}: record.{key}: {value} is past the last line a record may"
                f" name ({MAX_LINE})",
                path=path,
                line=number,
            )
    return envelope, flavour


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']} ({exc.error_count()} error(s))"
    return str(exc)


def read_jsonl(path: Path) -> Iterator[tuple[RecordEnvelope, RecordFormat]]:
    """Read every record of a JSONL file (``.gz`` too); blank lines are skipped.

    Args:
        path: The file.

    Yields:
        Each envelope with the format its line was in.

    Raises:
        RecordFormatError: A line is not a valid record (its number is in the message).
    """
    try:
        # Bytes, decoded line by line, so that a line that is not UTF-8 is named.
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise RecordFormatError(
                        f"{path}:{number}: not UTF-8", path=str(path), line=number
                    ) from exc
                if line.strip():
                    yield parse_line(line, path=str(path), number=number)
    except (OSError, EOFError) as exc:  # not gzip (gzip.BadGzipFile), cut short, unreadable
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise RecordFormatError(f"{path}: cannot read: {reason}", path=str(path)) from exc


def envelope_json(envelope: RecordEnvelope, flavour: RecordFormat) -> str:
    """Serialise one envelope as a compact JSON line (without the newline).

    Args:
        envelope: The record and its dataset version.
        flavour: SEED writes exactly the seed's keys; FULL adds errdex's after them.
    """
    record: ErrorRecord = envelope.record
    body = record.seed_dict() if flavour is RecordFormat.SEED else record.full_dict()
    version = envelope.model_dump(mode="json", include={"dataset_version"})["datasetVersion"]
    return json.dumps(
        {"record": body, "datasetVersion": version}, ensure_ascii=False, separators=(",", ":")
    )


def write_jsonl(envelopes: Iterable[RecordEnvelope], handle: IO[str], flavour: RecordFormat) -> int:
    """Write envelopes as JSON Lines.

    Args:
        envelopes: The records.
        handle: A text stream.
        flavour: The format to write.

    Returns:
        How many lines were written.
    """
    count = 0
    for envelope in envelopes:
        handle.write(envelope_json(envelope, flavour) + "\n")
        count += 1
    return count
