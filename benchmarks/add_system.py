"""Label reuse when a system is added to a session: reuse vs a fresh session for the new system.

On generated pools (``labelwise.make_pool``: balanced, 1:100 and 1:1000
positives) a session labels ``--first`` items for system A's F1, then
system B is added (``Session.add_system``) and the session continues to
``--first + --new`` labels, now targeting both systems.  B is either a
near-copy of A (A's logits plus a little noise, the same threshold) or a
different system (the pool's second, correlated 0.5 with A).  The
comparison is a fresh session for B alone given the same ``--new`` labels.

Reported per pool, kind of B and design: MSE and coverage of B's 95%
interval for F1 right after the addition (reused labels only) and at the
end, for reuse and fresh; mean interval width over 3.92 x RMSE; and the
new labels each needs to reach the half-width the fresh session reaches
with all its labels (median over runs; ``>n`` when not reached).

A second addition (``--second-runs``, ``online-poisson`` on the 1:100
pool): after B, ``--between`` more labels (each value a row group), then a
third system C (the pool's second system) is added; B's F1 right after its
own addition, just before C's, right after C's and after one more batch.
C's addition should leave B's estimate and interval as they were until a
round drawn since has labels.

Prints markdown tables and writes ``benchmarks/out/add_system.{json,png}``::

    PYTHONPATH=src nice -n 10 python benchmarks/add_system.py --runs 20 --second-runs 100
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from labelwise import Pool, Session, make_design, make_measure, make_pool

OUT = Path(__file__).resolve().parent / "out"
POOLS = {"balanced": 0.5, "1:100": 0.01, "1:1000": 0.001}
LEVEL = 0.95


def one_system(full: Pool, system: int, name: str) -> Pool:
    """The pool with ``full``'s system ``system`` alone."""
    return Pool.from_arrays(full.item_ids, preds=full.preds[:, system:system + 1],
                            scores=full.scores[:, system:system + 1], probs=full.probs[:, system:system + 1],
                            labels=full.labels, system_names=[name])


