"""Shared set-up of the planning CLI tests: a small pool and a passive session of 300 labels on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.datasets import make_pool
from labelwise.pool import Pool
from labelwise.session import Session


@pytest.fixture(scope="module")
def pool() -> Pool:
    return make_pool(3000, prevalence=0.2, separation=2.5, seed=12)


def labeled_passive_session(path: Path, pool_csv: Path, pool: Pool) -> Path:
    """A session at ``path`` made by ``labelwise init`` with the passive design, 300 labels given in batches of 50."""
    assert CliRunner().invoke(app, ["init", str(pool_csv), "-s", str(path), "-d", "passive"]).exit_code == 0
    with Session.open(path) as s:
        for _ in range(6):
            ids = s.next_batch(50)
            s.add_labels(ids, pool.labels[pool.positions(ids)])
    return path
