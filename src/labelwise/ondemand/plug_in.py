"""The planner's plug-in probability that an unverified instance is correct.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3,
choose a new system's draws from a variance that depends on the labels
:math:`f(x)`; before drawing, an unverified :math:`f(x)` is replaced by a
probability :math:`\\hat f(x)` (:mod:`~labelwise.ondemand.planning`). Labels
reused from earlier systems fall where those systems reach, so the new
system's output :math:`X_i` is stratified by which earlier sampled systems
predict an instance: within a stratum every instance was equally likely to be
drawn (uniform draws), and its verified labels are a random sample of it. A
stratum's unverified instances get its rate shrunk toward the system's, and
the system's rate is that of its labeled strata weighted by their sizes,
shrunk toward the prior: two levels of pseudo-counts (a hierarchical
beta-binomial mean; Gelman et al., *Bayesian Data Analysis*, 3rd ed., 2013,
Sec. 5.3). Shrinking every stratum to the prior instead pulled a
high-precision near-copy, whose strata hold a few labels each, toward 1/2:
its planned interval was that of a 0.90-precision system where the truth is
0.95, and it was bought twice the draws it needed. The stratum no earlier
sampled system predicts (a near-copy's swapped outputs, of another kind: on
the benchmark corpus 0 to 0.25 correct where the rest of the copy is 0.4 to
0.96) is shrunk toward the prior, as before.
"""

from __future__ import annotations

import numpy as np

__all__ = ["stratified_plug_in"]


def stratified_plug_in(labels: np.ndarray, covered_by: np.ndarray, prior: float, strength: float) -> np.ndarray:
    """:math:`\\hat f` on one system's output: its known labels, else its stratum's shrunk rate.

    With :math:`c_s` of the :math:`v_s` verified instances of stratum :math:`s` (of :math:`N_s`) correct and
    :math:`k` = ``strength``: the system's rate :math:`\\bar\\pi = (V\\pi_L + k\\,\\text{prior})/(V + k)`,
    :math:`V = \\sum_s v_s`, :math:`\\pi_L = \\sum_{v_s > 0} N_s c_s/v_s \\big/ \\sum_{v_s > 0} N_s`
    (the prior when nothing is verified), both over the strata some earlier system predicts, and an
    unverified instance of such a stratum gets :math:`(c_s + k\\bar\\pi)/(v_s + k)`; of the stratum none
    predicts, :math:`(c_s + k\\,\\text{prior})/(v_s + k)`.

    Parameters
    ----------
    labels : ndarray of int, shape (M,)
        Per instance of the output: 1 correct, 0 wrong, -1 not verified.
    covered_by : ndarray of bool, shape (M, s)
        Whether each earlier sampled system predicts the instance (the strata are its distinct rows).
    prior : float
        Probability of being correct with nothing verified.
    strength : float
        Pseudo-count :math:`k` of each level of shrinkage.

    Returns
    -------
    ndarray, shape (M,)
    """
    labels = np.asarray(labels)
    seen = labels >= 0
    rows, stratum = (np.unique(covered_by, axis=0, return_inverse=True) if covered_by.size
                     else (np.zeros((1, 0), dtype=bool), np.zeros(labels.size, dtype=np.int64)))
    stratum = stratum.ravel()
    covered = rows.any(axis=1)
    size = np.bincount(stratum, minlength=covered.size)
    correct = np.bincount(stratum[seen], weights=labels[seen], minlength=size.size)
    verified = np.bincount(stratum[seen], minlength=size.size)
    labeled = (verified > 0) & covered
    rate = np.divide(correct, verified, out=np.zeros(size.size), where=labeled)
    level = (size[labeled] @ rate[labeled]) / size[labeled].sum() if labeled.any() else prior
    total = verified[covered].sum()
    toward = np.where(covered, (total * level + strength * prior) / (total + strength), prior)
    return np.where(seen, labels, ((correct + strength * toward) / (verified + strength))[stratum])
