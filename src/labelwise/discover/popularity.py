"""How popular each found positive is, and how much popularity is still unfound, from the capture history.

Under the crowd model (each positive ``i`` of a queried node has a weight
``w_i``; an answer draws ``k`` of the eligible ones without replacement by
weight) a query is a race on a common clock: positive ``i`` arrives after
an ``Exp(w_i)`` time and the answer stops at the ``k``-th arrival (order
sampling, Rosén 1997; see :mod:`.successive`).  Each query ``q`` has a
duration ``T_q`` on that clock, the same for all its eligible positives,
and returns positive ``i`` with chance ``1 - exp(-w_i T_q)``.  The clock's
unit is free (the first query lasts 1).  A query that returned fewer than
``k`` emptied its node and has no finite duration: it is left out.

The estimates are a fixed point, refined by a few sweeps after every query:

* **Exposure.**  ``E_i`` is the summed duration of the queries positive ``i``
  was eligible in (its node queried, it not on the exclude list), before and
  after it was found; its captures ``c_i`` over them are near Poisson with
  mean ``w_i E_i``.
* **Unfound weight of a node** by Good-Turing with exposure: for a Poisson
  count, ``E[1{c_i = 1} / E_i] = w_i exp(-w_i E_i) = w_i P(c_i = 0)``, so ``U_v =
  sum over the positives of v captured once of 1 / E_i`` is unbiased for the
  weight still unfound in ``v`` (Good, "The population frequencies of species
  and the estimation of population parameters", Biometrika 40, 1953, with
  each positive's own exposure); its Poisson variance is ``sum 1 / E_i^2``.
* **Rare weight and the unfound count**: Chao's model of the rare positives
  (Chao, "Nonparametric estimation of the number of classes in a
  population", Scand. J. Statist. 11, 1984): the positives never captured
  are about as popular as those captured once, and equally so.  Over the
  whole domain, ``w_0 = U / f_0`` with the bias-corrected Chao1 ``f_0 = f_1 (f_1
  - 1) / (2 (f_2 + 1))``, and a node holds ``U_v / w_0`` unfound positives of
  weight ``w_0``.  Where the rare positives are not equally popular Chao1 is
  a lower bound: the count is low, and a query's new positives saturate
  early.
* **Weights of the found positives**: ``w_0`` for those captured once (the
  same model); from ``c_i`` captures in ``n_i`` queries of mean duration ``E_i /
  n_i`` otherwise, ``-log(1 - c_i / n_i) n_i / E_i`` (the capture chance
  inverted; ``c_i`` held below ``n_i`` by one half for the always captured).
* **Durations**: ``T_q`` solves ``sum (1 - exp(-w_j T)) = k`` over its eligible
  positives: those found since (then unfound, now with their weights), those
  found before and not excluded, and the node's unfound ones now.
"""

from __future__ import annotations

import numpy as np

from .hierarchy import Hierarchy
from .successive import RaceRows, race_time

__all__ = ["CaptureHistory"]

SWEEPS = 3  # fixed-point sweeps after each query


