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

A multi-label macro-F1 has up to ``4^C`` cells (every label a true or false
positive, a false negative or a true negative), 256 for four labels: evenly
spread, two pseudo-draws leave a rare label's own true positives almost no
prior, and a label with none among the draws collapsed onto precision and
recall 0.  Its measure is a function of each label's own confusion rates,
so :func:`label_posterior_draws` gives every label a prior of its own whose
centre the labels share, on a Bayesian bootstrap of the label-set patterns
drawn (D. B. Rubin, "The Bayesian Bootstrap", Annals of Statistics 1981),
which keeps the labels' dependence through the items they share.

Functions broadcast over nothing: one posterior per call; the Monte Carlo
over Dirichlet draws is vectorised and seeded, so equal counts give equal
intervals.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from ..measures import Measure
from ..pool import Outputs

__all__ = ["JEFFREYS", "LABEL_PRIOR_MASS", "MAX_CELLS", "N_DRAWS", "PRIOR_MASS", "cell_counts", "cell_prior", "label_posterior_draws",
           "label_states", "label_support", "loss_cells", "posterior_draws"]

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
#: Pseudo-draws of a label's prior in its non-zero states (true and false positives, false negatives: Jeffreys'
#: 1/2 each on average), spread as the labels' shared centre (:func:`label_posterior_draws`).
LABEL_PRIOR_MASS = 1.5
#: Monte Carlo draws of the posterior.
N_DRAWS = 8000
#: Posterior draws made at once by :func:`label_posterior_draws` (its memory grows with them times the draws' loss
#: vectors).
_DRAW_BLOCK = 1000


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


