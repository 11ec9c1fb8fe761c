"""Expected number of new positives of a query configuration ``(k, l, v)``, and its bootstrap (upper semi)variance.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 4.1: the gain of a
query is estimated from the frequency counts of the answers at its node,
with the exclude list of size ``l`` drawn uniformly from the positives
found there and taken out of the counts.  The estimate here:

* ``u = f_1 / n``: Good-Turing mass of the positives the node's sample never
  returned (Good 1953), which the policy ``crux`` caps by the recaptures
  and by the share the unseen would hold with equal popularity
  (:func:`capped_unseen_mass`: exclude lists make singletons); ``f_0 = f_1 (n - 1) / n``: the first-order jackknife
  number of them (Burnham and Overton, "Estimation of the size of a closed
  population when capture probabilities vary among animals", Biometrika
  65(3), 1978), floored at ``d + 1`` when ``f_1 > 0`` (``d``: positives found
  in the node by other queries, hence not new, yet absent from its sample),
  so a node whose sample still has singletons is never scored exhausted.
  The jackknife, not Chao1, because the small samples of deep nodes often
  have no doubletons, where Chao1's ``f_1 (f_1 - 1) / 2`` promises nearly
  ``k`` new positives per query and sent the policy to them in simulation.
  A caller may raise ``f_0 - d`` to a count of its own (``unfound``): ``crux``
  raises the root's to the equal-popularity estimate of its clean answers
  (:func:`equal_popularity_total`; see :mod:`.policy`), or replace it
  (``counted``: ``crux``'s census of the nodes below, :mod:`.census`);
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

The variance ``v`` (Sec. 4.2: ``max(0.01, bootstrap variance)``) resamples
each count as Poisson with its own mean (the Poisson bootstrap of the
answers), vectorized over the replicates, the nodes and the configurations.
The positives found are known, not sampled: a found positive that a
replicate drops counts there as found elsewhere (``d``), like one found by
a query below the node.  Counting it not found instead (the replicate's
own positives only) shrank the variance early and widened it mid-budget
and, measured in simulation, cost ``crux`` positives at Zipf 1 and above
for a gain of one or two at the early points with uniform popularity.
``v`` is the upper semivariance of the replicates about the estimate, the
mean of ``max(r_b - r, 0)^2`` (Markowitz, "Portfolio Selection", 1959,
Ch. 9: the dispersion on one side), floored at 0.01: ``sigma`` is to bound
the gain from above, and the replicates below the estimate measure the
bootstrap's own bias rather than a chance of a larger gain.  A sparse
sample loses a singleton with chance ``e^{-1}`` per replicate, its positive
then found elsewhere, so the jackknife's ``f_1`` shrinks while ``d`` grows
and a replicate can score a node with dozens of unfound positives as nearly
exhausted (an exclude list of every positive found: gain 10 in the sample,
1 in most replicates, variance 11).  The two-sided variance sent ``crux``
from the root to such nodes early with uniform popularity, where the root
yields more per cost (see :mod:`.policy` for the measurements).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .richness import chao1_unseen, good_turing_unseen, jackknife_unseen

__all__ = ["MIN_VARIANCE", "Recaptures", "capped_unseen_mass", "doubletons", "equal_popularity_share",
           "equal_popularity_total",
           "expected_new", "gain_with_variance", "recapture_unseen_mass", "sample_statistics", "unseen_split"]

MIN_VARIANCE = 0.01
TINY = 1e-300  # keeps 0 / 0 at 0 in the successive-sampling loop


def unseen_split(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, found: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Positives the node's sample never returned ``f_0``, and how many of them are found (``d``): new = ``f_0 - d``."""
    other = np.maximum(found - seen, 0).astype(float)  # found elsewhere, absent from this sample
    return np.where(f1 > 0, np.maximum(jackknife_unseen(n, f1), other + 1), other), other


