"""DuckDB: embedded, out-of-core SQL over Parquet files (the default engine for Parquet pools)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

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
        schema = self.con.sql(f"SELECT * FROM {self.table} LIMIT 0")
        types = dict(zip(schema.columns, map(str, schema.types), strict=True))
        self.columns: EngineColumns = resolve_columns(types, self.where, **columns)

    def query(self, sql: str) -> pd.DataFrame:
        return self.con.sql(sql).df()

    def register(self, name: str, frame: pd.DataFrame) -> None:
        self.con.register(name, frame)
