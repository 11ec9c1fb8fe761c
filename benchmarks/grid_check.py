"""Where the grid's `default` misses issue 11's targets: the check section of the robustness reports.

Used by ``benchmarks/robustness.py`` (``--check`` and its RESULTS.md sections), ``default_choice.py`` and
``multilabel_grid.py``; the targets themselves (coverage, width, MSE against ``passive``) are in :mod:`grid`.
"""

from __future__ import annotations

import math

from grid import (
    CHECKPOINTS,
    COVERAGE_TARGET,
    LEVEL,
    REFERENCE,
    REFERENCE_UNDEFINED,
    TARGET_FROM,
    WIDTH_FROM,
    WIDTH_TARGET,
    Z_MISS,
    Cell,
    by_design,
    cells,
    fmt_rel,
    table,
)
from results import fmt_mse, fmt_ratio

#: Issue 11 keeps the entity-resolution gains: F1 MSE of ``default`` at 2000 labels on the real pools.
REAL_MSE_TARGETS = {"abt-buy": 7e-4, "dblp-acm": 1e-8}
#: ... in at most this many seconds per 2000-label run on a real (54k) pool.
SECONDS_TARGET = 0.5
#: How many pools the "worst" lists of the check show.
WORST = 6


def pool_misses(pool: dict, cell: Cell, measure: str) -> list[str]:
    """Issue 11's targets for the real pools: F1 MSE at the last checkpoint and seconds per run."""
    out = []
    if measure != "f1" or cell.labels != CHECKPOINTS[-1]:
        return out
    target = REAL_MSE_TARGETS.get(pool["name"])
    if target is not None and cell.mse > target:
        out.append(f"MSE > {target:g}")
    seconds = by_design(pool)["default"]["summary"]["seconds_per_run"]
    if pool["kind"] == "real" and seconds > SECONDS_TARGET:
        out.append(f"time {seconds:.2f} s/run")
    return out


def check_rows(pools: list[dict], runs: int, measure: str) -> list[list[str]]:
    rows = []
    for p in pools:
        for cell in cells(p, "default") or []:
            miss = cell.misses() + pool_misses(p, cell, measure)
            if miss:
                rows.append([p["name"], str(cell.labels), fmt_mse(cell.mse), fmt_rel(cell.ratio, cell.ratio_se),
                             fmt_coverage_split(cell, runs), f"{cell.mean_width:.2g}",
                             fmt_ratio(cell.width), ", ".join(miss)])
    return rows


def fmt_coverage_split(cell: Cell, runs: int) -> str:
    """``0.92 (92/100; 7 below, 1 above)``: coverage and the misses on each side (truth below / above the interval)."""
    text = f"{cell.coverage:.2f} ({round(cell.coverage * runs)}/{runs}"
    if math.isnan(cell.truth_below):
        return text + ")"
    return text + f"; {round(cell.truth_below * runs)} below, {round(cell.truth_above * runs)} above)"


def check_text(pools: list[dict], runs: int, measure: str) -> str:
    """The misses of ``default`` (issue 11's targets) and the pools where it does worst."""
    with_default = [p for p in pools if cells(p, "default")]
    if not with_default:
        return "`default` was not run: nothing to check."
    cov_se = math.sqrt(LEVEL * (1 - LEVEL) / runs)
    out = [(f"Targets for `default` at {TARGET_FROM}-{CHECKPOINTS[-1]} labels: MSE/{REFERENCE} <= 1 within "
            f"{Z_MISS:g} standard errors (of the log ratio; not judged where {REFERENCE} has no estimate, a ratio of "
            f"zero labeled counts, in more than {REFERENCE_UNDEFINED:.0%} of its runs), coverage >= "
            f"{COVERAGE_TARGET}, width ratio <= "
            f"{WIDTH_TARGET:g} at {WIDTH_FROM} labels and more"
            + ("; on the real pools F1 MSE at " + f"{CHECKPOINTS[-1]} labels <= "
               + ", ".join(f"{v:g} ({k})" for k, v in REAL_MSE_TARGETS.items())
               + f" and <= {SECONDS_TARGET:g} s per run (wall time, so only indicative under load)"
               if measure == "f1" else "")
            + f". {runs} runs per design (coverage s.e. about {cov_se:.3f} at {LEVEL}). *Below* / *above*: runs "
            "whose true value lies below / above their interval (the estimate too high / too low); a lopsided "
            "split is a skewed error that a symmetric interval covers only by widening both sides.")]
    rows = check_rows(with_default, runs, measure)
    n_cells = sum(1 for p in with_default for c in cells(p, "default") if c.labels >= TARGET_FROM)
    out += ["", f"{len(rows)} of {n_cells} pool/checkpoints miss a target ({len(with_default)} pool{'s' if len(with_default) > 1 else ''}).", ""]
    if rows:
        out.append(table(["pool", "labels", "MSE", f"MSE/{REFERENCE}", "coverage", "mean width", "width ratio",
                          "misses"], rows))
    exact = [f"{p['name']} at {c.labels} (mean width {c.mean_width:.2g})" for p in with_default
             for c in cells(p, "default") if c.labels >= WIDTH_FROM and math.isinf(c.width)]
    if exact:
        out += ["", ("Every run exact (MSE 0, width ratio inf; not counted as a width miss, judge the mean width): "
                     + "; ".join(exact) + ".")]

    def worst(key, reverse):
        ranked = []
        for p in with_default:
            cs = [c for c in cells(p, "default") if c.labels >= TARGET_FROM]
            c = max(cs, key=key) if reverse else min(cs, key=key)
            ranked.append((key(c), p["name"], c))
        ranked = [t for t in ranked if not math.isnan(t[0])]
        ranked.sort(key=lambda t: t[0], reverse=reverse)
        return ranked[:WORST]

    out += ["", f"Worst pools for `default` by MSE/{REFERENCE} (largest ratio at {TARGET_FROM}+ labels):", ""]
    out += [f"- {name}: {fmt_rel(c.ratio, c.ratio_se)} at {c.labels}, coverage {c.coverage:.2f}, width "
            f"{fmt_ratio(c.width)}" for _, name, c in worst(lambda c: c.ratio, True)]
    out += ["", f"Worst pools for `default` by coverage (lowest at {TARGET_FROM}+ labels):", ""]
    out += [f"- {name}: {fmt_coverage_split(c, runs)} at {c.labels}, MSE/{REFERENCE} {fmt_rel(c.ratio, c.ratio_se)}, width "
            f"{fmt_ratio(c.width)}" for _, name, c in worst(lambda c: c.coverage, False)]
    return "\n".join(out)
