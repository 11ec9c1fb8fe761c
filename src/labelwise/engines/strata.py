"""``stratified`` on engine pools: the in-memory design's strata, allocation, draws and estimate, by the engine.

The in-memory :class:`~labelwise.designs.StratifiedDesign` cuts a system's
score into strata by the cumulative square-root frequency rule on
equal-width fine bins (:func:`~labelwise.partition.csf_bins`; Dalenius &
Hodges, "Minimum variance stratification", JASA 54, 1959), allocates every
batch over the strata (:func:`~labelwise.designs.stratified.allocate`) and
takes each stratum's share as its next items in increasing
``u = H(item_id, seed)`` (:mod:`labelwise.designs.hashed`).  Every step but
the fine-bin counts needs only the strata's sizes, and the counts need two
passes: the score's range, then ``floor((s - lo) * n_fine / (hi - lo))``
per row, exact in every engine.  So an engine pool computes the same strata,
and each batch takes one pass: the items of stratum ``h`` with ``u`` below a
bound that covers the stratum's next items
(:func:`~labelwise.designs.hashed.covering_bound`), sorted.  The estimate is
the stratified one (:func:`~labelwise.estimators.stratified_moments`).

Not on engine pools: Neyman allocation (its target needs every item's
projected loss), ``method="quantile"`` and the CSF rule's rank refinement
(both need every distinct score); each is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..designs.hashed import HashOrder
from ..designs.stratified import StratifiedDesign, planned_allocation, stratified_batch
from ..estimators import Estimate, make_estimate, stratified_moments
from ..estimators.label_floor import stratum_slope_moments
from ..measures import Measure
from ..partition.bins import csf_cuts, default_n_fine, fine_scale
from ..pool import Outputs
from .blocks import BlockSummary
from .columns import EngineColumns

__all__ = ["EngineStrata", "check_stratified", "engine_strata", "next_batch", "primary_column", "score_strata",
           "simulate_strata", "stratified_estimate", "stratum_order", "summary_slope_moments"]

_IN_MEMORY = " (or load the pool in memory)"


@dataclass(frozen=True)
class EngineStrata:
    """The strata of :func:`~labelwise.partition.csf_bins` on one score column of an engine pool.

    Attributes
    ----------
    column : str
        The system's score column (:func:`primary_column`).
    lo, scale : float
        Fine bin of a score ``s``: ``min(floor((s - lo) * scale), n_fine - 1)``.
    n_fine : int
    cuts : ndarray of int
        Increasing fine bins; stratum of a fine bin ``j``: the number of cuts below ``j``.
    sizes : ndarray of int, shape (K,)
        Items per stratum.
    """

    column: str
    lo: float
    scale: float
    n_fine: int
    cuts: np.ndarray
    sizes: np.ndarray

    @property
    def target(self) -> np.ndarray:
        """The proportional allocation ``N_h / N``."""
        return self.sizes / self.sizes.sum()

    def of_scores(self, scores: np.ndarray) -> np.ndarray:
        """The stratum of every score (NumPy)."""
        fine = np.minimum(((scores - self.lo) * self.scale).astype(np.int64), self.n_fine - 1)
        return np.searchsorted(self.cuts, fine, side="left")

    def to_json(self) -> dict:
        """JSON-able form (stored in an engine session)."""
        return {"column": self.column, "lo": self.lo, "scale": self.scale, "n_fine": self.n_fine,
                "cuts": self.cuts.tolist(), "sizes": self.sizes.tolist()}

    @classmethod
    def from_json(cls, data: dict) -> EngineStrata:
        """Inverse of :meth:`to_json`."""
        return cls(data["column"], float(data["lo"]), float(data["scale"]), int(data["n_fine"]),
                   np.asarray(data["cuts"], dtype=np.int64), np.asarray(data["sizes"], dtype=np.int64))


def primary_column(columns: EngineColumns, system: int | str) -> str:
    """The column :meth:`labelwise.Pool.primary_scores` reads for ``system``: its score, else probability,
    else predicted label.

    Raises
    ------
    ValueError
        For ``system="mean"``, which reads every system's probability of every item.
    """
    if isinstance(system, str):
        raise ValueError(f"system={system!r} on an engine pool: strata come from one column; name a system "
                         f"(--param system=0){_IN_MEMORY}")
    named = columns.scores or columns.probs or columns.preds
    if system >= len(named):
        raise ValueError(f"system: the pool has {len(named)} system(s), numbered from 0, got {system}")
    return named[system]


def check_stratified(design: StratifiedDesign) -> None:
    """Refuse settings of ``stratified`` that need the pool in memory, saying why.

    Raises
    ------
    ValueError
    """
    if design.allocation != "proportional":
        raise ValueError("stratified: Neyman allocation needs every item's projected loss; use allocation="
                         f"proportional, or design poisson, on engine pools{_IN_MEMORY}")
    if design.method != "csf":
        raise ValueError(f"stratified: method {design.method!r} needs every distinct score; use method=csf on "
                         f"engine pools{_IN_MEMORY}")


def engine_strata(source, design: StratifiedDesign) -> EngineStrata:
    """The design's strata on an engine pool's :class:`~labelwise.engines.source.PoolSource` (two passes).

    Raises
    ------
    ValueError
        For settings :func:`check_stratified` refuses, and for scores so
        concentrated that the CSF rule needs its rank refinement.
    """
    check_stratified(design)
    strata = score_strata(source, primary_column(source.columns, design.system), design.n_strata, design.name)
    if strata.sizes.size < design.n_strata:
        raise ValueError(f"stratified: the scores of {strata.column!r} are too concentrated for {design.n_strata} "
                         "strata by the square-root rule, and its rank refinement needs every distinct score; choose "
                         f"fewer strata (n_strata={strata.sizes.size}) or design poisson{_IN_MEMORY}")
    return strata


def score_strata(source, column: str, n_strata: int, design: str) -> EngineStrata:
    """The strata of :func:`~labelwise.partition.csf_bins` on ``column`` without its rank refinement (two passes):
    fewer than ``n_strata`` when the scores are too concentrated for the square-root rule.

    Raises
    ------
    ValueError
        Naming ``design`` when the scores span too wide a range for fine bins.
    """
    lo, hi, n_items = source.score_range(column)
    n_fine = default_n_fine(n_items, n_strata)
    if n_strata == 1 or lo == hi:
        return EngineStrata(column, lo, 0.0, n_fine, np.empty(0, dtype=np.int64), np.array([n_items]))
    scale = fine_scale(lo, hi, n_fine)
    if not np.isfinite(scale) or not np.isfinite(hi - lo):
        raise ValueError(f"{design}: the scores of {column!r} span too wide a range for fine bins{_IN_MEMORY}")
    f = source.fine_counts(column, lo, scale, n_fine)
    cuts = csf_cuts(f, n_strata)
    sizes = np.bincount(np.searchsorted(cuts, np.arange(n_fine), side="left"), weights=f).astype(np.int64)
    return EngineStrata(column, lo, scale, n_fine, cuts, sizes)


def stratum_order(source, strata: EngineStrata, seed: int) -> HashOrder:
    """The items of every stratum in increasing ``u = H(item_id, seed)``, found by passes of ``source``."""
    def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ids, u, stratum = source.stratum_uniforms(strata, bound, seed)
        return ids, u, stratum, ids

    return HashOrder(strata.sizes, find)


def stratified_estimate(measure: Measure, outputs: Outputs, labels: np.ndarray, strata: np.ndarray,
                        sizes: np.ndarray, level: float, slope_moments: np.ndarray) -> Estimate:
    """The stratified estimate of labeled items in ``strata`` (as :meth:`~labelwise.designs.StratifiedSampler.estimate`
    under a deterministic oracle); ``slope_moments`` (:func:`summary_slope_moments`) floor each stratum's label
    variance as there."""
    if labels.size == 0:
        return Estimate.undefined(measure, level)
    R, _, cov, _ = stratified_moments(measure, measure.loss(outputs, labels), strata, sizes,
                                      slope_moments=slope_moments, positive=labels == 1)
    return make_estimate(measure, R, cov, labels.size, labels.size, level)


def summary_slope_moments(measure: Measure, summary: BlockSummary, system_names: tuple[str, ...],
                          n_strata: int) -> np.ndarray:
    """Each stratum's mean of ``b b^T`` (:func:`~labelwise.estimators.label_floor.stratum_slope_moments`) from
    the blocks within the strata (:meth:`~labelwise.engines.pool.EnginePool.stratum_summary`): exact for
    measures whose loss depends on the items only through the predictions."""
    strata = summary.keys >> summary.key_bits
    outputs = summary.representatives(system_names).outputs()
    return stratum_slope_moments(measure, outputs, strata, n_strata, summary.counts)


def next_batch(source, strata: EngineStrata, design: StratifiedDesign, seed: int, handed: np.ndarray,
               handed_strata: np.ndarray, labeled: np.ndarray, n_new: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A batch of ``n_new`` new items (one pass), as :meth:`~labelwise.designs.StratifiedSampler.draw` draws it.

    Parameters
    ----------
    source : PoolSource
    strata : EngineStrata
    design : StratifiedDesign
    seed : int
    handed, handed_strata : ndarray of int
        The items handed out so far (the first of their strata's orders) and their strata.
    labeled : ndarray of int
        The labeled ones among them.
    n_new : int

    Returns
    -------
    items, item_strata : ndarray of int
    inclusion : ndarray
        ``n_h / N_h`` of their strata after the batch.
    """
    K = strata.sizes.size
    order = stratum_order(source, strata, seed)
    order.start[:] = np.bincount(handed_strata, minlength=K)
    counts = np.bincount(handed_strata[np.isin(handed, labeled)], minlength=K)
    items, of_items, alloc = stratified_batch(order, strata.target, counts, n_new, design.min_per_stratum,
                                              lambda ids: np.isin(ids, labeled))
    return items, of_items, ((counts + alloc) / strata.sizes)[of_items]


def simulate_strata(source, strata: EngineStrata, design: StratifiedDesign, measure: Measure, seed: int,
                    batch_size: int, marks: list[int], level: float, slope_moments: np.ndarray) -> list[Estimate]:
    """One simulated run: batches of ``batch_size`` labeled from the label column, an estimate at every mark
    (the strata's orders found in one pass for the expected allocation of ``marks[-1]`` labels);
    ``slope_moments`` as for :func:`stratified_estimate`."""
    order = stratum_order(source, strata, seed)
    order.reach(planned_allocation(marks[-1], strata.target, strata.sizes, design.min_per_stratum))
    labeled, of_labeled = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    while labeled.size < marks[-1]:
        counts = np.bincount(of_labeled, minlength=strata.sizes.size)
        items, of_items, _ = stratified_batch(order, strata.target, counts, min(batch_size, marks[-1] - labeled.size),
                                              design.min_per_stratum, lambda ids, done=labeled: np.isin(ids, done))
        labeled, of_labeled = np.r_[labeled, items], np.r_[of_labeled, of_items]
    labels = source.labels(labeled)
    return [stratified_estimate(measure, source.outputs(labeled[:k]), labels[:k], of_labeled[:k], strata.sizes, level,
                                slope_moments) for k in marks]
