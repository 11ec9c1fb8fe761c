"""Joint recall from both samples of the correct instances: verifications and annotated documents.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3,
estimate recall as pool recall times pooled recall,
:math:`\\hat\\rho_i^{(j)} = \\hat\\theta\\,\\hat\\nu_i`: :math:`\\hat\\theta` from the
exhaustively annotated documents, :math:`\\hat\\nu_i` from the verifications
(:func:`~labelwise.ondemand.estimators.pooled_recall`). The same documents
also estimate recall directly (their Eq. 1), :math:`\\hat\\rho_i^{(s)} = \\sum_d
a_{id}/\\sum_d b_d`, and both are consistent for :math:`\\rho_i`. Their
minimum-variance combination

.. math::
    \\hat\\rho_i = (1 - \\lambda_i)\\hat\\rho_i^{(j)} + \\lambda_i\\hat\\rho_i^{(s)}, \\qquad
    \\lambda_i = \\frac{V_j - C}{V_j + V_s - 2C},

has variance :math:`(V_jV_s - C^2)/(V_j + V_s - 2C) \\le \\min(V_j, V_s)`
(Owen, *Monte Carlo theory, methods and examples*, 2013, Sec. 8.9; the same
combination as :mod:`~labelwise.ondemand.composite`). The two share the
documents and nothing else (:math:`\\hat\\nu_i` comes from the verifications),
so :math:`C = \\mathrm{Cov}_{docs}(\\hat\\nu_i\\hat\\theta, \\hat\\rho_i^{(s)})`, the
delete-one-document jackknife covariance at the estimated :math:`\\hat\\nu_i`.
Where the documents hold few correct instances of a small system the direct
ratio is noisy and :math:`\\lambda_i` is small; where a large system's pooled
recall rests on few correct verified draws the documents take over part of it.

**The interval's variance.** The two factors of the product come from independent samples, but
the number of documents is not fixed: it is planned from :math:`\\hat\\nu_i` and from the spread of
the pool recall on the documents drawn so far
(:meth:`~labelwise.ondemand.process.Process.plan_documents_for`), so which documents end the
sample depends on both, and :math:`\\hat\\theta` and :math:`\\hat\\nu_i` are correlated (positively, in
the benchmark, where the variance assuming independence fell below the MSE). That covariance is
not estimable from one run; the interval takes it at its Cauchy-Schwarz bound
(:func:`~labelwise.ondemand.estimators.recall_product` with ``coupled``): the combination's variance
is :math:`(1-\\lambda_i)^2 V_j^+ + \\lambda_i^2 V_s + 2\\lambda_i(1-\\lambda_i)C` with
:math:`V_j^+ = V_j + 2\\nu_i\\theta\\sqrt{V_\\theta V_\\nu}`. The weight stays the minimum-variance one at
:math:`V_j`, so the estimate does not change. Re-estimating the weight in each delete-one-document
replicate hardly changes the jackknife variance (checked on the benchmark): the weight's own
noise is not what made the interval short.

**The floor of** :math:`\\hat V_\\nu`. The pooled-recall draws are stratified by
system; a system's indicator :math:`g_i` is nearly constant within most strata
(its own draws are all in :math:`X_i`), so the linearized variance is well below
:math:`\\hat\\nu(1 - \\hat\\nu)` over the Kish size of the pooled weights.
:func:`pooled_recall_floor` floors it stratum by stratum instead: the
Agresti-Coull variance (Agresti and Coull, The American Statistician, 1998) of
the weighted share :math:`\\hat\\nu_{ij}` of :math:`X_i` among stratum ``j``'s
correct draws, at that stratum's Kish size over its finite-population factor,
times the stratum's squared share of the denominator. It acts only where the
plug-in collapses (a stratum's correct draws all in or all out of :math:`X_i`).
"""

from __future__ import annotations

import numpy as np

from .composite import composite_variance, composite_weight
from .estimators import pool_mixture, ratio_estimate, recall_product
from .intervals import agresti_coull_floor

__all__ = ["combined_recall", "pooled_recall_floor"]


