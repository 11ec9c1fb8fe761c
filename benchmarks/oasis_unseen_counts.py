"""How many positives ``oasis``'s interval expects to be left unseen, against how many are.

``oasis``'s interval (``labelwise.designs.unseen_strata``) adds to the
draws' martingale variance the exceptions (for F1: positives among the items
the system calls negative) that may be left among the unlabeled items of the
groups whose labels showed none, a Poisson count whose mean comes from the
scores recalibrated to the labels (Platt, with its parameters' posterior).
The interval is as good as that count.  This runs ``oasis`` (F1, batches of
50) on the pools of ``rare_design_intervals.py`` and the real pools, and at
1000 and 2000 labels prints per pool, over the runs:

* ``expected``: the count's mean under the recalibration's posterior;
* ``upper 95%``: its 95% quantile (the Poisson mixture);
* ``left``: the exceptions actually left in those groups (the pool's labels);
* ``covered``: the share of runs whose ``left`` is at most ``upper 95%``;
* ``P(none seen)``: how likely the labeled items of those groups were to show
  no exception if the expected count were right (near 1: the labels cannot
  tell the expected count from none, and the interval must stay as wide as
  the count).

Writes ``benchmarks/out/oasis_unseen_counts.json`` and ``.png`` (expected
against left, per run).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 \\
        python benchmarks/oasis_unseen_counts.py --runs 20 --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np
from rare_design_intervals import POOLS
from results import BATCH_SIZE, MEASURE, pool_specs
from scipy.stats import poisson

import labelwise as lw
from labelwise.designs import make_design
from labelwise.oracle import TruthOracle

OUT = Path(__file__).resolve().parent / "out"
CHECKPOINTS = (1000, 2000)
UNSEEN_POOLS = ("rare-1e-3", "overconfident-1e-3", "0.01-x3-weak")


def upper_quantile(means: np.ndarray, weights: np.ndarray, level: float = 0.95) -> int:
    """The smallest count whose probability under the Poisson mixture is at least ``level`` below or at it."""
    top = int(poisson.ppf(level, means.max())) + 1
    cdf = weights @ poisson.cdf(np.arange(top + 1)[None, :], means[:, None])
    return int(np.searchsorted(cdf, level))


def run_counts(pool: lw.Pool, runs: int, seed: int) -> list[dict]:
    """Per run and checkpoint: the expected and true counts left unseen, the upper quantile, P(none seen)."""
    measure = lw.make_measure(MEASURE, pool)
    design = make_design("oasis", pool)
    template = design.start(pool, measure, rng=np.random.default_rng(0), budget=CHECKPOINTS[-1])
    rows = []
    for rng in (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(runs)):
        session = lw.Session(pool, measure, design, budget=CHECKPOINTS[-1], seed=rng, sampler=template.copy(rng))

        def record(n: int, est, session=session) -> None:
            sampler, sample = session.sampler, session.sample()
            unseen = sampler.unseen_exceptions(measure, sample, measure.jacobian(est.R))
            labeled = np.zeros(pool.n_items, dtype=bool)
            labeled[sample.draws.items] = True
            group = sampler.groups.of_item
            tail = unseen.movers[group] > 0  # items of the groups that showed no exception
            exception = pool.labels != unseen.likely[group]
            left = int(np.sum(tail & ~labeled & exception))
            share = np.sum(tail & labeled) / max(np.sum(tail & ~labeled), 1)  # labeled per unlabeled item there
            rows.append({"labels": n, "expected": float(unseen.weights @ unseen.means),
                         "upper": upper_quantile(unseen.means, unseen.weights), "left": left,
                         "p_none_seen": float(unseen.weights @ np.exp(-unseen.means * share))})

        session.run(TruthOracle(pool), CHECKPOINTS[-1], BATCH_SIZE, checkpoints=list(CHECKPOINTS),
                    on_checkpoint=record)
    return rows


def summarize(rows: list[dict]) -> list[dict]:
    """Per checkpoint: means over the runs and the share of runs covered."""
    out = []
    for n in CHECKPOINTS:
        at = [r for r in rows if r["labels"] == n]
        out.append({"labels": n, "expected": float(np.mean([r["expected"] for r in at])),
                    "upper": float(np.mean([r["upper"] for r in at])),
                    "left": float(np.mean([r["left"] for r in at])),
                    "covered": float(np.mean([r["left"] <= r["upper"] for r in at])),
                    "p_none_seen": float(np.mean([r["p_none_seen"] for r in at]))})
    return out


def summary_section(data: dict) -> str:
    """Markdown section rendered from the JSON this script writes."""
    lines = [
        "## Positives `oasis`'s interval expects to be left unseen (F1)",
        "",
        (f"{data['runs']} runs per pool, batches of {BATCH_SIZE}. Per checkpoint, means over the runs of the "
         "count of exceptions (positives among the system's negatives) that the interval expects among the "
         "unlabeled items of the groups whose labels showed none (`expected`, and its 95% quantile `upper`), "
         "the count actually left there (`left`), the share of runs whose `left` is at most `upper`, and how "
         "likely the labeled items of those groups were to show none if `expected` were right (`P(none seen)`: "
         "near 1, the labels cannot tell `expected` from none)."),
        "",
        "| pool | labels | expected | upper 95% | left | covered | P(none seen) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, cells in data["pools"].items():
        for c in cells:
            lines.append(f"| {name} | {c['labels']} | {c['expected']:.1f} | {c['upper']:.1f} | {c['left']:.1f} | "
                         f"{c['covered']:.2f} | {c['p_none_seen']:.2f} |")
    lines += ["", "Reproduce with:", "", "```", data["command"], "```"]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    for name, rows in data["rows"].items():
        at = [r for r in rows if r["labels"] == CHECKPOINTS[-1]]
        ax.scatter([r["left"] + 0.5 for r in at], [r["expected"] + 0.5 for r in at], s=12, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    lims = ax.get_xlim()
    ax.plot(lims, lims, color="grey", ls="--")
    ax.set_xlabel("exceptions left unseen + 0.5")
    ax.set_ylabel("expected by the interval + 0.5")
    ax.set_title(f"oasis at {CHECKPOINTS[-1]} labels")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=None, help="folder of the real pools (skipped when absent)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    pools = {name: POOLS[name] for name in UNSEEN_POOLS}
    if args.datasets is not None:
        pools |= {spec.name: spec.load for spec in pool_specs(args.datasets) if spec.name not in POOLS}
    command = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python " + shlex.join(
        ["benchmarks/oasis_unseen_counts.py", *(argv if argv is not None else sys.argv[1:])])
    rows = {}
    for name, load in pools.items():
        rows[name] = run_counts(load(), args.runs, args.seed)
        print(name, summarize(rows[name]), flush=True)
    data = {"runs": args.runs, "seed": args.seed, "command": command, "rows": rows,
            "pools": {name: summarize(r) for name, r in rows.items()}}
    OUT.mkdir(exist_ok=True)
    (OUT / "oasis_unseen_counts.json").write_text(json.dumps(data, indent=1))
    print()
    print(summary_section(data))
    if not args.no_plot:
        plot(data, OUT / "oasis_unseen_counts.png")


if __name__ == "__main__":
    main()
