"""The opt-in tail floor of ``online-poisson``'s interval: what it buys on hidden positives, what it costs clean pools.

``OnlinePoissonDesign(tail_floor=True)`` raises the recalibrated scores of
the interval's model to a floor rate of positives ``r0`` at its posterior
mean given the labels (``labelwise.designs.tail_floor``).  The table compares
the default (``online-poisson``, ``variance="mixture"``) with and without it
on the pools of ``benchmarks/hidden_positives.py`` (a share of the positives
score like negatives) and on the clean 1:1000 pools of
``benchmarks/robustness.py`` with a weak system, the pools whose labels the
floor cannot tell from hidden positives (the module docstring of
``labelwise.designs.tail_floor``).

Prints one table, writes ``out/tail_floor.json`` and ``out/tail_floor.png``.

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src nice -n 10 python benchmarks/tail_floor.py --runs 40
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from grid import BATCH_SIZE, COVERAGE_TARGET, SEPARATIONS, generate_pool
from hidden_positives import POOLS, hidden_pool, pool_arguments, save
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logit
from tail_twins import CHECKPOINTS

import labelwise as lw

#: Clean pools as (prevalence, logit scale) with a weak system: calibrated and over-confident.
CLEAN = ((0.001, 1.0), (0.001, 3.0))
VARIANTS = {"default": {}, "tail floor": {"tail_floor": True}}
#: The 95% critical value of a likelihood ratio with one parameter on its boundary (half chi2(0), half chi2(1)).
BOUNDARY_CRITICAL = 2.71
#: Starting floors (logit) of the floor model's fit: its likelihood is flat in the floor below 1 / labels.
FLOOR_STARTS = (-12.0, -9.0, -7.0, -5.0)


def clean_pool(n_items: int, prevalence: float, k: float, seed: int) -> lw.Pool:
    """The robustness grid's pool ``<prevalence>-x<k>-weak``."""
    return generate_pool(n_items=n_items, prevalence=prevalence, k=k, d=SEPARATIONS["weak"], threshold="break-even",
                         seed=seed, name=f"{prevalence:g}-x{k:g}-weak")


def variant_runs(pool: lw.Pool, runs: int, seed: int) -> dict:
    """Coverage, mean width and RMSE of ``online-poisson`` with and without the floor, per checkpoint."""
    measure = lw.make_measure("f1", pool)
    out = {}
    for name, params in VARIANTS.items():
        result = lw.simulate(pool, measure, "online-poisson", budget=CHECKPOINTS[-1], batch_size=BATCH_SIZE,
                             repeats=runs, seed=seed, checkpoints=list(CHECKPOINTS), design_params=params).to_dict()
        out[name] = [{"cover": c["coverage"], "width": c["mean_width"], "rmse": float(np.sqrt(c["mse"]))}
                     for c in result["checkpoints"]]
    return out


