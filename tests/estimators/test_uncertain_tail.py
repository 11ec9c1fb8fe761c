"""The missed exceptions under an uncertain rate (estimators/uncertain_tail.py) against integrals over the rate of
the enumerated counts, and the leaf model's spread over the Platt posterior against a recomputation."""

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

import labelwise as lw
from labelwise.designs.hashed_online import HashedOnlineSampler
from labelwise.estimators.uncertain_tail import (
    leaf_missed_moments,
    uncertain_missed_square,
)
from labelwise.oracle.calibration import STRENGTHS, platt_posterior


def _moving(shift):
    """Blocks whose exception moves the estimate: only their unlabeled items are counted."""
    return np.any(shift != 0, axis=1)


def _leaf_moments(shift, left, a, b):
    """E[S], E[S^2] and P(K = 0) of one leaf by integrating over its rate the enumerated binomial counts."""
    outcomes = list(itertools.product(*(range(n + 1) for n in left)))
    moving = _moving(shift)

    def given(r, power):
        total = 0.0
        for k in outcomes:
            p = np.prod([stats.binom.pmf(kb, n, r) for kb, n in zip(k, left)])
            total += p * (shift.T @ np.asarray(k, float)) ** power
        return total

    density = stats.beta(a, b).pdf
    mean = np.array([integrate.quad(lambda r, j=j: density(r) * given(r, 1)[j], 0, 1)[0] for j in range(shift.shape[1])])
    second = np.array([integrate.quad(lambda r, j=j: density(r) * given(r, 2)[j], 0, 1)[0]
                       for j in range(shift.shape[1])])
    none = integrate.quad(lambda r: density(r) * (1 - r) ** int(left[moving].sum()), 0, 1)[0]
    return mean, second, none


def test_missed_square_and_none_left_equal_the_integrals_over_the_rates():
    """Two leaves, three blocks (one whose exceptions move no loss), two components: E[S^2] = sum over leaves of
    E[S_l^2] plus the cross terms of their independent means; P(K = 0) the product over leaves."""
    shift = np.array([[0.3, -0.1], [0.0, 0.0], [-0.2, 0.5]])
    left = np.array([2, 3, 3])
    leaf = np.array([0, 0, 1])
    alpha, beta = np.array([0.7, 2.5]), np.array([3.0, 1.2])
    moments = [_leaf_moments(shift[leaf == l], left[leaf == l], alpha[l], beta[l]) for l in (0, 1)]
    means = np.array([m[0] for m in moments])
    want = sum(m[1] for m in moments) + means.sum(axis=0) ** 2 - (means**2).sum(axis=0)
    miss, none_left = uncertain_missed_square(leaf_missed_moments(shift, left * _moving(shift), leaf, alpha, beta))
    assert miss == pytest.approx(want, rel=1e-8)
    assert np.exp(-none_left) == pytest.approx(moments[0][2] * moments[1][2], rel=1e-8)


def test_rate_spread_adds_the_variance_of_the_mean_over_the_parameters():
    """The leaves' rates at three points of a parameter posterior (probabilities 0.2 / 0.5 / 0.3): E S varies over
    them by sum_l s1_l E[r_l]; its variance is added to the mean square, exactly."""
    shift = np.array([[0.3], [-0.2]])
    left, leaf = np.array([4, 5]), np.array([0, 1])
    alpha, beta = np.array([1.0, 2.0]), np.array([9.0, 30.0])
    weight = np.array([0.2, 0.5, 0.3])
    rates = np.array([[0.05, 0.02], [0.1, 0.06], [0.2, 0.03]])  # (points, leaves)
    spread = np.sqrt(weight)[:, None] * (rates - weight @ rates)
    base, _ = uncertain_missed_square(leaf_missed_moments(shift, left, leaf, alpha, beta))
    wider, _ = uncertain_missed_square(leaf_missed_moments(shift, left, leaf, alpha, beta, spread))
    mean_at = rates @ np.array([4 * 0.3, 5 * -0.2])  # E S at each point
    assert wider[0] - base[0] == pytest.approx(weight @ (mean_at - weight @ mean_at) ** 2, rel=1e-12)


