"""A real uvicorn server on loopback answers the API and the pages over TCP."""

from __future__ import annotations

import httpx
from test_web_helpers import (  # noqa: F401 (fixtures)
    SEED_TRACEBACK,
    live_server,
    soup,
    web_app,
    web_db,
    web_store,
)


def test_real_server_on_loopback(live_server):
    with httpx.Client(base_url=live_server, timeout=30) as client:
        assert client.get("/healthz").json()["ok"] is True
        answer = client.post("/api/explain", json={"text": SEED_TRACEBACK}).json()
        assert answer["found"] and answer["matches"][0]["record"]["lineNumber"] == 124
        too_big = client.post("/api/explain", content=b"x" * 1_100_000)
        assert too_big.status_code == 413 and too_big.json()["code"] == "too-large"
        html = client.post("/explain", data={"q": SEED_TRACEBACK})
        assert (
            html.status_code == 200
            and "default-src 'none'" in html.headers["content-security-policy"]
        )
        assert soup(html.text).select_one("article.match.exact")
