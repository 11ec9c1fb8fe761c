"""Where an engine pool's rows live: NumPy arrays, or files read by a SQL engine.

A source answers the three questions the engine designs ask
(:mod:`labelwise.engines.plan`): the block summary (one pass), the items
with ``u < b`` for a plan (one pass) and the rows of given ids.  The SQL
sources share their queries (:mod:`labelwise.engines.sql`); only how a query
runs and how a small table is handed to the engine differ.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import pandas as pd

from ..pool import Outputs, Pool, PoolError, batch_frame
from ..pool.cells import SUM_TOLERANCE
from ..pool.class_columns import read_as_classes
from .blocks import BlockSummary, memory_blocks, memory_keys
from .columns import EngineColumns, invalid_cells
from .hashing import SqlDialect, item_uniform, uniforms_below
from .plan import Plan, PlannedSample, hand_out_order
from .sql import (
    FINE_STRATA,
    checked_columns,
    checksum_query,
    class_sums_query,
    draw_query,
    duplicate_id_query,
    fine_counts_query,
    fine_strata,
    first_invalid_query,
    rows_query,
    score_range_query,
    stratum_draw_query,
    summary_query,
    threshold_groups_query,
    truth_query,
    value_moments_query,
)

__all__ = ["MemorySource", "PoolSource", "ScoreArray", "SqlSource"]


def _planned(item_ids: np.ndarray, u: np.ndarray, b: np.ndarray, keys: np.ndarray, n_items: int) -> PlannedSample:
    order = hand_out_order(item_ids, u, b)
    return PlannedSample(item_ids[order].astype(np.int64), b[order], n_items, keys[order].astype(np.int64))


class PoolSource(ABC):
    """The rows of an engine pool.

    Attributes
    ----------
    engine : str
        ``"memory"``, ``"duckdb"`` or ``"spark"``.
    columns : EngineColumns
    where : str
        How messages name the pool (its files).
    """

    engine: str
    columns: EngineColumns
    where: str

    @abstractmethod
    def summary(self, strata=None) -> BlockSummary:
        """One pass: items and summed prior per block (:mod:`labelwise.engines.blocks`), within the score
        ``strata`` (:class:`~labelwise.engines.strata.EngineStrata`) if given."""

    @abstractmethod
    def sample(self, plan: Plan, seed: int, n_items: int, exclude: np.ndarray | None = None,
               strata=None) -> PlannedSample:
        """One pass: the items with ``H(item_id, seed) < b`` of their block (within ``strata`` if given), in
        hand-out order, but ``exclude``."""

    @abstractmethod
    def rows(self, item_ids: np.ndarray) -> pd.DataFrame:
        """Every column of the rows of ``item_ids``, in that order."""

    @abstractmethod
    def score_range(self, column: str) -> tuple[float, float, int]:
        """One pass: the least and greatest value of a score column and the number of rows."""

    @abstractmethod
    def fine_counts(self, column: str, lo: float, scale: float, n_fine: int) -> np.ndarray:
        """One pass: items per fine bin ``min(floor((s - lo) * scale), n_fine - 1)`` of a score column."""

    @abstractmethod
    def stratum_uniforms(self, strata, bound: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One pass: ids, ``u`` and stratum of the items with ``u < bound`` of their stratum
        (:class:`~labelwise.engines.strata.EngineStrata`)."""

    @abstractmethod
    def threshold_groups(self, column: str, thresholds: np.ndarray, strata=None) -> pd.DataFrame:
        """One pass: columns ``block``, ``k``, ``n``, ``value``; the items of every block (within ``strata`` if
        given) with ``k`` of the increasing ``thresholds`` at or below their value of ``column``, their number and
        the least such value (:func:`~labelwise.engines.sql.threshold_groups_query`)."""

    @abstractmethod
    def value_moments(self, column: str, strata=None) -> pd.DataFrame:
        """One pass: columns ``block``, ``n``, ``total``, ``total_sq``; the items of every block (within ``strata``
        if given) and the sums of their values of ``column`` and of the squares
        (:func:`~labelwise.engines.sql.value_moments_query`)."""

    def duplicate_id(self) -> tuple[int, int] | None:
        """One pass: an item id held by several rows and how many, or ``None`` (an in-memory pool's ids are unique
        by its own checks)."""
        return None

    def checksum(self) -> list[str] | None:
        """One pass: the checksum of the systems' outputs by item (:func:`~labelwise.engines.sql.checksum_query`);
        ``None`` for an in-memory pool, which no session reopens."""
        return None

    def class_sums(self, sizes: list[int]) -> list[bool]:
        """One pass: for each group size of ``sizes``, whether the probability columns are class probabilities in
        groups of that many by their sums (:func:`~labelwise.engines.sql.class_sums_query`,
        :func:`~labelwise.pool.class_columns.read_as_classes`); an in-memory pool is binary by its own checks."""
        return [False] * len(sizes)

    def outputs(self, item_ids: np.ndarray) -> Outputs:
        """The systems' outputs of ``item_ids`` (read back through :meth:`labelwise.Pool.from_dataframe`)."""
        frame = self.rows(item_ids)
        return Pool.from_dataframe(frame, label_col=None, **self.columns.options()).outputs()

    def labels(self, item_ids: np.ndarray) -> np.ndarray:
        """Ground truth of ``item_ids`` from the label column (simulations)."""
        self._require_labels()
        return self.rows(item_ids)[self.columns.label].to_numpy().astype(np.int64)

    def truth_counts(self) -> pd.DataFrame:
        """One pass: items per block and ground-truth label, columns ``block``, ``label``, ``n`` (simulations)."""
        self._require_labels()
        return self._truth_counts()

    @abstractmethod
    def _truth_counts(self) -> pd.DataFrame:
        """:meth:`truth_counts` once the label column is known to exist."""

    def _require_labels(self) -> None:
        if self.columns.label is None:
            raise PoolError(f"{self.where}: no label column; simulations need ground truth (name it with "
                            "--label-col)")


