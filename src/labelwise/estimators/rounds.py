"""Multi-round Poisson sampling: a weighted average of the rounds' unbiased totals.

Yilmaz et al., "Sample Efficient Model Evaluation" (2021), appendix E
(online Bernoulli sampling), generalized.  Round ``r`` samples the items not
yet labeled with inclusion probabilities ``b_rn``; every round gives an
unbiased estimate of the pool's total loss (the summands of eq. 128),

    T_r = (losses of the items labeled before round r) + sum_{n in S_r} l_n / b_rn,

because only the unlabeled part is unknown and round ``r`` samples it with
known probabilities.  The estimate is ``R-hat = sum_r w_r T_r / N`` with
weights fixed in advance, ``w_r ∝ n_r m_r^gamma`` (``n_r`` labels in round
``r``, ``m_r`` labels by its end): eq. 128's equal weights are ``gamma = 0``;
``gamma > 0`` trusts the later, better-informed rounds more.  Weights that
depend on the labels would bias the estimate.

The rounds are martingale differences, so ``cov(R-hat) = sum_r w_r^2
cov(T_r | past) / N^2`` with ``cov(T_r | past) = sum_{n unlabeled before r}
(1/b_rn - 1) u_n u_n^T`` (eq. 25).  :func:`rounds_moments` estimates the
part of the items labeled so far; the part of the items still unlabeled
needs a model of their labels (see the ``online-poisson`` design).

An item's term in round ``r`` is the variance of a jump: drawn with
probability ``b_rn``, it moves ``G-hat`` by ``w_r u_n / b_rn`` to first order
(``u_n = Dg l_n / N``).  Where ``b_rn`` is tiny (an item the model called
certain, reached only by the defensive share) the first-order jump exceeds
the measure's whole range, which the estimate of a bounded measure (F1 can
only fall to 0) cannot: each jump is held to that range
(:func:`held_second_moment`).  Without it, one positive found late in a pool of
millions, after rounds that reached it at ``b ~ 1e-6``, made the interval
``[0, 1]`` (``benchmarks/robustness.py``, 1:100,000 pools).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..measures import Measure

__all__ = ["JumpBound", "bounded_jumps", "held_second_moment", "jump_limit", "round_weights", "rounds_moments",
           "rounds_plugin_covariance"]


class JumpBound(NamedTuple):
    """What holds a draw's first-order jump ``w_r e / b_r`` to the measure's range (module docstring).

    Attributes
    ----------
    inclusion : ndarray, shape (n, rounds)
        ``b`` of each item (or group) in every round.
    weights : ndarray, shape (rounds,)
        ``w_r``.
    span : ndarray, shape (m,)
        Each component's range ``upper - lower`` (``inf`` for an unbounded one: no bound).
    """

    inclusion: np.ndarray
    weights: np.ndarray
    span: np.ndarray


def jump_limit(inclusion: np.ndarray, weights: np.ndarray, span: np.ndarray) -> np.ndarray:
    """The largest ``|Dg l / N|`` whose draw in round ``r`` moves ``G-hat`` by at most the measure's range.

    A draw at inclusion probability ``b`` in a round of weight ``w`` moves
    ``G-hat`` by ``w e / b`` to first order (module docstring), so ``e`` is held to
    ``span b / w``.

    Parameters
    ----------
    inclusion : ndarray, shape (..., rounds)
        ``b`` of each item (or group) in every round.
    weights : ndarray, shape (rounds,)
        ``w_r``.
    span : ndarray, shape (m,)
        Each component's range ``upper - lower`` (``inf`` for an unbounded one: no bound).

    Returns
    -------
    ndarray, shape (..., rounds, m)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(weights[:, None] > 0, span * (inclusion / weights)[..., None], np.inf)


def bounded_jumps(e: np.ndarray, inclusion: np.ndarray, weights: np.ndarray, span: np.ndarray) -> np.ndarray:
    """``e`` ``(n, rounds, m)``, each item's ``Dg(R-hat) (l_n - m_rn) / N`` in every round, clipped to
    :func:`jump_limit` of its inclusion probabilities ``(n, rounds)``."""
    limit = jump_limit(inclusion, weights, span)
    return np.clip(e, -limit, limit)


