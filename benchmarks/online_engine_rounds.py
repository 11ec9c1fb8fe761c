"""``online-poisson`` in memory and on an engine pool: MSE, coverage and width of F1 on the same pools.

``memory`` is the in-memory design (:class:`labelwise.designs.OnlinePoissonDesign`);
``engine`` is its engine form (:mod:`labelwise.engines.online`) run on the
same pool through the NumPy source, which draws what DuckDB and Spark draw
for the same seed.  The same script runs on two code versions
(``PYTHONPATH`` picks the source tree) and ``--tag`` names its output, so the
engine form before and after a change is compared with the in-memory design:

    PYTHONPATH=<main checkout>/src nice -n 10 python benchmarks/online_engine_rounds.py --variants engine --tag before
    PYTHONPATH=src nice -n 10 python benchmarks/online_engine_rounds.py --tag after
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from design_variants import spec_of
from pools import DATASETS

import labelwise as lw
from labelwise.designs import make_design
from labelwise.engines import EnginePool
from labelwise.engines.simulate import simulate_engine

OUT = Path(__file__).resolve().parent / "out"
POOLS = ("abt-buy", "dblp-acm", "0.001-x3-weak", "0.001-x0.5-strong")
CHECKPOINTS = (500, 1000, 2000)
BUDGET, BATCH_SIZE = 2000, 50
COMMANDS = (("PYTHONPATH=<main checkout>/src nice -n 10 python benchmarks/online_engine_rounds.py --runs {runs} "
             "--variants engine --tag before --datasets <datasets>"),
            ("PYTHONPATH=src nice -n 10 python benchmarks/online_engine_rounds.py --runs {runs} --tag after "
             "--datasets <datasets>"))


def run(task: tuple[str, str, int, Path]) -> dict:
    """One variant on one pool: MSE (with its standard error), coverage and width ratio at every checkpoint."""
    name, variant, runs, datasets = task
    pool = spec_of(name, datasets).load()
    start = time.process_time()
    if variant == "memory":
        sim = lw.simulate(pool, lw.make_measure("f1", pool), "online-poisson", budget=BUDGET, batch_size=BATCH_SIZE,
                          repeats=runs, seed=0, checkpoints=list(CHECKPOINTS))
    else:
        engine = EnginePool.from_pool(pool)
        sim = simulate_engine(engine, engine.measure("f1"), make_design("online-poisson"), budget=BUDGET,
                              repeats=runs, seed=0, checkpoints=list(CHECKPOINTS), batch_size=BATCH_SIZE)
    cpu = (time.process_time() - start) / runs
    truth = float(np.atleast_1d(sim.true_value)[0])
    sq = (sim.values[..., 0] - truth) ** 2
    lower, upper = sim.lower[..., 0], sim.upper[..., 0]
    mse = sq.mean(axis=1)
    row = {"pool": name, "variant": variant, "truth": truth, "cpu_per_run": cpu, "mse": mse.tolist(),
           "mse_se": (sq.std(axis=1) / np.sqrt(runs)).tolist(),
           "coverage": ((lower <= truth) & (truth <= upper)).mean(axis=1).tolist(),
           "width_ratio": ((upper - lower).mean(axis=1) / (3.92 * np.sqrt(mse))).tolist()}
    print(f"{name:<20} {variant:<7} MSE@2000 {mse[-1]:.2e} +- {row['mse_se'][-1]:.1e} {cpu:.2f} CPU s/run", flush=True)
    return row


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/online_engine_rounds.json``
    (``{"before": ..., "after": ...}``, the runs of both tags)."""
    after, before = data["after"], data.get("before")
    runs = after["runs"]
    rows = {(r["pool"], f"{r['variant']} ({tag})"): r for tag, part in (("after", after), ("before", before))
            if part for r in part["rows"]}
    lines = ["## online-poisson in memory and on engine pools", "",
             (f"F1, {runs} runs per cell, batches of {BATCH_SIZE}, seeds 0..{runs - 1}. `memory`: the in-memory "
              "design; `engine`: its engine form on the same pool (the NumPy source, which draws what DuckDB and "
              "Spark draw). `before`: the engine form of the main checkout (each round's Poisson sample planned "
              "for the batch + 3 sqrt(batch) + 1 items of which the first ones by u/b are handed out, model leaves "
              "from prior bins); `after`: exact systematic rounds and the in-memory design's score strata. MSE with "
              "its standard error; coverage of the 95% interval (3 s.e.: +-"
              f"{3 * np.sqrt(0.95 * 0.05 / runs):.3f}); width ratio = mean width / (3.92 RMSE); CPU seconds per "
              "run."), "",
             "| pool | variant | " + " | ".join(f"MSE@{c}" for c in CHECKPOINTS) + " | coverage@2000 | width@2000 | s/run |",
             "| --- | --- | " + " | ".join("---:" for _ in CHECKPOINTS) + " | ---: | ---: | ---: |"]
    for pool in after["pools"]:
        for label in ("memory (after)", "engine (before)", "engine (after)"):
            r = rows.get((pool, label))
            if r is None:
                continue
            mses = " | ".join(f"{m:.2e} +- {s:.1e}" for m, s in zip(r["mse"], r["mse_se"], strict=True))
            lines.append(f"| {pool} | {label.replace(' (after)', '') if label.startswith('memory') else label} | "
                         f"{mses} | {r['coverage'][-1]:.2f} | {r['width_ratio'][-1]:.2f} | {r['cpu_per_run']:.2f} |")
    lines += ["", "Reproduce:", "", *("    " + c.format(runs=runs) for c in COMMANDS), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """MSE at the last checkpoint over the in-memory design's, per pool, for the engine form before and after."""
    memory = {r["pool"]: r for r in data["after"]["rows"] if r["variant"] == "memory"}
    fig, ax = plt.subplots(figsize=(7, 3.5))
    pools = data["after"]["pools"]
    x = np.arange(len(pools))
    for shift, (tag, marker) in zip((-0.15, 0.15), (("before", "o"), ("after", "s")), strict=True):
        part = data.get(tag)
        if not part:
            continue
        engine = {r["pool"]: r for r in part["rows"] if r["variant"] == "engine"}
        ratio = [engine[p]["mse"][-1] / memory[p]["mse"][-1] if p in engine else np.nan for p in pools]
        ax.plot(x + shift, ratio, marker, label=f"engine ({tag})")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_yscale("log")
    ax.set_ylabel(f"MSE at {CHECKPOINTS[-1]} labels / in-memory")
    ax.set_xticks(x, pools, fontsize=7, rotation=20)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--pools", default=",".join(POOLS))
    ap.add_argument("--variants", default="memory,engine")
    ap.add_argument("--tag", choices=("before", "after"), required=True)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    args = ap.parse_args()
    pools = [p.strip() for p in args.pools.split(",") if p.strip()]
    tasks = [(p, v.strip(), args.runs, args.datasets) for p in pools for v in args.variants.split(",")]
    with ProcessPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(run, tasks))
    OUT.mkdir(exist_ok=True)
    part = {"runs": args.runs, "pools": pools, "rows": rows}
    (OUT / f"online_engine_rounds_{args.tag}.json").write_text(json.dumps(part, indent=1))
    loaded = {tag: json.loads(p.read_text()) for tag in ("before", "after")
              if (p := OUT / f"online_engine_rounds_{tag}.json").exists()}
    if "after" in loaded:
        (OUT / "online_engine_rounds.json").write_text(json.dumps(loaded))  # what sections.py renders
        plot(loaded, OUT / "online_engine_rounds.png")
        print(summary_section(loaded))


if __name__ == "__main__":
    main()
