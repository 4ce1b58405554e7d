"""POST /api/ingest: off by default, bearer token, per-line problems, new records served."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from conftest import SEED_FILE
from test_web_api import assert_error
from test_web_helpers import (  # noqa: F401 (fixtures)
    Client,
    client,
    make_app,
    web_app,
    web_db,
    web_store,
)

from errdex.pipeline import Pipeline
from errdex.settings import Settings
from errdex.store.jsonl import parse_line
from errdex.store.sqlite import SQLiteStore

TOKEN = "ingest-token-of-the-tests-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
WIDGET_ID = "abcdef0123456789"
WIDGET_TEXT = "ValueError: Ingested widget gear is broken"


def seed_line(
    seed_text: str,
    *,
    record_id: str = WIDGET_ID,
    repo: str = "ingest/demo",
    message: str = "Ingested widget {name} is broken",
) -> str:
    """A seed-format line for a record of its own: another id, repo and message."""
    envelope = json.loads(seed_text)
    envelope["record"].update(
        id=record_id,
        repo=repo,
        slug="ingested-widget",
        errorMessage=message,
        messagePattern=message.replace("{name}", "(.+?)"),
    )
    return json.dumps(envelope)


def full_line(client: Client, source_id: str, *, record_id: str, repo: str) -> str:
    """A full-format line: a stored record served by the API, with another id and repo."""
    envelope = client.get(f"/api/records/{source_id}").json()
    envelope["record"].update(id=record_id, repo=repo)
    return json.dumps(envelope)


@pytest.fixture
def ingest(tmp_path):
    """A fresh store holding the seed record, and a client of an app with ingest on."""
    db = tmp_path / "ingest.sqlite3"
    with SQLiteStore(db) as store:
        Pipeline(Settings(db=db), store).import_files([SEED_FILE])
        yield Client(make_app(db, store, ingest_token=TOKEN)), store


def test_ingest_is_off_by_default(client, seed_text):
    response = client.post("/api/ingest", content=seed_line(seed_text), headers=AUTH)
    body = assert_error(response, 404, "not-found")
    assert "--allow-ingest" in body["error"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token-wrong-token"},
        {"Authorization": f"Bearer {TOKEN[:-1]}"},
        {"Authorization": f"Bearer {TOKEN}x"},
        {"Authorization": f"Basic {TOKEN}"},
        {"Authorization": "Bearer tökén-with-non-ascii".encode()},
        {"Authorization": "Bearer"},
    ],
)
def test_ingest_needs_the_token(ingest, seed_text, headers):
    client, store = ingest
    before = store.version()
    response = client.post("/api/ingest", content=seed_line(seed_text), headers=headers)
    assert_error(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    assert store.version() == before and store.get(WIDGET_ID) == []


def test_ingested_records_are_served_and_explained(ingest, seed, seed_text):
    client, _ = ingest
    seed_id = seed["record"]["id"]
    assert client.post("/api/explain", json={"text": WIDGET_TEXT}).json()["found"] is False
    body = "\n".join(
        [
            seed_line(seed_text),
            full_line(client, seed_id, record_id="1111222233334444", repo="ingest/full"),
        ]
    )
    response = client.post(
        "/api/ingest", content=body, headers=AUTH | {"content-type": "application/x-ndjson"}
    )
    assert response.status_code == 200, response.text
    assert response.json() == {
        "ok": True,
        "lines": 2,
        "records": 2,
        "formats": {"seed": 1, "full": 1},
        "repos": {"ingest/demo": 1, "ingest/full": 1},
        "rejected": 0,
        "problems": [],
    }
    record = client.get(f"/api/records/{WIDGET_ID}").json()["record"]
    assert record["repo"] == "ingest/demo" and record["writer"] == "import"
    assert client.get("/api/records/1111222233334444").json()["record"]["repo"] == "ingest/full"
    answer = client.post("/api/explain", json={"text": WIDGET_TEXT}).json()
    assert answer["found"] is True
    assert answer["matches"][0]["record"]["id"] == WIDGET_ID
    assert answer["matches"][0]["captures"] == {"name": "gear"}
    search = client.get("/api/records", params={"q": "widget"}).json()
    assert search["total"] == 1 and search["facets"]["repo"] == {"ingest/demo": 1}
    sources = {s["repo"]: s for s in client.get("/api/sources").json()["sources"]}
    assert sources["ingest/demo"]["kind"] == "import"
    assert sources["ingest/demo"]["location"] == "POST /api/ingest"


def test_a_second_ingest_replaces_by_id(ingest, seed_text):
    client, store = ingest
    for message in ("Ingested widget {name} is broken", "Ingested gadget {name} is bent"):
        response = client.post(
            "/api/ingest", content=seed_line(seed_text, message=message), headers=AUTH
        )
        assert response.json()["records"] == 1
    assert len(store.get(WIDGET_ID)) == 1
    assert client.post("/api/explain", json={"text": WIDGET_TEXT}).json()["found"] is False
    bent = client.post("/api/explain", json={"text": "ValueError: Ingested gadget x is bent"})
    assert bent.json()["found"] is True


def test_explain_answers_from_the_previous_index_while_it_is_rebuilt(ingest, seed_text):
    client, store = ingest
    services = client.app.state.services
    assert client.post("/api/explain", json={"text": WIDGET_TEXT}).json()["found"] is False
    pipeline = Pipeline(Settings(db=Path(store.location)), store)
    pipeline.import_records([parse_line(seed_line(seed_text))], location="another process")
    with services._index_lock:  # as if another request were rebuilding the index
        answer = client.post("/api/explain", json={"text": WIDGET_TEXT}).json()
        assert answer["found"] is False  # answered at once, from the index before the write
    assert client.post("/api/explain", json={"text": WIDGET_TEXT}).json()["found"] is True


def test_bad_lines_are_reported_and_the_good_ones_kept(ingest, seed_text):
    client, store = ingest
    lines = [
        seed_line(seed_text).encode(),
        b"{not json",
        b'{"record": {}, "datasetVersion": "2026-01-01T00:00:00Z"}',
        b"",
        b"\xff\xfe not utf-8",
        b"[1, 2]",
        seed_line(seed_text, record_id="2222333344445555", repo="ingest/other").encode(),
        b"   ",
        b"[" * 100_000,
        b'{"record": ' + b"9" * 5000 + b"}",
    ]
    response = client.post("/api/ingest", content=b"\r\n".join(lines), headers=AUTH)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["records"] == 2 and body["lines"] == 8 and body["rejected"] == 6
    assert body["repos"] == {"ingest/demo": 1, "ingest/other": 1}
    problems = {p["line"]: p["error"] for p in body["problems"]}
    assert set(problems) == {2, 3, 5, 6, 9, 10}
    assert problems[9].startswith("body:9: not JSON: maximum recursion depth")
    assert problems[10].startswith("body:10: not JSON: Exceeds the limit")
    assert problems[2].startswith("body:2: not JSON")
    assert "missing keys" in problems[3]
    assert problems[5] == "body:5: not UTF-8"
    assert "'record' object" in problems[6]
    assert store.get(WIDGET_ID) and store.get("2222333344445555")


def test_lines_the_store_or_the_index_cannot_hold_are_refused(ingest, seed_text):
    # A line number past 32 bits (the matcher index's) and half a surrogate pair (not
    # writable as UTF-8) are per-line problems; explain keeps working on the good lines.
    client, store = ingest
    far = json.loads(seed_line(seed_text, record_id="3333444455556666", repo="ingest/far"))
    far["record"]["lineNumber"] = 2**31
    lone = seed_line(seed_text, record_id="4444555566667777", repo="ingest/lone")
    lone = lone.replace("Ingested widget", "Ingested \\ud800 widget")
    pair = seed_line(seed_text, record_id="5555666677778888", repo="ingest/pair")
    pair = pair.replace("is broken", "is broken \\ud83d\\ude00")
    lines = [seed_line(seed_text), json.dumps(far), lone, pair]
    response = client.post("/api/ingest", content="\n".join(lines).encode(), headers=AUTH)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["records"] == 2 and body["rejected"] == 2
    problems = {p["line"]: p["error"] for p in body["problems"]}
    assert "lineNumber" in problems[2]
    assert problems[3] == "body:3: not valid Unicode: a lone surrogate (\\ud800)"
    assert store.get(WIDGET_ID) and store.get("5555666677778888")
    explained = client.post("/api/explain", json={"text": WIDGET_TEXT})
    assert explained.status_code == 200 and explained.json()["found"]


def test_only_bad_lines_write_nothing(ingest):
    client, store = ingest
    before = store.version()
    body = client.post("/api/ingest", content=b"nope\n" * 150, headers=AUTH).json()
    assert body["records"] == 0 and body["rejected"] == 150
    assert len(body["problems"]) == 100  # described up to max_ingest_problems
    assert store.version() == before


@pytest.mark.parametrize("content", [b"", b"\n \n"])
def test_empty_body_is_invalid(ingest, content):
    client, _ = ingest
    assert_error(client.post("/api/ingest", content=content, headers=AUTH), 422, "invalid-input")


def test_oversized_body_is_413(ingest, seed_text):
    client, store = ingest
    body = (seed_line(seed_text) + "\n") * (1_000_000 // len(seed_text) + 2)
    assert_error(client.post("/api/ingest", content=body, headers=AUTH), 413, "too-large")
    assert store.get(WIDGET_ID) == []


def test_ingest_is_documented_in_openapi(client):
    schema = client.get("/openapi.json").json()
    operation = schema["paths"]["/api/ingest"]["post"]
    assert "application/x-ndjson" in operation["requestBody"]["content"]
    assert operation["security"] == [{"HTTPBearer": []}]
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


@pytest.mark.parametrize("token", [None, "short"])
def test_serve_refuses_ingest_without_a_token(runner, db, token, monkeypatch):
    if token is not None:
        monkeypatch.setenv("ERRDEX_INGEST_TOKEN", token)
    from errdex.cli import app

    result = runner.invoke(app, ["serve", "--allow-ingest", "--db", str(db)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "ERRDEX_INGEST_TOKEN" in lines[0]
    assert not db.exists()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_ingest_on_a_real_server_with_two_workers(tmp_path, seed_text):
    """`errdex serve --allow-ingest --workers 2`: every worker explains what one ingested."""
    db = tmp_path / "served.sqlite3"
    with SQLiteStore(db) as store:
        Pipeline(Settings(db=db), store).import_files([SEED_FILE])
    port = free_port()
    env = os.environ | {"ERRDEX_INGEST_TOKEN": TOKEN}
    command = [sys.executable, "-m", "errdex", "serve", "--db", str(db), "--port", str(port)]
    log = tmp_path / "serve.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [*command, "--allow-ingest", "--workers", "2", "--no-access-log"],
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            deadline = time.monotonic() + 60
            while True:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "errdex serve did not start"
                try:
                    if http.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            assert http.post("/api/ingest", content=seed_line(seed_text)).status_code == 401
            answer = http.post("/api/ingest", content=seed_line(seed_text), headers=AUTH)
            assert answer.status_code == 200 and answer.json()["records"] == 1
            for _ in range(8):  # new connections: the kernel spreads them over both workers
                with httpx.Client(base_url=http.base_url, timeout=30) as fresh:
                    found = fresh.post("/api/explain", json={"text": WIDGET_TEXT}).json()
                    assert found["found"] is True
            assert http.get(f"/api/records/{WIDGET_ID}").status_code == 200
            too_big = http.post("/api/ingest", content=b"x" * 1_100_000, headers=AUTH)
            assert too_big.status_code == 413 and too_big.json()["code"] == "too-large"
    finally:
        server.terminate()
        server.wait(timeout=30)
