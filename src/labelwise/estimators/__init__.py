"""Estimators: pure functions of arrays (labeled draws, their design weights or inclusion probabilities,
losses, rounds) that return an estimate of ``R`` and the covariance of ``G = g(R)``.

Each can be called on a user's own arrays, so any number labelwise prints can be checked by hand.
"""

import importlib

# public name -> its module, imported on first use: a stored estimate is read without the measures and pandas
_PUBLIC = {
    **dict.fromkeys(("horvitz_thompson_moments", "horvitz_thompson_totals_covariance"), ".horvitz_thompson"),
    **dict.fromkeys(("importance_moments", "importance_risk", "importance_totals_covariance"), ".importance"),
    **dict.fromkeys(("beta_interval", "ellipsoid_radius_sq", "jeffreys_count", "normal_interval"), ".intervals"),
    **dict.fromkeys(("ModelCovariance", "exception_jump", "exception_shifts", "exception_terms", "larger_variance",
                     "missed_square", "mixture_variance",
                     "model_interval_covariance", "model_second_moment", "proposal_model_covariance"), ".model_covariance"),
    **dict.fromkeys(("Estimate", "component_counts", "make_estimate"), ".result"),
    **dict.fromkeys(("fieller_interval", "with_fieller"), ".fieller"),
    **dict.fromkeys(("JumpBound", "bounded_jumps", "held_second_moment", "jump_limit", "round_weights",
                     "rounds_moments", "rounds_plugin_covariance"), ".rounds"),
    **dict.fromkeys(("count_pmf", "counted_exceptions", "missed_count_variance", "negative_binomial_sum_pmf"),
                   ".missed"),
    **dict.fromkeys(("MissedErrors", "missed_errors"), ".missed_value"),
    "poisson_model_covariance": ".poisson_model",
    **dict.fromkeys(("jeffreys_leaf_variance", "ratio_score_draws", "tilted_variance", "with_score_interval"),
                    ".ratio_score"),
    "stratified_moments": ".stratified",
    "uncertain_missed_square": ".uncertain_tail",
    **dict.fromkeys(("UNSEEN_POSITIVES_BASIS", "unseen_positives_covariance", "with_unseen_labels"),
                   ".unseen_positives"),
    **dict.fromkeys(("hits_upper", "support_terms", "with_zero_hits", "zero_hits_end"), ".zero_hits"),
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
    "UNSEEN_POSITIVES_BASIS",
    "Estimate",
    "JumpBound",
    "MissedErrors",
    "ModelCovariance",
    "beta_interval",
    "bounded_jumps",
    "component_counts",
    "count_pmf",
    "counted_exceptions",
    "ellipsoid_radius_sq",
    "exception_jump",
    "exception_shifts",
    "exception_terms",
    "fieller_interval",
    "held_second_moment",
    "hits_upper",
    "horvitz_thompson_moments",
    "horvitz_thompson_totals_covariance",
    "importance_moments",
    "importance_risk",
    "importance_totals_covariance",
    "jeffreys_count",
    "jeffreys_leaf_variance",
    "jump_limit",
    "larger_variance",
    "make_estimate",
    "missed_count_variance",
    "missed_errors",
    "missed_square",
    "mixture_variance",
    "model_interval_covariance",
    "model_second_moment",
    "negative_binomial_sum_pmf",
    "normal_interval",
    "poisson_model_covariance",
    "proposal_model_covariance",
    "ratio_score_draws",
    "round_weights",
    "rounds_moments",
    "rounds_plugin_covariance",
    "stratified_moments",
    "support_terms",
    "tilted_variance",
    "uncertain_missed_square",
    "unseen_positives_covariance",
    "with_fieller",
    "with_score_interval",
    "with_unseen_labels",
    "with_zero_hits",
    "zero_hits_end",
]
