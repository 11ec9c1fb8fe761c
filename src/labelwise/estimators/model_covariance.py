"""Covariances of design-based estimators as an oracle model sees them, and the mixture interval.

An *exception* is an unlabeled item whose label is not its group's most
likely one and changes ``Dg l`` (a positive in a tail of negatives).  The
oracle model's full variance averages over the likely case of no exception
and the rare case that one is drawn with a huge weight;
:func:`mixture_variance` turns the three cases into one variance whose normal
interval covers them at the nominal level.  The split is labelwise's own;
the plug-in is that of Marchant & Rubinstein, "Needle in a Haystack:
Label-Efficient Evaluation under Extreme Class Imbalance" (KDD 2021, sec.
3.3.2), the full variance that of Yilmaz et al., "Sample Efficient Model
Evaluation" (2021, eq. 25).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

# scipy.special, not scipy.stats and scipy.optimize (1.3 s to import)
from scipy.special import ndtr, ndtri

if TYPE_CHECKING:  # missed_value builds on missed, which builds on this module
    from .missed_value import MissedErrors

__all__ = ["ModelCovariance", "exception_jump", "exception_shifts", "exception_terms", "larger_variance",
           "missed_square", "mixture_variance", "model_interval_covariance", "model_second_moment",
           "proposal_model_covariance", "root_of_increasing", "unlabeled_proposal_sums"]


def exception_shifts(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray,
                     n_items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each group's most likely ``u``, how far each other label would shift the estimate, and how often.

    Parameters
    ----------
    u : ndarray (C, G, m)
        ``Dg(R) l`` of a group's items for each label.
    pi : ndarray (G, C)
        Posterior label distribution of a group's unlabeled items.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    n_items : int

    Returns
    -------
    u_mode : ndarray (G, m)
        ``u`` at each group's most likely label.
    shift : ndarray (G, C, m)
        ``(u_c - u_mode) / N``: how far an unlabeled item of label ``c`` is from its group's mode in ``Dg R``.
    expected : ndarray (G, C)
        Expected number of exceptions per group and label: unlabeled items whose label is not the
        most likely one and changes ``u``.
    """
    G = pi.shape[0]
    u_mode = u[np.argmax(pi, axis=1), np.arange(G)]
    shift = (u - u_mode[None]).transpose(1, 0, 2) / n_items  # (G, C, m)
    return u_mode, shift, unlabeled[:, None] * pi * np.any(shift != 0, axis=2)