def label_states(losses: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Each row's state on each label: 0 where its loss on the label's columns is zero, ``j + 1`` where it is
    one on column ``columns[label, j]`` alone.

    Parameters
    ----------
    losses : ndarray, shape (n, d)
    columns : ndarray of int, shape (C, m)
        The loss columns of every label (:meth:`~labelwise.measures.Measure.label_columns`).

    Returns
    -------
    ndarray of int, shape (n, C)

    Raises
    ------
    ValueError
        If a row's loss on a label is neither zero nor a single one.
    """
    block = np.asarray(losses, float)[:, columns]  # (n, C, m)
    if not (np.isin(block, (0.0, 1.0)).all() and (block.sum(axis=2) <= 1).all()):
        raise ValueError("a draw's loss on a label is neither zero nor a single one of its columns")
    return (block @ np.arange(1, columns.shape[1] + 1)).astype(np.int64)


def label_support(measure: Measure, columns: np.ndarray, outputs: Outputs, n_classes: int) -> np.ndarray:
    """Which non-zero states each label can take on the pool, ``(C, m)`` bool: a label the systems never
    predict has no true or false positives, only false negatives.

    Every label's state is taken to depend on its own truth alone (as a multi-label measure's per-label
    confusion does), so the label codes ``0`` (no label true) and ``n_classes - 1`` (every label true) show
    every state an item can be in.

    Parameters
    ----------
    measure : Measure
    columns : ndarray of int, shape (C, m)
        :meth:`~labelwise.measures.Measure.label_columns`.
    outputs : Outputs
        The systems' outputs for every item of the pool.
    n_classes : int
    """
    columns = np.asarray(columns, dtype=np.int64)
    support = np.zeros(columns.shape, dtype=bool)
    for code in (0, n_classes - 1):
        states = label_states(measure.loss(outputs, np.full(len(outputs), code)), columns)  # (N, C)
        support |= (states[:, :, None] == np.arange(1, columns.shape[1] + 1)).any(axis=0)
    return support


def label_posterior_draws(measure: Measure, columns: np.ndarray, losses: np.ndarray, counts: np.ndarray,
                          support: np.ndarray | None = None, n_draws: int = N_DRAWS, seed: int = 0) -> np.ndarray:
    """Draws of ``G = g(R)`` with every label's confusion rates from a posterior of its own, the labels' priors
    sharing their centre and the labels joined through a Bayesian bootstrap of the draws' loss vectors.

    Label ``i`` in state ``s`` (``s = 0`` zero loss, a true negative; ``s = 1..m`` its columns, e.g. a true
    positive, a false positive, a false negative) gets the weight ``sum_{k: s_i(k) = s} W_k + H_is``: the
    distinct loss vectors ``v_k`` drawn ``n_k`` times weigh ``W_k ~ Gamma(n_k)``, and ``H_is ~ Gamma(a_s)``
    with ``a_0 = 1/2`` and ``(a_1, ..., a_m) = kappa pi``, :data:`LABEL_PRIOR_MASS` pseudo-draws spread as the
    labels' shared centre ``pi``.  Label ``i``'s rates, its weights over their sum, are then ``Dirichlet(n_i +
    a)`` given ``pi``, the posterior of its own confusion counts ``n_i``; two labels are dependent through the
    draws they share as under the Dirichlet posterior of the label-set patterns.  ``pi`` is uniform on the
    simplex a priori and drawn from its posterior given every label's counts (their Dirichlet-multinomial
    likelihood) by resampling uniform proposals, so a label with few draws leans to what the others show
    instead of to 1/2: independent priors of their own put the mean of the labels' rates near 1/2, far from a
    pool whose labels are all well (or all badly) predicted.  This is the hierarchical prior of exchangeable
    binomial rates (A. Gelman, J. B. Carlin, H. S. Stern and D. B. Rubin, "Bayesian Data Analysis", ch. 5).

    Rates of different labels are on scales of their own, so ``g`` must be invariant to rescaling one label's
    columns (macro-F1 is: a function of ratios within labels).  A state the pool does not allow (``support``:
    a label never predicted has no true or false positives) gets no prior, and its label does not inform ``pi``.

    Parameters
    ----------
    measure : Measure
    columns : ndarray of int, shape (C, m)
        :meth:`~labelwise.measures.Measure.label_columns`; they cover the loss's ``d`` columns.
    losses : ndarray, shape (n, d)
        The loss of every labeled draw.
    counts : ndarray, shape (n,)
        How many draws each row stands for.
    support : ndarray of bool, shape (C, m), optional
        The states each label can take on the pool (:func:`label_support`); every state by default.
    n_draws : int
        Monte Carlo draws.
    seed : int
        Seed of the Monte Carlo generator: the same draws give the same posterior draws.

    Returns
    -------
    ndarray, shape (n_draws, k)
        One column per component of ``g`` (``m`` above is a label's number of columns); NaN where ``g`` is
        undefined at a drawn ``R``.
    """
    columns = np.asarray(columns, dtype=np.int64)
    n_labels, width = columns.shape
    vectors, which = np.unique(np.asarray(losses, float), axis=0, return_inverse=True)
    weight = np.bincount(which.ravel(), weights=np.asarray(counts, float), minlength=len(vectors))
    seen = weight > 0
    onehot = (label_states(vectors[seen], columns)[:, :, None] == np.arange(width + 1)).astype(float)  # (K, C, m+1)
    support = np.ones((n_labels, width), dtype=bool) if support is None else np.asarray(support, dtype=bool)
    rng = np.random.default_rng(seed)
    label_counts = np.einsum("k,kcs->cs", weight[seen], onehot)[:, 1:]
    centre = _shared_centre(label_counts[support.all(axis=1)], n_draws, rng)
    prior = np.concatenate([np.full((n_draws, n_labels, 1), JEFFREYS),
                            np.where(support, LABEL_PRIOR_MASS * centre[:, None, :], 0.0)], axis=2)
    R = np.zeros((n_draws, measure.dim))
    for start in range(0, n_draws, _DRAW_BLOCK):  # in blocks: the bootstrap's weights are (draws, loss vectors)
        rows = slice(start, min(start + _DRAW_BLOCK, n_draws))
        n_rows = rows.stop - rows.start
        mass = (np.einsum("nk,kcs->ncs", rng.standard_gamma(weight[seen], size=(n_rows, int(seen.sum()))), onehot)
                + rng.standard_gamma(prior[rows]))  # a shape of 0 draws 0: a state the pool does not allow
        R[rows, columns] = (mass / mass.sum(axis=2, keepdims=True))[:, :, 1:]
    return np.asarray(measure.value(R), dtype=float).reshape(n_draws, -1)


def _shared_centre(label_counts: np.ndarray, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    """``n_draws`` draws of the labels' shared prior centre ``pi`` given their counts ``(C, m)`` in the non-zero
    states: uniform proposals on the simplex resampled by the Dirichlet-multinomial likelihood
    ``prod_i B(kappa pi + n_i) / B(kappa pi)``, ``kappa`` = :data:`LABEL_PRIOR_MASS`."""
    proposals = rng.dirichlet(np.ones(label_counts.shape[1]), size=n_draws)
    alpha = LABEL_PRIOR_MASS * proposals[:, None, :]
    log_lik = (gammaln(alpha + label_counts) - gammaln(alpha)).sum(axis=(1, 2))  # the rest does not depend on pi
    w = np.exp(log_lik - log_lik.max())
    return proposals[rng.choice(n_draws, size=n_draws, p=w / w.sum())]
