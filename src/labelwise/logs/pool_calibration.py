"""Recalibrate a pool's probabilities from a session's labels, each weighted by its design weight.

A session's design draws items with unequal probabilities (importance
sampling favours the items its prior calls uncertain or positive), so its
labels are not a sample of the pool: each labeled draw stands for
``Draws.weight`` pool items (``p(x)/q(x)``, or one over the inclusion
probability), times the identical draws it aggregates.  Weighted by that, the
control points of the calibration (:func:`~labelwise.logs.calibration.fit_calibration`)
are ratio estimates of the pool's within-bin means, the same correction as
``w(l, r)`` for a subsampled log.  Each bin's rate is shrunk toward the
bin's mean probability by as much as its effective number of labels allows
(a Beta prior centred on the raw probabilities, its strength by marginal
likelihood): the pool's probabilities are the prior the labels correct, and
where they are few (the tail of a rare pool) they correct little.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from .calibration import (
    Calibrator,
    cross_validated_ece,
    expected_calibration_error,
    fit_calibration,
)

if TYPE_CHECKING:
    from ..pool import Pool
    from ..session import Session

__all__ = ["calibrate_pool", "check_calibratable", "labeled_design_weights"]


def labeled_design_weights(session: Session) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every answer of the session's labeled draws: its item, its label and the pool items it stands for.

    Draws of excluded items are left out.  A draw answered ``k`` times (stochastic oracle) gives ``k``
    answers sharing its weight.

    Returns
    -------
    items : ndarray of int
        Pool positions.
    labels : ndarray of int
    weight : ndarray of float
        ``Draws.weight * Draws.count``, shared among the draw's answers.
    """
    sample = session.sample()
    draws = sample.draws
    rows, labels = np.arange(len(draws)), np.asarray(sample.labels, dtype=np.int64)
    if sample.answers is not None:
        rows = np.r_[rows, sample.answers[0]]
        labels = np.r_[labels, sample.answers[1]]
    share = 1.0 / np.bincount(rows, minlength=len(draws))[rows]
    weight = (draws.weight * draws.count)[rows] * share
    keep = np.ones(rows.size, bool) if sample.excluded is None else ~sample.excluded[rows]
    return draws.items[rows][keep], labels[keep], weight[keep]


def check_calibratable(pool: Pool) -> None:
    """Raise ``ValueError`` unless ``pool`` is binary with probabilities (what :func:`calibrate_pool` recalibrates).
    """
    if pool.n_classes != 2:
        kind = f"multi-label ({len(pool.label_names)} labels)" if pool.label_names else \
            f"multi-class ({pool.n_classes} classes)"
        raise ValueError(f"calibrate: the session's pool is {kind}; calibrate handles binary pools only (one "
                         "probability p(y=1|x) per system); the model-based designs (online-poisson, importance) "
                         "temperature-scale a multi-class pool's probabilities to the labels themselves")
    if pool.probs is None:
        raise ValueError("calibrate: the session's pool has no probabilities (a prob column, p(y=1|x)) to calibrate; "
                         "start a session from a pool file with one (--prob-col)")


def calibrate_pool(session: Session, *, method: str = "spline", n_bins: int = 10,
                   weighted: bool = True, shrink: bool = True, folds: int = 5) -> tuple[Pool, list[dict]]:
    """The session's pool with every system's probabilities recalibrated from the session's labels.

    Parameters
    ----------
    session : Session
        A session over a binary pool with probabilities and some labels.
    method : {"spline", "isotonic"}
    n_bins : int
        Bins of the spline.
    weighted : bool
        Weight each label by its design weight (:func:`labeled_design_weights`);
        ``False`` treats the labels as a sample of the pool (biased under any
        design but ``passive``).
    shrink : bool
        Shrink each bin's rate toward its mean probability, by as much as the
        labels allow (:func:`~labelwise.logs.calibration.fit_calibration`), so
        that a bin whose few labels hold no positive keeps about its raw rate.
        ``False`` takes the bins' label means as they are: a tail bin without
        a positive then gets probability exactly 0, which a few hundred labels
        cannot show of a tail whose rate is 1 in 10,000.
    folds : int
        Folds of ``ece_after_cv``.

    Returns
    -------
    pool : Pool
        A copy with calibrated ``probs``.
    report : list of dict
        Per system: ``system``, ``ece_before`` and ``ece_after`` (the expected
        calibration error over the labels, design-weighted when ``weighted``;
        ``ece_after`` on the labels the map was fitted to, so optimistic),
        ``ece_after_cv`` (the same error of maps fitted without the labels they
        are judged on: :func:`~labelwise.logs.calibration.cross_validated_ece`),
        ``prior_strength`` (the shrinkage's ``s``, None without it) and
        ``certain_share``: the share of the pool's items given a probability of
        exactly 0 or 1 (with ``shrink`` only those whose probability was).
        A model reading such a probability takes the item as surely negative
        (positive).
    """
    pool = session.pool
    check_calibratable(pool)
    items, labels, weight = labeled_design_weights(session)
    if items.size == 0:
        raise ValueError("calibrate: the session has no labels yet; label some items first (`labelwise label`)")
    weight = weight if weighted else np.ones_like(weight)
    probs = np.array(pool.probs, dtype=float)
    fit = {"method": method, "n_bins": n_bins, "score_range": (0.0, 1.0), "reward_range": (0.0, 1.0),
           "shrink": shrink}
    report = []
    for s, name in enumerate(pool.system_names):
        calibrator: Calibrator = fit_calibration(probs[items, s], labels, weight, **fit)
        calibrated = calibrator(probs[:, s])
        report.append({"system": name,
                       "ece_before": expected_calibration_error(probs[items, s], labels, weight),
                       "ece_after": expected_calibration_error(calibrated[items], labels, weight),
                       "ece_after_cv": cross_validated_ece(probs[items, s], labels, weight, folds=folds, **fit),
                       "prior_strength": calibrator.strength,
                       "certain_share": float(np.mean((calibrated == 0.0) | (calibrated == 1.0)))})
        probs[:, s] = calibrated
    return replace(pool, probs=probs), report
