"""Bisection for the number of new verifications (Chaganty et al., EMNLP 2017, Sec. 3.3) and costs."""

from __future__ import annotations

import numpy as np
import pytest

from labelwise.ondemand.costs import CostLedger, Prices
from labelwise.ondemand.estimators import finite_population_correction, joint_precision
from labelwise.ondemand.planning import (
    plan_documents,
    plan_verifications,
    predicted_joint_variance,
    predicted_simple_variance,
)
from labelwise.ondemand.universe import is_uniform, stack_systems, system_distribution

Z = 1.959963984540054


def test_simple_plan_is_the_smallest_n_meeting_the_worst_case():
    f_hat = np.full(1000, 0.5)
    p = np.full(1000, 1e-3)

    def var(n):
        return predicted_simple_variance(n, f_hat, p, 1000, True)

    n = plan_verifications(var, 0, 1000, 0.05)
    assert Z * np.sqrt(var(n)) <= 0.05 < Z * np.sqrt(var(n - 1))
    # 385 with replacement, fewer from a finite population of 1000
    assert 270 <= n <= 280


def test_joint_variance_monotone_and_plan_reuses_overlap():
    K = 400
    rng = np.random.default_rng(0)
    truth = rng.random(K) < 0.7
    P = stack_systems([system_distribution(np.arange(0, 300), K), system_distribution(np.arange(100, 400), K)])
    sup, wor = np.array([300, 300]), is_uniform(P)
    f_hat = np.where(np.arange(K) < 300, truth, 0.7).astype(float)  # system 0's instances verified

    def var(n1, n0=150):
        return predicted_joint_variance(P, np.array([n0, n1]), 1, f_hat, sup, wor)

    values = [var(k) for k in range(2, 301, 7)]
    assert np.all(np.diff(values) <= 1e-15)  # non-increasing in n_m
    n_joint = plan_verifications(var, 0, 300, 0.05)
    n_disjoint = plan_verifications(lambda n: var(n, n0=0) if n else np.inf, 0, 300, 0.05)
    assert n_joint < n_disjoint
    assert Z * np.sqrt(var(n_joint)) <= 0.05


def test_joint_plan_realized_half_width_close_to_target():
    # the predicted variance at the planned n matches the realized variance of the joint estimator
    K = 600
    rng = np.random.default_rng(1)
    truth = (rng.random(K) < 0.6).astype(float)
    P = stack_systems([system_distribution(np.arange(0, 400), K), system_distribution(np.arange(200, 600), K)])
    sup, wor = np.array([400, 400]), is_uniform(P)
    n0 = 120
    f_hat = truth.copy()  # oracle plug-in: isolates the bisection from the prior

    def var(n):
        return predicted_joint_variance(P, np.array([n0, n]), 1, f_hat, sup, wor)

    n1 = plan_verifications(var, 0, 400, 0.05)
    ests = []
    for _ in range(1500):
        idx = np.concatenate([rng.choice(400, n0, replace=False), 200 + rng.choice(400, n1, replace=False)])
        grp = np.repeat([0, 1], [n0, n1])
        fpc = finite_population_correction(sup, np.array([n0, n1]), wor)
        ests.append(joint_precision(P, idx, grp, truth[idx], np.array([n0, n1]), fpc).value[1])
    realized = Z * np.std(ests)
    assert abs(realized / 0.05 - 1) < 0.15
    assert np.mean(ests) == pytest.approx(P[1] @ truth, abs=3 * np.std(ests) / np.sqrt(1500))


def test_plan_documents_closed_form():
    # kappa (1/D - 1/N) <= (hw/z)^2
    D = plan_documents(np.array([0.5]), np.array([1.0]), np.array([0.0]), 10, 5000, 0.05)
    target = (0.05 / Z) ** 2
    assert 0.5 * (1 / D - 1 / 5000) <= target < 0.5 * (1 / (D - 1) - 1 / 5000)
    assert plan_documents(np.array([0.5]), np.array([1.0]), np.array([0.0]), 900, 5000, 0.05) == 900
    assert plan_documents(np.array([50.0]), np.array([1.0]), np.array([0.0]), 10, 100, 0.05) == 100


