"""Value of a new policy from a log whose zero-reward rows were subsampled (inverse propensity scoring).

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010),
section "Policy Value Estimation".  A logging policy ``p(a|x)`` chose action
``a``, reward ``r(a)`` was observed, and a zero-reward row was kept with
probability ``l``.  With ``y = r(a) pi(a|x) / p(a|x)`` (``pi(a|x) =
1{pi(x) = a}`` for a deterministic policy) and ``w = w(l, r)``
(:func:`~labelwise.logs.weights.keep_weights`), the estimators over the kept
rows ``H~`` are

* ``"eta"``, the blog's modified empirical policy estimator
  ``V = (1/eta(H~)) sum_{H~} y``, ``eta(H~) = sum_{H~} w(l, r)``
  (a ratio: consistent, slightly biased);
* ``"ht"``, Horvitz-Thompson when the number ``N`` of logged rows before
  subsampling is known: ``V = (1/N) sum_{H~} w y``, unbiased because every
  logged row is kept with probability ``1/w``;
* ``"snips"``, self-normalized: ``V = sum_{H~} w y / sum_{H~} w pi/p``.

``w y = y`` (a zero reward has ``y = 0``), so the zero-reward rows enter only
through the normalization.  Clipping replaces ``pi/p`` by ``min(pi/p, M)``.

Variance: the logged rows are i.i.d. and each is kept independently, so a
kept row contributes ``w z`` with ``z`` its linearized value (Horvitz-Thompson
expansion of the i.i.d. sum); the estimated variance is
``sum_{H~} w^2 z^2 / n^2``, with ``z = y - V`` (eta; ``n = eta``),
``z = y - V pi/p`` (snips; ``n = sum w pi/p``) and, for ht,
``(sum_{H~} w^2 y^2 / N - V^2) / N``.  The ``w^2 = 1/l^2`` of a kept zero
is how the dropping process widens the interval: a row standing for ``1/l``
rows brings the variance of its keep-or-drop draw.
"""

from __future__ import annotations

import numpy as np

from ..estimators.intervals import normal_interval
from .result import LogEstimate
from .weights import keep_weights

__all__ = ["POLICY_VALUE_METHODS", "policy_value", "target_probabilities"]

POLICY_VALUE_METHODS = ("eta", "ht", "snips")


def target_probabilities(policy_action, logged_action) -> np.ndarray:
    """``pi(a|x) = 1{pi(x) = a}``: a deterministic policy's probability of each logged action."""
    return (np.asarray(policy_action) == np.asarray(logged_action)).astype(float)


def _logged_rows(n_rows: int, n_logged: int | None, n_dropped: int | None) -> int | None:
    """The number of logged rows before subsampling, from either count (``None`` when neither is known)."""
    if n_logged is not None and n_dropped is not None:
        raise ValueError("n_logged, n_dropped: give one of them (n_logged = kept rows + n_dropped)")
    if n_dropped is not None:
        if n_dropped < 0:
            raise ValueError(f"n_dropped: must be 0 or more, got {n_dropped}")
        return n_rows + int(n_dropped)
    if n_logged is not None and n_logged < n_rows:
        raise ValueError(f"n_logged: {n_logged} logged rows cannot have left {n_rows} kept rows")
    return n_logged


def _check_probabilities(propensity: np.ndarray, target: np.ndarray) -> None:
    for name, values, ok in (("propensity", propensity, (propensity > 0) & (propensity <= 1)),
                             ("target probability", target, (target >= 0) & (target <= 1))):
        if not ok.all():
            row = int(np.argmax(~ok))
            rule = "(0, 1]: a logged action had a chance" if name == "propensity" else "[0, 1]"
            raise ValueError(f"{name}: row {row} is {values[row]!r}; it must lie in {rule}")


def policy_value(reward, propensity, target_prob, keep_rate=1.0, *, method: str | None = None,
                 n_logged: int | None = None, n_dropped: int | None = None, clip: float | None = None,
                 level: float = 0.95) -> LogEstimate:
    """Estimate a policy's expected reward from kept log rows, with an interval.

    Parameters
    ----------
    reward : array_like, shape (n,)
        Observed reward ``r(a)`` of each kept row.
    propensity : array_like, shape (n,)
        ``p(a|x)`` of the logged action, in ``(0, 1]``.
    target_prob : array_like, shape (n,)
        ``pi(a|x)``: the new policy's probability of the logged action
        (:func:`target_probabilities` for a deterministic policy).
    keep_rate : float or array_like, shape (n,)
        Keep rate ``l`` of zero-reward rows, in ``(0, 1]``.
    method : {"eta", "ht", "snips"}, optional
        Default ``"ht"`` when the logged row count is known, else ``"eta"``.
    n_logged, n_dropped : int, optional
        Rows logged before subsampling, or rows dropped (one of the two).
    clip : float, optional
        Upper bound ``M`` on ``pi/p``.
    level : float

    Returns
    -------
    LogEstimate
    """
    reward = np.asarray(reward, dtype=float)
    propensity = np.asarray(propensity, dtype=float)
    target = np.asarray(target_prob, dtype=float)
    if not reward.shape == propensity.shape == target.shape:
        raise ValueError(f"reward, propensity, target_prob: lengths {reward.shape[0]}, {propensity.shape[0]} and "
                         f"{target.shape[0]} differ; give one value per kept row")
    _check_probabilities(propensity, target)
    n_rows = reward.shape[0]
    if n_rows == 0:
        raise ValueError("the log has no rows: nothing to estimate from")
    n_total = _logged_rows(n_rows, n_logged, n_dropped)
    method = method or ("ht" if n_total is not None else "eta")
    if method not in POLICY_VALUE_METHODS:
        raise ValueError(f"method: {method!r} is not one of {', '.join(POLICY_VALUE_METHODS)}")
    if method == "ht" and n_total is None:
        raise ValueError("method ht: needs the logged row count (n_logged or n_dropped)")
    if clip is not None and clip <= 0:
        raise ValueError(f"clip: must be positive, got {clip}")
    w = keep_weights(reward, keep_rate)
    ratio = target / propensity
    if clip is not None:
        ratio = np.minimum(ratio, clip)
    y = reward * ratio
    eta = float(w.sum())
    if method == "ht":
        value = float(w @ y) / n_total
        var = (float(w**2 @ y**2) / n_total - value**2) / n_total
    else:
        norm = eta if method == "eta" else float(w @ ratio)
        value = float(w @ y) / norm
        z = y - value * (1.0 if method == "eta" else ratio)
        var = float(w**2 @ z**2) / norm**2
    lo, hi = normal_interval(value, var, level)
    return LogEstimate(value, float(lo), float(hi), float(level), float(np.sqrt(max(var, 0.0))), n_rows,
                       float(n_total) if method == "ht" else eta, method)
