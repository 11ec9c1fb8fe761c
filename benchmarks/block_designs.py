"""Label efficiency of the engine designs (block plans, hashed draws) against the in-memory designs.

An engine pool plans on score blocks (1024 prior bins x predictions) and
draws by the shared item hash; the in-memory designs plan per item (or per
CSF stratum) and draw with their generator.  Before the in-memory path runs
the block plans too, this measures what that would cost: on a few pools of
the robustness grid (``benchmarks/robustness.py``), every design that engines
run is simulated both ways with the same budget, batches and checkpoints,
and the table gives the block version's mean squared error over the
in-memory one's (below 1: the block version is better), both coverages, and
the seconds per run.

    PYTHONPATH=src nice -n 10 python benchmarks/block_designs.py --runs 30
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from grid import CALIBRATIONS, SEPARATIONS, generate_pool

import labelwise as lw
from labelwise.engines import EnginePool
from labelwise.engines.simulate import simulate_engine

OUT = Path(__file__).resolve().parent / "out"
DESIGNS = ("passive", "poisson", "importance", "stratified", "online-poisson")
#: (prevalence, calibration, separation) of the pools, from the robustness grid
POOLS = ((0.3, "calibrated", "weak"), (0.05, "over", "weak"), (1e-3, "under", "strong"), (1e-3, "over", "weak"))
N_ITEMS, BUDGET, BATCH, CHECKPOINTS, LEVEL = 50_000, 1000, 50, (250, 500, 1000), 0.95
COMMAND = "PYTHONPATH=src nice -n 10 python benchmarks/block_designs.py --runs {runs}"


def _summary(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, truth: float) -> dict:
    """Per checkpoint: mean squared error and coverage over the runs (undefined estimates count as misses)."""
    err = np.nan_to_num(values - truth, nan=1.0)
    return {"mse": np.mean(err**2, axis=1).tolist(),
            "coverage": np.mean((lower <= truth) & (truth <= upper), axis=1).tolist()}


def run_pool(prevalence: float, calibration: str, separation: str, runs: int, seed: int) -> dict:
    name = f"p{prevalence:g}-{calibration}-{separation}"
    pool = generate_pool(n_items=N_ITEMS, prevalence=prevalence, k=CALIBRATIONS[calibration],
                         d=SEPARATIONS[separation], threshold="break-even", seed=1, name=name)
    measure = lw.make_measure("f1", pool)
    engine = EnginePool.from_pool(pool)
    out = {"pool": name, "designs": {}}
    for design in DESIGNS:
        t0 = time.perf_counter()
        memory = lw.simulate(pool, measure, design, budget=BUDGET, batch_size=BATCH, repeats=runs, seed=seed,
                             checkpoints=list(CHECKPOINTS), level=LEVEL)
        t1 = time.perf_counter()
        blocks = simulate_engine(engine, engine.measure("f1"), lw.make_design(design), budget=BUDGET, repeats=runs,
                                 seed=seed, checkpoints=list(CHECKPOINTS), level=LEVEL, batch_size=BATCH)
        t2 = time.perf_counter()
        truth = float(memory.true_value[0])
        out["designs"][design] = {
            "memory": {**_summary(memory.values[..., 0], memory.lower[..., 0], memory.upper[..., 0], truth),
                       "seconds_per_run": (t1 - t0) / runs},
            "blocks": {**_summary(blocks.values[..., 0], blocks.lower[..., 0], blocks.upper[..., 0], truth),
                       "seconds_per_run": (t2 - t1) / runs}}
        row = out["designs"][design]
        print(f"{name:<24} {design:<15} mse ratio " + " ".join(
            f"{b / m:6.2f}" if m > 0 else "   n/a" for b, m in zip(row["blocks"]["mse"], row["memory"]["mse"]))
            + f"  coverage {row['memory']['coverage'][-1]:.2f} / {row['blocks']['coverage'][-1]:.2f}", flush=True)
    return out


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/block_designs.json``."""
    marks = data["checkpoints"]
    lines = ["## Engine designs on blocks versus the in-memory designs", "",
             (f"F1 on generated pools of the robustness grid ({data['n_items']:,} items, break-even predictions), "
              f"{data['runs']} runs, batches of {data['batch']}. MSE ratio = block plan with hashed draws (what "
              "engine pools run) over the in-memory design; below 1 the block version is better. Coverage of the "
              f"95% interval at {marks[-1]} labels, in memory / on blocks."), "",
             "| pool | design | " + " | ".join(f"MSE ratio at {c}" for c in marks) + " | coverage | s per run |",
             "| --- | --- | " + " | ".join("---:" for _ in marks) + " | --- | --- |"]
    for pool in data["pools"]:
        for design, row in pool["designs"].items():
            m, b = row["memory"], row["blocks"]
            ratios = [f"{bb / mm:.2f}" if mm > 0 else "n/a" for bb, mm in zip(b["mse"], m["mse"])]
            lines.append(f"| {pool['pool']} | {design} | " + " | ".join(ratios)
                         + f" | {m['coverage'][-1]:.2f} / {b['coverage'][-1]:.2f}"
                         + f" | {m['seconds_per_run']:.2f} / {b['seconds_per_run']:.2f} |")
    lines += ["", "Reproduce: `" + COMMAND.format(runs=data["runs"]) + "`", ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """MSE ratio at the last checkpoint, per pool and design (log scale)."""
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(DESIGNS)
    for j, design in enumerate(DESIGNS):
        ratios = [p["designs"][design]["blocks"]["mse"][-1] / max(p["designs"][design]["memory"]["mse"][-1], 1e-300)
                  for p in data["pools"]]
        ax.bar(np.arange(len(data["pools"])) + j * width, ratios, width, label=design)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(data["pools"])) + 0.4 - width / 2, [p["pool"] for p in data["pools"]], fontsize=8)
    ax.set_ylabel(f"MSE blocks / in memory at {data['checkpoints'][-1]} labels")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    data = {"runs": args.runs, "n_items": N_ITEMS, "budget": BUDGET, "batch": BATCH, "checkpoints": list(CHECKPOINTS),
            "pools": [run_pool(*spec, args.runs, args.seed) for spec in POOLS]}
    (OUT / "block_designs.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / "block_designs.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
