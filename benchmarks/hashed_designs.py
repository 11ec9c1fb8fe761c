"""The in-memory designs drawing by the shared item hash against their generator draws: same error, same speed.

``passive`` and ``stratified`` draw, in memory, the items of smallest
``u = H(item_id, seed)`` (of the pool, of each stratum): a simple random
sample without replacement, the one an engine pool draws for the same seed.
Before, ``passive`` drew uniformly with replacement and ``stratified``
without replacement from NumPy's generator.  This runs ``labelwise.simulate``
for both designs on the pools of ``benchmarks/block_designs.py`` plus a
balanced and an over-confident one and records, per checkpoint, the mean
squared error, the coverage and mean width of the 95% interval, and the
seconds per run.  Run it once on the code before the change (``--tag
before``), then on the code after it with ``--before`` naming that JSON: the
table gives the MSE ratio after / before (1 within noise: the draws have
the same distribution, or a better one without replacement) and both speeds.

    PYTHONPATH=<old src> nice -n 10 python benchmarks/hashed_designs.py --runs 500 --tag before
    PYTHONPATH=src nice -n 10 python benchmarks/hashed_designs.py --runs 500 --before benchmarks/out/hashed_designs_before.json
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

OUT = Path(__file__).resolve().parent / "out"
DESIGNS = ("passive", "stratified")
#: (prevalence, calibration, separation): the pools of block_designs.py, a balanced and an over-confident one
POOLS = ((0.3, "calibrated", "weak"), (0.05, "over", "weak"), (1e-3, "under", "strong"), (1e-3, "over", "weak"),
         (0.5, "calibrated", "strong"), (0.05, "over", "strong"))
N_ITEMS, BUDGET, BATCH, CHECKPOINTS, LEVEL = 50_000, 1000, 50, (250, 500, 1000), 0.95
COMMAND = ("PYTHONPATH=src nice -n 10 python benchmarks/hashed_designs.py --runs {runs} "
           "--before benchmarks/out/hashed_designs_before.json")


def run_pool(prevalence: float, calibration: str, separation: str, runs: int, seed: int) -> dict:
    """Every design of :data:`DESIGNS` on one pool: MSE, coverage, width per checkpoint and seconds per run."""
    name = f"p{prevalence:g}-{calibration}-{separation}"
    pool = generate_pool(n_items=N_ITEMS, prevalence=prevalence, k=CALIBRATIONS[calibration],
                         d=SEPARATIONS[separation], threshold="break-even", seed=1, name=name)
    measure = lw.make_measure("f1", pool)
    out = {"pool": name, "designs": {}}
    for design in DESIGNS:
        t0 = time.perf_counter()
        r = lw.simulate(pool, measure, design, budget=BUDGET, batch_size=BATCH, repeats=runs, seed=seed,
                        checkpoints=list(CHECKPOINTS), level=LEVEL)
        seconds = (time.perf_counter() - t0) / runs
        truth = float(r.true_value[0])
        values, lower, upper = r.values[..., 0], r.lower[..., 0], r.upper[..., 0]
        out["designs"][design] = {
            "mse": np.mean(np.nan_to_num(values - truth, nan=1.0) ** 2, axis=1).tolist(),
            "coverage": np.mean((lower <= truth) & (truth <= upper), axis=1).tolist(),
            "width": np.nanmean(upper - lower, axis=1).tolist(), "seconds_per_run": seconds}
        print(f"{name:<26} {design:<11} mse " + " ".join(f"{m:.2e}" for m in out["designs"][design]["mse"])
              + f"  coverage {out['designs'][design]['coverage'][-1]:.3f}  {seconds:.3f} s/run", flush=True)
    return out


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/hashed_designs.json``."""
    marks, after, before = data["checkpoints"], data["after"], data["before"]
    lines = ["## In-memory passive and stratified drawn by the shared item hash", "",
             (f"F1 on generated pools ({data['n_items']:,} items, break-even predictions), {data['runs']} runs each "
              f"before and after, batches of {data['batch']}. The draws are now the items of smallest "
              "u = H(item_id, seed), the sample an engine pool draws for the same seed; before, passive drew "
              "with replacement and stratified from NumPy's generator. MSE ratio = after / before (the standard "
              f"error of a ratio of two {data['runs']}-run MSEs is about {np.sqrt(4 / data['runs']):.2f}); "
              f"coverage of the 95% interval and seconds per run, before / after, at {marks[-1]} labels."), "",
             "| pool | design | " + " | ".join(f"MSE ratio at {c}" for c in marks) + " | coverage | s per run |",
             "| --- | --- | " + " | ".join("---:" for _ in marks) + " | --- | --- |"]
    for new, old in zip(after, before, strict=True):
        for design, a in new["designs"].items():
            b = old["designs"][design]
            ratios = [f"{x / y:.2f}" if y > 0 else "n/a" for x, y in zip(a["mse"], b["mse"])]
            lines.append(f"| {new['pool']} | {design} | " + " | ".join(ratios)
                         + f" | {b['coverage'][-1]:.3f} / {a['coverage'][-1]:.3f}"
                         + f" | {b['seconds_per_run']:.3f} / {a['seconds_per_run']:.3f} |")
    lines += ["", "Reproduce (the first on the code before the change):", "",
              f"    PYTHONPATH=<old src> nice -n 10 python benchmarks/hashed_designs.py --runs {data['runs']} --tag before",
              "    " + COMMAND.format(runs=data["runs"]), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """MSE ratio after / before at every checkpoint, per pool and design."""
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = []
    for j, (new, old) in enumerate(zip(data["after"], data["before"], strict=True)):
        for k, design in enumerate(DESIGNS):
            ratio = np.array(new["designs"][design]["mse"]) / np.maximum(old["designs"][design]["mse"], 1e-300)
            ax.plot(np.full(ratio.size, 2 * j + k), ratio, "o", color=f"C{k}", label=design if j == 0 else None)
            labels.append(f"{new['pool']}\n{design}")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(np.arange(len(labels)), labels, fontsize=6, rotation=60)
    ax.set_ylabel("MSE after / before")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", help="write out/hashed_designs_<tag>.json only (the run on the code before the change)")
    ap.add_argument("--before", type=Path, help="the JSON of the run on the code before the change")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    pools = [run_pool(*spec, args.runs, args.seed) for spec in POOLS]
    if args.tag:
        (OUT / f"hashed_designs_{args.tag}.json").write_text(json.dumps({"runs": args.runs, "pools": pools}, indent=1))
        return
    before = json.loads(args.before.read_text())
    data = {"runs": args.runs, "n_items": N_ITEMS, "budget": BUDGET, "batch": BATCH, "checkpoints": list(CHECKPOINTS),
            "after": pools, "before": before["pools"]}
    (OUT / "hashed_designs.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / "hashed_designs.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
