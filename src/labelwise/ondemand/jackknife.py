"""Delete-one-draw jackknife variance of the joint precision with the control variate.

The regression estimator :math:`\\hat\\pi_i - \\hat\\beta_i(\\hat c_i - 1)` of
:func:`~labelwise.ondemand.estimators.joint_precision` is a smooth function
of per-system sample sums. Its linearized variance treats the estimated slope
:math:`\\hat\\beta_i` as known and the within-sample variances as exact, and
under-covered in the benchmark where a few draws carry large importance
weights. The stratified jackknife (each system's sample is a stratum)
recomputes the whole estimator, slope included, with one draw deleted:

.. math::
    v_J = \\sum_j \\mathrm{fpc}_j \\frac{n_j - 1}{n_j}
    \\sum_{k \\in \\hat X_j} \\big(\\hat\\theta_{(jk)} - \\bar\\theta_{(j)}\\big)^2

(Wolter, *Introduction to Variance Estimation*, 2nd ed., 2007, Sec. 4.5;
Särndal, Swensson and Wretman, *Model Assisted Survey Sampling*, 1992,
Sec. 11.5). For an estimator linear in the draws it equals the linearized
variance exactly; the mixture weights are held fixed (design constants).
"""

from __future__ import annotations

import numpy as np

__all__ = ["regression_jackknife_variance"]


def _terms(st, sc, stc, scc, n, fpc) -> tuple[np.ndarray, ...]:
    """One system's terms of :math:`\\hat\\pi`, :math:`\\hat c`, :math:`\\widehat{\\mathrm{Cov}}(\\hat\\pi, \\hat c)`
    and :math:`\\widehat{\\mathrm{Var}}(\\hat c)` from its sums of ``T``, ``C``, ``TC``, ``CC`` over ``n`` draws.

    Within-system covariances with ddof 1, times ``fpc/n``; a system with fewer than two draws adds
    nothing to them, one without draws adds nothing at all (as ``grouped_cov``).
    """
    safe_n = np.maximum(n, 1)
    factor = np.where(n >= 2, fpc / safe_n / np.maximum(n - 1, 1), 0.0)
    return st / safe_n, sc / safe_n, (stc - st * sc / safe_n) * factor, (scc - sc * sc / safe_n) * factor


def _regression(value, c_hat, cov_tc, var_c) -> np.ndarray:
    """:math:`\\hat\\pi - \\hat\\beta(\\hat c - 1)`; the ratio :math:`\\hat\\pi/\\hat c` as slope where
    :math:`\\hat c` does not vary (as ``joint_precision``)."""
    ratio = np.divide(value, c_hat, out=np.zeros_like(c_hat), where=c_hat > 0)
    beta = np.divide(cov_tc, var_c, out=ratio, where=var_c > 1e-300)
    return value - beta * (c_hat - 1.0)


def regression_jackknife_variance(T: np.ndarray, C: np.ndarray, grp: np.ndarray, n: np.ndarray,
                                  fpc: np.ndarray) -> np.ndarray:
    """Stratified delete-one-draw jackknife variance of the regression estimator, per target system.

    Parameters
    ----------
    T : ndarray, shape (k, N)
        Plain contributions :math:`w_{ij} p_i(x) f(x)/q_i(x)` of every draw to each target's estimate.
    C : ndarray, shape (k, N)
        The same without :math:`f` (the control variate's contributions).
    grp, n, fpc : ndarray
        The system of each draw, draws per system and finite-population factors.

    Returns
    -------
    ndarray, shape (k,)
        :math:`v_J`; systems with fewer than two draws contribute nothing.
    """
    n = np.asarray(n, dtype=float)
    G = np.zeros((grp.size, n.size))
    G[np.arange(grp.size), grp] = 1.0
    sums = [X @ G for X in (T, C, T * C, C * C)]  # (k, m) each
    full = _terms(*sums, n, fpc)
    totals = [t.sum(axis=1, keepdims=True) for t in full]
    # deleting draw x changes only its own system's terms
    loo_sums = [s[:, grp] - X for s, X in zip(sums, (T, C, T * C, C * C), strict=True)]
    loo = _terms(*loo_sums, n[grp] - 1, fpc[grp])
    theta = _regression(*(tot + new - old[:, grp] for tot, new, old in zip(totals, loo, full, strict=True)))
    mean_j = (theta @ G) / np.maximum(n, 1)
    dev2 = ((theta - mean_j[:, grp]) ** 2) @ G
    return dev2 @ np.where(n >= 2, fpc * (n - 1) / np.maximum(n, 1), 0.0)
