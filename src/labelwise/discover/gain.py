"""Expected number of new positives of a query configuration ``(k, l, v)``, and its variance.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 4.1: the gain of a
query is the expected number of new positives among its answers, with the
exclude list of size ``l`` drawn uniformly from the ``F`` positives found at
the node.  Under the crowd model (answers drawn without replacement by
popularity among the node's positives off the list) this is a
successive-sampling quantity (:mod:`.successive`): it depends on how popular
the unfound positives are next to the found ones the list leaves in.  Here

* the found positives of ``v`` carry their weights estimated from their
  recapture histories, each eligible with chance ``1 - min(1, l / F)``;
* the unfound ones are ``U_v / w_0`` positives of weight ``w_0``, with ``U_v`` the
  Good-Turing unfound weight of ``v`` and ``w_0`` Chao's rare weight
  (:mod:`.popularity`, which says what they assume);
* the gain is ``r = (U_v / w_0) (1 - exp(-w_0 xi))`` with ``xi`` the order-sampling
  threshold of ``k`` answers (Rosén 1997).

The variance ``v = max(0.01, (dr / dU_v)^2 Var(U_v))`` (the paper's floor, Sec.
4.2) carries the Poisson variance of the Good-Turing weight to the gain by
the delta method, in place of the paper's bootstrap: by implicit
differentiation of the threshold equation, ``dr / dU_v = (1 - exp(-w_0 xi)) /
w_0 * A' / (A' + U_v exp(-w_0 xi))`` with ``A'`` the found positives' expected
arrivals' slope at ``xi`` (``1 / w_0`` once ``k`` reaches every eligible one).
"""

from __future__ import annotations

import numpy as np

from .popularity import CaptureHistory
from .successive import RaceRows, expected_new, race_time

__all__ = ["MIN_VARIANCE", "gain_with_variance"]

MIN_VARIANCE = 0.01


def gain_with_variance(history: CaptureHistory, nodes: np.ndarray, found_in: np.ndarray, k: np.ndarray,
                       l: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gain ``r`` and variance ``v`` of every configuration at ``nodes``.

    Parameters
    ----------
    history : CaptureHistory
        The run's capture history (durations, exposures, captures).
    nodes : numpy.ndarray
        Node ids.
    found_in : numpy.ndarray
        Positives found in each of ``nodes``.
    k, l : numpy.ndarray
        The configurations (one entry each).

    Returns
    -------
    r, v : numpy.ndarray
        ``(len(nodes), n_configs)`` gains and variances.
    """
    found = np.flatnonzero(history.found)
    slot = np.full(history.hierarchy.n_nodes, -1)
    slot[nodes] = np.arange(nodes.size)
    where = slot[history.hierarchy.item_node[found]]  # (found, masks): which of ``nodes`` holds each
    keep = where >= 0
    weights = np.broadcast_to(history.weight[found][:, None], where.shape)[keep]
    listed = np.divide(l[None, :], found_in[:, None], out=np.ones((nodes.size, l.size)), where=found_in[:, None] > 0)
    group, item = history.unfound_classes(nodes)
    count = np.full(item.size, 1.0 / history.rare_rate)
    rows = RaceRows(nodes.size, where[keep], weights, 1.0 - np.minimum(1.0, listed), group, history.weight[item],
                    count, k)
    xi = race_time(rows)
    gain = expected_new(rows, xi)
    finite = np.where(np.isfinite(xi), xi, 0.0)
    _, found_slope, _, unfound_slope = rows.arrivals(finite)
    found_share = np.divide(found_slope, found_slope + unfound_slope, out=np.ones_like(xi),
                            where=np.isfinite(xi) & (found_slope + unfound_slope > 0))
    # each positive captured once is a Poisson count of mean about 1: its class's part of the gain varies as much
    part = count[:, None] * -np.expm1(-history.weight[item][:, None] * np.where(np.isfinite(xi), xi, np.inf)[group])
    spread = np.column_stack([np.bincount(group, weights=part[:, c] ** 2, minlength=nodes.size)
                              for c in range(k.size)])
    return gain, np.maximum(MIN_VARIANCE, found_share ** 2 * spread)
