"""The joint precision combined with the simple one (Owen 2013, Sec. 8.9 control variates), and equal-cost runs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from labelwise.ondemand.composite import (
    composite_precision,
    composite_variance,
    composite_weight,
)
from labelwise.ondemand.config import OnDemandConfig, Problem
from labelwise.ondemand.estimators import (
    finite_population_correction,
    joint_precision,
    simple_precision,
)
from labelwise.ondemand.intervals import floored_normal_interval
from labelwise.ondemand.planning import predicted_composite_variance
from labelwise.ondemand.process import Process
from labelwise.ondemand.universe import (
    Universe,
    is_uniform,
    stack_systems,
    system_distribution,
)

# a broad system and a high-precision one inside it (4 of 5 correct)
TRUTH = np.array([1, 1, 1, 1, 0, 1, 0, 0, 1])
K = TRUTH.size
MEMBERS = [np.arange(K), np.array([0, 1, 2, 3, 4])]
P = stack_systems([system_distribution(mb, K) for mb in MEMBERS])
SIZES = np.array([mb.size for mb in MEMBERS])


def joint_and_simple(n):
    """Joint and simple estimates of both systems for every equally likely sample (without replacement)."""
    fpc = finite_population_correction(SIZES, np.array(n), is_uniform(P))
    joint, simple = [], []
    for combo in itertools.product(*[itertools.combinations(MEMBERS[j], n[j]) for j in range(len(n))]):
        idx = np.concatenate([np.array(c) for c in combo])
        grp = np.concatenate([np.full(len(c), j) for j, c in enumerate(combo)])
        f = TRUTH[idx].astype(float)
        joint.append(joint_precision(P, idx, grp, f, np.array(n), fpc).value)
        simple.append(simple_precision(grp, f, np.array(n), fpc).value)
    return np.array(joint), np.array(simple)


@pytest.mark.parametrize("n", [(3, 2), (4, 3), (2, 3), (5, 2)])
def test_fixed_weight_combination_unbiased_and_its_variance_predicted_exactly(n):
    joint, simple = joint_and_simple(n)
    v_joint, v_simple = joint.var(axis=0), simple.var(axis=0)
    cov = ((joint - joint.mean(axis=0)) * (simple - simple.mean(axis=0))).mean(axis=0)
    beta = composite_weight(v_joint, v_simple, cov)
    combined = (1 - beta) * joint + beta * simple
    np.testing.assert_allclose(combined.mean(axis=0), P @ TRUTH, atol=1e-12)
    np.testing.assert_allclose(combined.var(axis=0), composite_variance(beta, v_joint, v_simple, cov), atol=1e-12)
    assert np.all(combined.var(axis=0) <= np.minimum(v_joint, v_simple) + 1e-12)
    # the planner's prediction at the true labels is this exact variance
    predicted = [predicted_composite_variance(P, np.array(n, dtype=float), i, TRUTH.astype(float), SIZES,
                                              is_uniform(P)) for i in range(2)]
    np.testing.assert_allclose(predicted, combined.var(axis=0), atol=1e-12)


def test_weight_is_zero_without_a_simple_estimate_and_one_on_a_census():
    np.testing.assert_array_equal(composite_weight([0.01, 0.01], [np.inf, 0.0], [0.0, 0.0]), [0.0, 1.0])
    np.testing.assert_array_equal(composite_variance(np.array([0.0, 1.0]), [0.01, 0.01], [np.inf, 0.0], 0.0),
                                  [0.01, 0.0])


def test_plug_in_combination_beats_the_joint_on_a_high_precision_subset_and_covers():
    """Seeded: a 97%-precision system inside a broad one, where the plain joint estimator's variance is 3.5 times
    the simple one's (planner at the true labels); the combination's MSE is within 3 standard errors of the
    better of the two, and its normal interval covers within 3 standard errors of 0.95."""
    K, R, n = 1000, 400, np.array([150, 40])
    rng = np.random.default_rng(3)
    inner = np.arange(300)
    truth = np.where(np.arange(K) < inner.size, rng.random(K) < 0.97, rng.random(K) < 0.4).astype(float)
    PP = stack_systems([system_distribution(np.arange(K), K), system_distribution(inner, K)])
    fpc = finite_population_correction(np.array([K, inner.size]), n, is_uniform(PP))
    true = (PP @ truth)[1]
    est = np.empty((R, 3))
    covered = np.empty(R, dtype=bool)
    for r in range(R):
        idx = np.concatenate([rng.choice(K, n[0], replace=False), rng.choice(inner, n[1], replace=False)])
        grp = np.repeat([0, 1], n)
        f = truth[idx]
        joint = joint_precision(PP, idx, grp, f, n, fpc)
        comp = composite_precision(joint, joint.var, grp, f, n, fpc)
        est[r] = joint.value[1], simple_precision(grp, f, n, fpc).value[1], comp.value[1]
        lo, hi = floored_normal_interval(comp.value, comp.var, 0.95, comp.ess)
        covered[r] = lo[1] <= true <= hi[1]
    sq = (est - true) ** 2
    mse, se = sq.mean(axis=0), sq.std(axis=0, ddof=1) / np.sqrt(R)
    assert mse[0] > mse[1] + 3 * np.hypot(se[0], se[1])  # the plain joint loses to the simple estimator here
    best = np.argmin(mse[:2])
    assert mse[2] <= mse[best] + 3 * np.hypot(se[2], se[best])
    assert covered.mean() >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / R)


def test_label_budget_buys_exactly_that_many_new_verifications_taking_free_draws():
    """Equal-cost runs: system b buys ``budget`` new verifications and takes every already verified draw on the
    way, stopping just before the next unverified one."""
    K = 12
    members = [np.arange(0, 8), np.arange(4, 12)]
    pb = Problem(Universe.from_docs(np.arange(K) // 3), stack_systems([system_distribution(m, K) for m in members]),
                 np.ones(K, dtype=bool), ("a", "b"))
    for budget in range(5):
        proc = Process(pb, OnDemandConfig(), np.random.default_rng(budget), joint=False, fixed_documents=2,
                       label_budget=np.array([4, budget]))
        proc.arrive()
        verified_by_a = proc.perm[0][:4]
        proc.arrive()
        assert proc.labels_at.tolist() == [4, budget]
        drawn = proc.perm[1][:proc.n[1]]
        assert np.isin(drawn, verified_by_a, invert=True).sum() == budget
        assert proc.n[1] < members[1].size  # b has 6 instances a never verified: the next draw is one of them
        assert not np.isin(proc.perm[1][proc.n[1]], verified_by_a)
