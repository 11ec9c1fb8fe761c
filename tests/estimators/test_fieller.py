"""Fieller's interval for a ratio of totals (Fieller 1954) and its use by the importance and poisson designs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import ndtri

import labelwise as lw
from labelwise.estimators import (
    fieller_interval,
    horvitz_thompson_totals_covariance,
    importance_totals_covariance,
    normal_interval,
    with_fieller,
)
from labelwise.estimators.fieller import FIELLER_BASIS

Z2 = ndtri(0.975) ** 2


def test_fieller_matches_a_hand_computation():
    """R = (0.3, 0.6), S = [[4, 2], [2, 9]] 1e-4: the roots of (0.3 - 0.6 t)^2 = z^2 (4 - 4 t + 9 t^2) 1e-4,
    i.e. (0.36 - 9e-4 z^2) t^2 - 2 (0.18 - 2e-4 z^2) t + (0.09 - 4e-4 z^2) = 0."""
    a, b, c = 0.36 - 9e-4 * Z2, 0.18 - 2e-4 * Z2, 0.09 - 4e-4 * Z2
    expected = ((b - np.sqrt(b * b - a * c)) / a, (b + np.sqrt(b * b - a * c)) / a)
    lo, hi = fieller_interval(np.array([0.3, 0.6]), np.array([[4e-4, 2e-4], [2e-4, 9e-4]]))
    assert (lo, hi) == pytest.approx(expected, rel=1e-12)
    # the defining property: |R1 - t R2| = z sd(R1 - t R2) at both ends, below it inside, above it outside
    S = np.array([[4e-4, 2e-4], [2e-4, 9e-4]])
    gap = lambda t: (0.3 - 0.6 * t) ** 2 - Z2 * np.array([1.0, -t]) @ S @ np.array([1.0, -t])
    assert gap(lo) == pytest.approx(0.0, abs=1e-15) and gap(hi) == pytest.approx(0.0, abs=1e-15)
    assert gap((lo + hi) / 2) < 0 < min(gap(lo - 0.01), gap(hi + 0.01))


def test_fieller_with_an_exact_denominator_is_the_normal_interval():
    """S_12 = S_22 = 0: Fieller's set is R1 / R2 +- z sd(R1) / R2."""
    lo, hi = fieller_interval(np.array([0.2, 0.5]), np.array([[1e-3, 0.0], [0.0, 0.0]]))
    n_lo, n_hi = normal_interval(0.4, 1e-3 / 0.25)
    assert (lo, hi) == pytest.approx((float(n_lo), float(n_hi)), rel=1e-12)


def test_a_denominator_not_significantly_positive_gives_the_whole_range():
    """R2^2 <= z^2 S_22: the set is unbounded, the measure's whole range is returned."""
    lo, hi = fieller_interval(np.array([0.01, 0.015]), np.array([[1e-4, 0.0], [0.0, 1e-4]]), lower=0.0, upper=1.0)
    assert (lo, hi) == (0.0, 1.0)
    lo, hi = fieller_interval(np.array([0.01, 0.015]), np.array([[1e-4, 0.0], [0.0, 1e-4]]))  # no range: unbounded
    assert (lo, hi) == (-np.inf, np.inf)


def test_fieller_covers_a_ratio_of_normal_totals_exactly_where_the_delta_method_does_not():
    """Seeded: 20,000 draws of normal totals with a noisy denominator (sd 0.15 of its mean 1, so the set is
    bounded in all but ~1e-6 of them).  Fieller's coverage is 0.95 exactly, so it lies within 3 s.e. of it; the
    delta method's coverage departs from 0.95 by more than 3 s.e. (0.958)."""
    rng = np.random.default_rng(0)
    truth, S = np.array([0.5, 1.0]), np.array([[0.01, 0.005], [0.005, 0.0225]])
    R = rng.multivariate_normal(truth, S, size=20_000)
    se = 3 * np.sqrt(0.95 * 0.05 / len(R))
    lo, hi = fieller_interval(R, np.broadcast_to(S, (len(R), 2, 2)))
    assert abs(np.mean((lo <= 0.5) & (0.5 <= hi)) - 0.95) < se
    G = R[:, 0] / R[:, 1]
    var = (S[0, 0] - 2 * G * S[0, 1] + G**2 * S[1, 1]) / R[:, 1] ** 2
    d_lo, d_hi = normal_interval(G, var)
    assert abs(np.mean((d_lo <= 0.5) & (0.5 <= d_hi)) - 0.95) > se


