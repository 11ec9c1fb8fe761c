"""Are the gain estimates of ``crux`` and ``greedy`` right? Predicted against realized new positives per query.

Each query's predicted gain ``r(q)`` (the policy's estimate when it chose the query) is set against the
new positives its answers brought, averaged over the queries of ``--repeats`` runs, by the share of the
budget spent when it was asked (below 30%, 30-70%, from 70%) and by the kind of query: at the root
without exclude list, at the root with one, at an inner node or at a leaf (every attribute fixed), each of the
last two split by the exclude list (none; part of the positives found at the node; all of them, where every
answer is new and the gain is the node's unfound count up to ``k``).  Beside the realized mean, the true expected
new positives of the queries asked (the popularities known, as for the one-step ratio below).
Populations as in ``discover_benchmark.py`` (same generator and seed).

How good is each choice for one step?  With the popularities known, the true expected new positives of
every configuration at every node follow from successive sampling
(:meth:`~labelwise.discover.crowd.SimulatedCrowd.expected_new`, Rosén's order-sampling approximation, with an
exclude list replaced by its mean effect: approximate, over by up to ~18% at k = 1 on Zipf popularity and within
1% from k = 3, as ``tests/discover/test_successive.py`` checks against enumerations).
The *one-step ratio* of a query is its true expected new per cost over the best true expected new per
cost among all affordable configurations at that moment (1: the best one-step choice).  The ``oracle``
rows choose that best configuration every time (exclude lists drawn as the policy draws them): how far
gain estimates alone could take a one-step-greedy policy.  The ``greedy, true counts`` rows run greedy
with its own gains except where the exclude list holds every positive found at the node: there every
answer is new, the gain is ``min(k, G)`` with ``G`` the node's true number of unfound positives, and that
is what it is given (how much of the headroom is the unfound count alone).

Prints a markdown table and writes ``benchmarks/out/discover_gain_calibration.json``.

    PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_calibration.py --repeats 20
"""

from __future__ import annotations

import numpy as np
from discover_benchmark import HIERARCHIES, label, measure_populations, population

from labelwise.discover import CostModel, QueryPolicy
from labelwise.discover.crowd import SimulatedCrowd, best_query

SHARES = (0.3, 0.7)  # budget-share bin edges
SHARE_NAMES = ("<30%", "30-70%", ">=70%")
EXCLUDES = ("no exclude", "part excluded", "all excluded")
KINDS = ("root, no exclude", "root, exclude", *(f"{where}, {e}" for where in ("inner", "leaf") for e in EXCLUDES))
POLICIES = ("crux", "greedy", "greedy, true counts", "oracle")
DEFAULT_POPULATIONS = "small/skewed/zipf0,small/skewed/zipf1.5"
COMMAND = ("PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_calibration.py --repeats {repeats} "
           "--populations {populations}")


def calibration_run(policy: QueryPolicy, crowd: SimulatedCrowd, budget: float, seed: int, mode: str = ""
                    ) -> tuple[np.ndarray, int]:
    """One run until the budget is spent: per query ``(budget share, kind, predicted, realized, one-step ratio, true
    expected new)``,
    and the distinct positives found at the end.  ``mode``: ``oracle`` chooses the best true configuration every
    time; ``counts`` gives the policy the true gain of the configurations whose exclude list holds every
    positive found at their node."""
    rng = np.random.default_rng([seed, 1])
    depth = policy.hierarchy.depth()
    leaf = len(policy.hierarchy.attributes)
    rows = []
    while True:
        rate = crowd.yield_per_cost(policy, budget - policy.spent)
        if mode == "counts":
            unfound = crowd.positives[~policy.found[crowd.positives]]
            left = np.bincount(policy.hierarchy.item_node[unfound].ravel(), minlength=policy.hierarchy.n_nodes)
            everything = policy.l[None, :] >= policy.found_in[:, None]
            policy.gain[everything] = np.minimum(policy.k[None, :], left[:, None])[everything]
        query = best_query(policy, rate, rng) if mode == "oracle" else policy.choose(budget - policy.spent, rng)
        if query is None:
            break
        share = policy.spent / budget
        predicted = float(policy.gain[query.node, query.config])
        excluded = 0 if query.exclude.size == 0 else 1 + int(query.exclude.size >= policy.found_in[query.node])
        kind = ((0 if query.exclude.size == 0 else 1) if query.node == 0
                else 2 + 3 * int(depth[query.node] == leaf) + excluded)
        ratio = rate[query.node, query.config] / rate.max() if rate.max() > 0 else 1.0
        expected = rate[query.node, query.config] * query.cost
        rows.append((share, kind, predicted, policy.record(query, crowd.answer(query, rng)), ratio, expected))
    return np.array(rows, dtype=float).reshape(-1, 6), int(policy.found.sum())


