"""Generalized measures G = g(R), R = E[loss(x, y)].

Definition 1 of N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack:
Label-Efficient Evaluation under Extreme Class Imbalance", KDD 2021 ("Marchant
and Rubinstein" below).  A measure is three things: a vector loss
``loss(outputs, y)`` of dimension ``d``, a mapping ``g`` from R^d to R^m, and
its Jacobian ``Dg`` (m x d).  All of ``g`` and ``jacobian`` broadcast over
leading axes so that many estimates (one per simulated repeat) are mapped in
one call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..pool import Outputs

if TYPE_CHECKING:
    from ..designs import Sampler
    from ..draws import Sample
    from ..estimators import Estimate
    from ..pool import Pool

__all__ = [
    "CombinedMeasure",
    "CustomMeasure",
    "Measure",
    "RatioOfTotals",
    "combine",
    "combine_keys",
    "finite_difference_jacobian",
]

# Rows per chunk when a default implementation must materialise (rows x d) losses.
_CHUNK_ELEMENTS = 1 << 22


class Measure:
    """Base class of generalized measures.

    Subclasses set ``name``, ``names`` (one per component of G), ``dim`` (d),
    ``lower``/``upper`` (the range of each component, used for honest
    intervals when an estimate is undefined) and implement :meth:`loss`,
    :meth:`g` and :meth:`jacobian`.

    Measures of the same type with the same :meth:`spec` are equal and hash
    alike; a measure whose spec is ``None`` (a :class:`CustomMeasure`) is
    equal only to itself.
    """

    name: str = "measure"
    names: tuple[str, ...] = ()
    dim: int = 1
    lower: np.ndarray
    upper: np.ndarray
    #: Whether :meth:`refine_estimate` already widens the variance for the labels the sample has not seen (the
    #: AUC's prior, :mod:`labelwise.measures.auc_variance`), so that a design adds no label floor of its own.
    floors_unseen_labels: bool = False

    # -- to implement --------------------------------------------------
    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Vector loss ``l(x, y)`` of shape ``(n, d)`` for items ``outputs`` with labels ``y``."""
        raise NotImplementedError

    def g(self, R: np.ndarray) -> np.ndarray:
        """The mapping ``g``: ``(..., d) -> (..., m)``; NaN or inf where undefined."""
        raise NotImplementedError

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """The Jacobian ``Dg(R)``: ``(..., d) -> (..., m, d)``."""
        return finite_difference_jacobian(self.g, R)

    # -- derived ---------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of components m of G."""
        return len(self.names)

    def spec(self) -> dict | None:
        """A JSON-able description to rebuild the measure, or ``None`` if it cannot be."""
        return None

    @property
    def scale_free(self) -> bool:
        """Whether ``g(cR) = g(R)`` for every ``c > 0``: a function of ratios of loss totals.

        Precision, recall and F-beta are; accuracy, MCC and the Brier score are
        not (they need the population's size).  Zero losses for items outside
        the population then give the measure over the rest exactly
        (:mod:`labelwise.measures.domain`).  Checked at random points.
        """
        R = np.random.default_rng(0).uniform(0.05, 1.0, (4, self.dim))
        return bool(np.allclose(self.value(R), self.value(0.37 * R), equal_nan=True))

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        """Integer key per item such that items with equal keys have equal losses for every label.

        Designs that model the oracle per block work per (block, key) group
        instead of per item.  ``None`` (the default) means every item may differ.
        """
        return None

    def label_columns(self) -> np.ndarray | None:
        """The loss columns of each binary label the measure is a function of, ``(C, m)``, or ``None`` (default).

        Given, every item's loss on a label's ``m`` columns is zero or a single one (its state on that label:
        a true negative, or e.g. a true positive, a false positive, a false negative), the columns of the labels
        cover the loss, and ``g`` is unchanged when one label's columns are rescaled: uniform samples then have
        the label-wise posterior of :func:`~labelwise.estimators.posterior.label_posterior_draws`.
        """
        return None

    def value(self, R: np.ndarray) -> np.ndarray:
        """``g(R)`` with floating-point warnings silenced (undefined entries are NaN)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self.g(np.asarray(R, dtype=float))

    def finite_jacobian(self, R: np.ndarray) -> np.ndarray:
        """``Dg(R)`` with entries left undefined by a zero denominator (NaN, inf) set to 0."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.nan_to_num(self.jacobian(np.asarray(R, dtype=float)), nan=0.0, posinf=0.0, neginf=0.0)

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        """``||Dg(R) l(x, y)||_2^2`` per item (the integrand of Marchant and Rubinstein, eq. 5).

        The default materialises losses in chunks; measures with a large ``d``
        (PR curves) override it with an O(n + d) computation.
        """
        J = self.finite_jacobian(R)
        out = np.empty(len(y))
        step = max(1, _CHUNK_ELEMENTS // max(self.dim, 1))
        for start in range(0, len(y), step):
            sl = slice(start, start + step)
            u = self.loss(_take(outputs, sl), y[sl]) @ J.T
            out[sl] = np.einsum("ij,ij->i", u, u)
        return out

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        """Whether ``l(x, y) != 0`` per item (the support condition of Marchant and Rubinstein, Prop. 2)."""
        out = np.empty(len(y), dtype=bool)
        step = max(1, _CHUNK_ELEMENTS // max(self.dim, 1))
        for start in range(0, len(y), step):
            sl = slice(start, start + step)
            out[sl] = np.any(self.loss(_take(outputs, sl), y[sl]) != 0, axis=1)
        return out

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """``sum_i sum_c pi(c | x_i) l(x_i, c)`` for a label distribution ``(n, C)``."""
        total = np.zeros(self.dim)
        n = label_probs.shape[0]
        step = max(1, _CHUNK_ELEMENTS // max(self.dim, 1))
        for c in range(label_probs.shape[1]):
            for start in range(0, n, step):
                sl = slice(start, start + step)
                yc = np.full(min(step, n - start), c)
                total += label_probs[sl, c] @ self.loss(_take(outputs, sl), yc)
        return total

    def pool_value(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        """The measure on the whole pool whose items have label distributions ``label_probs`` ``(n, C)``.

        ``g`` of the pool's mean expected loss (the estimand).  A measure whose
        loss coarsens the items (AUC's score bins) overrides it with the exact value.
        """
        return self.value(self.expected_loss_sum(outputs, label_probs) / label_probs.shape[0])

    def refine_estimate(self, estimate: Estimate, pool: Pool, sampler: Sampler, sample: Sample) -> Estimate:
        """The design's ``estimate`` of this measure, refined where the measure knows better (default: as is).

        Called by :meth:`labelwise.Session.estimate`; the AUC raises a variance that collapses when few
        positives are labeled (:mod:`labelwise.measures.auc_variance`).
        """
        return estimate

    # -- identity --------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        """Equal when of the same type with the same (non-``None``) :meth:`spec`; else by identity."""
        if self is other:
            return True
        if not isinstance(other, Measure):
            return NotImplemented
        spec = self.spec()
        return spec is not None and type(self) is type(other) and spec == other.spec()

    def __hash__(self) -> int:
        """Consistent with ``==``: from the type and the spec, or the identity when the spec is ``None``."""
        spec = self.spec()
        if spec is None:
            return object.__hash__(self)
        return hash((type(self), _frozen(spec)))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self.names)})"


def _frozen(value: object) -> object:
    """A hashable copy of a JSON-like value (dicts, lists) that is equal where the value is equal."""
    if isinstance(value, dict):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def _take(outputs: Outputs, sl) -> Outputs:
    take = lambda a: None if a is None else a[sl]
    return Outputs(take(outputs.preds), take(outputs.scores), take(outputs.probs), outputs.n_classes)


def combine_keys(keys: Sequence[np.ndarray]) -> np.ndarray:
    """One dense integer key per distinct combination of the given integer keys."""
    combined = np.zeros(len(keys[0]), dtype=np.int64)
    for k in keys:
        _, dense = np.unique(k, return_inverse=True)
        combined = combined * (int(dense.max()) + 1) + dense
        _, combined = np.unique(combined, return_inverse=True)  # re-densify: no int64 overflow
    return combined.astype(np.int64)


def finite_difference_jacobian(g: Callable[[np.ndarray], np.ndarray], R: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """Central finite-difference Jacobian of ``g`` at ``R`` (broadcast over leading axes).

    Parameters
    ----------
    g : callable
        Maps ``(..., d)`` to ``(..., m)``.
    R : ndarray, shape (..., d)
    step : float
        Relative step; the absolute step is ``step * max(1, |R_j|)``.

    Returns
    -------
    ndarray, shape (..., m, d)
    """
    R = np.asarray(R, dtype=float)
    d = R.shape[-1]
    cols = []
    for j in range(d):
        h = step * np.maximum(1.0, np.abs(R[..., j]))
        e = np.zeros(d)
        e[j] = 1.0
        hp = h[..., None] * e
        with np.errstate(divide="ignore", invalid="ignore"):
            cols.append((np.asarray(g(R + hp)) - np.asarray(g(R - hp))) / (2 * h[..., None]))
    return np.stack(cols, axis=-1)


class RatioOfTotals:
    """Mixin for measures ``g(R) = R_1 / R_2``, put before the measure base.

    These are the ratio metrics ``sum f / sum g`` (eq. 1) of E. Yilmaz, P. Hayes,
    R. Habib, J. Burgess and D. Barber, "Sample Efficient Model Evaluation",
    arXiv:2109.12043, 2021.
    """

    def g(self, R: np.ndarray) -> np.ndarray:
        """``R_1 / R_2``, shape ``(..., 1)``; NaN/inf when ``R_2 = 0``."""
        R = np.asarray(R, dtype=float)
        return (R[..., 0] / R[..., 1])[..., None]

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        """``[1 / R_2, -R_1 / R_2^2]``, shape ``(..., 1, 2)``."""
        R = np.asarray(R, dtype=float)
        R1, R2 = R[..., 0], R[..., 1]
        return np.stack([1 / R2, -R1 / R2**2], axis=-1)[..., None, :]


@dataclass(eq=False)
class CustomMeasure(Measure):
    """A user-defined measure from a loss function and a mapping ``g``.

    Parameters
    ----------
    loss_fn : callable
        ``loss_fn(outputs, y) -> (n, d)`` array.
    g_fn : callable
        ``g_fn(R) -> (..., m)``; must broadcast over leading axes of ``R``.
    dim : int
        Dimension d of the loss.
    names : sequence of str
        One name per component of G.
    jacobian_fn : callable, optional
        ``jacobian_fn(R) -> (..., m, d)``; by central finite differences when omitted.
    lower, upper : float or sequence, optional
        Range of each component (default unbounded).
    """

    loss_fn: Callable[[Outputs, np.ndarray], np.ndarray]
    g_fn: Callable[[np.ndarray], np.ndarray]
    dim: int
    names: Sequence[str]
    jacobian_fn: Callable[[np.ndarray], np.ndarray] | None = None
    lower: float | Sequence[float] = -np.inf
    upper: float | Sequence[float] = np.inf
    name: str = "custom"

    def __post_init__(self) -> None:
        self.names = tuple(self.names)
        m = len(self.names)
        self.lower = np.broadcast_to(np.asarray(self.lower, dtype=float), (m,)).copy()
        self.upper = np.broadcast_to(np.asarray(self.upper, dtype=float), (m,)).copy()

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        out = np.asarray(self.loss_fn(outputs, y), dtype=float)
        return out.reshape(len(y), self.dim)

    def g(self, R: np.ndarray) -> np.ndarray:
        out = np.asarray(self.g_fn(R), dtype=float)
        return out.reshape(np.shape(R)[:-1] + (self.size,))

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        if self.jacobian_fn is None:
            return finite_difference_jacobian(self.g, R)
        return np.asarray(self.jacobian_fn(R), dtype=float).reshape(np.shape(R)[:-1] + (self.size, self.dim))


class CombinedMeasure(Measure):
    """Several measures estimated together from one sample (a vector measure).

    The loss is the concatenation of the parts' losses, ``g`` their
    concatenation and the Jacobian block-diagonal.
    """

    def __init__(self, parts: Sequence[Measure], name: str | None = None):
        if not parts:
            raise ValueError("combine: give at least one measure")
        self.parts = tuple(parts)
        self.dim = sum(p.dim for p in self.parts)
        self.names = tuple(n for p in self.parts for n in p.names)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"combine: component names must be unique, got {self.names}")
        self.lower = np.concatenate([p.lower for p in self.parts])
        self.upper = np.concatenate([p.upper for p in self.parts])
        # each measure once: F1 of two systems is "f1", not "f1+f1" (the systems are in the component names)
        self.name = name or "+".join(dict.fromkeys(p.name for p in self.parts))
        self._d_slices = []
        self._m_slices = []
        d0 = m0 = 0
        for p in self.parts:
            self._d_slices.append(slice(d0, d0 + p.dim))
            self._m_slices.append(slice(m0, m0 + p.size))
            d0 += p.dim
            m0 += p.size

    def spec(self) -> dict | None:
        specs = [p.spec() for p in self.parts]
        return None if any(s is None for s in specs) else {"combine": specs}

    def loss(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return np.concatenate([p.loss(outputs, y) for p in self.parts], axis=1)

    def g(self, R: np.ndarray) -> np.ndarray:
        return np.concatenate([p.g(R[..., s]) for p, s in zip(self.parts, self._d_slices)], axis=-1)

    def jacobian(self, R: np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=float)
        J = np.zeros(R.shape[:-1] + (self.size, self.dim))
        for p, sd, sm in zip(self.parts, self._d_slices, self._m_slices):
            J[..., sm, sd] = p.jacobian(R[..., sd])
        return J

    def influence_norm_sq(self, outputs: Outputs, y: np.ndarray, R: np.ndarray) -> np.ndarray:
        # ||blockdiag(J_k) [l_k]||^2 = sum_k ||J_k l_k||^2: each part may use its fast path.
        return sum(p.influence_norm_sq(outputs, y, R[s]) for p, s in zip(self.parts, self._d_slices))

    def loss_is_nonzero(self, outputs: Outputs, y: np.ndarray) -> np.ndarray:
        return np.logical_or.reduce([p.loss_is_nonzero(outputs, y) for p in self.parts])

    def loss_key(self, outputs: Outputs) -> np.ndarray | None:
        keys = [p.loss_key(outputs) for p in self.parts]
        if any(k is None for k in keys):
            return None
        return combine_keys(keys)

    def expected_loss_sum(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        return np.concatenate([p.expected_loss_sum(outputs, label_probs) for p in self.parts])

    def pool_value(self, outputs: Outputs, label_probs: np.ndarray) -> np.ndarray:
        return np.concatenate([p.pool_value(outputs, label_probs) for p in self.parts])


def combine(*measures: Measure, name: str | None = None) -> Measure:
    """Estimate several measures (or one measure for several systems) together.

    Returns the single measure unchanged when only one is given.
    """
    flat: list[Measure] = []
    for m in measures:
        flat.extend(m.parts if isinstance(m, CombinedMeasure) else [m])
    return flat[0] if len(flat) == 1 else CombinedMeasure(flat, name=name)
