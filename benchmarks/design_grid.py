"""The designs a user picks with ``--design`` on the robustness grid: where their intervals miss, before and after.

``benchmarks/robustness.py`` checks the default design; every other interval
labelwise prints must hold too. This script gathers runs of
``robustness.py --designs <designs> --measure <m>`` (one JSON per measure,
``--runs`` per design and pool) and, per measure and design, counts the
pool/checkpoints whose interval misses a target (coverage below 0.93 from 500
labels, width above 2 x 3.92 x RMSE from 1000) and lists the coverage misses.
With ``--before`` (the same runs on an earlier checkout) the table shows both.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/robustness.py --runs 30 \\
        --designs importance,poisson,ais,passive --measure accuracy --jobs 2 --no-plot   # and --measure f1
    PYTHONPATH=src python benchmarks/design_grid.py \\
        --after accuracy=benchmarks/out/robustness-accuracy.json,f1=benchmarks/out/robustness.json \\
        [--before accuracy=<json>,f1=<json>] [--note "what changed"]

writes ``benchmarks/out/design_grid.json``, which ``benchmarks/sections.py`` renders into RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from grid import COVERAGE_TARGET, OUT, WIDTH_TARGET, by_design, cells

#: Coverage this low is a miss beyond the noise of 30 runs (a coverage of 0.95 has a standard error of 0.04 there).
CLEAR_MISS = 0.85


def design_misses(grid: dict, design: str) -> dict:
    """One design's misses on one grid run: counts of coverage and width misses, and the coverage misses below
    :data:`CLEAR_MISS` as ``pool@labels coverage``."""
    coverage, width, clear = 0, 0, []
    for pool in grid["pools"]:
        for cell in cells(pool, design) or []:
            missed = cell.misses()
            coverage += "coverage" in missed
            width += "width" in missed
            if "coverage" in missed and cell.coverage < CLEAR_MISS:
                clear.append(f"{pool['name']}@{cell.labels} {cell.coverage:.2f}")
    return {"coverage": coverage, "width": width, "clear": clear}


def summarize(runs: dict[str, Path]) -> dict:
    """Per measure (its robustness JSON in ``runs``): the run's command and git revision, and per design its misses."""
    out = {}
    for measure, path in runs.items():
        grid = json.loads(Path(path).read_text())
        designs = grid["meta"]["designs"]  # the reference too: its misses are what 30 runs' noise gives
        present = {d for pool in grid["pools"] for d in by_design(pool)}
        out[measure] = {"command": grid["meta"]["command"], "git": grid["meta"]["git"], "runs": grid["meta"]["runs"],
                        "designs": {d: design_misses(grid, d) for d in designs if d in present}}
    return out


def summary_section(data: dict) -> str:
    """Markdown for RESULTS.md: per measure and design, misses after (and before) the change."""
    out = ["## The designs a user picks on the robustness grid: where their intervals miss", "",
           (f"Misses of a pool/checkpoint: coverage below {COVERAGE_TARGET} (500+ labels, 3 checkpoints a pool) or "
            f"width above {WIDTH_TARGET:g} x 3.92 x RMSE (1000+ labels, 2 a pool). *Clear coverage misses* are those "
            f"below {CLEAR_MISS} (at 30 runs a coverage of 0.95 has a standard error of 0.04). "
            + (data.get("note", "") or ""))]
    for measure, after in data["after"].items():
        before = data.get("before", {}).get(measure)
        out += ["", f"### {measure}", "", f"`{after['command']}` (git {after['git']}, {after['runs']} runs)"
                + (f"; before: git {before['git']}" if before else "") + ".", ""]
        head = "| design | coverage misses | width misses | clear coverage misses |"
        if before:
            head = ("| design | coverage misses (before) | width misses (before) | clear coverage misses | "
                    "clear before |")
        out += [head, "|" + "---|" * (head.count("|") - 1)]
        for design, a in after["designs"].items():
            row = [f"`{design}`"]
            b = before["designs"].get(design) if before else None
            for key in ("coverage", "width"):
                row.append(f"{a[key]}" + (f" ({b[key]})" if b else ""))
            row.append(", ".join(a["clear"]) or "none")
            if before:
                row.append(", ".join(b["clear"]) if b else "")
            out.append("| " + " | ".join(row) + " |")
    return "\n".join(out) + "\n"


def parse_runs(text: str | None) -> dict[str, Path]:
    """``accuracy=path,f1=path`` as a dict (empty for ``None``)."""
    if not text:
        return {}
    return {k.strip(): Path(v.strip()) for k, v in (part.split("=", 1) for part in text.split(","))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--after", required=True, help="measure=robustness JSON,... of the current code")
    ap.add_argument("--before", default=None, help="measure=robustness JSON,... of an earlier checkout")
    ap.add_argument("--note", default="", help="what changed between before and after (one sentence)")
    args = ap.parse_args()
    data = {"after": summarize(parse_runs(args.after)), "before": summarize(parse_runs(args.before)),
            "note": args.note}
    print(summary_section(data))
    OUT.mkdir(exist_ok=True)
    (OUT / "design_grid.json").write_text(json.dumps(data))
    print(f"wrote {OUT / 'design_grid.json'}")


if __name__ == "__main__":
    main()
