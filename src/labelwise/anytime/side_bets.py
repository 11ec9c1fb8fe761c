"""Side bets on which item is drawn, so that the few items of largest weight no longer cap every bet.

A bet ``lam`` linear in the increment keeps the factor ``1 + lam X`` positive
only while ``|lam| < 1 / a_i`` for every item ``i`` that may be drawn, ``a_i``
the largest loss the item's possible labels allow on the side bet against
(``a_i = w_i k_g(t)``: its weight times the worst loss of its group of items
with equal loss vectors).  Under importance sampling the items of largest
weight ``w_i = 1 / (N q_i)`` (a false negative among the items only the
defensive mixture draws) set that cap, although together they are rarely
drawn.

The factor here is

    1 + lam X + g_i - E_q[g],    g_i = max(0, |lam| a_i - SIDE_START),

with a function ``g`` of the drawn item alone, centred by its mean under the
fixed proposal ``q``, known before the draw.  ``E_q[g]`` is subtracted
exactly, so the factor's conditional mean stays ``1 + lam E[X]``: under
``H0(t)`` the capital is still a nonnegative martingale, and Ville's
inequality gives the validity of the sequence as without side bets
(Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 86(1), 2024, sec. 4: the side bet is one more predictable
bet, on a variable whose mean is known).  This needs every draw to come from
that one proposal: after a system was added to an ``importance`` session
the draws came from several, and the bets carry no side bets.  ``g_i`` pays back the loss beyond
``SIDE_START`` on an item at its worst label, so every factor is at least
``1 - SIDE_START - E_q[g]``; bets are capped where ``E_q[g]`` reaches half of
``1 - SIDE_START``, keeping every factor above ``(1 - SIDE_START) / 2``.

What the side bet costs: it is a fair bet on which item is drawn, so it only
loses, ``E_q[g - log(1 + g)] <= E_q[g^2] / 2`` in expected log capital per
draw.  Bets are also capped where that bound, summed over
``max(draws so far, horizon)`` draws, reaches ``SIDE_COST``; the cap is read
off sizes on a geometric grid above the plain cap, so it is predictable.  A
bet within the plain cap, ``BOLDEST`` over the bounds, carries no side bet.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

__all__ = ["SIDE_START", "SideBets"]

#: Share of the capital a bet risks on an item at its worst label before the side bet pays back the rest.
SIDE_START = 0.95
#: Bound on the side bets' expected log cost over the horizon, in nats (the capital must reach log(1 / alpha)).
SIDE_COST = 2.0
#: Sizes tried above the plain cap: ``SIZES`` steps of ``SIZE_STEP`` (up to 64 times it).
SIZE_STEP, SIZES = 2 ** (1 / 8), 48
#: Most item groups kept apart; beyond, one group with the worst losses of all (valid: each item's ``a_i`` grows).
MAX_SIDE_GROUPS = 16


@dataclass(frozen=True)
class SideBets:
    """Item side bets of one component, over its ``G`` candidate values ``t``.

    Attributes
    ----------
    worst : ndarray, shape (2, K, G)
        Per side (0: bets on a positive mean, against low increments; 1: the other side) and item group, the
        largest loss ``k_g(t)`` per unit weight.
    weights : tuple of ndarray
        Per group, the weights ``w_i = 1 / (N q_i)`` of its items, ascending.
    tail_mass, tail_weight : tuple of ndarray
        Per group, ``q`` and ``w`` summed over its items from each position of ``weights`` on (one entry more).
    group : ndarray of int, shape (N,)
        Group of each item.
    item_weight : ndarray, shape (N,)
        Weight of each item.
    plain : ndarray, shape (2, G)
        The largest size on each side without side bets (``BOLDEST`` over the worst increment allowed).
    sizes : ndarray, shape (2, L, G)
        Sizes above ``plain`` (a geometric grid); :attr:`cost` what their side bets cost.
    """

    worst: np.ndarray
    weights: tuple[np.ndarray, ...]
    tail_mass: tuple[np.ndarray, ...]
    tail_weight: tuple[np.ndarray, ...]
    group: np.ndarray
    item_weight: np.ndarray
    plain: np.ndarray
    sizes: np.ndarray

    @classmethod
    def build(cls, group: np.ndarray, group_losses: np.ndarray, weights: np.ndarray,
              plain: tuple[np.ndarray, np.ndarray]) -> SideBets:
        """Side bets from each item's group, the losses per unit weight of each group and the items' weights.

        Parameters
        ----------
        group : ndarray of int, shape (N,)
        group_losses : ndarray, shape (K, C, G)
            Per group, ``num - t den`` of each loss vector its items may take, for every candidate ``t``.
        weights : ndarray, shape (N,)
            ``1 / (N q_i)`` of the fixed proposal ``q``.
        plain : (ndarray, ndarray), shape (G,) each
            The largest size on each side without side bets.
        """
        if group_losses.shape[0] > MAX_SIDE_GROUPS:
            group_losses, group = group_losses.reshape(1, -1, group_losses.shape[2]), np.zeros_like(group)
        worst = np.stack([np.maximum(-group_losses.min(axis=1), 0.0), np.maximum(group_losses.max(axis=1), 0.0)])
        ws = [np.sort(weights[group == g]) for g in range(worst.shape[1])]
        suffix = lambda v: np.r_[np.cumsum(v[::-1])[::-1], 0.0]  # sums from each position on
        masses, tails = [suffix(1.0 / (weights.size * w)) for w in ws], [suffix(w) for w in ws]
        plain = np.minimum(np.stack(plain), 1e200)  # a side without losses needs no finite cap
        sizes = plain[:, None] * SIZE_STEP ** np.arange(1, SIZES + 1)[None, :, None]
        return cls(worst, tuple(ws), tuple(masses), tuple(tails), group, weights, plain, sizes)

    @cached_property
    def proposal(self) -> np.ndarray:
        """``q_i`` of every item (shape (N,)), from its weight ``1 / (N q_i)``; computed once per sequence."""
        return 1.0 / (self.item_weight.size * self.item_weight)

    @cached_property
    def cost(self) -> np.ndarray:
        """``E_q[g^2]`` at each of ``sizes`` (shape (2, L, G)), ``inf`` where ``E_q[g]`` is too large; made
        nondecreasing along the grid, so the affordable sizes are a prefix of it."""
        bets = np.array([1.0, -1.0])[:, None, None] * self.sizes
        cost = np.where(self.expected(bets) <= (1 - SIDE_START) / 2, self.expected(bets, 2), np.inf)
        return np.maximum.accumulate(cost, axis=1)

    def caps(self, seen: np.ndarray, horizon: float) -> np.ndarray:
        """The largest size on each side after ``seen`` draws (shape (r, 1)): the largest grid size whose side bet
        costs at most ``SIDE_COST`` over ``max(seen, horizon)`` draws, or ``plain`` (shape (2, r, G))."""
        budget = 2 * SIDE_COST / np.maximum(seen, max(horizon, 1.0))  # bound on E_q[g^2] per draw
        # the same budget for every row up to the horizon: compare the grid with each distinct one only
        distinct, position = np.unique(budget, return_inverse=True)
        count = np.sum(self.cost[:, :, None, :] <= distinct[:, None], axis=1)  # (2, u, G): a prefix of the grid
        count = count[:, position.ravel()]
        largest = np.take_along_axis(self.sizes, np.maximum(count - 1, 0), axis=1)
        return np.where(count > 0, largest, self.plain[:, None])

    def reach(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``a_i`` of each drawn item on both sides (shape (n, G) each): its weight times its group's worst loss.

        ``items`` has shape (n,), or (n, G) for a different item per candidate (independent runs side by side).
        """
        items = items.reshape(items.shape[0], -1)
        rows = self.worst[:, self.group[items], np.arange(self.worst.shape[2])] * self.item_weight[items][None]
        return rows[0], rows[1]

    def expected(self, bet: np.ndarray, power: int = 1) -> np.ndarray:
        """``E_q[g]`` (or ``E_q[g^2]`` with ``power=2``) of signed bets (any shape ending in ``G``)."""
        side = (bet < 0).astype(int)
        columns = np.arange(bet.shape[-1])
        size = np.where(np.abs(bet) > self.plain[side, columns], np.abs(bet), 0.0)  # within plain: no side bet
        total = np.zeros(bet.shape)
        n = self.group.size
        for g, (w, mass, tail) in enumerate(zip(self.weights, self.tail_mass, self.tail_weight)):
            k = self.worst[side, g, columns] * size  # |lam| k_g(t)
            with np.errstate(divide="ignore"):
                first = np.searchsorted(w, SIDE_START / k, side="right")  # the items with |lam| a_i > SIDE_START
            # over those items, the sum of q_i (|lam| k w_i - SIDE_START)^power, with q_i w_i = 1 / N
            if power == 1:
                total += k * (w.size - first) / n - SIDE_START * mass[first]
            else:
                total += k**2 * tail[first] / n - 2 * SIDE_START * k * (w.size - first) / n + SIDE_START**2 * mass[first]
        return total

    def of_rows(self, bet: np.ndarray, reach_low: np.ndarray, reach_high: np.ndarray) -> np.ndarray:
        """``g`` of each drawn row (shape (n, G)) under bets broadcast against the rows."""
        plus = np.where(bet > self.plain[0], bet, 0.0)
        minus = np.where(-bet > self.plain[1], -bet, 0.0)
        return np.maximum(plus * reach_low - SIDE_START, 0.0) + np.maximum(minus * reach_high - SIDE_START, 0.0)
