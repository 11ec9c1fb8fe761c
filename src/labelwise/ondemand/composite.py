"""The joint precision estimate with the simple one as a control variate: never worse than either.

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
:math:`\\hat\\beta_i` adds an :math:`O(1/n)` bias. The simple estimator's
variance estimate collapses when its few draws are all correct, which would
put all the weight on it with a variance near 0; it enters :math:`\\hat\\beta_i`
floored at the Agresti-Coull variance of its draws (Agresti and Coull, The
American Statistician, 1998), which stays near the true variance of a
proportion close to 1.
"""

from __future__ import annotations

import numpy as np

__all__ = ["composite_variance", "composite_weight"]


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
