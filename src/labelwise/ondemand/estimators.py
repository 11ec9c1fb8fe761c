"""Simple and joint estimators of precision, recall and F1, with variances.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sections 3.2
(simple estimator) and 3.3 (joint estimator). Every function is pure and
works on NumPy arrays; the samples of all systems are passed together:

``idx`` (N,)
    instance index of every draw;
``grp`` (N,)
    the system ``j`` whose sample :math:`\\hat X_j` the draw belongs to;
``f`` (N,)
    the verified label :math:`f(x)` of the draw;
``n`` (m,)
    draws per system :math:`n_j` (``bincount(grp)``);
``fpc`` (m,)
    finite-population factor of each system's design: ``1 - n_j/N_j`` for
    uniform draws without replacement from :math:`|X_j| = N_j` instances,
    ``1`` for draws with replacement.

Every estimator below is (or is linearized as) a sum over systems of sample
means, :math:`\\hat\\theta = \\sum_j \\frac1{n_j}\\sum_{x \\in \\hat X_j} t_j(x)`;
its variance is :math:`\\sum_j \\mathrm{fpc}_j S_j^2(t)/n_j` (:math:`S_j^2`
the variance of :math:`t` over :math:`p_j` with divisor :math:`N_j - 1` for
draws without replacement, :math:`N_j` with replacement), estimated
unbiasedly by the within-sample variances :math:`s_j^2` (ddof 1)
(Cochran, *Sampling Techniques*, 1977, Thm 2.2 and Sec. 6.4 for ratios).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .control_variate import own_region, regression_precision

__all__ = [
    "WEIGHT_SCHEMES",
    "Estimate",
    "design_factor",
    "f1_delta",
    "finite_population_correction",
    "joint_precision",
    "mixture_weights",
    "pooled_recall",
    "ratio_estimate",
    "recall_product",
    "simple_precision",
]

WEIGHT_SCHEMES = ("overlap", "uniform", "size")


@dataclass(frozen=True)
class Estimate:
    """Point estimates, variances and the per-draw linearized contributions.

    ``contributions`` has shape ``(m, N)`` (one row per estimated system):
    row ``i`` holds :math:`t_{\\cdot}(x)` for every draw, so covariances
    between two estimators sharing the draws are :func:`grouped_cov` of rows.
    ``ess`` is a design effective sample size used to cap interval widths.
    """

    value: np.ndarray
    var: np.ndarray
    contributions: np.ndarray
    ess: np.ndarray


def finite_population_correction(support: np.ndarray, n: np.ndarray, without_replacement: np.ndarray) -> np.ndarray:
    """Factor ``1 - n_j/N_j`` for uniform draws without replacement, 1 otherwise.

    It multiplies :math:`S_j^2/n_j` with :math:`S_j^2` the population variance
    with divisor :math:`N_j - 1` (Cochran 1977, Thm 2.2).

    Parameters
    ----------
    support : ndarray of int, shape (m,)
        :math:`N_j = |X_j|`.
    n : ndarray of int, shape (m,)
        Draws per system.
    without_replacement : ndarray of bool, shape (m,)
        Whether system ``j`` is sampled uniformly without replacement.
    """
    support = np.asarray(support, dtype=float)
    n = np.asarray(n, dtype=float)
    wor = np.clip(1.0 - n / np.maximum(support, 1.0), 0.0, 1.0)
    return np.where(np.asarray(without_replacement, dtype=bool), wor, 1.0)


def design_factor(support: np.ndarray, n: np.ndarray, without_replacement: np.ndarray) -> np.ndarray:
    """Factor :math:`c_j = (N_j - n_j)/(N_j - 1)` for uniform draws without replacement, 1 otherwise.

    It multiplies :math:`\\sigma_j^2/n_j` with :math:`\\sigma_j^2` the population variance with divisor
    :math:`N_j` (Cochran 1977, Thm 2.2), the form the exact design variances are written in.
    """
    support = np.asarray(support, dtype=float)
    factor = np.clip((support - n) / np.maximum(support - 1.0, 1.0), 0.0, 1.0)
    return np.where(np.asarray(without_replacement, dtype=bool), factor, 1.0)


def grouped_cov(T: np.ndarray, U: np.ndarray, grp: np.ndarray, n: np.ndarray, fpc: np.ndarray) -> np.ndarray:
    """Row-wise :math:`\\sum_j \\mathrm{fpc}_j\\, \\widehat{\\mathrm{Cov}}_j(t, u)/n_j`.

    ``T`` and ``U`` have shape ``(k, N)``; the within-system sample covariance
    uses ddof 1. A system with a single draw contributes nothing (the
    planner never draws exactly one instance from a support larger than one).
    """
    m = n.size
    G = np.zeros((grp.size, m))
    G[np.arange(grp.size), grp] = 1.0
    safe_n = np.maximum(n, 1)
    Tc = T - ((T @ G) / safe_n)[:, grp]
    Uc = U - ((U @ G) / safe_n)[:, grp]
    cov_j = ((Tc * Uc) @ G) / np.maximum(n - 1, 1)
    factor = np.where(n >= 2, fpc / safe_n, 0.0)
    return cov_j @ factor


def _group_sums(T: np.ndarray, grp: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``sum_j mean_j(T)`` row-wise: the value of a sum-of-means estimator."""
    G = np.zeros((grp.size, n.size))
    G[np.arange(grp.size), grp] = 1.0
    return ((T @ G) / np.maximum(n, 1)).sum(axis=1)


