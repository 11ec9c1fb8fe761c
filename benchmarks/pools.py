"""Where the benchmark scripts find the real evaluation pools (never copied into the project)."""

from __future__ import annotations

from pathlib import Path

#: ``../shared/datasets`` beside the project checkout.
DATASETS = Path(__file__).resolve().parent.parent.parent / "shared" / "datasets"
#: The real pools the benchmarks run on.
POOLS = ("abt-buy", "dblp-acm")


def pool_paths(datasets: Path = DATASETS) -> list[Path]:
    """Paths of the benchmark pools present under ``datasets``; prints a skip notice when there are none."""
    paths = [p for p in (datasets / f"{name}.csv.gz" for name in POOLS) if p.exists()]
    if not paths:
        print(f"no benchmark pools under {datasets}; skipping")
    return paths
