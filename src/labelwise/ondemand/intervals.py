"""Intervals for the on-demand estimators: normal with an Agresti-Coull floor, score, and Wilson at an effective size.

The estimators of :mod:`labelwise.ondemand.estimators` (Chaganty, Paranjape,
Liang and Manning, "Importance sampling for unbiased on-demand evaluation of
knowledge base population", EMNLP 2017, Sec. 3) are proportions estimated
from weighted draws; these functions turn an estimate and its variance into
an interval that keeps its level near 0 and 1, where a variance estimated
from all-correct draws collapses.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

__all__ = ["agresti_coull_floor", "floored_normal_interval", "score_interval", "wilson_interval"]


def agresti_coull_floor(value: np.ndarray, n: np.ndarray | float, level: float = 0.95) -> np.ndarray:
    """Agresti-Coull variance :math:`\\tilde p(1-\\tilde p)/(n + z^2)` of a proportion from ``n`` draws.

    :math:`\\tilde p = (n\\hat p + z^2/2)/(n + z^2)`; zero for infinite ``n``.
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = np.clip(np.nan_to_num(np.asarray(value, dtype=float)), 0.0, 1.0)
    n = np.broadcast_to(np.asarray(n, dtype=float), p.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_t = (n * p + z**2 / 2) / (n + z**2)
        return np.where(np.isinf(n), 0.0, p_t * (1 - p_t) / (n + z**2))


def floored_normal_interval(value: np.ndarray, var: np.ndarray, level: float = 0.95,
                    ess_cap: np.ndarray | float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Normal interval :math:`\\hat p \\pm z\\sqrt{V}` with a variance floor at the design size.

    The estimators here are sums of many weighted draws and close to
    normal, so the plain interval covers (benchmark); the Wilson interval
    at an effective size pulls the centre toward 1/2 and under-covered
    high-precision systems. What fails is a variance *estimated* as (nearly) 0
    from all-correct or all-wrong draws. The floor is the Agresti-Coull
    variance :math:`\\tilde p(1-\\tilde p)/(n + z^2)`,
    :math:`\\tilde p = (n\\hat p + z^2/2)/(n + z^2)`, at the design effective
    size ``n = ess_cap`` (Kish size over fpc, an upper bound on the
    information in the draws); it is below the variance of any binomial-like
    estimate from ``n`` draws, so it only acts when the estimate collapses
    (Agresti and Coull, 1998). Infinite ``ess_cap`` (census) gives no floor.

    Returns
    -------
    lower, upper : ndarray
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)
    value = np.asarray(value, dtype=float)
    floor = agresti_coull_floor(value, ess_cap, level)
    half = z * np.sqrt(np.maximum(np.asarray(var, dtype=float), floor))
    bad = ~np.isfinite(value) | ~np.isfinite(half)
    lower = np.where(bad, np.nan, np.clip(value - half, 0, 1))
    upper = np.where(bad, np.nan, np.clip(value + half, 0, 1))
    return lower, upper


def score_interval(value: np.ndarray, var: np.ndarray, alpha: np.ndarray, beta: np.ndarray, level: float = 0.95,
                   ess_cap: np.ndarray | float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """The precisions :math:`\\pi` the estimate does not reject at the larger of the plug-in and the design variance.

    .. math::
        \\{\\pi : (\\hat\\pi - \\pi)^2 \\le z^2 \\max(\\hat V, \\alpha\\pi - \\beta\\pi^2)\\},

    the union of :func:`floored_normal_interval` (plug-in :math:`\\hat V` with its floor) and the
    score interval on :math:`V(\\pi) = \\alpha\\pi - \\beta\\pi^2`, the estimator's variance if
    its precision were :math:`\\pi` (:func:`~labelwise.ondemand.planning.exchangeable_variance`), whose
    ends are the roots of :math:`(1 + z^2\\beta)\\pi^2 - (2\\hat\\pi + z^2\\alpha)\\pi + \\hat\\pi^2`.
    Evaluated at the hypothesized :math:`\\pi` and not at the estimate, the variance does not shrink
    with the estimate in runs where few draws land in :math:`X_i` (a sum of importance weights is
    low exactly when its plug-in variance is), nor vanish when the labels seen are all correct. For
    a proportion (:math:`\\alpha = \\beta = \\mathrm{fpc}/n`) the score part is the Wilson interval
    (Wilson, "Probable inference, the law of succession, and statistical inference", JASA, 1927).

    Parameters
    ----------
    value : ndarray
        The estimates :math:`\\hat\\pi`.
    var : ndarray
        Their plug-in variances :math:`\\hat V`.
    alpha, beta : ndarray
        The coefficients of the design variance :math:`V(\\pi) = \\alpha\\pi - \\beta\\pi^2`.
    level : float
        Nominal coverage.
    ess_cap : ndarray or float
        The design effective size at which :func:`floored_normal_interval` floors the plug-in variance
        (infinite: no floor).

    Returns
    -------
    lower, upper : ndarray
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)
    value = np.asarray(value, dtype=float)
    alpha, beta = np.asarray(alpha, dtype=float), np.asarray(beta, dtype=float)
    lower, upper = floored_normal_interval(value, var, level, ess_cap)
    a, b = 1.0 + z**2 * beta, 2.0 * value + z**2 * alpha
    disc = b**2 - 4.0 * a * value**2  # = z^2 (4 pi (alpha - beta pi) + z^2 alpha^2) >= 0 for pi <= alpha / beta
    root = np.sqrt(np.maximum(disc, 0.0))
    ok = np.isfinite(lower) & (disc >= 0)
    lower = np.where(ok, np.minimum(lower, np.clip((b - root) / (2 * a), 0, 1)), lower)
    upper = np.where(ok, np.maximum(upper, np.clip((b + root) / (2 * a), 0, 1)), upper)
    return lower, upper


def wilson_interval(value: np.ndarray, var: np.ndarray, level: float = 0.95,
                    ess_cap: np.ndarray | float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval at an effective sample size (Korn and Graubard, 1998).

    A proportion estimated with variance ``var`` carries as much information
    as :math:`n^* = \\hat p(1-\\hat p)/\\mathrm{var}` Bernoulli draws; the
    Wilson interval at :math:`n^*` keeps coverage near 0 and 1, where the
    normal interval collapses (a variance estimated as 0 from all-correct
    draws). :math:`n^*` is capped by the design effective size ``ess_cap``,
    which also replaces it when :math:`\\hat p \\in \\{0, 1\\}` or the variance is 0.
    An infinite :math:`n^*` (census) gives a zero-width interval.

    Returns
    -------
    lower, upper : ndarray
    """
    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = np.clip(np.asarray(value, dtype=float), 0.0, 1.0)
    var = np.asarray(var, dtype=float)
    cap = np.broadcast_to(np.asarray(ess_cap, dtype=float), p.shape)
    pq = p * (1 - p)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_star = np.where((var > 0) & (pq > 0), pq / var, cap)
    n_star = np.minimum(n_star, cap)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = z**2 / n_star
        centre = (p + k / 2) / (1 + k)
        half = z / (1 + k) * np.sqrt(pq / n_star + k / (4 * n_star))
    half = np.where(np.isinf(n_star), 0.0, half)
    centre = np.where(np.isinf(n_star), p, centre)
    bad = ~np.isfinite(np.asarray(value, dtype=float)) | ~(n_star > 0)
    lower = np.where(bad, np.nan, np.clip(centre - half, 0, 1))
    upper = np.where(bad, np.nan, np.clip(centre + half, 0, 1))
    return lower, upper
