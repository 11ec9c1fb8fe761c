"""Learning how far to trust the scores: a monotone recalibration and the prior strength.

The adaptive designs model the oracle with the systems' probabilities as a
prior.  Taken at face value, over-confident probabilities (deep nets: most
items near 0 or 1) hide the positives among the items they call certain
negatives, and the design neither samples them nor widens its interval for
them.  Two things are learned from the labels instead:

* **Platt recalibration** (Platt, "Probabilistic outputs for support vector
  machines", 1999): ``p'(y=1|x) = sigmoid(a * logit(p) + b)`` with ``a > 0``
  (monotone in the score), fitted by maximum likelihood with a Gaussian
  prior centred on the identity ``a = 1, b = 0``, so a few labels barely move
  it.  Each label is weighted by the items it stands for (its group's size
  over its labels): the designs label mostly the items the scores call
  likely positives, and a fit to those alone extrapolates to the tail
  whatever the top of the ranking shows (over-confident scores there can
  flatten the slope until the tail is predicted as positive as the top).
  :func:`fit_platt` returns the parameters and their covariance (the
  inverse Hessian).  :func:`platt_posterior` keeps the parameters'
  uncertainty: the map averaged over their posterior on a grid, the Bayesian
  predictive of the Platt model.  Where the labels say little about the
  scores' tail (importance sampling labels mostly the top of the ranking),
  this matters: the posterior's spread in the slope puts more positives in
  the tail than the most likely slope does.
* **Prior strength by marginal likelihood**: per block ``k`` the flat
  Dirichlet-tree model is Beta-Bernoulli with prior ``lam * s_k``; the
  labels' Beta-binomial likelihood, summed over blocks, chooses ``lam``
  among :data:`STRENGTHS` (:func:`marginal_strength`).  Scores that match the
  labels earn a large ``lam`` (blocks pool the scores' information); scores
  the labels contradict, a small one (each block follows its own labels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, gammaln, log_expit, logit
from scipy.stats import chi2

__all__ = ["MAX_LOGIT", "STRENGTHS", "TAIL_LOGIT", "Platt", "PlattPosterior", "block_quantiles", "fit_platt", "items_per_label",
           "label_surprise", "marginal_strength", "platt_posterior"]

#: Candidate prior strengths of :func:`marginal_strength`.
STRENGTHS = np.array([0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0])

#: Level of the likelihood-ratio test that rejects the largest strength (:func:`marginal_strength`).
STRENGTH_TEST_LEVEL = 0.95

#: Standard deviation of the Gaussian prior on ``(a - 1, b)``.
PRIOR_SD = 1.0

#: Logits are clipped to this magnitude by default (probabilities of exactly 0 or 1, and the far tail of
#: over-confident scores, which the rounds then plan for as one group).
MAX_LOGIT = 30.0

#: The clip where the tail's own logits matter (the interval's model of the items left): only probabilities of
#: exactly 0 or 1 reach it (a double in (0, 1) has a logit above -745 and below 37).  At :data:`MAX_LOGIT`, 99% of
#: the items of a 1:100,000 pool whose probabilities are sigmoid(3 x true logit) (logits of -60 and beyond) are
#: tied at -30, which a recalibrated slope of 1/3 reads as a rate of 5e-5 each instead of 1e-9.
TAIL_LOGIT = 700.0

#: The slope's floor: the recalibration stays monotone.
MIN_SLOPE = 0.01

#: Labels per chunk in :func:`platt_posterior`.
CHUNK = 4096

#: Grid points of :func:`platt_posterior` whose posterior is below this fraction of the largest are dropped.
NEGLIGIBLE = 1e-9


@dataclass(frozen=True)
class Platt:
    """A fitted recalibration ``p' = sigmoid(a * logit(p) + b)``.

    Attributes
    ----------
    a, b : float
        Slope (> 0) and intercept on the logit scale; ``a < 1`` tempers
        over-confident scores.
    cov : ndarray, shape (2, 2)
        Posterior covariance of ``(a, b)`` (inverse Hessian at the optimum).
    """

    a: float = 1.0
    b: float = 0.0
    cov: np.ndarray | None = None

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        """Recalibrated probabilities of a positive."""
        return expit(self.a * np.asarray(logits) + self.b)


def logits_of(p: np.ndarray, limit: float = MAX_LOGIT) -> np.ndarray:
    """``logit(p)`` clipped to ``±limit`` (:data:`MAX_LOGIT`, or :data:`TAIL_LOGIT` to keep the far tail apart)."""
    with np.errstate(divide="ignore"):
        return np.clip(logit(np.asarray(p, dtype=float)), -limit, limit)


def items_per_label(group_sizes: np.ndarray, group_labels: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The weight of each label in the Platt fit: the items of its group per label of the group.

    Parameters
    ----------
    group_sizes : ndarray, shape (G,)
        Items of every group.
    group_labels : ndarray of int, shape (G,)
        Labels of every group (a group without labels counts as having one).
    groups : ndarray of int, shape (n,)
        The group of every label.

    Returns
    -------
    ndarray, shape (n,)
        ``group_sizes[g] / max(group_labels[g], 1)`` for the group ``g`` of every label.
    """
    return (group_sizes / np.maximum(group_labels, 1))[groups]


