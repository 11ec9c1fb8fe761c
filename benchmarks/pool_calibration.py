"""`labelwise calibrate` on pools whose truth is known: the bins' label means as they are vs shrunk toward the scores.

A session of the ``default`` design (F1, batches of 50) labels each pool; at 300 and 1000 labels the pool's
probabilities are recalibrated from its design-weighted labels (:func:`labelwise.calibrate_pool`) by the
spline and by isotonic regression, each unshrunk (``shrink=False``, the command before: a bin's rate is its
labels' weighted mean, 0 in a bin without a positive) and shrunk (``shrink=True``: the posterior mean under a
Beta prior centred on the bin's mean probability). Per variant, averaged over the sessions, against the pool's
true labels:

* ``certain``: the share of the pool's items given a probability of exactly 0 or 1;
* ``E[pos] low half``: the calibrated probabilities' sum over the pool's lowest-scored half (by the raw
  probability) against the positives there (``true``);
* ``log-loss`` (probabilities clipped to [1e-15, 1 - 1e-15], so that a positive at 0 counts 34.5 nats) and
  ``ECE`` (10 equal-count bins) over the whole pool;
* the report's ``ece_after`` (on the labels the map was fitted to) and ``ece_after_cv`` (5-fold), which
  estimate the whole pool's design-weighted error.

The generated pools are the robustness grid's (``benchmarks/grid.py``: probabilities sigmoid(k x calibrated
logit), k = 0.5 under-confident, 1 calibrated, 3 over-confident, weak separation d = 2, 50,000 items); the real
ones are read from ``--datasets``.

Run::

    OMP_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/pool_calibration.py --runs 20 \\
        --datasets /work/shared/datasets

Writes ``benchmarks/out/pool_calibration.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from grid import DEFAULT_N, MIN_POSITIVES, PoolSpec, grid_specs, real_specs
from pools import DATASETS, POOLS
from sections import store

import labelwise as lw
from labelwise.logs import calibrate_pool, expected_calibration_error
from labelwise.oracle.annotators import TruthOracle

#: (prevalences, calibrations) of the generated pools: rare and under-/over-confident or calibrated, and balanced.
GENERATED = (((1e-3, 1e-2), ("under", "calibrated", "over")), ((0.5,), ("calibrated",)))
BUDGETS = (300, 1000)
#: (label, method, shrink) of each variant; "raw" is the pool's own probabilities.
VARIANTS = (("spline", "spline", False), ("spline shrunk", "spline", True), ("isotonic", "isotonic", False),
            ("isotonic shrunk", "isotonic", True))
METRICS = ("certain", "low_half", "log_loss", "ece", "ece_after", "ece_after_cv")
CLIP = 1e-15


def pools(datasets: Path) -> list[PoolSpec]:
    """The generated pools (the robustness grid's, weak separation) and the real ones present under ``datasets``."""
    specs = [spec for prevalences, calibrations in GENERATED
             for spec in grid_specs(prevalences, calibrations, ["weak"], n=DEFAULT_N, min_positives=MIN_POSITIVES,
                                    threshold="break-even", pool_seed=1)]
    return specs + real_specs(datasets, POOLS)


def pool_metrics(p: np.ndarray, labels: np.ndarray, low: np.ndarray) -> dict:
    """Certain share, expected positives in the low half, log-loss and ECE of probabilities ``p`` on the pool."""
    q = np.clip(p, CLIP, 1 - CLIP)
    return {"certain": float(np.mean((p == 0) | (p == 1))), "low_half": float(p[low].sum()),
            "log_loss": float(-np.mean(labels * np.log(q) + (1 - labels) * np.log1p(-q))),
            "ece": expected_calibration_error(p, labels)}


def run(spec: PoolSpec, runs: int, seed: int) -> dict:
    """Every variant's metrics per budget, averaged over ``runs`` sessions of the default design."""
    pool = spec.load()
    raw, labels = pool.probs[:, 0], np.asarray(pool.labels, dtype=float)
    low = np.zeros(pool.n_items, bool)
    low[np.argsort(raw, kind="stable")[: pool.n_items // 2]] = True
    sums = {(b, v[0]): dict.fromkeys(METRICS, 0.0) for b in BUDGETS for v in VARIANTS}
    for r in range(runs):
        session = lw.Session(pool, lw.make_measure("f1", pool), "default", seed=seed + r)
        for budget in BUDGETS:
            session.run(TruthOracle(pool), budget - session.n_labels, batch_size=50)
            for label, method, shrink in VARIANTS:
                calibrated, report = calibrate_pool(session, method=method, shrink=shrink)
                row = pool_metrics(calibrated.probs[:, 0], labels, low) | {
                    "ece_after": report[0]["ece_after"], "ece_after_cv": report[0]["ece_after_cv"]}
                for key in METRICS:
                    sums[budget, label][key] += row[key] / runs
    rows = [{"budget": b, "variant": v, **m} for (b, v), m in sums.items()]
    return {"name": spec.name, "n_items": pool.n_items, "positives": int(labels.sum()),
            "true_low_half": int(labels[low].sum()), "raw": pool_metrics(raw, labels, low), "rows": rows}


def summary_section(data: dict) -> str:
    """Markdown: per pool, budget and variant, the metrics of the module docstring (raw probabilities first)."""
    a = data["args"]
    out = ["## Pool calibration: shrunk vs unshrunk bins", "",
           (f"`OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/pool_calibration.py --runs {a['runs']} --seed "
            f"{a['seed']} --datasets /work/shared/datasets`: the pool's probabilities recalibrated from the labels "
            f"of a `default` session (F1, batches of 50) at {' and '.join(map(str, BUDGETS))} labels, means over "
            f"{a['runs']} sessions. `certain`: share of items at probability exactly 0 or 1; `E[pos] low half`: "
            "the probabilities' sum over the pool's lowest-scored half (`true`: its positives); log-loss (clipped "
            "at 1e-15) and ECE (10 equal-count bins) over the whole pool; `ECE fit` / `ECE 5-fold`: the report's "
            "`ece_after` / `ece_after_cv` (design-weighted, over the labels). Generated pools: "
            "`<prevalence>-x<k>-weak`, sigmoid(k x calibrated logit), separation 2, 50,000 items."), "",
           "| pool | labels | variant | certain | E[pos] low half (true) | log-loss | ECE | ECE fit | ECE 5-fold |",
           "|---|---|---|---|---|---|---|---|---|"]
    for pool in data["pools"]:
        raw = pool["raw"]
        out.append(f"| {pool['name']} ({pool['positives']:,} pos) | - | raw | {raw['certain']:.2f} | "
                   f"{raw['low_half']:.3g} ({pool['true_low_half']}) | {raw['log_loss']:.4g} | {raw['ece']:.2g} | "
                   "| |")
        for row in pool["rows"]:
            out.append(f"| {pool['name']} | {row['budget']} | {row['variant']} | {row['certain']:.2f} | "
                       f"{row['low_half']:.3g} ({pool['true_low_half']}) | {row['log_loss']:.4g} | "
                       f"{row['ece']:.2g} | {row['ece_after']:.2g} | {row['ece_after_cv']:.2g} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    args = ap.parse_args()
    results = []
    for spec in pools(args.datasets):
        results.append(run(spec, args.runs, args.seed))
        print(f"{spec.name}: done", flush=True)
    store("pool_calibration", {"args": {"runs": args.runs, "seed": args.seed}, "pools": results})


if __name__ == "__main__":
    main()
