"""Time of the water-filling inclusion probabilities (Yilmaz et al. 2021, Algorithm 3) on large pools.

Algorithm 3 of Yilmaz et al., "Sample Efficient Model Evaluation"
(arXiv:2109.12043, 2021), as :func:`labelwise.designs.inclusion_probabilities`,
on lognormal deviations.

Usage::

    .venv/bin/python benchmarks/poisson_speed.py [--items 10000000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from labelwise.designs.poisson import inclusion_probabilities


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=10_000_000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'items':>10} {'deviations':>22} {'budget':>7} {'seconds':>8} {'certain':>8}")
    for sigma in (1.0, 6.0):
        h = rng.lognormal(0.0, sigma, args.items)
        for budget in (2000, 20000):
            t0 = time.perf_counter()
            b = inclusion_probabilities(h, budget)
            seconds = time.perf_counter() - t0
            print(f"{args.items:>10} {f'lognormal(0, {sigma:g})':>22} {budget:>7} {seconds:>8.2f} "
                  f"{int((b == 1).sum()):>8}")


if __name__ == "__main__":
    main()
