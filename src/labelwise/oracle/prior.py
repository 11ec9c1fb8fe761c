"""Models of the oracle p(y|x) used to shape sampling designs.

The static prior comes from the systems under evaluation: their
probabilities (or a logistic link of their scores, or their predicted
labels), shrunk toward the uniform distribution by ``lam`` as in seed 002
eq. (13): ``p_a(y=1|x) = lam p(y=1|x) + (1 - lam) / 2``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..pool import Pool

__all__ = ["score_prior"]


def score_prior(pool: Pool, lam: float = 0.9, systems: list[int] | None = None) -> np.ndarray:
    """Prior label distribution ``p_a(y|x)`` for every item, shape ``(N, C)``.

    Parameters
    ----------
    pool : Pool
    lam : float in [0, 1]
        Trust in the systems' probabilities (seed 002 eq. 13); 0 gives a
        uniform prior, 1 takes the probabilities at face value.
    systems : list of int, optional
        Systems whose outputs are averaged (default: all).

    Returns
    -------
    ndarray, shape (N, C)
        Rows sum to one; every entry is at least ``(1 - lam) / C``.
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam: must lie in [0, 1], got {lam}")
    systems = list(range(pool.n_systems)) if systems is None else list(systems)
    C = pool.n_classes
    if pool.probs is not None:
        p = pool.probs[:, systems].mean(axis=1)
        probs = np.stack([1 - p, p], axis=1) if C == 2 else p
    elif C == 2 and pool.scores is not None:
        # Non-probabilistic scores: the logistic link (softmax for two classes, seed 001 5.2).
        p = expit(pool.scores[:, systems]).mean(axis=1)
        probs = np.stack([1 - p, p], axis=1)
    elif pool.preds is not None:
        onehot = np.zeros((pool.n_items, C))
        for s in systems:
            onehot[np.arange(pool.n_items), pool.preds[:, s]] += 1.0 / len(systems)
        probs = onehot
    else:
        probs = np.full((pool.n_items, C), 1.0 / C)
    return lam * probs + (1.0 - lam) / C
