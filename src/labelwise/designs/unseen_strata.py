"""What the groups whose labels all agree may hide: the exceptions a stratified importance sample never drew.

``oasis`` draws a stratum from its proposal and an item uniformly within it.
Its martingale variance sees a group's label variance (a group: the items of
one stratum whose losses agree at each label, e.g. one predicted class)
only once a draw there has shown an *exception*, a label other than the
group's likely one that moves the estimate (a positive among low scores:
a false negative of F1).  Until then the estimate misses the group's
exceptions and its variance does not count them.  On a rare pool that is
most groups, and the error is the sum of the exceptions left unlabeled
there, each shifting ``Dg R-hat`` by ``(u_c - u_mode) / N``: the error
model of :mod:`~labelwise.estimators.missed`, ``X + j K``, with ``X`` the
martingale part and ``K`` the Poisson count of exceptions left in the
groups that showed none (Le Cam: a sum of independent rare Bernoulli labels).

The count's mean comes from the scores recalibrated to the labels, the
Platt map ``sigmoid(a logit(p) + b)`` (Platt, "Probabilistic outputs for
support vector machines", 1999), one mean per point of the posterior of
``(a, b)`` (:func:`~labelwise.oracle.calibration.platt_posterior`), so the
count is a mixture over the recalibration's uncertainty.  The fit takes
each labeled item once, unweighted: the draws select items on their scores
alone, so given the scores the labels follow the Platt model whatever the
proposal was.  The interval assumes that the positive rate is logistic in
the score's logit.  A label-only bound (the Jeffreys posterior of each
stratum's rate, :mod:`~labelwise.estimators.label_floor`) cannot tell a
stratum of thousands of items whose dozen labels are negative from one
holding hundreds of positives, and ``oasis`` leaves most low strata with a
dozen labels: on a rare pool it made the interval the measure's whole
range.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import expit

from ..estimators.model_covariance import exception_jump, exception_shifts
from ..oracle.calibration import Platt, PlattPosterior

__all__ = ["UNSEEN_BASIS", "UnseenExceptions", "quadrature_points", "unseen_exceptions"]

#: What the interval assumes.
UNSEEN_BASIS = ("design-based (martingale) for the labeled items; the positives that may be left among the items not "
                "labeled in the score strata whose labels showed none enter through the scores recalibrated to the "
                "labels (Platt: the positive rate logistic in the score's logit) with the recalibration's "
                "uncertainty")

#: Points of :func:`quadrature_points`.
POINTS = 256

#: Points of the distribution of the count's mean over the recalibration's posterior.
MEANS = 32


def quadrature_points(values: np.ndarray, weights: np.ndarray, k: int = POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``k`` weighted points whose weighted mean of any smooth function is close to that of ``values``.

    The ``k`` weighted mid-quantiles of ``values`` (each carrying ``1/k`` of the total weight), or the values
    themselves when there are at most ``k``.

    Parameters
    ----------
    values, weights : ndarray, shape (n,)

    Returns
    -------
    (points, point_weights) : tuple of ndarray
        ``point_weights`` sums to ``weights.sum()``.
    """
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    if values.size <= k:
        return values, weights
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    levels = (np.arange(k) + 0.5) / k * cum[-1]
    points = values[order][np.minimum(np.searchsorted(cum, levels), values.size - 1)]
    return points, np.full(k, cum[-1] / k)


class UnseenExceptions(NamedTuple):
    """The exceptions that may be left among the unlabeled items of the groups whose labels showed none.

    Attributes
    ----------
    likely : ndarray of int, shape (G,)
        Each group's likely label under the most likely recalibration.
    movers : ndarray, shape (G,)
        Per group that showed no exception, its unlabeled items an exception among them would move the
        estimate from (0 elsewhere).
    jump : ndarray, shape (m,)
        Root mean square shift of ``Dg R-hat`` by one of them (:func:`~labelwise.estimators.exception_jump`).
    means : ndarray, shape (k,)
        Their expected count under each of ``k`` points of the recalibration's posterior (a Poisson count
        depends on its mean alone: the posterior's distribution of the mean, carried by a few of its
        quantiles, :func:`quadrature_points`).
    weights : ndarray, shape (k,)
        The points' probabilities.
    """

    likely: np.ndarray
    movers: np.ndarray
    jump: np.ndarray
    means: np.ndarray
    weights: np.ndarray


def unseen_exceptions(u: np.ndarray, unlabeled: np.ndarray, logit_quantiles: np.ndarray, fit: Platt,
                      posterior: PlattPosterior, positive: np.ndarray, labeled_groups: np.ndarray,
                      n_items: int) -> UnseenExceptions:
    """The exceptions that may be left in the groups whose labels showed none, and their count's mixture.

    Parameters
    ----------
    u : ndarray, shape (2, G, m)
        ``Dg(R-hat) l`` of each group of alike items (one stratum, one loss at each label) at label 0 and 1.
    unlabeled : ndarray, shape (G,)
        Each group's items without a label.
    logit_quantiles : ndarray, shape (G, q)
        Mid-quantiles of each group's score logits (:func:`~labelwise.oracle.calibration.block_quantiles`).
    fit : Platt
        The most likely recalibration: it gives each group's likely label and the exceptions' shifts.
    posterior : PlattPosterior
        The recalibration's posterior: the count of exceptions left is a mixture over its points.
    positive : ndarray of bool, shape (n,)
        The labeled rows' labels.
    labeled_groups : ndarray of int, shape (n,)
        Their groups.
    n_items : int

    Returns
    -------
    UnseenExceptions
    """
    G, q = logit_quantiles.shape
    rate = fit(logit_quantiles).mean(axis=1)
    pi = np.stack([1.0 - rate, rate], axis=1)  # (G, 2): a group's items' label distribution
    likely = np.argmax(pi, axis=1)  # each group's likely label (exception_shifts' mode)
    # a group whose labels include an exception: the martingale variance has it at its design weight
    seen = np.bincount(labeled_groups, weights=positive != likely[labeled_groups], minlength=G) > 0
    left = np.where(seen, 0, unlabeled)
    _, shift, expected = exception_shifts(u, pi, left, n_items)
    movers = np.where(np.any(shift[np.arange(G), 1 - likely] != 0, axis=1), left, 0)
    # the expected count of exceptions left under each point of the posterior: positives among the groups
    # likely negative, negatives among those likely positive, by quadrature over the movers' logits
    means = np.zeros(posterior.a.size)
    for label in (0, 1):
        of_label = (likely == label) & (movers > 0)
        points, weights = quadrature_points(logit_quantiles[of_label].ravel(),
                                            np.repeat(movers[of_label] / q, q))
        positive_rate = expit(posterior.a[:, None] * points + posterior.b[:, None])
        means += (positive_rate if label == 0 else 1.0 - positive_rate) @ weights
    means, weights = quadrature_points(means, posterior.weight, MEANS)
    return UnseenExceptions(likely, movers, exception_jump(shift, expected), means, weights)
