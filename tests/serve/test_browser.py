"""The labeling page in a real browser: Debian's Chromium driven by Playwright, by keyboard only.

Skipped when Chromium or Playwright is missing (``.ci/run`` installs
Chromium with apt when it can; never ``playwright install``).
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing

import pytest
import uvicorn

from labelwise.serve.app import Server, create_app
from labelwise.serve.tables import add_annotator
from labelwise.store import Store

from .conftest import make_session, rows

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture
def browser():
    """A headless Chromium from the system (the test is skipped without one)."""
    playwright = pytest.importorskip("playwright.sync_api", reason="the browser test needs pip's playwright package")
    if not shutil.which(CHROMIUM):
        pytest.skip("no Chromium at /usr/bin/chromium: `apt-get install chromium` to run the browser test")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def live(tmp_path, content_file) -> Iterator[tuple[str, object, str]]:
    """A server on a free loopback port: (base URL, session path and true labels, admin token)."""
    path, truth = make_session(tmp_path / "s.lw")
    with closing(Store.open(path)) as store:
        token = add_annotator(store, "boss", admin=True)
    with closing(socket.socket()) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(Server(path, content_file)), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", (path, truth), token
    server.should_exit = True
    thread.join(10)


def _shown(page) -> int:
    return int(page.inner_text(".item-id").split()[-1])


def _next_item(page, before: int) -> int:
    page.wait_for_function(f"document.querySelector('.item-id') && !document.querySelector('.item-id')"
                           f".textContent.endsWith(' {before}')", timeout=10_000)
    return _shown(page)


def _eventually(query, expected, timeout: float = 10.0):
    """Poll ``query()`` until it returns ``expected`` (the page sends its answers in the background)."""
    deadline = time.monotonic() + timeout
    while (got := query()) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return got


def test_label_twenty_items_by_keyboard_undo_one_and_see_the_estimate(browser, live):
    base, (path, truth), token = live
    page = browser.new_page()
    page.goto(base + "/")
    assert "token" in page.content()  # 401: the login form
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_url(base + "/dashboard")
    page.goto(base + "/")
    page.wait_for_selector(".item-id")
    assert "<script>alert(" in page.inner_text("#item")  # escaped: shown as text, never run
    item = _shown(page)
    seen = []
    for k in range(20):
        seen.append(item)
        y = int(truth[item - 1000])
        page.keyboard.press(("x" if y else "a") if k == 19 else ("a" if y else "x"))  # the last one wrong
        item = _next_item(page, item)
    page.keyboard.press("Backspace")
    assert _next_item(page, item) == seen[-1]  # the undone item is back
    page.keyboard.press("a" if truth[seen[-1] - 1000] else "x")
    page.keyboard.press("?")
    assert page.is_visible("#help")
    page.wait_for_function("!document.getElementById('status').textContent.includes('sending')", timeout=10_000)
    # the status line may not say "sending" yet when the answer is still queued: wait for the relabel in the store
    assert _eventually(lambda: rows(path, "SELECT COUNT(*) FROM relabels"), [(1,)]) == [(1,)]
    stored = dict(rows(path, "SELECT item, label FROM labels"))
    stored.update(dict(rows(path, "SELECT item, label FROM relabels ORDER BY seq")))
    assert sorted(stored) == sorted(i - 1000 for i in seen)
    assert all(stored[i - 1000] == truth[i - 1000] for i in seen)
    assert rows(path, "SELECT COUNT(*) FROM serve_retractions") == [(1,)]
    estimate = page.request.get(base + "/api/estimate").json()
    page.goto(base + "/dashboard")
    page.wait_for_selector("#estimate tbody tr")
    cells = page.locator("#estimate tbody tr").first.locator("td").all_inner_texts()
    assert cells[0] == "f1" and cells[1] == f"{estimate['components'][0]['value']:.3f}"
    assert "20 labels in all" in page.inner_text("#summary")