def fit_platt(logits: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None,
              iterations: int = 25) -> Platt:
    """Maximum a posteriori Platt recalibration of scores from their labels.

    Parameters
    ----------
    logits : ndarray, shape (n,)
        ``logit(p)`` of the labeled items' probabilities.
    labels : ndarray of {0, 1}, shape (n,)
    weights : ndarray, shape (n,), optional
        Design weights (items each label stands for), rescaled to mean 1
        so that the prior keeps its weight; default all 1.
    iterations : int
        Newton steps, each halved until the objective does not fall (the objective is concave, but a full
        step can overshoot where the labels nearly separate: many logits clipped at ``-MAX_LOGIT`` all
        negative); a handful suffice.

    Returns
    -------
    Platt
        With ``a`` kept positive (at least :data:`MIN_SLOPE`): the recalibration stays monotone.
    """
    x = np.asarray(logits, dtype=float)
    y = np.asarray(labels, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float) / np.mean(weights)
    X = np.stack([x, np.ones_like(x)], axis=1)
    center = np.array([1.0, 0.0])
    theta = center.copy()
    prec = np.eye(2) / PRIOR_SD**2
    w_negative = w * (1.0 - y)

    def objective(t: np.ndarray, z: np.ndarray) -> float:  # the log posterior at t (z = X @ t), up to a constant
        return float(w @ log_expit(z) - w_negative @ z - 0.5 * (t - center) @ prec @ (t - center))

    z = X @ theta
    current = objective(theta, z)
    for _ in range(iterations):  # the linear predictor and objective of the accepted point carry over to the next
        p = expit(z)
        grad = X.T @ (w * (y - p)) - prec @ (theta - center)
        hess = (X.T * (w * p * (1.0 - p))) @ X + prec
        step = np.linalg.solve(hess, grad)
        for _ in range(60):  # step halving (a fall within rounding near the maximum is none)
            moved = theta + step
            moved[0] = max(moved[0], MIN_SLOPE)
            z_moved = X @ moved
            value = objective(moved, z_moved)
            if value >= current - 1e-9 * (1.0 + abs(current)):
                break
            step = step / 2
        theta, z, current = moved, z_moved, value
        if np.abs(step).max() < 1e-8:
            break
    p = expit(z)
    return Platt(float(theta[0]), float(theta[1]), np.linalg.inv((X.T * (w * p * (1.0 - p))) @ X + prec))


@dataclass(frozen=True)
class PlattPosterior:
    """The Platt map averaged over a discrete posterior of its parameters (:func:`platt_posterior`).

    Attributes
    ----------
    a, b : ndarray, shape (k,)
        Grid points of the slope and intercept.
    weight : ndarray, shape (k,)
        Their posterior probabilities (summing to one).
    """

    a: np.ndarray
    b: np.ndarray
    weight: np.ndarray

    def __call__(self, logits: np.ndarray) -> np.ndarray:
        """Posterior mean probability of a positive, ``sum_k weight_k sigmoid(a_k logit + b_k)``."""
        logits = np.asarray(logits, dtype=float)
        return expit(logits[..., None] * self.a + self.b) @ self.weight


