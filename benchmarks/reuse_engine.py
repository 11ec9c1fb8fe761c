"""Sample reuse on engine pools: a PR curve estimated from the labels of an F1 session on DuckDB.

The pool of ``reuse_coverage.py`` at one prevalence, written as Parquet; per
design, ``--runs`` engine sessions (:class:`labelwise.engines.EngineSession`,
seeds 0, 1, ...) label ``--labels`` items in batches of 50 from the truth and
estimate ``pr_curve:3`` (its thresholds on the pool's scores, as in memory;
on its probabilities with ``--without-scores``) from those labels.  The table gives the coverage of the 95% interval of the
recall at the middle threshold (the positives below it score low: an
adaptive design labels few of them), the lowest coverage over the curve's
components and the widest mean width over 3.92 RMSE.

Prints one table, writes ``out/reuse_engine.json``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/reuse_engine.py --runs 30 \
        [--without-scores --out benchmarks/out/reuse_engine_probs.json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from grid import BATCH_SIZE, OUT, fmt_cov, table
from reuse_coverage import N_ITEMS, worst

import labelwise as lw
from labelwise.datasets import make_pool
from labelwise.designs import make_design
from labelwise.engines import EnginePool, EngineSession

CURVE = "pr_curve:3"
DESIGNS = ("online-poisson", "importance")


def run_design(pool: lw.Pool, path: Path, design: str, runs: int, labels: int, engine: str) -> dict:
    """Coverage, squared errors and widths of the curve's components over ``runs`` engine sessions."""
    curve = lw.make_measure(CURVE, pool)
    truth = lw.true_value(pool, curve)
    covered, sq_error, width = np.zeros(truth.size), np.zeros(truth.size), np.zeros(truth.size)
    labels_of = pd.Series(pool.labels, index=pool.item_ids)
    engine_pool = EnginePool.open(path, engine)
    for r in range(runs):
        with EngineSession.create(path.parent / f"{design}-{r}.lw", engine_pool, measure="f1", systems=0,
                                  design=make_design(design), budget=labels, seed=r) as session:
            while session.n_labels < labels:
                ids = session.hand_out(BATCH_SIZE)[0]["item_id"].to_numpy(np.int64)
                session.add_labels(ids, labels_of.loc[ids].to_numpy(), "truth")
            est = session.estimate(curve)
        lo, hi = est.interval()
        covered += (lo <= truth) & (truth <= hi)
        sq_error += (est.value - truth) ** 2
        width += hi - lo
    components = [{"component": name, "truth": float(truth[j]), "coverage": float(covered[j] / runs),
                   "rmse": float(np.sqrt(sq_error[j] / runs)), "mean_width": float(width[j] / runs)}
                  for j, name in enumerate(est.names)]
    return {"design": design, "components": components, "basis": est.basis}


def summary_section(data: dict) -> str:
    """Markdown: per design, the middle recall's coverage, the lowest coverage and the widest width ratio."""
    a = data["args"]
    without, on = (" --without-scores", "probabilities") if a.get("without_scores") else ("", "scores")
    rows = []
    for cell in data["cells"]:
        middle = [c for c in cell["components"] if c["component"].startswith("recall@")][1]
        low, wide = worst(cell)
        ratio = "-" if wide is None else f"{wide['mean_width'] / (3.92 * wide['rmse']):.2f} ({wide['component']})"
        rows.append([cell["design"], f"{middle['truth']:.3f}", fmt_cov(middle["coverage"]),
                     f"{middle['mean_width']:.3f}", f"{fmt_cov(low['coverage'])} ({low['component']})", ratio])
    return "\n".join([
        "## Sample reuse on engine pools: a PR curve from an F1 session's labels", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/reuse_engine.py --runs "
         f"{a['runs']} --labels {a['labels']} --prevalence {a['prevalence']} --seed {a['seed']} --engine "
         f"{a['engine']} --designs {a['designs']}{without}`: `make_pool({N_ITEMS}, prevalence, seed)` as Parquet, "
         f"engine sessions of F1 labeling {a['labels']} items in batches of {BATCH_SIZE}, each estimating `{CURVE}` "
         f"from its labels (thresholds on the pool's {on}). Per design: the recall at the middle threshold (its truth, "
         "the coverage of the 95% interval and its mean width), the lowest coverage over the curve's components "
         "and the widest mean width over 3.92 RMSE."), "",
        table(["design", "middle recall", "coverage", "mean width", "lowest coverage", "widest width ratio"], rows),
        "",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--labels", type=int, default=1000)
    ap.add_argument("--prevalence", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=3, help="pool seed")
    ap.add_argument("--engine", default="duckdb")
    ap.add_argument("--designs", default=",".join(DESIGNS))
    ap.add_argument("--without-scores", action="store_true", help="the pool's probabilities only: the curve's "
                    "thresholds on them")
    ap.add_argument("--out", default=str(OUT / "reuse_engine.json"))
    args = ap.parse_args()
    made = make_pool(N_ITEMS, prevalence=args.prevalence, seed=args.seed)
    scores = None if args.without_scores else made.scores
    pool = lw.Pool.from_arrays(made.item_ids, preds=made.preds, probs=made.probs, scores=scores, labels=made.labels,
                               name=made.name)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pool.parquet"
        columns = {"item_id": pool.item_ids, "pred": pool.preds[:, 0], "prob": pool.probs[:, 0]}
        if scores is not None:
            columns["score"] = scores[:, 0]
        pd.DataFrame({**columns, "label": pool.labels}).to_parquet(path, index=False)
        cells = [run_design(pool, path, d, args.runs, args.labels, args.engine) for d in args.designs.split(",")]
    data = {"args": vars(args), "cells": cells}
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(json.dumps(data, indent=1))
    print(summary_section(data))


if __name__ == "__main__":
    main()
