"""Labeling a session by an oracle, batch by batch (simulations and scripted labeling).

:class:`OracleRun` is the part of :class:`~labelwise.session.Session` that
asks an ``oracle(item_ids) -> labels`` callable for the labels of each batch
it hands out: up to a budget, reporting estimates at checkpoints, or until
the anytime-valid interval is narrow enough (:func:`labelwise.anytime.run_until`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .estimators import Estimate
from .progress import progress_bar

__all__ = ["OracleRun"]


class OracleRun:
    """:meth:`run` of :class:`~labelwise.session.Session`."""

    def run(
        self,
        oracle: Callable[[np.ndarray], np.ndarray],
        budget: int | None = None,
        batch_size: int = 50,
        *,
        progress: bool = False,
        checkpoints: Sequence[int] = (),
        on_checkpoint: Callable[[int, Estimate], None] | None = None,
        until_half_width: float | None = None,
    ) -> Estimate:
        """Label until ``budget`` labels are in, asking ``oracle`` a batch at a time.

        With ``until_half_width`` stop as soon as the anytime-valid interval's half-width is at most that
        (or ``budget`` labels are in), and return the anytime estimate (:func:`labelwise.anytime.run_until`).

        Parameters
        ----------
        oracle : callable
            ``oracle(item_ids) -> labels``.
        budget : int
            Total labels wanted (:attr:`n_labels`: distinct items under a
            deterministic oracle, answered draws under a stochastic one;
            labels already in the session count).
        batch_size : int
            Labels per batch (the design is updated between batches).
        progress : bool
            Show a progress bar.
        checkpoints : sequence of int
            Label counts at which to call ``on_checkpoint(n_labels, estimate)``;
            batches are cut so that each checkpoint is hit exactly.
        """
        if until_half_width is not None:
            from .anytime import run_until

            return run_until(self, oracle, until_half_width, budget, batch_size, progress)
        if budget is None:
            raise ValueError("budget: give the labels wanted, or until_half_width")
        if budget > self.pool.n_items:
            raise ValueError(f"budget: {budget} labels asked but the pool has {self.pool.n_items} items")
        if batch_size < 1:
            raise ValueError(f"batch_size: must be at least 1, got {batch_size}")
        if self.budget is None and len(self.draws) == 0:  # nothing drawn yet: plan the run for its budget
            self._plan_for(budget)
        marks = sorted(c for c in set(checkpoints) if max(self.n_labels, 1) <= c <= budget)
        reported: list[tuple[tuple, Estimate]] = []  # the last checkpoint's estimate and the state it read

        def report_reached() -> None:
            while marks and self.n_labels >= marks[0]:
                if on_checkpoint is not None:
                    reported[:] = [(self._estimated_state(), self.estimate())]
                    on_checkpoint(marks[0], reported[0][1])
                marks.pop(0)

        report_reached()  # a checkpoint equal to the labels already in is reported, not skipped
        with progress_bar(progress, budget, "labeling", self.n_labels) as update:
            while self.n_labels < budget:
                limit = marks[0] if marks else budget
                ids = self.next_batch(min(batch_size, limit - self.n_labels))
                self.add_labels(ids, oracle(ids), source="oracle")
                update(self.n_labels)
                report_reached()
        # the last checkpoint's estimate when nothing changed since (a run to its last checkpoint: simulations,
        # pilot runs), the estimate being a function of that state; else anew
        if reported and _same_state(reported[0][0], self._estimated_state()):
            return reported[0][1]
        return self.estimate()

    def _estimated_state(self) -> tuple:
        """What :meth:`~labelwise.session.Session.estimate` reads that labeling or a checkpoint's callback can
        change: the labels and draws, the exclusions, and the pool, measure, sampler, ledger and level."""
        return (self.n_labels, len(self.draws), int(np.count_nonzero(self.ledger.excluded)), self.level, self.pool,
                self.measure, self.sampler, self.ledger)


def _same_state(a: tuple, b: tuple) -> bool:
    """Whether two :meth:`OracleRun._estimated_state` are the same: equal counts and level, the same objects."""
    return a[:4] == b[:4] and all(x is y for x, y in zip(a[4:], b[4:], strict=True))
