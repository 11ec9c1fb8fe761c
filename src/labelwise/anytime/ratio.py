"""Confidence sequences for measures that are ratios of affine functions of R.

A component ``G = (a.R + a0) / (b.R + b0)`` with ``b.R + b0 > 0`` lies at or
above ``t`` exactly when ``E[w (a.l + a0 - t (b.l + b0))] >= 0``: with
importance weights ``w = p / q`` of mean one, ``E[w l] = R``.  So the
confidence sequence for ``G`` is the set of ``t`` for which the betting
sequence (:mod:`labelwise.anytime.betting`) for the mean of
``w (a.l + a0 - t (b.l + b0))`` has not excluded 0 (the construction for ratio
metrics asked of Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024, applied to the numerator minus ``t``
times the denominator).  Precision, recall and F-beta are such ratios
(``b0 = 0``), accuracy and the Brier score affine (``b = 0``, ``b0 = 1``).

The increments are bounded through the pool's possible loss vectors (every
item under every label), each times the largest weight, known before the
draws, of an item that may take it: under importance sampling the items
likely to be positive have small weights, so the bounds of the positive
terms, and so the bets against too high a value, are far from the worst case
``1 / defensive``.  Under one fixed proposal the bets also carry item
side bets (:mod:`labelwise.anytime.side_bets`), so that the few items of
largest weight no longer cap the bets against too low a value, and under a
deterministic oracle the draws of items labeled in earlier batches take
their known mean (:mod:`labelwise.anytime.known_items`) and the interval
keeps to the values some labeling of the items not yet labeled allows
(:mod:`labelwise.anytime.possible`).

For distinct items drawn uniformly without replacement from the ``N`` items
(the first draws of ``passive`` under a deterministic oracle) the finite-pool
version of Waudby-Smith & Ramdas, "Confidence sequences for sampling without
replacement", NeurIPS 2020 (sec. 3) applies: under ``H0(t)`` the ``N - j``
items not yet drawn sum to minus the ``j`` drawn, so the ``(j+1)``-th item's
``y`` has conditional mean ``-S_j / (N - j)`` and the increments
``y_{j+1} + S_j / (N - j)`` are martingale differences whose bounds, and so
the bets, tighten as the pool is used up.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..estimators.posterior import loss_cells
from ..measures import Measure
from ..measures.base import CombinedMeasure, RatioOfTotals
from ..measures.domain import DomainMeasure
from ..pool import Pool
from .betting import Capital, bet_on_batches, boldest_bet
from .known_items import LabeledItems
from .possible import PossibleValues, UnlabeledCounts
from .side_bets import SideBets

__all__ = ["RatioForm", "RatioSequence", "ratio_forms", "ratio_sequence"]

#: Candidate values per component: the sequence is resolved to (range / GRID) and widened by one step.
GRID = 801
#: Share of a component's range the interval reaches beyond one grid step (float rounding of the true value).
GRID_MARGIN = 1e-9
#: Most item groups (distinct loss keys) bounded separately.
MAX_GROUPS = 4096


@dataclass(frozen=True)
class RatioForm:
    """``G = (a.R + a0) / (b.R + b0)`` for one component of a measure."""

    a: np.ndarray
    a0: float
    b: np.ndarray
    b0: float


def _affine_1d(measure: Measure) -> tuple[float, float] | None:
    """``(c0, c1)`` with ``g(R) = c0 + c1 R`` for a scalar measure of a scalar loss, else ``None``."""
    if measure.dim != 1 or measure.size != 1:
        return None
    g0, g1, gh = (float(measure.value(np.array([r]))[0]) for r in (0.0, 1.0, 0.37))
    if not np.isclose(gh, g0 + 0.37 * (g1 - g0)):
        return None
    return g0, g1 - g0


def ratio_forms(measure: Measure) -> list[RatioForm] | None:
    """The ratio form of every component of ``measure``, or ``None`` when some component has none.

    Recognized: ratios of two loss totals (precision, recall, F-beta), affine
    scalar measures (accuracy, Brier score), these over the judgeable items
    (:class:`~labelwise.measures.domain.DomainMeasure`) and combinations of them.
    """
    if isinstance(measure, CombinedMeasure):
        parts = [ratio_forms(p) for p in measure.parts]
        if any(p is None for p in parts):
            return None
        forms, offset = [], 0
        for part, forms_of_part in zip(measure.parts, parts):
            for f in forms_of_part:
                pad = lambda v, k=offset, p=part: np.r_[np.zeros(k), v, np.zeros(measure.dim - k - p.dim)]
                forms.append(RatioForm(pad(f.a), f.a0, pad(f.b), f.b0))
            offset += part.dim
        return forms
    unit = np.eye(measure.dim)
    if isinstance(measure, RatioOfTotals) and measure.dim == 2:
        return [RatioForm(unit[0], 0.0, unit[1], 0.0)]
    if isinstance(measure, DomainMeasure):  # g(T, s) = c0 + c1 T / s = (c1 T + c0 s) / s
        affine = _affine_1d(measure.inner)
        return None if affine is None else [RatioForm(np.array([affine[1], affine[0]]), 0.0, unit[1], 0.0)]
    affine = _affine_1d(measure)
    return None if affine is None else [RatioForm(np.array([affine[1]]), affine[0], np.zeros(1), 1.0)]


def _item_groups(measure: Measure, pool: Pool) -> tuple[np.ndarray, np.ndarray]:
    """Each item's group and, per group, the loss vectors its items may take (shape (K, C, d)).

    Items are grouped by :meth:`~labelwise.measures.base.Measure.loss_key` (items of one key take the same
    loss vectors); without keys, or with more than :data:`MAX_GROUPS`, all items form one group that may take
    every loss vector.
    """
    outputs = pool.outputs()
    keys = measure.loss_key(outputs)
    if keys is None or np.unique(keys).size > MAX_GROUPS:
        cells = loss_cells(measure, outputs, pool.n_classes)
        if cells is None:
            cells = np.unique(np.concatenate([measure.loss(outputs, np.full(pool.n_items, c))
                                              for c in range(pool.n_classes)]), axis=0)
        return np.zeros(pool.n_items, dtype=int), cells[None]
    _, first, group = np.unique(keys, return_index=True, return_inverse=True)
    reps = pool.outputs(first)
    return group.ravel(), np.stack([measure.loss(reps, np.full(first.size, c)) for c in range(pool.n_classes)],
                                   axis=1)


def _terms(group: np.ndarray, cells: np.ndarray, weight_bound: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The loss vectors any item may take under any label (``group`` and ``cells`` from :func:`_item_groups`),
    each with the largest weight of an item that may take it, and the zero loss of an excluded item (any item's
    weight)."""
    bounds = np.broadcast_to(np.asarray(weight_bound, dtype=float), group.shape)
    group_bounds = np.zeros(cells.shape[0])
    np.maximum.at(group_bounds, group, bounds)
    dim = cells.shape[2]
    return (np.vstack([cells.reshape(-1, dim), np.zeros((1, dim))]),
            np.r_[np.repeat(group_bounds, cells.shape[1]), bounds.max()])


