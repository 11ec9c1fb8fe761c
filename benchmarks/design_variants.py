"""Variants of a design side by side on chosen pools of the robustness grid: what a setting changes.

Each variant is ``name:key=value,...`` (``;``-separated), run with
``labelwise.simulate`` on the same pools and seeds as ``passive``; the table
gives, at 500/1000/2000 labels, the MSE over passive's, the coverage of the
95% interval and the width ratio (mean width / (3.92 RMSE)), and the MSE at
2000 labels. Pools are named as in :mod:`robustness` (``0.3-x3-weak``:
prevalence, logit scale k of the probabilities, separation) or ``abt-buy``
/ ``dblp-acm``. A vector measure (``pr_curve``) is summarised over its components (:func:`summary`).

The settings of ``online-poisson`` chosen in issue 11 were measured with::

    python benchmarks/design_variants.py --pools 0.5-x1-weak,0.3-x3-weak,0.3-x1-weak,0.05-x3-strong,\\
0.05-x1-weak,0.001-x3-strong,0.001-x0.5-strong,abt-buy,dblp-acm \\
        --designs "online-poisson;online-poisson:gamma=0;online-poisson:hedge=0.9;\\
online-poisson:estimator=difference;online-poisson:calibration=none,prior_strength=10"
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from grid import (
    BATCH_SIZE,
    BUDGET,
    CALIBRATIONS,
    COVERAGE_TARGET,
    DEFAULT_N,
    MIN_POSITIVES,
    OUT,
    REFERENCE,
    WIDTH_FROM,
    WIDTH_TARGET,
    PoolSpec,
    grid_specs,
    parse_designs,
    real_specs,
)
from pools import DATASETS
from results import fmt_mse, fmt_ratio

import labelwise as lw
from labelwise.simulate import covers

CHECKPOINTS = (500, 1000, 2000)
#: How a vector measure's section reads (:func:`summary`).
CURVE_NOTE = (", over the curve's components with a defined truth: MSE their mean, coverage their mean (pointwise), "
              "width their summed mean widths / (3.92 summed RMSEs)")


def spec_of(name: str, datasets: Path, pool_seed: int = 1) -> PoolSpec:
    """The grid pool (``<prevalence>-x<k>-<separation>``, generated with ``pool_seed``: the grid's is 1) or real pool
    of that name."""
    if "-x" not in name:
        return real_specs(datasets, [name])[0]
    prevalence, k, separation = name.rsplit("-", 2)
    calibration = {v: c for c, v in CALIBRATIONS.items()}[float(k[1:])]
    return grid_specs([float(prevalence)], [calibration], [separation], n=DEFAULT_N, min_positives=MIN_POSITIVES,
                      threshold="break-even", pool_seed=pool_seed)[0]


def run(task: tuple) -> dict:
    """One variant on one pool: per-run estimates and interval ends at the checkpoints, shape (checkpoints, runs),
    or (checkpoints, runs, components) with a truth per component for a vector measure such as ``pr_curve``."""
    spec, label, name, settings, oracle, measure, runs, seed = task
    pool = spec.load()
    result = lw.simulate(pool, lw.make_measure(measure, pool), name, design_params=settings or None, oracle=oracle,
                         budget=BUDGET, batch_size=BATCH_SIZE, repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
    scalar = len(result.names) == 1
    truth = np.atleast_1d(result.true_value)
    ends = {key: (a[..., 0] if scalar else a).tolist()
            for key, a in (("values", result.values), ("lower", result.lower), ("upper", result.upper))}
    return {"pool": spec.name, "design": label, "truth": float(truth[0]) if scalar else truth.tolist(), **ends,
            "seconds_per_run": result.seconds_per_run}


def summary(entry: dict) -> dict:
    """MSE, coverage and width ratio per checkpoint.

    For a vector measure (a curve) they summarise the components whose true value is defined: the MSE is the
    components' mean (the curve's mean squared error), the coverage the mean of the components' (pointwise), the
    width ratio the sum of their mean widths over 3.92 times the sum of their RMSEs, so an exactly estimated
    component (recall at a threshold below every score) adds nothing to either. A scalar's are its own."""
    v, lo, hi = (np.atleast_3d(entry[k]) for k in ("values", "lower", "upper"))  # (checkpoints, runs, components)
    t = np.atleast_1d(entry["truth"])
    kept = np.isfinite(t)
    v, lo, hi, t = v[..., kept], lo[..., kept], hi[..., kept], t[kept]
    mse = ((v - t) ** 2).mean(axis=1)
    cover = covers(lo, hi, t).mean(axis=(1, 2))
    spread = 3.92 * np.sqrt(mse).sum(axis=1)
    width = np.divide((hi - lo).mean(axis=1).sum(axis=1), spread, out=np.full(spread.shape, np.inf), where=spread > 0)
    return {"mse": mse.mean(axis=1), "cover": cover, "width": width}


def misses(s: dict) -> list[str]:
    """The checkpoints where a variant misses issue 11's interval targets: coverage below
    :data:`~grid.COVERAGE_TARGET`, width ratio above :data:`~grid.WIDTH_TARGET` from
    :data:`~grid.WIDTH_FROM` labels on (an exact estimate, width ratio inf, is not a width miss)."""
    out = []
    for i, n in enumerate(CHECKPOINTS):
        if s["cover"][i] < COVERAGE_TARGET:
            out.append(f"cov@{n}")
        if n >= WIDTH_FROM and WIDTH_TARGET < s["width"][i] < np.inf:
            out.append(f"width@{n}")
    return out


