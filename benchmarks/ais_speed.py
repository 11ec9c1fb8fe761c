"""Speed and memory of one adaptive run: ``ais`` (256 strata, batches of 50, 2000 labels).

Times single runs on the real 54k-item pools (when ``../shared/datasets`` is
present) and on a generated pool of 10^7 items, and reports the peak
resident memory of the process.  ``start s`` is the time of
``design.start`` (fitting the design to the pool: the tree, the oracle model
and the grouped pool), which every run pays once; the run times include it.

Usage::

    .venv/bin/python benchmarks/ais_speed.py [--items 10000000] [--runs 5] [--depth 8 --branching 2]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from pools import pool_paths

from labelwise import Pool, Session, TruthOracle, make_design, make_measure, make_pool


def time_runs(pool: Pool, runs: int, design_name: str, **params) -> tuple[float, float, float]:
    """(start seconds, median seconds per 2000-label run, max) for ``runs`` runs; a run includes its start."""
    measure = make_measure("f1", pool)
    design = make_design(design_name, **params)
    oracle = TruthOracle(pool)
    t0 = time.perf_counter()
    design.start(pool, measure, rng=np.random.default_rng(0), budget=2000)
    start = time.perf_counter() - t0
    times = []
    for r in range(runs):
        t0 = time.perf_counter()
        Session(pool, measure, design, budget=2000, seed=r).run(oracle, 2000, 50)
        times.append(time.perf_counter() - t0)
    return start, float(np.median(times)), float(np.max(times))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--design", default="ais")
    ap.add_argument("--depth", type=int, default=1, help="tree depth of the ais design")
    ap.add_argument("--branching", type=int, default=256, help="branching factor of the ais design")
    args = ap.parse_args()
    params = {"depth": args.depth, "branching": args.branching} if args.design == "ais" else {}
    rows = []
    for path in pool_paths():
        rows.append((path.name.split(".")[0], *time_runs(Pool.from_file(path), args.runs, args.design, **params)))
    t0 = time.perf_counter()
    big = make_pool(args.items, prevalence=1e-4, seed=0)
    make_s = time.perf_counter() - t0
    rows.append((f"generated {args.items:.0e} (+{make_s:.1f}s to generate)", *time_runs(big, args.runs, args.design, **params)))
    print(f"design {args.design} {params}: one run = 2000 labels in batches of 50")
    print(f"{'pool':<40} {'start s':>10} {'run s (median)':>15} {'run s (max)':>12}")
    for name, start, med, mx in rows:
        print(f"{name:<40} {start:>10.2f} {med:>15.3f} {mx:>12.3f}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2
    print(f"peak resident memory of the process: {peak:.2f} GB")


if __name__ == "__main__":
    main()
