"""Records: a source's sites → :class:`~errdex.models.ErrorRecord` objects.

Gives each record its stable id, slug, pattern, permalink and classification. The id is
derived from the repository, the file path, the error class, the template and the ordinal of
the site among identical ones in that file, and never from the line number, so it survives
edits above the site.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import quote

from errdex.analyze.classify import Classification, classify
from errdex.analyze.templates import seed_pattern
from errdex.models import (
    SCHEMA_VERSION,
    ErrorRecord,
    ErrorType,
    HandlingStrategy,
    MessageTemplate,
    RaiseSite,
    SeedRecord,
    SourceInfo,
    TemplatePart,
    slugify,
)

_HOLE_NAME = re.compile(r"\{([^{}]*)\}")
_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def template_from_message(record: SeedRecord) -> MessageTemplate:
    """Rebuild a template for a record that carries none (an imported seed record).

    The literal text comes from ``messagePattern`` (its ``(.+?)`` holes, escapes undone), which
    is unambiguous about braces; the holes are named after the ``{expr}`` parts of
    ``errorMessage`` when their counts agree.

    Args:
        record: The record.

    Returns:
        The template; a pattern that is not in the dataset's style gives the message as
        literal text split at its ``{expr}`` parts.
    """
    pieces = record.message_pattern.split("(.+?)")
    names = _HOLE_NAME.findall(record.error_message)
    literals = [_ESCAPED.sub(r"\1", piece) for piece in pieces]
    if any(re.search(r"(?<!\\)[.^$*+?{}\[\]|()]", piece) for piece in pieces):
        literals = _HOLE_NAME.split(record.error_message)[::2]
    if len(names) != len(literals) - 1:
        names = [f"h{index}" for index in range(len(literals) - 1)]
    parts: list[TemplatePart] = []
    for index, literal in enumerate(literals):
        if index:
            parts.append(TemplatePart(text=names[index - 1], hole=True))
        if literal:
            parts.append(TemplatePart(text=literal))
    return MessageTemplate(parts=tuple(parts))


def record_id(repo: str, path: str, error_class: str, template: str, ordinal: int) -> str:
    """Derive a record's stable id.

    Args:
        repo: The source's ``repo``.
        path: The file path.
        error_class: The class name.
        template: The ``errorMessage`` text.
        ordinal: The rank among identical (path, class, template) sites of the file.

    Returns:
        16 lowercase hex characters.
    """
    key = "\0".join((repo, path, error_class, template, str(ordinal)))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def permalink(repo: str, sha: str | None, path: str, start: int, end: int) -> str | None:
    """Return the GitHub permalink of a line range, when the repo is on GitHub and sha known.

    Args:
        repo: ``owner/name`` (other forms give None).
        sha: The commit.
        path: The file path in the repository.
        start: The first line.
        end: The last line.

    Returns:
        ``https://github.com/{repo}/blob/{sha}/{path}#L{start}-L{end}``, or None.
    """
    if not sha or repo.count("/") != 1 or ":" in repo:
        return None
    return f"https://github.com/{repo}/blob/{sha}/{quote(path)}#L{start}-L{end}"


def _classified(site: RaiseSite) -> Classification:
    """Classify a site; a classifier bug on one site must not lose the source's records."""
    try:
        return classify(site)
    except Exception:
        return Classification(
            error_type=ErrorType.INTERNAL,
            strategy=HandlingStrategy.PROPAGATE,
            background="invalid-state",
            tags=(site.kind.value,),
            severity=site.severity,
            http_status=site.http_status,
            error_code=site.error_code,
            evidence="default",
        )


def build_records(
    sites: Iterable[RaiseSite], source: SourceInfo, *, analyzed_at: datetime
) -> list[ErrorRecord]:
    """Turn a source's sites into records.

    Args:
        sites: The sites, in file order within each file.
        source: The source they come from.
        analyzed_at: The time stamped on every record.

    Returns:
        One record per site.
    """
    ordinals: Counter[tuple[str, str, str]] = Counter()
    records: list[ErrorRecord] = []
    for site in sites:
        text = site.template.text
        key = (site.path, site.error_class, text)
        ordinal = ordinals[key]
        ordinals[key] += 1
        verdict = _classified(site)
        records.append(
            ErrorRecord(
                id=record_id(source.repo, site.path, site.error_class, text, ordinal),
                repo=source.repo,
                slug=slugify(text) or slugify(site.error_class),
                error_code=verdict.error_code,
                error_message=text,
                message_pattern=seed_pattern(site.template),
                error_type=verdict.error_type,
                error_class=site.error_class,
                http_status=verdict.http_status,
                severity=verdict.severity,
                file_path=site.path,
                line_number=site.line,
                source_code=site.source_code,
                source_code_start=site.source_code_start,
                source_code_end=site.source_code_end,
                github_url=permalink(
                    source.repo, source.sha, site.path, site.source_code_start, site.source_code_end
                ),
                handling_strategy=verdict.strategy,
                tags=list(verdict.tags),
                background_tag=verdict.background,
                analyzed_sha=source.sha,
                analyzed_at=analyzed_at,
                schema_version=SCHEMA_VERSION,
                kind=site.kind,
                language=site.language,
                package=source.package,
                package_version=source.version,
                template=site.template,
                message_form=site.form,
                opaque=site.template.is_opaque,
                message_line=site.message_line,
                message_end_line=site.message_end_line,
                end_line_number=site.end_line,
                function=site.function,
                function_start=site.function_start,
                function_end=site.function_end,
                defined_at=site.defined_at,
                ordinal=ordinal,
                i18n=site.i18n,
                factory=site.factory,
                arguments=site.arguments,
                facts=site.facts,
            )
        )
    return records
