"""Anytime-valid intervals of a session: its labeled draws turned into a confidence sequence.

Valid under every with-replacement design (``passive``, ``importance``,
``oasis``, ``ais``), static or adaptive (``passive`` under a deterministic
oracle uses the finite-pool sequence of its distinct items): each draw's weight ``p / q`` uses
the proposal fixed before its batch, so ``E[w l | past] = R`` and the
betting sequence of :mod:`labelwise.anytime.ratio` holds uniformly over
batches.  It needs a bound on the weights known in advance: each item's
own weight under a fixed proposal (then the bets carry item side bets and,
under a deterministic oracle, a draw of an item labeled in an earlier batch
counts at those items' known mean increment, :mod:`labelwise.anytime.known_items`), its
largest over the proposals of an ``importance`` session to which systems
were added (each draw keeps the weight of the proposal it came from; no side
bets, whose centring needs one fixed proposal), else the designs' defensive mixture's
(every item has proposal probability at least ``defensive / N``, so
``w <= 1 / defensive``).  Designs without
replacement (``poisson``, ``online-poisson``, ``stratified``) are not
covered: their Horvitz-Thompson terms ``l / pi`` have no useful bound.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING

import numpy as np

from ..designs import Design, Sampler
from ..designs.importance import PassiveSampler, ProposalSampler
from ..designs.mixture import MixtureProposalSampler
from ..estimators import Estimate
from ..measures import Measure
from ..measures.domain import over_judgeable
from ..pool import Pool
from .ratio import RatioSequence

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["DEFAULT_HORIZON", "AnytimeEstimate", "anytime_estimate", "anytime_path", "weight_bound"]

#: Draws the bets are tuned for when the session has no budget.
DEFAULT_HORIZON = 1000


@dataclass(frozen=True)
class _Resumable:
    """A session's sequence over its rows up to the start of the latest batch seen, to resume from.

    ``rows`` holds those rows (losses, weights, counts, batches, items), ``lower``, ``upper`` and ``emptied``
    the intervals after each of their batches; ``pool`` and ``bound`` the pool and weight bound the sequence
    started from.
    """

    sequence: RatioSequence
    rows: tuple[np.ndarray, ...]
    lower: np.ndarray
    upper: np.ndarray
    emptied: np.ndarray
    pool: Pool
    bound: float | np.ndarray

    def resumes(self, rows: tuple[np.ndarray, ...], pool: Pool, bound: float | np.ndarray) -> bool:
        """Whether ``rows`` begin with this sequence's rows, whole batches of them, on the same pool and bound."""
        n, batches = self.sequence.n_rows, rows[3]
        return (pool is self.pool and np.array_equal(bound, self.bound) and len(batches) > n
                and (n == 0 or batches[n] != batches[n - 1])
                and all(np.array_equal(new[:n], old) for new, old in zip(rows, self.rows)))


# per session and sequence settings (measure, level, horizon, mode): the sequences to resume from (after the
# latest batch seen, and before it in case that batch grows), so a session followed batch by batch (run_until,
# the serve stop rule) costs its new draws only
_resumable: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: sequence settings kept per session (a measure without a spec hashes by identity: bound the cache)
KEPT_SETTINGS = 8


def weight_bound(sampler: Sampler, design: Design | None = None) -> float | np.ndarray:
    """The largest weight ``p / q`` the sampler can give: each item's ``1 / (N q)`` under a fixed proposal, its
    largest over the proposals drawn from when systems were added (shape (N,) both), else ``1 / defensive``
    for every item.

    ``design`` is the sampler's design (a session's ``design``), which the refusal below names; by default the
    sampler's own, where it keeps one.

    Raises
    ------
    ValueError
        For designs without replacement or without a defensive mixture (no bound).
    """
    design = design or getattr(sampler, "design", None)
    if isinstance(sampler, MixtureProposalSampler):  # each draw carries the weight of its own proposal
        return 1.0 / (sampler.pool.n_items * sampler.proposals.min(axis=0))
    if isinstance(sampler, ProposalSampler):  # a fixed proposal: each item's own weight
        return 1.0 / (sampler.pool.n_items * sampler.q)
    defensive = getattr(sampler, "defensive", None)
    if defensive is None and design is not None and getattr(design, "with_replacement", False):
        defensive = getattr(design, "defensive", None)
    if not defensive:
        name = getattr(design, "name", type(sampler).__name__)
        raise ValueError(f"anytime intervals need a with-replacement design whose weights are bounded, and this "
                         f"session's design is {name!r}: start the session with --design passive or importance "
                         f"(or oasis, or ais with defensive > 0)")
    return 1.0 / float(defensive)


def _one_proposal(sampler: Sampler) -> bool:
    """Whether every draw came from one fixed proposal, which the item side bets are centred by: not so once a
    system added to an ``importance`` session changed the proposal."""
    return isinstance(sampler, ProposalSampler) and (
        not isinstance(sampler, MixtureProposalSampler) or bool(np.all(sampler.proposals == sampler.q)))


