"""Noisy annotators (a stochastic oracle): passive vs importance vs ais vs poisson, a fresh answer per draw.

Each run simulates annotators who give the wrong label with probability
``--noise`` (:class:`labelwise.NoisyOracle`); the truth is the measure's
expectation over their answers (``simulate(..., noise=...)`` runs the
sessions under a stochastic oracle).  Every design but ``passive`` gets
``lam = 1 - 2 noise`` (``--lam``): the systems' scores know nothing of
annotator noise, and with answers wrong at rate ``e`` among ``C`` classes
``lam = 1 - C e / (C - 1)`` makes the prior expect wrong answers everywhere
(the second usage line below compares it with ``lam=1``).  Pools: a
generated one (10% positives) and, when ``../shared/datasets`` is present,
the real pools.  Prints MSE, bias, coverage of the 95% interval, width and
seconds per run at each checkpoint and writes ``benchmarks/out/stochastic_oracle.{json,png}``.

Usage::

    .venv/bin/python benchmarks/stochastic_oracle.py [--repeats 200] [--noise 0.05] [--measure f1]
    # the lam advice above (recall, 10% noise, 600 labels):
    .venv/bin/python benchmarks/stochastic_oracle.py --no-real --measure recall --noise 0.1 --budget 600 \
        --repeats 300 --n-items 3000 [--lam 1]
    # poisson near a census: its interval counts the noise of items taken with certainty
    .venv/bin/python benchmarks/stochastic_oracle.py --no-real --measure recall --noise 0.1 --n-items 3000 \
        --repeats 300 --designs poisson
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from designs_f1 import plot_curves
from pools import pool_paths

import labelwise as lw

HERE = Path(__file__).resolve().parent


def pools(real: bool, n_items: int) -> list[lw.Pool]:
    """The generated pool, then the real ones (when present and ``real``)."""
    out = [lw.make_pool(n_items, prevalence=0.1, separation=2.0, seed=31, name="generated-10%")]
    if real:
        out += [lw.Pool.from_file(p) for p in pool_paths()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.05)
    parser.add_argument("--measure", default="f1")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-real", action="store_true", help="only the generated pool")
    parser.add_argument("--n-items", type=int, default=20_000, help="size of the generated pool")
    parser.add_argument("--lam", type=float, default=None,
                        help="lam of every design but passive (default 1 - 2 noise)")
    parser.add_argument("--designs", default="passive,importance,ais,poisson,online-poisson")
    args = parser.parse_args()
    lam = 1.0 - 2.0 * args.noise if args.lam is None else args.lam
    designs = {name: {} if name == "passive" else {"lam": lam} for name in args.designs.split(",")}
    results = []
    head = f"{'pool':<14} {'design':<11} {'labels':>6} {'MSE':>9} {'bias':>9} {'cover':>6} {'width':>7} {'s/run':>6}"
    print(f"noise {args.noise}, lam {lam:g}, {args.repeats} repeats, measure {args.measure}\n{head}\n{'-' * len(head)}")
    for pool in pools(not args.no_real, args.n_items):
        measure = lw.make_measure(args.measure, pool)
        for design, params in designs.items():
            result = lw.simulate(pool, measure, design, design_params=params, budget=args.budget,
                                 repeats=args.repeats, seed=args.seed, noise=args.noise, oracle="stochastic")
            summary = result.to_dict() | {"label": design}
            results.append(summary)
            for c in summary["checkpoints"]:
                print(f"{pool.name:<14} {design:<11} {c['labels']:>6} {c['mse']:>9.2e} {c['bias']:>+9.4f} "
                      f"{c['coverage']:>6.3f} {c['mean_width']:>7.4f} {summary['seconds_per_run']:>6.3f}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "stochastic_oracle.json").write_text(json.dumps(results, indent=1))
    plot(results, out / "stochastic_oracle.png", args)
    print(f"\nraw results: {out / 'stochastic_oracle.json'}\nplot: {out / 'stochastic_oracle.png'}")


def plot(results: list[dict], path: Path, args: argparse.Namespace) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r["pool"] for r in results))
    fig, axes = plt.subplots(2, len(names), figsize=(5 * len(names), 7), squeeze=False)
    for col, name in enumerate(names):
        mine = [r for r in results if r["pool"] == name]
        plot_curves(axes[0, col], mine, "mse", "label")
        axes[0, col].set(xscale="log", yscale="log", ylabel=f"MSE of {args.measure}",
                         title=f"{name}, noise {args.noise}")
        plot_curves(axes[1, col], mine, "coverage", "label")
        axes[1, col].axhline(0.95, color="grey", lw=0.8)
        axes[1, col].set(xscale="log", xlabel="labels", ylabel="coverage (95%)", ylim=(0.5, 1.0))
        for ax in axes[:, col]:
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
