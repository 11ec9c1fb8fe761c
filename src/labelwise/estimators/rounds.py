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
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure

__all__ = ["round_weights", "rounds_moments", "rounds_plugin_covariance"]


def round_weights(counts: np.ndarray, gamma: float) -> np.ndarray:
    """Weights ``w_r ∝ n_r m_r^gamma`` of the rounds, summing to one.

    Parameters
    ----------
    counts : ndarray of int, shape (rounds,)
        Labels of each round (``n_r``).
    gamma : float
        Trust in later rounds (0: equal weight per label).
    """
    counts = np.asarray(counts, dtype=float)
    a = counts * np.cumsum(counts) ** gamma
    return a / a.sum()


def rounds_moments(measure: Measure, losses: np.ndarray, rounds: np.ndarray, inclusion: np.ndarray,
                   n_items: int, gamma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Round-weighted estimate of R and the labeled items' part of the covariance of G-hat.

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

    Returns
    -------
    R : ndarray, shape (d,)
    cov_G : ndarray, shape (m, m)
        ``sum_n excess_n u_n u_n^T / N^2`` with ``excess_n = sum_{r <= rho_n}
        w_r^2 (1/b_rn - 1)`` (``rho_n`` item n's round), ``u_n = Dg(R-hat) l_n``.
    weights : ndarray, shape (rounds,)
        The rounds' weights ``w_r``.
    J : ndarray, shape (m, d)
        ``Dg(R-hat)`` with undefined entries zeroed.
    """
    losses = np.asarray(losses, dtype=float)
    rounds = np.asarray(rounds, dtype=np.int64)
    b = np.asarray(inclusion, dtype=float)
    n_rounds = b.shape[1]
    counts = np.bincount(rounds, minlength=n_rounds)
    b_own = b[np.arange(rounds.size), rounds]
    known = np.zeros((n_rounds, losses.shape[1]))  # sum of losses labeled in each round
    sampled = np.zeros_like(known)  # HT sum of each round's sample
    np.add.at(known, rounds, losses)
    np.add.at(sampled, rounds, losses / b_own[:, None])
    before = np.cumsum(known, axis=0) - known
    w = round_weights(counts, gamma)
    R = w @ (before + sampled) / n_items
    J = measure.finite_jacobian(R)
    # an item labeled in round rho was unlabeled (and uncertain) in rounds 0..rho
    per_round = w**2 * (1.0 / b - 1.0)
    excess = np.where(np.arange(n_rounds) <= rounds[:, None], per_round, 0.0).sum(axis=1)
    u = losses @ J.T / n_items
    return R, (u.T * excess) @ u, w, J


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
