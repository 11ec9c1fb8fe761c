"""Whose scores a design samples by when a pool has several systems.

A design with a ``system`` setting (``online-poisson``, ``importance``, ``ais``, ``stratified``, ``oasis``)
ranks and blocks the items by one score. :func:`labelwise.make_design` gives it the one system the measure
evaluates, and for a measure of several systems the mean of every system's probability (``system="mean"``,
:func:`labelwise.designs.base.design_scores`). This script measures what each choice is worth on generated
pools of two systems (:func:`labelwise.make_pool`, separations ``d``), budget 2000 in batches of 50:

* *one system evaluated*: F1 of the second (strong) system by ``online-poisson`` on its own scores, on the
  first (weak) system's (``system=0``, what ``make_design`` gave before), on the systems' mean, and ``passive``;
* *both systems evaluated*: F1 of each system by ``online-poisson`` on the systems' mean (the default now), on
  the first system's scores (the default before), on the second's, and ``passive``, with the weak system first
  and with the strong one first (its weak second system a little stronger: at d = 2 on the 1:1000 pool it
  predicts no true positive, an F1 of exactly 0).

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
#: (label, design, settings) of each variant, for a measure of the second system and of both.
ONE_SYSTEM = (("own scores", "online-poisson", {}), ("first system's scores", "online-poisson", {"system": 0}),
              ("systems' mean", "online-poisson", {"system": "mean"}), ("passive", "passive", {}))
BOTH_SYSTEMS = (("systems' mean", "online-poisson", {}), ("first system's scores", "online-poisson", {"system": 0}),
                ("second system's scores", "online-poisson", {"system": 1}), ("passive", "passive", {}))


def run(n_items: int, prevalence: float, separation: tuple[float, float], systems, variants, runs: int,
        seed: int) -> dict:
    """One pool: per variant, checkpoint and evaluated system, the MSE, coverage and width ratio of F1."""
    pool = lw.make_pool(n_items, prevalence=prevalence, separation=list(separation), n_systems=2, seed=1)
    measure = lw.make_measure("f1", pool, systems=systems)
    rows = []
    for label, design, settings in variants:
        result = lw.simulate(pool, measure, design, design_params=settings, budget=CHECKPOINTS[-1], batch_size=50,
                             repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
        truth = np.atleast_1d(result.true_value)
        mse = np.mean((result.values - truth) ** 2, axis=1)  # (checkpoints, systems)
        width = np.divide(np.mean(result.upper - result.lower, axis=1), 3.92 * np.sqrt(mse),
                          out=np.full(mse.shape, np.inf), where=mse > 0)  # inf: an exact estimate
        rows.append({"variant": label, "truth": truth.tolist(), "mse": mse.T.tolist(),
                     "coverage": covers(result.lower, result.upper, truth).mean(axis=1).T.tolist(),
                     "width": width.T.tolist()})
    return {"n_items": n_items, "prevalence": prevalence, "separation": list(separation),
            "systems": list(measure.names), "rows": rows}


def _table(pools: list[dict]) -> list[str]:
    """Per pool, variant and evaluated system: MSE, coverage and width per checkpoint, and the MSE at the last
    checkpoint over the first variant's."""
    head = " | ".join(f"MSE {c} | cov {c} | width {c}" for c in CHECKPOINTS)
    out = [f"| pool | F1 of | variant | {head} | MSE {CHECKPOINTS[-1]} / first row's |",
           "|---|---|---|" + "---|" * (3 * len(CHECKPOINTS) + 1)]
    for pool in pools:
        name = f"{pool['n_items']:,} items, {pool['prevalence']:g}, d = {pool['separation']}"
        for k, system in enumerate(pool["systems"]):
            reference = pool["rows"][0]["mse"][k][-1]
            for row in pool["rows"]:
                cells = " | ".join(f"{row['mse'][k][i]:.2g} | {row['coverage'][k][i]:.2f} | {row['width'][k][i]:.2f}"
                                   for i in range(len(CHECKPOINTS)))
                ratio = f"{row['mse'][k][-1] / reference:.2g}" if reference > 0 else "n/a"  # an F1 of 0, exact
                out.append(f"| {name} | {system} | {row['variant']} | {cells} | {ratio} |")
    return out


def summary_section(data: dict) -> str:
    """Markdown: the two tables of the module docstring."""
    a = data["args"]
    out = ["## Several systems: whose scores the design samples by", "",
           (f"`OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/system_scores.py --runs {a['runs']} --seed "
            f"{a['seed']}`: pools of two systems from `make_pool` (separations d; seed 1), `online-poisson` with its "
            f"`system` setting varied, {a['runs']} runs, budget {CHECKPOINTS[-1]} in batches of 50. Width = mean "
            "width / (3.92 RMSE)."), "",
           ("**One system evaluated** (the second, strong one): `own scores` is what `make_design` gives a measure "
           "of one system; `first system's scores` what it gave before."), "", *_table(data["one_system"]), "",
           ("**Both systems evaluated** (`make_measure(\"f1\", pool, systems=\"all\")`): `systems' mean` is what "
           "`make_design` gives a measure of several systems; `first system's scores` what it gave before."), "",
           *_table(data["both_systems"])]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    one = [run(100_000, 1e-3, (2.0, 4.0), 1, ONE_SYSTEM, args.runs, args.seed),
           run(50_000, 0.01, (2.0, 4.0), 1, ONE_SYSTEM, args.runs, args.seed)]
    both = [run(100_000, 1e-3, separation, "all", BOTH_SYSTEMS, args.runs, args.seed)
            for separation in ((2.0, 4.0), (4.0, 2.5))]
    both.append(run(50_000, 0.01, (2.0, 4.0), "all", BOTH_SYSTEMS, args.runs, args.seed))
    store("system_scores", {"args": vars(args), "one_system": one, "both_systems": both})


if __name__ == "__main__":
    main()
