"""How many new verifications and documents a new system needs.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3,
"Adaptively choosing the number of samples": the variance of the joint
precision estimator :math:`\\hat\\pi_m^{(j)}` decreases with the number
:math:`n_m` of draws from the new system's output :math:`X_m`; the smallest
:math:`n_m` meeting a target half-width is found by bisection *before*
anything is drawn from :math:`X_m`.

The variance is predicted from the population formula
:math:`\\sum_j c_j\\, \\sigma_j^2/n_j` with :math:`f` replaced by a plug-in
:math:`\\hat f(x)`: the verified label where known, otherwise a probability
of being correct (:mod:`~labelwise.ondemand.plug_in`). Treating an unknown :math:`f(x)` as
Bernoulli(:math:`\\hat f(x)`) gives :math:`E[f^2] = \\hat f`, so

.. math::
    \\sigma_j^2 = w_{mj}^2 \\Big(\\sum_x p_j r^2 \\hat f - \\big(\\sum_x p_j r \\hat f\\big)^2\\Big),
    \\qquad r = p_m / q_m,

and with prior 1/2 on every instance of a new disjoint system this is the
usual worst case :math:`1/(4 n)`. :math:`c_j = (N_j - n_j)/(N_j - 1)` for
uniform draws without replacement (population variance with divisor
:math:`N_j`), 1 with replacement. For the estimator with the control
variate (:mod:`~labelwise.ondemand.control_variate`) :math:`f` is replaced
by :math:`f - \\beta` on the region other sampled systems also predict, with
:math:`\\beta` the plug-in precision there, and
:math:`E[(f - \\beta)^2] = \\hat f(1 - \\hat f) + (\\hat f - \\beta)^2`: with
:math:`\\beta` at the precision instead of its regression value this over-states the
variance a little, so plans err on the safe side. The joint estimator's
bisection runs on the interval it reports, predicted from this variance by
:func:`predicted_interval_variance` through the functions the estimate's
interval is computed with.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy.special import gammaln, xlog1py, xlogy

from .composite import composite_variance, composite_weight
from .estimators import design_factor, mixture_weights
from .floors import own_share_variance, reported_variance
from .intervals import score_interval
from .normalized import capped_weights

__all__ = ["exchangeable_variance", "plan_documents", "plan_verifications", "predicted_composite_variance",
           "predicted_interval_variance", "predicted_joint_variance", "predicted_simple_variance",
           "stratum_variances"]


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2)


def _importance_terms(P: np.ndarray, n: np.ndarray, i: int, scheme: str, gram: np.ndarray | None,
                      control_variate: bool, f_hat: np.ndarray, factor: np.ndarray | None = None,
                      post_stratified: bool = False,
                      alone: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Mixture weights ``W``, ratio :math:`r = p_i/q_i` and shift :math:`\\beta(x)` of :math:`f` for target ``i``.

    The shift is the plug-in precision over the region other sampled systems predict with the control
    variate, over all of :math:`X_i` for the self-normalized estimator (design factors ``factor`` given:
    its weights are :func:`~labelwise.ondemand.normalized.capped_weights`), over each stratum when it is
    post-stratified (the own stratum :math:`U_i` and the rest: each stratum's term divided by its
    :math:`\\hat B` times its mass, which is 1 in expectation), 0 for the plain one. ``alone`` is
    :math:`U_i` (:func:`_own_row`) when known. ``None`` when :math:`q_i` misses part of the support of
    :math:`p_i`.
    """
    W = mixture_weights(P, n, scheme, gram)
    if factor is not None:
        W = capped_weights(W, n, factor)
    q = W[i] @ P
    if np.any((P[i] > 0) & (q <= 0)):
        return None
    r = np.divide(P[i], q, out=np.zeros_like(q), where=q > 0)
    beta = np.zeros_like(q)
    if factor is not None or control_variate:
        alone = _own_row(P, n, i) if alone is None else alone
    if factor is not None:
        regions = [P[i] * alone, P[i] * ~alone] if post_stratified else [P[i]]
    else:
        regions = [P[i] * ~alone] if control_variate else []
    for region in regions:
        if region.any():
            beta[region > 0] = float(region @ f_hat) / region.sum()
    return W, r, beta


def _own_row(P: np.ndarray, n: np.ndarray, i: int) -> np.ndarray:
    """Row ``i`` of :func:`~labelwise.ondemand.control_variate.own_region`: :math:`U_i`, the instances of
    :math:`X_i` no other system with draws predicts."""
    others = np.asarray(n) > 0
    others[i] = False
    return (P[i] > 0) & ~(P[others] > 0).any(axis=0)


