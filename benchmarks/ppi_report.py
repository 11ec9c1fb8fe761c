"""The report of ``benchmarks/ppi_comparison.py``: its tables, the markdown page and the plot.

Rendered from the JSON the comparison writes (``ppi_comparison.py --from-json`` re-renders without running).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from grid import (
    BATCH_SIZE,
    BUDGET,
    CHECKPOINTS,
    LEVEL,
    REFERENCE,
    cells,
    design_table,
    fmt_cov,
    fmt_rel,
    table,
)
from results import fmt_mse, fmt_ratio

#: The PPI methods, in table order.
PPI = "ppi++"
CLASSICAL = "classical"
PPI_POOL_FRAME = "ppi++ (pool frame)"
#: Runs per pool, measure and checkpoint compared with ppi-python's own functions.
CROSS_CHECK_RUNS = 3
#: A coverage below this is marked ``!`` (robustness.py's target).
COVERAGE_MARK = 0.93


# --------------------------------------------------------------------------- tables
def methods_of(pools: list[dict], measure: str) -> list[str]:
    """Design labels first (as given), then the PPI methods."""
    names = [e["summary"]["design"] if "summary" in e else e["design"] for p in pools
             for e in p["results"].get(measure, [])]
    return list(dict.fromkeys(names))


def _view(pool: dict, measure: str) -> dict:
    """The ``{"results": entries}`` view of one measure that robustness.py's ``cells`` reads."""
    return {"results": pool["results"].get(measure, [])}


def summary_table(pools: list[dict], measure: str, labels: int) -> str:
    """Rows = pools; per method MSE / passive and coverage at ``labels``."""
    methods = methods_of(pools, measure)
    c = CHECKPOINTS.index(labels)
    head = ["pool", f"true {measure}", f"{REFERENCE} MSE", f"{REFERENCE} cov"] + [
        f"{m} {k}" for m in methods if m != REFERENCE for k in ("MSE/p", "cov")]
    rows = []
    for p in pools:
        view = _view(p, measure)
        if not view["results"]:
            continue
        first = next(e["summary"] for e in view["results"] if "summary" in e)
        ref = cells(view, REFERENCE)
        row = [p["name"], f"{first['true_value']:.4g}", fmt_mse(ref[c].mse) if ref else "n/a",
               fmt_cov(ref[c].coverage) if ref else "n/a"]
        for m in methods:
            if m == REFERENCE:
                continue
            cs = cells(view, m)
            row += ([fmt_rel(cs[c].ratio, cs[c].ratio_se), fmt_cov(cs[c].coverage)] if cs else ["error", ""])
        rows.append(row)
    return table(head, rows)


def aggregate_table(pools: list[dict], measure: str, labels: int) -> str:
    """Per method over the generated pools: geometric mean and range of MSE / passive, pools where the MSE is
    below ``ppi++``'s, coverage range and median width ratio (the real pools, where estimates can be exact,
    are left to the per-pool tables)."""
    methods = methods_of(pools, measure)
    c = CHECKPOINTS.index(labels)
    rows = []
    for m in methods:
        ratios, covs, widths, wins, n_pools = [], [], [], 0, 0
        for p in pools:
            if p["kind"] != "generated":
                continue
            view = _view(p, measure)
            cs, ppi = cells(view, m), cells(view, PPI)
            if not cs:
                continue
            n_pools += 1
            if cs[c].ratio > 0 and math.isfinite(cs[c].ratio):
                ratios.append(cs[c].ratio)
            covs += [cell.coverage for cell in cs if cell.labels >= 500]
            if math.isfinite(cs[c].width):
                widths.append(cs[c].width)
            if ppi and cs[c].mse < ppi[c].mse:
                wins += 1
        gm = math.exp(np.mean(np.log(ratios))) if ratios else math.nan
        rows.append([f"`{m}`", str(n_pools), f"{gm:.2g}" if ratios else "n/a",
                     f"{min(ratios):.2g}-{max(ratios):.2g}" if ratios else "n/a",
                     f"{wins}" if m != PPI else "-",
                     f"{min(covs):.2f}-{max(covs):.2f}" if covs else "n/a",
                     f"{np.median(widths):.2f}" if widths else "n/a"])
    head = ["method", "pools", f"geo-mean MSE/{REFERENCE} @{labels}", f"range @{labels}",
            f"pools with MSE < {PPI} @{labels}", "coverage 500-2000", f"median width ratio @{labels}"]
    return table(head, rows)