def calibration(name: str, sizes: str, zipf: float, repeats: int, seed: int) -> dict:
    """Predicted and realized mean new positives per query, per policy, budget-share bin and kind of query."""
    levels, n_items, budget = HIERARCHIES[name]
    hierarchy, positive, popularity = population(levels, n_items, sizes, zipf, seed)
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    cells, ratios = [], []
    found = {}
    for policy in POLICIES:
        # the oracle and the true counts keep the state of a greedy run
        mode = {"oracle": "oracle", "greedy, true counts": "counts"}.get(policy, "")
        runs = [calibration_run(QueryPolicy(hierarchy, CostModel(), policy if not mode else "greedy", seed=seed + r),
                                crowd, budget, seed + r, mode) for r in range(repeats)]
        rows = np.vstack([run[0] for run in runs])
        ends = np.array([run[1] for run in runs], dtype=float)
        found[policy] = {"mean": float(ends.mean()), "se": float(ends.std(ddof=1) / np.sqrt(repeats))}
        share_bin = share_bin_of(rows)
        for b, share_name in enumerate(SHARE_NAMES):
            pick = share_bin == b
            if pick.any():
                ratios.append({"policy": policy, "share": share_name, "queries": int(pick.sum()),
                               "one_step_ratio": float(rows[pick, 4].mean()),
                               "one_step_ratio_se": float(rows[pick, 4].std() / np.sqrt(pick.sum()))})
        for b, share_name in enumerate(SHARE_NAMES if not mode else ()):  # predictions of the policy's own gains only
            for k, kind in enumerate(KINDS):
                pick = (share_bin == b) & (rows[:, 1] == k)
                if pick.any():
                    cells.append({"policy": policy, "share": share_name, "kind": kind, "queries": int(pick.sum()),
                                  "predicted": float(rows[pick, 2].mean()), "realized": float(rows[pick, 3].mean()),
                                  "expected": float(rows[pick, 5].mean()),
                                  "realized_se": float(rows[pick, 3].std() / np.sqrt(pick.sum()))})
    return {"hierarchy": name, "node_sizes": sizes, "zipf": zipf, "budget": budget, "cells": cells,
            "one_step": ratios, "found": found}


def share_bin_of(rows: np.ndarray) -> np.ndarray:
    """The budget-share bin of each query row."""
    return np.searchsorted(SHARES, rows[:, 0], side="right")


def calibration_table(data: dict) -> str:
    rows = [("| population | policy | budget spent | query | queries | predicted new | realized new (s.e.) | "
             "true expected new |"), "|" + "---|" * 8]
    for p in data["populations"]:
        for c in p["cells"]:
            rows.append(f"| {label(p)} | {c['policy']} | {c['share']} | {c['kind']} | {c['queries']} | "
                        f"{c['predicted']:.2f} | {c['realized']:.2f} ({c['realized_se']:.2f}) | {c['expected']:.2f} |")
    return "\n".join(rows)


def one_step_table(data: dict) -> str:
    """Per population and policy: mean one-step ratio by budget share, and the positives found at the end."""
    rows = ["| population | policy | " + " | ".join(f"one-step ratio {name}" for name in SHARE_NAMES)
            + " | found at the end (s.e.) |", "|" + "---|" * (3 + len(SHARE_NAMES))]
    for p in data["populations"]:
        for policy in POLICIES:
            cells = {c["share"]: f"{c['one_step_ratio']:.2f} ({c['one_step_ratio_se']:.2f})"
                     for c in p["one_step"] if c["policy"] == policy}
            end = p["found"][policy]
            rows.append(f"| {label(p)} | {policy} | " + " | ".join(cells.get(name, "") for name in SHARE_NAMES)
                        + f" | {end['mean']:.1f} ({end['se']:.1f}) |")
    return "\n".join(rows)


def summary_section(data: dict) -> str:
    """Markdown: predicted against realized new positives per query, and the command."""
    return "\n".join([
        "## Finding positives: predicted against realized gains",
        "",
        (f"Mean new positives per query as predicted by the policy's gain estimate when it chose the query, and "
         f"as realized, over {data['repeats']} runs per policy (seed {data['seed']}), by the share of the budget "
         "spent and the kind of query (a leaf fixes every attribute). Populations as in the discovery benchmark."),
        "",
        calibration_table(data),
        "",
        ("One-step ratio: the true expected new positives per cost of the query asked over the best among all "
         "affordable configurations then (popularities known; approximate: successive sampling by Rosén's "
         "order-sampling approximation, an exclude list by its mean effect, up to ~18% over at k = 1), mean over the queries (s.e.), and the distinct positives found at the full budget. "
         "`oracle` always asks the best one: a one-step-greedy policy with exact gains. `greedy, true counts`: "
         "greedy given the true gain only where the exclude list holds every positive found at the node (there "
         "every answer is new: min(k, the node's unfound positives))."),
        "",
        one_step_table(data),
        "",
        f"Reproduce: `{COMMAND.format(repeats=data['repeats'], populations=data['population_names'])}`",
    ])


def main() -> None:
    measure_populations(__doc__.splitlines()[0], 20, DEFAULT_POPULATIONS, calibration, "discover_gain_calibration", summary_section)


if __name__ == "__main__":
    main()
