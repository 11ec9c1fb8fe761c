"""labelwise: label-efficient evaluation of ML systems.

Estimate F1, precision, recall, accuracy, PR curves and other generalized
measures on a large unlabeled pool from few labels, with intervals that hold.
The estimators are pure functions in :mod:`labelwise.estimators`.
"""

import importlib
import sys
import types

__version__ = "0.1.0"

# public name -> the submodule defining it; imported on first use, so that a command that reads a
# session file does not pay for pandas, scipy and every design
_PUBLIC = {
    "estimators": ".estimators",
    **dict.fromkeys(("make_multiclass_pool", "make_multilabel_pool", "make_pool"), ".datasets"),
    **dict.fromkeys(("DESIGNS", "AISDesign", "Design", "ImportanceDesign", "OASISDesign", "OnlinePoissonDesign",
                     "PassiveDesign", "PoissonDesign", "Sampler", "StratifiedDesign", "default_design", "make_design",
                     "register_design"), ".designs"),
    "Estimate": ".estimators",
    **dict.fromkeys(("AUC", "MCC", "MEASURE_NAMES", "Accuracy", "BalancedAccuracy", "Brier", "CustomMeasure", "FBeta",
                     "FowlkesMallows", "MacroF1", "Measure", "MicroF1", "MultiLabelMacroF1", "MultiLabelMicroF1",
                     "PerClassPrecision", "PerClassRecall", "PRCurve", "Precision", "Recall", "ROCCurve", "combine",
                     "make_measure", "register_measure"), ".measures"),
    **dict.fromkeys(("CallableOracle", "FileOracle", "NoisyOracle", "TruthOracle"), ".oracle"),
    **dict.fromkeys(("Pool", "PoolError", "decode_multilabel", "encode_multilabel"), ".pool"),
    "MAX_ID_LENGTH": ".pool.ids",
    **dict.fromkeys(("LabelError", "Session"), ".session"),
    "NotProposedError": ".ledger",
    "AddedSystem": ".session_systems",
    **dict.fromkeys(("SimulationResult", "simulate", "true_value"), ".simulate"),
    "StoreError": ".store",
    "OnDemandConfig": ".ondemand",
    "EnginePool": ".engines",
    **dict.fromkeys(("CostModel", "DiscoverySession", "Hierarchy", "simulate_discovery"), ".discover"),
    "logs": ".logs",
    **dict.fromkeys(("LogEstimate", "calibrate_pool", "fit_calibration", "logged_auc", "policy_value"), ".logs"),
    **dict.fromkeys(("Certificate", "certify"), ".anytime"),
    **dict.fromkeys(("Plan", "plan_designs"), ".planning"),
}


def __getattr__(name: str):
    """A public name, imported from its submodule on first use."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(_PUBLIC[name], __name__)
    value = module if name in ("estimators", "logs") else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """``labelwise.simulate`` stays the function when the submodule of that name is imported."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "simulate" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__all__ = [
    "AUC",
    "DESIGNS",
    "MAX_ID_LENGTH",
    "MCC",
    "MEASURE_NAMES",
    "AISDesign",
    "Accuracy",
    "AddedSystem",
    "BalancedAccuracy",
    "Brier",
    "CallableOracle",
    "Certificate",
    "CostModel",
    "CustomMeasure",
    "Design",
    "DiscoverySession",
    "EnginePool",
    "Estimate",
    "FBeta",
    "FileOracle",
    "FowlkesMallows",
    "Hierarchy",
    "ImportanceDesign",
    "LabelError",
    "LogEstimate",
    "MacroF1",
    "Measure",
    "MicroF1",
    "MultiLabelMacroF1",
    "MultiLabelMicroF1",
    "NoisyOracle",
    "NotProposedError",
    "OASISDesign",
    "OnDemandConfig",
    "OnlinePoissonDesign",
    "PRCurve",
    "PassiveDesign",
    "PerClassPrecision",
    "PerClassRecall",
    "Plan",
    "PoissonDesign",
    "Pool",
    "PoolError",
    "Precision",
    "ROCCurve",
    "Recall",
    "Sampler",
    "Session",
    "SimulationResult",
    "StoreError",
    "StratifiedDesign",
    "TruthOracle",
    "calibrate_pool",
    "certify",
    "combine",
    "decode_multilabel",
    "default_design",
    "encode_multilabel",
    "estimators",
    "fit_calibration",
    "logged_auc",
    "logs",
    "make_design",
    "make_measure",
    "make_multiclass_pool",
    "make_multilabel_pool",
    "make_pool",
    "plan_designs",
    "policy_value",
    "register_design",
    "register_measure",
    "simulate",
    "simulate_discovery",
    "true_value",
]
