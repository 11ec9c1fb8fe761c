"""Seeded on-demand simulations (Chaganty et al., EMNLP 2017, Sec. 3)."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.ondemand.config import OnDemandConfig
from labelwise.ondemand.corpus import SystemSpec, make_kbp_corpus
from labelwise.ondemand.costs import Prices
from labelwise.ondemand.simulate import (
    build_problem,
    run_repeats,
    simulate,
    true_scores,
)

SPECS = [
    SystemSpec("a", threshold=0.0, gap=1.0, noise=0.5),
    SystemSpec("b", threshold=0.6, gap=1.5, noise=0.6),
    SystemSpec("a2", kind="copy", source=0, change=0.05),
    SystemSpec("rare", kind="disjoint", threshold=-0.2, gap=0.8, noise=0.5),
]


def small_corpus(seed=0):
    return make_kbp_corpus(n_docs=400, systems=SPECS, seed=seed)


def test_simulate_report_true_scores_and_costs():
    c = small_corpus()
    config = OnDemandConfig(half_width=0.1, prices=Prices(0.5, 20.0))
    res = simulate(c["instance_id"], c["doc_id"], c["correct"], c["systems"], config, repeats=3, seed=1,
                   n_docs=c["n_docs"])
    assert [s["name"] for s in res["systems"]] == ["a", "b", "a2", "rare"]
    keys = {"mse_precision", "mse_recall", "mse_f1", "coverage_precision", "coverage_recall", "labels", "documents"}
    for s, (_, ids) in zip(res["systems"], c["systems"], strict=True):
        assert set(s) == {"name", "true_precision", "true_recall", "true_f1", "joint", "simple"}
        assert set(s["joint"]) == keys == set(s["simple"])
        correct = dict(zip(c["instance_id"], c["correct"], strict=True))
        assert s["true_precision"] == pytest.approx(np.mean([correct[x] for x in ids]))
        assert s["true_recall"] == pytest.approx(sum(correct[x] for x in ids) / c["correct"].sum())
    assert res["cost"]["exhaustive_dollars"] == 400 * 20.0
    spent = sum(0.5 * s["joint"]["labels"] + 20.0 * s["joint"]["documents"] for s in res["systems"])
    assert res["cost"]["joint_dollars"] == pytest.approx(spent)
    # the near-copy reuses the first system's verifications
    assert res["systems"][2]["joint"]["labels"] < 0.5 * res["systems"][2]["simple"]["labels"]


def test_build_problem_rejects_unknown_instances():
    c = small_corpus()
    with pytest.raises(ValueError, match="missing"):
        build_problem(c["instance_id"], c["doc_id"], c["correct"], [("x", ["nope"])])


@pytest.mark.slow
def test_coverage_of_joint_and_simple_intervals():
    c = small_corpus(seed=3)
    pb = build_problem(c["instance_id"], c["doc_id"], c["correct"], c["systems"], n_docs=c["n_docs"])
    truth = true_scores(pb)
    # 150 runs: with half the variance (half-widths over sqrt 2) the joint precision of one system covered 0.79,
    # the simple intervals' 0.77-0.85, below 0.897
    R = 150
    config = OnDemandConfig(half_width=0.08)
    tol = 3 * np.sqrt(0.95 * 0.05 / R)  # three binomial standard errors of a coverage estimate
    for joint in (True, False):
        runs = run_repeats(pb, config, R, seed=11, joint=joint)
        for k in ("precision", "recall"):
            cover = ((runs.lo[k] <= truth[k]) & (truth[k] <= runs.hi[k])).mean(axis=0)
            assert np.all(cover >= 0.95 - tol), (joint, k, cover)
        # the joint precision estimate is unbiased: mean error within 4 standard errors
        err = runs.est["precision"] - truth["precision"]
        assert np.all(np.abs(err.mean(axis=0)) <= 4 * err.std(axis=0) / np.sqrt(R) + 1e-12)