def test_fieller_covers_more_than_the_delta_method_on_an_enumerated_poisson_sample():
    """Precision 5/8 on a 12-item pool under Poisson sampling: every one of the 2^12 samples enumerated with its
    probability (samples with no predicted positive have no estimate and count as misses for both).  Exact
    coverage of the 95% intervals: Fieller's 0.82, the delta method's 0.38."""
    f = np.array([1] * 8 + [0] * 4)
    y = np.array([1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0])
    b = np.array([0.9, 0.3, 0.3, 0.2, 0.2, 0.3, 0.2, 0.2, 0.3, 0.3, 0.3, 0.3])
    losses = np.stack([y * f, f], axis=1).astype(float)
    truth = losses[:, 0].sum() / losses[:, 1].sum()
    masks = np.array(list(itertools.product([False, True], repeat=f.size)))
    prob = np.prod(np.where(masks, b, 1 - b), axis=1)
    covered = np.zeros((2, len(masks)))
    for k, s in enumerate(masks):  # 4096 tiny samples: enumeration, not a hot path
        if not (s & (f == 1)).any():
            continue
        R = (losses[s] / b[s, None]).sum(axis=0) / f.size
        S = horvitz_thompson_totals_covariance(losses[s], b[s], f.size)
        lo, hi = fieller_interval(R, S, 0.95, 0.0, 1.0)
        J = np.array([1.0, -R[0] / R[1]]) / R[1]
        d_lo, d_hi = normal_interval(R[0] / R[1], J @ S @ J, 0.95, 0.0, 1.0)
        covered[:, k] = [lo <= truth <= hi, d_lo <= truth <= d_hi]
    fieller, delta = covered @ prob
    assert prob.sum() == pytest.approx(1.0)
    assert fieller > delta + 0.3


def test_totals_covariances_are_the_designs_covariances_before_the_jacobian():
    """The F1 covariance of the design estimators is J S J^T with S the totals' covariance."""
    rng = np.random.default_rng(1)
    pool = lw.make_pool(n_items=200, prevalence=0.3, seed=2)
    measure = lw.make_measure("f1", pool)
    items = rng.choice(pool.n_items, 40, replace=False)
    losses = measure.loss(pool.outputs(items), pool.labels[items])
    pi, w, counts = rng.uniform(0.1, 0.9, 40), rng.uniform(0.5, 2.0, 40), rng.integers(1, 3, 40)
    R, cov = lw.estimators.horvitz_thompson_moments(measure, losses, pi, pool.n_items)
    J = measure.jacobian(R)[0]
    assert J @ horvitz_thompson_totals_covariance(losses, pi, pool.n_items) @ J == pytest.approx(cov[0, 0])
    R, _, cov = lw.estimators.importance_moments(measure, losses, w, counts=counts)
    J = measure.jacobian(R)[0]
    assert J @ importance_totals_covariance(losses, w, counts) @ J == pytest.approx(cov[0, 0])


def test_the_auto_interval_is_the_union_of_the_designs_and_fiellers():
    """with_fieller keeps the estimate and its variance; the auto interval holds both intervals; other
    measures are left alone."""
    pool = lw.make_pool(n_items=200, prevalence=0.3, seed=2)
    f1, accuracy = lw.make_measure("f1", pool), lw.make_measure("accuracy", pool)
    R, S = np.array([0.1, 0.2]), np.array([[4e-4, 3e-4], [3e-4, 9e-4]])
    est = lw.estimators.make_estimate(f1, R, np.array([[1e-3]]), 100, 100)
    fiel = with_fieller(est, f1, lambda: S)
    assert fiel.value == est.value and fiel.cov == est.cov
    lo, hi = fiel.interval()
    b_lo, b_hi = est.interval()
    f_lo, f_hi = fieller_interval(R, S, 0.95, 0.0, 1.0)
    assert (lo[0], hi[0]) == (min(b_lo[0], f_lo), max(b_hi[0], f_hi))
    assert with_fieller(est, accuracy, lambda: S).totals_cov is None
    assert est.basis == "" and fiel.basis == FIELLER_BASIS  # what the interval assumes says Fieller's


def test_poisson_interval_covers_on_a_rare_pool_with_few_labeled_positives(assert_interval_covers_and_is_tight):
    """1:1000 (100 positives in 100,000), the sample planned for 2000 labels, 100 runs stopped at 250 labels
    (about 10 labeled positives): coverage >= 0.95 - 3 s.e. and mean width <= 2 x 3.92 x RMSE.  The
    delta-method Beta interval alone covers 0.77 here (width ratio 0.58): its sd, taken at a ratio estimated
    from few positives, is too small exactly in the runs whose estimate is off."""
    pool = lw.make_pool(n_items=100_000, prevalence=0.001, separation=3.0, seed=1)
    result = lw.simulate(pool, lw.make_measure("f1", pool), "poisson", budget=250, batch_size=50, repeats=100,
                         seed=0, checkpoints=[250], design_params={"budget": 2000})
    assert_interval_covers_and_is_tight(result)


@pytest.mark.parametrize("design", ["importance", "poisson"])
def test_the_designs_attach_the_totals_covariance_to_ratios_only(design):
    """A session's F1 and precision estimates carry the totals' covariance (their interval holds Fieller's, and
    says so); accuracy's do not."""
    pool = lw.make_pool(5000, prevalence=0.05, seed=4)
    session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=2)
    session.run(lambda ids: pool.labels[ids], budget=300, batch_size=50)
    for name in ("f1", "precision"):
        est = session.estimate(lw.make_measure(name, pool))
        assert est.totals_cov is not None and est.totals_cov.shape == (2, 2) and FIELLER_BASIS in est.basis
    accuracy = session.estimate(lw.make_measure("accuracy", pool))
    assert accuracy.totals_cov is None and FIELLER_BASIS not in accuracy.basis
