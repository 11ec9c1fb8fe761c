"""The self-normalized joint precision: never less precise than the system's own draws.

The joint estimator of Chaganty, Paranjape, Liang and Manning, "Importance
sampling for unbiased on-demand evaluation of knowledge base population",
EMNLP 2017, Eq. 2, :math:`\\hat A_i = \\sum_j \\frac1{n_j}\\sum_{x \\in \\hat X_j} t_{ij}(x)`,
:math:`t_{ij} = w_{ij} r_i f`, :math:`r_i = p_i/q_i`, :math:`q_i = \\sum_j w_{ij} p_j`,
is a sum, not a mean: a draw of another system lands in :math:`X_i` or not at
random, and the number that land moves the estimate by about :math:`\\pi_i`
per draw. Its stratum-``j`` term of variance, :math:`\\frac{w_{ij}^2}{n_j}
\\mathrm{Var}_{p_j}(r_i f)`, stays of order :math:`\\pi_i` where a proportion's is
:math:`\\pi_i(1-\\pi_i)`; for a high-precision system the other systems' strata
then cost more than the reused labels bring, and the estimate is less precise
than the system's own draws alone. The self-normalized form (Owen, *Monte
Carlo theory, methods and examples*, 2013, Sec. 9.2)

.. math::
    \\hat\\pi_i = \\hat A_i / \\hat B_i, \\qquad
    \\hat B_i = \\sum_j \\frac1{n_j}\\sum_{x \\in \\hat X_j} w_{ij} r_i(x)
    \\quad (E\\hat B_i = 1),

divides the hit count out. Its linearized variance is that of
:math:`t_{ij} = w_{ij} r_i (f - \\pi_i)`,
:math:`V_i = \\sum_j c_j \\frac{w_{ij}^2}{n_j} \\mathrm{Var}_{p_j}(r_i (f - \\pi_i))`
(:math:`c_j` the design factor :func:`~labelwise.ondemand.estimators.design_factor`),
and its bias is :math:`O(1/n)`.

**Never worse than the own draws.** If for every :math:`k \\ne i`

.. math::
    c_k\\, w_{ik}/n_k \\le 2\\, c_i\\, w_{ii}/n_i,

then :math:`V_i \\le c_i \\mathrm{Var}_{p_i}(f)/n_i`, the variance of the simple
estimator (Eq. 1) on the same :math:`n_i` own draws, for *every* labelling
:math:`f`. Proof, pointwise in :math:`x` with :math:`a_k = w_{ik} p_k(x)`,
:math:`q_i = \\sum_k a_k`: :math:`V_i \\le \\sum_k c_k \\frac{w_{ik}^2}{n_k}
E_{p_k}[r_i^2 (f - \\pi_i)^2]`, whose :math:`x` term times :math:`n_i/(c_i p_i (f - \\pi_i)^2)`
is :math:`\\big(a_i^2 + \\sum_{k \\ne i} \\frac{c_k n_i w_{ik}}{c_i n_k} a_k p_i\\big)/q_i^2
\\le \\big(a_i^2 + 2 a_i \\sum_{k \\ne i} a_k\\big)/q_i^2 \\le 1`. This is the argument of
Owen and Zhou, "Safe and effective importance sampling", JASA, 2000, Thm 2
(a mixture with the component densities as control variates is never worse than
sampling from one component), here for stratified draws. The balance heuristic
(``'size'``, :math:`w_{ik} \\propto n_k`) meets the condition with equal
design factors, and so do the paper's ``'overlap'`` weights when
:math:`\\sum_x p_i p_k \\le \\sum_x p_i^2` (always for uniform :math:`p`);
:func:`capped_weights` enforces it for any scheme and any design factors by
lowering the offending weights.

**Post-stratified.** The system's own stratum :math:`U_i` (the instances no
other sampled system predicts: a near-copy's swapped outputs) is reached by
its own draws only, and one ratio over :math:`X_i` weights it by how many of
them landed there, a random share of a few draws; when none did the estimate
is that of the rest of :math:`X_i`, whose precision is often far from the
stratum's. Its mass :math:`u_i = \\sum_{x \\in U_i} p_i(x)` is known, so the
estimate is post-stratified (Cochran, *Sampling Techniques*, 1977, Sec. 5A.9):
:math:`u_i \\hat\\pi_U + (1 - u_i)\\hat\\pi_{rest}`, each a self-normalized
ratio over its stratum, with :math:`\\hat\\pi_U = 1/2` (the centre of the
proportions it may hold; the interval's floor of
:func:`~labelwise.ondemand.floors.reported_variance` spans them) when no draw
landed in :math:`U_i`. Given the number of own draws in :math:`U_i`,
:math:`\\hat\\pi_U` is the mean of a simple random sample of it, unbiased.
"""

from __future__ import annotations

import numpy as np

