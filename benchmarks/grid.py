"""The grid benchmarks' common parts: the pools, the runs, the statistics of a cell and the report files.

The pools and what each cell measures are described in ``benchmarks/robustness.py``, the grid's own
report; ``ppi_comparison.py``, ``tail_twins.py`` and the other scripts that run designs over pools of the
grid use these too.
"""

from __future__ import annotations

import argparse
import json
import math
import time
import traceback
import zlib
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pools import POOLS, pool_paths
from results import fmt_mse, width_ratio
from scipy.special import expit, ndtr

import labelwise as lw
from labelwise.cli.options import design_settings
from labelwise.simulate import covers

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

#: The design every MSE is divided by.
REFERENCE = "passive"
BUDGET = 2000
BATCH_SIZE = 50
CHECKPOINTS = (250, 500, 1000, 2000)
LEVEL = 0.95

PREVALENCES = (0.5, 0.3, 0.05, 1e-3, 1e-5)
#: calibration name -> k, the system's probability is sigmoid(k * logit(p_true))
CALIBRATIONS = {"under": 0.5, "calibrated": 1.0, "over": 3.0}
#: separation name -> d, the distance between the class-conditional score means (ROC AUC Phi(d / sqrt 2))
SEPARATIONS = {"weak": 2.0, "strong": 4.0}
DEFAULT_N = 50_000
MIN_POSITIVES = 20

#: Targets of ``default`` (issue 11), checked from :data:`TARGET_FROM` labels on.
TARGET_FROM = 500
COVERAGE_TARGET = 0.93
WIDTH_TARGET = 2.0
WIDTH_FROM = 1000
#: An MSE ratio misses when it exceeds 1 by more than this many standard errors (on the log scale).
Z_MISS = 2.0
#: The MSE target is not judged where the reference has no estimate in more than this share of its runs.
REFERENCE_UNDEFINED = 0.5


# --------------------------------------------------------------------------- pools
@dataclass(frozen=True)
class PoolSpec:
    """One pool of the grid, picklable so that worker processes can rebuild it."""

    name: str
    kind: str  # "generated" or "real"
    description: str
    params: dict = field(default_factory=dict)

    def load(self) -> lw.Pool:
        if self.kind == "real":
            return lw.Pool.from_file(Path(self.params["path"]))
        return generate_pool(**self.params, name=self.name)

    def cost(self) -> float:
        """Rough relative run time, to start the slowest pools first."""
        return float(self.params.get("n_items", 54_000))


def generate_pool(*, n_items: int, prevalence: float, k: float, d: float, threshold: str, seed: int,
                  name: str) -> lw.Pool:
    """The pool of the module docstring: ``prob = sigmoid(k * logit(p_true))``, separation ``d``."""
    rng = np.random.default_rng(seed)
    n_pos = min(max(1, round(prevalence * n_items)), n_items - 1)
    pos = rng.choice(n_items, size=n_pos, replace=False)
    labels = np.zeros(n_items, dtype=np.int8)
    labels[pos] = 1
    x = rng.standard_normal(n_items)
    x[pos] += d
    pi = n_pos / n_items
    logit_sys = k * (math.log(pi / (1.0 - pi)) + d * x - 0.5 * d * d)
    probs = expit(logit_sys)
    if threshold == "break-even":
        preds = np.zeros(n_items, dtype=np.int8)
        preds[np.argpartition(-x, n_pos - 1)[:n_pos]] = 1
    else:
        preds = (logit_sys > 0).astype(np.int8)
    return lw.Pool.from_arrays(None, preds=preds, scores=logit_sys, probs=probs, labels=labels, name=name)


def grid_specs(prevalences, calibrations, separations, *, n: int, min_positives: int, threshold: str,
               pool_seed: int) -> list[PoolSpec]:
    specs = []
    for prev in prevalences:
        n_items = max(n, math.ceil(min_positives / prev))
        for sep in separations:
            d = SEPARATIONS[sep]
            # the same labels and scores for every calibration of a (prevalence, separation) cell
            seed = zlib.crc32(f"{pool_seed}-{prev:g}-{d:g}".encode())
            for cal in calibrations:
                k = CALIBRATIONS[cal]
                n_pos = min(max(1, round(prev * n_items)), n_items - 1)
                auc = float(ndtr(d / math.sqrt(2)))
                desc = (f"generated: {n_items:,} items, {n_pos:,} positives; separation {d:g} (ROC AUC {auc:.3f}); "
                        f"probabilities sigmoid({k:g} x calibrated logit) ({cal}); predictions "
                        + ("the top N+ by score (break-even)" if threshold == "break-even" else "prob > 1/2"))
                specs.append(PoolSpec(f"{prev:g}-x{k:g}-{sep}", "generated", desc,
                                      dict(n_items=n_items, prevalence=prev, k=k, d=d, threshold=threshold,
                                           seed=seed)))
    return specs


