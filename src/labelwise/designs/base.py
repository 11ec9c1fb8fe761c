"""What every sampling design provides.

A design decides which items are labeled and with what probability.  It is
prepared once for a pool and a measure (:meth:`Design.prepare`), then asked
for batches (:meth:`Design.draw`), told about labels as they arrive
(:meth:`Design.observe`, used by adaptive designs) and finally turns the
labeled draws into an estimate (:meth:`Design.estimate`).  Everything a
design needs to resume is either recomputed from its ``spec`` or replayed
from the stored draws and labels, so designs hold no state that a session
file would have to pickle.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..estimators import Estimate
from ..measures import Measure
from ..pool import Pool

__all__ = ["ORACLES", "Design", "Draws", "Sample", "check_oracle"]

#: How labels behave: one true label per item, or a fresh label from p(y|x) at every draw.
ORACLES = ("deterministic", "stochastic")


def check_oracle(oracle: str) -> str:
    """Validate a design's ``oracle`` option."""
    if oracle not in ORACLES:
        raise ValueError(f"oracle: choose 'deterministic' or 'stochastic', got {oracle!r}")
    return oracle


class Design(ABC):
    """Base class of sampling designs; subclasses register a unique ``name``."""

    name: str = "design"
    #: whether the design may draw an item again (a free re-draw under a deterministic oracle)
    with_replacement: bool = True
    #: ``"deterministic"``: an item has one true label, asked once.  ``"stochastic"`` (noisy or
    #: several annotators): every draw is labeled afresh from ``p(y|x)`` and the measure is its
    #: expectation; only designs with an ``oracle`` option support it
    oracle: str = "deterministic"

    def params(self) -> dict:
        """Constructor arguments, for :meth:`spec`."""
        return {}

    def spec(self) -> dict:
        """JSON-able description: ``{"design": name, **params}``."""
        return {"design": self.name, **self.params()}

    @abstractmethod
    def prepare(self, pool: Pool, measure: Measure) -> None:
        """Compute whatever the design needs from the pool and the target measure."""

    @abstractmethod
    def draw(self, n_new: int, labeled: np.ndarray, rng: np.random.Generator) -> Draws:
        """Draw until ``n_new`` distinct items that are not yet ``labeled`` are included.

        Re-draws of labeled items (and repeats within the batch) are part of
        the returned draws; under a deterministic oracle they cost no label.
        Under a stochastic oracle every draw costs a label: return exactly
        ``n_new`` draws, each with count 1.
        """

    def plan(self, budget: int) -> None:
        """Told how many labels a run will ask for in total (by :meth:`Session.run`).

        Designs whose probabilities depend on the budget (``poisson``) use it;
        others ignore it.
        """

    def state(self) -> dict:
        """JSON-able state of the batch just drawn that labels cannot replay.

        Stored with the batch (so a session file grows by one batch's state
        per batch, however long the session).
        """
        return {}

    def set_state(self, states: list[dict]) -> None:
        """Restore every batch's :meth:`state`, in order, after the labels were replayed (:meth:`Session.open`)."""

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        """Learn from new labels (adaptive designs); static designs ignore them.

        Under a stochastic oracle ``items`` may repeat and may have been labeled before.
        """

    @abstractmethod
    def estimate(self, measure: Measure, pool: Pool, sample: Sample, level: float = 0.95) -> Estimate:
        """Estimate ``measure`` from labeled draws made by this design."""