def predicted_joint_variance(P: np.ndarray, n: np.ndarray, i: int, f_hat: np.ndarray, support: np.ndarray,
                             wor: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None,
                             control_variate: bool = False, normalized: bool = False,
                             post_stratified: bool = False, alone: np.ndarray | None = None) -> float:
    """Predicted variance of :math:`\\hat\\pi_i^{(j)}` for draw counts ``n``.

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions of the systems submitted so far.
    n : ndarray of int, shape (m,)
        Draws per system (the candidate :math:`n_i` included).
    i : int
        The system whose precision is planned.
    f_hat : ndarray, shape (K,)
        Plug-in probability that each instance is correct.
    support, wor : ndarray, shape (m,)
        :math:`|X_j|` and whether ``j`` is drawn uniformly without replacement.
    control_variate : bool
        Plan for the estimator with the control variate or the plain one (the default).
    normalized : bool
        Plan for the self-normalized estimator (:mod:`~labelwise.ondemand.normalized`): its linearized
        variance, :math:`f` shifted by the plug-in precision of :math:`X_i`.
    post_stratified : bool
        With ``normalized``: the estimate post-stratified on the own stratum, :math:`f` shifted by the
        plug-in precision of its stratum.
    alone : ndarray of bool, shape (K,), optional
        The own stratum :math:`U_i` if already known (else computed).

    Returns
    -------
    float
        ``inf`` when :math:`q_i` misses part of the support of :math:`p_i`.
    """
    return float(np.sum(stratum_variances(P, n, i, f_hat, support, wor, scheme, gram, control_variate, normalized,
                                          post_stratified, alone)))


def stratum_variances(P: np.ndarray, n: np.ndarray, i: int, f_hat: np.ndarray, support: np.ndarray,
                      wor: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None,
                      control_variate: bool = False, normalized: bool = False,
                      post_stratified: bool = False, alone: np.ndarray | None = None) -> np.ndarray:
    """The terms :math:`c_j\\,\\sigma_j^2/n_j` of :func:`predicted_joint_variance`, one per sampled system ``j``.

    Same parameters. Shape ``(m,)``; all ``inf`` when :math:`q_i` misses part of the support of :math:`p_i`.
    """
    n = np.asarray(n, dtype=float)
    factor = design_factor(support, n, wor)
    terms = _importance_terms(P, n, i, scheme, gram, control_variate, f_hat, factor if normalized else None,
                              post_stratified, alone)
    if terms is None:
        return np.full(n.size, math.inf)
    W, r, beta = terms
    a = P @ (r * (f_hat - beta))
    b = P @ (r**2 * (f_hat * (1.0 - f_hat) + (f_hat - beta) ** 2))  # E[(f - beta)^2], f ~ Bernoulli(f_hat)
    sigma2 = W[i] ** 2 * np.maximum(b - a**2, 0.0)
    return np.where(n > 0, factor * sigma2 / np.maximum(n, 1.0), 0.0)


