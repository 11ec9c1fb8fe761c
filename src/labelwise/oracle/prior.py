"""The systems' outputs as a prior on the oracle ``p(y|x)``.

:func:`score_prior` takes the probabilities of the systems under evaluation
(or a logistic link of their scores, or their predicted labels, trusted
:data:`PREDICTION_TRUST` of a one-hot: a prediction is not a probability), shrunk
toward the uniform distribution by ``lam`` as in Yilmaz et al., eq. (13):
``p_a(y=1|x) = lam p(y=1|x) + (1 - lam) / 2``.  :func:`tree_hyperparameters`
turns such a prior into the hyperparameters of the Dirichlet-tree model
(:class:`labelwise.oracle.tree.DirichletTreeModel`) as in Marchant and
Rubinstein, section 5.2.

References
----------
E. Yilmaz, P. Hayes, R. Habib, J. Burgess and D. Barber, "Sample Efficient
Model Evaluation", arXiv preprint (2021).

N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient
Evaluation under Extreme Class Imbalance", KDD 2021.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..partition import Hierarchy
from ..pool import Pool

__all__ = ["PREDICTION_TRUST", "block_hyperparameters", "check_prior_probs", "score_prior", "tree_hyperparameters"]

#: Share of the one-hot a pool's predicted labels weigh in the prior where it has neither probabilities nor scores
#: (the rest spread over the labels).  A one-hot prior called every item certain, and the default's intervals
#: on such pools were far too narrow (``benchmarks/predictions_only.py``).
PREDICTION_TRUST = 0.5


def score_prior(pool: Pool, lam: float = 1.0, systems: list[int] | None = None,
                items: np.ndarray | None = None) -> np.ndarray:
    """Prior label distribution ``p_a(y|x)`` for every item, shape ``(N, C)``.

    Parameters
    ----------
    pool : Pool
    lam : float in [0, 1]
        Trust in the systems' probabilities (Yilmaz et al., eq. 13); 0 gives a
        uniform prior, 1 takes the probabilities at face value.
    systems : list of int, optional
        Systems whose outputs are averaged (default: all).
    items : ndarray of int, optional
        Pool positions to compute the prior for (default: every item).

    Returns
    -------
    ndarray, shape (N, C)
        Rows sum to one; every entry is at least ``(1 - lam) / C``.
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam: must lie in [0, 1], got {lam}")
    systems = list(range(pool.n_systems)) if systems is None else list(systems)
    C = pool.n_classes
    rows = slice(None) if items is None else np.asarray(items, dtype=np.int64)
    n = pool.n_items if items is None else rows.size
    outputs = pool.outputs(rows)
    if outputs.probs is not None:
        p = outputs.probs[:, systems].mean(axis=1)
        probs = np.stack([1 - p, p], axis=1) if C == 2 else p
    elif C == 2 and outputs.scores is not None:
        # Non-probabilistic scores: the logistic link (softmax for two classes, Marchant and Rubinstein 5.2).
        p = expit(outputs.scores[:, systems]).mean(axis=1)
        probs = np.stack([1 - p, p], axis=1)
    elif outputs.preds is not None:
        onehot = np.zeros((n, C))
        preds = outputs.preds
        for s in systems:
            onehot[np.arange(n), preds[:, s]] += 1.0 / len(systems)
        # a prediction is not a probability: the predicted label gets PREDICTION_TRUST of the one-hot, the rest
        # spread evenly, so the recalibration can learn each prediction's rate from the labels
        probs = PREDICTION_TRUST * onehot + (1.0 - PREDICTION_TRUST) / C
    else:
        probs = np.full((n, C), 1.0 / C)
    return lam * probs + (1.0 - lam) / C


def check_prior_probs(prior_probs, n_items: int) -> np.ndarray:
    """Prior label distributions ``s(y|x_i)``, validated, with rows normalised to sum to one.

    Parameters
    ----------
    prior_probs : array-like, shape (n_items, C) or (n_items,)
        Non-negative weights per item and class; a 1-d array is the binary ``s(y=1|x_i)``.
    n_items : int

    Returns
    -------
    ndarray, shape (n_items, C)

    Raises
    ------
    ValueError
        Naming ``prior_probs`` for a wrong shape, non-numeric, negative or
        non-finite entries, or a row summing to zero.
    """
    p = np.asarray(prior_probs)
    if p.dtype.kind not in "biuf":
        raise ValueError(f"prior_probs: must be numeric, got dtype {p.dtype}")
    p = p.astype(np.float64)
    if p.ndim == 1:
        p = np.stack([1.0 - p, p], axis=1)
    if p.ndim != 2 or p.shape[0] != n_items or p.shape[1] < 2:
        raise ValueError(
            f"prior_probs: expected shape ({n_items}, C) with C >= 2 (one row per item of the "
            f"hierarchy) or ({n_items},), got {np.shape(prior_probs)}"
        )
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("prior_probs: must be finite and non-negative")
    total = p.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        raise ValueError(
            f"prior_probs: row {int(np.argmax(total[:, 0] <= 0))} sums to zero; every item needs a prior distribution"
        )
    return p / total


def tree_hyperparameters(
    hierarchy: Hierarchy, prior_probs, prior_strength: float
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray | None]]:
    """Hyperparameters of the Dirichlet-tree model from prior label distributions (Marchant and Rubinstein, 5.2).

    ::

        alpha_y    = 1 + lam * sum_k s(y|k)
        beta_{y,v} = depth(v)**2 + lam * sum_k s(y|k) delta_v(k)

    where ``s(y|k)`` is the mean of ``prior_probs[:, y]`` over the items of
    block ``k`` (0 for empty blocks), ``depth(v)`` the level of the non-root
    node ``v``, ``delta_v(k) = 1`` when ``v`` is on the path to leaf ``k``
    and ``lam = prior_strength``.

    Parameters
    ----------
    hierarchy : Hierarchy
    prior_probs : array-like, shape (N, C) or (N,)
        As accepted by :func:`check_prior_probs`, one row per item of ``hierarchy``.
    prior_strength : float
        ``lam >= 0``.

    Returns
    -------
    block_prior : ndarray, shape (n_leaves, C)
        ``s(y|k)``.
    alpha : ndarray, shape (C,)
    beta : list
        ``beta[l]`` of shape ``(branching**l, C)`` for the level-``l`` nodes;
        ``beta[0]`` is ``None`` (the root has none).
    """
    probs = check_prior_probs(prior_probs, hierarchy.n_items)
    h, C = hierarchy, probs.shape[1]
    sizes = h.block_sizes.astype(np.float64)
    cell = (h.blocks[:, None].astype(np.int64) * C + np.arange(C)).ravel()
    sums = np.bincount(cell, weights=probs.ravel(), minlength=h.n_leaves * C).reshape(h.n_leaves, C)
    s = sums / np.maximum(sizes, 1.0)[:, None]  # s(y|k), 0 for empty leaves
    return (s, *block_hyperparameters(hierarchy, s, prior_strength))


def block_hyperparameters(hierarchy: Hierarchy, block_prior: np.ndarray,
                          prior_strength: float) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """``alpha`` and ``beta`` of :func:`tree_hyperparameters` from the block prior ``s(y|k)``, shape ``(n_leaves, C)``."""
    lam = float(prior_strength)
    sub = hierarchy.subtree_sums(block_prior)
    beta: list[np.ndarray | None] = [None] + [float(level) ** 2 + lam * sub[level]
                                              for level in range(1, hierarchy.depth + 1)]
    return 1.0 + lam * sub[0][0], beta
