"""Where the benchmark scripts find the real evaluation pools (never copied into the project)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

#: ``../shared/datasets`` beside the project checkout.
DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
#: The real pools the benchmarks run on.
POOLS = ("abt-buy", "dblp-acm")


def pool_paths(datasets: Path = DATASETS, names: Sequence[str] = POOLS) -> list[Path]:
    """Paths of the pools ``names`` (default :data:`POOLS`) present under ``datasets``.

    Prints a skip notice when there are none.
    """
    paths = [p for p in (datasets / f"{name}.csv.gz" for name in names) if p.exists()]
    if not paths:
        print(f"no benchmark pools under {datasets}; skipping")
    return paths