def paired_ratio(pool: dict, measure: str, c: int) -> tuple[float, float]:
    """``ppi++``'s MSE over ``classical``'s at checkpoint index ``c`` (the same labels) and the standard error of
    its log, from the paired runs: ``se(log ratio)**2 = var(e_ppi**2 / mse_ppi - e_cl**2 / mse_cl) / R``."""
    by = {e["summary"]["design"]: e for e in pool["results"].get(measure, []) if "summary" in e}
    if PPI not in by or CLASSICAL not in by:
        return math.nan, math.nan
    truth = by[PPI]["summary"]["true_value"]
    a = (np.asarray(by[PPI]["runs"]["values"][c]) - truth) ** 2
    b = (np.asarray(by[CLASSICAL]["runs"]["values"][c]) - truth) ** 2
    if b.mean() == 0 or a.mean() == 0:
        return math.nan, math.nan
    d = a / a.mean() - b / b.mean()
    return float(a.mean() / b.mean()), float(np.std(d, ddof=1) / math.sqrt(d.size))


def paired_table(pools: list[dict], measures: list[str]) -> str:
    """Rows = pools; per measure and checkpoint ``ppi++`` / ``classical`` MSE on the same labels."""
    head = ["pool"] + [f"{m} {n}" for m in measures for n in CHECKPOINTS]
    rows = []
    for p in pools:
        row = [p["name"]]
        for m in measures:
            for c in range(len(CHECKPOINTS)):
                r, se = paired_ratio(p, m, c)
                row.append(fmt_rel(r, r * se))
        rows.append(row)
    return table(head, rows)


def detail_table(pool: dict, measure: str) -> str:
    """Rows = methods; per checkpoint MSE, MSE / passive, coverage and width ratio."""
    head = ["method"] + [f"{k} {n}" for n in CHECKPOINTS for k in ("MSE", "MSE/p", "cov", "width")] + ["s/run"]
    return design_table(_view(pool, measure), head, lambda cell: [
        fmt_mse(cell.mse), fmt_rel(cell.ratio, cell.ratio_se), fmt_cov(cell.coverage), fmt_ratio(cell.width)])


def ppi_notes(pool: dict, measure: str) -> list[str]:
    """Mean tuned ``lam`` of ``ppi++`` and the labels it could use where its frame is smaller than the budget."""
    out = []
    for e in pool["results"].get(measure, []):
        if e.get("ppi") and e["summary"]["design"] != CLASSICAL:
            used = e["labels_used"]
            text = (f"`{e['summary']['design']}`: mean lam " + "/".join(f"{v:.2f}" for v in e["mean_lam"])
                    + ", labeled items in the frame " + "/".join(f"{v:.0f}" for v in used))
            undefined = [c["undefined_fraction"] for c in e["summary"]["checkpoints"]]
            if any(undefined):
                text += ", runs without a labeled item in the frame (estimate 1/2, interval [0, 1]) " + "/".join(
                    f"{v:.2f}" for v in undefined)
            out.append(text)
    return out


