"""Estimators: exact expectations by enumeration, and coverage by seeded simulation.

Importance-sampling estimates follow N. G. Marchant and B. I. P. Rubinstein,
"Needle in a Haystack: Label-Efficient Evaluation under Extreme Class
Imbalance", KDD 2021 ("Marchant & Rubinstein" below).
"""

import itertools

import numpy as np
import pytest
from scipy import stats

from labelwise.datasets import make_pool
from labelwise.designs import ImportanceDesign, PassiveDesign
from labelwise.estimators import (
    ModelCovariance,
    beta_interval,
    ellipsoid_radius_sq,
    importance_moments,
    importance_risk,
    jeffreys_count,
    make_estimate,
    mixture_variance,
    normal_interval,
    stratified_moments,
)
from labelwise.measures import (
    Accuracy,
    FBeta,
    Precision,
    Recall,
    combine,
    make_measure,
)
from labelwise.pool import Pool


@pytest.fixture
def tiny_pool():
    return Pool.from_arrays(
        preds=[1, 0, 1, 0, 1],
        scores=[2.0, -1.0, 0.5, 0.1, 1.5],
        probs=[0.9, 0.2, 0.6, 0.3, 0.8],
        labels=[1, 1, 0, 0, 1],
    )


def _population_risk(measure, pool):
    return measure.loss(pool.outputs(), pool.labels).mean(axis=0)


def test_importance_estimator_of_R_is_exactly_unbiased(tiny_pool):
    """Enumerate all N^M ordered with-replacement samples (Marchant & Rubinstein eq. 1)."""
    measure = combine(FBeta(1.0), Accuracy())
    N, M = tiny_pool.n_items, 3
    q = np.array([0.35, 0.05, 0.25, 0.1, 0.25])
    losses = measure.loss(tiny_pool.outputs(), tiny_pool.labels)
    seqs = np.array(list(itertools.product(range(N), repeat=M)))  # (N^M, M)
    prob = q[seqs].prod(axis=1)
    assert prob.sum() == pytest.approx(1.0)
    R_hat = importance_risk(losses[seqs], 1.0 / (N * q[seqs]))  # batched over all samples
    R = losses.mean(axis=0)
    np.testing.assert_allclose(prob @ R_hat, R, rtol=1e-12)
    # the variance of R-hat is Var_q(w l) / M, and the plug-in estimate has expectation (M-1)/M of it
    acc = Accuracy()
    acc_losses = acc.loss(tiny_pool.outputs(), tiny_pool.labels)
    _, _, cov = importance_moments(acc, acc_losses[seqs], 1.0 / (N * q[seqs]))
    true_var = ((q * (acc_losses[:, 0] / (N * q)) ** 2).sum() - acc_losses.mean() ** 2) / M
    var_by_enumeration = prob @ (importance_risk(acc_losses[seqs], 1.0 / (N * q[seqs]))[:, 0] - acc_losses.mean()) ** 2
    assert var_by_enumeration == pytest.approx(true_var, rel=1e-12)
    assert prob @ cov[:, 0, 0] == pytest.approx((M - 1) / M * true_var, rel=1e-12)


