"""Positives of a node not found yet, from how many of each query's answers had been found before (recaptures).

Every query at a node ``v``, or above it, whose answers fall in ``v`` is a
capture-recapture sample of ``v``'s positives: before the query, ``F`` of
them are found and ``e`` of those are on its exclude list, so ``M = F - e``
found ("marked") positives and the ``U`` not found can be returned; of its
``C`` answers in ``v``, ``R`` had been found (recaptured) and ``C - R`` are
new.  When the crowd draws answers without replacement with equal chances
(the simulated crowd at uniform popularity), ``C - R`` is hypergeometric:
``C`` draws from ``U + M`` of which ``U`` are new.  Lincoln-Petersen with
Chapman's correction estimates the positives not found before the query,

    U_b = (M + 1) (C - R) / (R + 1)

(Chapman, "Some properties of the hypergeometric distribution with
applications to zoological sample censuses", Univ. California Publ. Statist.
1, 1951: exactly unbiased for the population ``U + M`` when ``M + C >= U +
M``, i.e. when the query asks for at least as many answers as there are
positives not found).  Late in the budget this is what the exclude lists
reveal that the node's frequency counts hide: answers that are again found
positives left off the exclude list say few are left, whereas the counts
see the excluded positives as rarely returned.  Since the query, ``D = F_now
- F`` more positives of ``v`` were found, so ``U_b - D`` is the number not
found now.  The batches of a node are pooled by the estimating equation of
Schnabel's multiple census (Schnabel, "The estimation of the total fish
population of a lake", Amer. Math. Monthly 45, 1938), ``sum_b [M_b (C_b -
R_b) - R_b U_b] = 0`` (each term has mean 0 under the hypergeometric law),
with Chapman's ``+ 1`` in its denominator:

    U = max(0, sum_b [M_b (C_b - R_b) - R_b D_b] / (sum_b R_b + 1)).

A batch with ``M = 0`` (nothing found, or everything found excluded) says
only that at least ``C`` were not found and is not kept.  With one batch
whose new positives are the last found in the node (``D = C - R``) this is
Chapman's estimate exactly.  Under unequal popularity the found positives
are the popular ones, so ``U`` counts the positives not found in units of a
found positive's popularity, far fewer than the rare positives left, and
subtracting ``D`` (a count) from old batches can drive it to 0: the gains
use it only as a cap (:mod:`.gain`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["chapman_unfound"]


def chapman_unfound(batch_node: np.ndarray, new: np.ndarray, recaught: np.ndarray, marked: np.ndarray,
                    found_before: np.ndarray, found_now: np.ndarray, weights: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Pooled Chapman estimate of each node's positives not found yet, for each row of batch weights.

    Parameters
    ----------
    batch_node : numpy.ndarray
        Node of each batch (the answers of one query in one node), an index into ``found_now``.
    new, recaught : numpy.ndarray
        Answers of each batch not found before its query (``C - R``) and found before (``R``).
    marked : numpy.ndarray
        Found positives of the node that the query could return (``M >= 1``: found, not excluded).
    found_before : numpy.ndarray
        Positives of the node found before the query (``F``).
    found_now : numpy.ndarray
        Positives found now in each node.
    weights : numpy.ndarray
        ``(replicates, n_batches)`` weight of each batch (ones for the estimate, Poisson for a bootstrap).

    Returns
    -------
    unfound : numpy.ndarray
        ``(replicates, n_nodes)`` estimates (0 where no batch weighs anything).
    informative : numpy.ndarray
        ``(replicates, n_nodes)`` True where some batch weighs something.
    """
    n_nodes = found_now.size
    since = found_now[batch_node] - found_before  # D: found in the node since the batch's query
    slot = (np.arange(weights.shape[0])[:, None] * n_nodes + batch_node).ravel()

    def per_node(values: np.ndarray) -> np.ndarray:
        return np.bincount(slot, weights=(weights * values).ravel(),
                           minlength=weights.shape[0] * n_nodes).reshape(weights.shape[0], n_nodes)

    total = per_node(marked * new - recaught * since)
    informative = per_node(np.ones(batch_node.size)) > 0
    return np.maximum(total / (per_node(recaught) + 1.0), 0.0), informative
