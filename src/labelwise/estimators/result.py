"""The result of an estimation: a small frozen dataclass that prints well."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..measures import Measure
    from .segment import Segment

__all__ = ["Estimate", "make_estimate"]


@dataclass(frozen=True)
class Estimate:
    """An estimate of a generalized measure with its uncertainty.

    Attributes
    ----------
    names : tuple of str
        One name per component of G.
    value : ndarray, shape (m,)
        Point estimate of G.  Never NaN for bounded measures: a component
        whose estimate is undefined (e.g. F1 before any positive is seen)
        takes the midpoint of its range and ``defined`` is False for it.
    cov : ndarray, shape (m, m)
        Estimated covariance of the estimator (delta method, Marchant & Rubinstein (KDD 2021) 3.3.2).
        Undefined components get the variance of a uniform distribution on
        their range and no covariance with others.
    defined : ndarray of bool, shape (m,)
        False where the estimate is undefined (zero denominator, or no
        variance estimate): its interval is then the whole range.
    lower_bound, upper_bound : ndarray, shape (m,)
        Range of each component.
    n_labels : int
        Distinct items labeled.
    n_draws : int
        Draws used (with-replacement designs draw labeled items again).
    R : ndarray, shape (d,)
        Estimated risk vector R.
    level : float
        Default confidence level of :meth:`interval`.
    posterior : ndarray, shape (k, m), optional
        Draws of G from a posterior (:mod:`~labelwise.estimators.posterior`,
        passive sampling): where given, :meth:`interval` takes its quantiles.
    basis : str
        What the interval rests on, in a sentence for the user (e.g. which
        part comes from a model of the items not labeled yet, and what that
        assumes); empty when it is the design-based normal interval alone.
    totals_cov : ndarray, shape (2, 2), optional
        For a ratio of two totals (F1, precision, recall): the design-based
        covariance of the numerator's and denominator's estimates ``R``
        (:func:`~labelwise.estimators.fieller.with_fieller`).  Where given,
        the ``auto`` interval also holds Fieller's interval
        (:func:`~labelwise.estimators.fieller.fieller_interval`).
    counts : ndarray, shape (m,), optional
        The draws that inform each component (:func:`component_counts`): a
        ratio's are those whose loss enters its numerator or denominator.  A
        Beta interval whose estimate sits on its range's boundary with a zero
        variance is the Jeffreys interval on this many draws (default: all
        ``n_draws``).  :meth:`labelwise.Session.estimate` sets it for designs
        that draw with replacement, where no draw is a census; without
        replacement such an estimate is mostly a census of the component's
        items (every predicted positive labeled), exact.
    zero_hits : ndarray, shape (m, 5), optional
        For a ratio of totals estimated 0 with no hit labeled (no true
        positive): the unlabeled and labeled items of its numerator's support,
        a hit's numerator loss, the smallest denominator total and a hit's rise
        of it (:func:`~labelwise.estimators.zero_hits.with_zero_hits`; NaN rows
        for the other components).  The ``auto`` interval reaches the ratio
        with the hits the unlabeled items may hold at its level
        (:func:`~labelwise.estimators.zero_hits.zero_hits_end`); a census of
        the support (no unlabeled item) has none: its 0 is exact.
    segment : Segment, optional
        For a scalar whose loss totals are all known but one: that total's
        estimate and the measure along it
        (:func:`~labelwise.estimators.segment.with_segment`; NaN rows for
        the other components).  The ``auto`` interval is the measure's
        extremes over the total's interval at the level
        (:func:`~labelwise.estimators.segment.segment_interval`), widened to
        hold the estimate.
    stored_interval : (lower, upper) or None
        The interval at ``level`` (method ``auto``) as computed when the
        estimate was stored in a session file (:meth:`with_stored_interval`):
        :meth:`interval` returns it instead of computing it again, so reading
        a stored estimate needs no scipy.  Not copied by ``dataclasses.replace``.
    """

    names: tuple[str, ...]
    value: np.ndarray
    cov: np.ndarray
    defined: np.ndarray
    lower_bound: np.ndarray
    upper_bound: np.ndarray
    n_labels: int
    n_draws: int
    R: np.ndarray = field(repr=False)
    level: float = 0.95
    posterior: np.ndarray | None = field(default=None, repr=False, compare=False)
    basis: str = field(default="", compare=False)
    totals_cov: np.ndarray | None = field(default=None, repr=False, compare=False)
    counts: np.ndarray | None = field(default=None, repr=False, compare=False)
    zero_hits: np.ndarray | None = field(default=None, repr=False, compare=False)
    segment: Segment | None = field(default=None, repr=False, compare=False)
    stored_interval: tuple[np.ndarray, np.ndarray] | None = field(default=None, init=False, repr=False,
                                                                  compare=False)

    @classmethod
    def undefined(cls, measure: Measure, level: float = 0.95) -> Estimate:
        """The estimate before any label: every component undefined, its interval the whole range."""
        nan = np.full(measure.dim, np.nan)
        return make_estimate(measure, nan, np.full((measure.size, measure.size), np.nan), 0, 0, level)

    def with_stored_interval(self, lower, upper) -> Estimate:
        """This estimate with its interval at ``level`` (method ``auto``) as computed when it was stored."""
        est = replace(self)
        object.__setattr__(est, "stored_interval", (np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)))
        return est

    @property
    def std(self) -> np.ndarray:
        """Standard error of each component."""
        return np.sqrt(np.maximum(np.diag(self.cov), 0.0))

    @property
    def certain_at_boundary(self) -> np.ndarray:
        """Components estimated on a bound of their range with a zero variance: their interval is the Jeffreys
        interval on :attr:`counts` draws (:func:`~labelwise.estimators.intervals.beta_interval`)."""
        on_bound = (self.value == self.lower_bound) | (self.value == self.upper_bound)
        return self.defined & on_bound & (np.diag(self.cov) == 0)

    @property
    def all_defined(self) -> bool:
        return bool(np.all(self.defined))

    def __getitem__(self, name: str) -> float:
        try:
            return float(self.value[self.names.index(name)])
        except ValueError:
            raise KeyError(f"no component {name!r}; components: {self.names}") from None

    def interval(self, level: float | None = None, method: str = "auto") -> tuple[np.ndarray, np.ndarray]:
        """Per-component confidence interval.

        Parameters
        ----------
        level : float, optional
            Confidence level (default ``self.level``).
        method : {"auto", "posterior", "normal", "beta"}
            ``posterior``: the equal-tailed quantiles of :attr:`posterior`,
            widened to hold the estimate itself (an estimate on the boundary
            keeps it, as the Jeffreys interval does).  ``beta`` (Yilmaz et al.
            (2021), 2.2, with the sample-size cap and Jeffreys pseudo-counts of
            :func:`beta_interval`) applies to components with a finite range.
            ``auto``: the posterior where there is one, else ``beta`` on
            bounded components and ``normal`` elsewhere, widened to hold
            Fieller's interval where :attr:`totals_cov` is given and to reach
            the end of :attr:`zero_hits` where given; where :attr:`segment`
            is given, its image of the one uncertain total's interval.

        Returns
        -------
        (lower, upper) : tuple of ndarray, shape (m,)
            Undefined components get their whole range.
        """
        if self.stored_interval is not None and method == "auto" and (level is None or level == self.level):
            return tuple(np.array(b, dtype=float) for b in self.stored_interval)
        # imported here: scipy.special takes 0.3 s, and a stored estimate is printed without it
        from .intervals import beta_interval, normal_interval

        level = self.level if level is None else level
        var = np.diag(self.cov)
        bounded = np.isfinite(self.lower_bound) & np.isfinite(self.upper_bound)
        auto = method == "auto"
        if auto and self.posterior is not None:
            method = "posterior"
        if method == "posterior":
            if self.posterior is None:
                raise ValueError("no posterior draws: this estimate has no posterior interval; use method='auto'")
            alpha = 1 - level
            with warnings.catch_warnings():  # a component undefined in every draw is undefined (whole range)
                warnings.simplefilter("ignore", RuntimeWarning)
                lo, hi = np.nanquantile(self.posterior, [alpha / 2, 1 - alpha / 2], axis=0)
            lo = np.where(np.isnan(lo), self.lower_bound, np.fmin(lo, self.value))
            hi = np.where(np.isnan(hi), self.upper_bound, np.fmax(hi, self.value))
        elif method == "normal":
            lo, hi = normal_interval(self.value, var, level, self.lower_bound, self.upper_bound)
        elif method in ("beta", "auto"):
            if method == "beta" and not bounded.all():
                raise ValueError("beta intervals need finite bounds for every component; use method='normal'")
            lo_n, hi_n = normal_interval(self.value, var, level, self.lower_bound, self.upper_bound)
            lo_b, hi_b = beta_interval(
                self.value, var, level, np.where(bounded, self.lower_bound, 0.0),
                np.where(bounded, self.upper_bound, 1.0),
                n=np.maximum(self.n_draws if self.counts is None else self.counts, 1),
            )
            lo, hi = np.where(bounded, lo_b, lo_n), np.where(bounded, hi_b, hi_n)
            if method == "auto" and self.totals_cov is not None:
                from .fieller import fieller_interval

                lo_f, hi_f = fieller_interval(self.R, self.totals_cov, level, self.lower_bound, self.upper_bound)
                lo, hi = np.fmin(lo, lo_f), np.fmax(hi, hi_f)
        else:
            raise ValueError(f"method: choose 'auto', 'posterior', 'normal' or 'beta', got {method!r}")
        if auto and self.zero_hits is not None:
            from .zero_hits import zero_hits_end

            end = zero_hits_end(self.zero_hits, level)
            hi = np.where(np.isnan(end), hi, np.fmax(hi, np.minimum(end, self.upper_bound)))
        if auto and self.segment is not None:
            from .segment import segment_interval

            lo_s, hi_s = segment_interval(self.segment, level)
            lo = np.where(np.isnan(lo_s), lo, np.fmin(lo_s, self.value))
            hi = np.where(np.isnan(hi_s), hi, np.fmax(hi_s, self.value))
        lo = np.where(self.defined, lo, self.lower_bound)
        hi = np.where(self.defined, hi, self.upper_bound)
        return lo, hi

    def ellipsoid_contains(self, point, level: float | None = None) -> bool:
        """Whether ``point`` lies in the confidence ellipsoid of the defined components (Marchant & Rubinstein (KDD 2021) 3.3.2)."""
        level = self.level if level is None else level
        point = np.asarray(point, dtype=float)
        keep = self.defined
        k = int(keep.sum())
        if k == 0:
            return True
        diff = (point - self.value)[keep]
        cov = self.cov[np.ix_(keep, keep)]
        dist = float(diff @ np.linalg.pinv(cov) @ diff)
        from .intervals import ellipsoid_radius_sq

        return dist <= ellipsoid_radius_sq(self.n_draws, k, level)

    def to_dict(self, level: float | None = None) -> dict:
        """A JSON-friendly dictionary (one entry per component)."""
        lo, hi = self.interval(level)
        return {
            "n_labels": self.n_labels,
            "n_draws": self.n_draws,
            "level": self.level if level is None else level,
            "components": [
                {"name": n, "value": float(v), "std": float(s), "lower": float(a), "upper": float(b),
                 "defined": bool(d)}
                for n, v, s, a, b, d in zip(self.names, self.value, self.std, lo, hi, self.defined)
            ],
            **({"interval_basis": self.basis} if self.basis else {}),
        }

    def __str__(self) -> str:
        lo, hi = self.interval()
        width = max(len(n) for n in self.names)
        lines = [f"Estimate from {self.n_labels} labels ({self.n_draws} draws), {self.level:.0%} intervals"]
        for n, v, s, a, b, d in zip(self.names, self.value, self.std, lo, hi, self.defined):
            flag = "" if d else "  (undefined: no information yet)"
            lines.append(f"  {n:<{width}}  {v:.4f} +- {s:.4f}  [{a:.4f}, {b:.4f}]{flag}")
        return "\n".join(lines)


def make_estimate(measure: Measure, R: np.ndarray, cov_G: np.ndarray, n_labels: int, n_draws: int,
                  level: float = 0.95, posterior: np.ndarray | None = None, basis: str = "") -> Estimate:
    """Build an :class:`Estimate` from ``R`` and the covariance of G, handling undefined components.

    ``posterior`` (draws of G, shape ``(k, m)``) makes the interval the posterior's (:meth:`Estimate.interval`).
    """
    value = np.asarray(measure.value(R), dtype=float)
    cov = np.array(cov_G, dtype=float)
    var = np.diag(cov)
    defined = np.isfinite(value) & np.isfinite(var)
    lo, hi = measure.lower, measure.upper
    bounded = np.isfinite(lo) & np.isfinite(hi)
    fallback_value = np.where(bounded, (np.where(bounded, lo, 0.0) + np.where(bounded, hi, 0.0)) / 2, 0.0)
    fallback_var = np.where(bounded, (hi - lo) ** 2 / 12, np.inf)
    value = np.where(defined, value, fallback_value)
    # a ratio whose totals are equal but summed in another order (a recall of 1) sits on its bound, not 1e-16 below
    span = np.where(bounded, hi - lo, 0.0)
    value = np.where(np.abs(value - hi) <= 1e-12 * span, hi, np.where(np.abs(value - lo) <= 1e-12 * span, lo, value))
    cov = np.where(defined[:, None] & defined[None, :], cov, 0.0)
    cov[np.diag_indices_from(cov)] = np.where(defined, var, fallback_var)
    return Estimate(
        names=tuple(measure.names), value=value, cov=cov, defined=defined, lower_bound=lo.copy(),
        upper_bound=hi.copy(), n_labels=int(n_labels), n_draws=int(n_draws), R=np.asarray(R, float),
        level=level, posterior=posterior, basis=basis,
    )


def component_counts(measure: Measure, losses: np.ndarray) -> np.ndarray:
    """How many of the draws inform each component of ``measure``.

    A ratio of totals (a component that scaling the means leaves unchanged:
    precision, recall, F1, a PR curve's points) moves only with the draws
    whose loss enters a mean it depends on: recall with the labeled
    positives, precision with the labeled predicted positives.  A draw whose
    loss is zero there changes neither its numerator nor its denominator,
    whatever its weight.  With no error seen among them the estimate sits on
    the boundary with a zero variance, and the interval must rest on those
    draws, not on every draw of the session (two thousand draws with five
    labeled positives say little of a recall of 1).  Any other component (a
    mean such as accuracy) counts every draw.

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (n, d)
        Each draw's loss.

    Returns
    -------
    ndarray of int, shape (m,)
    """
    losses = np.asarray(losses, dtype=float).reshape(len(losses), -1)
    probe = np.linspace(0.2, 0.4, losses.shape[1])  # means where every ratio is defined
    # the means each component depends on, read where none is zero (at the estimate a zero numerator would hide
    # the denominator: a recall of 0 still rests on the labeled positives)
    uses = (measure.finite_jacobian(probe) != 0).astype(float)  # (m, d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value, halved = np.asarray(measure.value(probe), float), np.asarray(measure.value(probe / 2), float)
    ratio = np.isfinite(value) & np.isclose(halved, value, rtol=1e-9, atol=1e-12)
    informing = ((losses != 0).astype(float) @ uses.T > 0).sum(axis=0)
    return np.where(ratio, informing, losses.shape[0]).astype(np.int64)
