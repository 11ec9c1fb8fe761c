"""The interval of an estimate that may have missed positives no label has shown: an exact count of them.

An *exception* (:class:`~labelwise.estimators.ModelCovariance`) is an
unlabeled item whose label is not its group's most likely one and changes
the loss (a positive among items the scores call negatives).  Once the
labels are in, every unlabeled item is known not to have been sampled: an
exception left among them cannot have moved the estimate by its large design
weight; the estimate simply misses it.  Exceptions that were sampled are
labeled items, and enter the design-based (plug-in) variance at their
weight.  So the error of the estimate, given which items are labeled, is
taken as

    e = X + j (K - o),    X ~ Normal(0, base),    K = sum_b K_b,

with ``base`` the variance of the labeled items' part, ``K`` the number of
exceptions left, each shifting the estimate by ``j`` (the root mean square
of their shifts, so that ``j^2 E K`` is the model's variance of the missed
sum), and ``o`` the number of them the estimate already counts: the
exceptions that were sampled carry their design weight, and beyond their own
count it stands for the unlabeled ones (a Horvitz-Thompson estimate of
them: 0 in the usual run on a rare pool, where none was sampled, and close
to ``E K`` where they are common); a difference estimator adds its
prediction.

``K_b`` counts the exceptions left in part ``b`` of the pool (a block of the
oracle model).  Given the block's probability of an exception the count is
Poisson (Le Cam's theorem: the count of independent rare Bernoulli labels is
close to Poisson); the model's posterior leaves that probability uncertain,
a Beta distribution whose prior strength plus labels ``lam + L_b`` is small
against the ``U_b`` items left, so ``K_b`` is the Beta-binomial posterior
predictive, taken in its Poisson-Gamma form: negative binomial with
``Var K_b = E K_b (1 + d_b)``, ``d_b`` the *overdispersion* (0: Poisson).
Its upper quantiles at a small mean are far above the normal's, which is
what an interval needs when a few positives are expected in a tail of
thousands of items; the sum over blocks is computed exactly
(:func:`negative_binomial_sum_pmf`).  The means ``E K_b`` are uncertain in
turn (the posterior of the scores' recalibration,
:func:`~labelwise.oracle.calibration.platt_posterior`): a discrete
distribution of mean vectors, so ``K`` is a mixture.  The interval is the
symmetric one that covers ``e`` with the nominal probability, returned as
the variance of the normal whose interval it is.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from .model_covariance import root_of_increasing

__all__ = ["count_pmf", "counted_exceptions", "missed_count_variance", "negative_binomial_sum_pmf"]

#: The count's distribution is cut where every component's is within this of 1 (the mass beyond counts as missed).
TAIL_MASS = 1e-9

#: Models of the count whose probabilities sum to less than this are left out (their mass counts as missed).
NEGLIGIBLE_WEIGHT = 1e-6

#: Counts of a larger mean are taken normal (a Poisson count's skewness is below 0.041 there, and its
#: probability of 0 stays above the smallest double).
NORMAL_MEAN = 600.0

#: The exact distribution stops at this count at most (a count whose mean plus ten standard deviations is
#: beyond it is taken normal); the mass beyond it counts as not covered.
MAX_COUNT = 1024

#: The transform's size is where at most this much of a count's mass folds back onto the counts returned, a
#: tenth of the round-off's (:func:`negative_binomial_sum_pmf`).
FOLDED_MASS = 1e-15

#: A tilt may multiply the transform's round-off by at most this at the last count returned.
ROUND_OFF_GAIN = 1e3

#: Even transform sizes of no prime factor above 5, where numpy's FFT is fast.
_SIZES = np.unique(np.multiply.outer(np.multiply.outer(2 ** np.arange(1, 15), 3 ** np.arange(9)), 5 ** np.arange(6)))
_SIZES = _SIZES[_SIZES <= 8 * (MAX_COUNT + 1)]


def negative_binomial_sum_pmf(means: np.ndarray, overdispersion: np.ndarray,
                              tail_mass: float = TAIL_MASS) -> np.ndarray:
    """``P(K = k)`` of ``K = sum_b K_b``, independent negative binomial ``K_b`` with ``Var K_b = E K_b (1 + d_b)``.

    The probability generating function of ``K`` is

        G(z) = prod_b (1 + d_b (1 - z))^(-m_b / d_b)

    (``exp(m_b (z - 1))``, a Poisson count, at ``d_b = 0``).  Its values at
    the ``M``-th roots of unity are the discrete Fourier transform of the pmf
    folded modulo ``M`` (``P(K = k) + P(K = k + M) + ...``), so one inverse
    FFT of ``exp(log G)``, ``log G`` a ``(k, B) @ (B, M / 2 + 1)`` product
    (the pmf is real: half the roots suffice), returns the pmf of all rows
    once ``M`` is past the counts that carry mass: the transform method of
    Embrechts & Frei, "Panjer recursion versus FFT for compound
    distributions", Mathematical Methods of Operations Research 69 (2009), in
    place of Panjer's recursion, one step per count.  Against the mass beyond ``M`` that folds back (aliasing) they take the transform at
    ``theta`` times the roots (exponential tilting, after Grübel &
    Hermesmeier, "Computation of compound distributions I: aliasing errors
    and exponential tilting", ASTIN Bulletin 29, 1999): the pmf times
    ``theta^k``, whose folded mass is ``theta^M`` times smaller, divided by
    ``theta^k`` after the transform, which multiplies round-off by
    ``theta^-k``.  :func:`_transform_size` takes ``M`` and ``theta`` from a
    Chernoff bound on the tail.  The round-off is absolute, up to about
    ``1e-14`` on each probability: a far smaller one is not resolved (it is
    0, or noise of that size), which moves no interval.

    Parameters
    ----------
    means : ndarray (k, B)
        ``E K_b`` of each of ``B`` parts, for ``k`` distributions at once (totals at most :data:`NORMAL_MEAN`).
    overdispersion : ndarray (B,)
        ``d_b >= 0``.
    tail_mass : float
        The pmf stops at the first count where every row's remaining mass is below it, or at :data:`MAX_COUNT`;
        a row is 0 beyond the count where its own remaining mass is.

    Returns
    -------
    ndarray (k, n)
        The pmf of each row on ``0 .. n - 1``.
    """
    means = np.atleast_2d(np.asarray(means, dtype=float))
    d = np.maximum(np.asarray(overdispersion, dtype=float), 0.0)
    live = means.max(axis=0, initial=0.0) > 0  # parts without a count in any row change nothing
    means, d = means[:, live], d[live]
    counts, size, log_theta = _transform_size(means, d, tail_mass)
    angle = 2.0 * np.pi * np.arange(size // 2 + 1) / size
    theta = np.exp(log_theta)
    # w = 1 - z at z = theta e^(-i angle) (numpy's forward transform): Re w = 1 - theta + 2 theta sin^2(angle / 2)
    re_w = -np.expm1(log_theta) + 2.0 * theta * np.sin(angle / 2) ** 2
    im_w = theta * np.sin(angle)
    # -log G(z) = sum_b m_b log(1 + d_b w) / d_b, m_b w at d_b = 0; log|1 + d w| = log1p(2 d Re w + d^2 |w|^2) / 2
    re_log, im_log = np.tile(re_w, (d.size, 1)), np.tile(im_w, (d.size, 1))
    over = d > 0
    dd = d[over, None]
    re_log[over] = np.log1p(dd * (2.0 * re_w + dd * (re_w ** 2 + im_w ** 2))) / (2.0 * dd)
    im_log[over] = np.arctan2(dd * im_w, 1.0 + dd * re_w) / dd
    transform = np.empty((means.shape[0], angle.size), dtype=complex)
    transform.real, transform.imag = -(means @ re_log), -(means @ im_log)
    pmf = np.fft.irfft(np.exp(transform, out=transform), size)[:, :counts] * np.exp(-log_theta * np.arange(counts))
    pmf = np.maximum(pmf, 0.0)  # round-off below 0
    done = np.cumsum(pmf, axis=1) >= 1.0 - tail_mass
    ends = np.where(done.any(axis=1), np.argmax(done, axis=1) + 1, counts)  # each row's count of counts
    pmf[np.arange(counts) >= ends[:, None]] = 0.0
    return pmf[:, : int(ends.max(initial=1))]


def _transform_size(means: np.ndarray, d: np.ndarray, tail_mass: float) -> tuple[int, int, float]:
    """The counts :func:`negative_binomial_sum_pmf` returns at most, its transform's size and ``log theta``.

    Chernoff's bound ``P(K >= n) <= G(t) t^-n`` (``1 < t < 1 + 1 / max d_b``,
    the best ``t`` of a grid) gives the count beyond which every row has less
    than ``tail_mass`` left, and for each size the mass beyond it; the size is
    the smallest of :data:`_SIZES` where the tilt ``theta^size = FOLDED_MASS /
    P(K >= size)`` (1 where less is beyond) multiplies round-off by at most
    :data:`ROUND_OFF_GAIN` at the last count.
    """
    top = 1.0 / d.max() if np.any(d > 0) else np.inf
    s = np.geomspace(1e-6, 1e6, 97)  # t - 1
    if np.isfinite(top):  # and up to the pole of the largest d_b
        s = np.concatenate([s[s < top], top * np.exp(-np.geomspace(1e-12, 1.0, 25))])
    # log G(t) = sum_b m_b (-log(1 - d_b s) / d_b), m_b s at d_b = 0
    over = d > 0
    log_g = means[:, ~over].sum(axis=1)[:, None] * s - means[:, over] @ (np.log1p(-d[over, None] * s) / d[over, None])
    log_t = np.log1p(s)
    counts = int(min(np.ceil(np.max(np.min((log_g - np.log(tail_mass)) / log_t, axis=1), initial=1.0)),
                     MAX_COUNT + 1))
    sizes = _SIZES[_SIZES >= counts]
    # log P(K >= size) of every row at once: at each t the largest row's G(t)
    beyond = np.min(np.max(log_g, axis=0, initial=0.0) - sizes[:, None] * log_t, axis=1)
    log_thetas = np.minimum(0.0, (np.log(FOLDED_MASS) - beyond) / sizes)
    fine = -log_thetas * (counts - 1) <= np.log(ROUND_OFF_GAIN)
    pick = np.append(np.flatnonzero(fine), sizes.size - 1)[0]
    return counts, int(sizes[pick]), float(log_thetas[pick])


def _count_distribution(means: np.ndarray, weights: np.ndarray,
                        overdispersion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The mixture ``sum_i weights_i P(K | means_i)``: exact pmf of its components of total mean at most
    :data:`NORMAL_MEAN` that end before :data:`MAX_COUNT`, and the weights, means and variances of the others
    (taken normal); components of negligible weight (:data:`NEGLIGIBLE_WEIGHT`) are left out."""
    kept = np.cumsum(np.sort(weights)) > NEGLIGIBLE_WEIGHT  # the least likely models, summing to less, go
    kept = kept[np.argsort(np.argsort(weights))]
    means, weights = means[kept], weights[kept]
    totals = means.sum(axis=1)
    variances = means @ (1.0 + overdispersion)
    small = (totals <= NORMAL_MEAN) & (totals + 10.0 * np.sqrt(variances) <= MAX_COUNT)
    pmf = np.zeros(1)
    if small.any():
        pmf = weights[small] @ negative_binomial_sum_pmf(means[small], overdispersion)
    return pmf, weights[~small], totals[~small], variances[~small]


