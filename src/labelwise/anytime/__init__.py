"""Anytime-valid confidence sequences, stopping rules and certification (see the submodules)."""

from .session import AnytimeEstimate, anytime_estimate, anytime_path, weight_bound
from .stopping import (
           Certificate,
           anytime_half_width,
           certify,
           half_width_reached,
           run_until,
)

__all__ = ["AnytimeEstimate", "Certificate", "anytime_estimate", "anytime_half_width", "anytime_path", "certify", "half_width_reached",
           "run_until", "weight_bound"]
