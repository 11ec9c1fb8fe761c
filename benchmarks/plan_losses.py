"""Where the engine plans lose to the in-memory ``poisson`` and ``importance`` designs: one change at a time.

An engine pool runs ``poisson`` and ``importance`` as Poisson sampling with
inclusion probabilities planned on score blocks (``b`` per block), drawn by
the shared hash (``u < b``), handed out in increasing ``u / b`` and
estimated by Horvitz-Thompson with ``pi = b k / |S|`` for the first ``k`` of
the ``|S|`` sampled items.  The in-memory ``poisson`` planned ``b`` per item and
drew exactly ``M`` items by randomised systematic sampling (``pi = b k /
M``) before it switched to the last variant below (``poisson_memory.py``), and ``importance`` draws i.i.d. from a per-item proposal ``q`` with
the importance-sampling estimate.  This script runs the chain of variants
in between on each pool, with the same budget and checkpoints, so each MSE
ratio isolates one change:

* ``poisson``: per-item b + systematic (in memory) -> per-item b + hashed
  Poisson (random size, ``k / |S|``) -> block b + systematic (quantized
  plan, fixed size) -> block b + hashed Poisson (engine) -> block b + the
  ``M`` smallest ``u / b`` (sequential Poisson sampling, Ohlsson 1998: fixed
  size by the hash, ``pi = b k / M``).
* ``importance``: per-item q with replacement (in memory) -> per-item b
  (the engine's Algorithm-3 plan of the same deviations, not quantized) +
  hashed Poisson -> block b + hashed Poisson (engine).

    PYTHONPATH=src nice -n 10 python benchmarks/plan_losses.py --runs 300
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from grid import CALIBRATIONS, SEPARATIONS, generate_pool

import labelwise as lw
from labelwise.designs import ImportanceDesign, make_design
from labelwise.designs.importance import prior_deviation
from labelwise.designs.poisson import (
    defensive_deviations,
    inclusion_probabilities,
    systematic_sample,
)
from labelwise.engines import EnginePool
from labelwise.engines.blocks import block_keys, memory_prior
from labelwise.engines.hashing import item_uniform
from labelwise.estimators import horvitz_thompson_moments
from labelwise.oracle import score_prior

OUT = Path(__file__).resolve().parent / "out"
#: (prevalence, calibration, separation): the pools of block_designs.py, a balanced and an over-confident one
POOLS = ((0.3, "calibrated", "weak"), (0.05, "over", "weak"), (1e-3, "under", "strong"), (1e-3, "over", "weak"),
         (0.5, "calibrated", "strong"), (0.05, "over", "strong"))
N_ITEMS, BUDGET, CHECKPOINTS = 50_000, 1000, (250, 500, 1000)
#: the variants of each design, in memory first, the engine plan last
VARIANTS = {"poisson": ("item b, systematic", "item b, hashed Poisson", "block b, systematic", "block b, hashed Poisson",
                        "block b, hashed fixed size"),
            "importance": ("item q, with replacement", "item b, hashed Poisson", "block b, hashed Poisson")}
COMMAND = "PYTHONPATH=src nice -n 10 python benchmarks/plan_losses.py --runs {runs}"


def _ht_values(measure: lw.Measure, losses: np.ndarray, b: np.ndarray, queue: np.ndarray, size: int) -> list[float]:
    """F1 of the first ``k`` of ``queue`` at every checkpoint, Horvitz-Thompson with ``pi = b k / size``."""
    values = []
    for k in CHECKPOINTS:
        first = queue[:k]
        R, _ = horvitz_thompson_moments(measure, losses[first], np.minimum(b[first] * k / size, 1.0), N_ITEMS)
        values.append(float(measure.value(R)[0]))
    return values


def _hashed(pool: lw.Pool, b: np.ndarray, seed: int, size: int | None = None) -> tuple[np.ndarray, int]:
    """The items with ``u < b`` in increasing ``u / b`` and their number (the engine's draw, in memory); with
    ``size``, the ``size`` items of smallest ``u / b`` instead (sequential Poisson sampling)."""
    u = item_uniform(pool.item_ids, seed)
    with np.errstate(divide="ignore"):
        rank = np.where(b > 0, u / b, np.inf)
    hit = np.flatnonzero(u < b) if size is None else np.argpartition(rank, size - 1)[:size]
    return hit[np.lexsort((pool.item_ids[hit], u[hit], rank[hit]))], hit.size


def run_pool(prevalence: float, calibration: str, separation: str, runs: int) -> dict:
    """MSE per checkpoint of every variant on one pool."""
    name = f"p{prevalence:g}-{calibration}-{separation}"
    pool = generate_pool(n_items=N_ITEMS, prevalence=prevalence, k=CALIBRATIONS[calibration],
                         d=SEPARATIONS[separation], threshold="break-even", seed=1, name=name)
    measure = lw.make_measure("f1", pool)
    losses = measure.loss(pool.outputs(), pool.labels)
    truth = float(measure.value(losses.mean(axis=0))[0])
    engine = EnginePool.from_pool(pool)
    keys = block_keys(memory_prior(pool), pool.outputs().preds)
    per_block = lambda design: engine.plan(make_design(design), engine.measure("f1"), BUDGET).inclusion[
        np.searchsorted(engine.summary.keys, keys)]
    h = prior_deviation(measure, pool, score_prior(pool, 1.0))
    item_b = {"poisson": inclusion_probabilities(defensive_deviations(h, 0.1), BUDGET),
              "importance": inclusion_probabilities(defensive_deviations(h, ImportanceDesign().defensive), BUDGET)}
    block_b = {d: per_block(d) for d in VARIANTS}
    values = {f"{d}: {v}": np.empty((runs, len(CHECKPOINTS))) for d, names in VARIANTS.items() for v in names}
    for r in range(runs):
        rng = np.random.default_rng(r)
        for design, b_item, b_block in (("poisson", item_b["poisson"], block_b["poisson"]),
                                        ("importance", item_b["importance"], block_b["importance"])):
            hashed_item, hashed_block = _hashed(pool, b_item, r), _hashed(pool, b_block, r)
            row = {"item b, hashed Poisson": _ht_values(measure, losses, b_item, *hashed_item),
                   "block b, hashed Poisson": _ht_values(measure, losses, b_block, *hashed_block)}
            if design == "poisson":
                row["block b, hashed fixed size"] = _ht_values(measure, losses, b_block,
                                                               *_hashed(pool, b_block, r, BUDGET))
                for label, b in (("item b, systematic", b_item), ("block b, systematic", b_block)):
                    queue = systematic_sample(b, rng)
                    row[label] = _ht_values(measure, losses, b, queue, queue.size)
            for label, v in row.items():
                values[f"{design}: {label}"][r] = v
    importance = lw.simulate(pool, measure, ImportanceDesign(variance="plugin"), budget=BUDGET, batch_size=50,
                             repeats=runs, seed=0, checkpoints=list(CHECKPOINTS))
    values["importance: item q, with replacement"] = importance.values[..., 0].T
    mse = {k: np.mean(np.nan_to_num(v - truth, nan=1.0) ** 2, axis=0).tolist() for k, v in values.items()}
    print(name, "  ".join(f"{k}: {m[-1]:.2e}" for k, m in mse.items()), flush=True)
    return {"pool": name, "truth": truth, "mse": mse}


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/plan_losses.json``."""
    marks = data["checkpoints"]
    lines = ["## Where the engine plans lose to the in-memory poisson and importance", "",
             (f"F1 on generated pools ({data['n_items']:,} items, break-even predictions), {data['runs']} runs, "
              f"budget {data['budget']}. MSE of each variant over the in-memory design's at {', '.join(map(str, marks))} "
              "labels: each step changes one thing (per-item -> block inclusion probabilities; systematic, fixed-size "
              "-> hashed Poisson with the first k of |S| at pi = b k / |S|, or the M smallest u / b at pi = b k / M; "
              "with-replacement importance sampling -> Poisson sampling). The item -> block steps on the hashed draws "
              "use the same u (paired); the others independent runs (standard error of a ratio about "
              f"{np.sqrt(4 / data['runs']):.2f})."), "",
             "| pool | design | variant | " + " | ".join(f"MSE ratio at {c}" for c in marks) + " |",
             "| --- | --- | --- | " + " | ".join("---:" for _ in marks) + " |"]
    for pool in data["pools"]:
        for design, names in VARIANTS.items():
            base = pool["mse"][f"{design}: {names[0]}"]
            for name in names[1:]:
                ratios = [f"{m / b:.2f}" if b > 0 else "n/a" for m, b in zip(pool["mse"][f"{design}: {name}"], base)]
                lines.append(f"| {pool['pool']} | {design} | {name} | " + " | ".join(ratios) + " |")
    lines += ["", "Reproduce: `" + COMMAND.format(runs=data["runs"]) + "`", ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """MSE ratio over the in-memory design at the last checkpoint, per pool and variant (log scale)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (design, names) in zip(axes, VARIANTS.items()):
        for j, name in enumerate(names[1:]):
            ratios = [p["mse"][f"{design}: {name}"][-1] / max(p["mse"][f"{design}: {names[0]}"][-1], 1e-300)
                      for p in data["pools"]]
            ax.bar(np.arange(len(ratios)) + 0.25 * j, ratios, 0.25, label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_title(f"{design} vs {names[0]}", fontsize=9)
        ax.set_xticks(np.arange(len(data["pools"])) + 0.25, [p["pool"] for p in data["pools"]], fontsize=6,
                      rotation=30)
        ax.legend(fontsize=7)
    axes[0].set_ylabel(f"MSE ratio at {data['checkpoints'][-1]} labels")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300)
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    data = {"runs": args.runs, "n_items": N_ITEMS, "budget": BUDGET, "checkpoints": list(CHECKPOINTS),
            "pools": [run_pool(*spec, args.runs) for spec in POOLS]}
    (OUT / "plan_losses.json").write_text(json.dumps(data, indent=1))
    plot(data, OUT / "plan_losses.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