def test_stratified_estimator_is_exactly_unbiased_with_unbiased_variance():
    """Enumerate every without-replacement sample with fixed n_h per stratum."""
    rng = np.random.default_rng(3)
    sizes = [3, 4, 2]
    n_h = [2, 2, 1]
    strata = np.repeat(np.arange(3), sizes)
    N = strata.size
    pool = Pool.from_arrays(preds=rng.integers(0, 2, N), labels=rng.integers(0, 2, N))
    measure = Accuracy()  # linear g: the variance estimator is exactly unbiased too
    losses = measure.loss(pool.outputs(), pool.labels)
    R = losses.mean(axis=0)
    members = [np.flatnonzero(strata == h) for h in range(3)]
    combos = [list(itertools.combinations(m, k)) for m, k in zip(members, n_h)]
    estimates, variances = [], []
    for choice in itertools.product(*combos):
        idx = np.concatenate([np.array(c) for c in choice])
        R_hat, _, cov, n_empty = stratified_moments(measure, losses[idx], strata[idx], np.array(sizes))
        assert n_empty == 0
        estimates.append(R_hat)
        variances.append(cov[0, 0])
    estimates = np.array(estimates)
    np.testing.assert_allclose(estimates.mean(axis=0), R, rtol=1e-12)
    # stratum 2 has n_h = 1: it borrows the pooled variance, so check unbiasedness on strata 0 and 1 only
    est01, var01 = [], []
    for choice in itertools.product(*combos[:2]):
        idx = np.concatenate([np.array(c) for c in choice] + [members[2]])
        R_hat, _, cov, _ = stratified_moments(measure, losses[idx], strata[idx], np.array(sizes))
        est01.append(R_hat[0])
        var01.append(cov[0, 0])
    true_var = np.var(est01)
    assert np.mean(var01) == pytest.approx(true_var, rel=1e-12)


def test_stratified_census_of_noisy_labels_without_the_correction_is_exactly_unbiased():
    """Every item labeled once by a stochastic oracle whose answer is Bernoulli(p_h) within stratum h:
    enumerating every label vector, E[R-hat] = R and, without the finite-population correction,
    E[var-hat] = Var(R-hat) (the sample variance of i.i.d. labels is unbiased)."""
    sizes, p = np.array([3, 2]), np.array([0.3, 0.8])
    strata = np.repeat([0, 1], sizes)
    measure = Accuracy()
    pool = Pool.from_arrays(preds=np.zeros(5, dtype=int), labels=np.zeros(5, dtype=int))
    estimates, variances, weights = [], [], []
    for labels in itertools.product([0, 1], repeat=5):
        y = np.array(labels)
        weights.append(np.prod(np.where(y == 1, p[strata], 1 - p[strata])))
        R_hat, _, cov, _ = stratified_moments(measure, measure.loss(pool.outputs(), y), strata, sizes,
                                              finite_population=False)
        estimates.append(R_hat[0])
        variances.append(cov[0, 0])
    weights, estimates = np.array(weights), np.array(estimates)
    mean = weights @ estimates
    assert mean == pytest.approx(sizes @ p / 5, rel=1e-12)
    assert weights @ np.array(variances) == pytest.approx(weights @ (estimates - mean) ** 2, rel=1e-12)
    # with the correction a census claims no error at all
    _, _, cov, _ = stratified_moments(measure, measure.loss(pool.outputs(), np.array([0, 1, 0, 1, 1])), strata,
                                      sizes)
    assert cov[0, 0] == 0


def test_stratified_leaves_out_unsampled_strata_and_reports_them():
    measure = Accuracy()
    losses = np.array([[0.0], [1.0], [1.0]])
    R, G, _cov, n_empty = stratified_moments(measure, losses, np.array([0, 0, 2]), np.array([5, 5, 10]))
    assert n_empty == 1
    # strata 0 and 2 re-weighted to 5/15 and 10/15
    assert R[0] == pytest.approx(5 / 15 * 0.5 + 10 / 15 * 1.0)
    assert G[0] == pytest.approx(1 - R[0])


def test_undefined_f1_is_flagged_with_the_whole_range_never_nan():
    measure = combine(FBeta(1.0), Precision(), Recall())
    # a sample with no positive label and no positive prediction
    losses = np.zeros((30, measure.dim))
    R, _, cov = importance_moments(measure, losses, np.ones(30))
    est = make_estimate(measure, R, cov, 30, 30)
    assert not est.defined.any()
    assert np.all(np.isfinite(est.value)) and np.all(np.isfinite(est.cov))
    np.testing.assert_allclose(est.value, 0.5)
    lo, hi = est.interval()
    np.testing.assert_allclose(lo, 0.0)
    np.testing.assert_allclose(hi, 1.0)
    assert "undefined" in str(est)


