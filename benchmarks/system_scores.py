"""Whose scores a design samples by when a pool has several systems: the evaluated one's or the first one's.

A design with a ``system`` setting (``online-poisson``, ``importance``, ``ais``, ``stratified``, ``oasis``)
reads one system's scores; :func:`labelwise.make_design` gives it the one system the measure evaluates. This
script measures what that is worth: generated pools of two systems (:func:`labelwise.make_pool`, the first
weak, the second strong), F1 of the second system estimated by ``online-poisson`` on its own scores and on the
first system's (``system=0``), and by ``passive``; budget 2000 in batches of 50.

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/system_scores.py --runs 50

Writes ``benchmarks/out/system_scores.json``.
"""

from __future__ import annotations

import argparse

import numpy as np
from sections import store

import labelwise as lw
from labelwise.simulate import covers

CHECKPOINTS = (500, 1000, 2000)
#: (label, design, settings) of each variant.
VARIANTS = (("own scores", "online-poisson", {}), ("first system's scores", "online-poisson", {"system": 0}),
            ("passive", "passive", {}))


def run(n_items: int, prevalence: float, separation: tuple[float, float], runs: int, seed: int) -> dict:
    """One pool: per variant and checkpoint, the MSE, coverage and width ratio of the second system's F1."""
    pool = lw.make_pool(n_items, prevalence=prevalence, separation=list(separation), n_systems=2, seed=1)
    measure = lw.make_measure("f1", pool, systems=1)
    rows = []
    for label, design, settings in VARIANTS:
        result = lw.simulate(pool, measure, design, design_params=settings, budget=CHECKPOINTS[-1], batch_size=50,
                             repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
        truth = float(np.atleast_1d(result.true_value)[0])
        values, lower, upper = (a[..., 0] for a in (result.values, result.lower, result.upper))
        mse = np.mean((values - truth) ** 2, axis=1)
        rows.append({"variant": label, "truth": truth, "mse": mse.tolist(),
                     "coverage": covers(lower, upper, truth).mean(axis=1).tolist(),
                     "width": (np.mean(upper - lower, axis=1) / (3.92 * np.sqrt(mse))).tolist()})
    return {"n_items": n_items, "prevalence": prevalence, "separation": list(separation), "rows": rows}


def summary_section(data: dict) -> str:
    """Markdown: per pool and variant, the MSE (and its ratio to the own-scores design's), coverage and width."""
    a = data["args"]
    head = " | ".join(f"MSE {c} | cov {c} | width {c}" for c in CHECKPOINTS)
    out = ["## Several systems: a design on the evaluated system's scores", "",
           (f"`OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/system_scores.py --runs {a['runs']} --seed "
            f"{a['seed']}`: pools of two systems from `make_pool` (separation weak, strong; seed 1), F1 of the second "
            f"(strong) system, {a['runs']} runs, budget {CHECKPOINTS[-1]} in batches of 50. `own scores` is what "
            "`make_design` now gives a measure of one system; `first system's scores` what it gave before. Width = "
            "mean width / (3.92 RMSE)."), "",
           f"| pool | variant | {head} | MSE 2000 / own |", "|---|---|" + "---|" * (3 * len(CHECKPOINTS) + 1)]
    for pool in data["pools"]:
        name = f"{pool['n_items']:,} items, {pool['prevalence']:g}, d = {pool['separation']}"
        own = pool["rows"][0]["mse"][-1]
        for row in pool["rows"]:
            cells = " | ".join(f"{row['mse'][i]:.2g} | {row['coverage'][i]:.2f} | {row['width'][i]:.2f}"
                               for i in range(len(CHECKPOINTS)))
            out.append(f"| {name} | {row['variant']} | {cells} | {row['mse'][-1] / own:.2g} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    pools = [run(100_000, 1e-3, (2.0, 4.0), args.runs, args.seed), run(50_000, 0.01, (2.0, 4.0), args.runs, args.seed)]
    store("system_scores", {"args": vars(args), "pools": pools})


if __name__ == "__main__":
    main()
