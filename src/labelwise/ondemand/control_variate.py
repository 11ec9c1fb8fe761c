"""The joint precision estimator with a control variate on the region other systems cover.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Eq. 2 gives
the plain joint estimator :math:`\\hat\\pi_i = \\sum_j \\frac1{n_j}\\sum_{x \\in
\\hat X_j} t_{ij}(x)`, :math:`t_{ij} = w_{ij} p_i f/q_i`. Its variance does not
vanish as precision goes to 1: other systems' draws fall in or out of
:math:`X_i` at random. The same sum without :math:`f` restricted to the
*shared region* :math:`S_i` (instances of :math:`X_i` that another sampled
system also predicts), :math:`\\hat c_i = \\sum_j \\frac1{n_j}\\sum_{x \\in \\hat
X_j} w_{ij} p_i 1[x \\in S_i]/q_i`, has the known expectation
:math:`1 - u_i`, :math:`u_i = \\sum_{x \\in X_i \\setminus S_i} p_i(x)`. The
regression estimator

.. math::
    \\hat\\pi_i^{cv} = \\hat\\pi_i - \\hat\\beta_i\\,(\\hat c_i - (1 - u_i)), \\qquad
    \\hat\\beta_i = \\widehat{\\mathrm{Cov}}(\\hat\\pi_i, \\hat c_i)/\\widehat{\\mathrm{Var}}(\\hat c_i)

(Owen, *Monte Carlo theory, methods and examples*, 2013, Sec. 8.9 and 9.10)
removes that variation. Restricting the control variate to :math:`S_i` keeps
the region only system ``i``'s own draws reach out of the adjustment: a control
variate over all of :math:`X_i` makes :math:`\\hat\\beta_i \\approx \\pi_i`,
i.e. self-normalizes, and a near-copy's few own draws that miss its swapped
outputs then bias it toward the copied system's precision.

Its variance is the stratified delete-one-draw jackknife (each system's
sample a stratum; the mixture weights held fixed), which accounts for the
estimation of :math:`\\hat\\beta_i`:

.. math::
    v_J = \\sum_j \\mathrm{fpc}_j \\frac{n_j - 1}{n_j}
    \\sum_{k \\in \\hat X_j} \\big(\\hat\\theta_{(jk)} - \\bar\\theta_{(j)}\\big)^2

(Wolter, *Introduction to Variance Estimation*, 2nd ed., 2007, Sec. 4.5); it
equals the linearized variance for an estimator linear in the draws.
"""

from __future__ import annotations

import numpy as np

__all__ = ["own_region", "regression_precision"]


def own_region(P: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``alone[i, x]``: instance ``x`` of :math:`X_i` is predicted by no other system with draws.

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions.
    n : ndarray, shape (m,)
        Draws per system.
    """
    sampled = (P > 0) & (np.asarray(n) > 0)[:, None]
    return (P > 0) & (sampled.sum(axis=0)[None, :] - sampled == 0)


def _terms(st, sc, stc, scc, ss, n, fpc) -> tuple[np.ndarray, ...]:
    """One system's terms of :math:`\\hat\\pi`, :math:`\\hat c`, :math:`\\widehat{\\mathrm{Cov}}(\\hat\\pi, \\hat c)`,
    :math:`\\widehat{\\mathrm{Var}}(\\hat c)` and of :math:`\\hat\\pi` on the control variate's region, from its
    sums of ``T``, ``C``, ``TC``, ``CC`` and ``T 1[C > 0]`` over ``n`` draws.

    Within-system covariances with ddof 1, times ``fpc/n``; a system with fewer than two draws adds
    nothing to them, one without draws adds nothing at all (as ``grouped_cov``).
    """
    safe_n = np.maximum(n, 1)
    factor = np.where(n >= 2, fpc / safe_n / np.maximum(n - 1, 1), 0.0)
    return (st / safe_n, sc / safe_n, (stc - st * sc / safe_n) * factor, (scc - sc * sc / safe_n) * factor,
            ss / safe_n)


def _slope(value, c_hat, cov_tc, var_c, value_shared) -> np.ndarray:
    """:math:`\\hat\\beta`; where :math:`\\hat c` does not vary within any sample, the ratio of
    :math:`\\hat\\pi` on the control variate's region to :math:`\\hat c` (self-normalized there)."""
    ratio = np.divide(value_shared, c_hat, out=np.zeros_like(c_hat), where=c_hat > 0)
    return np.divide(cov_tc, var_c, out=ratio, where=var_c > 1e-300)


def _regression(value, c_hat, cov_tc, var_c, value_shared, expected) -> np.ndarray:
    """:math:`\\hat\\pi - \\hat\\beta(\\hat c - E\\hat c)`."""
    return value - _slope(value, c_hat, cov_tc, var_c, value_shared) * (c_hat - expected)


def regression_precision(T: np.ndarray, C: np.ndarray, expected: np.ndarray, grp: np.ndarray, n: np.ndarray,
                         fpc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Regression estimate, its jackknife variance and slope, per target system.

    Parameters
    ----------
    T : ndarray, shape (k, N)
        Plain contributions :math:`t_{ij}(x)` of every draw to each target's estimate.
    C : ndarray, shape (k, N)
        Contributions to the control variate :math:`\\hat c_i`.
    expected : ndarray, shape (k,)
        :math:`E[\\hat c_i]`.
    grp, n, fpc : ndarray
        The system of each draw, draws per system and finite-population factors.

    Returns
    -------
    value, var, beta : ndarray, shape (k,)
        Unclipped estimate, :math:`v_J` (systems with fewer than two draws add nothing) and :math:`\\hat\\beta`.
    """
    n = np.asarray(n, dtype=float)
    G = np.zeros((grp.size, n.size))
    G[np.arange(grp.size), grp] = 1.0
    draws = (T, C, T * C, C * C, T * (C > 0))
    sums = [X @ G for X in draws]  # (k, m) each
    full = _terms(*sums, n, fpc)
    totals = [t.sum(axis=1) for t in full]
    value = _regression(*totals, expected)
    beta = _slope(*totals)
    # deleting one draw changes only its own system's terms
    loo = _terms(*(s[:, grp] - X for s, X in zip(sums, draws, strict=True)), n[grp] - 1, fpc[grp])
    theta = _regression(*(tot[:, None] + new - old[:, grp] for tot, new, old in zip(totals, loo, full, strict=True)),
                        expected[:, None])
    mean_j = (theta @ G) / np.maximum(n, 1)
    dev2 = ((theta - mean_j[:, grp]) ** 2) @ G
    var = dev2 @ np.where(n >= 2, fpc * (n - 1) / np.maximum(n, 1), 0.0)
    return value, var, beta
