"""Evaluation from logs whose zero-reward rows were subsampled at a known keep rate.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010):
a kept zero-reward row stands for ``1/l`` logged rows.  This package
estimates a new policy's value (:func:`policy_value`), the AUC
(:func:`logged_auc`) with intervals that model the dropping, plans keep
rates for AUC (:func:`balanced_keep_rates`), fits importance-weighted
regressions (:func:`fit_weighted_logistic`) and calibrates scores by a
linear spline through weighted bin means or by weighted isotonic regression
(:func:`fit_calibration`), also for a session's pool (:func:`calibrate_pool`).
"""

import importlib

# public name -> its module, imported on first use (matplotlib and scipy only when needed)
_PUBLIC = {
    **dict.fromkeys(("check_keep_rates", "effective_size", "keep_weights"), ".weights"),
    "LogEstimate": ".result",
    **dict.fromkeys(("POLICY_VALUE_METHODS", "policy_value", "target_probabilities"), ".value"),
    **dict.fromkeys(("auc_deviation_bound", "balanced_keep_rates", "logged_auc", "weighted_auc"), ".auc"),
    **dict.fromkeys(("CALIBRATION_METHODS", "Calibrator", "bin_means", "cross_validated_ece", "effective_sizes",
                     "equal_count_bins", "expected_calibration_error", "fit_calibration", "shrunk_rates"),
                    ".calibration"),
    "fit_weighted_logistic": ".regression",
    "reliability_diagram": ".reliability",
    **dict.fromkeys(("calibrate_pool", "labeled_design_weights"), ".pool_calibration"),
}


def __getattr__(name: str):
    """A public name, imported from its module on first use."""
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "CALIBRATION_METHODS",
    "POLICY_VALUE_METHODS",
    "Calibrator",
    "LogEstimate",
    "auc_deviation_bound",
    "balanced_keep_rates",
    "bin_means",
    "calibrate_pool",
    "check_keep_rates",
    "cross_validated_ece",
    "effective_size",
    "effective_sizes",
    "equal_count_bins",
    "expected_calibration_error",
    "fit_calibration",
    "fit_weighted_logistic",
    "keep_weights",
    "labeled_design_weights",
    "logged_auc",
    "policy_value",
    "reliability_diagram",
    "shrunk_rates",
    "target_probabilities",
    "weighted_auc",
]