def test_beta_interval_matches_the_moment_matched_beta():
    mu, var = 0.7, 0.01
    k = mu * (1 - mu) / var - 1
    lo, hi = beta_interval(mu, var, 0.9)
    assert lo == pytest.approx(stats.beta.ppf(0.05, mu * k, (1 - mu) * k))
    assert hi == pytest.approx(stats.beta.ppf(0.95, mu * k, (1 - mu) * k))
    # rescaled range [-1, 1]
    lo2, hi2 = beta_interval(2 * mu - 1, 4 * var, 0.9, -1.0, 1.0)
    assert (lo2, hi2) == pytest.approx((2 * lo - 1, 2 * hi - 1))
    # no Beta has this variance: the whole range
    assert beta_interval(0.5, 0.3, 0.95) == pytest.approx((0.0, 1.0))
    # on the boundary: the clipped normal interval
    lo3, hi3 = beta_interval(0.0, 0.0004, 0.95)
    assert lo3 == 0.0 and hi3 == pytest.approx(1.959964 * 0.02, rel=1e-5)


def test_normal_interval_is_clipped():
    lo, hi = normal_interval(np.array([0.5, 0.99]), np.array([0.01, 0.01]), 0.95, 0.0, 1.0)
    assert lo[0] == pytest.approx(0.5 - 1.959964 * 0.1, rel=1e-6)
    assert hi[1] == 1.0


def test_ellipsoid_radius_follows_the_f_distribution():
    n, k = 200, 3
    expected = (n - 1) * k / (n - k) * stats.f.ppf(0.95, k, n - k)
    assert ellipsoid_radius_sq(n, k) == pytest.approx(expected)
    assert ellipsoid_radius_sq(2, 3) == pytest.approx(stats.chi2.ppf(0.95, 3))


# ----------------------------------------------------------------- coverage
REPEATS = 2000
DRAWS = 1000


@pytest.fixture(scope="module")
def coverage_pool():
    return make_pool(20_000, prevalence=0.05, separation=2.5, seed=11)


def _batched_estimates(pool, measure, q, seed):
    """REPEATS independent IS estimates from DRAWS draws each, all at once."""
    rng = np.random.default_rng(seed)
    N = pool.n_items
    idx = np.minimum(np.searchsorted(np.cumsum(q), rng.random((REPEATS, DRAWS))), N - 1)
    losses_all = measure.loss(pool.outputs(), pool.labels)
    return importance_moments(measure, losses_all[idx], 1.0 / (N * q[idx]))


@pytest.mark.slow
@pytest.mark.parametrize("design", [PassiveDesign(), ImportanceDesign()], ids=["passive", "importance"])
def test_95_percent_intervals_cover_f1(coverage_pool, design):
    """Coverage of the 95% Beta interval over 2000 seeded repeats of 1000 labels.

    With 2000 repeats the Monte-Carlo standard error of a 0.95 coverage is
    0.0049, so [0.93, 0.97] is a +-4 s.e. band around the nominal level.
    """
    pool = coverage_pool
    measure = FBeta(1.0)
    q = design.proposal(pool, measure)
    truth = measure.value(_population_risk(measure, pool))[0]
    _, G, cov = _batched_estimates(pool, measure, q, seed=5)
    assert np.isfinite(G).all()
    lo, hi = beta_interval(G[:, 0], cov[:, 0, 0], 0.95)
    coverage = np.mean((lo <= truth) & (truth <= hi))
    assert 0.93 <= coverage <= 0.97, coverage
    # the estimator is consistent: mean error small relative to the spread
    assert abs(G[:, 0].mean() - truth) < 3 * G[:, 0].std() / np.sqrt(REPEATS) + 0.01


@pytest.mark.slow
def test_importance_beats_passive_on_f1(coverage_pool):
    measure = FBeta(1.0)
    truth = measure.value(_population_risk(measure, coverage_pool))[0]
    mse = {}
    for design in (PassiveDesign(), ImportanceDesign()):
        _, G, _ = _batched_estimates(coverage_pool, measure, design.proposal(coverage_pool, measure), seed=9)
        mse[design.name] = np.mean((G[:, 0] - truth) ** 2)
    assert mse["importance"] < 0.5 * mse["passive"], mse


