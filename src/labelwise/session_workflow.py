"""Handing items out and looking after them: pending first, skip, exclude and relabel.

:class:`HandOut` is the part of :class:`~labelwise.session.Session` that
decides what an annotator sees next and how an item leaves the queue other
than by a label:

* :meth:`HandOut.skip` defers an item: it stays a draw of the design and
  comes back after the other pending items; the estimate waits for it.
* :meth:`HandOut.exclude` takes an item annotators cannot judge out of the
  population.  Its draws stay draws (the design's probabilities are
  unchanged) but count as outside the population: zero losses
  (:meth:`labelwise.designs.Sampler.losses`), so every total is a total over
  the judgeable items.  Measures of ratios of totals (precision, recall,
  F-beta) are then exactly those of the judgeable items; any other measure
  (accuracy, MCC, Brier) is estimated as a ratio over the estimated number
  of judgeable items (:mod:`labelwise.measures.domain`).  Unseen
  unjudgeable items cannot be removed, so the estimand is the measure over
  every item the annotators could judge, estimated as a domain.
* :meth:`HandOut.relabel` corrects a label; the file keeps both.
* :meth:`HandOut.add_answers` keeps another annotator's answer to a labeled
  draw under a stochastic oracle: a draw answered k times contributes the
  mean loss of its k answers (each is a sample of the item's label
  distribution, so the mean has the same expectation with less oracle
  noise); :meth:`HandOut.retract_answer` takes one back.
* :meth:`HandOut.withdraw` takes labels back (an annotator's undo): the
  draws wait again, the file keeps the labels, and the next answer to a
  withdrawn draw is stored as a correction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .ledger import LabelError, NotProposedError, as_int_labels, show_id
from .pool import PoolError
from .pool.ids import match_pool_ids
from .store.answers import add_answers, retract_answer
from .store.withdrawals import close_withdrawals, withdraw

__all__ = ["HandOut"]


def _once(pos: np.ndarray) -> np.ndarray:
    """``pos`` without repeats, in the order first given."""
    return pos[np.sort(np.unique(pos, return_index=True)[1])]


class HandOut:
    """What :class:`~labelwise.session.Session` hands out next, and skip, exclude and relabel."""

    def next_batch(self, n: int, *, new_only: bool = False) -> np.ndarray:
        """Ids of the next items to label (:meth:`hand_out`)."""
        rows = self.hand_out(n, new_only=new_only)
        return self.pool.item_ids[self.draws.items[rows]]

    def hand_out(self, n: int, *, new_only: bool = False) -> np.ndarray:
        """Draw numbers of the next (at most) ``n`` rows to label: pending ones first, then new draws.

        Pending rows come in draw order, skipped items (:meth:`skip`) last.
        The rest of ``n`` is drawn by the design and stored (with the
        generator state) before the draw numbers are returned.  Fewer than
        ``n`` rows come back when the pool has no more items to draw, or
        when a design without replacement (``poisson``, ``online-poisson``,
        ``stratified``) waits for its pending items before it draws a new
        round (see :meth:`can_draw`).

        Parameters
        ----------
        n : int
        new_only : bool
            Hand out only new draws (``n`` of them), e.g. for a second
            annotator while the first labels the pending rows.
        """
        if n < 1:
            raise ValueError(f"n: ask for at least one item, got {n}")
        with self._writing():
            order = self.pending_in_order()
            taken = order[:0] if new_only else order[:n]
            first_new = len(self.draws)
            want = min(n - taken.size, self.can_draw())
            if want > 0:
                self._draw(want)
        if want <= 0:
            return taken
        fresh = self.pending_in_order()
        return np.concatenate([taken, fresh[fresh >= first_new]])[:n]

    def can_draw(self) -> int:
        """How many new items the design can draw now (any number under a stochastic oracle).

        Under a deterministic oracle items neither labeled nor pending; 0
        while a design without replacement has pending items (its next
        round depends on their labels).
        """
        if self.stochastic:
            return np.iinfo(np.int64).max
        if not self.design.with_replacement and self.pending_draws.size:
            return 0
        return int(self.pool.n_items - np.count_nonzero(self._handed_out()))

    def _handed_out(self) -> np.ndarray:
        """Items labeled, pending or excluded: a new draw must include others."""
        handed = self.ledger.labeled | self.ledger.excluded
        handed[self.draws.items[self.pending_draws]] = True
        return handed

    def pending_in_order(self) -> np.ndarray:
        """:attr:`pending_draws` in hand-out order: draw order, skipped items last (latest skip last)."""
        pending = self.pending_draws
        items = self.draws.items[pending]
        # rank of each pending item among the deferred ones (-1: not deferred), without an O(N) array
        rank = np.full(items.size, -1, dtype=np.int64)
        if self.deferred.size:
            order = np.argsort(self.deferred)
            at = np.minimum(np.searchsorted(self.deferred, items, sorter=order), self.deferred.size - 1)
            hit = self.deferred[order[at]] == items
            rank[hit] = order[at[hit]]
        return pending[np.argsort(rank, kind="stable")]

    def skip(self, ids: Sequence) -> int:
        """Defer pending items: they are handed out again after the other pending items.

        A skipped item stays a draw of the design, so the estimate (the
        labeled prefix of the draws) waits for its label; skipping only
        changes the order of :meth:`hand_out`.  Returns how many items were
        deferred.

        Raises
        ------
        LabelError
            For unknown items and items that are not pending; nothing is stored.
        """
        pos = self._positions(ids)
        with self._writing():
            waiting = np.isin(pos, self.draws.items[self.pending_draws])
            if not waiting.all():
                i = int(np.argmax(~waiting))
                raise LabelError(f"item {show_id(np.asarray(ids)[i])} is not waiting for a label; skip only "
                                 "items `next` handed out and not yet labeled. Nothing was stored")
            pos = _once(pos)
            if self.store is not None:
                self.store.defer(pos)
            self.deferred = np.concatenate([self.deferred[~np.isin(self.deferred, pos)], pos])
        return int(pos.size)

    @property
    def n_excluded(self) -> int:
        """Items excluded from the population as not judgeable (:meth:`exclude`)."""
        return int(np.count_nonzero(self.ledger.excluded))

    def exclude(self, ids: Sequence, source: str = "api") -> int:
        """Exclude pending items from the population as not judgeable; returns how many were new.

        Every estimate is then over the judgeable items (module docstring):
        the items wait for no label, are not drawn again as new items, and
        the file records each exclusion with its time and ``source``.
        Excluding an item twice is harmless.

        Raises
        ------
        LabelError
            For unknown items and items neither waiting for a label nor
            excluded (labeled or never handed out); nothing is stored.
        """
        pos = self._positions(ids)
        with self._writing():
            waiting = np.isin(pos, self.draws.items[self.pending_draws]) | self.ledger.excluded[pos]
            if not waiting.all():
                i = int(np.argmax(~waiting))
                raise LabelError(f"item {show_id(np.asarray(ids).ravel()[i])} is not waiting for a label; exclude "
                                 "only items `next` handed out and not yet labeled. Nothing was stored")
            pos = pos[~self.ledger.excluded[pos]]
            pos = _once(pos)
            if pos.size and self.store is not None:
                self.store.exclude(pos, self.ledger.first_draws(self.draws, pos), source)
            self.ledger.exclude(pos)
        return int(pos.size)

    def _positions(self, ids: Sequence) -> np.ndarray:
        try:
            return self.pool.positions(np.asarray(ids).ravel())
        except PoolError as exc:  # name the first unknown id's place among those given
            known = self.pool.index.get_indexer(match_pool_ids(np.asarray(ids).ravel(), self.pool.item_ids)) >= 0
            raise LabelError(str(exc), index=int(np.argmin(known))) from None

    def _checked(self, ids: Sequence, labels: Sequence) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids, their pool positions and integer labels, checked (:class:`LabelError`)."""
        ids = np.asarray(ids)
        if ids.ndim != 1:
            ids = ids.ravel()
        if np.ndim(labels) == 0:
            labels = [labels]
        elif not isinstance(labels, (list, tuple)):
            labels = np.asarray(labels).ravel()
        if len(ids) != len(labels):
            raise LabelError(f"got {len(ids)} ids but {len(labels)} labels; give one label per id")
        pos = self._positions(ids) if len(ids) else np.empty(0, dtype=np.int64)
        return ids, pos, as_int_labels(labels, self.pool.n_classes, self.pool.item_ids[pos])

    def relabel(self, ids: Sequence, labels: Sequence, source: str = "api", draws: Sequence | None = None) -> int:
        """Correct stored labels; returns how many changed.

        The file keeps the first label and every correction (an audit
        trail); estimates use the latest.  The design has learned from the
        first label (its later draws stay valid: their probabilities are
        stored), so a correction changes estimates, not the draws made.

        Parameters
        ----------
        ids, labels : sequences of equal length
        source : str
        draws : sequence of int, optional
            Under a stochastic oracle the draw whose label is corrected (required there).

        Raises
        ------
        LabelError
            For unknown or unlabeled items, labels outside the label set and,
            under a stochastic oracle, missing or wrong draw numbers.
        """
        ids, pos, y = self._checked(ids, labels)
        with self._writing():
            if self.stochastic:
                if draws is None:
                    raise LabelError("a stochastic session labels draws: give the draw of each label to correct")
                answered = self._check_draws(ids, pos, draws)
            else:
                answered = self.ledger.first_draws(self.draws, pos)
            old = self.ledger.label_of(answered, pos)
            unlabeled = old < 0
            if unlabeled.any():
                i = int(np.argmax(unlabeled))
                raise LabelError(f"item {show_id(ids[i])} has no label to correct; give it one with `label` first. "
                                 "Nothing was stored")
            change = old != y
            if change.any() and self.store is not None:
                self.store.relabel(answered[change], pos[change], old[change], y[change], source)
            self.ledger.correct(answered[change], pos[change], y[change])
        return int(change.sum())

    def add_answers(self, ids: Sequence, labels: Sequence, draws: Sequence, source: str = "api") -> int:
        """Keep further answers to labeled draws (stochastic oracle); returns how many were kept.

        Raises
        ------
        LabelError
            Under a deterministic oracle (an item has one label: use
            :meth:`relabel`), for unknown ids, labels outside the label set,
            draws not of their item, and draws without a first label.
        """
        if not self.stochastic:
            raise LabelError("further answers are kept under a stochastic oracle only; a deterministic session "
                             "has one label per item (correct it with relabel)")
        ids, pos, y = self._checked(ids, labels)
        with self._writing():
            answered = self._check_draws(ids, pos, draws)
            unlabeled = self.ledger.label_of(answered, pos) < 0
            if unlabeled.any():
                raise LabelError(f"draw {answered[int(np.argmax(unlabeled))]} has no first label yet; label it with "
                                 "add_labels. Nothing was stored")
            if self.store is not None:
                add_answers(self.store, answered, pos, y, source)
            self.ledger.add_answers(answered, y)
        return int(pos.size)

    def retract_answer(self, draw: int, label: int, source: str) -> bool:
        """Take back the latest standing further answer ``label`` of ``source`` to ``draw``; whether there was one.

        The file keeps the answer, marked retracted.
        """
        with self._writing():
            if self.store is not None and not retract_answer(self.store, draw, label, source):
                return False
            self.ledger.drop_answer(draw, label)
        return True

    def withdraw(self, draws: Sequence[int], source: str = "api") -> int:
        """Take back the labels of ``draws`` (numbers as :attr:`pending_draws` lists them); how many were taken.

        The labels stay in the file (``withdrawn``); the draws wait for a
        label again, so estimates, which use the labeled prefix of the
        draws, wait for them; the next label of a withdrawn draw is stored
        as a correction.  What an adaptive design learned from a label
        stays learned (its later draws keep their stored probabilities).
        Draws without a label are left alone.
        """
        d = np.asarray(draws, dtype=np.int64).ravel()
        with self._writing():
            if np.any((d < 0) | (d >= len(self.draws))):
                raise LabelError(f"draw numbers must be from 0 to {len(self.draws) - 1}. Nothing was stored")
            d = _once(d)
            pos = self.draws.items[d]
            if not self.stochastic:  # an item's label is stored at its first draw
                d = self.ledger.first_draws(self.draws, pos)
            old = self.ledger.label_of(d, pos)
            d, pos, old = d[old >= 0], pos[old >= 0], old[old >= 0]
            if d.size and self.store is not None:
                withdraw(self.store, d, pos, old, source)
            self.ledger.withdraw(d, pos)
        return int(d.size)

    def _answer_withdrawn(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray, source: str) -> None:
        """Store labels of withdrawn draws as corrections of the labels taken back (inside a write)."""
        old = self.ledger.answer_withdrawn(answered, pos, y)
        if self.store is not None:
            self.store.relabel(answered, pos, old, y, source)
            close_withdrawals(self.store, answered)

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
            refused = LabelError if np.isin(pos[i], self.draws.items) else NotProposedError
            raise refused(f"draw {d[i]} is of item {show_id(self.pool.item_ids[self.draws.items[d[i]]])}, not "
                          f"of item {show_id(ids[i])}; keep each row's id and draw together. Nothing was stored", index=i)
        return d

