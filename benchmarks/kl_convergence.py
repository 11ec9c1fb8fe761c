"""Convergence of the AIS proposal to the optimal one (cf. Marchant & Rubinstein 2021, Figure 2, upper panel).

For each pool in ``../shared/datasets`` (skipped when absent) and each AIS
variant, ``--runs`` runs label ``--budget`` items in batches of
``--batch-size``; before the first batch and after every batch the script
records ``KL(q* || q_t)``, where ``q*`` is the asymptotically optimal proposal
given the true labels (``diagnostics.optimal_proposal_given_truth``) and
``q_t`` is the proposal the design would draw the next batch from
(``session.sampler.q_of(np.arange(N))``, the proposal of the run the session
drives).

Variants (the "Ours-1" and "Ours-8" of Marchant & Rubinstein, "Needle in a
Haystack: Label-Efficient Evaluation under Extreme Class Imbalance", KDD 2021):

* ``ais-1``: ``ais`` with its defaults, depth 1 and branching 256;
* ``ais-8``: ``ais`` with depth 8 and branching 2.

Prints the mean KL (and its standard error over runs) at 250/500/1000/2000
labels and plots mean KL against labels (log y), one panel per pool, in
``benchmarks/out/kl_convergence.png``.

Usage::

    .venv/bin/python benchmarks/kl_convergence.py [--runs 50] [--measure f1] [--jobs 2]
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import numpy as np
from pools import DATASETS, pool_paths

from labelwise import Pool, Session, TruthOracle, make_design, make_measure
from labelwise.diagnostics import kl_divergence, optimal_proposal_given_truth

HERE = Path(__file__).resolve().parent
VARIANTS = {"ais-1": {}, "ais-8": {"depth": 8, "branching": 2}}
REPORT_AT = (250, 500, 1000, 2000)


@cache
def setup(path: str, measure_name: str):
    """The pool, the measure and the optimal proposal ``q*`` (cached per worker process)."""
    pool = Pool.from_file(path)
    measure = make_measure(measure_name, pool)
    return pool, measure, optimal_proposal_given_truth(pool, measure)


def kl_trace(path: str, measure_name: str, variant: str, budget: int, batch_size: int,
             seed: np.random.SeedSequence) -> np.ndarray:
    """``KL(q* || q_t)`` at 0, batch_size, 2 batch_size, ..., budget labels for one run."""
    pool, measure, q_star = setup(path, measure_name)
    design = make_design("ais", **VARIANTS[variant])
    session = Session(pool, measure, design, budget=budget, seed=np.random.default_rng(seed))
    oracle = TruthOracle(pool)
    everything = np.arange(pool.n_items)
    trace = [kl_divergence(q_star, session.sampler.q_of(everything))]
    while session.n_labels < budget:
        ids = session.next_batch(min(batch_size, budget - session.n_labels))
        session.add_labels(ids, oracle(ids), source="oracle")
        trace.append(kl_divergence(q_star, session.sampler.q_of(everything)))
    return np.asarray(trace)


def table(labels: np.ndarray, results: dict, runs: int) -> str:
    marks = [m for m in REPORT_AT if m in labels]
    cols = "".join(f"{f'KL@{m}':>18}" for m in marks)
    head = f"{'pool':<10} {'design':<7}{cols}"
    lines = [f"mean KL(q* || q_t) +- standard error over {runs} runs", head, "-" * len(head)]
    for (pool, variant), traces in results.items():
        mean = traces.mean(axis=0)
        se = traces.std(axis=0, ddof=1) / np.sqrt(len(traces)) if len(traces) > 1 else np.zeros_like(mean)
        cells = "".join(f"{f'{mean[i]:.4f} +- {se[i]:.4f}':>18}"
                        for i in (int(np.flatnonzero(labels == m)[0]) for m in marks))
        lines.append(f"{pool:<10} {variant:<7}{cells}")
    return "\n".join(lines)


def plot(labels: np.ndarray, results: dict, path: Path, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools = list(dict.fromkeys(pool for pool, _ in results))
    fig, axes = plt.subplots(1, len(pools), figsize=(5.2 * len(pools), 4), squeeze=False)
    for ax, pool in zip(axes[0], pools):
        for variant in VARIANTS:
            traces = results[(pool, variant)]
            mean = traces.mean(axis=0)
            lo, hi = np.quantile(traces, [0.1, 0.9], axis=0)
            line, = ax.plot(labels, mean, lw=1.6, label=f"{variant} (mean)")
            ax.fill_between(labels, lo, hi, color=line.get_color(), alpha=0.15, lw=0)
        ax.set(yscale="log", xlabel="labels", ylabel=r"KL$(q^* \,\|\, q_t)$",
               title=f"{pool}: {args.measure}, {len(traces)} runs (band: 10-90%)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=130)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--measure", default="f1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = ap.parse_args()

    pools = pool_paths(args.datasets)
    if not pools:
        return
    seeds = np.random.SeedSequence(args.seed).spawn(args.runs)  # common seeds across pools and variants
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        futures = {(p.name.split(".")[0], v): [ex.submit(kl_trace, str(p), args.measure, v, args.budget,
                                                          args.batch_size, s) for s in seeds]
                   for p in pools for v in VARIANTS}
        results = {key: np.stack([f.result() for f in fs]) for key, fs in futures.items()}
    n_batches = next(iter(results.values())).shape[1] - 1
    labels = np.minimum(np.arange(n_batches + 1) * args.batch_size, args.budget)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    print(table(labels, results, args.runs))
    plot(labels, results, out / "kl_convergence.png", args)
    print(f"\nplot: {out / 'kl_convergence.png'}")


if __name__ == "__main__":
    main()
