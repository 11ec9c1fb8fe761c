"""The price of a query: per query, per answer asked for and per excluded positive shown, cheaper near the root."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

__all__ = ["CostModel"]


@dataclass(frozen=True)
class CostModel:
    """Cost ``c(q)`` of a configuration ``(k, l, v)`` and the configurations allowed.

    ``c = (per_query + per_item k + per_excluded l) (1 + per_level depth(v))``: a
    query that fixes more attributes is harder to answer (Rekatsinas et al.,
    CIKM 2019, Sec. 2.2: queries at higher levels are cheaper).

    Attributes
    ----------
    per_query, per_item, per_excluded, per_level : float
        The prices (any currency).
    k : tuple of int
        Answer counts a query may ask for (the set K).
    l : tuple of int
        Exclude-list sizes (the set L).
    """

    per_query: float = 1.0
    per_item: float = 0.1
    per_excluded: float = 0.01
    per_level: float = 0.5
    k: tuple[int, ...] = (5, 10)
    l: tuple[int, ...] = field(default=(0, 10, 50))

    def __post_init__(self) -> None:
        prices = (self.per_query, self.per_item, self.per_excluded, self.per_level)
        if min(prices) < 0 or self.per_query + self.per_item <= 0:
            raise ValueError("costs: prices must be 0 or more, and per_query + per_item positive")
        if not self.k or min(self.k) < 1 or not self.l or min(self.l) < 0:
            raise ValueError(f"costs: k needs values of at least 1 and l of at least 0, got k={list(self.k)}, "
                             f"l={list(self.l)}")
        object.__setattr__(self, "k", tuple(int(x) for x in self.k))
        object.__setattr__(self, "l", tuple(int(x) for x in self.l))

    @classmethod
    def from_json(cls, path: Path) -> CostModel:
        """Read the fields from a JSON object (missing ones keep their defaults)."""
        try:
            raw = json.loads(Path(path).read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); give an object like "
                             '{"per_query": 1, "k": [5, 10]}') from None
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - names) if isinstance(raw, dict) else ["(not an object)"]
        if unknown:
            raise ValueError(f"{path}: unknown key {unknown[0]}; the keys are {', '.join(sorted(names))}")
        for key, value in raw.items():
            listed = key in ("k", "l")
            if not (isinstance(value, list) and all(_number(v, whole=True) for v in value) if listed
                    else _number(value)):
                want = "a list of whole numbers like [5, 10]" if listed else "a number like 0.5"
                raise ValueError(f"{path}: {key} is {json.dumps(value)}; give {want}")
        try:
            return cls(**raw)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None

    def to_dict(self) -> dict:
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}

    def configurations(self) -> tuple[np.ndarray, np.ndarray]:
        """``k`` and ``l`` of every configuration (all pairs of K x L)."""
        k, l = np.meshgrid(self.k, self.l, indexing="ij")
        return k.ravel(), l.ravel()

    def price(self, k: np.ndarray, l: np.ndarray, depth: np.ndarray) -> np.ndarray:
        """``c(q)`` (arrays broadcast together)."""
        return (self.per_query + self.per_item * np.asarray(k) + self.per_excluded * np.asarray(l)) * (
            1.0 + self.per_level * np.asarray(depth))


def _number(value, whole: bool = False) -> bool:
    """Whether a JSON value is a number (a whole one with ``whole``); ``true``/``false`` are not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not whole or float(value).is_integer()