def test_costs():
    prices = Prices(verification=0.2, document=10.0)
    ledger = CostLedger(prices)
    ledger.buy(labels=100, documents=3)
    ledger.buy(labels=5)
    assert ledger.spent == pytest.approx(51.0)
    assert prices.exhaustive(2000) == 20000.0
    with pytest.raises(ValueError):
        ledger.buy(labels=-1)


def test_plug_in_keeps_reused_labels_out_of_a_near_copys_own_outputs():
    """After system 0 is fully verified, a near-copy's outputs nobody else predicts get the prior, not the
    reused labels' precision; its shared unverified outputs get the reused labels shrunk toward the
    system's rate, itself shrunk toward the prior."""
    from labelwise.ondemand.config import OnDemandConfig, Problem
    from labelwise.ondemand.process import Process
    from labelwise.ondemand.universe import Universe

    K = 12
    truth = np.array([1] * 8 + [0] * 4, dtype=bool)
    P = stack_systems([system_distribution(np.arange(0, 6), K), system_distribution(np.arange(2, 12), K)])
    pb = Problem(Universe.from_docs(np.arange(K) // 3), P, truth, ("a", "copy"))
    proc = Process(pb, OnDemandConfig(prior=0.5, prior_strength=2.0), np.random.default_rng(0),
                   fixed_labels=np.array([6, 0]), fixed_documents=2)
    proc.arrive()  # system 0: all six instances verified, all correct
    f_hat = proc._f_hat(1)
    np.testing.assert_allclose(f_hat[2:6], 1.0)  # verified
    np.testing.assert_allclose(f_hat[6:12], 0.5)  # only the copy predicts them: the prior
    proc.known[4:6] = -1  # two shared instances unverified: 2 of 2 shared labels correct, shrunk twice
    system = (2 * 1.0 + 2 * 0.5) / (2 + 2)
    np.testing.assert_allclose(proc._f_hat(1)[4:6], (2 + 2 * system) / (2 + 2))


def test_plug_in_strata_follow_which_earlier_systems_predict_an_instance():
    """A near-copy of system a whose swapped outputs system b predicts: their unverified labels get b's
    stratum shrunk toward the copy's rate over its strata (the size-weighted mean of their label rates),
    not the copied outputs' precision (4 of 4 correct) alone."""
    from labelwise.ondemand.config import OnDemandConfig, Problem
    from labelwise.ondemand.process import Process
    from labelwise.ondemand.universe import Universe

    K = 12
    truth = np.array([1] * 6 + [0] * 6, dtype=bool)
    P = stack_systems([system_distribution(np.arange(0, 6), K), system_distribution(np.arange(6, 12), K),
                       system_distribution(np.arange(2, 8), K)])
    pb = Problem(Universe.from_docs(np.arange(K) // 3), P, truth, ("a", "b", "copy"))
    proc = Process(pb, OnDemandConfig(prior=0.5, prior_strength=2.0), np.random.default_rng(0),
                   fixed_labels=np.array([6, 6, 0]), fixed_documents=2)
    proc.arrive()
    proc.arrive()  # a and b fully verified
    proc.known[6:8] = -1
    f_hat = proc._f_hat(2)
    np.testing.assert_allclose(f_hat[2:6], 1.0)
    # nothing verified in b's stratum: the copy's rate, 4 of 4 correct shrunk toward the prior
    np.testing.assert_allclose(f_hat[6:8], (4 * 1.0 + 2 * 0.5) / (4 + 2))
    proc.known[7] = 0  # one of b's stratum verified (wrong): rates 1 over 4 instances, 0 over 2
    system = (5 * (4 * 1.0 + 2 * 0.0) / 6 + 2 * 0.5) / (5 + 2)
    np.testing.assert_allclose(proc._f_hat(2)[6], (0 + 2 * system) / (1 + 2))
