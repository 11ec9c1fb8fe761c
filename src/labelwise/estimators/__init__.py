"""Estimators: pure functions of arrays (labeled draws, their design weights or inclusion probabilities,
losses, rounds) that return an estimate of ``R`` and the covariance of ``G = g(R)``.

Each can be called on a user's own arrays, so any number labelwise prints can be checked by hand.
"""

from .horvitz_thompson import horvitz_thompson_moments
from .importance import importance_moments, importance_risk
from .intervals import beta_interval, ellipsoid_radius_sq, normal_interval
from .model_covariance import (
    ModelCovariance,
    exception_terms,
    larger_variance,
    mixture_variance,
)
from .result import Estimate, make_estimate
from .rounds import round_weights, rounds_moments, rounds_plugin_covariance
from .stratified import stratified_moments

__all__ = [
    "Estimate",
    "ModelCovariance",
    "beta_interval",
    "ellipsoid_radius_sq",
    "exception_terms",
    "horvitz_thompson_moments",
    "importance_moments",
    "importance_risk",
    "larger_variance",
    "make_estimate",
    "mixture_variance",
    "normal_interval",
    "round_weights",
    "rounds_moments",
    "rounds_plugin_covariance",
    "stratified_moments",
]
