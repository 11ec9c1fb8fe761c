"""The interval of a measure whose loss totals are all known but one: the image of that total's interval."""

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ndtri
from scipy.stats import beta

import labelwise as lw
from labelwise.draws import Draws, Sample
from labelwise.estimators import make_estimate
from labelwise.estimators.segment import segment_totals, total_bounds, with_segment
from labelwise.measures import combine
from labelwise.measures.totals import Totals
from labelwise.simulate import covers

Z = ndtri(0.975)


def _tiny():
    """20 items: 0-2 predicted positive and negative (no true positive), 10 and 11 the positives."""
    preds = np.zeros(20, dtype=np.int64)
    preds[:3] = 1
    labels = np.zeros(20, dtype=np.int64)
    labels[[10, 11]] = 1
    return lw.Pool.from_arrays(None, preds=preds, scores=preds.astype(float), labels=labels), labels


def _by_hand(name, fn, fp=3, n=20):
    """``name`` of a system with no true positive, ``fp`` false positives and ``fn`` false negatives."""
    tn = n - fp - fn
    if name == "mcc":
        return -fp * fn / np.sqrt(fp * fn * (tn + fp) * (tn + fn))
    if name == "balanced_accuracy":
        return (0.0 + tn / (tn + fp)) / 2
    return 0.0  # Fowlkes-Mallows: TP / sqrt(PP P)


def _sample(items, labels):
    """The labels of ``items``, each drawn once."""
    items = np.asarray(items)
    ones = np.ones(items.size)
    return Sample(Draws(items, ones, ones), labels[items], items.size)


def _segment(measure, pool, labels, items, R, sd):
    """``with_segment`` of the delta method's estimate from ``R`` with only the positives' total uncertain (``sd``),
    as a design gives it, the labels those of ``items``."""
    S = np.diag([0.0, sd**2, 0.0])
    J = measure.finite_jacobian(R)
    est = make_estimate(measure, R, J @ S @ J.T, len(items), len(items))
    return est, with_segment(est, measure, pool, _sample(items, labels), lambda totals: make_estimate(totals, R, S, 8, 8))


@pytest.mark.parametrize("name", ["mcc", "balanced_accuracy", "fowlkes_mallows"])
def test_every_predicted_positive_labeled_and_no_true_positive_gives_the_measure_over_the_feasible_misses(name):
    pool, labels = _tiny()
    measure = lw.make_measure(name, pool)
    # items 0-7 labeled (all negative): TP = 0 and PP = 3 known, the 12 unlabeled items hold 0 to 12 positives
    lowest, highest, step = total_bounds(measure, pool, np.arange(8), labels[:8])
    assert lowest.tolist() == [0.0, 0.0, 3 / 20] and highest.tolist() == [0.0, 12 / 20, 3 / 20]
    assert step.tolist() == [1 / 20, 1 / 20, np.inf]
    # an estimate of one positive with a standard error of 10 (a design's model of the unlabeled items, wide):
    # the delta method's interval leaves the values any number of misses gives (MCC and TPR are 0 at most)
    est, out = _segment(measure, pool, labels, np.arange(8), np.array([0.0, 1 / 20, 3 / 20]), 10 / 20)
    feasible = [_by_hand(name, fn) for fn in range(1, 13)]  # no positive at all: MCC and recall undefined
    lo, hi = out.interval()
    assert min(feasible) - 1e-15 <= lo[0] <= hi[0] <= max(feasible) + 1e-15
    assert hi[0] == pytest.approx(max(feasible), rel=1e-12, abs=1e-15)  # the interval reaches 0 positives: 1
    assert out.value[0] == est.value[0] == pytest.approx(_by_hand(name, 1), rel=1e-12, abs=1e-15)
    assert "known by a census" in out.basis
    assert est.interval()[1][0] > max(feasible) + 1e-3  # Fowlkes-Mallows: the Jeffreys interval on 8 draws
    # 4 positives estimated with a standard error of 1.2 of the 12 the labels allow: the union of 4 +- 1.2 z and
    # the Beta interval of the share 1/3 with variance 0.1^2, Beta(k/3 + 1/2, 2k/3 + 1/2) with
    # k = (1/3)(2/3) / 0.01 - 1 (Yilmaz et al.)
    est, out = _segment(measure, pool, labels, np.arange(8), np.array([0.0, 4 / 20, 3 / 20]), 1.2 / 20)
    k = (1 / 3) * (2 / 3) / 0.01 - 1
    lower, upper = 12 * beta.ppf([0.025, 0.975], k / 3 + 0.5, 2 * k / 3 + 0.5)
    assert 1 < 4 - 1.2 * Z < lower and upper > 4 + 1.2 * Z  # skewed: the normal's lower end, the Beta's upper
    ends = sorted(_by_hand(name, fn) for fn in (4 - 1.2 * Z, upper))
    assert tuple(x[0] for x in out.interval()) == pytest.approx(ends, rel=1e-9, abs=1e-15)
    # the standard error the interval implies
    assert out.std[0] == pytest.approx((ends[1] - ends[0]) / (2 * Z), rel=1e-9, abs=1e-15)


