"""The joint precision estimate with the simple one as a control variate: at the optimal weight never worse than either.

The joint estimator of Chaganty, Paranjape, Liang and Manning, "Importance
sampling for unbiased on-demand evaluation of knowledge base population",
EMNLP 2017, Eq. 2, is not self-normalized: other systems' draws fall in or
out of :math:`X_i` at random, so its variance stays of order
:math:`\\pi_i/H_i` (:math:`H_i` the draws landing in :math:`X_i`) where a
proportion's is :math:`\\pi_i(1-\\pi_i)/H_i`. For a high-precision system it
can exceed the simple estimator's (Eq. 1) on system ``i``'s own draws alone.
Both are unbiased for :math:`\\pi_i` and computed from the same draws, so
their difference has mean zero and serves as a control variate
(Owen, *Monte Carlo theory, methods and examples*, 2013, Sec. 8.9):

.. math::
    \\hat\\pi_i^{(c)} = \\hat\\pi_i^{(j)} - \\beta_i(\\hat\\pi_i^{(j)} - \\hat\\pi_i^{(s)})
    = (1-\\beta_i)\\hat\\pi_i^{(j)} + \\beta_i\\hat\\pi_i^{(s)},\\qquad
    \\beta_i = \\frac{V_j - C}{V_j + V_s - 2C},

with variance :math:`(V_jV_s - C^2)/(V_j + V_s - 2C) \\le \\min(V_j, V_s)`,
:math:`C` the covariance of the two (only system ``i``'s own stratum
contributes to it). Unbiased for any fixed :math:`\\beta_i`; the plug-in
:math:`\\hat\\beta_i` adds an :math:`O(1/n)` bias. As :math:`f` is binary, the
simple estimator's variance is that of a proportion,
:math:`V_s = \\mathrm{fpc}_i\\,\\pi_i(1-\\pi_i)/n_i` (up to :math:`N_i/(N_i-1)`),
taken at :math:`\\tilde\\pi_i = (k_i + 1/2)/(n_i + 1)`, :math:`k_i` of the :math:`n_i`
own draws correct (the posterior mean under Jeffreys' prior): the sample
variance collapses to 0 when a few draws are all correct. At the joint
estimate instead, :math:`V_s` would be most over-stated when the joint is
lowest, moving the weight toward it exactly then.
"""

from __future__ import annotations

import numpy as np

from .estimators import Estimate, grouped_cov, simple_precision

__all__ = ["composite_precision", "composite_variance", "composite_weight"]


def composite_weight(v_joint: np.ndarray, v_simple: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Weight :math:`\\beta = (V_j - C)/(V_j + V_s - 2C)` of the simple estimate, clipped to [0, 1].

    Zero where the simple estimate is undefined (NaN or infinite variance) or
    the difference of the two estimates does not vary.
    """
    v_joint, v_simple, cov = (np.asarray(a, dtype=float) for a in (v_joint, v_simple, cov))
    spread = v_joint + v_simple - 2 * cov
    ok = np.isfinite(v_simple) & np.isfinite(spread) & (spread > 0)
    beta = np.divide(v_joint - cov, spread, out=np.zeros_like(spread), where=ok)
    return np.clip(beta, 0.0, 1.0)


def composite_variance(beta: np.ndarray, v_joint: np.ndarray, v_simple: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """Variance :math:`(1-\\beta)^2 V_j + \\beta^2 V_s + 2\\beta(1-\\beta)C` of the combination."""
    v_simple = np.where(np.asarray(beta) > 0, v_simple, 0.0)  # an undefined simple estimate has weight 0
    return np.maximum((1 - beta) ** 2 * v_joint + beta**2 * v_simple + 2 * beta * (1 - beta) * cov, 0.0)


def composite_precision(joint: Estimate, var_joint: np.ndarray, grp: np.ndarray, f: np.ndarray, n: np.ndarray,
                        fpc: np.ndarray) -> Estimate:
    """The joint precision combined with the simple one at the plug-in minimum-variance weight.

    Parameters
    ----------
    joint : Estimate
        The joint estimate (:func:`~labelwise.ondemand.estimators.joint_precision`) of every system.
    var_joint : ndarray, shape (m,)
        Its variance (possibly floored).
    grp, f, n, fpc : ndarray
        System and label of every draw, draws per system and finite-population factors.

    Returns
    -------
    Estimate
        Value, variance :func:`composite_variance` and the combined per-draw contributions; the joint's
        design effective size. Systems with fewer than two own draws keep the joint estimate.
    """
    simple = simple_precision(grp, f, n, fpc)
    p = (np.nan_to_num(simple.value) * n + 0.5) / (n + 1.0)
    v_simple = np.where(n >= 2, fpc * p * (1 - p) / np.maximum(n, 1), np.inf)
    cov = grouped_cov(joint.contributions, simple.contributions, grp, n, fpc)
    beta = composite_weight(var_joint, v_simple, cov)
    value = np.where(beta > 0, (1 - beta) * joint.value + beta * np.nan_to_num(simple.value), joint.value)
    contributions = (1 - beta)[:, None] * joint.contributions + beta[:, None] * simple.contributions
    return Estimate(value, composite_variance(beta, var_joint, v_simple, cov), contributions, joint.ess)