def exception_terms(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray, n_items: int,
                    predicted: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What unlabeled items whose label is not their group's most likely one can do to an estimate.

    Parameters
    ----------
    u, pi, unlabeled, n_items
        As :func:`exception_shifts`.
    predicted : float in [0, 1]
        Share of the expected exceptions the estimator already counts (a
        difference estimator predicting ``beta`` times the posterior mean's
        move from the mode): of their mean, only the rest is missed.

    Returns
    -------
    u_mode : ndarray (G, m)
        ``u`` at each group's most likely label.
    exceptions : ndarray (G,)
        Expected number of exceptions per group (:func:`exception_shifts`).
    miss : ndarray (m,)
        Mean square of the shift of ``Dg R-hat`` if none of them is ever
        sampled: each shifts it by ``-(u_c - u_mode) / N``.
    """
    u_mode, shift, expected = exception_shifts(u, pi, unlabeled, n_items)
    return u_mode, expected.sum(axis=1), missed_square(shift, expected, predicted)


def missed_square(shift: np.ndarray, expected: np.ndarray, predicted: float = 0.0) -> np.ndarray:
    """Mean square of the shift of ``Dg R-hat`` by the exceptions never sampled, ``(m,)``.

    ``shift`` and ``expected`` as returned by :func:`exception_shifts`, ``predicted`` as in :func:`exception_terms`.
    """
    # Poisson counts: the variance of the missed sum, plus the square of the part of its mean not predicted
    return (np.einsum("gc,gcm->m", expected, shift**2)
            + ((1.0 - predicted) * np.einsum("gc,gcm->m", expected, shift)) ** 2)


def exception_jump(shift: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Root mean square shift of one exception, ``(m,)``: ``jump^2`` times their count is the missed sum's variance.

    ``shift`` and ``expected`` as returned by :func:`exception_shifts`; zeros when no exception is expected.
    """
    total = expected.sum()
    return np.sqrt(np.einsum("gc,gcm->m", expected, shift**2) / total) if total > 0 else np.zeros(shift.shape[2])


class ModelCovariance(NamedTuple):
    """The AIS estimator's covariance as the oracle model sees it (deterministic oracle).

    An *exception* is an unlabeled item whose label ``c`` is not its
    group's most likely one and changes ``Dg l`` (a positive in a tail of
    negatives).

    Attributes
    ----------
    full : ndarray (m, m)
        Per-draw covariance of ``w Dg l``, averaged over stages, with every
        unlabeled item at its posterior label distribution.
    modal : ndarray (m, m)
        The same with every unlabeled item at its most likely label.
    miss : ndarray (m,)
        Mean square of the shift of ``Dg R-hat`` from exceptions never
        drawn: each shifts it by ``-(u_c - u_mode) / N``.
    exceptions : float
        Expected number of exceptions.
    hits : float
        Expected number of draws so far that would have hit an exception.
    jump : ndarray (m,), optional
        Root mean square shift of ``Dg R-hat`` by one exception never drawn (:func:`exception_jump`).
    """

    full: np.ndarray
    modal: np.ndarray
    miss: np.ndarray
    exceptions: float
    hits: float
    jump: np.ndarray | None = None


def model_second_moment(inv_q_groups: np.ndarray, S: np.ndarray, inv_q_labeled: np.ndarray,
                        u_labeled: np.ndarray) -> np.ndarray:
    """``sum_x E_pi[u_x u_x^T] / q(x)`` for a proposal ``q``: unlabeled items by group, labeled ones at their labels.

    Parameters
    ----------
    inv_q_groups : ndarray (G,)
        Sum of ``1 / q(x)`` over each group's unlabeled items.
    S : ndarray (k, G, m, m)
        ``E_pi[u u^T]`` of an unlabeled member of each group, for ``k`` models of the labels at once.
    inv_q_labeled : ndarray (L,)
        ``1 / q(x)`` of each labeled item.
    u_labeled : ndarray (L, m)
        ``u = Dg l`` of each labeled item at its label.

    Returns
    -------
    ndarray (k, m, m)
    """
    return (np.einsum("g,kgij->kij", inv_q_groups, S)
            + np.einsum("l,li,lj->ij", inv_q_labeled, u_labeled, u_labeled)[None])


def unlabeled_proposal_sums(inv_q_groups: np.ndarray, q_groups: np.ndarray, unlabeled: np.ndarray,
                            labeled_groups: np.ndarray, q_labeled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums of ``1 / q(x)`` and of ``q(x)`` over each group's unlabeled items: every member's less the labeled ones'.

    Parameters
    ----------
    inv_q_groups, q_groups : ndarray (G,)
        Sums of ``1 / q`` and of ``q`` over every member of each group.
    unlabeled : ndarray (G,)
        Unlabeled items per group (a group with none has no sums left, but rounding).
    labeled_groups : ndarray (L,)
        Group of each labeled item.
    q_labeled : ndarray (L,)
        Proposal probability of each labeled item.
    """
    G, live = inv_q_groups.size, unlabeled > 0
    inv_q = np.where(live, inv_q_groups - np.bincount(labeled_groups, 1.0 / q_labeled, G), 0.0)
    q = np.where(live, q_groups - np.bincount(labeled_groups, q_labeled, G), 0.0)
    return np.maximum(inv_q, 0.0), np.maximum(q, 0.0)


def proposal_model_covariance(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray, inv_q_groups: np.ndarray,
                              q_groups: np.ndarray, u_labeled: np.ndarray, q_labeled: np.ndarray, r: np.ndarray,
                              n_draws: int, n_items: int) -> ModelCovariance:
    """The covariance of ``w Dg l`` for i.i.d. draws from a fixed proposal ``q``, as the oracle model sees it.

    One draw of the importance-sampling estimator of Marchant & Rubinstein (KDD 2021) eq. (1) has
    covariance ``V = sum_x E[u_x u_x^T] / (N^2 q(x)) - r r^T`` (``u = Dg l``, ``r = Dg R``; sec. 3.3.2
    estimates it from the draws).  Here labeled items enter at their labels and unlabeled ones at the
    model's label distribution of their group: the sample average misses the rare items of small
    ``q`` (positives among the items the scores call negatives) in most runs, the model does not.

    Parameters
    ----------
    u : ndarray (C, G, m)
        ``Dg(R) l`` of a group's items for each label.
    pi : ndarray (G, C)
        Model's label distribution of a group's unlabeled items.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    inv_q_groups, q_groups : ndarray (G,)
        Sums of ``1 / q(x)`` and of ``q(x)`` over each group's unlabeled items.
    u_labeled : ndarray (L, m)
        ``u`` of each labeled item at its label.
    q_labeled : ndarray (L,)
        Proposal probability of each labeled item.
    r : ndarray (m,)
        ``Dg(R) R``.
    n_draws : int
        Draws so far (for the expected number of draws that hit an exception).
    n_items : int

    Returns
    -------
    ModelCovariance
        ``full`` and ``modal`` per draw (divide by the number of draws for the estimator's).
    """
    u_mode, exceptions, miss = exception_terms(u, pi, unlabeled, n_items)
    S = np.stack([np.einsum("gc,cgi,cgj->gij", pi, u, u), np.einsum("gi,gj->gij", u_mode, u_mode)])
    full, modal = model_second_moment(inv_q_groups, S, 1.0 / q_labeled, u_labeled) / n_items**2 - np.outer(r, r)
    # each draw lands on an exception of group g with probability (its exceptions) x (their mean q)
    mean_q = np.divide(q_groups, unlabeled, out=np.zeros_like(q_groups), where=unlabeled > 0)
    return ModelCovariance(full, modal, miss, float(exceptions.sum()), float(n_draws * exceptions @ mean_q))


def mixture_variance(base: np.ndarray, full: np.ndarray, model: ModelCovariance, level: float,
                     missed: MissedErrors | None = None) -> np.ndarray:
    """Variance of the normal whose ``level`` interval matches that of the model's three-case error.

    An exception (see :class:`ModelCovariance`) changes the estimate in one
    of two ways: usually it is never drawn, and the estimate misses its
    small contribution; rarely it is drawn, at the tiny probability the
    proposal of Prop. 2 gives it, and its weight is huge.  The ``full``
    model variance averages over both and over the likely case of no
    exception at all, so its normal interval is far too wide when
    exceptions are unlikely.  With ``K`` exceptions ~ Poisson(``model.exceptions``)
    and ``H`` draws of one ~ Poisson(``model.hits``), the error is taken
    normal with variance

    * ``base`` when ``K = 0``, probability ``exp(-exceptions)``;
    * ``base + miss / P(K > 0)`` when ``K > 0`` and ``H = 0``, probability
      ``exp(-hits) - exp(-exceptions)``;
    * what is left of ``full`` otherwise, probability ``1 - exp(-hits)``
      (so the mixture's variance is ``full``; when surprises are common this
      case carries it all and the interval is ``full``'s).

    The returned variance's normal interval covers this mixture with
    probability ``level`` (cases less likely than ``1 - level`` need no
    cover).  A normal for the last case overstates how far a hit moves the
    estimate most of the time, which can make the interval wider than the
    full variance's; capping it at the full variance's cost coverage where the
    scores understate the positives, and taking the jumps' own distribution
    under-covered (``benchmarks/miscalibrated.py``, ``benchmarks/tail_counterfactual.py``).

    With ``missed`` (:func:`~labelwise.estimators.missed_errors`) the second
    case is the count's own distribution instead, each count ``k`` a normal
    of variance ``base`` around the measure's error ``e(k)`` (no delta method),
    and ``P(K = 0)`` is the count's.
    """
    base = np.maximum(base, 0.0)
    if missed is None:  # one normal: the missed sum's mean square over P(K > 0)
        p_none = float(np.exp(-max(model.exceptions, 0.0)))
        given = np.ones(1)  # K's distribution given K > 0, one case
        shifts = np.zeros((1, base.size))
        spreads = (base + model.miss / max(1.0 - p_none, 1e-300))[None]
    else:  # the count's own distribution, each count at the measure's own error
        p_none = float(missed.pmf[0])
        given = missed.pmf[1:] / max(1.0 - p_none, 1e-300)
        shifts = missed.errors[1:]
        spreads = np.broadcast_to(base, shifts.shape)
    p_no_hit = max(float(np.exp(-max(model.hits, 0.0))), p_none)
    p_missed = p_no_hit - p_none
    second = given @ (spreads + shifts**2)  # the missed case's mean square
    # the rest of the full variance goes to the last case (all of it when surprises are common)
    hit = np.maximum((full - p_none * base - p_missed * second) / max(1.0 - p_no_hit, 1e-300), base)
    probs = np.concatenate([[p_none], p_missed * given, [1.0 - p_no_hit]])
    live = probs > 0
    probs = probs[live]
    z = ndtri(0.5 + level / 2)
    out = np.empty_like(base)
    for i in range(base.size):  # one root per component
        sd = np.sqrt(np.concatenate([[base[i]], spreads[:, i], [hit[i]]]))[live]
        mean = np.concatenate([[0.0], shifts[:, i], [0.0]])[live]

        def coverage_gap(h: float, sd: np.ndarray = sd, mean: np.ndarray = mean) -> float:
            scale = np.where(sd > 0, sd, 1.0)
            inside = np.where(sd > 0, ndtr((h - mean) / scale) - ndtr((-h - mean) / scale), np.abs(mean) <= h)
            return float(probs @ inside) - level

        hi = z * sd.max() + np.abs(mean).max()  # every case is covered with probability >= level there
        if coverage_gap(0.0) >= 0:  # the cases that carry the mass have no variance
            out[i] = 0.0
        elif not np.isfinite(hi) or coverage_gap(hi) <= 0:  # all cases alike (up to rounding)
            out[i] = np.max(sd**2 + mean**2)
        else:
            out[i] = (root_of_increasing(coverage_gap, hi) / z) ** 2
    return out


def model_interval_covariance(plugin: np.ndarray, model: ModelCovariance, n_draws: int, level: float,
                              variance: str = "mixture") -> np.ndarray:
    """The covariance behind an importance-sampling interval, from the draws' plug-in and the model's view.

    Parameters
    ----------
    plugin : ndarray (m, m)
        The plug-in covariance of the estimate (Marchant & Rubinstein (KDD 2021) sec. 3.3.2).
    model : ModelCovariance
        The per-draw covariance as the oracle model sees it.
    n_draws : int
    level : float
    variance : {"mixture", "model"}
        ``"model"``: the model's full covariance over ``n_draws``.  ``"mixture"``: the variance of
        :func:`mixture_variance`, its usual case never below the plug-in's or the modal covariance's,
        with the plug-in's correlations.
    """
    full = model.full / n_draws
    if variance == "model":
        return full
    base = np.maximum(np.diag(plugin), np.diag(model.modal) / n_draws)
    return larger_variance(plugin, np.diag(mixture_variance(base, np.diag(full), model, level)))


def root_of_increasing(f, hi: float) -> float:
    """The root in ``[0, hi]`` of an increasing ``f`` with ``f(0) < 0 < f(hi)``, to ``1e-12 hi``, by bisection
    (a few dozen evaluations; scipy.optimize would cost 0.3 s to import in every command)."""
    lo = 0.0
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):  # no float left between them
            break
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def larger_variance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Covariance ``a`` rescaled so each variance is the larger of ``a``'s and ``b``'s.

    Correlations of ``a`` are kept; a component with no variance in ``a`` gets
    ``b``'s variance and no covariance.
    """
    va = np.diag(a)
    target = np.maximum(va, np.diag(b))
    scale = np.sqrt(np.divide(target, va, out=np.zeros_like(va), where=va > 0))
    out = a * scale[:, None] * scale[None, :]
    out[np.diag_indices_from(out)] = target
    return out
