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
total loss by it), and ``K`` the model's count of them
(:func:`~labelwise.estimators.missed.count_pmf`, the count the exact-count
interval reads too, :func:`~labelwise.estimators.missed_count_variance`):
given the rates of exceptions, a sum over the oracle model's leaves of
Beta-binomial counts in their negative binomial form (Le Cam: a count of
rare independent labels is close to Poisson; the leaf's Beta posterior of
its rate spreads it), and a mixture over the points of the recalibration's
posterior (:func:`~labelwise.oracle.calibration.platt_posterior`) with
their probabilities.  Its upper tail is the count's, not a normal's with
its variance: where most of the posterior expects a few exceptions and a
little of it thousands, the count is small with the posterior's
probability.  The count's mass the pmf leaves out (far tails) is not
covered.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .missed import count_pmf

__all__ = ["MissedErrors", "missed_errors"]


class MissedErrors(NamedTuple):
    """The distribution of the exceptions left and the estimate's error for each count (module docstring).

    Attributes
    ----------
    pmf : ndarray (K + 1,)
        ``P(K = k)`` for ``k = 0 .. K`` (:func:`~labelwise.estimators.missed.count_pmf`: the mass beyond is
        left out, so it sums to at most 1).
    errors : ndarray (K + 1, m)
        ``e(k) = g(R-hat) - g(R-hat + k delta / N)`` (0 where the measure is undefined).
    """

    pmf: np.ndarray
    errors: np.ndarray


def missed_errors(g, R: np.ndarray, delta: np.ndarray, n_items: int, means: np.ndarray, weights: np.ndarray,
                  overdispersion: np.ndarray | None = None) -> MissedErrors:
    """The count of exceptions left (module docstring) and the measure's error for each count.

    Parameters
    ----------
    g : callable
        The measure's value ``(..., d) -> (..., m)`` (:meth:`~labelwise.measures.Measure.value`).
    R : ndarray (d,)
        The estimate's ``R-hat``.
    delta : ndarray (d,)
        The exceptions' mean loss change: ``R`` moves by ``delta / N`` for each.
    n_items : int
    means : ndarray (k, B) or (k,)
        The count's mean in each of ``B`` parts of the pool (one part: ``(k,)``) under each point of the
        recalibration's posterior.
    weights : ndarray (k,)
        The points' probabilities.
    overdispersion : ndarray (B,), optional
        ``d_b``: part ``b``'s count has variance ``E K_b (1 + d_b)`` given the point (default 0, Poisson).

    Returns
    -------
    MissedErrors
    """
    means = np.asarray(means, dtype=float)
    pmf = count_pmf(means.reshape(means.shape[0], -1), weights, overdispersion)
    k = np.arange(pmf.size)
    values = g(R + k[:, None] * delta / n_items)
    errors = np.nan_to_num(values[:1] - values, nan=0.0, posinf=0.0, neginf=0.0)
    return MissedErrors(pmf, errors)
