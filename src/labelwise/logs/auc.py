"""AUC from a log whose negatives (or any rows) were subsampled, with its interval and deviation bound.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010),
section "AUC": with ``AUC(phi) = E[1{phi(x+) > phi(x-)} + 1/2 1{phi(x+) =
phi(x-)}]`` over independent positive and negative draws, negatives dropped
obliviously (at a constant rate) leave the empirical AUC unbiased.  With
per-row keep rates each kept negative carries its weight ``w = w(l, 0) = 1/l``
(positives ``1``) and each pair ``w_i w_j``::

    AUC_w = sum_{i+, j-} w_i w_j (1{s_i > s_j} + 1/2 1{s_i = s_j}) / (W+ W-).

It is computed in ``O(n log n)`` by sorting each class and placing it among the other
(:func:`weighted_auc`).  Its
variance is the weighted DeLong variance (DeLong, DeLong and Clarke-Pearson,
Biometrics 1988, with each row's placement weighted as in a Horvitz-Thompson
expansion)::

    var = sum_{i+} w_i^2 (V_i - A)^2 / W+^2 + sum_{j-} w_j^2 (V_j - A)^2 / W-^2,

``V_i`` the weighted share of negatives a positive beats and ``V_j`` the
weighted share of positives that beat a negative (ties count half); the
``w^2`` term is the variance of keeping or dropping each row.  The interval
is built on the logit scale and mapped back (:func:`logit_interval`): the
AUC's sampling distribution is skewed toward 1/2 near 1, so a symmetric
interval misses more often on one side (its lower end lies above the truth
too often when few negatives are kept).

Agarwal, Graepel, Herbrich, Har-Peled and Roth, "Generalization bounds for
the area under the ROC curve", JMLR 6 (2005), Theorem 3:
``P(|AUC_e - AUC| >= sqrt(ln(2/delta) / (2 rho (1 - rho) N))) <= delta`` with
``rho`` the positive share of the ``N`` rows; for a fixed ``N`` the bound is
smallest at ``rho = 1/2`` (:func:`auc_deviation_bound`, :func:`balanced_keep_rates`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit, ndtri

from ..estimators.intervals import normal_interval
from .result import LogEstimate
from .weights import keep_weights

__all__ = ["auc_deviation_bound", "balanced_keep_rates", "logged_auc", "logit_interval", "weighted_auc"]


def _sorted(values: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` sorted with their weights (a plain sort when the weights are all equal: twice as fast)."""
    if weight.size and np.all(weight == weight[0]):
        return np.sort(values), weight
    order = np.argsort(values)
    return values[order], weight[order]


