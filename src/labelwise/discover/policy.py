"""Which query to ask next: the multi-round policy of CRUX and the baselines it is compared with.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019, Sec. 5:

* Algorithm 1: ask the active configuration ``q = (k, l, v)`` of largest
  ``(r(q) + sigma(q, t)) / c(q)`` that the remaining budget affords, with
  ``sigma(q, t) = sqrt(v_{q,t} log t / n_{q,t})`` (Eq. 1; ``log(1 + t)`` so the
  first round is not a tie).  ``n_{q,t}`` counts the queries whose answers
  make up the sample of ``q``'s node, those asked at the node or above it
  (at least 1), rather than the times ``q`` itself was asked: ``r`` and
  ``v`` of every configuration of a node come from that one sample, so a
  node sampled through many queries above it is known as well as one asked
  that often (counting only ``q``'s own queries sent the policy to children
  it had no reason to doubt).  Before any answer the root's gain is ``k``.
  ``sigma`` is to bound the true gain from above with high probability
  (Sec. 5.1); the bootstrap of a node's sample cannot: the sample holds
  the answers of queries at the node or above it, not of those below it,
  and its estimate of the positives not found is at most about its
  singletons.  The children of a node along one attribute split its
  items, so its unfound positives are the sum of theirs.  ``sigma`` is
  therefore at least ``r'(q) - r(q)``, ``r'`` the gain with the node's
  unfound count raised to the largest such sum of its children's (raised
  bottom-up, :meth:`~labelwise.discover.hierarchy.Hierarchy.raised_to_children`):
  in simulation this put ``crux`` ahead of ``greedy`` with Zipf popularity;
* Algorithm 2: after a query at ``v`` the configurations of ``v``'s children
  join the expanded set (top-down expansion), and the active set is the
  expanded set without the configurations whose upper bound is below the
  largest lower bound (action elimination of Even-Dar, Mannor and Mansour,
  JMLR 2006).  Two departures, both measured in simulation: the bounds
  are per unit cost, ``(r +- sigma) / c``, like the score (on the gain
  alone a deep, expensive node that promises more per query removed the
  cheap root); and the elimination is taken anew each round over the
  expanded set rather than for good, since the gains shrink as positives
  are found and a configuration removed while another node was richer
  becomes the best once that node is exhausted.  A third, in the
  expansion (``crux`` and ``greedy`` alike): a query also expands every
  node below it that its answers fell in, not only its children, since
  such a node has a sample of its own and hence a gain.  With children
  only, a node two levels down stays out of reach until its parent is
  asked, however many of its positives are left, while in simulation the
  configuration of largest true yield per cost was mostly such a node from
  a third of the budget on.

A third departure, in the gain itself (Sec. 4.1 estimates it from the
node's frequency counts, Good-Turing's ``f_1 / n`` for the unseen mass):
for ``crux`` the unseen mass is at most what the recaptures say
(:func:`~labelwise.discover.gain.recapture_unseen_mass`: the new answers,
each weighed by the share of the node's found positives its query did not
exclude, against the answers found before).  A query returns distinct
positives and its exclude list takes found ones out of the draw, so with
lists holding every positive found each answer is new and a singleton
however popular, and Good-Turing then promises nearly ``k`` new positives
from the root without exclude list at any popularity.  The count of the
positives not found (the first-order jackknife, :mod:`.gain`) is not capped
so: a capture-recapture count (Schnabel, American Mathematical Monthly
45(6), 1938) underestimates it under unequal popularity (see the seventh).  Nor does
anything weigh the answers of queries whose lists held every positive
found, so ``crux``'s unseen mass is also at most the share the unseen
positives would hold if every positive were equally popular
(:func:`~labelwise.discover.gain.equal_popularity_share`: with unequal
popularity the unseen are the rarer ones and hold less).

Fourth, ``v`` in ``sigma`` is the bootstrap's upper semivariance
(:func:`~labelwise.discover.gain.gain_with_variance`): the Poisson
bootstrap of a sparse sample drops singletons, and its replicates then
score a node with dozens of positives left as nearly exhausted, a spread
below the estimate, not above it.  With uniform popularity that spread
sent ``crux`` from the root too soon (``benchmarks/discover_gain_headroom.py``).

Fifth, each earlier answer behind those recaptures weighs ``F_then /
F_now``, the node's found count when it came over the count now (running
sums scaled by ``F / (F + new)`` whenever positives of the node are
found): the odds estimate ``M / (1 - M)``, and the found share ``M`` grows
with the found count (in proportion with equal popularity).  Pooled
unweighted, a node's first answers, nearly all new, held its unseen mass
near its early value, and ``crux`` kept asking nodes mostly found.

Sixth, the root's count of positives not found is at least what its
clean answers (those of root queries without exclude list) say with
equal popularity (:func:`~labelwise.discover.gain.equal_popularity_total`,
Lewontin and Prout 1956), less the positives found.  Its sample holds the
root queries' answers only, so once queries below it find positives its
sample never returned, the jackknife's unseen count (at most the
singletons: a third of the unseen when two thirds of the positives are)
is mostly those found elsewhere, and the root, with hundreds left, was
scored nearly exhausted: with uniform popularity ``crux`` left it for
nodes below while it still yielded more per cost.  Under unequal
popularity the estimate is lower, a lower bound like the jackknife, and
the larger of the two is kept.  Only at the root: a node below is reached
by few clean answers, where the estimate is unsteady and the policy would
pick the largest of many such.

Seventh, below the root, while its clean answers look equally popular, a
node's unfound count is its census (:mod:`.census`), and the bonus drops
the children's raised count (kept, it cost 2 positives at 40% of budget).

An answer with fewer than ``k`` positives says the node has no other
positive outside the exclude list: the node and every node below it are
exhausted (gain 0).

Baselines: ``greedy`` (``r / c`` without ``sigma`` and without elimination),
``root`` (always the root, the largest ``k``, the smallest ``l``: none by default) and
``random`` (a node and configuration uniformly among those affordable).

All per-node and per-configuration statistics are arrays (nodes x
configurations); the samples are one sorted array of ``(node, positive)``
keys with counts.  A node's sample holds the answers of queries at the node
or above it that fall in the node: given that it falls in the node, an
answer of a query above it is a popularity-weighted draw from the node's
positives too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .census import Census
from .costs import CostModel
from .gain import (
    MIN_VARIANCE,
    Recaptures,
    capped_unseen_mass,
    doubletons,
    equal_popularity_total,
    expected_new,
    gain_with_variance,
    sample_statistics,
    unseen_split,
)
from .hierarchy import Hierarchy
from .remaining import remaining_interval

__all__ = ["POLICIES", "Query", "QueryPolicy"]

POLICIES = ("crux", "greedy", "root", "random")


@dataclass(frozen=True)
class Query:
    """A query: up to ``k`` positives of ``node`` other than the ``exclude`` list (item indices)."""

    node: int
    config: int
    k: int
    exclude: np.ndarray
    cost: float


class QueryPolicy:
    """The state of a discovery run and the choice of its next query.

    Parameters
    ----------
    hierarchy : Hierarchy
    costs : CostModel
    name : str
        ``crux``, ``greedy``, ``root`` or ``random``.
    seed : int
        Seed of the bootstrap (each round draws from ``(seed, round)``, so a replay is identical).
    replicates : int
        Bootstrap replicates of the gain variance.
    """

    def __init__(self, hierarchy: Hierarchy, costs: CostModel, name: str = "crux", seed: int = 0,
                 replicates: int = 32) -> None:
        if name not in POLICIES:
            raise ValueError(f"policy {name!r} is not one of {', '.join(POLICIES)}")
        self.hierarchy, self.costs, self.name = hierarchy, costs, name
        self.seed, self.replicates = seed, replicates
        self.k, self.l = costs.configurations()
        n_nodes = hierarchy.n_nodes
        self.price = costs.price(self.k[None, :], self.l[None, :], hierarchy.depth()[:, None])
        self.gain = np.zeros((n_nodes, self.k.size))
        self.gain[0] = self.k  # nothing found yet: every answer is new
        self.variance = np.full((n_nodes, self.k.size), MIN_VARIANCE)
        self.asked = np.zeros(n_nodes, dtype=np.int64)  # queries at each node
        self.expanded = np.zeros((n_nodes, self.k.size), dtype=bool)  # reached top-down
        self.expanded[0] = True
        # expanded and not eliminated (crux); everything expanded (greedy)
        self.active = self.expanded.copy() if name == "crux" else self.expanded
        self.exhausted = np.zeros(n_nodes, dtype=bool)  # every positive of the node is found
        self.found = np.zeros(hierarchy.n_items, dtype=bool)
        self.found_in = np.zeros(n_nodes, dtype=np.int64)  # positives found in each node
        self.returns = np.zeros(hierarchy.n_items, dtype=np.int64)  # times each positive was returned
        # strata of the remaining estimate: the nodes fixing the first j attributes, j = 0 .. all
        self.chain = hierarchy.item_node[:, [(1 << j) - 1 for j in range(len(hierarchy.attributes) + 1)]]
        self.node_size = np.bincount(hierarchy.item_node.ravel(), minlength=n_nodes)
        self.mixed = np.zeros(n_nodes, dtype=bool)  # some query held part of the node's items, not all
        self.covered: dict[int, np.ndarray] = {}  # queried node -> the chain nodes wholly inside it
        # queries covering each chain node with nothing of it excluded, and each item's answers in them
        self.clean_queries = np.zeros(n_nodes, dtype=np.int64)
        self.clean_returns = np.zeros(self.chain.shape, dtype=np.int64)
        self.keys = np.zeros(0, dtype=np.int64)  # node * n_items + item, sorted: the nodes' samples
        self.counts = np.zeros(0, dtype=np.int64)
        # crux's unseen mass: per node, new answers weighted by the share of found positives left eligible, and
        # the answers found before, each weighted by the node's found count when it came over the count now
        self.weighted_new = np.zeros(n_nodes)
        self.recaptured = np.zeros(n_nodes)
        self.root_clean = np.zeros(hierarchy.n_items, dtype=np.int64)  # crux: answers of root queries excluding none
        self.census = Census(hierarchy) if name == "crux" else None  # crux: each node's count, equal popularity
        self.round = 1
        self.spent = 0.0
        # crux's upper end: the gains with each node's unfound count raised to what its children imply
        self.own_unfound = np.zeros(n_nodes)  # the sample's estimate f_0 - d
        self.implied = np.zeros(n_nodes)  # raised to the largest sum over the children along one attribute
        self.ceiling = np.zeros_like(self.gain)  # the gains at the implied count where it is larger, else 0

    # ---- choosing ---------------------------------------------------------------------------------
    def spread(self, flat: np.ndarray) -> np.ndarray:
        """``sigma(q, t)`` (Eq. 1) of the configurations at flat indices ``flat`` (node * n_configs + config), at
        least the gain at the unfound count the node's children imply minus ``r``."""
        nodes, config_node = np.unique(flat // self.k.size, return_inverse=True)
        sampled = self.sampled_by(nodes)[config_node]
        paper = np.sqrt(self.variance.ravel()[flat] * np.log1p(self.round) / np.maximum(sampled, 1))
        return np.maximum(paper, self.ceiling.ravel()[flat] - self.gain.ravel()[flat])

    def sampled_by(self, nodes: np.ndarray) -> np.ndarray:
        """Queries asked at or above each of ``nodes`` (those whose answers make up its sample)."""
        return self.hierarchy.sum_above(nodes, self.asked)

    def choose(self, budget_left: float, rng: np.random.Generator) -> Query | None:
        """The next query, or None when no allowed configuration fits in ``budget_left``."""
        affordable = self.price <= budget_left + 1e-12
        if self.name == "root":
            config = int(np.lexsort((self.l, -self.k))[0])  # the largest k, the smallest l
            if not affordable[0, config]:
                return None
            node = 0
        elif self.name == "random":
            options = np.flatnonzero(affordable.ravel())
            if options.size == 0:
                return None
            node, config = divmod(int(rng.choice(options)), self.k.size)
        else:
            options = np.flatnonzero((self.active & affordable).ravel())
            if options.size == 0:
                return None
            bonus = self.spread(options) if self.name == "crux" else 0.0
            best = options[np.argmax((self.gain.ravel()[options] + bonus) / self.price.ravel()[options])]
            node, config = divmod(int(best), self.k.size)
        return self.query_at(node, config, rng)

    def query_at(self, node: int, config: int, rng: np.random.Generator) -> Query:
        """The query of configuration ``config`` at ``node``, its exclude list drawn."""
        return Query(node, config, int(self.k[config]), self.exclude_list(node, int(self.l[config]), rng),
                     float(self.price[node, config]))

    def exclude_list(self, node: int, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` positives drawn uniformly from those found in ``node`` (all of them if fewer)."""
        found = np.flatnonzero(self.found)
        there = found[self.hierarchy.members(node, found)]
        return np.sort(rng.choice(there, size=min(size, there.size), replace=False))

    # ---- learning ---------------------------------------------------------------------------------
    def record(self, query: Query, returned: np.ndarray) -> int:
        """Take in the answers (distinct item indices in the node, none excluded); the number new."""
        returned = np.unique(np.asarray(returned, dtype=np.int64))
        self.asked[query.node] += 1
        self.spent += query.cost
        self.round += 1
        self.returns[returned] += 1
        self._add_exposure(query, returned)
        below = self.hierarchy.below(query.node, returned)
        if self.name == "crux":
            self._add_recaptures(query, returned, below, self.found[returned])
            self.census.add(query, below, ~self.found[returned], self.found_in)
            if query.node == 0 and query.exclude.size == 0:
                self.root_clean[returned] += 1
        new = returned[~self.found[returned]]
        self.found[new] = True
        np.add.at(self.found_in, self.hierarchy.item_node[new].ravel(), 1)
        self._add_to_samples(np.sort((below * self.hierarchy.n_items + returned[:, None]).ravel()))
        if returned.size < query.k:  # the node had no other positive outside the exclude list
            self.exhausted[self.hierarchy.below(query.node, np.flatnonzero(self.hierarchy.members(query.node)))] = True
        if self.name in ("crux", "greedy"):  # the baselines use no gains
            self._update_gains(np.union1d(below.ravel(), self.hierarchy.item_node[new].ravel()))
            self.expanded[self.hierarchy.children(query.node)] = True
            self.expanded[below.ravel()] = True  # the nodes below it that its answers reached
        if self.name == "crux":
            self.eliminate()
        return int(new.size)

    def _add_exposure(self, query: Query, returned: np.ndarray) -> None:
        """Count the clean queries and answers of each chain node (nothing of it excluded), and mixed nodes."""
        if query.node not in self.covered:
            inside = np.bincount(self.chain[self.hierarchy.members(query.node)].ravel(),
                                 minlength=self.node_size.size)
            self.mixed |= (inside > 0) & (inside < self.node_size)
            self.covered[query.node] = np.flatnonzero(inside == self.node_size)
        dirty = np.zeros(self.node_size.size, dtype=bool)
        dirty[self.chain[query.exclude].ravel()] = True
        covered = self.covered[query.node]
        self.clean_queries[covered[~dirty[covered]]] += 1
        self.clean_returns[returned] += ~dirty[self.chain[returned]]

    def _add_recaptures(self, query: Query, returned: np.ndarray, below: np.ndarray, found_before: np.ndarray) -> None:
        """Add the answers in each node ``below`` them: the recaptures, and the new ones weighted by the share of
        the node's found positives the query did not exclude; first the earlier sums of every node the new
        positives lie in are scaled by its found count before the query over that after it."""
        grows, fresh = np.unique(self.hierarchy.item_node[returned[~found_before]].ravel(), return_counts=True)
        # each earlier answer of a node then weighs (found then) / (found now): the factors F / (F + new) telescope
        kept = self.found_in[grows] / (self.found_in[grows] + fresh)
        self.weighted_new[grows] *= kept
        self.recaptured[grows] *= kept
        new_in = below[~found_before].ravel()
        np.add.at(self.recaptured, below[found_before].ravel(), 1)
        excluded_in = np.sort(self.hierarchy.below(query.node, query.exclude).ravel())
        excluded = np.searchsorted(excluded_in, new_in, side="right") - np.searchsorted(excluded_in, new_in)
        np.add.at(self.weighted_new, new_in, 1.0 - excluded / np.maximum(self.found_in[new_in], 1))

    def _add_to_samples(self, keys: np.ndarray) -> None:
        pos = np.searchsorted(self.keys, keys)
        known = pos < self.keys.size
        known[known] = self.keys[pos[known]] == keys[known]
        self.counts[pos[known]] += 1
        self.keys = np.insert(self.keys, pos[~known], keys[~known])
        self.counts = np.insert(self.counts, pos[~known], 1)

    def sample(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Samples of ``nodes``: for each entry its position in ``nodes``, its positive and its count."""
        n_items = self.hierarchy.n_items
        lo = np.searchsorted(self.keys, nodes * n_items)
        hi = np.searchsorted(self.keys, (nodes + 1) * n_items)
        sizes = hi - lo
        entry = np.repeat(np.arange(nodes.size), sizes)
        index = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes) + np.repeat(lo, sizes)
        return entry, self.keys[index] % n_items, self.counts[index]

    def _update_gains(self, nodes: np.ndarray) -> None:
        entry, _, counts = self.sample(nodes)
        rng = np.random.default_rng([self.seed, self.round])
        recaptures, unfound, counted = None, 0.0, None
        if self.name == "crux":
            recaptures = Recaptures(self.weighted_new[nodes], self.recaptured[nodes])
            unfound = self.root_unfound(nodes)[:, None]
            counted = self.census.unfound(nodes, self.found_in, self.exhausted, self.root_clean)
        self.gain[nodes], self.variance[nodes] = gain_with_variance(
            entry, counts, self.found_in[nodes], self.k, self.l, rng, self.replicates, recaptures, unfound, counted)
        self.gain[self.exhausted] = 0.0
        if self.name == "crux":
            self._update_ceiling(nodes, entry, counts)
            self.ceiling[1:] *= counted is None  # with the census, no raised bonus below the root (the seventh)

    def root_unfound(self, nodes: np.ndarray) -> np.ndarray:
        """Per node of ``nodes``: for the root, its positives not found by the equal-popularity estimate of its
        clean sample (:func:`~labelwise.discover.gain.equal_popularity_total`, answers of root queries without
        exclude list); 0 for every other node."""
        clean = self.root_clean[self.root_clean > 0]
        total = equal_popularity_total(float(clean.sum()), float(clean.size))
        return np.where(nodes == 0, max(float(total) - float(self.found.sum()), 0.0), 0.0)

    def _update_ceiling(self, nodes: np.ndarray, entry: np.ndarray, counts: np.ndarray) -> None:
        """The gains with each node's unfound count raised to its children's (crux's upper end), where it changed."""
        n, seen, f1, _ = (x[0, :, 0] for x in sample_statistics(entry, counts, nodes.size))
        f0, other = unseen_split(n, seen, f1, self.found_in[nodes])
        self.own_unfound[nodes] = np.maximum(f0 - other, self.root_unfound(nodes))
        self.own_unfound[self.exhausted] = 0.0
        implied = self.hierarchy.raised_to_children(self.own_unfound)
        stale = np.union1d(nodes, np.flatnonzero(implied != self.implied))
        self.implied = implied
        self.ceiling[stale] = 0.0
        self.ceiling[self.exhausted] = 0.0
        raised = stale[(implied[stale] > self.own_unfound[stale]) & ~self.exhausted[stale]]
        if raised.size:
            entry, _, counts = self.sample(raised)
            stats = [x[0] for x in sample_statistics(entry, counts, raised.size)]
            recaptures = Recaptures(self.weighted_new[raised][:, None], self.recaptured[raised][:, None])
            found, unfound = self.found_in[raised][:, None], implied[raised][:, None]
            unseen = capped_unseen_mass(recaptures, *stats[:3], doubletons(entry, counts, raised.size)[0], found, unfound)
            self.ceiling[raised] = expected_new(*stats, found, self.k, self.l, unfound, unseen)

    def eliminate(self) -> None:
        """Active: the expanded configurations whose upper bound per cost reaches the largest lower one."""
        expanded = np.flatnonzero(self.expanded.ravel())
        sigma = self.spread(expanded)
        gain, price = self.gain.ravel()[expanded], self.price.ravel()[expanded]
        self.active = np.zeros_like(self.expanded)
        self.active.ravel()[expanded[(gain + sigma) / price >= np.max((gain - sigma) / price)]] = True

    # ---- estimates --------------------------------------------------------------------------------
    def remaining(self, level: float = 0.95) -> dict:
        """Positives not found yet in the whole domain, from how often each was returned (any query).

        The strata: along the chain of nodes fixing the first ``j`` attributes, the coarsest node of
        each item that no query held only part of (the root alone when every query was at the root;
        leaves at worst).  A stratum's sample is the answers of the queries that held it and excluded
        none of its positives: each is a draw by popularity among all its positives.  The samples of
        the strata are pooled into one frequency table (summing small strata's own Chao1 estimates
        compounds their small-sample bias), with the sampling units ``T`` of the queries behind them
        (``(T - 1) / T`` the singleton-weighted mean of the strata's ``(m - 1) / m``, ``m`` their
        clean queries: a query returns distinct positives).  Leaves below a query that returned fewer
        than ``k`` have no positive left; open strata no clean query sampled make the result a lower
        bound only (see :func:`~labelwise.discover.remaining.remaining_interval`).
        """
        depth = np.argmax(~self.mixed[self.chain], axis=1)  # a leaf is never mixed
        items = np.arange(self.chain.shape[0])
        units = self.clean_queries[self.chain[items, depth]]
        counts = self.clean_returns[items, depth]
        open_leaf = ~self.exhausted[self.chain[:, -1]]
        sampled = open_leaf & (units > 0)
        singles = sampled & (counts == 1)
        shrink = float(np.mean(1.0 - 1.0 / units[singles])) if singles.any() else 0.0
        estimate = remaining_interval(counts[sampled], int(self.found[sampled].sum()), level,
                                      units=1.0 / (1.0 - shrink),
                                      unsampled=int((open_leaf & ~sampled & ~self.found).sum()))
        return {**estimate, "total": estimate["total"] + int(self.found[~sampled].sum())}

    def node_remaining(self, node: int, level: float = 0.95) -> dict:
        """Positives of ``node`` not found yet, from its sample (queries at or above it); 0 once exhausted.

        The sample holds the answers of queries with exclude lists too (their excluded positives counted
        as returned less often than they would be): a guide per node, rougher than :meth:`remaining`.
        """
        if self.exhausted[node]:
            found = float(self.found_in[node])
            return {"total": found, "remaining": 0.0, "interval": [0.0, 0.0], "lower_bound_only": False,
                    "doubts": [], "unseen_share": 0.0}
        _, _, counts = self.sample(np.array([node]))
        return remaining_interval(counts, int(self.found_in[node]), level)