def real_specs(datasets: Path, names) -> list[PoolSpec]:
    if not names:
        return []
    return [PoolSpec(p.name.split(".")[0], "real",
                     "real entity-resolution pool (linear SVM), from `../shared/datasets/`", {"path": str(p)})
            for p in pool_paths(datasets, names)]


# --------------------------------------------------------------------------- running
def design_entries(pool: lw.Pool, measure_name: str, designs: list[tuple[str, str, dict, str | None]], runs: int,
                   seed: int) -> list[dict]:
    """Every design of ``designs`` (label, name, settings, oracle) simulated on one pool and measure.

    Each entry holds the ``to_dict()`` summary (its ``design`` the label) and the per-run estimates; a
    design equal to an earlier one reuses its runs (``reused_from``), a design that fails becomes an
    error entry.
    """
    measure = lw.make_measure(measure_name, pool)
    done: dict[str, dict] = {}  # resolved spec -> entry, so "default" is not run twice
    entries = []
    for label, name, settings, oracle in designs:
        try:
            design = lw.make_design(name, pool, **settings)
            key = json.dumps([design.spec(), oracle], sort_keys=True, default=str)
            if key in done:
                entry = json.loads(json.dumps(done[key]))
                entry["reused_from"] = entry["summary"]["design"]
                entry["summary"]["design"] = label
            else:
                result = lw.simulate(pool, measure, name, design_params=settings, oracle=oracle, budget=BUDGET,
                                     batch_size=BATCH_SIZE, repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS),
                                     level=LEVEL)
                summary = result.to_dict()
                summary["design"] = label
                entry = {"summary": summary,
                         "runs": {"values": result.values[..., 0].tolist(), "lower": result.lower[..., 0].tolist(),
                                  "upper": result.upper[..., 0].tolist()}}
                done[key] = entry
        except Exception as exc:  # noqa: BLE001 -- a design that fails must not lose the rest
            traceback.print_exc()
            entries.append({"design": label, "error": f"{type(exc).__name__}: {exc}"})
            print(f"{pool.name:<16} {measure_name:<9} {label:<22} ERROR {exc}", flush=True)
            continue
        entries.append(entry)
    return entries


def run_pool(spec: PoolSpec, designs: list[str], measure_name: str, runs: int, seed: int) -> dict:
    """Every design on one pool: the ``to_dict()`` summaries plus the per-run estimates."""
    t0 = time.perf_counter()
    pool = spec.load()
    entries = design_entries(pool, measure_name, [(name, name, {}, None) for name in designs], runs, seed)
    for entry in (e for e in entries if "summary" in e):
        s = entry["summary"]
        last = s["checkpoints"][-1]
        note = f" (= {entry['reused_from']})" if "reused_from" in entry else ""
        print(f"{spec.name:<22} {s['design']:<15} MSE@{last['labels']} {fmt_mse(last['mse']):>8} "
              f"cov {last['coverage']:.2f}  {s['seconds_per_run']:.3f} s/run{note}", flush=True)
    return {"name": spec.name, "kind": spec.kind, "description": spec.description, "params": spec.params,
            "n_items": pool.n_items, "positives": int(np.sum(pool.labels)), "seconds": time.perf_counter() - t0,
            "results": entries}


def run_grid(specs: list[PoolSpec], designs: list[str], measure: str, runs: int, seed: int, jobs: int) -> list[dict]:
    order = {s.name: i for i, s in enumerate(specs)}
    out = []
    if jobs <= 1:
        out = [run_pool(s, designs, measure, runs, seed) for s in specs]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as ex:
            futures = [ex.submit(run_pool, s, designs, measure, runs, seed)
                       for s in sorted(specs, key=PoolSpec.cost, reverse=True)]
            out = [f.result() for f in as_completed(futures)]
    return sorted(out, key=lambda p: order[p["name"]])


