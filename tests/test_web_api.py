"""The JSON API in-process: explain, search with facets, records, sources, stats, errors."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest
from conftest import SEED_FILE, SEED_PATH
from test_web_helpers import (  # noqa: F401 (fixtures)
    HOSTILE_ID,
    HOSTILE_REPO,
    SEED_TRACEBACK,
    Client,
    client,
    make_app,
    record_id,
    web_app,
    web_db,
    web_store,
)

from errdex.match.explain import Explainer
from errdex.models import SEED_KEYS

ERROR_KEYS = {"ok", "error", "code", "status"}


def assert_error(response, status: int, code: str) -> dict:
    body = response.json()
    assert response.status_code == status
    assert set(body) == ERROR_KEYS, body
    assert body["ok"] is False and body["status"] == status and body["code"] == code
    assert isinstance(body["error"], str) and body["error"]
    return body


def test_explain_is_the_cli_json_structure(client, web_db, web_store):
    response = client.post("/api/explain", json={"text": SEED_TRACEBACK})
    assert response.status_code == 200
    answer = response.json()
    expected = json.loads(
        json.dumps(Explainer.for_database(web_store, web_db).explain(SEED_TRACEBACK).to_json())
    )
    assert answer == expected | {"found": True}
    best = answer["matches"][0]
    assert best["kind"] == "exact" and best["captures"] == {"phase": "draft"}
    assert best["record"]["filePath"] == SEED_PATH and best["record"]["lineNumber"] == 124
    assert list(best["record"]) == list(SEED_KEYS)


def test_explain_top_and_a_miss(client):
    response = client.post(
        "/api/explain", json={"text": "KeyError: nothing like this anywhere at all", "top": 1}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["found"] is False and len(body["matches"]) <= 1


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"json": {"text": "   "}}, 422, "invalid-input"),
        ({"json": {}}, 422, "invalid-input"),
        ({"json": {"text": "x", "top": 0}}, 422, "invalid-input"),
        ({"json": {"text": 5}}, 422, "invalid-input"),
        (
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            422,
            "invalid-input",
        ),
        ({"json": {"text": "x" * 1_100_000}}, 413, "too-large"),
    ],
)
def test_explain_bad_input_has_the_one_error_shape(client, kwargs, status, code):
    assert_error(client.post("/api/explain", **kwargs), status, code)


def test_body_limit_is_configurable_and_counts_streamed_bytes(web_db, web_store):
    small = Client(make_app(web_db, web_store, max_body_bytes=100))
    assert_error(small.post("/api/explain", json={"text": "y" * 200}), 413, "too-large")

    async def chunks():
        for _ in range(5):
            yield b"z" * 50

    response = small.post(
        "/api/explain", content=chunks(), headers={"content-type": "application/json"}
    )
    assert_error(response, 413, "too-large")
    assert small.post("/api/explain", json={"text": "ValueError: x"}).status_code == 200


def test_paste_length_limit(web_db, web_store):
    small = Client(make_app(web_db, web_store, max_paste_chars=10))
    assert_error(small.post("/api/explain", json={"text": "y" * 11}), 413, "too-large")


def test_time_limit_answers_503(web_db, web_store, monkeypatch):
    import time

    app = make_app(web_db, web_store, time_limit=0.05)
    monkeypatch.setattr(app.state.services, "explain", lambda text, top: time.sleep(0.5))
    assert_error(Client(app).post("/api/explain", json={"text": "x"}), 503, "timeout")


def test_search_with_facets_filters_and_pages(client):
    body = client.get("/api/records", params={"q": "alert"}).json()
    assert body["ok"] is True and body["total"] == 4
    assert body["facets"]["repo"] == {HOSTILE_REPO: 3, "evil/imported": 1}
    assert body["facets"]["errorClass"]["ValueError"] == 2
    filtered = client.get(
        "/api/records", params={"q": "alert", "errorClass": "TypeError", "repo": HOSTILE_REPO}
    ).json()
    assert filtered["total"] == 1 and filtered["records"][0]["errorClass"] == "TypeError"
    assert filtered["facets"]["errorClass"] == {"TypeError": 1}
    everything = client.get("/api/records", params={"pageSize": 2}).json()
    assert everything["total"] == 5 and everything["pages"] == 3
    assert len(everything["records"]) == 2
    last = client.get("/api/records", params={"pageSize": 2, "page": 3}).json()
    assert len(last["records"]) == 1
    seen = {r["id"] for r in everything["records"]} | {r["id"] for r in last["records"]}
    assert len(seen) == 3
    by_type = client.get("/api/records", params={"errorType": "type"}).json()
    assert {r["errorType"] for r in by_type["records"]} == {"type"}


@pytest.mark.parametrize(
    "params", [{"pageSize": 101}, {"pageSize": 0}, {"page": 0}, {"page": 10_001}, {"q": "x" * 1001}]
)
def test_search_caps(client, params):
    assert_error(client.get("/api/records", params=params), 422, "invalid-input")


def test_record_in_full_and_seed_format(client, seed):
    seed_id = record_id(client, q="speculative", repo="sgl-project/sglang")
    full = client.get(f"/api/records/{seed_id}").json()
    assert set(full) == {"record", "datasetVersion"}
    assert full["record"]["id"] == seed_id and "template" in full["record"]
    seed_format = client.get(f"/api/records/{seed_id}", params={"format": "seed"}).json()
    assert list(seed_format["record"]) == list(seed["record"])
    assert seed_format["record"]["errorMessage"] == seed["record"]["errorMessage"]
    upper = client.get(f"/api/records/{seed_id.upper()}").json()
    assert upper["record"]["id"] == seed_id
    assert_error(
        client.get(f"/api/records/{seed_id}", params={"format": "xml"}), 422, "invalid-input"
    )


@pytest.mark.parametrize(
    "path",
    [
        "/api/records/ffffffffffffffff",
        "/api/records/nothex",
        "/api/records/..%2F..%2Fetc%2Fpasswd",
        "/api/records/%3Cscript%3E",
        "/api/nothing",
    ],
)
def test_unknown_ids_and_routes_are_404(client, path):
    body = assert_error(client.get(path), 404, "not-found")
    assert "<script>" not in json.dumps(body) or path.endswith("%3E")


def test_wrong_method_has_the_error_shape(client):
    assert_error(client.get("/api/explain"), 405, "method-not-allowed")


def test_sources_stats_health(client):
    sources = client.get("/api/sources").json()["sources"]
    by_repo = {source["repo"]: source for source in sources}
    assert by_repo["sgl-project/sglang"]["records"] == 1
    assert by_repo[HOSTILE_REPO]["records"] == 3
    assert by_repo[HOSTILE_REPO]["sha"] and by_repo[HOSTILE_REPO]["kind"] == "git"
    stats = client.get("/api/stats").json()
    assert stats["ok"] is True and stats["records"] == 5 and stats["sources"] == 3
    assert stats["byClass"]["ValueError"] == 3
    health = client.get("/healthz").json()
    assert health["ok"] is True and health["storeVersion"]


def test_security_headers_on_every_response(client):
    for response in (
        client.get("/"),
        client.get("/api/stats"),
        client.get("/api/records/ffffffffffffffff"),
        client.get("/static/style.css"),
    ):
        csp = response.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp
        assert response.headers["x-content-type-options"] == "nosniff"


def test_an_internal_error_answers_500_with_the_security_headers(web_db, web_store, monkeypatch):
    app = make_app(web_db, web_store)

    def broken(text, top):
        raise RuntimeError("a bug")

    monkeypatch.setattr(app.state.services, "explain", broken)

    async def send():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return [
                await c.post("/api/explain", json={"text": "ValueError: x"}),
                await c.get("/explain", params={"q": "ValueError: x"}),
            ]

    api, page = anyio.run(send)
    assert_error(api, 500, "internal")
    assert page.status_code == 500 and "internal error: RuntimeError" in page.text
    for response in (api, page):
        assert "default-src 'none'" in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"


def test_a_store_that_cannot_be_read_is_503(web_db, web_store, monkeypatch):
    from errdex.errors import StoreError

    app = make_app(web_db, web_store)

    def locked(query):
        raise StoreError("search failed: database is locked")

    monkeypatch.setattr(app.state.services, "search", locked)
    assert_error(Client(app).get("/api/records", params={"q": "x"}), 503, "store")


def test_a_lone_surrogate_is_refused_not_a_500(client):
    body = b'{"text": "ValueError: \\ud800"}'
    response = client.post(
        "/api/explain", content=body, headers={"content-type": "application/json"}
    )
    assert "surrogate" in assert_error(response, 422, "invalid-input")["error"]
    pair = b'{"text": "ValueError: \\ud83d\\ude00"}'  # a whole pair is one character
    response = client.post(
        "/api/explain", content=pair, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200


def test_a_nul_in_a_search_is_a_word_break(client):
    plain = client.get("/api/records", params={"q": "phase"}).json()["total"]
    assert plain > 0
    response = client.get("/api/records", params={"q": "phase\x00"})
    assert response.status_code == 200 and response.json()["total"] == plain
    assert client.get("/api/records", params={"q": "\x00"}).status_code == 200
    assert client.get("/search", params={"q": "\x00phase"}).status_code == 200


def test_openapi_and_docs(client):
    schema = client.get("/openapi.json").json()
    assert {
        "/api/explain",
        "/api/records",
        "/api/records/{record_id}",
        "/api/sources",
        "/api/stats",
        "/healthz",
    } <= set(schema["paths"])
    assert "/e/{record_id}" not in schema["paths"]
    assert client.get("/docs").status_code == 200


def test_apps_share_no_state(web_db, web_store):
    first, second = make_app(web_db, web_store), make_app(web_db, web_store)
    assert first.state.services is not second.state.services
    assert first.state.templates is not second.state.templates


def test_the_index_follows_store_writes(tmp_path, seed_text):
    from errdex.settings import Settings
    from errdex.store.sqlite import SQLiteStore
    from errdex.web import create_app

    db = tmp_path / "s.sqlite3"
    with SQLiteStore(db) as store:
        client = Client(create_app(Settings(db=db), store))
        text = "ValueError: Unknown speculative phase: draft"
        assert client.post("/api/explain", json={"text": text}).json()["found"] is False
        from typer.testing import CliRunner

        from errdex.cli import app

        result = CliRunner().invoke(app, ["import", str(SEED_FILE), "--db", str(db)])
        assert result.exit_code == 0, result.output
        assert client.post("/api/explain", json={"text": text}).json()["found"] is True


def test_hostile_record_is_served_as_data(client):
    body = client.get(f"/api/records/{HOSTILE_ID}").json()
    assert body["record"]["githubUrl"] == "javascript:alert(7)"  # data, never a link


def test_work_past_the_time_limit_keeps_its_slot_until_it_ends(web_db, web_store, monkeypatch):
    # A request past the limit answers 503 at once, but its thread still runs: the slot
    # stays taken, so no more than `concurrency` explains ever run at once.
    import threading
    import time

    app = make_app(web_db, web_store, concurrency=2, time_limit=0.1)
    running, peak, calls, lock = [0], [0], [0], threading.Lock()

    def slow(text, top):
        with lock:
            calls[0] += 1
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.4)
        with lock:
            running[0] -= 1

    monkeypatch.setattr(app.state.services, "explain", slow)

    async def waves() -> tuple[list[int], int]:
        transport = httpx.ASGITransport(app=app)
        statuses: list[int] = []
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:

            async def one() -> None:
                statuses.append((await c.post("/api/explain", json={"text": "x"})).status_code)

            for _ in range(3):
                async with anyio.create_task_group() as group:
                    for _ in range(2):
                        group.start_soon(one)
            await anyio.sleep(1.0)  # the abandoned threads end and give their slots back
            free = app.state.services.limiter.borrowed_tokens
            statuses.append((await c.post("/api/explain", json={"text": "x"})).status_code)
        return statuses, free

    statuses, borrowed = anyio.run(waves)
    assert statuses == [503] * 7 and peak[0] <= 2 and borrowed == 0
    # The first wave ran; the next two waited for its slots until their own limit; the last
    # request found them free again.
    assert calls[0] == 3


def test_concurrent_requests_share_a_bounded_pool(web_db, web_store):
    import anyio
    import httpx

    app = make_app(web_db, web_store, concurrency=3)

    async def burst() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            responses: list[httpx.Response] = []

            async def one(path: str) -> None:
                if path == "/api/explain":
                    responses.append(await c.post(path, json={"text": SEED_TRACEBACK}))
                else:
                    responses.append(await c.get(path))

            async with anyio.create_task_group() as group:
                for number in range(24):
                    group.start_soon(
                        one, ("/api/explain", "/api/records?q=alert", "/healthz")[number % 3]
                    )
            return responses

    responses = anyio.run(burst)
    assert [r.status_code for r in responses] == [200] * 24
    assert all(r.json()["found"] for r in responses if "matches" in r.json())
    services = app.state.services
    assert 1 <= len(services._opened) <= 3
    services.close()
    assert not services._opened


def test_worker_app_serves_as_the_serve_command_configured(web_db, monkeypatch):
    from errdex.errors import UsageError
    from errdex.settings import Settings
    from errdex.web import WebOptions
    from errdex.web.worker import WORKER_ENV, worker_app, worker_environment

    with pytest.raises(UsageError):
        worker_app()
    settings = Settings(db=web_db, llm_api_key="secret-key")
    options = WebOptions(max_top=3, ingest_token="t" * 16)
    value = worker_environment(settings, options)
    assert "secret-key" not in value
    monkeypatch.setenv(WORKER_ENV, value)
    app = worker_app()
    assert app.state.services.options == options
    assert app.state.services.settings.db == web_db
    answer = Client(app).post("/api/explain", json={"text": SEED_TRACEBACK, "top": 50}).json()
    assert answer["found"] is True
    app.state.services.store.close()


def test_search_filters_and_counts_by_language(tmp_path):
    from typer.testing import CliRunner

    from errdex.cli import app
    from errdex.store.sqlite import SQLiteStore

    src = tmp_path / "poly"
    src.mkdir()
    (src / "a.py").write_text('raise ValueError("bad alert level")\n')
    (src / "b.js").write_text("throw new TypeError('bad alert colour');\n")
    (src / "c.go").write_text('package c\n\nvar ErrAlert = errors.New("bad alert sound")\n')
    db = tmp_path / "poly.sqlite3"
    result = CliRunner().invoke(app, ["mine", str(src), "--repo", "o/poly", "--db", str(db)])
    assert result.exit_code == 0, result.output
    with SQLiteStore(db) as store:
        client = Client(make_app(db, store))
        body = client.get("/api/records", params={"q": "alert"}).json()
        assert body["facets"]["language"] == {"python": 1, "javascript": 1, "go": 1}
        only = client.get("/api/records", params={"q": "alert", "language": "javascript"}).json()
        assert only["total"] == 1 and only["records"][0]["errorClass"] == "TypeError"
        assert only["records"][0]["language"] == "javascript"
        assert only["facets"]["language"] == {"javascript": 1}
        page = client.get("/search", params={"q": "alert", "language": "go"}).text
        assert "ErrAlert" in page and "TypeError" not in page
    search = CliRunner().invoke(
        app, ["search", "alert", "--language", "go", "--json", "--db", str(db)]
    )
    assert [r["errorClass"] for r in json.loads(search.output)["records"]] == ["ErrAlert"]