def held_second_moment(e: np.ndarray, coef: np.ndarray, bound: JumpBound) -> np.ndarray:
    """``sum_n sum_r coef_nr h_nr h_nr^T``, ``h_nr`` the same ``e_n`` in every round held to :func:`jump_limit`.

    The plain ``sum_n (sum_r coef_nr) e_n e_n^T`` corrected on the (item,
    round) pairs where the bound binds only: few, and ``O(n m^2)`` in all.

    Parameters
    ----------
    e : ndarray, shape (n, m)
    coef : ndarray, shape (n, rounds)
    bound : JumpBound
        Its ``inclusion`` of shape ``(n, rounds)``.

    Returns
    -------
    ndarray, shape (m, m)
    """
    total = (e.T * coef.sum(axis=1)) @ e
    with np.errstate(divide="ignore", invalid="ignore"):
        reach = np.max(np.nan_to_num(np.abs(e) / bound.span), axis=1, initial=0.0)  # (n,): 0 for unbounded
    n, r = np.nonzero((coef != 0) & (reach[:, None] * bound.weights > bound.inclusion))
    if n.size:
        limit = jump_limit(bound.inclusion[n, r], bound.weights[r], bound.span)  # (pairs, m)
        held, c = np.clip(e[n], -limit, limit), coef[n, r]
        total = total + (held.T * c) @ held - (e[n].T * c) @ e[n]
    return total


def round_weights(counts: np.ndarray, gamma: float, first_round: int = 0) -> np.ndarray:
    """Weights ``w_r ∝ n_r m_r^gamma`` of the rounds, summing to one.

    Parameters
    ----------
    counts : ndarray of int, shape (rounds,)
        Labels of each round (``n_r``).
    gamma : float
        Trust in later rounds (0: equal weight per label).
    first_round : int
        Rounds before it get weight 0 once a round from it on has labels
        (their labels still enter every later round's total, as known
        losses): fixed before those rounds are drawn, this keeps the
        estimate unbiased.
    """
    counts = np.asarray(counts, dtype=float)
    a = counts * np.cumsum(counts) ** gamma
    if a[first_round:].sum() > 0:
        a[:first_round] = 0.0
    total = a.sum()
    return a / total if total > 0 else np.full(a.size, 1.0 / a.size)  # no labels yet: equal weights


