"""Positives the scores cannot see: what the default's interval covers when a share of positives look like negatives.

Real pools hold positives no model ranks high: label noise, matches a matcher
misses for reasons its features do not show. Here a pool of ``--items`` items
has a share of its positives *hidden*: their score is drawn like a negative's,
and the probabilities are the posterior of a model that never saw them
(calibrated for the visible positives, blind to the hidden ones), so the
scores put almost nothing where the hidden positives are. The *twin* is the
same pool with the hidden positives turned negative: a calibrated pool whose
scores are right. As in ``benchmarks/tail_twins.py``, a run labels the same
items on both pools until it labels a hidden positive; up to then every
estimate and interval built on the labels and scores is the same on both, and
an interval covering both at 0.93 has a mean width of at least
``|delta F1| x (indistinguishable - 0.14)``.

The hidden share itself is not known either: a pool with twice the hidden
positives is told apart from the twin only slightly more often. An interval
valid for every hidden share the labels have not ruled out would charge for
``3 / m`` positives per tail item after ``m`` tail labels with none found (the
rule of three), vacuous on the rare pools the default is made for. The table
shows what the default, ``passive`` and ``stratified`` do on these pools.

Prints one table, writes ``out/hidden_positives.json`` and ``out/hidden_positives.png``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/hidden_positives.py --runs 40
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
from grid import BATCH_SIZE, COVERAGE_TARGET, OUT
from scipy.special import expit, logit
from tail_twins import CHECKPOINTS, rows, runs_on

import labelwise as lw

#: Pools as (prevalence, hidden share): the share of positives whose scores look like a negative's.
POOLS = ((0.005, 0.1), (0.005, 0.3), (0.001, 0.3))
#: Distance between the visible positives' and the negatives' mean score (unit variance).
SEPARATION = 3.0
OTHER_DESIGNS = ("passive", "stratified")


def hidden_pool(n_items: int, prevalence: float, share: float, seed: int) -> tuple[lw.Pool, np.ndarray]:
    """A pool whose ``share`` of positives score like negatives, and the positions of those positives."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n_items) < prevalence).astype(np.int8)
    hidden = (labels == 1) & (rng.random(n_items) < share)
    x = rng.standard_normal(n_items) + SEPARATION * ((labels == 1) & ~hidden)
    seen = prevalence * (1 - share)  # the rate of positives the model was trained on
    # the posterior of positives N(d, 1) at rate `seen` against negatives N(0, 1): log-odds linear in x
    probs = expit(logit(seen) + SEPARATION * x - SEPARATION ** 2 / 2)
    preds = (probs >= np.quantile(probs, 1 - prevalence)).astype(np.int8)
    name = f"hidden-{share:g}-{prevalence:g}"
    pool = lw.Pool.from_arrays(None, preds=preds, scores=logit(np.clip(probs, 1e-12, 1 - 1e-12)), probs=probs,
                               labels=labels, name=name)
    return pool, np.flatnonzero(hidden)


def other_designs(pool: lw.Pool, runs: int, seed: int) -> dict:
    """Coverage, mean width and MSE of the designs that read no score model, per checkpoint."""
    measure = lw.make_measure("f1", pool)
    out = {}
    for design in OTHER_DESIGNS:
        result = lw.simulate(pool, measure, design, budget=CHECKPOINTS[-1], batch_size=BATCH_SIZE, repeats=runs,
                             seed=seed, checkpoints=list(CHECKPOINTS)).to_dict()
        out[design] = [{"cover": c["coverage"], "width": c["mean_width"], "rmse": float(np.sqrt(c["mse"]))}
                       for c in result["checkpoints"]]
    return out


