"""Pools beyond memory: block summaries in one pass, a per-block plan, a sample drawn by a shared item hash.

``Pool.from_parquet("data/*.parquet", engine="duckdb")`` gives an
:class:`EnginePool`; the designs of :data:`ENGINE_DESIGNS` plan on its
blocks and every engine (NumPy, DuckDB, Spark) draws the same items for the
same seed (:func:`item_uniform`).
"""

from .blocks import N_BINS, BlockSummary
from .hashing import item_uniform
from .plan import ENGINE_DESIGNS, Plan, PlannedSample
from .pool import ENGINES, EnginePool

__all__ = ["ENGINES", "ENGINE_DESIGNS", "N_BINS", "BlockSummary", "EnginePool", "Plan", "PlannedSample",
           "item_uniform"]
