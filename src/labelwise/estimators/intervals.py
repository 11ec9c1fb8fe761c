"""Confidence intervals and regions for estimates of generalized measures.

* normal intervals ``G +- z sd`` clipped to the measure's range;
* Beta intervals for bounded scalars: a Beta distribution matched to the
  estimate's mean and variance, rescaled to the range (Yilmaz et al. (2021), section 2.2);
* the confidence ellipsoid of a vector G (Marchant & Rubinstein (KDD 2021), section 3.3.2).

All functions broadcast over arrays of estimates.
"""

from __future__ import annotations

import numpy as np

# scipy.special, not scipy.stats (1 s to import)
from scipy.special import betaincinv, chdtri, fdtri, ndtri

from .ratio_score import jeffreys_leaf_variance

__all__ = ["beta_interval", "ellipsoid_radius_sq", "jeffreys_count", "normal_interval"]


def normal_interval(value, var, level: float = 0.95, lower=-np.inf, upper=np.inf):
    """Normal-approximation interval ``value +- z * sqrt(var)``, clipped to ``[lower, upper]``.

    Returns
    -------
    (lo, hi) : tuple of ndarray
    """
    z = ndtri(0.5 + level / 2)
    sd = np.sqrt(np.maximum(var, 0.0))
    return np.clip(value - z * sd, lower, upper), np.clip(value + z * sd, lower, upper)


def beta_interval(value, var, level: float = 0.95, lower=0.0, upper=1.0, n=None):
    """Equal-tailed interval of a Beta distribution fitted to the estimate's mean and variance.

    The estimate is rescaled from ``[lower, upper]`` to [0, 1].  Yilmaz et al. (2021)
    (section 2.2) matches a Beta(a, b) to mean ``mu`` and variance ``s2``:
    ``a = mu k``, ``b = (1 - mu) k`` with ``k = mu (1 - mu) / s2 - 1`` (the
    Beta's "sample size").  That fit breaks down where it is needed most: at
    ``mu`` = 0 or 1 with ``s2 > 0`` (a label floor's variance, no error seen
    yet) ``k`` is -1, and near the boundary with ``s2 >= mu (1 - mu)`` no Beta
    has those moments.  With ``n`` (the number of draws behind the estimate)
    the interval is the Jeffreys interval (Brown, Cai and DasGupta,
    "Interval estimation for a binomial proportion", Statistical Science
    16(2), 2001, section 4.1.2) on an effective count: the Jeffreys posterior
    ``Beta(mu k + 1/2, (1 - mu) k + 1/2)`` with ``k`` set so that its variance
    is ``s2`` (:func:`jeffreys_count`, defined for every ``mu`` in [0, 1]);
    a zero variance gives ``k = n`` (for passive sampling with no error in n
    draws this is the Jeffreys interval).  Where the moment count
    ``mu (1 - mu) / s2 - 1`` puts at least half an event on each side (the
    effective count of Korn and Graubard, "Confidence intervals for
    proportions with small expected number of positive counts estimated
    from survey data", Survey Methodology 24(2), 1998), it is used instead,
    as before the Jeffreys count existed: the robustness grid's coverage was
    measured with it, and the Jeffreys count, smaller there, only widened
    intervals that already covered.
    The interval always holds the estimate and keeps a boundary estimate's boundary.  Without ``n``: where no Beta
    has that mean and variance (``s2 >= mu (1 - mu)``) the whole range is
    returned, and where the mean sits on the boundary the normal interval is.
    """
    value, var = np.broadcast_arrays(np.asarray(value, float), np.asarray(var, float))
    lower = np.broadcast_to(np.asarray(lower, float), value.shape)
    upper = np.broadcast_to(np.asarray(upper, float), value.shape)
    span = upper - lower
    mu = (value - lower) / span
    s2 = np.maximum(var, 0.0) / span**2
    alpha = 1 - level
    if n is not None:
        m = np.clip(mu, 0.0, 1.0)
        k = jeffreys_count(m, s2, n)
        # the moment count where it sees at least half an event on each side (the fit of the designs' intervals as
        # benchmarked); the Jeffreys count only where that breaks down, at and near a boundary
        with np.errstate(divide="ignore", invalid="ignore"):
            k_moment = m * (1 - m) / s2 - 1
        k = np.where(np.minimum(m, 1 - m) * k_moment >= 0.5, k_moment, k)
        a, b = m * k + 0.5, (1 - m) * k + 0.5
        # as for the Jeffreys interval, an estimate on the boundary keeps that boundary in its interval
        lo = np.where(m <= 0, 0.0, betaincinv(a, b, alpha / 2))
        hi = np.where(m >= 1, 1.0, betaincinv(a, b, 1 - alpha / 2))
        return _holding(value, lower + span * lo, lower + span * hi)
    n_lo, n_hi = normal_interval(value, var, level, lower, upper)
    inside = (mu > 0) & (mu < 1)
    too_wide = inside & (s2 >= mu * (1 - mu))
    ok = inside & (s2 > 0) & ~too_wide
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.where(ok, mu * (1 - mu) / np.where(s2 > 0, s2, 1.0) - 1, 1.0)
    a, b = np.where(ok, mu * k, 1.0), np.where(ok, (1 - mu) * k, 1.0)
    b_lo = betaincinv(a, b, alpha / 2)
    b_hi = betaincinv(a, b, 1 - alpha / 2)
    lo = np.where(ok, lower + span * b_lo, np.where(too_wide, lower, n_lo))
    hi = np.where(ok, lower + span * b_hi, np.where(too_wide, upper, n_hi))
    return _holding(value, lo, hi)


