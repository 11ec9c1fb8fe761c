"""Designs against each other on one pool: per measure and design, MSE, coverage and width ratio at checkpoints.

Shared by the benchmark scripts that compare the default design with others on generated pools
(``multiclass_default.py``, ``predictions_only.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import labelwise as lw
from labelwise.simulate import covers


def design_rows(pool: lw.Pool, measures: Sequence[str], designs: Sequence[str], checkpoints: Sequence[int],
                runs: int, seed: int) -> list[dict]:
    """Every design on ``pool`` for every measure, ``runs`` runs in batches of 50 up to the last checkpoint.

    Returns one row per measure and design: ``measure``, ``design``, ``resolved`` (the design that ran), and per
    checkpoint ``mse``, ``coverage`` (of the 95% interval) and ``width`` (mean width / (3.92 RMSE)).
    """
    rows = []
    for name in measures:
        measure = lw.make_measure(name, pool)
        for design in designs:
            result = lw.simulate(pool, measure, design, budget=checkpoints[-1], batch_size=50, repeats=runs,
                                 seed=seed, checkpoints=list(checkpoints))
            truth = float(np.atleast_1d(result.true_value)[0])
            values, lower, upper = (a[..., 0] for a in (result.values, result.lower, result.upper))
            mse = np.mean((values - truth) ** 2, axis=1)
            rows.append({"measure": name, "design": design, "resolved": result.design_resolved, "mse": mse.tolist(),
                         "coverage": covers(lower, upper, truth).mean(axis=1).tolist(),
                         "width": (np.mean(upper - lower, axis=1) / (3.92 * np.sqrt(mse))).tolist()})
    return rows


def table_head(checkpoints: Sequence[int], mse: str) -> list[str]:
    """The markdown header of :func:`table_line`'s rows: pool, measure, design, then per checkpoint ``mse`` (the
    MSE column's name), coverage and width."""
    cells = " | ".join(f"{mse} {c} | cov {c} | width {c}" for c in checkpoints)
    return [f"| pool | measure | design | {cells} |", "|---|---|---|" + "---|" * (3 * len(checkpoints))]


def table_line(pool_name: str, row: dict, mse: Sequence[str]) -> str:
    """A markdown row of :func:`design_rows`' ``row``: the pool, measure, design (and the one it resolved to), and
    per checkpoint the given MSE text, coverage and width."""
    label = row["design"] if row["design"] == row["resolved"] else f"{row['design']} ({row['resolved']})"
    cells = " | ".join(f"{m} | {c:.2f} | {w:.2f}" for m, c, w in zip(mse, row["coverage"], row["width"], strict=True))
    return f"| {pool_name} | {row['measure']} | {label} | {cells} |"


def runs_and_seed(doc: str) -> argparse.Namespace:
    """The command line of a script built on :func:`design_rows`: ``--runs`` (100) and ``--seed`` (1)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    return ap.parse_args()
