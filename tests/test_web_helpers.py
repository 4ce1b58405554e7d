"""Shared builders of the web tests: a store with the seed's site and a hostile repository."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import httpx
import pytest
from bs4 import BeautifulSoup
from conftest import SEED_FILE, SEED_PATH, make_repo, seed_fixture_source
from typer.testing import CliRunner

SITE = "/opt/venv/lib/python3.11/site-packages"
SEED_TRACEBACK = f"""Traceback (most recent call last):
  File "{SITE}/sglang/srt/managers/scheduler.py", line 310, in __init__
    self.num_tokens = resolve_num_tokens_per_req(spec, phase="draft")
  File "{SITE}/{SEED_PATH.removeprefix("python/")}", line 124, in resolve_num_tokens_per_req
    raise ValueError(f"Unknown speculative phase: {{phase}}")
ValueError: Unknown speculative phase: draft
"""

HOSTILE_REPO = "evil/repo"
HOSTILE_FILES = {
    "evil/__init__.py": '''"""<script>alert('module')</script> see javascript:alert(0)"""
''',
    'evil/"><img src=x onerror=alert(9)>.py': '''"""Docstring "><img src=x onerror=alert(2)>.

See javascript:alert(1).
"""


def check(value):
    """<script>alert('doc')</script>"""
    if value is None:
        raise ValueError("<script>alert(1)</script> needs a value, got {}".format(value))
    raise RuntimeError(f'"><img src=x onerror=alert(3)> {value} javascript:alert(4)')
''',
    "evil/javascript:alert(5).py": """def run(url):
    if not url.startswith("https"):
        raise TypeError(f"<a href=\\"javascript:alert(6)\\">click</a> bad url {url}")
""",
}
HOSTILE_ID = "0123456789abcdef"
# Every fragment that must never reach a page unescaped.
DANGEROUS = re.compile(r"<script|<img|<a href=\"javascript|<iframe", re.IGNORECASE)


def hostile_import_line(seed_text: str) -> str:
    """A seed-format record whose URL is a javascript: link and whose prose is markup."""
    envelope = json.loads(seed_text)
    record = envelope["record"]
    record.update(
        id=HOSTILE_ID,
        repo="evil/imported",
        githubUrl="javascript:alert(7)",
        documentation="<script>alert(8)</script>",
        solutions=['"><img src=x onerror=alert(10)>'],
        errorMessage="Imported <b>bold</b> phase: {phase}",
        messagePattern="Imported <b>bold</b> phase: (.+?)",
    )
    return json.dumps(envelope)


def build_store(root: Path) -> Path:
    """Mine the seed's site and the hostile repository, import the hostile record."""
    from errdex.cli import app

    runner = CliRunner()
    db = root / "web.sqlite3"
    seed = json.loads(SEED_FILE.read_text(encoding="utf-8"))
    sglang = root / "sglang"
    make_repo(sglang, {SEED_PATH: seed_fixture_source(seed["record"])})
    evil = root / "evil"
    make_repo(evil, dict(HOSTILE_FILES))
    imported = root / "imported.jsonl"
    imported.write_text(hostile_import_line(SEED_FILE.read_text(encoding="utf-8")) + "\n")
    for argv in (
        ["mine", str(sglang), "--repo", "sgl-project/sglang"],
        ["mine", str(evil), "--repo", HOSTILE_REPO],
        ["import", str(imported)],
    ):
        result = runner.invoke(app, [*argv, "--db", str(db)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return db


@pytest.fixture(scope="session")
def web_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_store(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="session")
def web_store(web_db):
    from errdex.store.sqlite import SQLiteStore

    store = SQLiteStore(web_db)
    yield store
    store.close()


def make_app(db: Path, store, **options):
    from errdex.settings import Settings
    from errdex.web import WebOptions, create_app

    return create_app(Settings(db=db), store, options=WebOptions(**options))


@pytest.fixture(scope="session")
def web_app(web_db, web_store):
    return make_app(web_db, web_store)


class Client:
    """A synchronous client over httpx's ASGITransport: the app runs in-process."""

    def __init__(self, app):
        self.app = app

    def request(self, method: str, url: str, **kwargs) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                return await c.request(method, url, **kwargs)

        return anyio.run(send)

    def get(self, url: str, **kwargs) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs) -> httpx.Response:
        return self.request("POST", url, **kwargs)


@pytest.fixture(scope="session")
def client(web_app):
    return Client(web_app)


def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def record_id(client, **params) -> str:
    """The id of the first record a search finds."""
    records = client.get("/api/records", params=params).json()["records"]
    assert records, params
    return records[0]["id"]


@pytest.fixture(scope="session")
def live_server(web_app):
    """A real uvicorn server on a loopback port, in a thread; yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(web_app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()
