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

__all__ = ["beta_interval", "ellipsoid_radius_sq", "normal_interval"]


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
    Beta's "sample size").  With ``n`` (the number of draws behind the
    estimate) the fit stays honest at small samples: a zero variance (e.g. no
    error seen yet) gives ``k = n``, the size of the sample, instead of a
    point, and half a pseudo-count goes to each side as in the Jeffreys
    interval, ``a = mu k + 1/2``, ``b = (1 - mu) k + 1/2`` (for passive
    sampling with no error in n draws this is the Jeffreys interval).  Without ``n``: where no Beta
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
        n = np.broadcast_to(np.asarray(n, float), m.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(s2 > 0, m * (1 - m) / s2 - 1, n)
        k = np.maximum(np.nan_to_num(k, nan=0.0), 0.0)
        a, b = m * k + 0.5, (1 - m) * k + 0.5
        # as for the Jeffreys interval, an estimate on the boundary keeps that boundary in its interval
        lo = np.where(m <= 0, 0.0, betaincinv(a, b, alpha / 2))
        hi = np.where(m >= 1, 1.0, betaincinv(a, b, 1 - alpha / 2))
        return lower + span * lo, lower + span * hi
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
    return lo, hi


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
