"""The self-normalized joint precision post-stratified on the system's own stratum, and its interval.

Chaganty et al., "Importance sampling for unbiased on-demand evaluation of
knowledge base population", EMNLP 2017, Eq. 2, self-normalized; the own
stratum (instances no other sampled system predicts) has a known mass, so the
number of own draws that land there no longer moves the estimate.
"""

from __future__ import annotations

from dataclasses import replace
from statistics import NormalDist

import numpy as np
import pytest

from labelwise.ondemand.control_variate import own_region
from labelwise.ondemand.estimators import design_factor, finite_population_correction
from labelwise.ondemand.floors import own_share, reported_variance
from labelwise.ondemand.intervals import agresti_coull_floor, score_interval
from labelwise.ondemand.normalized import normalized_joint_precision
from labelwise.ondemand.planning import exchangeable_variance
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution

# system 0 on {0..3}; system 1 shares {2, 3} and alone predicts {4, 5, 6, 7} (its own stratum, mass 2/3)
K = 8
MEMBERS = [np.arange(4), np.array([2, 3, 4, 5, 6, 7])]
P = stack_systems([system_distribution(mb, K) for mb in MEMBERS])
SIZES = np.array([4, 6])
WOR = is_uniform(P)
# the shared instances all correct: the rest's share is exactly 1 whenever a draw lands there
TRUTH = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0])


def estimates_by_landing(n, post_stratified, every_sample):
    """Enumerated mean of system 1's estimate given the number of its own draws in its own stratum."""
    n = np.array(n)
    fpc, factor = finite_population_correction(SIZES, n, WOR), design_factor(SIZES, n, WOR)
    by_d: dict[int, list[float]] = {}
    for idx, grp in every_sample(MEMBERS, n):
        value = normalized_joint_precision(P, idx, grp, TRUTH[idx], n, fpc, factor,
                                           post_stratified=post_stratified).value[1]
        d = int(np.sum((grp == 1) & (idx >= 4)))
        by_d.setdefault(d, []).append(value)
    return {d: float(np.mean(v)) for d, v in by_d.items()}


@pytest.mark.parametrize("n", [(2, 2), (3, 3), (1, 4)])
def test_post_stratified_estimate_is_unbiased_given_the_landing_count(n, every_sample):
    pi = float(P[1] @ TRUTH)  # 4/6
    u = 4 / 6
    means = estimates_by_landing(n, True, every_sample)
    for d, mean in means.items():
        if d == 0:  # no draw in the own stratum: its share is put at 1/2, the rest exactly 1
            assert mean == pytest.approx(u * 0.5 + (1 - u))
        elif d < n[1]:  # both strata reached
            assert mean == pytest.approx(pi, abs=1e-12)


def test_one_ratio_over_the_whole_output_is_not(every_sample):
    # the old estimator weights the own stratum by how many draws landed there
    means = estimates_by_landing((2, 3), False, every_sample)
    pi = float(P[1] @ TRUTH)
    assert max(abs(m - pi) for d, m in means.items() if 0 < d < 3) > 0.05


def reported(var, P, idx, grp, f, n, post_stratified):
    return reported_variance(var, *own_share(P, idx, grp, f, n, is_uniform(P)), post_stratified)


