"""Label efficiency of the designs on the real evaluation pools, through the `simulate` contract.

Runs ``labelwise simulate --json`` for each pool in ``../shared/datasets``
(skipped when absent) and each design, prints one table (MSE, bias,
undefined fraction, coverage, interval width and seconds per run at each
checkpoint) and writes the raw JSON and a plot of MSE against labels to
``benchmarks/out/``.

A design may be given a label, ``LABEL=DESIGN``, so one design can run
under several parameter settings; ``--param LABEL:key=value`` (repeatable)
passes ``--param key=value`` to that entry's ``simulate`` call.  An
unlabelled entry is labelled by its design name.

Usage::

    .venv/bin/python benchmarks/designs_f1.py --repeats 200 [--measure f1] [--designs passive,importance]
    .venv/bin/python benchmarks/designs_f1.py --designs passive,ais,ais8=ais \
        --param ais8:depth=8 --param ais8:branching=2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pools import DATASETS, POOLS, pool_paths

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Entry:
    """One design to run: its label in the table, the registered design name and its ``key=value`` params."""

    label: str
    design: str
    params: tuple[str, ...] = ()


def parse_entries(designs: str, params: Sequence[str]) -> list[Entry]:
    """Entries from ``--designs`` and ``--param``.

    ``"passive,ais8=ais"`` with ``["ais8:depth=8"]`` gives ``passive`` and
    ``ais8`` (design ``ais`` with ``depth=8``).
    """
    pairs = []
    for item in filter(None, (d.strip() for d in designs.split(","))):
        label, _, design = item.partition("=")
        label, design = label.strip(), (design.strip() or label.strip())
        if not label:
            raise ValueError(f"--designs: empty label in {item!r}; write LABEL=DESIGN")
        pairs.append((label, design))
    labels = [label for label, _ in pairs]
    if not labels:
        raise ValueError("--designs: give at least one design")
    if len(set(labels)) != len(labels):
        raise ValueError(f"--designs: labels must be unique, got {labels}")
    by_label: dict[str, list[str]] = {label: [] for label in labels}
    for item in params:
        label, sep, kv = item.partition(":")
        if not sep or "=" not in kv:
            raise ValueError(f"--param: expected LABEL:key=value, got {item!r}")
        if label not in by_label:
            raise ValueError(f"--param {item!r}: no design labelled {label!r} in --designs ({', '.join(labels)})")
        by_label[label].append(kv)
    return [Entry(label, design, tuple(by_label[label])) for label, design in pairs]


def run_simulate(pool: Path, measure: str, entry: Entry, repeats: int, budget: int, batch_size: int,
                 seed: int, *, checkpoints: Sequence[int] | None = None, level: float | None = None) -> dict:
    """One ``labelwise simulate --json`` call, parsed, with the entry's ``label`` added.

    ``checkpoints`` and ``level`` are passed as ``--checkpoints`` and
    ``--level`` when given (``simulate``'s defaults otherwise).
    """
    cmd = [sys.executable, "-m", "labelwise", "simulate", "--pool", str(pool), "--measure", measure,
           "--design", entry.design, "--budget", str(budget), "--batch-size", str(batch_size),
           "--repeats", str(repeats), "--seed", str(seed), "--json", "--no-progress"]
    if checkpoints:
        cmd += ["--checkpoints", ",".join(str(c) for c in checkpoints)]
    if level is not None:
        cmd += ["--level", str(level)]
    for kv in entry.params:
        cmd += ["--param", kv]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {"label": entry.label, **json.loads(out.stdout)}


def table(results: list[dict], fraction: bool = False) -> str:
    """One row per result and checkpoint; ``fraction`` adds the labels as a fraction of the pool (``frac``)."""
    width = max([11] + [len(r["label"]) for r in results])
    frac_head = f" {'frac':>5}" if fraction else ""
    head = f"{'pool':<10} {'design':<{width}} {'labels':>6}{frac_head} {'MSE':>9} {'bias':>9} {'undef':>6} " \
           f"{'cover':>6} {'width':>7} {'s/run':>7}"
    lines = [head, "-" * len(head)]
    for r in results:
        for c in r["checkpoints"]:
            frac = f" {c['labels'] / r['n_items']:>5.3f}" if fraction else ""
            lines.append(
                f"{r['pool']:<10} {r['label']:<{width}} {c['labels']:>6}{frac} {c['mse']:>9.2e} {c['bias']:>+9.4f} "
                f"{c['undefined_fraction']:>6.2f} {c['coverage']:>6.3f} {c['mean_width']:>7.4f} "
                f"{r['seconds_per_run']:>7.3f}"
            )
    return "\n".join(lines)


def plot_curves(ax, results: list[dict], field: str, name: str) -> None:
    """One line per result: checkpoint ``field`` (e.g. ``"mse"``) against labels, labelled by ``result[name]``."""
    for r in results:
        labels = [c["labels"] for c in r["checkpoints"]]
        ax.plot(labels, [c[field] for c in r["checkpoints"]], marker="o", label=r[name])


def plot(results: list[dict], path: Path, measure: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools = sorted({r["pool"] for r in results})
    fig, axes = plt.subplots(1, len(pools), figsize=(5.5 * len(pools), 4), squeeze=False)
    for ax, pool in zip(axes[0], pools):
        plot_curves(ax, [r for r in results if r["pool"] == pool], "mse", "label")
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
    ap.add_argument("--designs", default="passive,stratified,importance",
                    help="comma-separated designs, each DESIGN or LABEL=DESIGN")
    ap.add_argument("--param", action="append", default=[], metavar="LABEL:key=value",
                    help="design parameter for the entry LABEL (repeatable)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--datasets", type=Path, default=DATASETS)
    ap.add_argument("--pools", default=",".join(POOLS), help="comma-separated pool names under --datasets")
    ap.add_argument("--jobs", type=int, default=2, help="simulations run in parallel")
    args = ap.parse_args()
    try:
        entries = parse_entries(args.designs, args.param)
    except ValueError as exc:
        ap.error(str(exc))

    pools = pool_paths(args.datasets, [p.strip() for p in args.pools.split(",") if p.strip()])
    if not pools:
        return
    jobs = [(p, e) for p in pools for e in entries]
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
