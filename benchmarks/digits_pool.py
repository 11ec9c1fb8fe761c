"""A small "digit 8 vs rest" evaluation pool from scikit-learn's bundled digits (Yilmaz et al. 2021, sec. 5.1).

Yilmaz et al., "Sample Efficient Model Evaluation" (arXiv:2109.12043, 2021,
sec. 5.1) evaluate their samplers on an MNIST "8 vs rest" classifier (about
one positive in ten).  This builds the same kind of pool without a
download: scikit-learn's 1,797 8x8 digits are split in half (stratified,
seeded), a logistic regression is trained on one half and scores the
other, about 900 items with about 10% positives.  The pool has the columns
``item_id``, ``score`` (decision function), ``prob`` (predicted probability
of an 8), ``pred`` (``prob >= 0.5``) and ``label`` and is written to
``benchmarks/out/digits8.csv`` (never into the repository).  The same seed
gives the same file.

Needs the ``bench`` extra (``.venv/bin/pip install -e ".[bench]"``).

Usage::

    .venv/bin/python benchmarks/digits_pool.py [--seed 0] [--digit 8] [--out FILE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
#: Where the "8 vs rest" pool is written by default (``digits{digit}.csv`` for another digit).
DIGITS_POOL = HERE / "out" / "digits8.csv"

_MISSING_SKLEARN = (
    "the digits pool needs scikit-learn, which is not installed; install the benchmark extra with "
    '`.venv/bin/pip install -e ".[bench]"`'
)


def build_digits_pool(seed: int = 0, digit: int = 8, c: float = 1.0) -> pd.DataFrame:
    """Score half of scikit-learn's digits with a "``digit`` vs rest" classifier trained on the other half.

    Parameters
    ----------
    seed : int
        Seed of the stratified half/half split (the fit itself is deterministic).
    digit : int
        The positive class, 0-9.
    c : float
        Inverse regularisation strength of the logistic regression.

    Returns
    -------
    pandas.DataFrame
        One row per held-out image, with columns ``item_id``, ``score``,
        ``prob``, ``pred`` and ``label``.

    Raises
    ------
    ImportError
        When scikit-learn is missing; the message names the extra to install.
    """
    if not 0 <= digit <= 9:
        raise ValueError(f"digit: must be 0-9, got {digit}")
    try:
        from sklearn.datasets import load_digits
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import train_test_split
    except ImportError as exc:
        raise ImportError(_MISSING_SKLEARN) from exc

    data = load_digits()
    x = data.data / 16.0  # pixel intensities 0-16
    y = (data.target == digit).astype(int)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.5, stratify=y, random_state=seed)
    model = LogisticRegression(C=c, max_iter=5000).fit(x_train, y_train)
    prob = model.predict_proba(x_test)[:, 1]
    return pd.DataFrame({
        "item_id": np.arange(y_test.size),
        "score": model.decision_function(x_test),
        "prob": prob,
        "pred": (prob >= 0.5).astype(int),
        "label": y_test,
    })


def write_digits_pool(path: Path = DIGITS_POOL, seed: int = 0, digit: int = 8) -> Path:
    """Build the pool with :func:`build_digits_pool` and write it as CSV to ``path``; returns ``path``."""
    frame = build_digits_pool(seed=seed, digit=digit)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def summary(frame: pd.DataFrame) -> str:
    """One line: size, positives, and the classifier's precision, recall and F1 on the pool."""
    tp = int(((frame["pred"] == 1) & (frame["label"] == 1)).sum())
    predicted, positives = int(frame["pred"].sum()), int(frame["label"].sum())
    precision = tp / predicted if predicted else float("nan")
    recall = tp / positives if positives else float("nan")
    f1 = 2 * tp / (predicted + positives) if predicted + positives else float("nan")
    return (f"{len(frame)} items, {positives} positives ({positives / len(frame):.1%}), {predicted} predicted; "
            f"precision {precision:.4f}, recall {recall:.4f}, F1 {f1:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of the train/test split")
    ap.add_argument("--digit", type=int, default=8, help="the positive class")
    ap.add_argument("--out", type=Path, help="CSV to write (default benchmarks/out/digits<DIGIT>.csv)")
    args = ap.parse_args()
    out = args.out or DIGITS_POOL.with_name(f"digits{args.digit}.csv")
    try:
        path = write_digits_pool(out, seed=args.seed, digit=args.digit)
    except ImportError as exc:
        ap.exit(1, f"{ap.prog}: error: {exc}\n")
    print(f"{path}: {summary(pd.read_csv(path))}")


if __name__ == "__main__":
    main()
