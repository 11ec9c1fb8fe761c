"""A labeling session: propose -> label -> update -> estimate, resumable from disk.

A :class:`Session` ties a pool, a measure and a design to the labels
gathered so far.  With a ``path`` every draw and every label is written to
a SQLite file (:mod:`labelwise.store`) before it is acknowledged, together
with the random generator's state, so :meth:`Session.open` resumes exactly
where a killed process stopped.  Without a path the session lives in
memory (simulations).

Estimates use the longest prefix of draws whose items are all labeled, so
labels that arrive out of order never bias the estimate.

Under a stochastic oracle (a design created with ``oracle="stochastic"``:
noisy labels, several annotators) every draw is a label request of its
own: an item drawn twice is labeled twice, and its labels may differ.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self

import numpy as np

from .designs import Design, design_from_spec
from .draws import Draws, Sample
from .estimators import Estimate
from .measures import Measure, measure_from_spec
from .pool import Pool, PoolError
from .progress import progress_bar
from .store import Store, StoreError

__all__ = ["LabelError", "Session"]


class LabelError(ValueError):
    """Labels that cannot be accepted; nothing was stored."""


def _is_number(value) -> bool:
    if value is None:
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def _as_int_labels(labels, n_classes: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.dtype.kind in "OUS":
        # element by element: NumPy turns [True, "1"] into strings ["True", "1"]
        values = list(labels) if isinstance(labels, (list, tuple)) else arr.ravel().tolist()
        bad = [v for v in values if not _is_number(v)]
        if bad:
            raise LabelError(
                f"label: values {bad[:5]} are not numbers; labels must be integers 0..{n_classes - 1}"
            )
        arr = np.array([float(v) for v in values])
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    as_float = arr.astype(float)
    bad = ~np.isfinite(as_float) | (as_float != np.round(as_float)) | (as_float < 0) | (as_float >= n_classes)
    if bad.any():
        raise LabelError(
            f"label: values {np.unique(arr[bad])[:5].tolist()} are outside the label set 0..{n_classes - 1}; "
            "fix them in the labels you give"
        )
    return as_float.astype(np.int64)


class Session:
    """Pool + measure + design + the labels so far.

    Parameters
    ----------
    pool : Pool
    measure : Measure
        The target measure (it shapes the design); any other measure can be
        estimated from the same labels with ``estimate(measure=...)``.
    design : Design
    seed : int or numpy.random.Generator, optional
        Source of randomness (the only one).
    path : str or Path, optional
        Session file to create; the session is then durable and resumable.
    level : float
        Default confidence level of estimates.
    """

    def __init__(self, pool: Pool, measure: Measure, design: Design, *, seed=None,
                 path: str | Path | None = None, level: float = 0.95):
        self.pool = pool
        self.measure = measure
        self.design = design
        self.level = float(level)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self._reset_labels()
        self._draw_parts: list[Draws] = []
        self._draws_cache: Draws | None = None
        self.stage = 0
        self.store: Store | None = None
        design.prepare(pool, measure)
        if path is not None:
            spec = measure.spec()
            # the generator's initial state goes in with the file, so a session
            # reopened before its first draw still draws what this one would
            self.store = Store.create(path, pool, {
                "measure": spec, "design": design.spec(), "level": self.level, "created": time.time(),
            }, rng_state=self.rng.bit_generator.state)

    # ------------------------------------------------------------- resume
    @classmethod
    def open(cls, path: str | Path, measure: Measure | None = None) -> Session:
        """Resume a session from its file: pool, draws, labels and generator state.

        Parameters
        ----------
        path : str or Path
        measure : Measure, optional
            Required when the session's measure was user-defined (not stored).
        """
        store = Store.open(path)
        try:
            return cls._resume(store, measure)
        except BaseException:
            store.close()
            raise

    @classmethod
    def _resume(cls, store: Store, measure: Measure | None) -> Session:
        config = store.config()
        if config["measure"] is None and measure is None:
            raise ValueError("this session uses a user-defined measure: pass it again with measure=")
        pool = store.load_pool()
        measure = measure if measure is not None else measure_from_spec(config["measure"])
        design = design_from_spec(config["design"])
        self = cls.__new__(cls)
        self.pool, self.measure, self.design = pool, measure, design
        self.level = float(config.get("level", 0.95))
        state = store.rng_state()
        name = str(state.get("bit_generator", "PCG64"))
        kind = getattr(np.random, name, None)
        if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
            raise StoreError(f"{str(store.path)!r}: unknown random generator {name!r} in the session file")
        bit_generator = kind()
        bit_generator.state = state
        self.rng = np.random.Generator(bit_generator)
        self._reset_labels()
        draws = store.load_draws()
        self._draw_parts = [draws] if len(draws) else []
        self._draws_cache = None
        self.stage = int(draws.round.max()) + 1 if len(draws) else 0
        self.store = store
        design.prepare(pool, measure)
        items, labels, calls, answered = store.load_labels()
        if self.stochastic:
            self._draw_labels = np.full(len(draws), -1, dtype=np.int64)
            self._draw_labels[answered] = labels
        self._set_labels(items, labels)
        # replay the labels call by call, as they arrived, so adaptive designs end in the same state
        for chunk in np.split(np.arange(items.size), np.flatnonzero(np.diff(calls)) + 1):
            if chunk.size:
                design.observe(items[chunk], labels[chunk])
        design.set_state(store.design_states())
        return self

    def close(self) -> None:
        """Close the session file (the session stays usable in memory)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

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
        """Whether the design assumes a stochastic oracle (a label per draw)."""
        return self.design.oracle == "stochastic"

    @property
    def n_labels(self) -> int:
        """Labels received: distinct items labeled (deterministic oracle) or labeled draws (stochastic)."""
        return int(self._n_labeled)

    def _reset_labels(self) -> None:
        #: per item: its label (deterministic oracle; -1 while unlabeled) ...
        self.labels = np.full(self.pool.n_items, -1, dtype=np.int64)
        self._labeled = np.zeros(self.pool.n_items, dtype=bool)
        #: ... or per draw (stochastic oracle; -1 while pending)
        self._draw_labels = np.empty(0, dtype=np.int64)
        self._n_labeled = 0

    def _set_labels(self, positions: np.ndarray, labels: np.ndarray) -> None:
        """Record new labels in memory (deterministic: positions not labeled before)."""
        if not self.stochastic:
            self.labels[positions] = labels
        self._labeled[positions] = True
        self._n_labeled += positions.size

    def _waiting(self) -> np.ndarray:
        """Whether each draw still waits for a label."""
        if self.stochastic:
            return self._draw_labels < 0
        return self.labels[self.draws.items] < 0

    @property
    def pending_draws(self) -> np.ndarray:
        """Draw numbers (positions in :attr:`draws`) of the rows of :attr:`pending`.

        Under a stochastic oracle a label given with its draw number answers
        that draw, so submitting the same answers twice stores them once
        (see :meth:`add_labels`).  Under a deterministic oracle each pending
        item's first draw.
        """
        waiting = np.flatnonzero(self._waiting())
        if not self.stochastic:
            waiting = waiting[np.sort(np.unique(self.draws.items[waiting], return_index=True)[1])]
        return waiting

    @property
    def pending(self) -> np.ndarray:
        """Ids of drawn items still waiting for a label, in draw order.

        Under a stochastic oracle an id appears once per draw waiting for a
        label (an item drawn twice needs two labels).
        """
        return self.pool.item_ids[self.draws.items[self.pending_draws]]

    # ---------------------------------------------------------- the loop
    def next_batch(self, n: int) -> np.ndarray:
        """Ids of the next items to label.

        If items drawn earlier still wait for labels, those are returned
        (nothing new is drawn until they are labeled, so no drawn item is
        ever skipped).  Otherwise the design draws ``n`` new items; the draws
        and the generator state are stored before the ids are returned.
        """
        if n < 1:
            raise ValueError(f"n: ask for at least one item, got {n}")
        waiting = self.pending
        if waiting.size:
            return waiting
        unlabeled = self.pool.n_items - self.n_labels
        if n > unlabeled and not self.stochastic:
            raise ValueError(
                f"n: asked for {n} new items but only {unlabeled} of {self.pool.n_items} are unlabeled; "
                "ask for fewer"
            )
        before = self.rng.bit_generator.state
        try:
            draws = self.design.draw(n, self._labeled, self.rng).in_round(self.stage)
            if self.store is not None:
                self.store.append_draws(self.stage + 1, draws, self.rng.bit_generator.state, self.design.state())
        except BaseException:
            # nothing was stored: rewind the generator so memory matches the file
            self.rng.bit_generator.state = before
            raise
        self.stage += 1
        self._draw_parts.append(draws)
        self._draws_cache = None
        if self.stochastic:
            self._draw_labels = np.concatenate([self._draw_labels, np.full(len(draws), -1, dtype=np.int64)])
        return self.pending

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
            items the design has not proposed, draws that are not of the
            item given, and labels that contradict a stored one (or each
            other): per item under the deterministic oracle, per draw under
            the stochastic one.
        """
        ids = np.asarray(ids)
        if ids.ndim != 1:
            ids = ids.ravel()
        if np.ndim(labels) == 0:
            labels = [labels]
        elif not isinstance(labels, (list, tuple)):
            labels = np.asarray(labels).ravel()
        if len(ids) != len(labels):
            raise LabelError(f"got {len(ids)} ids but {len(labels)} labels; give one label per id")
        if len(ids) == 0:
            return 0
        try:
            pos = self.pool.positions(ids)
        except PoolError as exc:
            raise LabelError(str(exc)) from None
        y = _as_int_labels(labels, self.pool.n_classes)
        if draws is not None:
            answered = self._check_draws(ids, pos, draws)
            if self.stochastic:
                return self._add_answers(answered, pos, y, source)
        elif self.stochastic:
            return self._add_draw_labels(ids, pos, y, source)
        order = np.argsort(pos, kind="stable")
        sp, sy = pos[order], y[order]
        same_item = sp[1:] == sp[:-1]
        if np.any(same_item & (sy[1:] != sy[:-1])):
            bad = self.pool.item_ids[sp[1:][same_item & (sy[1:] != sy[:-1])][0]]
            raise LabelError(f"item {_show(bad)} is given two different labels in one call; keep one")
        stored = self.labels[pos]
        clash = (stored >= 0) & (stored != y)
        if clash.any():
            i = int(np.argmax(clash))
            raise LabelError(
                f"item {_show(ids[i])} already has label {int(stored[i])}; the new label {int(y[i])} contradicts it "
                "(the oracle is deterministic). Nothing was stored"
            )
        draws = self.draws
        drawn = np.isin(pos, draws.items)
        if not drawn.all():
            i = int(np.argmax(~drawn))
            raise LabelError(
                f"item {_show(ids[i])} was not proposed by the design; label only items returned by next_batch "
                "(labels of other items have no design weight)"
            )
        # first occurrence of each item not yet labeled (indices into the whole call)
        new_idx = np.flatnonzero(stored < 0)
        new_idx = new_idx[np.sort(np.unique(pos[new_idx], return_index=True)[1])]
        new_pos, new_y = pos[new_idx], y[new_idx]
        if new_pos.size == 0:
            return 0
        if self.store is not None:
            first_draw = _first_index(draws.items, new_pos)
            self.store.add_labels(new_pos, new_y, first_draw, draws.round[first_draw] + 1, draws.weight[first_draw],
                                  draws.prob[first_draw], source)
        self._set_labels(new_pos, new_y)
        self.design.observe(new_pos, new_y)
        return int(new_pos.size)

    def _check_draws(self, ids: np.ndarray, pos: np.ndarray, draws: Sequence) -> np.ndarray:
        """``draws`` as draw numbers, each checked to be a draw of its item."""
        d = np.asarray(draws).ravel()
        if d.size != pos.size:
            raise LabelError(f"got {pos.size} ids but {d.size} draw numbers; give one draw per id")
        whole = d.dtype.kind in "iu" or (d.dtype.kind == "f" and bool(np.all(np.isfinite(d) & (d == np.round(d)))))
        n = len(self.draws)
        if not whole or np.any((d < 0) | (d >= n)):
            raise LabelError(f"draw numbers must be whole numbers from 0 to {n - 1} (as listed by next_batch); "
                             "fix or drop the draw column. Nothing was stored")
        d = d.astype(np.int64)
        wrong = self.draws.items[d] != pos
        if wrong.any():
            i = int(np.argmax(wrong))
            raise LabelError(f"draw {d[i]} is of item {_show(self.pool.item_ids[self.draws.items[d[i]]])}, not of "
                             f"item {_show(ids[i])}; keep each row's id and draw together. Nothing was stored")
        return d

    def _add_answers(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray, source: str) -> int:
        """Stochastic oracle, labels given with their draws: new answers stored, repeats skipped."""
        order = np.argsort(answered, kind="stable")
        answered, pos, y = answered[order], pos[order], y[order]
        twice = answered[1:] == answered[:-1]
        if np.any(twice & (y[1:] != y[:-1])):
            d = answered[1:][twice & (y[1:] != y[:-1])][0]
            raise LabelError(f"draw {d} is given two different labels in one call; keep one. Nothing was stored")
        keep = np.r_[True, ~twice]
        answered, pos, y = answered[keep], pos[keep], y[keep]
        stored = self._draw_labels[answered]
        clash = (stored >= 0) & (stored != y)
        if clash.any():
            i = int(np.argmax(clash))
            raise LabelError(f"draw {answered[i]} (item {_show(self.pool.item_ids[pos[i]])}) already has label "
                             f"{int(stored[i])}; the new label {int(y[i])} contradicts it (a draw has one answer). "
                             "Nothing was stored")
        new = stored < 0
        return self._store_answers(answered[new], pos[new], y[new], source)

    def _store_answers(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray, source: str) -> int:
        """Store answers to pending draws (sorted by draw), then learn from them."""
        if answered.size == 0:
            return 0
        draws = self.draws
        if self.store is not None:
            self.store.add_labels(pos, y, answered, draws.round[answered] + 1, draws.weight[answered], draws.prob[answered],
                                  source)
        self._draw_labels[answered] = y
        self._set_labels(pos, y)
        self.design.observe(pos, y)
        return int(pos.size)

    def _add_draw_labels(self, ids: np.ndarray, pos: np.ndarray, y: np.ndarray, source: str) -> int:
        """Stochastic oracle: the k-th label of an item in a call answers its k-th pending draw."""
        draws = self.draws
        pending = np.flatnonzero(self._draw_labels < 0)
        by_item = pending[np.argsort(draws.items[pending], kind="stable")]  # by item, then draw order
        items_sorted = draws.items[by_item]
        uniq, start, count = np.unique(items_sorted, return_index=True, return_counts=True)
        # occurrence number of each id within the call (0 for its first label, 1 for the second...)
        order = np.argsort(pos, kind="stable")
        run_start = np.r_[0, np.flatnonzero(np.diff(pos[order])) + 1]
        occurrence = np.empty(pos.size, dtype=np.int64)
        occurrence[order] = np.arange(pos.size) - np.repeat(run_start, np.diff(np.r_[run_start, pos.size]))
        loc = np.minimum(np.searchsorted(uniq, pos), max(uniq.size - 1, 0))
        ok = np.zeros(pos.size, dtype=bool)
        if uniq.size:
            found = uniq[loc] == pos
            ok[found] = occurrence[found] < count[loc[found]]
        if not ok.all():
            i = int(np.argmax(~ok))
            waiting = int(count[loc[i]]) if uniq.size and uniq[loc[i]] == pos[i] else 0
            given = int(np.sum(pos == pos[i]))
            raise LabelError(
                f"item {_show(ids[i])} has {waiting} draw(s) waiting for a label but {given} label(s) were given; "
                "label only items returned by next_batch, once per time they are returned. Nothing was stored"
            )
        answered = by_item[start[loc] + occurrence]
        order = np.argsort(answered)  # store and learn in draw order
        return self._store_answers(answered[order], pos[order], y[order], source)

    def sample(self) -> Sample:
        """The labeled prefix of the draws with their labels."""
        draws = self.draws
        unl = self._waiting()
        cut = int(np.argmax(unl)) if unl.any() else len(draws)
        head = draws.head(cut)
        if self.stochastic:
            return Sample(head, self._draw_labels[:cut], cut)
        return Sample(head, self.labels[head.items], int(np.unique(head.items).size))

    def estimate(self, measure: Measure | None = None, level: float | None = None) -> Estimate:
        """Estimate the session's measure, or any other ``measure`` from the same labels (sample reuse)."""
        return self.design.estimate(measure or self.measure, self.pool, self.sample(),
                                    self.level if level is None else level)

    def run(
        self,
        oracle: Callable[[np.ndarray], np.ndarray],
        budget: int,
        batch_size: int = 50,
        *,
        progress: bool = False,
        checkpoints: Sequence[int] = (),
        on_checkpoint: Callable[[int, Estimate], None] | None = None,
    ) -> Estimate:
        """Label until ``budget`` distinct items are labeled, asking ``oracle`` a batch at a time.

        Parameters
        ----------
        oracle : callable
            ``oracle(item_ids) -> labels``.
        budget : int
            Total distinct labels wanted (labels already in the session count).
        batch_size : int
            Items per batch (the design is updated between batches).
        progress : bool
            Show a progress bar.
        checkpoints : sequence of int
            Label counts at which to call ``on_checkpoint(n_labels, estimate)``;
            batches are cut so that each checkpoint is hit exactly.
        """
        if budget > self.pool.n_items:
            raise ValueError(f"budget: {budget} labels asked but the pool has {self.pool.n_items} items")
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        self.design.plan(budget)
        marks = sorted(c for c in set(checkpoints) if self.n_labels < c <= budget)
        with progress_bar(progress, budget, "labeling", self.n_labels) as update:
            while self.n_labels < budget:
                limit = marks[0] if marks else budget
                ids = self.next_batch(min(batch_size, limit - self.n_labels))
                self.add_labels(ids, oracle(ids), source="oracle")
                update(self.n_labels)
                while marks and self.n_labels >= marks[0]:
                    if on_checkpoint is not None:
                        on_checkpoint(marks[0], self.estimate())
                    marks.pop(0)
        return self.estimate()


def _show(value) -> str:
    """``repr`` of an id as the user wrote it (``5``, ``'a'``), not NumPy's ``np.int64(5)``."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _first_index(items: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Index of the first draw of each target item."""
    uniq, first = np.unique(items, return_index=True)
    return first[np.searchsorted(uniq, targets)]

