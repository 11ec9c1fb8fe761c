"""``online-poisson`` on score blocks in memory: an engine pool's rounds, so both hand out the same items.

On a binary pool under a deterministic oracle, for a measure of the
systems' predictions and the settings score blocks run
(:func:`~labelwise.engines.online.rounds_refusal`), the in-memory design
runs the rounds of :mod:`labelwise.engines.online` on the pool's blocks
(Yilmaz et al., "Sample Efficient Model Evaluation", 2021, appendix E, with
the oracle model of Marchant & Rubinstein, "Needle in a Haystack", KDD 2021,
sec. 4):

* the model's leaves are the strata of the score of ``design.system`` by
  the cumulative square-root frequency rule on equal-width fine bins
  (:func:`~labelwise.engines.strata.score_strata`), or strata of whole prior
  bins when the scores are too concentrated for it
  (:func:`~labelwise.engines.online.model_strata`); the groups are the
  blocks (prior bin and predictions) within them;
* every round is planned by :class:`~labelwise.engines.online.BlockRounds`
  (Platt recalibration of the blocks' priors, the flat Dirichlet model in
  closed form, the water-filling) from the labels so far;
* block ``g`` gives ``k_g`` items by randomised systematic sampling of the
  blocks, from a generator seeded by the round's seed
  (:func:`~labelwise.engines.round_plan.round_seed` of the session's hash seed),
  and these are the first ``k_g`` of its items not handed out yet in
  increasing ``u = H(key, seed_r)`` (ties by key), a simple random sample
  (:mod:`labelwise.designs.hashed`; the key is the item id, or the position
  for pools with text ids), handed out in
  :func:`~labelwise.engines.round_plan.round_order` (:func:`~labelwise.engines.round_plan.plan_round`);
* the estimate and its interval are :meth:`BlockRounds.estimate`.

So for the same seed an engine pool hands out the same items, round by
round, and gives the same estimates.  Other pools, oracles and settings run
the per-item sampler (:class:`~labelwise.designs.online_poisson.OnlinePoissonSampler`),
and so do sessions written before this draw (their rounds' states are per
(stratum, loss key) group): it is rebuilt from their labels.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from ..draws import Draws, Sample
from ..engines.blocks import blocks_fit, memory_blocks
from ..engines.hashing import generator_seed, uniforms_below
from ..engines.online import (
    BlockRounds,
    RoundLog,
    model_strata,
    rounds_refusal,
)
from ..engines.round_plan import plan_round
from ..engines.source import ScoreArray
from ..engines.strata import score_strata
from ..estimators import Estimate
from ..measures import Measure
from ..pool import Pool
from .base import Sampler, design_scores
from .group_losses import BlockLosses
from .hashed import HashOrder, hash_keys
from .online_poisson import OnlinePoissonDesign, OnlinePoissonSampler

__all__ = ["HashedOnlineSampler", "memory_rounds", "per_item_state", "runs_on_blocks", "sampler_within_blocks"]


def runs_on_blocks(design: OnlinePoissonDesign, pool: Pool, measure: Measure, oracle: str) -> bool:
    """Whether the in-memory ``online-poisson`` runs an engine pool's rounds (module docstring): a binary pool, a
    deterministic oracle, a measure of the predictions and settings the blocks run."""
    return oracle == "deterministic" and rounds_refusal(design) is None and blocks_fit(pool, measure)


def memory_rounds(design: OnlinePoissonDesign, pool: Pool, measure: Measure) -> tuple[BlockRounds, np.ndarray]:
    """The rounds of ``design`` on the blocks of an in-memory binary pool, and the block of every item.

    Raises
    ------
    ValueError
        When the scores span too wide a range for fine bins.
    """
    scores = design_scores(pool, design.system)
    strata = model_strata(score_strata(ScoreArray(scores), "score", design.n_strata, design.name), design.n_strata)
    keys, summary = memory_blocks(pool, None if strata is None else strata.of_scores(scores))
    # block numbers in the narrowest signed type holding them (int16 for up to 32768 blocks): a set-up stays small
    block = np.searchsorted(summary.keys, keys).astype(np.min_scalar_type(-summary.keys.size))
    return BlockRounds(design, summary, measure, pool.system_names, strata), block


class HashedOnlineSampler(Sampler):
    """One in-memory run of :class:`~labelwise.designs.OnlinePoissonDesign` on score blocks (module docstring).

    Attributes
    ----------
    rounds : BlockRounds
    block : ndarray of int, shape (N,)
        Every item's block (index into ``rounds.summary``).
    legacy : OnlinePoissonSampler or None
        The per-item sampler a session written before this draw goes on with.
    """

    def __init__(self, design: OnlinePoissonDesign, pool: Pool, measure: Measure, oracle: str,
                 rng: np.random.Generator, rounds: BlockRounds, block: np.ndarray):
        super().__init__(pool, measure, oracle, rng)
        self.design, self.rounds, self.block = design, rounds, block
        self.members = np.argsort(block, kind="stable").astype(np.min_scalar_type(-block.size))  # block by block
        self.starts = np.concatenate([[0], np.cumsum(rounds.summary.counts)])
        self.hash_seed = generator_seed(rng)
        self._inclusion: list[np.ndarray] = []  # every round's b per block
        self._drawn: list[int] = []  # items every round drew (its first n_new were handed out)
        self._labeled, self._labels = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        self.legacy: OnlinePoissonSampler | None = None
        self.reused_loss = BlockLosses(block)  # other measures' block losses (sample reuse)

    def copy(self, rng: np.random.Generator) -> HashedOnlineSampler:
        """An independent run with the hash seed of ``rng``, sharing the pool's blocks (they never change) and the
        other measures' block losses (a function of the pool: built once for every run of a simulation)."""
        shared = (self.pool, self.measure, self.rounds, self.block, self.members, self.starts, self.reused_loss)
        new = copy.deepcopy(self, memo={id(self.rng): rng, **{id(x): x for x in shared}})
        new.hash_seed = generator_seed(rng)
        return new

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self._labeled = np.concatenate([self._labeled, np.asarray(items, dtype=np.int64)])
        self._labels = np.concatenate([self._labels, np.asarray(labels, dtype=np.int64)])
        if self.legacy is not None:
            self.legacy.observe(items, labels)

    def _log(self, items: np.ndarray, labels: np.ndarray, rounds: np.ndarray) -> tuple[RoundLog, np.ndarray]:
        """The rounds so far with labeled ``items`` in increasing hash key, the order an engine session reads them,
        and that order."""
        by = np.argsort(hash_keys(self.pool)[items], kind="stable")
        return RoundLog(self.block[items[by]].astype(np.int64), labels[by], rounds[by], np.array(self._inclusion),
                        np.array(self._drawn, dtype=np.int64)), by

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        """Round r (module docstring): its first ``n_new`` items; ``labeled`` marks every item handed out."""
        if self.legacy is not None:
            return self.legacy.draw(n_new, labeled)
        round_ = len(self._drawn)
        log, _ = self._log(self._labeled, self._labels, np.zeros(self._labeled.size, dtype=np.int64))

        def members(wanted: np.ndarray, unhanded: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            items = self._first_unhanded(wanted, unhanded, labeled, seed)
            return items, hash_keys(self.pool)[items], self.block[items]

        b, items, blocks = plan_round(self.rounds, log.blocks, log.labels, self.block[np.flatnonzero(labeled)], n_new,
                                      self.hash_seed, round_, members)
        self._inclusion.append(b)
        self._drawn.append(int(items.size))
        b_items = b[blocks[:n_new]]
        return Draws(items[:n_new], 1.0 / b_items, b_items).in_round(round_)

    def _first_unhanded(self, wanted: np.ndarray, unhanded: np.ndarray, handed: np.ndarray, seed: int) -> np.ndarray:
        """The first ``wanted[g]`` items of every block ``g`` not ``handed`` out (``unhanded[g]`` of them), in
        increasing ``H(key, seed)`` (ties by key), block by block.

        Only the blocks asked for are hashed, and only their items under a
        :func:`~labelwise.designs.hashed.covering_bound` of the need are
        sorted (:class:`~labelwise.designs.hashed.HashOrder`).
        """
        keys = hash_keys(self.pool)

        def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            asked = np.flatnonzero(bound)
            sizes = self.starts[asked + 1] - self.starts[asked]
            at = np.repeat(self.starts[asked] - (np.cumsum(sizes) - sizes), sizes) + np.arange(sizes.sum())
            items = self.members[at].astype(np.int64)
            items = items[~handed[items]]
            block = self.block[items].astype(np.int64)
            near, u = uniforms_below(keys[items], seed, bound[block])
            return items[near], u, block[near], keys[items[near]]

        return HashOrder(unhanded, find).first(wanted)[0]

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """:meth:`~labelwise.engines.online.BlockRounds.estimate` of the labeled draws."""
        if self.legacy is not None:
            return self.legacy.estimate(measure, sample, level)
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        log, by = self._log(d.items, sample.labels, d.round)
        rep_loss = self.rounds.block_losses(measure) if measure == self.measure else self.reused_loss(measure, self.pool)
        judged = None if sample.excluded is None else ~sample.excluded[by]
        return self.rounds.estimate(measure, self.losses(measure, sample)[by], log, level, rep_loss, judged)

    def in_hindsight(self) -> HashedOnlineSampler | None:
        """This run with its interval read in hindsight, leaf by leaf on what the rounds drew
        (``variance="conditional"``), for an estimate from the same labels; ``None`` where the interval is read so
        already or is not the mixture's (the per-item sampler of a session written before the blocks).

        The rounds, their labels and the point estimate are shared: only the estimate's variance reads differently.
        """
        if self.legacy is not None or self.design.variance != "mixture":
            return None
        design = replace(self.design, variance="conditional")
        new, new.rounds = copy.copy(self), copy.copy(self.rounds)
        new.design = new.rounds.design = design
        new.rounds.leaves = copy.copy(self.rounds.leaves)
        new.rounds.leaves.design = design
        return new

    def state(self) -> dict:
        """The hash seed and the newest round's ``b`` per block and items drawn."""
        if self.legacy is not None:
            return self.legacy.state()
        return self.states()[-1]

    @property
    def n_rounds(self) -> int:
        """Rounds drawn on the blocks so far."""
        return len(self._drawn)

    def states(self) -> list[dict]:
        """Every round's :meth:`state`."""
        return [{"seed": self.hash_seed, "b_blocks": b.tolist(), "drawn": n} for b, n in zip(self._inclusion,
                                                                                           self._drawn, strict=True)]

    def set_state(self, states: list[dict]) -> None:
        """Restore the rounds; states of a session written before this draw (``b_groups``: per (stratum, loss key)
        group) make the run go on with the per-item sampler, rebuilt from the labels."""
        if any("b_groups" in state for state in states):
            self.legacy = OnlinePoissonSampler(self.design, self.design.group_model(self.pool, self.measure,
                                                                                    self.oracle), self.rng)
            if self._labeled.size:
                self.legacy.observe(self._labeled, self._labels)
            self.legacy.set_state(states)
            return
        mine = [state for state in states if "b_blocks" in state]
        if mine:
            self.hash_seed = int(mine[-1]["seed"])
        self._inclusion = [np.asarray(state["b_blocks"], dtype=float) for state in mine]
        self._drawn = [int(state["drawn"]) for state in mine]


def sampler_within_blocks(design: OnlinePoissonDesign, pool: Pool, measure: Measure, oracle: str,
                          rng: np.random.Generator, blocks: np.ndarray) -> OnlinePoissonSampler:
    """The per-item sampler a session drawn on score blocks goes on with once a system is added: its groups lie
    within the ``blocks`` of every item the earlier rounds drew on (:attr:`HashedOnlineSampler.block`), so each of
    them had one inclusion probability per round (:func:`per_item_state`).

    Adding a system changes the blocks (the prior is the systems' mean), so the rounds after it cannot be an
    engine pool's; an engine session takes no new system.
    """
    sampler = OnlinePoissonSampler(design, design.group_model(pool, measure, oracle, within=blocks), rng)
    sampler.drawn_on = blocks
    return sampler


def per_item_state(state: dict, block_of_group: np.ndarray) -> dict:
    """A round's :meth:`HashedOnlineSampler.state` as :class:`OnlinePoissonSampler` state for groups within the
    blocks (``block_of_group``: the block of every group)."""
    b = np.asarray(state["b_blocks"], dtype=float)[block_of_group]
    return {"sizes": [int(state["drawn"])], "b_groups": [b.tolist()], "pi_groups": [], "betas": [0.0]}
