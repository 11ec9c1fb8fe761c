"""Seconds per simulated run of ``labelwise.simulate`` for each design, set-up included.

``simulate`` starts a design once and copies the started sampler for every
run (:meth:`labelwise.Sampler.copy`), so designs with an expensive set-up
(a static proposal over a multi-label pool, the oracle model of the
adaptive designs) pay for it once per simulation, not once per run.

Usage::

    .venv/bin/python benchmarks/simulate_speed.py [--runs 30]
"""

from __future__ import annotations

import argparse
import time

import labelwise as lw


def seconds_per_run(pool: lw.Pool, measure_name: str, design: str, runs: int, budget: int, batch: int) -> float:
    """Wall seconds per run of a ``runs``-run simulation."""
    measure = lw.make_measure(measure_name, pool)
    start = time.perf_counter()
    lw.simulate(pool, measure, design, budget=budget, batch_size=batch, repeats=runs, seed=11, checkpoints=[budget])
    return (time.perf_counter() - start) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    multilabel = lw.make_multilabel_pool(20_000, 4, prevalence=[0.05, 0.02, 0.01, 0.005], seed=3)
    binary = lw.make_pool(54_000, 0.001, seed=1)
    cases = [(multilabel, "multilabel_micro_f1", d, 1000, 1000) for d in ("passive", "importance", "poisson")]
    cases += [(binary, "f1", d, 2000, 50) for d in ("importance", "ais", "online-poisson")]
    print(f"{'pool':<28} {'measure':<22} {'design':<16} s/run ({args.runs} runs)")
    for pool, measure, design, budget, batch in cases:
        runs = args.runs if design not in ("ais", "online-poisson") else max(1, args.runs // 6)
        print(f"{pool.name:<28} {measure:<22} {design:<16} {seconds_per_run(pool, measure, design, runs, budget, batch):.3f}",
              flush=True)


if __name__ == "__main__":
    main()
