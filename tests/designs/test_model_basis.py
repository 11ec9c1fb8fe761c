"""The interval's basis says how the oracle model reads the systems' scores, for every ``calibration``."""

from __future__ import annotations

import pytest

import labelwise as lw
from labelwise.designs.group_model import CLASS_MODEL_BASIS, MODEL_BASIS, model_basis
from labelwise.measures import make_measure
from labelwise.oracle import TruthOracle

TEMPERED = "the systems' class probabilities, temperature-scaled to the labels"


@pytest.fixture(scope="module")
def pools() -> dict[str, lw.Pool]:
    return {"f1": lw.make_pool(2000, prevalence=0.05, seed=2),
            "accuracy": lw.make_multiclass_pool(1500, class_shares=(0.6, 0.3, 0.1), seed=4)}


@pytest.mark.parametrize("design", ["online-poisson", "importance"])
@pytest.mark.parametrize("calibration, binary, multiclass", [
    ("platt", "the systems' scores recalibrated on the labels", TEMPERED),
    ("platt-posterior", "the systems' scores recalibrated on the labels, the map averaged over its posterior",
     TEMPERED),
    ("none", "the systems' scores taken at face value", "the systems' class probabilities, taken at face value"),
])
def test_the_basis_says_how_the_model_reads_the_scores(pools, design, calibration, binary, multiclass):
    """It said "scores recalibrated" under ``calibration="none"`` too (binary pools on score blocks, with the
    per-item model, and multi-class pools).  Binary: the score blocks' model (platt, none) and the per-item one
    (platt-posterior); multi-class: the per-item one."""
    for measure, read in (("f1", binary), ("accuracy", multiclass)):
        pool = pools[measure]
        session = lw.Session(pool, make_measure(measure, pool), lw.make_design(design, calibration=calibration),
                             seed=0)
        session.run(TruthOracle(pool), 200, 100)
        basis = session.estimate().basis
        assert f"({read})" in basis, (measure, basis)
        assert ("recalibrated" in basis or "temperature" in basis) == (calibration != "none"), basis


def test_the_default_wording_is_unchanged():
    assert model_basis() == MODEL_BASIS == (
        "design-based for the labeled items; the items not labeled yet enter through the oracle model (the systems' "
        "scores recalibrated on the labels), so the interval assumes those scores do not understate the positives "
        "left among them")
    assert model_basis("platt-posterior", multiclass=True) == CLASS_MODEL_BASIS