def platt_loglik(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Log-likelihood of labels ``y`` under ``r0 + (1 - r0) sigmoid(a x + b)``; ``theta = (a, b[, logit r0])``."""
    z = theta[0] * x + theta[1]
    if len(theta) == 2:
        return float(np.sum(np.where(y == 1, log_expit(z), log_expit(-z))))
    r0 = expit(theta[2])
    positive = np.logaddexp(np.log(r0), np.log1p(-r0) + log_expit(z))
    return float(np.sum(np.where(y == 1, positive, np.log1p(-r0) + log_expit(-z))))


def floor_statistic(x: np.ndarray, y: np.ndarray) -> float:
    """Likelihood ratio of the Platt map with a floor against the map alone, both fitted to the labels counted
    once (the rounds choose from scores and earlier labels only, so the likelihood needs no design weights)."""
    def fit(start: list[float]) -> float:
        return minimize(lambda t: -platt_loglik(t, x, y), start, method="Nelder-Mead",
                        options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 6000}).fun

    plain = minimize(lambda t: -platt_loglik(t, x, y), [1.0, 0.0], method="Nelder-Mead",
                     options={"xatol": 1e-6, "fatol": 1e-8, "maxiter": 4000})
    floored = min(fit([*plain.x, start]) for start in FLOOR_STARTS)
    return max(2.0 * (plain.fun - floored), 0.0)


def floor_evidence(pool: lw.Pool, runs: int, seed: int) -> list[float]:
    """Per checkpoint, the share of the default's runs whose labels reject "no floor" at 5%
    (:func:`floor_statistic` above :data:`BOUNDARY_CRITICAL`)."""
    measure = lw.make_measure("f1", pool)
    design = lw.make_design("default", pool, measure)
    probs = np.asarray(pool.outputs(np.arange(pool.n_items)).probs, dtype=float).reshape(pool.n_items, -1)[:, -1]
    x, y = logit(np.clip(probs, 1e-12, 1 - 1e-12)), np.asarray(pool.labels).ravel()
    fired = np.zeros((len(CHECKPOINTS), runs), dtype=bool)
    for r, rng in enumerate(np.random.SeedSequence(seed).spawn(runs)):
        session = lw.Session(pool, measure, design, seed=np.random.default_rng(rng), budget=CHECKPOINTS[-1])

        def record(n: int, _estimate, r: int = r, session: lw.Session = session) -> None:
            items = session.sample().draws.items[:n]
            fired[CHECKPOINTS.index(n), r] = floor_statistic(x[items], y[items]) > BOUNDARY_CRITICAL

        session.run(lw.TruthOracle(pool), CHECKPOINTS[-1], BATCH_SIZE, checkpoints=list(CHECKPOINTS),
                    on_checkpoint=record)
    return fired.mean(axis=1).tolist()


def summary_section(data: dict) -> str:
    """Markdown: per pool and checkpoint, coverage / width ratio of the default with and without the floor."""
    a = data["args"]
    lines = [
        "## Positives the scores cannot see: the opt-in tail floor", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/tail_floor.py --runs "
         f"{a['runs']} --items {a['items']} --seed {a['seed']}`: F1, batches of {BATCH_SIZE}, `online-poisson` "
         "(the default on these pools) without and with `tail_floor=True`. Cells: coverage / mean width over 3.92 "
         "RMSE (! below the target coverage). `hidden-*`: pools of `benchmarks/hidden_positives.py`; "
         "`0.001-x*-weak`: clean pools of the robustness grid. *floor found*: share of the default's runs whose "
         "labels reject a Platt map without a floor for one with it (likelihood ratio, 5% level, labels counted "
         "once): how often the labels alone can tell a pool with hidden positives from a clean one."), "",
        "| pool | labels | floor found | " + " | ".join(VARIANTS) + " |",
        "|---|---|---|" + "---|" * len(VARIANTS),
    ]

    def cell(c: dict) -> str:
        ratio = c["width"] / (3.92 * c["rmse"]) if c["rmse"] else np.inf
        flag = "!" if c["cover"] < COVERAGE_TARGET else ""
        return f"{c['cover']:.2f}{flag} / {ratio:.2f}"

    for entry in data["pools"]:
        for k, labels in enumerate(CHECKPOINTS):
            cells = " | ".join(cell(entry["runs"][v][k]) for v in VARIANTS)
            lines.append(f"| {entry['name']} | {labels} | {entry['floor_found'][k]:.2f} | {cells} |")
    return "\n".join(lines) + "\n"


def plot(data: dict, path: Path) -> None:
    """Coverage and width ratio per pool at each checkpoint, with and without the floor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(data["pools"]), figsize=(3.2 * len(data["pools"]), 5.5), sharex=True)
    for j, entry in enumerate(data["pools"]):
        for variant, style in zip(VARIANTS, ("o-", "s--")):
            cells = entry["runs"][variant]
            axes[0, j].plot(CHECKPOINTS, [c["cover"] for c in cells], style, label=variant)
            axes[1, j].plot(CHECKPOINTS, [c["width"] / (3.92 * c["rmse"]) for c in cells], style, label=variant)
        axes[0, j].axhline(COVERAGE_TARGET, color="k", lw=0.8)
        axes[1, j].axhline(2.0, color="k", lw=0.8)
        axes[0, j].set_title(entry["name"], fontsize=9)
        axes[1, j].set_xscale("log")
        axes[1, j].set_xlabel("labels")
    axes[0, 0].set_ylabel("coverage")
    axes[1, 0].set_ylabel("width / (3.92 RMSE)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    args = pool_arguments(__doc__.splitlines()[0])
    pools = [hidden_pool(args.items, prevalence, share, args.seed)[0] for prevalence, share in POOLS]
    pools += [clean_pool(args.items, prevalence, k, args.seed) for prevalence, k in CLEAN]
    data = {"args": vars(args), "pools": []}
    for pool in pools:
        data["pools"].append({"name": pool.name, "runs": variant_runs(pool, args.runs, args.seed),
                              "floor_found": floor_evidence(pool, args.runs, args.seed)})
        print(f"{pool.name}: done", flush=True)
    save(data, "tail_floor", summary_section, plot)


if __name__ == "__main__":
    main()