def anytime_path(session: Session, measure: Measure | None = None, level: float | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The confidence sequence after every batch of the session's labeled draws.

    Asked again after further batches, the sequence resumes from where it stood after the latest batch it
    saw (or before it, if that batch has grown since; the rows before unchanged), so following a session batch
    by batch costs its new draws only; the intervals are those of a recomputation from the first label, bit
    for bit.

    Returns
    -------
    labels : ndarray of int, shape (B,)
        Draws (counted with repeats; distinct items for ``passive`` under a deterministic oracle, whose
        sequence is the finite-pool one) by the end of each batch.  Under a deterministic oracle a
        with-replacement design's batch counts once all its draws are labeled.
    lower, upper : ndarray, shape (B, m)
        The whole range where the sequence is empty.
    emptied : ndarray of bool, shape (B, m)
        Where the sequence has excluded every value (its running intersection is empty).
    """
    sample = session.sample()
    target = measure or session.measure
    if sample.excluded is not None:
        target = over_judgeable(target)
    bound = weight_bound(session.sampler, session.design)
    level = session.level if level is None else level
    d = sample.draws
    if len(d) == 0:
        return _no_batch(target.size)
    losses = session.sampler.losses(target, sample)
    horizon = session.budget or DEFAULT_HORIZON
    finite = isinstance(session.sampler, PassiveSampler) and not session.stochastic and sample.excluded is None
    if finite:  # the first draws of the items: a uniform sample without replacement, in draw order
        rows = np.sort(np.unique(d.items, return_index=True)[1])
    elif session.stochastic:  # every row is one draw, in draw order: the bets may follow every row
        rows = np.arange(len(d))
    else:  # a batch's rows are not in draw order (repeated draws aggregated): whole batches only
        per_batch = np.bincount(session.draws.round)
        rows = np.flatnonzero(np.bincount(d.round, minlength=per_batch.size)[d.round] == per_batch[d.round])
        if rows.size == 0:
            return _no_batch(target.size)
    counts, rounds = (np.ones(rows.size, int) if finite else d.count[rows]), d.round[rows]
    ends = np.r_[np.flatnonzero(np.diff(rounds)), rows.size - 1]
    side_bets = _one_proposal(session.sampler)
    key = (target, level, horizon, finite, session.stochastic, side_bets)
    kept = _resumable.setdefault(session, {})
    table = (losses[rows], d.weight[rows], counts, rounds, d.items[rows])
    start = next((k for k in kept.get(key, ()) if k.resumes(table, session.pool, bound)), None)
    if start is not None:
        sequence, lower, upper, emptied = start.sequence, start.lower, start.upper, start.emptied
    else:
        sequence = RatioSequence.start(target, session.pool, bound, level, horizon, without_replacement=finite,
                                       per_row=session.stochastic, side_bets=side_bets,
                                       known_labels=not session.stochastic)
        _, lower, upper, emptied = _no_batch(target.size)
    latest = ends[-2] + 1 if ends.size > 1 else 0  # the latest batch's first row
    states = []
    for stop in (latest, rows.size):  # up to the latest batch, then through it
        sequence, *new = sequence.advance(*(column[sequence.n_rows:stop] for column in table))
        lower, upper, emptied = (np.vstack([old, more]) for old, more in zip((lower, upper, emptied), new))
        states.insert(0, _Resumable(sequence, tuple(column[:stop] for column in table), lower, upper, emptied,
                                    session.pool, bound))
    if key not in kept and len(kept) >= KEPT_SETTINGS:
        kept.pop(next(iter(kept)))
    kept[key] = tuple(states)  # after the latest batch first
    return np.cumsum(counts)[ends], lower, upper, emptied


def _no_batch(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`anytime_path` before any batch has entered the sequence."""
    return np.zeros(0, dtype=np.int64), np.empty((0, m)), np.empty((0, m)), np.zeros((0, m), dtype=bool)


@dataclass(frozen=True)
class AnytimeEstimate(Estimate):
    """An estimate whose interval is the anytime-valid one; ``emptied`` names the components whose sequence
    has excluded every value (their interval is then the whole range).  JSON: ``sequence_emptied``."""

    emptied: tuple[str, ...] = ()

    def to_dict(self, level: float | None = None) -> dict:
        """:meth:`Estimate.to_dict` and ``sequence_emptied``, the names of the components whose sequence is empty."""
        return {**super().to_dict(level), "sequence_emptied": list(self.emptied)}


def anytime_estimate(session: Session, measure: Measure | None = None, level: float | None = None) -> Estimate:
    """The session's estimate with its interval replaced by the anytime-valid one (latest batch)."""
    est = session.estimate(measure, level)
    _, lower, upper, emptied = anytime_path(session, measure, est.level)
    if lower.shape[0] == 0:
        lo, hi, empty = est.lower_bound, est.upper_bound, np.zeros(len(est.names), dtype=bool)
    else:
        lo, hi, empty = lower[-1], upper[-1], emptied[-1]
    basis = ("anytime-valid confidence sequence (betting, Waudby-Smith & Ramdas, JRSS-B 2024): holds at every "
             "batch whenever labeling stops")
    fields = {f.name: getattr(est, f.name) for f in dataclass_fields(est) if f.init}
    return AnytimeEstimate(**fields | {"basis": basis},
                           emptied=tuple(n for n, e in zip(est.names, empty) if e)).with_stored_interval(lo, hi)