def _holding(value, lo, hi):
    """``(lo, hi)`` widened to hold ``value``.

    A Beta's tail quantile can pass its mean when nearly all its mass sits at
    one end (``mu`` near 1 with few effective draws, or the Jeffreys
    posterior shrunk towards 1/2): the interval then stops at the estimate.
    """
    return np.fmin(lo, value), np.fmax(hi, value)


def jeffreys_count(mu, var, n=np.inf):
    """The count ``k`` whose Jeffreys posterior ``Beta(mu k + 1/2, (1 - mu) k + 1/2)`` has variance ``var``.

    ``k`` is the effective number of binary draws behind a proportion
    estimated as ``mu`` with variance ``var`` (Korn and Graubard, "Confidence
    intervals for proportions with small expected number of positive counts
    estimated from survey data", Survey Methodology 24(2), 1998, take
    ``mu (1 - mu) / var``; this is that count for the Jeffreys posterior, whose
    pseudo-counts keep it defined where ``mu`` is 0 or 1).  With ``a + b = k + 1``
    the variance is ``(c k^2 + k/2 + 1/4) / ((k + 1)^2 (k + 2))``, ``c = mu (1 - mu)``:
    it falls strictly from 1/8 at ``k = 0`` to 0, so the root is unique.  A
    zero variance, which says nothing of the count, gives ``n`` (the draws
    behind the estimate).  A positive one is not capped by ``n``: a design
    that labels some items with certainty, or stratifies, can know more than
    ``n`` binary draws would.

    Parameters
    ----------
    mu : array_like
        Estimates in [0, 1].
    var : array_like
        Their variances (``>= 1/8`` gives 0).
    n : array_like
        The count where ``var`` is 0.

    Returns
    -------
    ndarray
    """
    mu, var, n = np.broadcast_arrays(np.clip(np.asarray(mu, float), 0.0, 1.0), np.asarray(var, float),
                                     np.asarray(n, float))

    def excess(k):  # variance at k minus var, decreasing in k
        return jeffreys_leaf_variance(mu * k, (1 - mu) * k) - var

    # bisection on t = k / (1 + k) in [0, 1): 60 halvings reach double precision
    lo_t, hi_t = np.zeros(mu.shape), np.ones(mu.shape)
    with np.errstate(divide="ignore", invalid="ignore"):  # t -> 1 where var = 0 (replaced by n below)
        for _ in range(60):
            t = (lo_t + hi_t) / 2
            above = excess(t / (1 - t)) > 0
            lo_t, hi_t = np.where(above, t, lo_t), np.where(above, hi_t, t)
        k = lo_t / (1 - lo_t)
    return np.where(var > 0, k, n)


def ellipsoid_radius_sq(n: int, k: int, level: float = 0.95) -> float:
    """Squared radius of the confidence ellipsoid in the metric of ``cov(G-hat)``.

    Marchant & Rubinstein (KDD 2021), 3.3.2 bounds ``(G - G-hat)^T S^{-1} (G - G-hat)`` by
    ``(n-1) k / (n (n-k)) F_{k, n-k}(level)`` with ``S`` the per-label
    covariance; with ``cov(G-hat) = S / n`` the bound is multiplied by ``n``.
    For ``n <= k`` the chi-square limit is used.
    """
    if n > k:
        return float((n - 1) * k / (n - k) * fdtri(k, n - k, level))
    return float(chdtri(k, 1 - level))
