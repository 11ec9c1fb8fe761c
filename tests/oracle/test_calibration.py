"""Learning the scores' calibration and the prior strength from labels."""

import numpy as np
import pytest
from scipy.special import expit

from labelwise.oracle.calibration import (
    STRENGTHS,
    block_quantiles,
    fit_platt,
    items_per_label,
    logits_of,
    marginal_strength,
    platt_posterior,
)


def test_platt_recovers_an_over_confident_slope():
    """Scores whose logits are 3x the truth's: the fitted slope is 1/3 within 3 posterior standard errors."""
    rng = np.random.default_rng(0)
    true_logit = rng.normal(-1.0, 2.0, 20_000)
    y = (rng.random(true_logit.size) < expit(true_logit)).astype(int)
    platt = fit_platt(3.0 * true_logit, y)
    se = np.sqrt(np.diag(platt.cov))
    assert abs(platt.a - 1 / 3) < 3 * se[0]
    assert abs(platt.b) < 3 * se[1]
    assert 0 < se[0] < 0.02


def test_platt_without_labels_is_the_identity_and_stays_monotone():
    platt = fit_platt(np.empty(0), np.empty(0))
    assert (platt.a, platt.b) == pytest.approx((1.0, 0.0))
    anti = fit_platt(np.array([-5.0, -4.0, 4.0, 5.0] * 50), np.array([1, 1, 0, 0] * 50))  # labels against the scores
    assert anti.a >= 0.01


def test_weights_make_the_fit_follow_the_population():
    """Labels only from the top, where the scores say nothing, plus one weighted tail stratum: the slope survives."""
    top_x = np.linspace(5, 10, 200)
    top_y = (np.arange(200) % 5 != 0).astype(int)  # 80% positives whatever the score
    tail_x = np.full(20, -8.0)
    tail_y = np.zeros(20, dtype=int)
    x, y = np.concatenate([top_x, tail_x]), np.concatenate([top_y, tail_y])
    unweighted = fit_platt(x, y)
    weighted = fit_platt(x, y, np.concatenate([np.ones(200), np.full(20, 500.0)]))
    assert weighted(np.array([-8.0]))[0] < unweighted(np.array([-8.0]))[0]
    assert weighted(np.array([-8.0]))[0] < 0.01


def test_block_quantiles_are_the_mid_quantiles_of_each_block():
    blocks = np.array([1, 0, 1, 1, 0, 1])
    values = np.array([4.0, 10.0, 1.0, 3.0, 20.0, 2.0])
    q = block_quantiles(blocks, values, n_blocks=3, k=2)
    np.testing.assert_array_equal(q, [[10.0, 20.0], [2.0, 4.0], [0.0, 0.0]])


def test_logits_are_clipped():
    assert logits_of(np.array([0.0, 0.5, 1.0])) == pytest.approx([-30.0, 0.0, 30.0], abs=1e-6)


def test_marginal_strength_trusts_matching_scores_and_not_contradicted_ones():
    rng = np.random.default_rng(1)
    s1 = np.linspace(0.05, 0.95, 40)
    counts = np.full(40, 30)
    matching = rng.binomial(counts, s1)
    contradicted = rng.binomial(counts, 1 - s1)
    prior = np.stack([1 - s1, s1], axis=1)
    assert marginal_strength(prior, np.stack([counts - matching, matching], axis=1)) >= 100
    assert marginal_strength(prior, np.stack([counts - contradicted, contradicted], axis=1)) <= STRENGTHS[1]


def test_no_positives_at_rare_rates_cannot_reject_the_largest_strength():
    """200 blocks at a rate of 1e-5 with 100 negatives each: the weakest strength is the most likely by a hair
    (its Beta puts most mass at 0), but the log-likelihood moves by less than chi2(1).ppf(0.95) / 2 = 1.92
    across the grid, so the test keeps the largest; contradicted scores are still rejected."""
    prior = np.tile([1 - 1e-5, 1e-5], (200, 1))
    counts = np.tile([100, 0], (200, 1))
    assert marginal_strength(prior, counts) == STRENGTHS[0]
    assert marginal_strength(prior, counts, unless_rejected=True) == STRENGTHS[-1]
    s1 = np.linspace(0.05, 0.95, 40)
    n = np.full(40, 30)
    contradicted = np.random.default_rng(1).binomial(n, 1 - s1)
    scores = np.stack([1 - s1, s1], axis=1)
    assert marginal_strength(scores, np.stack([n - contradicted, contradicted], axis=1), unless_rejected=True) \
        <= STRENGTHS[1]


