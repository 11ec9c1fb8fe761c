"""The rank of every entry within its group."""

from __future__ import annotations

import numpy as np

__all__ = ["ranks_within"]


def ranks_within(groups: np.ndarray) -> np.ndarray:
    """``rank[i]``: how many entries before ``i`` share its group (``groups``, one integer per entry), as int64."""
    by_group = np.argsort(groups, kind="stable")  # keeps the given order within a group
    sorted_groups = groups[by_group]
    rank = np.empty(groups.size, dtype=np.int64)
    rank[by_group] = np.arange(groups.size) - np.searchsorted(sorted_groups, sorted_groups, side="left")
    return rank
