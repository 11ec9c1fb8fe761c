"""Variance floor for the part of a system's output that only its own draws cover.

The joint precision estimator of Chaganty, Paranjape, Liang and Manning,
"Importance sampling for unbiased on-demand evaluation of knowledge base
population", EMNLP 2017, Eq. 2, reuses other systems' draws wherever they
overlap system ``i``. On the region :math:`U_i` of :math:`X_i` that no other
sampled system predicts (a near-copy's swapped outputs), only system ``i``'s
own :math:`n_i` draws inform the estimate; with few of them, often none lands
in :math:`U_i` and the estimated variance misses that region entirely. Its
share of precision, :math:`u_i \\pi_{U}` with :math:`u_i = \\sum_{x \\in U_i}
p_i(x)` known, is a proportion estimated from the :math:`d_i` own draws that
fell in :math:`U_i`, so its variance is at least the Agresti-Coull variance
:math:`u_i^2 \\tilde p (1 - \\tilde p)/(d_i + z^2)`,
:math:`\\tilde p = (k_i + z^2/2)/(d_i + z^2)` with :math:`k_i` of the
:math:`d_i` correct (Agresti and Coull, "Approximate is better than 'exact'
for interval estimation of binomial proportions", The American Statistician,
1998); with no draw in :math:`U_i` this is :math:`u_i^2/(4 z^2)`.
"""

from __future__ import annotations

import numpy as np

from .control_variate import own_region
from .intervals import agresti_coull_floor

__all__ = ["own_region_excess", "own_region_floor", "own_share", "own_stratum_apart", "reported_variance"]


def own_region_floor(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                     level: float = 0.95) -> np.ndarray:
    """Agresti-Coull variance floor of each system's precision from the region only its own draws cover.

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions of the systems.
    idx, grp, f : ndarray, shape (N,)
        Instance, system and verified label of every draw.
    n : ndarray of int, shape (m,)
        Draws per system.
    level : float
        Interval level (sets :math:`z`).

    Returns
    -------
    ndarray, shape (m,)
        :math:`u_i^2 \\tilde p_i(1 - \\tilde p_i)/(d_i + z^2)`; 0 where every instance of
        :math:`X_i` is predicted by another sampled system.
    """
    u, d, share = own_share(P, idx, grp, f, n)
    return u**2 * agresti_coull_floor(share, d, level)


def own_region_excess(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                      level: float = 0.95) -> np.ndarray:
    """What :func:`own_region_floor` adds to the plug-in variance of the region's share, at least 0.

    The plug-in variance of the share :math:`u_i \\hat p` estimated from the :math:`d_i` own draws in
    :math:`U_i` is :math:`u_i^2 \\hat p(1 - \\hat p)/d_i` (0 without a draw there); the floor applies to this
    component of the estimate's variance, not to the whole: the variance from the rest of :math:`X_i` is
    added to it. Same parameters and shape as :func:`own_region_floor`.
    """
    return _excess(*own_share(P, idx, grp, f, n), level)


def own_stratum_apart(var: np.ndarray, P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray,
                      n: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Variance whose normal interval is the own stratum's interval added to the rest's, not in quadrature.

    For the post-stratified estimate :math:`u_i\\hat\\pi_U + (1 - u_i)\\hat\\pi_{rest}`
    (:func:`~labelwise.ondemand.normalized.normalized_joint_precision`) the own stratum's part comes from the
    :math:`d_i` own draws that landed in :math:`U_i`, often none to three: a binomial with so few trials is
    far from normal, and its Agresti-Coull half-width :math:`z u_i\\sqrt{\\tilde p(1 - \\tilde p)/(d_i + z^2)}`
    (the floor of :func:`own_region_floor`) holds on its own but not as a normal term under the root of a sum.
    The two intervals are added (their Minkowski sum, wider than the quadrature sum whenever both parts are
    positive): :math:`\\big(\\sqrt{V - v_U} + \\sqrt{\\max(v_U, F_U)}\\big)^2`, with :math:`v_U` the plug-in
    variance of the stratum's share and :math:`F_U` its floor. A system without an own stratum keeps ``var``.

    Parameters
    ----------
    var : ndarray, shape (m,)
        Linearized variance of the post-stratified estimate (both strata).
    P, idx, grp, f, n, level
        As :func:`own_region_floor`.

    Returns
    -------
    ndarray, shape (m,)
    """
    return _apart(var, *own_share(P, idx, grp, f, n), level)


def reported_variance(var: np.ndarray, u: np.ndarray, d: np.ndarray, share: np.ndarray, post_stratified: bool,
                      level: float = 0.95) -> np.ndarray:
    """The variance the precision interval is built on: ``var`` with the own region's floor.

    :func:`own_stratum_apart` for the post-stratified estimate, else ``var`` plus :func:`own_region_excess`,
    from the own region's statistics rather than the draws, so that the estimate (statistics of its draws,
    :func:`own_share`) and the planner (their expectation before drawing) go through the same formula.

    Parameters
    ----------
    var : ndarray, shape (m,)
        Linearized variance of the precision estimate.
    u, d, share : ndarray, shape (m,)
        Mass :math:`u_i` of each system's own region, own draws :math:`d_i` there (a real number when
        planned) and the share of them correct, as :func:`own_share` returns.
    post_stratified : bool
        Whether the estimate is post-stratified on the own region.
    level : float
        Interval level.

    Returns
    -------
    ndarray, shape (m,)
    """
    if post_stratified:
        return _apart(var, u, d, share, level)
    return var + _excess(u, d, share, level)


def _plug_in(u: np.ndarray, d: np.ndarray, share: np.ndarray) -> np.ndarray:
    """Plug-in variance :math:`u_i^2 \\hat p(1 - \\hat p)/d_i` of the own region's share (0 without a draw)."""
    d = np.asarray(d, dtype=float)
    return np.divide(u**2 * share * (1 - share), d, out=np.zeros_like(d), where=d > 0)


def _excess(u: np.ndarray, d: np.ndarray, share: np.ndarray, level: float) -> np.ndarray:
    """:func:`own_region_excess` from the own region's statistics."""
    return np.maximum(u**2 * agresti_coull_floor(share, d, level) - _plug_in(u, d, share), 0.0)


def _apart(var: np.ndarray, u: np.ndarray, d: np.ndarray, share: np.ndarray, level: float) -> np.ndarray:
    """:func:`own_stratum_apart` from the own region's statistics."""
    plug_in = _plug_in(u, d, share)
    own = np.maximum(plug_in, u**2 * agresti_coull_floor(share, d, level))
    return (np.sqrt(np.maximum(var - plug_in, 0.0)) + np.sqrt(own)) ** 2


def own_share(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray,
               n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per system: the mass :math:`u_i` of its own region, the own draws :math:`d_i` that landed there and the
    share of them verified correct (0 without a draw); arrays of shape ``(m,)``, parameters as
    :func:`own_region_floor`."""
    alone = own_region(P, n)
    u = (P * alone).sum(axis=1)
    own = alone[grp, idx]  # draws that landed in their own system's region
    d = np.bincount(grp[own], minlength=P.shape[0]).astype(float)
    k = np.bincount(grp[own], weights=f[own], minlength=P.shape[0]).astype(float)
    return u, d, np.divide(k, d, out=np.zeros_like(k), where=d > 0)
