"""Generalized measures: built-ins, user-defined measures and a name registry.

``build_measure("f1,precision", pool, systems="all")`` turns the names used
on the command line into a (possibly vector) measure; ``measure_from_spec``
rebuilds a measure saved in a session file.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral

from ..pool import Pool
from .base import (
    CombinedMeasure,
    CustomMeasure,
    Measure,
    combine,
    finite_difference_jacobian,
)
from .binary import (
    MCC,
    Accuracy,
    BalancedAccuracy,
    Brier,
    FBeta,
    FowlkesMallows,
    Precision,
    Recall,
)
from .curves import PRCurve
from .multiclass import PerClassPrecision, PerClassRecall
from .multiclass_f1 import MacroF1, MicroF1
from .multilabel import MultiLabelMacroF1, MultiLabelMicroF1

__all__ = [
    "MCC",
    "MEASURE_NAMES",
    "Accuracy",
    "BalancedAccuracy",
    "Brier",
    "CombinedMeasure",
    "CustomMeasure",
    "FBeta",
    "FowlkesMallows",
    "MacroF1",
    "Measure",
    "MicroF1",
    "MultiLabelMacroF1",
    "MultiLabelMicroF1",
    "PRCurve",
    "PerClassPrecision",
    "PerClassRecall",
    "Precision",
    "Recall",
    "build_measure",
    "combine",
    "finite_difference_jacobian",
    "measure_from_spec",
]

_SIMPLE = {
    "accuracy": Accuracy,
    "balanced_accuracy": BalancedAccuracy,
    "precision": Precision,
    "recall": Recall,
    "mcc": MCC,
    "fowlkes_mallows": FowlkesMallows,
    "brier": Brier,
}
_MULTICLASS = {
    "class_precision": PerClassPrecision,
    "class_recall": PerClassRecall,
    "macro_f1": MacroF1,
    "micro_f1": MicroF1,
}
_MULTILABEL = {
    "multilabel_micro_f1": MultiLabelMicroF1,
    "multilabel_macro_f1": MultiLabelMacroF1,
}
MEASURE_NAMES = (tuple(_SIMPLE) + ("f1", "fbeta:<beta>", "pr_curve", "pr_curve:<n_thresholds>") + tuple(_MULTICLASS)
                 + tuple(_MULTILABEL))


def _n_labels(pool: Pool, measure: str) -> int:
    """``C`` of a multi-label pool: its label names, else ``log2(n_classes)`` (a pool reloaded from a session)."""
    if pool.label_names:
        return len(pool.label_names)
    C = pool.n_classes.bit_length() - 1
    if pool.n_classes != 2**C:
        raise ValueError(f"measure {measure!r} needs a multi-label pool (2^C label codes), but the pool has "
                         f"{pool.n_classes} classes; build it with Pool.from_multilabel")
    return C


def _one(name: str, pool: Pool, system: int) -> Measure:
    sys_name = pool.system_names[system] if pool.n_systems > 1 else None
    key, _, arg = name.strip().lower().partition(":")
    if key in _SIMPLE:
        return _SIMPLE[key](system=system, system_name=sys_name)
    if key == "f1":
        return FBeta(1.0, system=system, system_name=sys_name)
    if key in ("fbeta", "f"):
        try:
            beta = float(arg)
        except ValueError:
            raise ValueError(f"measure {name!r}: write fbeta:<beta>, e.g. fbeta:0.5") from None
        return FBeta(beta, system=system, system_name=sys_name)
    if key == "pr_curve":
        n = int(arg) if arg else 50
        return PRCurve.grid(pool, n, system=system, system_name=sys_name)
    if key in _MULTICLASS:
        return _MULTICLASS[key](n_classes=pool.n_classes, system=system, system_name=sys_name)
    if key in _MULTILABEL:
        return _MULTILABEL[key](n_labels=_n_labels(pool, key), system=system, system_name=sys_name)
    raise ValueError(f"unknown measure {name!r}; choose from {', '.join(MEASURE_NAMES)}")


def build_measure(names: str | Sequence[str], pool: Pool, systems: str | int | Sequence[int] = 0) -> Measure:
    """Build a measure from names for one or several systems of ``pool``.

    Parameters
    ----------
    names : str or sequence of str
        Comma-separated names (see ``MEASURE_NAMES``); several names give a
        vector measure estimated from one sample.
    pool : Pool
        Supplies the systems, label set and score range.
    systems : "all", int or sequence of int
        Which systems to evaluate; several give one component per system.

    Returns
    -------
    Measure
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not names:
        raise ValueError("measure: give at least one measure name, e.g. f1")
    if systems == "all":
        sys_list = list(range(pool.n_systems))
    elif isinstance(systems, Integral):
        sys_list = [systems]
    else:
        sys_list = [int(s) for s in systems]
    for s in sys_list:
        if not 0 <= s < pool.n_systems:
            raise ValueError(f"systems: index {s} out of range; the pool has {pool.n_systems} system(s)")
    return combine(*[_one(n, pool, s) for n in names for s in sys_list])


def measure_from_spec(spec: dict) -> Measure:
    """Rebuild a measure from :meth:`Measure.spec` output."""
    if "combine" in spec:
        return combine(*[measure_from_spec(s) for s in spec["combine"]])
    kw = {k: v for k, v in spec.items() if k != "measure"}
    kind = spec["measure"]
    if kind in _SIMPLE:
        return _SIMPLE[kind](**kw)
    if kind == "fbeta":
        return FBeta(**kw)
    if kind == "pr_curve":
        return PRCurve(**kw)
    if kind in _MULTICLASS:
        return _MULTICLASS[kind](**kw)
    if kind in _MULTILABEL:
        return _MULTILABEL[kind](**kw)
    raise ValueError(f"measure spec: unknown measure {kind!r}")
