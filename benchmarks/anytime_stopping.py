"""Optional stopping: fixed-sample intervals vs the anytime-valid confidence sequence (``estimate --anytime``).

Each run labels up to ``--budget`` labels in batches of 50 and looks at both
intervals after every batch.  The stopping rule is the one a user applies
by hand: stop at the first batch whose interval's half-width is at most
``eps`` (each of ``--eps``; or at the budget).  Reported per pool and design, over ``--runs``
runs:

* **stopped coverage**: whether the interval at the stopping batch covers
  the pool's true F1 (the anytime target is >= 0.95);
* **uniform coverage**: whether the interval covered at *every* batch (what
  peeking needs; a fixed-sample interval fails it);
* **width ratio**: anytime width / fixed-sample width at 500 / 1000 / 2000
  labels (target at 2000: <= 1.6).

Pools come from the robustness grid's generator (``grid.generate_pool``):
balanced, 1:100, 1:1000 and an over-confident 1:100 pool (``k = 3``), plus
the real pools of :mod:`pools` when present.  The
anytime sequence covers the with-replacement designs: ``passive`` (its
finite-pool version) and ``importance`` with the default defensive share 0.1
(weights up to 10) and with 0.5 (weights up to 2, so narrower anytime
intervals).  On the imbalanced pools the fixed-sample interval of
``importance`` is narrower than any interval valid under every labeling can
be: about ``defensive`` of the draws fall on the many items of the lowest
proposal, and a false negative hidden among them (weight ``1 / defensive``)
goes unseen in a few hundred such draws, so the lower end of a valid
interval must allow for it.

    PYTHONPATH=src nice -n 10 python benchmarks/anytime_stopping.py --runs 50
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from grid import generate_pool
from pools import DATASETS, pool_paths

import labelwise as lw
from labelwise.anytime import anytime_path
from labelwise.oracle import TruthOracle

OUT = Path(__file__).resolve().parent / "out"
#: (name, prevalence, calibration k) of the benchmark pools
POOL_SPECS = (("balanced", 0.5, 1.0), ("1:100", 0.01, 1.0), ("1:1000", 0.001, 1.0), ("over-confident 1:100", 0.01, 3.0))
#: (label, design name, settings): ``importance`` with its default defensive share 0.1 (weights up to 10) and
#: with 0.5 (weights up to 2), the trade-off between the fixed-sample MSE and the anytime width
DESIGNS = (("passive", "passive", {}), ("importance", "importance", {}),
           ("importance (defensive 0.5)", "importance", {"defensive": 0.5}))
WIDTH_AT = (500, 1000, 2000)
BATCH = 50


def one_run(pool: lw.Pool, measure, design: lw.Design, budget: int, seed: int) -> dict:
    """Fixed and anytime intervals after every batch of one run."""
    session = lw.Session(pool, measure, design, seed=seed, budget=budget)
    fixed = []
    session.run(TruthOracle(pool), budget, BATCH, checkpoints=range(BATCH, budget + 1, BATCH),
                on_checkpoint=lambda n, est: fixed.append([float(b[0]) for b in est.interval()]))
    _, lower, upper, emptied = anytime_path(session)
    return {"fixed": np.array(fixed), "anytime": np.stack([lower[:, 0], upper[:, 0]], axis=1),
            "emptied": emptied[:, 0]}


def stopped(bounds: np.ndarray, eps: float) -> int:
    """Index of the first batch whose half-width is at most ``eps`` (the last batch if none)."""
    narrow = (bounds[:, 1] - bounds[:, 0]) / 2 <= eps
    return int(np.argmax(narrow)) if narrow.any() else len(bounds) - 1


def covered(path: dict, kind: str, truth: float) -> np.ndarray:
    """Whether the interval of each batch covers ``truth``; an emptied anytime sequence (flagged, shown as the
    whole range) covers nothing."""
    bounds = path[kind]
    inside = (bounds[:, 0] <= truth) & (truth <= bounds[:, 1])
    return inside & ~path["emptied"] if kind == "anytime" else inside


def run_cell(pool: lw.Pool, label: str, design: lw.Design, runs: int, budget: int, eps: list[float],
             seed: int) -> dict:
    measure = lw.make_measure("f1", pool)
    truth = float(lw.true_value(pool, measure)[0])
    out: dict = {"design": label, "truth": truth}
    paths = [one_run(pool, measure, design, budget, seed + r) for r in range(runs)]
    for kind in ("fixed", "anytime"):
        covers = [covered(p, kind, truth) for p in paths]
        out[kind] = {"uniform_coverage": float(np.mean([c.all() for c in covers])), "by_eps": {}}
        for e in eps:
            stops = [stopped(p[kind], e) for p in paths]
            out[kind]["by_eps"][str(e)] = {
                "stopped_coverage": float(np.mean([c[s] for c, s in zip(covers, stops)])),
                "mean_stop_labels": float(np.mean([(s + 1) * BATCH for s in stops])),
            }
    out["anytime"]["emptied_runs"] = int(sum(p["emptied"].any() for p in paths))
    widths = {n: [np.diff(p[k][n // BATCH - 1])[0] for p in paths for k in ("anytime", "fixed")]
              for n in WIDTH_AT if n <= budget}
    out["width_ratio"] = {str(n): float(np.mean(w[0::2]) / np.mean(w[1::2])) for n, w in widths.items()}
    return out


def summary_section(data: dict) -> str:
    """Markdown section rendered from the JSON this script writes."""
    a = data["args"]
    eps = a["eps"].split(",")
    head = " | ".join(f"{kind} stopped cov. eps {e}" for e in eps for kind in ("fixed", "anytime"))
    lines = [
        "## Anytime-valid intervals under optional stopping",
        "",
        (f"F1; stop at the first batch of {BATCH} whose half-width is <= eps (or at {a['budget']} labels); "
         f"{a['runs']} runs per cell. Uniform coverage: the interval covered at every batch. *Emptied*: runs whose "
         "anytime sequence excluded every value at some batch (flagged, counted as not covering). Targets: anytime "
         "stopped coverage >= 0.95; width ratio (anytime / fixed) at 2000 labels <= 1.6."),
        "",
        (f"| pool | design | {head} | fixed uniform cov. | anytime uniform cov. | anytime emptied | "
         "width ratio 500 / 1000 / 2000 |"),
        "|---|---|" + "---|" * (2 * len(eps) + 4),
    ]
    for row in data["cells"]:
        f, t, w = row["fixed"], row["anytime"], row["width_ratio"]
        stops = " | ".join(f"{r['by_eps'][e]['stopped_coverage']:.3f}" for e in eps for r in (f, t))
        ratios = " / ".join(f"{w[str(n)]:.2f}" if str(n) in w else "-" for n in WIDTH_AT)
        lines.append(f"| {row['pool']} | {row['design']} | {stops} | {f['uniform_coverage']:.3f} | "
                     f"{t['uniform_coverage']:.3f} | {t.get('emptied_runs', '-')} | {ratios} |")
    lines += ["", ("Reproduce: `PYTHONPATH=src nice -n 10 python benchmarks/anytime_stopping.py "
                   f"--runs {a['runs']} --eps {a['eps']} --budget {a['budget']} --n {a['n']}"
                   + "".join(f" --{k} '{a[k]}'" for k in ("pools", "designs") if a.get(k)) + "`"), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    labels = [f"{c['pool']}\n{c['design']}" for c in data["cells"]]
    x = np.arange(len(labels))
    for dx, kind in ((-0.2, "fixed"), (0.2, "anytime")):
        ax.bar(x + dx, [min(r["stopped_coverage"] for r in c[kind]["by_eps"].values()) for c in data["cells"]],
               0.4, label=kind)
    ax.axhline(0.95, color="k", lw=1, ls="--")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylim(0.5, 1.0)
    ax.set_ylabel("stopped coverage (lowest over eps)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--eps", type=str, default="0.05,0.1")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    ap.add_argument("--pools", type=str, default=None, help="comma-separated pool names to run (default: all)")
    ap.add_argument("--designs", type=str, default=None,
                    help=f"comma-separated design labels to run (default: all of {', '.join(d[0] for d in DESIGNS)})")
    args = ap.parse_args()
    cells = []
    pools = [generate_pool(n_items=args.n, prevalence=prevalence, k=k, d=2.0, threshold="break-even", seed=args.seed,
                           name=name) for name, prevalence, k in POOL_SPECS]
    pools += [lw.Pool.from_file(path) for path in pool_paths(args.datasets)]
    chosen = set(args.designs.split(",")) if args.designs else {d[0] for d in DESIGNS}
    for pool in pools:
        name = pool.name
        if args.pools and name not in args.pools.split(","):
            continue
        for label, design, settings in (d for d in DESIGNS if d[0] in chosen):
            cells.append({"pool": name, **run_cell(pool, label, lw.make_design(design, **settings), args.runs,
                                                   args.budget, [float(e) for e in args.eps.split(",")], args.seed)})
            print(json.dumps(cells[-1]), flush=True)
    data = {"args": vars(args) | {"datasets": str(args.datasets)}, "cells": cells}
    OUT.mkdir(exist_ok=True)
    stem = "anytime_stopping_subset" if args.pools or args.designs else "anytime_stopping"  # keep the full run's
    (OUT / f"{stem}.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / f"{stem}.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
