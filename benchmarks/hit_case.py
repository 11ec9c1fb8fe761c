"""Where the default's F1 interval gets its width on pools with a long unlabeled tail, and what narrowing it costs.

The default (``online-poisson``, ``variance="mixture"``) covers the oracle model's error for the items not labeled
yet as three cases (:func:`labelwise.estimators.mixture_variance`): no exception (a label other than its group's
most likely) left, exceptions left and never drawn, and an exception drawn (the *hit* case). The hit case's
probability is ``1 - exp(-hits)`` with ``hits`` the exceptions the rounds would have drawn so far, and its variance
what is left of the model's full variance. Its probability comes from the groups the rounds sample often, its
variance from the deep tail, whose items the rounds have reached with summed probabilities of 1e-3 to 5e-2 and
where a drawn exception would move the estimate by its whole range: so the hit case is as wide as a deep-tail draw
and as likely as a shallow one.

Part 1 (one run per pool, ``--at`` labels): per band of ``b_seen`` (a group's inclusion probabilities summed over
the rounds), the unlabeled items, the exceptions the model expects among them, the hits it expects, the band's
share of the full variance, and the exceptions truly left (from the pool's labels).

Part 2 (``--runs`` runs per pool): coverage and width ratio of the default's interval as it is, and with the hit
case read in hindsight (expected hits set to 0: every unlabeled item is known not to have been drawn, and a drawn
exception is a labeled item, in the design-based part).

Prints both tables, writes ``out/hit_case.json``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/hit_case.py --runs 100 \\
        --datasets /work/shared/datasets
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from concurrent.futures import ProcessPoolExecutor
from itertools import pairwise
from pathlib import Path

import numpy as np
from design_variants import spec_of, summary
from grid import BATCH_SIZE, BUDGET, COVERAGE_TARGET, OUT, WIDTH_TARGET
from pools import DATASETS
from results import fmt_ratio, git_revision

import labelwise as lw
import labelwise.designs.unlabeled_covariance as unlabeled_module
import labelwise.engines.online as rounds_module

POOLS = ("abt-buy", "dblp-acm", "0.001-x1-strong", "0.001-x3-strong", "0.001-x0.5-weak", "1e-05-x1-strong",
         "1e-05-x3-strong")
CHECKPOINTS = (500, 1000, 2000)
BANDS = (0.0, 1e-3, 1e-2, 5e-2, 0.2, np.inf)
VARIANTS = ("default", "hits in hindsight")


def without_hits(mixture):
    """``mixture_variance`` with the hit case given probability 0."""
    def variance(base, full, model, level, missed=None):
        return mixture(base, full, model._replace(hits=0.0), level, missed)
    return variance


def run_variant(task: tuple) -> dict:
    """One variant's runs on one pool: estimates and interval ends at the checkpoints."""
    name, variant, runs, seed, datasets = task
    mixture = unlabeled_module.mixture_variance
    try:
        if variant != VARIANTS[0]:
            unlabeled_module.mixture_variance = without_hits(mixture)
        pool = spec_of(name, datasets).load()
        result = lw.simulate(pool, lw.make_measure("f1", pool), "default", budget=BUDGET, batch_size=BATCH_SIZE,
                             repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS))
    finally:  # the worker process runs other tasks next
        unlabeled_module.mixture_variance = mixture
    return {"pool": name, "variant": variant, "truth": float(np.atleast_1d(result.true_value)[0]),
            "values": result.values[..., 0].tolist(), "lower": result.lower[..., 0].tolist(),
            "upper": result.upper[..., 0].tolist()}


def bands_of(task: tuple) -> dict:
    """Part 1 on one pool: one run of the default to ``at`` labels, the model's unlabeled tail by band of b_seen."""
    name, at, seed, datasets = task
    pool = spec_of(name, datasets).load()
    seen = {}
    covariance = rounds_module.unlabeled_covariance

    def capture(u, pi, unlabeled, coef, b_seen, n_items, bound=None, *args, **kwargs):
        if not seen:  # the interval model's call (a second one may follow with the counted-once map's rates)
            seen.update(u=u[:, :, 0], pi=pi, unlabeled=unlabeled, coef=coef.sum(axis=0), b_seen=b_seen,
                        n_items=n_items)
        return covariance(u, pi, unlabeled, coef, b_seen, n_items, bound, *args, **kwargs)

    rounds_module.unlabeled_covariance = capture
    try:
        session = lw.Session(pool, lw.make_measure("f1", pool), "default", seed=seed, budget=at)
        session.run(lw.TruthOracle(pool), at, BATCH_SIZE)
        seen.clear()
        session.estimate()
    finally:
        rounds_module.unlabeled_covariance = covariance
    u, pi, U, coef, b_seen = (seen[k] for k in ("u", "pi", "unlabeled", "coef", "b_seen"))
    G = pi.shape[0]
    mode = np.argmax(pi, axis=1)
    shift = (u[1 - mode, np.arange(G)] - u[mode, np.arange(G)]) / seen["n_items"]
    expected = U * (1.0 - pi.max(axis=1)) * (shift != 0)
    variance = coef * expected * shift**2  # the exceptions' part of the full variance, before holding to the range
    block = session.sampler.block  # each item's group (the rounds run on score blocks)
    left = np.ones(pool.n_items, dtype=bool)
    left[session.sample().draws.items] = False
    truly = np.bincount(block[left], weights=np.asarray(pool.labels)[left] != mode[block[left]], minlength=G)
    rows = []
    for lo, hi in pairwise(BANDS):
        band = (b_seen >= lo) & (b_seen < hi) & (U > 0)
        rows.append({"band": [lo, hi], "unlabeled": float(U[band].sum()), "expected": float(expected[band].sum()),
                     "hits": float((expected * np.minimum(b_seen, 1.0))[band].sum()),
                     "variance_share": float(variance[band].sum() / max(variance.sum(), 1e-300)),
                     "truly_left": float(truly[band].sum())})
    return {"pool": name, "labels": at, "rows": rows}