def summary_section(data: dict) -> str:
    """Markdown: per pool and variant, MSE over passive's, coverage and width ratio, and the interval targets missed.

    A run stored under another ``--out-name`` (``out/design_variants_<suffix>.json``) is a section of its own,
    headed by its suffix (see ``sections.NAMED_RUNS``)."""
    return variants_table(data)


def variants_table(data: dict) -> str:
    """One run's section: a heading, its command, then per pool and variant the checkpoints' MSE/passive, coverage,
    width."""
    a = data["args"]
    suffix = a.get("out_name", "design_variants").removeprefix("design_variants").lstrip("_")
    by = {(r["pool"], r["design"]): r for r in data["results"]}
    pools = list(dict.fromkeys(r["pool"] for r in data["results"]))
    labels = [r["design"] for r in data["results"] if r["pool"] == pools[0] and r["design"] != REFERENCE]
    head = " | ".join(f"MSE/passive {n} | cov {n} | width {n}" for n in CHECKPOINTS)
    note = CURVE_NOTE if isinstance(data["results"][0]["truth"], list) else ""
    out = [
        f"## Variants of a design on chosen pools{f': `{suffix}`' if suffix else ''}", "",
        (f"`python benchmarks/design_variants.py --pools {a['pools']} --designs \"{a['designs']}\" --measure "
         f"{a['measure']} --runs {a['runs']} --seed {a['seed']}{out_name(a)} --datasets <shared datasets>`: {a['measure']}, budget "
         f"{BUDGET} in batches of {BATCH_SIZE}, {a['runs']} runs per variant and pool. Width = mean width / (3.92 "
         f"RMSE){note}; misses: coverage below {COVERAGE_TARGET} (500+ labels) or width above {WIDTH_TARGET:g} "
         f"({WIDTH_FROM}+ labels)."), "",
        f"| pool | variant | {head} | MSE {CHECKPOINTS[-1]} | misses |",
        "|---|---|" + "---|" * (3 * len(CHECKPOINTS) + 2),
    ]
    for pool in pools:
        ref = summary(by[(pool, REFERENCE)])
        for label in labels:
            s = summary(by[(pool, label)])
            cells = " | ".join(f"{s['mse'][i] / ref['mse'][i]:.2g} | {s['cover'][i]:.2f} | "
                               f"{fmt_ratio(s['width'][i])}" for i in range(len(CHECKPOINTS)))
            out.append(f"| {pool} | `{label}` | {cells} | {fmt_mse(s['mse'][-1])} | "
                       f"{', '.join(misses(s)) or 'none'} |")
    return "\n".join(out) + "\n"


def out_name(args: dict) -> str:
    """The ``--out-name`` option of a stored run's command, empty for the default name."""
    name = args.get("out_name", "design_variants")
    return "" if name == "design_variants" else f" --out-name {name}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", required=True, help="comma-separated pool names")
    ap.add_argument("--designs", required=True, help="';'-separated name:key=value,... variants")
    ap.add_argument("--measure", default="f1")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    ap.add_argument("--out-name", default="design_variants",
                    help="JSON name in benchmarks/out: design_variants, or design_variants_<suffix> for a run "
                         "RESULTS.md shows as a section of its own")
    args = ap.parse_args()
    if args.out_name != "design_variants" and not args.out_name.startswith("design_variants_"):
        ap.error("--out-name: design_variants or design_variants_<suffix> (RESULTS.md shows only those)")
    specs = [spec_of(name.strip(), args.datasets) for name in args.pools.split(",") if name.strip()]
    designs = parse_designs(args.designs)
    tasks = [(spec, *design, args.measure, args.runs, args.seed) for spec in specs for design in designs]
    with ProcessPoolExecutor(args.jobs) as ex:
        results = list(ex.map(run, tasks))
    by = {(r["pool"], r["design"]): r for r in results}
    head = " | ".join(f"MSE/p {c} cov width" for c in CHECKPOINTS)
    for spec in specs:
        ref = summary(by[(spec.name, REFERENCE)])
        truth = np.atleast_1d(by[(spec.name, REFERENCE)]["truth"])
        shown = f"truth {truth[0]:.4f}" if truth.size == 1 else f"{truth.size} components"
        print(f"\n== {spec.name} ({args.measure}, {shown}, {args.runs} runs)")
        print(f"  {'design':<60} {head} | MSE@2000 | s/run")
        for label, *_ in designs:
            s = summary(by[(spec.name, label)])
            cells = " | ".join(f"{s['mse'][i] / ref['mse'][i]:6.2f} {s['cover'][i]:.2f} {s['width'][i]:5.2f}"
                               for i in range(len(CHECKPOINTS)))
            print(f"  {label:<60} {cells} | {s['mse'][-1]:.2e} | {by[(spec.name, label)]['seconds_per_run']:.2f}")
    data = {"args": vars(args) | {"datasets": str(args.datasets)}, "results": results}
    print("\n" + variants_table(data))
    OUT.mkdir(exist_ok=True)
    (OUT / f"{args.out_name}.json").write_text(json.dumps(data))
    print(f"wrote {OUT / args.out_name}.json")


if __name__ == "__main__":
    main()