def expected_new(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, squares: np.ndarray, found: np.ndarray,
                 k: np.ndarray, l: np.ndarray, unfound: np.ndarray | float = 0.0,
                 unseen_mass: np.ndarray | None = None, counted: np.ndarray | None = None) -> np.ndarray:
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
    counted : numpy.ndarray or None
        The node's positives not found yet, replacing the sample's estimate (and ``unfound``) where not NaN.
    """
    u = good_turing_unseen(n, f1) if unseen_mass is None else unseen_mass
    f0, other = unseen_split(n, seen, f1, found)
    f0 = np.maximum(f0, other + unfound)
    if counted is not None:
        f0 = np.where(np.isnan(counted), f0, other + counted)
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
                       recaptures: Recaptures | None = None, unfound: np.ndarray | float = 0.0,
                       counted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
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
        :func:`capped_unseen_mass` (both resampled as Poisson), else Good-Turing's.
    unfound : numpy.ndarray or float
        At least this many positives of each node are not found yet (raises the count of
        :func:`expected_new`, the same in every replicate; e.g. from :func:`equal_popularity_total`).
    counted : numpy.ndarray or None
        Per node, its positives not found yet replacing the sample's estimate where not NaN (the same in every
        replicate; :func:`expected_new`).

    Returns
    -------
    r, v : numpy.ndarray
        ``(n_nodes, n_configs)`` gains and variances ``max(0.01, upper semivariance of the bootstrap)``.
    """
    draws = np.vstack([entry_count, rng.poisson(entry_count, size=(replicates, entry_count.size))])
    stats = sample_statistics(entry_node, draws, found.size)
    unseen = None
    if recaptures is not None:
        new, recaptured = (np.vstack([x, rng.poisson(x, size=(replicates, x.size))])[..., None] for x in recaptures)
        unseen = capped_unseen_mass(Recaptures(new, recaptured), *stats[:3], doubletons(entry_node, draws, found.size),
                                    found[:, None], unfound)
    gains = expected_new(*stats, found[:, None], k, l, unfound, unseen, counted)
    above = np.maximum(gains[1:] - gains[0], 0.0)  # the replicates' excess over the estimate
    return gains[0], np.maximum(MIN_VARIANCE, np.mean(above ** 2, axis=0))


def equal_popularity_total(n: np.ndarray | float, seen: np.ndarray | float) -> np.ndarray:
    """The number of positives if all were equally popular, from a clean sample (draws from all of them).

    With ``N`` equally popular positives, ``n`` draws show ``E S = N (1 - exp(-n / N))`` distinct ones
    (the draws taken as Poisson); the estimate solves ``E S = S`` for the ``S`` seen (Lewontin and Prout,
    "Estimation of the number of different classes in a population", Biometrics 12(2), 1956), by
    bisection; ``S`` when no answer repeats (no finite solution: nothing beyond what is seen) or none was
    drawn.  Unequal popularity lowers the distinct count of ``n`` draws, so the estimate is then low: a
    lower bound like the jackknife's, and with equal popularity nearly unbiased where the jackknife's
    ``f_1 (n - 1) / n`` falls short (it never exceeds the singletons: a third of the positives not seen
    when two thirds are).
    """
    n, seen = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(seen, dtype=float))
    return np.where(seen < n, _solve_distinct(n, np.where(seen < n, seen, 0.0)), seen)