# --------------------------------------------------------------------------- statistics
def by_design(pool: dict) -> dict[str, dict]:
    return {e["summary"]["design"]: e for e in pool["results"] if "summary" in e}


def _sq_errors(entry: dict, c: int) -> np.ndarray:
    truth = entry["summary"]["true_value"]
    return (np.asarray(entry["runs"]["values"][c], float) - truth) ** 2


def mse_ratio(entry: dict, ref: dict | None, c: int) -> tuple[float, float]:
    """MSE of ``entry`` over ``ref``'s at checkpoint index ``c`` and the standard error of its log (delta method)."""
    if ref is None:
        return math.nan, math.nan
    a, b = entry["summary"]["checkpoints"][c]["mse"], ref["summary"]["checkpoints"][c]["mse"]
    if b == 0:
        return (math.inf if a > 0 else math.nan), math.nan
    if a == 0:
        return 0.0, math.nan
    if entry is ref or entry.get("reused_from") == REFERENCE:
        return a / b, 0.0
    ea, eb = _sq_errors(entry, c), _sq_errors(ref, c)
    var_log = np.var(ea, ddof=1) / (ea.size * a**2) + np.var(eb, ddof=1) / (eb.size * b**2)
    return a / b, float(math.sqrt(var_log))


@dataclass
class Cell:
    """One design on one pool at one checkpoint."""

    labels: int
    ratio: float
    se_log: float
    coverage: float
    width: float
    undefined: float
    mse: float
    mean_width: float
    #: Shares of the runs whose true value lies below / above their interval (the estimate too high / too low).
    truth_below: float = float("nan")
    truth_above: float = float("nan")
    #: Share of the reference design's runs without an estimate (a ratio of zero labeled counts, reported as the
    #: middle of its range): above :data:`REFERENCE_UNDEFINED` there is no MSE to stay below.
    reference_undefined: float = 0.0

    @property
    def ratio_se(self) -> float:
        return self.ratio * self.se_log

    def misses(self) -> list[str]:
        """The targets of ``default`` this cell misses (empty before :data:`TARGET_FROM` labels)."""
        if self.labels < TARGET_FROM:
            return []
        out = []
        if self.ratio > 1 and self.reference_undefined <= REFERENCE_UNDEFINED and (
                math.isnan(self.se_log) or self.ratio * math.exp(-Z_MISS * self.se_log) > 1):
            out.append("MSE")
        if self.coverage < COVERAGE_TARGET:
            out.append("coverage")
        if self.labels >= WIDTH_FROM and math.isfinite(self.width) and self.width > WIDTH_TARGET:
            out.append("width")
        return out


def cells(pool: dict, design: str) -> list[Cell] | None:
    entries = by_design(pool)
    entry = entries.get(design)
    if entry is None:
        return None
    ref = entries.get(REFERENCE)
    out = []
    for c, cp in enumerate(entry["summary"]["checkpoints"]):
        r, se = mse_ratio(entry, ref, c)
        out.append(Cell(cp["labels"], r, se, cp["coverage"], width_ratio(cp), cp["undefined_fraction"], cp["mse"],
                        cp["mean_width"], *one_sided_misses(entry, c),
                        ref["summary"]["checkpoints"][c]["undefined_fraction"] if ref else 0.0))
    return out


def one_sided_misses(entry: dict, c: int) -> tuple[float, float]:
    """Shares of the runs at checkpoint index ``c`` whose true value lies below / above their interval.

    Equal shares are what a symmetric interval of a symmetric error gives; a lopsided split shows a skewed
    error (or a biased estimate) that a wider symmetric interval would cover only at a larger width.
    """
    truth = entry["summary"]["true_value"]
    runs = entry.get("runs")
    if not runs or "lower" not in runs:
        return float("nan"), float("nan")
    lower, upper = (np.asarray(runs[k][c], float) for k in ("lower", "upper"))
    inside = covers(lower, upper, truth)
    return float(np.mean(~inside & (truth < lower))), float(np.mean(~inside & (truth > upper)))


