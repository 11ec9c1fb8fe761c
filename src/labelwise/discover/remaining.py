"""The number of positives not found yet, its interval, and whether the interval can be trusted.

The estimate is iChao1 (see :mod:`.richness`).  The interval runs from the
lower end of Chao's (1987) log-normal interval around Chao1 to the upper end
of the one around iChao1, ``[S + f_0 / K, S + f_0 K]`` with ``K = exp(z
sqrt(log(1 + var / f_0^2)))`` (Chao, "Estimating the population size for
capture-recapture data with unequal catchability", Biometrics 43, 1987, Eq.
13), minus the positives found: Chao1 is the lower bound, and iChao1's term,
which divides by ``f_4`` (1 when none), overshoots in samples with few
doubletons and no quadrupletons (measured: large populations early on).
It assumes:

1. every answer counted is a draw by fixed popularity from all the positives
   of its part of the domain (no exclude list there; the caller keeps only
   those answers), and every part with positives not found was sampled so;
2. the positives not returned yet are about as popular as those returned once
   or twice (iChao1 allows for some spread, measured by ``f_3`` and ``f_4``).

When the sample says either may fail, the estimate is reported as a lower
bound only (``lower_bound_only``, with the reasons in ``doubts``): parts of
the domain no such query sampled; a squared coefficient of variation of the
rare positives' detection rates (Chao and Lee 1992) above ``CV2_LIMIT``
(strongly unequal popularity: many positives can be too rare to show in the
sample at all); more positives found than the sample's estimate of all of
them (the sample is too small: its interval's upper end is then no bound
either); or a Good-Turing sample coverage below ``COVERAGE_LIMIT``
(most answers would still be new: the accumulation curve is still rising).
Whatever the flags, ``unseen_share`` (1 - sample coverage) estimates the
share of answers that would still be new, which stays valid under any
popularity: the positives not found may be many, but are then rarely named.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .richness import (
    RARE,
    chao1_unseen,
    chao1_variance,
    ichao1,
    rare_cv2,
    sample_coverage,
)

__all__ = ["COVERAGE_LIMIT", "CV2_LIMIT", "remaining_interval"]

CV2_LIMIT = 0.5
COVERAGE_LIMIT = 0.5


def _lognormal(seen: float, unseen: float, variance: float, z: float) -> tuple[float, float]:
    """Chao (1987), Eq. 13: ``[S + f_0 / K, S + f_0 K]``, ``K = exp(z sqrt(log(1 + var / f_0^2)))`` (``S`` if ``f_0 = 0``)."""
    if unseen <= 0:
        return seen, seen
    spread = float(np.exp(z * np.sqrt(np.log1p(variance / unseen ** 2))))
    return seen + unseen / spread, seen + unseen * spread


def remaining_interval(counts: np.ndarray, found: int | None = None, level: float = 0.95,
                       units: float | None = None, unsampled: int = 0) -> dict:
    """Estimated number of positives not found yet, its interval, and the checks of its assumptions.

    Parameters
    ----------
    counts : numpy.ndarray
        Times each positive was returned in the sample (zeros are ignored).
    found : int, optional
        Positives found in the sampled parts in total, some maybe by answers outside the sample
        (default: those in it); the estimate is ``max(0, S + f_0 - found)``.
    level : float
        Interval level.
    units : float, optional
        Sampling units ``T`` of the sample (default: the number of answers, ``n``).
    unsampled : int
        Items (not known to hold no positive) in parts of the domain outside the sample: their
        positives are not counted, and the result is a lower bound only.

    Returns
    -------
    dict
        ``total`` (estimated positives in the sampled parts), ``remaining`` (not found yet),
        ``interval`` (``[low, high]`` of the remaining), ``lower_bound_only``, ``doubts`` (why, one
        sentence each) and ``unseen_share`` (share of answers that would be new).
    """
    counts = np.asarray(counts)
    counts = counts[counts > 0]
    f = np.bincount(np.minimum(counts, RARE + 1), minlength=RARE + 2)[1:RARE + 1].astype(float)
    n, seen = float(counts.sum()), float(counts.size)
    found = int(seen) if found is None else int(found)
    units = n if units is None else float(units)
    unseen, variance = ichao1(units, f)
    z = norm.ppf(0.5 + level / 2)
    # the lower end is Chao1's (the lower bound); iChao1's term, unsteady when f_4 is small, lifts the rest
    low = _lognormal(seen, float(chao1_unseen(units, f[0], f[1])), float(chao1_variance(units, f[0], f[1])), z)[0]
    high = _lognormal(seen, unseen, variance, z)[1]
    coverage, cv2 = sample_coverage(n, f[0], f[1]), rare_cv2(f)
    doubts = []
    if unsampled:
        doubts.append(f"{unsampled} items lie where no query without an exclude list sampled: positives among "
                      "them are not counted")
    if cv2 > CV2_LIMIT:
        doubts.append(f"the rare positives' popularity varies (squared CV {cv2:.2f} > {CV2_LIMIT:g}): many "
                      "positives may be too rare to have been returned")
    if found > seen + unseen:
        doubts.append(f"{found} positives are found, more than the sample's estimate of all of them "
                      f"({seen + unseen:.0f}): the sample is too small to tell")
    if coverage < COVERAGE_LIMIT:
        doubts.append(f"{1 - coverage:.0%} of answers would still be new (sample coverage {coverage:.2f} < "
                      f"{COVERAGE_LIMIT:g})")
    total = max(seen + unseen, found)
    return {"total": total, "remaining": total - found,
            "interval": [float(max(low - found, 0.0)), float(max(high - found, 0.0))],
            "lower_bound_only": bool(doubts), "doubts": doubts, "unseen_share": 1.0 - coverage}