class CaptureHistory:
    """Durations, exposures and captures of the timed queries of one discovery run.

    Parameters
    ----------
    hierarchy : Hierarchy
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        self.found = np.zeros(hierarchy.n_items, dtype=bool)
        self.query_node = np.zeros(0, dtype=np.int64)  # the timed queries
        self.query_k = np.zeros(0)
        self.duration = np.zeros(0)
        # one entry per (timed query, found positive eligible in it), and whether the query returned it
        self.pair_query = np.zeros(0, dtype=np.int64)
        self.pair_item = np.zeros(0, dtype=np.int64)
        self.pair_captured = np.zeros(0, dtype=bool)
        self.exposure = np.zeros(hierarchy.n_items)
        self.captures = np.zeros(hierarchy.n_items)
        self.rare_rate = 1.0
        self.weight = np.zeros(hierarchy.n_items)
        self.singles = np.zeros(0, dtype=np.int64)

    # ---- taking in a query ------------------------------------------------------------------------
    def record(self, node: int, exclude: np.ndarray, returned: np.ndarray, k: int) -> None:
        """Take in a query's answers (distinct items): its pairs, then the fixed point's sweeps."""
        hierarchy = self.hierarchy
        new = returned[~self.found[returned]]
        if returned.size >= k:
            q = self.query_node.size
            before = np.flatnonzero(self.found)
            eligible = before[hierarchy.members(node, before) & ~np.isin(before, exclude)]
            self._add_pairs(np.full(eligible.size + new.size, q), np.concatenate([eligible, new]),
                            np.isin(np.concatenate([eligible, new]), returned))
            self.query_node = np.append(self.query_node, node)
            self.query_k = np.append(self.query_k, float(k))
            self.duration = np.append(self.duration, self._first_duration(q))
        past = self.query_node[:self.duration.size - (1 if returned.size >= k else 0)]
        if new.size and past.size:  # the new positives were eligible, and not captured, in every earlier query
            inside = hierarchy.item_node[new][:, hierarchy.node_mask[past]] == past[None, :]
            item, query = np.nonzero(inside)
            self._add_pairs(query, new[item], np.zeros(item.size, dtype=bool))
        self.found[new] = True
        for _ in range(SWEEPS if self.duration.size else 0):
            self._sweep()

    def _add_pairs(self, query: np.ndarray, item: np.ndarray, captured: np.ndarray) -> None:
        self.pair_query = np.concatenate([self.pair_query, query])
        self.pair_item = np.concatenate([self.pair_item, item])
        self.pair_captured = np.concatenate([self.pair_captured, captured])

    def _first_duration(self, q: int) -> float:
        """A new query's duration before the sweeps: 1 for the first, else the median of those at its depth."""
        if q == 0:
            return 1.0
        depth = self.hierarchy.depth()
        same = depth[self.query_node[:q]] == depth[self.query_node[q]]
        return float(np.median(self.duration[:q][same] if same.any() else self.duration[:q]))

    # ---- the fixed point --------------------------------------------------------------------------
    def _sweep(self) -> None:
        """Exposures, captures and weights from the durations; then the durations from them."""
        n_items = self.hierarchy.n_items
        self.exposure = np.bincount(self.pair_item, weights=self.duration[self.pair_query], minlength=n_items)
        self.captures = np.bincount(self.pair_item, weights=self.pair_captured, minlength=n_items)
        trials = np.bincount(self.pair_item, minlength=n_items)
        f1, f2 = int(np.sum(self.found & (self.captures == 1))), int(np.sum(self.found & (self.captures == 2)))
        self.rare_rate = 2.0 * (f2 + 1) / max(f1 - 1, 1)  # theta = w E of a rare positive: Chao's (f_2+1)/(f_1-1)
        share = np.minimum(self.captures, trials - 0.5) / np.maximum(trials, 1)
        mean_duration = np.divide(self.exposure, trials, out=np.ones(n_items), where=trials > 0)
        floor = float(self.duration.min())
        self.weight = np.where(self.captures >= 2, -np.log1p(-share) / mean_duration,
                               self.rare_rate / np.maximum(self.exposure, floor))
        self.singles = np.flatnonzero(self.found & (self.captures == 1))
        group, item = self.unfound_classes(self.query_node)
        rows = RaceRows(self.duration.size, self.pair_query, self.weight[self.pair_item],
                        np.ones((self.duration.size, 1)), group, self.weight[item],
                        np.full(item.size, 1.0 / self.rare_rate), self.query_k[:, None])
        duration = race_time(rows)[:, 0]
        finite = np.isfinite(duration) & (duration > 0)
        self.duration[finite] = duration[finite] / duration[0] if finite[0] else duration[finite]

    def unfound_classes(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The unfound classes of ``nodes``: one per positive captured once in the node (position in ``nodes``,
        the positive), each standing for ``1 / theta`` unfound positives of its weight ``theta / E_i``."""
        inside = self.hierarchy.item_node[self.singles][:, self.hierarchy.node_mask[nodes]] == nodes[None, :]
        single, group = np.nonzero(inside)
        return group, self.singles[single]
