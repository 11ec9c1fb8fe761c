"""Expected number of new positives of a query configuration ``(k, l, v)``, and its bootstrap variance.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 4.1: the gain of a
query is estimated from the frequency counts of the answers at its node,
with the exclude list of size ``l`` drawn uniformly from the positives
found there and taken out of the counts.  The estimate here:

* ``u = f_1 / n``: Good-Turing mass of the positives the node's sample never
  returned (Good 1953), which the policy ``crux`` caps by the recaptures
  (:func:`recapture_unseen_mass`: exclude lists make singletons); ``f_0 = f_1 (n - 1) / n``: the first-order jackknife
  number of them (Burnham and Overton, "Estimation of the size of a closed
  population when capture probabilities vary among animals", Biometrika
  65(3), 1978), floored at ``d + 1`` when ``f_1 > 0`` (``d``: positives found
  in the node by other queries, hence not new, yet absent from its sample),
  so a node whose sample still has singletons is never scored exhausted.
  The jackknife, not Chao1, because the small samples of deep nodes often
  have no doubletons, where Chao1's ``f_1 (f_1 - 1) / 2`` promises nearly
  ``k`` new positives per query and sent the policy to them in simulation;
* excluding ``l`` of the ``F`` found positives removes each with probability
  ``p = l / F``: the found positives left to be returned weigh
  ``(1 - p) (1 - u + d u / f_0)``, the ``g = f_0 - d`` new ones ``u / f_0`` each;
* a query's ``k`` answers are distinct (the crowd draws without replacement,
  by popularity: successive sampling), so each answer leaves the pool: answer
  ``j`` is new with chance ``pi_j = new mass / (new mass + found mass)``, after
  which the expected ``pi_j`` of a new positive (its share ``u / f_0`` each) and
  ``1 - pi_j`` of a found one (its size-biased mass ``(1 - u) sum c_i^2 / n^2``,
  the sample's counts ``c_i``) leave.  The gain is ``sum_j pi_j``, at most ``g``:
  ``min(k, g)`` when the exclude list holds every positive found.  Treating the
  ``k`` answers as draws with replacement (the prediction of new species in
  further sampling of Shen, Chao and Lin, "Predicting the number of new
  species in further taxonomic sampling", Ecology 84(3), 2003, Eq. 2) scored
  an exclude list of every positive found no better than none, and kept the
  policy from it while every answer it brings is new.

The variance ``v = max(0.01, bootstrap variance)`` (Sec. 4.2) resamples
each count as Poisson with its own mean (the Poisson bootstrap of the
answers), vectorized over the replicates, the nodes and the configurations.
The positives found are known, not sampled: a found positive that a
replicate drops counts there as found elsewhere (``d``), like one found by
a query below the node.  Counting it not found instead (the replicate's
own positives only) shrank the variance early and widened it mid-budget
and, measured in simulation, cost ``crux`` positives at Zipf 1 and above
for a gain of one or two at the early points with uniform popularity.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .richness import good_turing_unseen, jackknife_unseen

__all__ = ["MIN_VARIANCE", "Recaptures", "expected_new", "gain_with_variance", "recapture_unseen_mass",
           "sample_statistics", "unseen_split"]

MIN_VARIANCE = 0.01
TINY = 1e-300  # keeps 0 / 0 at 0 in the successive-sampling loop


def unseen_split(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, found: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Positives the node's sample never returned ``f_0``, and how many of them are found (``d``): new = ``f_0 - d``."""
    other = np.maximum(found - seen, 0).astype(float)  # found elsewhere, absent from this sample
    return np.where(f1 > 0, np.maximum(jackknife_unseen(n, f1), other + 1), other), other


def expected_new(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, squares: np.ndarray, found: np.ndarray,
                 k: np.ndarray, l: np.ndarray, unfound: np.ndarray | float = 0.0,
                 unseen_mass: np.ndarray | None = None) -> np.ndarray:
    """Expected new positives among ``k`` distinct answers with an exclude list of ``l`` (arrays broadcast).

    Parameters
    ----------
    n, seen, f1 : numpy.ndarray
        Sample size, distinct positives and singletons of the node's sample.
    squares : numpy.ndarray
        Sum of the squared counts of the node's sample.
    found : numpy.ndarray
        Positives found in the node (by any query; at least ``seen``).
    k, l : numpy.ndarray
        Answers asked for and exclude-list size.
    unfound : numpy.ndarray or float
        At least this many positives of the node are not found yet (the sample's own estimate ``f_0 - d``
        is raised to it; 0: the sample's estimate).
    unseen_mass : numpy.ndarray or None
        Popularity share of the positives the sample never returned (None: Good-Turing's ``f_1 / n``).
    """
    u = good_turing_unseen(n, f1) if unseen_mass is None else unseen_mass
    f0, other = unseen_split(n, seen, f1, found)
    f0 = np.maximum(f0, other + unfound)
    share = np.divide(u, f0, out=np.zeros(np.broadcast(u, f0).shape), where=f0 > 0)  # mass per unseen positive
    p = np.minimum(1.0, np.divide(l, found, out=np.zeros(np.broadcast(l, found).shape), where=found > 0))
    shape = np.broadcast(u, other, p, k).shape
    # eligible mass of the found positives (those of the sample, and those found elsewhere at the unseen share)
    known = np.broadcast_to((1.0 - p) * (1.0 - u + other * share), shape).copy()
    # a found positive that is returned was picked by popularity: mass sum w^2 / sum w with w = (1 - u) c / n
    picked = (1.0 - u) * np.divide(squares, n * n, out=np.zeros(np.broadcast(squares, n).shape), where=n > 0)
    left = np.broadcast_to(f0 - other, shape).astype(float)  # new positives not returned yet
    total, fresh, chance, take = (np.zeros(shape) for _ in range(4))
    for answer in range(int(np.max(k))):  # successive sampling: each answer leaves the pool (in place: hot loop)
        asked = answer < k
        np.multiply(share, left, out=fresh)
        np.divide(fresh, fresh + known + TINY, out=chance)  # 0 once nothing is left
        np.minimum(chance, left, out=take)
        np.subtract(1.0, chance, out=chance)  # now the chance the answer is a found positive
        chance *= picked
        if not np.all(asked):
            take *= asked
            chance *= asked
        total += take
        left -= take
        known -= chance
        np.maximum(known, 0.0, out=known)
    return total


