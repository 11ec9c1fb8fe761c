"""Which part of crux's gap to the oracle is estimable: crux given the true unfound count (and unseen mass) of each node.

crux's gain of a configuration at a node (:func:`labelwise.discover.gain.expected_new`) combines two
estimates from the node's sample: how many of its positives are not found yet (the first-order jackknife
``f_0``, less those found elsewhere) and what share of its popularity the positives the sample never
returned hold (the unseen mass: Good-Turing's ``f_1 / n`` capped by the pooled recapture odds and by the share
the unseen would hold with equal popularity), then predicts the new positives of ``k`` distinct answers by
successive sampling.  Here crux runs with one or
both estimates replaced by the truth of the simulated population (nothing else changes: the bootstrap
variance, sigma, the elimination and the successive-sampling step are crux's own), so a better estimator of
each part can be judged by what it could gain at most:

* ``crux``: as shipped (the same runs as ``discover_benchmark.py``: same population, seeds and answers);
* ``crux, true count``: each node's unfound count exact, the unseen mass crux's estimate;
* ``crux, true count and mass``: both exact (the share of the node's popularity held by the positives its
  sample never returned, from the true popularities);
* ``oracle``: the configuration of largest true expected new positives per cost (successive sampling with
  the true popularities: :meth:`~labelwise.discover.crowd.SimulatedCrowd.expected_new`).

Each row is the lead, interpolated at the 10 budget points as in ``discover_benchmark.py``, over the best of
``root``, ``random`` and ``greedy`` there (mean over the runs, standard error of the difference).

Estimators tried against these rows and not taken (each moved crux toward one row on some population and away
from it on another): a shrunk multiplicative correction of the gains per kind of query (root, inner node or
leaf, times an exclude list of nothing, part or all of the positives found), learned online from predicted
against realized new positives (the realized counts are unbiased for the true yields) -- behind crux as shipped
with uniform popularity, where the corrections were small, noisy and stale for kinds no longer asked; dropping
from a node's frequency counts the answers of queries whose exclude list held every positive found there --
far behind from Zipf 0.5 on (those singletons are what keeps crux asking below the root); and the equal-
catchability count of a node's positives from its recaptures with the exclude lists taken into account (each
answer a recapture with chance ``(F_j - X_j) / (N - X_j)``, ``F_j`` found and ``X_j`` excluded there before
query ``j``; Schnabel, American Mathematical Monthly 45(6), 1938, by moments), with the unseen mass of the
same equal-popularity model -- in place of the jackknife it put crux level with root at 30% of the budget
with uniform popularity, still behind at 40%, and lost a quarter to a half of its lead from Zipf 1 on (the
popular positives are the ones recaptured, so it undercounts); as a floor of the jackknife it lost at Zipf 1,
as a cap at Zipf 1.5; choosing between it and the jackknife by their discounted squared errors on the queries
asked left crux as far behind root at 30-40% of the budget with uniform popularity.  Nor, in ``sigma``, the
bootstrap's upper semivariance about the estimate (the mean of ``max(r_b - r, 0)^2``) in place of its variance,
with the unseen mass also capped by the share the unseen would hold with equal popularity (``f_0 / (S + f_0)``,
the larger of the jackknife and Chao1): the Poisson bootstrap of a sparse sample drops singletons, and with an
exclude list of every positive found its replicates score a node with dozens left as nearly exhausted (10 new
in the sample, 1 in most replicates), which sent crux from the root a fifth into the budget with uniform
popularity.  Both together put crux further ahead with skewed node sizes from Zipf 0.5 on (from 30% of the
budget at Zipf 0.5, everywhere from Zipf 1) and level with root at 30% with uniform popularity, still behind at
40%; but with even node sizes behind greedy at 80-90% of the budget at Zipf 0 and only level with it at 90-100%
at Zipf 0.5 (ahead before): there crux's gains of such lists saturate at ``k`` at most nodes, the true yields a
third of it, and the two-sided variance was what ranked them.  The ``true count`` row is the target such a
count must approach, and the gap between it and ``true count and mass`` what the unseen mass must add.

Prints a markdown table and writes ``benchmarks/out/discover_gain_headroom.json``.

    PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_headroom.py --repeats 30
"""

from __future__ import annotations

import numpy as np
from discover_benchmark import (
    HIERARCHIES,
    INTERPOLATED,
    label,
    measure_populations,
    population,
)

from labelwise.discover import CostModel, Hierarchy, QueryPolicy, simulate_discovery
from labelwise.discover.crowd import SimulatedCrowd
from labelwise.discover.gain import (
    Recaptures,
    capped_unseen_mass,
    doubletons,
    expected_new,
    sample_statistics,
)
from labelwise.discover.simulate import CURVE_POINTS, ORACLE

RIVALS = ("root", "random", "greedy")
VARIANTS = {"crux": None, "crux, true count": "count", "crux, true count and mass": "both"}
DEFAULT_POPULATIONS = "small/skewed/zipf0,small/skewed/zipf1"
COMMAND = ("PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_headroom.py --repeats {repeats} "
           "--populations {populations}")


