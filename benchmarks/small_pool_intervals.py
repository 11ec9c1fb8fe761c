"""``online-poisson``'s intervals on a small pool with few positives: the mixture against the hindsight-read ones.

The pool is the one of ``tests/designs/test_poisson.py::test_online_poisson_intervals_cover``: 4,000 items, 2%
positives (about 80), ``make_pool(4000, prevalence=0.02, seed=11)``; F1 in batches of 50 up to 300 labels
(``--n-items`` for a larger pool of the same kind).  The hindsight-read intervals (``conditional``: the default on
score blocks, ``variance="auto"``) read the unlabeled tail through the oracle model, which is tight on large pools;
here few positives are left to miss, and the recalibration fitted on a hundred labels decides how many the model
allows.  Prints a markdown table and writes ``benchmarks/out/small_pool_intervals[_<n>].json`` and ``.png``.

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


def run_variance(variance: str, runs: int, seed: int, n_items: int) -> list[dict]:
    """Coverage, mean width and RMSE of ``online-poisson`` with ``variance`` at each checkpoint."""
    pool = lw.make_pool(**{**POOL, "n_items": n_items})
    result = lw.simulate(pool, lw.make_measure("f1", pool), lw.make_design("online-poisson", variance=variance),
                         budget=CHECKPOINTS[-1], batch_size=50, repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
    return [{"labels": int(row["labels"]), "coverage": float(row["coverage"]),
             "mean_width": float(row["mean_width"]), "rmse": float(np.sqrt(row["mse"]))}
            for row in result.checkpoint_rows()]


def summary_section(data: dict) -> str:
    """The RESULTS.md section: coverage / width ratio per variance and checkpoint."""
    head = "| variance | " + " | ".join(f"{n} labels" for n in CHECKPOINTS) + " |"
    n_items = data.get("n_items", POOL["n_items"])
    lines = [f"## Hindsight-read intervals on a small pool (F1, {n_items:,} items)", "",
             (f"`online-poisson` on `make_pool({n_items}, prevalence={POOL['prevalence']}, "
              f"seed={POOL['seed']})` (about {round(n_items * POOL['prevalence'])} positives), {data['runs']} runs, "
              "batches of 50. Each cell: coverage of the 95% interval / mean width over 3.92 RMSE; bold where "
              "coverage is below 0.93. The default (`auto`) is `conditional` on this pool (its rounds run on score "
              "blocks) and `mixture` where they do not; `hindsight` is opt-in."), "",
             head, "|---|" + "---|" * len(CHECKPOINTS)]
    for variance, rows in data["variances"].items():
        cells = []
        for row in rows:
            cell = f"{row['coverage']:.2f} / {row['mean_width'] / (3.92 * row['rmse']):.2f}"
            cells.append(f"**{cell}**" if row["coverage"] < 0.93 else cell)
        lines.append(f"| `{variance}` | " + " | ".join(cells) + " |")
    size = "" if n_items == POOL["n_items"] else f" --n-items {n_items}"
    lines += ["", ("Reproduce: `OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python "
                   f"benchmarks/small_pool_intervals.py --runs {data['runs']} --seed {data['seed']}{size}`"), ""]
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
    ap.add_argument("--n-items", type=int, default=POOL["n_items"], help="pool size (2%% positives)")
    args = ap.parse_args()
    data = {"runs": args.runs, "seed": args.seed, "n_items": args.n_items,
            "variances": {variance: run_variance(variance, args.runs, args.seed, args.n_items)
                          for variance in VARIANCES}}
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    stem = "small_pool_intervals" + ("" if args.n_items == POOL["n_items"] else f"_{args.n_items}")
    (OUT / f"{stem}.json").write_text(json.dumps(data))
    plot(data, OUT / f"{stem}.png")
    print(f"wrote {OUT / f'{stem}.json'} and {OUT / f'{stem}.png'}")


if __name__ == "__main__":
    main()