def _side_bets(group: np.ndarray, cells: np.ndarray, weight_bound: np.ndarray, form: RatioForm, grid: np.ndarray,
               low: np.ndarray, high: np.ndarray) -> SideBets:
    """The item side bets (:mod:`labelwise.anytime.side_bets`) of one component under a fixed proposal whose
    weights are ``weight_bound`` (``group`` and ``cells`` from :func:`_item_groups`)."""
    cells = np.concatenate([cells, np.zeros((cells.shape[0], 1, cells.shape[2]))], axis=1)  # and an excluded item's
    per_weight = (cells @ form.a + form.a0)[..., None] - grid * (cells @ form.b + form.b0)[..., None]
    return SideBets.build(group, per_weight, np.asarray(weight_bound, dtype=float),
                          (boldest_bet(-low), boldest_bet(high)))


def _without_replacement(y: np.ndarray, low: np.ndarray, high: np.ndarray, n_left: int, drawn_sum: np.ndarray,
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Finite-pool increments ``y_j + S_{j-1} / (N - j + 1)`` and their bounds per row (shape (n, G)), and the
    sum of all rows.

    ``S_{j-1}``, the sum over the items drawn before (``drawn_sum`` over earlier calls, with ``n_left`` items not
    yet drawn before the first row), is known before row ``j``: the bounds are exact.
    """
    sums = np.cumsum(np.vstack([drawn_sum, y]), axis=0)[1:]  # S_j, continued from the earlier rows
    shift = (sums - y) / (n_left - np.arange(y.shape[0], dtype=float))[:, None]  # N - j + 1 items not yet drawn
    return y + shift, low + shift, high + shift, sums[-1]


def _kept_interval(grid: np.ndarray, kept: np.ndarray, lo: float, hi: float,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The interval spanned by the candidates not excluded after each batch (``kept``, shape (B, G)).

    The true value lies between grid points, so the interval reaches one step beyond the outermost kept
    ones, and a further ``GRID_MARGIN`` of the range so that a true value on the grid point one step out,
    computed with a different rounding, is not read as a miss.  Where nothing is kept (the running
    intersection is empty: the labels contradict the sequence, a ``1 - level`` event if the design holds)
    the interval is the whole range and ``emptied`` is set.

    Returns
    -------
    lower, upper : ndarray, shape (B,)
    emptied : ndarray of bool, shape (B,)
    """
    emptied = ~kept.any(axis=1)
    first, last = np.argmax(kept, axis=1), grid.size - 1 - np.argmax(kept[:, ::-1], axis=1)
    reach = (grid[1] - grid[0]) + GRID_MARGIN * (hi - lo)
    lower = np.where(emptied, lo, np.maximum(grid[first] - reach, lo))
    upper = np.where(emptied, hi, np.minimum(grid[last] + reach, hi))
    return lower, upper, emptied


@dataclass(frozen=True)
class _Component:
    """One component's bets before any draw: its form, candidate values, the increments' bounds (each (G,)) and
    its item side bets (under a fixed proposal)."""

    form: RatioForm
    grid: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lo: float
    hi: float
    side: SideBets | None
    possible: PossibleValues | None = None


@dataclass(frozen=True)
class RatioSequence:
    """The confidence sequence of every component of a measure, advanced batch by batch.

    :meth:`start` fixes what is known before the draws (forms, candidate grids, the increments' bounds);
    :meth:`advance` takes the next batches and returns the sequence after them, its capital carried over,
    so following a session batch by batch costs the new draws only and gives, bit for bit, the intervals of
    one pass over all rows (:func:`ratio_sequence`).
    """

    components: tuple[_Component, ...]
    capitals: tuple[Capital, ...]
    drawn_sums: tuple[np.ndarray, ...]  # per component: S, the sum of the rows so far (finite-pool sequence)
    n_rows: int
    n_items: int
    alpha: float
    horizon: float
    without_replacement: bool
    per_row: bool
    labeled: LabeledItems | None = None  # with one fixed proposal and fixed labels: the items labeled so far
    group: np.ndarray | None = None  # with ``labeled``: each item's group (:func:`_item_groups`)

    @classmethod
    def start(cls, measure: Measure, pool: Pool, weight_bound: float | np.ndarray, level: float, horizon: float, *,
              without_replacement: bool = False, per_row: bool = False, side_bets: bool = True,
              known_labels: bool = False) -> RatioSequence:
        """The sequence before any draw (parameters as :func:`ratio_sequence`).

        Raises
        ------
        ValueError
            For a measure without :func:`ratio_forms` or with an unbounded component.
        """
        forms = ratio_forms(measure)
        if forms is None:
            raise ValueError(f"anytime intervals cover ratios of loss totals and affine measures (precision, "
                             f"recall, F-beta, accuracy, Brier); {measure.name!r} is neither")
        group, cells = _item_groups(measure, pool)
        terms, term_bounds = _terms(group, cells, weight_bound)
        components = []
        for k, f in enumerate(forms):  # a few components: one grid each
            lo, hi = float(measure.lower[k]), float(measure.upper[k])
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise ValueError(f"anytime intervals need a bounded measure; {measure.names[k]!r} is unbounded")
            grid = np.linspace(lo, hi, GRID)
            cell_y = term_bounds[:, None] * ((terms @ f.a + f.a0)[:, None] - grid * (terms @ f.b + f.b0)[:, None])
            low, high = np.minimum(cell_y.min(axis=0), 0.0), np.maximum(cell_y.max(axis=0), 0.0)
            side = (_side_bets(group, cells, weight_bound, f, grid, low, high)
                    if side_bets and np.ndim(weight_bound) == 1 and not without_replacement else None)
            components.append(_Component(f, grid, low, high, lo, hi, side))
        known = (LabeledItems.start(pool.n_items, measure.dim)
                 if known_labels and components[0].side is not None and not per_row else None)
        if known is not None:  # labels that stay fixed: the values the unlabeled items still allow
            components = [replace(c, possible=PossibleValues.build(c.form.a, c.form.a0, c.form.b, c.form.b0, c.grid,
                                                                   cells)) for c in components]
        return cls(tuple(components), (Capital.start(GRID),) * len(forms), (np.zeros(GRID),) * len(forms), 0,
                   pool.n_items, 1 - level, horizon, without_replacement, per_row or without_replacement, known,
                   group if known is not None else None)

    def advance(self, losses: np.ndarray, weights: np.ndarray, counts: np.ndarray, batches: np.ndarray,
                items: np.ndarray | None = None) -> tuple[RatioSequence, np.ndarray, np.ndarray, np.ndarray]:
        """The sequence after the next batches (arrays as :func:`ratio_sequence`, the rows after those seen).

        Returns
        -------
        sequence : RatioSequence
            After these batches (this one is unchanged).
        lower, upper : ndarray, shape (B, m)
            The interval after each of these batches (the whole range where it is empty).
        emptied : ndarray of bool, shape (B, m)
            Where the sequence has excluded every candidate value (:func:`_kept_interval`).
        """
        n_batches = np.unique(batches).size
        lower, upper = np.empty((n_batches, len(self.components))), np.empty((n_batches, len(self.components)))
        emptied = np.zeros((n_batches, len(self.components)), dtype=bool)
        if n_batches == 0:
            return self, lower, upper, emptied
        if self.components[0].side is not None and items is None:
            raise ValueError("items: needed with each item's own weight bound (the item side bets)")
        capitals, drawn_sums, labeled, draws = list(self.capitals), list(self.drawn_sums), self.labeled, None
        if labeled is not None:  # draws of items labeled in earlier batches: their known increments' mean
            draws, labeled = labeled.by_batch(losses, items, batches, self.components[0].side.proposal)
            unlabeled = UnlabeledCounts.after_batches(self.labeled, draws, losses, items, self.group)
        for k, c in enumerate(self.components):
            f = c.form
            num, den = losses @ f.a + f.a0, losses @ f.b + f.b0
            values = weights[:, None] * (num[:, None] - c.grid * den[:, None])
            shared = None
            if draws is not None:
                shared = draws.shared_increment(f.a, f.a0, f.b, f.b0, c.grid, self.n_items)
                values = draws.replace(values, shared)
            low, high = c.low, c.high
            if self.without_replacement:
                values, low, high, drawn_sums[k] = _without_replacement(values, low, high,
                                                                        self.n_items - self.n_rows, drawn_sums[k])
            rejected, capitals[k] = bet_on_batches(capitals[k], values, counts, batches, low, high, self.alpha,
                                                   self.horizon, per_row=self.per_row, side=c.side, items=items,
                                                   shared=shared)
            if c.possible is None:
                lower[:, k], upper[:, k], emptied[:, k] = _kept_interval(c.grid, ~rejected, c.lo, c.hi)
            else:  # and within the values the unlabeled items allow (labelwise.anytime.possible)
                lower[:, k], upper[:, k], emptied[:, k] = _kept_interval(c.grid, ~rejected & c.possible.kept(unlabeled),
                                                                         c.lo, c.hi)
                least, most = c.possible.ends(unlabeled)
                reach = GRID_MARGIN * (c.hi - c.lo)
                lower[:, k] = np.where(emptied[:, k], lower[:, k], np.maximum(lower[:, k], least - reach))
                upper[:, k] = np.where(emptied[:, k], upper[:, k], np.minimum(upper[:, k], most + reach))
        return (replace(self, capitals=tuple(capitals), drawn_sums=tuple(drawn_sums),
                        n_rows=self.n_rows + len(losses), labeled=labeled), lower, upper, emptied)


def ratio_sequence(measure: Measure, pool: Pool, losses: np.ndarray, weights: np.ndarray, counts: np.ndarray,
                   batches: np.ndarray, weight_bound: float | np.ndarray, level: float, horizon: float, *,
                   without_replacement: bool = False, per_row: bool = False, items: np.ndarray | None = None,
                   side_bets: bool = True, known_labels: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Confidence sequence of every component after every batch.

    Parameters
    ----------
    measure : Measure
        A measure with :func:`ratio_forms`.
    pool : Pool
        The pool the items come from (its possible loss vectors bound the increments).
    losses : ndarray, shape (n, d)
        Loss of each labeled draw, in draw order.
    weights : ndarray, shape (n,)
        ``p / q`` of each draw (mean one given the past).
    counts, batches : ndarray of int, shape (n,)
        Identical draws per row; batch of each row (nondecreasing).
    weight_bound : float or ndarray, shape (N,)
        A bound on every weight, or on each item's weight: its ``1 / (N q_i)`` under a fixed proposal ``q``
        (then, with ``side_bets``, the bets carry item side bets, :mod:`labelwise.anytime.side_bets`, and need
        ``items``).
    level : float
    horizon : float
        Draws the bets are tuned for (:func:`~labelwise.anytime.betting.rejected_by_batch`).
    without_replacement : bool
        The rows are distinct items drawn uniformly without replacement from the pool (weights and
        counts 1): the finite-pool sequence (module docstring).
    per_row : bool
        The rows are in draw order (:func:`~labelwise.anytime.betting.rejected_by_batch`); implied by
        ``without_replacement``.
    items : ndarray of int, shape (n,), optional
        Pool position of each row's item (needed with the item side bets).
    side_bets : bool
        Every draw came from the fixed proposal whose weights are ``weight_bound`` (shape (N,)): the bets may
        carry item side bets, centred by their mean under it.  Otherwise (draws from several proposals, each
        item's bound its largest weight under any of them) they must not.
    known_labels : bool
        The oracle is deterministic (an item's label never changes) and, with item side bets and whole batches,
        the draws of items labeled in earlier batches take their known mean
        (:mod:`~labelwise.anytime.known_items`) and the interval keeps to the values the unlabeled items allow
        (:mod:`~labelwise.anytime.possible`).

    Returns
    -------
    lower, upper : ndarray, shape (B, m)
        The sequence's interval after each batch; the whole range where it excludes nothing.
    """
    start = RatioSequence.start(measure, pool, weight_bound, level, horizon, without_replacement=without_replacement,
                                per_row=per_row, side_bets=side_bets, known_labels=known_labels)
    return start.advance(losses, weights, counts, batches, items)[1:3]
