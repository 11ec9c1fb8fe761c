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

from ..pool import Pool

__all__ = [
    "CallableOracle",
    "FileOracle",
    "LabelFileError",
    "NoisyOracle",
    "TruthOracle",
    "noisy_label_distribution",
    "read_labels_file",
]


class LabelFileError(ValueError):
    """A labels file that cannot be used; the message names the field and the fix."""


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


def read_labels_file(path: str | Path, id_col: str = "item_id", label_col: str = "label",
                     draw_col: str | None = "draw") -> pd.DataFrame:
    """Read ``id_col`` and ``label_col`` from a CSV or JSONL (one object per line) file.

    The result has columns ``item_id`` and ``label``, and ``draw`` when the
    file has a ``draw_col`` column (the draw numbers ``labelwise next``
    lists in a stochastic session; optional).

    Raises
    ------
    LabelFileError
        For a missing file, an unknown format, missing columns, empty ids or empty labels.
    """
    path = Path(path)
    if not path.exists():
        raise LabelFileError(f"labels file {str(path)!r} does not exist; check the path")
    suffixes = "".join(path.suffixes).lower()
    try:
        if ".jsonl" in suffixes or ".ndjson" in suffixes:
            df = pd.read_json(path, lines=True, dtype=False)
        elif ".csv" in suffixes:
            df = pd.read_csv(path)
        else:
            raise LabelFileError(f"labels file {str(path)!r}: unknown format; use .csv or .jsonl")
    except (ValueError, pd.errors.ParserError) as exc:
        if isinstance(exc, LabelFileError):
            raise
        raise LabelFileError(f"labels file {str(path)!r} could not be parsed: {exc}") from None
    missing = [c for c in (id_col, label_col) if c not in df.columns]
    if missing:
        raise LabelFileError(
            f"labels file {str(path)!r}: missing column(s) {missing}; found {list(map(str, df.columns))}. "
            "Name the columns with --id-col/--label-col"
        )
    if df[id_col].isna().any():
        row = int(np.flatnonzero(df[id_col].isna().to_numpy())[0]) + 1
        raise LabelFileError(
            f"labels file {str(path)!r}: column {id_col!r} is empty on data row {row}; "
            "give every label the id of its item or drop the row"
        )
    _check_filled(df, path, label_col, id_col, "fill in every label or drop the row")
    columns = {id_col: "item_id", label_col: "label"}
    if draw_col is not None and draw_col in df.columns:
        _check_filled(df, path, draw_col, id_col, "keep the draw numbers `next` listed, or drop the column")
        columns[draw_col] = "draw"
    return df[list(columns)].rename(columns=columns)


def _check_filled(df: pd.DataFrame, path: Path, column: str, id_col: str, fix: str) -> None:
    """``LabelFileError`` naming the first item whose ``column`` is empty, and ``fix``."""
    if df[column].isna().any():
        first = df.loc[df[column].isna(), id_col].iloc[0]
        first = first.item() if isinstance(first, np.generic) else first
        raise LabelFileError(f"labels file {str(path)!r}: column {column!r} is empty for item {first!r}; {fix}")


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