def _kish(A: np.ndarray, grp: np.ndarray, fpc: np.ndarray) -> np.ndarray:
    """Kish effective size of the per-draw weights ``A`` (k, N), inflated by 1/fpc.

    Caps the effective sample size of an interval: an estimate made from
    ``n`` equally weighted draws is never credited with more than
    ``n / fpc`` Bernoulli observations (Korn and Graubard, 1998).
    """
    s1 = A.sum(axis=1)
    s2 = (A**2).sum(axis=1)
    ess = np.divide(s1**2, s2, out=np.zeros_like(s1), where=s2 > 0)
    f_bar = np.divide((A * fpc[grp]).sum(axis=1), s1, out=np.ones_like(s1), where=s1 > 0)
    return np.divide(ess, f_bar, out=np.full_like(ess, np.inf), where=f_bar > 1e-12)


def mixture_weights(P: np.ndarray, n: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None) -> np.ndarray:
    """Mixture weights :math:`w_{ij}` of the joint estimator (rows sum to one).

    ``'overlap'`` (the paper's choice, Sec. 3.3):
    :math:`w_{ij} \\propto n_j \\sum_x p_i(x) p_j(x)`, zero for disjoint systems
    and :math:`\\propto n_j` for identical ones; ``'size'``:
    :math:`w_{ij} \\propto n_j`; ``'uniform'``: equal over the systems with
    draws. Systems without draws get weight zero in every row. A row with no
    positive weight (system ``i`` overlaps no sampled system) is all zeros.
    ``gram`` may pass a precomputed :math:`P P^T`.
    """
    if scheme not in WEIGHT_SCHEMES:
        raise ValueError(f"scheme must be one of {WEIGHT_SCHEMES}")
    n = np.asarray(n, dtype=float)
    m = P.shape[0]
    if scheme == "overlap":
        raw = (P @ P.T if gram is None else gram) * n[None, :]
    elif scheme == "size":
        raw = np.broadcast_to(n[None, :], (m, m)).copy()
    else:
        raw = np.broadcast_to((n > 0).astype(float)[None, :], (m, m)).copy()
    total = raw.sum(axis=1, keepdims=True)
    return np.divide(raw, total, out=np.zeros_like(raw), where=total > 0)


