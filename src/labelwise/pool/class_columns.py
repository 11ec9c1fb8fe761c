"""The layout of a multi-class pool's probability columns: one column per class and system.

A binary system's probability is one column, ``p(y=1|x)``.  A multi-class
system gives one column per class, in class order ``0..C-1`` (the class
values its predictions and labels use), and several systems list theirs one
system after another: with pred columns ``a,b`` and prob columns
``a_0,a_1,a_2,b_0,b_1,b_2``, system ``a``'s probability of class ``c`` is
column ``a_c``.  How many classes the probability columns give follows from
how many systems the other outputs give (the pred columns, else the score
columns): as many probability columns as systems is one binary probability
per system, ``C >= 2`` times as many is ``C`` per system.  A pool of
probabilities alone has its systems counted by ``n_classes`` (Python) when
that is above 2; else by the columns' sums (:func:`summing_groups`): ``k``
columns that split into consecutive groups of ``C >= 2`` summing to 1
(:func:`read_as_classes`: on most rows with a probability strictly between
0 and 1, or on every row when all are 0 or 1) are ``k / C`` systems of
``C`` classes (the fewest such systems), as a user who writes
``--prob-col p_0,p_1,p_2`` and no pred column means; two such columns are
one binary system whose ``p(y=1)`` is the second.  Else they are one
binary probability per column.  Its predictions are not made up from
the probabilities: a measure of the predictions asks for the pred column.
Each system's probabilities must sum to 1 on every row
(:func:`~labelwise.pool.cells.check_class_sums`).

Batch files write them back under the names the reader takes
(:func:`class_column_names`): ``prob_0, prob_1, ...`` for one system,
``prob_<system>_0, ...`` for several.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .cells import SUM_TOLERANCE
from .errors import PoolError

__all__ = ["check_class_groups", "class_column_names", "classes_per_system", "read_as_classes", "split_columns",
           "summing_groups"]

#: How every message names the option of the probability columns.
_OPTION = "--prob-col on the command line, prob_cols= in Python"


def split_columns(value: str, option: str) -> list[str]:
    """The column names of a comma-separated ``option`` value (``--prob-col p_0,p_1,p_2``), stripped.

    Raises
    ------
    PoolError
        For an empty name among several (``p_0,,p_2`` would read two classes for three).
    """
    given = [part.strip() for part in value.split(",")]
    if len(given) > 1 and "" in given:
        raise PoolError(f"{option} {value!r}: name {given.index('') + 1} of {len(given)} is empty; give the columns "
                        "separated by single commas")
    return [part for part in given if part]


def check_class_groups(columns: Sequence[str], n_classes: int, where: str) -> None:
    """Raise naming a column listed twice among one system's ``n_classes`` class columns (``columns``: system after
    system); several systems may share a column."""
    for start in range(0, len(columns), n_classes):
        group = list(columns[start:start + n_classes])
        twice = [c for i, c in enumerate(group) if c in group[:i]]
        if twice:
            raise PoolError(f"{where}: --prob-col names column {twice[0]!r} twice among one system's class columns "
                            f"({', '.join(map(repr, group))}); name each class's column once, in class order "
                            f"0..{n_classes - 1}")


def read_as_classes(n_rows: int, summing: int, soft: int, soft_summing: int) -> bool:
    """Whether probability columns without pred or score columns are one system's class probabilities, from the
    rows on which their groups all sum to 1 (``summing`` of ``n_rows``) and those of them with a probability
    strictly between 0 and 1 (``soft_summing`` of ``soft``).

    Binary systems' probabilities between 0 and 1 sum to 1 on a row by chance only, so more than half of the
    ``soft`` rows summing to 1 is class probabilities (a few rows off are then named by
    :func:`~labelwise.pool.cells.check_class_sums`, not read as binary systems).  Probabilities of 0 and 1 alone
    sum to 1 wherever exactly one of several rule-based binary systems fires: they are classes (one-hot) only when
    every row sums to 1.
    """
    return soft_summing > soft / 2 if soft else n_rows > 0 and summing == n_rows


def summing_groups(values: np.ndarray) -> int | None:
    """The size ``C >= 2`` of the largest consecutive groups of the columns of ``values`` (rows x ``k``, NaN for a
    cell that is not a number) that are one system's class probabilities by their sums (:func:`read_as_classes`,
    within :data:`~labelwise.pool.cells.SUM_TOLERANCE`); ``None`` when none are.  Groups of 2 are a binary system's
    two class probabilities (``q_0,q_1``), read as one system whose ``p(y=1)`` is the second."""
    k = values.shape[1]
    soft = ((values > 0) & (values < 1)).any(axis=1)
    for size in range(k, 1, -1):
        if k % size == 0:
            sums = values.reshape(len(values), k // size, size).sum(axis=2)
            ok = np.all(np.abs(sums - 1.0) <= SUM_TOLERANCE, axis=1)
            if read_as_classes(len(values), int(ok.sum()), int(soft.sum()), int((ok & soft).sum())):
                return size
    return None


def classes_per_system(prob_cols: Sequence[str], n_systems: int | None, n_classes: int | None,
                       where: str, values: np.ndarray | None = None) -> int | None:
    """How many classes each system's probability columns give; ``None`` for one binary probability per system.

    Parameters
    ----------
    prob_cols : sequence of str
        The probability columns, as read.
    n_systems : int, optional
        The systems the pred columns (else the score columns) give; ``None`` when the pool has neither.
    n_classes : int, optional
        The label-set size the caller gave, if any.
    where : str
        The table as errors name it (``pool file 'x.csv'``).
    values : ndarray, optional
        The columns' values as floats (NaN where not a number): without pred or score columns and ``n_classes``,
        their sums tell class probabilities from binary ones (:func:`summing_groups`).

    Raises
    ------
    PoolError
        When the number of columns is no multiple of the number of systems,
        or disagrees with ``n_classes``.
    """
    k, listed = len(prob_cols), ", ".join(map(repr, prob_cols))
    layout = f"give one per class per system, in class order 0..C-1, system after system ({_OPTION})"
    if n_systems is None:
        if n_classes is None and values is not None:
            return summing_groups(values)
        if n_classes is None or n_classes <= 2:
            return None
        if k % n_classes:
            raise PoolError(f"{where}: {k} probability column(s) ({listed}) for {n_classes} classes; {layout}")
        return n_classes
    if k == n_systems:
        if n_classes is not None and n_classes > 2:
            raise PoolError(f"{where}: n_classes is {n_classes}, but the probability column(s) {listed} give one "
                            f"probability per system, as a binary pool does; {layout}")
        return None
    if k % n_systems:
        raise PoolError(f"{where}: {k} probability column(s) ({listed}) for {n_systems} system(s); give one per "
                        f"system (a binary pool) or {layout.removeprefix('give ')}")
    per_system = k // n_systems
    if n_classes is not None and n_classes != per_system:
        raise PoolError(f"{where}: n_classes is {n_classes}, but the {k} probability columns give {per_system} per "
                        f"system ({n_systems} system(s)); {layout}")
    return per_system


def class_column_names(kind: str, system: str | None, n_classes: int) -> list[str]:
    """The columns of one system's class probabilities in a written table: ``prob_0, prob_1, ...`` for the only
    system (``system=None``), ``prob_<system>_0, ...`` for one of several."""
    head = kind if system is None else f"{kind}_{system}"
    return [f"{head}_{c}" for c in range(n_classes)]