def summary_section(data: dict) -> str:
    """Markdown: per pool and checkpoint, the default on the pool and its twin, the floor, the other designs."""
    a = data["args"]
    lines = [
        "## Positives the scores cannot see: hidden positives and the twin that has none", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/hidden_positives.py --runs "
         f"{a['runs']} --items {a['items']} --seed {a['seed']}`: F1, batches of {BATCH_SIZE}. Pool "
         "`hidden-<share>-<prevalence>`: that share of the positives score like negatives and the probabilities are "
         "a model's that never saw them; the twin has them negative (its scores are right). *indist.*: share of runs "
         "that labeled no hidden positive (the labels are the same on both pools); *floor*: the mean width any "
         f"interval covering both pools at {COVERAGE_TARGET} needs (|delta F1| x (indist. low - 0.14), module "
         "docstring of `benchmarks/tail_twins.py`), over 3.92 x the twin's RMSE. Cells: coverage / width over 3.92 "
         "RMSE on that pool."), "",
        ("| pool | F1 (twin) | labels | indist. | floor ratio | default | default on twin | "
         + " | ".join(OTHER_DESIGNS) + " |"),
        "|---|---|---|---|---|---|---|" + "---|" * len(OTHER_DESIGNS),
    ]

    def cell(c: dict) -> str:
        ratio = c["width"] / (3.92 * c["rmse"]) if c["rmse"] else np.inf
        flag = "!" if c["cover"] < COVERAGE_TARGET else ""
        return f"{c['cover']:.2f}{flag} / {ratio:.2f}"

    for entry in data["pools"]:
        for k, row in enumerate(rows(entry)):
            others = " | ".join(cell(entry["others"][d][k]) for d in OTHER_DESIGNS)
            lines.append(f"| {entry['name']} | {entry['pool']['truth']:.3f} ({entry['twin']['truth']:.3f}) | "
                         f"{row['labels']} | {row['indistinguishable']:.2f} | {row['ratio_floor_twin']:.2f} | "
                         f"{cell(row['pool'])} | {cell(row['twin'])} | {others} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: Path) -> None:
    """Coverage on each pool per checkpoint: the default against the designs that read no score model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(data["pools"]), figsize=(4 * len(data["pools"]), 3.5), sharey=True)
    for ax, entry in zip(np.atleast_1d(axes), data["pools"]):
        table = rows(entry)
        ax.plot(CHECKPOINTS, [r["pool"]["cover"] for r in table], "o-", label="default")
        ax.plot(CHECKPOINTS, [r["twin"]["cover"] for r in table], "o--", label="default on the twin")
        for design in OTHER_DESIGNS:
            ax.plot(CHECKPOINTS, [c["cover"] for c in entry["others"][design]], "s-", label=design)
        ax.axhline(COVERAGE_TARGET, color="k", lw=0.8)
        ax.set_xscale("log")
        ax.set_title(entry["name"], fontsize=9)
        ax.set_xlabel("labels")
    np.atleast_1d(axes)[0].set_ylabel("coverage of the 95% interval")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save(data: dict, stem: str, section: Callable[[dict], str], draw: Callable[[dict, Path], None]) -> None:
    """Print ``section(data)``, write ``out/<stem>.json`` and the plot ``draw`` makes to ``out/<stem>.png``."""
    print(section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / f"{stem}.json").write_text(json.dumps(data))
    draw(data, OUT / f"{stem}.png")
    print(f"wrote {OUT / stem}.json and {OUT / stem}.png")


def pool_arguments(description: str) -> argparse.Namespace:
    """``--runs``, ``--items`` and ``--seed`` of a script over the hidden-positive pools."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def main() -> None:
    args = pool_arguments(__doc__.splitlines()[0])
    data = {"args": vars(args), "pools": []}
    for prevalence, share in POOLS:
        pool, hidden = hidden_pool(args.items, prevalence, share, args.seed)
        twin = pool.with_labels(np.where(np.isin(np.arange(pool.n_items), hidden), 0, pool.labels))
        entry = {"name": pool.name, "hidden": int(hidden.size), "pool": runs_on(pool, hidden, args.runs, args.seed),
                 "twin": runs_on(twin, hidden, args.runs, args.seed),
                 "others": other_designs(pool, args.runs, args.seed)}
        data["pools"].append(entry)
        print(f"{pool.name}: {int(pool.labels.sum())} positives, {hidden.size} hidden", flush=True)
    save(data, "hidden_positives", summary_section, plot)


if __name__ == "__main__":
    main()
