"""Partitions of a pool: score strata and hierarchical partitions (complete trees over leaf blocks)."""

from .bins import csf_bins, quantile_bins
from .hierarchy import MAX_LEAVES, Hierarchy, feature_hierarchy, score_hierarchy
from .strata import Strata, make_strata

__all__ = [
    "MAX_LEAVES",
    "Hierarchy",
    "Strata",
    "csf_bins",
    "feature_hierarchy",
    "make_strata",
    "quantile_bins",
    "score_hierarchy",
]
