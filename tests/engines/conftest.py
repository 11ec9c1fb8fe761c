"""Pools written as Parquet, shared by the engine tests: a binary pool with a content column, and one with
probabilities at every edge of the block grid."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labelwise import make_pool
from labelwise.engines.blocks import N_BINS
from labelwise.pool import Pool


@pytest.fixture(scope="module")
def pool() -> Pool:
    """20 000 items, 2% positives, integer ids 0..N-1, with the columns of its Parquet file (:func:`pool_frame`):
    the score strata of ``online-poisson`` read the scores first."""
    made = make_pool(20_000, 0.02, seed=4)
    return Pool.from_arrays(made.item_ids, preds=made.preds, probs=made.probs, labels=made.labels, name=made.name)


def pool_frame(pool: Pool) -> pd.DataFrame:
    """The pool's columns as a Parquet pool file has them, plus a text column."""
    return pd.DataFrame({"item_id": pool.item_ids, "pred": pool.preds[:, 0], "prob": pool.probs[:, 0],
                         "label": pool.labels, "text": [f"item {i}" for i in pool.item_ids]})


@pytest.fixture(scope="module")
def parquet_pool(pool: Pool, tmp_path_factory) -> Path:
    """The pool split over two Parquet files; returns their glob."""
    folder = tmp_path_factory.mktemp("engine_pool")
    frame = pool_frame(pool)
    half = len(frame) // 2
    frame.iloc[:half].to_parquet(folder / "part-0.parquet", index=False)
    frame.iloc[half:].to_parquet(folder / "part-1.parquet", index=False)
    return folder / "part-*.parquet"


#: Priors at and next to the grid's edges, and the bins they fall in (enumerated from the definition)
EDGES = [(0.0, 0), (2.0**-33, 8), (2.0**-32, 16), (1.5 * 2.0**-32, 24), (2.0**-31 - 2.0**-60, 31),
         (0.25 - 2.0**-55, 495), (0.25, 496), (0.3, 499), (0.5 - 2.0**-54, 511), (0.5, 512), (0.75, 527),
         (1.0 - 2.0**-32, N_BINS - 17), (1.0 - 2.0**-53, N_BINS - 1), (1.0, N_BINS - 1)]


@pytest.fixture(scope="module")
def grid_edges() -> list[tuple[float, int]]:
    """:data:`EDGES`: (prior, its bin) at and next to the edges of the block grid."""
    return EDGES


@pytest.fixture(scope="module")
def extreme_pool(tmp_path_factory) -> tuple[Pool, Path]:
    """Probabilities over 80 units of log-odds and at every edge, as a pool and a Parquet file."""
    rng = np.random.default_rng(1)
    p = np.r_[[e for e, _ in EDGES], 1 / (1 + np.exp(-rng.normal(0, 12, 20_000)))]
    n = p.size
    labels = (rng.random(n) < p).astype(int)
    path = tmp_path_factory.mktemp("extreme") / "extreme.parquet"
    pd.DataFrame({"item_id": np.arange(n), "pred": (p > 0.5).astype(int), "prob": p, "label": labels}).to_parquet(path)
    return Pool.from_arrays(np.arange(n), preds=(p > 0.5).astype(int)[:, None], probs=p[:, None], labels=labels), path


@pytest.fixture(scope="module")
def scored() -> Pool:
    """20 000 items with spread scores and no probabilities: ``online-poisson``'s score strata apply."""
    made = make_pool(20_000, 0.02, seed=4)
    return Pool.from_arrays(made.item_ids, preds=made.preds, scores=made.scores, labels=made.labels, name="scored")


@pytest.fixture(scope="module")
def scored_file(scored: Pool, tmp_path_factory) -> Path:
    """:func:`scored` as a Parquet file."""
    path = tmp_path_factory.mktemp("scored") / "scored.parquet"
    pd.DataFrame({"item_id": scored.item_ids, "pred": scored.preds[:, 0], "score": scored.scores[:, 0],
                  "label": scored.labels}).to_parquet(path, index=False)
    return path