# --------------------------------------------------------------------------- formatting
def fmt_rel(ratio: float, se: float) -> str:
    """``0.31±0.08``: the MSE ratio with its standard error."""
    if math.isnan(ratio):
        return "n/a"
    if math.isinf(ratio):
        return "inf"
    text = f"{ratio:.2g}"
    if not math.isnan(se) and se > 1e-9 * ratio:  # not the rounding noise of two identical sets of errors
        text += f"±{se:.2g}" if se >= 1 else f"±{se:.1g}"
    return text


def fmt_cov(cov: float) -> str:
    return f"{cov:.2f}" + ("!" if cov < COVERAGE_TARGET else "")


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def design_table(pool: dict, head: list[str], columns: Callable[[Cell], list[str]]) -> str:
    """One row per design entry of ``pool`` (``{"results": entries}``): its name (with what it resolved to),
    ``columns`` of its cell at each checkpoint and its seconds per run; an entry that failed shows its error."""
    rows = []
    for e in pool["results"]:
        if "error" in e:
            rows.append([f"`{e['design']}`", f"error: {e['error']}"] + [""] * (len(head) - 2))
            continue
        s = e["summary"]
        name = f"`{s['design']}`" + (f" (`{s['design_resolved']}`)" if s["design_resolved"] != s["design"] else "")
        rows.append([name, *(x for cell in cells(pool, s["design"]) for x in columns(cell)),
                     f"{s['seconds_per_run']:.3f}"])
    return table(head, rows)




def split_list(text: str | None, default, cast=str, choices=None) -> tuple:
    if text is None:
        return tuple(default)
    if text.strip().lower() == "none":
        return ()
    items = tuple(cast(t.strip()) for t in text.split(",") if t.strip())
    if choices is not None:
        bad = [t for t in items if t not in choices]
        if bad:
            raise SystemExit(f"unknown {bad}; choose from {', '.join(map(str, choices))}")
    return items


def out_path(stem: Path, suffix: str) -> Path:
    """``stem`` plus ``suffix`` (``with_suffix`` would eat the ``.quick`` of ``robustness.quick``)."""
    return stem.parent / (stem.name + suffix)


def parse_designs(text: str) -> list[tuple[str, str, dict, str | None]]:
    """``"passive;online-poisson:estimator=difference"`` -> ``[(label, name, settings, oracle), ...]``."""
    out = []
    for item in (t.strip() for t in text.split(";")):
        if not item:
            continue
        name, _, params = item.partition(":")
        settings, oracle = design_settings([p for p in params.split(",") if p.strip()])
        out.append((item, name.strip(), settings, oracle))
    if REFERENCE not in [label for label, *_ in out]:
        out.append((REFERENCE, REFERENCE, {}, None))
    return out


def saved_run(path: Path) -> tuple[dict, Path]:
    """A run's JSON (``--from-json``) and the stem its report is written under."""
    return json.loads(path.read_text()), path.parent / path.name.removesuffix(".json")


def run_plan(args: argparse.Namespace, ap: argparse.ArgumentParser, *, quick_runs: int, default_runs: int,
             quick_grid: dict) -> tuple[int, dict]:
    """Runs per design and pool, and the grid (``--quick`` or the full one) the options narrow down."""
    runs = args.runs if args.runs is not None else (quick_runs if args.quick else default_runs)
    if runs < 2:
        ap.error("--runs: at least 2 (the MSE ratio needs a variance)")
    grid = quick_grid if args.quick else {"prevalences": PREVALENCES, "calibrations": tuple(CALIBRATIONS),
                                          "separations": tuple(SEPARATIONS), "real": POOLS}
    return runs, grid


def write_report(data: dict, stem: Path, render_fn, plot_fn, *, json_written: bool, with_plot: bool,
                 check: str | None = None) -> None:
    """Write ``stem.md`` (and the plot ``stem.png``), print the report and what was written."""
    text = render_fn(data)
    out_path(stem, ".md").write_text(text)
    print()
    print(text)
    if check is not None:
        print("=" * 30, "check", "=" * 30)
        print(check)
    written = [out_path(stem, ".md")] + ([out_path(stem, ".json")] if json_written else [])
    if with_plot:
        try:
            plot_fn(data, out_path(stem, ".png"))
            written.append(out_path(stem, ".png"))
        except ImportError:
            print("matplotlib not installed: no plot")
    print(f"\nwrote {', '.join(map(str, written))} ({data['meta']['elapsed'] / 60:.1f} min of simulation)")
