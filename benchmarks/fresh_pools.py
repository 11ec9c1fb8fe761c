"""A pool of the robustness grid among fresh pools of its cell: how lucky is its tail, and how do the intervals fare?

The robustness grid (:mod:`robustness`) generates one pool per cell, pool
seed 1.  Its labels follow the calibrated probabilities ``p_true``
(:func:`grid.generate_pool`), so the positives left among the items the
scores call near-certain negatives are a draw: a pool whose tail holds more
positives than ``p_true`` expects is a lucky draw, not a pool the labels can
tell apart (positives that rare are seldom labeled; ``benchmarks/tail_plant.py``).
An interval must cover its own pool's draw, and the grid checks it on one
draw per cell; the default's interval covers the grid's strong 1:1000 pool
through the mixture's hit case (:func:`labelwise.estimators.mixture_variance`),
whose variance comes from the model and the design, not from the pool's own
tail, which the labels do not see: every pool of the cell gets it, and its
width ratio grows as the pool's tail empties.

This script regenerates each ``--cells`` pool with the pool seeds
``--pool-seeds`` and, per pool:

* **the tail's luck**, from the pool alone: among the items whose calibrated
  probability is below ``--tail-prob``, the positives and the sum of
  ``p_true`` (the positives a pool of that cell holds there on average), and
  ``P(>=)``, the probability of at least that many (a sum of independent
  Bernoulli labels of probability ``p_true``, taken Poisson);
* **each design's interval** over ``--runs`` runs of ``labelwise.simulate``
  (F1, batches of 50): coverage of the 95% interval and width ratio (mean
  width / (3.92 RMSE)) at 500/1000/2000 labels.

The table gives, per cell and design, the share of pools whose coverage is
below 0.93 (the grid's target), the share whose width ratio is above 2 (its
target), among them the pools whose tail holds no more positives than
``p_true`` expects (``P(>=) >= 1/2``, *quiet*), the coverage and width ratio
pooled over every pool's runs, the same for the pools whose tail is in the upper 10% of
its count (``P(>=) < 0.1``), and the grid's own pool (seed 1): its coverage,
width ratio and ``P(>=)``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/fresh_pools.py \\
        --cells 0.001-x1-strong,0.001-x3-strong,1e-05-x1-strong --pool-seeds 1-40 --runs 40 --jobs 2
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from design_variants import CHECKPOINTS, run, spec_of, summary
from grid import (
    BATCH_SIZE,
    COVERAGE_TARGET,
    REFERENCE,
    WIDTH_TARGET,
    PoolSpec,
    parse_designs,
)
from pools import DATASETS
from scipy.special import expit
from scipy.stats import poisson
from sections import store

#: ``P(>=)`` below which a pool's tail counts as lucky in the table.
LUCKY = 0.1
#: ``P(>=)`` from which a pool's tail counts as quiet: no more positives than ``p_true`` expects.
QUIET = 0.5


def tail_luck(spec: PoolSpec, tail_prob: float) -> dict:
    """The positives among the items whose calibrated probability is below ``tail_prob``, their expected number
    (the sum of ``p_true``) and the Poisson probability of at least as many."""
    pool = spec.load()
    p_true = expit(pool.outputs().scores[:, 0] / spec.params["k"])  # the scores are k x the calibrated logit
    tail = p_true < tail_prob
    count, expected = int(np.asarray(pool.labels)[tail].sum()), float(p_true[tail].sum())
    return {"count": count, "expected": expected, "at_least": float(poisson.sf(count - 1, expected))}


def one_pool(task: tuple) -> dict:
    """Every design on one fresh pool, and its tail's luck."""
    cell, pool_seed, designs, runs, seed, tail_prob = task
    spec = spec_of(cell, DATASETS, pool_seed)
    entries = [run((spec, *design, "f1", runs, seed)) for design in designs]
    return {"cell": cell, "pool_seed": pool_seed, "luck": tail_luck(spec, tail_prob),
            "designs": {e["design"]: e for e in entries}}


