"""Draws of items labeled in earlier batches: their known increments replaced by their exact mean.

Under a fixed proposal ``q`` and a deterministic oracle, an item labeled in
an earlier batch has a known loss, so its increment ``w_i x_i(t)`` is known
before it is drawn again.  Let ``K`` be the items labeled before batch ``b``
and ``Q_K = sum_K q_i``.  Every draw of batch ``b`` that falls in ``K``
takes, instead of its own increment, their ``q``-weighted mean

    c_K(t) = sum_K q_i w_i x_i(t) / Q_K = sum_K (num_i - t den_i) / (N Q_K),

and every other draw keeps ``w_i x_i(t)``.  Given the past, a draw is
i.i.d. from ``q`` (the with-replacement designs draw so, one batch's rows
aggregated), so the new increment's conditional mean is
``Q_K c_K + sum_{i not in K} q_i w_i x_i = sum_i x_i / N``: the mean of the
old one, zero under ``H0(t)``.  Why the sequence stays valid whatever the
bets: each factor ``1 + lam X + (side bet)`` has conditional mean
``1 + lam E[X | past]`` for every ``lam`` fixed before the batch, one under
``H0(t)``, and stays positive because ``c_K``, a weighted mean of
increments, lies within their bounds and the bets are capped so that
``lam |c_K|`` stays below ``SIDE_START``
(:func:`~labelwise.anytime.betting.bet_on_batches`).  The capital is then a
nonnegative martingale under ``H0(t)`` for any predictable choice of bets and
of ``K``, and Ville's inequality gives the sequence (Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting", JRSS-B 86(1),
2024, sec. 4).  In the language of the item side bets
(:mod:`labelwise.anytime.side_bets`) this is one more bet on which item is
drawn, ``-lam (w_i x_i - c_K) 1{i in K}``, whose mean under ``q`` is zero and
which is known before the batch because the labels of ``K`` are.

What it buys: the draws of labeled items (under importance sampling the
items the proposal favours, drawn again and again) no longer move the
capital at random, so the increments' variance falls and the bets win
sooner (``benchmarks/anytime_stopping.py``).

Needs one fixed proposal (``q`` of every item) and labels that do not change
between draws of an item: not under a stochastic oracle, whose every draw
of an item carries a fresh label.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["KnownDraws", "LabeledItems"]


@dataclass(frozen=True)
class LabeledItems:
    """The items labeled before the next batch (under a fixed proposal and a deterministic oracle).

    Attributes
    ----------
    labeled : ndarray of bool, shape (N,)
        Whether each item was drawn in an earlier batch.
    count : int
        How many items that is.
    loss_sum : ndarray, shape (d,)
        Their loss vectors summed (each item once).
    mass : float
        Their proposal probabilities summed, ``Q_K``.
    """

    labeled: np.ndarray
    count: int
    loss_sum: np.ndarray
    mass: float

    @classmethod
    def start(cls, n_items: int, dim: int) -> LabeledItems:
        """Before any draw: nothing labeled."""
        return cls(np.zeros(n_items, dtype=bool), 0, np.zeros(dim), 0.0)

    def by_batch(self, losses: np.ndarray, items: np.ndarray, batches: np.ndarray, q: np.ndarray,
                 ) -> tuple[KnownDraws, LabeledItems]:
        """Which rows of the next batches fall on items labeled before their batch, and what those items sum to.

        Parameters
        ----------
        losses : ndarray, shape (n, d)
            Loss of each row's item.
        items : ndarray of int, shape (n,)
        batches : ndarray of int, shape (n,)
            Nondecreasing.
        q : ndarray, shape (N,)
            The fixed proposal.

        Returns
        -------
        draws : KnownDraws
        after : LabeledItems
            The items labeled once these batches are in.
        """
        _, batch = np.unique(batches, return_inverse=True)
        batch = batch.ravel()
        n_batches = int(batch[-1]) + 1
        # each item's first row, if it was not labeled before these batches: from the next batch on it is in K
        _, first = np.unique(items, return_index=True)
        first = first[~self.labeled[items[first]]]
        first_batch = np.full(self.labeled.size, n_batches)
        first_batch[items[first]] = batch[first]
        known = self.labeled[items] | (first_batch[items] < batch)
        # what each batch adds, then running sums excluding the batch itself: what is known before it
        added = lambda v: np.bincount(batch[first], weights=v, minlength=n_batches)
        new_count, new_mass = added(np.ones(first.size)), added(q[items[first]])
        new_loss = np.stack([added(column) for column in losses[first].T], axis=1)
        before = lambda total, new: total + np.cumsum(new, axis=0) - new
        labeled = self.labeled.copy()
        labeled[items] = True
        after = LabeledItems(labeled, self.count + first.size, self.loss_sum + new_loss.sum(axis=0),
                             self.mass + float(new_mass.sum()))
        draws = KnownDraws(known, batch, before(self.count, new_count), before(self.loss_sum, new_loss),
                           before(self.mass, new_mass), first)
        return draws, after


@dataclass(frozen=True)
class KnownDraws:
    """The rows of some batches that fall on items labeled before their batch.

    Attributes
    ----------
    known : ndarray of bool, shape (n,)
        The row's item was labeled before the row's batch.
    batch : ndarray of int, shape (n,)
        Position of each row's batch (0 to B - 1).
    count : ndarray, shape (B,)
        Items labeled before each batch.
    loss_sum : ndarray, shape (B, d)
        Their losses summed.
    mass : ndarray, shape (B,)
        Their proposal probabilities summed, ``Q_K``.
    newly : ndarray of int
        The rows that label an item for the first time (its first row in these batches, the item not labeled
        before them).
    """

    known: np.ndarray
    batch: np.ndarray
    count: np.ndarray
    loss_sum: np.ndarray
    mass: np.ndarray
    newly: np.ndarray

    def shared_increment(self, a: np.ndarray, a0: float, b: np.ndarray, b0: float, grid: np.ndarray,
                         n_items: int) -> np.ndarray:
        """``c_K(t)`` before each batch (shape (B, G)) for the component ``(a.l + a0) / (b.l + b0)`` at candidates
        ``grid``: ``sum_K (num_i - t den_i) / (N Q_K)``; 0 before any item is labeled (no row takes it)."""
        num = self.loss_sum @ a + a0 * self.count
        den = self.loss_sum @ b + b0 * self.count
        scale = n_items * np.where(self.mass > 0, self.mass, np.inf)
        return (num[:, None] - grid * den[:, None]) / scale[:, None]

    def replace(self, values: np.ndarray, shared: np.ndarray) -> np.ndarray:
        """``values`` (shape (n, G)) with each known row's increment replaced by its batch's ``c_K``."""
        return np.where(self.known[:, None], shared[self.batch], values)
