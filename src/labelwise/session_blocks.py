"""The estimates of the systems an ``online-poisson`` session had before each of its added systems.

Until its first system is added, an ``online-poisson`` session draws its rounds on score blocks and estimates
with the rounds' engine (:class:`~labelwise.designs.hashed_online.HashedOnlineSampler`: the blocks' leaf model
for the unlabeled items).  Adding a system moves it to the per-item sampler on groups within those blocks
(:func:`~labelwise.designs.hashed_online.sampler_within_blocks`), whose interval for the items not labeled yet
comes from a model on the finer groups (:class:`~labelwise.designs.online_poisson.OnlinePoissonSampler`), and
every later addition starts that sampler again on groups finer still, with a model of the extended pool (its
prior is the systems' mean) that weights only the rounds drawn since for the new system
(:mod:`labelwise.session_systems`).

Between two additions -- an *epoch* -- the session's sampler is fixed; epoch 0 is the blocks' rounds, epoch
``j`` the per-item sampler started at the ``j``-th addition.  The labels and their inclusion probabilities are
the same in all of them -- each group lies in one group (or block) of every earlier epoch and had its
probability in every round drawn before -- so each epoch's sampler is rebuilt exactly from the current one's
states and the labels.  A measure of some systems is estimated by the epoch of its newest label or, if later,
the epoch in which its systems were all in the session: while no label comes from a round drawn since an
addition, that addition leaves the estimates and intervals of the systems it found as they were -- the first
systems' (the blocks' rounds) and those added before it.  Each sampler weights, for a measure of some systems,
the rounds from its newest system's addition on -- every round for the first systems -- not only those since
its own start: the rounds drawn for a system reached its items with the probabilities its measure asked for.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .designs import Sampler
from .designs.hashed_online import sampler_within_blocks
from .draws import Sample
from .estimators import Estimate
from .measures import CombinedMeasure, Measure, combine, measure_from_spec

if TYPE_CHECKING:
    from .session import Session

__all__ = ["BEFORE", "addition_record", "blocks_estimate"]

#: Attribute of the per-item sampler holding one ``{"systems", "rounds", "measure"}`` per added system, in order:
#: the systems, the rounds drawn and the measure's spec just before it was added.
BEFORE = "before"

# every epoch's sampler rebuilt per current sampler, {epoch: (labels it observed, sampler)}: each is a pass over
# the pool (the score blocks, or a group model and the labels replayed)
_rebuilt: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def addition_record(session: Session) -> list[dict]:
    """What :data:`BEFORE` holds for a sampler started by adding a system to ``session`` now."""
    return [*getattr(session.sampler, BEFORE, []), {"systems": session.pool.n_systems, "rounds": session.stage,
                                                     "measure": session.measure.spec()}]


def _systems(measure: Measure) -> set[int] | None:
    """The systems ``measure`` is of (``None``: not known from its spec)."""
    spec = measure.spec()
    parts = None if spec is None else spec.get("combine", [spec])
    if parts is None or any(not isinstance(part.get("system"), int) for part in parts):
        return None
    return {part["system"] for part in parts}


def blocks_estimate(session: Session, measure: Measure, sample: Sample, level: float) -> Estimate | None:
    """``measure``'s estimate with each part of systems from before an addition by the epoch of its newest label
    or the epoch its systems joined, whichever is later, and once that is the current epoch by the current
    sampler weighting the rounds from its newest system's addition on (module docstring); ``None`` when every
    part is the current sampler's as it stands.

    Where parts come from several samplers, the covariance is the current sampler's with the rows and columns
    of the others' parts scaled to their standard errors (the correlations kept, so the matrix stays positive
    semi-definite).
    """
    sampler = session.sampler
    additions = getattr(sampler, BEFORE, None)
    if not additions or not len(sample.draws):
        return None
    K = len(additions)
    rounds = np.array([a["rounds"] for a in additions])
    systems = np.array([a["systems"] for a in additions])
    newest = int(np.searchsorted(rounds, sample.draws.round.max(), side="right"))  # the epoch of the newest label
    parts = measure.parts if isinstance(measure, CombinedMeasure) else (measure,)
    current = (K, sampler.first_round)
    by = []  # (epoch, first round weighted) of every part
    for part in parts:
        joined = None if (s := _systems(part)) is None else int(np.searchsorted(systems, max(s), side="right"))
        by.append(current if joined is None else (max(newest, joined), 0 if joined == 0 else int(rounds[joined - 1])))
    if set(by) == {current}:
        return None
    if len(set(by)) == 1:
        return _source(session, additions, *by[0]).estimate(measure, sample, level)
    est = sampler.estimate(measure, sample, level)
    value, defined, std = est.value.copy(), est.defined.copy(), est.std.copy()
    starts = np.cumsum([0, *(p.size for p in parts)])
    for key in set(by) - {current}:
        these = [k for k, b in enumerate(by) if b == key]
        at = np.concatenate([np.arange(starts[k], starts[k + 1]) for k in these])
        old = _source(session, additions, *key).estimate(combine(*(parts[k] for k in these)), sample, level)
        value[at], defined[at], std[at] = old.value, old.defined, old.std
    scale = np.divide(std, est.std, out=np.zeros(std.size), where=est.std > 0)
    cov = est.cov * np.outer(scale, scale)
    diagonal = np.arange(std.size)
    cov[diagonal, diagonal] = std ** 2  # where the current standard error was 0, the epoch's alone
    return replace(est, value=value, defined=defined, cov=cov)


def _source(session: Session, additions: list[dict], epoch: int, first_round: int) -> Sampler:
    """The sampler of ``epoch`` weighting the rounds from ``first_round`` on (each round's total is unbiased for
    every system and the weights are fixed by the rounds' sizes, so any first round keeps the estimate unbiased;
    the blocks' rounds of epoch 0 weight them all)."""
    sampler = session.sampler if epoch == len(additions) else _epoch_sampler(session, additions, epoch)
    if epoch == 0 or sampler.first_round == first_round:
        return sampler
    sampler = copy.copy(sampler)  # shares the model and the rounds, read only
    sampler.first_round = first_round
    return sampler


def _epoch_sampler(session: Session, additions: list[dict], epoch: int) -> Sampler:
    """The sampler of ``epoch`` (module docstring), rebuilt once per current sampler and, after epoch 0, per
    number of labels."""
    sampler = session.sampler
    rebuilt = _rebuilt.setdefault(sampler, {})
    seen = 0 if epoch == 0 else session.n_labels
    if rebuilt.get(epoch, (None,))[0] != seen:
        rebuilt[epoch] = (seen, _blocks_sampler(session, additions[0]) if epoch == 0 else
                          _per_item_sampler(session, additions, epoch))
    return rebuilt[epoch][1]


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


def _per_item_sampler(session: Session, additions: list[dict], epoch: int) -> Sampler:
    """The per-item sampler started at addition ``epoch - 1``: groups within the same blocks for the systems and
    measure it had, the rounds drawn until addition ``epoch`` with each of its groups' probabilities (read at a
    member of the group: the current groups refine it), weighting the rounds from its own addition on, and the
    session's labels."""
    from .session_systems import first_systems, replay

    sampler, until = session.sampler, additions[epoch]["rounds"]
    old = sampler_within_blocks(session.design, first_systems(session.pool, additions[epoch]["systems"]),
                                measure_from_spec(additions[epoch]["measure"]), session.oracle,
                                np.random.default_rng(0), sampler.drawn_on)
    replay(session, old)
    current = sampler.gm.groups.of_item[old.gm.groups.rep]  # the current group of every one of its groups
    rounds = sampler.states()[0]
    old.set_state([{"sizes": rounds["sizes"][:until], "betas": rounds["betas"][:until],
                    **{key: [np.take(np.asarray(v), current, axis=0).tolist() for v in rounds[key][:until]]
                       for key in ("b_groups", "pi_groups")},
                    "first_round": additions[epoch - 1]["rounds"]}])
    return old
