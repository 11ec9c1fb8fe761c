"""How many exceptions the labels leave in the unlabeled tail, against what any interval built on the scores can allow.

An exception is an unlabeled item whose label is not its group's most likely
one under ``online-poisson``'s oracle model (a positive among the items the
scores call negatives).  An interval that takes the unlabeled items from a
model of the labels can only cover a run whose missed exceptions the model's
count allows.  On the calibrated pools of the robustness grid (``-x1-``) the
scores are the very probabilities the labels were drawn from, so the best
model any interval could have is the truth's own: there the number of
exceptions left unlabeled is Poisson-binomial with mean ``oracle`` (the sum
of the true probabilities of the non-modal label over the unlabeled items).
For each run and checkpoint this script records

* ``realized``: the exceptions actually left unlabeled;
* ``oracle``: their expected number under the true probabilities, and whether
  ``realized`` exceeds the 97.5% quantile of a Poisson count of that mean
  (then an interval assuming the true probabilities misses the run unless the
  labeled part's noise happens to cover it);
* ``model``: the expected number under ``online-poisson``'s model, and whether
  ``realized`` exceeds the 97.5% quantile of the count the ``count`` interval
  allows (:meth:`labelwise.designs.group_model.GroupModel.count_spread`: per block a negative binomial
  count, the oracle model's Beta-binomial posterior predictive, mixed over the recalibration's posterior).

Usage::

    nice -n 10 python benchmarks/tail_count.py --pools 0.001-x1-strong,0.001-x1-weak,1e-05-x1-strong,0.05-x1-strong \\
        --runs 100 --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from design_variants import spec_of
from grid import BATCH_SIZE, OUT
from pools import DATASETS

import labelwise as lw

CHECKPOINTS = (500, 1000, 2000)
#: The one-sided quantile of the count a 95% interval must reach.
QUANTILE = 0.975


def over_quantile(realized: int, pmf: np.ndarray, q: float = QUANTILE) -> bool:
    """Whether ``realized`` exceeds the ``q`` quantile of the count whose pmf on 0, 1, ... is ``pmf``:
    ``P(K <= realized - 1) >= q``."""
    return bool(realized > 0 and pmf[:realized].sum() >= q)


def count_pmf(means: np.ndarray, weights: np.ndarray, overdispersion: np.ndarray) -> np.ndarray:
    """The pmf of the count the ``count`` interval allows: its mixture over the recalibration's posterior."""
    return weights @ lw.estimators.negative_binomial_sum_pmf(means, overdispersion)


def run_pool(spec, runs: int, seed: int) -> dict:
    """Per run and checkpoint: realized, oracle and model counts of the exceptions left unlabeled."""
    pool = spec.load()
    measure = lw.make_measure("f1", pool)
    design = lw.OnlinePoissonDesign(variance="count")
    p_true = np.asarray(pool.probs, dtype=float)[:, 0]
    y = np.asarray(pool.labels)
    rows = []
    for r in range(runs):
        session = lw.Session(pool, measure, design, budget=CHECKPOINTS[-1],
                             seed=np.random.default_rng([seed, r]))

        def record(n: int, _est, session=session, r=r) -> None:
            gm = session.sampler.gm
            pi = gm.posterior(interval=True)
            positive_mode = np.argmax(pi, axis=1) == 1
            unlabeled = np.ones(pool.n_items, dtype=bool)
            unlabeled[gm.groups.labeled_items] = False
            mode = positive_mode[gm.groups.of_item[unlabeled]]
            oracle = float(np.sum(np.where(mode, 1.0 - p_true[unlabeled], p_true[unlabeled])))
            realized = int(np.sum(y[unlabeled] != mode))
            exceptions = gm.groups.unlabeled * np.where(positive_mode, pi[:, 0], pi[:, 1])  # F1: every label moves
            means, weights, overdispersion = gm.count_spread(exceptions)
            rows.append({"run": r, "labels": n, "realized": realized, "oracle": oracle,
                         "model": float(exceptions.sum()),
                         "over_oracle": over_quantile(realized, count_pmf(np.array([[oracle]]), np.ones(1),
                                                                          np.zeros(1))),
                         "over_model": over_quantile(realized, count_pmf(means, weights, overdispersion))})

        session.run(lw.TruthOracle(pool), CHECKPOINTS[-1], BATCH_SIZE, checkpoints=list(CHECKPOINTS),
                    on_checkpoint=record)
    return {"pool": spec.name, "n_items": pool.n_items, "positives": int(y.sum()), "rows": rows}


