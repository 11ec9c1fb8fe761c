"""A pool whose tail is empty and twins with positives planted there: the width the labels force on abt-buy.

On abt-buy every positive ranks high by score, and the default's interval is
wider than twice its error (the width target of ``benchmarks/robustness.py``).
Is that width forced by what the labels cannot rule out?  The twins here are the pool with ``K`` positives
planted among its negatives ranked ``--first-rank`` or lower by the score,
each drawn without replacement with probability proportional to the pool's
own ``prob`` (where the scores expect the positives they allow in the tail), or with
``--spread uniform`` uniformly among them (positives the scores do not rank).
Up to the first planted item a run labels, a run draws the same items on
the pool and on a twin (:mod:`tail_twins`), so an interval that covers both
at the target coverage has a mean width of at least
``|delta| x (indistinguishable - 0.14)`` on both (``delta`` the change of ``--measure``, F1 by default)
(:func:`tail_twins.rows`).  Against the default's RMSE on the pool itself
(whose tail is empty) this is the smallest width ratio an interval valid on
the pool and on that twin can have.  ``P(>= K)`` is the probability the
scores give to at least ``K`` positives in that tail (a sum of independent
Bernoulli labels of probability ``prob``, taken Poisson: Le Cam's bound
``sum prob^2`` on the error is printed).

``--pool-seed`` regenerates a grid pool with another seed
(:mod:`fresh_pools`: a pool of the same cell whose tail holds the positives
its scores expect, or fewer, next to its twins that hold more); ``--out-name
tail_plant_<suffix>`` stores such a run beside the first, a section of its own
in RESULTS.md (``sections.NAMED_RUNS``).

Prints one table, writes ``out/tail_plant.json`` (or ``out/<out-name>.json``).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/tail_plant.py --runs 100 \\
        --plant 4,8,16,32 --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from design_variants import spec_of
from grid import BATCH_SIZE, OUT
from pools import DATASETS
from scipy.stats import poisson
from tail_twins import rows, runs_on

import labelwise as lw


def plant(pool: lw.Pool, first_rank: int, count: int, seed: int, spread: str = "prob") -> tuple[lw.Pool, np.ndarray]:
    """``pool`` with ``count`` of its negatives ranked ``first_rank`` or lower turned positive, drawn without
    replacement with probability proportional to ``prob`` (``spread="prob"``) or uniformly (``"uniform"``), and
    them."""
    scores = pool.primary_scores()
    rank = np.empty(scores.size, dtype=np.int64)
    rank[np.argsort(-scores, kind="stable")] = np.arange(scores.size)
    labels = np.asarray(pool.labels).copy()
    tail = np.flatnonzero((labels == 0) & (rank >= first_rank))
    prob = pool.probs[tail, 0] if spread == "prob" else np.ones(tail.size)
    planted = np.random.default_rng(seed).choice(tail, size=count, replace=False, p=prob / prob.sum())
    labels[planted] = 1
    return pool.with_labels(labels), planted


def at_least(prob: np.ndarray, k: int) -> tuple[float, float]:
    """``P(K >= k)`` for ``K`` a sum of independent Bernoulli(``prob``) labels, taken Poisson, and Le Cam's bound
    ``sum prob^2`` on the error of that (total variation)."""
    return float(poisson.sf(k - 1, prob.sum())), float(np.sum(prob**2))


def summary_section(data: dict) -> str:
    """Markdown: per planted count and checkpoint, the share of runs the labels cannot tell apart, the width floor and
    its ratio to the default's RMSE on the pool.  A run stored under another ``--out-name``
    (``out/tail_plant_<suffix>.json``) is a section of its own (``sections.NAMED_RUNS``)."""
    a = data["args"]
    cases = data["cases"]
    seed = a.get("pool_seed", 1)  # runs stored before --pool-seed: the grid's pools
    measure, spread = a.get("measure", "f1"), a.get("spread", "prob")  # runs stored before these options
    name = a["pool"] if seed == 1 else f"{a['pool']} (pool seed {seed})"
    options = (f" --pool-seed {seed}" * (seed != 1)
               + f" --measure {measure}" * (measure != "f1") + f" --spread {spread}" * (spread != "prob")
               + f" --out-name {a.get('out_name')}" * (a.get("out_name", "tail_plant") != "tail_plant"))
    label = "F1" if measure == "f1" else measure
    digits = 4 if measure == "f1" else 6  # a mean near 1 (accuracy) moves in its fifth digit
    drawn = ("with probability proportional to `prob` (the scores expect "
             f"{data['expected']:.1f} positives there; *P(>= K)*: the scores' probability of at least *K*, taken "
             f"Poisson, within {cases[0]['le_cam']:.1g})") if spread == "prob" else (
             f"uniformly (the scores expect {data['expected']:.1f} positives there; *P(>= K)*: the scores' "
             f"probability of at least *K*, taken Poisson, within {cases[0]['le_cam']:.1g})")
    lines = [
        f"## Planted tail positives: the width the labels force on `{name}`", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/tail_plant.py --pool {a['pool']}"
         f"{options} --first-rank {a['first_rank']} --plant {','.join(str(c['plant']) for c in cases)} --runs "
         f"{a['runs']} --seed {a['seed']} --datasets <shared datasets>`: the default design, {label}, batches of "
         f"{BATCH_SIZE}. Twin "
         f"*K*: `{name}` with *K* of its negatives ranked {a['first_rank']} or lower turned positive, drawn "
         f"{drawn}. *indist.*: "
         "share of runs that labeled no planted item by then (one-sided 95% lower bound in brackets); *floor*: the "
         "mean width any interval covering the pool and the "
         "twin at 0.93 needs (module docstring of `benchmarks/tail_twins.py`); *floor ratio*: the floor over 3.92 x "
         "the default's RMSE on the pool; *width ratio*: the default's own mean width over the same."), "",
        f"| K | P(>= K) | {label} pool / twin | labels | indist. (low) | floor | floor ratio | default width ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in cases:
        for row in rows(case):
            p = row["pool"]
            ratio = p["width"] / (3.92 * p["rmse"]) if p["rmse"] else np.inf
            lines.append(f"| {case['plant']} | {case['at_least']:.2g} | {case['pool']['truth']:.{digits}f} / "
                         f"{case['twin']['truth']:.{digits}f} | {row['labels']} | {row['indistinguishable']:.2f} "
                         f"({row['indistinguishable_low']:.2f}) | {row['width_floor']:.3g} | "
                         f"{row['ratio_floor_pool']:.2f} | {ratio:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="abt-buy", help="a pool of the robustness grid or a shared pool")
    ap.add_argument("--first-rank", type=int, default=2000, help="positives are planted at this rank or lower")
    ap.add_argument("--plant", default="4,8,16,32", help="comma-separated numbers of planted positives")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--pool-seed", type=int, default=1, help="a generated pool's seed (the grid's pools: 1)")
    ap.add_argument("--measure", default="f1", help="the measure the default design estimates")
    ap.add_argument("--spread", choices=("prob", "uniform"), default="prob",
                    help="plant in proportion to the pool's prob, or uniformly in the tail")
    ap.add_argument("--out-name", default="tail_plant",
                    help="JSON name in benchmarks/out: tail_plant, or tail_plant_<suffix> for a run RESULTS.md "
                         "shows as a section of its own")
    args = ap.parse_args()
    if args.out_name != "tail_plant" and not args.out_name.startswith("tail_plant_"):
        ap.error("--out-name: tail_plant or tail_plant_<suffix> (RESULTS.md shows only those)")
    pool = spec_of(args.pool, args.datasets, args.pool_seed).load()
    scores = pool.primary_scores()
    tail = np.argsort(-scores, kind="stable")[args.first_rank:]
    tail = tail[np.asarray(pool.labels)[tail] == 0]
    cases = []
    for count in (int(k) for k in args.plant.split(",")):
        twin, planted = plant(pool, args.first_rank, count, args.seed + count, args.spread)
        p_at_least, le_cam = at_least(pool.probs[tail, 0], count)
        case = {"plant": count, "at_least": p_at_least, "le_cam": le_cam, "moved": int(planted.size),
                "pool": runs_on(pool, planted, args.runs, args.seed, args.measure),
                "twin": runs_on(twin, planted, args.runs, args.seed, args.measure)}
        same = np.asarray(case["pool"]["seen"]) == 0
        for key in ("lower", "upper"):  # the floor rests on it: unseen runs give the same interval on both
            if not np.array_equal(np.asarray(case["pool"][key])[same], np.asarray(case["twin"][key])[same]):
                raise SystemExit("runs that labeled no planted item differ between the pools: the floor does not hold")
        cases.append(case)
        print(f"planted {count}: done", flush=True)
    data = {"args": {"pool": args.pool, "first_rank": args.first_rank, "runs": args.runs, "seed": args.seed,
                     "pool_seed": args.pool_seed, "out_name": args.out_name, "measure": args.measure,
                     "spread": args.spread},
            "expected": float(pool.probs[tail, 0].sum()), "cases": cases}
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / f"{args.out_name}.json").write_text(json.dumps(data))
    print(f"wrote {OUT / args.out_name}.json")


if __name__ == "__main__":
    main()
