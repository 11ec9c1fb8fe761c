"""How low can any design's error go on a real pool? Two oracle benchmarks for the F1 targets.

1. **Rank-monotone bound.** The smallest variance of a one-shot Poisson
   design of ``M`` expected labels whose inclusion probabilities do not
   increase as the score falls, *given every item's label*: it spends
   nothing on items whose influence is zero (true negatives) and knows
   where the last positive ranks.  The variance of the Horvitz-Thompson
   estimate of F1 is ``sum_n (1/b_n - 1) u_n^2`` with ``u_n = Dg(R) l_n / N``
   (Yilmaz et al., "Sample Efficient Model Evaluation", arXiv:2109.12043,
   2021, eq. 25, linearised); the minimum over non-increasing ``b`` in
   ``(0, 1]`` with ``sum b = M`` is found exactly (:func:`monotone_bound`).
   A design that knows only the scores does no better than this.
2. **Told the tail is empty.** ``online-poisson`` with its defaults on a copy
   of the pool whose probabilities below the last positive's rank are
   multiplied by ``--tail-scale`` (the prior an oracle would give), next to
   the same design on the pool as it is: MSE and coverage of the 95%
   interval at 250/500/1000/2000 labels.

Also prints, per pool, how many positives the scores' ``prob`` and a
logistic recalibration of the score fitted on *all* the true labels expect
below the last positive's rank.  Prints one table, writes
``out/design_bounds.png``.

Usage::

    .venv/bin/python benchmarks/design_bounds.py [--repeats 100] [--tail-scale 0.01] [--pools abt-buy]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from pools import DATASETS, POOLS, pool_paths
from scipy.optimize import brentq, minimize

import labelwise as lw
from labelwise.simulate import CHECKPOINTS, true_risk

OUT = Path(__file__).resolve().parent / "out"


def decreasing_fit(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least-squares fit of a non-increasing sequence (pool adjacent violators)."""
    means, sizes, counts = [], [], []
    for v, w in zip(values, weights):
        means.append(v), sizes.append(w), counts.append(1)
        while len(means) > 1 and means[-2] < means[-1]:  # merge a violating pair
            w2, w1 = sizes.pop(), sizes.pop()
            m2, m1 = means.pop(), means.pop()
            k = counts.pop() + counts.pop()
            means.append((w1 * m1 + w2 * m2) / (w1 + w2)), sizes.append(w1 + w2), counts.append(k)
    return np.repeat(means, counts)


def monotone_bound(influence: np.ndarray, budget: float) -> tuple[float, np.ndarray]:
    """Least ``sum (1/b - 1) u^2`` over non-increasing ``b`` in (0, 1] with ``sum b = budget``.

    Parameters
    ----------
    influence : ndarray, shape (N,)
        ``u_n`` of every item in decreasing order of score.
    budget : float
        Expected number of labels.

    Returns
    -------
    variance, b
        The least variance and the inclusion probabilities of the items with
        ``u_n != 0`` (every other item is given the probability of the next
        one with ``u != 0`` above it, or nothing below the last).

    Notes
    -----
    Items between two consecutive nonzero influences cost budget at the lower
    one's ``b``; so with ``g_j`` the gap in rank before nonzero item ``j`` the
    problem is ``min sum c_j / b_j + lam sum g_j b_j``, whose solution is
    ``b_j = min(1, sqrt(v_j / lam))`` with ``v`` the weighted (``g``)
    decreasing fit of ``c_j / g_j``; ``lam`` is set by the budget.
    """
    rank = np.flatnonzero(influence)
    c = influence[rank] ** 2
    g = np.diff(np.concatenate([[-1], rank])).astype(float)
    if budget >= rank[-1] + 1:  # every item up to the last nonzero one: exact
        return 0.0, np.ones(rank.size)
    v = decreasing_fit(c / g, g)

    def spent(log_lam: float) -> float:
        return float(g @ np.minimum(1.0, np.sqrt(v / np.exp(log_lam)))) - budget

    lam = np.exp(brentq(spent, np.log(v.min()) - 60, np.log(v.max()) + 60))
    b = np.minimum(1.0, np.sqrt(v / lam))
    return float(np.sum(c * (1 / b - 1))), b


def influences(pool: lw.Pool, measure) -> np.ndarray:
    """``u_n = Dg(R) l_n / N`` of every item at its true label, in decreasing order of score."""
    order = np.argsort(-pool.primary_scores(0), kind="stable")
    R = true_risk(pool, measure)
    losses = measure.loss(pool.outputs(order), pool.labels[order])
    return (losses @ measure.jacobian(R).T)[:, 0] / pool.n_items