class TruthPolicy(QueryPolicy):
    """crux whose gains use the true unfound count (``mode="count"``) or also the true unseen mass (``"both"``)
    of each node it updates; ``mode=None``: crux itself."""

    def __init__(self, hierarchy: Hierarchy, crowd: SimulatedCrowd, mode: str | None, seed: int) -> None:
        super().__init__(hierarchy, CostModel(), "crux", seed=seed)
        self.crowd, self.mode = crowd, mode
        self.weight = np.zeros(hierarchy.n_items)
        self.weight[crowd.positives] = crowd.weight
        self.node_mass = self._per_node(crowd.positives, crowd.weight)

    def _per_node(self, items: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sum of ``values`` of ``items`` in each node."""
        nodes = self.hierarchy.item_node[items]
        return np.bincount(nodes.ravel(), weights=np.repeat(values, nodes.shape[1]), minlength=self.hierarchy.n_nodes)

    def _update_gains(self, nodes: np.ndarray) -> None:
        super()._update_gains(nodes)
        if self.mode is None:
            return
        entry, item, counts = self.sample(nodes)
        n, seen, f1, squares = (x[0] for x in sample_statistics(entry, counts, nodes.size))
        unfound = self.crowd.positives[~self.found[self.crowd.positives]]
        left = self._per_node(unfound, np.ones(unfound.size))[nodes][:, None]
        if self.mode == "count":  # crux's estimate, its equal-popularity share at the true count
            unseen = capped_unseen_mass(Recaptures(self.weighted_new[nodes][:, None], self.recaptured[nodes][:, None]),
                                        n, seen, f1, doubletons(entry, counts, nodes.size)[0],
                                        self.found_in[nodes][:, None], left)
        else:  # the popularity share of the positives the node's sample never returned
            returned = np.bincount(entry, weights=self.weight[item], minlength=nodes.size)
            mass = self.node_mass[nodes]
            unseen = (1.0 - np.divide(returned, mass, out=np.ones(nodes.size), where=mass > 0))[:, None]
        # with no singletons the sample's own count is the positives found elsewhere; raised by the true unfound
        self.gain[nodes] = expected_new(n, seen, np.zeros_like(f1), squares, self.found_in[nodes][:, None],
                                        self.k, self.l, left, unseen)
        self.gain[self.exhausted] = 0.0
        self.ceiling[:] = 0.0  # the exact count needs no raising to the children's


def run_variant(hierarchy: Hierarchy, crowd: SimulatedCrowd, budget: float, mode: str | None, seed: int
                ) -> np.ndarray:
    """Distinct positives found at the budget points, interpolated in the spend (as ``run_discovery``)."""
    rng = np.random.default_rng([seed, 1])
    state = TruthPolicy(hierarchy, crowd, mode, seed)
    history = [(0.0, 0)]
    while (query := state.choose(budget - state.spent, rng)) is not None:
        state.record(query, crowd.answer(query, rng))
        history.append((state.spent, int(state.found.sum())))
    spent, found = np.array(history).T
    return np.interp(budget * np.arange(1, CURVE_POINTS + 1) / CURVE_POINTS, spent, found)


def headroom(name: str, sizes: str, zipf: float, repeats: int, seed: int) -> dict:
    """Per variant and the oracle: the lead over the best rival at each budget point, with standard errors."""
    levels, n_items, budget = HIERARCHIES[name]
    hierarchy, positive, popularity = population(levels, n_items, sizes, zipf, seed)
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    curves = {}
    for policy in (*RIVALS, ORACLE):
        result = simulate_discovery(hierarchy, positive, popularity, budget, policy, repeats=repeats, seed=seed)
        curves[policy] = (np.array([c[INTERPOLATED] for c in result["curve"]]),
                          np.array([c[f"{INTERPOLATED}_se"] for c in result["curve"]]))
    for variant, mode in VARIANTS.items():
        runs = np.array([run_variant(hierarchy, crowd, budget, mode, seed + r) for r in range(repeats)])
        curves[variant] = (runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(repeats))
    best = np.argmax(np.array([curves[r][0] for r in RIVALS]), axis=0)
    rival_mean = np.array([curves[RIVALS[b]][0][j] for j, b in enumerate(best)])
    rival_se = np.array([curves[RIVALS[b]][1][j] for j, b in enumerate(best)])
    leads = {policy: {"difference": (curves[policy][0] - rival_mean).tolist(),
                      "se": np.hypot(curves[policy][1], rival_se).tolist()}
             for policy in (*VARIANTS, ORACLE)}
    return {"hierarchy": name, "node_sizes": sizes, "zipf": zipf, "budget": budget,
            "runner_up": [RIVALS[b] for b in best], "leads": leads}


def headroom_table(data: dict) -> str:
    rows = ["| population | policy | " + " | ".join(f"{10 * (j + 1)}%" for j in range(CURVE_POINTS)) + " |",
            "|" + "---|" * (CURVE_POINTS + 2)]
    for p in data["populations"]:
        for policy, lead in p["leads"].items():
            cells = " | ".join(f"{d:+.1f} ({s:.1f})" for d, s in zip(lead["difference"], lead["se"], strict=True))
            rows.append(f"| {label(p)} | {policy} | {cells} |")
    return "\n".join(rows)


def summary_section(data: dict) -> str:
    """Markdown: the leads of crux with true parts of its gain estimate, and the command."""
    return "\n".join([
        "## Finding positives: which part of the gain estimate holds crux back",
        "",
        (f"Lead over the best of root, random and greedy at each budget point (distinct positives found, "
         f"interpolated; mean over {data['repeats']} runs, seed {data['seed']}, standard error of the difference) "
         "of crux, of crux given each node's true unfound count, of crux given that and the true unseen mass, and "
         "of the oracle (true expected yields)."),
        "",
        headroom_table(data),
        "",
        f"Reproduce: `{COMMAND.format(repeats=data['repeats'], populations=data['population_names'])}`",
    ])


def main() -> None:
    measure_populations(__doc__.splitlines()[0], 30, DEFAULT_POPULATIONS, headroom, "discover_gain_headroom", summary_section)


if __name__ == "__main__":
    main()
