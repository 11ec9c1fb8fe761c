"""A labeling session: propose -> label -> update -> estimate, resumable from disk.

A :class:`Session` ties a pool, a measure and a design to the labels
gathered so far.  With a ``path`` every draw and every label is written to
a SQLite file (:mod:`labelwise.store`) before it is acknowledged, together
with the random generator's state, so :meth:`Session.open` resumes exactly
where a killed process stopped.  Without a path the session lives in
memory (simulations).

Estimates use the longest prefix of draws whose items are all labeled, so
labels that arrive out of order never bias the estimate: an item skipped by
an annotator (:meth:`Session.skip`) stays a draw of the design and is only
handed out later; the estimate waits for it.  A corrected label
(:meth:`Session.relabel`) replaces the first one in every estimate; the
file keeps both.  An item annotators cannot judge can be excluded from the
population (:meth:`Session.exclude`): estimates are then over the judgeable
items (:mod:`labelwise.session_workflow`).

Every write holds the session file's write lock and first re-reads the file
if another process wrote to it since, so concurrent processes serialize:
each sees the others' draws and labels, and no draw is made twice.  The
design's set-up is stored with the file, so opening a session does not redo
it.

The oracle mode is the session's: under a deterministic oracle an item has
one true label, asked once; under a stochastic oracle (noisy labels,
several annotators) every draw is a label request of its own, an item drawn
twice is labeled twice, and its labels may differ (:mod:`labelwise.ledger`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .designs import Design, Sampler, make_design
from .designs.base import check_oracle
from .draws import Draws, Sample
from .engines.hashing import generator_seed
from .estimators import Estimate, component_counts
from .estimators.census import census_estimate
from .estimators.segment import segment_totals, with_segment
from .estimators.zero_hits import pool_support_terms, with_zero_hits
from .ledger import DrawLedger, LabelError, Ledger, make_ledger, show_id
from .measures import Measure
from .measures.domain import over_judgeable
from .pool import Pool
from .pool.system_outputs import SystemOutputs
from .session_blocks import blocks_estimate
from .session_file import SessionFile
from .session_report import LOSS_RULES
from .session_run import OracleRun
from .session_systems import AddedSystem, add_system
from .session_workflow import HandOut
from .store import Store

if TYPE_CHECKING:
    from .planning import Plan

__all__ = ["LabelError", "Session"]


class Session(HandOut, OracleRun, SessionFile):
    """Pool + measure + design + the labels so far.

    Parameters
    ----------
    pool : Pool
    measure : Measure
        The target measure (it shapes the design); any other measure can be
        estimated from the same labels with ``estimate(measure=...)``.
    design : Design or str
        A design, or a registered name with default settings (``"default"``:
        the design labelwise picks for ``pool``).
    oracle : {"deterministic", "stochastic"}
        ``"stochastic"`` for noisy or several annotators: every draw is
        labeled afresh and the target is the measure's expectation over the
        annotators' answers.
    budget : int, optional
        Labels the session will ask for in total, for designs that plan for
        it (``poisson``); :meth:`run` sets it when nothing was drawn yet.
    seed : int or numpy.random.Generator, optional
        Source of randomness (the only one).
    path : str or Path, optional
        Session file to create; the session is then durable and resumable.
    level : float
        Default confidence level of estimates.
    sampler : Sampler, optional
        A sampler of ``design`` that has seen no label, started for this
        pool, measure, budget and oracle and drawing from ``seed`` (see
        :meth:`Sampler.copy`); by default the session starts one.
    """

    def __init__(self, pool: Pool, measure: Measure, design: Design | str, *, oracle: str = "deterministic",
                 budget: int | None = None, seed=None, path: str | Path | None = None, level: float = 0.95,
                 sampler: Sampler | None = None):
        design = make_design(design, pool, measure) if isinstance(design, str) else design
        self.pool, self.measure, self.design = pool, measure, design
        self.oracle = check_oracle(oracle)
        self.budget = budget
        self.level = float(level)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.ledger: Ledger = make_ledger(oracle, pool)
        self._draw_parts: list[Draws] = []
        self._draws_cache: Draws | None = None
        self.stage = 0
        self.deferred = np.empty(0, dtype=np.int64)  # pool positions of skipped items, latest skip last
        self.store: Store | None = None
        self._revision = 0  # the file's revision this session has read
        self._unsaved_setup: bytes | None = None  # a set-up redone on open, stored by the next write
        if sampler is not None and sampler.rng is not self.rng:
            raise ValueError("sampler: it must draw from the session's generator; pass seed=sampler.rng")
        self.sampler: Sampler = sampler or design.start(pool, measure, rng=self.rng, budget=budget, oracle=oracle)
        if path is not None:
            # the generator's initial state goes in with the file, so a session
            # reopened before its first draw still draws what this one would
            self.store = Store.create(path, pool, {
                "measure": measure.spec(), "design": design.spec(), "oracle": oracle, "budget": budget,
                "level": self.level, "created": time.time(), "hash_seed": generator_seed(self.rng),
                "loss_rules": LOSS_RULES,
            }, rng_state=self.rng.bit_generator.state)
            self._save_setup()

    # ------------------------------------------------------------ queries
    @property
    def draws(self) -> Draws:
        """All draws so far, in order."""
        if self._draws_cache is None:
            self._draws_cache = Draws.concat(self._draw_parts)
            self._draw_parts = [self._draws_cache] if len(self._draws_cache) else []
        return self._draws_cache

    @property
    def stochastic(self) -> bool:
        """Whether every draw is labeled afresh (noisy or several annotators)."""
        return self.oracle == "stochastic"

    @property
    def n_labels(self) -> int:
        """Labels received: distinct items labeled (deterministic oracle) or answered draws (stochastic)."""
        return self.ledger.n_labels

    @property
    def labels(self) -> np.ndarray:
        """Each item's label, -1 while unlabeled (deterministic oracle; the narrowest signed integer type
        holding the classes)."""
        if isinstance(self.ledger, DrawLedger):
            raise AttributeError("a stochastic session has labels per draw, not per item: see sample()")
        return self.ledger.labels

    @property
    def pending_draws(self) -> np.ndarray:
        """Draw numbers (positions in :attr:`draws`) of the rows of :attr:`pending`.

        Under a stochastic oracle a label given with its draw number answers
        that draw, so submitting the same answers twice stores them once
        (see :meth:`add_labels`).  Under a deterministic oracle each pending
        item's first draw.
        """
        return self.ledger.pending(self.draws)

    @property
    def pending(self) -> np.ndarray:
        """Ids of drawn items still waiting for a label, in draw order.

        Under a stochastic oracle an id appears once per draw waiting for a
        label (an item drawn twice needs two labels).
        """
        return self.pool.item_ids[self.draws.items[self.pending_draws]]

    # ---------------------------------------------------------- the loop
    def _draw(self, n: int) -> None:
        """Draw ``n`` new items and store them (inside :meth:`_writing`)."""
        before = self.rng.bit_generator.state
        try:
            draws = self.sampler.draw(n, self._handed_out()).in_round(self.stage)
            if self.store is not None:
                self.store.append_draws(self.stage + 1, draws, self.rng.bit_generator.state, self.sampler.state())
        except BaseException:
            # nothing was stored: rewind the generator so memory matches the file
            self.rng.bit_generator.state = before
            raise
        self.stage += 1
        self._draw_parts.append(draws)
        self._draws_cache = None
        if isinstance(self.ledger, DrawLedger):
            self.ledger.extend(len(draws))

    def add_labels(self, ids: Sequence, labels: Sequence, source: str = "api", draws: Sequence | None = None) -> int:
        """Record labels for drawn items; returns how many were new.

        Every check runs before anything is written, so a rejected call
        stores nothing.  Repeating a stored label is harmless.

        Parameters
        ----------
        ids, labels : sequences of equal length
            Item ids (as returned by :meth:`next_batch`) and their labels.
        source : str
            Where the labels come from (stored with them).
        draws : sequence of int, optional
            The draw each label answers (:attr:`pending_draws`).  Under a
            stochastic oracle this makes a repeated submission harmless: a
            label for a draw already answered the same way is skipped.
            Without it the k-th label of an id answers its k-th pending draw.
            Under a deterministic oracle draws are only checked against ids.

        Raises
        ------
        LabelError
            For length mismatches, unknown ids, labels outside the label set,
            items the design has not proposed, excluded items, draws that are not of the
            item given, and labels that contradict a stored one (or each
            other): per item under the deterministic oracle, per draw under
            the stochastic one.
        """
        ids, pos, y = self._checked(ids, labels)
        if len(ids) == 0:
            return 0
        with self._writing():
            answered = None if draws is None else self._check_draws(ids, pos, draws)
            out = self.ledger.excluded[pos]
            if out.any():
                first = int(np.argmax(out))
                raise LabelError(f"item {show_id(ids[first])} was excluded as not judgeable (`labelwise exclude`); "
                                 "drop its label. Nothing was stored", index=first)
            all_draws = self.draws
            answered, pos, y = self.ledger.accept(all_draws, ids, pos, y, answered if self.stochastic else None)
            again = self.ledger.is_withdrawn(answered)
            if again.any():  # draws whose label was taken back: the new label is a correction
                self._answer_withdrawn(answered[again], pos[again], y[again], source)
            answered, pos, y = answered[~again], pos[~again], y[~again]
            if pos.size and self.store is not None:
                self.store.add_labels(pos, y, answered, all_draws.round[answered] + 1, all_draws.weight[answered],
                                      all_draws.prob[answered], source)
            self.ledger.record(answered, pos, y)
            self.sampler.observe(pos, y)
        return int(pos.size + again.sum())

    def add_system(self, name: str, preds, scores=None, probs=None) -> AddedSystem:
        """Add a system's outputs to the session: its measures are estimated from the labels already in, and
        later draws go where it is under-covered (:mod:`labelwise.session_systems`).

        Parameters
        ----------
        name : str
            The new system's name (not one of the pool's).
        preds : array-like, shape (N,)
            Its predicted labels, in the pool's item order.
        scores, probs : array-like, optional
            Its scores and probabilities, as the pool's systems have them.

        Returns
        -------
        AddedSystem
            The new system's estimate, how many labels inform it and whether it is covered.
        """
        return add_system(self, name, SystemOutputs(preds, scores, probs))

    def sample(self) -> Sample:
        """The labeled prefix of the draws with their labels."""
        return self.ledger.sample(self.draws)

    def estimate(self, measure: Measure | None = None, level: float | None = None, *,
                 anytime: bool = False, prefix: int | None = None) -> Estimate:
        """Estimate the session's measure, or any other ``measure`` from the same labels (sample reuse).

        With items excluded (:meth:`exclude`) the estimate is over the judgeable items.  With ``anytime``
        the interval is a confidence sequence, valid whenever labeling stops (:mod:`labelwise.anytime`).
        With ``prefix`` the estimate from the labels of the first ``prefix`` draws only (an earlier point of
        the session's path, as :mod:`labelwise.planning` reads it; not with ``anytime``).

        Raises
        ------
        ValueError
            For ``prefix`` together with ``anytime``.
        """
        if anytime and prefix is not None:
            raise ValueError("estimate: prefix= and anytime=True do not combine; the anytime interval is the "
                             "whole session's")
        if anytime:
            from .anytime import anytime_estimate

            return anytime_estimate(self, measure, level)
        sample = self.sample() if prefix is None else self.ledger.sample(self.draws.head(prefix))
        target = measure or self.measure
        if sample.excluded is not None:
            target = over_judgeable(target)
        level = self.level if level is None else level
        # every item whose loss depends on its label is labeled (precision: every predicted positive): exact
        est = None if self.stochastic else census_estimate(target, self.pool, sample, level)
        if est is not None:
            return est
        est = blocks_estimate(self, target, sample, level)
        if est is None:
            est = self.sampler.estimate(target, sample, level)
            # every total but one known (MCC with every predicted positive labeled): the image of that one's interval
            if not self.stochastic:
                est = with_segment(est, target, self.pool, sample,
                                   lambda totals: segment_totals(self.sampler, totals, sample, level))
        # a bound with no variance from draws with replacement (no draw is a census): the interval rests on the
        # component's own draws; without replacement it is mostly a census of the component's items (exact)
        if self.design.with_replacement and len(sample.draws) and est.certain_at_boundary.any():
            est = replace(est, counts=component_counts(target, self.sampler.losses(target, sample)))
        # a ratio at 0 with no hit labeled reaches the hits its unlabeled support may hold (none in a census)
        est = self._with_zero_hits(est, target, sample)
        return target.refine_estimate(est, self.pool, self.sampler, sample)

    def _with_zero_hits(self, est: Estimate, measure: Measure, sample: Sample) -> Estimate:
        """``est`` whose ratios at 0 with no hit labeled reach the hits the unlabeled items may hold
        (:func:`~labelwise.estimators.zero_hits.with_zero_hits`)."""
        keep = slice(None) if sample.excluded is None else ~sample.excluded
        items = sample.draws.items[keep]
        outside = np.flatnonzero(self.ledger.excluded)
        return with_zero_hits(est, measure, lambda part: pool_support_terms(part, self.pool), self.pool.outputs(items),
                              sample.labels[keep], items, self.pool.outputs(outside) if outside.size else None)

    def labels_needed(self, half_width: float, measure: Measure | None = None, level: float = 0.95) -> Plan:
        """Projected further labels (with a range) for the design to reach ``half_width`` (:mod:`labelwise.planning`)."""
        from .planning import plan_session

        return plan_session(self, half_width, measure, level)
