"""Synthetic evaluation pools (binary, multi-class, multi-label) with known ground truth.

:func:`make_pool` draws a pool from a simple, fully specified generative model
so that the true value of every measure is known exactly (it is computed from
the generated labels) and estimators can be checked against it, including
under extreme class imbalance (prevalence down to ``1e-6``).

The generative model, for items ``i = 1..N`` and systems ``s = 1..S``:

* ``y_i`` in ``{0, 1}``: exactly ``N_+ = max(1, round(prevalence * N))``
  positives placed at uniformly random positions;
* ``score_is = d_s * y_i + e_is`` with standard-normal noise
  ``e_is = sqrt(rho) * z_i + sqrt(1 - rho) * z_is`` (a component ``z_i``
  shared by all systems, so different systems make correlated errors);
* ``prob_is = expit(logit(pi) + d_s * score_is - d_s**2 / 2 + c)``, the Bayes
  posterior ``p(y=1 | score_is)`` when ``c = 0`` (``pi = N_+ / N``), shifted by
  the calibration error ``c`` in logit space;
* ``pred_is = 1[prob_is > 1/2]``.

Here ``d_s`` is the ``separation`` (the distance between the class-conditional
score means in noise standard deviations; the ROC AUC of system ``s`` is
``Phi(d_s / sqrt(2))``), ``rho`` is ``system_correlation`` and ``c`` is
``calibration_error``.

:func:`make_multiclass_pool` draws a multi-class pool: one Gaussian cloud of
scores per class, probabilities the Bayes posterior with its logits scaled.

:func:`make_multilabel_pool` draws a multi-label pool (Yilmaz et al. (2021) appendix D):
one independent binary pool of this model per label (binary relevance), so
the labels are independent given the per-label scores and the product of
the calibrated per-label probabilities is the exact posterior (eq. 89).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import expit

from .pool import MAX_LABELS, Pool
from .validation import check_int, check_real

__all__ = ["make_multiclass_pool", "make_multilabel_pool", "make_pool"]

def make_pool(
    n_items: int = 100_000,
    prevalence: float = 0.01,
    separation: float | Sequence[float] = 3.0,
    calibration_error: float = 0.0,
    n_systems: int = 1,
    n_features: int = 0,
    seed: int | np.random.Generator | None = None,
    name: str | None = None,
    *,
    system_correlation: float = 0.5,
) -> Pool:
    """Generate a binary evaluation pool with ground-truth labels.

    See the module docstring for the generative model.

    Parameters
    ----------
    n_items : int
        Number of items ``N`` (at least 2).
    prevalence : float
        Target fraction of positives, ``0 < prevalence < 1``.  The pool has
        exactly ``max(1, round(prevalence * n_items))`` positives (capped at
        ``n_items - 1`` so that both classes occur), so even ``1e-6`` on a
        million items yields a positive.
    separation : float or sequence of float
        Distance ``d >= 0`` between the class-conditional means of the
        (unit-variance) scores; one value for all systems or one per system.
        ``0`` gives useless systems, ``3`` gives ROC AUC ~ 0.98.
    calibration_error : float
        Shift ``c`` added to the logit of every probability.  ``0`` gives
        perfectly calibrated probabilities; ``c > 0`` over-states and
        ``c < 0`` under-states the probability of the positive class.
    n_systems : int
        Number of systems ``S`` (at least 1).
    n_features : int
        Number of Gaussian item features (0 for none).  Feature ``j`` is
        ``w_j * y + N(0, 1)`` with weights ``w_j`` proportional to
        ``1 / (j + 1)`` and scaled so that the features together separate the
        classes as well as a system with the mean separation does
        (Mahalanobis distance ``mean(separation)``).
    seed : int, numpy.random.Generator or None
        Source of randomness; the same integer seed gives the same pool.
    name : str, optional
        Pool name; defaults to ``f"generated-{n_items}-{prevalence:g}"``.
    system_correlation : float
        Correlation ``0 <= rho <= 1`` of the score noise of two different
        systems on the same item (ignored for a single system).

    Returns
    -------
    Pool
        Item ids ``0..N-1``; ``scores`` and ``probs`` of shape ``(N, S)``
        (float64), ``preds`` of shape ``(N, S)``, ``labels`` of shape ``(N,)``,
        ``features`` of shape ``(N, n_features)`` or ``None``; systems are named
        ``system`` (one system) or ``system0, system1, ...``.

    Raises
    ------
    ValueError
        Naming the offending argument when it is out of range.

    Notes
    -----
    The posterior uses the realised prevalence ``N_+ / N`` (which differs
    from ``prevalence`` when ``prevalence * n_items`` is small), because that
    is the marginal probability that an item of the generated pool is
    positive.  Generating ``10**7`` items with one system takes about a
    second and a few hundred MB.

    Examples
    --------
    >>> pool = make_pool(10_000, prevalence=0.001, n_systems=2, seed=0)
    >>> int(pool.labels.sum()), pool.scores.shape
    (10, (10000, 2))
    """
    n_items = check_int("n_items", n_items, 2)
    prevalence = check_real("prevalence", prevalence)
    if not 0.0 < prevalence < 1.0:
        raise ValueError(f"prevalence: must lie strictly between 0 and 1, got {prevalence}")
    n_systems = check_int("n_systems", n_systems, 1)
    n_features = check_int("n_features", n_features, 0)
    calibration_error = check_real("calibration_error", calibration_error)
    rho = check_real("system_correlation", system_correlation)
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"system_correlation: must lie in [0, 1], got {rho}")

    if np.ndim(separation) == 0:
        sep = np.full(n_systems, check_real("separation", separation))
    else:
        sep = np.asarray(separation, dtype=float)
        if sep.ndim != 1 or sep.size != n_systems:
            raise ValueError(
                f"separation: give one number or one per system ({n_systems}), got shape {sep.shape}"
            )
        if not np.all(np.isfinite(sep)):
            raise ValueError(f"separation: must be finite, got {sep.tolist()}")
    if np.any(sep < 0):
        raise ValueError(f"separation: must be >= 0, got {sep.tolist() if sep.size > 1 else sep[0]}")
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name: must be a string or None, got {name!r}")
    if name is None:
        name = f"generated-{n_items}-{prevalence:g}"

    rng = np.random.default_rng(seed)

    # labels: exactly n_pos positives at random positions
    n_pos = min(max(1, round(prevalence * n_items)), n_items - 1)
    pos = rng.choice(n_items, size=n_pos, replace=False)
    labels = np.zeros(n_items, dtype=np.int8)
    labels[pos] = 1

    # scores: separation * y + correlated standard-normal noise
    scores = rng.standard_normal((n_items, n_systems))
    if n_systems > 1 and rho > 0.0:
        scores *= math.sqrt(1.0 - rho)
        shared = rng.standard_normal(n_items)
        shared *= math.sqrt(rho)
        scores += shared[:, None]
        del shared
    scores[pos] += sep

    # probs: Bayes posterior under the model, shifted by calibration_error
    pi = n_pos / n_items
    probs = scores * sep  # logit, computed in place below
    probs += math.log(pi / (1.0 - pi)) - 0.5 * sep**2 + calibration_error
    expit(probs, out=probs)
    preds = (probs > 0.5).astype(np.int8)

    features = None
    if n_features > 0:
        w = 1.0 / np.arange(1, n_features + 1)
        w *= float(sep.mean()) / np.linalg.norm(w)
        features = rng.standard_normal((n_items, n_features))
        features[pos] += w

    return Pool.from_arrays(
        None,
        preds=preds,
        scores=scores,
        probs=probs,
        labels=labels,
        features=features,
        name=name,
    )


def _per_label(name: str, value: float | Sequence[float], n_labels: int) -> list[float]:
    """One value per label from a number or a sequence of ``n_labels`` numbers."""
    if np.ndim(value) == 0:
        return [check_real(name, value)] * n_labels
    values = list(value)
    if len(values) != n_labels:
        raise ValueError(f"{name}: give one number or one per label ({n_labels}), got {len(values)}")
    return [check_real(name, v) for v in values]


def make_multilabel_pool(
    n_items: int = 20_000,
    n_labels: int = 6,
    prevalence: float | Sequence[float] = 0.05,
    separation: float | Sequence[float] = 3.0,
    calibration_error: float = 0.0,
    seed: int | np.random.Generator | None = None,
    name: str | None = None,
    *,
    label_names: Sequence[str] | None = None,
) -> Pool:
    """Generate a multi-label pool (one system, ``C`` labels) with ground truth.

    Label ``k`` is an independent draw of the binary model of
    :func:`make_pool` (see the module docstring) with its own prevalence and
    separation: exactly ``max(1, round(prevalence_k * n_items))`` positives,
    a score ``d_k y_k + N(0, 1)``, the calibrated posterior ``p(v_k = 1 | x)``
    (shifted by ``calibration_error`` in logit space) and the prediction
    ``1[p > 1/2]``.

    Parameters
    ----------
    n_items : int
        Number of items ``N`` (at least 2).
    n_labels : int
        Number of labels ``C``, 1 to :data:`labelwise.pool.MAX_LABELS`.
    prevalence : float or sequence of float
        Fraction of items carrying each label (one value for all labels or
        one per label), strictly between 0 and 1.  Rare labels, e.g.
        ``(0.096, 0.010, 0.053, 0.003, 0.049, 0.009)``, mimic the Toxic
        Comments challenge of Yilmaz et al. (2021) sec. 5.3.
    separation : float or sequence of float
        Per-label separation ``d_k >= 0`` of the class-conditional scores.
    calibration_error : float
        Logit shift of every probability (0: calibrated).
    seed : int, numpy.random.Generator or None
    name : str, optional
        Defaults to ``f"multilabel-{n_items}-{n_labels}"``.
    label_names : sequence of str, optional
        Defaults to ``label0, label1, ...``.

    Returns
    -------
    Pool
        Built by :meth:`Pool.from_multilabel`: label codes as ``preds`` and
        ``labels``, the product distribution over the ``2^C`` label sets as
        ``probs``.

    Examples
    --------
    >>> pool = make_multilabel_pool(1000, 3, prevalence=[0.1, 0.05, 0.01], seed=0)
    >>> pool.n_classes, pool.label_names
    (8, ('label0', 'label1', 'label2'))
    """
    n_labels = check_int("n_labels", n_labels, 1)
    if n_labels > MAX_LABELS:
        raise ValueError(f"n_labels: at most {MAX_LABELS} labels are supported, got {n_labels}")
    prevalences = _per_label("prevalence", prevalence, n_labels)
    separations = _per_label("separation", separation, n_labels)
    rng = np.random.default_rng(seed)
    parts = [make_pool(n_items, prevalence=p, separation=d, calibration_error=calibration_error, seed=rng)
             for p, d in zip(prevalences, separations)]
    return Pool.from_multilabel(
        preds=np.stack([part.preds[:, 0] for part in parts], axis=1),
        probs=np.stack([part.probs[:, 0] for part in parts], axis=1),
        labels=np.stack([part.labels for part in parts], axis=1),
        label_names=label_names,
        name=name or f"multilabel-{n_items}-{n_labels}",
    )


def make_multiclass_pool(
    n_items: int = 30_000,
    class_shares: Sequence[float] = (0.97, 0.02, 0.01),
    separation: float = 2.0,
    logit_scale: float = 1.0,
    seed: int | np.random.Generator | None = None,
    name: str | None = None,
) -> Pool:
    """Generate a multi-class pool (one system, ``C`` classes) with ground truth.

    Item ``i`` has class ``y_i`` drawn with probabilities ``class_shares`` and
    a score vector ``x_i = d e_{y_i} + N(0, I_C)`` (one Gaussian cloud per
    class, ``d`` the ``separation``); its probabilities are the Bayes
    posterior ``p(c | x) ∝ pi_c exp(d x_c)`` with its logits times
    ``logit_scale`` (1: calibrated, above 1 over-confident, below 1
    under-confident), its prediction their most likely class.

    Parameters
    ----------
    n_items : int
        Number of items (at least 2).
    class_shares : sequence of float
        Each class's probability, at least two, positive, summing to 1.
    separation : float
        ``d >= 0``.
    logit_scale : float
        Factor ``k > 0`` of the posterior's logits.
    seed : int, numpy.random.Generator or None
    name : str, optional
        Defaults to ``f"multiclass-{n_items}-{C}"``.

    Returns
    -------
    Pool
    """
    check_int("n_items", n_items, 2)
    shares = np.asarray(class_shares, dtype=float)
    if shares.size < 2 or np.any(shares <= 0) or not math.isclose(shares.sum(), 1.0, rel_tol=1e-9):
        raise ValueError(f"class_shares: at least two positive shares summing to 1, got {list(class_shares)}")
    if check_real("separation", separation) < 0:
        raise ValueError(f"separation: must be at least 0, got {separation}")
    if check_real("logit_scale", logit_scale) <= 0:
        raise ValueError(f"logit_scale: must be positive, got {logit_scale}")
    rng = np.random.default_rng(seed)
    C = shares.size
    y = rng.choice(C, size=n_items, p=shares)
    x = np.eye(C)[y] * separation + rng.standard_normal((n_items, C))
    logits = logit_scale * (separation * x + np.log(shares))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    return Pool.from_arrays(None, preds=probs.argmax(axis=1), probs=probs[:, None, :], labels=y, n_classes=C,
                            name=name or f"multiclass-{n_items}-{C}")
