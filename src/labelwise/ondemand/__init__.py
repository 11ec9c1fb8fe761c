"""On-demand evaluation of systems submitted one after another.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Section 3:
precision by a joint importance-sampling estimator that reuses the
verifications made for earlier systems, recall as pool recall (from
exhaustively annotated documents) times pooled recall (from the
verifications), and the number of new verifications for a new system chosen
by bisection on the variance before drawing.

Modules: :mod:`.universe` (instances, systems, sampling distributions),
:mod:`.estimators` (estimators, variances), :mod:`.normalized` (the
self-normalized joint precision, the default), :mod:`.composite` (the joint
estimate combined with the simple one), :mod:`.intervals`, :mod:`.recall`
(the product recall combined with the documents' ratio), :mod:`.planning`
(sample sizes), :mod:`.costs` (prices and spending), :mod:`.simulate`
(repeated on-demand runs against a truth table).
"""

from .composite import composite_precision
from .config import OnDemandConfig, Problem
from .costs import CostLedger, Prices
from .estimators import (
    f1_delta,
    joint_precision,
    mixture_weights,
    pooled_recall,
    ratio_estimate,
    recall_product,
    simple_precision,
)
from .intervals import floored_normal_interval, score_interval
from .normalized import capped_weights, normalized_joint_precision
from .planning import (
    exchangeable_variance,
    plan_documents,
    plan_verifications,
    predicted_interval_variance,
    predicted_joint_variance,
)
from .process import Process
from .recall import combined_recall, pooled_recall_floor
from .session import OnDemandSession as OnDemandSession
from .simulate import build_problem, run_repeats, simulate, true_scores
from .universe import Universe, stack_systems, system_distribution

__all__ = [
    "CostLedger", "OnDemandConfig", "Prices", "Problem", "Process", "Universe", "build_problem", "capped_weights",
    "combined_recall",
    "composite_precision", "exchangeable_variance", "f1_delta",
    "floored_normal_interval", "joint_precision", "mixture_weights", "normalized_joint_precision", "plan_documents", "plan_verifications",
    "pooled_recall", "pooled_recall_floor", "predicted_interval_variance", "predicted_joint_variance", "ratio_estimate", "recall_product", "run_repeats",
    "score_interval", "simple_precision", "simulate", "stack_systems", "system_distribution", "true_scores",
]