def tail_expectations(pool: lw.Pool) -> tuple[int, float, float]:
    """Items below the last positive (by score), and the positives ``prob`` and a logistic fit expect there.

    The fit ``P(y=1) = sigmoid(a + b score)`` uses every true label: the best
    any monotone two-parameter calibration could learn from labels.
    """
    scores, y = pool.primary_scores(0), pool.labels.astype(float)
    order = np.argsort(-scores, kind="stable")
    tail = order[int(np.flatnonzero(y[order] == 1).max()) + 1:]

    def nll(t: np.ndarray) -> float:
        z = t[0] + t[1] * scores
        return float(np.sum(np.logaddexp(0.0, z) - y * z))

    a, b = minimize(nll, np.zeros(2)).x
    fitted = 1.0 / (1.0 + np.exp(-(a + b * scores[tail])))
    return tail.size, float(pool.probs[tail, 0].sum()), float(fitted.sum())


def tail_told_empty(pool: lw.Pool, scale: float) -> lw.Pool:
    """A copy of ``pool`` whose probabilities below its last positive (by score) are times ``scale``."""
    order = np.argsort(-pool.primary_scores(0), kind="stable")
    last = int(np.flatnonzero(pool.labels[order] == 1).max())
    probs = pool.probs[:, 0].copy()
    probs[order[last + 1:]] *= scale
    return lw.Pool.from_arrays(item_ids=pool.item_ids, preds=pool.preds, scores=pool.scores, probs=probs[:, None],
                               labels=pool.labels, name=f"{pool.name}, tail told empty")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--tail-scale", type=float, default=0.01)
    parser.add_argument("--pools", default=",".join(POOLS))
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--datasets", type=Path, default=DATASETS, help="folder holding abt-buy.csv.gz, dblp-acm.csv.gz")
    args = parser.parse_args()
    paths = pool_paths(args.datasets, args.pools.split(","))
    if not paths:
        return
    marks = list(CHECKPOINTS)
    fig, axes = plt.subplots(1, len(paths), figsize=(5.5 * len(paths), 4), squeeze=False)
    head = f"{'pool':<10} {'labels':>6} {'bound':>9} {'op MSE':>9} {'op cover':>8} {'told MSE':>9} {'told cover':>10}"
    print(f"{head}\n{'-' * len(head)}")
    for path, ax in zip(paths, axes[0]):
        pool = lw.Pool.from_file(path)
        measure = lw.make_measure("f1", pool)
        n_tail, by_prob, by_fit = tail_expectations(pool)
        print(f"{pool.name}: {n_tail} items below the last positive; prob expects {by_prob:.2f} positives there, "
              f"a logistic fit on every label {by_fit:.2f}")
        u = influences(pool, measure)
        bound = [monotone_bound(u, m)[0] for m in marks]
        grid = np.arange(50, marks[-1] + 1, 25)
        curve = np.array([monotone_bound(u, m)[0] for m in grid])
        runs = [lw.simulate(p, lw.make_measure("f1", p), "online-poisson", repeats=args.repeats, seed=args.seed)
                for p in (pool, tail_told_empty(pool, args.tail_scale))]
        rows = [r.checkpoint_rows() for r in runs]
        for k, m in enumerate(marks):
            print(f"{path.name.split('.')[0]:<10} {m:>6} {bound[k]:>9.2e} {rows[0][k]['mse']:>9.2e} "
                  f"{rows[0][k]['coverage']:>8.3f} {rows[1][k]['mse']:>9.2e} {rows[1][k]['coverage']:>10.3f}")
        exact = int(np.flatnonzero(u).max()) + 1  # the bound is 0 from this many labels
        ax.plot(grid[curve > 0], curve[curve > 0], "k--", label=f"rank-monotone bound (labels known; 0 from {exact})")
        ax.plot(marks, [r["mse"] for r in rows[0]], "o-", label="online-poisson")
        ax.plot(marks, [r["mse"] for r in rows[1]], "s-", label=f"online-poisson, tail prob x{args.tail_scale:g}")
        ax.set(xscale="log", yscale="log", xlabel="labels", ylabel="MSE of F1", title=path.name.split(".")[0])
        ax.legend(fontsize=8)
    OUT.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(OUT / "design_bounds.png", dpi=120)
    print(f"wrote {OUT / 'design_bounds.png'}")


if __name__ == "__main__":
    main()
