"""Betting confidence sequences for the mean of importance-weighted, bounded increments.

Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 86(1), 2024 ("WSR" below).  For every candidate value
``t`` of a linear target, increments ``X_j(t)`` have conditional mean 0
under the null ``H0(t)`` given the past, and lie in known bounds
``[low_j(t), high_j(t)]`` (with a bound ``W`` on the importance weights).
The capital process

    K_n(t) = prod_j (1 + lam_j X_j(t))

is a nonnegative martingale under ``H0(t)`` whenever each bet ``lam_j`` is
fixed before draw ``j`` (predictable) and keeps every factor positive
(``-1 / high < lam_j < 1 / |low|``): each factor has conditional mean one.
By Ville's inequality ``P(sup_n K_n(t) >= 1/alpha) <= alpha``, so the set of
``t`` whose capital has never reached ``1/alpha`` is a confidence sequence:
it holds uniformly over every batch, whatever rule decides when to stop.

The bet is a predictable mixture of a bet on each side (signed, like the
bets of WSR's aGRAPA):
``lam_j = pi_j lam+_j - (1 - pi_j) lam-_j`` with ``pi_j = Phi(SPLIT z_j)``,
``z_j`` the t-statistic of the earlier increments' mean (no bet before any).
A candidate far from the truth soon has all its capital on the side that
wins, so the sequence needs capital ``1/alpha`` where WSR's hedged process
``(K+ + K-) / 2`` (their eq. 26) needs ``1/alpha`` on one side, i.e.
``2/alpha`` (the widths are compared in ``benchmarks/anytime_stopping.py``).
The split is sharper than ``Phi(z_j)`` because under importance weights
the two sides' sizes may differ by an order of magnitude (the pseudo-
observation below holds the side against heavy items down): with
``Phi(z_j)``, a candidate below the truth whose earlier increments favoured
the small side at ``z`` near 0.7 still had a net bet on the other side, and
lost capital for hundreds of draws.  Any predictable ``pi_j`` in ``[0, 1]``
keeps the validity below.

Each side's size is the predictable plug-in of WSR eq. (27),
``lam = sqrt(2 log(1/alpha) / (sigma2 h))``, with ``h`` a planned number of
draws (the session's budget): the sequence is then narrowest near ``h`` and
stays valid before and after.  ``sigma2`` is the running variance of the
earlier increments with, as in WSR, one pseudo-observation: theirs is the
widest variance the bounds allow, ``((high - low) / 2)^2``; here it is each
side's own worst case, ``low^2`` for the bet against low increments and
``high^2`` for the other.  Importance-weighted bounds come from the largest
weight, far beyond the increments' spread, and only the side that bound
threatens is held down; and a rare increment at its bound (a false negative in a small
passive sample) that no earlier draw showed is still allowed for.

Each side's size is truncated so that no factor can fall below
``1 - BOLDEST``, whatever the increment within its bounds, and so that none
of the increments seen so far would have cost more than :data:`TRUNCATION`
of the capital (WSR's truncation ``c``, made predictable).  Bounds
that come from the largest importance weight are rarely approached: there
the bets may grow to ``BOLDEST / |low|`` instead of ``TRUNCATION / |low|``.
Sizes, ``pi`` and truncation use earlier rows only, so the bet is
predictable, and it lies between ``-BOLDEST / high`` and
``BOLDEST / |low|``: the validity above holds unchanged.

Under a fixed importance proposal the bound ``low`` comes from a few items
of largest weight (a false negative the defensive mixture alone may draw).
There each factor carries an item side bet
(:mod:`labelwise.anytime.side_bets`), a predictable bet on which item is
drawn whose mean under the proposal is known and subtracted: the factor's
conditional mean is unchanged, every factor stays positive, and the bet may
grow beyond ``BOLDEST / |low|`` on the common items.

Bets are fixed per batch when the rows of a batch are not in draw order (a
with-replacement design aggregates an item's repeated draws), else updated
after every row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from .side_bets import SIDE_START, SideBets

__all__ = ["BOLDEST", "SPLIT", "TRUNCATION", "Capital", "bet_on_batches", "boldest_bet", "rejected_by_batch"]

#: Share of the largest bet that keeps every factor nonnegative (WSR's truncation ``c``; they suggest 1/2 or
#: 3/4), here of the worst increment seen so far.
TRUNCATION = 0.75
#: Largest share of the capital a bet may risk on the worst increment the bounds allow.
BOLDEST = 0.99
#: Sharpness of the split between the two sides: ``pi = Phi(SPLIT z)``, ``z`` the earlier increments' t-statistic.
SPLIT = 3.0


@dataclass(frozen=True)
class Capital:
    """Where the betting sequence stands after some batches, for every candidate ``t`` (shape (G,) each).

    Attributes
    ----------
    sum_x, sum_sq : ndarray
        Count-weighted sums of the increments and of their squares (the running variance the bets use).
    seen : float
        Draws so far.
    log_capital : ndarray
        Log capital.
    excluded : ndarray of bool
        Candidates the sequence has excluded.
    lowest, highest : ndarray
        The smallest and largest increments so far (0 before any), which set the bets' truncation.
    """

    sum_x: np.ndarray
    sum_sq: np.ndarray
    seen: float
    log_capital: np.ndarray
    excluded: np.ndarray
    lowest: np.ndarray
    highest: np.ndarray

    @classmethod
    def start(cls, n_candidates: int) -> Capital:
        """Before any draw: no capital at stake, nothing excluded."""
        zeros = np.zeros(n_candidates)
        return cls(zeros, zeros, 0.0, zeros, np.zeros(n_candidates, dtype=bool), zeros, zeros)


def boldest_bet(bound: np.ndarray) -> np.ndarray:
    """``BOLDEST / bound``: the largest bet on one side whose factor stays positive at the worst increment
    (of magnitude ``bound``) the bounds allow."""
    return BOLDEST / np.maximum(bound, np.finfo(float).tiny)


def _truncation(largest: np.ndarray, seen: np.ndarray) -> np.ndarray:
    """The largest bet on one side: at most ``largest`` and ``TRUNCATION / seen``, ``seen`` the magnitude of
    the worst increment so far."""
    return np.minimum(largest, TRUNCATION / np.maximum(seen, np.finfo(float).tiny))


def rejected_by_batch(values: np.ndarray, counts: np.ndarray, batches: np.ndarray, low: np.ndarray,
                      high: np.ndarray, alpha: float, horizon: float, *, per_row: bool = False) -> np.ndarray:
    """For every batch, which candidate values the confidence sequence has excluded so far.

    Parameters
    ----------
    values : ndarray, shape (n, G)
        Increment ``X_j(t)`` of each row ``j`` under each candidate ``t``
        (mean 0 given the past under ``H0(t)``).
    counts : ndarray of int, shape (n,)
        How many identical draws each row stands for.
    batches : ndarray of int, shape (n,)
        Batch of each row, nondecreasing.
    low, high : ndarray, shape (G,) or (n, G)
        Bounds ``low <= X_j(t) <= high`` (of each row), known before the row's batch (before the row
        with ``per_row``), ``low <= 0 <= high``.
    alpha : float
        Error level: ``1 - level``.
    horizon : float
        Planned number of draws the bets are tuned for.
    per_row : bool
        The rows are in draw order: update the bets, and check the capital, after every row.

    Returns
    -------
    ndarray of bool, shape (B, G)
        Row ``b``: whether ``t`` was excluded by the end of the ``b``-th batch
        (the running intersection of the sequence).
    """
    start = Capital.start(values.shape[1])
    return bet_on_batches(start, values, counts, batches, low, high, alpha, horizon, per_row=per_row)[0]


def bet_on_batches(capital: Capital, values: np.ndarray, counts: np.ndarray, batches: np.ndarray, low: np.ndarray,
                   high: np.ndarray, alpha: float, horizon: float, *, per_row: bool = False,
                   side: SideBets | None = None, items: np.ndarray | None = None,
                   shared: np.ndarray | None = None) -> tuple[np.ndarray, Capital]:
    """:func:`rejected_by_batch` resumed from ``capital``, the sequence after earlier batches.

    Batch by batch the arithmetic is that of one pass over all rows, so resuming after every batch gives
    the same exclusions, bit for bit, at the cost of the new rows only.

    With ``side`` (and ``items``, the rows' items as :meth:`~labelwise.anytime.side_bets.SideBets.reach` takes
    them, read batch by batch), each factor carries the item side bet of :mod:`labelwise.anytime.side_bets` and
    the bets are capped by its :meth:`~labelwise.anytime.side_bets.SideBets.caps` instead of ``BOLDEST`` over
    the bounds.  ``shared`` (shape (B, G), with ``side``) is the increment every draw of an item labeled before
    the batch takes (:mod:`labelwise.anytime.known_items`); the bets are also capped so that it costs at most
    ``SIDE_START`` of the capital, as the side bets' items do.

    Returns
    -------
    rejected : ndarray of bool, shape (B, G)
        As :func:`rejected_by_batch`, for the batches of ``values``.
    capital : Capital
        The sequence after the last of them.
    """
    n, G = values.shape
    if n == 0:
        return np.zeros((0, G), dtype=bool), capital
    low, high = np.broadcast_to(np.minimum(low, 0.0), (n, G)), np.broadcast_to(np.maximum(high, 0.0), (n, G))
    cuts = np.flatnonzero(np.diff(batches)) + 1
    starts, stops = np.r_[0, cuts], np.r_[cuts, n]
    tiny = 1e-12 * np.maximum(high - low, np.finfo(float).tiny)
    low, high = np.minimum(low, -tiny), np.maximum(high, tiny)
    threshold = np.log(1.0 / alpha)
    sum_x, sum_sq, seen = capital.sum_x, capital.sum_sq, capital.seen
    log_capital, excluded = capital.log_capital, capital.excluded
    lowest, highest = capital.lowest, capital.highest
    out = np.empty((starts.size, G), dtype=bool)
    for b, (s, e) in enumerate(zip(starts, stops)):
        x, c = values[s:e], counts[s:e, None].astype(float)
        if per_row:  # statistics of every earlier row: exclusive running sums within the batch
            sx = sum_x + np.cumsum(c * x, axis=0) - c * x
            sq = sum_sq + np.cumsum(c * x**2, axis=0) - c * x**2
            k = seen + np.cumsum(c[:, 0]) - c[:, 0]
            lo_seen = np.minimum(lowest, np.vstack([lowest, np.minimum.accumulate(x, axis=0)[:-1]]))
            hi_seen = np.maximum(highest, np.vstack([highest, np.maximum.accumulate(x, axis=0)[:-1]]))
        else:
            sx, sq, k = sum_x[None], sum_sq[None], np.array([seen])
            lo_seen, hi_seen = lowest[None], highest[None]
        k = k[:, None]
        # BOLDEST over the bounds, or the side bets' caps (never below it), and the truncation by what was seen
        largest = (boldest_bet(-low[s:e]), boldest_bet(high[s:e])) if side is None else side.caps(k, horizon)
        cap_plus, cap_minus = _truncation(largest[0], -lo_seen), _truncation(largest[1], hi_seen)
        if shared is not None:  # every factor of a labeled item's draw stays above 1 - SIDE_START - E_q[g] > 0
            cap_plus = np.minimum(cap_plus, SIDE_START / np.maximum(-shared[b], np.finfo(float).tiny))
            cap_minus = np.minimum(cap_minus, SIDE_START / np.maximum(shared[b], np.finfo(float).tiny))
        mean = sx / np.maximum(k, 1.0)
        spread = np.maximum(sq - k * mean**2, 1e-300)  # sum of squared deviations
        scale = 2 * threshold * (k + 1) / np.maximum(k, max(horizon, 1.0))
        size_plus, size_minus = np.sqrt(scale / (spread + low[s:e] ** 2)), np.sqrt(scale / (spread + high[s:e] ** 2))
        plus = ndtr(SPLIT * mean * k / np.sqrt(spread))  # share on mean > 0: Phi(SPLIT t-statistic)
        bet = np.where(k > 0, plus * np.minimum(size_plus, cap_plus) - (1 - plus) * np.minimum(size_minus, cap_minus),
                       0.0)  # nothing before the first increment: the first batch (row) calibrates the bets
        gain = bet * x
        if side is not None:  # the item side bet, centred by its mean under the proposal
            gain = gain + side.of_rows(bet, *side.reach(items[s:e])) - side.expected(bet)
        logs = np.cumsum(c * np.log1p(gain), axis=0) + log_capital
        excluded = excluded | np.any((logs if per_row else logs[-1:]) >= threshold, axis=0)
        out[b] = excluded
        log_capital = logs[-1]
        sum_x, sum_sq, seen = sum_x + np.sum(c * x, axis=0), sum_sq + np.sum(c * x**2, axis=0), seen + c.sum()
        lowest, highest = np.minimum(lowest, x.min(axis=0)), np.maximum(highest, x.max(axis=0))
    return out, Capital(sum_x, sum_sq, seen, log_capital, excluded, lowest, highest)
