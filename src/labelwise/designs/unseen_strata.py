"""What the strata whose labels all agree may hide: the exceptions a stratified importance sample never drew.

``oasis`` draws a stratum from its proposal and an item uniformly within it.
Its martingale variance sees a stratum's label variance only once a draw
there has shown an *exception* (a label other than the stratum's likely one
that moves the estimate: a positive among low scores, a false negative of
F1).  Until then the estimate misses the stratum's exceptions and its
variance does not count them.  On a rare pool that is most strata, and the
error is the sum of the exceptions left unlabeled there, each shifting
``Dg R-hat`` by ``(u_c - u_mode) / N``: the error model of
:mod:`~labelwise.estimators.missed`, ``X + j K``, with ``X`` the martingale
part and ``K`` the count of exceptions left in the strata that showed none.

The count's mean comes from the scores recalibrated to the labels: each
stratum's positive rate under the Platt map ``sigmoid(a logit(p) + b)``
(Platt, "Probabilistic outputs for support vector machines", 1999), one mean
per point of the posterior of ``(a, b)``
(:func:`~labelwise.oracle.calibration.platt_posterior`), so the count is a
mixture over the recalibration's uncertainty.  This assumes the positive rate
follows a logistic curve in the score's logit.  A label-only bound (the
Jeffreys posterior of each stratum's rate, :mod:`~labelwise.estimators.label_floor`)
cannot tell a stratum of thousands of items whose dozen labels are negative
from one holding hundreds of positives, and ``oasis`` leaves most low strata
with a dozen labels: on a rare pool it made the interval the measure's whole
range.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..estimators.missed import missed_count_variance
from ..estimators.model_covariance import exception_jump, exception_shifts
from ..oracle.calibration import PlattPosterior

__all__ = ["stratum_rates", "unseen_strata_variance"]


def stratum_rates(posterior: PlattPosterior, logit_quantiles: np.ndarray) -> np.ndarray:
    """Each stratum's positive rate under each point of a Platt posterior, shape ``(k, K)``.

    Parameters
    ----------
    posterior : PlattPosterior
        ``k`` grid points ``(a, b)`` with their probabilities.
    logit_quantiles : ndarray, shape (K, q)
        Mid-quantiles of each stratum's score logits
        (:func:`~labelwise.oracle.calibration.block_quantiles`): a stratum's
        mean of ``sigmoid(a x + b)`` is their mean.
    """
    z = posterior.a[:, None, None] * logit_quantiles[None] + posterior.b[:, None, None]
    return expit(z).mean(axis=2)


def unseen_strata_variance(base: np.ndarray, u: np.ndarray, block: np.ndarray, unlabeled: np.ndarray,
                           rates: np.ndarray, weights: np.ndarray, positive: np.ndarray, labeled_strata: np.ndarray,
                           n_items: int, level: float) -> np.ndarray:
    """The variance of the normal interval that covers the martingale error plus the exceptions left unseen.

    Parameters
    ----------
    base : ndarray, shape (m,)
        The martingale variance of each component.
    u : ndarray, shape (2, G, m)
        ``Dg(R-hat) l`` of each group of alike items at label 0 and at label 1.
    block : ndarray of int, shape (G,)
        Each group's stratum.
    unlabeled : ndarray, shape (G,)
        Each group's items without a label.
    rates : ndarray, shape (k, K)
        Each stratum's positive rate under each of ``k`` models (:func:`stratum_rates`).
    weights : ndarray, shape (k,)
        The models' probabilities.
    positive : ndarray of bool, shape (n,)
        The labeled rows' labels.
    labeled_strata : ndarray of int, shape (n,)
        Their strata.
    n_items : int
    level : float

    Returns
    -------
    ndarray, shape (m,)
        At least ``base`` (:func:`~labelwise.estimators.missed.missed_count_variance`); ``base`` where every
        stratum has shown an exception.
    """
    K = rates.shape[1]
    mean_rate = weights @ rates
    pi = np.stack([1.0 - mean_rate, mean_rate], axis=1)[block]  # (G, 2): a group's items' label distribution
    _, shift, expected = exception_shifts(u, pi, unlabeled, n_items)
    likely = (mean_rate > 0.5).astype(np.int64)  # each stratum's likely label (the mode of ``pi``)
    # a stratum whose labels include an exception: the martingale variance has it at its design weight
    seen = np.bincount(labeled_strata, weights=positive != likely[labeled_strata], minlength=K) > 0
    expected = np.where(seen[block][:, None], 0.0, expected)
    exception_rate = np.where(likely == 1, 1.0 - rates, rates)  # (k, K)
    # per stratum that showed none, the unlabeled items an exception would move the estimate from
    exception = 1 - likely[block]
    moves = np.any(shift[np.arange(block.size), exception] != 0, axis=1) & ~seen[block]
    movers = np.bincount(block, weights=np.where(moves, unlabeled, 0), minlength=K)
    return missed_count_variance(base, exception_jump(shift, expected), level, exception_rate * movers, weights)
