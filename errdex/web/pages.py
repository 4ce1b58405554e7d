"""The HTML pages: home, explain, record, search, sources and a source's error index.

Each template has one typed context model (a frozen pydantic model) and is rendered by
:func:`render_page` with exactly that model's fields. Everything shown comes from mined code
and pasted text, so it is untrusted: templates autoescape every value, and links to outside
pages go through :func:`safe_url`, which only lets ``http``/``https`` URLs through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, cast
from urllib.parse import quote, urlencode, urlsplit

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment
from pydantic import BaseModel, ConfigDict

from errdex.match.explain import Explanation
from errdex.models import ErrorRecord, Match
from errdex.store.base import SearchQuery
from errdex.web.api import explain_text, find_record, run_limited, services_of
from errdex.web.services import Services

# -- context models --------------------------------------------------------------------------


class _Context(BaseModel):
    model_config = ConfigDict(frozen=True)


class SnippetLine(_Context):
    """One numbered line of a record's source code; ``hit`` marks the raise statement."""

    number: int
    text: str
    hit: bool


class Section(_Context):
    """One prose or code section of a record (``code`` sections are shown preformatted)."""

    title: str
    text: str
    code: bool = False


class RecordView(_Context):
    """A record as the pages show it."""

    id: str
    href: str
    error_class: str
    error_message: str
    repo: str
    repo_href: str
    package: str | None
    package_version: str | None
    file_path: str
    line_number: int
    function: str | None
    kind: str
    severity: str
    error_type: str
    background_tag: str
    handling_strategy: str
    message_pattern: str
    github_url: str | None
    snippet: list[SnippetLine]
    sections: list[Section]
    solutions: list[str]
    prevention_tips: list[str]
    tags: list[str]


class ResultView(_Context):
    """One line of a list of records."""

    id: str
    href: str
    error_class: str
    error_message: str
    location: str
    repo: str
    error_type: str


class MatchView(_Context):
    """One match of an explanation."""

    kind: str
    score: float
    evidence: list[str]
    captures: list[tuple[str, str]]
    made_at: dict[str, list[tuple[str, str]]]
    """Per hole, where its value is a message: (``file:line Class``, the record's link)."""
    record: RecordView


class Example(_Context):
    """A real error from the store, as a link to its explanation."""

    text: str
    href: str


class FacetValue(_Context):
    """One value of a facet with its count and the search link that selects or clears it."""

    value: str
    count: int
    href: str
    selected: bool


class Facet(_Context):
    """The counts of one facet."""

    name: str
    label: str
    values: list[FacetValue]


class SourceView(_Context):
    """One mined source."""

    repo: str
    href: str
    kind: str
    version: str | None
    revision: str | None
    records: int


class ModuleGroup(_Context):
    """The records of one module on a source page."""

    module: str
    anchor: str
    records: list[ResultView]


class HomeContext(_Context):
    """``home.html``: the paste box and examples."""

    title: str
    records: int
    sources: int
    examples: list[Example]


class ExplainContext(_Context):
    """``explain.html``: the answer to a paste."""

    title: str
    text: str
    permalink: str | None
    found: bool
    ambiguous: bool
    total: int
    interpreter: str | None
    parsed: list[str]
    matches: list[MatchView]


class RecordContext(_Context):
    """``record.html``: one record."""

    title: str
    record: RecordView
    others: int
    json_href: str
    seed_href: str


class SearchContext(_Context):
    """``search.html``: search results with facets and pagination."""

    title: str
    q: str
    filters: list[tuple[str, str]]
    total: int
    page: int
    pages: int
    results: list[ResultView]
    facets: list[Facet]
    prev_href: str | None
    next_href: str | None


class SourcesContext(_Context):
    """``sources.html``: every mined source."""

    title: str
    sources: list[SourceView]


class SourceContext(_Context):
    """``source.html``: a package's error index, grouped by module."""

    title: str
    repo: str
    total: int
    shown: int
    search_href: str
    modules: list[ModuleGroup]


class ErrorContext(_Context):
    """``error.html``: a failed request."""

    title: str
    status: int
    message: str
    code: str


