"""Poisson against importance sampling: error and interval calibration (Yilmaz et al. 2021, sec. 5.1, Figures 2-3).

The experiment of Yilmaz et al., "Sample Efficient Model Evaluation"
(arXiv:2109.12043, 2021), sec. 5.1.  Runs ``labelwise simulate --json``
(through :mod:`designs_f1`) for the designs ``passive`` (uniform),
``importance``, ``poisson`` (Yilmaz et al.'s Bernoulli sampling),
``online-poisson`` and ``ais`` on

* ``digits8``, the "8 vs rest" pool of :mod:`digits_pool` (about 900
  items, rebuilt into ``benchmarks/out/`` on every run; needs the ``bench``
  extra), with checkpoints at fractions of the pool (``--fractions``,
  default 5%, 10%, ..., 50%), as in Yilmaz et al.'s MNIST experiment, and
* the real pools ``abt-buy`` and ``dblp-acm`` from ``../shared/datasets``
  (skipped when absent), with checkpoints at label counts
  (``--checkpoints``, default 250, 500, 1000, 2000).

Each run's budget is its pool's largest checkpoint; ``poisson`` plans its
inclusion probabilities for that budget and the smaller checkpoints are
prefixes of the plan.  ``--replan LABEL`` instead runs that entry once per
checkpoint with the budget equal to the checkpoint (one optimal design per
M, as in Yilmaz et al.'s Figure 2), which costs one simulation per checkpoint.

Intervals are at ``--level`` (default 90%, as in their Figure 3).  Prints one
table (MSE, bias, undefined fraction, coverage, interval width, seconds
per run, per checkpoint) and writes to ``benchmarks/out/``:
``poisson_designs_<measure>.json`` (the ``simulate`` objects, each with its
``label``), ``poisson_designs_<measure>_error.png`` (RMSE against the
fraction or number of items labeled, log scale; an RMSE of exactly 0, an
exact estimate in every run, is a triangle on the bottom edge) and
``poisson_designs_<measure>_coverage.png`` (empirical coverage against
labels, with the nominal level and its +-2 standard error band for the
number of repeats).

Usage::

    .venv/bin/python benchmarks/poisson_designs.py [--repeats 100] [--pools digits8,abt-buy,dblp-acm]
    .venv/bin/python benchmarks/poisson_designs.py --pools digits8 --repeats 200 \
        --designs passive,importance,poisson,poisson-M=poisson --replan poisson-M
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from designs_f1 import Entry, parse_entries, run_simulate, table
from digits_pool import DIGITS_POOL, write_digits_pool
from pools import DATASETS, POOLS, pool_paths

HERE = Path(__file__).resolve().parent
#: The pool built by :mod:`digits_pool`, whose checkpoints are fractions of its size.
DIGITS = DIGITS_POOL.name.split(".")[0]
DESIGNS = "passive,importance,poisson,online-poisson,ais"
FRACTIONS = ",".join(f"{k / 20:g}" for k in range(1, 11))  # 0.05, 0.1, ..., 0.5
CHECKPOINTS = "250,500,1000,2000"


@dataclass(frozen=True)
class Job:
    """One ``simulate`` call: pool file, design entry and the label checkpoints (the last is the budget)."""

    pool: Path
    entry: Entry
    marks: tuple[int, ...]


def parse_numbers(value: str, kind: type, option: str) -> list:
    """``"0.05,0.1"`` -> ``[0.05, 0.1]`` for ``kind=float``; raises ``ValueError`` naming ``option``."""
    try:
        numbers = [kind(s) for s in value.split(",") if s.strip()]
    except ValueError:
        raise ValueError(f"{option}: expected comma-separated numbers, got {value!r}") from None
    if not numbers or min(numbers) <= 0:
        raise ValueError(f"{option}: give positive numbers, got {value!r}")
    return numbers


def fraction_marks(fractions: Sequence[float], n_items: int) -> tuple[int, ...]:
    """Label counts ``round(f * n_items)`` (at least 1), sorted and distinct."""
    if max(fractions) > 1:
        raise ValueError(f"--fractions: fractions of the pool must be at most 1, got {max(fractions)}")
    return tuple(sorted({max(1, round(f * n_items)) for f in fractions}))


def resolve_pools(names: Sequence[str], datasets: Path) -> list[tuple[Path, bool]]:
    """``(path, by_fraction)`` for each requested pool that is available, with a notice for each skipped one.

    ``digits8`` is built afresh with :func:`digits_pool.write_digits_pool`
    (skipped when scikit-learn is missing); the others are looked up under
    ``datasets``.
    """
    real = [name for name in names if name != DIGITS]
    paths = {p.name.split(".")[0]: p for p in pool_paths(datasets, real)} if real else {}
    found = []
    for name in names:
        if name == DIGITS:
            try:
                found.append((write_digits_pool(DIGITS_POOL), True))
            except ImportError as exc:
                print(f"skipping {DIGITS}: {exc}")
        elif name in paths:
            found.append((paths[name], False))
        elif paths:  # pool_paths has announced the case of none found
            print(f"skipping {name}: not under {datasets}")
    return found


def count_rows(path: Path) -> int:
    """Number of data rows of a CSV file (its header excluded)."""
    with open(path) as f:
        return sum(1 for _ in f) - 1


def make_jobs(pools: Sequence[tuple[Path, list[int]]], entries: Sequence[Entry], replan: set[str]) -> list[Job]:
    """One job per pool and entry, or per pool, entry and checkpoint for the entries in ``replan``."""
    jobs = []
    for path, marks in pools:
        for entry in entries:
            if entry.label in replan:
                jobs += [Job(path, entry, (mark,)) for mark in marks]
            else:
                jobs.append(Job(path, entry, tuple(marks)))
    return jobs


def merge_replanned(results: list[dict], replan: set[str]) -> list[dict]:
    """Join the one-checkpoint runs of each replanned entry into one result per pool and entry.

    The joined result is the largest run's, with every run's checkpoint and
    ``"replanned": true``; its ``seconds_per_run`` is that of the largest run.
    """
    merged: dict[tuple[str, str], dict] = {}
    for r in results:
        key = (r["pool"], r["label"])
        if r["label"] not in replan:
            merged[key] = r
        elif key not in merged:
            merged[key] = {**r, "replanned": True}
        else:
            joined = merged[key]
            rows = sorted(joined["checkpoints"] + r["checkpoints"], key=lambda c: c["labels"])
            if r["checkpoints"][-1]["labels"] > joined["checkpoints"][-1]["labels"]:
                joined = {**r, "replanned": True}
            merged[key] = {**joined, "checkpoints": rows}
    return list(merged.values())


def run_job(job: Job, measure: str, repeats: int, batch_size: int, seed: int, level: float) -> dict | None:
    """Run one job through :func:`designs_f1.run_simulate`; on failure print ``simulate``'s error and return None."""
    try:
        return run_simulate(job.pool, measure, job.entry, repeats, job.marks[-1], batch_size, seed,
                            checkpoints=job.marks, level=level)
    except subprocess.CalledProcessError as exc:
        tail = "\n    ".join((exc.stderr or "").strip().splitlines()[-5:])
        print(f"skipping {job.entry.label} on {job.pool.name} (labels {job.marks[-1]}): simulate failed:\n    {tail}")
        return None


