"""ROC AUC from few labels: passive against importance against the default design, on four generated pools.

Each pool is built by :func:`grid.generate_pool` (``prob = sigmoid(k x
calibrated logit)``, separation ``d = 2``, ROC AUC about 0.92):

* ``balanced``: prevalence 0.5, calibrated;
* ``1:100``: prevalence 0.01, calibrated;
* ``1:1000``: prevalence 0.001, calibrated;
* ``over-confident``: prevalence 0.01, ``k = 3`` (probabilities pushed toward 0 and 1).

For each pool and design (``passive``, ``importance``, ``default``: the
design labelwise picks, :func:`labelwise.designs.default_design`),
``labelwise.simulate`` runs the design ``--runs`` times for the measure
``auc`` (its default grid of score bins), budget 2000 labels in batches of
50, and reports at 500/1000/2000 labels the MSE, the coverage of the 95%
interval (against the pool's exact AUC) and the width ratio ``mean width /
(3.92 RMSE)`` (about 1 when the interval is as wide as the error). The bias
the score bins leave (binned AUC of the whole pool minus the exact AUC) is
reported per pool.

Prints the tables and writes ``benchmarks/out/auc_designs.json`` and
``benchmarks/out/auc_designs.png`` (RMSE and coverage against labels).

Usage::

    PYTHONPATH=src nice -n 10 python benchmarks/auc_designs.py [--runs 80] [--pools ...] [--designs ...] [--from-json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from grid import generate_pool, table

import labelwise as lw
from labelwise.measures.auc_variance import PSEUDO_COUNT
from labelwise.simulate import true_risk

OUT = Path(__file__).resolve().parent / "out"
#: name -> (items, prevalence, k): the pools of the module docstring, all with separation 2
POOLS = {"balanced": (50_000, 0.5, 1.0), "1:100": (100_000, 0.01, 1.0), "1:1000": (200_000, 0.001, 1.0),
         "over-confident": (100_000, 0.01, 3.0)}
DESIGNS = ("passive", "importance", "default")
CHECKPOINTS = (500, 1000, 2000)
BATCH_SIZE = 50
COMMAND = "PYTHONPATH=src nice -n 10 python benchmarks/auc_designs.py --runs {runs} --seed {seed}"


def run_pool(name: str, runs: int, seed: int, designs: tuple[str, ...] = DESIGNS) -> dict:
    """The ``designs`` on one pool: truth, bin bias and per-checkpoint summaries."""
    n_items, prevalence, k = POOLS[name]
    pool = generate_pool(n_items=n_items, prevalence=prevalence, k=k, d=2.0, threshold="break-even", seed=seed,
                         name=name)
    measure = lw.make_measure("auc", pool)
    truth = float(lw.true_value(pool, measure)[0])
    out = {"pool": name, "n_items": n_items, "positives": int(pool.labels.sum()), "truth": truth,
           "bin_bias": float(measure.value(true_risk(pool, measure))[0]) - truth, "thresholds": int(measure.L),
           "designs": {}}
    for design in designs:
        result = lw.simulate(pool, measure, design, budget=CHECKPOINTS[-1], batch_size=BATCH_SIZE, repeats=runs,
                             seed=seed, checkpoints=list(CHECKPOINTS))
        rows = result.checkpoint_rows()
        out["designs"][design] = {
            "resolved": result.design_resolved, "seconds_per_run": result.seconds_per_run,
            "checkpoints": [{**r, "width_ratio": r["mean_width"] / (3.92 * np.sqrt(r["mse"]))} for r in rows],
        }
        print(f"{name}: {design} done ({result.seconds_per_run:.2f} s/run)", flush=True)
    return out


def pool_table(entry: dict) -> str:
    """Rows = designs; per checkpoint MSE, coverage and width ratio; seconds per run."""
    head = ["design"] + [f"{c}: MSE / cov / width" for c in CHECKPOINTS] + ["s/run"]
    rows = []
    for design, d in entry["designs"].items():
        label = design if d["resolved"] == design else f"{design} ({d['resolved']})"
        cells = [f"{c['mse']:.2e} / {c['coverage']:.2f} / {c['width_ratio']:.2f}" for c in d["checkpoints"]]
        rows.append([label, *cells, f"{d['seconds_per_run']:.2f}"])
    return table(head, rows)


def summary_section(data: dict) -> str:
    """The markdown section: set-up, one table per pool and the command that reproduces the numbers."""
    meta = data["meta"]
    runs = meta["runs"]
    out = [
        "## ROC AUC: passive, importance and the default design",
        "",
        (f"`auc` (its default grid: {'/'.join(str(p['thresholds']) for p in data['pools'])} score thresholds) "
         f"estimated by each design {runs} times per pool: budget {CHECKPOINTS[-1]} labels in batches of {BATCH_SIZE}; generated "
         "pools with separation 2 (ROC AUC about 0.92), calibrated probabilities unless over-confident "
         "(sigmoid(3 x calibrated logit)). Cells: MSE / coverage of the 95% interval (s.e. about "
         f"{np.sqrt(0.95 * 0.05 / runs):.3f}) / width ratio = mean width / (3.92 RMSE). The truth is the pool's "
         "exact AUC; the bin bias is the binned AUC of the whole pool minus it. Each interval's variance is at "
         "least that under the recalibrated-model prior of `labelwise.measures.auc_variance` "
         f"({PSEUDO_COUNT:g} pseudo-items per class); under `importance` also at least its proposal's variance "
         "with the unlabeled items from that model (`labelwise.measures.auc_importance`)."),
        "",
        f"Reproduce: `{meta['command']}` ({meta['minutes']:.1f} min, seed {meta['seed']}).",
    ]
    for p in data["pools"]:
        out += ["", f"### {p['pool']}", "",
                (f"{p['n_items']:,} items, {p['positives']:,} positives; true AUC {p['truth']:.4f}; bin bias "
                 f"{p['bin_bias']:+.1e}."), "", pool_table(p)]
    return "\n".join(out)


def plot(data: dict, path: Path) -> None:
    """RMSE (log) and coverage against labels, one column per pool."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools = data["pools"]
    fig, axes = plt.subplots(2, len(pools), figsize=(4 * len(pools), 6.5), squeeze=False)
    se = np.sqrt(0.95 * 0.05 / data["meta"]["runs"])
    for j, p in enumerate(pools):
        for design, d in p["designs"].items():
            x = [c["labels"] for c in d["checkpoints"]]
            axes[0, j].plot(x, np.sqrt([c["mse"] for c in d["checkpoints"]]), marker="o", label=design)
            axes[1, j].plot(x, [c["coverage"] for c in d["checkpoints"]], marker="o", label=design)
        axes[0, j].set(title=f"{p['pool']} (AUC {p['truth']:.3f})", yscale="log", ylabel="RMSE of AUC")
        axes[1, j].axhspan(0.95 - 2 * se, 0.95 + 2 * se, color="grey", alpha=0.2)
        axes[1, j].axhline(0.95, color="grey", ls="--")
        axes[1, j].set(xlabel="labels", ylabel="coverage", ylim=(0.0, 1.02))
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=80)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pools", nargs="+", choices=list(POOLS), default=list(POOLS),
                        help="a subset of the pools (written to auc_designs_subset.json)")
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS),
                        help="a subset of the designs (written to auc_designs_subset.json)")
    parser.add_argument("--from-json", action="store_true", help="re-render the saved JSON without running")
    args = parser.parse_args()
    subset = args.pools != list(POOLS) or args.designs != list(DESIGNS)
    path = OUT / ("auc_designs_subset.json" if subset else "auc_designs.json")
    if args.from_json:
        data = json.loads(path.read_text())
    else:
        start = time.perf_counter()
        pools = [run_pool(name, args.runs, args.seed, tuple(args.designs)) for name in args.pools]
        command = COMMAND.format(runs=args.runs, seed=args.seed)
        if subset:
            command += f" --pools {' '.join(args.pools)} --designs {' '.join(args.designs)}"
        meta = {"runs": args.runs, "seed": args.seed, "minutes": (time.perf_counter() - start) / 60,
                "command": command}
        data = {"meta": meta, "pools": pools}
        OUT.mkdir(exist_ok=True)
        path.write_text(json.dumps(data, indent=1))
    print(summary_section(data))
    png = path.with_suffix(".png")
    plot(data, png)
    print(f"\nwrote {path} and {png}")


if __name__ == "__main__":
    main()
