"""The interval of an estimate that may have missed positives no label has shown: an exact Poisson count.

An *exception* (:class:`~labelwise.estimators.ModelCovariance`) is an
unlabeled item whose label is not its group's most likely one (a positive
among items the scores call negatives).  Once the labels are in, every
unlabeled item is known not to have been sampled: an exception left among
them cannot have moved the estimate by its large design weight; the
estimate simply misses it.  Exceptions that were sampled are labeled items,
and enter the design-based (plug-in) variance at their weight.  So the error
of the estimate, given which items are labeled, is taken as

    e = X + j (K - o),    X ~ Normal(0, base),    K | rho ~ Poisson(rho * count),

with ``base`` the variance of the labeled items' part, ``K`` the number of
exceptions left, each shifting the estimate by ``j`` (the root mean square
of their shifts, so that ``j^2 count`` is the model's variance of the
missed sum), and ``o`` the number of them the estimate already counts: the
exceptions that were sampled carry their design weight, and beyond their own
count it stands for the unlabeled ones (a Horvitz-Thompson estimate of
them: 0 in the usual run on a rare pool, where none was sampled, and close
to ``count`` where they are common); a difference estimator adds its
prediction.  ``rho`` carries the uncertainty of the model's expected
count: a discrete distribution of multipliers (the posterior of the
recalibration's parameters, :func:`~labelwise.oracle.calibration.platt_posterior`),
so ``K`` is a mixture of Poisson counts.  The interval is the symmetric one
that covers ``e`` with the nominal probability, returned as the variance of
the normal whose interval it is.  A Poisson count is exact for rare
exceptions (Le Cam's theorem: the count of independent rare Bernoulli labels
is close to Poisson); its upper quantiles at a small mean are far above the
normal's, which is what an interval needs when one or two positives are
expected in a tail of thousands of items.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri, pdtr

from .model_covariance import root_of_increasing

__all__ = ["counted_exceptions", "missed_count_variance"]

#: Counts beyond this upper quantile of the largest Poisson mean are dropped (their mass is below it).
TAIL_MASS = 1e-9

#: Poisson counts of a larger mean are taken normal (their skewness is below 0.03).
NORMAL_MEAN = 1000.0


def _count_distribution(count: float, multipliers: np.ndarray,
                        weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mixture ``sum_i weights_i Poisson(multipliers_i * count)``: exact pmf of its small means, normal rest.

    Returns ``P(K = k)`` for ``k = 0, 1, ...`` summed over the components of
    mean at most :data:`NORMAL_MEAN`, and the weights and means of the others.
    """
    means = np.maximum(np.asarray(multipliers, dtype=float) * count, 0.0)
    small = means <= NORMAL_MEAN
    pmf = np.zeros(1)
    if small.any():
        top = float(means[small].max())
        k_max = int(top + 10.0 * np.sqrt(top) + 20.0)
        cdf = pdtr(np.arange(k_max + 1)[:, None], means[small][None, :]) @ weights[small]  # P(K <= k)
        keep = np.searchsorted(cdf, cdf[-1] - TAIL_MASS) + 1
        pmf = np.diff(np.concatenate([[0.0], cdf[:keep]]))
    return pmf, weights[~small], means[~small]


def missed_count_variance(base: np.ndarray, jump: np.ndarray, count: float, level: float,
                          multipliers: np.ndarray | None = None, weights: np.ndarray | None = None,
                          offset: float = 0.0) -> np.ndarray:
    """Variance of the normal whose ``level`` interval covers ``X + jump (K - offset)`` (module docstring).

    Parameters
    ----------
    base : ndarray (m,)
        Variance of the normal part ``X`` (the labeled items' part of the covariance), per component.
    jump : ndarray (m,)
        Root mean square shift of the estimate by one exception left unlabeled, per component.
    count : float
        The model's expected number of exceptions left unlabeled.
    level : float
    multipliers, weights : ndarray (k,), optional
        The expected count's uncertainty: ``count * multipliers[i]`` with
        probability ``weights[i]`` (default: the count is known).
    offset : float
        The exceptions left unlabeled that the estimate already counts, ``o``
        (the labeled exceptions' weight beyond their own count, and a
        difference estimator's prediction).

    Returns
    -------
    ndarray (m,)
        At least ``base``: with no exception expected it is ``base``.
    """
    base = np.maximum(np.asarray(base, dtype=float), 0.0)
    jump = np.abs(np.asarray(jump, dtype=float))
    multipliers = np.ones(1) if multipliers is None else np.asarray(multipliers, dtype=float)
    weights = np.ones(1) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    if count <= 0 or not np.any(jump > 0):
        return base
    pmf, big_weights, big_means = _count_distribution(count, multipliers, weights)
    excess = np.arange(pmf.size) - offset  # K - o
    z = ndtri(0.5 + level / 2)
    out = base.copy()
    for i in np.flatnonzero(jump > 0):  # one root per component
        shifts = jump[i] * excess
        sd = np.sqrt(base[i])
        # a normal count: X + j (K - o) ~ Normal(j (mean - o), base + j^2 mean)
        centres = jump[i] * (big_means - offset)
        spreads = np.sqrt(base[i] + jump[i] ** 2 * big_means)

        def coverage_gap(h: float, shifts: np.ndarray = shifts, sd: float = sd, centres: np.ndarray = centres,
                         spreads: np.ndarray = spreads) -> float:
            if sd > 0:
                inside = ndtr((h - shifts) / sd) - ndtr((-h - shifts) / sd)
            else:
                inside = (np.abs(shifts) <= h).astype(float)
            normal = ndtr((h - centres) / spreads) - ndtr((-h - centres) / spreads)
            return float(pmf @ inside + big_weights @ normal) - level

        # every count (and every normal component) is covered with probability >= level there
        hi = z * max(sd, float(spreads.max(initial=0.0))) + float(np.abs(shifts).max()) \
            + float(np.abs(centres).max(initial=0.0)) + 1e-300
        out[i] = max((root_of_increasing(coverage_gap, hi) / z) ** 2, base[i])
    return out


def counted_exceptions(moves: np.ndarray, coef: np.ndarray) -> float:
    """``o``: the exceptions left unlabeled that the labeled ones stand for (a Horvitz-Thompson estimate of them).

    A labeled item enters ``N R-hat`` with the coefficient ``c_n`` (its
    design weight in its round plus the weights of the later rounds, where it
    enters at its label); an exception among them counts ``c_n - 1`` beyond
    itself.  Only a label that changes the loss from its group's most likely
    label's is an exception: for precision, a positive among the predicted
    negatives moves nothing and stands for nothing the count misses.

    Parameters
    ----------
    moves : ndarray of bool (n,)
        Whether each labeled item's label is an exception (changes the loss from its group's likeliest label's).
    coef : ndarray (n,)
        ``c_n`` of each labeled item.

    Returns
    -------
    float
    """
    return float(np.sum(np.where(moves, np.asarray(coef, dtype=float) - 1.0, 0.0)))
