"""The README's "Extending labelwise" examples run as printed, and what they add works."""

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

import labelwise as lw
from labelwise.designs import DESIGNS
from labelwise.measures import registry

README = Path(__file__).resolve().parents[1] / "README.md"


def _examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Extending labelwise"):]
    section = section[:section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


@pytest.fixture
def scratch_registries():
    """Registrations made by an example are undone afterwards."""
    designs, measures = dict(DESIGNS), dict(registry._REGISTRY)
    yield
    DESIGNS.clear()
    DESIGNS.update(designs)
    registry._REGISTRY.clear()
    registry._REGISTRY.update(measures)


def _run(code: str) -> dict:
    namespace: dict = {"__name__": "readme_example"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own examples
    return namespace


def test_readme_has_a_measure_a_design_and_an_estimator_example_each_under_30_lines():
    examples = _examples()
    assert len(examples) == 3
    assert all(len([line for line in code.splitlines() if line.strip()]) < 30 for code in examples)


def test_measure_example_registers_a_measure_that_is_exact_on_a_census(scratch_registries):
    ns = _run(_examples()[0])
    pool = ns["pool"]
    measure = lw.make_measure("specificity", pool)
    assert measure == lw.make_measure("specificity", pool)
    labels, preds = pool.labels, pool.preds[:, 0]
    negatives = labels == 0
    exact = np.mean(preds[negatives] == 0)
    assert lw.true_value(pool, measure)[0] == pytest.approx(exact, rel=1e-12)


def test_design_example_registers_a_design_whose_estimate_is_unbiased(scratch_registries):
    ns = _run(_examples()[1])
    design = lw.make_design("top-heavy", power=1.0)
    assert design.spec() == {"design": "top-heavy", "power": 1.0, "defensive": 0.1}
    pool = ns["pool"]
    measure = lw.make_measure("precision", pool)
    result = lw.simulate(pool, measure, design, budget=300, repeats=40, seed=1)
    row = result.checkpoint_rows()[-1]
    # unbiased: |bias| within 3 standard errors of the mean over 40 runs
    assert abs(row["bias"]) < 3 * np.sqrt(row["mse"] / 40) + 1e-12


def test_estimator_example_agrees_with_the_session_when_weights_have_mean_one(scratch_registries):
    ns = _run(_examples()[2])
    sample, measure = ns["sample"], ns["measure"]
    w, c = sample.draws.weight, sample.draws.count
    est = ns["self_normalized_estimate"](measure, ns["losses"], w, c, sample.n_labels)
    ratio = np.average(w, weights=c)
    # self-normalising only rescales R-hat, so F1 (a ratio of two of its components) is unchanged
    assert est.value[0] == pytest.approx(ns["session"].estimate().value[0], rel=1e-9)
    np.testing.assert_allclose(est.R * ratio, ns["session"].estimate().R, rtol=1e-12)
