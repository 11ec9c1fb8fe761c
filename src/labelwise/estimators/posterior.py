"""A Dirichlet posterior over the loss cells of uniformly drawn items, and the measure's interval from it.

Under passive (uniform, i.i.d.) sampling every draw falls into one of the
finitely many distinct loss vectors ``v_1, ..., v_K`` the pool can produce
(the *cells*: for binary F1 these are TP, FP-or-FN and TN), so the cell counts
are multinomial with the population's cell frequencies ``p`` and
``R = sum_k p_k v_k``.  With the Jeffreys prior Dirichlet(1/2, ..., 1/2) the
posterior of ``p`` is Dirichlet(counts + 1/2) and ``G = g(R)`` has the
posterior whose equal-tailed quantiles are the interval -- the multinomial
analogue of the Jeffreys interval for a proportion (Brown, Cai & DasGupta,
"Interval Estimation for a Binomial Proportion", Statistical Science 2001).
Unlike the delta method it stays honest when a cell has not been seen: with
no true positive among the draws, F1's interval reaches as far as the
unseen cells allow instead of collapsing onto 0.

The prior's pseudo-draws are held to :data:`PRIOR_MASS` in all, spread evenly
over the cells (1/2 each up to four cells, as the binary confusion matrix's
Jeffreys prior).  A multi-label micro-F1 has 14 cells, most of them items with
several labels wrong that uniform draws almost never meet; at 1/2 each their 7
pseudo-draws pulled the posterior off the estimate and the interval under-covered
(``docs/intervals.md``, "passive's posterior interval").

Functions broadcast over nothing: one posterior per call; the Monte Carlo
over Dirichlet draws is vectorised and seeded, so equal counts give equal
intervals.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure
from ..pool import Outputs

__all__ = ["JEFFREYS", "MAX_CELLS", "N_DRAWS", "PRIOR_MASS", "cell_counts", "cell_prior", "loss_cells",
           "posterior_draws"]

#: Pseudo-count of every cell: the Jeffreys prior of the multinomial.
JEFFREYS = 0.5
#: The prior's pseudo-draws in all, at most (module docstring).
PRIOR_MASS = 2.0
#: Most distinct loss vectors a posterior is formed over (chosen when every cell
#: had Jeffreys' 1/2: beyond it the prior's ``K / 2`` pseudo-draws outweighed a
#: few hundred labels; :data:`PRIOR_MASS` now holds them to two in all).
MAX_CELLS = 16
#: Most items with distinct loss keys whose losses are enumerated.
_MAX_KEYS = 4096
#: Monte Carlo draws of the posterior.
N_DRAWS = 8000


def loss_cells(measure: Measure, outputs: Outputs, n_classes: int) -> np.ndarray | None:
    """The distinct loss vectors ``measure`` takes on the pool, or ``None`` when they are too many.

    Parameters
    ----------
    measure : Measure
    outputs : Outputs
        The systems' outputs for every item of the pool.
    n_classes : int

    Returns
    -------
    ndarray, shape (K, d), or None
        The rows ``l(x, c)`` over every item ``x`` and class ``c``, without
        repeats; ``None`` when the measure has no :meth:`~Measure.loss_key`
        (every item may differ) or there are more than :data:`MAX_CELLS`.
    """
    keys = measure.loss_key(outputs)
    if keys is None:
        return None
    _, first = np.unique(keys, return_index=True)
    if len(first) > _MAX_KEYS:
        return None
    reps = Outputs(*(None if a is None else a[first] for a in (outputs.preds, outputs.scores, outputs.probs)),
                   outputs.n_classes)
    losses = np.concatenate([measure.loss(reps, np.full(len(first), c)) for c in range(n_classes)])
    cells = np.unique(losses, axis=0)
    return cells if len(cells) <= MAX_CELLS else None


def cell_counts(losses: np.ndarray, cells: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """How many draws fell into each cell.

    Parameters
    ----------
    losses : ndarray, shape (n, d)
        The loss of every labeled draw (each a row of ``cells``).
    cells : ndarray, shape (K, d)
    counts : ndarray, shape (n,), optional
        How many identical draws each row stands for (default 1).

    Returns
    -------
    ndarray, shape (K,)

    Raises
    ------
    ValueError
        If a loss is none of the cells.
    """
    match = np.all(losses[:, None, :] == cells[None, :, :], axis=2)
    if not match.any(axis=1).all():
        raise ValueError("a draw's loss is none of the pool's loss cells")
    weights = np.ones(len(losses)) if counts is None else np.asarray(counts, float)
    return np.bincount(np.argmax(match, axis=1), weights=weights, minlength=len(cells))


def cell_prior(n_cells: int) -> float:
    """Pseudo-count of each of ``n_cells`` cells: Jeffreys' 1/2, held to :data:`PRIOR_MASS` in all."""
    return min(JEFFREYS, PRIOR_MASS / max(n_cells, 1))


def posterior_draws(measure: Measure, cells: np.ndarray, counts: np.ndarray, n_draws: int = N_DRAWS,
                    prior: float | None = None, seed: int = 0) -> np.ndarray:
    """Draws of ``G = g(R)`` with ``R = p @ cells`` and ``p ~ Dirichlet(counts + prior)``.

    Parameters
    ----------
    measure : Measure
    cells : ndarray, shape (K, d)
    counts : ndarray, shape (K,)
        Draws per cell.
    n_draws : int
        Monte Carlo draws.
    prior : float, optional
        Pseudo-count of every cell (default :func:`cell_prior`).
    seed : int
        Seed of the Monte Carlo generator: the same counts give the same draws.

    Returns
    -------
    ndarray, shape (n_draws, m)
        NaN where ``g`` is undefined at a drawn ``R``.
    """
    prior = cell_prior(len(cells)) if prior is None else prior
    gamma = np.random.default_rng(seed).standard_gamma(np.asarray(counts, float) + prior,
                                                       size=(n_draws, len(cells)))
    p = gamma / gamma.sum(axis=1, keepdims=True)
    return np.asarray(measure.value(p @ cells), dtype=float).reshape(n_draws, -1)
