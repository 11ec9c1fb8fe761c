"""``labelwise serve`` on a pool whose ids are text (``TX0001000``), as most real pools are, with a content file
whose integer columns must show as written."""

from __future__ import annotations

from contextlib import closing

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from labelwise.measures import make_measure
from labelwise.pool import Pool
from labelwise.serve.app import Server, create_app
from labelwise.serve.tables import add_annotator
from labelwise.session import Session
from labelwise.store import Store

N_ITEMS = 200


@pytest.fixture
def text_env(tmp_path):
    """A served session on a pool of text ids ``TX0000000`` .. with a content file of an integer column."""
    rng = np.random.default_rng(5)
    p = rng.uniform(size=N_ITEMS)
    ids = np.array([f"TX{i:07d}" for i in range(N_ITEMS)], dtype=object)
    pool = Pool.from_arrays(ids, preds=(p > 0.5).astype(int), scores=p, name="txns")
    path = tmp_path / "s.lw"
    Session(pool, make_measure("f1", pool), "importance", seed=0, path=path).close()
    content = tmp_path / "content.csv"
    # an account number above 2**53: a float would print 9007199254740993 as 9.007199254740992e+15
    pd.DataFrame({"item_id": ids, "account": 9007199254740993, "amount": 12.5}).to_csv(content, index=False)
    with closing(Store.open(path)) as store:
        token = add_annotator(store, "ann", admin=True)
    with TestClient(create_app(Server(path, content))) as client:
        yield client, {"Authorization": f"Bearer {token}"}


def test_text_ids_are_handed_out_answered_undone_and_skipped(text_env):
    client, auth = text_env
    reply = client.get("/api/next?n=3", headers=auth)
    assert reply.status_code == 200, reply.text
    items = reply.json()["items"]
    assert [type(i["item_id"]) for i in items] == [str] * 3 and all(i["item_id"].startswith("TX") for i in items)
    first, second = items[0], items[1]
    body = {"item_id": first["item_id"], "label": 1, "draw": first["draw"], "idempotency_key": "k1"}
    stored = client.post("/api/labels", json=body, headers=auth)
    assert stored.status_code == 200, stored.text
    assert stored.json()["item_id"] == first["item_id"]
    undone = client.post("/api/undo", json={"idempotency_key": "u1"}, headers=auth)
    assert undone.status_code == 200 and undone.json()["item_id"] == first["item_id"]
    skipped = client.post("/api/skip", json={"item_id": second["item_id"]}, headers=auth)
    assert skipped.status_code == 200 and skipped.json()["item_id"] == second["item_id"]
    export = client.get("/api/export", headers=auth)
    assert export.status_code == 200 and first["item_id"] in export.text


def test_integer_content_shows_as_written(text_env):
    client, auth = text_env
    html = client.get("/api/next?n=1", headers=auth).json()["items"][0]["html"]
    assert "9007199254740993" in html and "12.5" in html
