"""The difference estimator's pieces for ``online-poisson``'s per-item rounds (``estimator="difference"``).

Each round's total is the oracle model's prediction for the pool plus the
design-weighted residuals of the round's labels
(:func:`~labelwise.estimators.rounds_moments`); the prediction is the model
fitted before the round, so the round stays unbiased.  A group's prediction
moves from its most likely label's loss toward its posterior mean by a power
tuned from the labels (:func:`prediction_power`).
"""

from __future__ import annotations

import numpy as np

from .group_model import GroupModel
from .grouped import GroupedPool

__all__ = ["prediction_power", "prediction_weights", "unlabeled_by_round"]


def prediction_weights(pi: np.ndarray, beta: float) -> np.ndarray:
    """Label weights of each group's prediction: ``1 - beta`` on its mode, ``beta`` on its posterior, ``(G, C)``."""
    out = beta * pi
    out[np.arange(pi.shape[0]), np.argmax(pi, axis=1)] += 1.0 - beta
    return out


def unlabeled_by_round(groups: GroupedPool, rounds: np.ndarray, group: np.ndarray, n_rounds: int) -> np.ndarray:
    """Unlabeled members of each group at the start of each round, ``(rounds, G)``, from the round and group of
    every labeled item."""
    G = groups.n_groups
    per = np.bincount(rounds * G + group, minlength=n_rounds * G).reshape(n_rounds, G)
    return groups.sizes[None, :] - (np.cumsum(per, axis=0) - per)


def prediction_power(gm: GroupModel, pi: np.ndarray, u: np.ndarray, b_groups: list[np.ndarray]) -> float:
    """How far the next round's prediction moves from each group's mode to its posterior mean.

    The power tuning of PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++:
    Efficient Prediction-Powered Inference", 2023), applied to the
    groups: the prediction is ``u_mode + beta (E_pi u - u_mode)`` with
    ``beta`` in [0, 1] minimizing the round's variance
    ``sum (1/b - 1) ||u - m||^2`` over the pool, estimated from the
    labels so far (each weighted by one over its group's inclusion
    probability summed over the rounds ``b_groups``, the next round's ``b``
    taken as the last round's; 0 before the first round).  Scores the labels
    contradict get ``beta`` near 0: the plain estimator, whose residuals are
    the labels' losses.  The labels are all in before the round draws, so the
    round stays unbiased.

    Parameters
    ----------
    gm : GroupModel
        The oracle model with the labels so far.
    pi : ndarray (G, C)
        Each group's posterior label distribution.
    u : ndarray (C, G, m)
        ``Dg(R) l`` of a group's items for each label.
    b_groups : list of ndarray (G,)
        Each earlier round's inclusion probability per group.
    """
    if not b_groups:
        return 0.0
    items, y = gm.groups.labeled_items, gm.labeled_y
    g = gm.groups.of_item[items]
    G = pi.shape[0]
    u_mode = u[np.argmax(pi, axis=1), np.arange(G)]
    a = (np.einsum("gc,cgm->gm", pi, u) - u_mode)[g]  # the prediction's move, per labeled item
    e = u[y, g] - u_mode[g]  # the label's
    seen = np.minimum(np.sum(b_groups, axis=0), 1.0)[g]
    c = (1.0 / b_groups[-1][g] - 1.0) / seen
    den = float(np.sum(c * np.sum(a * a, axis=1)))
    return float(np.clip(np.sum(c * np.sum(a * e, axis=1)) / den, 0.0, 1.0)) if den > 0 else 0.0
