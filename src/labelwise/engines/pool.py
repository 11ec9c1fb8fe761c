"""A pool whose rows stay in an engine: only block summaries and sampled rows reach Python."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ..designs import Design
from ..designs.hashed import HashOrder, first_by_ratio
from ..designs.poisson_blocks import block_model_widening
from ..estimators import Estimate
from ..measures import CombinedMeasure, Measure, make_measure
from ..measures.thresholds import ThresholdMeasure
from ..pool import Pool, PoolError
from ..store import StoreError
from .blocks import BlockSummary
from .columns import BINARY
from .files import expand_paths, fingerprint
from .hashing import item_uniform
from .plan import Plan, PlannedSample, block_inclusion
from .source import MemorySource, PoolSource

__all__ = ["ENGINES", "EnginePool", "measure_on_blocks"]

#: Engines a Parquet pool can be read with.
ENGINES = ("duckdb", "spark")
#: Rows a curve's thresholds are spread over (:func:`measure_on_blocks`).
THRESHOLD_SAMPLE = 100_000


def measure_on_blocks(names: str | Sequence[str], summary: BlockSummary, system_names: tuple[str, ...],
                      systems: str | int | Sequence[int], rows: Callable[[], Pool] | None) -> Measure:
    """:func:`labelwise.make_measure` on the blocks' representatives, or on ``rows()`` for a curve.

    A curve's (:class:`~labelwise.measures.thresholds.ThresholdMeasure`)
    thresholds are spread over the system's scores, which the
    representatives do not have (their probability is the block's mean
    prior): over them a PR curve of raw scores got thresholds in [0, 1].
    ``rows`` gives the outputs of a uniform sample of the pool's rows
    (:meth:`EnginePool.sampled_rows`); ``None``: the representatives for
    every measure (sessions written before).
    """
    measure = make_measure(names, summary.representatives(system_names), systems)
    parts = measure.parts if isinstance(measure, CombinedMeasure) else [measure]
    if rows is not None and any(isinstance(part, ThresholdMeasure) for part in parts):
        measure = make_measure(names, rows(), systems)
    return measure


class EnginePool:
    """A binary pool read through an engine (:func:`labelwise.Pool.from_parquet` with ``engine=``).

    Parameters
    ----------
    source : PoolSource
    name : str
    files : list of Path
        The pool's files (empty for an in-memory source).

    Notes
    -----
    The pool is summarised once per block (:attr:`summary`, one pass), a
    design turns the summary into a :class:`~labelwise.engines.plan.Plan`
    (:meth:`plan`) and one more pass draws the sample (:meth:`sample`).  The
    same seed gives the same sample in every engine and for the same pool
    in memory (:meth:`from_pool`).
    """

    def __init__(self, source: PoolSource, name: str, files: Sequence[Path] = ()):
        self.source, self.name, self.files = source, name, list(files)

    @classmethod
    def open(cls, paths: str | Path | Sequence[str | Path], engine: str = "duckdb", *, spark=None,
             spark_master: str | None = None, name: str | None = None, **columns) -> EnginePool:
        """An engine pool on Parquet files (each a path or a glob).

        Parameters
        ----------
        paths : path, glob or list of them
        engine : {"duckdb", "spark"}
        spark : pyspark.sql.SparkSession, optional
            An existing session (``engine="spark"``); else one is started on ``spark_master``.
        spark_master : str, optional
            Such as ``local[2]`` or ``spark://host:7077`` (default ``local[*]``).
        name : str, optional
            Defaults to the first file's name without suffixes.
        **columns
            ``id_col``, ``pred_cols``, ``prob_cols``, ``score_cols``, ``label_col``,
            ``system_names`` (:func:`~labelwise.engines.columns.resolve_columns`).

        Raises
        ------
        PoolError
            For missing files or columns.
        ValueError
            For an unknown engine.
        """
        files = expand_paths(paths)
        if engine == "duckdb":
            from .duckdb import DuckDBSource

            source: PoolSource = DuckDBSource(files, **columns)
        elif engine == "spark":
            from .spark import SparkSource

            source = SparkSource(files, spark=spark, master=spark_master, **columns)
        else:
            raise ValueError(f"engine: choose from {', '.join(ENGINES)} or 'memory', got {engine!r}")
        return cls(source, name or files[0].name.split(".")[0], files)

    @classmethod
    def from_pool(cls, pool: Pool) -> EnginePool:
        """An in-memory binary pool with integer ids, run through the engine designs (same sample per seed)."""
        return cls(MemorySource(pool), pool.name)

    @cached_property
    def summary(self) -> BlockSummary:
        """Items and summed prior per block: one pass over the pool, on first use."""
        return self.source.summary()

    def stratum_summary(self, strata) -> BlockSummary:
        """Items and summed prior per block within the score ``strata`` (:class:`~labelwise.engines.strata.EngineStrata`;
        one pass)."""
        return self.source.summary(strata)

    @property
    def n_items(self) -> int:
        """Number of items ``N``."""
        return self.summary.n_items

    @property
    def system_names(self) -> tuple[str, ...]:
        return self.source.columns.system_names

    def fingerprint(self) -> str:
        """Content fingerprint of the pool's files (:func:`~labelwise.engines.files.fingerprint`)."""
        return fingerprint(self.files)

    def check_checksum(self, stored: list[str] | None, session: str) -> None:
        """One pass: raise :class:`~labelwise.store.StoreError` unless the checksum of the systems' outputs
        (:func:`~labelwise.engines.sql.checksum_query`) is ``stored``, that of the pool ``session`` was made on
        (``None``: not stored, nothing checked)."""
        if stored is not None and self.source.checksum() != stored:
            raise StoreError(f"{session}: the systems' outputs in {self.source.where} "
                             "changed since init (a checksum of the predictions, probabilities and scores by item "
                             "differs, though the files' sizes and footers did not); restore them or start a new "
                             "session")

    def check_items(self) -> None:
        """One pass (two for probabilities alone in two columns or more): raise :class:`~labelwise.pool.PoolError`
        naming an id several rows hold, and how many, or probability columns that are class probabilities.

        The sample is drawn by item id, so a repeated id would be one item drawn with several rows' outputs.
        Probability columns without pred or score columns are one binary system each, unless groups of two or
        more sum to 1 as class probabilities do, as in a pool file read in memory
        (:func:`~labelwise.pool.class_columns.summing_groups`): those are a multi-class pool's, which engine pools
        do not take, or a binary system's two class probabilities, of which they take the second.
        """
        c = self.source.columns
        sizes = [] if c.preds or c.scores else [k for k in range(len(c.probs), 1, -1) if len(c.probs) % k == 0]
        classes = [size for size, read in zip(sizes, self.source.class_sums(sizes) if sizes else []) if read]
        if classes:
            listed = ", ".join(map(repr, c.probs))
            fix = (f"they are binary systems' two class probabilities: give each system's p(y=1), the column of "
                   f"class 1, alone (--prob-col {','.join(c.probs[1::2])})" if classes[0] == 2 else BINARY)
            raise PoolError(f"{self.source.where}: the prob columns {listed} sum to 1 by groups of {classes[0]}, as "
                            f"one system's class probabilities do; {fix}")
        repeated = self.source.duplicate_id()
        if repeated is not None:
            raise PoolError(f"{self.source.where}: item id {repeated[0]} is held by {repeated[1]} rows; engine pools "
                            "draw the sample by id and need one row per item: keep one row per id (or give the "
                            "repeated rows new ids) and run init again")

    def measure(self, names: str | Sequence[str], systems: str | int | Sequence[int] = 0) -> Measure:
        """:func:`labelwise.make_measure` for this pool's systems (:func:`measure_on_blocks`); a measure of an output
        the pool lacks is refused naming its files."""
        try:
            return measure_on_blocks(names, self.summary, self.system_names, systems, self.sampled_rows)
        except PoolError as exc:
            raise PoolError(f"{self.source.where}: {exc}") from None

    def sampled_rows(self, size: int = THRESHOLD_SAMPLE) -> Pool:
        """The outputs of a simple random sample of about ``size`` rows (all of them in a smaller pool), drawn by the
        item hash with seed 0: the same rows every time, in every engine."""
        keys = self.summary.keys
        plan = Plan(keys, np.full(keys.size, min(1.0, size / self.n_items)), uniform=True)
        ids = self.sample(plan, 0).item_ids
        out = self.source.outputs(ids)
        return Pool.from_arrays(ids, preds=out.preds, scores=out.scores, probs=out.probs)

    def plan(self, design: Design, measure: Measure, budget: int) -> Plan:
        """``design``'s inclusion probability per block for ``budget`` expected labels."""
        b = block_inclusion(design, self.summary, measure, budget, self.system_names)
        size = min(budget, self.n_items) if design.name == "poisson" else None
        return Plan(self.summary.keys, b, uniform=design.name == "passive", size=size)

    def sample(self, plan: Plan, seed: int, exclude: np.ndarray | None = None, strata=None) -> PlannedSample:
        """The items with ``H(item_id, seed) < b`` (one pass), in hand-out order, but the ids ``exclude``; for a
        :attr:`~labelwise.engines.plan.Plan.size`, the first ``size`` of them by ``u / b`` (one pass under covering
        bounds, :func:`~labelwise.designs.hashed.first_by_ratio`).  ``strata``: the plan's blocks are within these
        score strata (:meth:`stratum_summary`)."""
        if plan.size is None:
            return replace(self.source.sample(plan, seed, self.n_items, exclude, strata), uniform=plan.uniform)

        def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            drawn = self.source.sample(Plan(plan.blocks, bound), seed, self.n_items, exclude)
            # the items are named by their block keys here, the hash keys are the ids
            return drawn.keys, plan.inclusion[np.searchsorted(plan.blocks, drawn.keys)], drawn.item_ids

        keys, b, ids = first_by_ratio(find, seed, plan.inclusion, plan.size, self.summary.counts)
        return PlannedSample(ids, b, self.n_items, keys, uniform=plan.uniform)

    def hash_order(self, seed: int, blocks: np.ndarray | None = None, sizes: np.ndarray | None = None,
                   exclude: np.ndarray | None = None, strata=None) -> HashOrder:
        """The items of every block in increasing ``u = H(item_id, seed)`` (ties by id), found by passes of the pool
        as far as draws reach (:class:`~labelwise.designs.hashed.HashOrder`).

        ``blocks`` (default the summary's keys, ``sizes`` their items) are within ``strata`` if given (:meth:`sample`);
        the ids ``exclude`` are left out (``sizes`` counts the others).
        """
        keys = self.summary.keys if blocks is None else blocks

        def find(bound: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
            drawn = self.source.sample(Plan(keys, bound), seed, self.n_items, exclude, strata)
            return drawn.item_ids, item_uniform(drawn.item_ids, seed), np.searchsorted(keys, drawn.keys), drawn.item_ids

        return HashOrder(self.summary.counts if sizes is None else sizes, find)

    def rows(self, item_ids: np.ndarray) -> pd.DataFrame:
        """Every column (content included) of the rows of ``item_ids``, in that order."""
        return self.source.rows(item_ids)

    def estimate(self, sample: PlannedSample, measure: Measure, item_ids: np.ndarray, labels: np.ndarray,
                 level: float = 0.95, design: Design | None = None, budget: int | None = None) -> Estimate:
        """Estimate ``measure`` from the labels of sampled ``item_ids`` (:meth:`PlannedSample.estimate`).

        With the ``poisson`` ``design`` and the ``budget`` its sample was planned for (``measure`` then must be the
        one it was planned for), the interval also sees the items not labeled yet through the oracle model of the
        blocks, as a session's does (:func:`~labelwise.designs.poisson_blocks.block_model_widening`).
        """
        item_ids = np.asarray(item_ids, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        at = pd.Index(sample.item_ids).get_indexer(item_ids)
        outputs = self.source.outputs(item_ids)
        cells = self.summary.loss_cells(measure, self.system_names) if sample.uniform else None
        widen = None
        if design is not None and budget is not None and sample.keys is not None:
            blocks = np.searchsorted(self.summary.keys, sample.keys[at])
            widen = block_model_widening(design, self.summary, measure, measure, self.system_names, budget,
                                         len(sample), blocks, labels, level)
        return sample.estimate(measure, outputs, labels, sample.inclusion[at], level, cells, widen)
