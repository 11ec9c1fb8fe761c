"""An estimate that is exact because every item whose loss depends on its label is labeled.

A measure's loss need not depend on the label of every item: precision's
``[y ŷ, ŷ]`` is ``[0, 0]`` for an item the system predicts negative, whatever
its label.  Once every item whose loss does depend on its label is labeled
(for precision, every predicted positive), the pool's mean loss ``R`` is
known: the labeled items' losses plus the others' label-free ones.  The
designs' estimators do not see it: a weighted average of rounds fixed in
advance (``online-poisson``) or an importance-weighted mean keeps the error
of the rounds that drew the uncertain items with probabilities below one,
and its variance estimate can be smaller than that error (precision on a
1:1000 pool with over-confident scores covered 0.90 at errors of 2e-5,
``benchmarks/design_variants.py``).  Under a deterministic oracle the estimate
is then the exact value with a zero-width interval; under a stochastic
oracle (noisy labels) or with items excluded as unjudgeable (whose share of
the unlabeled items is unknown) it is not exact and is left to the design.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .pool_cache import per_pool
from .result import make_estimate

if TYPE_CHECKING:
    from ..draws import Sample
    from ..measures import Measure
    from ..pool import Outputs, Pool
    from .result import Estimate

__all__ = ["CENSUS_BASIS", "census_estimate", "label_free_losses"]

#: What an estimate made exact by a census of its uncertain items rests on (:attr:`Estimate.basis`).
CENSUS_BASIS = "exact: every item whose loss depends on its label is labeled"

#: Most labels (classes, or a multi-label pool's label codes) whose losses are taken over the pool, a pass each.
_MAX_CLASSES = 16


def label_free_losses(measure: Measure, outputs: Outputs) -> tuple[np.ndarray, np.ndarray]:
    """Which rows' losses depend on their label, and every row's loss under the first label.

    Parameters
    ----------
    measure : Measure
    outputs : Outputs
        The systems' outputs, one row per item.

    Returns
    -------
    depends : ndarray of bool, shape (n,)
        Whether some two labels give the row different losses.
    loss : ndarray, shape (n, d)
        The loss under label 0: the row's loss whatever its label where ``depends`` is false.
    """
    n = len(outputs)
    first = measure.loss(outputs, np.zeros(n, dtype=np.int64))
    depends = np.zeros(n, dtype=bool)
    for c in range(1, outputs.n_classes):  # a pass per label: one (n, d) loss at a time, not (C, n, d) at once
        depends |= np.any(measure.loss(outputs, np.full(n, c)) != first, axis=1)
    return depends, first


def census_estimate(measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate | None:
    """The exact estimate when every item whose loss depends on its label is labeled, else ``None``.

    Only for a deterministic oracle (one true label per item) and a sample without excluded items: the
    caller checks the oracle.  The pool pass of :func:`label_free_losses` is made once per pool and measure.
    """
    if sample.excluded is not None or pool.n_classes > _MAX_CLASSES or len(sample.draws) == 0:
        return None
    depends, free = per_pool(pool, ("label_free_losses", measure),
                             lambda: label_free_losses(measure, pool.outputs()))
    items, first = np.unique(sample.draws.items, return_index=True)
    if np.count_nonzero(depends[items]) < per_pool(pool, ("label_dependent", measure), depends.sum):
        return None
    losses = free.copy()
    losses[items] = measure.loss(pool.outputs(items), np.asarray(sample.labels)[first])
    R = losses.sum(axis=0) / pool.n_items
    # the posterior is a point mass: the interval is the value at every level, on the range's boundary too
    exact = np.asarray(measure.value(R), dtype=float)[None]
    return make_estimate(measure, R, np.zeros((measure.size, measure.size)), sample.n_labels, len(sample.draws),
                         level, posterior=exact, basis=CENSUS_BASIS)
