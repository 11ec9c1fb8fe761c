"""PySpark: the same passes on a cluster (``--engine spark``, ``--spark-master`` or an existing ``SparkSession``)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import count
from pathlib import Path

import numpy as np
import pandas as pd

from .columns import EngineColumns, resolve_columns
from .hashing import SPARK
from .plan import Plan, PlannedSample
from .source import SqlSource

__all__ = ["SparkSource", "spark_session"]

_views = count()

#: Optimizer rules that push a filter below the projections it reads, substituting their expressions: on the
#: nested hash stages (:func:`~labelwise.engines.hashing.uniform_sql`) that substitution repeats each stage's
#: input, the generated code outgrows the JVM's method limit and the draw runs interpreted, five times slower.
_PUSHDOWN_RULES = ",".join(f"org.apache.spark.sql.catalyst.optimizer.{rule}" for rule in
                           ("PushDownPredicates", "PushPredicateThroughNonJoin", "PushPredicateThroughJoin"))


def spark_session(master: str | None = None):
    """The active ``SparkSession``, or a new one on ``master`` (default ``local[*]``) without the web UI."""
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master(master or "local[*]").appName("labelwise")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate())


class SparkSource(SqlSource):
    """Parquet files read by Spark; the queries run as Spark SQL on temporary views.

    Parameters
    ----------
    files : list of Path
    spark : pyspark.sql.SparkSession, optional
        An existing session (e.g. the one ``spark-submit`` starts); else :func:`spark_session` on ``master``.
    master : str, optional
    **columns
        The column options of :func:`~labelwise.engines.columns.resolve_columns`.
    """

    engine = "spark"
    dialect = SPARK

    def __init__(self, files: list[Path], *, spark=None, master: str | None = None, **columns):
        self.spark = spark or spark_session(master)
        #: where the session runs (stored with an engine session, to reopen it there)
        self.master: str = self.spark.sparkContext.master
        self.files = files
        self.where = f"pool file {str(files[0])!r}" + (f" (and {len(files) - 1} more)" if len(files) > 1 else "")
        frame = self.spark.read.parquet(*(str(f) for f in files))
        self.table = f"lw_pool_{next(_views)}"
        frame.createOrReplaceTempView(self.table)
        self.columns: EngineColumns = resolve_columns(dict(frame.dtypes), self.where, **columns)

    def query(self, sql: str) -> pd.DataFrame:
        return self.spark.sql(sql).toPandas()

    def register(self, name: str, frame: pd.DataFrame) -> None:
        self.spark.createDataFrame(frame).createOrReplaceTempView(name)

    def sample(self, plan: Plan, seed: int, n_items: int, exclude: np.ndarray | None = None,
               strata=None) -> PlannedSample:
        with self._without_pushdown():
            return super().sample(plan, seed, n_items, exclude, strata)

    @contextmanager
    def _without_pushdown(self) -> Iterator[None]:
        """:data:`_PUSHDOWN_RULES` off for the draw, the session's setting restored afterwards."""
        key = "spark.sql.optimizer.excludedRules"
        before = self.spark.conf.get(key, None)
        self.spark.conf.set(key, ",".join(filter(None, [before, _PUSHDOWN_RULES])))
        try:
            yield
        finally:
            if before is None:
                self.spark.conf.unset(key)
            else:
                self.spark.conf.set(key, before)
