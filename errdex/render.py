"""Rich renderables for records, reports and stats. The core never prints; the CLI renders here."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from errdex.match.explain import Explanation
from errdex.match.scan import ScanReport
from errdex.models import ErrorRecord, Match, MatchKind, RunReport, StoreStats
from errdex.pipeline import VerifyOutcome
from errdex.settings import SETTINGS, ResolvedSettings


def _location(record: ErrorRecord) -> str:
    return f"{record.file_path}:{record.line_number}"


def record_panel(record: ErrorRecord) -> RenderableType:
    """Render one record: header, fields, the snippet with its site's line marked, and prose."""
    header = Text.assemble(
        (record.error_class, "bold red"),
        ": ",
        (record.error_message or "(no message)", "bold"),
    )
    fields = Table.grid(padding=(0, 2))
    fields.add_column(style="dim")
    fields.add_column()
    for label, value in (
        ("id", record.id),
        (
            "repo",
            record.repo
            + (f" ({record.package} {record.package_version})" if record.package else ""),
        ),
        ("where", _location(record) + (f" in {record.function}" if record.function else "")),
        ("kind", f"{record.kind.value}, {record.severity.value}"),
        (
            "type",
            " / ".join(
                (record.error_type.value, record.background_tag, record.handling_strategy.value)
            ),
        ),
        ("pattern", record.message_pattern),
        ("code", record.error_code),
        ("http", str(record.http_status) if record.http_status is not None else None),
        ("link", record.github_url),
    ):
        if value:
            fields.add_row(label, Text(value))
    parts: list[RenderableType] = [header, fields]
    if record.source_code:
        parts.append(
            Syntax(
                record.source_code,
                "python" if record.language == "python" else "text",
                line_numbers=True,
                start_line=record.source_code_start,
                highlight_lines={record.line_number},
                word_wrap=False,
            )
        )
    for label, text in (
        ("What it means", record.documentation),
        ("What triggers it", record.trigger_scenarios),
        ("When people hit it", record.common_situations),
    ):
        if text:
            parts.append(Text.assemble((label, "bold"), "\n", text))
    if record.solutions:
        parts.append(
            Text.assemble(
                ("Solutions", "bold"), "\n", "\n".join(f"- {s}" for s in record.solutions)
            )
        )
    return Panel(Group(*parts), title=escape(record.slug or record.id), title_align="left")


def records_table(records: Sequence[ErrorRecord], *, total: int | None = None) -> RenderableType:
    """Render a list of records as a table (id, class, message, location)."""
    caption = f"{len(records)} of {total}" if total is not None and total > len(records) else None
    table = Table(caption=caption, show_lines=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("class", style="red", no_wrap=True)
    table.add_column("message", overflow="fold")
    table.add_column("where", style="dim", overflow="fold")
    for record in records:
        table.add_row(
            record.id,
            record.error_class,
            Text(record.error_message),
            f"{record.repo} {_location(record)}",
        )
    return table


def reports_table(reports: Sequence[RunReport]) -> RenderableType:
    """Render mining reports: one row per source, then a line per problem."""
    table = Table(title="mined")
    for column in (
        "source",
        "version",
        "files",
        "sites",
        "records",
        "opaque",
        "problems",
        "seconds",
    ):
        table.add_column(column, justify="right" if column not in ("source", "version") else "left")
    for report in reports:
        source = report.source
        table.add_row(
            source.repo,
            source.version or (source.sha or "")[:12],
            str(report.files),
            str(sum(report.sites.values())),
            str(report.records),
            str(report.opaque),
            str(len(report.problems)),
            f"{report.seconds:.2f}",
        )
    problems = [(r.source.repo, p) for r in reports for p in r.problems]
    if not problems:
        return table
    lines = Text()
    for repo, problem in problems[:20]:
        where = f"{problem.path}:{problem.line}" if problem.line else problem.path
        lines.append(f"{repo} {where}: {problem.kind.value}: {problem.message}\n", style="yellow")
    if len(problems) > 20:
        lines.append(f"… and {len(problems) - 20} more problems (see --json)\n", style="yellow")
    return Group(table, lines)


def stats_table(stats: StoreStats, location: str) -> RenderableType:
    """Render store statistics."""
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="dim")
    summary.add_column(justify="right")
    summary.add_row("store", location)
    summary.add_row("records", str(stats.records))
    summary.add_row("sources", str(stats.sources))
    summary.add_row("problems", str(stats.problems))
    parts: list[RenderableType] = [summary]
    for title, counts in (
        ("by type", stats.by_type),
        ("by class", stats.by_class),
        ("by repo", stats.by_repo),
    ):
        if counts:
            table = Table(title=title)
            table.add_column(title.split()[-1])
            table.add_column("records", justify="right")
            for key, count in counts.items():
                table.add_row(key, str(count))
            parts.append(table)
    return Group(*parts)


def settings_table(resolved: ResolvedSettings) -> RenderableType:
    """Render the effective settings with where each value came from."""
    table = Table(title="settings")
    for column in ("name", "value", "from", "env", "help"):
        table.add_column(column, overflow="fold")
    values = resolved.settings.model_dump()
    for setting in SETTINGS:
        value = values[setting.name]
        table.add_row(
            setting.name,
            ",".join(value) if isinstance(value, tuple) else str(value),
            resolved.origins[setting.name],
            setting.env,
            setting.help,
        )
    return table


