"""labelwise: label-efficient evaluation of ML systems.

Estimate F1, precision, recall, accuracy, PR curves and other generalized
measures on a large unlabeled pool from few labels, with intervals that hold.
"""

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
    StratifiedDesign,
    design_from_spec,
    get_design,
    register_design,
)
from .diagnostics import kl_divergence, optimal_proposal_given_truth
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
    build_measure,
    combine,
    measure_from_spec,
)
from .oracle import DirichletTreeModel
from .oracle.annotators import CallableOracle, FileOracle, NoisyOracle, TruthOracle
from .partition import (
    Hierarchy,
    Strata,
    feature_hierarchy,
    make_strata,
    score_hierarchy,
)
from .pool import (
    Pool,
    PoolError,
    decode_multilabel,
    encode_multilabel,
    multilabel_joint,
)
from .session import LabelError, Session
from .simulate import SimulationResult, simulate, true_risk, true_value
from .store import StoreError

__version__ = "0.1.0"

__all__ = [
    "DESIGNS",
    "MCC",
    "MEASURE_NAMES",
    "AISDesign",
    "Accuracy",
    "BalancedAccuracy",
    "Brier",
    "CallableOracle",
    "CustomMeasure",
    "Design",
    "DirichletTreeModel",
    "Estimate",
    "FBeta",
    "FileOracle",
    "FowlkesMallows",
    "Hierarchy",
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
    "Session",
    "SimulationResult",
    "StoreError",
    "Strata",
    "StratifiedDesign",
    "TruthOracle",
    "build_measure",
    "combine",
    "decode_multilabel",
    "design_from_spec",
    "encode_multilabel",
    "feature_hierarchy",
    "get_design",
    "kl_divergence",
    "make_multilabel_pool",
    "make_pool",
    "make_strata",
    "measure_from_spec",
    "multilabel_joint",
    "optimal_proposal_given_truth",
    "register_design",
    "score_hierarchy",
    "simulate",
    "true_risk",
    "true_value",
]
