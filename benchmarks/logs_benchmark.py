"""Evaluation from logs whose zero-reward rows were subsampled: policy value, AUC and calibration vs keep rate.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010)
(:mod:`labelwise.logs`).  A logged bandit is built from scikit-learn's
bundled ``digits`` (supervised-to-bandit conversion): half the images train a
target policy (logistic regression on the 64 pixels, deterministic arg max)
and a weak reward model (logistic regression on 3 principal components); the
other half is the population.  The logging policy plays the weak model's
class probabilities mixed with 80% uniform (every propensity >= 0.08,
known); the reward is a click: 1 with probability 1/4 when the action is the
true digit, else 0 (a click rate of a few percent, as in ads).  Zero-reward
rows are kept at ``l`` in {1, 0.3, 0.1, 0.01}.

* **policy value**: the target policy's value (its accuracy on the
  population, exact) from ``--log-rows`` logged rows: bias, RMSE, coverage of
  the 95% interval and width / (3.92 RMSE) of the ``eta``, ``ht`` and
  ``snips`` estimators over ``--repeats`` logs;
* **AUC**: the weak model's score for the logged action against the reward,
  from the same logs; the truth is the population AUC (pairs weighted by the
  logging probabilities, exact);
* **the 1:1 prediction**: AUC RMSE from a fixed budget of rows at positive
  shares rho, against Agarwal et al.'s (JMLR 2005, Theorem 3) bound, which is
  smallest at rho = 1/2;
* **calibration**: a reward model (logistic regression on features of the
  weak model's score) fitted on subsampled logs, either importance-weighted
  (``w(l, r)``; solved exactly by Newton's method, or by one pass of
  minibatch SGD, the online learner the blog has in mind) or unweighted by
  SGD on a training log and then calibrated on a subsampled calibration log
  by the weighted spline or weighted isotonic regression; expected
  calibration error and Brier score on the population;
* **speed**: ``logged_auc`` on a 1:1-subsampled log of 10^7 rows.

Prints markdown tables and writes ``benchmarks/out/logs_benchmark.{json,png}``.

    PYTHONPATH=src nice -n 10 python benchmarks/logs_benchmark.py --repeats 500
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy.special import expit

from labelwise.logs import (
    auc_deviation_bound,
    balanced_keep_rates,
    expected_calibration_error,
    fit_calibration,
    fit_weighted_logistic,
    keep_weights,
    logged_auc,
    policy_value,
    weighted_auc,
)

OUT = Path(__file__).resolve().parent / "out"
KEEP_RATES = (1.0, 0.3, 0.1, 0.01)
METHODS = ("eta", "ht", "snips")
CALIBRATIONS = ("importance-weighted", "importance-weighted SGD", "spline", "isotonic")
SGD_BATCH, SGD_RATE = 32, 0.5
SHARES = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
EXPLORATION = 0.8
CLICK = 0.25  # probability of a reward when the action is the true digit
LEVEL = 0.95
COVERAGE_TARGET = 0.93


def bandit(seed: int) -> dict:
    """The population: eval images, logging probabilities ``p(a|x)``, the target policy and the weak scores."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA
    from sklearn.linear_model import LogisticRegression

    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(seed).permutation(len(y))
    train, pop = perm[: len(y) // 2], perm[len(y) // 2:]
    target = LogisticRegression(max_iter=3000).fit(X[train], y[train]).predict(X[pop])
    pca = PCA(3).fit(X[train])
    weak = LogisticRegression(max_iter=3000).fit(pca.transform(X[train]), y[train])
    score = weak.predict_proba(pca.transform(X[pop]))  # (n_pop, 10): the weak model's P(reward | x, a)
    logging = (1 - EXPLORATION) * score + EXPLORATION / score.shape[1]
    click = CLICK * (np.arange(score.shape[1])[None, :] == y[pop][:, None])  # E[reward | x, a]
    # every (x, a) pair of the population weighted by its logging probability (the logged distribution),
    # once as a positive (times its click probability) and once as a negative
    pairs = np.r_[logging.ravel() * click.ravel(), logging.ravel() * (1 - click.ravel())]
    auc = weighted_auc(np.r_[score.ravel(), score.ravel()], np.r_[np.ones(click.size), np.zeros(click.size)], pairs)
    return {"labels": y[pop], "target": target, "score": score, "logging": logging, "click": click,
            "value": float(CLICK * np.mean(target == y[pop])), "auc": auc}


def draw_log(problem: dict, n: int, rng: np.random.Generator) -> dict:
    """``n`` logged rows: a context, the logging policy's action, its propensity and the reward."""
    rows = rng.integers(0, problem["labels"].size, n)
    cdf = np.cumsum(problem["logging"][rows], axis=1)
    action = np.minimum((cdf < rng.uniform(size=(n, 1)) * cdf[:, -1:]).sum(axis=1), cdf.shape[1] - 1)
    return {"rows": rows, "action": action, "propensity": problem["logging"][rows, action],
            "reward": (rng.uniform(size=n) < problem["click"][rows, action]).astype(float),
            "score": problem["score"][rows, action],
            "target": (problem["target"][rows] == action).astype(float), "u": rng.uniform(size=n)}


def kept(log: dict, keep_rate: float) -> np.ndarray:
    """Rows kept at ``keep_rate``: every non-zero reward, a zero one when its uniform falls below the rate."""
    return (log["reward"] != 0) | (log["u"] < keep_rate)


def summarize(estimates: np.ndarray, lower: np.ndarray, upper: np.ndarray, truth: float) -> dict:
    err = estimates - truth
    rmse = float(np.sqrt(np.mean(err**2)))
    return {"bias": float(err.mean()), "rmse": rmse, "coverage": float(np.mean((lower <= truth) & (truth <= upper))),
            "width_ratio": float(np.mean(upper - lower) / (3.92 * rmse)), "repeats": int(err.size)}


def value_and_auc(problem: dict, n_rows: int, repeats: int, rng: np.random.Generator) -> dict:
    """Policy value by each method and AUC, per keep rate, over ``repeats`` logs of ``n_rows`` rows."""
    from rich.progress import track

    shape = (len(KEEP_RATES), len(METHODS) + 1, repeats)
    est, lo, hi = np.empty(shape), np.empty(shape), np.empty(shape)
    kept_rows = np.empty((len(KEEP_RATES), repeats))
    for r in track(range(repeats), description="value and AUC", transient=True):
        log = draw_log(problem, n_rows, rng)
        for k, rate in enumerate(KEEP_RATES):
            m = kept(log, rate)
            kept_rows[k, r] = m.sum()
            rates = np.full(m.sum(), rate)
            results = [policy_value(log["reward"][m], log["propensity"][m], log["target"][m], rates, method=method,
                                    n_logged=n_rows if method == "ht" else None, level=LEVEL) for method in METHODS]
            results.append(logged_auc(log["score"][m], log["reward"][m], rates, LEVEL))
            for j, res in enumerate(results):
                est[k, j, r], lo[k, j, r], hi[k, j, r] = res.estimate, res.lower, res.upper
    out = {}
    for k, rate in enumerate(KEEP_RATES):
        row = {method: summarize(est[k, j], lo[k, j], hi[k, j], problem["value"]) for j, method in enumerate(METHODS)}
        row["auc"] = summarize(est[k, -1], lo[k, -1], hi[k, -1], problem["auc"])
        row["kept_rows"] = float(kept_rows[k].mean())
        out[str(rate)] = row
    return out


def one_to_one(problem: dict, budget: int, repeats: int, rng: np.random.Generator) -> dict:
    """AUC RMSE from ``budget`` rows at each positive share, and the deviation bound there."""
    click, logging = problem["click"].ravel(), problem["logging"].ravel()
    score = problem["score"].ravel()
    pos_p = logging * click / (logging @ click)
    neg_p = logging * (1 - click) / (logging @ (1 - click))
    rmse = []
    for share in SHARES:
        n_pos = round(share * budget)
        errors = []
        for _ in range(repeats):
            pos = rng.choice(score.size, n_pos, p=pos_p)
            neg = rng.choice(score.size, budget - n_pos, p=neg_p)
            errors.append(weighted_auc(np.r_[score[pos], score[neg]], np.r_[np.ones(n_pos), np.zeros(budget - n_pos)])
                          - problem["auc"])
        rmse.append(float(np.sqrt(np.mean(np.square(errors)))))
    share_pos = float(logging @ click / logging.sum())
    return {"budget": budget, "shares": list(SHARES), "rmse": rmse,
            "bound": auc_deviation_bound(budget, np.array(SHARES)).tolist(),
            "best_share": SHARES[int(np.argmin(rmse))],
            # a log of 100 x budget rows with the population's positive share, planned by the helper
            "planned_keep_rates": balanced_keep_rates(int(100 * budget * share_pos),
                                                      int(100 * budget * (1 - share_pos)), budget)}


def reward_features(score: np.ndarray) -> np.ndarray:
    """Features of the weak model's probability: its logit and its square (a reward model on them)."""
    logit = np.log(np.clip(score, 1e-6, 1 - 1e-6)) - np.log1p(-np.clip(score, 1e-6, 1 - 1e-6))
    return np.column_stack([logit, logit**2 / 10])


def sgd_logistic(features: np.ndarray, reward: np.ndarray, weight: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One pass of minibatch SGD on the weighted log loss (the online learner the blog has in mind).

    Features are standardized on the rows; returns coefficients on the raw features, intercept first.
    """
    mean, sd = features.mean(axis=0), features.std(axis=0) + 1e-12
    X = np.column_stack([np.ones(len(reward)), (features - mean) / sd])
    beta = np.zeros(X.shape[1])
    order = rng.permutation(len(reward))
    for start in range(0, len(order), SGD_BATCH):  # a loop over minibatches, each step vectorized
        b = order[start:start + SGD_BATCH]
        beta -= SGD_RATE * X[b].T @ (weight[b] * (expit(X[b] @ beta) - reward[b])) / b.size
    return np.r_[beta[0] - beta[1:] @ (mean / sd), beta[1:] / sd]


def calibration(problem: dict, n_rows: int, repeats: int, rng: np.random.Generator) -> dict:
    """ECE and Brier score on the population of each calibration route, per keep rate."""
    from rich.progress import track

    pop_score, pop_truth = problem["score"].ravel(), problem["click"].ravel()
    pop_weight = problem["logging"].ravel()
    pop_x = reward_features(pop_score)
    metrics = {str(rate): {name: {"ece": [], "brier": [], "mean_error": []} for name in CALIBRATIONS}
               for rate in KEEP_RATES}
    for _ in track(range(repeats), description="calibration", transient=True):
        train, calib = draw_log(problem, n_rows, rng), draw_log(problem, n_rows, rng)
        for rate in KEEP_RATES:
            mt, mc = kept(train, rate), kept(calib, rate)
            x_t, r_t = reward_features(train["score"][mt]), train["reward"][mt]
            x_c, r_c = reward_features(calib["score"][mc]), calib["reward"][mc]
            # importance weighting gets both logs; the calibrated routes fit on one and calibrate on the other
            x_both, r_both = np.r_[x_t, x_c], np.r_[r_t, r_c]
            w_both = keep_weights(r_both, rate)
            beta_iw = fit_weighted_logistic(x_both, r_both, w_both)
            beta_sgd = sgd_logistic(x_both, r_both, w_both, rng)
            beta = sgd_logistic(x_t, r_t, np.ones_like(r_t), rng)  # unweighted, calibrated afterwards
            raw_c = expit(beta[0] + x_c @ beta[1:])
            raw_pop = expit(beta[0] + pop_x @ beta[1:])
            w_c = keep_weights(r_c, rate)
            predictions = {
                "importance-weighted": expit(beta_iw[0] + pop_x @ beta_iw[1:]),
                "importance-weighted SGD": expit(beta_sgd[0] + pop_x @ beta_sgd[1:]),
                "spline": fit_calibration(raw_c, r_c, w_c, score_range=(0, 1), reward_range=(0, 1))(raw_pop),
                "isotonic": fit_calibration(raw_c, r_c, w_c, method="isotonic")(raw_pop),
            }
            for name, pred in predictions.items():
                m = metrics[str(rate)][name]
                m["ece"].append(expected_calibration_error(pred, pop_truth, pop_weight))
                m["brier"].append(float(pop_weight @ (pred - pop_truth) ** 2 / pop_weight.sum()))
                m["mean_error"].append(float(pop_weight @ (pred - pop_truth) / pop_weight.sum()))
    return {rate: {name: {f"{k}_mean": float(np.mean(v)) for k, v in m.items()}
                   | {f"{k}_se": float(np.std(v, ddof=1) / np.sqrt(len(v))) for k, v in m.items()}
                   for name, m in routes.items()}
            for rate, routes in metrics.items()}


def speed(n_rows: int, rng: np.random.Generator, trials: int = 3) -> dict:
    """Seconds of ``logged_auc`` on ``n_rows`` kept rows, half positives, negatives kept at 1/99."""
    label = (rng.uniform(size=n_rows) < 0.5).astype(np.int8)
    score = rng.normal(size=n_rows) + label
    rate = np.where(label == 1, 1.0, 1 / 99)
    seconds = []
    for _ in range(trials):
        start = time.perf_counter()
        logged_auc(score, label, rate)
        seconds.append(time.perf_counter() - start)
    return {"rows": n_rows, "seconds": seconds, "median_seconds": float(np.median(seconds)),
            "load_average": os.getloadavg()[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=500, help="Logs per keep rate (coverage, value, AUC).")
    parser.add_argument("--log-rows", type=int, default=50_000, help="Logged rows before subsampling.")
    parser.add_argument("--calibration-repeats", type=int, default=50)
    parser.add_argument("--budget", type=int, default=500, help="Rows of the 1:1 experiment.")
    parser.add_argument("--speed-rows", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.time()
    problem = bandit(args.seed)
    data = {
        "command": ("PYTHONPATH=src nice -n 10 python benchmarks/logs_benchmark.py "
                    f"--repeats {args.repeats} --log-rows {args.log_rows} --calibration-repeats "
                    f"{args.calibration_repeats} --budget {args.budget} --speed-rows {args.speed_rows} "
                    f"--seed {args.seed}"),
        "truth": {"value": problem["value"], "auc": problem["auc"],
                  "reward_rate": float(problem["logging"].ravel() @ problem["click"].ravel()
                                       / problem["labels"].size)},
        "log_rows": args.log_rows,
        "value_auc": value_and_auc(problem, args.log_rows, args.repeats, rng),
        "one_to_one": one_to_one(problem, args.budget, max(args.repeats // 2, 100), rng),
        "calibration": calibration(problem, args.log_rows, args.calibration_repeats, rng),
        "calibration_repeats": args.calibration_repeats,
        "speed": speed(args.speed_rows, rng),
    }
    data["elapsed_seconds"] = time.time() - started
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "logs_benchmark.json").write_text(json.dumps(data, indent=1))
    print(summary_section(data))
    if not args.no_plot:
        plot(data, OUT / "logs_benchmark.png")


def _coverage_cell(s: dict) -> str:
    mark = " !" if s["coverage"] < COVERAGE_TARGET else ""
    return f"{s['bias']:+.4f} / {s['rmse']:.4f} / {s['coverage']:.3f}{mark} / {s['width_ratio']:.2f}"


def summary_section(data: dict) -> str:
    """The benchmark's markdown section, rendered from its JSON."""
    va, truth = data["value_auc"], data["truth"]
    repeats = next(iter(va.values()))["eta"]["repeats"]
    se = np.sqrt(LEVEL * (1 - LEVEL) / repeats)
    out = [
        "## Evaluation from subsampled logs (policy value, AUC, calibration)",
        "",
        (f"Logged bandit from scikit-learn's `digits` (supervised-to-bandit; logging policy 80% uniform, 20% a weak "
         f"model; a click with probability {CLICK:g} on the true digit: reward rate {truth['reward_rate']:.3f}); {data['log_rows']} logged rows per log, zero rewards "
         f"kept at l; {repeats} logs per l. Cells: bias / RMSE / coverage of the {LEVEL:.0%} interval (`!` below "
         f"{COVERAGE_TARGET}; s.e. {se:.3f}) / width over 3.92 RMSE. True value {truth['value']:.4f}, true AUC "
         f"{truth['auc']:.4f}."),
        "",
        "| l | kept rows | " + " | ".join(f"value `{m}`" for m in METHODS) + " | AUC (weighted DeLong, logit interval) |",
        "|---|---|" + "---|" * (len(METHODS) + 1),
    ]
    for rate, row in va.items():
        out.append(f"| {float(rate):g} | {row['kept_rows']:.0f} | "
                   + " | ".join(_coverage_cell(row[m]) for m in (*METHODS, "auc")) + " |")
    oto = data["one_to_one"]
    out += [
        "",
        (f"AUC RMSE from {oto['budget']} rows at positive share rho, against the deviation bound of Agarwal et al. "
         "(JMLR 2005, Theorem 3, delta = 0.05), smallest at rho = 1/2:"),
        "",
        "| rho | " + " | ".join(f"{s:g}" for s in oto["shares"]) + " |",
        "|---|" + "---|" * len(oto["shares"]),
        "| RMSE | " + " | ".join(f"{v:.4f}" for v in oto["rmse"]) + " |",
        "| bound | " + " | ".join(f"{v:.3f}" for v in oto["bound"]) + " |",
        "",
        (f"Smallest RMSE at rho = {oto['best_share']:g}; `balanced_keep_rates` for a log of 100 x {oto['budget']} "
         f"rows keeps positives at {oto['planned_keep_rates'][0]:.3g} and negatives at "
         f"{oto['planned_keep_rates'][1]:.3g}."),
        "",
        ("Calibration on the population (logging-weighted) of a reward model fitted on subsampled logs: "
         "importance-weighted logistic regression on the training and the calibration log (solved exactly, or "
         f"by one pass of minibatch SGD, batch {SGD_BATCH}, rate {SGD_RATE:g}), or unweighted SGD on the training "
         "log calibrated on the subsampled calibration log by the weighted spline (20 bins) or weighted isotonic "
         "regression. ECE (10 equal-mass bins) and Brier score against the click probability, mean ± s.e. over "
         f"{data['calibration_repeats']} pairs of logs per l:"),
        "",
        "| l | " + " | ".join(f"ECE {c}" for c in CALIBRATIONS) + " | " + " | ".join(f"Brier {c}" for c in CALIBRATIONS)
        + " |",
        "|---|" + "---|" * (2 * len(CALIBRATIONS)),
    ]
    for rate, routes in data["calibration"].items():
        out.append(f"| {float(rate):g} | "
                   + " | ".join(f"{routes[c]['ece_mean']:.4f} ± {routes[c]['ece_se']:.4f}" for c in CALIBRATIONS)
                   + " | "
                   + " | ".join(f"{routes[c]['brier_mean']:.4f} ± {routes[c]['brier_se']:.4f}" for c in CALIBRATIONS)
                   + " |")
    sp = data["speed"]
    out += [
        "",
        (f"Speed: `logged_auc` (estimate and interval) on a 1:1-subsampled log of {sp['rows']:,} rows: median "
         f"{sp['median_seconds']:.2f} s of {len(sp['seconds'])} (target <= 5 s; 1-minute load average "
         f"{sp['load_average']:.1f} on the shared machine)."),
        "",
        f"Reproduce: `{data['command']}` ({data['elapsed_seconds'] / 60:.1f} min).",
    ]
    return "\n".join(out)


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    rates = [float(r) for r in data["value_auc"]]
    ax = axes[0]
    for name in (*METHODS, "auc"):
        ax.plot(rates, [row[name]["coverage"] for row in data["value_auc"].values()], marker="o",
                label="AUC" if name == "auc" else f"value {name}")
    ax.axhline(LEVEL, color="grey", linestyle=":")
    ax.axhline(COVERAGE_TARGET, color="red", linestyle=":", label="target")
    ax.set(xscale="log", xlabel="keep rate l", ylabel="coverage", title="interval coverage", ylim=(0.85, 1.0))
    ax.legend()
    oto = data["one_to_one"]
    ax = axes[1]
    ax.plot(oto["shares"], oto["rmse"], marker="o", label="AUC RMSE")
    scale = min(oto["rmse"]) / min(oto["bound"])
    ax.plot(oto["shares"], np.array(oto["bound"]) * scale, linestyle="--", label=f"bound x {scale:.2f}")
    ax.set(xlabel="positive share rho", ylabel="RMSE", title=f"AUC from {oto['budget']} rows")
    ax.legend()
    ax = axes[2]
    for name in CALIBRATIONS:
        ax.errorbar(rates, [r[name]["ece_mean"] for r in data["calibration"].values()],
                    yerr=[r[name]["ece_se"] for r in data["calibration"].values()], marker="o", label=name)
    ax.set(xscale="log", yscale="log", xlabel="keep rate l", ylabel="ECE on the population", title="calibration")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
