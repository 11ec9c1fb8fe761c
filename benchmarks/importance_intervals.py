"""The ``importance`` design's 95% interval, with and without the oracle model's part, on the robustness grid.

``importance`` draws from a static proposal whose defensive mixture gives
every item at least ``defensive / N`` of the mass.  Its plug-in interval
(Marchant & Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation
under Extreme Class Imbalance", KDD 2021, sec. 3.3.2) is the sample variance
of the weighted losses, which misses the rare heavy-weight positives the
scores call negatives in most runs.  The default interval
(``variance="mixture"``) adds the variance the oracle model sees in the
items not labeled yet, with the scores' Platt recalibration averaged over its
parameters' posterior (:mod:`labelwise.designs.importance`).

For every pool of the grid of :mod:`robustness` (``--prevalences``,
``--calibrations``, ``--separations``, ``--real`` select part of it) the
script runs the ``--intervals`` variants -- ``importance`` (default),
``importance`` with ``variance=plugin`` and with
``calibration=platt-posterior`` -- and ``passive``, ``--runs`` times (F1, 2000
labels in batches of 50), and reports,
at 500/1000/2000 labels, the coverage of the 95% interval and the width ratio
(mean width / (3.92 RMSE)).  The targets (those of :mod:`robustness`):
coverage >= 0.93 at every one of these checkpoints, width ratio <= 2 from
1000 labels on.  Outputs: a markdown table on stdout,
``out/importance_intervals.{json,png}``.

    PYTHONPATH=src nice -n 10 python benchmarks/importance_intervals.py --runs 100 --jobs 2
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import shlex
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from grid import (
    CALIBRATIONS,
    COVERAGE_TARGET,
    DEFAULT_N,
    MIN_POSITIVES,
    PREVALENCES,
    SEPARATIONS,
    WIDTH_FROM,
    WIDTH_TARGET,
    PoolSpec,
    cells,
    design_entries,
    grid_specs,
    real_specs,
)
from pools import DATASETS, POOLS
from results import fmt_mse, git_revision

OUT = Path(__file__).resolve().parent / "out"
#: label -> (design, settings)
VARIANTS = {"importance": ("importance", {}), "importance (plug-in)": ("importance", {"variance": "plugin"}),
            "importance (platt-posterior)": ("importance", {"calibration": "platt-posterior"}),
            "passive": ("passive", {})}
#: How the table names each variant.
INTERVALS = {"importance": "model (default)", "importance (plug-in)": "plug-in",
             "importance (platt-posterior)": "model, posterior recalibration"}
SHOWN = (500, 1000, 2000)


def run_pool(spec: PoolSpec, runs: int, seed: int, labels: tuple[str, ...]) -> dict:
    """The variants ``labels`` (and passive) on one pool, in the layout of :func:`grid.run_pool`."""
    pool = spec.load()
    designs = [(label, *VARIANTS[label], None) for label in (*labels, "passive")]
    entries = design_entries(pool, "f1", designs, runs, seed)
    print(f"{spec.name:<22} done", flush=True)
    return {"name": spec.name, "n_items": pool.n_items, "positives": int(np.sum(pool.labels)), "results": entries}


def rows(data: dict) -> list[dict]:
    """Per pool and variant: coverage, width ratio and MSE at the shown checkpoints, and the misses."""
    out = []
    for pool in data["pools"]:
        for label in INTERVALS:
            cs = {c.labels: c for c in cells(pool, label) or []}
            if not cs:
                continue
            shown = [cs[n] for n in SHOWN if n in cs]
            misses = [f"cov {c.coverage:.2f}@{c.labels}" for c in shown if c.coverage < COVERAGE_TARGET]
            misses += [f"width {c.width:.2f}@{c.labels}" for c in shown
                       if c.labels >= WIDTH_FROM and math.isfinite(c.width) and c.width > WIDTH_TARGET]
            out.append({"pool": pool["name"], "design": label, "cells": shown, "misses": misses})
    return out


def table(data: dict) -> str:
    head = ["pool", "interval"] + [f"cov {n}" for n in SHOWN] + [f"width {n}" for n in SHOWN] + ["MSE 2000",
                                                                                               "misses"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows(data):
        c = row["cells"]
        lines.append("| " + " | ".join([row["pool"], INTERVALS[row["design"]]] + [f"{x.coverage:.2f}" for x in c]
                                       + [f"{x.width:.2f}" for x in c] + [fmt_mse(c[-1].mse),
                                                                          ", ".join(row["misses"]) or "-"]) + " |")
    return "\n".join(lines)


def summary_section(data: dict) -> str:
    """The section of ``RESULTS.md``: coverage and width of ``importance``'s interval, model vs plug-in."""
    meta = data["meta"]
    n = len(data["pools"])
    tally = ", ".join(f"{INTERVALS[label]} {sum(not r['misses'] for r in rows(data) if r['design'] == label)} of {n}"
                      for label in INTERVALS if any(r["design"] == label for r in rows(data)))
    return "\n".join([
        "## The importance design's interval: the oracle model's part for the items not labeled yet",
        "",
        (f"F1, {meta['runs']} runs per pool, 2000 labels in batches of 50; the generated pools of "
         "`benchmarks/robustness.py` and the shared real pools. **cov**: coverage of the 95% interval; "
         "**width**: mean width / (3.92 RMSE). Targets: coverage >= "
         f"{COVERAGE_TARGET} at 500/1000/2000 labels, width <= {WIDTH_TARGET} from {WIDTH_FROM} labels on. Pools "
         f"meeting every target: {tally}."),
        "",
        table(data),
        "",
        f"Reproduce: `{meta['command']}` ({meta['elapsed'] / 60:.1f} min, git {meta['git']}).",
    ])


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(SHOWN), figsize=(4 * len(SHOWN), 0.25 * len(data["pools"]) + 2), sharey=True)
    names = [p["name"] for p in data["pools"]]
    for ax, n in zip(axes, SHOWN):
        for label, marker in zip(INTERVALS, "oxs"):
            cov = [next((c.coverage for c in cells(p, label) or [] if c.labels == n), np.nan) for p in data["pools"]]
            ax.plot(cov, range(len(names)), marker, label=label)
        ax.axvline(COVERAGE_TARGET, color="grey", ls="--")
        ax.set_title(f"{n} labels")
        ax.set_xlabel("coverage of the 95% interval")
    axes[0].set_yticks(range(len(names)), names, fontsize=7)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def split_list(text: str | None, default, cast=str) -> tuple:
    return tuple(default) if text is None else tuple(cast(t) for t in text.split(",") if t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--intervals", default=",".join(INTERVALS),
                    help=f"comma-separated subset of: {', '.join(INTERVALS)}")
    ap.add_argument("--prevalences", default=None, help="comma-separated (default: the grid's)")
    ap.add_argument("--calibrations", default=None, help=f"subset of {','.join(CALIBRATIONS)}")
    ap.add_argument("--separations", default=None, help=f"subset of {','.join(SEPARATIONS)}")
    ap.add_argument("--real", default=None, help=f"subset of {','.join(POOLS)}, or none")
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--from-json", type=Path, default=None, help="re-render from this script's JSON")
    args = ap.parse_args()
    if args.from_json:
        data = json.loads(args.from_json.read_text())
    else:
        real = () if args.real == "none" else split_list(args.real, POOLS)
        specs = grid_specs(split_list(args.prevalences, PREVALENCES, float), split_list(args.calibrations, CALIBRATIONS),
                           split_list(args.separations, SEPARATIONS), n=DEFAULT_N, min_positives=MIN_POSITIVES,
                           threshold="break-even", pool_seed=1) + real_specs(args.datasets, real)
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.jobs) as ex:
            labels = tuple(label for label in args.intervals.split(",") if label)
            pools = list(ex.map(run_pool, specs, [args.runs] * len(specs), [args.seed] * len(specs),
                                [labels] * len(specs)))
        data = {"meta": {"runs": args.runs, "seed": args.seed, "git": git_revision(),
                         "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M"),
                         "elapsed": time.perf_counter() - t0,
                         "command": "python benchmarks/importance_intervals.py " + shlex.join(sys.argv[1:])},
                "pools": pools}
        OUT.mkdir(exist_ok=True)
        (OUT / "importance_intervals.json").write_text(json.dumps(data))
    print(summary_section(data))
    plot(data, OUT / "importance_intervals.png")
    print(f"\nwrote {OUT / 'importance_intervals.json'} and .png")


if __name__ == "__main__":
    main()
