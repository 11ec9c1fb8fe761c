"""Estimators: labeled draws and their design weights in, an :class:`Estimate` out."""

from .importance import importance_moments, importance_risk
from .intervals import beta_interval, ellipsoid_radius_sq, normal_interval
from .result import Estimate, make_estimate
from .stratified import stratified_moments

__all__ = [
    "Estimate",
    "beta_interval",
    "ellipsoid_radius_sq",
    "importance_moments",
    "importance_risk",
    "make_estimate",
    "normal_interval",
    "stratified_moments",
]