def gain_with_variance(entry_node: np.ndarray, entry_count: np.ndarray, found: np.ndarray, k: np.ndarray,
                       l: np.ndarray, rng: np.random.Generator, replicates: int = 32,
                       recaptures: Recaptures | None = None) -> tuple[np.ndarray, np.ndarray]:
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
    recaptures : Recaptures or None
        The weighted new answers and the recaptures of each node: the unseen mass is then
        :func:`recapture_unseen_mass` (both resampled as Poisson), else Good-Turing's.

    Returns
    -------
    r, v : numpy.ndarray
        ``(n_nodes, n_configs)`` gains and variances ``max(0.01, bootstrap variance)``.
    """
    draws = np.vstack([entry_count, rng.poisson(entry_count, size=(replicates, entry_count.size))])
    stats = sample_statistics(entry_node, draws, found.size)
    unseen = None
    if recaptures is not None:
        new, recaptured = (np.vstack([x, rng.poisson(x, size=(replicates, x.size))])[..., None] for x in recaptures)
        unseen = recapture_unseen_mass(Recaptures(new, recaptured), stats[0], stats[2])
    gains = expected_new(*stats, found[:, None], k, l, unseen_mass=unseen)
    return gains[0], np.maximum(MIN_VARIANCE, gains[1:].var(axis=0))


class Recaptures(NamedTuple):
    """Per node, over the answers falling in it of the queries at or above it: the new answers, each weighted by
    the share of the node's found positives its query did not exclude, and the answers found before."""

    new: np.ndarray
    recaptured: np.ndarray


def recapture_unseen_mass(recaptures: Recaptures, n: np.ndarray, f1: np.ndarray) -> np.ndarray:
    """Share of a node's popularity held by positives not found: at most what the recaptures say.

    Good-Turing's ``f_1 / n`` (Good 1953) reads the node's sample as independent draws.  Two things break
    that: a query returns distinct positives (one query alone has only singletons, whatever the popularity),
    and an exclude list takes found positives out of the draw (a list of every positive found makes every
    answer new, and each such answer a singleton, however popular).  An answer is instead a draw by
    popularity from the positives its query did not exclude: with ``M`` the found positives' share of the
    popularity and an exclude list holding a share ``p`` of them drawn uniformly, it is a recapture with
    odds ``(1 - p) M : (1 - M)`` against being new.  Pooling the queries, ``M / (1 - M)`` is estimated by
    the recaptures over the new answers weighted by ``1 - p`` (the capture-recapture estimate of Petersen 1896
    and Lincoln, "Calculating waterfowl abundance on the basis of banding returns", USDA Circular 118, 1930; a list holding every positive found weighs 0: it says nothing about ``M``).  ``M`` only grows as
    positives are found, so the pooled odds understate it now and the unseen mass ``1 - M`` they give is an
    upper estimate; the unseen mass is the smaller of it and Good-Turing's (Good-Turing's where nothing was
    weighed).
    """
    whole = good_turing_unseen(n, f1)
    weighed = np.asarray(recaptures.new + recaptures.recaptured, dtype=float)
    # where nothing was weighed the ratio stays 1 and Good-Turing's share (at most 1) is kept
    return np.minimum(whole, np.divide(recaptures.new, weighed, out=np.ones(np.broadcast(recaptures.new, weighed).shape),
                                       where=weighed > 0))


def sample_statistics(entry_node: np.ndarray, counts: np.ndarray, n_nodes: int) -> tuple[np.ndarray, ...]:
    """Sample size, distinct positives, singletons and sum of squared counts of each node, shape ``(..., n_nodes, 1)``.

    ``counts`` is ``(entries,)`` or ``(replicates, entries)``: one set of counts per row.
    """
    counts = np.atleast_2d(counts)
    rows = counts.shape[0]
    slot = (np.arange(rows)[:, None] * n_nodes + entry_node).ravel()

    def per_node(values: np.ndarray) -> np.ndarray:
        return np.bincount(slot, weights=values.ravel(), minlength=rows * n_nodes).reshape(rows, n_nodes, 1)

    return per_node(counts), per_node(counts > 0), per_node(counts == 1), per_node(counts ** 2)
