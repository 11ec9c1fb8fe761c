"""The rank of every entry within its group."""

from __future__ import annotations

import numpy as np

__all__ = ["ranks_within"]


def ranks_within(groups: np.ndarray) -> np.ndarray:
    """``rank[i]``: how many entries before ``i`` share its group (``groups``, one integer per entry), as int64.

    O(N) when ``groups`` is already sorted (no argsort); a stable argsort otherwise.
    """
    n = groups.size
    in_order = n < 2 or bool(np.all(groups[1:] >= groups[:-1]))
    by_group = np.arange(n) if in_order else np.argsort(groups, kind="stable")  # keeps the given order in a group
    sorted_groups = groups[by_group]
    position = np.arange(n, dtype=np.int64)
    run_start = np.r_[True, sorted_groups[1:] != sorted_groups[:-1]] if n else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(run_start, position, 0)) if n else position
    rank = np.empty(n, dtype=np.int64)
    rank[by_group] = position - start
    return rank