def test_post_stratified_reported_variance_adds_the_stratum_interval_to_the_rest():
    idx, grp = np.array([0, 2, 3, 4, 2]), np.array([0, 0, 0, 1, 1])
    n, f = np.array([3, 2]), TRUTH[idx]
    var = np.array([0.01, 0.02])
    u = (P * own_region(P, n)).sum(axis=1)
    # one own draw of four there, correct: plug-in 0, the floor at 1 x 3/3 = 1 effective draw
    own = u[1] ** 2 * agresti_coull_floor(np.array([1.0]), 1.0)[0]
    expected = (np.sqrt(var[1]) + np.sqrt(own)) ** 2
    out = reported(var, P, idx, grp, f, n, True)
    assert out[1] == pytest.approx(expected, rel=1e-12)
    # wider than the quadrature sum
    assert np.all(out > reported(var, P, idx, grp, f, n, False))
    assert reported(var, P, idx, grp, f, n, False)[1] == pytest.approx(var[1] + own, rel=1e-12)
    # two own draws of four there, one correct: the plug-in u^2 (1/4)(1 - 2/4)/(2 - 1) is above the floor at
    # 2 x 3/2 = 3 effective draws, u^2 (1/4)/(3 + z^2): the own stratum is in ``var``, which is kept
    idx, grp = np.array([0, 2, 3, 4, 5]), np.array([0, 0, 0, 1, 1])
    assert reported(var, P, idx, grp, TRUTH[idx], n, True)[1] == pytest.approx(var[1], rel=1e-12)
    # two identical systems have no own stratum: the variance is kept
    twins = stack_systems([system_distribution(MEMBERS[0], K)] * 2)
    np.testing.assert_allclose(reported(var, twins, idx[:3], np.array([0, 0, 1]), f[:3], np.array([2, 1]), True),
                               var, rtol=1e-12)


def near_copy_runs(c, post_stratified, runs=1000, seed=5):
    """Estimates, interval ends and own-stratum landing counts of the near-copy (seeded)."""
    fpc, factor = finite_population_correction(c.support, c.n, c.wor), design_factor(c.support, c.n, c.wor)
    alpha, beta = exchangeable_variance(c.P, c.n, c.support, c.wor, normalized=True)
    alone = own_region(c.P, c.n)[1]
    rng = np.random.default_rng(seed)
    grp = np.repeat(np.arange(2), c.n)
    out = np.empty((runs, 4))
    for r in range(runs):
        idx = np.concatenate([rng.choice(mb, k, replace=False) for mb, k in zip(c.members, c.n, strict=True)])
        f = c.truth[idx]
        e = normalized_joint_precision(c.P, idx, grp, f, c.n, fpc, factor, post_stratified=post_stratified)
        var = reported_variance(e.var, *own_share(c.P, idx, grp, f, c.n, c.wor), post_stratified)
        lo, hi = score_interval(e.value, var, alpha, beta, 0.95, e.ess)
        out[r] = e.value[1], lo[1], hi[1], np.sum(alone[idx[grp == 1]])
    return out


def test_near_copy_covers_when_no_own_draw_reaches_its_swapped_outputs(near_copy):
    # the copy's 10% swapped outputs (precision 0.3) and 20 own draws: about one run in eight draws none there
    c = replace(near_copy, n=np.array([40, 20]))
    runs = near_copy_runs(c, True)
    truth = float(c.precision[1])
    inside = (runs[:, 1] <= truth) & (truth <= runs[:, 2])
    missed = runs[:, 3] == 0
    for share in (inside, inside[missed]):
        assert share.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / share.size)
    rmse = np.sqrt(np.mean((runs[:, 0] - truth) ** 2))
    assert np.mean(runs[:, 2] - runs[:, 1]) <= 2 * 3.92 * rmse
    # post-stratification lowers the MSE: the one ratio over X_1 moves with the landing count
    old = near_copy_runs(c, False)
    z = NormalDist().inv_cdf(0.975)
    assert rmse**2 * (1 + z * np.sqrt(2 / runs.shape[0])) < np.mean((old[:, 0] - truth) ** 2)


def test_a_shared_part_no_draw_reached_gives_no_estimate():
    # only the own strata drawn: {0, 1} for system 0, {4, 5} for system 1; the shared {2, 3} unreached
    idx, grp, n = np.array([0, 1, 4, 5]), np.array([0, 0, 1, 1]), np.array([2, 2])
    fpc, factor = finite_population_correction(SIZES, n, WOR), design_factor(SIZES, n, WOR)
    est = normalized_joint_precision(P, idx, grp, TRUTH[idx], n, fpc, factor, post_stratified=True)
    assert np.all(np.isnan(est.value)) and np.all(np.isnan(est.var))
