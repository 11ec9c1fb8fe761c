"""How many positives there are, and how many are not found yet, from how often each was returned.

The answers to queries are a sample of the positives in which popular ones
come back often; the frequency counts ``f_j`` (number of positives returned
exactly ``j`` times) of that sample are the species-sampling data of
ecology.  Estimators used:

* Good-Turing: the probability that the next answer is a positive never
  returned before is ``f_1 / n`` (Good, "The population frequencies of
  species and the estimation of population parameters", Biometrika 40, 1953,
  Eq. 2.8 with ``r = 0``);
* bias-corrected Chao1 for the number never returned,
  ``f_0 = (n - 1) / n * f_1 (f_1 - 1) / (2 (f_2 + 1))`` (Chao, "Nonparametric
  estimation of the number of classes in a population", Scand. J. Statist.
  11, 1984; the bias-corrected form and its variance from Chao,
  "Species estimation and applications", Encyclopedia of Statistical
  Sciences, 2005, Eq. 5 and its delta-method variance);
* the first-order jackknife ``f_0 = f_1 (n - 1) / n`` (Burnham and Overton,
  Biometrika 65(3), 1978), steadier than Chao1 in small samples without
  doubletons (used for the gains of queries);
* the log-normal interval ``[S + f_0 / K, S + f_0 K]`` with
  ``K = exp(z sqrt(log(1 + var / f_0^2)))`` (Chao, "Estimating the population
  size for capture-recapture data with unequal catchability", Biometrics 43,
  1987, Eq. 13), which never goes below the number already seen.

What they assume: every positive can be returned (positive probability) and
the answers are independent draws by fixed popularity.  Chao1 is then a
lower bound of the number unseen that is nearly unbiased when the positives
not seen yet have similar popularity (it uses only ``f_1`` and ``f_2``, the
information about the rare ones); with strongly skewed popularity (Zipf
exponent near 1 or above) a large share of positives is so rare that the
sample carries no information about them, and the interval under-covers.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

__all__ = ["chao1_unseen", "chao1_variance", "good_turing_unseen", "jackknife_unseen", "remaining_interval"]


def good_turing_unseen(n: np.ndarray, f1: np.ndarray) -> np.ndarray:
    """Good (1953): the probability mass of the positives never returned, ``f_1 / n`` (0 when ``n = 0``)."""
    n = np.asarray(n, dtype=float)
    return np.divide(f1, n, out=np.zeros(np.broadcast(n, f1).shape), where=n > 0)


def chao1_unseen(n: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Bias-corrected Chao1: the number of positives never returned, ``(n-1)/n f_1 (f_1-1) / (2 (f_2+1))``."""
    n = np.asarray(n, dtype=float)
    shrink = np.divide(n - 1, n, out=np.zeros(n.shape), where=n > 0)
    return shrink * f1 * (f1 - 1) / (2.0 * (f2 + 1))


def jackknife_unseen(n: np.ndarray, f1: np.ndarray) -> np.ndarray:
    """First-order jackknife: the number of positives never returned, ``f_1 (n - 1) / n``.

    Burnham and Overton, "Estimation of the size of a closed population when capture probabilities
    vary among animals", Biometrika 65(3), 1978.
    """
    n = np.asarray(n, dtype=float)
    return f1 * np.divide(n - 1, n, out=np.zeros(n.shape), where=n > 0)


def chao1_variance(n: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Delta-method variance of the bias-corrected Chao1 (Chao 2005), vectorized."""
    n = np.asarray(n, dtype=float)
    a = np.divide(n - 1, n, out=np.zeros(n.shape), where=n > 0)
    return (a * f1 * (f1 - 1) / (2 * (f2 + 1)) + a * a * f1 * (2 * f1 - 1) ** 2 / (4 * (f2 + 1) ** 2)
            + a * a * f1 ** 2 * f2 * (f1 - 1) ** 2 / (4 * (f2 + 1) ** 4))


def remaining_interval(counts: np.ndarray, found: int | None = None, level: float = 0.95,
                       strata: np.ndarray | None = None) -> dict:
    """Estimated number of positives not found yet, with Chao's (1987) log-normal interval.

    Parameters
    ----------
    counts : numpy.ndarray
        Times each returned positive was returned (zeros are ignored).
    found : int, optional
        Positives found in total, when some were found outside this sample (default: those in it);
        those count as seen, so the estimate is ``max(0, S + f_0 - found)``.
    level : float
        Interval level.
    strata : numpy.ndarray, optional
        Stratum of each entry of ``counts``: Chao1 is taken in each stratum and the numbers unseen
        and their variances are added (strata sampled at different rates are not pooled).

    Returns
    -------
    dict
        ``total`` (estimated number of positives), ``remaining`` (not found yet) and ``interval``
        (``[low, high]`` of the remaining).
    """
    counts = np.asarray(counts)
    strata = np.zeros(counts.size, dtype=np.int64) if strata is None else np.asarray(strata)
    hit = counts > 0
    _, stratum = np.unique(strata[hit], return_inverse=True)
    c = counts[hit]

    def per_stratum(values: np.ndarray) -> np.ndarray:
        return np.bincount(stratum, weights=values, minlength=stratum.max(initial=-1) + 1)

    n, f1, f2 = per_stratum(c), per_stratum(c == 1), per_stratum(c == 2)
    seen = float(c.size)
    found = int(seen) if found is None else int(found)
    unseen = float(chao1_unseen(n, f1, f2).sum())
    if unseen > 0:
        z = norm.ppf(0.5 + level / 2)
        spread = np.exp(z * np.sqrt(np.log1p(float(chao1_variance(n, f1, f2).sum()) / unseen ** 2)))
        low, high = seen + unseen / spread, seen + unseen * spread
    else:  # no stratum with two singletons: the sample shows no unseen positive
        low = high = seen
    total = max(seen + unseen, found)
    return {"total": total, "remaining": total - found,
            "interval": [max(low - found, 0.0), max(high - found, 0.0)]}