# -- helpers ---------------------------------------------------------------------------------


def safe_url(url: object) -> str | None:
    """Return an ``http(s)`` URL unchanged, or None for anything else (``javascript:`` …)."""
    if not isinstance(url, str):
        return None
    text = url.strip()
    if any(ord(c) < 33 for c in text) or "\\" in text:
        return None
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    return text if parts.scheme in ("http", "https") and parts.netloc else None


def render_page(
    templates: Environment, name: str, context: BaseModel, *, status: int = 200
) -> HTMLResponse:
    """Render a template with exactly its context model's fields."""
    values = {field: getattr(context, field) for field in type(context).model_fields}
    return HTMLResponse(templates.get_template(name).render(**values), status_code=status)


def record_href(record_id: str) -> str:
    """Return the page of a record."""
    return f"/e/{quote(record_id, safe='')}"


def source_href(repo: str) -> str:
    """Return the error index page of a repo."""
    return "/source?" + urlencode({"repo": repo})


def search_href(params: Mapping[str, str | int | None]) -> str:
    """Return a search URL with the non-empty parameters."""
    kept = {key: str(value) for key, value in params.items() if value not in (None, "")}
    return "/search" + ("?" + urlencode(kept) if kept else "")


MAX_FIELD_CHARS = 2000
"""The longest repo or class a page link may carry (a record's links must all work)."""

MAX_LINK_CHARS = 8000
"""The longest answer link offered: servers and proxies refuse longer request lines."""


def explain_href(text: str) -> str | None:
    """Return the shareable URL of an explanation (None for a paste too long to carry)."""
    href = "/explain?" + urlencode({"q": text})
    return href if len(href) <= MAX_LINK_CHARS else None


def record_view(record: ErrorRecord) -> RecordView:
    """Turn a record into what the pages show."""
    last = record.end_line_number or record.line_number
    snippet = (
        [
            SnippetLine(
                number=record.source_code_start + offset,
                text=line,
                hit=record.line_number <= record.source_code_start + offset <= last,
            )
            for offset, line in enumerate(record.source_code.split("\n"))
        ]
        if record.source_code
        else []
    )
    sections = [
        Section(title=title, text=text, code=code)
        for title, text, code in (
            ("What it means", record.documentation, False),
            ("What triggers it", record.trigger_scenarios, False),
            ("When people hit it", record.common_situations, False),
            ("Example fix", record.example_fix, True),
            ("Check before calling", record.validation_code or "", True),
            ("Type guard", record.type_guard or "", True),
            ("Handling it", record.try_catch_pattern or "", True),
        )
        if text
    ]
    return RecordView(
        id=record.id,
        href=record_href(record.id),
        error_class=record.error_class,
        error_message=record.error_message,
        repo=record.repo,
        repo_href=source_href(record.repo),
        package=record.package,
        package_version=record.package_version,
        file_path=record.file_path,
        line_number=record.line_number,
        function=record.function,
        kind=record.kind.value,
        severity=record.severity.value,
        error_type=record.error_type.value,
        background_tag=record.background_tag,
        handling_strategy=record.handling_strategy.value,
        message_pattern=record.message_pattern,
        github_url=safe_url(record.github_url),
        snippet=snippet,
        sections=sections,
        solutions=list(record.solutions),
        prevention_tips=list(record.prevention_tips),
        tags=list(record.tags),
    )


def result_view(record: ErrorRecord) -> ResultView:
    """Turn a record into one line of a list."""
    return ResultView(
        id=record.id,
        href=record_href(record.id),
        error_class=record.error_class,
        error_message=record.error_message,
        location=f"{record.file_path}:{record.line_number}",
        repo=record.repo,
        error_type=record.error_type.value,
    )


def module_of(path: str) -> str:
    """Return the dotted module of a file path (``pkg/sub/__init__.py`` → ``pkg.sub``)."""
    parts = [part for part in path.split("/") if part]
    if parts and parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
        if parts[-1] == "__init__":
            parts.pop()
    return ".".join(parts) or path