def test_the_largest_strength_is_rejected_exactly_at_the_tests_threshold():
    """One block of prior rate 1/2 and n labels all positive: the log-likelihood at strength lam is
    log B(lam/2 + n, lam/2) - log B(lam/2, lam/2); the largest strength is kept exactly when twice its gap to the
    best is at most 3.84."""
    from scipy.special import betaln

    for n in (4, 6, 8, 12):
        loglik = betaln(STRENGTHS / 2 + n, STRENGTHS / 2) - betaln(STRENGTHS / 2, STRENGTHS / 2)
        kept = 2 * (loglik.max() - loglik[-1]) <= 3.841458820694124
        expected = STRENGTHS[-1] if kept else STRENGTHS[np.argmax(loglik)]
        counts = np.array([[0, n]])
        assert marginal_strength(np.array([[0.5, 0.5]]), counts, unless_rejected=True) == expected


def test_platt_posterior_without_labels_is_the_prior():
    """No labels: the predictive is the prior's mean of ``sigmoid(a x + b)`` over ``a ~ N(1, 1)`` truncated
    at the slope floor and ``b ~ N(0, 1)``, here integrated with scipy over the grid's box (4 sd).  The
    midpoint rule's error at the grid's spacing (0.2 sd in the slope) is below 1% at these logits."""
    from scipy.integrate import dblquad
    from scipy.stats import norm

    post = platt_posterior(np.empty(0), np.empty(0))
    assert post(np.array([0.0]))[0] == pytest.approx(0.5, abs=1e-12)  # b's grid and prior are symmetric
    for x in (-6.0, 2.0):
        def density(b, a, x=x):
            return norm.pdf(a, 1.0, 1.0) * norm.pdf(b) * (expit(a * x + b) if x is not None else 1.0)

        num = dblquad(density, 0.01, 5.0, -4.0, 4.0)[0]
        den = dblquad(lambda b, a: density(b, a, None), 0.01, 5.0, -4.0, 4.0)[0]
        assert post(np.array([x]))[0] == pytest.approx(num / den, rel=0.02)


def test_platt_posterior_with_many_labels_is_the_fitted_map():
    """20,000 labels pin the parameters down: the posterior's predictive is the MAP map's within 2%."""
    rng = np.random.default_rng(0)
    true_logit = rng.normal(-1.0, 2.0, 20_000)
    y = (rng.random(true_logit.size) < expit(true_logit)).astype(int)
    fit = fit_platt(3.0 * true_logit, y)
    post = platt_posterior(3.0 * true_logit, y, fit=fit)
    logits = np.array([-20.0, -5.0, 0.0, 5.0])
    np.testing.assert_allclose(post(logits), fit(logits), rtol=0.02)


def test_platt_posterior_widens_the_tail_when_the_labels_barely_see_it():
    """Labels from the top of an over-confident ranking (logit x 3) and a few weighted tail negatives: the
    most likely slope understates a far tail item's chance; averaged over the slope's posterior it is larger,
    and closer to the truth (the true map is sigmoid(x / 3))."""
    rng = np.random.default_rng(2)
    top = rng.uniform(-6.0, 12.0, 300)
    tail = rng.uniform(-40.0, -20.0, 30)
    x = np.concatenate([top, tail])
    y = (rng.random(x.size) < expit(x / 3.0)).astype(int)
    w = np.concatenate([np.ones(top.size), np.full(tail.size, 200.0)])
    fit = fit_platt(x, y, w)
    post = platt_posterior(x, y, w, fit=fit)
    far = np.array([-24.0])
    assert fit(far)[0] < post(far)[0] <= expit(far / 3.0)[0] * 3


def test_each_label_stands_for_the_items_of_its_group_per_label():
    # groups of 10, 4 and 6 items holding 2, 1 and 0 labels: a label of group 0 stands for 5 items, of group 1 for 4
    weights = items_per_label(np.array([10, 4, 6]), np.array([2, 1, 0]), np.array([0, 1, 0]))
    assert weights.tolist() == [5.0, 4.0, 5.0]
    assert items_per_label(np.array([6]), np.array([0]), np.array([0])).tolist() == [6.0]  # no labels: as one



def test_platt_fit_far_from_the_identity_does_not_overshoot():
    """Probabilities three times too confident (true slope 1/3), a tenth of the logits clipped at -30: a full
    Newton step from the identity overshoots and diverged (slope 13,531); halved steps reach the maximum, within
    three of its standard errors of 1/3, where the posterior's gradient vanishes."""
    rng = np.random.default_rng(0)
    x = np.concatenate([np.full(100, -30.0), rng.uniform(-25.0, 0.0, 900)])
    y = (rng.random(x.size) < expit(x / 3.0)).astype(int)
    fit = fit_platt(x, y)
    assert abs(fit.a - 1 / 3) < 3 * np.sqrt(fit.cov[0, 0])
    p = expit(fit.a * x + fit.b)
    gradient = np.array([x @ (y - p) - (fit.a - 1.0), np.sum(y - p) - fit.b])  # the prior: N((1, 0), I)
    assert np.abs(gradient).max() < 1e-6
