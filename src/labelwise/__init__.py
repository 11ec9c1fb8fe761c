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
from .hierarchy import Hierarchy, feature_hierarchy, score_hierarchy
from .measures import (
    MEASURE_NAMES,
    MCC,
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
    Precision,
    PRCurve,
    Recall,
    build_measure,
    combine,
    measure_from_spec,
)
from .oracle_models import DirichletTreeModel
from .oracles import CallableOracle, FileOracle, NoisyOracle, TruthOracle
from .partition import Strata, make_strata
from .pool import Pool, PoolError, decode_multilabel, encode_multilabel, multilabel_joint
from .session import LabelError, Session
from .simulate import SimulationResult, simulate, true_risk, true_value
from .store import StoreError

__version__ = "0.1.0"

__all__ = [
    "Pool",
    "PoolError",
    "encode_multilabel",
    "decode_multilabel",
    "multilabel_joint",
    "make_pool",
    "make_multilabel_pool",
    "Measure",
    "CustomMeasure",
    "combine",
    "build_measure",
    "measure_from_spec",
    "MEASURE_NAMES",
    "Accuracy",
    "BalancedAccuracy",
    "Precision",
    "Recall",
    "FBeta",
    "MCC",
    "FowlkesMallows",
    "Brier",
    "PRCurve",
    "PerClassPrecision",
    "PerClassRecall",
    "MacroF1",
    "MicroF1",
    "MultiLabelMicroF1",
    "MultiLabelMacroF1",
    "Design",
    "PassiveDesign",
    "StratifiedDesign",
    "ImportanceDesign",
    "AISDesign",
    "OASISDesign",
    "PoissonDesign",
    "OnlinePoissonDesign",
    "DESIGNS",
    "get_design",
    "register_design",
    "design_from_spec",
    "Estimate",
    "Session",
    "LabelError",
    "StoreError",
    "TruthOracle",
    "NoisyOracle",
    "CallableOracle",
    "FileOracle",
    "Strata",
    "make_strata",
    "Hierarchy",
    "score_hierarchy",
    "feature_hierarchy",
    "DirichletTreeModel",
    "optimal_proposal_given_truth",
    "kl_divergence",
    "simulate",
    "SimulationResult",
    "true_value",
    "true_risk",
]
