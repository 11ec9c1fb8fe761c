"""Coverage and width of the non-default designs' intervals on rare, over-confident and balanced pools.

Every interval labelwise prints should cover its nominal level on every kind
of pool and be no wider than it needs to be (mean width at most
2 x 3.92 x RMSE).  This runs ``labelwise.simulate`` (F1, budget 2000,
batches of 50, checkpoints 250/500/1000/2000) for the designs a user can
choose with ``--design`` (``stratified``, ``oasis``, ``poisson``,
``importance`` by default) on

* the three generated pools of ``benchmarks/results.py`` (``balanced``,
  ``rare-1e-3``, ``overconfident-1e-3``, built by ``labelwise.make_pool``),
* a 1:100 over-confident pool of the robustness grid
  (``0.01-x3-weak``: probabilities sigmoid(3 x calibrated logit), separation
  2, built by ``benchmarks/robustness.py``'s ``generate_pool``),
* the real entity-resolution pools ``abt-buy`` and ``dblp-acm`` when
  ``--datasets`` holds them (skipped otherwise),

and prints per pool and design the coverage of the 95% interval and the
width ratio ``mean_width / (3.92 RMSE)`` at each checkpoint, with the
fraction of runs whose estimate was undefined (their interval is F1's whole
range).  Writes ``benchmarks/out/rare_design_intervals[_<tag>].json`` (the
``simulate`` objects) and ``.png`` (coverage and width ratio against labels).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 \\
        python benchmarks/rare_design_intervals.py --runs 100 [--designs stratified,oasis] [--tag after] \\
        [--datasets ../shared/datasets]

Run it with ``PYTHONPATH`` pointing at another checkout's ``src`` (and a
different ``--tag``) to compare two versions of the code.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path

from grid import generate_pool
from pools import DATASETS, pool_paths
from pools import POOLS as REAL_POOLS
from results import BATCH_SIZE, BUDGET, CHECKPOINTS, GENERATED, MEASURE, width_ratio

import labelwise as lw

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

DESIGNS = ("stratified", "oasis", "poisson", "importance")
#: The project's targets: coverage at least this at every checkpoint ...
COVERAGE_TARGET = 0.93
#: ... and a width ratio at most this.
WIDTH_TARGET = 2.0

#: name -> how to build the pool (the same pool on every run): the generated pools of ``results.py``, then one
#: of the robustness grid
POOLS = {
    **{name: lambda name=name, kwargs=kwargs: lw.make_pool(**kwargs, name=name) for name, kwargs in GENERATED.items()},
    "0.01-x3-weak": lambda: generate_pool(n_items=50_000, prevalence=0.01, k=3.0, d=2.0, threshold="break-even",
                                          seed=1, name="0.01-x3-weak"),
}


def real_pools(datasets: Path) -> dict:
    """name -> how to load each real pool present under ``datasets``."""
    return {path.name.split(".")[0]: lambda path=path: lw.Pool.from_file(path) for path in pool_paths(datasets, REAL_POOLS)}


def run(pools: dict, designs: list[str], runs: int, seed: int) -> dict:
    """``simulate`` objects per pool (name -> loader) and design."""
    results: dict[str, list[dict]] = {}
    for name, load in pools.items():
        pool = load()
        measure = lw.make_measure(MEASURE, pool)
        results[name] = []
        for design in designs:
            res = lw.simulate(pool, measure, design, budget=BUDGET, batch_size=BATCH_SIZE, repeats=runs,
                              seed=seed, checkpoints=CHECKPOINTS, progress=sys.stderr.isatty())
            out = res.to_dict()
            results[name].append(out)
            cells = " ".join(f"{c['coverage']:.2f}/{width_ratio(c):.2f}" for c in out["checkpoints"])
            print(f"{name:<20} {design:<12} coverage/ratio {cells}", flush=True)
    return results


def _cell(c: dict) -> str:
    cov, ratio = c["coverage"], width_ratio(c)
    miss = cov < COVERAGE_TARGET or ratio > WIDTH_TARGET
    text = f"{cov:.2f} / {ratio:.2f}" if math.isfinite(ratio) else f"{cov:.2f} / n/a"
    return f"**{text}**" if miss else text


def pool_table(rows: list[dict]) -> str:
    """Rows = designs; per checkpoint ``coverage / width ratio`` (bold where a target is missed), undefined share."""
    head = ["design"] + [f"{n} labels" for n in CHECKPOINTS] + ["undefined (250/.../2000)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        undefined = "/".join(f"{c['undefined_fraction']:.2f}" for c in r["checkpoints"])
        lines.append("| " + " | ".join([f"`{r['design']}`", *(_cell(c) for c in r["checkpoints"]), undefined]) + " |")
    return "\n".join(lines)


def summary_section(data: dict) -> str:
    """Markdown section rendered from the JSON this script writes."""
    out = [
        "## Non-default designs' intervals on real, rare, over-confident and balanced pools (F1)",
        "",
        (f"{data['runs']} runs per design and pool, budget {BUDGET}, batches of {BATCH_SIZE}. Each cell is the "
         f"coverage of the 95% interval / the width ratio mean width / (3.92 RMSE); bold where coverage is below "
         f"{COVERAGE_TARGET} or the ratio above {WIDTH_TARGET}. Undefined runs (no positive and no predicted "
         f"positive labeled yet) report F1's whole range [0, 1] as their interval. Coverage over "
         f"{data['runs']} runs has a standard error of {math.sqrt(0.95 * 0.05 / data['runs']):.3f}."),
    ]
    for name, rows in data["results"].items():
        out += ["", f"### {name}", "", pool_table(rows)]
    out += ["", "Reproduce with:", "", "```", data["command"], "```"]
    return "\n".join(out)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools = list(data["results"])
    fig, axes = plt.subplots(2, len(pools), figsize=(4 * len(pools), 6), squeeze=False)
    for col, name in enumerate(pools):
        for r in data["results"][name]:
            labels = [c["labels"] for c in r["checkpoints"]]
            axes[0, col].plot(labels, [c["coverage"] for c in r["checkpoints"]], marker="o", label=r["design"])
            axes[1, col].plot(labels, [width_ratio(c) for c in r["checkpoints"]], marker="o", label=r["design"])
        axes[0, col].axhline(COVERAGE_TARGET, color="grey", ls="--")
        axes[1, col].axhline(WIDTH_TARGET, color="grey", ls="--")
        axes[0, col].set_title(name)
        axes[1, col].set_xlabel("labels")
        for ax in axes[:, col]:
            ax.set_xscale("log")
            ax.set_xticks(CHECKPOINTS, [str(n) for n in CHECKPOINTS])
            ax.minorticks_off()
    axes[0, 0].set_ylabel("coverage of the 95% interval")
    axes[1, 0].set_ylabel("mean width / (3.92 RMSE)")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--designs", default=",".join(DESIGNS), help="comma-separated designs")
    ap.add_argument("--pools", default=None,
                    help=f"comma-separated subset of {','.join(POOLS)} and the real pools (default: all present)")
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    ap.add_argument("--tag", default="", help="suffix of the output files (e.g. before/after)")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args(argv)
    known = {**real_pools(args.datasets), **POOLS}
    names = list(known) if args.pools is None else [p for p in args.pools.split(",") if p]
    unknown = sorted(set(names) - set(known))
    if unknown:
        ap.error(f"--pools: unknown {unknown}; choose from {', '.join(known)}")
    designs = [d for d in args.designs.split(",") if d]
    command = "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python " + shlex.join(
        ["benchmarks/rare_design_intervals.py", *(argv if argv is not None else sys.argv[1:])])
    data = {"runs": args.runs, "seed": args.seed, "command": command,
            "results": run({name: known[name] for name in names}, designs, args.runs, args.seed)}
    OUT.mkdir(exist_ok=True)
    stem = "rare_design_intervals" + (f"_{args.tag}" if args.tag else "")
    (OUT / f"{stem}.json").write_text(json.dumps(data, indent=1))
    print()
    print(summary_section(data))
    if not args.no_plot:
        plot(data, OUT / f"{stem}.png")


if __name__ == "__main__":
    main()
