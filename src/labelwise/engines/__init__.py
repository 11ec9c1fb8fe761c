"""Pools beyond memory: block summaries in one pass, a per-block plan, a sample drawn by a shared item hash.

``Pool.from_parquet("data/*.parquet", engine="duckdb")`` gives an
:class:`EnginePool`; the designs of :data:`ENGINE_DESIGNS` plan on its
blocks (``online-poisson`` a round at a time, :class:`BlockRounds`) and
every engine (NumPy, DuckDB, Spark) draws the same items for the same seed
(:func:`item_uniform`).  Names are imported on first use, so that
checking whether a file is an engine session (:func:`is_engine_session`)
costs no import of the designs.
"""

import importlib

_PUBLIC = {
    **dict.fromkeys(("N_BINS", "BlockSummary"), ".blocks"),
    "item_uniform": ".hashing",
    **dict.fromkeys(("ENGINE_DESIGNS", "Plan", "PlannedSample"), ".plan"),
    **dict.fromkeys(("ENGINES", "EnginePool"), ".pool"),
    "EngineSession": ".session",
    **dict.fromkeys(("BlockRounds", "block_rounds", "simulate_rounds"), ".online"),
    "is_engine_session": ".marker",
}

__all__ = ["ENGINES", "ENGINE_DESIGNS", "N_BINS", "BlockRounds", "BlockSummary", "EnginePool", "EngineSession", "Plan",
           "PlannedSample", "block_rounds", "is_engine_session", "item_uniform", "simulate_rounds"]


def __getattr__(name: str):
    """A public name, imported from its submodule on first use."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value
