"""``calibrate_pool`` and ``labelwise calibrate SESSION``: a deliberately miscalibrated pool recalibrated
from an importance-sampled session's labels with their design weights."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import labelwise as lw
from labelwise.cli import app
from labelwise.logs import (
    calibrate_pool,
    expected_calibration_error,
    fit_calibration,
    labeled_design_weights,
)
from labelwise.oracle.annotators import TruthOracle


def _labeled(path, pool, design, n_labels, seed):
    """A session of ``pool`` in ``path`` for F1 with ``n_labels`` labels from ``design``, in batches of 200."""
    session = lw.Session(pool, lw.make_measure("f1", pool), design, seed=seed, path=path)
    session.run(TruthOracle(pool), n_labels, batch_size=200)
    return session, path


@pytest.fixture(scope="module")
def labeled_session(tmp_path_factory):
    """600 labels drawn by the importance design from a pool whose probabilities over-state the positives."""
    pool = lw.make_pool(20_000, prevalence=0.05, calibration_error=2.0, seed=3)
    return _labeled(tmp_path_factory.mktemp("calibrate") / "eval.lw", pool, "importance", 600, seed=3)


def pool_ece(probs, pool):
    return expected_calibration_error(probs, pool.labels)


def test_recalibrated_probabilities_are_better_calibrated_on_the_pool(labeled_session):
    session, _ = labeled_session
    pool = session.pool
    calibrated, report = calibrate_pool(session)
    before, after = pool_ece(pool.probs[:, 0], pool), pool_ece(calibrated.probs[:, 0], pool)
    assert after < before / 4
    assert report[0]["ece_after"] < report[0]["ece_before"]


def test_design_weights_make_the_labels_stand_for_the_pool(labeled_session):
    """Under importance sampling the labels over-represent likely positives.  Weighted by their design
    weights, the one-bin control point ``r_1`` is a ratio estimate of the pool's prevalence (within three
    of its linearized standard errors); unweighted it is the labeled share of positives, far above it."""
    session, _ = labeled_session
    items, labels, weight = labeled_design_weights(session)
    prevalence = session.pool.labels.mean()
    r_weighted = fit_calibration(session.pool.probs[items, 0], labels, weight, n_bins=1).knot_values[1]
    se = np.sqrt(np.sum(weight**2 * (labels - r_weighted) ** 2)) / weight.sum()
    assert abs(r_weighted - prevalence) <= 3 * se
    r_unweighted = labels.mean()
    assert r_unweighted - prevalence > 10 * se
    # the same holds for the calibration error each estimates: weighted, that of the pool
    weighted_report, unweighted_report = calibrate_pool(session)[1][0], calibrate_pool(session, weighted=False)[1][0]
    true_ece = pool_ece(session.pool.probs[:, 0], session.pool)
    assert abs(weighted_report["ece_before"] - true_ece) < abs(unweighted_report["ece_before"] - true_ece)


def test_cli_writes_a_pool_that_init_reads(labeled_session, tmp_path):
    session, path = labeled_session
    out = tmp_path / "pool_calibrated.csv"
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    expected_pool, report = calibrate_pool(session)
    assert printed["systems"] == report and printed["n_labels"] == 600
    reread = lw.Pool.from_file(out)
    np.testing.assert_array_equal(reread.item_ids, session.pool.item_ids)
    np.testing.assert_allclose(reread.probs[:, 0], expected_pool.probs[:, 0])
    new_session = tmp_path / "again.lw"
    init = CliRunner().invoke(app, ["init", str(out), "--session", str(new_session), "--measure", "f1"])
    assert init.exit_code == 0, init.output


def test_cli_refuses_a_session_without_labels(tmp_path):
    pool = lw.make_pool(500, prevalence=0.1, seed=1)
    path = tmp_path / "empty.lw"
    lw.Session(pool, lw.make_measure("f1", pool), "passive", seed=1, path=path).close()
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "x.csv")])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: calibrate: the session has no labels yet")
    assert result.stderr.count("\n") == 1


@pytest.fixture(scope="module")
def rare_session(tmp_path_factory):
    """A 1:1000 pool with 200 passive labels: most calibration bins' labels hold no positive."""
    pool = lw.make_pool(20_000, prevalence=0.001, separation=2.0, seed=4)
    session, path = _labeled(tmp_path_factory.mktemp("rare") / "rare.lw", pool, "passive", 200, seed=4)
    session.close()
    return lw.Session.open(path), path