def simple_precision(grp: np.ndarray, f: np.ndarray, n: np.ndarray, fpc: np.ndarray) -> Estimate:
    """Simple estimator :math:`\\hat\\pi_i^{(s)} = \\frac1{n_i}\\sum_{x \\in \\hat X_i} f(x)` (Eq. 1).

    Only system ``i``'s own draws are used. Variance
    :math:`\\mathrm{fpc}_i\\, s_i^2 / n_i`. Systems without draws get NaN.
    """
    m = n.size
    T = np.where(grp[None, :] == np.arange(m)[:, None], f[None, :].astype(float), 0.0)
    value = np.where(n > 0, _group_sums(T, grp, n), np.nan)
    var = np.where(n > 0, grouped_cov(T, T, grp, n, fpc), np.nan)
    ess = np.where(fpc > 0, n / np.where(fpc > 0, fpc, 1.0), np.inf)
    return Estimate(value, var, T, ess)


def importance_coefficients(P: np.ndarray, idx: np.ndarray, grp: np.ndarray,
                            W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-draw coefficients :math:`w_{ij} p_i(x)/q_i(x)`, :math:`q_i = \\sum_j w_{ij} p_j`, of every target ``i``.

    Returns ``coef`` of shape ``(m, N)`` (zero off the target's support) and ``covered`` (m,): whether
    :math:`q_i > 0` wherever :math:`p_i > 0`, the condition for an unbiased estimate.
    """
    Pi = P[:, idx]
    Q = W @ Pi
    coef = np.divide(W[:, grp] * Pi, Q, out=np.zeros_like(Pi), where=Q > 0)
    covered = np.all((W @ P > 0) | (P == 0), axis=1)
    return coef, covered


def joint_precision(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                    fpc: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None,
                    control_variate: bool = False) -> Estimate:
    """Joint importance-sampling precision estimator (Sec. 3.3, Eq. 2), with a control variate.

    .. math::
        \\hat\\pi_i^{(j)} = \\sum_{j=1}^m \\frac{w_{ij}}{n_j}\\sum_{x \\in \\hat X_j}
        \\frac{p_i(x) f(x)}{q_i(x)}, \\qquad q_i(x) = \\sum_j w_{ij} p_j(x).

    Unbiased whenever :math:`q_i > 0` on the support of :math:`p_i` (and each
    :math:`\\hat X_j` has expected counts :math:`n_j p_j(x)`, true for draws with
    replacement and for uniform draws without replacement). Where this
    support condition fails the estimate is NaN.

    With ``control_variate`` the estimate is the regression estimator of
    :func:`~labelwise.ondemand.control_variate.regression_precision`,
    :math:`\\hat\\pi_i^{(j)} - \\hat\\beta_i(\\hat c_i - (1 - u_i))` with the control
    variate :math:`\\hat c_i` (the same sum without :math:`f`, over the part of
    :math:`X_i` other sampled systems also predict, of known expectation
    :math:`1 - u_i`) (Owen, *Monte Carlo theory, methods and examples*, 2013,
    Sec. 9.10). The plain estimator's variance does not vanish as precision goes
    to 1 (draws of other systems fall in or out of :math:`X_i` at random); the
    adjusted one's does. It is unbiased for any fixed :math:`\\beta`; the
    estimated :math:`\\hat\\beta_i` adds an :math:`O(1/n)` bias (tested by
    enumeration). Estimates are clipped to [0, 1].

    Returns
    -------
    Estimate
        ``contributions`` are :math:`t_{ij}(x) = w_{ij} p_i(x) (f(x) - \\hat\\beta_i s_i(x))/q_i(x)`,
        :math:`s_i(x) = 1` where another sampled system predicts :math:`x`, 0 elsewhere
        (:math:`\\hat\\beta_i = 0` without the control variate). ``var`` is
        :math:`\\sum_j \\mathrm{fpc}_j s_j^2(t_{ij})/n_j` for the plain estimator and the
        delete-one-draw jackknife with the control variate (the linearization ignores the
        estimation of :math:`\\hat\\beta_i`).
    """
    W = mixture_weights(P, n, scheme, gram)
    coef, covered = importance_coefficients(P, idx, grp, W)
    T = coef * f[None, :]
    if control_variate:
        alone = own_region(P, n)
        C = coef * ~alone[:, idx]  # the control variate lives where other systems' draws reach
        expected = 1.0 - (P * alone).sum(axis=1)
        value, var, beta = regression_precision(T, C, expected, grp, n, fpc)
        value = np.clip(value, 0.0, 1.0)
        T = T - beta[:, None] * C
    else:
        value, var = _group_sums(T, grp, n), grouped_cov(T, T, grp, n, fpc)
    value = np.where(covered, value, np.nan)
    var = np.where(covered, var, np.nan)
    ess = _kish(coef / np.maximum(n, 1)[grp][None, :], grp, fpc)
    return Estimate(value, var, T, ess)


def pool_mixture(P: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Proposal for pooled recall, :math:`q(x) = \\sum_j (n_j / \\sum_k n_k)\\, p_j(x)`."""
    n = np.asarray(n, dtype=float)
    return (n / n.sum()) @ P


def pooled_recall(P: np.ndarray, idx: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                  fpc: np.ndarray, u: np.ndarray | None = None) -> Estimate:
    """Self-normalized importance-sampling estimate of pooled recall :math:`\\nu_i` (Sec. 3.3).

    :math:`\\nu_i = E_{x \\sim p'|Y}[g_i(x)]` is system ``i``'s recall measured
    against the correct instances of the pool :math:`Y = \\mathcal{Y} \\cap \\bigcup_j X_j`:

    .. math::
        \\hat\\nu_i = \\frac{\\sum_j \\frac{w_j}{n_j}\\sum_{x\\in\\hat X_j}
        u(x) f(x) g_i(x)/q(x)}{\\sum_j \\frac{w_j}{n_j}\\sum_{x\\in\\hat X_j} u(x) f(x)/q(x)}.

    The paper reuses :math:`q_i` of the precision estimator; its target is
    however the whole pool, and with the ``'overlap'`` weights :math:`q_i` is
    zero on the output of systems disjoint from system ``i``, whose correct
    instances would then be missing from the denominator. We use the one
    proposal :math:`q = \\sum_j w_j p_j` with :math:`w_j \\propto n_j`, which
    is positive on the whole pool (the balance heuristic, Owen 2013, Sec. 9.12).
    Numerator and denominator are unbiased; the ratio is consistent, with
    bias :math:`O(1/n)`. Variance by linearization: contributions
    :math:`w_j u f (g_i - \\hat\\nu_i)/(q \\hat B)`.
    """
    m = P.shape[0]
    u = np.ones(P.shape[1]) if u is None else u
    N = float(n.sum())
    q = pool_mixture(P, n)[idx]
    base = (n[grp] / N) * u[idx] * f / q  # w_j u f / q at each draw
    B = _group_sums(base[None, :], grp, n)[0]
    G = (P[:, idx] > 0).astype(float)  # g_i at each draw
    A = _group_sums(G * base[None, :], grp, n)
    covered = np.all((pool_mixture(P, n) > 0) | (P.sum(axis=0) == 0))
    value = np.divide(A, B, out=np.full(m, np.nan), where=B > 0) if covered else np.full(m, np.nan)
    E = (G - value[:, None]) * base[None, :] / B if B > 0 else np.zeros((m, idx.size))
    var = grouped_cov(E, E, grp, n, fpc)
    ess = np.repeat(_kish((base * (f > 0) / n[grp])[None, :], grp, fpc), m)  # the same draws for every system
    return Estimate(value, var, E, ess)


def ratio_estimate(a: np.ndarray, b: np.ndarray, n_docs: int,
                   variance: str = "jackknife") -> tuple[np.ndarray, np.ndarray]:
    """Ratio estimator over documents drawn uniformly without replacement.

    Used for pool recall :math:`\\hat\\theta = \\sum_d a_d / \\sum_d b_d`
    (:math:`a_d` = correct instances of document ``d`` in the pool, Sec. 3.3)
    and for the simple recall :math:`\\hat\\rho_i^{(s)}` (Eq. 1,
    :math:`a_{id}` = correct instances of ``d`` predicted by system ``i``),
    with :math:`b_d` = correct instances of ``d`` (weighted by :math:`u`).
    Exhaustive annotation of a random document is a cluster sample of
    :math:`\\mathcal{Y}`, hence the ratio form; its linearized variance is
    :math:`(1 - D/N_d)\\, s^2(a - \\hat r b) / (D \\bar b^2)` (Cochran 1977, Sec. 6.4)
    (``variance='linear'``); the default is the delete-one-document
    jackknife times the same finite-population factor.

    Parameters
    ----------
    a : ndarray, shape (k, D)
    b : ndarray, shape (D,)
    n_docs : int
        Documents in the corpus.
    variance : {'jackknife', 'linear'}

    Returns
    -------
    value, var : ndarray, shape (k,)
    """
    a = np.atleast_2d(np.asarray(a, dtype=float))
    b = np.asarray(b, dtype=float)
    D = b.size
    total = b.sum()
    if D == 0 or total <= 0:
        nan = np.full(a.shape[0], np.nan)
        return nan, nan
    value = a.sum(axis=1) / total
    if D < 2:
        return value, np.full(a.shape[0], np.nan)
    fpc = 1.0 - D / n_docs
    if variance == "linear":
        resid = a - value[:, None] * b[None, :]
        var = fpc * resid.var(axis=1, ddof=1) / (D * (total / D) ** 2)
    else:
        # delete-one-document jackknife: less optimistic than the linearization with few
        # documents (Cochran 1977, Sec. 6.16), which under-covered in the benchmark
        rest = total - b
        loo = np.divide(a.sum(axis=1)[:, None] - a, rest[None, :], out=np.tile(value[:, None], (1, D)),
                        where=rest[None, :] > 0)
        var = fpc * (D - 1) / D * ((loo - loo.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return value, np.maximum(var, 0.0)


def recall_product(theta: float, var_theta: float, nu: np.ndarray, var_nu: np.ndarray,
                   coupled: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Joint recall :math:`\\hat\\rho_i = \\hat\\theta\\,\\hat\\nu_i` and its variance.

    :math:`\\rho_i = \\theta\\nu_i` (Sec. 3.3): the probability under
    :math:`p'` of being in system ``i`` is that of being in the pool times
    that of being in system ``i`` given the pool. The two factors come from
    independent samples (documents vs. verifications), so for a fixed number of documents
    :math:`V = \\nu^2 V_\\theta + \\theta^2 V_\\nu + V_\\theta V_\\nu`. With ``coupled`` the number of
    documents was planned from :math:`\\hat\\nu_i` and from the documents drawn so far
    (:meth:`~labelwise.ondemand.process.Process.plan_documents_for`), which correlates the two factors;
    their covariance is taken at its Cauchy-Schwarz bound,
    :math:`V + 2\\nu\\theta\\sqrt{V_\\theta V_\\nu} = (\\nu\\sqrt{V_\\theta} + \\theta\\sqrt{V_\\nu})^2 + V_\\theta V_\\nu`.
    """
    value = theta * nu
    var = nu**2 * var_theta + theta**2 * var_nu + var_theta * var_nu
    if coupled:
        var = var + 2 * np.abs(nu * theta) * np.sqrt(var_theta * var_nu)
    return value, var


def f1_delta(p: np.ndarray, r: np.ndarray, var_p: np.ndarray, var_r: np.ndarray,
             cov_pr: np.ndarray | float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """F1 :math:`= 2\\pi\\rho/(\\pi+\\rho)` and its delta-method variance.

    Gradient :math:`(2\\rho^2, 2\\pi^2)/(\\pi+\\rho)^2`;
    :math:`V = a^2 V_\\pi + b^2 V_\\rho + 2ab\\,C_{\\pi\\rho}`.
    """
    s = p + r
    value = np.divide(2 * p * r, s, out=np.zeros_like(s, dtype=float), where=s > 0)
    ga = np.divide(2 * r**2, s**2, out=np.zeros_like(s, dtype=float), where=s > 0)
    gb = np.divide(2 * p**2, s**2, out=np.zeros_like(s, dtype=float), where=s > 0)
    var = ga**2 * var_p + gb**2 * var_r + 2 * ga * gb * cov_pr
    return value, np.maximum(var, 0.0)