class ScoreArray:
    """One score column in memory, read as :func:`~labelwise.engines.strata.score_strata` reads a source's (the
    in-memory ``online-poisson`` computes its strata so, on pools of any ids)."""

    def __init__(self, scores: np.ndarray):
        self.scores = np.asarray(scores, dtype=float)

    def score_range(self, column: str) -> tuple[float, float, int]:
        """The least and greatest score and the number of items (``column`` names the scores in messages only)."""
        return float(self.scores.min()), float(self.scores.max()), self.scores.size

    def fine_counts(self, column: str, lo: float, scale: float, n_fine: int) -> np.ndarray:
        """Items per fine bin ``min(floor((s - lo) * scale), n_fine - 1)``."""
        return np.bincount(np.minimum(((self.scores - lo) * scale).astype(np.int64), n_fine - 1), minlength=n_fine)


class MemorySource(PoolSource):
    """An in-memory binary :class:`~labelwise.Pool` with integer ids, run through the engine designs."""

    engine = "memory"

    def __init__(self, pool: Pool):
        if pool.n_classes != 2 or pool.label_names:
            raise PoolError(f"pool {pool.name!r}: engine designs need a binary pool")
        if pool.item_ids.dtype.kind not in "iu":
            raise PoolError(f"pool {pool.name!r}: engine designs draw by integer item ids; this pool's are text")
        self.pool, self.where = pool, f"pool {pool.name!r}"
        single = pool.n_systems == 1
        names = lambda kind, arr: () if arr is None else (
            (kind,) if single else tuple(f"{kind}_{s}" for s in pool.system_names))
        self.columns = EngineColumns("item_id", names("pred", pool.preds), names("prob", pool.probs),
                                     names("score", pool.scores), None if pool.labels is None else "label",
                                     pool.system_names)

    def _stratum(self, strata) -> np.ndarray | None:
        return None if strata is None else strata.of_scores(self._scores(strata.column))

    def _keys(self, strata=None) -> np.ndarray:
        return memory_keys(self.pool, self._stratum(strata))  # no summary: sample() asks for the keys each round

    def summary(self, strata=None) -> BlockSummary:
        return memory_blocks(self.pool, self._stratum(strata))[1]

    def sample(self, plan: Plan, seed: int, n_items: int, exclude: np.ndarray | None = None,
               strata=None) -> PlannedSample:
        keys = self._keys(strata)
        b = plan.inclusion[np.searchsorted(plan.blocks, keys)]
        u = item_uniform(self.pool.item_ids, seed)
        hit = u < b
        if exclude is not None and exclude.size:
            hit &= ~np.isin(self.pool.item_ids, exclude)
        hit = np.flatnonzero(hit)
        return _planned(self.pool.item_ids[hit], u[hit], b[hit], keys[hit], n_items)

    def _scores(self, column: str) -> np.ndarray:
        """The values of one output column."""
        c, pool = self.columns, self.pool
        for names, values in ((c.scores, pool.scores), (c.probs, pool.probs), (c.preds, pool.preds)):
            if column in names:
                return values[:, names.index(column)].astype(float)
        raise KeyError(column)

    def score_range(self, column: str) -> tuple[float, float, int]:
        return ScoreArray(self._scores(column)).score_range(column)

    def fine_counts(self, column: str, lo: float, scale: float, n_fine: int) -> np.ndarray:
        return ScoreArray(self._scores(column)).fine_counts(column, lo, scale, n_fine)

    def stratum_uniforms(self, strata, bound: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        stratum = strata.of_scores(self._scores(strata.column))
        at, u = uniforms_below(self.pool.item_ids, seed, bound[stratum])
        return self.pool.item_ids[at].astype(np.int64), u, stratum[at]

    def threshold_groups(self, column: str, thresholds: np.ndarray, strata=None) -> pd.DataFrame:
        value = self._scores(column)
        frame = pd.DataFrame({"block": self._keys(strata), "k": np.searchsorted(thresholds, value, side="right"),
                              "value": value})
        return frame.groupby(["block", "k"]).agg(n=("value", "size"), value=("value", "min")).reset_index()

    def value_moments(self, column: str, strata=None) -> pd.DataFrame:
        value = self._scores(column)
        frame = pd.DataFrame({"block": self._keys(strata), "total": value, "total_sq": value * value})
        return frame.groupby("block").agg(n=("total", "size"), total=("total", "sum"),
                                          total_sq=("total_sq", "sum")).reset_index()

    def _truth_counts(self) -> pd.DataFrame:
        frame = pd.DataFrame({"block": self._keys(), "label": self.pool.labels.astype(np.int64)})
        return frame.groupby(["block", "label"]).size().rename("n").reset_index()

    def rows(self, item_ids: np.ndarray) -> pd.DataFrame:
        frame = batch_frame(self.pool, item_ids).drop(columns="label")
        if self.pool.labels is not None:
            frame["label"] = self.pool.labels[self.pool.positions(item_ids)]
        return frame

    def outputs(self, item_ids: np.ndarray) -> Outputs:
        return self.pool.outputs(self.pool.positions(item_ids))

    def labels(self, item_ids: np.ndarray) -> np.ndarray:
        if self.pool.labels is None:
            return super().labels(item_ids)
        return self.pool.labels[self.pool.positions(item_ids)].astype(np.int64)


class SqlSource(PoolSource):
    """Rows of files read by a SQL engine (DuckDB, Spark): the shared queries of :mod:`labelwise.engines.sql`."""

    dialect: SqlDialect
    #: the table expression the queries read (e.g. ``read_parquet([...])``)
    table: str

    @abstractmethod
    def query(self, sql: str) -> pd.DataFrame:
        """Run ``sql`` and return its rows."""

    @abstractmethod
    def register(self, name: str, frame: pd.DataFrame) -> None:
        """Make a small table available to queries as ``name``."""

    def _register_strata(self, strata) -> None:
        """Make the strata's :data:`~labelwise.engines.sql.FINE_STRATA` table available (``strata`` given)."""
        if strata is not None:
            fine, stratum = fine_strata(strata)
            self.register(FINE_STRATA, pd.DataFrame({"_lw_fine_bin": fine, "_lw_stratum": stratum}))

    def summary(self, strata=None) -> BlockSummary:
        self._register_strata(strata)
        frame = self.query(summary_query(self.table, self.columns, self.dialect, strata)).sort_values("block")
        if frame.empty:
            raise PoolError(f"{self.where}: no rows, only column names; give a pool of at least one item")
        for j, (column, kind) in enumerate(checked_columns(self.columns)):
            self._refuse_invalid(column, kind, int(frame[f"bad_{j}"].sum()), int(frame["n"].sum()))
        return BlockSummary(frame["block"].to_numpy(np.int64), frame["n"].to_numpy(np.int64),
                            frame["prior_sum"].to_numpy(float), len(self.columns.system_names),
                            bool(self.columns.preds))

    def _refuse_invalid(self, column: str, kind: str, bad: int, n_rows: int) -> None:
        """Raise naming one of the ``bad`` invalid cells of ``column`` (a kind of
        :func:`~labelwise.engines.sql.checked_columns`, or ``label``) among ``n_rows``, if any."""
        if bad:
            first = self.query(first_invalid_query(self.table, self.columns, column, kind, self.dialect))
            raise PoolError(invalid_cells(self.where, column, kind, bad, first["item_id"].iloc[0],
                                          first["value"].iloc[0], n_rows))

    def duplicate_id(self) -> tuple[int, int] | None:
        found = self.query(duplicate_id_query(self.table, self.columns, self.dialect))
        return None if found.empty else (int(found["item_id"].iloc[0]), int(found["n"].iloc[0]))

    def checksum(self) -> list[str]:
        return [str(v) for v in self.query(checksum_query(self.table, self.columns, self.dialect)).iloc[0]]

    def class_sums(self, sizes: list[int]) -> list[bool]:
        row = self.query(class_sums_query(self.table, self.columns, sizes, SUM_TOLERANCE, self.dialect)).iloc[0]
        count = lambda name: 0 if pd.isna(row[name]) else int(row[name])  # SUM over no rows is NULL
        return [read_as_classes(count("n"), count(f"s_{j}"), count("soft"), count(f"t_{j}")) for j in range(len(sizes))]

    def threshold_groups(self, column: str, thresholds: np.ndarray, strata=None) -> pd.DataFrame:
        self._register_strata(strata)
        return self.query(threshold_groups_query(self.table, self.columns, column, thresholds, self.dialect, strata))

    def value_moments(self, column: str, strata=None) -> pd.DataFrame:
        self._register_strata(strata)
        return self.query(value_moments_query(self.table, self.columns, column, self.dialect, strata))

    def _truth_counts(self) -> pd.DataFrame:
        counts = self.query(truth_query(self.table, self.columns, self.dialect))
        self._refuse_invalid(self.columns.label, "label", int(counts["bad"].sum()), int(counts["n"].sum()))
        return counts.drop(columns="bad")

    def sample(self, plan: Plan, seed: int, n_items: int, exclude: np.ndarray | None = None,
               strata=None) -> PlannedSample:
        self.register("lw_plan", pd.DataFrame({"block": plan.blocks, "b": plan.inclusion}))
        excluded = None
        if exclude is not None and exclude.size:
            self.register("lw_exclude", pd.DataFrame({"item_id": np.asarray(exclude, dtype=np.int64)}))
            excluded = "lw_exclude"
        self._register_strata(strata)
        frame = self.query(draw_query(self.table, self.columns, "lw_plan", seed, self.dialect, excluded, strata))
        return _planned(frame["item_id"].to_numpy(np.int64), frame["u"].to_numpy(float), frame["b"].to_numpy(float),
                        frame["block"].to_numpy(np.int64), n_items)

    def score_range(self, column: str) -> tuple[float, float, int]:
        row = self.query(score_range_query(self.table, column, self.dialect)).iloc[0]
        return float(row["lo"]), float(row["hi"]), int(row["n"])

    def fine_counts(self, column: str, lo: float, scale: float, n_fine: int) -> np.ndarray:
        frame = self.query(fine_counts_query(self.table, column, lo, scale, n_fine, self.dialect))
        counts = np.zeros(n_fine, dtype=np.int64)
        counts[frame["fine"].to_numpy(np.int64)] = frame["n"].to_numpy(np.int64)
        return counts

    def stratum_uniforms(self, strata, bound: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        self.register("lw_bounds", pd.DataFrame({"stratum": np.arange(bound.size, dtype=np.int64), "b": bound}))
        self._register_strata(strata)
        frame = self.query(stratum_draw_query(self.table, self.columns, strata, "lw_bounds", seed, self.dialect))
        return (frame["item_id"].to_numpy(np.int64), frame["u"].to_numpy(float),
                frame["stratum"].to_numpy(np.int64))

    def rows(self, item_ids: np.ndarray) -> pd.DataFrame:
        item_ids = np.asarray(item_ids, dtype=np.int64)
        self.register("lw_ids", pd.DataFrame({"item_id": item_ids}))
        frame = self.query(rows_query(self.table, self.columns, "lw_ids", self.dialect))
        found = pd.Index(frame[self.columns.id].to_numpy(np.int64))
        if found.has_duplicates:
            raise PoolError(f"{self.where}: id(s) {found[found.duplicated()][:5].tolist()} occur more than once; "
                            "engine pools need unique ids")
        pos = found.get_indexer(item_ids)
        if (pos < 0).any():
            raise PoolError(f"{self.where}: id(s) {item_ids[pos < 0][:5].tolist()} not in the pool")
        return frame.iloc[pos].reset_index(drop=True)