def test_interval_leaf_rates_average_the_platt_posterior_of_the_labels_counted_once():
    """Under the hindsight-read intervals the leaves' prior means are averaged over the Platt posterior of the
    labels, each counted once, and ``rate_spread`` holds their spread over it: recomputed here block by block
    for the posterior mean rates (each leaf's Beta posterior mean at every grid point) and the variance of a
    random combination of them."""
    pool = lw.make_pool(4000, prevalence=0.02, separation=2.0, seed=5)
    measure = lw.make_measure("f1", pool)
    session = lw.Session(pool, measure, lw.OnlinePoissonDesign(n_strata=16, branching=16, variance="hindsight"),
                         seed=2)
    session.run(lw.TruthOracle(pool), budget=300)
    sampler: HashedOnlineSampler = session.sampler
    rounds = sampler.rounds
    items, labels = session.sample().draws.items, session.sample().labels
    blocks = sampler.block[items].astype(np.int64)
    design_model = rounds.leaves.model(blocks, labels)
    model = rounds.leaves.model(blocks, labels, interval=True)
    labeled = np.bincount(rounds.leaf[blocks], minlength=rounds.n_leaves)
    # the interval's prior strength: the largest unless the labels reject it (its own test, not the rounds')
    strength = model.positive + model.negative - labeled
    assert np.unique(strength.round(9)).size == 1 and np.isclose(strength[0], STRENGTHS, rtol=1e-12).any()
    positives = np.bincount(rounds.leaf[blocks], weights=labels, minlength=rounds.n_leaves)
    counts = rounds.summary.counts.astype(float)
    logits = np.log(rounds.prior / (1 - rounds.prior))
    posterior = platt_posterior(logits[blocks], labels)
    rates = np.stack([(strength * np.bincount(rounds.leaf, counts * expit(a * logits + b)) /
                       np.bincount(rounds.leaf, counts) + positives) / (strength + labeled)
                      for a, b in zip(posterior.a, posterior.b, strict=True)])  # (points, leaves)
    assert model.posterior()[:, 1] == pytest.approx(posterior.weight @ rates, rel=1e-9)
    c = np.random.default_rng(0).normal(size=rounds.n_leaves)
    spread = np.sum((model.rate_spread @ c) ** 2)
    assert spread == pytest.approx(posterior.weight @ (rates @ c - posterior.weight @ rates @ c) ** 2, rel=1e-9)
    assert design_model.rate_spread is None  # the rounds plan with the most likely map


def test_a_rate_surely_zero_leaves_no_exception():
    """A leaf whose Beta has all its mass at 0 (prior mean exactly 0, no exception labeled) adds nothing, not NaN."""
    shift, left, leaf = np.array([[0.3], [-0.2]]), np.array([4, 5]), np.array([0, 1])
    alone, alone_none = uncertain_missed_square(leaf_missed_moments(shift[:1], left[:1], leaf[:1], np.array([1.0]),
                                                                    np.array([9.0])))
    miss, none_left = uncertain_missed_square(leaf_missed_moments(shift, left, leaf, np.array([1.0, 0.0]),
                                                                  np.array([9.0, 30.0])))
    assert miss == pytest.approx(alone, rel=1e-12)
    assert none_left == pytest.approx(alone_none, rel=1e-12)


def test_leaf_moments_equal_the_integrals_over_the_rate():
    """Each leaf's E[S_l] and Var S_l against the integral over its Beta rate of the enumerated binomial counts."""
    shift = np.array([[0.3, -0.1], [0.0, 0.0], [-0.2, 0.5]])
    left, leaf = np.array([2, 3, 3]), np.array([0, 0, 1])
    alpha, beta = np.array([0.7, 2.5]), np.array([3.0, 1.2])
    mean, variance, none_left, _ = leaf_missed_moments(shift, left * _moving(shift), leaf, alpha, beta)
    for l in (0, 1):
        want_mean, want_square, want_none = _leaf_moments(shift[leaf == l], left[leaf == l], alpha[l], beta[l])
        assert mean[l] == pytest.approx(want_mean, rel=1e-8)
        assert variance[l] == pytest.approx(want_square - want_mean**2, rel=1e-7)
        assert np.exp(-none_left[l]) == pytest.approx(want_none, rel=1e-8)


def test_a_fixed_error_beside_the_missed_sum_adds_its_cross_term_only_where_it_widens():
    """E[(offset - S)^2] - offset^2 = E[S^2] - 2 offset E S where that exceeds E[S^2]; a cancellation between the
    fixed error and the missed sum (offset and E S of one sign) is not credited."""
    shift, left, leaf = np.array([[0.3, -0.2]]), np.array([4.0]), np.array([0])
    moments = leaf_missed_moments(shift, left, leaf, np.array([1.0]), np.array([9.0]))
    plain, _ = uncertain_missed_square(moments)
    offset = np.array([-0.5, -0.5])
    miss, _ = uncertain_missed_square(moments, offset=offset)
    mean = 0.1 * 4.0 * shift[0]  # E[r] U shift
    assert miss[0] == pytest.approx(plain[0] - 2 * offset[0] * mean[0], rel=1e-12)  # opposite signs: wider
    assert miss[1] == pytest.approx(plain[1], rel=1e-12)  # one sign: the cancellation is not credited
