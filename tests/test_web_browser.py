"""Real headless Chromium (Debian's package, driven by Playwright) against a real server.

Skipped with a message when Chromium or Playwright is missing, except under CI (``CI=true``),
where that is a failure. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_web_helpers import (  # noqa: F401 (fixtures)
    HOSTILE_REPO,
    SEED_TRACEBACK,
    live_server,
    web_app,
    web_db,
    web_store,
)

CHROMIUM = Path(os.environ.get("ERRDEX_TEST_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is missing (pip install 'errdex[dev]')"
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests cannot run under CI: {reason}")
        pytest.skip(f"browser tests skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def tab(browser, live_server):
    context = browser.new_context(base_url=live_server, viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.on("dialog", lambda dialog: errors.append(f"dialog: {dialog.message}"))
    yield tab
    context.close()
    assert not errors  # no script ran, no alert() popped up


def shot(tab, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_paste_a_traceback_and_follow_the_permalink(tab):
    tab.goto("/")
    tab.get_by_label("Error, traceback or log").fill(SEED_TRACEBACK)
    shot(tab, "home-pasted")
    tab.get_by_role("button", name="Explain").first.click()
    tab.wait_for_selector("article.match")
    best = tab.locator("article.match").first
    assert "exact" in best.get_attribute("class")
    assert "Unknown speculative phase" in best.locator("h2").inner_text()
    assert "raise ValueError" in best.locator(".line.hit mark").inner_text()
    assert best.locator("table.captures tbody td").all_inner_texts() == ["phase", "draft"]
    shot(tab, "explain-answer")
    tab.get_by_role("link", name="Link to this answer").click()
    tab.wait_for_selector("article.match.exact")
    assert "/explain?q=" in tab.url
    assert tab.locator("pre.input").inner_text().strip() == SEED_TRACEBACK.strip()
    best = tab.locator("article.match").first
    best.locator("h2 a").click()
    tab.wait_for_url("**/e/*")
    assert tab.locator("h1").inner_text().startswith("ValueError: Unknown speculative phase")
    shot(tab, "record")


def test_search_with_a_facet_then_open_a_record(tab):
    tab.goto("/search?q=alert")
    assert "4 records" in tab.locator("#results-heading").inner_text()
    tab.locator("section.facet").filter(has_text="Class").get_by_role(
        "link", name="TypeError"
    ).click()
    tab.wait_for_url("**errorClass=TypeError**")
    assert "1 record" in tab.locator("#results-heading").inner_text()
    shot(tab, "search-facet")
    tab.locator("ol.results a").first.click()
    tab.wait_for_url("**/e/*")
    assert tab.locator("h1 .class").inner_text() == "TypeError"
    # The hostile message is shown as text; nothing executed (see the tab fixture).
    assert 'href="javascript:alert(6)"' in tab.locator("h1").inner_text()
    assert tab.locator("a[href^='javascript']").count() == 0
    shot(tab, "record-hostile")


def test_keyboard_and_phone(browser, live_server):
    context = browser.new_context(
        base_url=live_server, viewport={"width": 375, "height": 740}, is_mobile=True
    )
    tab = context.new_page()
    tab.goto("/")
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.className") == "skip"
    for _ in range(10):  # the paste box is reachable with the keyboard
        tab.keyboard.press("Tab")
        if tab.evaluate("document.activeElement.id") == "q":
            break
    assert tab.evaluate("document.activeElement.id") == "q"
    tab.keyboard.type("ValueError: Unknown speculative phase: draft")
    tab.keyboard.press("Tab")  # to the button
    tab.keyboard.press("Enter")
    tab.wait_for_selector("article.match.exact")
    assert tab.evaluate("document.documentElement.scrollWidth") <= 376
    shot(tab, "phone-answer")
    scroll_width = tab.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= 375 + 1  # nothing wider than the phone's screen
    tab.goto(f"/source?repo={HOSTILE_REPO}")
    assert tab.evaluate("document.documentElement.scrollWidth") <= 376
    shot(tab, "phone-source")
    context.close()
