"""CPU milliseconds per call of the exact count of exceptions left, ``negative_binomial_sum_pmf``.

The inputs are those of the ``online-poisson`` intervals on rare pools: ``k``
rows (points of the recalibration's posterior) of means over ``B = 256``
parts (leaves of the oracle model), each row's means a Dirichlet split of a
total, and the parts' overdispersion ``d_b`` 0 (Poisson counts), uniform on
``[0, 30)`` (the leaves of the 1:100,000 grid pool reach 24), or
log-uniform on ``[1, 1e4)`` (large leaves with few labels: a tail beyond
:data:`~labelwise.estimators.missed.MAX_COUNT`).  Each cell is the median
CPU time (``time.process_time``, single-threaded BLAS) of repeated calls
on the same seeded inputs, ``n`` the length of the pmf returned, and
``exact`` the share of rows the intervals would take through it
(:func:`~labelwise.estimators.count_pmf` takes a row normal where its mean
plus ten standard deviations is beyond ``MAX_COUNT``).
``--before`` adds the columns of a JSON this script wrote (``--out``) on
an earlier version of labelwise (``PYTHONPATH`` at its ``src``).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=<old src> nice -n 10 .venv/bin/python \\
        benchmarks/count_pmf_speed.py --out /tmp/count_pmf_before.json
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 .venv/bin/python \\
        benchmarks/count_pmf_speed.py --before /tmp/count_pmf_before.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import labelwise as lw
from labelwise.estimators.missed import MAX_COUNT

PARTS = 256
ROWS = (1, 10, 60)
TOTALS = (1.0, 10.0, 100.0, 600.0)
DISPERSIONS = ("0", "U[0,30)", "logU[1,1e4)")


def inputs(rows: int, total: float, dispersion: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Seeded means ``(rows, PARTS)``, each row summing to ``total``, and the parts' overdispersion."""
    rng = np.random.default_rng(seed)
    d = {"0": np.zeros(PARTS), "U[0,30)": rng.uniform(0.0, 30.0, PARTS),
         "logU[1,1e4)": np.exp(rng.uniform(0.0, np.log(1e4), PARTS))}[dispersion]
    return total * rng.dirichlet(np.full(PARTS, 0.3), size=rows), d


def time_call(means: np.ndarray, d: np.ndarray, budget: float = 0.3) -> tuple[float, int]:
    """Median CPU milliseconds of calls repeated for about ``budget`` seconds (at least 3), and the pmf's length."""
    lw.estimators.negative_binomial_sum_pmf(means, d)  # warm
    times = []
    while len(times) < 3 or sum(times) < budget:
        t = time.process_time()
        pmf = lw.estimators.negative_binomial_sum_pmf(means, d)
        times.append(time.process_time() - t)
    return 1e3 * float(np.median(times)), int(pmf.shape[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the timings as JSON here")
    ap.add_argument("--before", type=Path, help="JSON of an earlier version's run, shown beside")
    args = ap.parse_args()
    before = json.loads(args.before.read_text()) if args.before else {}
    rows = {}
    print(f"| k | total mean | d | exact | n | ms/call |{' before | speed-up |' if before else ''}")
    print("|---|---|---|---|---|---|" + ("---|---|" if before else ""))
    for k in ROWS:
        for total in TOTALS:
            for dispersion in DISPERSIONS:
                key = f"{k} {total:g} {dispersion}"
                means, d = inputs(k, total, dispersion)
                exact = np.mean(means.sum(axis=1) + 10.0 * np.sqrt(means @ (1.0 + d)) <= MAX_COUNT)
                ms, n = rows[key] = time_call(means, d)
                extra = f" {before[key][0]:.2f} | {before[key][0] / ms:.1f}x |" if key in before else ""
                print(f"| {k} | {total:g} | {dispersion} | {exact:.0%} | {n} | {ms:.2f} |{extra}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows))


if __name__ == "__main__":
    main()
