"""A measure equal to the session's (rebuilt by name, or from the session file) takes the target's path."""

import numpy as np
import pytest

import labelwise as lw


@pytest.mark.parametrize("design", ["ais", "online-poisson"])
def test_an_equal_measure_gets_the_targets_covariance(design, tmp_path):
    pool = lw.make_pool(3000, prevalence=0.02, seed=5)
    session = lw.Session(pool, lw.make_measure("f1", pool), lw.make_design(design, n_strata=16, branching=16),
                         seed=2, path=tmp_path / "s.lws")
    session.run(lw.TruthOracle(pool), budget=300)
    target = session.estimate()
    again = session.estimate(lw.make_measure("f1", pool))  # equal, not the same object
    np.testing.assert_array_equal(again.cov, target.cov)
    # a measure that is not equal (F-beta at a beta a hair from 1) takes the sample-reuse path: ais's
    # leaves out the model's part for the unlabeled items (the equal one did not fall back to it), while
    # online-poisson's models them too when the groups determine the measure's loss, as here
    other = session.estimate(lw.make_measure("fbeta:1.000001", pool))
    assert other.value[0] == pytest.approx(target.value[0], abs=1e-5)
    assert np.allclose(other.cov, target.cov, rtol=1e-3) == (design == "online-poisson")
    session.close()
    reopened = lw.Session.open(tmp_path / "s.lws")  # the measure rebuilt from the file's spec
    np.testing.assert_allclose(reopened.estimate(lw.make_measure("f1", pool)).cov, target.cov, rtol=1e-9)