def _placements(score: np.ndarray, positive: np.ndarray,
                weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each row's weighted share of the other class it ranks correctly against (ties half).

    For a positive: the weighted share of negatives scored below it; for a
    negative: the weighted share of positives scored above it.  Each class is
    sorted once and placed among the other by binary search.

    Returns
    -------
    positive placements, their weights, negative placements, their weights
        In sorted order (only sums over rows are taken).
    """
    s_pos, w_pos = _sorted(score[positive], weight[positive])
    s_neg, w_neg = _sorted(score[~positive], weight[~positive])
    cum_neg, cum_pos = np.r_[0.0, np.cumsum(w_neg)], np.r_[0.0, np.cumsum(w_pos)]
    # weight strictly below plus half the tied weight: the mean of the cumulative weights at both ends of the tie
    neg_beaten = cum_neg[np.searchsorted(s_neg, s_pos, "left")] + cum_neg[np.searchsorted(s_neg, s_pos, "right")]
    pos_below = cum_pos[np.searchsorted(s_pos, s_neg, "left")] + cum_pos[np.searchsorted(s_pos, s_neg, "right")]
    return (0.5 * neg_beaten / cum_neg[-1], w_pos,
            1.0 - 0.5 * pos_below / cum_pos[-1], w_neg)


def _checked(score, label, weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    score = np.asarray(score, dtype=float)
    positive = np.asarray(label) != 0
    weight = np.ones_like(score) if weight is None else np.asarray(weight, dtype=float)
    if not (positive.any() and (~positive).any()):
        raise ValueError("label: the AUC needs at least one positive and one negative row")
    if np.isnan(score).any():
        raise ValueError(f"score: row {int(np.argmax(np.isnan(score)))} is not a number")
    return score, positive, weight


def weighted_auc(score, label, weight=None) -> float:
    """AUC with pairs weighted ``w_i w_j`` (ties half), in ``O(n log n)``.

    Parameters
    ----------
    score : array_like, shape (n,)
    label : array_like, shape (n,)
        Non-zero for positives.
    weight : array_like, shape (n,), optional
        Rows each kept row stands for (``1/l``); 1 by default.
    """
    share, w_pos, _, _ = _placements(*_checked(score, label, weight))
    return float(w_pos @ share / w_pos.sum())


def logit_interval(value, var, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Interval for a proportion on the logit scale, mapped back into ``[0, 1]``.

    By the delta method ``var(logit A) = var(A) / (A (1 - A))^2``; the interval
    ``expit(logit A +- z sqrt(var) / (A (1 - A)))`` is asymmetric around ``A``,
    as the skewed sampling distribution of an AUC near 1 is.  An estimate on
    the boundary (0 or 1) has no logit: it keeps the normal interval.
    Broadcasts.

    Returns
    -------
    (lower, upper) : tuple of ndarray
    """
    value, var = np.broadcast_arrays(np.asarray(value, dtype=float), np.asarray(var, dtype=float))
    inside = (value > 0) & (value < 1)
    centre = np.where(inside, value, 0.5)
    half = ndtri(0.5 + level / 2) * np.sqrt(np.maximum(var, 0.0)) / (centre * (1 - centre))
    lo_n, hi_n = normal_interval(value, var, level, 0.0, 1.0)
    return (np.where(inside, expit(logit(centre) - half), lo_n), np.where(inside, expit(logit(centre) + half), hi_n))


def logged_auc(score, label, keep_rate=1.0, level: float = 0.95) -> LogEstimate:
    """AUC of kept log rows, each negative weighted ``w(l, 0) = 1/l``, with its weighted DeLong interval.

    The interval is :func:`logit_interval` of the weighted DeLong variance.

    Parameters
    ----------
    score, label : array_like, shape (n,)
    keep_rate : float or array_like, shape (n,)
        Probability ``l`` in ``(0, 1]`` with which a negative (zero-label)
        row was kept; positives were all kept (weight 1).
    level : float

    Returns
    -------
    LogEstimate
        ``effective_size`` is the number of logged rows the kept ones stand for.
    """
    score, positive, _ = _checked(score, label, None)
    weight = keep_weights(positive, keep_rate)
    share_pos, w_pos, share_neg, w_neg = _placements(score, positive, weight)
    auc = float(w_pos @ share_pos / w_pos.sum())
    var = (float(w_pos**2 @ (share_pos - auc) ** 2) / w_pos.sum() ** 2
           + float(w_neg**2 @ (share_neg - auc) ** 2) / w_neg.sum() ** 2)
    lo, hi = logit_interval(auc, var, level)
    return LogEstimate(auc, float(lo), float(hi), float(level), float(np.sqrt(var)), score.shape[0],
                       float(weight.sum()), "weighted-delong")


def auc_deviation_bound(n_rows, positive_share, delta: float = 0.05):
    """``sqrt(ln(2/delta) / (2 rho (1 - rho) N))``: Agarwal et al. (JMLR 2005) Theorem 3.

    With probability at least ``1 - delta`` the empirical AUC of ``N`` rows, a
    share ``rho`` of them positive, lies this close to the AUC.  Broadcasts.
    """
    rho = np.asarray(positive_share, dtype=float)
    return np.sqrt(np.log(2.0 / delta) / (2.0 * rho * (1.0 - rho) * np.asarray(n_rows, dtype=float)))


def balanced_keep_rates(n_positives: int, n_negatives: int, row_budget: int) -> tuple[float, float]:
    """Keep rates of positives and negatives that minimize the deviation bound within ``row_budget`` rows.

    ``rho (1 - rho) N = n+ n- / (n+ + n-)`` grows with either count and, for
    a fixed total, is largest at ``n+ = n-``: keep half the budget of each
    class (the 1:1 ratio), and when one class has fewer rows than that, all
    of it and the rest of the budget from the other.

    Returns
    -------
    (positive keep rate, negative keep rate)
    """
    if min(n_positives, n_negatives) < 1 or row_budget < 2:
        raise ValueError("balanced_keep_rates: needs a positive and a negative row and a budget of 2 rows or more")
    half = row_budget / 2
    kept_pos = min(n_positives, max(half, row_budget - n_negatives))
    kept_neg = min(n_negatives, row_budget - kept_pos)
    return float(kept_pos / n_positives), float(kept_neg / n_negatives)