@pytest.mark.slow
def test_confidence_ellipsoid_covers_precision_and_recall(coverage_pool):
    pool = coverage_pool
    measure = combine(Precision(), Recall())
    q = ImportanceDesign().proposal(pool, measure)
    truth = measure.value(_population_risk(measure, pool))
    R, _G, cov = _batched_estimates(pool, measure, q, seed=21)
    inside = []
    for r in range(REPEATS):
        est = make_estimate(measure, R[r], cov[r], DRAWS, DRAWS)
        inside.append(est.ellipsoid_contains(truth))
    coverage = np.mean(inside)
    assert 0.93 <= coverage <= 0.97, coverage


def test_proposal_is_a_distribution_with_a_defensive_floor(coverage_pool):
    measure = make_measure("f1", coverage_pool)
    design = ImportanceDesign(defensive=0.2)
    q = design.proposal(coverage_pool, measure)
    assert q.sum() == pytest.approx(1.0)
    assert q.min() >= 0.2 / coverage_pool.n_items * (1 - 1e-12)
    # items predicted positive or likely positive get more mass than sure negatives
    p = coverage_pool.probs[:, 0]
    assert q[p > 0.5].mean() > 5 * q[p < 0.01].mean()


def test_beta_interval_with_sample_size_is_jeffreys_when_nothing_varies():
    """No error in n = 200 passive draws: the Jeffreys interval, not the point 1."""
    lo, hi = beta_interval(1.0, 0.0, 0.95, n=200)
    assert hi == 1.0
    assert lo == pytest.approx(stats.beta.ppf(0.025, 200.5, 0.5))
    # jeffreys_count: the count whose Jeffreys posterior has that variance
    mu, var = 0.7, 0.01
    k = jeffreys_count(mu, var)
    assert stats.beta.var(mu * k + 0.5, (1 - mu) * k + 0.5) == pytest.approx(var)
    # away from the boundary the interval keeps the moment count, with half a pseudo-count to each side
    k = mu * (1 - mu) / var - 1
    lo, hi = beta_interval(mu, var, 0.9, n=1000)
    assert lo == pytest.approx(stats.beta.ppf(0.05, mu * k + 0.5, (1 - mu) * k + 0.5))
    assert hi == pytest.approx(stats.beta.ppf(0.95, mu * k + 0.5, (1 - mu) * k + 0.5))


def test_passive_accuracy_intervals_cover_when_errors_are_rare():
    """Accuracy 0.998 from 300 uniform draws: most samples see no error at all.

    The Jeffreys-style interval must still cover at about the nominal rate
    (Jeffreys intervals are close to nominal; [0.92, 0.995] over 2000 repeats).
    """
    rng = np.random.default_rng(4)
    N, n, reps = 5000, 300, 2000
    labels = np.zeros(N, dtype=int)
    labels[:10] = 1
    pool = Pool.from_arrays(preds=np.zeros(N, dtype=int), labels=labels)
    acc = Accuracy()
    truth = acc.value(_population_risk(acc, pool))[0]
    losses = acc.loss(pool.outputs(), pool.labels)
    idx = rng.integers(0, N, size=(reps, n))
    _, G, cov = importance_moments(acc, losses[idx], np.ones((reps, n)))
    lo, hi = beta_interval(G[:, 0], cov[:, 0, 0], 0.95, n=n)
    coverage = np.mean((lo <= truth) & (truth <= hi))
    assert 0.92 <= coverage <= 0.995, coverage
    # the plain moment-matched interval collapses to a point whenever no error is drawn
    lo0, hi0 = beta_interval(G[:, 0], cov[:, 0, 0], 0.95)
    assert np.mean((lo0 <= truth) & (truth <= hi0)) < 0.7


