"""A floor on the covariance of an estimate from labels that hold no positive yet.

On a rare binary pool the first hundreds of labels can all be negative.
The oracle model's recalibration of the scores (a Platt map ``sigmoid(a x +
b)``) is then not identified: every map that puts few positives among the
labeled items fits them equally well, the likelihood's maximum sits at an
intercept of minus infinity, and what the model expects among the unlabeled
items is its prior's (scores taken as calibrated).  Over-confident scores
expect no positive left, and the interval of a mean such as accuracy
collapses to a point although nothing was learned about the tail: on the
robustness grid's 1:100,000 over-confident pool, one run in nine at 500
labels (``benchmarks/robustness.py --measure accuracy``).

What the labels do show is that none of ``n`` items was positive.  The
design labels an item the more likely the higher its score, so the labeled
items' scores dominate the unlabeled ones', and under any recalibration
monotone in the score the unlabeled items' mean rate of positives is at
most the labeled items'.  That rate gets Jeffreys' posterior ``Beta(1/2, n +
1/2)`` (Brown, Cai and DasGupta, "Interval estimation for a binomial
proportion", Statistical Science 16(2), 2001, sec. 4.1.2), so the positives
among the ``M`` unlabeled items whose label would move the estimate are
beta-binomial ``K ~ BB(M, 1/2, n + 1/2)``, each at a uniformly random one of
them.  The error they leave is the random sum of their moves ``c_i``, with
covariance ``(E[K] Cov(c) + Var(K) E[c] E[c]^T) / N^2``: the floor.  It is
about as wide as uniform sampling's interval with no positive seen, and it
lifts as soon as one positive is labeled and the map is identified.

It is applied only where the model expects less than one positive left
(whatever the interval's level, so that a higher level never narrows the
interval): where it expects more, its interval already reaches them, and the
floor widened intervals that covered (the grid's calibrated 1:100,000 pool at
2000 labels, most runs with no positive labeled and 8 expected: width ratio
1.05 to 4.7).
"""

from __future__ import annotations

import numpy as np

from .model_covariance import larger_variance

__all__ = ["UNSEEN_POSITIVES_BASIS", "unseen_positives_covariance", "with_unseen_labels"]

#: What the floor assumes (:attr:`~labelwise.estimators.Estimate.basis`).
UNSEEN_POSITIVES_BASIS = ("no positive labeled yet, so the scores' calibration is unchecked: the interval reaches the "
                          "positives the labels cannot rule out, taking the unlabeled items' rate of positives to be at "
                          "most the labeled items' (Jeffreys prior; a rate that rises with the score)")


def unseen_positives_covariance(move: np.ndarray, unlabeled: np.ndarray, n_labels: int, n_items: int) -> np.ndarray:
    """The covariance floor of an estimate whose ``n_labels`` labels hold no positive (module docstring).

    Parameters
    ----------
    move : ndarray (G, m)
        How much a group's item moves the estimate's ``m`` components (times ``n_items``) when its label is
        positive rather than negative.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    n_labels : int
        Labels so far, all negative.
    n_items : int
        Items in the pool.

    Returns
    -------
    ndarray (m, m)
    """
    movable = unlabeled * np.any(move != 0, axis=1)
    total = float(movable.sum())
    if total <= 0:
        return np.zeros((move.shape[1], move.shape[1]))
    a, b = 0.5, n_labels + 0.5
    mean_k = total * a / (a + b)
    var_k = total * a * b * (a + b + total) / ((a + b) ** 2 * (a + b + 1))
    mean_c = movable @ move / total
    centered = move - mean_c
    cov_c = (centered * movable[:, None]).T @ centered / total
    return (mean_k * cov_c + var_k * np.outer(mean_c, mean_c)) / n_items**2


def with_unseen_labels(cov: np.ndarray, basis: str, u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray,
                       labels: np.ndarray, expected: float, n_items: int,
                       n_labeled: int | None = None) -> tuple[np.ndarray, str]:
    """``cov`` raised to the floor of :func:`unseen_positives_covariance`, and the basis saying so, where the labels
    all hold the class the model expects most among the unlabeled items and the model expects less than one other
    label left (whatever the interval's level); ``(cov, basis)`` unchanged elsewhere, or where the floor is lower.

    On a multi-class pool an exception is any other class, each as likely: a group's ``C - 1`` moves share its
    unlabeled items, so the floor counts items, not classes.

    Parameters
    ----------
    cov : ndarray (m, m)
        The estimate's covariance.
    basis : str
        What it rests on (:attr:`~labelwise.estimators.Estimate.basis`).
    u : ndarray (C, G, m)
        A group's item's contribution to the estimate (times ``n_items``) under each label.
    pi : ndarray (G, C)
        The model's label distribution of a group's unlabeled items.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    labels : ndarray (n,)
        The labels so far.
    expected : float
        The exceptions (labels other than a group's most likely one) the model expects among the unlabeled items.
    n_items : int
        The pool's items ``N``.
    n_labeled : int, optional
        The distinct items labeled (``labels.size`` by default: one label per item).  Items drawn or labeled again
        (draws with replacement, a stochastic oracle) are no further evidence of the unlabeled items' rate.
    """
    labels = np.asarray(labels)
    if expected >= 1.0 or labels.size == 0:
        return cov, basis
    common = int(np.argmax(unlabeled @ pi))
    if np.any(labels != common):
        return cov, basis
    others = [c for c in range(u.shape[0]) if c != common]
    move = np.concatenate([u[c] - u[common] for c in others])  # ((C - 1) G, m)
    floor = unseen_positives_covariance(move, np.tile(unlabeled, len(others)) / len(others),
                                        labels.size if n_labeled is None else n_labeled, n_items)
    if not np.any(np.diag(floor) > np.diag(cov)):
        return cov, basis
    return larger_variance(cov, floor), UNSEEN_POSITIVES_BASIS
