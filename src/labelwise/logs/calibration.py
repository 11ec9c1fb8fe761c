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

With ``shrink`` (for raw estimates that are probabilities, as a pool's are)
a bin's control value is no longer its labels' mean alone but their
posterior mean rate under a Beta prior centred on the bin's mean raw
probability: with ``n_j = (sum w)^2 / sum w^2`` the bin's effective number
of labels (Kish's effective sample size, "Survey Sampling", Wiley 1965: a
design weight does not add evidence) and ``s`` the prior's strength,

    c_j = (s phi_j + n_j r_j) / (s + n_j).

A bin whose few labels hold no positive keeps a rate near its raw
probability instead of 0; as its labels accumulate it follows them.  ``s``
is the strength whose Beta-binomial likelihood of the bins' effective counts
is the largest, or the largest candidate unless the labels reject it
(:func:`~labelwise.oracle.calibration.marginal_strength` with
``unless_rejected``, as the designs' oracle model chooses its own): labels of
a rare class cannot tell a tail rate of 1e-4 from 1e-6, and the weakest
strength, most likely by a hair there, would cut the tail's rate a
hundredfold on no evidence.  The shrunken values are made monotone by
weighted isotonic regression (weights ``s + n_j``, their posterior
precision up to a factor).  The end points carry no labels, so their value
is their prior mean, the raw probability itself: ``(0, 0)`` and ``(1, 1)``
on the default range, and the map gives exactly 0 or 1 only to a raw
probability of exactly 0 or 1.  For isotonic regression the bins are the
fit's level sets (the blocks pool adjacent violators merged), and the map is
the linear spline through their shrunken control points rather than steps:
the lowest level set of a rare pool holds most of the pool, whose raw
probabilities span orders of magnitude, and a step would give every item
the set's mean, overstating the rates of the lowest-scored items many-fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import isotonic_regression

from ..oracle.calibration import marginal_strength

__all__ = ["CALIBRATION_METHODS", "Calibrator", "bin_means", "cross_validated_ece", "effective_sizes",
           "equal_count_bins", "expected_calibration_error", "fit_calibration", "shrunk_rates"]

CALIBRATION_METHODS = ("spline", "isotonic")


@dataclass(frozen=True)
class Calibrator:
    """A piecewise-linear map from raw scores to calibrated values through ``knots``.

    Attributes
    ----------
    knot_scores, knot_values : ndarray, shape (k,)
        Knots, ``knot_scores`` non-decreasing; outside them the end values hold.
    method : str
    strength : float or None
        The prior strength ``s`` of a shrunken fit (None unshrunk).
    """

    knot_scores: np.ndarray
    knot_values: np.ndarray
    method: str
    strength: float | None = None

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


def effective_sizes(bins: np.ndarray, weight, n_bins: int) -> np.ndarray:
    """Kish's effective number of rows of each bin, ``(sum w)^2 / sum w^2`` (0 for an empty bin)."""
    weight = np.asarray(weight, dtype=float)
    total = np.bincount(bins, weights=weight, minlength=n_bins)
    square = np.bincount(bins, weights=weight**2, minlength=n_bins)
    return np.divide(total**2, square, out=np.zeros(n_bins), where=square > 0)


def shrunk_rates(phi, rate, n_eff) -> tuple[np.ndarray, float]:
    """Each bin's posterior mean rate under a Beta prior centred on its raw probability, made monotone.

    Parameters
    ----------
    phi : array_like, shape (J,)
        The bins' (weighted) mean raw probabilities, non-decreasing: the priors' means.
    rate : array_like, shape (J,)
        Their labels' weighted mean rewards ``r_j`` in ``[0, 1]``.
    n_eff : array_like, shape (J,)
        Their effective numbers of labels (:func:`effective_sizes`).

    Returns
    -------
    values : ndarray, shape (J,)
        ``(s phi_j + n_j r_j) / (s + n_j)``, isotonic-regressed with weights ``s + n_j``.
    strength : float
        ``s``, chosen by the bins' marginal likelihood (module docstring).
    """
    phi, n_eff = np.asarray(phi, dtype=float), np.asarray(n_eff, dtype=float)
    positives = n_eff * np.asarray(rate, dtype=float)
    strength = marginal_strength(np.stack([1.0 - phi, phi], axis=1), np.stack([n_eff - positives, positives], axis=1),
                                 unless_rejected=True)
    values = (strength * phi + positives) / (strength + n_eff)
    return isotonic_regression(values, weights=strength + n_eff).x, strength


def _control_points(bins, n_bins, score, reward, weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each non-empty bin's weighted mean score ``phi_j``, mean reward ``r_j`` and effective size ``n_j``."""
    phi, total = bin_means(bins, score, weight, n_bins)
    r, _ = bin_means(bins, reward, weight, n_bins)
    kept = total > 0
    return phi[kept], r[kept], effective_sizes(bins, weight, n_bins)[kept]


def _shrunk_spline(phi, r, n_eff, score_range, method) -> Calibrator:
    """The linear spline through the shrunk control points, between the end points ``(lo, lo)``, ``(hi, hi)``."""
    values, strength = shrunk_rates(phi, r, n_eff)
    return Calibrator(np.r_[score_range[0], phi, score_range[1]], np.r_[score_range[0], values, score_range[1]],
                      method, strength)


def _spline(score, reward, weight, n_bins, score_range, reward_range, shrink) -> Calibrator:
    phi, r, n_eff = _control_points(equal_count_bins(score, n_bins), n_bins, score, reward, weight)
    if shrink:
        return _shrunk_spline(phi, r, n_eff, score_range, "spline")
    return Calibrator(np.r_[score_range[0], phi, score_range[1]], np.r_[reward_range[0], r, reward_range[1]], "spline")


def _isotonic(score, reward, weight, score_range, shrink) -> Calibrator:
    distinct, group = np.unique(score, return_inverse=True)
    total = np.bincount(group, weights=weight)
    fit = isotonic_regression(np.bincount(group, weights=weight * reward) / total, weights=total).x
    if not shrink:
        return Calibrator(distinct, fit, "isotonic")
    level = np.r_[0, np.cumsum(np.diff(fit) != 0)]  # the level set (block) of each distinct score
    points = _control_points(level[group], int(level[-1]) + 1, score, reward, weight)
    return _shrunk_spline(*points, score_range, "isotonic")


def fit_calibration(score, reward, weight=None, *, method: str = "spline", n_bins: int = 20,
                    score_range: tuple[float, float] | None = None,
                    reward_range: tuple[float, float] | None = None, shrink: bool = False) -> Calibrator:
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
    shrink : bool
        Shrink each bin's control value toward its mean raw probability
        (module docstring); ``score`` must be probabilities and ``reward``
        in ``[0, 1]``.  The end points are then ``(lo, lo)`` and ``(hi, hi)``
        of ``score_range`` (default ``(0, 1)``), and ``reward_range`` is
        not used.  Off by default: Mineiro's spline for logs, whose scores
        need not be probabilities, takes the bins' means as they are.

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
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"method: {method!r} is not one of {', '.join(CALIBRATION_METHODS)}")
    if shrink:
        if score.min() < 0 or score.max() > 1 or reward.min() < 0 or reward.max() > 1:
            raise ValueError("calibration: shrinking needs probabilities as scores and rewards in [0, 1]")
        score_range = score_range or (0.0, 1.0)
    if method == "isotonic":
        return _isotonic(score, reward, weight, score_range, shrink)
    score_range = score_range or (float(score.min()), float(score.max()))
    reward_range = reward_range or (float(reward.min()), float(reward.max()))
    return _spline(score, reward, weight, n_bins, score_range, reward_range, shrink)


def cross_validated_ece(score, reward, weight=None, *, folds: int = 5, ece_bins: int = 10, **fit) -> float:
    """The expected calibration error of a calibration map on rows it was not fitted to.

    Row ``i`` falls in fold ``i mod folds``; each fold's rows are calibrated by
    :func:`fit_calibration` (keywords ``fit``) fitted to the other folds, and the
    error (:func:`expected_calibration_error`, ``ece_bins`` bins) is that of these
    held-out values over all rows.  The error of a map on the rows it was fitted
    to is optimistic (an isotonic fit or a fine spline follows the labels' noise).
    NaN with fewer than two rows.
    """
    score = np.asarray(score, dtype=float)
    reward = np.asarray(reward, dtype=float)
    weight = np.ones_like(score) if weight is None else np.asarray(weight, dtype=float)
    folds = min(folds, score.size)
    if folds < 2:
        return float("nan")
    fold = np.arange(score.size) % folds
    held_out = np.empty_like(score)
    for k in range(folds):
        test = fold == k
        held_out[test] = fit_calibration(score[~test], reward[~test], weight[~test], **fit)(score[test])
    return expected_calibration_error(held_out, reward, weight, ece_bins)


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
