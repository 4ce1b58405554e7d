"""The HTML pages in-process, read with BeautifulSoup; untrusted mined text stays inert."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import SEED_PATH, make_repo
from jinja2 import meta
from test_web_helpers import (  # noqa: F401 (fixtures)
    DANGEROUS,
    HOSTILE_ID,
    HOSTILE_REPO,
    SEED_TRACEBACK,
    Client,
    client,
    make_app,
    record_id,
    soup,
    web_app,
    web_db,
    web_store,
)
from typer.testing import CliRunner

from errdex.web import pages


def page(client, path, status=200, **kwargs):
    response = client.get(path, **kwargs)
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("text/html")
    return soup(response.text)


def test_home_has_a_labelled_paste_box_and_real_examples(client):
    html = page(client, "/")
    box = html.select_one("form[action='/explain'][method='post'] textarea#q")
    assert box is not None and box["name"] == "q"
    assert html.select_one("label[for='q']").get_text(strip=True)
    assert html.select_one("h1").get_text(strip=True) == "Explain an error"
    assert html.select_one("a.skip[href='#main']") and html.select_one("main#main")
    examples = html.select("ul.examples a")
    assert examples
    for link in examples:
        answer = page(client, link["href"])
        assert answer.select_one("article.match.exact"), link["href"]


def check_seed_answer(html):
    best = html.select_one("article.match")
    assert "exact" in best["class"]
    assert best.select_one("h2 a").get_text() == "ValueError: Unknown speculative phase: {phase}"
    hit = best.select("figure.snippet .line.hit")
    assert len(hit) == 1 and "124" in hit[0].select_one(".no").get_text()
    assert 'raise ValueError(f"Unknown speculative phase: {phase}")' in hit[0].mark.get_text()
    cells = [td.get_text() for td in best.select("table.captures tbody td")]
    assert cells == ["phase", "draft"]
    assert best.select("ul.evidence li")
    assert SEED_PATH in best.select_one("dl.facts").get_text()
    assert best.select_one("dl.facts a[href^='https://github.com/sgl-project/sglang/blob/']")
    assert html.select_one("pre.input").get_text() == SEED_TRACEBACK
    return best


def test_explain_by_url_shows_the_match_and_a_permalink(client):
    html = page(client, "/explain", params={"q": SEED_TRACEBACK})
    check_seed_answer(html)
    permalink = html.select_one("a.permalink")["href"]
    assert parse_qs(urlsplit(permalink).query)["q"] == [SEED_TRACEBACK]
    check_seed_answer(page(client, permalink))


def test_explain_by_form_post(client):
    response = client.post("/explain", data={"q": SEED_TRACEBACK})
    assert response.status_code == 200
    html = soup(response.text)
    best = check_seed_answer(html)
    record_page = page(client, best.select_one("h2 a")["href"])
    heading = record_page.select_one("h1").get_text()
    assert heading == "ValueError: Unknown speculative phase: {phase}"


def test_explain_without_a_match_says_so(client):
    html = page(client, "/explain", params={"q": "ZeroDivisionError: nothing we know of"})
    assert html.select_one("h1").get_text() in ("No exact match", "Nothing found")
    assert html.select_one("p.interpreter") is None


def test_explain_says_when_python_itself_raised_the_message(client):
    html = page(client, "/explain", params={"q": "ZeroDivisionError: division by zero"})
    note = html.select_one("p.interpreter").get_text()
    assert note.startswith("Python itself raises this ZeroDivisionError: a number was divided")


def test_empty_paste_is_a_422_page(client):
    html = page(client, "/explain", status=422)
    assert html.select_one("p.error")["data-code"] == "invalid-input"


def test_record_page(client):
    seed_id = record_id(client, q="speculative", repo="sgl-project/sglang")
    html = page(client, f"/e/{seed_id}")
    assert html.select_one("h1 .class").get_text() == "ValueError"
    assert html.select_one(".line.hit mark")
    assert [h.get_text() for h in html.select("section.prose h3")][:1] == ["What it means"]
    assert html.select_one(f"a[href='/api/records/{seed_id}?format=seed']")
    assert html.select_one("a[href='/source?repo=sgl-project%2Fsglang']")


@pytest.mark.parametrize("path", ["/e/ffffffffffffffff", "/e/..%2F..%2Fetc%2Fpasswd", "/e/x"])
def test_unknown_record_pages_are_404(client, path):
    html = page(client, path, status=404)
    assert html.select_one("p.error")["data-code"] == "not-found"


def test_search_with_a_facet_and_pages(web_db, web_store):
    client = Client(make_app(web_db, web_store, page_size=2))
    html = page(client, "/search", params={"q": "alert"})
    assert "4 records" in html.select_one("#results-heading").get_text()
    classes = {a.get_text(): a["href"] for a in html.select("section.facet a")}
    filtered = page(client, classes["TypeError"])
    assert "1 record" in filtered.select_one("#results-heading").get_text()
    results = filtered.select("ol.results li a")
    assert len(results) == 1 and results[0].strong.get_text() == "TypeError"
    selected = filtered.select_one("section.facet a[aria-current='true']")
    assert selected.get_text() == "TypeError"
    cleared = page(client, selected["href"])  # the selected value's link clears it
    assert "4 records" in cleared.select_one("#results-heading").get_text()
    next_link = html.select_one("nav.pager a[rel='next']")["href"]
    second = page(client, next_link)
    assert "Page 2 of 2" in second.select_one("nav.pager").get_text()
    first_ids = {a["href"] for a in html.select("ol.results a")}
    second_ids = {a["href"] for a in second.select("ol.results a")}
    assert len(first_ids | second_ids) == 4


def test_sources_and_a_source_error_index(client):
    html = page(client, "/sources")
    links = {a.get_text(): a["href"] for a in html.select("table.sources a")}
    assert set(links) == {"sgl-project/sglang", HOSTILE_REPO, "evil/imported"}
    index = page(client, links["sgl-project/sglang"])
    assert index.select_one("h1").get_text() == "Errors of sgl-project/sglang"
    modules = [h.get_text() for h in index.select("section h2 code")]
    assert modules == ["python.sglang.srt.speculative.spec_utils"]
    toc = index.select_one("nav.toc a")
    assert toc["href"] == "#" + index.select_one("section h2")["id"]
    page(client, "/source", params={"repo": "no/such"}, status=404)
    page(client, "/source", status=422)


def test_static_files_cannot_escape_their_directory(client):
    assert client.get("/static/style.css").status_code == 200
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2Fapp.py"):
        assert client.get(path).status_code == 404


def test_every_template_uses_only_its_context_fields(web_app):
    env = web_app.state.templates
    contexts = {
        "home.html": pages.HomeContext,
        "explain.html": pages.ExplainContext,
        "record.html": pages.RecordContext,
        "search.html": pages.SearchContext,
        "sources.html": pages.SourcesContext,
        "source.html": pages.SourceContext,
        "error.html": pages.ErrorContext,
    }
    partial_names = {"record", "results"}  # set by the including template
    for name, model in contexts.items():
        source = env.loader.get_source(env, name)[0]
        used = meta.find_undeclared_variables(env.parse(source))
        assert used <= set(model.model_fields) | partial_names, (name, used)


def hostile_pages(client) -> list[str]:
    ids = [r["id"] for r in client.get("/api/records", params={"q": "alert"}).json()["records"]]
    assert HOSTILE_ID in ids and len(ids) == 4
    paths = ["/", "/sources", "/search", "/search?q=alert", "/search?q=script"]
    paths += [f"/e/{record}" for record in ids]
    paths += [f"/source?repo={repo}" for repo in (HOSTILE_REPO, "evil/imported")]
    return paths


def assert_inert(html_text: str, where: str) -> None:
    assert not DANGEROUS.search(html_text), (where, DANGEROUS.search(html_text))
    html = soup(html_text)
    assert not html.find_all(["script", "img", "iframe", "object", "embed"]), where
    for element in html.find_all(True):
        for attribute, value in element.attrs.items():
            assert not attribute.lower().startswith("on"), (where, element)
            if attribute in ("href", "src", "action", "formaction"):
                text = "".join(value if isinstance(value, list) else [value]).strip().lower()
                assert not text.startswith(("javascript:", "data:", "vbscript:")), (where, element)


def test_mined_markup_and_javascript_urls_never_reach_a_page(client):
    for path in hostile_pages(client):
        response = client.get(path)
        assert response.status_code == 200, path
        assert_inert(response.text, path)
    # The hostile text is there, escaped: the pages show it as text.
    record = page(client, f"/e/{HOSTILE_ID}")
    assert "<script>alert(8)</script>" in record.get_text()
    assert not record.select("a[href^='javascript']")
    assert "source on GitHub" not in record.get_text()
    # Pasting hostile text: it comes back escaped, and its explanation too.
    for text in (
        "ValueError: <script>alert(1)</script> needs a value, got <img src=x onerror=alert(1)>",
        'RuntimeError: "><img src=x onerror=alert(3)> 1 javascript:alert(4)',
        '<a href="javascript:alert(6)">x</a>',
    ):
        for response in (
            client.get("/explain", params={"q": text}),
            client.post("/explain", data={"q": text}),
        ):
            assert response.status_code == 200
            assert_inert(response.text, text)
            assert text in soup(response.text).select_one("pre.input").get_text()


def test_safe_url():
    assert pages.safe_url("https://github.com/a/b/blob/1/x.py#L1-L2")
    for bad in (
        "javascript:alert(1)",
        " JavaScript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>",
        "//evil.example/x",
        "https:\\\\evil",
        None,
        "",
    ):
        assert pages.safe_url(bad) is None, bad


def test_past_the_last_page_previous_leads_to_the_last(web_db, web_store):
    client = Client(make_app(web_db, web_store, page_size=2))
    html = page(client, "/search", params={"q": "alert", "page": 50})
    previous = html.select_one("nav.pager a[rel='prev']")["href"]
    assert parse_qs(urlsplit(previous).query)["page"] == ["2"]  # 4 records: 2 pages


def test_a_paste_too_long_for_a_link_gets_none(client):
    text = "ValueError: Unknown speculative phase: " + "y" * (pages.MAX_LINK_CHARS + 10)
    response = client.post("/explain", data={"q": text})
    assert response.status_code == 200
    html = soup(response.text)
    assert html.select_one("a.permalink") is None and "too long to share" in html.get_text()
    short = page(client, "/explain", params={"q": "ValueError: x"})
    assert short.select_one("a.permalink") is not None


def test_head_requests_answer_like_get(client):
    for path in ("/", "/healthz", "/search?q=alert", "/sources"):
        response = client.request("HEAD", path)
        assert response.status_code == 200, path
        assert response.headers["x-content-type-options"] == "nosniff"


def test_links_of_records_with_odd_repos_work(tmp_path, seed_text):
    # A record may hold an empty repo or a long one (ingest and import accept both): the
    # links its pages build must lead somewhere, not to a 422.
    import json

    from errdex.pipeline import Pipeline
    from errdex.settings import Settings
    from errdex.store.sqlite import SQLiteStore

    lines = []
    for number, repo in enumerate(("", "r" * 1200)):
        envelope = json.loads(seed_text)
        envelope["record"].update(id=f"{number:016x}", repo=repo)
        lines.append(json.dumps(envelope))
    data = tmp_path / "odd.jsonl"
    data.write_text("\n".join(lines) + "\n")
    db = tmp_path / "odd.sqlite3"
    with SQLiteStore(db) as store:
        Pipeline(Settings(db=db), store).import_files([data])
        odd = Client(make_app(db, store))
        for number in range(2):
            record = page(odd, f"/e/{number:016x}")
            for link in record.select("a[href^='/']"):
                assert odd.get(link["href"]).status_code == 200, link["href"]
        for link in page(odd, "/sources").select("td a"):
            assert odd.get(link["href"]).status_code == 200, link["href"]


def test_explain_page_links_a_captured_value_to_the_record_whose_message_it_is(tmp_path):
    # The reason django logs is the message of a raise: the page links that record (#4).
    from test_explain import _REASON_SOURCES

    from errdex.cli import app
    from errdex.store.sqlite import SQLiteStore

    db = tmp_path / "store.sqlite3"
    make_repo(tmp_path / "proj", _REASON_SOURCES)
    result = CliRunner().invoke(app, ["mine", str(tmp_path / "proj"), "--db", str(db)])
    assert result.exit_code == 0, result.output
    with SQLiteStore(db) as store:
        html = page(
            Client(make_app(db, store)),
            "/explain",
            params={"q": "Forbidden (CSRF cookie not set.): /login/"},
        )
        made = html.select_one("article.match table.captures span.made-at")
        assert made.get_text(" ", strip=True) == ("the message of pkg/csrf.py:5 RejectRequest")
        record_page = page(Client(make_app(db, store)), made.a["href"])
        assert record_page.select_one("h1").get_text() == "RejectRequest: CSRF cookie not set."