def table(data: dict) -> list[dict]:
    """Means and exceedance shares per pool and checkpoint."""
    out = []
    for entry in data["pools"]:
        for n in CHECKPOINTS:
            rows = [row for row in entry["rows"] if row["labels"] == n]
            realized = np.array([row["realized"] for row in rows])
            out.append({"pool": entry["pool"], "labels": n, "runs": len(rows),
                        "realized": float(realized.mean()),
                        "oracle": float(np.mean([row["oracle"] for row in rows])),
                        "model": float(np.mean([row["model"] for row in rows])),
                        "over_oracle": float(np.mean([row["over_oracle"] for row in rows])),
                        "over_model": float(np.mean([row["over_model"] for row in rows]))})
    return out


def summary_section(data: dict) -> str:
    """Markdown: the exceptions left unlabeled against the counts an interval on the scores can allow."""
    a = data["args"]
    out = [
        "## Exceptions left in the unlabeled tail: what an interval on the scores can cover", "",
        (f"`python benchmarks/tail_count.py --pools {a['pools']} --runs {a['runs']} --seed {a['seed']} --datasets "
         "<shared datasets>`: `online-poisson` with `variance=count`, F1, batches of 50. Per checkpoint, means over "
         "the runs of the exceptions (labels other than their group's most likely one) left unlabeled: realized, "
         "expected under the pool's true probabilities (the calibrated pools' scores), expected under the "
         "design's model; and the share of runs whose realized count exceeds the 97.5% quantile of the Poisson "
         "count of the true probabilities (an interval assuming them misses such a run unless the labeled part's "
         "noise covers it), and of the count the `count` interval allows."), "",
        ("| pool | labels | runs | realized | true expectation | model | runs over the truth's quantile "
         "| runs over the model's |"),
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in table(data):
        out.append(f"| {row['pool']} | {row['labels']} | {row['runs']} | {row['realized']:.2f} | {row['oracle']:.2f} | "
                   f"{row['model']:.2f} | {row['over_oracle']:.2f} | {row['over_model']:.2f} |")
    return "\n".join(out) + "\n"


def plot(data: dict, path: Path) -> None:
    """Realized against expected exceptions left unlabeled, per pool, at the last checkpoint."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    for entry in data["pools"]:
        rows = [row for row in entry["rows"] if row["labels"] == CHECKPOINTS[-1]]
        ax.scatter([row["oracle"] for row in rows], [row["realized"] for row in rows], s=8, label=entry["pool"])
    top = max(row["realized"] for entry in data["pools"] for row in entry["rows"]) + 1
    ax.plot([0, top], [0, top], color="grey", lw=0.8)
    ax.set_xlabel("expected under the true probabilities")
    ax.set_ylabel("realized")
    ax.set_title(f"exceptions left unlabeled at {CHECKPOINTS[-1]} labels")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", required=True, help="comma-separated grid pools (calibrated: -x1-)")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    args = ap.parse_args()
    specs = [spec_of(name.strip(), args.datasets) for name in args.pools.split(",") if name.strip()]
    data = {"args": {"pools": args.pools, "runs": args.runs, "seed": args.seed},
            "pools": [run_pool(spec, args.runs, args.seed) for spec in specs]}
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / "tail_count.json").write_text(json.dumps(data))
    plot(data, OUT / "tail_count.png")
    print(f"wrote {OUT / 'tail_count.json'} and {OUT / 'tail_count.png'}")


if __name__ == "__main__":
    main()
