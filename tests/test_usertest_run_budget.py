"""``session.run(oracle, budget=B)`` on a new session file plans the design for B: the file must keep that
budget and that set-up, so the session reopened after a crash (or to look at it later) is the one that ran."""

from __future__ import annotations

import numpy as np
import pytest

import labelwise as lw


@pytest.mark.parametrize("design", ["importance", "poisson"])
def test_a_reopened_run_keeps_its_budget_and_anytime_interval(tmp_path, design):
    pool = lw.make_pool(3000, prevalence=0.05, seed=1)
    measure = lw.make_measure("f1", pool)
    path = tmp_path / "run.lws"
    session = lw.Session(pool, measure, design, seed=0, path=path)
    session.run(lw.TruthOracle(pool), budget=200, batch_size=50)
    reopened = lw.Session.open(path)
    assert (session.budget, reopened.budget) == (200, 200)
    assert reopened.estimate().to_dict() == session.estimate().to_dict()
    if design == "importance":  # the anytime interval's bets are tuned for the budget
        ran, read = session.estimate(anytime=True).to_dict(), reopened.estimate(anytime=True).to_dict()
        assert [c["lower"] for c in read["components"]] == [c["lower"] for c in ran["components"]]
        assert [c["upper"] for c in read["components"]] == [c["upper"] for c in ran["components"]]
        assert np.array_equal(reopened.next_batch(20), session.next_batch(20))  # and both go on alike


def test_a_run_crashed_before_its_first_labels_reopens_planned_for_its_budget(tmp_path):
    pool = lw.make_pool(3000, prevalence=0.05, seed=1)
    path = tmp_path / "crash.lws"
    session = lw.Session(pool, lw.make_measure("f1", pool), "poisson", seed=0, path=path)

    def crashing(ids):
        raise RuntimeError("the annotation tool went down")

    with pytest.raises(RuntimeError):
        session.run(lw.CallableOracle(crashing), budget=200, batch_size=50)
    reopened = lw.Session.open(path)
    assert reopened.budget == 200
    assert np.array_equal(reopened.next_batch(50), session.next_batch(50))