def test_items_given_a_certain_probability_are_counted_and_warned_of(rare_session, tmp_path):
    """Unshrunk, the spline's knot at (0, 0) and the bins without a positive give most items probability
    exactly 0; the report counts them (``certain_share``, checked against the written pool) and the table's
    run warns on standard error that a model would take them as surely negative."""
    session, path = rare_session
    calibrated, report = calibrate_pool(session, shrink=False)
    p = calibrated.probs[:, 0]
    assert report[0]["certain_share"] == pytest.approx(np.mean((p == 0) | (p == 1)))
    assert report[0]["certain_share"] > 0.5
    assert report[0]["prior_strength"] is None
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "c.csv"), "--no-shrink"])
    assert result.exit_code == 0, result.output
    assert f"{report[0]['certain_share']:.0%} of the items now have probability exactly 0 or 1" in result.stderr


@pytest.mark.parametrize("method", ["spline", "isotonic"])
def test_shrunk_calibration_gives_no_item_a_certain_probability(rare_session, tmp_path, method):
    """Shrunk (the default), a bin whose labels hold no positive keeps a rate near its mean probability: no
    item's probability is 0 or 1 (none was), the pool's lowest-scored half keeps an expected count of
    positives within a factor 2 of the raw probabilities' (the labels, 100 negatives there, cannot tell
    otherwise) instead of 0, and the command warns of nothing."""
    session, path = rare_session
    raw = session.pool.probs[:, 0]
    calibrated, report = calibrate_pool(session, method=method)
    p = calibrated.probs[:, 0]
    assert report[0]["certain_share"] == 0.0 and np.all((p > 0) & (p < 1))
    low = raw < np.median(raw)
    assert 0.5 < p[low].sum() / raw[low].sum() < 2.0
    assert np.all(np.diff(p[np.argsort(raw)]) >= 0)  # the map is monotone
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "c.csv"), "--method", method])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr and "(5-fold)" in result.stdout


def _passive_session(pool: lw.Pool, path, n_labels: int, measure: str) -> bytes:
    """A passive session file at ``path`` with ``n_labels`` true labels; returns its bytes."""
    session = lw.Session(pool, lw.make_measure(measure, pool), "passive", seed=1, path=path)
    session.run(TruthOracle(pool), n_labels, batch_size=n_labels)
    session.close()
    return path.read_bytes()


def test_cli_shows_no_cross_validated_error_of_one_label_as_na(tmp_path):
    """With one label there is no fold to fit on: the table says n/a (the JSON null), not nan."""
    path = tmp_path / "one.lw"
    _passive_session(lw.make_pool(500, prevalence=0.1, seed=1), path, 1, "f1")
    result = CliRunner().invoke(app, ["calibrate", str(path), "--out", str(tmp_path / "x.csv")])
    assert result.exit_code == 0, result.output
    assert "n/a" in result.stdout and "nan" not in result.stdout


@pytest.mark.parametrize(("pool", "message"), [
    (lambda: lw.make_multiclass_pool(300, seed=2),
     ("error: calibrate: the session's pool is multi-class (3 classes); calibrate handles binary pools only (one "
      "probability p(y=1|x) per system); the model-based designs (online-poisson, importance) temperature-scale a "
      "multi-class pool's probabilities to the labels themselves")),
    (lambda: lw.Pool.from_arrays(preds=np.arange(300) % 2, scores=np.linspace(0, 1, 300), labels=np.arange(300) % 2),
     ("error: calibrate: the session's pool has no probabilities (a prob column, p(y=1|x)) to calibrate; start a "
      "session from a pool file with one (--prob-col)")),
])
@pytest.mark.parametrize("with_out", [True, False])
def test_cli_says_why_a_pool_has_nothing_to_calibrate(tmp_path, pool, message, with_out):
    """The pool is refused first, --out given or not (it was once asked for before the pool was looked at)."""
    path, out = tmp_path / "s.lw", tmp_path / "x.csv"
    before = _passive_session(pool(), path, 20, "accuracy")
    result = CliRunner().invoke(app, ["calibrate", str(path), *(["--out", str(out)] if with_out else [])])
    assert result.exit_code == 1 and result.stderr.splitlines() == [message]
    assert not out.exists() and path.read_bytes() == before


def test_cli_asks_for_out_once_the_pool_can_be_calibrated(tmp_path):
    path = tmp_path / "s.lw"
    before = _passive_session(lw.make_pool(300, prevalence=0.3, seed=2), path, 20, "f1")
    result = CliRunner().invoke(app, ["calibrate", str(path)])
    assert result.exit_code == 1 and result.stderr.splitlines() == [
        "error: calibrate: give the file to write the calibrated pool to with --out (-o), e.g. --out calibrated.csv"]
    assert path.read_bytes() == before
