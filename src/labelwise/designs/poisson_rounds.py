"""One round of online Poisson sampling: the inclusion probability per group and how many members each gives.

:class:`~labelwise.designs.online_poisson.OnlinePoissonSampler` on an
in-memory pool and :class:`~labelwise.engines.online.BlockRounds` on an engine
pool plan their rounds with these functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .poisson import defensive_deviations, inclusion_probabilities

if TYPE_CHECKING:
    from .online_poisson import OnlinePoissonDesign

__all__ = ["COMMON_EXCEPTIONS", "DEVIATIONS", "ORDERS", "group_scores", "round_deviations", "round_inclusion",
           "systematic_counts"]

#: The deviations of :class:`~labelwise.designs.online_poisson.OnlinePoissonDesign` (``deviation``).
DEVIATIONS = ("auto", "mean", "rms")
#: The orders a round's groups are drawn in by :func:`systematic_counts` (``order``): by score or at random.
ORDERS = ("score", "random")
#: Expected share of exceptions among the unlabeled items from which ``deviation="auto"`` takes the root mean
#: square: between the error rates of the 1:1000 pools of ``benchmarks/robustness.py`` (0.08-0.18%: one minus
#: the true accuracy of its accuracy grid), where the square root cost the intervals their coverage (0.87-0.92),
#: and of its 5% pools (0.86-4.8%), where it took accuracy's MSE on the weak ones from 1.1-3.5 times uniform
#: sampling's to 0.5-0.7 (``benchmarks/RESULTS.md``, "Variants of a design on chosen pools: `rms_accuracy`" and
#: `rms_f1`; on the strong 5% pools the two are within 0.85-1.3 of each other). The recalibrated model's share
#: on the strong 5% pools (true error 0.86%) lies near the threshold, so their rounds may take either.
COMMON_EXCEPTIONS = 0.004


def _round_variance(b: np.ndarray, unlabeled: np.ndarray, pi: np.ndarray, inf_g: np.ndarray) -> float:
    """The oracle model's variance of a round's total with inclusion ``b`` per group (Yilmaz et al. 2021,
    eq. 25): ``sum_g U_g (1/b_g - 1) E_pi ||u||^2``."""
    live = unlabeled > 0
    second = np.sum(pi.T * inf_g, axis=0)[live]
    return float(np.sum(unlabeled[live] * (1.0 / b[live] - 1.0) * second))


def round_deviations(deviation: str, pi: np.ndarray, inf_g: np.ndarray, unlabeled: np.ndarray) -> np.ndarray:
    """Each group's deviation ``h``, ``(G,)``: ``E_pi ||Dg l||`` (``"mean"``), ``sqrt(E_pi ||Dg l||^2)``
    (``"rms"``), or for ``"auto"`` the latter when the expected share of exceptions (labels other than their
    group's most likely one) among the ``unlabeled`` members is at least :data:`COMMON_EXCEPTIONS`, the former
    otherwise (``pi``: posterior ``(G, C)``, ``inf_g``: each label's squared influence ``(C, G)``)."""
    if deviation == "auto":
        exceptions = np.sum(unlabeled * (1.0 - pi.max(axis=1))) / max(float(np.sum(unlabeled)), 1.0)
        deviation = "rms" if exceptions >= COMMON_EXCEPTIONS else "mean"
    if deviation == "rms":
        return np.sqrt(np.maximum(np.sum(pi.T * inf_g, axis=0), 0.0))
    return np.sum(pi.T * np.sqrt(np.maximum(inf_g, 0.0)), axis=0)


def round_inclusion(design: OnlinePoissonDesign, pi: np.ndarray, inf_g: np.ndarray, unlabeled: np.ndarray,
                    n_new: int) -> np.ndarray:
    """A round's inclusion probability of an unlabeled member of each group, ``(G,)``.

    The water-filling of Yilmaz et al. (2021) Algorithm 3 on the deviations
    of ``design.round_deviation`` (:func:`round_deviations`; ``pi``: posterior
    ``(G, C)``, ``inf_g``: each label's squared influence ``(C, G)``) mixed with
    ``design.defensive``, or uniform when the model expects no gain from
    adapting (``design.hedge``); groups without an unlabeled member get 1
    (never used).
    """
    U = unlabeled
    h_group = round_deviations(design.round_deviation, pi, inf_g, U)
    b_group = inclusion_probabilities(defensive_deviations(h_group, design.defensive, U), n_new, counts=U)
    uniform = np.full_like(b_group, n_new / U.sum())
    if _round_variance(b_group, U, pi, inf_g) >= design.hedge * _round_variance(uniform, U, pi, inf_g):
        b_group = uniform  # the model promises too little gain from adapting: this round is uniform
    b_group[U == 0] = 1.0  # groups with no unlabeled member are never used
    return b_group


def group_scores(pi: np.ndarray) -> np.ndarray | None:
    """The score :func:`systematic_counts` orders a round's groups by from the model's posterior ``pi`` ``(G, C)``:
    the probability of a positive on a binary pool; ``None`` (random order) on a multi-class pool, where the order
    by most likely class and then confidence tripled accuracy's MSE at 500 labels on the rare 3-class pool of
    ``benchmarks/multiclass_default.py``."""
    return pi[:, 1] if pi.shape[1] == 2 else None


def systematic_counts(expected: np.ndarray, rng: np.random.Generator, scores: np.ndarray | None = None) -> np.ndarray:
    """How many members each group gives to a round: randomised systematic sampling of the groups.

    The groups are put in random order, or in increasing ``scores`` (ties in
    random order), and group ``g`` gives the number of points ``u, u + 1,
    u + 2, ...`` (``u`` uniform on [0, 1)) its stretch of the cumulative
    ``expected`` holds: a count of mean ``expected[g]`` whatever the order,
    which differs from it by less than 1, and ``sum expected`` (rounded) in
    all.  Drawn from ``rng`` by one permutation and one uniform.

    In score order the round is implicitly stratified (Cochran, *Sampling
    Techniques*, 3rd ed., Wiley 1977, ch. 8): any run of consecutive
    groups holding ``E`` expected members gives ``floor(E)`` or
    ``ceil(E)`` of them, so a round of equal inclusion probabilities is a
    proportional stratified sample over the score order, and the variance
    between score strata leaves the round's total as it does under
    proportional stratification.  Each group's mean count, hence every
    item's inclusion probability, is the same as in random order.
    """
    order = rng.permutation(expected.size)
    if scores is not None:
        order = order[np.argsort(scores[order], kind="stable")]
    cum = np.cumsum(expected[order])
    u = rng.random()
    counts = np.zeros(expected.size, dtype=np.int64)
    counts[order] = (np.floor(cum - u) - np.floor(np.concatenate([[0.0], cum[:-1]]) - u)).astype(np.int64)
    return counts
