"""A binary pool written as Parquet (with a content column), shared by the engine tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from labelwise import make_pool
from labelwise.pool import Pool


@pytest.fixture(scope="module")
def pool() -> Pool:
    """20 000 items, 2% positives, integer ids 0..N-1."""
    return make_pool(20_000, 0.02, seed=4)


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
