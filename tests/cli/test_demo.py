"""``labelwise demo``: the table, the comparison with passive sampling and the legend that explains both."""

from __future__ import annotations

import re

import numpy as np
from typer.testing import CliRunner

from labelwise.cli import app
from labelwise.cli.render import demo_legend
from labelwise.estimators import make_estimate
from labelwise.measures import FBeta

runner = CliRunner()


def test_demo_legend_says_why_each_interval_is_as_wide_as_it_is():
    result = runner.invoke(app, ["demo", "--n-items", "20000", "--prevalence", "0.005", "--budget", "300",
                                 "--seed", "2"])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "Why the intervals are as wide as they are (positives are 0.50% of the pool):" in text
    assert re.search(r"online-poisson: \d+ of 300 labels were positives; labels go where the measure is decided", text)
    assert re.search(r"passive: \d+ of 300 labels were positives; uniform draws, so the interval is the posterior "
                     r"over the confusion counts \(TP, FP, FN, TN\)", text)


def test_demo_legend_explains_a_miss():
    f1 = FBeta(1.0)
    est = make_estimate(f1, np.array([0.1, 0.2]), np.array([[1e-4]]), 500, 500)  # F1 0.5 +- 0.02
    covered = demo_legend([("passive", est, 7)], np.array([0.5]), 0.01).plain
    assert "passive: 7 of 500 labels were positives" in covered and "Missed" not in covered
    missed = demo_legend([("passive", est, 7)], np.array([0.9]), 0.01).plain
    assert missed.splitlines()[-1] == ("  Missed the truth: passive f1. A 95% interval misses in 5% of runs by design; "
                                       "`labelwise simulate` measures how often.")
