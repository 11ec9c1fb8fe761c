"""The in-memory ``poisson`` design before and after it draws like an engine pool: MSE, coverage and time.

Before: per-item inclusion probabilities and a randomised systematic sample
of ``M`` items.  After: inclusion probabilities planned on score blocks and
the ``M`` items of smallest ``u / b`` by the shared item hash (sequential
Poisson sampling), the sample an engine pool draws for the same seed.  The
same script runs on both code versions (``PYTHONPATH`` picks the source
tree) and ``--tag`` names its output; the summary compares the two files.

    PYTHONPATH=/work/main/src nice -n 10 python benchmarks/poisson_memory.py --runs 100 --tag before
    PYTHONPATH=src nice -n 10 python benchmarks/poisson_memory.py --runs 100 --tag after
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from grid import CALIBRATIONS, SEPARATIONS, generate_pool
from plan_losses import BUDGET, CHECKPOINTS, N_ITEMS, POOLS

import labelwise as lw
from labelwise.designs import PoissonDesign

OUT = Path(__file__).resolve().parent / "out"
COMMAND = "PYTHONPATH={path} nice -n 10 python benchmarks/poisson_memory.py --runs {runs} --tag {tag}"


def run_pool(prevalence: float, calibration: str, separation: str, runs: int, design: lw.Design | None = None) -> dict:
    """MSE, coverage of the 95% interval and mean width of F1 at every checkpoint, and the wall time of ``design``
    (``poisson`` by default)."""
    name = f"p{prevalence:g}-{calibration}-{separation}"
    pool = generate_pool(n_items=N_ITEMS, prevalence=prevalence, k=CALIBRATIONS[calibration],
                         d=SEPARATIONS[separation], threshold="break-even", seed=1, name=name)
    measure = lw.make_measure("f1", pool)
    start, cpu = time.perf_counter(), time.process_time()
    sim = lw.simulate(pool, measure, design or PoissonDesign(), budget=BUDGET, batch_size=50, repeats=runs, seed=0,
                      checkpoints=list(CHECKPOINTS))
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    truth = sim.true_value[0]
    values, lower, upper = sim.values[..., 0], sim.lower[..., 0], sim.upper[..., 0]
    inside = (lower <= truth) & (truth <= upper)
    row = {"pool": name, "truth": float(truth), "seconds": seconds, "cpu_seconds": cpu_seconds,
           "mse": np.mean(np.nan_to_num(values - truth, nan=1.0) ** 2, axis=1).tolist(),
           "coverage": np.mean(inside, axis=1).tolist(), "width": np.nanmean(upper - lower, axis=1).tolist()}
    print(name, f"MSE {row['mse'][-1]:.2e} coverage {row['coverage'][-1]:.3f} {seconds:.1f} s", flush=True)
    return row


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/poisson_memory_{before,after}.json``
    (``data = {"before": ..., "after": ...}``)."""
    return comparison_section(data, "In-memory poisson: block plan and hashed fixed-size draw vs per-item plan and "
                              "systematic draw", COMMAND)


def comparison_section(data: dict, title: str, command: str) -> str:
    """The before/after table of :func:`summary_section` under ``## title``, reproduced by ``command``
    (with ``{path}``, ``{runs}`` and ``{tag}`` fields)."""
    before, after = data["before"], data["after"]
    runs, last = after["runs"], len(after["checkpoints"]) - 1
    se = 3 * np.sqrt(0.95 * 0.05 / runs)
    # CPU time where both runs recorded it (it does not grow with the load of a shared machine), else wall time
    clock = "cpu_seconds" if all("cpu_seconds" in r for r in (*before["pools"], *after["pools"])) else "seconds"
    lines = [f"## {title}", "",
             (f"F1 on generated pools ({after['n_items']:,} items, break-even predictions), {runs} runs each, budget "
              f"{after['budget']}, at {after['checkpoints'][last]} labels. MSE ratio after / before (independent runs: "
              f"standard error of the ratio about {np.sqrt(4 / runs):.2f}); coverage of the 95% interval (3 standard "
              f"errors: +-{se:.3f}); {'CPU' if clock == 'cpu_seconds' else 'wall'} time of all runs."), "",
             "| pool | MSE ratio | coverage before | coverage after | width before | width after | s before | s after |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for b, a in zip(before["pools"], after["pools"], strict=True):
        lines.append(f"| {a['pool']} | {a['mse'][last] / b['mse'][last]:.2f} | {b['coverage'][last]:.3f} | "
                     f"{a['coverage'][last]:.3f} | {b['width'][last]:.4f} | {a['width'][last]:.4f} | "
                     f"{b[clock]:.1f} | {a[clock]:.1f} |")
    ratios = [a["mse"][last] / b["mse"][last] for b, a in zip(before["pools"], after["pools"], strict=True)]
    lines += ["", f"Geometric mean MSE ratio: {np.exp(np.mean(np.log(ratios))):.3f}.", "", "Reproduce:", "",
              "    " + command.format(path="<main checkout>/src", runs=runs, tag="before"),
              "    " + command.format(path="src", runs=runs, tag="after"), ""]
    return "\n".join(lines)


def plot(data: dict, path: Path) -> None:
    """MSE ratio after / before and the coverage of both, per pool, at the last checkpoint."""
    before, after = data["before"]["pools"], data["after"]["pools"]
    x = np.arange(len(after))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.5))
    ax1.bar(x, [a["mse"][-1] / b["mse"][-1] for b, a in zip(before, after, strict=True)])
    ax1.axhline(1.0, color="k", lw=0.8)
    ax1.set_ylabel("MSE after / before")
    ax2.plot(x, [b["coverage"][-1] for b in before], "o", label="before")
    ax2.plot(x, [a["coverage"][-1] for a in after], "s", label="after")
    ax2.axhline(0.95, color="k", lw=0.8)
    ax2.set_ylabel("coverage of the 95% interval")
    ax2.legend(fontsize=7)
    for ax in (ax1, ax2):
        ax.set_xticks(x, [a["pool"] for a in after], fontsize=6, rotation=30)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def compare(name: str, design: lw.Design, doc: str, section) -> None:
    """The command line of a before/after script: run ``design`` on :data:`POOLS`, write ``out/<name>_<tag>.json``,
    and once both tags exist ``out/<name>.{json,png}`` and ``section`` of them on stdout."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tag", choices=("before", "after"), required=True)
    args = ap.parse_args()
    data = {"runs": args.runs, "n_items": N_ITEMS, "budget": BUDGET, "checkpoints": list(CHECKPOINTS),
            "pools": [run_pool(*spec, args.runs, design) for spec in POOLS]}
    save_tagged(name, args.tag, data, plot, section)


def save_tagged(name: str, tag: str, data: dict, plot_both: Callable[[dict, Path], None],
                section: Callable[[dict], str]) -> None:
    """Write ``out/<name>_<tag>.json``, and once both tags exist ``out/<name>.json`` (``{"before": ..., "after":
    ...}``), ``plot_both`` of it as ``out/<name>.png`` and ``section`` of it on stdout."""
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}_{tag}.json").write_text(json.dumps(data, indent=1))
    both = {t: OUT / f"{name}_{t}.json" for t in ("before", "after")}
    if all(p.exists() for p in both.values()):
        loaded = {t: json.loads(p.read_text()) for t, p in both.items()}
        (OUT / f"{name}.json").write_text(json.dumps(loaded))  # what sections.py renders
        plot_both(loaded, OUT / f"{name}.png")
        print(section(loaded))


def main() -> None:
    compare("poisson_memory", PoissonDesign(), __doc__, summary_section)


if __name__ == "__main__":
    main()
