"""Simulation diagnostics: how far a proposal is from the asymptotically optimal one."""

from __future__ import annotations

import numpy as np

from .measures import Measure
from .pool import Pool
from .simulate import true_risk

__all__ = ["kl_divergence", "optimal_proposal_given_truth"]


def optimal_proposal_given_truth(pool: Pool, measure: Measure) -> np.ndarray:
    """The asymptotically optimal proposal with the true labels (Marchant & Rubinstein (KDD 2021) eq. 5, deterministic oracle).

    ``q*(x) ∝ p(x) ||Dg(R) l(x, y(x))||`` with R the pool's true risk.
    """
    R = true_risk(pool, measure)
    v = np.sqrt(np.maximum(measure.influence_norm_sq(pool.outputs(), pool.labels, R), 0.0))
    return v / v.sum()


def kl_divergence(p: np.ndarray, q: np.ndarray) -> float:
    """``KL(p || q) = sum_x p(x) log(p(x) / q(x))`` for distributions over the pool.

    The optimal proposal is zero where an item's loss carries no information
    (e.g. true negatives for F1), so divergences are measured from it to the
    current proposal, ``KL(q* || q_t)`` (Marchant & Rubinstein (KDD 2021) Figure 2, upper panel),
    which is finite as long as ``q_t`` covers ``q*``'s support.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    keep = p > 0
    if np.any(q[keep] <= 0):
        return float("inf")
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))
