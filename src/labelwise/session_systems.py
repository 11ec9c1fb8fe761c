"""Adding a system to a session: its measures from the labels already in, and the design re-targeted.

Label reuse (Marchant & Rubinstein, "Needle in a Haystack: Label-Efficient
Evaluation under Extreme Class Imbalance", KDD 2021, sec. 3.3.1 on sample
reuse; Chaganty, Paranjape, Liang & Manning, "Importance sampling for
unbiased on-demand evaluation of knowledge base population", EMNLP 2017,
sec. 3, on reusing the labels of earlier systems' proposals): every estimator
of a design weighs a labeled draw by the probability with which it was
drawn, so the same labels estimate any measure -- the new system's too --
without bias, *provided every item on which that measure's loss can be
nonzero had a positive probability at every draw*.  Per design:

* ``passive``, ``importance``, ``oasis`` (``defensive > 0``), ``poisson``
  and ``online-poisson`` (``defensive > 0``: a share of every round is
  spread uniformly over the unlabeled items) give every item a positive
  probability: the new system is always covered.
* ``stratified`` samples each stratum uniformly: covered once every
  stratum has a labeled draw.
* ``ais`` with ``defensive=0`` (its default) gives probability 0 to the
  groups whose loss under the session's measure is zero for every label
  (precision: items the systems predict negative).  If such a group can
  have a nonzero loss for the new system the estimate is reported as not
  covered (:attr:`AddedSystem.uncovered`), never silently biased.

Re-targeting: the design is started again on the pool with the new column,
for the session's measure extended to the new system, and the labels are
replayed into it (``observe``), so later draws go where the extended
measure is uncertain -- where the new system differs from the old ones.
The draws already made keep the probabilities they were drawn with:
``passive``, ``oasis`` and ``ais`` weigh every draw by ``p / q`` at its
own proposal (each draw's weighted loss is unbiased, so old and new draws
average together); ``importance`` weighs every draw by the mixture of its
proposals, old and new (:mod:`labelwise.designs.mixture`: the joint
weights of multiple importance sampling); and the group-indexed states of
``online-poisson`` (each round's inclusion probability per group) and
``ais`` (each batch's proposal per group) are carried to the new groups.
Groups are (score block, loss key) and the extended measure's key refines
the old one (:func:`~labelwise.measures.base.combine_keys`), so every new
group lies inside one old group and inherits its probabilities exactly.
Once a round drawn after the addition has labels, ``online-poisson``'s
estimate of the new system weights only the rounds drawn since (each
round's total takes every earlier label as a known loss, so it stays
unbiased): the earlier rounds reached the new system's items with small
probabilities and would add their variance.  A system added earlier keeps
the rounds from its own addition on, the first systems every round.
Until then, every system the session already had keeps the estimate it
had -- the first systems' by the rounds drawn on score blocks, an added
system's by the sampler started at its addition
(:mod:`labelwise.session_blocks`): adding a system leaves their intervals
as they were.
``poisson`` fixes its whole sample at the first draw: a system is added to
it only before that.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .designs import (
    AISDesign,
    ImportanceDesign,
    PoissonDesign,
    Sampler,
    StratifiedDesign,
)
from .designs.ais import AISSampler
from .designs.hashed import HashDrawn
from .designs.hashed_online import (
    HashedOnlineSampler,
    per_item_state,
    sampler_within_blocks,
)
from .designs.mixture import MixtureProposalSampler
from .designs.online_poisson import OnlinePoissonSampler
from .draws import Draws
from .estimators import Estimate
from .ledger import DrawLedger
from .measures import Measure, combine, measure_from_spec
from .pool import Pool, PoolError
from .pool.system_outputs import SystemOutputs, read_system_outputs, with_system
from .session_blocks import BEFORE, addition_record
from .store.codec import dump_sampler
from .store.systems import store_system, stored_design_states

if TYPE_CHECKING:
    from .session import Session

__all__ = ["AddedSystem", "add_system", "add_system_file", "first_systems", "replay", "resumed_sampler",
           "system_measure"]

#: Design states indexed by group, and the axis of the group in each (carried to the new groups).
_GROUP_STATES = {"online-poisson": {"b_groups": 1, "pi_groups": 1}, "ais": {"q_group": 0}}


@dataclass(frozen=True)
class AddedSystem:
    """A system added to a session, with its estimate from the labels already in.

    Attributes
    ----------
    name : str
    system : int
        Its index among the pool's systems.
    measure : Measure
        The session's measure for this system alone.
    estimate : Estimate
        Of ``measure`` from the labels already in.
    n_labels : int
        Labels reused.
    n_informative : int
        Those on whose items the new system's loss is nonzero (the ones that move its estimate).
    uncovered : str
        Empty when every item the estimate depends on could have been drawn;
        else why not (the estimate may then be biased).
    """

    name: str
    system: int
    measure: Measure
    estimate: Estimate
    n_labels: int
    n_informative: int
    uncovered: str = ""

    @property
    def covered(self) -> bool:
        """Whether the estimate is unbiased: every item it depends on had a positive probability."""
        return not self.uncovered

    def to_dict(self) -> dict:
        """What ``labelwise add-system --json`` prints."""
        return {"system": self.name, "index": self.system, "measure": self.measure.name,
                "labels_reused": self.n_labels, "labels_informative": self.n_informative,
                "covered": self.covered, **({"uncovered": self.uncovered} if self.uncovered else {}),
                **self.estimate.to_dict()}


def system_measure(measure: Measure, system: int, name: str) -> Measure:
    """The measures of ``measure`` (named ones, each for some system) for system ``system`` called ``name``.

    Raises
    ------
    ValueError
        For a user-defined measure (it has no spec to rebuild for another
        system) or a measure not of one system.
    """
    spec = measure.spec()
    if spec is None:
        raise ValueError("the session's measure is user-defined: a new system's measure cannot be derived from it; "
                         "estimate the new system with Session.estimate(measure=...) from a measure you define")
    templates: dict[str, dict] = {}
    for part in spec.get("combine", [spec]):
        if "system" not in part:
            raise ValueError(f"measure {part['measure']!r} is not a measure of one system: it cannot be extended "
                             "to a new system")
        rest = {k: v for k, v in part.items() if k not in ("system", "system_name")}
        templates.setdefault(json.dumps(rest, sort_keys=True), rest)
    return combine(*[measure_from_spec({**t, "system": system, "system_name": name}) for t in templates.values()])


def add_system_file(session: Session, path: str | Path, name: str | None = None,
                    columns: dict[str, str] | None = None) -> AddedSystem:
    """:func:`add_system` with the outputs read from ``path`` (``item_id,pred[,score|prob]``, or the ``columns``
    of :func:`~labelwise.pool.system_outputs.read_system_outputs`; name: the file's stem by default)."""
    outputs = read_system_outputs(path, session.pool, columns)
    try:
        return add_system(session, Path(path).stem if name is None else name, outputs)
    except PoolError as exc:  # outputs the pool's checks reject: say which file holds them
        raise PoolError(f"predictions file {str(path)!r}: {exc}") from None


def add_system(session: Session, name: str, outputs: SystemOutputs) -> AddedSystem:
    """Add a system to ``session`` (see :meth:`labelwise.Session.add_system` and the module docstring).

    Every check runs before anything is written: a rejected call leaves the
    session and its file unchanged.
    """
    with session._writing():
        pool = with_system(session.pool, name, outputs)
        index = pool.n_systems - 1
        own = system_measure(session.measure, index, name)
        measure = combine(session.measure, own)
        if isinstance(session.design, PoissonDesign) and len(session.draws):
            raise ValueError("design 'poisson' fixed its whole sample at its first draw: a system can be added "
                             "to it only before; use online-poisson (the default) to add systems later")
        sampler = session.design.start(pool, measure, rng=session.rng, budget=session.budget,
                                       oracle=session.oracle)
        sampler = _within_drawn_blocks(session, _with_earlier_proposals(session, sampler), pool, measure)
        regroup = _regrouping(session, sampler)
        if session.store is None:
            states = _from_now_on(session, [regroup(s) for s in _memory_states(session.sampler)])
            replay(session, sampler)
            sampler.set_state(states)
            session.ledger.pool = pool
            session.pool, session.measure, session.sampler = pool, measure, sampler
        else:
            from .session_file import _setup_tag

            stages, states = stored_design_states(session.store)
            config = session.store.config()
            added = [*config.get("added_systems", []), {
                "name": name, "system": index, "stage": session.stage, "labels": session.n_labels,
                "created": time.time(), "measure_before": session.measure.spec(),
                "within_blocks": getattr(sampler, "drawn_on", None) is not None}]
            store_system(session.store, pool, {**config, "measure": measure.spec(), "added_systems": added},
                         stages, _from_now_on(session, [regroup(s) for s in states]),
                         _setup_tag() + dump_sampler(sampler))
            # the state a reopened file gives: labels replayed call by call, the carried states restored
            session.__dict__.update(type(session)._resume(session.store, None).__dict__)
    return _report(session, name, index, own)


def _with_earlier_proposals(session: Session, sampler: Sampler) -> Sampler:
    """``importance``: the new proposal drawn from, every draw weighted by the mixture of all the proposals
    (:mod:`labelwise.designs.mixture`); other designs' samplers unchanged."""
    if not isinstance(session.design, ImportanceDesign):
        return sampler
    old = session.sampler
    phases = list(zip(old.starts.tolist(), old.proposals)) if isinstance(old, MixtureProposalSampler) else [
        (0, old.q)]
    return MixtureProposalSampler(sampler.pool, sampler.measure, sampler.oracle, sampler.rng,
                                  [*phases, (session.stage, sampler.q)])


def _drawn_on(sampler: Sampler) -> np.ndarray | None:
    """The score blocks an ``online-poisson`` run drew its rounds on (``None``: per item, or another design)."""
    if isinstance(sampler, HashedOnlineSampler):
        return sampler.block if sampler.legacy is None else None
    return getattr(sampler, "drawn_on", None)


def _within_drawn_blocks(session: Session, sampler: Sampler, pool: Pool, measure: Measure) -> Sampler:
    """``online-poisson``: the per-item sampler from now on, its groups within the blocks the rounds so far drew on
    (:func:`~labelwise.designs.hashed_online.sampler_within_blocks`), or its plain groups for a session drawn per
    item; other designs' samplers unchanged."""
    old = session.sampler
    if not isinstance(old, HashedOnlineSampler) and not isinstance(sampler, HashedOnlineSampler):
        return sampler
    blocks = _drawn_on(old)
    if blocks is None:
        return OnlinePoissonSampler(session.design, session.design.group_model(pool, measure, session.oracle),
                                    session.rng)
    within = sampler_within_blocks(session.design, pool, measure, session.oracle, session.rng, blocks)
    setattr(within, BEFORE, addition_record(session))  # the earlier systems' estimates stay as they were
    return within


def _per_item(sampler: Sampler) -> Sampler:
    """The sampler that holds the rounds (the per-item one of a session written before the score blocks)."""
    return sampler.legacy if isinstance(sampler, HashedOnlineSampler) and sampler.legacy is not None else sampler


def resumed_sampler(session: Session, config: dict) -> Sampler:
    """The sampler of a reopened session whose design set-up was redone: ``importance``'s earlier proposals
    rebuilt from the record of the systems added (each from the pool and measure before the addition);
    ``online-poisson``'s per-item sampler within the blocks its first rounds drew on."""
    added = config.get("added_systems", [])
    if added and added[0].get("within_blocks"):
        first = added[0]
        before = first_systems(session.pool, first["system"])
        blocks = session.design.start(before, measure_from_spec(first["measure_before"]), rng=session.rng,
                                      oracle=session.oracle).block
        within = sampler_within_blocks(session.design, session.pool, session.measure, session.oracle, session.rng,
                                       blocks)
        setattr(within, BEFORE, [{"systems": record["system"], "rounds": record["stage"],
                                  "measure": record["measure_before"]} for record in added])
        return within
    if not added or not isinstance(session.design, ImportanceDesign):
        return session.sampler
    pool, firsts = session.pool, [0, *(record["stage"] for record in added)]
    before = [session.design.proposal(first_systems(pool, record["system"]), measure_from_spec(record["measure_before"]))
              for record in added]
    sampler = session.sampler
    return MixtureProposalSampler(sampler.pool, sampler.measure, sampler.oracle, sampler.rng,
                                  list(zip(firsts, [*before, sampler.q])))


def first_systems(pool: Pool, k: int) -> Pool:
    """``pool`` with its first ``k`` systems."""
    def take(a):
        return None if a is None else a[:, :k]

    return Pool.from_arrays(pool.item_ids, preds=take(pool.preds), scores=take(pool.scores), probs=take(pool.probs),
                            labels=pool.labels, features=pool.features, system_names=pool.system_names[:k],
                            n_classes=pool.n_classes, name=pool.name)


def _regrouping(session: Session, new: Sampler):
    """The map of a stored design state to the new sampler's groups (identity for designs without groups)."""
    axes = _GROUP_STATES.get(session.design.name)
    if not axes:
        return lambda state: state
    old = _per_item(session.sampler)
    if isinstance(old, HashedOnlineSampler):  # its rounds' b per block, to the groups within the blocks
        block_of_group = old.block[new.gm.groups.rep]
        return lambda state: per_item_state(state, block_of_group) if "b_blocks" in state else state
    old_groups, new_groups = old.gm.groups, new.gm.groups
    old_of_new = old_groups.of_item[new_groups.rep]
    if not np.array_equal(old_of_new[new_groups.of_item], old_groups.of_item):
        raise ValueError(f"design {session.design.name!r}: the new system's groups do not refine the design's "
                         "(its score blocks changed); the system cannot be added to this session")

    def regroup(state: dict) -> dict:
        return {key: np.take(np.asarray(value, dtype=float), old_of_new, axis=axes[key]).tolist()
                if key in axes and len(value) else value for key, value in state.items()}

    return regroup


def _from_now_on(session: Session, states: list[dict]) -> list[dict]:
    """``online-poisson``'s states, its estimate weighting only the rounds drawn from now on (once they
    have labels): their totals take every label so far as known, so the rounds drawn for the old measure,
    which reach the new system's items with small probabilities, add none of their variance."""
    sampler = _per_item(session.sampler)
    if not isinstance(sampler, OnlinePoissonSampler | HashedOnlineSampler) or not states:
        return states
    return [*states[:-1], {**states[-1], "first_round": sampler.n_rounds}]


def _memory_states(sampler: Sampler) -> list[dict]:
    """Every batch's design state, as a session file stores them (for sessions without a file); a sampler drawing
    by the item hash gives its last batch's (the hash seed and how far each group's order was used), so the new
    sampler goes on where the old one stopped instead of handing out the items already drawn again."""
    sampler = _per_item(sampler)
    if isinstance(sampler, (OnlinePoissonSampler, HashedOnlineSampler, AISSampler)):  # the states carried
        return sampler.states()
    if isinstance(sampler, HashDrawn):
        return [sampler.state()]
    return []


def replay(session: Session, sampler: Sampler) -> None:
    """Feed the session's labels to ``sampler``, a round of draws at a time, in draw order."""
    ledger, draws = session.ledger, session.draws
    if isinstance(ledger, DrawLedger):
        answered = np.flatnonzero(ledger.draw_labels >= 0)
    else:
        answered = np.sort(ledger.first_draws(draws, np.flatnonzero(ledger.labeled)))
    items = draws.items[answered]
    labels = ledger.label_of(answered, items)
    for chunk in np.split(np.arange(answered.size), np.flatnonzero(np.diff(draws.round[answered])) + 1):
        if chunk.size:
            sampler.observe(items[chunk], labels[chunk])


def _report(session: Session, name: str, index: int, own: Measure) -> AddedSystem:
    """The new system's estimate from the labels in, how many inform it and whether it is covered."""
    sample = session.sample()
    items = sample.draws.items
    moves = own.loss_is_nonzero(session.pool.outputs(items), sample.labels)
    if sample.excluded is not None:
        moves &= ~sample.excluded
    n_informative = int(moves.sum()) if session.stochastic else int(np.unique(items[moves]).size)
    return AddedSystem(name, index, own, session.estimate(own), sample.n_labels, n_informative,
                       _uncovered(session, own, sample.draws))


def _uncovered(session: Session, own: Measure, draws: Draws) -> str:
    """Why some item ``own`` depends on had probability 0 at one of ``draws`` ("" when none did)."""
    design = session.design
    if isinstance(design, StratifiedDesign):
        sizes = session.sampler.sizes
        empty = np.flatnonzero((sizes > 0) & (np.bincount(session.sampler.assignment[draws.items],
                                                           minlength=sizes.size) == 0))
        if empty.size:
            return (f"{empty.size} strata ({int(sizes[empty].sum())} items) have no labeled draw yet: the estimate "
                    "leaves them out until they do")
    if isinstance(design, AISDesign) and design.defensive == 0 and session.sampler.group_proposals:
        gm = session.sampler.gm
        G = gm.groups.n_groups
        can_move = np.any([own.loss_is_nonzero(gm.rep_out, np.full(G, c)) for c in range(gm.n_classes)], axis=0)
        never = np.any([q == 0 for q in session.sampler.group_proposals], axis=0)
        missed = can_move & never & (gm.groups.unlabeled > 0)
        if missed.any():
            return (f"ais with defensive=0 gave probability 0 to {int(gm.groups.unlabeled[missed].sum())} unlabeled "
                    f"items on which {own.name}'s loss can be nonzero; its estimate may be biased (start sessions "
                    "with --param defensive=0.1 to reuse their labels for new systems)")
    return ""
