"""A simulated crowd: answers drawn from the true positives of the queried node by popularity."""

from __future__ import annotations

import numpy as np

from .hierarchy import Hierarchy
from .policy import Query, QueryPolicy
from .successive import RaceRows, expected_new, race_time

__all__ = ["SimulatedCrowd", "best_query"]


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
        self.weight = np.asarray(popularity, dtype=float)[self.positives]
        self.log_weight = np.log(self.weight)

    def answer(self, query: Query, rng: np.random.Generator) -> np.ndarray:
        """The item indices returned to ``query`` (fewer than ``k`` when the node has fewer eligible)."""
        eligible = self.hierarchy.members(query.node, self.positives) & ~np.isin(self.positives, query.exclude)
        keys = np.where(eligible, self.log_weight + rng.gumbel(size=self.positives.size), -np.inf)
        take = min(query.k, int(eligible.sum()))
        if take == 0:
            return np.zeros(0, dtype=np.int64)
        top = np.argpartition(-keys, take - 1)[:take]
        return self.positives[top]

    def expected_new(self, found: np.ndarray, k: np.ndarray, l: np.ndarray) -> np.ndarray:
        """Expected new positives of every configuration ``(k, l)`` at every node, the popularities known.

        The order-sampling approximation of :mod:`.successive` over each node's positives: the found ones
        (``found``: boolean over the items) each eligible with chance ``1 - min(1, l / F)``, the unfound ones
        with their own weights.

        Returns
        -------
        numpy.ndarray
            ``(n_nodes, n_configs)``.
        """
        hierarchy = self.hierarchy
        nodes = hierarchy.item_node[self.positives]  # (positives, masks)
        is_found = np.broadcast_to(found[self.positives][:, None], nodes.shape)
        weight = np.broadcast_to(self.weight[:, None], nodes.shape)
        found_in = np.bincount(nodes[is_found], minlength=hierarchy.n_nodes)[:, None]
        listed = np.divide(l[None, :], found_in, out=np.ones((hierarchy.n_nodes, l.size)), where=found_in > 0)
        unfound = ~is_found
        rows = RaceRows(hierarchy.n_nodes, nodes[is_found], weight[is_found], 1.0 - np.minimum(1.0, listed),
                        nodes[unfound], weight[unfound], np.ones(int(unfound.sum())), k)
        return expected_new(rows, race_time(rows))

    def yield_per_cost(self, state: QueryPolicy, budget_left: float) -> np.ndarray:
        """True expected new positives per cost of every configuration at every node in ``state`` (``-inf`` where
        it costs more than ``budget_left``), from :meth:`expected_new`."""
        affordable = state.price <= budget_left + 1e-12
        return np.where(affordable, self.expected_new(state.found, state.k, state.l) / state.price, -np.inf)


def best_query(state: QueryPolicy, rate: np.ndarray, rng: np.random.Generator) -> Query | None:
    """The oracle's choice: the configuration of largest ``rate`` (from :meth:`SimulatedCrowd.yield_per_cost`),
    None when nothing is affordable."""
    best = int(np.argmax(rate))
    if not np.isfinite(rate.ravel()[best]):
        return None
    node, config = divmod(best, rate.shape[1])
    return state.query_at(node, config, rng)
