"""How narrow can any interval valid for every labeling be under ``importance``? A floor for the anytime width.

An anytime-valid interval (:mod:`labelwise.anytime`) is nonparametric: it
must hold whatever the labels of the items not drawn yet.  Take a set ``T``
of ``M`` true negatives (the ``M`` of smallest proposal probability ``q``)
and, for a ``K``-subset ``S`` of ``T``, the labeling ``y_S`` with ``S``
turned positive: ``K`` hidden false negatives, so F1 becomes
``F1_K = 2 TP / (2 TP + FP + FN + K)``.  Under a design whose draws depend
only on the labels seen, the observations under ``y_S`` and under the true
labels coincide until an item of ``S`` is drawn.  An interval ``I`` at level
``1 - alpha`` valid for every labeling therefore has
``P_true(F1_K not in I, no item of S drawn) = P_{y_S}(same) <= alpha``.
Averaged over a uniform ``S``, ``E_true[1(F1_K not in I) h(D)] <= alpha``,
where ``D`` is the number of distinct items of ``T`` drawn and
``h(D) = C(M - D, K) / C(M, K)`` the chance that ``S`` misses them all.  As
``h`` decreases, ``P_true(F1_K not in I) <= P(D > d) + alpha / h(d)`` for
every ``d``.  The draw indicators of distinct items are negatively
associated (balls in bins; Dubhashi & Ranjan, "Balls and bins: a study in
negative dependence", Random Struct. Algorithms 1998), so the Chernoff
bound of independent indicators bounds ``P(D > d)``.  Whenever
``P(D > d) + alpha / h(d) + alpha < 1/2``, in more than half of the runs on
the true labels ``I`` holds both ``F1_K`` and the true F1: its median width
is at least ``F1 - F1_K`` (the *floor*), whatever its construction.  The
script takes the largest such ``K`` over a range of ``M`` and ``d``, with
``n`` the median number of draws (labels plus repeated draws of labeled
items).

The script compares the floor with the median width of the fixed-sample
interval at ``--labels`` labels (issue target: anytime width at most 1.6x
the fixed-sample width) and with the anytime interval's own width there.  A
floor above 1.6x shows the target out of reach for every anytime-valid
interval under that design.  Pools: the generated ones of
``benchmarks/anytime_stopping.py`` and the real pools under ``--datasets``.

    PYTHONPATH=src nice -n 10 python benchmarks/anytime_bounds.py --runs 10 --labels 2000
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from anytime_stopping import BATCH, POOL_SPECS
from grid import generate_pool
from pools import DATASETS, pool_paths

import labelwise as lw
from labelwise.oracle import TruthOracle

OUT = Path(__file__).resolve().parent / "out"
TARGET = 1.6


#: Upper tail levels of ``P(D > d)`` tried (the rest of the 1/2 goes to ``alpha / h(d)``).
TAILS = (0.02, 0.05, 0.1, 0.15, 0.2)


def drawn_quantile(q: np.ndarray, n: float, tail: float) -> int:
    """The smallest ``d`` with ``P(D >= d) <= tail`` by the Chernoff bound, ``D`` the distinct items of
    probabilities ``q`` among ``n`` draws: ``P(D >= (1 + delta) mu) <= (e^delta / (1 + delta)^(1 + delta))^mu``;
    ``q.size + 1`` (``D`` never reaches it) when the bound proves no ``d`` up to ``q.size``."""
    mu = float(np.sum(-np.expm1(n * np.log1p(-q))))  # E[D]
    d = np.arange(int(np.ceil(mu)) + 1, q.size + 1)
    delta = d / mu - 1
    log_tail = mu * (delta - (1 + delta) * np.log1p(delta))
    return int(d[np.argmax(log_tail <= np.log(tail))]) if np.any(log_tail <= np.log(tail)) else q.size + 1


def hidden_negatives(q: np.ndarray, true_negative: np.ndarray, n: float, alpha: float) -> int:
    """Largest ``K`` such that an interval valid for every labeling misses ``F1_K`` or F1 in less than half
    of the runs (module docstring): over ``T`` the ``M`` true negatives of smallest ``q`` and the tails of
    :data:`TAILS`, ``P(D > d) + alpha / h(d) + alpha < 1/2``."""
    smallest = np.sort(q[true_negative])
    best = 0
    for m in np.unique(np.geomspace(10, smallest.size, 40).astype(int)):
        for tail in TAILS:
            d = drawn_quantile(smallest[:m], n, tail) - 1  # P(D > d) <= tail
            room = 0.5 - alpha - tail  # alpha / h(d) must stay below it
            if room <= 0 or d >= m:
                continue
            j = np.arange(m - d)
            log_h = np.cumsum(np.log((m - d - j) / (m - j)))  # log h(d) for K = 1, 2, ...
            best = max(best, int(np.sum(log_h > np.log(alpha / room))))
    return best


def f1_with_hidden(tp: int, fp: int, fn: int, hidden: int) -> float:
    """F1 with ``hidden`` further false negatives."""
    return 2 * tp / (2 * tp + fp + fn + hidden)


def widths(pool: lw.Pool, design: lw.Design, labels: int, runs: int, seed: int) -> dict:
    """Median fixed-sample and anytime widths of F1 at ``labels`` labels over ``runs`` sessions, and the
    median number of draws."""
    measure = lw.make_measure("f1", pool)
    fixed, anytime, draws = [], [], []
    for r in range(runs):
        session = lw.Session(pool, measure, design, seed=seed + r, budget=labels)
        lo, hi = session.run(TruthOracle(pool), labels, BATCH).interval()
        fixed.append(float(hi[0] - lo[0]))
        lo, hi = session.estimate(anytime=True).interval()
        anytime.append(float(hi[0] - lo[0]))
        draws.append(session.draws.n_draws)
    return {"fixed": float(np.median(fixed)), "anytime": float(np.median(anytime)), "draws": float(np.median(draws))}


def run_cell(pool: lw.Pool, defensive: float, labels: int, runs: int, level: float, seed: int) -> dict:
    design = lw.make_design("importance", pool, defensive=defensive)
    q = design.proposal(pool, lw.make_measure("f1", pool))
    y, pred = pool.labels.astype(bool), pool.outputs().preds[:, 0].astype(bool)
    tp, fp, fn = int(np.sum(y & pred)), int(np.sum(~y & pred)), int(np.sum(y & ~pred))
    w = widths(pool, design, labels, runs, seed)
    hidden = hidden_negatives(q, ~y & ~pred, w["draws"], 1.0 - level)
    truth = f1_with_hidden(tp, fp, fn, 0)
    floor = truth - f1_with_hidden(tp, fp, fn, hidden)
    return {"pool": pool.name, "defensive": defensive, "n_items": pool.n_items, "positives": int(y.sum()),
            "hidden": hidden, "f1": truth, "floor": floor, **w,
            "floor_ratio": floor / w["fixed"], "anytime_ratio": w["anytime"] / w["fixed"],
            "infeasible": floor / w["fixed"] > TARGET}


def summary_section(data: dict) -> str:
    """Markdown section rendered from the JSON this script writes."""
    a = data["args"]
    lines = ["## Anytime width: the floor for any interval valid for every labeling", "",
             (f"F1 under `importance` at {a['labels']} labels, level {a['level']}; widths are medians over "
              f"{a['runs']} runs (*draws*: the median draws, repeats included). *Hidden*: the most false negatives "
              "that, hidden among the true negatives of smallest proposal probability, an interval valid for every "
              "labeling must allow for in more than half of the runs (averaged over which of those items they are; "
              "module docstring of `benchmarks/anytime_bounds.py`); *floor* = F1 - F1 with them, a lower bound on the "
              f"median width of every anytime-valid interval. Target: anytime width <= {TARGET}x fixed-sample."), "",
             ("| pool | defensive | positives | draws | hidden | F1 | floor | fixed width | anytime width | "
              "floor / fixed | anytime / fixed | target reachable |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        lines.append(f"| {c['pool']} | {c['defensive']:g} | {c['positives']} | {c['draws']:.0f} | {c['hidden']} | "
                     f"{c['f1']:.3f} | {c['floor']:.3f} | {c['fixed']:.3f} | {c['anytime']:.3f} | "
                     f"{c['floor_ratio']:.2f} | {c['anytime_ratio']:.2f} | "
                     f"{'no (shown infeasible)' if c['infeasible'] else 'not ruled out'} |")
    lines += ["", ("Reproduce: `PYTHONPATH=src nice -n 10 python benchmarks/anytime_bounds.py "
                   f"--runs {a['runs']} --labels {a['labels']} --n {a['n']} --defensive {a['defensive']}"
                   + (f" --pools '{a['pools']}'" if a.get("pools") else "") + "`"), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = data["cells"]
    x = np.arange(len(cells))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar(x - 0.2, [c["floor_ratio"] for c in cells], 0.4, label="floor / fixed")
    ax.bar(x + 0.2, [c["anytime_ratio"] for c in cells], 0.4, label="anytime / fixed")
    ax.axhline(TARGET, color="k", lw=1, ls="--", label=f"target {TARGET}x")
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{c['pool']}\nd={c['defensive']:g}" for c in cells], fontsize=6)
    ax.set_ylabel("width ratio")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--labels", type=int, default=2000)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--defensive", type=str, default="0.1,0.5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    ap.add_argument("--pools", type=str, default=None, help="comma-separated pool names to run (default: all)")
    args = ap.parse_args()
    pools = [generate_pool(n_items=args.n, prevalence=p, k=k, d=2.0, threshold="break-even", seed=args.seed, name=name)
             for name, p, k in POOL_SPECS]
    pools += [lw.Pool.from_file(path) for path in pool_paths(args.datasets)]
    if args.pools:
        pools = [pool for pool in pools if pool.name in args.pools.split(",")]
    cells = []
    for pool in pools:
        for defensive in (float(d) for d in args.defensive.split(",")):
            cells.append(run_cell(pool, defensive, min(args.labels, pool.n_items), args.runs, args.level, args.seed))
            print(json.dumps(cells[-1]), flush=True)
    data = {"args": vars(args) | {"datasets": str(args.datasets)}, "cells": cells}
    OUT.mkdir(exist_ok=True)
    stem = "anytime_bounds_subset" if args.pools else "anytime_bounds"  # keep the full run's
    (OUT / f"{stem}.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / f"{stem}.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