def test_no_positive_estimated_takes_the_measure_at_one():
    # P estimated 0 (MCC and balanced accuracy undefined there) with a standard error of 1 of 12: the value at
    # one positive, the interval from it to the Jeffreys posterior's upper end, Beta(1/2, k + 1/2) whose
    # variance is (1/12)^2 (Brown, Cai and DasGupta 2001)
    pool, labels = _tiny()
    variance = lambda k: 0.5 * (k + 0.5) / ((k + 1) ** 2 * (k + 2))
    k = brentq(lambda k: variance(k) - 1 / 144, 0.0, 1e3)
    upper = 12 * beta.ppf(0.975, 0.5, k + 0.5)
    assert 3.4 < upper < 3.7  # about 3.5 standard errors, where the normal interval reaches 1.96
    for name in ("mcc", "balanced_accuracy"):
        measure = lw.make_measure(name, pool)
        est, out = _segment(measure, pool, labels, np.arange(8), np.array([0.0, 0.0, 3 / 20]), 1 / 20)
        assert not est.defined[0] and out.defined[0]
        assert out.value[0] == pytest.approx(_by_hand(name, 1), rel=1e-12)
        ends = sorted(_by_hand(name, fn) for fn in (1.0, upper))
        assert tuple(x[0] for x in out.interval()) == pytest.approx(ends, rel=1e-9)


def test_ratios_accuracy_and_two_uncertain_totals_keep_their_interval():
    pool, labels = _tiny()
    mcc = lw.make_measure("mcc", pool)
    both = combine(lw.make_measure("f1", pool), lw.make_measure("accuracy", pool), mcc)
    R = np.array([0.0, 0.1, 0.0, 1 / 20, 3 / 20, 0.0, 1 / 20, 3 / 20])
    est = make_estimate(both, R, np.diag([1e-4, 1e-4, 1e-4]), 8, 8)
    sample = _sample(np.arange(8), labels)
    totals = lambda t: make_estimate(t, R[-3:], np.diag([0.0, 1e-4, 0.0]), 8, 8)
    out = with_segment(est, both, pool, sample, totals)
    lo, hi = out.interval()
    assert (lo[:2] == est.interval()[0][:2]).all() and (hi[:2] == est.interval()[1][:2]).all()
    assert hi[2] < 0 < est.interval()[1][2]
    # a predicted positive unlabeled (item 2): TP is uncertain too, and nothing changes
    part = _sample([0, 1, 3], labels)
    assert with_segment(est, both, pool, part, totals) is est
    assert with_segment(est, lw.make_measure("f1", pool), pool, sample, totals) is est


def _zero_tp_pool(n=5000, predicted=10, positives=8, seed=0):
    """A pool whose system has no true positive: its ``predicted`` positives (scores 0.6-0.9) are negatives, the
    positives lie among its predicted negatives, drawn by their scores."""
    rng = np.random.default_rng(seed)
    probs = rng.beta(0.5, 30, n)
    probs[:predicted] = rng.uniform(0.6, 0.9, predicted)
    labels = np.zeros(n, dtype=np.int64)
    rest = np.arange(predicted, n)
    labels[rng.choice(rest, positives, replace=False, p=probs[rest] / probs[rest].sum())] = 1
    return lw.Pool.from_arrays(None, preds=(probs >= 0.5).astype(np.int64), probs=probs, labels=labels)


def test_a_session_with_no_true_positive_stays_within_the_feasible_values():
    pool = _zero_tp_pool()
    truth = pool.labels
    for name in ("mcc", "balanced_accuracy"):
        measure = lw.make_measure(name, pool)
        session = lw.Session(pool, measure, "default", budget=200, seed=3)
        session.run(lw.TruthOracle(pool), 200, 50)
        labeled = session.sample().draws.items
        assert np.isin(np.arange(10), labeled).all()  # every predicted positive labeled: TP = 0, FP = 10 known
        found = int(truth[labeled].sum())
        feasible = [_by_hand(name, fn, fp=10, n=pool.n_items) for fn in range(max(found, 1), 5000 - 200 + found)]
        est = session.estimate()
        lo, hi = est.interval()
        assert est.defined[0] and min(feasible) - 1e-12 <= lo[0] <= hi[0] <= max(feasible) + 1e-12
        assert lo[0] <= _by_hand(name, 8, fp=10, n=pool.n_items) <= hi[0]