def platt_posterior(logits: np.ndarray, labels: np.ndarray, weights: np.ndarray | None = None,
                    fit: Platt | None = None, slope_points: int = 25, intercept_points: int = 13,
                    reach: float = 4.0) -> PlattPosterior:
    """The posterior of the Platt parameters on a grid: the recalibration with its parameter uncertainty.

    The posterior is that of :func:`fit_platt` (the weighted likelihood times
    the Gaussian prior centred on the identity), evaluated exactly at the
    midpoints of a grid of cells spanning ``reach`` of its Laplace standard
    deviations around the maximum (the slope kept at least :data:`MIN_SLOPE`).
    The Laplace approximation itself would not do: its Gaussian reaches down
    to slopes near 0, where the labels' likelihood has all but vanished, and
    there every item looks like a coin flip.  The slope gets the finer grid:
    far in the tail ``sigmoid(a x + b)`` changes by orders of magnitude
    across the slope's posterior.

    Parameters
    ----------
    logits, labels, weights
        As :func:`fit_platt`.
    fit : Platt, optional
        :func:`fit_platt` of the same labels (computed when omitted).
    slope_points, intercept_points : int
        Grid cells per parameter.
    reach : float
        Half-width of the grid in Laplace standard deviations.
    """
    x = np.asarray(logits, dtype=float)
    y = np.asarray(labels, dtype=float)
    w = np.ones_like(x) if weights is None else np.asarray(weights, dtype=float) / np.mean(weights)
    fit = fit_platt(x, y, weights) if fit is None else fit
    sd = np.sqrt(np.diag(fit.cov))
    a, b = (g.ravel() for g in np.meshgrid(
        _midpoints(max(fit.a - reach * sd[0], MIN_SLOPE), fit.a + reach * sd[0], slope_points),
        _midpoints(fit.b - reach * sd[1], fit.b + reach * sd[1], intercept_points), indexing="ij"))
    log_post = -0.5 * ((a - 1.0) ** 2 + b**2) / PRIOR_SD**2
    for start in range(0, x.size, CHUNK):  # labels a chunk at a time: (chunk, grid points) floats at most
        part = slice(start, start + CHUNK)
        z, log_p = _grid_terms(x[part], a, b)
        # log p(y | z) = y log sigmoid(z) + (1 - y) log sigmoid(-z), and log sigmoid(-z) = log sigmoid(z) - z
        log_post = log_post + w[part] @ log_p - (w[part] * (1.0 - y[part])) @ z
    weight = np.exp(log_post - log_post.max())
    keep = weight > NEGLIGIBLE  # points that cannot move a probability
    return PlattPosterior(a[keep], b[keep], weight[keep] / weight[keep].sum())


