"""Oracles: where labels come from.

An oracle is any callable ``oracle(item_ids) -> labels``.  Provided here:
the pool's ground truth (simulation), noisy annotators around it (a
stochastic oracle, for simulation), a wrapped Python function, and a CSV or
JSONL file of labels.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..pool import LabelFileError, Pool, read_labels_file

__all__ = [
    "CallableOracle",
    "FileOracle",
    "NoisyOracle",
    "TruthOracle",
    "noisy_label_distribution",
]


class TruthOracle:
    """Answers from the pool's ground-truth labels (for simulation)."""

    def __init__(self, pool: Pool):
        if pool.labels is None:
            raise ValueError("pool has no ground-truth labels; give a label column to simulate")
        self.pool = pool

    def __call__(self, item_ids: np.ndarray) -> np.ndarray:
        return self.pool.labels[self.pool.positions(item_ids)]


def noisy_label_distribution(pool: Pool, noise: float) -> np.ndarray:
    """``p(y|x)`` of annotators who give the true label with probability ``1 - noise``
    and each other class with ``noise / (C - 1)``, shape (N, C)."""
    if pool.labels is None:
        raise ValueError("pool has no ground-truth labels; give a label column to simulate")
    C = pool.n_classes
    if not 0.0 <= noise < 1.0 - 1.0 / C:
        raise ValueError(f"noise: must lie in [0, {1.0 - 1.0 / C:g}) for {C} classes (beyond it the labels "
                         f"carry no or inverted information), got {noise}")
    probs = np.full((pool.n_items, C), noise / (C - 1))
    probs[np.arange(pool.n_items), pool.labels] = 1.0 - noise
    return probs


class NoisyOracle:
    """A stochastic oracle: every call labels each id afresh from :func:`noisy_label_distribution`.

    Parameters
    ----------
    pool : Pool
        With ground-truth labels.
    noise : float
        Probability that an answer is wrong (uniformly another class).
    rng : numpy.random.Generator or int, optional
    """

    def __init__(self, pool: Pool, noise: float, rng: np.random.Generator | int | None = None):
        self.pool = pool
        self.noise = float(noise)
        self.probs = noisy_label_distribution(pool, self.noise)
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def __call__(self, item_ids: np.ndarray) -> np.ndarray:
        truth = self.pool.labels[self.pool.positions(item_ids)]
        C = self.pool.n_classes
        wrong = self.rng.random(truth.size) < self.noise
        # a wrong answer is one of the C - 1 other classes, uniformly
        other = (truth + self.rng.integers(1, C, size=truth.size)) % C
        return np.where(wrong, other, truth)


class CallableOracle:
    """Wraps ``fn(item_ids) -> labels`` and checks it answers once per item."""

    def __init__(self, fn: Callable[[np.ndarray], object]):
        self.fn = fn

    def __call__(self, item_ids: np.ndarray) -> np.ndarray:
        labels = np.asarray(self.fn(item_ids))
        if labels.shape != (len(item_ids),):
            raise ValueError(f"oracle returned {labels.shape} labels for {len(item_ids)} items; return one per item")
        return labels


class FileOracle:
    """Answers from a CSV or JSONL file of labels (e.g. collected offline)."""

    def __init__(self, path: str | Path, id_col: str = "item_id", label_col: str = "label"):
        df = read_labels_file(path, id_col, label_col)
        self.path = Path(path)
        self._labels = pd.Series(df["label"].to_numpy(), index=pd.Index(df["item_id"].astype(str)))
        if not self._labels.index.is_unique:
            dup = self._labels.index[self._labels.index.duplicated()][:3].tolist()
            raise LabelFileError(f"labels file {str(path)!r}: ids {dup} appear more than once; keep one label each")

    def __call__(self, item_ids: np.ndarray) -> np.ndarray:
        keys = pd.Index(np.asarray(item_ids).astype(str))
        pos = self._labels.index.get_indexer(keys)
        if (pos < 0).any():
            missing = keys[pos < 0][:5].tolist()
            raise LabelFileError(f"labels file {str(self.path)!r} has no label for item(s) {missing}")
        return self._labels.to_numpy()[pos]
