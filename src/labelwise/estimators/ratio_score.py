"""A score interval for a ratio of two totals: the variance taken under each hypothesis, not at the estimate.

For ``F = R_1 / R_2`` and a hypothesised value ``t``, ``D(t) = R_1-hat - t R_2-hat``
has mean 0 at the true ratio under any design whose totals are unbiased
(Fieller, "Some problems in interval estimation", J. Royal Statistical
Society B 16(2), 1954).  Fieller's interval divides ``D(t)`` by its variance
estimated from the draws, the delta method by the variance at ``t = F-hat``.
On a pool whose scores understate the positives among the items they call
negatives, both are read off the same few heavy draws: a run that draws few
of them has a high ``F-hat`` *and* a small variance, so the interval misses
exactly where it is off.  The score interval (as Wilson's interval for a
proportion takes ``p0 (1 - p0)`` at each hypothesised ``p0``) takes the
variance of ``D(t)`` *under the hypothesis*:

* the design's variance of ``D(t)`` is a sum over every item of the pool,
  ``V(t) = sum_n a_n d_n(t)^2`` with ``d = l_1 - t l_2`` and ``a_n`` the
  item's design factor: ``1 / (n q_n N^2)`` for ``n`` i.i.d. draws from a
  proposal ``q`` (Marchant & Rubinstein, "Needle in a Haystack", KDD 2021,
  eq. 1 and sec. 3.3.2; the mean term vanishes under the hypothesis);
* labeled items enter at their labels (each once, the hindsight reading of
  ``online-poisson``), the others at the oracle model's leaf rates of
  positives *moved to agree with t*: the pool's total of ``d(t)`` is 0 under
  the hypothesis, and the rates take the smallest move that makes it so,
  ``sum_k (r_k - r-hat_k)^2 / v_k`` with ``v_k`` the variance of the leaf's
  posterior with Jeffreys' half counts added, ``Beta(a_k + 1/2, b_k + 1/2)``
  (so a leaf whose rate the model puts near 0 can still move).

``t`` is in the interval when ``|D(t)| <= z sqrt(V(t))``.
:func:`ratio_score_draws` turns ``H(t) = Phi(-D(t) / sqrt(V(t)))``, which
rises from 0 to 1 in ``t``, into draws of a confidence distribution whose
equal-tailed quantiles are that interval at every level.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr

if TYPE_CHECKING:
    from .result import Estimate

__all__ = ["SCORE_BASIS", "jeffreys_leaf_variance", "ratio_score_draws", "tilted_variance", "with_score_interval"]

#: What an interval that holds the score interval assumes (added to the estimate's own basis).
SCORE_BASIS = ("widened to hold the score interval for the ratio of the two design-based totals (each hypothesised "
               "value's variance taken with the oracle model's leaf rates moved to agree with it), because the "
               "labels contradict the systems' probabilities")

#: Draws of the confidence distribution: its quantiles at ``i / (N_DRAWS - 1)``, so that the linear quantiles an
#: :class:`~labelwise.estimators.Estimate` takes of them land on draws at every level that is a multiple of 1/200.
N_DRAWS = 401
#: Hypotheses on each side of the estimate (geometrically spaced from a twentieth of a standard error).
N_HYPOTHESES = 80


def jeffreys_leaf_variance(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Variance of ``Beta(a + 1/2, b + 1/2)`` for each leaf's posterior ``Beta(a, b)`` of its rate of positives."""
    a, b = positive + 0.5, negative + 0.5
    return a * b / ((a + b) ** 2 * (a + b + 1.0))