# ---------------------------------------- counts == repeated rows
@pytest.mark.parametrize("names", ["f1", "f1,precision,recall"])
def test_importance_moments_with_counts_equals_repeated_rows(names):
    pool = make_pool(400, prevalence=0.3, separation=1.0, seed=4)  # FPs and FNs are common
    measure = make_measure(names, pool)
    rng = np.random.default_rng(8)
    n = 25
    items = rng.choice(pool.n_items, size=n, replace=False)
    losses = measure.loss(pool.outputs(items), pool.labels[items])
    weights = rng.uniform(0.2, 5.0, n)
    counts = rng.integers(1, 6, n)
    R, G, cov = importance_moments(measure, losses, weights, counts=counts)
    rep = np.repeat(np.arange(n), counts)
    R2, G2, cov2 = importance_moments(measure, losses[rep], weights[rep])
    np.testing.assert_allclose(R, R2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(G, G2, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cov, cov2, rtol=1e-10, atol=1e-15)
    assert np.all(np.isfinite(cov)) and np.all(np.diag(cov) > 0)
    # the risk alone, and broadcasting over a leading (repeat) axis
    np.testing.assert_allclose(importance_risk(losses, weights, counts), R2, rtol=1e-12)
    stack_R, _, stack_cov = importance_moments(measure, np.stack([losses, losses[::-1]]),
                                               np.stack([weights, weights[::-1]]),
                                               counts=np.stack([counts, counts[::-1]]))
    np.testing.assert_allclose(stack_R, [R2, R2], rtol=1e-12)
    np.testing.assert_allclose(stack_cov, [cov2, cov2], rtol=1e-10, atol=1e-15)


# ---------------------------------------- the model-based mixture variance
@pytest.mark.parametrize("exceptions, hits, level", [(0.0, 0.0, 0.95), (0.01, 0.001, 0.95), (2.0, 0.01, 0.95),
                                                     (3.0, 0.5, 0.9), (50.0, 40.0, 0.99)])
def test_mixture_variance_covers_the_three_case_error_exactly(exceptions, hits, level):
    """The returned variance's normal interval covers the model's three-case mixture with probability ``level``."""
    base, full, miss = np.array([1e-4, 2.0]), np.array([5e-3, 2.5]), np.array([4e-4, 0.1])
    model = ModelCovariance(np.diag(full), np.diag(base), miss, exceptions, hits)
    v = mixture_variance(base, full, model, level)
    p_none, p_no_hit = np.exp(-exceptions), np.exp(-hits)
    missed = base + miss / (1 - p_none) if exceptions else base
    probs = [p_none, p_no_hit - p_none, 1 - p_no_hit]
    hit = np.maximum((full - probs[0] * base - probs[1] * missed) / probs[2], base) if hits else missed
    h = stats.norm.ppf(0.5 + level / 2) * np.sqrt(v)
    inside = [2 * stats.norm.cdf(h / np.sqrt(case)) - 1 for case in (base, missed, hit)]
    covered = probs[0] * inside[0] + probs[1] * inside[1] + probs[2] * inside[2]
    np.testing.assert_allclose(covered, level, atol=1e-9)
    if hits or exceptions:  # the mixture's variance is the full one
        np.testing.assert_allclose(probs[0] * base + probs[1] * missed + probs[2] * hit, full, rtol=1e-9)
    if exceptions == 0.0:  # nothing can surprise: the usual variance
        np.testing.assert_allclose(v, base)
    if hits >= 40:  # a hit is certain: its case's variance
        np.testing.assert_allclose(v, hit, rtol=1e-9)
    if exceptions <= 0.01:  # surprises rarer than 5% need no cover: near the usual variance, far below full
        assert np.all(v <= base * 1.1) and v[0] < full[0] / 40


@pytest.mark.parametrize("level", [0.9, 0.95])
def test_mixture_variance_with_identical_cases_is_that_variance(level):
    """No miss and nothing beyond the usual variance: the three cases coincide (no root to search)."""
    base = np.array([3e-4, 0.0])
    model = ModelCovariance(np.diag(base), np.diag(base), np.zeros(2), 0.7, 0.2)
    np.testing.assert_allclose(mixture_variance(base, base, model, level), base, rtol=1e-12)
