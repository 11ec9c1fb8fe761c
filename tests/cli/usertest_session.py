"""A session as an outside user makes one: their own column names (``txn``, ``flag``, ``risk``), text ids."""

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd


def user_session(tmp_path: Path, ok: Callable, n_items: int = 300) -> tuple[Path, Path]:
    """A ``passive`` session on a pool of ``n_items`` text ids with a first batch of 5 in ``batch.csv``; the
    session file and the batch file."""
    pool = tmp_path / "pool.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"txn": [f"T{i:03d}" for i in range(n_items)], "flag": (rng.uniform(size=n_items) < 0.3).astype(int),
                  "risk": rng.uniform(size=n_items)}).to_csv(pool, index=False)
    session, batch = tmp_path / "s.lw", tmp_path / "batch.csv"
    ok("init", pool, session, "--id-col", "txn", "--pred-col", "flag", "--score-col", "risk", "--design", "passive")
    ok("next", session, "-n", "5", "--out", batch)
    return session, batch
