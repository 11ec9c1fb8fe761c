"""Models of the oracle: annotators (where labels come from), the systems' scores as a prior, and the
Dirichlet-tree model that learns ``p(y|x)`` from labels."""

from ..pool import LabelFileError
from .annotators import (
    CallableOracle,
    FileOracle,
    NoisyOracle,
    TruthOracle,
    noisy_label_distribution,
)
from .prior import score_prior
from .tree import DirichletTreeModel

__all__ = [
    "CallableOracle",
    "DirichletTreeModel",
    "FileOracle",
    "LabelFileError",
    "NoisyOracle",
    "TruthOracle",
    "noisy_label_distribution",
    "score_prior",
]
