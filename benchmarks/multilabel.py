"""Micro- and macro-F1 of a multi-label system: designs compared on a generated Toxic-Comments-like pool.

Yilmaz et al., "Sample Efficient Model Evaluation" (arXiv:2109.12043, 2021),
sec. 5.3 and appendix D, evaluate six binary toxicity classifiers
(toxic, severe toxic, obscene, threat, insult, identity hate) by micro and
macro F1.  This benchmark generates a pool with the same six label
prevalences (:func:`labelwise.make_multilabel_pool`, one calibrated
classifier per label), runs each design ``--repeats`` times with the target
measure it estimates, and prints MSE, bias, undefined fraction, coverage of
the 95% interval, interval width and seconds per run at 250/500/1000/2000
labels; the MSE relative to passive sampling is in the ``/passive`` column.
The raw results and a plot (MSE and coverage against labels) go to
``benchmarks/out/multilabel.{json,png}``.

Usage::

    .venv/bin/python benchmarks/multilabel.py [--repeats 100] [--designs passive,importance,poisson,online-poisson]
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from designs_f1 import plot_curves

import labelwise as lw

HERE = Path(__file__).resolve().parent
#: Label prevalences of the Jigsaw Toxic Comment Classification Challenge training set.
TOXIC = {"toxic": 0.096, "severe_toxic": 0.010, "obscene": 0.053, "threat": 0.003, "insult": 0.049,
         "identity_hate": 0.009}
MEASURES = ("multilabel_micro_f1", "multilabel_macro_f1")


def toxic_pool(n_items: int, separation: float, seed: int) -> lw.Pool:
    """The generated six-label pool (deterministic in its arguments)."""
    return lw.make_multilabel_pool(n_items, len(TOXIC), prevalence=list(TOXIC.values()), separation=separation,
                                   seed=seed, name="toxic-like", label_names=list(TOXIC))


def run(job: tuple[str, str], args: argparse.Namespace) -> dict:
    """One ``simulate`` of a (measure, design) pair, as its JSON-able summary."""
    measure_name, design = job
    pool = toxic_pool(args.n_items, args.separation, args.pool_seed)
    measure = lw.make_measure(measure_name, pool)
    result = lw.simulate(pool, measure, design, budget=args.budget, batch_size=args.batch_size,
                         repeats=args.repeats, seed=args.seed)
    return result.to_dict()


def table(results: list[dict]) -> str:
    """One row per measure, design and checkpoint."""
    passive = {(r["measure"], c["labels"]): c["mse"] for r in results if r["design"] == "passive"
               for c in r["checkpoints"]}
    head = (f"{'measure':<20} {'design':<15} {'labels':>6} {'MSE':>9} {'/passive':>8} {'bias':>9} {'undef':>6} "
            f"{'cover':>6} {'width':>7} {'s/run':>6}")
    lines = [head, "-" * len(head)]
    for r in results:
        for c in r["checkpoints"]:
            ref = passive.get((r["measure"], c["labels"]))
            ratio = f"{c['mse'] / ref:>8.3f}" if ref else f"{'':>8}"
            lines.append(
                f"{r['measure']:<20} {r['design']:<15} {c['labels']:>6} {c['mse']:>9.2e} {ratio} {c['bias']:>+9.4f} "
                f"{c['undefined_fraction']:>6.2f} {c['coverage']:>6.3f} {c['mean_width']:>7.4f} "
                f"{r['seconds_per_run']:>6.2f}"
            )
    return "\n".join(lines)


def plot(results: list[dict], path: Path) -> None:
    """MSE (top) and coverage (bottom) against labels, one column per measure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(MEASURES), figsize=(5.5 * len(MEASURES), 7), squeeze=False)
    for col, measure in enumerate(MEASURES):
        of_measure = [r for r in results if r["measure"] == measure]
        plot_curves(axes[0, col], of_measure, "mse", "design")
        plot_curves(axes[1, col], of_measure, "coverage", "design")
        truth = next(r["true_value"] for r in results if r["measure"] == measure)
        axes[0, col].set(xscale="log", yscale="log", ylabel="MSE",
                         title=f"{measure} (true {truth:.3f}), {results[0]['repeats']} repeats")
        axes[1, col].axhline(0.95, color="grey", linestyle="--", linewidth=1)
        lowest = min(c["coverage"] for r in results if r["measure"] == measure for c in r["checkpoints"])
        axes[1, col].set(xscale="log", xlabel="labels", ylabel="coverage of the 95% interval",
                         ylim=(min(0.8, lowest - 0.05), 1.01))
        for ax in axes[:, col]:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-items", type=int, default=20_000)
    ap.add_argument("--separation", type=float, default=3.0, help="per-label classifier separation (AUC ~0.98)")
    ap.add_argument("--pool-seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=100)
    ap.add_argument("--designs", default="passive,importance,poisson,online-poisson")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel")
    args = ap.parse_args()

    pool = toxic_pool(args.n_items, args.separation, args.pool_seed)
    counts = lw.decode_multilabel(pool.labels, len(TOXIC)).sum(axis=0)
    print(f"pool: {pool.n_items} items; positives per label: "
          + ", ".join(f"{name} {int(n)}" for name, n in zip(TOXIC, counts)))
    jobs = [(m, d) for m in MEASURES for d in args.designs.split(",")]
    with ProcessPoolExecutor(args.jobs) as ex:
        results = list(ex.map(run, jobs, [args] * len(jobs)))
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "multilabel.json").write_text(json.dumps(results, indent=1))
    print(table(results))
    plot(results, out / "multilabel.png")
    print(f"\nraw results: {out / 'multilabel.json'}\nplot: {out / 'multilabel.png'}")


if __name__ == "__main__":
    main()
