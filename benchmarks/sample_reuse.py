"""Sample reuse: labels drawn for one metric estimate the others (Yilmaz et al. 2021, appendix F.1).

As in appendix F.1 of Yilmaz et al., "Sample Efficient Model Evaluation"
(arXiv:2109.12043, 2021): for each pool, design and pre-sampling metric (the
one the design optimises for), runs R sessions to a fixed budget and
estimates every post-sampling metric from the same labels with
``Session.estimate(measure=...)``.  Prints one table per pool and design:
rows are pre-sampling metrics, columns the MSE of each post-sampling metric
(and, in brackets, the coverage of its 95% interval).

Usage::

    .venv/bin/python benchmarks/sample_reuse.py [--repeats 100] [--budget 1000] [--designs importance,poisson]
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from pools import DATASETS, pool_paths

from labelwise import Pool, Session, TruthOracle, make_design, make_measure, true_value

METRICS = ("f1", "precision", "recall", "accuracy")


def reuse_table(path: Path, design: str, repeats: int, budget: int, batch_size: int) -> dict:
    """MSE and coverage of every post-sampling metric for every pre-sampling metric."""
    pool = Pool.from_file(path)
    post = {name: make_measure(name, pool) for name in METRICS}
    truth = {name: true_value(pool, m)[0] for name, m in post.items()}
    oracle = TruthOracle(pool)
    table = {}
    for pre in METRICS:
        design_obj = make_design(design)
        errors = {name: [] for name in METRICS}
        covered = {name: [] for name in METRICS}
        for seed in range(repeats):
            session = Session(pool, post[pre], design_obj, budget=budget, seed=seed)
            session.run(oracle, budget, batch_size)
            for name, measure in post.items():
                est = session.estimate(measure)
                lo, hi = est.interval()
                errors[name].append(est.value[0] - truth[name])
                covered[name].append(lo[0] <= truth[name] <= hi[0])
        table[pre] = {name: (float(np.mean(np.square(errors[name]))), float(np.mean(covered[name])))
                      for name in METRICS}
    return {"pool": pool.name, "design": design, "table": table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--designs", default="importance,poisson")
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    args = ap.parse_args()
    pools = pool_paths(args.datasets)
    if not pools:
        return
    jobs = [(p, d) for p in pools for d in args.designs.split(",")]
    with ProcessPoolExecutor(2) as ex:
        futures = [ex.submit(reuse_table, p, d, args.repeats, args.budget, args.batch_size) for p, d in jobs]
        results = [f.result() for f in futures]
    for res in results:
        print(f"\n{res['pool']}, design {res['design']}, {args.budget} labels, {args.repeats} repeats: "
              "MSE (coverage of the 95% interval)")
        print(f"{'pre/post':<12}" + "".join(f"{name:>22}" for name in METRICS))
        for pre, row in res["table"].items():
            print(f"{pre:<12}" + "".join(f"{mse:>14.2e} ({cov:.2f})" for mse, cov in row.values()))


if __name__ == "__main__":
    main()
