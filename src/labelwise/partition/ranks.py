"""The rank of every entry within its group."""

from __future__ import annotations

import numpy as np

__all__ = ["ranks_within"]


def ranks_within(groups: np.ndarray) -> np.ndarray:
    """How many entries of the same group come before each entry, in the given order.

    Parameters
    ----------
    groups : ndarray of int, shape (n,)
        The group of every entry.

    Returns
    -------
    ndarray of int64, shape (n,)
        ``rank[i] = #{j < i : groups[j] == groups[i]}``.
    """
    by_group = np.argsort(groups, kind="stable")  # keeps the given order within a group
    sorted_groups = groups[by_group]
    rank = np.empty(groups.size, dtype=np.int64)
    rank[by_group] = np.arange(groups.size) - np.searchsorted(sorted_groups, sorted_groups, side="left")
    return rank
