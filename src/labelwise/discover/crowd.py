"""A simulated crowd: answers drawn from the true positives of the queried node by popularity."""

from __future__ import annotations

import numpy as np

from .hierarchy import Hierarchy
from .policy import Query

__all__ = ["SimulatedCrowd"]


class SimulatedCrowd:
    """Answers ``k`` distinct positives of a node, excluding the exclude list, drawn by popularity.

    Within a query the answers are drawn without replacement with
    probabilities proportional to the popularity weights (successive
    sampling), done at once with exponential keys: the ``k`` positives with
    the largest ``log w + Gumbel`` (Gumbel-top-k; Vieira, "Gumbel-max trick
    and weighted reservoir sampling", 2014).

    Parameters
    ----------
    hierarchy : Hierarchy
    positive : numpy.ndarray
        Boolean over the items: the true positives.
    popularity : numpy.ndarray
        Positive weight of each item (only the positives' are used).
    """

    def __init__(self, hierarchy: Hierarchy, positive: np.ndarray, popularity: np.ndarray) -> None:
        self.hierarchy = hierarchy
        self.positives = np.flatnonzero(positive)
        self.log_weight = np.log(np.asarray(popularity, dtype=float)[self.positives])

    def answer(self, query: Query, rng: np.random.Generator) -> np.ndarray:
        """The item indices returned to ``query`` (fewer than ``k`` when the node has fewer eligible)."""
        eligible = self.hierarchy.members(query.node, self.positives) & ~np.isin(self.positives, query.exclude)
        keys = np.where(eligible, self.log_weight + rng.gumbel(size=self.positives.size), -np.inf)
        take = min(query.k, int(eligible.sum()))
        if take == 0:
            return np.zeros(0, dtype=np.int64)
        top = np.argpartition(-keys, take - 1)[:take]
        return self.positives[top]
