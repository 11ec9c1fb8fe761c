"""The coverage of a curve of the scores reused from DuckDB sessions' labels (30 sessions per design, rounds of 100).

In a file of its own: ``pytest --dist loadfile`` (``scripts/test``) runs a file on one worker, and these
sessions, a pass over the pool per round, held one worker for most of the run's end beside the rest of
:mod:`test_reused_curves`.
"""

from __future__ import annotations

import numpy as np
import pytest

from labelwise import true_value
from labelwise.designs import make_design
from labelwise.engines import EnginePool, EngineSession
from labelwise.measures import make_measure

from .test_reused_curves import scored_parquet


@pytest.mark.slow
@pytest.mark.parametrize("design", ["online-poisson", "importance"])
def test_a_reused_curves_recall_covers_on_duckdb(tmp_path, design):
    """30 engine sessions at 1000 labels in rounds of 100: the recall at the middle threshold (truth 0.955, the
    positives below it score low) covers at least 0.95 - 3 s.e. (0.83); online-poisson's intervals with half the
    variance (half-widths over sqrt 2) covered 0.80.  Before, importance covered 0.33 (the labeled items' interval
    alone); online-poisson 0.97, by a wrong model: the curve's thresholds cut none of the blocks' mean
    probabilities, so every block was taken between the first two."""
    pool, path = scored_parquet(tmp_path, 20000, 0.01)
    curve = make_measure("pr_curve:3", pool)
    truth = true_value(pool, curve)
    engine, runs, covered = EnginePool.open(path, "duckdb"), 30, np.zeros(truth.size)
    for seed in range(runs):
        with EngineSession.create(tmp_path / f"{seed}.lw", engine, measure="f1", systems=0,
                                  design=make_design(design), budget=1000, seed=seed) as session:
            while session.n_labels < 1000:
                ids = session.hand_out(100)[0]["item_id"].to_numpy(np.int64)
                session.add_labels(ids, pool.labels[ids], "truth")
            lo, hi = session.estimate(curve).interval()
        covered += (lo <= truth) & (truth <= hi)
    middle = [i for i, n in enumerate(curve.names) if n.startswith("recall@")][1]
    assert 0.9 < truth[middle] < 0.99
    assert covered[middle] / runs >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs), dict(zip(curve.names, covered / runs))
