"""How many positives there are, and how many are not found yet, from how often each was returned.

The answers to queries are a sample of the positives in which popular ones
come back often; the frequency counts ``f_j`` (number of positives returned
exactly ``j`` times) of that sample are the species-sampling data of
ecology.  Estimators used:

* Good-Turing: the probability that the next answer is a positive never
  returned before is ``f_1 / n`` (Good, "The population frequencies of
  species and the estimation of population parameters", Biometrika 40, 1953,
  Eq. 2.8 with ``r = 0``), and the sample coverage with its doubleton
  correction ``1 - f_1 / n ((n - 1) f_1 / ((n - 1) f_1 + 2 f_2))`` (Chao and
  Jost, "Coverage-based rarefaction and extrapolation", Ecology 93(12), 2012,
  Eq. 4a);
* bias-corrected Chao1 for the number never returned,
  ``f_0 = (T - 1) / T * f_1 (f_1 - 1) / (2 (f_2 + 1))`` (Chao, "Nonparametric
  estimation of the number of classes in a population", Scand. J. Statist.
  11, 1984; the bias-corrected form and its variance from Chao, "Species
  estimation and applications", Encyclopedia of Statistical Sciences, 2005,
  Eq. 5), with ``T`` the sampling units: ``T = n`` for answers drawn one by
  one (abundance data), the number of queries when each query returns
  distinct positives (incidence data, Chao2);
* iChao1, which adds what the tripletons and quadrupletons say about the
  rare positives when their popularity is unequal, ``(T - 3) / (4 T) f_3 / f_4
  max(f_1 - (T - 3) / (2 (T - 1)) f_2 f_3 / f_4, 0)`` (``f_4`` taken as 1 when 0;
  Chiu, Wang, Walther and Chao, "An improved nonparametric lower bound of
  species richness via a modified Good-Turing frequency formula", Biometrics
  70(3), 2014), its variance by the delta method with Poisson frequency
  counts;
* the squared coefficient of variation of the detection rates of the rare
  positives (those returned at most 10 times), ``gamma^2`` of Chao and Lee,
  "Estimating the number of classes via sample coverage", JASA 87, 1992,
  Eq. 2.12: 0 when the rare positives are equally popular;
* the first-order jackknife ``f_0 = f_1 (n - 1) / n`` (Burnham and Overton,
  Biometrika 65(3), 1978), steadier than Chao1 in small samples without
  doubletons (used for the gains of queries).

All of them are lower bounds of the number never returned when popularity
varies: nothing in a sample tells how many positives are too rare to have
been returned at all.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RARE", "chao1_unseen", "chao1_variance", "good_turing_unseen", "ichao1", "jackknife_unseen",
           "rare_cv2", "sample_coverage"]

RARE = 10  # Chao and Lee (1992): positives returned at most this often form the rare group


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` where ``den > 0``, else 0 (arrays broadcast together)."""
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    return np.divide(num, den, out=np.zeros(num.shape), where=den > 0)


def good_turing_unseen(n: np.ndarray, f1: np.ndarray) -> np.ndarray:
    """Good (1953): the probability mass of the positives never returned, ``f_1 / n`` (0 when ``n = 0``)."""
    return _ratio(f1, n)


def sample_coverage(n: float, f1: float, f2: float) -> float:
    """Chao and Jost (2012), Eq. 4a: the share of the answers that are positives already returned (1 if none)."""
    if n <= 0 or f1 <= 0:
        return 1.0
    denominator = (n - 1) * f1 + 2 * f2
    shrink = (n - 1) * f1 / denominator if denominator > 0 else 1.0  # one answer, a singleton: Good-Turing's 1 - f1/n
    return float(1.0 - f1 / n * shrink)


def chao1_unseen(n: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Bias-corrected Chao1: the number never returned, ``(n-1)/n f_1 (f_1-1) / (2 (f_2+1))``."""
    return _ratio(np.asarray(n, dtype=float) - 1, n) * f1 * (f1 - 1) / (2.0 * (f2 + 1))


def jackknife_unseen(n: np.ndarray, f1: np.ndarray) -> np.ndarray:
    """First-order jackknife: the number of positives never returned, ``f_1 (n - 1) / n``.

    Burnham and Overton, "Estimation of the size of a closed population when capture probabilities
    vary among animals", Biometrika 65(3), 1978.
    """
    return f1 * _ratio(np.asarray(n, dtype=float) - 1, n)


def chao1_variance(n: np.ndarray, f1: np.ndarray, f2: np.ndarray) -> np.ndarray:
    """Delta-method variance of the bias-corrected Chao1 (Chao 2005), vectorized."""
    a = _ratio(np.asarray(n, dtype=float) - 1, n)
    return (a * f1 * (f1 - 1) / (2 * (f2 + 1)) + a * a * f1 * (2 * f1 - 1) ** 2 / (4 * (f2 + 1) ** 2)
            + a * a * f1 ** 2 * f2 * (f1 - 1) ** 2 / (4 * (f2 + 1) ** 4))


def ichao1(units: float, f: np.ndarray) -> tuple[float, float]:
    """iChao1 (Chiu et al. 2014) of the number never returned, and its delta-method variance.

    Parameters
    ----------
    units : float
        Sampling units ``T`` (answers for abundance data, queries for incidence data).
    f : numpy.ndarray
        Frequency counts ``f_1, f_2, f_3, f_4`` (at least four entries; more are ignored).

    Returns
    -------
    f0, variance : float
        Bias-corrected Chao1 plus the iChao1 term; the variance treats the ``f_j`` as independent
        Poisson counts (Chao 2005 for the Chao1 part).
    """
    f1, f2, f3, f4 = (float(x) for x in f[:4])
    base, variance = float(chao1_unseen(units, f1, f2)), float(chao1_variance(units, f1, f2))
    if units <= 3:
        return base, variance
    c, d, q4 = (units - 3) / (4 * units), (units - 3) / (2 * (units - 1)), max(f4, 1.0)
    excess = f1 - d * f2 * f3 / q4  # 0 in expectation when the rare positives are equally popular
    if excess <= 0:
        return base, variance
    a = (units - 1) / units
    # gradient of the whole estimate in f1 .. f4 (the Chao1 part's own terms are in chao1_variance)
    g1 = c * f3 / q4
    g2 = -c * d * f3 ** 2 / q4 ** 2
    g3 = c / q4 * (excess - d * f2 * f3 / q4)
    g4 = -c * f3 / q4 ** 2 * (excess - d * f2 * f3 / q4) if f4 >= 1 else 0.0
    chao_g1, chao_g2 = a * (2 * f1 - 1) / (2 * (f2 + 1)), -a * f1 * (f1 - 1) / (2 * (f2 + 1) ** 2)
    variance += (f1 * (g1 ** 2 + 2 * g1 * chao_g1) + f2 * (g2 ** 2 + 2 * g2 * chao_g2) + f3 * g3 ** 2
                 + f4 * g4 ** 2)
    return base + c * f3 / q4 * excess, variance


def rare_cv2(f: np.ndarray) -> float:
    """Chao and Lee (1992): squared CV of the detection rates of the positives returned at most ``RARE`` times.

    ``f`` holds ``f_1 .. f_RARE``.  0 when nothing or only singletons were returned (no evidence either way).
    """
    j = np.arange(1, RARE + 1)
    seen, n = float(f.sum()), float((j * f).sum())
    coverage = 1.0 - float(f[0]) / n if n > 0 else 0.0
    if coverage <= 0 or n <= 1:
        return 0.0
    return max(seen / coverage * float((j * (j - 1) * f).sum()) / (n * (n - 1)) - 1.0, 0.0)