def _grid_terms(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``z = x a + b`` and ``log sigmoid(z)``, ``(n, grid points)``: computed once per distinct logit and copied to
    the labels sharing it (the labels of a score block), the same numbers as computed label by label."""
    distinct, rows = np.unique(x, return_inverse=True)
    if distinct.size > x.size // 2:  # most labels have a logit of their own: copying rows costs what it saves
        z = x[:, None] * a + b
        return z, log_expit(z)
    z = distinct[:, None] * a + b
    return z[rows], log_expit(z)[rows]


def _midpoints(lo: float, hi: float, cells: int) -> np.ndarray:
    """Midpoints of ``cells`` equal cells splitting ``[lo, hi]``."""
    edges = np.linspace(lo, hi, cells + 1)
    return (edges[1:] + edges[:-1]) / 2


def block_quantiles(blocks: np.ndarray, values: np.ndarray, n_blocks: int, k: int = 16) -> np.ndarray:
    """``k`` mid-quantiles of ``values`` within each block, shape ``(n_blocks, k)``.

    The mean of a smooth function over a block's items is the mean over these
    quantiles up to quadrature error, in ``O(n_blocks k)`` instead of ``O(N)``.
    Empty blocks get zeros.
    """
    order = np.lexsort((values, blocks))
    sizes = np.bincount(blocks, minlength=n_blocks)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    frac = (np.arange(k) + 0.5) / k
    pos = starts[:, None] + np.minimum((frac[None, :] * sizes[:, None]).astype(np.int64),
                                       np.maximum(sizes - 1, 0)[:, None])
    out = np.asarray(values, dtype=float)[order][np.minimum(pos, blocks.size - 1)]
    return np.where(sizes[:, None] > 0, out, 0.0)


def marginal_strength(block_prior: np.ndarray, counts: np.ndarray, unless_rejected: bool = False) -> float:
    """Prior strength ``lam`` maximizing the labels' Dirichlet-multinomial likelihood over blocks.

    Block ``k``'s labels are multinomial given ``p_k ~ Dirichlet(lam s_k)``;
    their marginal likelihood (up to the multinomial coefficient) is
    ``B(lam s_k + O_k) / B(lam s_k)`` with ``B`` the multivariate Beta function.

    Labels of a rare class at rates far below one over their number cannot
    tell strengths apart: a few hundred negatives in a block whose prior
    rate is 1e-5 are as likely under every strength, yet the weakest is the
    most likely by a hair (its Beta puts most of its mass at a rate of 0),
    and read as the leaves' prior it empties the tail of positives the labels
    could not have seen.  With ``unless_rejected`` the strength is the
    largest, which holds every block at its prior rate, unless the labels
    reject it against the most likely one in a likelihood-ratio test at
    :data:`STRENGTH_TEST_LEVEL` (chi-squared, one degree of freedom; Wilks
    1938), and then the most likely one.

    Parameters
    ----------
    block_prior : ndarray, shape (K, C)
        Each block's prior label distribution ``s_k`` (rows of zeros: empty blocks).
    counts : ndarray, shape (K, C)
        Labels of each class received in each block ``O_k``.
    unless_rejected : bool
        The largest strength unless the labels reject it (above).

    Returns
    -------
    float
        One of :data:`STRENGTHS`: the most likely (ties go to the larger), or with ``unless_rejected`` as above.
    """
    O = np.asarray(counts, dtype=float)
    labeled = O.sum(axis=1) > 0  # a block without labels adds exactly 0 for every strength
    s = np.clip(np.asarray(block_prior, dtype=float)[labeled], 1e-9, None)[:, :, None]
    O = O[labeled][:, :, None]
    lam = STRENGTHS[None, None, :]
    loglik = (gammaln(lam * s + O) - gammaln(lam * s)).sum(axis=(0, 1)) \
        - (gammaln(lam[0] + O.sum(axis=1)) - gammaln(lam[0])).sum(axis=0)
    best = len(STRENGTHS) - 1 - np.argmax(loglik[::-1])
    if unless_rejected and 2.0 * (loglik[best] - loglik[-1]) <= chi2.ppf(STRENGTH_TEST_LEVEL, 1):
        return float(STRENGTHS[-1])
    return float(STRENGTHS[best])


def label_surprise(prior: np.ndarray, labels: np.ndarray, effect: float = 0.0) -> float:
    """How far labels contradict the probabilities they were drawn under: their standardized surprise.

    The surprise ``S = -sum_i log p(y_i | x_i)`` over the ``k`` labeled items, standardized by its mean
    ``sum_i H(p_i)`` and variance ``sum_i Var(log p(y | x_i))`` were each label drawn from ``p(. | x_i)`` (about a
    standard normal then, even under an adaptive design: an item's draw depends on the labels before it, not on
    its own), less ``effect sqrt(k)`` (a minimum-effect test: an excess of more than ``effect`` standard deviations
    per label); ``inf`` when a label has probability 0.  Over-confident probabilities score far above 0.

    Parameters
    ----------
    prior : ndarray, shape (k, C)
        The probabilities of every labeled item.
    labels : ndarray of int, shape (k,)
    effect : float
    """
    rows = np.arange(labels.size)
    with np.errstate(divide="ignore"):
        log_p = np.log(prior)
    if not np.isfinite(log_p[rows, labels]).all():
        return float("inf")
    finite = np.where(prior > 0, log_p, 0.0)  # 0 log 0 = 0
    entropy = -(prior * finite).sum(axis=1)
    spread = float(((prior * finite**2).sum(axis=1) - entropy**2).sum())
    if spread <= 0:  # every labeled item certain, and each label the certain one
        return 0.0
    excess = float(-log_p[rows, labels].sum() - entropy.sum())
    return excess / np.sqrt(spread) - effect * np.sqrt(labels.size)
