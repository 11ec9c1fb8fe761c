"""How many positives each node holds, from which answers were new, given the exclude lists (equal popularity).

With equally popular positives, the answer to a query at node ``u`` with an
exclude list ``E`` is a uniform random subset of ``u``'s positives outside
``E``.  For a node ``v`` at or below ``u``, given that ``m`` of the answers
fall in ``v``, they are then a uniform subset of ``v``'s ``N - e`` eligible
positives (``e``: the excluded ones in ``v``), of which ``N - F`` are not found
yet (``F``: found in ``v`` before the query, the excluded among them), so the
number new is hypergeometric::

    P(new | m, N) = C(N - F, new) C(F - e, m - new) / C(N - e, m).

The product over the queries whose answers reached ``v`` is a likelihood of
``N`` alone: the multiple-recapture (Schnabel census) likelihood of Schnabel,
"The estimation of the total fish population of a lake", American
Mathematical Monthly 45(6), 1938, and Darroch, "The multiple-recapture
census I: estimation of a closed population", Biometrika 45(3/4), 1958,
with the exclude lists as known removals: a list holding every
positive found in ``v`` makes every answer there new whatever ``N``, and says
nothing.  Frequency counts (:mod:`.richness`) ignore what the lists tell and
read the answers they made new as singletons.

A query at a node ``u`` above ``v`` says more: how many of its ``M`` answers
fell in ``v`` at all.  Given ``N_u``, that count is nearly Poisson with mean
``M (N - e) / (N_u - e_u)``; its log-likelihood, ``m log(N - e) - N M / (N_u -
e_u)`` up to terms free of ``N``, enters with ``N_u`` at its current estimate
(the root's from :func:`~labelwise.discover.gain.equal_popularity_total`, a
node's below from this census).  This is most of what fixes ``N`` early,
while the answers in ``v`` of queries at the root are few and nearly all new.

The posterior mean of ``N`` under a flat prior, on a grid of the integers
from 0 to the node's item count (every integer up to :data:`EXACT`, then
steps of at most :data:`STEP` - 1 of the value), less the positives found, is
the count of those not found.  With unequal popularity the positives not
found are the rarer ones, so the recaptures over-represent the popular ones
and the census under-counts (capture heterogeneity, Otis, Burnham, White and
Anderson, Wildlife Monographs 62, 1978): :func:`popularity_looks_equal` says
whether the root's answers without exclude list are consistent with equal
popularity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln

from .gain import equal_popularity_total
from .hierarchy import Hierarchy

if TYPE_CHECKING:
    from .policy import Query

__all__ = ["EXACT", "STEP", "Census", "popularity_looks_equal"]

EXACT = 32  # the grid holds every integer below this
STEP = 1.08  # and then grows by at most this factor


class Census:
    """The log-likelihood of every node's number of positives on a grid, and the queries behind it.

    Parameters
    ----------
    hierarchy : Hierarchy
    """

    def __init__(self, hierarchy: Hierarchy) -> None:
        self.hierarchy = hierarchy
        sizes = np.bincount(hierarchy.item_node.ravel(), minlength=hierarchy.n_nodes)  # the largest counts
        top = max(int(np.max(sizes)), EXACT)
        steps = int(np.ceil(np.log(top / EXACT) / np.log(STEP))) + 1
        self.grid = np.unique(np.concatenate([np.arange(EXACT), np.round(np.geomspace(EXACT, top, steps))]))
        self.grid = self.grid.astype(np.int64)
        # a grid point stands for the integers nearer to it than to its neighbours (the flat prior's weight)
        edges = np.floor(np.concatenate([[-0.5], (self.grid[1:] + self.grid[:-1]) / 2, [self.grid[-1] + 0.5]]) + 0.5)
        self.log_width = np.log(np.diff(edges).clip(min=1.0))
        self.log_factorial = gammaln(np.arange(top + 2) + 1.0)
        self.loglik = np.where(self.grid[None, :] > sizes[:, None], -np.inf, 0.0)
        self.total = np.zeros(hierarchy.n_nodes)  # the latest estimate of each node's count (0: none yet)
        self.query_node = np.zeros(0, dtype=np.int64)
        self.query_size = np.zeros((0, 2))  # answers and exclude-list size of each query

    def _log_choose(self, n: np.ndarray, k: np.ndarray) -> np.ndarray:
        """``log C(n, k)`` (0 where ``n < k``: the caller masks those)."""
        fits = n >= k
        n, k = np.where(fits, n, 0), np.where(fits, k, 0)
        return self.log_factorial[n] - self.log_factorial[k] - self.log_factorial[n - k]

    def add(self, query: Query, below: np.ndarray, new: np.ndarray, found_in: np.ndarray) -> None:
        """Take in one query's answers.

        Parameters
        ----------
        query : Query
        below : numpy.ndarray
            ``(answers, nodes)``: the nodes at or below the query's node holding each answer
            (:meth:`~labelwise.discover.hierarchy.Hierarchy.below`).
        new : numpy.ndarray
            Boolean per answer: not found before.
        found_in : numpy.ndarray
            Positives found in each node before the query.
        """
        n_nodes = self.hierarchy.n_nodes
        nodes, answers = np.unique(below.ravel(), return_counts=True)
        fresh = np.bincount(below[new].ravel(), minlength=n_nodes)[nodes][:, None]
        excluded = np.bincount(self.hierarchy.below(query.node, query.exclude).ravel(), minlength=n_nodes)
        unfound = self.grid[None, :] - found_in[nodes][:, None]
        eligible = self.grid[None, :] - excluded[nodes][:, None]
        answers = answers[:, None]
        recapture = self._log_choose(unfound, fresh) - self._log_choose(eligible, answers)
        # a node below the query's also tells how many answers fell in it (Poisson; its rate term is in count)
        allocation = np.where(nodes[:, None] != query.node, answers * np.log(np.maximum(eligible, 1)), 0.0)
        self.loglik[nodes] += np.where(unfound >= fresh, recapture + allocation, -np.inf)
        self.query_node = np.append(self.query_node, query.node)
        self.query_size = np.vstack([self.query_size, [below.shape[0], query.exclude.size]])

    def unfound(self, nodes: np.ndarray, found_in: np.ndarray, exhausted: np.ndarray, root_clean: np.ndarray
                ) -> np.ndarray | None:
        """:meth:`count` with the domain's count from the root's clean answers, or None unless those look equally
        popular (:func:`popularity_looks_equal`; else the census under-counts).

        Parameters
        ----------
        nodes, found_in, exhausted : numpy.ndarray
            As in :meth:`count`.
        root_clean : numpy.ndarray
            Per item, its answers to root queries without exclude list: the domain's count is their
            equal-popularity estimate (:func:`~labelwise.discover.gain.equal_popularity_total`), at least those
            found.
        """
        if not popularity_looks_equal(root_clean):
            return None
        clean = root_clean[root_clean > 0]
        total = max(float(equal_popularity_total(float(clean.sum()), float(clean.size))), float(found_in[0]))
        return self.count(nodes, found_in, exhausted, total)

    def count(self, nodes: np.ndarray, found_in: np.ndarray, exhausted: np.ndarray, root_total: float
              ) -> np.ndarray:
        """Per node of ``nodes``, its positives not found: the posterior mean of its count (flat prior on the
        grid, at least those found) less those found; a column, NaN at the root and at exhausted nodes.

        Parameters
        ----------
        nodes : numpy.ndarray
        found_in : numpy.ndarray
            Positives found in each node of the hierarchy.
        exhausted : numpy.ndarray
            Boolean per node of the hierarchy: every positive of the node is found.
        root_total : float
            The number of positives in the domain (the root's count).
        """
        totals = np.maximum(self.total, found_in)
        totals[0] = root_total
        counted = np.full((nodes.size, 1), np.nan)
        depth = self.hierarchy.depth()[nodes]
        answers, excluded = self.query_size.T
        for level in range(1, int(depth.max(initial=0)) + 1):  # top-down: a node's estimate uses those above it
            at = np.flatnonzero((depth == level) & ~exhausted[nodes])
            # each query above expects M (N - e) / (N_u - e_u) of its M answers in the node: the rate per positive
            eligible = np.maximum(totals[self.query_node] - excluded, np.maximum(answers, 1.0))
            rate = np.bincount(self.query_node, weights=answers / eligible, minlength=totals.size)
            above = self.hierarchy.sum_above(nodes[at], rate, strict=True)
            totals[nodes[at]] = self._posterior_mean(nodes[at], found_in[nodes[at]], above)
            counted[at, 0] = totals[nodes[at]] - found_in[nodes[at]]
        self.total[nodes] = totals[nodes]
        return counted

    def _posterior_mean(self, nodes: np.ndarray, found: np.ndarray, rate: np.ndarray) -> np.ndarray:
        """Posterior mean count of ``nodes`` given at least ``found``, ``rate`` the answers expected per positive
        from the queries above them (the Poisson allocation's ``- N rate``)."""
        loglik = self.loglik[nodes] - rate[:, None] * self.grid[None, :] + self.log_width[None, :]
        loglik[self.grid[None, :] < found[:, None]] = -np.inf
        top = np.max(loglik, axis=1, keepdims=True)
        weight = np.exp(loglik - np.where(np.isfinite(top), top, 0.0))
        mass = weight.sum(axis=1)
        # no grid point left between the found count and the node's size: the found count
        return np.where(mass > 0, weight @ self.grid / np.where(mass > 0, mass, 1.0), found)


def popularity_looks_equal(counts: np.ndarray, z: float = 3.0, spread: float = 1.0) -> bool:
    """Whether a clean sample (answers drawn from all positives, ``counts`` per positive) shows every positive
    equally popular: large enough to tell, and consistent with it.

    With equally popular positives each positive's count is nearly Poisson with one mean ``lambda``, so the
    counts of the ``S`` positives returned are zero-truncated Poisson, ``lambda`` fitted to their mean (the
    equal-popularity estimate of :func:`~labelwise.discover.gain.equal_popularity_total` is ``n / lambda``).
    Popularity with squared coefficient of variation ``V`` makes each count a mixture of Poissons with variance
    ``lambda + V lambda^2``.  The index of dispersion test (Fisher, "The significance of deviations from
    expectation in a Poisson series", Biometrics 6(1), 1950) compares the sum of squared deviations of the
    counts from their mean with ``(S - 1) sigma^2``, ``sigma^2`` the truncated Poisson's variance, in units of
    its standard deviation ``sqrt(S (mu_4 - sigma^4))``: equal popularity is rejected above ``z`` of them, and
    the sample is too small to tell while ``V = spread`` would add less than ``2 z`` of them (``S spread
    lambda^2``).  Answers within a query are distinct, which spreads the counts less still.
    """
    counts = counts[counts > 0].astype(float)
    seen, n = counts.size, counts.sum()
    if seen < 2:
        return False
    rate = n / float(equal_popularity_total(n, float(seen)))
    values = np.arange(1, int(counts.max() + 10 * np.sqrt(rate) + 10 * rate) + 2, dtype=float)
    mass = np.exp(values * np.log(rate) - rate - gammaln(values + 1))
    mass /= mass.sum()
    mean = mass @ values
    variance, fourth = mass @ (values - mean) ** 2, mass @ (values - mean) ** 4
    sd = np.sqrt(seen * (fourth - variance ** 2))
    excess = float(np.sum((counts - counts.mean()) ** 2)) - (seen - 1) * variance
    return bool(seen * spread * rate ** 2 >= 2 * z * sd and excess <= z * sd)
