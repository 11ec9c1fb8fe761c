"""Sample reuse: the intervals of measures estimated from the labels of an F1 session.

A session labels for its own measure, but a user then asks the same labels
for a PR curve, the recall, the AUC.  For each design and generated pool,
``--runs`` F1 sessions of ``--labels`` labels (batches of 50) each estimate
every reused measure; the table gives, over every component of those
measures, the lowest coverage of the 95% interval (and which component),
and the widest mean width over 3.92 RMSE.  Components whose every run is
exact (RMSE 0, e.g. a recall of 1 at the lowest threshold) have no width
ratio.

Prints one table, writes ``out/reuse_coverage.json``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/reuse_coverage.py --runs 40 \\
        --jobs 2
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from grid import BATCH_SIZE, COVERAGE_TARGET, OUT, fmt_cov, table

import labelwise as lw
from labelwise.datasets import make_pool

#: The measures estimated from an F1 session's labels.
REUSED = ("pr_curve:3", "roc_curve:3", "recall", "precision", "accuracy", "brier", "auc")
DESIGNS = ("online-poisson", "importance", "stratified")
PREVALENCES = (0.002, 0.01, 0.05)
N_ITEMS = 20_000


def run_cell(prevalence: float, design: str, runs: int, labels: int, seed: int) -> dict:
    """Coverage, squared errors and widths of every reused component over ``runs`` F1 sessions."""
    pool = make_pool(N_ITEMS, prevalence=prevalence, seed=seed)
    measures = [lw.make_measure(name, pool) for name in REUSED]
    truths = [lw.true_value(pool, m) for m in measures]
    covered = [np.zeros(t.size) for t in truths]
    sq_error = [np.zeros(t.size) for t in truths]
    width = [np.zeros(t.size) for t in truths]
    names: list[list[str]] = [[] for _ in measures]
    for r in range(runs):
        session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=seed + r, budget=labels)
        session.run(lw.TruthOracle(pool), labels, BATCH_SIZE)
        for i, m in enumerate(measures):
            est = session.estimate(m)
            lo, hi = est.interval()
            names[i] = list(est.names)
            covered[i] += (lo <= truths[i]) & (truths[i] <= hi)
            sq_error[i] += (est.value - truths[i]) ** 2
            width[i] += hi - lo
    components = []
    for i, name in enumerate(REUSED):
        for j, component in enumerate(names[i]):
            rmse = float(np.sqrt(sq_error[i][j] / runs))
            components.append({"measure": name, "component": component, "truth": float(truths[i][j]),
                               "coverage": float(covered[i][j] / runs), "rmse": rmse,
                               "mean_width": float(width[i][j] / runs)})
    return {"prevalence": prevalence, "design": design, "components": components}


def worst(cell: dict) -> tuple[dict, dict | None]:
    """The component of lowest coverage and the one of widest width ratio (``None``: every one exact)."""
    low = min(cell["components"], key=lambda c: c["coverage"])
    ratios = [c for c in cell["components"] if c["rmse"] > 0]
    wide = max(ratios, key=lambda c: c["mean_width"] / (3.92 * c["rmse"])) if ratios else None
    return low, wide


def summary_section(data: dict) -> str:
    """Markdown: per pool and design, the lowest coverage and the widest width ratio over the reused components."""
    a = {"prevalences": ",".join(map(str, PREVALENCES)), "designs": ",".join(DESIGNS), **data["args"]}
    rows = []
    for cell in data["cells"]:
        low, wide = worst(cell)
        ratio = "-" if wide is None else f"{wide['mean_width'] / (3.92 * wide['rmse']):.2f} ({wide['component']})"
        rows.append([f"{cell['prevalence']:g}", cell["design"], f"{fmt_cov(low['coverage'])} ({low['component']})",
                     ratio])
    return "\n".join([
        "## Sample reuse: measures estimated from an F1 session's labels", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/reuse_coverage.py --runs "
         f"{a['runs']} --labels {a['labels']} --seed {a['seed']} --prevalences {a['prevalences']} --designs "
         f"{a['designs']}`: `make_pool({N_ITEMS}, prevalence)`, F1 sessions "
         f"of {a['labels']} labels in batches of {BATCH_SIZE}, each estimating {', '.join(f'`{m}`' for m in REUSED)} "
         f"from its labels. Per pool and design: the lowest coverage of the 95% interval over every component of "
         f"those measures (! below {COVERAGE_TARGET}) and the widest mean width over 3.92 RMSE, each with its "
         "component (components exact in every run have no ratio)."), "",
        table(["prevalence", "design", "lowest coverage", "widest width ratio"], rows), "",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--labels", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=3, help="pool seed; run r uses seed + r")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--prevalences", default=",".join(map(str, PREVALENCES)))
    ap.add_argument("--designs", default=",".join(DESIGNS))
    args = ap.parse_args()
    cells = [(float(p), d) for p in args.prevalences.split(",") for d in args.designs.split(",")]
    with ProcessPoolExecutor(args.jobs) as ex:
        futures = [ex.submit(run_cell, p, d, args.runs, args.labels, args.seed) for p, d in cells]
        results = [f.result() for f in futures]
    data = {"args": vars(args), "cells": results}
    OUT.mkdir(exist_ok=True)
    (OUT / "reuse_coverage.json").write_text(json.dumps(data, indent=1))
    print(summary_section(data))


if __name__ == "__main__":
    main()