def band_table(entry: dict) -> str:
    lines = [f"`{entry['pool']}` after {entry['labels']} labels:", "",
             "| b_seen | unlabeled | exceptions expected | hits expected | share of full variance | exceptions left |",
             "|---|---|---|---|---|---|"]
    for r in entry["rows"]:
        lo, hi = r["band"]
        label = f"[{lo:g}, {hi:g})" if np.isfinite(hi) else f">= {lo:g}"
        lines.append(f"| {label} | {r['unlabeled']:,.0f} | {r['expected']:.2f} | {r['hits']:.3f} | "
                     f"{r['variance_share']:.2f} | {r['truly_left']:.0f} |")
    return "\n".join(lines) + "\n"


def variant_table(results: list[dict]) -> str:
    head = " | ".join(f"cov {n} | width {n}" for n in CHECKPOINTS)
    lines = [f"| pool | interval | {head} |", "|---|---|" + "---|" * (2 * len(CHECKPOINTS))]
    for r in results:
        s = summary(r)
        cells = " | ".join(f"{s['cover'][i]:.2f}{'!' if s['cover'][i] < COVERAGE_TARGET else ''} | "
                           f"{fmt_ratio(s['width'][i])}" for i in range(len(CHECKPOINTS)))
        lines.append(f"| {r['pool']} | {r['variant']} | {cells} |")
    return "\n".join(lines) + "\n"


def generated_on(data: dict) -> str:
    """`` on <date> (git <revision>)`` of a stored run, empty for runs stored before it was recorded."""
    g = data.get("generated")
    return f" on {g['date']} (git {g['git']})" if g else ""


def summary_section(data: dict) -> str:
    """Markdown: the band tables, then the coverage and width of the interval with and without its hit case."""
    a = data["args"]
    return "\n".join([
        "## The default's F1 interval on long unlabeled tails: its hit case, and the interval without it", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hit_case.py --runs {a['runs']} "
         f"--at {a['at']} --seed {a['seed']} --datasets <shared datasets>`{generated_on(data)}: the default design, "
         "F1, batches of "
         f"{BATCH_SIZE}. The mixture interval's third case, an exception drawn, has the probability of the groups "
         "the rounds sample often and the variance of the deep tail, reached with summed inclusion probabilities of 1e-3 to 5e-2 (module docstring). "
         "Per band of b_seen (a group's inclusion probabilities summed over the rounds), one run: the exceptions "
         "the model expects among the unlabeled items, the draws of one it expects so far, the band's share of the "
         "full variance, and the exceptions truly left."), "",
        *[band_table(entry) for entry in data["bands"]],
        (f"Coverage and width ratio (mean width / (3.92 RMSE)), {a['runs']} runs: the default's interval, and the "
         "same with the hit case read in hindsight (probability 0). `!`: coverage below "
         f"{COVERAGE_TARGET}; the width target is {WIDTH_TARGET:g}."), "",
        variant_table(data["results"]),
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pools", default=",".join(POOLS))
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--at", type=int, default=1000, help="labels of part 1's run")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    args = ap.parse_args()
    pools = args.pools.split(",")
    with ProcessPoolExecutor(args.jobs) as ex:
        bands = list(ex.map(bands_of, [(p, args.at, args.seed, args.datasets) for p in pools]))
        results = list(ex.map(run_variant, [(p, v, args.runs, args.seed, args.datasets)
                                            for p in pools for v in VARIANTS]))
    data = {"args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "generated": {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
                          "git": git_revision()},
            "bands": bands, "results": results}
    OUT.mkdir(exist_ok=True)
    (OUT / "hit_case.json").write_text(json.dumps(data))
    print(summary_section(data))
    print(f"wrote {OUT / 'hit_case.json'}")


if __name__ == "__main__":
    main()
