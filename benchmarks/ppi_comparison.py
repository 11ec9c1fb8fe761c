"""labelwise's designs against prediction-powered inference (PPI++) on the measures that are means.

Issue 11, item 3. Prediction-powered inference (Angelopoulos, Bates,
Fannjiang, Jordan & Zrnic, "Prediction-powered inference", *Science* 382,
2023) estimates a mean from ``n`` labeled items and a model's predictions on
the whole population. Its power-tuned form, PPI++ (Angelopoulos, Duchi &
Zrnic, "PPI++: Efficient Prediction-Powered Inference", arXiv:2311.01453,
2023), is

    theta = lam * mean_pool(f) + mean_labeled(y - lam * f),
    lam   = cov(y, f) / ((1 + n / N) var(f)), clipped to [0, 1],

with the CLT interval ``theta ± z sqrt(lam² var_pool(f) / N + var(y - lam f) / n)``.
For a fixed ``lam`` this is the survey sampler's difference estimator
(Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, Springer
1992), unbiased under uniform sampling whatever the model.

The measures
------------
* **accuracy**: the mean of ``1[pred == y]`` over the pool. The model's
  prediction of correctness is ``prob`` where ``pred = 1`` and ``1 - prob``
  where ``pred = 0``; labels are drawn uniformly from the whole pool.
* **precision**: the mean of ``y`` over the predicted positives, with
  prediction ``prob``. Two sampling frames, both with the designs' label
  budget (``n`` labels at a checkpoint of ``n``):

  - ``ppi++`` draws its ``n`` labels uniformly from the predicted positives
    only. That is how PPI would be used for precision, since which items are
    predicted positive is known before labeling, and it spends every label
    where precision is decided (as labelwise's ``importance`` does). It is
    the comparison this script is about. Where a pool has fewer predicted
    positives than ``n``, all of them are labeled (the estimate is then
    exact, the interval is not: see below);
  - ``ppi++ (pool frame)`` draws from the whole pool, like ``passive``, and
    uses the labeled items that turn out predicted positive. It separates the
    gain from the predictions from the gain from the sampling frame.
* **recall** is skipped: it is the mean of ``pred`` over the items with
  ``y = 1``, a subpopulation that depends on the labels, so it is a ratio of
  two means and not a PPI mean.

Every PPI row has a ``classical`` twin: the same labels with ``lam = 0``
(the sample mean and its CLT interval), which isolates what the predictions
add.

PPI's theory treats the unlabeled set as an i.i.d. sample independent of the
labeled one. Here, as the brief of issue 11 asks, the predictions on the
whole pool (labeled items included) play ``Yhat_unlabeled`` and the labeled
items are a simple random sample of that finite pool. The point estimate is
still unbiased for fixed ``lam``; the interval is slightly conservative,
because its ``var(f) / N`` term describes a pool mean of ``f`` that is in
fact known, and because it has no finite-population correction
``1 - n / N``. The missing correction matters only where ``n`` is a large
part of the frame (precision on pools with few predicted positives).

The computation
---------------
:func:`ppi_mean` computes PPI++ vectorized over the runs, with the formulas
of ``ppi-python`` 0.2.x (``ppi_py.ppi_mean_pointestimate`` and
``ppi_py.ppi_mean_ci`` with ``lam=None``: ``cov`` with divisor ``n``,
``var(f)`` with divisor ``n + N - 1`` over the labeled and unlabeled
predictions together, standard deviations with divisor ``n``). When
``ppi-python`` is installed (``pip install ppi-python``; it is not a
dependency of labelwise because it pulls numba, llvmlite, statsmodels,
scikit-learn and gdown), every pool and measure is cross-checked: the first
:data:`CROSS_CHECK_RUNS` runs at every checkpoint must match the package's
functions to 1e-9. Without it the script says so and runs unchecked.
``--self-check`` checks :func:`ppi_mean` against a brute-force computation
(explicit sums, ``lam`` by a grid search on the estimated variance), against
``ppi-python`` when it is installed, and checks by Monte Carlo that the
estimate is unbiased and the interval covers on a calibrated pool.

The labelwise side is ``labelwise.simulate`` (budget 2000, batches of 50,
checkpoints 250/500/1000/2000) on the designs of ``--designs``, a
``;``-separated list of ``name`` or ``name:key=value,key=value`` (the
design's settings, as ``labelwise simulate --param``), default
``passive;importance;default``. ``passive`` (uniform sampling, labelwise's
estimator and interval) is always run: every MSE is divided by its MSE. A
design that fails is reported as an error and the rest go on.

The pools are those of ``benchmarks/robustness.py`` (its ``grid_specs``,
``generate_pool`` and ``real_specs``): by default prevalences 0.5, 0.3 and
0.05 x calibrations under (logit x 0.5), calibrated and over (logit x 3) x
separations weak and strong, predictions at break-even, plus ``abt-buy`` and
``dblp-acm`` from ``../shared/datasets`` (skipped when absent).

Reported per pool, measure and method at each checkpoint: MSE, MSE / passive
(± its delta-method standard error, as in robustness.py), coverage of the
95% interval, and width ratio = mean width / (3.92 RMSE).

Running it
----------
::

    nice -n 10 .venv/bin/python benchmarks/ppi_comparison.py --self-check
    nice -n 10 .venv/bin/python benchmarks/ppi_comparison.py --quick            # 20 runs, 3 pools
    nice -n 10 .venv/bin/python benchmarks/ppi_comparison.py --runs 50 --jobs 2
    .venv/bin/python benchmarks/ppi_comparison.py --from-json benchmarks/out/ppi_comparison.json

Outputs: markdown tables on stdout and in ``benchmarks/out/ppi_comparison.md``,
the data in ``benchmarks/out/ppi_comparison.json`` and a plot (MSE / passive
and coverage at 2000 labels per pool and method) in
``benchmarks/out/ppi_comparison.png``; ``--quick`` writes
``ppi_comparison.quick.*``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shlex
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from grid import (
    BATCH_SIZE,
    BUDGET,
    CALIBRATIONS,
    CHECKPOINTS,
    DEFAULT_N,
    LEVEL,
    MIN_POSITIVES,
    SEPARATIONS,
    PoolSpec,
    design_entries,
    grid_specs,
    out_path,
    parse_designs,
    real_specs,
    run_plan,
    saved_run,
    split_list,
    write_report,
)
from pools import DATASETS, POOLS
from ppi_report import CLASSICAL, CROSS_CHECK_RUNS, PPI, PPI_POOL_FRAME, plot, render
from results import fmt_mse, git_revision
from scipy.special import ndtri

import labelwise as lw

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"

MEASURES = ("accuracy", "precision")
DESIGNS = "passive;importance;default"
DEFAULT_RUNS = 100
QUICK_RUNS = 20
PREVALENCES = (0.5, 0.3, 0.05)
#: The part of the grid ``--quick`` runs (unless the grid flags say otherwise).
QUICK_GRID = {"prevalences": (0.3, 0.05), "calibrations": ("over",), "separations": ("weak",), "real": ("abt-buy",)}


# --------------------------------------------------------------------------- PPI++
def ppi_mean(y: np.ndarray, f: np.ndarray, mask: np.ndarray, f_pool: np.ndarray, *, level: float = LEVEL,
             lam: float | None = None) -> dict[str, np.ndarray]:
    """PPI++ point estimates and intervals of a mean, one per row (run).

    Parameters
    ----------
    y, f : ndarray of shape (runs, n)
        Labels (outcomes) and the model's predictions of them on the labeled items.
    mask : ndarray of bool, shape (runs, n)
        Which columns of each row are labeled items of the population (rows may hold different counts).
    f_pool : ndarray of shape (N,)
        The model's predictions on the whole population (``Yhat_unlabeled``).
    level : float
        Confidence level of the two-sided interval.
    lam : float, optional
        ``None`` tunes ``lam`` per row as ``ppi_py.ppi_mean_ci(..., lam=None)`` does; ``0`` gives the classical
        mean and CLT interval, ``1`` plain PPI.

    Returns
    -------
    dict
        ``value``, ``lower``, ``upper``, ``lam``, ``n`` (labeled count) and ``defined`` (``n >= 1``), each of
        shape (runs,). A row without labels is undefined: estimate 1/2, interval [0, 1].
    """
    w = mask.astype(float)
    n = w.sum(axis=1)
    big_n = f_pool.size
    defined = n >= 1
    m = np.where(defined, n, 1.0)
    mu_pool = float(f_pool.mean())
    fc = np.where(mask, f - mu_pool, 0.0)  # predictions centered at the pool mean (numerically kinder)
    yw = np.where(mask, y, 0.0)
    if lam is None:
        y_bar, fc_bar = yw.sum(axis=1) / m, fc.sum(axis=1) / m
        cov = (w * (yw - y_bar[:, None]) * (fc - fc_bar[:, None])).sum(axis=1) / m
        # np.cov (divisor n + N - 1) of the labeled and pool predictions together; the pool part sums to 0
        total = n + big_n
        var_f = ((fc**2).sum(axis=1) + float(np.sum((f_pool - mu_pool) ** 2)) - fc.sum(axis=1) ** 2 / total) / (
            total - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_r = cov / ((1.0 + n / big_n) * var_f)
        lam_r = np.clip(np.where(np.isfinite(lam_r), lam_r, 0.0), 0.0, 1.0)
    else:
        lam_r = np.full(y.shape[0], float(lam))
    resid = np.where(mask, y - lam_r[:, None] * f, 0.0)
    r_bar = resid.sum(axis=1) / m
    value = lam_r * mu_pool + r_bar
    rectifier_var = (w * (resid - r_bar[:, None]) ** 2).sum(axis=1) / m / m
    imputed_var = (lam_r * float(f_pool.std())) ** 2 / big_n
    half = float(ndtri(0.5 + level / 2)) * np.sqrt(rectifier_var + imputed_var)
    value = np.where(defined, value, 0.5)
    return {"value": value, "lower": np.where(defined, value - half, 0.0),
            "upper": np.where(defined, value + half, 1.0), "lam": lam_r, "n": n, "defined": defined}


def ppi_package() -> tuple[Any, str] | None:
    """``(ppi_py, version)`` when ``ppi-python`` is installed, else ``None``."""
    try:
        import ppi_py
    except ImportError:
        return None
    from importlib.metadata import version

    return ppi_py, version("ppi-python")


def cross_check(ppi_py: Any, y: np.ndarray, f: np.ndarray, mask: np.ndarray, f_pool: np.ndarray,
                ours: dict[str, np.ndarray], level: float, rows: range) -> None:
    """Raise ``AssertionError`` unless ``ppi_py``'s ``lam=None`` estimate and interval equal :func:`ppi_mean`'s."""
    for r in rows:
        if ours["n"][r] < 2:
            continue
        yr, fr = y[r][mask[r]].astype(float), f[r][mask[r]].astype(float)
        est = float(np.ravel(ppi_py.ppi_mean_pointestimate(yr, fr, f_pool, lam=None))[0])
        lo, hi = (float(np.ravel(v)[0]) for v in ppi_py.ppi_mean_ci(yr, fr, f_pool, alpha=1 - level, lam=None))
        got = (ours["value"][r], ours["lower"][r], ours["upper"][r])
        if not np.allclose((est, lo, hi), got, rtol=1e-9, atol=1e-9):
            raise AssertionError(f"ppi_py gives {(est, lo, hi)}, ppi_mean {got} (run {r}, n {ours['n'][r]:g})")


# --------------------------------------------------------------------------- running
def frame_of(pool: lw.Pool, measure: str) -> dict[str, np.ndarray]:
    """The outcome ``y`` and prediction ``f`` of every item, and the items whose mean the measure is."""
    pred = np.asarray(pool.preds)[:, 0].astype(bool)
    prob = np.asarray(pool.probs, float)[:, 0]
    label = np.asarray(pool.labels).astype(bool)
    if measure == "accuracy":
        return {"y": (pred == label).astype(float), "f": np.where(pred, prob, 1.0 - prob),
                "in": np.ones(pool.n_items, bool)}
    if measure == "precision":
        return {"y": label.astype(float), "f": prob, "in": pred}
    raise ValueError(f"measure {measure!r} is not a PPI mean here; choose from {', '.join(MEASURES)}")


def ppi_results(pool: lw.Pool, measure: str, truth: float, runs: int, seed: int, ppi_py: Any) -> list[dict]:
    """The PPI methods' entries (``SimulationResult.to_dict()`` plus per-run values) on one pool and measure."""
    t0 = time.perf_counter()
    fr = frame_of(pool, measure)
    inside = np.flatnonzero(fr["in"])
    f_pool = fr["f"][inside]
    if not math.isclose(float(fr["y"][inside].mean()), truth, rel_tol=1e-9, abs_tol=1e-12):
        raise AssertionError(f"{measure}: the frame mean {fr['y'][inside].mean()} is not labelwise's {truth}")
    rng = np.random.default_rng([seed, zlib.crc32(f"{pool.name}-{measure}".encode())])
    frames = {PPI: inside}
    if measure == "precision":
        frames[PPI_POOL_FRAME] = np.arange(pool.n_items)
    draws = {}
    for method, items in frames.items():
        size = min(CHECKPOINTS[-1], items.size)
        draws[method] = np.stack([items[rng.choice(items.size, size=size, replace=False)] for _ in range(runs)])
    setup = time.perf_counter() - t0
    shape = (len(CHECKPOINTS), runs, 1)
    out = {m: {k: np.empty(shape) for k in ("values", "lower", "upper", "defined", "n", "lam")}
           for m in [*frames, CLASSICAL]}
    seconds = dict.fromkeys(out, setup)
    for c, n_labels in enumerate(CHECKPOINTS):
        for method, idx in draws.items():
            take = idx[:, :n_labels]
            y, f, mask = fr["y"][take], fr["f"][take], fr["in"][take]
            for name, lam in ((method, None), (CLASSICAL, 0.0)) if method == PPI else ((method, None),):
                t = time.perf_counter()
                res = ppi_mean(y, f, mask, f_pool, level=LEVEL, lam=lam)
                seconds[name] += time.perf_counter() - t
                if ppi_py is not None and lam is None:
                    cross_check(ppi_py, y, f, mask, f_pool, res, LEVEL, range(min(CROSS_CHECK_RUNS, runs)))
                for key, v in (("values", res["value"]), ("lower", res["lower"]), ("upper", res["upper"]),
                               ("defined", res["defined"]), ("n", res["n"]), ("lam", res["lam"])):
                    out[name][key][c, :, 0] = v
    entries = []
    for name, arr in out.items():
        frame = "predicted positives" if measure == "precision" and name != PPI_POOL_FRAME else "pool"
        result = lw.SimulationResult(
            pool=pool.name, n_items=pool.n_items, measure=measure, names=(measure,), design=name,
            design_resolved=name, design_params={"lam": "tuned" if name != CLASSICAL else 0, "frame": frame},
            true_value=np.array([truth]), repeats=runs, seconds_per_run=seconds[name] / runs,
            labels=list(CHECKPOINTS), values=arr["values"], lower=arr["lower"], upper=arr["upper"],
            defined=arr["defined"].astype(bool), level=LEVEL)
        entries.append({"summary": result.to_dict(), "ppi": True,
                        "labels_used": arr["n"][..., 0].mean(axis=1).tolist(),
                        "mean_lam": arr["lam"][..., 0].mean(axis=1).tolist(),
                        "runs": {"values": arr["values"][..., 0].tolist(), "lower": arr["lower"][..., 0].tolist(),
                                 "upper": arr["upper"][..., 0].tolist()}})
    return entries


