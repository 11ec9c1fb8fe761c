"""CPU seconds of one 2000-label run of the default adaptive design, ``online-poisson``, on the real 54k pools.

Each run is one ``labelwise.simulate`` call (F1, batches of 50, 2000 labels,
checkpoints 250/500/1000/2000, one repeat, seed ``r``): set-up, the 40
batches and the four checkpoint estimates.  The machine is shared, so the
figure of merit is the CPU time of this one process (``time.process_time``;
run with ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` for a single thread);
wall time is reported beside it.  ``--before`` embeds the JSON of the same
script run on an earlier version of labelwise (``PYTHONPATH`` pointing at its
``src``) for a before/after table.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 .venv/bin/python benchmarks/online_poisson_speed.py \\
        [--datasets ../shared/datasets] [--runs 5] [--out online_poisson_speed] [--before out/....json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from pools import DATASETS, pool_paths

import labelwise as lw

OUT = Path(__file__).resolve().parent / "out"
#: The issue's target: CPU seconds per 2000-label run on a 54k-item pool.
TARGET = 0.5


def time_runs(pool: lw.Pool, runs: int) -> dict:
    """CPU and wall seconds of each of ``runs`` single-run simulations (seeds 0..runs-1) and their medians."""
    measure = lw.make_measure("f1", pool)
    lw.simulate(pool, measure, "online-poisson", budget=100, batch_size=50, repeats=1, seed=0)  # warm imports
    cpu, wall = [], []
    for seed in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        lw.simulate(pool, measure, "online-poisson", budget=2000, batch_size=50, repeats=1, seed=seed)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"n_items": pool.n_items, "cpu": cpu, "wall": wall, "cpu_median": float(np.median(cpu)),
            "cpu_min": float(np.min(cpu)), "wall_median": float(np.median(wall))}


def plot(data: dict, path: Path) -> None:
    """Median CPU seconds per run, before and after, per pool, with the target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(data["pools"])
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(5, 3.2))
    series = [("after", data["pools"])] + ([("before", data["before"]["pools"])] if data.get("before") else [])
    width = 0.8 / len(series)
    for i, (label, pools) in enumerate(series):
        ax.bar(x + i * width, [pools[n]["cpu_median"] for n in names], width, label=label)
    ax.axhline(TARGET, color="k", ls="--", lw=1, label="target")
    ax.set_xticks(x + width * (len(series) - 1) / 2, names)
    ax.set_ylabel("CPU s per 2000-label run")
    ax.set_title("online-poisson, F1, batches of 50")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def summary_section(data: dict) -> str:
    """Markdown: median (and least) CPU and median wall seconds per run on each pool, before and after."""
    before = (data.get("before") or {}).get("pools", {})
    out = [
        "## Speed of the default design (online-poisson) on the 54k pools", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/online_poisson_speed.py "
         f"--runs {data['runs']}` (before: the same command with `PYTHONPATH` at the earlier `src`, passed in "
         "with `--before`): one `simulate` of F1, batches of 50, 2000 labels, set-up and the four checkpoint "
         f"estimates included; median over {data['runs']} seeds of the process's CPU seconds (single thread) and "
         f"wall seconds on a shared machine (other processes slow this one's CPU time too, by up to a third between "
         "repeats: the least CPU time is the steadier comparison). Target: at most "
         f"{TARGET} CPU s per run."), "",
        ("| pool | items | CPU s before | CPU s after | least CPU s before | least CPU s after | wall s before "
         "| wall s after | target met |"),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, after in data["pools"].items():
        earlier = {key: f"{before[name][key]:.3f}" if name in before else "-"
                   for key in ("cpu_median", "cpu_min", "wall_median")}
        out.append(f"| {name} | {after['n_items']:,} | {earlier['cpu_median']} | {after['cpu_median']:.3f} | "
                   f"{earlier['cpu_min']} | {after['cpu_min']:.3f} | "
                   f"{earlier['wall_median']} | {after['wall_median']:.3f} | "
                   f"{'yes' if after['cpu_median'] <= TARGET else 'no'} |")
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default="online_poisson_speed", help="name of the JSON and PNG in benchmarks/out/")
    parser.add_argument("--before", type=Path, help="this script's JSON from an earlier version, for comparison")
    args = parser.parse_args()
    data = {"runs": args.runs, "target": TARGET, "pools": {}}
    for path in pool_paths(args.datasets):
        pool = lw.Pool.from_file(path)
        data["pools"][pool.name] = row = time_runs(pool, args.runs)
        print(f"{pool.name:<12} CPU {row['cpu_median']:.3f} s/run  wall {row['wall_median']:.3f} s/run", flush=True)
    if args.before:
        data["before"] = json.loads(args.before.read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{args.out}.json").write_text(json.dumps(data, indent=1))
    if data["pools"]:
        plot(data, OUT / f"{args.out}.png")
    print(summary_section(data))


if __name__ == "__main__":
    main()