def tilted_variance(t: np.ndarray, labeled_losses: np.ndarray, labeled_factor: np.ndarray, unlabeled: np.ndarray,
                    unlabeled_factor: np.ndarray, group_losses: np.ndarray, leaf: np.ndarray, rate: np.ndarray,
                    rate_var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The design variance of ``D(t)`` under each hypothesis ``t``, and whether ``t`` is attainable at all.

    Parameters
    ----------
    t : ndarray, shape (T,)
        Hypothesised ratios.
    labeled_losses : ndarray, shape (L, 2)
        Numerator and denominator losses of every labeled item.
    labeled_factor : ndarray, shape (L,)
        Each labeled item's design factor ``a_n`` (module docstring).
    unlabeled : ndarray, shape (G,)
        Items not labeled yet in each group (a group's items share their losses, leaf and factor).
    unlabeled_factor : ndarray, shape (G,)
        The design factor of an unlabeled item of each group.
    group_losses : ndarray, shape (2, G, 2)
        A group's numerator and denominator losses for label 0 and label 1.
    leaf : ndarray of int, shape (G,)
        The oracle model's leaf of each group.
    rate, rate_var : ndarray, shape (K,)
        Each leaf's rate of positives under the model and the variance that measures its moves.

    Returns
    -------
    variance : ndarray, shape (T,)
        ``sum_labeled a d^2 + sum_groups U a E_t[d^2]`` with the leaf rates moved to agree with ``t``.
    side : ndarray of int, shape (T,)
        0 where the moved rates balance the pool's total of ``d(t)``; -1 where no rates in [0, 1] bring it down
        to 0 (``t`` lies below every ratio the labels allow), +1 where none bring it up (``t`` above them).
    """
    t = np.asarray(t, dtype=float)[:, None]  # (T, 1)
    # the labeled items' sum of d and of a d^2 are linear and quadratic in t: from their sums, in O(L)
    known = labeled_losses.sum(axis=0)
    second_known = (labeled_losses.T * labeled_factor) @ labeled_losses  # (2, 2)
    d0 = group_losses[0, :, 0] - t * group_losses[0, :, 1]  # (T, G)
    move = group_losses[1, :, 0] - t * group_losses[1, :, 1] - d0  # what a positive label adds to d
    K = rate.size
    # (T, K): the total's change per unit of each leaf's rate, the sum over the leaf's groups
    slope = (unlabeled * move) @ (leaf[:, None] == np.arange(K)).astype(float)
    fixed = known[0] - t[:, 0] * known[1] + d0 @ unlabeled  # (T,): the total with every unlabeled item negative
    tolerance = 1e-9 * np.maximum(np.abs(fixed), np.abs(slope).sum(axis=1))
    r = np.broadcast_to(rate, slope.shape).copy()
    # the smallest move sum (r - rate)^2 / rate_var that makes the total 0 is r = rate - gap rate_var slope /
    # sum(rate_var slope^2); a leaf pushed past 0 or 1 stops there and the others close the rest of the gap
    # (each round pins at least one more leaf, so at most K rounds)
    for _round in range(K + 1):
        gap = fixed + np.sum(slope * r, axis=1)
        closing = -np.sign(gap)[:, None] * slope  # > 0 where raising the leaf's rate closes the gap
        free = np.where(closing > 0, r < 1.0, r > 0.0) & (slope != 0)
        weight = np.where(free, rate_var * slope, 0.0)
        norm = np.sum(weight * slope, axis=1)
        open_ = (np.abs(gap) > tolerance) & (norm > 0)
        if not open_.any():
            break
        step = np.divide(gap, norm, out=np.zeros_like(gap), where=open_)
        r = np.clip(r - step[:, None] * weight, 0.0, 1.0)
    gap = fixed + np.sum(slope * r, axis=1)
    side = np.where(np.abs(gap) <= tolerance, 0, np.where(gap > 0, -1, 1))
    r_group = r[:, leaf]  # (T, G)
    second = d0**2 + r_group * ((d0 + move) ** 2 - d0**2)  # E_t[d^2] of an unlabeled item
    t = t[:, 0]
    labeled = second_known[0, 0] - 2 * t * second_known[0, 1] + t**2 * second_known[1, 1]
    return labeled + second @ (unlabeled * unlabeled_factor), side


def ratio_score_draws(R: np.ndarray, scale: float, lower: float, upper: float, **pool) -> np.ndarray:
    """Draws of the score interval's confidence distribution of ``R_1 / R_2`` (module docstring), ``(N_DRAWS, 1)``.

    Parameters
    ----------
    R : ndarray, shape (2,)
        The design-based estimates of the numerator and denominator totals (means over the pool).
    scale : float
        A rough standard error of the ratio (the delta method's): the hypotheses are finest near the estimate.
    lower, upper : float
        The ratio's range.
    **pool
        The arguments of :func:`tilted_variance` after ``t`` (design factors on the scale of ``R``).

    Returns
    -------
    ndarray, shape (N_DRAWS, 1)
        The ``i / (N_DRAWS - 1)`` quantiles of ``H(t) = Phi(-D(t) / sqrt(V(t)))`` (0 below the ratios the
        labels allow, 1 above them): the equal-tailed ``level`` interval of the draws is
        ``{t : |D(t)| <= z sqrt(V(t))}`` up to the spacing of the hypotheses.
    """
    estimate = float(np.clip(R[0] / R[1], lower, upper)) if R[1] > 0 else 0.5 * (lower + upper)
    near = max(float(scale), 1e-6 * (upper - lower)) / 20.0
    reach = np.geomspace(near, max(upper - lower, near), N_HYPOTHESES)
    t = np.unique(np.clip(np.concatenate([estimate - reach, [estimate, lower, upper], estimate + reach]),
                          lower, upper))
    variance, side = tilted_variance(t, **pool)
    D = R[0] - t * R[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        H = np.where(variance > 0, ndtr(-D / np.sqrt(variance)), np.where(D > 0, 0.0, np.where(D < 0, 1.0, 0.5)))
    H = np.maximum.accumulate(np.where(side < 0, 0.0, np.where(side > 0, 1.0, H)))  # non-decreasing in t
    return np.interp(np.linspace(0.0, 1.0, N_DRAWS), H, t)[:, None]


def with_score_interval(est: Estimate, draws: np.ndarray) -> Estimate:
    """``est`` whose interval at every level is the union of its own and the score interval's (``draws``).

    The union's equal-tailed quantiles are, at each ``u < 1/2``, the smaller of the draws' ``u`` quantile and
    ``est``'s lower end at level ``1 - 2u`` (the larger of the upper ones at ``1 - u``); they become the
    estimate's :attr:`~labelwise.estimators.Estimate.posterior`, so :meth:`~labelwise.estimators.Estimate.interval`
    returns the union at any level.
    """
    half = N_DRAWS // 2  # the quantiles u < 1/2 and 1 - u share the level 1 - 2u; the median is the draws'
    with np.errstate(invalid="ignore"):  # level 1 (u = 0): the whole range, through an infinite z
        lo, hi = est.interval(1.0 - 2.0 * np.arange(half)[:, None] / (N_DRAWS - 1))  # every level at once
    union = np.concatenate([np.fmin(draws[:half], lo), draws[half:half + 1], np.fmax(draws[half + 1:], hi[::-1])])
    return replace(est, posterior=union, basis="; ".join(filter(None, (est.basis, SCORE_BASIS))))
