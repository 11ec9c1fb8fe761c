"""Robustness grid of multi-label pools: the default design's micro- and macro-F1 against uniform sampling.

The binary grid (``benchmarks/robustness.py``) checks the default design on pools of every prevalence,
calibration and separation; multi-label pools (``Pool.from_multilabel``, ``2^C`` label sets) take another
default (:func:`labelwise.designs.default_design`) and other measures, so they get a grid of their own.

Each generated pool has :data:`N_LABELS` labels. Label ``j`` is a pool of the binary grid
(:func:`grid.generate_pool`: exactly ``round(p_j N)`` positives, scores ``x = d y + N(0, 1)``, probabilities
``sigmoid(k x calibrated logit)``, the top ``N+`` by score predicted positive) with prevalence
``p_j = prevalence x`` :data:`LABEL_SHARES` ``[j]``, its own seed, and the cell's calibration ``k`` and
separation ``d``; the labels are independent. A pool is named ``<prevalence>-x<k>-<separation>`` as in the
binary grid, its prevalence that of its commonest label; ``N`` is raised until the rarest label has
``--min-positives`` positives.

Every run: budget 2000 labels in batches of 50, checkpoints 250/500/1000/2000, 95% intervals; the columns
and the targets of the check (issue 11: MSE/passive <= 1, coverage >= 0.93 from 500 labels, width ratio <= 2
from 1000) are the binary grid's.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/multilabel_grid.py --runs 100 --jobs 2
    python benchmarks/sections.py    # renders out/multilabel_grid.json into RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import shlex
import sys
import time
import zlib
from dataclasses import dataclass

import numpy as np
from grid import (
    CALIBRATIONS,
    CHECKPOINTS,
    OUT,
    REFERENCE,
    SEPARATIONS,
    TARGET_FROM,
    PoolSpec,
    by_design,
    cells,
    fmt_cov,
    generate_pool,
    run_grid,
    split_list,
    table,
)
from grid_check import check_text, fmt_coverage_split
from results import fmt_mse, fmt_ratio, git_revision
from robustness import default_table

import labelwise as lw

#: Labels per pool, and each label's prevalence as a share of the commonest label's.
N_LABELS = 4
LABEL_SHARES = (1.0, 0.5, 0.25, 0.125)
PREVALENCES = (0.3, 0.05, 1e-3)
MEASURES = ("multilabel_micro_f1", "multilabel_macro_f1")
MIN_POSITIVES = 20
DEFAULT_N = 50_000


@dataclass(frozen=True)
class MultiLabelSpec(PoolSpec):
    """A generated multi-label pool of the grid (picklable: workers rebuild it from ``params``)."""

    def load(self) -> lw.Pool:
        p = self.params
        labels = [generate_pool(n_items=p["n_items"], prevalence=p["prevalence"] * share, k=p["k"], d=p["d"],
                                threshold="break-even", seed=p["seed"] + j, name=f"label{j}")
                  for j, share in enumerate(LABEL_SHARES)]
        column = lambda field: np.stack([np.asarray(getattr(pool, field)).reshape(p["n_items"]) for pool in labels], 1)
        return lw.Pool.from_multilabel(preds=column("preds"), probs=column("probs"), labels=column("labels"),
                                       label_names=[f"label{j}" for j in range(N_LABELS)], name=self.name)


def grid_specs(prevalences, calibrations, separations, *, n: int, min_positives: int,
               pool_seed: int) -> list[MultiLabelSpec]:
    """One spec per prevalence, calibration and separation; the calibrations of a cell share labels and scores."""
    specs = []
    for prev in prevalences:
        n_items = max(n, math.ceil(min_positives / (prev * min(LABEL_SHARES))))
        for sep in separations:
            d = SEPARATIONS[sep]
            seed = zlib.crc32(f"multilabel-{pool_seed}-{prev:g}-{d:g}".encode())
            for cal in calibrations:
                k = CALIBRATIONS[cal]
                desc = (f"generated: {n_items:,} items, {N_LABELS} independent labels of prevalence "
                        + "/".join(f"{prev * s:g}" for s in LABEL_SHARES)
                        + f"; separation {d:g}; probabilities sigmoid({k:g} x calibrated logit) ({cal})")
                specs.append(MultiLabelSpec(f"{prev:g}-x{k:g}-{sep}", "generated", desc,
                                            dict(n_items=n_items, prevalence=prev, k=k, d=d, seed=seed)))
    return specs


def passive_rows(pools: list[dict]) -> list[tuple[str, dict, list]]:
    """``passive``'s cells once per prevalence and separation: it reads neither scores nor probabilities, so the
    three calibrations of a cell (same labels and predictions, same seeds) give it the same runs."""
    out, seen = [], set()
    for p in pools:
        key = (p["params"]["prevalence"], p["params"]["d"])
        cs = cells(p, REFERENCE)
        if cs is None or key in seen:
            continue
        seen.add(key)
        prev, _, sep = p["name"].rsplit("-", 2)  # the prevalence may be written 1e-05
        out.append((f"{prev}-{sep}", p, cs))
    return out


def passive_text(pools: list[dict], runs: int, measure: str) -> str:
    """``passive``'s coverage and width ratio at every checkpoint, and where it misses the coverage and width
    targets (its MSE is the reference)."""
    rows = passive_rows(pools)
    if not rows:
        return f"`{REFERENCE}` was not run."
    head = ["pool", f"true {measure}"] + [f"{col} {n}" for n in CHECKPOINTS for col in ("cov", "width")]
    body = [[name, f"{by_design(p)[REFERENCE]['summary']['true_value']:.4g}",
             *(x for c in cs for x in (fmt_cov(c.coverage), fmt_ratio(c.width)))] for name, p, cs in rows]
    misses = [[name, str(c.labels), fmt_mse(c.mse), fmt_coverage_split(c, runs), f"{c.mean_width:.2g}",
               fmt_ratio(c.width), ", ".join(c.misses())] for name, _, cs in rows for c in cs if c.misses()]
    n_cells = sum(1 for _, _, cs in rows for c in cs if c.labels >= TARGET_FROM)
    out = [(f"`{REFERENCE}` (uniform draws; one row per prevalence and separation, its runs the same at every "
            "calibration):"), "", table(head, body), "",
           f"{len(misses)} of {n_cells} pool/checkpoints of `{REFERENCE}` miss the coverage or width target."]
    if misses:
        out += ["", table(["pool", "labels", "MSE", "coverage", "mean width", "width ratio", "misses"], misses)]
    return "\n".join(out)


def summary_section(data: dict) -> str:
    """RESULTS.md section: per measure, the `default` table and where it misses the targets."""
    meta = data["meta"]
    note = f": {meta['note']}" if meta.get("note") else ""
    out = [f"## Robustness grid of multi-label pools: micro- and macro-F1{note}", "",
           (f"`{meta['command']}` on {meta['started']} UTC (git {meta['git']}; {meta['runs']} runs per design and "
            f"pool, seed {meta['seed']}; {meta['elapsed'] / 60:.0f} min, load {meta['load'][0]:.1f} to "
            f"{meta['load'][1]:.1f}). {N_LABELS} independent labels per pool, prevalences the pool's "
            f"x {'/'.join(f'{s:g}' for s in LABEL_SHARES)}; the columns and targets are the binary grid's "
            "(\"Robustness grid: the default design on pools nothing was tuned on\"); the default is "
            f"`{meta['default']}` on these pools.")]
    for measure, pools in data["measures"].items():
        out += ["", f"### {measure}", "", default_table(pools, measure), "", check_text(pools, meta["runs"], measure),
                "", passive_text(pools, meta["runs"], measure)]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100, help="runs per design and pool")
    ap.add_argument("--measures", default=",".join(MEASURES), help="comma-separated, of " + ",".join(MEASURES))
    ap.add_argument("--prevalences", default=None, help=f"of the commonest label (default {PREVALENCES})")
    ap.add_argument("--calibrations", default=None, help=f"subset of {','.join(CALIBRATIONS)}")
    ap.add_argument("--separations", default=None, help=f"subset of {','.join(SEPARATIONS)}")
    ap.add_argument("--n", type=int, default=DEFAULT_N, help="items per pool (raised to reach --min-positives)")
    ap.add_argument("--min-positives", type=int, default=MIN_POSITIVES, help="positives of the rarest label")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool-seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="pools run in this many parallel processes")
    ap.add_argument("--out-name", default="multilabel_grid",
                    help="JSON name under benchmarks/out/ (multilabel_grid-<suffix>: a RESULTS section of its own)")
    ap.add_argument("--note", default="", help="what this run is, added to its section's heading")
    args = ap.parse_args()

    specs = grid_specs(split_list(args.prevalences, PREVALENCES, float),
                       split_list(args.calibrations, tuple(CALIBRATIONS), choices=tuple(CALIBRATIONS)),
                       split_list(args.separations, tuple(SEPARATIONS), choices=tuple(SEPARATIONS)),
                       n=args.n, min_positives=args.min_positives, pool_seed=args.pool_seed)
    measures = split_list(args.measures, MEASURES, choices=MEASURES)
    first = specs[0].load()
    default = lw.designs.default_design(first, lw.make_measure(measures[0], first))
    started, load_start, t0 = dt.datetime.now(dt.UTC), os.getloadavg()[0], time.perf_counter()
    results = {}
    for measure in measures:
        print(f"{measure}: {len(specs)} pools x default/{REFERENCE}, {args.runs} runs", flush=True)
        results[measure] = run_grid(specs, ["default", REFERENCE], measure, args.runs, args.seed, args.jobs)
        print(check_text(results[measure], args.runs, measure), passive_text(results[measure], args.runs, measure),
              sep="\n\n", flush=True)
    meta = {"command": shlex.join(["python", "benchmarks/multilabel_grid.py", *sys.argv[1:]]),
            "started": f"{started:%Y-%m-%d %H:%M}", "git": git_revision(), "runs": args.runs, "seed": args.seed,
            "elapsed": time.perf_counter() - t0, "load": [load_start, os.getloadavg()[0]], "default": default,
            "note": args.note}
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{args.out_name}.json"
    path.write_text(json.dumps({"meta": meta, "measures": results}))
    print(f"raw results: {path}")


if __name__ == "__main__":
    main()
