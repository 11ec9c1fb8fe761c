"""Coverage of the on-demand precision intervals on fresh draw seeds: the joint estimator alone.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3: the
joint precision, here self-normalized with capped weights and post-stratified
on each system's own stratum (``labelwise.ondemand.normalized``). The corpus of
``ondemand_benchmark.py`` is evaluated system by system ``--repeats`` times per
draw seed by the joint process only (the draws are those of that benchmark's
``joint`` column at the same ``--seed`` and ``--draw-seed``). Per system and
seed: coverage of the 95% precision interval and the share of intervals
entirely above the truth; over the seeds pooled: width over 3.92 x RMSE and the
mean estimated variance over the MSE. ``--one-ratio`` gives the estimate before
post-stratification. Coverage over R runs has standard error about
sqrt(0.95 x 0.05 / R) (0.015 at R = 200).

Prints a markdown table and writes ``benchmarks/out/<out-name>.json``.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ondemand_precision_coverage.py \\
        --repeats 200 --draw-seeds 2000,3000,4000
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from ondemand_benchmark import corpus_problem
from ondemand_recall_coverage import joint_runs

from labelwise.ondemand.config import OnDemandConfig
from labelwise.ondemand.simulate import true_scores

OUT = Path(__file__).resolve().parent / "out"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--half-width", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    parser.add_argument("--draw-seeds", default="2000,3000,4000", help="seeds of the draws, comma-separated")
    parser.add_argument("--one-ratio", action="store_true",
                        help="self-normalized joint precision as one ratio over the output, not post-stratified")
    parser.add_argument("--out-name", default="ondemand_precision_coverage")
    args = parser.parse_args()

    problem = corpus_problem(args.seed)
    config = OnDemandConfig(half_width=args.half_width, post_stratified=not args.one_ratio)
    truth = true_scores(problem)["precision"]
    t0 = time.perf_counter()
    per_seed, est, width, var = {}, [], [], []
    for seed in (int(s) for s in args.draw_seeds.split(",")):
        runs = joint_runs(problem, config, args.repeats, seed + 1)
        lo, hi = runs["precision_lo"], runs["precision_hi"]
        per_seed[str(seed)] = {"coverage": ((lo <= truth) & (truth <= hi)).mean(axis=0).tolist(),
                               "above": (lo > truth).mean(axis=0).tolist()}
        est.append(runs["precision"])
        width.append(hi - lo)
        var.append(runs["var_precision"])
    mse = ((np.concatenate(est) - truth) ** 2).mean(axis=0)
    dump = {"config": vars(args), "names": list(problem.names), "truth": truth.tolist(), "per_seed": per_seed,
            "mse": mse.tolist(), "width_ratio": (np.concatenate(width).mean(axis=0) / (3.92 * np.sqrt(mse))).tolist(),
            "var_over_mse": (np.concatenate(var).mean(axis=0) / mse).tolist(), "seconds": time.perf_counter() - t0}
    print(summary_section(json.loads(json.dumps(dump))))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{args.out_name}.json").write_text(json.dumps(dump, indent=1))


def summary_section(data: dict) -> str:
    """Markdown: per-system coverage of the joint precision intervals on each draw seed."""
    cfg, seeds = data["config"], data["per_seed"]
    se = np.sqrt(0.95 * 0.05 / cfg["repeats"])
    flag = " --one-ratio" if cfg.get("one_ratio") else ""
    head = " | ".join(f"cov {s} | above {s}" for s in seeds)
    out = [
        "## On-demand precision intervals on fresh draw seeds", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ondemand_precision_coverage.py "
         f"--repeats {cfg['repeats']} --half-width {cfg['half_width']} --seed {cfg['seed']} --draw-seeds "
         f"{cfg['draw_seeds']}{flag}` ({data['seconds']:.0f} s): the joint process of `ondemand_benchmark.py` only "
         f"({'one ratio over each output' if flag else 'post-stratified on each system own stratum'}); coverage "
         f"of 95% precision intervals per draw seed (binomial s.e. {se:.3f}) and the share entirely above the "
         "truth; width over 3.92 x RMSE and mean estimated variance over the MSE over all seeds."), "",
        f"| # | system | P | {head} | width/(3.92 RMSE) | var/MSE |",
        "|---|---|---|" + "---|---|" * len(seeds) + "---|---|",
    ]
    for i, name in enumerate(data["names"]):
        cells = " | ".join(f"{v['coverage'][i]:.3f} | {v['above'][i]:.3f}" for v in seeds.values())
        out.append(f"| {i + 1} | {name} | {data['truth'][i]:.3f} | {cells} | {data['width_ratio'][i]:.2f} | "
                   f"{data['var_over_mse'][i]:.2f} |")
    lowest = min(min(v["coverage"]) for v in seeds.values())
    below = sum(c < 0.93 for v in seeds.values() for c in v["coverage"])
    out += ["", (f"min coverage {lowest:.3f}; system-seed cells below 0.93: {below}; max width/(3.92 RMSE) "
                 f"{max(data['width_ratio']):.2f}")]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
