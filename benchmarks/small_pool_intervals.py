"""The default's interval against the opt-in hindsight and conditional ones on a small pool with few positives.

The pool is the one of ``tests/designs/test_poisson.py::test_online_poisson_intervals_cover``: 4,000 items, 2%
positives (about 80), ``make_pool(4000, prevalence=0.02, seed=11)``; F1 in batches of 50 up to 300 labels.  The
opt-in intervals read the unlabeled tail in hindsight, which is tight on large pools; here few positives are left
to miss and the reading can be too short.  Prints a markdown table and writes
``benchmarks/out/small_pool_intervals.json`` and ``.png``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/small_pool_intervals.py --runs 300
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import labelwise as lw

OUT = Path(__file__).resolve().parent / "out"
VARIANCES = ("mixture", "hindsight", "conditional")
CHECKPOINTS = (100, 200, 300)
POOL = {"n_items": 4000, "prevalence": 0.02, "seed": 11}


def run_variance(variance: str, runs: int, seed: int) -> list[dict]:
    """Coverage, mean width and RMSE of ``online-poisson`` with ``variance`` at each checkpoint."""
    pool = lw.make_pool(**POOL)
    result = lw.simulate(pool, lw.make_measure("f1", pool), lw.make_design("online-poisson", variance=variance),
                         budget=CHECKPOINTS[-1], batch_size=50, repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
    return [{"labels": int(row["labels"]), "coverage": float(row["coverage"]),
             "mean_width": float(row["mean_width"]), "rmse": float(np.sqrt(row["mse"]))}
            for row in result.checkpoint_rows()]


def summary_section(data: dict) -> str:
    """The RESULTS.md section: coverage / width ratio per variance and checkpoint."""
    head = "| variance | " + " | ".join(f"{n} labels" for n in CHECKPOINTS) + " |"
    lines = ["## Hindsight-read intervals on a small pool (F1)", "",
             (f"`online-poisson` on `make_pool({POOL['n_items']}, prevalence={POOL['prevalence']}, "
              f"seed={POOL['seed']})` (about 80 positives), {data['runs']} runs, batches of 50. Each cell: coverage "
              "of the 95% interval / mean width over 3.92 RMSE; bold where coverage is below 0.93. `mixture` is the "
              "default; `hindsight` and `conditional` are opt-in."), "",
             head, "|---|" + "---|" * len(CHECKPOINTS)]
    for variance, rows in data["variances"].items():
        cells = []
        for row in rows:
            cell = f"{row['coverage']:.2f} / {row['mean_width'] / (3.92 * row['rmse']):.2f}"
            cells.append(f"**{cell}**" if row["coverage"] < 0.93 else cell)
        lines.append(f"| `{variance}` | " + " | ".join(cells) + " |")
    lines += ["", ("Reproduce: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python "
                   f"benchmarks/small_pool_intervals.py --runs {data['runs']} --seed {data['seed']}`"), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """Coverage per checkpoint, one line per variance."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    for variance, rows in data["variances"].items():
        ax.plot([row["labels"] for row in rows], [row["coverage"] for row in rows], marker="o", label=variance)
    ax.axhline(0.95, color="k", ls="--", lw=0.8)
    ax.set_xlabel("labels")
    ax.set_ylabel("coverage of the 95% interval")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    data = {"runs": args.runs, "seed": args.seed,
            "variances": {variance: run_variance(variance, args.runs, args.seed) for variance in VARIANCES}}
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / "small_pool_intervals.json").write_text(json.dumps(data))
    plot(data, OUT / "small_pool_intervals.png")
    print(f"wrote {OUT / 'small_pool_intervals.json'} and {OUT / 'small_pool_intervals.png'}")


if __name__ == "__main__":
    main()
