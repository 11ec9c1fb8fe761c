"""Label efficiency of the designs on the real evaluation pools, through the `simulate` contract.

Runs ``labelwise simulate --json`` for each pool in ``../shared/datasets``
(skipped when absent) and each design, prints one table (MSE, bias,
undefined fraction, coverage, interval width and seconds per run at each
checkpoint) and writes the raw JSON and a plot of MSE against labels to
``benchmarks/out/``.

Usage::

    .venv/bin/python benchmarks/designs_f1.py --repeats 200 [--measure f1] [--designs passive,importance]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASETS = HERE.parent.parent / "shared" / "datasets"
POOLS = ("abt-buy", "dblp-acm")


def run_simulate(pool: Path, measure: str, design: str, repeats: int, budget: int, batch_size: int,
                 seed: int) -> dict:
    """One ``labelwise simulate --json`` call, parsed."""
    cmd = [sys.executable, "-m", "labelwise", "simulate", "--pool", str(pool), "--measure", measure,
           "--design", design, "--budget", str(budget), "--batch-size", str(batch_size),
           "--repeats", str(repeats), "--seed", str(seed), "--json", "--no-progress"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def table(results: list[dict]) -> str:
    head = f"{'pool':<10} {'design':<11} {'labels':>6} {'MSE':>9} {'bias':>9} {'undef':>6} {'cover':>6} " \
           f"{'width':>7} {'s/run':>7}"
    lines = [head, "-" * len(head)]
    for r in results:
        for c in r["checkpoints"]:
            lines.append(
                f"{r['pool']:<10} {r['design']:<11} {c['labels']:>6} {c['mse']:>9.2e} {c['bias']:>+9.4f} "
                f"{c['undefined_fraction']:>6.2f} {c['coverage']:>6.3f} {c['mean_width']:>7.4f} "
                f"{r['seconds_per_run']:>7.3f}"
            )
    return "\n".join(lines)


def plot(results: list[dict], path: Path, measure: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools = sorted({r["pool"] for r in results})
    fig, axes = plt.subplots(1, len(pools), figsize=(5.5 * len(pools), 4), squeeze=False)
    for ax, pool in zip(axes[0], pools):
        for r in (r for r in results if r["pool"] == pool):
            labels = [c["labels"] for c in r["checkpoints"]]
            ax.plot(labels, [c["mse"] for c in r["checkpoints"]], marker="o", label=r["design"])
        ax.set(xscale="log", yscale="log", xlabel="labels", ylabel=f"MSE of {measure}",
               title=f"{pool} ({results[0]['repeats']} repeats)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--measure", default="f1")
    ap.add_argument("--designs", default="passive,stratified,importance")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel")
    args = ap.parse_args()

    pools = [args.datasets / f"{p}.csv.gz" for p in POOLS]
    pools = [p for p in pools if p.exists()]
    if not pools:
        print(f"no benchmark pools under {args.datasets}; skipping")
        return
    jobs = [(p, d) for p in pools for d in args.designs.split(",")]
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        results = list(ex.map(lambda job: run_simulate(job[0], args.measure, job[1], args.repeats, args.budget,
                                                       args.batch_size, args.seed), jobs))
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    stem = f"designs_{args.measure}"
    (out / f"{stem}.json").write_text(json.dumps(results, indent=1))
    print(table(results))
    plot(results, out / f"{stem}.png", args.measure)
    print(f"\nraw results: {out / (stem + '.json')}\nplot: {out / (stem + '.png')}")


if __name__ == "__main__":
    main()
