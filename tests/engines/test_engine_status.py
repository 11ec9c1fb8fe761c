"""``labelwise status`` and ``export`` on a session that references its pool."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.engines import EngineSession

runner = CliRunner()


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def test_status_and_export_report_the_labels(pool, parquet_pool, tmp_path):
    for f in parquet_pool.parent.glob("part-*.parquet"):
        shutil.copy(f, tmp_path / f.name)
    session = tmp_path / "s.lw"
    assert invoke("init", tmp_path / "part-*.parquet", "-s", session, "--engine", "duckdb", "--budget", 200,
                  "--design", "poisson", "--seed", 3).exit_code == 0
    assert invoke("next", session, "-n", 40, "-o", tmp_path / "batch.csv").exit_code == 0
    batch = pd.read_csv(tmp_path / "batch.csv").iloc[:25]  # 15 left pending
    batch["label"] = pd.Series(pool.labels, index=pool.item_ids).loc[batch["item_id"]].to_numpy()
    batch.to_csv(tmp_path / "labels.csv", index=False)
    assert invoke("label", session, tmp_path / "labels.csv").exit_code == 0

    info = json.loads(invoke("status", session, "--json").stdout)
    assert (info["labels"], info["pending"], info["draws"], info["n_items"]) == (25, 15, 40, pool.n_items)
    assert info["engine"] == "duckdb" and info["health"] == "ok" and info["design"]["design"] == "poisson"
    estimate = json.loads(invoke("estimate", session, "--json").stdout)
    assert info["estimate"]["components"] == estimate["components"]

    result = invoke("export", session, "-o", tmp_path / "export.csv")
    assert result.exit_code == 0, result.output
    exported = pd.read_csv(tmp_path / "export.csv")
    assert sorted(exported["item_id"]) == sorted(batch["item_id"])
    assert exported.set_index("item_id")["label"].loc[batch["item_id"]].tolist() == batch["label"].tolist()
    with EngineSession.open(session) as s:  # draw: place in the hand-out order; weight: 1 / b
        order = pd.Index(s.sample.item_ids)
        b = s.sample.inclusion[order.get_indexer(exported["item_id"])]
    assert exported["draw"].tolist() == order.get_indexer(exported["item_id"]).tolist()
    assert (exported["weight"] * b).round(12).eq(1).all()
    assert set(exported["event"]) == {"label"}
