"""Precision-recall curves estimated by adaptive importance sampling (cf. Marchant & Rubinstein 2021, Figure 4).

The figure follows Figure 4 of Marchant & Rubinstein, "Needle in a Haystack:
Label-Efficient Evaluation under Extreme Class Imbalance" (KDD 2021).  For
each pool in ``../shared/datasets`` (skipped when absent), ``--runs``
independent runs of the ``ais`` design estimate the system's PR curve from
``--budget`` labels (batches of ``--batch-size``).  Every estimated curve is
drawn thin and translucent with the true curve on top in black, one panel per
pool, in ``benchmarks/out/pr_curves.png``.  The printed table gives, per pool,
the mean absolute error of precision and of recall over thresholds and runs,
the fraction of (threshold, run) pairs whose 95% interval covered the truth,
the fraction of undefined estimates and the seconds per run.

Thresholds.  The curve is measured at about ``--thresholds`` thresholds put
at the scores of the items ranked 1, ..., ``top * N`` on a geometric grid of
ranks (score quantiles of the top of the ranking, denser towards the top).
Evenly spaced thresholds over the score range do not give a readable curve
on these pools: the scores have a long negative tail (dblp-acm spans -35.6 to
1.5), so an even grid puts only ~5 of 50 thresholds above the lowest-scoring
positive and the curve collapses to a few points; on abt-buy it spends half
its thresholds where recall is already 1.  Geometric ranks resolve the
high-precision end (the first few dozen items, where the positives are) and
still reach recall 1 (the deepest positive is at rank 1,570 of 53,753 on
abt-buy and 43 of 53,946 on dblp-acm; the default ``top`` of 5% reaches ranks
~2,700).  Only the system's scores are used to place the thresholds, never the
labels.  Tied scores (dblp-acm) merge thresholds, so the grid is refined until
it has ``--thresholds`` distinct ones or runs out of distinct scores.

Usage::

    .venv/bin/python benchmarks/pr_curve_figure.py [--runs 100] [--budget 5000] [--jobs 2]
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np
from pools import DATASETS, pool_paths

from labelwise import Pool, PRCurve, Session, TruthOracle, make_design, true_value

HERE = Path(__file__).resolve().parent
COVER_TOL = 1e-9  # an exact estimate with a zero-width interval counts as covering


def top_rank_thresholds(scores: np.ndarray, n_thresholds: int = 50, top: float = 0.05) -> np.ndarray:
    """About ``n_thresholds`` distinct scores of the items at geometrically spaced ranks 1..``top * N``."""
    ranked = np.sort(np.asarray(scores, dtype=float))[::-1][: max(1, round(top * scores.size))]
    n_distinct = np.unique(ranked).size
    k = n_thresholds
    while True:
        ranks = np.unique(np.geomspace(1, ranked.size, k).round().astype(int))
        tau = np.unique(ranked[ranks - 1])
        if tau.size >= min(n_thresholds, n_distinct) or k >= 100 * n_thresholds:
            return tau
        k += max(1, (n_thresholds - tau.size) // 2)


@cache
def setup(path: str, n_thresholds: int, top: float) -> tuple[Pool, PRCurve, np.ndarray]:
    """The pool, its PR-curve measure and the true curve (cached per worker process)."""
    pool = Pool.from_file(path)
    measure = PRCurve(top_rank_thresholds(pool.primary_scores(0), n_thresholds, top))
    return pool, measure, np.asarray(true_value(pool, measure), dtype=float)


def one_run(path: str, n_thresholds: int, top: float, budget: int, batch_size: int,
            seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """One ``ais`` run: (estimate, lower, upper, defined, seconds)."""
    pool, measure, _ = setup(path, n_thresholds, top)
    start = time.perf_counter()
    session = Session(pool, measure, make_design("ais"), budget=budget, seed=np.random.default_rng(seed))
    est = session.run(TruthOracle(pool), budget, batch_size)
    seconds = time.perf_counter() - start
    lower, upper = est.interval()
    return est.value, lower, upper, est.defined, seconds


def run_pool(ex: ProcessPoolExecutor, path: Path, args: argparse.Namespace) -> dict:
    """All runs on one pool, summarised."""
    seeds = np.random.SeedSequence(args.seed).spawn(args.runs)
    futures = [ex.submit(one_run, str(path), args.thresholds, args.top, args.budget, args.batch_size, s)
               for s in seeds]
    runs = [f.result() for f in futures]
    _, measure, truth = setup(str(path), args.thresholds, args.top)
    value, lower, upper, defined = (np.stack([r[i] for r in runs]) for i in range(4))
    covered = (lower - COVER_TOL <= truth) & (truth <= upper + COVER_TOL)
    L = measure.L
    parts = {"precision": slice(0, L), "recall": slice(L, 2 * L)}
    return {
        "pool": path.name.split(".")[0],
        "L": L,
        "truth": truth,
        "value": value,
        "mae": {k: float(np.mean(np.abs(value[:, s] - truth[s]))) for k, s in parts.items()},
        "cover": {k: float(np.mean(covered[:, s])) for k, s in parts.items()},
        "undefined": float(np.mean(~defined)),
        "seconds": float(np.mean([r[4] for r in runs])),
    }


def table(results: list[dict], args: argparse.Namespace) -> str:
    head = (f"{'pool':<10} {'thr':>4} {'runs':>5} {'MAE prec':>9} {'MAE rec':>9} {'cov prec':>9} "
            f"{'cov rec':>8} {'undef':>6} {'s/run':>6}")
    lines = [f"ais, {args.budget} labels in batches of {args.batch_size}; coverage of 95% intervals",
             head, "-" * len(head)]
    for r in results:
        lines.append(
            f"{r['pool']:<10} {r['L']:>4} {len(r['value']):>5} {r['mae']['precision']:>9.2e} "
            f"{r['mae']['recall']:>9.2e} {r['cover']['precision']:>9.3f} {r['cover']['recall']:>8.3f} "
            f"{r['undefined']:>6.3f} {r['seconds']:>6.2f}"
        )
    return "\n".join(lines)


def plot(results: list[dict], path: Path, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 4.6), squeeze=False)
    for ax, r in zip(axes[0], results):
        L, runs = r["L"], len(r["value"])
        alpha = min(0.5, max(0.05, 8.0 / runs))
        for v in r["value"]:
            ax.plot(v[L:], v[:L], color="tab:blue", lw=0.6, alpha=alpha)
        ax.plot(r["truth"][L:], r["truth"][:L], color="black", lw=1.1, marker="o", ms=2.5, label="true curve")
        ax.plot([], [], color="tab:blue", lw=0.6, label=f"estimates ({runs} runs)")
        ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="recall", ylabel="precision",
               title=f"{r['pool']}: ais, {args.budget} labels, {L} thresholds")
        ax.text(0.03, 0.2, f"mean |error|: precision {r['mae']['precision']:.1e}, recall {r['mae']['recall']:.1e}",
                transform=ax.transAxes, fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--thresholds", type=int, default=50, help="number of thresholds (about)")
    ap.add_argument("--top", type=float, default=0.05, help="fraction of the ranking the thresholds cover")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = ap.parse_args()

    pools = pool_paths(args.datasets)
    if not pools:
        return
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        results = [run_pool(ex, p, args) for p in pools]
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    print(table(results, args))
    plot(results, out / "pr_curves.png", args)
    print(f"\nplot: {out / 'pr_curves.png'}")


if __name__ == "__main__":
    main()
