"""Label ledgers: which draws are answered, for each oracle mode, and the checks on new labels.

A deterministic oracle gives an item one true label, asked once: the
:class:`ItemLedger` keeps a label per item, and every draw of a labeled item
is answered.  A stochastic oracle (noisy or several annotators) answers
every draw afresh: the :class:`DrawLedger` keeps a label per draw.  Both
check new labels against what is stored and hand back only the labels to
store, each with the draw it answers; nothing changes until :meth:`Ledger.record`.

An item excluded as not judgeable (:meth:`Ledger.exclude`) takes no label:
its draws count as answered, and a :class:`~labelwise.draws.Sample` marks
them so that their losses are zero.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace

import numpy as np

from .draws import Draws, Sample
from .partition.ranks import ranks_within
from .pool import Pool
from .pool.cells import show_value
from .pool.ids import show_id

__all__ = ["DrawLedger", "ItemLedger", "LabelError", "Ledger", "NotProposedError", "as_int_labels", "make_ledger",
           "show_id", "show_label"]


class LabelError(ValueError):
    """Labels that cannot be accepted; nothing was stored.

    Attributes
    ----------
    index : int or None
        The place, among the labels given, of the label refused (when one is named).
    """

    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.index = index


class NotProposedError(LabelError):
    """A label of an item the design has not proposed (drawn): it has no design weight."""


def _is_number(value) -> bool:
    if value is None:
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def as_int_labels(labels, n_classes: int, ids: np.ndarray) -> np.ndarray:
    """Labels as integers in ``0..n_classes-1``; anything else raises :class:`LabelError` naming the item ``ids``
    gives the first of them, its label and how many others are refused (text and numbers outside the label set
    alike), and, as its ``index``, its place."""
    arr = given = np.asarray(labels)  # given: as the caller wrote them, for the message
    number = np.ones(arr.shape, dtype=bool)
    if arr.dtype.kind in "OUS":
        # element by element: NumPy turns [True, "1"] into strings ["True", "1"]
        values = list(labels) if isinstance(labels, (list, tuple)) else arr.ravel().tolist()
        number = np.array([_is_number(v) for v in values], dtype=bool).reshape(arr.shape)
        arr = np.array([float(v) if ok else np.nan for v, ok in zip(values, number.ravel())]).reshape(arr.shape)
        given = np.array(values, dtype=object)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    as_float = arr.astype(float)
    with np.errstate(invalid="ignore"):
        bad = ~number | ~np.isfinite(as_float) | (as_float != np.round(as_float)) | (as_float < 0) | \
            (as_float >= n_classes)
    if bad.any():
        text = not number.ravel()[int(np.argmax(bad.ravel()))]
        _refuse(bad.ravel(), given.ravel().tolist(), ids,
                "is not a number" if text else f"is outside the label set 0..{n_classes - 1}",
                f"labels must be integers 0..{n_classes - 1}" if text else "fix the label you give")
    return as_float.astype(np.int64)


def show_label(value) -> str:
    """A label as the user gave it: numbers unquoted, whether given as numbers (Python) or as text (a labels
    file, ``relabel``), other text quoted."""
    if isinstance(value, str) or value is None:
        return value.strip() if _is_number(value) else repr(value)
    return show_value(value)


def _refuse(bad: np.ndarray, values: list, ids: np.ndarray, problem: str, fix: str) -> None:
    """:class:`LabelError` naming the first label of ``bad`` (:func:`show_label`), its item, and how many others
    are ``bad``."""
    first, others = int(np.argmax(bad)), int(bad.sum()) - 1
    shown = show_label(values[first])
    more = f" (and {others} more label{'s' if others > 1 else ''})" if others else ""
    raise LabelError(f"item {show_id(np.asarray(ids).ravel()[first])}: label {shown} {problem}{more}; {fix}",
                     index=first)


class Ledger(ABC):
    """The labels received so far, in memory.

    Attributes
    ----------
    labeled : ndarray of bool, shape (N,)
        Items with at least one label.
    n_labels : int
        Labels received: distinct items labeled (deterministic oracle) or
        answered draws (stochastic).  A budget counts these.
    excluded : ndarray of bool, shape (N,)
        Items excluded from the population as not judgeable.
    """

    #: whether every draw takes a label of its own (stochastic oracle) rather than every item
    stochastic_labels: bool = False

    def __init__(self, pool: Pool):
        self.pool = pool
        self.labeled = np.zeros(pool.n_items, dtype=bool)
        self.excluded = np.zeros(pool.n_items, dtype=bool)
        self.n_labels = 0
        self.withdrawn: dict[int, int] = {}  # draw -> the label taken back, while the draw waits again

    def withdraw(self, answered: np.ndarray, pos: np.ndarray) -> None:
        """Take labels back: the draws wait again (what the design learned from them stays)."""
        self.withdrawn.update(zip(answered.tolist(), self.label_of(answered, pos).tolist()))
        self.correct(answered, pos, np.full(pos.size, -1))
        self.n_labels -= pos.size

    def is_withdrawn(self, answered: np.ndarray) -> np.ndarray:
        """Whether each draw's label was taken back (an answer to it is a correction)."""
        return np.isin(answered, np.fromiter(self.withdrawn, np.int64, len(self.withdrawn)))

    def answer_withdrawn(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Labels for draws whose label was taken back; returns the labels taken back."""
        old = np.array([self.withdrawn.pop(int(d)) for d in answered], dtype=np.int64)
        self.correct(answered, pos, y)
        self.n_labels += pos.size
        return old

    def exclude(self, pos: np.ndarray) -> None:
        """Take items out of the population: their draws wait for no label and their losses are zero."""
        self.excluded[pos] = True

    def _sample(self, draws: Draws, labels: np.ndarray) -> Sample:
        """A sample of the labeled prefix ``draws``, excluded items marked (their labels replaced by 0, and
        not counted as labels)."""
        out = self.excluded[draws.items]
        answered = draws.items[~out] if self.stochastic_labels else np.unique(draws.items[~out])
        if not out.any():
            return Sample(draws, labels, answered.size)
        return Sample(draws, np.where(out, 0, labels), answered.size, excluded=out)

    @abstractmethod
    def waiting(self, draws: Draws) -> np.ndarray:
        """Whether each draw still waits for a label."""

    def pending(self, draws: Draws) -> np.ndarray:
        """Draw numbers of the rows a labeler is asked for, in draw order."""
        return np.flatnonzero(self.waiting(draws))

    @abstractmethod
    def accept(self, draws: Draws, ids: np.ndarray, pos: np.ndarray, y: np.ndarray,
               answered: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Check new labels; return the ones to store as (draws answered, items, labels), in storing order.

        ``answered`` gives the draw each label answers, when the labeler said
        (already checked to be a draw of its item).

        Raises
        ------
        LabelError
            A label that contradicts a stored one or another in the call, or
            answers nothing waiting (:class:`NotProposedError` for an item not among ``draws``).
        """

    def record(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray) -> None:
        """Take accepted labels into memory."""
        self.labeled[pos] = True
        self.n_labels += pos.size

    @abstractmethod
    def label_of(self, answered: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """The current label of each draw ``answered`` of item ``pos`` (-1 where unlabeled)."""

    @abstractmethod
    def correct(self, answered: np.ndarray, pos: np.ndarray, y: np.ndarray) -> None:
        """Replace stored labels by corrections (in order: the latest wins)."""

    def first_draws(self, draws: Draws, pos: np.ndarray) -> np.ndarray:
        """Each item's first draw (where a deterministic label is stored); -1 for items never drawn."""
        uniq, idx = np.unique(draws.items, return_index=True)
        first = np.full(self.pool.n_items, -1, dtype=np.int64)
        first[uniq] = idx
        return first[pos]

    @abstractmethod
    def sample(self, draws: Draws) -> Sample:
        """The labeled prefix of ``draws`` with its labels (labels out of order never bias an estimate)."""

    def _prefix(self, draws: Draws) -> int:
        waiting = self.waiting(draws)
        return int(np.argmax(waiting)) if waiting.any() else len(draws)


class ItemLedger(Ledger):
    """Deterministic oracle: one label per item (-1 while unlabeled).

    ``labels`` is in the narrowest signed integer type holding the classes
    (int8 for up to 128): a tenth of the memory of int64 at 10^7 items, and
    as much less time to allocate on every open.  Labels handed out leave as int64.
    """

    def __init__(self, pool: Pool):
        super().__init__(pool)
        self.labels = np.full(pool.n_items, -1, dtype=np.min_scalar_type(-max(pool.n_classes, 1)))

    def waiting(self, draws: Draws) -> np.ndarray:
        return (self.labels[draws.items] < 0) & ~self.excluded[draws.items]

    def pending(self, draws: Draws) -> np.ndarray:
        """Each waiting item's first draw."""
        waiting = super().pending(draws)
        return waiting[np.sort(np.unique(draws.items[waiting], return_index=True)[1])]

    def accept(self, draws, ids, pos, y, answered):
        order = np.argsort(pos, kind="stable")
        sp, sy = pos[order], y[order]
        differ = (sp[1:] == sp[:-1]) & (sy[1:] != sy[:-1])
        if differ.any():
            first = int(order[1:][differ][0])
            raise LabelError(f"item {show_id(ids[first])} is given two different labels in one call; keep one",
                             index=first)
        stored = self.labels[pos]
        clash = (stored >= 0) & (stored != y)
        if clash.any():
            i = int(np.argmax(clash))
            raise LabelError(
                f"item {show_id(ids[i])} already has label {int(stored[i])}; the new label {int(y[i])} contradicts "
                "it (the oracle is deterministic); to correct the stored label use `labelwise relabel` "
                "(Session.relabel). Nothing was stored", index=i,
            )
        drawn = np.isin(pos, draws.items)
        if not drawn.all():
            i = int(np.argmax(~drawn))
            raise NotProposedError(
                f"item {show_id(ids[i])} was not proposed by the design; label only items returned by next_batch "
                "(labels of other items have no design weight)", index=i
            )
        # first occurrence of each item not yet labeled, stored at the item's first draw
        new = np.flatnonzero(stored < 0)
        new = new[np.sort(np.unique(pos[new], return_index=True)[1])]
        # the first draw of each: among the draws of these few items only (no sort of every draw)
        hits = np.flatnonzero(np.isin(draws.items, pos[new]))
        uniq, first = np.unique(draws.items[hits], return_index=True)
        return hits[first[np.searchsorted(uniq, pos[new])]], pos[new], y[new]

    def record(self, answered, pos, y):
        super().record(answered, pos, y)
        self.labels[pos] = y

    def label_of(self, answered, pos):
        return self.labels[pos].astype(np.int64)

    def correct(self, answered, pos, y):
        self.labels[pos] = y

    def sample(self, draws: Draws) -> Sample:
        head = draws.head(self._prefix(draws))
        return self._sample(head, self.labels[head.items].astype(np.int64))


class DrawLedger(Ledger):
    """Stochastic oracle: one label per draw (-1 while pending), and further answers to labeled draws.

    ``answer_draws`` and ``answer_labels`` hold the further answers (another
    annotator's) in the order they came; a sample carries those of its draws.
    """

    stochastic_labels = True

    def __init__(self, pool: Pool):
        super().__init__(pool)
        self.draw_labels = np.empty(0, dtype=np.int64)
        self.answer_draws = np.empty(0, dtype=np.int64)
        self.answer_labels = np.empty(0, dtype=np.int64)

    def add_answers(self, answered: np.ndarray, y: np.ndarray) -> None:
        """Take further answers to labeled draws into memory."""
        self.answer_draws = np.concatenate([self.answer_draws, np.asarray(answered, np.int64)])
        self.answer_labels = np.concatenate([self.answer_labels, np.asarray(y, np.int64)])

    def drop_answer(self, answered: int, y: int) -> None:
        """Forget the latest further answer ``y`` to draw ``answered`` (retracted)."""
        hit = np.flatnonzero((self.answer_draws == answered) & (self.answer_labels == y))
        if hit.size:
            keep = np.arange(self.answer_draws.size) != hit[-1]
            self.answer_draws, self.answer_labels = self.answer_draws[keep], self.answer_labels[keep]

    def extend(self, n: int) -> None:
        """Make room for ``n`` new draws."""
        self.draw_labels = np.concatenate([self.draw_labels, np.full(n, -1, dtype=np.int64)])

    def waiting(self, draws: Draws) -> np.ndarray:
        return (self.draw_labels < 0) & ~self.excluded[draws.items]

    def accept(self, draws, ids, pos, y, answered):
        if answered is None:
            answered = self._match(draws, ids, pos)
        order = np.argsort(answered, kind="stable")
        answered, pos, y = answered[order], pos[order], y[order]
        twice = answered[1:] == answered[:-1]
        if np.any(twice & (y[1:] != y[:-1])):
            d = answered[1:][twice & (y[1:] != y[:-1])][0]
            raise LabelError(f"draw {d} is given two different labels in one call; keep one. Nothing was stored")
        keep = np.r_[True, ~twice]
        answered, pos, y = answered[keep], pos[keep], y[keep]
        stored = self.draw_labels[answered]
        clash = (stored >= 0) & (stored != y)
        if clash.any():
            i = int(np.argmax(clash))
            raise LabelError(f"draw {answered[i]} (item {show_id(self.pool.item_ids[pos[i]])}) already has label "
                             f"{int(stored[i])}; the new label {int(y[i])} contradicts it (a draw has one answer). "
                             "Nothing was stored")
        new = stored < 0  # a repeated answer is skipped
        return answered[new], pos[new], y[new]

    def _match(self, draws: Draws, ids: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """The draw each label answers when none is given: an item's k-th label in a call answers its k-th
        pending draw."""
        pending = np.flatnonzero(self.waiting(draws))
        by_item = pending[np.argsort(draws.items[pending], kind="stable")]  # by item, then draw order
        uniq, start, count = np.unique(draws.items[by_item], return_index=True, return_counts=True)
        occurrence = ranks_within(pos)  # 0 for an id's first label in the call, 1 for its second...
        loc = np.minimum(np.searchsorted(uniq, pos), max(uniq.size - 1, 0))
        ok = np.zeros(pos.size, dtype=bool)
        if uniq.size:
            found = uniq[loc] == pos
            ok[found] = occurrence[found] < count[loc[found]]
        if not ok.all():
            i = int(np.argmax(~ok))
            waiting = int(count[loc[i]]) if uniq.size and uniq[loc[i]] == pos[i] else 0
            given = int(np.sum(pos == pos[i]))
            refused = LabelError if np.isin(pos[i], draws.items) else NotProposedError
            raise refused(
                f"item {show_id(ids[i])} has {waiting} draw(s) waiting for a label but {given} label(s) were given; "
                "label only items returned by next_batch, once per time they are returned. Nothing was stored",
                index=i,
            )
        return by_item[start[loc] + occurrence]

    def record(self, answered, pos, y):
        super().record(answered, pos, y)
        self.draw_labels[answered] = y

    def label_of(self, answered, pos):
        return self.draw_labels[answered]

    def correct(self, answered, pos, y):
        self.draw_labels[answered] = y

    def sample(self, draws: Draws) -> Sample:
        cut = self._prefix(draws)
        sample = self._sample(draws.head(cut), self.draw_labels[:cut])
        inside = self.answer_draws < cut
        if not inside.any():
            return sample
        return replace(sample, answers=(self.answer_draws[inside], self.answer_labels[inside]))


def make_ledger(oracle: str, pool: Pool) -> Ledger:
    """The ledger of an oracle mode."""
    return DrawLedger(pool) if oracle == "stochastic" else ItemLedger(pool)