def exchangeable_variance(P: np.ndarray, n: np.ndarray, support: np.ndarray, wor: np.ndarray,
                          scheme: str = "overlap", gram: np.ndarray | None = None,
                          normalized: bool = False, targets: np.ndarray | slice = slice(None)
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Variance of every system's plain joint precision estimate as a function of its precision.

    :func:`predicted_joint_variance` with the same plug-in :math:`\\hat f \\equiv \\pi` on all of
    :math:`X_i` (labels exchangeable within the system's output), for every target ``i`` at once:

    .. math::
        V_i(\\pi) = \\alpha_i\\pi - \\beta_i\\pi^2, \\qquad
        \\alpha_i = \\sum_j c_j\\frac{w_{ij}^2}{n_j}\\sum_x p_j r_i^2, \\quad
        \\beta_i = \\sum_j c_j\\frac{w_{ij}^2}{n_j}\\Big(\\sum_x p_j r_i\\Big)^2,

    :math:`r_i = p_i/q_i`. It needs no label: :math:`V_i(1) = \\alpha_i - \\beta_i` is the exact
    variance when every instance is correct (the draws landing in :math:`X_i` at random), where the
    within-sample variance of a few draws can be far too small. For a system sampled alone
    :math:`V_i(\\pi) = c_i\\pi(1 - \\pi)/n_i`, the variance of a proportion.

    Parameters
    ----------
    P : ndarray, shape (m, K)
        Sampling distributions.
    n : ndarray, shape (m,)
        Draws per system.
    support, wor : ndarray, shape (m,)
        :math:`|X_j|` and whether ``j`` is drawn uniformly without replacement.
    scheme, gram
        Mixture weights, as :func:`~labelwise.ondemand.estimators.mixture_weights`.
    normalized : bool
        For the self-normalized estimator (:mod:`~labelwise.ondemand.normalized`, capped weights): its
        linearized variance :math:`\\sum_j c_j\\frac{w_{ij}^2}{n_j}\\mathrm{Var}_{p_j}(r_i(f - \\pi))` at
        exchangeable labels is :math:`\\alpha_i\\pi(1 - \\pi)`, so ``beta`` is returned equal to ``alpha``.
    targets : index array or slice
        The targets ``i`` to compute (default: all).

    Returns
    -------
    alpha, beta : ndarray, shape (m,) (or that of ``targets``)
        :math:`\\alpha_i \\ge \\beta_i \\ge 0` (Cauchy-Schwarz).
    """
    n = np.asarray(n, dtype=float)
    design = design_factor(support, n, wor)
    W = mixture_weights(P, n, scheme, gram)
    if normalized:
        W = capped_weights(W, n, design)
    W = W[targets]
    Q = W @ P
    R = np.divide(P[targets], Q, out=np.zeros_like(Q), where=Q > 0)  # r_i(x), one row per target
    second, first = (R**2) @ P.T, R @ P.T  # [i, j]: sum_x p_j r_i^2 and sum_x p_j r_i
    factor = np.where(n > 0, design / np.maximum(n, 1.0), 0.0)
    alpha = (W**2 * second) @ factor
    return (alpha, alpha) if normalized else (alpha, (W**2 * first**2) @ factor)


def predicted_interval_variance(P: np.ndarray, n: np.ndarray, i: int, f_hat: np.ndarray, support: np.ndarray,
                                wor: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None,
                                normalized: bool = True, post_stratified: bool = True, level: float = 0.95) -> float:
    """Variance :math:`(h/z)^2` of the normal interval as wide as the precision interval that will be reported.

    The reported interval of the joint precision is :func:`~labelwise.ondemand.intervals.score_interval` of
    the estimate at the variance :func:`~labelwise.ondemand.floors.reported_variance` (the own region's
    floor on the linearized variance; for the post-stratified estimate the own stratum's interval added to
    the rest's, wider than :math:`z\\sqrt{V}`) and the :func:`exchangeable_variance`. Before drawing, their
    inputs are predicted under the plug-in :math:`\\hat f`: the estimate by :math:`\\sum_x p_i \\hat f`, the
    linearized variance by :func:`predicted_joint_variance`, the design effective size (Kish size over the
    fpc) by :math:`1/\\alpha_i` (:math:`n_i/c_i` for a system sampled alone), and the own stratum's statistics
    by their distribution: the reported variance is averaged over the :math:`d_i` own draws landing in
    :math:`U_i` (hypergeometric for uniform draws without replacement, else
    :math:`\\mathrm{Binomial}(n_i, u_i)`) and the :math:`k_i \\sim \\mathrm{Binomial}(d_i, \\pi_U)` of them
    correct, :math:`\\pi_U` the plug-in precision of :math:`U_i` (with a few draws there, its floor and plug-in
    variance are far from their values at :math:`d_i = n_i u_i`); post-stratified, the own stratum's term of
    the linearized variance is then its plug-in at that outcome (:func:`~labelwise.ondemand.floors.own_share_variance`)
    beside the rest's predicted term. The same functions then give the half-width :math:`h`, and
    :func:`plan_verifications` bisects on the interval that is reported.

    Parameters
    ----------
    P, n, i, f_hat, support, wor, scheme, gram
        As :func:`predicted_joint_variance`.
    normalized : bool
        The self-normalized estimator (:mod:`~labelwise.ondemand.normalized`) or the paper's plain Eq. 2.
    post_stratified : bool
        With ``normalized``: post-stratified on the own stratum.
    level : float
        Interval level.

    Returns
    -------
    float
        ``inf`` when :math:`q_i` misses part of the support of :math:`p_i`.
    """
    n = np.asarray(n, dtype=float)
    post_stratified = normalized and post_stratified
    alone = _own_row(P, n, i)
    var = predicted_joint_variance(P, n, i, f_hat, support, wor, scheme, gram, False, normalized, post_stratified,
                                   alone)
    if not math.isfinite(var):
        return math.inf
    region = P[i] * alone
    u = min(float(region.sum()), 1.0)  # a sum of probabilities may pass 1 by rounding
    size = float(alone.sum()) if wor[i] else math.inf
    precision = min(float(region @ f_hat) / u, 1.0) if u > 0 else 0.0
    d, correct, prob = _own_draw_outcomes(int(n[i]), u, precision, int(support[i]) if wor[i] else None,
                                          int(size) if wor[i] else None)
    share = np.divide(correct, d, out=np.zeros(d.size), where=d > 0)
    var = np.full(d.size, var)
    if post_stratified and n[i] > 0:
        # the own stratum's term of ``var`` (only system i's draws reach it, w_ii r = 1 there) is replaced by
        # its plug-in at each outcome, the form the estimate's variance holds it in at its draws
        f_own = f_hat[alone]
        spread = P[i, alone] @ (f_own * (1 - f_own) + (f_own - precision) ** 2)  # E_p[(f - pi_U)^2] on U
        own = design_factor(support, n, wor)[i] / n[i] * spread
        var = np.maximum(var - own, 0.0) + own_share_variance(u, d, share, size)
    var = np.atleast_1d(prob @ reported_variance(var, np.full(d.size, u), d, share, np.full(d.size, size),
                                                 post_stratified, level))
    alpha, beta = exchangeable_variance(P, n, support, wor, scheme, gram, normalized, targets=np.array([i]))
    ess = np.divide(1.0, alpha, out=np.full(1, np.inf), where=alpha > 0)
    lower, upper = score_interval(np.array([P[i] @ f_hat]), var, alpha, beta, level, ess)
    return float(((upper[0] - lower[0]) / (2 * _z(level))) ** 2)


def _own_draw_outcomes(n: int, u: float, precision: float, support: int | None = None,
                       size: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcomes ``(d, k)`` of ``n`` draws of which ``d`` land in the own stratum and
    :math:`k \\sim \\mathrm{Binomial}(d, \\pi_U)` of those are correct, with their probabilities.

    ``d`` is :math:`\\mathrm{Binomial}(n, u)`, or hypergeometric (``size`` of the ``support`` instances in the
    stratum) for uniform draws without replacement. Outcomes below :math:`10^{-9}` of the most likely one
    are left out (the rest renormalized): ``d`` is enumerated where its own pmf passes that, and ``k`` over
    the union of the same cut of its binomials at the extreme ``d``, a few dozen values where ``n`` is in
    the hundreds rather than all of :math:`0..d`.
    """
    tail = 1e-9
    d = np.arange(n + 1.0)
    log_d = _log_choose(n, d) + xlogy(d, u) + xlog1py(n - d, -u) if size is None else \
        _log_choose(size, d) + _log_choose(support - size, n - d) - _log_choose(support, n)
    likely = log_d >= log_d.max() + math.log(tail)
    d, log_d = d[likely], log_d[likely]
    ends = [_log_binomial(np.arange(e + 1.0), e, precision) for e in d[[0, -1]]]
    low, high = (np.flatnonzero(e >= e.max() + math.log(tail)) for e in ends)
    k = np.arange(float(low[0]), float(high[-1]) + 1.0)
    prob = np.exp(_log_binomial(k[None, :], d[:, None], precision) + log_d[:, None])
    d, k = np.broadcast_arrays(d[:, None], k[None, :])
    keep = prob > tail * prob.max()
    return d[keep], k[keep], prob[keep] / prob[keep].sum()


def _log_choose(a: float | np.ndarray, b: np.ndarray) -> np.ndarray:
    """:math:`\\log\\binom{a}{b}`, :math:`-\\infty` outside :math:`0 \\le b \\le a`."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    inside = (b >= 0) & (b <= a)
    a, c = np.where(inside, a, 0.0), np.where(inside, b, 0.0)
    return np.where(inside, gammaln(a + 1) - gammaln(c + 1) - gammaln(a - c + 1), -np.inf)


def _log_binomial(k: np.ndarray, d: np.ndarray | float, p: float) -> np.ndarray:
    """Log pmf of :math:`\\mathrm{Binomial}(d, p)` at ``k`` (:math:`-\\infty` where :math:`k > d`)."""
    return _log_choose(d, k) + xlogy(k, p) + xlog1py(d - k, -p)


def predicted_composite_variance(P: np.ndarray, n: np.ndarray, i: int, f_hat: np.ndarray, support: np.ndarray,
                                 wor: np.ndarray, scheme: str = "overlap", gram: np.ndarray | None = None,
                                 control_variate: bool = False) -> float:
    """Predicted variance of the joint precision combined with the simple one (:mod:`.composite`).

    Same parameters as :func:`predicted_joint_variance`. The covariance of the
    two comes from system ``i``'s own stratum only:
    :math:`c_i w_{ii}\\big(\\sum_x p_i r \\hat f (1 - \\beta) - \\sum_x p_i r (\\hat f - \\beta)
    \\sum_x p_i \\hat f\\big)/n_i`, with :math:`E[f^2] = \\hat f`.
    """
    n = np.asarray(n, dtype=float)
    v_joint = predicted_joint_variance(P, n, i, f_hat, support, wor, scheme, gram, control_variate)
    v_simple = predicted_simple_variance(int(n[i]), f_hat, P[i], int(support[i]), bool(wor[i]))
    if not (math.isfinite(v_joint) and math.isfinite(v_simple)) or n[i] < 2:
        return v_joint
    W, r, beta = _importance_terms(P, n, i, scheme, gram, control_variate, f_hat)
    p = P[i]
    cov = W[i, i] * (p @ (r * f_hat * (1.0 - beta)) - (p @ (r * (f_hat - beta))) * (p @ f_hat))
    cov *= design_factor(support, n, wor)[i] / n[i]
    weight = composite_weight(v_joint, v_simple, cov)
    return float(composite_variance(weight, v_joint, v_simple, cov))


def predicted_simple_variance(n: int, f_hat: np.ndarray, p: np.ndarray, support: int, wor: bool) -> float:
    """Predicted variance of the simple estimator :math:`\\hat\\pi^{(s)}` with ``n`` draws from ``p``."""
    if n <= 0:
        return math.inf
    mean = float(p @ f_hat)
    sigma2 = max(mean - mean**2, 0.0)  # E[f^2] = E[f] for Bernoulli f
    factor = design_factor(np.array([support]), np.array([float(n)]), np.array([wor]))[0]
    return factor * sigma2 / n


def plan_verifications(variance, lower: int, upper: int, half_width: float, level: float = 0.95) -> int:
    """Smallest ``n`` in ``[lower, upper]`` with :math:`z\\sqrt{V(n)} \\le` ``half_width``, by bisection.

    ``variance(n)`` must be non-increasing in ``n`` (the paper's premise; for
    the joint estimator the mixture weights move with :math:`n_m` as well,
    see the tests). ``n = 1`` is skipped (a single draw gives no variance
    estimate) unless ``upper == 1``; ``upper`` is returned when even it
    misses the target.
    """
    target = (half_width / _z(level)) ** 2
    if variance(lower) <= target:
        return lower
    lo = max(lower, min(2, upper) - 1)  # variance(lo) > target (or lo is below 2)
    hi = upper
    if variance(hi) > target:
        return upper
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if variance(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi


def plan_documents(spread: np.ndarray, coef: np.ndarray, other: np.ndarray, drawn: int, n_docs: int,
                   half_width: float, level: float = 0.95) -> int:
    """Documents needed so that every recall estimate meets ``half_width``.

    The ratio estimator over ``D`` documents has variance
    :math:`\\kappa (1/D - 1/N_d)` with :math:`\\kappa = s^2(a - \\hat r b)/\\bar b^2`
    (``spread``, estimated from the documents drawn so far); an estimate
    :math:`c\\,\\hat r + \\ldots` has variance :math:`c^2\\kappa(1/D - 1/N_d) + V_{other}`.
    Solving for ``D`` is closed form (the variance is monotone in ``D``).
    Documents get at least half of the target: they cannot lower
    :math:`V_{other}`, so they are not bought to make up for it.

    Returns
    -------
    int
        Total documents (at least ``drawn``, at most ``n_docs``).
    """
    target = (half_width / _z(level)) ** 2
    spread = np.asarray(spread, dtype=float)
    room = np.maximum(target - np.asarray(other, dtype=float), target / 2)
    need = np.asarray(coef, dtype=float) ** 2 * spread
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(need > 0, room / need, np.inf) + 1.0 / n_docs  # 1/D allowed
    inv = inv[np.isfinite(inv) | np.isinf(inv)]
    if inv.size == 0:
        return drawn
    d = math.ceil(1.0 / float(np.min(inv)) - 1e-9) if np.isfinite(np.min(inv)) else 0
    return int(min(max(d, drawn), n_docs))