def _x(result: dict, by_fraction: bool) -> np.ndarray:
    labels = np.array([c["labels"] for c in result["checkpoints"]], dtype=float)
    return labels / result["n_items"] if by_fraction else labels


def plot(results: list[dict], fraction_pools: set[str], path_error: Path, path_coverage: Path, measure: str,
         level: float) -> None:
    """Write the error figure (RMSE, log y) and the calibration figure (coverage with the nominal level)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    pools = sorted({r["pool"] for r in results}, key=lambda p: (p not in fraction_pools, p))
    for kind, path in (("error", path_error), ("coverage", path_coverage)):
        fig, axes = plt.subplots(1, len(pools), figsize=(5.5 * len(pools), 4), squeeze=False)
        for ax, pool in zip(axes[0], pools):
            by_fraction = pool in fraction_pools
            mine = [r for r in results if r["pool"] == pool]
            for r in mine:
                x = _x(r, by_fraction)
                if kind == "error":
                    rmse = np.sqrt([c["mse"] for c in r["checkpoints"]])
                    y = np.where(rmse > 0, rmse, np.nan)  # an exact estimate has no place on a log axis
                else:
                    y = [c["coverage"] for c in r["checkpoints"]]
                (line,) = ax.plot(x, y, marker="o", label=r["label"])
                if kind == "error" and np.any(rmse == 0):  # exact: a triangle on the bottom edge
                    ax.plot(x[rmse == 0], np.zeros(np.count_nonzero(rmse == 0)), marker="v", linestyle="",
                            color=line.get_color(), transform=ax.get_xaxis_transform(), clip_on=False)
            repeats = mine[0]["repeats"]
            if kind == "error":
                ax.set(yscale="log", ylabel=f"RMSE of {measure}")
            else:
                se = np.sqrt(level * (1 - level) / repeats)
                ax.axhline(level, color="black", linestyle="--", linewidth=1, label=f"nominal {level:g}")
                ax.axhspan(level - 2 * se, min(1.0, level + 2 * se), color="grey", alpha=0.15,
                           label=f"+-2 s.e. ({repeats} repeats)")
                ax.set(ylim=(max(0.0, min(ax.get_ylim()[0], level - 0.2)), 1.02),
                       ylabel=f"coverage of the {level:.0%} interval")
            if by_fraction:
                ax.set(xlabel="fraction of the pool labeled")
            else:
                marks = sorted({c["labels"] for r in mine for c in r["checkpoints"]})
                ax.set(xscale="log", xlabel="items labeled")
                ax.set_xticks(marks, [str(m) for m in marks])
                ax.xaxis.set_minor_locator(NullLocator())
            ax.set_title(f"{pool} (N={mine[0]['n_items']}, {repeats} repeats)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--pools", default=",".join((DIGITS, *POOLS)), help="comma-separated pool names")
    ap.add_argument("--designs", default=DESIGNS, help="comma-separated designs, each DESIGN or LABEL=DESIGN")
    ap.add_argument("--param", action="append", default=[], metavar="LABEL:key=value",
                    help="design parameter for the entry LABEL (repeatable)")
    ap.add_argument("--replan", default="", metavar="LABELS",
                    help="entries to run once per checkpoint with the budget equal to it")
    ap.add_argument("--fractions", default=FRACTIONS, help=f"checkpoints of {DIGITS}, as fractions of its size")
    ap.add_argument("--checkpoints", default=CHECKPOINTS, help="checkpoints of the other pools, in labels")
    ap.add_argument("--level", type=float, default=0.9, help="confidence level of the intervals")
    ap.add_argument("--measure", default="f1")
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel")
    args = ap.parse_args()
    try:
        entries = parse_entries(args.designs, args.param)
        fractions = parse_numbers(args.fractions, float, "--fractions")
        counts = parse_numbers(args.checkpoints, int, "--checkpoints")
        if not 0 < args.level < 1:
            raise ValueError(f"--level: must lie strictly between 0 and 1, got {args.level}")
        replan = {s.strip() for s in args.replan.split(",") if s.strip()}
        if unknown := replan - {e.label for e in entries}:
            raise ValueError(f"--replan: no entries labelled {', '.join(sorted(unknown))} in --designs")
        names = [s.strip() for s in args.pools.split(",") if s.strip()]
        fraction_marks(fractions, 1)  # validates the fractions before any pool is built
    except ValueError as exc:
        ap.error(str(exc))

    pools = resolve_pools(names, args.datasets)
    if not pools:
        return
    marked = [(path, list(fraction_marks(fractions, count_rows(path)) if by_fraction else sorted(set(counts))))
              for path, by_fraction in pools]
    fraction_pools = {path.name.split(".")[0] for path, by_fraction in pools if by_fraction}
    jobs = make_jobs(marked, entries, replan)
    jobs.sort(key=lambda job: -job.marks[-1])  # longest first, so the parallel runs finish together
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        runs = list(ex.map(lambda job: run_job(job, args.measure, args.repeats, args.batch_size, args.seed,
                                               args.level), jobs))
    order = {(path.name.split(".")[0], e.label): i for i, (path, e) in
             enumerate((path, e) for path, _ in marked for e in entries)}
    results = sorted(merge_replanned([r for r in runs if r is not None], replan),
                     key=lambda r: order[(r["pool"], r["label"])])
    if not results:
        return

    out = HERE / "out"
    out.mkdir(exist_ok=True)
    stem = f"poisson_designs_{args.measure}"
    (out / f"{stem}.json").write_text(json.dumps(results, indent=1))
    print(f"{args.measure}, {args.level:.0%} intervals, {args.repeats} repeats")
    print(table(results, fraction=True))
    plot(results, fraction_pools, out / f"{stem}_error.png", out / f"{stem}_coverage.png", args.measure, args.level)
    print(f"\nraw results: {out / (stem + '.json')}\nplots: {out / (stem + '_error.png')}, "
          f"{out / (stem + '_coverage.png')}")


if __name__ == "__main__":
    main()
