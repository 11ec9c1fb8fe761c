"""The upper end of a ratio estimated 0 because no labeled item is a hit (no true positive labeled)."""

import numpy as np
import pytest
from scipy.special import betaincinv
from scipy.stats import betabinom

import labelwise as lw
from labelwise.datasets import make_pool
from labelwise.estimators import (
    hits_upper,
    make_estimate,
    support_terms,
    with_zero_hits,
)
from labelwise.measures import combine


def _pool(preds=(0, 1, 2, 3)):
    # items 0-3 predicted positive (by default), 3, 5 and 6 positive: TP = {3}, PP = 4, P = 3
    pred = np.zeros(10, dtype=np.int64)
    pred[list(preds)] = 1
    labels = np.zeros(10, dtype=np.int64)
    labels[[3, 5, 6]] = 1
    return lw.Pool.from_arrays(None, preds=pred, scores=pred.astype(float), labels=labels), labels


def _with(est, measure, pool, labels, items, excluded=()):
    """``with_zero_hits`` of ``est`` from the labels of ``items``, ``excluded`` outside the population."""
    items = np.asarray(items)
    outside = pool.outputs(np.asarray(excluded, dtype=np.int64)) if len(excluded) else None
    return with_zero_hits(est, measure, lambda part: support_terms(part, pool.outputs()), pool.outputs(items),
                          labels[items], items, outside)


def _at_zero(measure, n=4):
    """An estimate of ``measure`` at 0 (no hit) with no variance, as a design gives it from such labels."""
    R = np.tile([0.0, 0.3], measure.size)
    return make_estimate(measure, R, np.zeros((measure.size, measure.size)), n, n)


@pytest.mark.parametrize("unlabeled, labeled, level, expected", [
    (0, 5, 0.95, 0),
    (1, 1, 0.95, 1),  # P(hit) = (1/2) / (1 + 1) = 0.25 > 0.025
    (1, 18, 0.95, 1),  # P(hit) = (1/2) / 19 > 0.025
    (1, 20, 0.95, 0),  # P(hit) = (1/2) / 21 < 0.025
    (2, 0, 0.95, 2),  # BB(2, 1/2, 1/2): 3/8, 1/4, 3/8
    (2, 0, 0.2, 1),  # its 0.6 quantile: 3/8 < 0.6 <= 5/8
])
def test_hits_upper_is_the_beta_binomial_quantile_by_hand(unlabeled, labeled, level, expected):
    assert hits_upper(unlabeled, labeled, level) == expected


def test_hits_upper_matches_scipy_and_the_beta_quantile_beyond_a_million_items():
    for u, n, level in [(3, 1, 0.95), (50, 3, 0.95), (500, 3, 0.9), (500, 500, 0.95), (20_000, 40, 0.95)]:
        assert hits_upper(u, n, level) == int(betabinom.ppf((1 + level) / 2, u, 0.5, n + 0.5))
    # 3 of 500 predicted positives labeled leave most of them open; all but one labeled, none
    assert hits_upper(497, 3, 0.95) > 150 and hits_upper(1, 499, 0.95) == 0
    assert hits_upper(2_000_000, 10, 0.95) == np.ceil(2e6 * betaincinv(0.5, 10.5, 0.975))


@pytest.mark.parametrize("name, floor, rise, end", [
    # F1's denominator (y + f) / 2: the labeled items' (0: 1/2, 5 and 6: 1/2 each) and the unlabeled predicted
    # positives' lowest (1/2 each); a hit raises it by 1/2: 2c / (PP + P_labeled + c)
    ("f1", 3.0, 0.5, lambda c: 2 * c / (4 + 2 + c)),
    ("precision", 4.0, 0.0, lambda c: c / 4),  # c / PP
    ("recall", 2.0, 1.0, lambda c: c / (2 + c)),  # c / (P_labeled + c)
])
def test_a_ratio_at_zero_reaches_the_hits_its_unlabeled_predicted_positives_may_hold(name, floor, rise, end):
    pool, labels = _pool()
    measure = lw.make_measure(name, pool)
    # one predicted positive labeled (a FP), the FNs 5 and 6 and a TN: no TP; items 1, 2, 3 predicted positive
    # and unlabeled: c = the 0.975 quantile of BB(3, 1/2, 3/2) = 3 (P(3) = 0.078)
    est = _at_zero(measure)
    assert est.interval()[1][0] < 0.6
    out = _with(est, measure, pool, labels, [0, 5, 6, 7])
    assert out.zero_hits[0].tolist() == pytest.approx([3, 1, 1, floor, rise], rel=1e-12)
    lo, hi = out.interval()
    assert lo[0] == 0.0 and hi[0] == pytest.approx(end(3), rel=1e-12)
    assert "no true positive labeled" in out.basis
    # at another level, the quantile at that level: BB(3, 1/2, 3/2)'s 0.75 quantile
    c = int(betabinom.ppf(0.75, 3, 0.5, 1.5))
    assert 0 < c < 3
    assert out.interval(0.5)[1][0] == pytest.approx(end(c), rel=1e-12)
    # the other methods keep their own interval
    assert out.interval(method="beta")[1][0] == est.interval(method="beta")[1][0]


