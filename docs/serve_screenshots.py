"""Screenshots of ``labelwise serve`` for the README: ``docs/serve-label.png`` and ``docs/serve-dashboard.png``.

A generated entity-resolution pool (product record pairs) is labeled by
two annotators through the API, then Debian's Chromium (driven by
Playwright; never ``playwright install``) photographs the labeling page and
the dashboard.

    python docs/serve_screenshots.py
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import uvicorn
from playwright.sync_api import sync_playwright

from labelwise.measures import make_measure
from labelwise.pool import Pool
from labelwise.serve.app import Server, create_app
from labelwise.serve.tables import add_annotator
from labelwise.session import Session
from labelwise.store import Store

HERE = Path(__file__).parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BRANDS = ["Sony", "Samsung", "Canon", "Panasonic", "Philips", "Bose", "Garmin", "Logitech"]
KINDS = ["Digital Camera", "LCD TV", "Headphones", "GPS Navigator", "Wireless Mouse", "Blu-ray Player"]


def pool_and_content(n: int, rng: np.random.Generator) -> tuple[Pool, pd.DataFrame, np.ndarray]:
    """Record pairs, half of the matches disguised by a changed field; a matcher's scores."""
    match = rng.uniform(size=n) < 0.3
    brand, kind = rng.integers(len(BRANDS), size=n), rng.integers(len(KINDS), size=n)
    model = [f"{chr(65 + rng.integers(26))}{chr(65 + rng.integers(26))}-{rng.integers(100, 999)}" for _ in range(n)]
    other = [f"{m[:3]}{int(m[3:]) + 1}" for m in model]
    price = rng.uniform(30, 900, size=n).round(2)
    content = pd.DataFrame({
        "item_id": np.arange(n),
        "left_name": [f"{BRANDS[b]} {KINDS[k]} {m}" for b, k, m in zip(brand, kind, model)],
        "right_name": [f"{BRANDS[b]} {m} {KINDS[k].lower()}" if y else f"{BRANDS[b]} {KINDS[k]} {o}"
                       for b, k, m, o, y in zip(brand, kind, model, other, match)],
        "left_price": price, "right_price": np.where(match, price, (price * 1.1).round(2)),
        "left_manufacturer": [BRANDS[b] for b in brand], "right_manufacturer": [BRANDS[b] for b in brand],
    })
    score = np.clip(np.where(match, 0.75, 0.3) + rng.normal(0, 0.2, size=n), 0.001, 0.999)
    pool = Pool.from_arrays(np.arange(n), preds=(score > 0.5).astype(int), scores=score, name="products")
    return pool, content, match.astype(int)


def main() -> None:
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        pool, content, truth = pool_and_content(5000, rng)
        content.to_csv(folder / "content.csv", index=False)
        path = folder / "products.lw"
        Session(pool, make_measure("f1", pool), "importance", seed=0, path=path).close()
        with closing(Store.open(path)) as store:
            tokens = {name: add_annotator(store, name, admin=name == "lead") for name in ("lead", "alice", "bob")}
        with closing(socket.socket()) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        base = f"http://127.0.0.1:{port}"
        server = uvicorn.Server(uvicorn.Config(create_app(Server(path, folder / "content.csv", overlap=0.1)),
                                               port=port, log_level="warning"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        for round_ in range(12):
            for name in ("alice", "bob"):
                headers = {"Authorization": f"Bearer {tokens[name]}"}
                for item in httpx.get(base + "/api/next?n=8", headers=headers).json()["items"]:
                    body = {"item_id": item["item_id"], "label": int(truth[item["item_id"]]), "draw": item["draw"],
                            "idempotency_key": f"{name}-{item['draw']}-{item['role']}"}
                    httpx.post(base + "/api/labels", json=body, headers=headers)
            httpx.get(base + "/api/estimate", headers={"Authorization": f"Bearer {tokens['lead']}"})
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1000, "height": 640})
            page.goto(base + "/login")
            page.fill("#token", tokens["lead"])
            page.click("button[type=submit]")
            page.wait_for_selector("#estimate tbody tr")
            page.wait_for_selector("svg.plot")
            page.screenshot(path=HERE / "serve-dashboard.png", full_page=True)
            page.goto(base + "/")
            page.wait_for_selector("table.pair")
            page.screenshot(path=HERE / "serve-label.png")
            browser.close()
        server.should_exit = True


if __name__ == "__main__":
    main()