def pooled_recall_floor(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                        fpc: np.ndarray, u: np.ndarray, level: float = 0.95) -> np.ndarray:
    """Stratified Agresti-Coull floor of the variance of pooled recall (module docstring).

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions.
    idx, grp, f : ndarray, shape (N,)
        Instance, system and verified label of every draw.
    n, fpc : ndarray, shape (m,)
        Draws per system and finite-population factors.
    u : ndarray, shape (K,)
        Recall weights :math:`u(x)`.
    level : float
        Interval level (sets :math:`z`).

    Returns
    -------
    ndarray, shape (m,)
        :math:`\\sum_j (B_j/B)^2\\,\\tilde\\nu_{ij}(1 - \\tilde\\nu_{ij})/(k_j/\\mathrm{fpc}_j + z^2)`
        with :math:`B_j` stratum ``j``'s part of the denominator of
        :func:`~labelwise.ondemand.estimators.pooled_recall`, :math:`k_j` the Kish size of its weights;
        NaN where no correct instance was drawn.
    """
    m = n.size
    w = u[idx] * f / pool_mixture(P, n)[idx]  # u f / q at each draw (the common factor 1/N cancels in shares)
    G = np.zeros((idx.size, m))
    G[np.arange(idx.size), grp] = 1.0
    s1, s2 = w @ G, (w**2) @ G  # per stratum: sum of weights and of squared weights
    total = s1.sum()  # B_j = s1_j / N: the shares B_j / B are s1_j / sum(s1)
    if total <= 0:
        return np.full(m, np.nan)
    hit = (P[:, idx] > 0) * w[None, :]  # (targets, draws)
    nu_j = np.divide(hit @ G, s1[None, :], out=np.zeros((m, m)), where=s1[None, :] > 0)
    kish = np.divide(s1**2, s2, out=np.zeros(m), where=s2 > 0)
    size = np.divide(kish, fpc, out=np.full(m, np.inf), where=fpc > 0)
    floor_j = np.where(s1[None, :] > 0, agresti_coull_floor(nu_j, np.broadcast_to(size, (m, m)), level), 0.0)
    return floor_j @ (s1 / total) ** 2


def combined_recall(theta: float, var_theta: float, nu: np.ndarray, var_nu: np.ndarray, a_pool: np.ndarray,
                    a_system: np.ndarray, b: np.ndarray, n_docs: int, docs_size: float,
                    level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The product recall combined with the documents' direct ratio at the minimum-variance weight.

    Parameters
    ----------
    theta, var_theta : float
        Pool recall :math:`\\hat\\theta` and its (floored) variance.
    nu, var_nu : ndarray, shape (m,)
        Pooled recall :math:`\\hat\\nu_i` and its variance.
    a_pool : ndarray, shape (D,)
        Correct pool instances of each annotated document (weighted by :math:`u`).
    a_system : ndarray, shape (m, D)
        Correct instances of each annotated document predicted by each system.
    b : ndarray, shape (D,)
        Correct instances of each annotated document.
    n_docs : int
        Documents in the corpus.
    docs_size : float
        Design size of the documents (correct instances found over the fpc): the direct ratio's
        variance is floored at the Agresti-Coull variance at this size, as the simple estimator's.
    level : float
        Interval level.

    Returns
    -------
    value, var, weight : ndarray, shape (m,)
        Combined recall, the variance of its interval (the product's at the coupled bound, module
        docstring) and the weight :math:`\\lambda_i` of the direct ratio (0 where it is undefined, e.g.
        fewer than two documents).
    """
    rho_joint, var_joint = recall_product(theta, var_theta, nu, var_nu)
    var_coupled = recall_product(theta, var_theta, nu, var_nu, coupled=True)[1]
    nu0 = np.nan_to_num(nu)
    product = nu0[:, None] * np.asarray(a_pool, dtype=float)[None, :]
    a_system = np.asarray(a_system, dtype=float)
    # jackknife covariance over documents by polarization: the three ratios share the denominator b
    stacked = np.vstack([product, a_system, product + a_system])
    _, var = ratio_estimate(stacked, b, n_docs)
    m = nu0.size
    var_prod, var_direct, var_sum = var[:m], var[m:2 * m], var[2 * m:]
    cov = (var_sum - var_prod - var_direct) / 2
    direct, _ = ratio_estimate(a_system, b, n_docs)
    var_direct = np.maximum(var_direct, agresti_coull_floor(direct, docs_size, level))
    ok = np.isfinite(direct) & np.isfinite(var_direct) & np.isfinite(rho_joint)
    cov = np.where(ok, cov, 0.0)
    weight = np.where(ok, composite_weight(var_joint, np.where(ok, var_direct, np.inf), cov), 0.0)
    value = np.where(weight > 0, (1 - weight) * rho_joint + weight * np.nan_to_num(direct), rho_joint)
    return value, composite_variance(weight, var_coupled, var_direct, cov), weight