def test_zero_true_positive_intervals_cover_at_a_width_near_the_error():
    # 30 runs; coverage at least 0.95 less three binomial standard errors, width at most 4 x 3.92 RMSE (a normal
    # estimator's interval is 1x; the design's model of the positives left is wide on a pool this rare)
    pool = _zero_tp_pool()
    runs = 30
    result = lw.simulate(pool, lw.make_measure("mcc", pool), "default", budget=200, batch_size=50, repeats=runs,
                         seed=1, checkpoints=[100, 200])
    truth = float(result.true_value[0])
    values, lo, hi = result.values[..., 0], result.lower[..., 0], result.upper[..., 0]
    assert covers(lo, hi, truth).mean(axis=1).min() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
    rmse = np.sqrt(((values - truth) ** 2).mean(axis=1))
    assert ((hi - lo).mean(axis=1) <= 4 * 3.92 * rmse).all()


def test_totals_estimates_the_mean_losses():
    pool, labels = _tiny()
    mcc = lw.make_measure("mcc", pool)
    totals = Totals(mcc)
    assert totals == Totals(lw.make_measure("mcc", pool)) and hash(totals) == hash(Totals(mcc)) and totals != mcc
    R = np.array([[0.1, 0.2, 0.3]])
    assert (totals.value(R) == R).all() and (totals.jacobian(R) == np.eye(3)).all()
    assert (totals.loss(pool.outputs(), labels) == mcc.loss(pool.outputs(), labels)).all()


def _over_confident_rare_pool(n=50_000, positives=10, d=2.0, k=3.0, seed=3):
    """The robustness grid's weak over-confident pool (``benchmarks/grid.py``) with 1 positive in 5,000: scores
    ``x = d y + N(0, 1)``, probabilities ``sigmoid(k x calibrated logit)``, the top ``positives`` by score predicted
    positive (here none of them is one)."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, dtype=np.int64)
    labels[rng.choice(n, size=positives, replace=False)] = 1
    x = rng.standard_normal(n) + d * labels
    pi = positives / n
    logit = k * (np.log(pi / (1 - pi)) + d * x - d * d / 2)
    preds = np.zeros(n, dtype=np.int64)
    preds[np.argpartition(-x, positives - 1)[:positives]] = 1
    return lw.Pool.from_arrays(None, preds=preds, scores=logit, probs=1 / (1 + np.exp(-logit)), labels=labels)


def test_the_positives_left_are_read_in_hindsight_where_over_confident_scores_hide_them():
    # every predicted positive is labeled by 250 labels, so MCC's interval is the image of the positives' total's;
    # the mixture's model of the tail, over-confident, held 2-4 positives found to be all (s.e. 0.1-2 of the 10):
    # coverage 0.43. Now at least 0.95 less three binomial standard errors over 30 runs.
    pool = _over_confident_rare_pool()
    runs = 30
    result = lw.simulate(pool, lw.make_measure("mcc", pool), "default", budget=250, batch_size=50, repeats=runs,
                         seed=0, checkpoints=[250])
    truth = float(result.true_value[0])
    lo, hi = result.lower[0, :, 0], result.upper[0, :, 0]
    assert covers(lo, hi, truth).mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
    rmse = np.sqrt(((result.values[0, :, 0] - truth) ** 2).mean())
    assert (hi - lo).mean() <= 4 * 3.92 * rmse


def test_segment_totals_keep_the_estimate_and_take_the_larger_variance():
    pool = _over_confident_rare_pool()
    mcc = lw.make_measure("mcc", pool)
    session = lw.Session(pool, mcc, "default", budget=250, seed=0)
    session.run(lw.TruthOracle(pool), 250, 50)
    sample, totals = session.sample(), Totals(mcc)
    own = session.sampler.estimate(totals, sample, 0.95)
    hindsight = session.sampler.in_hindsight().estimate(totals, sample, 0.95)
    both = segment_totals(session.sampler, totals, sample, 0.95)
    assert session.sampler.design.variance == "mixture" and session.sampler.in_hindsight().in_hindsight() is None
    assert np.array_equal(both.R, own.R) and np.array_equal(hindsight.R, own.R)
    assert np.allclose(both.std, np.maximum(own.std, hindsight.std))
    assert both.std[1] > own.std[1]  # the positives' total: the mixture's model left it nearly certain
