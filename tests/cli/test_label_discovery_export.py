"""``labelwise label`` of a ``labelwise discover export`` on a pool session: the rows of items the session proposed
are stored; a row of any other item refuses the file in one line naming the file, column, row and fix."""

from __future__ import annotations

import io
from contextlib import closing

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.session import Session
from labelwise.store import Store

N = 80


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def ok(*args):
    result = run(*args)
    assert result.exit_code == 0, (result.stdout, result.stderr, result.exception)
    return result


@pytest.fixture
def files(tmp_path):
    """A pool (ids ``x000``...), the same items with attributes for a discovery, and an export of its positives."""
    rng = np.random.default_rng(3)
    ids = [f"x{i:03d}" for i in range(N)]
    positive = rng.random(N) < 0.4
    score = np.clip(0.5 * positive + 0.5 * rng.random(N), 0, 1)
    pd.DataFrame({"item_id": ids, "pred": (score > 0.5).astype(int), "score": score}).to_csv(tmp_path / "pool.csv",
                                                                                        index=False)
    pd.DataFrame({"item_id": ids, "a": rng.choice(["u", "v"], N)}).to_csv(tmp_path / "items.csv", index=False)
    disco = tmp_path / "d.lw"
    ok("discover", "init", disco, "--hierarchy", tmp_path / "items.csv", "--attributes", "a", "--budget", 20)
    k = int(pd.read_json(io.StringIO(ok("discover", "next", disco).stdout), typ="series")["k"])
    pd.DataFrame({"item_id": np.array(ids)[positive][:k]}).to_csv(tmp_path / "answers.csv", index=False)
    ok("discover", "answer", disco, tmp_path / "answers.csv")
    ok("discover", "export", disco, "--out", tmp_path / "found.csv")
    return tmp_path


def _state(session) -> tuple:
    with closing(Store.open(session)) as store:
        revision = store.revision()
    with Session.open(session) as s:
        return revision, s.n_labels, len(s.draws)


@pytest.mark.parametrize("oracle", ["deterministic", "stochastic"])
def test_an_export_labels_the_proposed_items_and_is_refused_in_one_line_for_the_others(files, oracle):
    session = files / "s.lw"
    ok("init", files / "pool.csv", "--session", session, "--design", "passive", "--param", f"oracle={oracle}")
    batch = pd.read_csv(io.StringIO(ok("next", session, "-n", 30).stdout), dtype={"item_id": str})
    found = pd.read_csv(files / "found.csv", dtype={"item_id": str})
    drawn = found["item_id"].isin(batch["item_id"])
    assert drawn.any() and not drawn.all()  # the export holds items of the batch and items never drawn

    # the drawn rows first, then the others: the first undrawn row is named
    ordered = pd.concat([found[drawn], found[~drawn]])
    ordered.to_csv(files / "mixed.csv", index=False)
    before = _state(session)
    result = run("label", session, files / "mixed.csv")
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: labels file ")
    first = ordered["item_id"].iloc[int(drawn.sum())]
    for part in ("mixed.csv", "column 'item_id'", f"data row {int(drawn.sum()) + 1}", f"item '{first}'",
                 "not proposed", "keep only the rows of items `labelwise next` handed out"):
        assert part in lines[0], lines[0]
    assert _state(session) == before  # nothing stored

    found[drawn].to_csv(files / "drawn.csv", index=False)
    ok("label", session, files / "drawn.csv")
    ok("export", session, "--out", files / "stored.csv")
    stored = pd.read_csv(files / "stored.csv", dtype={"item_id": str})
    assert sorted(stored["item_id"]) == sorted(found.loc[drawn, "item_id"]) and set(stored["label"]) == {1}
