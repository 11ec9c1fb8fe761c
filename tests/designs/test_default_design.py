"""``default`` stands for the design labelwise picks for the pool, in Python, ``init`` and ``simulate``."""

import json

import pytest
from typer.testing import CliRunner

import labelwise as lw
from labelwise.cli import app
from labelwise.designs import default_design


def test_default_is_online_poisson_and_importance_for_multilabel_pools():
    binary = lw.make_pool(500, prevalence=0.05, seed=1)
    multi = lw.make_multilabel_pool(300, 3, prevalence=[0.2, 0.1, 0.05], seed=2)
    assert default_design(binary) == "online-poisson" and default_design(multi) == "importance"
    assert lw.make_design("default", binary) == lw.OnlinePoissonDesign()
    assert lw.make_design("default", multi, lam=0.9) == lw.ImportanceDesign(lam=0.9)
    session = lw.Session(binary, lw.make_measure("f1", binary), "default", seed=0)
    assert session.design == lw.OnlinePoissonDesign()
    with pytest.raises(ValueError, match="pass pool="):
        lw.make_design("default")


def test_simulate_reports_the_resolved_design(tmp_path, write_pool_csv):
    pool = lw.make_pool(2000, prevalence=0.05, seed=3)
    result = lw.simulate(pool, lw.make_measure("f1", pool), "default", budget=100, repeats=2)
    out = result.to_dict()
    assert out["design"] == "default" and out["design_resolved"] == "online-poisson"
    same = lw.simulate(pool, lw.make_measure("f1", pool), "online-poisson", budget=100, repeats=2).to_dict()
    assert same["design_resolved"] == "online-poisson"
    assert same["checkpoints"] == out["checkpoints"]  # the same design, the same seed: the same numbers

    path = write_pool_csv(pool, tmp_path / "pool.csv")
    runner = CliRunner()
    cli = runner.invoke(app, ["simulate", "--pool", str(path), "--design", "default", "--budget", "100",
                              "--repeats", "2", "--json"])
    assert cli.exit_code == 0, cli.output
    got = json.loads(cli.stdout)
    assert got["design"] == "default" and got["design_resolved"] == "online-poisson"
    init = runner.invoke(app, ["init", str(path), "--session", str(tmp_path / "s.lws"), "--design", "default"])
    assert init.exit_code == 0, init.output
    assert "online-poisson" in init.output