def render(data: dict) -> str:
    meta, pools = data["meta"], data["pools"]
    runs = meta["runs"]
    last = CHECKPOINTS[-1]
    check = (f"cross-checked against ppi-python {meta['ppi_python']} (its `ppi_mean_pointestimate` / `ppi_mean_ci` "
             f"with `lam=None`) on {CROSS_CHECK_RUNS} runs per pool, measure and checkpoint"
             if meta["ppi_python"] else "ppi-python not installed: not cross-checked")
    out = [
        "# labelwise vs prediction-powered inference (PPI++)",
        "",
        ("<!-- Generated by benchmarks/ppi_comparison.py; do not edit by hand: rerun the script "
         "(or re-render with --from-json). -->"),
        "",
        (f"Generated by `{meta['command']}` on {meta['started']} UTC ({runs} runs per method and pool, seed "
         f"{meta['seed']}; labelwise {meta['version']}, git {meta['git']}; {meta['cpus']} CPU cores, "
         f"{meta['jobs']} job(s), Python {meta['python']}; {meta['elapsed'] / 60:.1f} min in all; 1-minute load "
         f"average {meta['load'][0]:.1f} at the start, {meta['load'][1]:.1f} at the end). PPI++: "
         f"{check}."),
        "",
        ("PPI++ (Angelopoulos, Duchi & Zrnic, \"PPI++: Efficient Prediction-Powered Inference\", 2023; "
         "Angelopoulos et al., \"Prediction-powered inference\", Science 2023) with uniform labels and the "
         "pool's probabilities as predictions on the whole pool; `classical` = the same labels with lam = 0 "
         "(sample mean, CLT interval). Accuracy: labels uniform over the pool, prediction of correctness prob "
         "(pred = 1) or 1 - prob (pred = 0). Precision: `ppi++` and `classical` draw their labels uniformly "
         "from the predicted positives (same label count as the designs), `ppi++ (pool frame)` from the whole "
         "pool, keeping the predicted positives. Recall is not a PPI mean (its subpopulation y = 1 depends on "
         f"the labels) and is skipped. Designs: `labelwise.simulate`, budget {BUDGET}, batches of {BATCH_SIZE}."),
        "",
        (f"Columns: **MSE/p** = MSE / `{REFERENCE}`'s MSE on the same pool (± delta-method s.e.); **cov** = "
         f"coverage of the {LEVEL:.0%} interval (`!` below {COVERAGE_MARK}; s.e. about "
         f"{math.sqrt(LEVEL * (1 - LEVEL) / runs):.3f} with {runs} runs); **width** = mean width / (3.92 RMSE)."),
    ]
    for measure in meta["measures"]:
        out += ["", f"## {measure} at {last} labels", "", summary_table(pools, measure, last), "",
                (f"Over the generated pools ({measure}; coverage over the checkpoints 500-{last}; the real pools "
                 "are in the table above):"), "",
                aggregate_table(pools, measure, last)]
    out += ["", "## What the predictions add: `ppi++` / `classical` on the same labels", "",
            ("MSE of `ppi++` over that of `classical` (lam = 0) on the same labels, ± the paired standard error: "
             "below 1 where the predictions help. The pairing removes the sampling noise that the ratios to "
             f"`{REFERENCE}` (independent runs) carry; n/a where both are exact."), "",
            paired_table(pools, meta["measures"])]
    for p in pools:
        out += ["", f"## {p['name']}", "",
                (f"{p['n_items']:,} items, {p['positives']:,} positives, {p['predicted_positives']:,} predicted "
                 f"positives; {p['description']}.")]
        for measure in meta["measures"]:
            if measure not in p["results"]:
                continue
            first = next((e["summary"] for e in p["results"][measure] if "summary" in e), None)
            out += ["", f"### {p['name']}: {measure}" + (f" (true {first['true_value']:.4g})" if first else ""), "",
                    detail_table(p, measure)]
            notes = ppi_notes(p, measure)
            if notes:
                out += ["", "; ".join(notes) + f" (at {'/'.join(map(str, CHECKPOINTS))} labels)."]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- plot
def plot(data: dict, path: Path) -> None:
    """MSE / passive (log scale) and coverage at the last checkpoint, per pool and method, one column per measure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pools, measures = data["pools"], data["meta"]["measures"]
    c = len(CHECKPOINTS) - 1
    fig, axes = plt.subplots(2, len(measures), figsize=(max(6.0, 0.45 * len(pools) + 2.5) * len(measures), 8),
                             squeeze=False)
    markers = "os^vD<>ph*"
    everyone = list(dict.fromkeys(m for measure in measures for m in methods_of(pools, measure)))
    for j, measure in enumerate(measures):
        methods = methods_of(pools, measure)
        for m in methods:
            k = everyone.index(m)  # the same marker and color for a method in every panel
            xs, ratio, cover = [], [], []
            for i, p in enumerate(pools):
                cs = cells(_view(p, measure), m)
                if cs:
                    xs.append(i + (k - (len(everyone) - 1) / 2) * 0.1)
                    ratio.append(min(max(cs[c].ratio, 1e-3), 1e3) if not math.isnan(cs[c].ratio) else np.nan)
                    cover.append(cs[c].coverage)
            style = dict(marker=markers[k % len(markers)], color=f"C{k % 10}", ls="none", ms=6, label=m,
                         mfc="none" if m in (CLASSICAL, PPI_POOL_FRAME) else None)
            axes[0, j].plot(xs, ratio, **style)
            axes[1, j].plot(xs, cover, **style)
        axes[0, j].axhline(1.0, color="grey", lw=0.8, ls="--")
        axes[0, j].set(yscale="log", title=measure)
        axes[0, j].set_ylabel(f"MSE / {REFERENCE} at {CHECKPOINTS[-1]} labels (clipped to 1e-3..1e3)", fontsize=8)
        axes[1, j].axhline(LEVEL, color="grey", lw=0.8, ls="--")
        axes[1, j].set(ylim=(max(0.0, min(0.5, axes[1, j].get_ylim()[0])), 1.01),
                       ylabel=f"coverage of the {LEVEL:.0%} interval")
        for ax in axes[:, j]:
            ax.set_xticks(range(len(pools)), labels=[p["name"] for p in pools], rotation=70, fontsize=7)
            ax.grid(True, alpha=0.3)
        axes[0, j].legend(fontsize=7)
    meta = data["meta"]
    fig.suptitle(f"labelwise designs vs PPI++: {meta['runs']} runs, {CHECKPOINTS[-1]} labels, batches of "
                 f"{BATCH_SIZE}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