def pooled(entries: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and width ratio per checkpoint over the runs of several pools: each run's width over 3.92 times the
    root mean square error of all of them."""
    err = np.concatenate([np.asarray(e["values"]) - e["truth"] for e in entries], axis=1)
    lo = np.concatenate([np.asarray(e["lower"]) - e["truth"] for e in entries], axis=1)
    hi = np.concatenate([np.asarray(e["upper"]) - e["truth"] for e in entries], axis=1)
    rmse = np.sqrt((err**2).mean(axis=1))
    return ((lo <= 0) & (0 <= hi)).mean(axis=1), (hi - lo).mean(axis=1) / (3.92 * rmse)


def rows(data: dict) -> list[dict]:
    """Per cell and design: the share of pools below the coverage target, pooled coverage and width, the same over
    the lucky pools, and the grid's pool (seed 1)."""
    out = []
    for cell in dict.fromkeys(p["cell"] for p in data["pools"]):
        pools = [p for p in data["pools"] if p["cell"] == cell]
        lucky = [p for p in pools if p["luck"]["at_least"] < LUCKY]
        grid = [p for p in pools if p["pool_seed"] == 1]
        for design in pools[0]["designs"]:
            each = [summary(p["designs"][design]) for p in pools]
            covers, widths = np.array([s["cover"] for s in each]), np.array([s["width"] for s in each])
            quiet = np.array([p["luck"]["at_least"] >= QUIET for p in pools])
            row = {"cell": cell, "design": design, "pools": len(pools), "lucky": len(lucky),
                   "below": (covers < COVERAGE_TARGET).mean(axis=0).tolist(),
                   "wide": (widths > WIDTH_TARGET).mean(axis=0).tolist(),
                   "quiet": int(quiet.sum()), "quiet_wide": (widths[quiet] > WIDTH_TARGET).mean(axis=0).tolist()
                   if quiet.any() else None,
                   "all": [v.tolist() for v in pooled([p["designs"][design] for p in pools])],
                   "lucky_pooled": [v.tolist() for v in pooled([p["designs"][design] for p in lucky])] if lucky
                   else None}
            if grid:
                s = summary(grid[0]["designs"][design])
                row["grid"] = {"cover": s["cover"].tolist(), "width": s["width"].tolist(),
                               **grid[0]["luck"]}
            out.append(row)
    return out


def summary_section(data: dict) -> str:
    """Markdown: the command, then per cell and design the pools below target, pooled coverage / width, the lucky
    pools' and the grid pool's."""
    a = data["args"]
    marks = "/".join(str(n) for n in CHECKPOINTS)
    lines = [
        "## Fresh pools of a grid cell: the grid's pool among them", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/fresh_pools.py --cells "
         f"{a['cells']} --pool-seeds {a['pool_seeds']} --designs \"{a['designs']}\" --runs {a['runs']} --seed "
         f"{a['seed']} --tail-prob {a['tail_prob']:g}`: F1, batches of {BATCH_SIZE}; each cell generated with every "
         f"pool seed (the grid's pool is seed 1). *tail*: positives among the items whose calibrated probability is "
         f"below {a['tail_prob']:g}, over the sum of that probability (what a pool of the cell holds there on "
         f"average); *P(>=)*: the probability of at least as many, taken Poisson. *pools < {COVERAGE_TARGET}*: the "
         f"share of pools whose coverage is below the grid's target at {marks} labels, *pools > {WIDTH_TARGET:g} wide* "
         f"whose width ratio is above its target (checked from 1000 labels), *quiet pools* the same among the pools with "
         f"P(>=) >= {QUIET:g} (their number first); *coverage ; width*: over every "
         f"pool's runs (width: mean width / (3.92 RMSE)); *lucky*: the same over the pools with P(>=) < {LUCKY:g}; "
         f"*grid pool*: seed 1's coverage ; width at {marks} labels."), "",
        (f"| cell | design | pools | pools < {COVERAGE_TARGET} | pools > {WIDTH_TARGET:g} wide | quiet pools > {WIDTH_TARGET:g} wide | coverage ; width | lucky pools: coverage ; width | "
         "grid pool: tail, P(>=) | grid pool: coverage ; width |"),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows(data):
        below = " / ".join(f"{v:.2f}" for v in row["below"])
        lucky = f"{row['lucky']}: {fmt_pair(row['lucky_pooled'])}" if row["lucky_pooled"] else "none"
        grid = row.get("grid")
        tail = f"{grid['count']} / {grid['expected']:.2f}, {grid['at_least']:.2g}" if grid else "-"
        grid_cw = fmt_pair((grid["cover"], grid["width"])) if grid else "-"
        wide = " / ".join(f"{v:.2f}" for v in row["wide"])
        quiet = (f"{row['quiet']}: " + " / ".join(f"{v:.2f}" for v in row["quiet_wide"])) if row["quiet_wide"] \
            else "none"
        lines.append(f"| {row['cell']} | `{row['design']}` | {row['pools']} | {below} | {wide} | {quiet} | {fmt_pair(row['all'])} | "
                     f"{lucky} | {tail} | {grid_cw} |")
    return "\n".join(lines) + "\n"


def fmt_pair(cover_width) -> str:
    """Coverage and width ratio per checkpoint: ``c / c / c ; w / w / w``."""
    return " ; ".join(" / ".join(f"{v:.2f}" for v in values) for values in cover_width)


def seed_range(text: str) -> list[int]:
    """``"1-40"`` or ``"1,5,9"`` as a list of pool seeds."""
    if "-" in text:
        first, last = (int(v) for v in text.split("-"))
        return list(range(first, last + 1))
    return [int(v) for v in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default="0.001-x1-strong,0.001-x3-strong,1e-05-x1-strong",
                    help="comma-separated generated pools of the grid (<prevalence>-x<k>-<separation>)")
    ap.add_argument("--pool-seeds", default="1-40", help="pool seeds, a range 1-40 or a list 1,5,9")
    ap.add_argument("--designs", default="default", help="';'-separated name:key=value,... variants")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0, help="simulation seed")
    ap.add_argument("--tail-prob", type=float, default=3e-3, help="the tail: calibrated probability below this")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    # passive only when asked for (parse_designs adds it as the reference of MSE ratios, not needed here)
    designs = [d for d in parse_designs(args.designs) if d[0] != REFERENCE or REFERENCE in args.designs.split(";")]
    tasks = [(cell.strip(), s, designs, args.runs, args.seed, args.tail_prob)
             for cell in args.cells.split(",") if cell.strip() for s in seed_range(args.pool_seeds)]
    with ProcessPoolExecutor(args.jobs) as ex:
        pools = list(ex.map(one_pool, tasks))
    store("fresh_pools", {"args": vars(args), "pools": pools})


if __name__ == "__main__":
    main()