def rounds_moments(measure: Measure, losses: np.ndarray, rounds: np.ndarray, inclusion: np.ndarray,
                   n_items: int, gamma: float, predicted: np.ndarray | None = None,
                   predicted_unlabeled: np.ndarray | None = None, first_round: int = 0,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Round-weighted estimate of R and the labeled items' part of the covariance of G-hat.

    With ``predicted`` (an oracle model's expected losses, fitted before
    each round) every round is a difference estimator (Särndal, Swensson &
    Wretman, "Model Assisted Survey Sampling", 1992, sec. 6.3): the
    prediction for every unlabeled item plus the Horvitz-Thompson sum of
    the residuals,

        T_r = (losses labeled before r) + sum_{n unlabeled at r} m_rn + sum_{n in S_r} (l_n - m_rn) / b_rn,

    unbiased whatever the model, since ``m_r`` is fixed before round ``r``
    draws; its variance has the residuals ``l_n - m_rn`` where the plain
    estimator has ``l_n`` (components the model knows, such as the
    predictions' count in F1, then cost nothing).

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (n, d)
        Losses of the labeled items, each labeled once.
    rounds : ndarray of int, shape (n,)
        Round (0, 1, ...) in which each item was labeled.
    inclusion : ndarray, shape (n, rounds)
        ``inclusion[i, r]``: item i's inclusion probability in round r, for
        every round up to its own (later entries are ignored).
    n_items : int
        Pool size ``N``.
    gamma : float
        Round weights (:func:`round_weights`).
    predicted : ndarray, shape (n, rounds, d), optional
        ``m_rn``: item n's expected loss under round r's model (entries
        after its own round are ignored).  ``None``: zero (Horvitz-Thompson).
    predicted_unlabeled : ndarray, shape (rounds, d), optional
        Sum of ``m_rn`` over the items unlabeled at the start of round ``r``
        (required with ``predicted``).
    first_round : int
        Rounds before it get weight 0 once a later one has labels (:func:`round_weights`).

    Returns
    -------
    R : ndarray, shape (d,)
    cov_G : ndarray, shape (m, m)
        ``sum_n sum_{r <= rho_n} w_r^2 (1/b_rn - 1) e_rn e_rn^T / N^2`` with
        ``e_rn = Dg(R-hat) (l_n - m_rn)`` (``rho_n`` item n's round), held to the measure's range
        (:func:`bounded_jumps`).
    weights : ndarray, shape (rounds,)
        The rounds' weights ``w_r``.
    J : ndarray, shape (m, d)
        ``Dg(R-hat)`` with undefined entries zeroed.
    """
    losses = np.asarray(losses, dtype=float)
    rounds = np.asarray(rounds, dtype=np.int64)
    b = np.asarray(inclusion, dtype=float)
    n, n_rounds = b.shape
    own = np.arange(n)
    own_prediction = 0.0 if predicted is None else predicted[own, rounds]
    counts = np.bincount(rounds, minlength=n_rounds)
    known = np.zeros((n_rounds, losses.shape[1]))  # sum of losses labeled in each round
    sampled = np.zeros_like(known)  # HT sum of each round's residuals
    np.add.at(known, rounds, losses)
    np.add.at(sampled, rounds, (losses - own_prediction) / b[own, rounds][:, None])
    before = np.cumsum(known, axis=0) - known
    if predicted_unlabeled is not None:
        before = before + predicted_unlabeled
    w = round_weights(counts, gamma, first_round)
    R = w @ (before + sampled) / n_items
    J = measure.finite_jacobian(R)
    # an item labeled in round rho was unlabeled (and uncertain) in rounds 0..rho
    coef = np.where(np.arange(n_rounds) <= rounds[:, None], w**2 * (1.0 / b - 1.0), 0.0)  # (n, rounds)
    span = measure.upper - measure.lower
    if predicted is None:  # the same residual l_n in every round
        return R, held_second_moment(losses @ J.T / n_items, coef, JumpBound(b, w, span)), w, J
    e = bounded_jumps((losses[:, None, :] - predicted) @ J.T / n_items, b, w, span)  # (n, rounds, m)
    return R, np.einsum("nr,nri,nrj->ij", coef, e, e), w, J


def rounds_plugin_covariance(u: np.ndarray, rounds: np.ndarray, inclusion: np.ndarray,
                             weights: np.ndarray) -> np.ndarray:
    """Design-based estimate of ``cov(R-hat)`` projected by ``Dg``: no model of the unlabeled items.

    ``sum_r w_r^2 sum_{n in S_r} (1 - b_rn) / b_rn^2 u_n u_n^T``: each round's
    inner sum is the Horvitz-Thompson estimate of ``cov(T_r | past)`` under
    Poisson sampling (Yilmaz et al. 2021, eq. 25), unbiased for it and
    conservative for a fixed-size sample.  It misses what no round sampled
    (a rare positive among items of tiny ``b``), so it is a floor, not the
    interval.

    Parameters
    ----------
    u : ndarray, shape (n, m)
        ``Dg(R-hat) l_n / N`` of the labeled items.
    rounds : ndarray of int, shape (n,)
        Round in which each item was labeled.
    inclusion : ndarray, shape (n,)
        Each item's inclusion probability in its round.
    weights : ndarray, shape (rounds,)
        The rounds' weights (:func:`round_weights`).
    """
    b = np.asarray(inclusion, dtype=float)
    coef = np.asarray(weights)[np.asarray(rounds)] ** 2 * (1.0 - b) / b**2
    return (u.T * coef) @ u
