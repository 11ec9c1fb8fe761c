"""Two pools the labels cannot tell apart: what no interval on a rare over-confident pool can do early on.

A pool (``1e-05-x3-strong`` by default: 20 positives in 2M items, logits
three times too confident) and its *twin*: the same items, scores and
predictions, with the positives the scores rank below ``--first-rank`` turned
negative (the pool whose scores are right that the tail is empty).  The
design's set-up reads only the scores, so with the same seed a run draws the
same items on both pools until it labels one of those positives: up to then
the labels, hence any estimate and interval built on the labels and scores,
are the same on both.  If a share ``p`` of runs is still indistinguishable at
``k`` labels and the two pools' F1 differ by ``delta``, an interval covering
each pool with probability at least ``1 - a`` contains both values in at
least ``p - 2a`` of the runs, so its mean width on either pool is at least

    delta (p - 2 a),

whatever the design's estimator and interval.  Against the twin's error
(RMSE of the default's estimate there) this is the smallest width ratio
(mean width / (3.92 RMSE)) an interval covering both pools at 0.93 can have.

Prints one table, writes ``out/tail_twins.json`` and ``out/tail_twins.png``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/tail_twins.py --runs 100 \\
        --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from design_variants import spec_of
from grid import BATCH_SIZE, COVERAGE_TARGET, OUT
from pools import DATASETS
from scipy.stats import beta

import labelwise as lw

CHECKPOINTS = (500, 1000, 2000)


def twin(pool: lw.Pool, first_rank: int) -> tuple[lw.Pool, np.ndarray]:
    """``pool`` with the positives ranked ``first_rank`` or lower by the primary score turned negative, and them."""
    scores = pool.primary_scores()
    rank = np.empty(scores.size, dtype=np.int64)
    rank[np.argsort(-scores, kind="stable")] = np.arange(scores.size)
    labels = np.asarray(pool.labels).copy()
    moved = np.flatnonzero((labels == 1) & (rank >= first_rank))
    labels[moved] = 0
    return pool.with_labels(labels), moved


def runs_on(pool: lw.Pool, moved: np.ndarray, runs: int, seed: int, measure: str = "f1") -> dict:
    """The default design's runs of ``measure``: per checkpoint and run the estimate, its interval and whether a
    ``moved`` item is labeled by then."""
    measure = lw.make_measure(measure, pool)
    design = lw.make_design("default", pool, measure)
    seeds = np.random.SeedSequence(seed).spawn(runs)
    out = {key: np.zeros((len(CHECKPOINTS), runs)) for key in ("value", "lower", "upper", "seen")}
    for r in range(runs):
        session = lw.Session(pool, measure, design, seed=np.random.default_rng(seeds[r]), budget=CHECKPOINTS[-1])

        def record(n: int, est, r: int = r, session: lw.Session = session) -> None:
            c = CHECKPOINTS.index(n)
            (lo,), (hi,) = est.interval()
            out["value"][c, r], out["lower"][c, r], out["upper"][c, r] = est.value[0], lo, hi
            out["seen"][c, r] = np.isin(session.sample().draws.items[:n], moved).any()

        session.run(lw.TruthOracle(pool), CHECKPOINTS[-1], BATCH_SIZE, checkpoints=list(CHECKPOINTS),
                    on_checkpoint=record)
    return {"truth": float(lw.true_value(pool, measure)[0]), **{k: v.tolist() for k, v in out.items()}}


def rows(data: dict) -> list[dict]:
    """Per checkpoint: the share of runs the labels cannot tell apart, the width any covering interval needs, and
    the default's coverage, mean width and RMSE on both pools."""
    pool, twin_ = data["pool"], data["twin"]
    delta = abs(twin_["truth"] - pool["truth"])
    slack = 2 * (1 - COVERAGE_TARGET)
    out = []
    for c, k in enumerate(CHECKPOINTS):
        runs = len(pool["seen"][c])
        alike = runs - int(np.sum(pool["seen"][c]))
        # a one-sided 95% Clopper-Pearson lower bound on the share: the floor holds with that confidence
        low = float(beta.ppf(0.05, alike, runs - alike + 1)) if alike else 0.0
        row = {"labels": k, "indistinguishable": alike / runs, "indistinguishable_low": low, "delta": delta,
               "width_floor": delta * max(low - slack, 0.0)}
        for name, entry in (("pool", pool), ("twin", twin_)):
            v, lo, hi = (np.asarray(entry[key][c]) for key in ("value", "lower", "upper"))
            t = entry["truth"]
            rmse = float(np.sqrt(np.mean((v - t) ** 2)))
            row[name] = {"cover": float(np.mean((lo <= t) & (t <= hi))), "width": float(np.mean(hi - lo)),
                         "rmse": rmse}
        for name in ("twin", "pool"):  # the floor against either pool's error
            rmse = row[name]["rmse"]
            row[f"ratio_floor_{name}"] = row["width_floor"] / (3.92 * rmse) if rmse else np.inf
        out.append(row)
    return out


