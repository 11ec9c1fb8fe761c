"""labelwise: label-efficient evaluation of ML systems.

Estimate F1, precision, recall, accuracy, PR curves and other generalized
measures on a large unlabeled pool from few labels, with intervals that hold.
The estimators are pure functions in :mod:`labelwise.estimators`.
"""

from . import estimators
from .datasets import make_multilabel_pool, make_pool
from .designs import (
    DESIGNS,
    AISDesign,
    Design,
    ImportanceDesign,
    OASISDesign,
    OnlinePoissonDesign,
    PassiveDesign,
    PoissonDesign,
    Sampler,
    StratifiedDesign,
    make_design,
    register_design,
)
from .estimators import Estimate
from .measures import (
    MCC,
    MEASURE_NAMES,
    Accuracy,
    BalancedAccuracy,
    Brier,
    CustomMeasure,
    FBeta,
    FowlkesMallows,
    MacroF1,
    Measure,
    MicroF1,
    MultiLabelMacroF1,
    MultiLabelMicroF1,
    PerClassPrecision,
    PerClassRecall,
    PRCurve,
    Precision,
    Recall,
    combine,
    make_measure,
    register_measure,
)
from .oracle import CallableOracle, FileOracle, NoisyOracle, TruthOracle
from .pool import Pool, PoolError, decode_multilabel, encode_multilabel
from .pool.ids import MAX_ID_LENGTH
from .session import LabelError, Session
from .simulate import SimulationResult, simulate, true_value
from .store import StoreError

__version__ = "0.1.0"

__all__ = [
    "DESIGNS",
    "MAX_ID_LENGTH",
    "MCC",
    "MEASURE_NAMES",
    "AISDesign",
    "Accuracy",
    "BalancedAccuracy",
    "Brier",
    "CallableOracle",
    "CustomMeasure",
    "Design",
    "Estimate",
    "FBeta",
    "FileOracle",
    "FowlkesMallows",
    "ImportanceDesign",
    "LabelError",
    "MacroF1",
    "Measure",
    "MicroF1",
    "MultiLabelMacroF1",
    "MultiLabelMicroF1",
    "NoisyOracle",
    "OASISDesign",
    "OnlinePoissonDesign",
    "PRCurve",
    "PassiveDesign",
    "PerClassPrecision",
    "PerClassRecall",
    "PoissonDesign",
    "Pool",
    "PoolError",
    "Precision",
    "Recall",
    "Sampler",
    "Session",
    "SimulationResult",
    "StoreError",
    "StratifiedDesign",
    "TruthOracle",
    "combine",
    "decode_multilabel",
    "encode_multilabel",
    "estimators",
    "make_design",
    "make_measure",
    "make_multilabel_pool",
    "make_pool",
    "register_design",
    "register_measure",
    "simulate",
    "true_value",
]
