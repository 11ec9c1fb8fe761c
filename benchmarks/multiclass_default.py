"""The default design on multi-class pools: balanced and imbalanced, calibrated and over-confident.

Generated 3-class pools: one Gaussian cloud per class (class shares ``freqs``, separation ``d``), probabilities
the Bayes posterior's logits times ``k`` (``k = 3``: over-confident). For accuracy and macro F1, the default
design (``stratified`` where the classes besides the most common one hold at least 10% of the items,
``online-poisson`` with its probabilities temperature-scaled to the labels otherwise) and ``stratified``
against ``passive``: MSE over passive's, coverage of the 95% interval and width ratio (mean width / (3.92
RMSE)) at 500 / 1000 / 2000 labels, batches of 50.

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/multiclass_default.py --runs 100

Writes ``benchmarks/out/multiclass_default.json``.
"""

from __future__ import annotations

from design_rows import design_rows, runs_and_seed, table_head, table_line
from sections import store

import labelwise as lw

CHECKPOINTS = (500, 1000, 2000)
#: (class shares, separation d, logit factor k, pool size)
POOLS = (((0.4, 0.35, 0.25), 1.0, 1.0, 30_000), ((0.4, 0.35, 0.25), 1.0, 3.0, 30_000),
         ((0.97, 0.02, 0.01), 2.0, 1.0, 30_000), ((0.97, 0.02, 0.01), 2.0, 3.0, 30_000),
         ((0.997, 0.002, 0.001), 3.0, 1.0, 200_000), ((0.997, 0.002, 0.001), 3.0, 3.0, 200_000))
MEASURES = ("accuracy", "macro_f1")
DESIGNS = ("passive", "default", "stratified")


def run(spec: tuple, runs: int, seed: int) -> dict:
    """One pool: per measure and design, MSE, coverage and width ratio at the checkpoints."""
    freqs, separation, k, n_items = spec
    pool = lw.make_multiclass_pool(n_items, class_shares=freqs, separation=separation, logit_scale=k, seed=1)
    rows = design_rows(pool, MEASURES, DESIGNS, CHECKPOINTS, runs, seed)
    return {"freqs": list(spec[0]), "separation": spec[1], "k": spec[2], "n_items": spec[3], "rows": rows}


def summary_section(data: dict) -> str:
    """Markdown: per pool, measure and design, MSE over passive's, coverage and width per checkpoint."""
    a = data["args"]
    out = ["## The default design on multi-class pools", "",
           (f"`OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/multiclass_default.py --runs {a['runs']} --seed "
            f"{a['seed']}`: generated 3-class pools (class shares, separation d, probabilities' logits times k; "
            "k = 3 over-confident), batches of 50, "
            f"{a['runs']} runs. `default` is `stratified` where the classes besides the most common one hold at "
            "least 10% of the items, else `online-poisson`, whose oracle model temperature-scales the "
            "probabilities to the labels. Width = mean width / (3.92 RMSE)."), "",
           *table_head(CHECKPOINTS, "MSE/passive")]
    for pool in data["pools"]:
        name = f"{pool['n_items']:,} items, shares {pool['freqs']}, d = {pool['separation']:g}, k = {pool['k']:g}"
        passive = {r["measure"]: r["mse"] for r in pool["rows"] if r["design"] == "passive"}
        for row in pool["rows"]:
            if row["design"] == "passive":
                continue
            ratios = [f"{m / p:.2f}" for m, p in zip(row["mse"], passive[row["measure"]], strict=True)]
            out.append(table_line(name, row, ratios))
    return "\n".join(out) + "\n"


def main() -> None:
    args = runs_and_seed(__doc__)
    store("multiclass_default", {"args": vars(args), "pools": [run(spec, args.runs, args.seed) for spec in POOLS]})


if __name__ == "__main__":
    main()