from .control_variate import own_region
from .estimators import (
    Estimate,
    _group_sums,
    _kish,
    grouped_cov,
    importance_coefficients,
    mixture_weights,
)

__all__ = ["capped_weights", "normalized_joint_precision"]


def capped_weights(W: np.ndarray, n: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """Mixture weights lowered to :math:`c_k w_{ik}/n_k \\le 2 c_i w_{ii}/n_i` (rows renormalized).

    Parameters
    ----------
    W : ndarray, shape (m, m)
        Mixture weights, one row per target system (:func:`~labelwise.ondemand.estimators.mixture_weights`).
    n : ndarray, shape (m,)
        Draws per system.
    factor : ndarray, shape (m,)
        Design factors :math:`c_j` (:func:`~labelwise.ondemand.estimators.design_factor`).

    Returns
    -------
    ndarray, shape (m, m)
        A target without own draws keeps its row (there is no own-draws estimator to beat); a system
        drawn in full (:math:`c_k = 0`) adds no variance and is not capped; a target drawn in full keeps
        only its own draws, which are then exact.
    """
    n = np.asarray(n, dtype=float)
    factor = np.asarray(factor, dtype=float)
    own = np.divide(factor * np.diag(W), n, out=np.zeros(n.size), where=n > 0)  # c_i w_ii / n_i
    per_draw = np.divide(n, factor, out=np.ones(n.size), where=factor > 0)  # n_k / c_k
    cap = np.where((n > 0)[:, None] & (factor > 0)[None, :], 2.0 * own[:, None] * per_draw[None, :], np.inf)
    np.fill_diagonal(cap, np.inf)
    capped = np.minimum(W, cap)
    total = capped.sum(axis=1, keepdims=True)
    return np.divide(capped, total, out=np.zeros_like(capped), where=total > 0)


def normalized_joint_precision(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                               fpc: np.ndarray, factor: np.ndarray, scheme: str = "overlap",
                               gram: np.ndarray | None = None, post_stratified: bool = False) -> Estimate:
    """Self-normalized joint precision :math:`\\hat A_i/\\hat B_i` with :func:`capped_weights` (module docstring).

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions.
    idx, grp, f : ndarray, shape (N,)
        Instance, system and verified label of every draw.
    n, fpc, factor : ndarray, shape (m,)
        Draws per system, finite-population factors (``1 - n/N``) and design factors
        (``(N - n)/(N - 1)``) of uniform draws without replacement (1 with replacement).
    scheme, gram
        Mixture weights before the cap, as :func:`~labelwise.ondemand.estimators.mixture_weights`.
    post_stratified : bool
        Self-normalize separately on the system's own stratum :math:`U_i` (the instances no other sampled
        system predicts, of known mass :math:`u_i`) and on the rest, and weight the two by
        :math:`u_i` and :math:`1 - u_i` (module docstring, "Post-stratified").

    Returns
    -------
    Estimate
        NaN where :math:`q_i` misses part of :math:`X_i` or no draw landed in :math:`X_i`. ``contributions``
        are the linearized :math:`w_{ij} r_i (f - \\hat\\pi_i)/\\hat B_i` (per stratum, times its mass, when
        post-stratified); ``var`` is :math:`\\sum_j \\mathrm{fpc}_j s_j^2/n_j` of them.
    """
    W = capped_weights(mixture_weights(P, n, scheme, gram), n, factor)
    coef, covered = importance_coefficients(P, idx, grp, W)
    if post_stratified:  # (draws in the stratum, its mass, may no draw reach it)
        alone = own_region(P, n)
        inside = alone[:, idx]
        strata = [(inside, (P * alone).sum(axis=1), True), (~inside, (P * ~alone).sum(axis=1), False)]
    else:
        strata = [(np.ones(coef.shape, dtype=bool), np.ones(P.shape[0]), False)]
    value, T = np.zeros(P.shape[0]), np.zeros_like(coef)
    ok = covered & (_group_sums(coef, grp, n) > 0)
    for member, mass, may_miss in strata:
        part = np.where(member, coef, 0.0)
        A, B = _group_sums(part * f[None, :], grp, n), _group_sums(part, grp, n)
        # the own stratum no draw reached: 1/2, the centre of the proportions it may hold (its interval is
        # :func:`~labelwise.ondemand.floors.reported_variance`)
        share = np.divide(A, B, out=np.full(B.size, 0.5), where=B > 0)
        value += mass * share
        T += mass[:, None] * part * (f[None, :] - share[:, None]) / np.where(B > 0, B, 1.0)[:, None]
        ok &= may_miss | (B > 0) | (mass == 0)
    value = np.where(ok, value, np.nan)
    var = np.where(ok, grouped_cov(T, T, grp, n, fpc), np.nan)
    ess = _kish(coef / np.maximum(n, 1)[grp][None, :], grp, fpc)
    return Estimate(value, var, T, ess)