def explanation_view(explanation: Explanation) -> RenderableType:
    """Render an explain answer: the input's error, then each match with its evidence."""
    parts: list[RenderableType] = []
    parsed = explanation.parsed
    for error in parsed.errors[-3:]:
        parts.append(
            Text.assemble(
                ("input ", "dim"),
                (f"({parsed.kind}) ", "dim"),
                (error.qualified_class or error.error_class or "", "bold red"),
                ": " if (error.error_class or error.qualified_class) else "",
                (error.message[:500], "bold"),
            )
        )
    if explanation.interpreter:
        parts.append(Text(explanation.interpreter, style="bold cyan"))
    if not explanation.found:
        parts.append(Text("No exact match.", style="bold yellow"))
    if explanation.ambiguous:
        # Frames tell sites apart, but not the places that hand one text on to be raised
        # elsewhere (flask's proxies): the traceback shows the other code's raise.
        exact = [m for m in explanation.matches if m.kind is MatchKind.EXACT]
        handed = bool(exact) and all(m.record.message_form == "handed" for m in exact)
        parts.append(
            Text(
                f"Ambiguous: {explanation.total} sites raise this same message; "
                + (
                    "each hands it to the same code, which raises it."
                    if handed
                    else "a traceback with frames tells them apart."
                ),
                style="yellow",
            )
        )
    for match in explanation.matches:
        parts.append(match_panel(match))
    return Group(*parts)


def match_panel(match: Match) -> RenderableType:
    """Render one match: where, why, captured values, the snippet and the prose."""
    record = match.record
    style = "green" if match.kind is MatchKind.EXACT else "yellow"
    title = Text.assemble(
        (match.kind.value.upper(), f"bold {style}"),
        f" {match.score:.1f}  ",
        (f"{record.repo} {_location(record)}", "cyan"),
        (f" in {record.function}" if record.function else "", "dim"),
        overflow="ellipsis",  # cut silently, `prepare_url` would read as another function
    )
    body: list[RenderableType] = [
        Text.assemble((record.error_class, "bold red"), ": ", record.error_message)
    ]
    if record.github_url:
        body.append(Text(record.github_url, style="blue underline"))
    if match.captures:
        captured = Table.grid(padding=(0, 1))
        for name, value in match.captures.items():
            captured.add_row(Text(name, style="magenta"), "=", Text(repr(value)))
            for text in match.captured_texts:
                if text.hole == name:
                    where = f"{text.file_path}:{text.line_number} ({text.error_class})"
                    captured.add_row("", "", Text(f"the message of {where}", style="cyan"))
        body.append(captured)
    body.append(Text("\n".join(f"- {line}" for line in match.evidence), style="dim"))
    if record.source_code:
        body.append(
            Syntax(
                record.source_code,
                "python" if record.language == "python" else "text",
                line_numbers=True,
                start_line=record.source_code_start,
                highlight_lines={record.line_number},
                line_range=(
                    max(record.source_code_start, record.line_number - 6),
                    min(record.source_code_end, record.line_number + 3),
                ),
            )
        )
    if record.documentation:
        body.append(Text(record.documentation))
    if record.solutions:
        body.append(Text("\n".join(f"- {s}" for s in record.solutions)))
    return Panel(Group(*body), title=title, title_align="left", border_style=style)


def scan_view(report: ScanReport, records: dict[int, ErrorRecord], *, top: int) -> RenderableType:
    """Render a log scan: known errors by count, then unmatched error-looking lines."""
    summary = Text(
        f"{report.lines} lines, {report.matched} matched a record, "
        f"{report.unmatched} error-looking lines matched none"
    )
    known = Table(title="known errors")
    for column in ("count", "record", "where", "message", "first seen", "last seen"):
        known.add_column(column, overflow="fold", justify="right" if column == "count" else "left")
    for group in report.groups[:top]:
        record = records.get(group.rowids[0])
        if record is None:
            continue
        sites = f" (+{len(group.rowids) - 1} sites)" if len(group.rowids) > 1 else ""
        known.add_row(
            str(group.count),
            record.id,
            f"{record.repo} {_location(record)}{sites}",
            Text(f"{record.error_class}: {record.error_message}"),
            group.first_seen or f"line {group.first_line}",
            group.last_seen or f"line {group.last_line}",
        )
    unknown = Table(title="error-looking lines without a record")
    unknown.add_column("count", justify="right")
    unknown.add_column("text", overflow="fold")
    for group in report.unknown[:top]:
        unknown.add_row(str(group.count), Text(group.key))
    return Group(summary, known, unknown)


def key_values_table(title: str, data: dict[str, object]) -> RenderableType:
    """Render a flat mapping (nested mappings one level deep) as a two-column table."""
    table = Table(title=title, show_header=False)
    table.add_column(style="dim")
    table.add_column(justify="right")
    for key, value in data.items():
        if isinstance(value, dict):
            for inner, item in value.items():
                table.add_row(f"{key} {inner}", str(item))
        else:
            table.add_row(key, str(value))
    return table


def verify_view(counts: dict[str, int], outcomes: Sequence[VerifyOutcome]) -> RenderableType:
    """Render a verification: counts, then each flagged, moved or stale record."""
    summary = Text(", ".join(f"{count} {name}" for name, count in counts.items()))
    table = Table(title="findings")
    for column in ("record", "status", "field", "claim", "why"):
        table.add_column(column, overflow="fold")
    for outcome in outcomes:
        if not outcome.claims:
            line = f"now at line {outcome.line}" if outcome.line else ""
            table.add_row(outcome.record_id, outcome.status, "", "", line)
        for claim in outcome.claims:
            table.add_row(
                outcome.record_id,
                f"{outcome.status}: {claim.verdict}",
                claim.field,
                Text(claim.text),
                Text(claim.reason),
            )
    return Group(summary, table)
