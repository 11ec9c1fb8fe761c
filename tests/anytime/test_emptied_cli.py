"""``estimate --anytime`` when the confidence sequence has excluded every value: flagged, not a silent [0, 1]."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import labelwise.anytime.session as anytime_session
from labelwise.cli import app
from labelwise.datasets import make_pool
from labelwise.session import Session

runner = CliRunner()


@pytest.fixture
def labeled_session(tmp_path, write_pool_csv):
    """A passive session file with one batch of 50 labels."""
    pool = make_pool(500, prevalence=0.3, separation=2.0, seed=3)
    path = tmp_path / "s.lw"
    assert runner.invoke(app, ["init", str(write_pool_csv(pool, tmp_path / "pool.csv", labels=False)), "-s",
                               str(path), "-d", "passive"]).exit_code == 0
    with Session.open(path) as s:
        ids = s.next_batch(50)
        s.add_labels(ids, pool.labels[pool.positions(ids)])
    return path


def test_an_emptied_sequence_is_named_in_the_output_and_the_json(labeled_session, monkeypatch):
    path = labeled_session
    fine = json.loads(runner.invoke(app, ["estimate", str(path), "--anytime", "--json"]).stdout)
    assert fine["sequence_emptied"] == []
    # the same session as if its sequence had excluded every value after its one batch
    monkeypatch.setattr(anytime_session, "anytime_path", lambda *a, **k: (
        np.array([50]), np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1), dtype=bool)))
    flagged = json.loads(runner.invoke(app, ["estimate", str(path), "--anytime", "--json"]).stdout)
    assert flagged["sequence_emptied"] == ["f1"]
    assert {k: v for k, v in flagged.items() if k != "sequence_emptied"}.keys() == fine.keys() - {"sequence_emptied"}
    text = runner.invoke(app, ["estimate", str(path), "--anytime"])
    assert text.exit_code == 0 and "sequence of f1 has excluded every value" in text.stdout
    assert "excluded every value" not in runner.invoke(app, ["estimate", str(path)]).stdout


def test_certify_flags_an_emptied_sequence_in_its_line_and_json(labeled_session, monkeypatch):
    path = labeled_session
    certify = ["certify", str(path), "--at-least", "0.5"]
    fine = json.loads(runner.invoke(app, [*certify, "--json"]).stdout)
    assert fine["emptied"] is False
    assert "excluded every value" not in runner.invoke(app, certify).stdout
    monkeypatch.setattr(anytime_session, "anytime_path", lambda *a, **k: (
        np.array([50]), np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1), dtype=bool)))
    flagged = json.loads(runner.invoke(app, [*certify, "--json"]).stdout)
    assert flagged["emptied"] is True and flagged["verdict"] == "undecided"
    assert flagged.keys() == fine.keys() == {"verdict", "component", "threshold", "lower", "upper", "labels", "level",
                                             "emptied"}
    text = runner.invoke(app, certify)
    assert text.exit_code == 0 and "sequence of f1 has excluded every value" in text.stdout
