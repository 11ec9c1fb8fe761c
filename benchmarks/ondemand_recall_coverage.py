"""Coverage of the on-demand recall intervals on fresh draws: the joint estimator alone.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3:
recall as pool recall x pooled recall, here combined with the annotated
documents' direct ratio (``labelwise.ondemand.recall``). The corpus of
``ondemand_benchmark.py`` is evaluated system by system ``--repeats`` times by
the joint process only (the draws are those of that benchmark's ``joint``
column at the same ``--seed`` and ``--draw-seed``), so a fresh draw seed
checks the recall intervals at a fraction of the full benchmark's cost.
Per system: coverage of the 95% recall interval, its width over 3.92 x RMSE,
the mean estimated variance over the MSE, and the documents annotated.
Coverage over R runs has standard error about sqrt(0.95 x 0.05 / R) (0.009 at R = 600).

Prints a markdown table and writes ``benchmarks/out/<out-name>.{json,png}``.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ondemand_recall_coverage.py --repeats 600 --draw-seed 5000
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from ondemand_benchmark import corpus_problem

from labelwise.ondemand.config import OnDemandConfig
from labelwise.ondemand.process import Process
from labelwise.ondemand.simulate import true_scores

OUT = Path(__file__).resolve().parent / "out"


def joint_runs(problem, config: OnDemandConfig, repeats: int, seed: int) -> dict[str, np.ndarray]:
    """Final recall and precision estimates, variances, interval ends and documents of ``repeats`` joint runs.

    Recall under ``recall``, ``var_recall``, ``lo``, ``hi``; precision under ``precision``, ``var_precision``,
    ``precision_lo``, ``precision_hi``; each (R, m). The seeds are those of
    :func:`~labelwise.ondemand.simulate.run_repeats` at ``seed``.
    """
    keys = ("recall", "var_recall", "lo", "hi", "precision", "var_precision", "precision_lo", "precision_hi")
    out = {k: np.empty((repeats, problem.m)) for k in keys}
    out["documents"] = np.empty(repeats)
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(repeats)):
        process = Process(problem, config, np.random.default_rng(child), joint=True)
        for _ in range(problem.m):
            process.arrive()
        est = process.estimates()
        out["recall"][r], out["var_recall"][r] = est["recall"], est["var_recall"]
        out["lo"][r], out["hi"][r] = est["recall_ci"]
        out["precision"][r], out["var_precision"][r] = est["precision"], est["var_precision"]
        out["precision_lo"][r], out["precision_hi"][r] = est["precision_ci"]
        out["documents"][r] = process.D
    return out


def summarize(runs: dict[str, np.ndarray], truth: np.ndarray) -> dict[str, list[float]]:
    """Per system: coverage, width/(3.92 RMSE), mean variance/MSE (and the MSE)."""
    mse = ((runs["recall"] - truth) ** 2).mean(axis=0)
    cover = ((runs["lo"] <= truth) & (truth <= runs["hi"])).mean(axis=0)
    width = (runs["hi"] - runs["lo"]).mean(axis=0) / (3.92 * np.sqrt(mse))
    return {"coverage": cover.tolist(), "width_ratio": width.tolist(), "mse": mse.tolist(),
            "var_over_mse": (runs["var_recall"].mean(axis=0) / mse).tolist()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=600)
    parser.add_argument("--half-width", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    parser.add_argument("--draw-seed", type=int, default=5000, help="seed of the draws")
    parser.add_argument("--product-recall", action="store_true",
                        help="the paper's recall (pool recall x pooled recall) without the documents' direct ratio")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--out-name", default="ondemand_recall_coverage")
    args = parser.parse_args()

    problem = corpus_problem(args.seed)
    config = OnDemandConfig(half_width=args.half_width, combined_recall=not args.product_recall)
    truth = true_scores(problem)["recall"]
    t0 = time.perf_counter()
    runs = joint_runs(problem, config, args.repeats, args.draw_seed + 1)
    dump = {"config": vars(args), "names": list(problem.names), "truth": truth.tolist(),
            "results": summarize(runs, truth), "documents": [float(runs["documents"].mean()),
                                                             float(runs["documents"].min())],
            "seconds": time.perf_counter() - t0}
    print(summary_section(json.loads(json.dumps(dump))))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{args.out_name}.json").write_text(json.dumps(dump, indent=1))
    if not args.no_plot:
        plot(dump, OUT / f"{args.out_name}.png")


def summary_section(data: dict) -> str:
    """Markdown: per-system coverage and width of the joint recall intervals on fresh draws."""
    cfg, res = data["config"], data["results"]
    se = np.sqrt(0.95 * 0.05 / cfg["repeats"])
    flag = " --product-recall" if cfg.get("product_recall") else ""
    out = [
        "## On-demand recall intervals on fresh draws", "",
        (f"`python benchmarks/ondemand_recall_coverage.py --repeats {cfg['repeats']} --half-width "
         f"{cfg['half_width']} --seed {cfg['seed']} --draw-seed {cfg['draw_seed']}{flag}` "
         f"({data['seconds']:.0f} s): the joint process of `ondemand_benchmark.py` only "
         f"({'pool recall x pooled recall' if flag else 'combined recall'}), coverage of 95% recall intervals "
         f"(binomial s.e. {se:.3f}), mean width over 3.92 x RMSE, mean estimated variance over the MSE; "
         f"{data['documents'][0]:.0f} documents annotated on average (at least {data['documents'][1]:.0f})."), "",
        "| # | system | R | coverage | width/(3.92 RMSE) | var/MSE | MSE x 1e4 |", "|---|---|---|---|---|---|---|",
    ]
    for i, name in enumerate(data["names"]):
        out.append(f"| {i + 1} | {name} | {data['truth'][i]:.3f} | {res['coverage'][i]:.3f} | "
                   f"{res['width_ratio'][i]:.2f} | {res['var_over_mse'][i]:.2f} | {1e4 * res['mse'][i]:.2f} |")
    out += ["", (f"min coverage {min(res['coverage']):.3f}; systems below 0.93: "
                 f"{sum(c < 0.93 for c in res['coverage'])}; max width/(3.92 RMSE) {max(res['width_ratio']):.2f}")]
    return "\n".join(out) + "\n"


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res, names = data["results"], data["names"]
    x = np.arange(len(names))
    se = np.sqrt(0.95 * 0.05 / data["config"]["repeats"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    axes[0].plot(x, res["coverage"], "o")
    axes[0].axhline(0.95, color="k", ls="--", label="nominal")
    axes[0].axhspan(0.95 - 3 * se, 0.95 + 3 * se, color="grey", alpha=0.2, label="+-3 s.e.")
    axes[0].axhline(0.93, color="r", ls=":", label="target 0.93")
    axes[0].set_title("coverage of 95% recall intervals")
    axes[1].plot(x, res["width_ratio"], "o", label="width/(3.92 RMSE)")
    axes[1].plot(x, res["var_over_mse"], "s", label="variance/MSE")
    axes[1].axhline(1.0, color="k", ls="--")
    axes[1].set_title("interval width and estimated variance")
    for ax in axes:
        ax.set_xticks(x, names, rotation=70, fontsize=7)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
