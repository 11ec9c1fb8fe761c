"""The exceptions left in the groups whose labels showed none (:mod:`labelwise.designs.unseen_strata`): exact
values against Poisson counts computed by hand."""

import numpy as np
import pytest
from scipy.special import logit, ndtri
from scipy.stats import poisson

from labelwise.designs.unseen_strata import quadrature_points, unseen_exceptions
from labelwise.estimators import missed_count_variance
from labelwise.oracle.calibration import Platt, PlattPosterior

N = 1000
JUMP = 0.01  # each positive left unlabeled shifts Dg R-hat by this much
Z = ndtri(0.975)


def _variance(rates, weights, unlabeled=200, labels=(0, 0, 0), base=0.0):
    """One group of alike items, likely negative, whose positives each shift the estimate by ``JUMP``: the
    variance of the interval that covers the martingale error ``base`` plus the positives left."""
    u = np.array([[[0.0]], [[N * JUMP]]])  # (2, G=1, m=1): a positive moves u by N * JUMP
    posterior = PlattPosterior(np.ones(len(rates)), logit(np.asarray(rates, float)), np.asarray(weights, float))
    fit = Platt(1.0, float(logit(np.average(rates, weights=weights))))
    labels = np.asarray(labels, dtype=bool)
    unseen = unseen_exceptions(u, np.array([unlabeled]), np.zeros((1, 1)), fit, posterior, labels,
                               np.zeros(labels.size, dtype=np.int64), N)
    return missed_count_variance(np.array([base]), unseen.jump, 0.95, unseen.means[:, None], unseen.weights)[0]


def _half_width(cdf):
    """The smallest count ``k`` with ``cdf(k) >= 0.95``, times the jump: the half-width that covers the count."""
    k = 0
    while cdf(k) < 0.95:
        k += 1
    return k * JUMP


def test_one_model_covers_the_poisson_count_of_positives_left():
    rate, unlabeled = 0.01, 200  # 2 positives expected among the unlabeled items
    h = _half_width(lambda k: poisson.cdf(k, rate * unlabeled))
    assert np.sqrt(_variance([rate], [1.0], unlabeled)) * Z == pytest.approx(h, rel=1e-6)


def test_a_mixture_of_models_covers_the_mixture_of_counts():
    rates, weights = np.array([0.002, 0.02]), np.array([0.7, 0.3])
    h = _half_width(lambda k: weights @ poisson.cdf(k, rates * 200))
    assert np.sqrt(_variance(rates, weights)) * Z == pytest.approx(h, rel=1e-6)


def test_a_group_that_showed_an_exception_is_left_to_the_martingale_variance():
    # one labeled positive in the group: its positives enter the martingale variance at their design weight
    assert _variance([0.01], [1.0], labels=(0, 1, 0), base=2e-5) == 2e-5


def test_a_group_labeled_in_full_adds_nothing():
    assert _variance([0.01], [1.0], unlabeled=0, base=2e-5) == 2e-5


def test_quadrature_points_keep_the_total_weight_and_the_mean():
    rng = np.random.default_rng(0)
    values, weights = rng.normal(size=5000), rng.uniform(size=5000)
    points, point_weights = quadrature_points(values, weights, 64)
    assert point_weights.sum() == pytest.approx(weights.sum(), rel=1e-12)
    # mid-quantiles: the weighted mean of a function of bounded slope is within (range / k) of the exact one
    exact = weights @ np.tanh(values) / weights.sum()
    assert abs(point_weights @ np.tanh(points) / point_weights.sum() - exact) < np.ptp(values) / 64
    few = quadrature_points(values[:10], weights[:10], 64)
    np.testing.assert_array_equal(few[0], values[:10])
    np.testing.assert_array_equal(few[1], weights[:10])


def test_a_likely_positive_group_counts_the_negatives_left():
    """A group whose items are positive at rate 0.99 and whose negatives each shift the estimate by ``JUMP``:
    the interval covers the Poisson count of negatives left, 0.01 x 200 expected."""
    rate, unlabeled = 0.99, 200
    u = np.array([[[N * JUMP]], [[0.0]]])  # (2, G=1, m=1): a negative moves u by N * JUMP
    posterior = PlattPosterior(np.ones(1), logit(np.array([rate])), np.ones(1))
    fit = Platt(1.0, float(logit(rate)))
    labels = np.ones(3, dtype=bool)  # three positives labeled: no exception seen
    unseen = unseen_exceptions(u, np.array([unlabeled]), np.zeros((1, 1)), fit, posterior, labels,
                               np.zeros(3, dtype=np.int64), N)
    assert unseen.likely.tolist() == [1]
    variance = missed_count_variance(np.array([0.0]), unseen.jump, 0.95, unseen.means[:, None], unseen.weights)[0]
    h = _half_width(lambda k: poisson.cdf(k, (1 - rate) * unlabeled))
    assert np.sqrt(variance) * Z == pytest.approx(h, rel=1e-6)