def _made_at(match: Match) -> dict[str, list[tuple[str, str]]]:
    made: dict[str, list[tuple[str, str]]] = {}
    for text in match.captured_texts:
        where = f"{text.file_path}:{text.line_number} {text.error_class}"
        made.setdefault(text.hole, []).append((where, record_href(text.id)))
    return made


def _explain_context(answer: Explanation, text: str) -> ExplainContext:
    parsed = [
        f"{error.error_class}: {error.message}" if error.error_class else error.message
        for error in answer.parsed.errors
    ]
    matches = [
        MatchView(
            kind=match.kind.value,
            score=round(match.score, 3),
            evidence=list(match.evidence),
            captures=list(match.captures.items()),
            made_at=_made_at(match),
            record=record_view(match.record),
        )
        for match in answer.matches
    ]
    first = parsed[-1] if parsed else text.strip().splitlines()[0] if text.strip() else ""
    return ExplainContext(
        title=f"Explain: {first[:80]}",
        text=text,
        permalink=explain_href(text),
        found=answer.found,
        ambiguous=answer.ambiguous,
        total=answer.total,
        interpreter=answer.interpreter,
        parsed=parsed,
        matches=matches,
    )


def _sample_value(style: str) -> str:
    """Return a plausible value for a hole of a given format style."""
    if "r" in style:
        return "'x'"
    if style[-1:] in ("d", "i", "f", "g", "e", "x"):
        return "3"
    return "x"


def _examples(services: Services, count: int = 4) -> list[Example]:
    """Pick a few real errors of the store: one message per class, holes filled in."""
    records, _ = services.read(lambda store: store.search(SearchQuery(limit=300)))
    seen: set[str] = set()
    examples: list[Example] = []
    for record in records:
        template = record.template
        if (
            record.kind.value != "raise"
            or template.is_opaque
            or template.literal_length < 15
            or record.error_class in seen
            or "\n" in record.error_message
        ):
            continue
        message = "".join(
            _sample_value(part.style) if part.hole else part.text for part in template.parts
        )
        text = f"{record.error_class}: {message}"
        href = explain_href(text)
        if href is None:  # too long to be an example
            continue
        seen.add(record.error_class)
        examples.append(Example(text=text, href=href))
        if len(examples) == count:
            break
    return examples


# -- routes ----------------------------------------------------------------------------------


