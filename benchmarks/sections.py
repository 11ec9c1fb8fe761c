"""Re-render the sections of ``benchmarks/RESULTS.md`` that other benchmark scripts measure.

Each script in :data:`SECTIONS` writes its raw results to
``benchmarks/out/<script>.json`` and defines ``summary_section(data) -> str``
(markdown: a ``## `` heading, tables and the command that reproduces them).
This script renders every such JSON it finds into ``RESULTS.md``, each between
``<!-- section: <script> -->`` markers, after the design tables that
``benchmarks/results.py`` writes; a section whose JSON is absent keeps its last
rendered text. A script in :data:`NAMED_RUNS` may store several runs
(``out/<script>_<suffix>.json`` from ``design_variants.py`` and
``tail_plant.py --out-name``,
``out/robustness-<measure>.json`` from ``robustness.py --measure``): each is a
section of its own after the script's first, rendered by the same
``summary_section``.
``results.py`` calls this script at the end, so either script leaves the file
whole.

Usage::

    python benchmarks/ondemand_benchmark.py --repeats 200   # any of SECTIONS, then
    python benchmarks/sections.py                           # re-render RESULTS.md
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
RESULTS = HERE / "RESULTS.md"

#: Scripts whose ``out/<script>.json`` becomes a section, in the order of the file.
SECTIONS = ("robustness", "default_choice", "rare_design_intervals", "design_grid", "oasis_unseen_counts", "auc_designs", "ondemand_benchmark", "ondemand_recall_coverage", "ondemand_precision_coverage", "ondemand_cost_bound", "add_system", "logs_benchmark", "pool_calibration",
            "discover_benchmark", "discover_gain_calibration", "discover_gain_headroom", "anytime_stopping", "anytime_bounds", "planning_accuracy", "online_poisson_speed",
            "engine_scale", "block_designs", "plan_losses", "hashed_designs", "poisson_memory", "importance_memory",
            "online_memory", "importance_intervals", "reuse_coverage", "reuse_engine", "tail_count", "tail_twins", "hit_case", "tail_plant", "fresh_pools", "hidden_positives", "tail_floor", "small_pool_intervals", "system_scores", "multiclass_default", "multilabel_grid", "predictions_only", "design_variants")

#: Scripts whose runs may be stored under ``<script><separator><suffix>.json`` too, each run its own section.
NAMED_RUNS = {"design_variants": "_", "robustness": "-", "tail_plant": "_", "multilabel_grid": "-"}

_MARK = re.compile(r"<!-- section: ([\w.-]+) -->\n")


def split_sections(text: str) -> tuple[str, dict[str, str]]:
    """The file's head (before the first marker) and each marked section's text."""
    parts = _MARK.split(text)
    head, sections = parts[0], {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        sections[name] = body.rstrip("\n") + "\n"
    return head, sections


def script_of(section: str) -> str:
    """The script that renders ``section``: the section's own name, or the script of a named run."""
    return next((name for name, sep in NAMED_RUNS.items() if section.startswith(name + sep)), section)


def section_names(name: str, out: Path, old: dict[str, str]) -> list[str]:
    """``name``, then for a script of :data:`NAMED_RUNS` its named runs, stored now or rendered before."""
    if name not in NAMED_RUNS:
        return [name]
    prefix = name + NAMED_RUNS[name]
    named = {path.stem for path in out.glob(f"{prefix}*.json")} | {key for key in old if key.startswith(prefix)}
    return [name, *sorted(named)]


def render_section(name: str, out: Path = OUT) -> str | None:
    """Section ``name`` rendered from ``out/<name>.json`` by its script, None when the JSON is absent."""
    path = out / f"{name}.json"
    if not path.exists():
        return None
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    module = importlib.import_module(script_of(name))
    return module.summary_section(json.loads(path.read_text())).strip("\n") + "\n"


def store(name: str, data: dict, out: Path = OUT) -> None:
    """Write a run's raw results to ``out/<name>.json`` and print the section they render to."""
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data))
    print(render_section(name, out))
    print(f"wrote {out / name}.json")


def rerender(text: str, out: Path = OUT) -> str:
    """``text`` (a RESULTS.md) with every section whose JSON is present rendered afresh."""
    head, old = split_sections(text)
    body = [head.rstrip("\n") + "\n"]
    for name in (section for script in SECTIONS for section in section_names(script, out, old)):
        section = render_section(name, out) or old.get(name)
        if section:
            body.append(f"\n<!-- section: {name} -->\n{section}")
    return "".join(body)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=RESULTS, help="the markdown file to update")
    ap.add_argument("--out", type=Path, default=OUT, help="folder of the scripts' JSON files")
    args = ap.parse_args()
    args.results.write_text(rerender(args.results.read_text(), args.out))
    found = [path.stem for path in sorted(args.out.glob("*.json")) if script_of(path.stem) in SECTIONS]
    print(f"re-rendered {', '.join(found) or 'no section'} in {args.results}")


if __name__ == "__main__":
    main()
