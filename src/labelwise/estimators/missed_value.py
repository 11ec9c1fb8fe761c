"""What the exceptions left unlabeled do to a measure's own value, without the delta method.

The mixture interval (:func:`~labelwise.estimators.mixture_variance`) takes
the exceptions left unlabeled (positives among items the scores call
negatives) as shifting the estimate by ``K`` times one exception's
first-order shift: the delta method, linear in their number ``K``.  On a
pool of millions with a few dozen positives, where the model allows a
hundred positives left, that line leaves the measure's range (F1 falls by
``-2 TP / D^2`` per missed positive at ``K = 0``, but no further than to 0:
``2 TP / (D + K)``).  Here the estimate's error given ``K`` is the
measure's own change,

    e(K) = g(R-hat) - g(R-hat + K delta / N),

``delta`` the exceptions' mean loss change (each would move the pool's
total loss by it), and ``K`` the model's count: Poisson given the rates of
exceptions (Le Cam), whose mean ``lambda_i`` is uncertain with the
recalibration of the scores: a mixture over the points ``i`` of its
posterior (:func:`~labelwise.oracle.calibration.platt_posterior`) with their
probabilities.  Its upper tail is the count's, not a normal's with its
variance: where most of the posterior expects a few exceptions and a little
of it thousands, the count is small with the posterior's probability.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import gammaln

__all__ = ["MAX_MISSED", "MissedErrors", "missed_errors"]

#: Counts of exceptions left beyond this are taken at it (the mass beyond joins it).
MAX_MISSED = 4096


class MissedErrors(NamedTuple):
    """The distribution of the exceptions left and the estimate's error for each count (module docstring).

    Attributes
    ----------
    pmf : ndarray (K + 1,)
        ``P(K = k)`` for ``k = 0 .. K`` (the last takes the mass beyond).
    errors : ndarray (K + 1, m)
        ``e(k) = g(R-hat) - g(R-hat + k delta / N)`` (0 where the measure is undefined).
    """

    pmf: np.ndarray
    errors: np.ndarray


def missed_errors(g, R: np.ndarray, delta: np.ndarray, n_items: int, means: np.ndarray,
                  weights: np.ndarray) -> MissedErrors:
    """The count of exceptions left, a Poisson mixture, and the measure's error for each count.

    Parameters
    ----------
    g : callable
        The measure's value ``(..., d) -> (..., m)`` (:meth:`~labelwise.measures.Measure.value`).
    R : ndarray (d,)
        The estimate's ``R-hat``.
    delta : ndarray (d,)
        The exceptions' mean loss change: ``R`` moves by ``delta / N`` for each.
    n_items : int
    means : ndarray (k,)
        The count's mean under each point of the recalibration's posterior.
    weights : ndarray (k,)
        The points' probabilities.

    Returns
    -------
    MissedErrors
    """
    means = np.maximum(np.asarray(means, dtype=float), 0.0)
    top = int(min(MAX_MISSED, np.ceil(np.max(means + 10.0 * np.sqrt(means))) + 10))
    k = np.arange(top + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = k * np.log(means)[:, None] - means[:, None] - gammaln(k + 1.0)
    log_pmf[means == 0] = np.where(k == 0, 0.0, -np.inf)
    pmf = weights @ np.exp(log_pmf)
    pmf[-1] += max(1.0 - pmf.sum(), 0.0)  # the counts beyond the last: taken at it
    values = g(R + k[:, None] * delta / n_items)
    errors = np.nan_to_num(values[:1] - values, nan=0.0, posinf=0.0, neginf=0.0)
    return MissedErrors(pmf, errors)
