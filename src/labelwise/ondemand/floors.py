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
1998); with no draw in :math:`U_i` this is :math:`u_i^2/(4 z^2)`. Given
:math:`d_i`, uniform draws without replacement from :math:`X_i` are a simple
random sample of :math:`U_i`: the plug-in variance carries the
finite-population correction :math:`1 - d_i/N_U`, :math:`N_U = |U_i|`, and the
floor is taken at the effective size :math:`d_i (N_U - 1)/(N_U - d_i)`
(Cochran, *Sampling Techniques*, 1977, Thm 2.2): neither is left once
:math:`U_i` is drawn in full.
"""

from __future__ import annotations

import numpy as np

from .control_variate import own_region
from .intervals import agresti_coull_floor

__all__ = ["effective_draws", "own_share", "own_share_variance", "reported_variance"]


def reported_variance(var: np.ndarray, u: np.ndarray, d: np.ndarray, share: np.ndarray, size: np.ndarray,
                      post_stratified: bool, level: float = 0.95) -> np.ndarray:
    """The variance the precision interval is built on: ``var`` with the own region's floor.

    The own region's share :math:`u_i \\hat p` comes from the :math:`d_i` own draws in :math:`U_i`; its
    plug-in variance is :func:`own_share_variance` :math:`v_U` and its floor the Agresti-Coull
    :math:`F_U = u_i^2 \\tilde p(1 - \\tilde p)/(d^* + z^2)`, :math:`d^*` the :func:`effective_draws`.

    The floor adds :math:`E_U = \\max(F_U - v_U, 0)`:

    * one ratio over :math:`X_i`: in quadrature, :math:`V + E_U`;
    * post-stratified (:func:`~labelwise.ondemand.normalized.normalized_joint_precision`): the estimate is
      :math:`u_i\\hat\\pi_U + (1 - u_i)\\hat\\pi_{rest}`, the own part from often none to three draws, a
      binomial with so few trials far from normal: where the floor binds, the Agresti-Coull half-width holds
      on its own but not as a normal term under the root of a sum, and the excess's interval is added to the
      normal one (their Minkowski sum), :math:`\\big(\\sqrt{V} + \\sqrt{E_U}\\big)^2`. Where the plug-in is
      above the floor (many own draws, or labels of both kinds) the normal interval is kept: adding the own
      stratum's whole interval to the rest's there made it 1.65 times the variance for a disjoint system
      that a later one half covers (200 own draws).

    A system without an own region (:math:`u_i = 0`) keeps ``var``. The statistics are the own region's,
    not the draws, so that the estimate (:func:`own_share` of its draws) and the planner (their
    distribution before drawing) go through the same formula.

    Parameters
    ----------
    var : ndarray, shape (m,)
        Linearized variance of the precision estimate.
    u, d, share, size : ndarray, shape (m,)
        Mass :math:`u_i` of each system's own region, own draws :math:`d_i` there, the share of them
        correct and the region's size :math:`N_U` (``inf`` for draws with replacement), as :func:`own_share`
        returns.
    post_stratified : bool
        Whether the estimate is post-stratified on the own region.
    level : float
        Interval level.

    Returns
    -------
    ndarray, shape (m,)
    """
    plug_in = own_share_variance(u, d, share, size)
    floor = u**2 * agresti_coull_floor(share, effective_draws(d, size), level)
    excess = np.maximum(floor - plug_in, 0.0)
    if post_stratified:
        return (np.sqrt(var) + np.sqrt(excess)) ** 2
    return var + excess


def own_share_variance(u: np.ndarray, d: np.ndarray, share: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Plug-in variance :math:`u_i^2 s^2 (1 - d_i/N_U)/d_i` of the own region's share, :math:`s^2 = \\hat p(1 -
    \\hat p) d_i/(d_i - 1)` the sample variance of its labels (0 with fewer than two draws).

    The form of :func:`~labelwise.ondemand.estimators.grouped_cov`, so that the floor is compared with the
    own region's term as the linearized variance holds it (exactly that variance for a system that is all
    own region). Parameters as :func:`reported_variance`; ``d`` may be real-valued.
    """
    d = np.asarray(d, dtype=float)
    fpc = np.maximum(1.0 - d / np.maximum(np.asarray(size, dtype=float), 1.0), 0.0)  # 1 for an infinite size
    return np.divide(u**2 * share * (1 - share) * fpc, d - 1, out=np.zeros_like(d), where=d > 1)


def effective_draws(d: np.ndarray, size: np.ndarray) -> np.ndarray:
    """:math:`d (N - 1)/(N - d)`: ``d`` draws without replacement from ``size`` instances as independent ones.

    The variance of their mean is :math:`\\sigma^2 (N - d)/(d (N - 1))` (:math:`\\sigma^2` with divisor
    :math:`N`); ``inf`` once the ``size`` instances are all drawn, ``d`` for an infinite ``size``.
    """
    d = np.asarray(d, dtype=float)
    size = np.broadcast_to(np.asarray(size, dtype=float), d.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(np.isinf(size), d, d * (size - 1) / (size - d))
    return np.where(d <= 0, 0.0, np.where(d >= size, np.inf, scaled))


def own_share(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
              wor: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per system: the mass :math:`u_i` of its own region, the own draws :math:`d_i` that landed there, the
    share of them verified correct (0 without a draw) and the region's size (``inf`` where the system is not
    drawn uniformly without replacement).

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions of the systems.
    idx, grp, f : ndarray, shape (N,)
        Instance, system and verified label of every draw.
    n : ndarray of int, shape (m,)
        Draws per system.
    wor : ndarray of bool, shape (m,)
        Whether each system is drawn uniformly without replacement.

    Returns
    -------
    u, d, share, size : ndarray, shape (m,)
    """
    alone = own_region(P, n)
    u = (P * alone).sum(axis=1)
    own = alone[grp, idx]  # draws that landed in their own system's region
    d = np.bincount(grp[own], minlength=P.shape[0]).astype(float)
    k = np.bincount(grp[own], weights=f[own], minlength=P.shape[0]).astype(float)
    size = np.where(np.asarray(wor, dtype=bool), alone.sum(axis=1), np.inf)
    return u, d, np.divide(k, d, out=np.zeros_like(k), where=d > 0), size