def test_a_census_of_the_predicted_positives_stays_exact():
    # every predicted positive (0, 1, 2: all negatives) labeled: F1 = 0 is exact, its interval unchanged
    pool, labels = _pool(preds=(0, 1, 2))
    measure = lw.make_measure("f1", pool)
    est = _at_zero(measure)
    out = _with(est, measure, pool, labels, [0, 1, 2, 5])
    assert out is est and out.zero_hits is None


def test_excluded_items_leave_the_support():
    # item 3 (the unlabeled TP) is not judgeable: two unlabeled predicted positives, PP = 3 in the population
    pool, labels = _pool()
    measure = lw.make_measure("f1", pool)
    out = _with(_at_zero(measure), measure, pool, labels, [0, 5, 6, 7], excluded=[3])
    c = int(betabinom.ppf(0.975, 2, 0.5, 1.5))
    assert out.interval()[1][0] == pytest.approx(2 * c / (3 + 2 + c), rel=1e-12)


def test_only_ratios_at_zero_with_no_hit_labeled_change():
    pool, labels = _pool()
    both = combine(lw.make_measure("precision", pool), lw.make_measure("accuracy", pool),
                   lw.make_measure("recall", pool))
    est = make_estimate(both, np.array([0.0, 0.4, 0.1, 0.0, 0.2]), np.diag([0.0, 0.01, 0.0]), 4, 4)
    out = _with(est, both, pool, labels, [0, 5, 6, 7])
    assert np.isnan(out.zero_hits[1]).all()
    lo, hi = out.interval()
    assert hi[[0, 2]] == pytest.approx([3 / 4, 3 / 5], rel=1e-12)
    assert (lo[1], hi[1]) == tuple(x[1] for x in est.interval())
    # a labeled hit (item 3), or an estimate off its bound: nothing changes
    assert _with(est, both, pool, labels, [0, 3, 5]) is est
    off = make_estimate(both, np.array([0.1, 0.4, 0.1, 0.1, 0.2]), np.diag([0.01, 0.01, 0.01]), 4, 4)
    assert _with(off, both, pool, labels, [0, 5, 6, 7]) is off


def test_a_session_estimate_at_zero_reaches_the_end_at_any_design():
    # 2 TPs among 42 predicted positives, 20 positives: 50 labels find no TP
    labels = np.zeros(2000, np.int64)
    labels[:20] = 1
    preds = np.zeros(2000, np.int64)
    preds[[0, 1, *range(100, 140)]] = 1
    scores = np.random.default_rng(0).normal(size=2000) + preds
    pool = lw.Pool.from_arrays(None, preds=preds, scores=scores, labels=labels)
    for design, seed in [("importance", 2), ("passive", 0)]:
        session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=seed, budget=100)
        session.run(lw.oracle.TruthOracle(pool), 50, 50)
        est = session.estimate()
        labeled = np.flatnonzero(session.labels >= 0)
        pp = int(preds[labeled].sum())
        assert est.value[0] == 0 and pp and not np.any(preds[labeled] * labels[labeled])
        c = hits_upper(42 - pp, pp)
        assert c > 0
        assert est.interval()[1][0] >= 2 * c / (42 + labels[labeled].sum() + c) - 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_an_added_systems_f1_at_zero_covers_on_a_rare_pool(design):
    # benchmarks/add_system.py's 1:1000 pool with B "different": B's F1 (0.16) is estimated 0 from the reused
    # labels in about half of the runs (no TP among its 1-2 labeled predicted positives); those intervals were
    # [0, ~0] and covered 0.50 (online-poisson) / 0.47 (importance) over 40 runs.  At 0.95, 40 runs cover at least
    # 34 with probability 0.99
    full = make_pool(20_000, prevalence=0.001, n_systems=2, separation=2.5, seed=2)
    pool_a = lw.Pool.from_arrays(full.item_ids, preds=full.preds[:, :1], scores=full.scores[:, :1],
                                 probs=full.probs[:, :1], labels=full.labels, system_names=["A"])
    b = {"preds": full.preds[:, 1], "scores": full.scores[:, 1], "probs": full.probs[:, 1]}
    tp, pp, p = np.sum(b["preds"] * full.labels), b["preds"].sum(), full.labels.sum()
    truth = 2 * tp / (pp + p)
    covered, at_zero = 0, 0
    for r in range(40):
        s = lw.Session(pool_a, lw.make_measure("f1", pool_a), design, seed=r)
        s.run(lambda ids: full.labels[pool_a.positions(ids)], 1000, 100)
        est = s.add_system("B", **b).estimate
        lo, hi = est.interval()
        covered += lo[0] <= truth <= hi[0]
        at_zero += est.value[0] == 0
    assert at_zero >= 10
    assert covered >= 34
