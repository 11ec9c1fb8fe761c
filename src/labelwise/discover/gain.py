"""Expected number of new positives of a query configuration ``(k, l, v)``, and its bootstrap variance.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 4.1: the gain of a
query is estimated from the frequency counts of the answers at its node,
with the exclude list of size ``l`` drawn uniformly from the positives
found there and taken out of the counts.  The estimate here:

* ``u = f_1 / n``: Good-Turing mass of the positives the node's sample never
  returned (Good 1953); ``f_0 = f_1 (n - 1) / n``: the first-order jackknife
  number of them (Burnham and Overton, "Estimation of the size of a closed
  population when capture probabilities vary among animals", Biometrika
  65(3), 1978), floored at ``d + 1`` when ``f_1 > 0`` (``d``: positives found
  in the node by other queries, hence not new, yet absent from its sample),
  so a node whose sample still has singletons is never scored exhausted.
  The jackknife, not Chao1, because the small samples of deep nodes often
  have no doubletons, where Chao1's ``f_1 (f_1 - 1) / 2`` promises nearly
  ``k`` new positives per query and sent the policy to them in simulation;
* excluding ``l`` of the ``F`` found positives removes each with probability
  ``p = l / F``, an expected mass ``p (1 - u) + p d u / f_0``;
* a new positive has probability ``pi = u (f_0 - d) / f_0 / (1 - excluded
  mass)`` per answer, shared by ``g = f_0 - d`` positives, so ``k`` answers
  bring ``g (1 - (1 - pi / g)^k)`` new ones in expectation (the prediction of
  new species in further sampling of Shen, Chao and Lin, "Predicting the
  number of new species in further taxonomic sampling", Ecology 84(3), 2003,
  Eq. 2).

The variance ``v = max(0.01, bootstrap variance)`` (Sec. 4.2) resamples
each count as Poisson with its own mean (the Poisson bootstrap of the
answers), vectorized over the replicates, the nodes and the configurations.
"""

from __future__ import annotations

import numpy as np

from .richness import good_turing_unseen, jackknife_unseen

__all__ = ["MIN_VARIANCE", "expected_new", "gain_with_variance"]

MIN_VARIANCE = 0.01


def expected_new(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, found: np.ndarray, k: np.ndarray,
                 l: np.ndarray) -> np.ndarray:
    """Expected new positives of ``k`` answers with an exclude list of ``l`` (arrays broadcast together).

    Parameters
    ----------
    n, seen, f1 : numpy.ndarray
        Sample size, distinct positives and singletons of the node's sample.
    found : numpy.ndarray
        Positives found in the node (by any query; at least ``seen``).
    k, l : numpy.ndarray
        Answers asked for and exclude-list size.
    """
    u = good_turing_unseen(n, f1)
    other = np.maximum(found - seen, 0).astype(float)  # found elsewhere, absent from this sample
    f0 = np.where(f1 > 0, np.maximum(jackknife_unseen(n, f1), other + 1), other)
    new = f0 - other
    share = np.divide(u, f0, out=np.zeros(np.broadcast(u, f0).shape), where=f0 > 0)  # mass per unseen positive
    p = np.minimum(1.0, np.divide(l, found, out=np.zeros(np.broadcast(l, found).shape), where=found > 0))
    kept = 1.0 - p * (1.0 - u) - p * other * share
    pi = np.minimum(1.0, np.divide(share * new, kept, out=np.ones(np.broadcast(kept, new).shape), where=kept > 0))
    per_positive = np.divide(pi, new, out=np.zeros(pi.shape), where=new > 0)
    return np.where(new > 0, new * (1.0 - (1.0 - per_positive) ** k), 0.0)


def gain_with_variance(entry_node: np.ndarray, entry_count: np.ndarray, found: np.ndarray, k: np.ndarray,
                       l: np.ndarray, rng: np.random.Generator, replicates: int = 32
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Gain ``r`` and variance ``v`` of every configuration at a batch of nodes.

    Parameters
    ----------
    entry_node, entry_count : numpy.ndarray
        The samples of the nodes: entry ``e`` says positive ``e`` was returned ``entry_count[e]`` times at
        node ``entry_node[e]`` (an index into ``found``).
    found : numpy.ndarray
        Positives found in each node of the batch.
    k, l : numpy.ndarray
        The configurations (one entry each).
    rng : numpy.random.Generator
    replicates : int
        Bootstrap replicates.

    Returns
    -------
    r, v : numpy.ndarray
        ``(n_nodes, n_configs)`` gains and variances ``max(0.01, bootstrap variance)``.
    """
    n_nodes = found.size
    draws = np.vstack([entry_count, rng.poisson(entry_count, size=(replicates, entry_count.size))])
    slot = (np.arange(replicates + 1)[:, None] * n_nodes + entry_node).ravel()
    size = (replicates + 1) * n_nodes

    def per_node(values: np.ndarray) -> np.ndarray:
        return np.bincount(slot, weights=values.ravel(), minlength=size).reshape(replicates + 1, n_nodes, 1)

    gains = expected_new(per_node(draws), per_node(draws > 0), per_node(draws == 1), found[:, None], k, l)
    return gains[0], np.maximum(MIN_VARIANCE, gains[1:].var(axis=0))
