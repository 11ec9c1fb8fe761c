"""The score interval for a ratio of totals (estimators/ratio_score.py): its rates, its variance, its coverage."""

import numpy as np
import pytest

from labelwise.estimators import fieller_interval
from labelwise.estimators.ratio_score import (
    jeffreys_leaf_variance,
    ratio_score_draws,
    tilted_variance,
)

# one leaf per group: predicted positives (a positive is a true positive) and predicted negatives (a false
# negative); losses (2 tp, 2 tp + fp + fn) of F1 for label 0 and label 1
GROUP_LOSSES = np.array([[[0.0, 1.0], [0.0, 0.0]],  # label 0: a false positive, a true negative
                         [[2.0, 2.0], [0.0, 1.0]]])  # label 1: a true positive, a false negative


def test_jeffreys_leaf_variance_is_the_beta_variance_with_half_counts():
    from scipy.stats import beta

    a, b = np.array([0.0, 3.0, 1e-9]), np.array([10.0, 2.0, 500.0])
    assert jeffreys_leaf_variance(a, b) == pytest.approx(beta(a + 0.5, b + 0.5).var(), rel=1e-12)


def test_the_moved_rate_balances_the_pools_total_and_sets_the_variance():
    labeled = np.array([[2.0, 2.0], [0.0, 1.0]])  # a true positive and a false positive
    factor_lab = np.array([0.1, 0.2])
    unlabeled, factor = np.array([3.0, 50.0]), np.array([0.5, 4.0])
    t = np.array([0.5])
    # with the positives' rate among predicted positives fixed (no variance), only the negatives' leaf moves
    variance, side = tilted_variance(t, labeled, factor_lab, unlabeled, factor, GROUP_LOSSES, np.array([0, 1]),
                                     np.array([0.6, 0.02]), np.array([0.0, 1e-3]))
    d_lab = labeled[:, 0] - 0.5 * labeled[:, 1]  # 1.0, -0.5
    d0 = GROUP_LOSSES[0, :, 0] - 0.5 * GROUP_LOSSES[0, :, 1]  # -0.5, 0
    d1 = GROUP_LOSSES[1, :, 0] - 0.5 * GROUP_LOSSES[1, :, 1]  # 1.0, -0.5
    # total 0: 0.5 + 3 (-0.5 + 0.6 * 1.5) + 50 r (-0.5) = 0
    r = (d_lab.sum() + 3 * (d0[0] + 0.6 * (d1[0] - d0[0]))) / (50 * 0.5)
    expected = (d_lab**2 @ factor_lab + 3 * 0.5 * (0.4 * d0[0] ** 2 + 0.6 * d1[0] ** 2)
                + 50 * 4.0 * r * d1[1] ** 2)
    assert side[0] == 0
    assert variance[0] == pytest.approx(expected, rel=1e-9)


def test_a_ratio_no_labelling_reaches_is_out_of_reach():
    # every unlabeled item a predicted negative: F1 cannot exceed the labeled true positives' share
    labeled = np.array([[2.0, 2.0], [0.0, 1.0]])
    _, side = tilted_variance(np.array([0.1, 0.16, 0.6, 0.9]), labeled, np.ones(2), np.array([0.0, 10.0]),
                              np.ones(2), GROUP_LOSSES, np.array([0, 1]), np.array([0.5, 0.1]), np.array([0.01, 0.01]))
    # F1 is 2 / (3 + fn) for the fn in 0..10 false negatives among the unlabeled items: from 2/13 to 2/3
    assert side.tolist() == [-1, 0, 0, 1]


def _importance_runs(runs: int, n_draws: int, seed: int):
    """Score and Fieller intervals of i.i.d. draws from a proposal on a 1,000-item pool whose rare false negatives
    (19 among 950 predicted negatives) the proposal draws with a tenth of the predicted positives' probability."""
    rng = np.random.default_rng(seed)
    group = np.repeat([0, 1], [50, 950])
    label = np.zeros(1000, dtype=int)
    label[:30] = 1  # 30 true positives, 20 false positives
    label[50:69] = 1  # 19 false negatives
    N = group.size
    losses = GROUP_LOSSES[label, group]  # (N, 2)
    truth = losses[:, 0].sum() / losses[:, 1].sum()
    q = np.where(group == 0, 10.0, 1.0)
    q /= q.sum()
    covered = {"score": 0, "fieller": 0}
    for _ in range(runs):
        items = rng.choice(N, size=n_draws, p=q)
        w = 1.0 / (N * q[items])
        R = (w[:, None] * losses[items]).mean(axis=0)
        distinct = np.unique(items)
        lab_group, lab_label = group[distinct], label[distinct]
        seen = np.bincount(lab_group, minlength=2)
        positives = np.bincount(lab_group, weights=lab_label, minlength=2)
        a, b = 0.5 + positives, 0.5 + seen - positives  # a Jeffreys model of each leaf, fitted to the same labels
        unlabeled = np.bincount(group, minlength=2) - seen
        draws = ratio_score_draws(R, 0.05, 0.0, 1.0, labeled_losses=losses[distinct],
                                  labeled_factor=1.0 / (n_draws * N**2 * q[distinct]),
                                  unlabeled=unlabeled.astype(float), unlabeled_factor=1.0 / (n_draws * N**2 * q[[0, 50]]),
                                  group_losses=GROUP_LOSSES, leaf=np.array([0, 1]), rate=a / (a + b),
                                  rate_var=jeffreys_leaf_variance(a, b))
        lo, hi = np.quantile(draws[:, 0], [0.025, 0.975])
        covered["score"] += lo <= truth <= hi
        wl = w[:, None] * losses[items]
        totals_cov = np.cov(wl.T) / n_draws
        f_lo, f_hi = fieller_interval(R, totals_cov, 0.95, 0.0, 1.0)
        covered["fieller"] += f_lo <= truth <= f_hi
    return {k: v / runs for k, v in covered.items()}


def test_score_interval_covers_where_the_draws_own_variance_does_not():
    # about one false negative drawn per run: the runs that draw none have a high F1 and a small plug-in variance
    # (over 1,200 runs: score 0.948, Fieller 0.869)
    runs = 300
    coverage = _importance_runs(runs, 100, seed=3)
    se = np.sqrt(0.95 * 0.05 / runs)
    assert coverage["score"] >= 0.95 - 3 * se, coverage
    assert coverage["fieller"] < 0.95 - 3 * se, coverage  # the failure the score interval is there for