def pages_router() -> APIRouter:
    """Make the router of the HTML pages."""
    router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)

    def templates_of(request: Request) -> Environment:
        return cast(Environment, request.app.state.templates)

    @router.api_route("/", methods=["GET", "HEAD"])
    async def home(request: Request) -> HTMLResponse:
        services = services_of(request)

        def run() -> HomeContext:
            stats = services.read(lambda store: store.stats())
            return HomeContext(
                title="errdex — the error index",
                records=stats.records,
                sources=stats.sources,
                examples=_examples(services),
            )

        return render_page(templates_of(request), "home.html", await run_limited(services, run))

    async def explain_page(request: Request, text: str) -> HTMLResponse:
        services = services_of(request)
        answer = await explain_text(services, text, top=5)
        return render_page(templates_of(request), "explain.html", _explain_context(answer, text))

    @router.api_route("/explain", methods=["GET", "HEAD"])
    async def explain_get(
        request: Request, q: Annotated[str, Query(description="The pasted text.")] = ""
    ) -> HTMLResponse:
        return await explain_page(request, q)

    @router.post("/explain")
    async def explain_post(request: Request, q: Annotated[str, Form()] = "") -> HTMLResponse:
        return await explain_page(request, q)

    @router.api_route("/e/{record_id}", methods=["GET", "HEAD"])
    async def record_page(request: Request, record_id: str) -> HTMLResponse:
        services = services_of(request)

        def run() -> tuple[ErrorRecord, int]:
            envelope = find_record(services, record_id)
            others = len(services.read(lambda store: store.get(envelope.record.id))) - 1
            return envelope.record, others

        record, others = await run_limited(services, run)
        context = RecordContext(
            title=f"{record.error_class}: {record.error_message[:80]}",
            record=record_view(record),
            others=others,
            json_href=f"/api/records/{record.id}",
            seed_href=f"/api/records/{record.id}?format=seed",
        )
        return render_page(templates_of(request), "record.html", context)

    @router.api_route("/search", methods=["GET", "HEAD"])
    async def search_page(
        request: Request,
        q: Annotated[str, Query(max_length=1000)] = "",
        repo: Annotated[str, Query(max_length=MAX_FIELD_CHARS)] = "",
        error_type: Annotated[str, Query(alias="errorType", max_length=100)] = "",
        error_class: Annotated[str, Query(alias="errorClass", max_length=MAX_FIELD_CHARS)] = "",
        language: Annotated[str, Query(max_length=50)] = "",
        page: Annotated[int, Query(ge=1, le=10_000)] = 1,
    ) -> HTMLResponse:
        services = services_of(request)
        size = services.options.page_size
        query = SearchQuery(
            text=q,
            repo=repo or None,
            error_type=error_type or None,
            error_class=error_class or None,
            language=language or None,
            limit=size,
            offset=(page - 1) * size,
        )
        records, total, counts = await run_limited(services, lambda: services.search(query))
        current: dict[str, str | int | None] = {
            "q": q,
            "repo": repo,
            "errorType": error_type,
            "errorClass": error_class,
            "language": language,
        }
        labels = {
            "repo": "Repository",
            "language": "Language",
            "errorType": "Category",
            "errorClass": "Class",
        }
        facets = [
            Facet(
                name=name,
                label=labels[name],
                values=[
                    FacetValue(
                        value=value,
                        count=count,
                        selected=current[name] == value,
                        href=search_href(
                            current | {name: None if current[name] == value else value}
                        ),
                    )
                    for value, count in values.items()
                ],
            )
            for name, values in counts.items()
        ]
        pages = max(1, -(-total // size))
        context = SearchContext(
            title=f"Search: {q}" if q else "Search",
            q=q,
            filters=[(labels[k], str(v)) for k, v in current.items() if k != "q" and v],
            total=total,
            page=page,
            pages=pages,
            results=[result_view(record) for record in records],
            facets=facets,
            # Past the last page, "previous" leads to the last one.
            prev_href=search_href(current | {"page": min(page - 1, pages)}) if page > 1 else None,
            next_href=search_href(current | {"page": page + 1}) if page < pages else None,
        )
        return render_page(templates_of(request), "search.html", context)

    @router.api_route("/sources", methods=["GET", "HEAD"])
    async def sources_page(request: Request) -> HTMLResponse:
        services = services_of(request)
        sources = await run_limited(services, lambda: services.read(lambda s: s.sources()))
        context = SourcesContext(
            title="Sources",
            sources=[
                SourceView(
                    repo=info.repo,
                    href=source_href(info.repo),
                    kind=info.kind,
                    version=info.version,
                    revision=info.sha[:12] if info.sha else info.revision,
                    records=count,
                )
                for info, count in sources
            ],
        )
        return render_page(templates_of(request), "sources.html", context)

    @router.api_route("/source", methods=["GET", "HEAD"])
    async def source_page(
        request: Request, repo: Annotated[str, Query(max_length=MAX_FIELD_CHARS)]
    ) -> HTMLResponse:
        services = services_of(request)
        limit = services.options.source_limit

        def run() -> tuple[list[ErrorRecord], int]:
            return services.read(lambda store: store.search(SearchQuery(repo=repo, limit=limit)))

        records, total = await run_limited(services, run)
        if not records:
            raise HTTPException(404, f"no records of {repo[:100]!r}")
        groups: dict[str, list[ResultView]] = {}
        for record in records:
            groups.setdefault(module_of(record.file_path), []).append(result_view(record))
        context = SourceContext(
            title=f"Errors of {repo}",
            repo=repo,
            total=total,
            shown=len(records),
            search_href=search_href({"repo": repo}),
            modules=[
                ModuleGroup(module=module, anchor=f"m-{number}", records=items)
                for number, (module, items) in enumerate(sorted(groups.items()))
            ],
        )
        return render_page(templates_of(request), "source.html", context)

    return router
