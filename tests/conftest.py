"""Fixtures shared by test files in several packages.

A fixture used by one test file stays in that file; the hand-made pools here
are used across ``designs/``, ``measures/``, ``oracle/``, ``pool/`` and the
top-level tests, the CSV pool writer by ``cli/`` and ``designs/``.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from labelwise.pool import Pool


@pytest.fixture
def tiny_binary_pool() -> Pool:
    """Six binary items with every (pred, label) combination: TN, FN, FP, TP."""
    probs = np.array([0.05, 0.2, 0.4, 0.55, 0.7, 0.9])
    return Pool.from_arrays(
        preds=(probs > 0.5).astype(int),
        scores=np.log(probs / (1 - probs)),
        probs=probs,
        labels=[0, 1, 0, 1, 0, 1],
        name="tiny",
    )


@pytest.fixture
def tiny_multilabel() -> SimpleNamespace:
    """A hand-made multi-label pool's columns: five items, C = 3 labels a, b, c.

    label 0: TP 2, FP 0, FN 0;  label 1: TP 1, FP 1, FN 0;  label 2: TP 1, FP 1, FN 2.
    """
    return SimpleNamespace(
        preds=[[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 1]],
        truth=[[1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 1], [0, 0, 1]],
        marginals=[[0.9, 0.2, 0.6], [0.1, 0.7, 0.3], [0.8, 0.6, 0.2], [0.1, 0.1, 0.4], [0.2, 0.3, 0.7]],
        label_names=["a", "b", "c"],
    )


@pytest.fixture
def tiny_multilabel_pool(tiny_multilabel) -> Pool:
    """The pool of ``tiny_multilabel`` (label codes: bit k is label k)."""
    ml = tiny_multilabel
    return Pool.from_multilabel(preds=ml.preds, probs=ml.marginals, labels=ml.truth, label_names=ml.label_names)


@pytest.fixture(scope="session")
def write_pool_csv():
    """A function ``write(pool, path, labels=True)``: a one-system pool as CSV, for the command line.

    The columns are the defaults of ``Pool.from_file``: ``item_id, pred, score,
    prob`` and, with ``labels``, the ground truth ``label``.
    """

    def write(pool: Pool, path: Path, labels: bool = True) -> Path:
        columns = {"item_id": pool.item_ids, "pred": pool.preds[:, 0], "score": pool.scores[:, 0],
                   "prob": pool.probs[:, 0]}
        if labels:
            columns["label"] = pool.labels
        pd.DataFrame(columns).to_csv(path, index=False)
        return path

    return write


@pytest.fixture
def assert_interval_covers_and_is_tight():
    """Check a one-checkpoint :func:`labelwise.simulate` result: coverage of its intervals at least 0.95 minus
    3 binomial standard errors, and mean width at most 2 x 3.92 x RMSE (the project's standard)."""

    def check(result) -> None:
        truth = result.true_value[0]
        value, lo, hi = result.values[0, :, 0], result.lower[0, :, 0], result.upper[0, :, 0]
        runs = value.shape[0]
        coverage = np.mean((lo <= truth) & (truth <= hi))
        rmse = np.sqrt(np.mean((value - truth) ** 2))
        assert coverage >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs), coverage
        assert np.mean(hi - lo) <= 2 * 3.92 * rmse, (np.mean(hi - lo), rmse)

    return check