def near_copy(full: Pool, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """System A's outputs with its logits perturbed by N(0, 0.5^2), thresholded at 1/2 like A."""
    p = np.clip(full.probs[:, 0], 1e-9, 1 - 1e-9)
    logit = np.log(p / (1 - p)) + rng.normal(0.0, 0.5, p.size)
    prob = 1.0 / (1.0 + np.exp(-logit))
    return {"preds": (prob > 0.5).astype(np.int64), "scores": logit, "probs": prob}


def f1_truth(pool: Pool, system: int) -> float:
    m = make_measure("f1", pool, systems=system)
    return float(m.value(m.loss(pool.outputs(), pool.labels).mean(axis=0))[0])


def track(session: Session, oracle, budget: int, batch: int, component: int) -> list[tuple[float, float, float]]:
    """(estimate, lower, upper) of ``component`` after every batch until ``budget`` labels."""
    out = []

    def record(_n, est):
        out.append(interval_of(est, component))

    session.run(oracle, budget, batch, checkpoints=range(session.n_labels + batch, budget + 1, batch),
                on_checkpoint=record)
    return out


def run_case(full: Pool, b_outputs: dict, design: str, runs: int, first: int, new: int, batch: int) -> dict:
    """Reuse and fresh runs for one pool, one B and one design."""
    pool_a = one_system(full, 0, "A")
    pool_b = Pool.from_arrays(full.item_ids, **{k: v[:, None] for k, v in b_outputs.items()}, labels=full.labels,
                              system_names=["B"])
    truth = f1_truth(pool_b, 0)
    oracle = lambda ids: full.labels[pool_a.positions(ids)]
    reuse, fresh, at_add, informative, a_with, a_without = [], [], [], [], [], []
    for r in range(runs):
        s = Session(pool_a, make_measure("f1", pool_a), make_design(design, pool_a), seed=r)
        s.run(oracle, first, batch)
        added = s.add_system("B", **b_outputs)
        at_add.append(interval_of(added.estimate, 0))
        informative.append(added.n_informative)
        reuse.append(track(s, oracle, first + new, batch, 1))
        a_with.append(interval_of(s.estimate(), 0))
        s = Session(pool_a, make_measure("f1", pool_a), make_design(design, pool_a), seed=r)
        a_without.append(interval_of(s.run(oracle, first + new, batch), 0))
        s = Session(pool_b, make_measure("f1", pool_b), make_design(design, pool_b), seed=10_000 + r)
        fresh.append(track(s, oracle, new, batch, 0))
    return {"truth": truth, "truth_a": f1_truth(pool_a, 0), "reuse": np.array(reuse).tolist(),
            "fresh": np.array(fresh).tolist(), "at_add": at_add, "informative": float(np.mean(informative)),
            "a_with": a_with, "a_without": a_without}


def second_addition(full: Pool, b_outputs: dict, c_outputs: dict, runs: int, first: int, between: int,
                    batch: int) -> list:
    """B's and A's F1 (estimate, lower, upper) per run ``(runs, 2, 4, 3)``: right after B is added at ``first``
    labels, after ``between`` more, right after C is added and after one more batch."""
    pool_a = one_system(full, 0, "A")
    oracle = lambda ids: full.labels[pool_a.positions(ids)]
    out = []
    for r in range(runs):
        s = Session(pool_a, make_measure("f1", pool_a), make_design("online-poisson", pool_a), seed=r)
        s.run(oracle, first, batch)
        s.add_system("B", **b_outputs)
        stages = [s.estimate()]
        s.run(oracle, first + between, batch)
        stages.append(s.estimate())
        s.add_system("C", **c_outputs)
        stages.append(s.estimate())
        s.run(oracle, first + between + batch, batch)
        stages.append(s.estimate())
        out.append([[interval_of(est, system) for est in stages] for system in (1, 0)])
    return out


def interval_of(est, component: int) -> tuple[float, float, float]:
    """(estimate, lower, upper) of one component."""
    lo, hi = est.interval()
    return float(est.value[component]), float(lo[component]), float(hi[component])


def stats(triples: np.ndarray, truth: float) -> dict:
    """MSE, coverage and width / (3.92 RMSE) of (estimate, lower, upper) over the runs (first axis)."""
    value, lo, hi = triples[..., 0], triples[..., 1], triples[..., 2]
    mse = np.mean((value - truth) ** 2, axis=0)
    return {"mse": mse, "coverage": np.mean((lo <= truth) & (truth <= hi), axis=0),
            "width": np.mean(hi - lo, axis=0) / (3.92 * np.sqrt(mse)), "half_width": np.mean(hi - lo, axis=0) / 2}


def labels_for(curves: np.ndarray, target: float, batch: int) -> float:
    """Median over runs of the new labels until the half-width is at most ``target`` (inf if never)."""
    half = (curves[..., 2] - curves[..., 1]) / 2  # (runs, checkpoints)
    reached = half <= target
    first = np.where(reached.any(axis=1), (np.argmax(reached, axis=1) + 1) * batch, np.inf)
    return float(np.median(first))


def summarize(case: dict, batch: int) -> dict:
    truth = case["truth"]
    reuse, fresh = np.array(case["reuse"]), np.array(case["fresh"])
    end_r, end_f = stats(reuse[:, -1], truth), stats(fresh[:, -1], truth)
    add = stats(np.array(case["at_add"]), truth)
    a_with, a_without = (stats(np.array(case[k]), case["truth_a"]) for k in ("a_with", "a_without"))
    target = float(end_f["half_width"])
    return {"truth": truth, "informative": case["informative"], "target_half_width": target,
            "add": {k: float(v) for k, v in add.items()},
            "a_with": {k: float(v) for k, v in a_with.items()}, "a_without": {k: float(v) for k, v in a_without.items()},
            "reuse": {k: float(v) for k, v in end_r.items()}, "fresh": {k: float(v) for k, v in end_f.items()},
            "labels_reuse": labels_for(reuse, target, batch), "labels_fresh": labels_for(fresh, target, batch),
            "hw_reuse": stats(reuse, truth)["half_width"].tolist(), "hw_fresh": stats(fresh, truth)["half_width"].tolist()}


def _n(x: float, new: int) -> str:
    return f">{new}" if not np.isfinite(x) else f"{x:.0f}"


def summary_section(data: dict) -> str:
    """The benchmark's markdown section: set-up, the table and the command that reproduces it."""
    cfg = data["config"]
    new = cfg["new"]
    rows = [("| pool | B | design | F1(B) | informative labels | MSE x1e4 at add | cov at add | MSE x1e4 reuse | "
             "MSE x1e4 fresh | cov reuse | cov fresh | width reuse | width fresh | target hw | new labels reuse | "
             "new labels fresh | MSE x1e4 A with B | MSE x1e4 A alone | cov A with B |"), "|" + "---|" * 19]
    for key, s in data["results"].items():
        pool, kind, design = key.split("|")
        rows.append(f"| {pool} | {kind} | {design} | {s['truth']:.3f} | {s['informative']:.0f} | "
                    f"{1e4 * s['add']['mse']:.1f} | {s['add']['coverage']:.2f} | {1e4 * s['reuse']['mse']:.1f} | "
                    f"{1e4 * s['fresh']['mse']:.1f} | {s['reuse']['coverage']:.2f} | {s['fresh']['coverage']:.2f} | "
                    f"{s['reuse']['width']:.2f} | {s['fresh']['width']:.2f} | {s['target_half_width']:.3f} | "
                    f"{_n(s['labels_reuse'], new)} | {_n(s['labels_fresh'], new)} | {1e4 * s['a_with']['mse']:.1f} | "
                    f"{1e4 * s['a_without']['mse']:.1f} | {s['a_with']['coverage']:.2f} |")
    first = [
        (f"Generated pools of {cfg['items']} items; a session labels {cfg['first']} items for system A's F1, "
         f"adds system B (`Session.add_system`) and continues to {cfg['first'] + new} labels; the fresh session "
         f"labels {new} items for B alone. {cfg['runs']} runs per row, batches of {cfg['batch']}. "
         "*at add*: B's estimate from the reused labels alone; *reuse*/*fresh*: after the same "
         f"{new} new labels. Coverage of {LEVEL:.0%} intervals (s.e. about "
         f"{np.sqrt(LEVEL * (1 - LEVEL) / cfg['runs']):.2f}); width = mean width / (3.92 x RMSE); "
         "new labels = median new labels until B's half-width reaches the fresh session's final one; "
         f"*A with B* / *A alone*: system A's F1 after all {cfg['first'] + new} labels in the session that "
         "added B and in the same session without it."),
        "",
        *rows,
        "",
    ] if data["results"] else []
    return "\n".join([
        "## Adding a system to a session (label reuse)",
        "",
        *first,
        *second_section(data),
        "",
        f"Reproduce: `{data['command']}` ({data['elapsed'] / 60:.1f} min).",
    ])


def second_section(data: dict) -> list[str]:
    """The second addition's table (module docstring), empty when it was not run."""
    cfg, second = data["config"], data.get("second")
    if not second:
        return []
    rows = [("| labels between | stage | MSE x1e4 B | cov B | width B | half-width B | MSE x1e4 A | cov A | width A | "
             "half-width A |"), "|" + "---|" * 10]
    for between, case in second["cases"].items():
        triples = np.array(case)  # (runs, B/A, stage, 3)
        for k, name in enumerate(("B added", "before C", "C added", f"C + {cfg['batch']}")):
            cells = [stats(triples[:, i, k], second[truth]) for i, truth in enumerate(("truth", "truth_a"))]
            rows.append(f"| {between} | {name} | " + " | ".join(
                f"{1e4 * s['mse']:.1f} | {s['coverage']:.2f} | {s['width']:.2f} | {s['half_width']:.3f}"
                for s in cells) + " |")
    runs = cfg["second_runs"]
    return [(f"A second addition (online-poisson, 1:100 pool; B the near-copy, F1 {second['truth']:.3f}; A's F1 "
             f"{second['truth_a']:.3f}): B added at {cfg['first']} labels, then the labels between, then C (the "
             f"pool's second system), then one more batch. {runs} runs (coverage s.e. about "
             f"{np.sqrt(LEVEL * (1 - LEVEL) / runs):.2f}); width = mean width / (3.92 x RMSE)."),
            "", *rows, ""]


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = data["results"]
    pools = list(dict.fromkeys(key.split("|")[0] for key in results))  # a row per pool
    cols = len(results) // len(pools)
    fig, axes = plt.subplots(len(pools), cols, figsize=(3.2 * cols, 2.8 * len(pools)), squeeze=False)
    batch = data["config"]["batch"]
    for ax, (key, s) in zip(axes.ravel(), results.items(), strict=True):
        x = batch * np.arange(1, len(s["hw_fresh"]) + 1)
        ax.plot(x, s["hw_reuse"], label="reuse")
        ax.plot(x, s["hw_fresh"], label="fresh")
        ax.set_title(key.replace("|", " / "), fontsize=8)
        ax.set_xlabel("new labels")
    for row in axes:
        row[0].set_ylabel("mean half-width of F1(B)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--first", type=int, default=1000)
    ap.add_argument("--new", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--designs", default="online-poisson,importance")
    ap.add_argument("--pools", default=",".join(POOLS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--second-runs", type=int, default=0, help="runs of the second addition (0: none)")
    ap.add_argument("--between", default="0,500", help="labels between B's and C's additions, comma-separated")
    args = ap.parse_args()
    t0 = time.perf_counter()
    results = {}
    for pool_name in args.pools.split(",") if args.runs else ():
        k = list(POOLS).index(pool_name)  # a pool's seed does not depend on which pools run
        full = make_pool(args.items, prevalence=POOLS[pool_name], n_systems=2, separation=2.5, seed=args.seed + k)
        kinds = {"near-copy": near_copy(full, np.random.default_rng(args.seed + 100 + k)),
                 "different": {"preds": full.preds[:, 1], "scores": full.scores[:, 1], "probs": full.probs[:, 1]}}
        for kind, outputs in kinds.items():
            for design in args.designs.split(","):
                case = run_case(full, outputs, design, args.runs, args.first, args.new, args.batch)
                results[f"{pool_name}|{kind}|{design}"] = summarize(case, args.batch)
                print(f"done {pool_name} {kind} {design} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    second = None
    if args.second_runs:
        k = list(POOLS).index("1:100")
        full = make_pool(args.items, prevalence=POOLS["1:100"], n_systems=2, separation=2.5, seed=args.seed + k)
        b = near_copy(full, np.random.default_rng(args.seed + 100 + k))
        c = {"preds": full.preds[:, 1], "scores": full.scores[:, 1], "probs": full.probs[:, 1]}
        second = {"truth": f1_truth(Pool.from_arrays(full.item_ids, **{key: v[:, None] for key, v in b.items()},
                                                     labels=full.labels), 0), "truth_a": f1_truth(full, 0),
                  "cases": {between: second_addition(full, b, c, args.second_runs, args.first, int(between), args.batch)
                            for between in args.between.split(",")}}
        print(f"done second addition ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    data = {"config": vars(args), "results": results, "second": second, "elapsed": time.perf_counter() - t0,
            "command": "PYTHONPATH=src nice -n 10 python benchmarks/add_system.py " + " ".join(sys.argv[1:])}
    print(summary_section(data))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "add_system.json").write_text(json.dumps(data, indent=1))
    if results:
        plot(data, OUT / "add_system.png")


if __name__ == "__main__":
    main()
