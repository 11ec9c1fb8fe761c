"""Planning accuracy: labels planned at 200 labels vs labels realized to reach a half-width.

For every pool, design and run, a session labels 200 items, plans the labels
its design needs for each half-width in ``--eps`` (``Session.labels_needed``),
then labels on in batches of 50 up to ``--cap`` labels, recording the
half-width of the (fixed-sample) interval after every batch.  The realized
count is the first batch whose half-width is at most ``eps``.  A run is
**within** when the realized count lies within +-30% of the plan (200 +
further labels); runs whose plan and realized count both exceed the cap are
left out (``beyond cap``); a run that does not reach ``eps`` by the cap
although its plan lies below it counts as outside.  Target: within for
>= 80% of runs.

The **oracle** column is the best share any constant plan per cell could
reach, the constant chosen with hindsight from the cell's realized counts
(over the same scored runs): what is left below it is the realized counts'
own spread, which no plan made from the cell alone can remove; the gap
between the oracle and the plan's share is the plan's bias.

Pools come from the robustness grid's generator (``grid.generate_pool``):
balanced, 1:100, 1:1000 and an over-confident 1:100 pool (``k = 3``), plus
the real pools of :mod:`pools` when present.

The plan rests on pilot runs drawn at random; ``--pilot-seed`` redraws them
(the sessions keep ``--seed``) to show how much the accuracy owes to one draw.
Several seeds, comma-separated, plan the same sessions with each and write one
JSON per seed (``planning_accuracy.json`` for seed 0,
``planning_accuracy_pilot<seed>.json`` otherwise), the same numbers as one run
per seed.

    PYTHONPATH=src nice -n 10 python benchmarks/planning_accuracy.py --runs 10 --pilot-seed 0,1,2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from anytime_stopping import POOL_SPECS
from grid import generate_pool
from pools import DATASETS, pool_paths

import labelwise as lw
from labelwise.oracle import TruthOracle
from labelwise.planning import plan_session

OUT = Path(__file__).resolve().parent / "out"
DESIGNS = ("default", "importance", "passive")
PLAN_AT = 200
BATCH = 50
TOLERANCE = 0.3


def one_run(pool: lw.Pool, design: str, eps: list[float], cap: int, seed: int, pilot_seeds: list[int]) -> list[dict]:
    """Plans at 200 labels (pilot runs drawn with each of ``pilot_seeds``; one run per seed, sharing the
    session) and the half-width after every batch up to ``cap`` labels."""
    measure = lw.make_measure("f1", pool)
    session = lw.Session(pool, measure, design, seed=seed, budget=cap)
    session.run(TruthOracle(pool), PLAN_AT, BATCH)
    plans = [[plan_session(session, e, pilot_seed=s) for e in eps] for s in pilot_seeds]
    half_width = lambda est: float(np.max(np.diff(est.interval(), axis=0)) / 2)
    half = [half_width(session.estimate())]  # at 200 labels, then after every further batch
    session.run(TruthOracle(pool), cap, BATCH, checkpoints=range(PLAN_AT + BATCH, cap + 1, BATCH),
                on_checkpoint=lambda n, est: half.append(half_width(est)))
    return [{"plans": [PLAN_AT + p.labels_needed for p in seed_plans], "low": [PLAN_AT + p.low for p in seed_plans],
             "high": [PLAN_AT + p.high for p in seed_plans], "half_widths": half} for seed_plans in plans]


def realized(half_widths: list[float], eps: float) -> int | None:
    """Labels at the first batch (from 200 on) whose half-width is at most ``eps``; ``None`` if none."""
    narrow = np.asarray(half_widths) <= eps
    return PLAN_AT + BATCH * int(np.argmax(narrow)) if narrow.any() else None


def oracle_within(reals: np.ndarray, scored: int) -> float:
    """Largest share of ``scored`` runs whose realized count (``reals``: those that reached eps) lies within
    +-30% of one constant ``c``; the best ``c`` puts some count at the upper end ``1.3 c`` (the share only
    grows as ``c`` falls until a count leaves at the top)."""
    if not reals.size:
        return 0.0
    c = reals / (1 + TOLERANCE)
    inside = (reals[None, :] >= (1 - TOLERANCE) * c[:, None] - 1e-9) & (reals[None, :] <= reals[:, None] + 1e-9)
    return float(inside.sum(axis=1).max()) / scored


def score(runs: list[dict], eps: list[float], cap: int) -> list[dict]:
    """Per half-width: fraction of runs within +-30% of the plan and within the plan's range, the oracle's
    share (:func:`oracle_within`), median plan and realized count, and where the runs' median half-width
    path crosses eps (above the median realized count by the first-passage effect: a run stops at the first
    batch its noisy half-width dips below eps)."""
    median_path = np.median([run["half_widths"] for run in runs], axis=0)  # the trend, without first passages
    rows = []
    for k, e in enumerate(eps):
        within, in_range, beyond, plans, reals, reached = [], [], 0, [], [], []
        for run in runs:
            plan, real = run["plans"][k], realized(run["half_widths"], e)
            if real is None and plan > cap:
                beyond += 1
                continue
            plans.append(plan)
            reals.append(real if real is not None else cap)
            if real is not None:
                reached.append(real)
            within.append(real is not None and abs(real - plan) <= TOLERANCE * plan)
            # the crossing lies in the batch ending at ``real``: in range when that batch meets [low, high]
            in_range.append(real is not None and run["low"][k] <= real and run["high"][k] > real - BATCH)
        rows.append({"eps": e, "within": float(np.mean(within)) if within else None, "scored": len(within),
                     "in_range": float(np.mean(in_range)) if in_range else None,
                     "oracle": oracle_within(np.array(reached, float), len(within)) if within else None,
                     "beyond_cap": beyond, "median_plan": float(np.median(plans)) if plans else None,
                     "median_realized": float(np.median(reals)) if reals else None,
                     "median_path_crossing": realized(median_path, e)})
    return rows


def summary_section(data: dict) -> str:
    """Markdown section rendered from the JSON this script writes."""
    a = data["args"]
    lines = ["## Planning accuracy", "",
             (f"F1; plan made at {PLAN_AT} labels; realized = first batch of {BATCH} whose interval half-width is "
              f"<= eps (cap {a['cap']} labels); {a['runs']} runs per cell. Target: within +-30% for >= 80% of runs."),
             "", ("| pool | design | eps | within +-30% | oracle | in range | runs scored | beyond cap | median plan | "
                  "median realized | median path crossing |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for cell in data["cells"]:
        for r in cell["rows"]:
            fmt = lambda v, f="{:.0f}": "-" if v is None else f.format(v)
            lines.append(f"| {cell['pool']} | {cell['design']} | {r['eps']} | {fmt(r['within'], '{:.2f}')} | "
                         f"{fmt(r.get('oracle'), '{:.2f}')} | "
                         f"{fmt(r.get('in_range'), '{:.2f}')} | "
                         f"{r['scored']} | {r['beyond_cap']} | {fmt(r['median_plan'])} | {fmt(r['median_realized'])} | "
                         f"{fmt(r.get('median_path_crossing'))} |")
    in_range = f", in range {data['overall_in_range']:.2f}" if "overall_in_range" in data else ""
    oracle = (f"; the best constant plan per cell (oracle, chosen with hindsight) reaches {data['overall_oracle']:.2f}"
              if "overall_oracle" in data else "")
    same_run = lambda d: {k: v for k, v in d["args"].items() if k != "pilot_seed"} == {
        k: v for k, v in a.items() if k != "pilot_seed"}  # the same command but for the pilot seed
    other_seeds = [d for d in (json.loads(f.read_text()) for f in sorted(OUT.glob("planning_accuracy_pilot*.json")))
                   if same_run(d) and d["args"].get("pilot_seed") != a.get("pilot_seed")]
    seeds = ",".join(str(s) for s in sorted({a.get("pilot_seed", 0)} | {d["args"]["pilot_seed"] for d in other_seeds}))
    others = "".join(f" With pilot seed {d['args']['pilot_seed']} (same command, `--pilot-seed "
                     f"{d['args']['pilot_seed']}`): {d['overall_within']:.3f} of {d['overall_scored']}, oracle "
                     f"{d.get('overall_oracle', float('nan')):.2f}." for d in other_seeds)
    lines += ["", (f"Overall within +-30%: {data['overall_within']:.3f} of {data['overall_scored']} scored runs"
                   f"{in_range}{oracle}.{others}"), "",
              ("Reproduce (one JSON per pilot seed): `PYTHONPATH=src nice -n 10 python benchmarks/planning_accuracy.py "
               f"--runs {a['runs']} --cap {a['cap']} --n {a['n']} --eps {a['eps']} --pilot-seed {seeds}"
               + (f" --pools {a['pools']}" if a.get("pools") else "") + "`"),
              "", ("*in range*: the batch of the realized labels meets the plan's range (low, high), where about two "
                   "runs in three should land. *oracle*: the largest share any one constant plan per cell reaches "
                   "(chosen with hindsight); below it is the realized counts' own spread, above the plan's share the "
                   "plan's bias. *median path crossing*: where the runs' median half-width falls to eps; the median "
                   "realized count lies before it by the first-passage effect."), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    for cell in data["cells"]:
        pts = [(r["median_plan"], r["median_realized"]) for r in cell["rows"] if r["median_plan"] is not None]
        if pts:
            ax.scatter(*zip(*pts), label=f"{cell['pool']} / {cell['design']}", s=15)
    top = data["args"]["cap"]
    ax.plot([0, top], [0, top], "k-", lw=1)
    ax.fill_between([0, top], [0, 0.7 * top], [0, 1.3 * top], color="grey", alpha=0.2)
    ax.set_xlabel("planned labels (median)")
    ax.set_ylabel("realized labels (median)")
    ax.legend(fontsize=5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--eps", type=str, default="0.05,0.02,0.01")
    ap.add_argument("--cap", type=int, default=4000)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pilot-seed", type=str, default="0",
                    help="seeds of the plan's pilot runs, comma-separated: the same sessions (they keep --seed) are "
                         "planned with each, one JSON per seed")
    ap.add_argument("--pools", type=str, default=None, help="comma-separated pool names (default: all)")
    ap.add_argument("--designs", type=str, default=",".join(DESIGNS), help="comma-separated designs")
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    args = ap.parse_args()
    eps = [float(e) for e in args.eps.split(",")]
    pools = [generate_pool(n_items=args.n, prevalence=p, k=k, d=2.0, threshold="break-even", seed=args.seed, name=name)
             for name, p, k in POOL_SPECS]
    pools += [lw.Pool.from_file(path) for path in pool_paths(args.datasets)]
    if args.pools:
        pools = [pool for pool in pools if pool.name in args.pools.split(",")]
    pilot_seeds = [int(s) for s in args.pilot_seed.split(",")]
    cells = {s: [] for s in pilot_seeds}
    for pool in pools:
        for design in args.designs.split(","):
            runs = [one_run(pool, design, eps, min(args.cap, pool.n_items), args.seed + r, pilot_seeds)
                    for r in range(args.runs)]
            for k, s in enumerate(pilot_seeds):
                cells[s].append({"pool": pool.name, "design": design,
                                 "rows": score([run[k] for run in runs], eps, args.cap)})
                print(json.dumps({"pilot_seed": s} | cells[s][-1]), flush=True)
    for s in pilot_seeds:
        write(cells[s], vars(args) | {"datasets": str(args.datasets), "pilot_seed": s})


def write(cells: list[dict], args: dict) -> None:
    """The JSON and plot of one pilot seed (``planning_accuracy_pilot<seed>``, seed 0 without the suffix), and its
    section on stdout."""
    scored = [r for c in cells for r in c["rows"] if r["scored"]]
    total = sum(r["scored"] for r in scored)
    overall = lambda key: sum(r[key] * r["scored"] for r in scored) / max(total, 1)
    data = {"args": args, "cells": cells, "overall_scored": total, "overall_within": overall("within"),
            "overall_in_range": overall("in_range"), "overall_oracle": overall("oracle")}
    OUT.mkdir(exist_ok=True)
    name = "planning_accuracy" + (f"_pilot{args['pilot_seed']}" if args["pilot_seed"] else "")
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / f"{name}.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
