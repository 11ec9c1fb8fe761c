"""The result of an estimate from a subsampled log: value, interval and the sizes behind it."""

from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["LogEstimate"]


@dataclass(frozen=True)
class LogEstimate:
    """An estimate from a log whose zero-reward rows were subsampled.

    Attributes
    ----------
    estimate : float
    lower, upper : float
        Normal-approximation interval at ``level`` (on the logit scale for the AUC).
    level : float
    std_error : float
        Estimated standard error, with the keep-or-drop of every logged row
        as a source of variance.
    n_rows : int
        Kept rows the estimate used.
    effective_size : float
        ``eta``: the logged rows they stand for (the known number when given).
    method : str
        Which estimator (e.g. ``"eta"``, ``"ht"``, ``"snips"``, ``"weighted-delong"``).
    """

    estimate: float
    lower: float
    upper: float
    level: float
    std_error: float
    n_rows: int
    effective_size: float
    method: str

    def to_dict(self) -> dict:
        """The fields as a JSON-able dict (the ``--json`` output of ``labelwise logs``)."""
        return asdict(self)
