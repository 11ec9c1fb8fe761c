"""A floor under the recalibrated scores: positives the scores cannot see, as the labels show them.

The interval of ``online-poisson`` on score blocks takes the items not
labeled yet from the flat Dirichlet-tree model (Marchant & Rubinstein,
"Needle in a Haystack", KDD 2021, sec. 4), whose leaf rates start from the
scores recalibrated by a Platt map ``q = sigmoid(a logit(p) + b)``
(:mod:`labelwise.oracle.calibration`).  The map has no floor: where a share of
the positives is invisible to the scores (label noise, positives the system
never learned), it still decays to nothing in the low-score tail, the model
calls the tail empty, and the positives the rounds label there -- each
standing for ``1 / b`` like it in the design-based estimate (Yilmaz et al.,
"Sample Efficient Model Evaluation", 2021, eq. 6) -- barely move it: a leaf
of a few hundred items holds a handful of labels, mostly none of them
positive.

The labels are pooled instead, through a floor rate ``r0``:

    ``p = r0 + (1 - r0) q``,

the rate of positives the scores do not rank (Yilmaz et al. 2021, eq. 13
mixes the scores with a constant the same way).  The rounds choose whom to
label from the scores and earlier labels only, so the likelihood of ``r0``
needs no design weights (Sugden & Smith, "Ignorable and informative designs
in survey sampling inference", Biometrika 1984): ``prod (r0 + (1 - r0)
q_i)^y_i (1 - r0)^(1 - y_i)`` up to a constant.  The leaves' prior means are
raised to the floor at its posterior mean, with half the prior on ``r0 = 0``
and half spread evenly over ``log r0`` on :data:`FLOOR_GRID`.

Why it is opt-in (``OnlinePoissonDesign(tail_floor=True)``): the labels
rarely tell a floor from a flatter Platt slope.  The map, fitted to the
labels, bends to the few hidden positives the rounds label at moderate
scores, and the deep tail, where the two models differ, holds almost no
labels; so neither a likelihood-ratio test of ``r0 = 0`` nor the labels'
surprise under the scores (:func:`~labelwise.oracle.calibration.label_surprise`)
separates a pool with hidden positives from a clean rare pool whose
positives are spread by a weak system.  Both get a posterior mean floor of
1e-4 to 8e-4 at 500 to 2000 labels: enough to cover the hidden positives,
and several times the width a clean 1:1000 pool needs
(``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLOOR_GRID", "floor_loglik", "floor_rate", "with_floor"]

#: Candidate floors (geometric, from one positive in ten million items to one in two).
FLOOR_GRID = np.geomspace(1e-7, 0.5, 240)


def floor_loglik(positive: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The labels' log-likelihood of the floors ``0`` and :data:`FLOOR_GRID`, up to a constant (module docstring).

    Parameters
    ----------
    positive : ndarray (n,)
        ``q_i``: a recalibrated probability of a positive of every labeled item.
    labels : ndarray of int (n,)
        Their labels, each counted once.
    """
    labels = np.asarray(labels)
    q1 = np.clip(np.asarray(positive, dtype=float)[labels == 1], 1e-300, 1.0)
    r = np.concatenate([[0.0], FLOOR_GRID])[:, None]
    # the positives' log(r0 + (1 - r0) q), the negatives' log(1 - r0) (their log(1 - q) is free of r0)
    return np.log(r + (1.0 - r) * q1[None, :]).sum(axis=1) + np.sum(labels == 0) * np.log1p(-r[:, 0])


def floor_rate(positive: np.ndarray, labels: np.ndarray) -> float:
    """The posterior mean floor rate ``r0`` of the labels (module docstring): half the prior on ``r0 = 0``, half
    spread evenly over the logarithms of :data:`FLOOR_GRID`.

    Parameters
    ----------
    positive : ndarray (n,)
        ``q_i``: the recalibrated probability of a positive of every labeled item (the map behind the leaves).
    labels : ndarray of int (n,)
        Their labels, each counted once.

    Returns
    -------
    float
    """
    if not np.any(np.asarray(labels) == 1):
        return 0.0
    loglik = floor_loglik(positive, labels)
    prior = np.concatenate([[0.5], np.full(FLOOR_GRID.size, 0.5 / FLOOR_GRID.size)])
    weight = prior * np.exp(loglik - loglik.max())
    return float(weight[1:] @ FLOOR_GRID / weight.sum())


def with_floor(prior_mean: np.ndarray, positive: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each leaf's prior mean rate of positives ``prior_mean`` raised to the labels' floor:
    ``r0 + (1 - r0) prior_mean`` (:func:`floor_rate` of the labeled items' recalibrated ``positive``)."""
    r0 = floor_rate(positive, labels)
    return prior_mean if r0 == 0.0 else r0 + (1.0 - r0) * prior_mean
