"""DuckDB: embedded, out-of-core SQL over Parquet files (the default engine for Parquet pools)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..pool import PoolError
from .columns import EngineColumns, resolve_columns
from .hashing import DUCKDB
from .source import SqlSource

__all__ = ["DuckDBSource"]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBSource(SqlSource):
    """Parquet files read by an embedded DuckDB connection.

    Parameters
    ----------
    files : list of Path
        The pool's Parquet files (:func:`~labelwise.engines.files.expand_paths`).
    memory_limit : str
        DuckDB's memory limit; larger work spills to a temporary directory.
    threads : int, optional
        Worker threads (default: the machine's cores).
    **columns
        The column options of :func:`~labelwise.engines.columns.resolve_columns`.
    """

    engine = "duckdb"
    dialect = DUCKDB

    def __init__(self, files: list[Path], *, memory_limit: str = "1GB", threads: int | None = None, **columns):
        import duckdb

        self.files = files
        self.where = f"pool file {str(files[0])!r}" + (f" (and {len(files) - 1} more)" if len(files) > 1 else "")
        self.con = duckdb.connect(config={"memory_limit": memory_limit,
                                          "threads": threads or os.cpu_count() or 1})
        self.table = "read_parquet([" + ", ".join(_sql_string(str(f)) for f in files) + "])"
        try:
            schema = self.con.sql(f"SELECT * FROM {self.table} LIMIT 0")
        except duckdb.Error as exc:  # a damaged footer, or files whose schemas differ
            raise PoolError(f"{self.where}: DuckDB cannot read the files ({str(exc).strip().splitlines()[0]}); "
                            "write them again with pandas' to_parquet, with the same columns in every file") from None
        types = dict(zip(schema.columns, map(str, schema.types), strict=True))
        self.columns: EngineColumns = resolve_columns(types, self.where, **columns)

    def query(self, sql: str) -> pd.DataFrame:
        import duckdb

        try:
            return self.con.sql(sql).df()
        except (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException) as exc:  # the data's
            raise PoolError(f"{self.where}: DuckDB cannot read the files ({str(exc).strip().splitlines()[0]}); check "
                            "that every file has the same columns, of the same types") from None

    def register(self, name: str, frame: pd.DataFrame) -> None:
        self.con.register(name, frame)
