"""``labelwise add-system``: a new system estimated from the labels in, stored for the next commands."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from labelwise.datasets import make_pool
from labelwise.measures import make_measure
from labelwise.session import Session


@pytest.fixture
def labeled_session(tmp_path, write_pool_csv, ok):
    """A session on system A of a two-system pool with 100 labels, the second system's predictions file
    (``rival.csv``: item_id, pred, prob) and the pool."""
    full = make_pool(1500, prevalence=0.1, n_systems=2, separation=2.0, seed=7)
    pool_file = write_pool_csv(full, tmp_path / "pool.csv", labels=False)
    session = tmp_path / "s.lw"
    ok("init", pool_file, "--session", session, "--measure", "f1", "--seed", "3")
    for _ in range(2):
        batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 50).stdout))
        batch["label"] = full.labels[batch["item_id"].to_numpy()]
        batch[["item_id", "label"]].to_csv(tmp_path / "labels.csv", index=False)
        ok("label", session, tmp_path / "labels.csv")
    rival = tmp_path / "rival.csv"
    pd.DataFrame({"item_id": full.item_ids, "pred": full.preds[:, 1], "prob": full.probs[:, 1]}).to_csv(
        rival, index=False)
    return session, rival, full


def test_add_system_prints_the_estimate_from_the_labels_in_and_stores_the_system(labeled_session, ok):
    session, rival, full = labeled_session
    record = json.loads(ok("add-system", session, rival, "--json").stdout)
    assert (record["system"], record["index"], record["labels_reused"], record["covered"]) == ("rival", 1, 100, True)
    with Session.open(session) as s:
        items = np.unique(s.sample().draws.items)
        own = make_measure("f1", s.pool, systems=1)
        # F1's loss is nonzero where the system predicts positive or the label is positive
        assert record["labels_informative"] == int(np.sum((full.preds[items, 1] == 1) | (full.labels[items] == 1)))
        assert [c["name"] for c in record["components"]] == ["f1[rival]"]
        assert record["components"][0]["value"] == pytest.approx(s.estimate(own).value[0])
        assert s.pool.system_names == ("system", "rival")
    estimate = json.loads(ok("estimate", session, "--json").stdout)
    assert [c["name"] for c in estimate["components"]] == ["f1", "f1[rival]"]
    text = ok("add-system", session, rival, "--name", "again").stdout
    assert "100 labels reused" in text and "f1[again]" in text
    table = ok("estimate", session).stdout
    assert "f1 on pool" in table and "f1+f1" not in table  # each measure once in the title, systems in the rows


def test_later_batches_show_the_new_system_and_extend_the_draws(labeled_session, ok):
    session, rival, full = labeled_session
    ok("add-system", session, rival)
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 40).stdout))
    assert len(batch) == 40
    np.testing.assert_array_equal(batch["pred_rival"], full.preds[batch["item_id"].to_numpy(), 1])
    with Session.open(session) as s:
        assert len(np.unique(s.draws.items)) == 140 and s.measure.names == ("f1", "f1[rival]")


def test_a_predictions_file_missing_items_is_one_error_and_changes_nothing(labeled_session, tmp_path, fails):
    session, rival, _ = labeled_session
    before = session.read_bytes()
    short = tmp_path / "short.csv"
    pd.read_csv(rival).drop(index=[4, 9, 700]).to_csv(short, index=False)
    message = fails("add-system", session, short)
    assert "short.csv" in message and "3 pool item(s) missing, e.g. 4" in message
    no_pred = tmp_path / "no_pred.csv"
    pd.read_csv(rival).drop(columns="pred").to_csv(no_pred, index=False)
    assert "no column 'pred'" in fails("add-system", session, no_pred)
    no_prob = tmp_path / "no_prob.csv"
    pd.read_csv(rival).drop(columns="prob").to_csv(no_prob, index=False)
    assert fails("add-system", session, no_prob) == (  # once a bare "prob: the pool gives the systems' probs"
        f"error: predictions file {str(no_prob)!r}: no column 'score' or 'prob'; the pool's systems give scores and "
        "probabilities, so the new system must give one of them: name its column with --score-col or --prob-col; "
        "the file has columns item_id, pred")
    assert "does not exist" in fails("add-system", session, tmp_path / "absent.csv")
    assert "choose a new" in fails("add-system", session, rival, "--name", "system")
    bad_pred = tmp_path / "bad_pred.csv"
    pd.read_csv(rival).assign(pred=7).to_csv(bad_pred, index=False)
    message = fails("add-system", session, bad_pred)
    assert "bad_pred.csv" in message and "7" in message
    assert session.read_bytes() == before


@pytest.mark.parametrize(("column", "value", "message"), [
    ("prob", "high", "column 'prob': 'high' is not a number; probabilities must be numbers"),
    ("prob", "0,7", "column 'prob': '0,7' is not a number; write decimals with a point (0.5, not 0,5)"),
    ("prob", "1.5", "column 'prob': value 1.5 is outside [0, 1]; probabilities must lie in [0, 1]"),
    ("pred", "yes", ("column 'pred': 'yes' is not a number; predictions must be numbers (classes 0..C-1: write each "
                     "class name as its number)")),
    ("pred", "2", "column 'pred': value 2 is not 0 or 1; the session's pool is binary, so predictions must be 0 or 1"),
    ("score", "inf", "column 'score': value inf is infinite; scores must be finite"),
])
def test_a_bad_value_in_a_predictions_file_names_its_row_and_column(labeled_session, tmp_path, fails, column, value,
                                                                    message):
    session, rival, _ = labeled_session
    before = session.read_bytes()
    bad = tmp_path / "bad.csv"
    frame = pd.read_csv(rival, dtype=str).assign(score=lambda f: f["prob"])
    frame.loc[5, column] = value  # data row 6
    frame.to_csv(bad, index=False, sep=";" if "," in value else ",")
    assert fails("add-system", session, bad) == f"error: predictions file {str(bad)!r}, data row 6, {message}"
    assert session.read_bytes() == before