def count_pmf(means: np.ndarray, weights: np.ndarray | None = None,
              overdispersion: np.ndarray | None = None) -> np.ndarray:
    """``P(K = k)`` of the count of exceptions left, a mixture over the models of its means (module docstring).

    The components :func:`missed_count_variance` takes exactly are exact
    (:func:`negative_binomial_sum_pmf`); the others, taken normal there, are
    a normal of their mean and variance rounded to the nearest count (mass
    below 0 at 0).  Mass the exact components leave beyond their last count
    (less than :data:`TAIL_MASS`, or beyond :data:`MAX_COUNT`) and that of the
    models of negligible weight is left out: a reader of the pmf counts it
    as not covered.

    Parameters
    ----------
    means : ndarray (k, B) or (B,)
        The expected exceptions left in each of ``B`` parts of the pool under each of ``k`` models.
    weights : ndarray (k,), optional
        The models' probabilities (default equal).
    overdispersion : ndarray (B,), optional
        ``d_b`` of each part (default 0, Poisson counts).

    Returns
    -------
    ndarray (n,)
        The pmf on ``0 .. n - 1``, summing to at most 1.
    """
    means = np.atleast_2d(np.maximum(np.asarray(means, dtype=float), 0.0))
    weights = np.ones(means.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    overdispersion = np.zeros(means.shape[1]) if overdispersion is None else np.asarray(overdispersion, dtype=float)
    pmf, big_weights, big_means, big_variances = _count_distribution(means, weights / weights.sum(), overdispersion)
    if big_weights.size == 0:
        return pmf
    sd = np.sqrt(big_variances)
    top = int(np.ceil(np.max(big_means + 10.0 * sd)))
    edges = np.arange(top + 2) - 0.5  # count k takes the normal's mass in [k - 1/2, k + 1/2)
    cdf = ndtr((edges[None, :] - big_means[:, None]) / sd[:, None])
    cdf[:, 0] = 0.0  # the mass below 0 at 0
    out = big_weights @ np.diff(cdf, axis=1)
    out[: pmf.size] += pmf
    return out


def missed_count_variance(base: np.ndarray, jump: np.ndarray, level: float, means: np.ndarray,
                          weights: np.ndarray | None = None, overdispersion: np.ndarray | None = None,
                          offset: float = 0.0) -> np.ndarray:
    """Variance of the normal whose ``level`` interval covers ``X + jump (K - offset)`` (module docstring).

    Parameters
    ----------
    base : ndarray (m,)
        Variance of the normal part ``X`` (the labeled items' part of the covariance), per component.
    jump : ndarray (m,)
        Root mean square shift of the estimate by one exception left unlabeled, per component.
    level : float
    means : ndarray (k, B) or (B,)
        The expected exceptions left unlabeled in each of ``B`` parts of the
        pool, under each of ``k`` models of them (one row: the count's mean is known).
    weights : ndarray (k,), optional
        The models' probabilities (default equal).
    overdispersion : ndarray (B,), optional
        ``d_b``: part ``b``'s count has variance ``E K_b (1 + d_b)`` (default 0, Poisson counts).
    offset : float
        The exceptions left unlabeled that the estimate already counts, ``o``
        (:func:`counted_exceptions`, and a difference estimator's prediction).

    Returns
    -------
    ndarray (m,)
        At least ``base``: with no exception expected it is ``base``.
    """
    base = np.maximum(np.asarray(base, dtype=float), 0.0)
    jump = np.abs(np.asarray(jump, dtype=float))
    means = np.atleast_2d(np.maximum(np.asarray(means, dtype=float), 0.0))
    weights = np.ones(means.shape[0]) if weights is None else np.asarray(weights, dtype=float)
    weights = weights / weights.sum()
    overdispersion = np.zeros(means.shape[1]) if overdispersion is None else np.asarray(overdispersion, dtype=float)
    if not np.any(means > 0) or not np.any(jump > 0):
        return base
    pmf, big_weights, big_means, big_variances = _count_distribution(means, weights, overdispersion)
    excess = np.arange(pmf.size) - offset  # K - o
    z = ndtri(0.5 + level / 2)
    out = base.copy()
    for i in np.flatnonzero(jump > 0):  # one root per component
        shifts = jump[i] * excess
        sd = np.sqrt(base[i])
        # a normal count: X + j (K - o) ~ Normal(j (mean - o), base + j^2 variance)
        centres = jump[i] * (big_means - offset)
        spreads = np.sqrt(base[i] + jump[i] ** 2 * big_variances)

        def coverage_gap(h: float, shifts: np.ndarray = shifts, sd: float = sd, centres: np.ndarray = centres,
                         spreads: np.ndarray = spreads) -> float:
            if sd > 0:
                inside = ndtr((h - shifts) / sd) - ndtr((-h - shifts) / sd)
            else:
                inside = (np.abs(shifts) <= h).astype(float)
            normal = ndtr((h - centres) / spreads) - ndtr((-h - centres) / spreads)
            return float(pmf @ inside + big_weights @ normal) - level

        # every count (and every normal component) is covered with probability >= level there
        hi = z * max(sd, float(spreads.max(initial=0.0))) + float(np.abs(shifts).max()) \
            + float(np.abs(centres).max(initial=0.0)) + 1e-300
        out[i] = max((root_of_increasing(coverage_gap, hi) / z) ** 2, base[i])
    return out


def counted_exceptions(moves: np.ndarray, coef: np.ndarray) -> float:
    """``o``: the exceptions left unlabeled that the labeled ones stand for (a Horvitz-Thompson estimate of them).

    A labeled item enters ``N R-hat`` with the coefficient ``c_n`` (its
    design weight in its round plus the weights of the later rounds, where it
    enters at its label); an exception among them counts ``c_n - 1`` beyond
    itself.  Only a label that changes the loss from its group's most likely
    label's is an exception: for precision, a positive among the predicted
    negatives moves nothing and stands for nothing the count misses.

    Parameters
    ----------
    moves : ndarray of bool (n,)
        Whether each labeled item's label is an exception (changes the loss from its group's likeliest label's).
    coef : ndarray (n,)
        ``c_n`` of each labeled item.

    Returns
    -------
    float
    """
    return float(np.sum(np.where(moves, np.asarray(coef, dtype=float) - 1.0, 0.0)))
