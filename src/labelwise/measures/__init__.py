"""Generalized measures: built-ins, user-defined measures and a name registry.

``make_measure("f1,precision", pool, systems="all")`` turns the names used
on the command line into a (possibly vector) measure; ``measure_from_spec``
rebuilds a measure saved in a session file; ``register_measure`` adds a name.
"""

from __future__ import annotations

from .auc import AUC, weighted_auc
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
    BinaryMeasure,
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
from .registry import (
    default_measure_name,
    make_measure,
    measure_from_spec,
    measure_names,
    register_measure,
)
from .roc import ROCCurve, roc_area
from .system import SystemMeasure

__all__ = [
    "AUC",
    "MCC",
    "MEASURE_NAMES",
    "Accuracy",
    "BalancedAccuracy",
    "BinaryMeasure",
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
    "ROCCurve",
    "Recall",
    "SystemMeasure",
    "combine",
    "default_measure_name",
    "finite_difference_jacobian",
    "make_measure",
    "measure_from_spec",
    "measure_names",
    "register_measure",
    "roc_area",
    "weighted_auc",
]

#: The names of the built-in measures as listed to users; :func:`measure_names` also lists
#: those registered later.
MEASURE_NAMES = measure_names()
