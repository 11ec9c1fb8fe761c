"""AUC from a subsampled log: rank form against pairs, unbiasedness by enumeration, DeLong variance,
coverage, and the deviation bound's 1:1 optimum."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.logs import (
    auc_deviation_bound,
    balanced_keep_rates,
    logged_auc,
    weighted_auc,
)
from labelwise.logs.auc import logit_interval


def pairwise_auc(score, label, weight):
    """The definition: pairs weighted w_i w_j, ties half (O(n^2))."""
    pos, neg = label != 0, label == 0
    diff = score[pos][:, None] - score[neg][None, :]
    pair = (diff > 0) + 0.5 * (diff == 0)
    w = weight[pos][:, None] * weight[neg][None, :]
    return float((w * pair).sum() / w.sum())


def test_rank_form_equals_the_pairwise_definition_with_ties_and_weights():
    rng = np.random.default_rng(3)
    score = rng.integers(0, 6, 80).astype(float)  # many ties
    label = (rng.uniform(size=80) < 0.3).astype(int)
    weight = rng.uniform(0.5, 4.0, 80)
    assert weighted_auc(score, label, weight) == pytest.approx(pairwise_auc(score, label, weight), rel=1e-12)
    assert weighted_auc(score, label) == pytest.approx(pairwise_auc(score, label, np.ones(80)), rel=1e-12)


def test_oblivious_negative_subsampling_is_unbiased_over_every_keep_pattern(keep_patterns):
    score = np.array([0.9, 0.4, 0.7, 0.4, 0.1, 0.8, 0.3])
    label = np.array([1, 1, 0, 0, 0, 0, 1])
    rate = np.full(7, 0.3)
    full = weighted_auc(score, label)
    expected, total = 0.0, 0.0
    for kept, prob in keep_patterns(label, rate):
        if (label[kept] == 0).any():  # the AUC needs a negative: condition on one kept
            expected += prob * logged_auc(score[kept], label[kept], rate[kept]).estimate
            total += prob
    assert total == pytest.approx(1 - 0.7**4)
    assert expected / total == pytest.approx(full, rel=1e-12)


def test_unweighted_variance_is_delongs():
    rng = np.random.default_rng(5)
    score, label = rng.normal(size=60), (rng.uniform(size=60) < 0.4).astype(int)
    score[label == 1] += 1.0
    pos, neg = score[label == 1], score[label == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    auc = psi.mean()
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)  # DeLong's structural components
    var = np.mean((v10 - auc) ** 2) / pos.size + np.mean((v01 - auc) ** 2) / neg.size
    est = logged_auc(score, label)
    assert est.estimate == pytest.approx(auc)
    assert est.std_error == pytest.approx(np.sqrt(var), rel=1e-10)


def test_logit_interval_closed_form_and_boundary():
    # logit(0.9) = ln 9; half-width on the logit scale z * 0.02 / (0.9 * 0.1)
    half = 1.959963984540054 * 0.02 / 0.09
    lo, hi = logit_interval(0.9, 0.02**2)
    assert lo == pytest.approx(9 * np.exp(-half) / (1 + 9 * np.exp(-half)), rel=1e-12)
    assert hi == pytest.approx(9 * np.exp(half) / (1 + 9 * np.exp(half)), rel=1e-12)
    assert 0.9 - lo > hi - 0.9  # longer toward 1/2, where the skewed AUC strays
    lo, hi = logit_interval(np.array([1.0, 0.0]), np.array([0.0, 0.01]))  # no logit: the clipped normal interval
    assert lo == pytest.approx([1.0, 0.0]) and hi == pytest.approx([1.0, 0.196], rel=1e-3)


def test_logged_auc_interval_is_the_logit_interval_of_its_variance():
    rng = np.random.default_rng(9)
    score, label = rng.normal(size=300), (rng.uniform(size=300) < 0.3).astype(int)
    score[label == 1] += 1.5
    est = logged_auc(score, label, 0.2, level=0.9)
    lo, hi = logit_interval(est.estimate, est.std_error**2, 0.9)
    assert [est.lower, est.upper] == pytest.approx([float(lo), float(hi)], rel=1e-12)


def test_constant_negative_weights_do_not_move_the_auc():
    rng = np.random.default_rng(8)
    score, label = rng.normal(size=200), (rng.uniform(size=200) < 0.2).astype(int)
    assert logged_auc(score, label, 0.05).estimate == pytest.approx(weighted_auc(score, label), rel=1e-12)
    assert logged_auc(score, label, 0.05).effective_size == pytest.approx((label == 1).sum() + 20 * (label == 0).sum())


def test_a_log_without_negatives_is_refused():
    with pytest.raises(ValueError, match="one positive and one negative"):
        logged_auc([0.2, 0.3], [1, 1])


def test_deviation_bound_formula_and_its_one_to_one_minimum():
    assert auc_deviation_bound(1000, 0.5, 0.05) == pytest.approx(np.sqrt(np.log(40) / 500))
    shares = np.linspace(0.05, 0.95, 19)
    assert shares[np.argmin(auc_deviation_bound(1000, shares))] == pytest.approx(0.5)


@pytest.mark.parametrize(("counts", "rates"), [
    ((100, 10_000, 1000), (1.0, 0.09)),  # few positives: keep them all, fill the budget with negatives
    ((5000, 10_000, 1000), (0.1, 0.05)),  # both plentiful: 500 of each, the 1:1 ratio
    ((300, 400, 1000), (1.0, 1.0)),  # the budget holds every row
])
def test_balanced_keep_rates(counts, rates):
    assert balanced_keep_rates(*counts) == pytest.approx(rates)


@pytest.mark.slow
@pytest.mark.parametrize("keep_rate", [1.0, 0.1, 0.01])
def test_interval_covers_under_negative_subsampling(keep_rate):
    repeats, rng = 300, np.random.default_rng(21)
    n, truth = 20_000, 0.7602499389065233  # Phi(1 / sqrt(2)): positives shifted by 1 in a unit normal
    below, above, errors, widths = [], [], [], []
    for _ in range(repeats):
        label = (rng.uniform(size=n) < 0.05).astype(int)
        score = rng.normal(size=n) + label
        kept = (label == 1) | (rng.uniform(size=n) < keep_rate)
        est = logged_auc(score[kept], label[kept], keep_rate)
        below.append(est.upper < truth)
        above.append(est.lower > truth)
        errors.append(est.estimate - truth)
        widths.append(est.upper - est.lower)
    coverage, se = 1 - np.mean(below) - np.mean(above), np.sqrt(0.95 * 0.05 / repeats)
    assert abs(coverage - 0.95) <= 3 * se
    # the logit interval misses about as often on either side: each tail 0.025 within 3 standard errors
    assert max(np.mean(below), np.mean(above)) <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / repeats)
    assert np.mean(widths) <= 2 * 3.92 * np.sqrt(np.mean(np.square(errors)))