def run_pool(spec: PoolSpec, designs: list[tuple[str, str, dict, str | None]], measures: tuple[str, ...],
             runs: int, seed: int, check_package: bool) -> dict:
    """The designs and the PPI methods on one pool, for every measure."""
    t0 = time.perf_counter()
    pool = spec.load()
    package = ppi_package() if check_package else None
    by_measure = {}
    for measure in measures:
        entries = design_entries(pool, measure, designs, runs, seed)
        truth = float(lw.true_value(pool, lw.make_measure(measure, pool))[0])
        entries += ppi_results(pool, measure, truth, runs, seed, None if package is None else package[0])
        by_measure[measure] = entries
        for e in entries:
            if "summary" in e:
                last = e["summary"]["checkpoints"][-1]
                print(f"{spec.name:<16} {measure:<9} {e['summary']['design']:<22} MSE@{last['labels']} "
                      f"{fmt_mse(last['mse']):>8} cov {last['coverage']:.2f}  "
                      f"{e['summary']['seconds_per_run']:.3f} s/run", flush=True)
    pred = np.asarray(pool.preds)[:, 0]
    return {"name": spec.name, "kind": spec.kind, "description": spec.description, "params": spec.params,
            "n_items": pool.n_items, "positives": int(np.sum(pool.labels)), "predicted_positives": int(pred.sum()),
            "seconds": time.perf_counter() - t0, "results": by_measure}


