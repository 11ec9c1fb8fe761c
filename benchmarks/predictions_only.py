"""The default design on pools that give predicted labels only (no score, no probability).

Generated binary pools (:func:`labelwise.make_pool`, separation 3, or 2 at 10%) with their scores and
probabilities dropped: the designs see the systems' predictions alone. F1 and accuracy, the default design and
``passive``, budget 2000 in batches of 50: MSE, coverage of the 95% interval and width ratio (mean width /
(3.92 RMSE)) at 500 / 1000 / 2000 labels. The oracle model's prior gives a predicted label
:data:`labelwise.oracle.prior.PREDICTION_TRUST` of a one-hot, the recalibration learns each prediction's
rate from the labels.

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/predictions_only.py --runs 100

Writes ``benchmarks/out/predictions_only.json``.
"""

from __future__ import annotations

from design_rows import design_rows, runs_and_seed, table_head, table_line
from sections import store

import labelwise as lw

CHECKPOINTS = (500, 1000, 2000)
#: (prevalence, separation, pool size)
POOLS = ((0.1, 2.0, 50_000), (0.01, 3.0, 50_000), (0.001, 3.0, 200_000))
MEASURES = ("f1", "accuracy")
DESIGNS = ("default", "passive")


def run(prevalence: float, separation: float, n_items: int, runs: int, seed: int) -> dict:
    """One pool: per measure and design, MSE, coverage and width ratio at the checkpoints."""
    full = lw.make_pool(n_items, prevalence=prevalence, separation=separation, seed=1)
    pool = lw.Pool.from_arrays(None, preds=full.preds, labels=full.labels, name="predictions-only")
    rows = design_rows(pool, MEASURES, DESIGNS, CHECKPOINTS, runs, seed)
    return {"prevalence": prevalence, "separation": separation, "n_items": n_items, "rows": rows}


def summary_section(data: dict) -> str:
    """Markdown: per pool, measure and design, MSE, coverage and width per checkpoint."""
    a = data["args"]
    out = ["## Pools of predictions only", "",
           (f"`OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/predictions_only.py --runs {a['runs']} --seed "
            f"{a['seed']}`: `make_pool` pools with their scores and probabilities dropped, batches of 50, "
            f"{a['runs']} runs. Width = mean width / (3.92 RMSE)."), "",
           *table_head(CHECKPOINTS, "MSE")]
    for pool in data["pools"]:
        name = f"{pool['n_items']:,} items, {pool['prevalence']:g}, d = {pool['separation']:g}"
        for row in pool["rows"]:
            out.append(table_line(name, row, [f"{m:.2g}" for m in row["mse"]]))
    return "\n".join(out) + "\n"


def main() -> None:
    args = runs_and_seed(__doc__)
    store("predictions_only", {"args": vars(args), "pools": [run(*spec, args.runs, args.seed) for spec in POOLS]})


if __name__ == "__main__":
    main()
