"""Are the gain estimates of ``crux`` and ``greedy`` right? Predicted against realized new positives per query.

Each query's predicted gain ``r(q)`` (the policy's estimate when it chose the query) is set against the
new positives its answers brought, averaged over the queries of ``--repeats`` runs, by the share of the
budget spent when it was asked (below 30%, 30-70%, from 70%) and by the kind of query: at the root
without exclude list, at the root with one, at an inner node, at a leaf (every attribute fixed).
Populations as in ``discover_benchmark.py`` (same generator and seed).

Prints a markdown table and writes ``benchmarks/out/discover_gain_calibration.json``.

    PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_calibration.py --repeats 20
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from discover_benchmark import HIERARCHIES, label, population, select_grid

from labelwise.discover import CostModel, QueryPolicy
from labelwise.discover.crowd import SimulatedCrowd

OUT = Path(__file__).resolve().parent / "out"
SHARES = (0.3, 0.7)  # budget-share bin edges
SHARE_NAMES = ("<30%", "30-70%", ">=70%")
KINDS = ("root, no exclude", "root, exclude", "inner", "leaf")
POLICIES = ("crux", "greedy")
DEFAULT_POPULATIONS = "small/skewed/zipf0,small/skewed/zipf1.5"
COMMAND = ("PYTHONPATH=src nice -n 10 python benchmarks/discover_gain_calibration.py --repeats {repeats} "
           "--populations {populations}")


def calibration_run(policy: QueryPolicy, crowd: SimulatedCrowd, budget: float, seed: int) -> np.ndarray:
    """One run until the budget is spent: per query ``(budget share, kind, predicted, realized)``."""
    rng = np.random.default_rng([seed, 1])
    depth = policy.hierarchy.depth()
    leaf = len(policy.hierarchy.attributes)
    rows = []
    while (query := policy.choose(budget - policy.spent, rng)) is not None:
        share = policy.spent / budget
        predicted = float(policy.gain[query.node, query.config])
        kind = (0 if query.exclude.size == 0 else 1) if query.node == 0 else (3 if depth[query.node] == leaf else 2)
        rows.append((share, kind, predicted, policy.record(query, crowd.answer(query, rng))))
    return np.array(rows, dtype=float).reshape(-1, 4)


def calibration(name: str, sizes: str, zipf: float, repeats: int, seed: int) -> dict:
    """Predicted and realized mean new positives per query, per policy, budget-share bin and kind of query."""
    levels, n_items, budget = HIERARCHIES[name]
    hierarchy, positive, popularity = population(levels, n_items, sizes, zipf, seed)
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    cells = []
    for policy in POLICIES:
        rows = np.vstack([calibration_run(QueryPolicy(hierarchy, CostModel(), policy, seed=seed + r), crowd,
                                          budget, seed + r) for r in range(repeats)])
        share_bin = np.searchsorted(SHARES, rows[:, 0], side="right")
        for b, share_name in enumerate(SHARE_NAMES):
            for k, kind in enumerate(KINDS):
                pick = (share_bin == b) & (rows[:, 1] == k)
                if pick.any():
                    cells.append({"policy": policy, "share": share_name, "kind": kind, "queries": int(pick.sum()),
                                  "predicted": float(rows[pick, 2].mean()), "realized": float(rows[pick, 3].mean()),
                                  "realized_se": float(rows[pick, 3].std() / np.sqrt(pick.sum()))})
    return {"hierarchy": name, "node_sizes": sizes, "zipf": zipf, "cells": cells}


def calibration_table(data: dict) -> str:
    rows = ["| population | policy | budget spent | query | queries | predicted new | realized new (s.e.) |",
            "|" + "---|" * 7]
    for p in data["populations"]:
        for c in p["cells"]:
            rows.append(f"| {label(p)} | {c['policy']} | {c['share']} | {c['kind']} | {c['queries']} | "
                        f"{c['predicted']:.2f} | {c['realized']:.2f} ({c['realized_se']:.2f}) |")
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
        f"Reproduce: `{COMMAND.format(repeats=data['repeats'], populations=data['population_names'])}`",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--populations", default=DEFAULT_POPULATIONS,
                        help="comma-separated <hierarchy>/<node sizes>/zipf<exponent> of the discovery benchmark")
    args = parser.parse_args()
    try:
        grid = select_grid(args.populations)
    except ValueError as exc:
        parser.error(str(exc))
    start = time.time()
    data = {"repeats": args.repeats, "seed": args.seed, "population_names": args.populations,
            "populations": [calibration(*population, args.repeats, args.seed) for population in grid]}
    data["elapsed_s"] = time.time() - start
    OUT.mkdir(exist_ok=True)
    (OUT / "discover_gain_calibration.json").write_text(json.dumps(data, indent=1))
    print(summary_section(data))


if __name__ == "__main__":
    main()