def run_all(specs: list[PoolSpec], designs: list, measures: tuple[str, ...], runs: int, seed: int, jobs: int,
            check_package: bool) -> list[dict]:
    order = {s.name: i for i, s in enumerate(specs)}
    if jobs <= 1:
        return [run_pool(s, designs, measures, runs, seed, check_package) for s in specs]
    with ProcessPoolExecutor(max_workers=jobs) as ex:
        futures = [ex.submit(run_pool, s, designs, measures, runs, seed, check_package)
                   for s in sorted(specs, key=PoolSpec.cost, reverse=True)]
        out = [f.result() for f in as_completed(futures)]
    return sorted(out, key=lambda p: order[p["name"]])


# --------------------------------------------------------------------------- self-check
def self_check(seed: int = 0) -> None:
    """:func:`ppi_mean` against explicit sums, a grid search for ``lam``, ppi-python and a Monte Carlo."""
    rng = np.random.default_rng(seed)
    big_n, n = 3000, 120
    truth_p = rng.beta(2, 2, big_n)
    y_pool = (rng.random(big_n) < truth_p).astype(float)
    f_pool = np.clip(truth_p + rng.normal(0, 0.15, big_n), 0, 1)
    idx = np.stack([rng.choice(big_n, n, replace=False) for _ in range(5)])
    mask = rng.random(idx.shape) < 0.8  # rows with different labeled counts
    mask[0] = True
    got = ppi_mean(y_pool[idx], f_pool[idx], mask, f_pool)
    z = float(ndtri(0.975))
    grid = np.linspace(0, 1, 100_001)
    for r in range(idx.shape[0]):
        ys = [float(y_pool[i]) for i, keep in zip(idx[r], mask[r]) if keep]
        fs = [float(f_pool[i]) for i, keep in zip(idx[r], mask[r]) if keep]
        k = len(ys)
        y_bar, f_bar = sum(ys) / k, sum(fs) / k
        cov = sum((a - y_bar) * (b - f_bar) for a, b in zip(ys, fs)) / k
        both = fs + [float(v) for v in f_pool]
        mean_both = sum(both) / len(both)
        var_f = sum((v - mean_both) ** 2 for v in both) / (len(both) - 1)
        # brute force: lam minimizes the estimated variance lam² var_f / N + var(y - lam f) / n over [0, 1]
        var_y = sum((a - y_bar) ** 2 for a in ys) / k
        est_var = grid**2 * var_f / big_n + (var_y - 2 * grid * cov + grid**2 * var_f) / k
        lam = float(grid[np.argmin(est_var)])
        assert abs(lam - got["lam"][r]) < 2e-5, (lam, got["lam"][r])
        lam = float(got["lam"][r])
        resid = [a - lam * b for a, b in zip(ys, fs)]
        r_bar = sum(resid) / k
        mu_pool = sum(float(v) for v in f_pool) / big_n
        theta = lam * mu_pool + r_bar
        sd_pool = math.sqrt(sum((float(v) - mu_pool) ** 2 for v in f_pool) / big_n)
        se = math.sqrt((lam * sd_pool) ** 2 / big_n + sum((v - r_bar) ** 2 for v in resid) / k / k)
        assert np.allclose([theta, theta - z * se, theta + z * se],
                           [got["value"][r], got["lower"][r], got["upper"][r]], rtol=1e-10, atol=1e-12)
    print(f"brute force: {idx.shape[0]} rows agree (lam by grid search to 2e-5, estimate and interval to 1e-10)")
    package = ppi_package()
    if package is None:
        print("ppi-python not installed: cross-check skipped (pip install ppi-python)")
    else:
        cross_check(package[0], y_pool[idx], f_pool[idx], mask, f_pool, got, LEVEL, range(idx.shape[0]))
        print(f"ppi-python {package[1]}: ppi_mean_pointestimate / ppi_mean_ci (lam=None) agree on "
              f"{idx.shape[0]} rows to 1e-9")
    # Monte Carlo: unbiased, covering, and better than classical on a calibrated pool
    reps, n = 4000, 200
    idx = np.stack([rng.choice(big_n, n, replace=False) for _ in range(reps)])
    ones = np.ones(idx.shape, bool)
    truth = y_pool.mean()
    for lam, name in ((None, PPI), (0.0, CLASSICAL)):
        res = ppi_mean(y_pool[idx], f_pool[idx], ones, f_pool, lam=lam)
        err = res["value"] - truth
        cover = np.mean((res["lower"] <= truth) & (truth <= res["upper"]))
        print(f"Monte Carlo {name:<9}: bias {err.mean():+.1e} (s.e. {err.std() / math.sqrt(reps):.1e}), "
              f"MSE {np.mean(err**2):.2e}, coverage {cover:.3f} ({reps} runs of {n} labels)")
        assert abs(err.mean()) < 4 * err.std() / math.sqrt(reps) + 1e-3
        assert 0.93 <= cover <= 0.975
    print("self-check passed")


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=None, help=f"runs per method and pool (default {DEFAULT_RUNS})")
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_RUNS} runs on a few pools, written to out/ppi_comparison.quick.*")
    ap.add_argument("--designs", default=DESIGNS,
                    help="';'-separated designs, each 'name' or 'name:key=value,key=value' (default %(default)s)")
    ap.add_argument("--measures", default=",".join(MEASURES), help="subset of %(default)s")
    ap.add_argument("--prevalences", default=None, help=f"comma-separated (default {','.join(map(str, PREVALENCES))})")
    ap.add_argument("--calibrations", default=None, help=f"subset of {','.join(CALIBRATIONS)}")
    ap.add_argument("--separations", default=None, help=f"subset of {','.join(SEPARATIONS)}")
    ap.add_argument("--real", default=None, help=f"real pools: subset of {','.join(POOLS)}, or none")
    ap.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    ap.add_argument("--n", type=int, default=DEFAULT_N, help="items per generated pool")
    ap.add_argument("--seed", type=int, default=0, help="simulation seed")
    ap.add_argument("--pool-seed", type=int, default=1, help="seed of the generated pools")
    ap.add_argument("--jobs", type=int, default=1, help="pools run in this many parallel processes")
    ap.add_argument("--no-cross-check", action="store_true", help="do not compare with ppi-python even if installed")
    ap.add_argument("--self-check", action="store_true", help="check the PPI++ computation and exit")
    ap.add_argument("--from-json", type=Path, default=None, help="re-render from a ppi_comparison JSON")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()

    if args.self_check:
        self_check(args.seed)
        return
    OUT.mkdir(exist_ok=True)
    if args.from_json is not None:
        data, stem = saved_run(args.from_json)
    else:
        runs, grid = run_plan(args, ap, quick_runs=QUICK_RUNS, default_runs=DEFAULT_RUNS, quick_grid=QUICK_GRID)
        measures = split_list(args.measures, MEASURES, choices=MEASURES)
        designs = parse_designs(args.designs)
        specs = real_specs(args.datasets, split_list(args.real, grid["real"], choices=POOLS)) + grid_specs(
            split_list(args.prevalences, grid["prevalences"], float),
            split_list(args.calibrations, grid["calibrations"], choices=tuple(CALIBRATIONS)),
            split_list(args.separations, grid["separations"], choices=tuple(SEPARATIONS)),
            n=args.n, min_positives=MIN_POSITIVES, threshold="break-even", pool_seed=args.pool_seed)
        if not specs or not measures:
            ap.error("no pools or no measures selected")
        package = None if args.no_cross_check else ppi_package()
        if package is None:
            print("PPI++ computed by ppi_mean, not cross-checked"
                  + ("" if args.no_cross_check else " (ppi-python not installed: pip install ppi-python)"))
        print(f"{len(specs)} pools x {len(measures)} measures x {len(designs)} designs + PPI, {runs} runs, "
              f"{args.jobs} job(s)", flush=True)
        started = dt.datetime.now(dt.UTC)
        load_start = os.getloadavg()[0]
        t0 = time.perf_counter()
        pools = run_all(specs, designs, measures, runs, args.seed, args.jobs, package is not None)
        meta = {
            "command": shlex.join(["python", "benchmarks/ppi_comparison.py", *sys.argv[1:]]),
            "started": f"{started:%Y-%m-%d %H:%M}", "runs": runs, "seed": args.seed, "measures": list(measures),
            "designs": [label for label, *_ in designs], "budget": BUDGET, "batch_size": BATCH_SIZE,
            "checkpoints": list(CHECKPOINTS), "level": LEVEL, "n": args.n, "pool_seed": args.pool_seed,
            "jobs": args.jobs, "elapsed": time.perf_counter() - t0, "load": [load_start, os.getloadavg()[0]],
            "version": lw.__version__, "git": git_revision(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "ppi_python": None if package is None else package[1],
        }
        data = {"meta": meta, "pools": pools, "specs": [asdict(s) for s in specs]}
        stem = OUT / ("ppi_comparison" + (".quick" if args.quick else ""))
        out_path(stem, ".json").write_text(json.dumps(data))

    write_report(data, stem, render, plot, json_written=not args.from_json, with_plot=not args.no_plot)


if __name__ == "__main__":
    main()
