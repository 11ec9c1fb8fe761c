"""Calibration from weighted rows: equal-count bins, a linear spline through their control points,
weighted isotonic regression, and the expected calibration error.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010),
section "Regression": the raw estimates ``phi(x_i)`` are cut into ``J``
bins holding equal numbers of rows, ``b_{j-1} <= phi < b_j``; each bin gives
a control point, the weighted means (``w_i = w(l, r_i)`` for a log whose
zero rewards were kept at rate ``l``, a design weight for labels drawn by a
sampling design)::

    phi_j = sum_i w_i phi(x_i) 1{i in j} / sum_i w_i 1{i in j},
    r_j   = sum_i w_i r_i      1{i in j} / sum_i w_i 1{i in j},

and the control points, with the end points ``(min phi, min r)`` and
``(max phi, max r)``, define the linear spline ``psi`` that maps a raw
estimate to a calibrated one.  The blog reports that this survives
``l = 1/100``, where importance-weighted regression does not.

Weighted isotonic regression (pool adjacent violators, Ayer et al., Ann.
Math. Statist. 1955) is the monotone alternative; its fit at the distinct
scores is interpolated linearly between them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression

__all__ = ["CALIBRATION_METHODS", "Calibrator", "bin_means", "equal_count_bins", "expected_calibration_error",
           "fit_calibration"]

CALIBRATION_METHODS = ("spline", "isotonic")


@dataclass(frozen=True)
class Calibrator:
    """A piecewise-linear map from raw scores to calibrated values through ``knots``.

    Attributes
    ----------
    knot_scores, knot_values : ndarray, shape (k,)
        Knots, ``knot_scores`` non-decreasing; outside them the end values hold.
    method : str
    """

    knot_scores: np.ndarray
    knot_values: np.ndarray
    method: str

    def __call__(self, score) -> np.ndarray:
        """The calibrated value of each score."""
        return np.interp(np.asarray(score, dtype=float), self.knot_scores, self.knot_values)


def equal_count_bins(score, n_bins: int, weight=None) -> np.ndarray:
    """Bin of each row, ``0 .. n_bins - 1``, each bin holding an equal share of the rows (or of their weight).

    Bins are score ranges ``b_{j-1} <= s < b_j``: tied scores share a bin, so
    with many ties some bins are empty.
    """
    score = np.asarray(score, dtype=float)
    if n_bins < 1:
        raise ValueError(f"n_bins: must be at least 1, got {n_bins}")
    order = np.argsort(score)
    mass = np.ones(score.shape[0]) if weight is None else np.asarray(weight, dtype=float)[order]
    cum = np.cumsum(mass)
    # the inner edge b_k: the score of the first row whose cumulative mass exceeds k/J of the total
    targets = cum[-1] * np.arange(1, n_bins) / n_bins
    edges = score[order][np.minimum(np.searchsorted(cum, targets, side="right"), score.shape[0] - 1)]
    return np.searchsorted(edges, score, side="right")


def bin_means(bins: np.ndarray, values, weight, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean of ``values`` in each bin, and each bin's total weight (NaN mean for an empty bin)."""
    total = np.bincount(bins, weights=weight, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.bincount(bins, weights=weight * np.asarray(values, dtype=float), minlength=n_bins) / total, total


def _spline(score, reward, weight, n_bins, score_range, reward_range) -> Calibrator:
    bins = equal_count_bins(score, n_bins)
    phi, total = bin_means(bins, score, weight, n_bins)
    r, _ = bin_means(bins, reward, weight, n_bins)
    kept = total > 0
    x = np.r_[score_range[0], phi[kept], score_range[1]]
    y = np.r_[reward_range[0], r[kept], reward_range[1]]
    return Calibrator(x, y, "spline")


def _isotonic(score, reward, weight) -> Calibrator:
    distinct, group = np.unique(score, return_inverse=True)
    total = np.bincount(group, weights=weight)
    fit = isotonic_regression(np.bincount(group, weights=weight * reward) / total, weights=total).x
    return Calibrator(distinct, fit, "isotonic")


def fit_calibration(score, reward, weight=None, *, method: str = "spline", n_bins: int = 20,
                    score_range: tuple[float, float] | None = None,
                    reward_range: tuple[float, float] | None = None) -> Calibrator:
    """Fit a calibration map from raw scores to expected rewards on weighted rows.

    Parameters
    ----------
    score : array_like, shape (n,)
        Raw estimates ``phi(x_i)``.
    reward : array_like, shape (n,)
        Observed rewards (labels).
    weight : array_like, shape (n,), optional
        Rows each row stands for: ``w(l, r)`` (:func:`~labelwise.logs.weights.keep_weights`)
        or a sampling design's weight; 1 by default.
    method : {"spline", "isotonic"}
    n_bins : int
        Bins ``J`` of the spline (equal numbers of rows).
    score_range, reward_range : (float, float), optional
        End points of the spline: the smallest and largest possible raw
        estimate and reward (default: those observed; ``(0, 1)`` for probabilities).

    Returns
    -------
    Calibrator
    """
    score = np.asarray(score, dtype=float)
    reward = np.asarray(reward, dtype=float)
    weight = np.ones_like(score) if weight is None else np.asarray(weight, dtype=float)
    if score.shape[0] == 0:
        raise ValueError("calibration: no rows to fit on")
    if not (score.shape == reward.shape == weight.shape):
        raise ValueError("calibration: score, reward and weight must have the same length")
    if method == "isotonic":
        return _isotonic(score, reward, weight)
    if method != "spline":
        raise ValueError(f"method: {method!r} is not one of {', '.join(CALIBRATION_METHODS)}")
    score_range = score_range or (float(score.min()), float(score.max()))
    reward_range = reward_range or (float(reward.min()), float(reward.max()))
    return _spline(score, reward, weight, n_bins, score_range, reward_range)


def expected_calibration_error(prob, reward, weight=None, n_bins: int = 10) -> float:
    """``sum_j (W_j / W) |r_j - p_j|`` over bins of equal weight (weighted means ``r_j``, ``p_j``).

    Parameters
    ----------
    prob : array_like, shape (n,)
        Predicted probabilities (or expected rewards).
    reward : array_like, shape (n,)
    weight : array_like, shape (n,), optional
        Rows each row stands for (1 by default): the error is that of the population they stand for.
    n_bins : int
    """
    prob = np.asarray(prob, dtype=float)
    weight = np.ones_like(prob) if weight is None else np.asarray(weight, dtype=float)
    bins = equal_count_bins(prob, n_bins, weight)
    p, total = bin_means(bins, prob, weight, n_bins)
    r, _ = bin_means(bins, reward, weight, n_bins)
    kept = total > 0
    return float(total[kept] @ np.abs(r[kept] - p[kept]) / total.sum())
