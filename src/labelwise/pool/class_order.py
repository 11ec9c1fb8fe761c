"""Whether a system's class probability columns are listed in class order, judged by its predictions.

A system's prediction need not be its most probable class: a threshold on
one class (a binary system predicting 1 above ``p = 0.25``) or costs move it
off the argmax on many rows.  What any such rule keeps is that class ``c``'s
probability is larger, on average, on the rows where ``c`` is predicted than
on the other rows (one class against the rest).  Columns listed in another
order break this for every class whose column moved, rare classes included,
since the column read as class ``c`` is then another class's probability,
low where ``c`` is predicted.  :func:`check_class_order` refuses a system
only when its columns fail the comparison in the order given and pass it in
another order, the order it names as the fix; predictions that follow no
order of the columns (outputs of two different models) are not an order
problem and are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from .cells import source
from .errors import PoolError

__all__ = ["check_class_order", "class_contrasts", "order_followed"]


def _python_form(columns: list[str]) -> str:
    """How :meth:`~labelwise.Pool.from_file` takes the probability columns."""
    return f"prob_cols={columns!r}"


def class_contrasts(preds: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``D[c, j]``: the mean of column ``j`` of ``probs`` (N x C) on the rows whose prediction ``preds`` is ``c``,
    less its mean on the other rows; NaN for a class predicted on every row or on none (nothing to compare)."""
    n_classes = probs.shape[1]
    hit = (preds[:, None] == np.arange(n_classes)).astype(float)
    n_in = hit.sum(axis=0)[:, None]
    within = hit.T @ probs
    with np.errstate(invalid="ignore", divide="ignore"):
        contrast = within / n_in - (probs.sum(axis=0) - within) / (len(preds) - n_in)
    contrast[(n_in[:, 0] == 0) | (n_in[:, 0] == len(preds))] = np.nan
    return contrast


def order_followed(contrast: np.ndarray) -> np.ndarray | None:
    """``None`` when every class ``c`` that can be compared has ``D[c, c] > 0`` (:func:`class_contrasts`); else the
    column of each class in an order in which every class has (the largest total contrast among such orders, an
    assignment problem), or ``None`` when no order has."""
    n_classes = len(contrast)
    testable = ~np.isnan(contrast[:, 0])
    if np.all(np.diag(contrast)[testable] > 0):
        return None
    good = (contrast > 0) | ~testable[:, None]
    # as many good classes as possible first, then the largest contrast; a class that cannot be compared keeps
    # its column
    weight = good * (2.0 * n_classes + 1) + np.nan_to_num(contrast) + np.eye(n_classes) * (~testable[:, None]) * 0.5
    _, column = linear_sum_assignment(weight, maximize=True)
    return column if good[np.arange(n_classes), column].all() else None


def check_class_order(df: pd.DataFrame, pred_cols: Sequence[str], prob_cols: Sequence[str], n_classes: int,
                      python_form: Callable[[list[str]], str] = _python_form) -> None:
    """Refuse probability columns that follow each system's predictions in another order than the one listed.

    Parameters
    ----------
    df : pandas.DataFrame
        A pool table whose columns passed :func:`~labelwise.pool.cells.check_cells` and
        :func:`~labelwise.pool.cells.check_class_sums`.
    pred_cols : sequence of str
        One column per system.
    prob_cols : sequence of str
        ``n_classes`` columns per system, in class order 0..C-1, system after system.
    n_classes : int
    python_form : callable
        How the caller's Python API takes the fixed column list, for the message (default ``prob_cols=[...]``).

    Raises
    ------
    PoolError
        Naming the file, the system's columns, the first class whose column is not larger where it is predicted
        (the two means), and the column list to give instead.
    """
    preds = df[list(pred_cols)].to_numpy(dtype=float).astype(np.int64)
    probs = df[list(prob_cols)].to_numpy(dtype=float).reshape(len(df), -1, n_classes)
    for system in range(len(pred_cols)):
        contrast = class_contrasts(preds[:, system], probs[:, system])
        column = order_followed(contrast)
        if column is None:
            continue
        group = list(prob_cols[system * n_classes:(system + 1) * n_classes])
        c = int(np.flatnonzero(~(np.diag(contrast) > 0) & ~np.isnan(contrast[:, 0]))[0])
        predicted = preds[:, system] == c
        inside, outside = probs[predicted, system, c].mean(), probs[~predicted, system, c].mean()
        fixed = list(prob_cols)
        fixed[system * n_classes:(system + 1) * n_classes] = [group[j] for j in column]
        raise PoolError(
            f"{source(df)}: the probability columns {', '.join(map(repr, group))} are read in class order "
            f"0..{n_classes - 1}, but {group[c]!r} (class {c}) is lower on the rows whose prediction in "
            f"{pred_cols[system]!r} is {c} ({inside:.3g} on average) than on the others ({outside:.3g}), as when "
            f"the columns are listed in another order; the predictions follow the order "
            f"{','.join(group[j] for j in column)}: give --prob-col {','.join(fixed)} on the command line "
            f"({python_form(fixed)} in Python)"
        )
