"""Fieller's interval for a ratio of two estimated totals.

For ``G = R_1 / R_2`` with ``(R_1-hat, R_2-hat)`` jointly normal with
covariance ``S``, Fieller's theorem (E. C. Fieller, "Some problems in
interval estimation", J. Royal Statistical Society B 16(2), 1954, eq. 4)
gives the confidence set

    { t : (R_1 - t R_2)^2 <= z^2 (S_11 - 2 t S_12 + t^2 S_22) },

exact for a ratio of normal totals: ``R_1 - t R_2`` is normal with mean 0
at the true ratio whatever the denominator's noise.  The delta method
instead takes the variance at ``t = G-hat`` for every ``t``, so its
interval is symmetric about an estimate that is biased when few of the
denominator's items have been labeled (F1, precision and recall on rare
pools).  The set is the interval between the roots of a quadratic in ``t``
when the denominator is significantly positive (``R_2^2 > z^2 S_22``);
otherwise it is unbounded and the measure's whole range is returned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtri

if TYPE_CHECKING:
    from ..measures import Measure
    from .result import Estimate

__all__ = ["FIELLER_BASIS", "fieller_interval", "with_fieller"]

#: What an interval that holds Fieller's assumes (added to the estimate's own basis).
FIELLER_BASIS = ("widened to hold Fieller's interval for the ratio of the two design-based totals (normal totals, "
                 "no delta method)")


def fieller_interval(R: np.ndarray, cov: np.ndarray, level: float = 0.95, lower: float = -np.inf,
                     upper: float = np.inf) -> tuple[np.ndarray, np.ndarray]:
    """Fieller's interval for ``R_1 / R_2``, clipped to ``[lower, upper]``.

    Parameters
    ----------
    R : ndarray, shape (..., 2)
        Estimates of the numerator and denominator totals (or means).
    cov : ndarray, shape (..., 2, 2)
        Their covariance.
    level : float
    lower, upper : float
        The ratio's range; returned where the set is unbounded.

    Returns
    -------
    (lo, hi) : tuple of ndarray, shape (...)
    """
    R, cov = np.asarray(R, dtype=float), np.asarray(cov, dtype=float)
    z2 = ndtri(0.5 + level / 2) ** 2
    R1, R2 = R[..., 0], R[..., 1]
    # (R1 - t R2)^2 - z^2 var(R1 - t R2) = A t^2 - 2 B t + C <= 0
    A = R2**2 - z2 * cov[..., 1, 1]
    B = R1 * R2 - z2 * cov[..., 0, 1]
    C = R1**2 - z2 * cov[..., 0, 0]
    bounded = A > 0
    safe_A = np.where(bounded, A, 1.0)
    # the estimate t = R1 / R2 lies in the set, so the discriminant is non-negative when A > 0 (up to rounding)
    root = np.sqrt(np.maximum(B**2 - A * C, 0.0))
    lo = np.where(bounded, (B - root) / safe_A, lower)
    hi = np.where(bounded, (B + root) / safe_A, upper)
    return np.clip(lo, lower, upper), np.clip(hi, lower, upper)


def with_fieller(est: Estimate, measure: Measure, totals_cov: Callable[[], np.ndarray]) -> Estimate:
    """``est`` whose ``auto`` interval also holds Fieller's, where ``measure`` is a ratio of two totals.

    ``totals_cov`` gives the design-based covariance of ``R-hat`` (numerator
    and denominator) from the labeled draws alone; it is called only for a
    ratio of totals (a measure of many components, such as AUC, never pays
    for its d x d matrix).  The interval becomes the
    union of ``est``'s own (which may include an oracle model's view of the
    items not labeled yet) and Fieller's (:attr:`Estimate.totals_cov`).
    Other measures, undefined estimates and a non-finite ``totals_cov``
    return ``est`` unchanged.
    """
    from ..measures.base import RatioOfTotals

    if not isinstance(measure, RatioOfTotals) or not est.all_defined:
        return est
    cov = np.asarray(totals_cov(), dtype=float)
    if not np.all(np.isfinite(cov)):
        return est
    return replace(est, totals_cov=cov, basis="; ".join(filter(None, (est.basis, FIELLER_BASIS))))
