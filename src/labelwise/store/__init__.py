"""The session file: a SQLite journal of the pool, the draws, the labels and the design's state."""

from .journal import Store, StoreError

__all__ = ["Store", "StoreError"]
