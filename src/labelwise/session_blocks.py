"""The estimates of the systems an ``online-poisson`` session had before its first added system.

Until its first system is added, an ``online-poisson`` session draws its rounds on score blocks and estimates
with the rounds' engine (:class:`~labelwise.designs.hashed_online.HashedOnlineSampler`: the blocks' leaf model
for the unlabeled items).  Adding a system moves it to the per-item sampler on groups within those blocks
(:func:`~labelwise.designs.hashed_online.sampler_within_blocks`), whose interval for the items not labeled yet
comes from a model on the finer groups (:class:`~labelwise.designs.online_poisson.OnlinePoissonSampler`).  The
labels and their inclusion probabilities are the same -- each group lies in one block and had its block's
probability in every round -- so while no label comes from a round drawn since the addition, a measure of the
systems from before it is estimated as before: by the blocks' rounds, rebuilt from the per-item sampler's
states.  Adding a system then leaves those systems' estimates and intervals as they were.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .designs import Sampler
from .draws import Sample
from .estimators import Estimate
from .measures import CombinedMeasure, Measure, combine, measure_from_spec

if TYPE_CHECKING:
    from .session import Session

__all__ = ["BEFORE", "before_first_addition", "blocks_estimate"]

#: Attribute of the per-item sampler holding ``{"systems", "rounds", "measure"}``: the systems, the rounds drawn
#: and the measure's spec at the first addition.
BEFORE = "before"

# the blocks' sampler rebuilt per per-item sampler: its set-up (the score blocks) is a pass over the pool
_rebuilt: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def before_first_addition(session: Session) -> dict:
    """What :data:`BEFORE` records of ``session`` at its first added system (carried on by later ones)."""
    return getattr(session.sampler, BEFORE, None) or {"systems": session.pool.n_systems, "rounds": session.stage,
                                                      "measure": session.measure.spec()}


def _systems(measure: Measure) -> set[int] | None:
    """The systems ``measure`` is of (``None``: not known from its spec)."""
    spec = measure.spec()
    parts = None if spec is None else spec.get("combine", [spec])
    if parts is None or any(not isinstance(part.get("system"), int) for part in parts):
        return None
    return {part["system"] for part in parts}


def blocks_estimate(session: Session, measure: Measure, sample: Sample, level: float) -> Estimate | None:
    """``measure``'s estimate with its parts of the systems from before the first addition by the blocks' rounds,
    while no label of ``sample`` comes from a round drawn since (module docstring); ``None`` when no part is of
    those systems or a label is that recent.

    Parts of later systems keep the per-item sampler's estimate; the covariance is the per-item sampler's with
    the earlier parts' rows and columns scaled to the blocks' standard errors (their correlations kept, so the
    matrix stays positive semi-definite).
    """
    sampler = session.sampler
    before = getattr(sampler, BEFORE, None)
    if before is None or not len(sample.draws) or sample.draws.round.max() >= before["rounds"]:
        return None
    parts = measure.parts if isinstance(measure, CombinedMeasure) else (measure,)
    early = [p for p in parts if (systems := _systems(p)) is not None and max(systems) < before["systems"]]
    if not early:
        return None
    if sampler not in _rebuilt:
        _rebuilt[sampler] = _blocks_sampler(session, before)
    if len(early) == len(parts):
        return _rebuilt[sampler].estimate(measure, sample, level)
    est = sampler.estimate(measure, sample, level)
    blocks = _rebuilt[sampler].estimate(combine(*early), sample, level)
    at = np.concatenate([np.arange(p.size) + sum(q.size for q in parts[:k]) for k, p in enumerate(parts)
                         if any(p is e for e in early)])
    value, defined, sd = est.value.copy(), est.defined.copy(), est.std
    value[at], defined[at] = blocks.value, blocks.defined
    scale = np.ones(sd.size)
    scale[at] = np.divide(blocks.std, sd[at], out=np.zeros(at.size), where=sd[at] > 0)
    cov = est.cov * np.outer(scale, scale)
    cov[at, at] = blocks.std ** 2  # where the per-item standard error was 0, the blocks' alone
    return replace(est, value=value, defined=defined, cov=cov)


def _blocks_sampler(session: Session, before: dict) -> Sampler:
    """The blocks' sampler of the first systems, its rounds' inclusion probabilities per block from the per-item
    sampler's per group (each group lies within one block)."""
    from .session_systems import first_systems

    sampler = session.sampler
    blocks = session.design.start(first_systems(session.pool, before["systems"]), measure_from_spec(before["measure"]),
                                  rng=np.random.default_rng(0), budget=session.budget, oracle=session.oracle)
    block_of_group = sampler.drawn_on[sampler.gm.groups.rep]
    rounds = sampler.states()[0]
    per_block = np.zeros((before["rounds"], int(blocks.block.max()) + 1))
    per_block[:, block_of_group] = rounds["b_groups"][:before["rounds"]]
    blocks.set_state([{"seed": 0, "b_blocks": b.tolist(), "drawn": drawn}
                      for b, drawn in zip(per_block, rounds["sizes"][:before["rounds"]], strict=True)])
    return blocks