def _solve_distinct(n: np.ndarray, seen: np.ndarray, steps: int = 60) -> np.ndarray:
    """The ``N`` with ``N (1 - exp(-n / N)) = seen`` for ``0 < seen < n``, by bisection on ``log N`` between
    ``seen`` and ``10^6 seen`` (0 where ``seen`` is 0)."""
    low = np.log(np.maximum(seen, 1.0))
    high = low + np.log(1e6)
    for _ in range(steps):  # the mean distinct count grows with N: keep the half holding the root
        middle = (low + high) / 2
        size = np.exp(middle)
        short = -size * np.expm1(-n / size) < seen
        low, high = np.where(short, middle, low), np.where(short, high, middle)
    return np.where(seen > 0, np.exp((low + high) / 2), 0.0)


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
    upper estimate (less so as the policy weighs each earlier answer by the node's found count then over that
    now); the unseen mass is the smaller of it and Good-Turing's (Good-Turing's where nothing was
    weighed).
    """
    whole = good_turing_unseen(n, f1)
    weighed = np.asarray(recaptures.new + recaptures.recaptured, dtype=float)
    # where nothing was weighed the ratio stays 1 and Good-Turing's share (at most 1) is kept
    return np.minimum(whole, np.divide(recaptures.new, weighed, out=np.ones(np.broadcast(recaptures.new, weighed).shape),
                                       where=weighed > 0))


def equal_popularity_share(n: np.ndarray, seen: np.ndarray, f1: np.ndarray, f2: np.ndarray, found: np.ndarray,
                           unfound: np.ndarray | float = 0.0) -> np.ndarray:
    """Share of a node's popularity its sample's unseen positives would hold if every positive were equally popular.

    ``f_0 / (S + f_0)``, ``S`` the positives the sample returned and ``f_0`` those it never returned: the
    larger of the jackknife (with the floor of :func:`unseen_split`) and the bias-corrected Chao1 (Chao,
    Scand. J. Statist. 11, 1984; nearly unbiased with equal popularity, where the jackknife's ``f_1`` falls
    short while the coverage is low), raised to ``d + unfound``.  A positive's chance of having been returned
    grows with its popularity, so with unequal popularity the unseen are the rarer ones and their share is
    below this: an upper estimate of the unseen mass, which the sample's singletons cannot inflate when an
    exclude list made them (every answer new, each a singleton).
    """
    f0, other = unseen_split(n, seen, f1, found)
    f0 = np.maximum(np.maximum(f0, chao1_unseen(n, f1, f2)), other + unfound)
    total = seen + f0
    return np.divide(f0, total, out=np.ones(np.broadcast(f0, total).shape), where=total > 0)


def capped_unseen_mass(recaptures: Recaptures, n: np.ndarray, seen: np.ndarray, f1: np.ndarray, f2: np.ndarray,
                       found: np.ndarray, unfound: np.ndarray | float = 0.0) -> np.ndarray:
    """``crux``'s unseen mass: the smallest of Good-Turing's, the recaptures' (:func:`recapture_unseen_mass`)
    and the equal-popularity share (:func:`equal_popularity_share`; ``unfound`` raises its count)."""
    return np.minimum(recapture_unseen_mass(recaptures, n, f1),
                      equal_popularity_share(n, seen, f1, f2, found, unfound))


def sample_statistics(entry_node: np.ndarray, counts: np.ndarray, n_nodes: int) -> tuple[np.ndarray, ...]:
    """Sample size, distinct positives, singletons and sum of squared counts of each node, shape ``(..., n_nodes, 1)``.

    ``counts`` is ``(entries,)`` or ``(replicates, entries)``: one set of counts per row.
    """
    counts = np.atleast_2d(counts)
    return tuple(_per_node(entry_node, values, n_nodes) for values in (counts, counts > 0, counts == 1, counts ** 2))


def doubletons(entry_node: np.ndarray, counts: np.ndarray, n_nodes: int) -> np.ndarray:
    """Positives returned exactly twice ``f_2`` per node, shaped like :func:`sample_statistics`' outputs."""
    return _per_node(entry_node, np.atleast_2d(counts) == 2, n_nodes)


def _per_node(entry_node: np.ndarray, values: np.ndarray, n_nodes: int) -> np.ndarray:
    """Sums of ``values`` (``(replicates, entries)``) per node: ``(replicates, n_nodes, 1)``."""
    rows = values.shape[0]
    slot = (np.arange(rows)[:, None] * n_nodes + entry_node).ravel()
    return np.bincount(slot, weights=values.ravel(), minlength=rows * n_nodes).reshape(rows, n_nodes, 1)
