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
bet, on a variable whose mean is known).  ``g_i`` pays back the loss beyond
``SIDE_START`` on an item at its worst label, so every factor is at least
``1 - SIDE_START - E_q[g]``; bets are capped where ``E_q[g]`` reaches half of
``1 - SIDE_START``, keeping every factor above ``(1 - SIDE_START) / 2``.

What the side bet costs: it is a fair bet on which item is drawn (it only
adds variance), paid on the rare draws of the heaviest items only when the
bet exceeds ``SIDE_START / max a``.  Where the cap it allows is not above the
plain one, ``BOLDEST`` over the bounds, it stays off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SIDE_START", "SideBets"]

#: Share of the capital a bet risks on an item at its worst label before the side bet pays back the rest.
SIDE_START = 0.95
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
    tail_mass : tuple of ndarray
        Per group, ``q`` summed over its items from each position of ``weights`` on (one entry more).
    group : ndarray of int, shape (N,)
        Group of each item.
    item_weight : ndarray, shape (N,)
        Weight of each item.
    active : ndarray of bool, shape (2, G)
        Where the side bets are on (they allow a larger bet than ``BOLDEST`` over the bounds).
    caps : ndarray, shape (2, G)
        Largest bet size on each side.
    """

    worst: np.ndarray
    weights: tuple[np.ndarray, ...]
    tail_mass: tuple[np.ndarray, ...]
    group: np.ndarray
    item_weight: np.ndarray
    active: np.ndarray
    caps: np.ndarray

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
            The largest size on each side without side bets (``BOLDEST`` over the worst increment allowed).
        """
        if group_losses.shape[0] > MAX_SIDE_GROUPS:
            group_losses, group = group_losses.reshape(1, -1, group_losses.shape[2]), np.zeros_like(group)
        worst = np.stack([np.maximum(-group_losses.min(axis=1), 0.0), np.maximum(group_losses.max(axis=1), 0.0)])
        ws, masses = [], []
        for g in range(worst.shape[1]):
            w = np.sort(weights[group == g])
            ws.append(w)
            masses.append(np.r_[np.cumsum((1.0 / (weights.size * w))[::-1])[::-1], 0.0])
        on = np.ones((2, worst.shape[2]), dtype=bool)
        bets = cls(worst, tuple(ws), tuple(masses), group, weights, on, np.zeros(on.shape))
        heaviest = np.array([w[-1] for w in ws])[None, :, None] * worst  # max a_i per side and group
        with np.errstate(divide="ignore"):
            start = SIDE_START / heaviest.max(axis=1)  # the largest sizes with g = 0
        caps = np.stack([bets._largest(sign, start[side]) for side, sign in ((0, 1.0), (1, -1.0))])
        active = caps > np.stack(plain)
        return cls(worst, tuple(ws), tuple(masses), group, weights, active, np.where(active, caps, np.stack(plain)))

    def reach(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``a_i`` of each drawn item on both sides (shape (n, G) each): its weight times its group's worst loss."""
        rows = self.worst[:, self.group[items]] * self.item_weight[items][None, :, None]
        return rows[0], rows[1]

    def expected(self, bet: np.ndarray) -> np.ndarray:
        """``E_q[g]`` of signed bets (any shape ending in ``G``)."""
        side = (bet < 0).astype(int)
        size = np.abs(bet) * self.active[side, np.arange(bet.shape[-1])]
        total = np.zeros(bet.shape)
        for g, (w, mass) in enumerate(zip(self.weights, self.tail_mass)):
            k = self.worst[side, g, np.arange(bet.shape[-1])] * size  # |lam| k_g(t)
            with np.errstate(divide="ignore"):
                first = np.searchsorted(w, SIDE_START / k, side="right")  # the items with |lam| a_i > SIDE_START
            # over those items, the sum of q_i (|lam| k w_i - SIDE_START), with q_i w_i = 1 / N
            total += k * (w.size - first) / self.group.size - SIDE_START * mass[first]
        return total

    def of_rows(self, bet: np.ndarray, reach_low: np.ndarray, reach_high: np.ndarray) -> np.ndarray:
        """``g`` of each drawn row (shape (n, G)) under bets broadcast against the rows."""
        plus, minus = np.maximum(bet, 0.0) * self.active[0], np.maximum(-bet, 0.0) * self.active[1]
        return (np.maximum(plus * reach_low - SIDE_START, 0.0) + np.maximum(minus * reach_high - SIDE_START, 0.0))

    def _largest(self, sign: float, low: np.ndarray) -> np.ndarray:
        """The largest size on one side whose ``E_q[g]`` is at most ``(1 - SIDE_START) / 2``, searched from
        ``low`` (where ``g`` is zero) up (shape (G,))."""
        eta = (1 - SIDE_START) / 2
        low = np.minimum(low, 1e200)  # a side without losses needs no finite cap
        high = low * 2.0
        for _ in range(20):  # double until E_q[g] is over eta (a side without losses stops at 2^20 times low)
            over = self.expected(sign * high) > eta
            if over.all():
                break
            high = np.where(over, high, high * 2.0)
        for _ in range(40):  # bisection: E_q[g] is nondecreasing in the size
            mid = (low + high) / 2
            ok = self.expected(sign * mid) <= eta
            low, high = np.where(ok, mid, low), np.where(ok, high, mid)
        return low
