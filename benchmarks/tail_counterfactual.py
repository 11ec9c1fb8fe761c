"""Why an honest interval over-covers on abt-buy and dblp-acm: the same pools with their tails re-drawn.

On abt-buy every positive ranks in the top 1,600 by score, while the pool's
own calibrated ``prob`` expects 3.8 positives among the ~52,000 items
ranked below 2,000 (on dblp-acm it expects 0.006 there, so its variants
would not differ).  A few hundred labels from that tail cannot tell "no
positive there" from "the few the scores expect", so an interval valid in
the second case must over-cover in the first.  This script measures it:
for each pool it builds counterfactual variants whose labels below rank
``--top`` are re-drawn from ``prob`` (the head is kept), then runs ``ais``
with its default ``mixture`` covariance, with ``max`` and with ``plugin``
(``online-poisson``: ``mixture`` and ``model``) on the original and on each
variant, printing MSE, coverage and width of the 95% interval.  ``max``
(per component the larger of the plug-in and the oracle model's variance,
the earlier ``ais`` default) is no longer a labelwise option and is computed
by :mod:`variance_modes`.  ``no-hit`` is ``mixture`` without its third case
(a surprise drawn), i.e. conditioned on what the labels show: narrow enough
for the original, it shows what such an interval costs on the variants (it
is not a labelwise option either).  ``--param oracle=stochastic`` runs the
sessions under a stochastic oracle (the oracle mode is the session's, not a
design setting).

Usage::

    .venv/bin/python benchmarks/tail_counterfactual.py [--repeats 200] [--variants 3] [--top 2000] \
        [--pools abt-buy] [--design ais] [--param interval_prior_strength=1]
"""

from __future__ import annotations

import argparse
import json
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
from pools import pool_paths
from variance_modes import ais_design

import labelwise as lw
from labelwise.cli import parse_params
from labelwise.designs import unlabeled_covariance
from labelwise.estimators import model_covariance

HERE = Path(__file__).resolve().parent
#: The covariance options compared for each design.
VARIANCES = {"ais": ("mixture", "max", "plugin", "no-hit"), "online-poisson": ("mixture", "model", "no-hit")}


@contextmanager
def without_hit_case():
    """``mixture_variance`` with no chance of a surprise having been drawn (the ``no-hit`` interval), in both
    modules that call it: ``ais`` through :func:`~labelwise.estimators.model_covariance.model_interval_covariance`,
    ``online-poisson`` through :func:`~labelwise.designs.unlabeled_covariance.with_unlabeled`."""
    mixture = model_covariance.mixture_variance

    def no_hit(base, full, model, level, missed=None):
        return mixture(base, full, model._replace(hits=0.0), level, missed)

    model_covariance.mixture_variance = unlabeled_covariance.mixture_variance = no_hit
    try:
        yield
    finally:
        model_covariance.mixture_variance = unlabeled_covariance.mixture_variance = mixture


def redraw_tail(pool: lw.Pool, top: int, seed: int) -> lw.Pool:
    """``pool`` with the labels of items ranked below ``top`` (by score) re-drawn from ``prob``."""
    rank = np.argsort(np.argsort(-pool.scores[:, 0], kind="stable"), kind="stable")
    tail = rank >= top
    labels = pool.labels.copy()
    rng = np.random.default_rng(seed)
    labels[tail] = (rng.random(int(tail.sum())) < pool.probs[tail, 0]).astype(labels.dtype)
    return pool.with_labels(labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--variants", type=int, default=3)
    parser.add_argument("--top", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pools", default="abt-buy", help="comma-separated pool names")
    parser.add_argument("--design", default="ais", choices=sorted(VARIANCES))
    parser.add_argument("--param", action="append", default=[], help="key=value design option (repeatable)")
    args = parser.parse_args()
    params = parse_params(args.param)
    oracle = params.pop("oracle", None)  # the session's mode, not a design setting
    head = (f"{'pool':<10} {'variant':<9} {'tail+':>5} {'variance':<8} {'labels':>6} {'MSE':>9} {'cover':>6} "
            f"{'width':>7}")
    print(f"{head}\n{'-' * len(head)}")
    rows = []
    for path in pool_paths(names=args.pools.split(",")):
        original = lw.Pool.from_file(path)
        measure = lw.make_measure("f1", original)
        variants = [("original", original)] + [(f"tail-{v}", redraw_tail(original, args.top, v))
                                               for v in range(1, args.variants + 1)]
        rank = np.argsort(np.argsort(-original.scores[:, 0], kind="stable"), kind="stable")
        for name, pool in variants:
            tail_positives = int(pool.labels[rank >= args.top].sum())
            for variance in VARIANCES[args.design]:
                option = "mixture" if variance == "no-hit" else variance
                settings = {**params, "variance": option}
                design = ais_design(**settings) if args.design == "ais" else lw.make_design(args.design, **settings)
                with without_hit_case() if variance == "no-hit" else nullcontext():
                    result = lw.simulate(pool, measure, design, repeats=args.repeats, seed=args.seed,
                                         checkpoints=[1000, 2000], oracle=oracle)
                for c in result.checkpoint_rows():
                    rows.append({"pool": original.name, "variant": name, "tail_positives": tail_positives,
                                 "variance": variance, **c})
                    print(f"{original.name:<10} {name:<9} {tail_positives:>5} {variance:<8} {c['labels']:>6} "
                          f"{c['mse']:>9.2e} {c['coverage']:>6.3f} {c['mean_width']:>7.4f}", flush=True)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    path = out / f"tail_counterfactual_{args.design}.json"
    path.write_text(json.dumps(rows, indent=1))
    print(f"\nraw results: {path}")


if __name__ == "__main__":
    main()
