"""The draws behind each component of an estimate, and the interval of a boundary estimate with no variance."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.special import betaincinv

import labelwise as lw
from labelwise.datasets import make_pool
from labelwise.estimators import component_counts, make_estimate
from labelwise.oracle import TruthOracle


def _pool():
    # item 0: TP, 1: FP, 2: FN, 3-5: TN
    preds = np.array([1, 1, 0, 0, 0, 0])
    labels = np.array([1, 0, 1, 0, 0, 0])
    return lw.Pool.from_arrays(None, preds=preds, scores=preds.astype(float), labels=labels), labels


@pytest.mark.parametrize("name, draws, expected", [
    ("recall", [0, 2, 3, 4], 2),  # the labeled positives: the TP and the FN
    ("recall", [2, 3, 4], 1),  # no TP: the FN still informs the ratio (its denominator)
    ("precision", [0, 1, 3, 4, 5], 2),  # the labeled predicted positives
    ("f1", [0, 1, 2, 3], 3),  # TP, FP and FN; a TN enters no total of F1
    ("accuracy", [0, 3, 4], 3),  # a mean: every draw, errors or not
])
def test_a_ratio_counts_the_draws_in_its_totals_and_a_mean_every_draw(name, draws, expected):
    pool, labels = _pool()
    measure = lw.make_measure(name, pool)
    items = np.array(draws)
    losses = measure.loss(pool.outputs(items), labels[items])
    assert component_counts(measure, losses).tolist() == [expected]


def test_accuracy_with_no_error_seen_still_counts_every_draw():
    # R = 0 (no error): the scaling test must not call the mean a ratio there
    pool, labels = _pool()
    measure = lw.make_measure("accuracy", pool)
    items = np.array([0, 3, 4, 5])
    losses = measure.loss(pool.outputs(items), labels[items])
    assert component_counts(measure, losses).tolist() == [4]


def test_a_boundary_estimate_with_no_variance_is_the_jeffreys_interval_on_its_own_draws():
    pool, _ = _pool()
    measure = lw.make_measure("recall", pool)
    est = make_estimate(measure, np.array([0.3, 0.3]), np.zeros((1, 1)), 500, 500)
    assert est.value[0] == 1.0
    lo_all, hi_all = est.interval()
    lo, hi = replace(est, counts=np.array([4])).interval()
    assert hi[0] == 1.0 and hi_all[0] == 1.0
    assert lo[0] == pytest.approx(betaincinv(4.5, 0.5, 0.025), rel=1e-9)
    assert lo_all[0] == pytest.approx(betaincinv(500.5, 0.5, 0.025), rel=1e-9)


def test_a_reused_pr_curve_point_rests_on_its_predicted_positives_not_on_every_draw():
    # an importance session's labels (draws with replacement: no draw is a census) reused for a PR curve: the
    # highest threshold's precision is 1 with no variance from the few labeled predicted positives there;
    # before, its interval rested on all 300 draws ([0.99, 1]), now on those draws
    pool = make_pool(5000, prevalence=0.01, seed=3)
    session = lw.Session(pool, lw.make_measure("f1", pool), "importance", seed=1, budget=300)
    session.run(TruthOracle(pool), 300, 50)
    curve = lw.make_measure("pr_curve:3", pool)
    est = session.estimate(curve)
    tops = [i for i, n in enumerate(est.names) if n.startswith("precision@") and est.std[i] == 0 and est.value[i] == 1]
    assert tops, "the pool and seed give a precision of 1 with no variance"
    top = tops[0]
    items = session.draws.items
    losses = curve.loss(pool.outputs(items), pool.labels[items])
    # the draws whose loss enters that precision's totals: those predicted positive at its threshold
    counted = int(np.sum(np.any(losses[:, curve.finite_jacobian(np.full(est.R.size, 0.3))[top] != 0] != 0, axis=1)))
    assert est.counts[top] == counted < 10
    lo, _ = est.interval()
    assert lo[top] == pytest.approx(betaincinv(counted + 0.5, 0.5, 0.025), rel=1e-9)
    assert lo[top] < 0.8


def test_without_replacement_a_certain_bound_keeps_every_draw():
    # online-poisson labels a block of predicted positives with certainty: a zero variance on a bound is then a
    # census of them (the exact F1 = 0 of the grid's 1:100,000 weak pools), and the interval stays on every draw
    pool = make_pool(20000, prevalence=0.01, seed=3)
    session = lw.Session(pool, lw.make_measure("f1", pool), "online-poisson", seed=0, budget=400)
    session.run(TruthOracle(pool), 400, 50)
    assert session.estimate(lw.make_measure("pr_curve:3", pool)).counts is None
