"""Stopping and certifying on the anytime-valid confidence sequence.

Because the sequence of :mod:`labelwise.anytime.session` holds uniformly
over batches (Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024, sec. 3), a rule that looks at it after
every batch and stops when it is narrow enough, or when it clears a
threshold, keeps its level: the stopped interval covers with probability
at least ``level`` and a verdict of :func:`certify` is wrong with
probability at most ``1 - level``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..estimators import Estimate
from ..measures import Measure
from ..progress import progress_bar
from .session import anytime_estimate, anytime_path

if TYPE_CHECKING:
    from ..session import Session

__all__ = ["Certificate", "anytime_half_width", "certify", "half_width_reached", "run_until"]

# the latest answer of half_width_reached per session: (labels, draws, half-width) -> reached
_reached: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Certificate:
    """Verdict of a sequential test of ``measure >= threshold``.

    Attributes
    ----------
    verdict : {"certified", "refuted", "undecided"}
        ``certified``: the sequence lies at or above the threshold;
        ``refuted``: below it; ``undecided``: it straddles it.
    component : str
    threshold : float
    lower, upper : float
        The anytime-valid interval of the latest batch.
    labels : int
        Labels used.
    level : float
    emptied : bool
        The component's sequence has excluded every value (the interval is then the whole range).
    """

    verdict: str
    component: str
    threshold: float
    lower: float
    upper: float
    labels: int
    level: float
    emptied: bool

    def to_dict(self) -> dict:
        """JSON fields ``verdict``, ``component``, ``threshold``, ``lower``, ``upper``, ``labels``, ``level``,
        ``emptied``."""
        return asdict(self)


def certify(session: Session, threshold: float, measure: Measure | None = None, component: str | None = None,
            level: float | None = None) -> Certificate:
    """Test whether a component of the measure is at least ``threshold``, validly at any stopping time.

    Parameters
    ----------
    session : Session
    threshold : float
    measure : Measure, optional
        Default: the session's.
    component : str, optional
        Which component (default: the first).
    level : float, optional
        Default: the session's.
    """
    est = anytime_estimate(session, measure, level)
    name = component or est.names[0]
    if name not in est.names:
        raise ValueError(f"component: {name!r} is not one of {', '.join(est.names)}")
    k = est.names.index(name)
    lo, hi = (float(b[k]) for b in est.interval())
    verdict = "certified" if lo >= threshold else "refuted" if hi < threshold else "undecided"
    return Certificate(verdict, name, float(threshold), lo, hi, session.n_labels, est.level,
                       name in getattr(est, "emptied", ()))


def anytime_half_width(session: Session, measure: Measure | None = None, level: float | None = None) -> float:
    """The widest component's half-width of the latest batch's anytime interval (inf before any label)."""
    _, lower, upper, _ = anytime_path(session, measure, level)
    return float(np.max(upper[-1] - lower[-1]) / 2) if lower.shape[0] else np.inf


def run_until(session: Session, oracle: Callable[[np.ndarray], np.ndarray], half_width: float,
              budget: int | None = None, batch_size: int = 50, progress: bool = False) -> Estimate:
    """Label batch by batch until the anytime interval's half-width is at most ``half_width``.

    Stops earlier when ``budget`` labels are in or the pool is exhausted.
    Returns the anytime estimate (:func:`~labelwise.anytime.session.anytime_estimate`).
    """
    if half_width <= 0:
        raise ValueError(f"until_half_width: must be positive, got {half_width}")
    limit = session.pool.n_items if budget is None else budget
    with progress_bar(progress, limit, "labeling", session.n_labels) as update:
        while session.n_labels < limit and anytime_half_width(session) > half_width:
            ids = session.next_batch(min(batch_size, limit - session.n_labels))
            if len(ids) == 0:
                break
            session.add_labels(ids, oracle(ids), source="oracle")
            update(session.n_labels)
    return anytime_estimate(session)


def half_width_reached(session: Session, half_width: float) -> bool:
    """Whether the anytime interval's half-width is at most ``half_width`` (the ``serve`` stop rule).

    Remembered per session until its labels or draws change.
    """
    key = (session.n_labels, len(session.draws), half_width)
    known = _reached.get(session)
    if known is None or known[0] != key:
        known = _reached[session] = (key, anytime_half_width(session) <= half_width)
    return known[1]