def summary_section(data: dict) -> str:
    """Markdown: the two pools' values, the share of runs the labels cannot tell apart and the width it forces."""
    a = data["args"]
    pool, twin_ = data["pool"], data["twin"]
    lines = [
        "## Twin pools the labels cannot tell apart: the width a rare over-confident pool forces", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/tail_twins.py --pool {a['pool']} "
         f"--first-rank {a['first_rank']} --runs {a['runs']} --seed {a['seed']} --datasets <shared datasets>`: the "
         f"default design, F1, batches of {BATCH_SIZE}. The twin is `{a['pool']}` with its {data['moved']} positives "
         f"ranked {a['first_rank']} or lower by the score turned negative (true F1 {pool['truth']:.4f} against "
         f"{twin_['truth']:.4f}). With the same seed a run labels the same items on both until it labels one of "
         "those positives; **indistinguishable** is the share of runs that has not by then (*low*: its one-sided 95% "
         "Clopper-Pearson lower bound). Any interval built on the labels and scores that covers both pools at "
         f"{COVERAGE_TARGET} has a mean width of at least |delta F1| x (indistinguishable - "
         f"{2 * (1 - COVERAGE_TARGET):.2f}) on both; **width floor** takes the share at its lower bound, so it holds "
         "with 95% confidence. **floor ratio** is that width over 3.92 x the default's RMSE on the twin."), "",
        ("| labels | indistinguishable (low) | width floor | floor ratio (twin) | pool: cov | pool: width "
         "| pool: RMSE | twin: cov | twin: width | twin: RMSE |"),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows(data):
        p, t = row["pool"], row["twin"]
        lines.append(f"| {row['labels']} | {row['indistinguishable']:.2f} ({row['indistinguishable_low']:.2f}) | "
                     f"{row['width_floor']:.3f} | "
                     f"{row['ratio_floor_twin']:.2f} | {p['cover']:.2f} | {p['width']:.3f} | {p['rmse']:.3f} | "
                     f"{t['cover']:.2f} | {t['width']:.3f} | {t['rmse']:.3f} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: Path) -> None:
    """Mean interval width on both pools against the width floor, per checkpoint."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = rows(data)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(CHECKPOINTS, [r["pool"]["width"] for r in table], "o-", label=f"{data['args']['pool']}: mean width")
    ax.plot(CHECKPOINTS, [r["twin"]["width"] for r in table], "s-", label="twin (tail empty): mean width")
    ax.plot(CHECKPOINTS, [r["width_floor"] for r in table], "k--", label="floor for covering both")
    ax.set_xscale("log")
    ax.set_xlabel("labels")
    ax.set_ylabel("F1 interval width")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="1e-05-x3-strong", help="a pool of the robustness grid")
    ap.add_argument("--first-rank", type=int, default=500, help="positives ranked this or lower leave the twin")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    args = ap.parse_args()
    pool = spec_of(args.pool, args.datasets).load()
    empty, moved = twin(pool, args.first_rank)
    data = {"args": {"pool": args.pool, "first_rank": args.first_rank, "runs": args.runs, "seed": args.seed},
            "moved": int(moved.size), "pool": runs_on(pool, moved, args.runs, args.seed),
            "twin": runs_on(empty, moved, args.runs, args.seed)}
    same = np.asarray(data["pool"]["seen"]) == 0
    for key in ("lower", "upper"):  # the claim the floor rests on: unseen runs give the same interval on both
        if not np.array_equal(np.asarray(data["pool"][key])[same], np.asarray(data["twin"][key])[same]):
            raise SystemExit("runs that labeled no moved positive differ between the pools: the floor does not hold")
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / "tail_twins.json").write_text(json.dumps(data))
    plot(data, OUT / "tail_twins.png")
    print(f"wrote {OUT / 'tail_twins.json'} and {OUT / 'tail_twins.png'}")


if __name__ == "__main__":
    main()
