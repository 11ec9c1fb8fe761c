"""``benchmarks/design_variants.py``: a scalar's MSE, coverage and width ratio, and a curve's over its components."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def summary(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    from design_variants import summary

    return summary


# one checkpoint, two runs: estimates 0.1 and 0.3 of 0.2, intervals [0, 0.3] (covers) and [0.25, 0.35] (misses)
SCALAR = {"truth": 0.2, "values": [[0.1, 0.3]], "lower": [[0.0, 0.25]], "upper": [[0.3, 0.35]]}


def test_a_scalars_mse_coverage_and_width_ratio(summary):
    s = summary(SCALAR)
    assert s["mse"] == pytest.approx([0.01], rel=1e-12)
    assert s["cover"] == pytest.approx([0.5])
    assert s["width"] == pytest.approx([0.2 / (3.92 * 0.1)], rel=1e-12)


def test_a_curve_averages_its_defined_components_and_an_exact_one_adds_no_width(summary):
    # components: the scalar's, an exactly estimated 1 (zero-width intervals), one whose truth is undefined
    def stack(key, exact, undefined):
        return np.stack([np.asarray(SCALAR[key]), np.full((1, 2), exact), np.full((1, 2), undefined)], axis=-1).tolist()

    curve = {"truth": [0.2, 1.0, float("nan")], "values": stack("values", 1.0, 0.5),
             "lower": stack("lower", 1.0, 0.0), "upper": stack("upper", 1.0, 1.0)}
    s = summary(curve)
    assert s["mse"] == pytest.approx([0.01 / 2], rel=1e-12)
    assert s["cover"] == pytest.approx([(0.5 + 1.0) / 2])
    assert s["width"] == pytest.approx([(0.2 + 0.0) / (3.92 * (0.1 + 0.0))], rel=1e-12)
