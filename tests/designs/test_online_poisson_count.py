"""online-poisson's count interval (variance="count"): the exceptions left unlabeled as an exact count."""

import numpy as np
import pytest

import labelwise as lw


def _session(pool, budget, seed=1, measure="f1", **settings):
    session = lw.Session(pool, lw.make_measure(measure, pool), lw.OnlinePoissonDesign(variance="count", **settings),
                         seed=seed, budget=budget)
    session.run(lw.TruthOracle(pool), budget)
    return session


def _exceptions(gm):
    """Expected unlabeled exceptions per group whose label changes the design's loss."""
    pi = gm.posterior(interval=True)
    u = np.einsum("cgd,md->cgm", gm.rep_loss, np.eye(gm.rep_loss.shape[2]))
    return lw.estimators.exception_shifts(u, pi, gm.groups.unlabeled, gm.n_items)[2].sum(axis=1)


#: The block posterior (lam s + O) / (lam + L) holds at EM's fixed point, reached to 1e-6 in each probability
#: (labelwise.designs.group_model.MODEL_TOL): relative to probabilities of about 1e-3, 1e-3.
EM_TOLERANCE = 1e-3


def _by_hand(gm, points, exceptions):
    """Each group's expected exceptions under the single posterior point ``points``: the flat tree's block
    posterior (lam s + O) / (lam + L) with the prior's part lam s scaled by the ratio of the block's mean
    probability of the exception's label under the point and under the design's fit."""
    live = exceptions > 0
    block = gm.groups.block[live]
    q = gm._quantiles[block]
    fitted, moved = gm.platt(q).mean(axis=1), points(q).mean(axis=1)
    pi = gm.posterior(interval=True)[live]
    exception = 1 - np.argmax(pi, axis=1)
    ratio = np.where(exception == 0, (1 - moved) / (1 - fitted), moved / fitted)
    model = gm.interval_model
    lam, labels = model.prior_strength, model.observed_counts[block].sum(axis=1)
    prior = lam * model.block_prior[block, exception] / (pi[np.arange(pi.shape[0]), exception] * (lam + labels))
    return exceptions[live] * (1 + prior * (ratio - 1))


def test_count_multipliers_scale_the_tail_by_the_posterior_points(monkeypatch):
    """A posterior point equal to the design's recalibration multiplies the count by 1; one whose intercept is
    log 2 higher, the prior's part of each block's exceptions by 2 up to their probability
    (sigmoid(x + log 2) = 2 sigmoid(x) (1 + O(p))): by hand."""
    from labelwise.designs import group_model
    from labelwise.oracle.calibration import PlattPosterior

    pool = lw.make_pool(5000, prevalence=0.005, separation=4.0, seed=3)
    session = _session(pool, 300, n_strata=16, branching=16)
    gm = session.sampler.gm
    a, b = gm.platt.a, gm.platt.b
    points = PlattPosterior(np.array([a, a]), np.array([b, b + np.log(2.0)]), np.array([0.25, 0.75]))
    monkeypatch.setattr(group_model, "platt_posterior", lambda *args, **kw: points)
    exceptions = _exceptions(gm)
    means, weights, _ = gm.count_spread(exceptions)
    assert weights.tolist() == [0.25, 0.75]
    assert means[0].sum() == pytest.approx(exceptions.sum(), rel=1e-12)
    single = PlattPosterior(np.array([a]), np.array([b + np.log(2.0)]), np.array([1.0]))
    assert means[1].sum() == pytest.approx(_by_hand(gm, single, exceptions).sum(), rel=EM_TOLERANCE)
    largest = np.max(np.min(gm.posterior(interval=True), axis=1)[gm.groups.unlabeled > 0])
    assert exceptions.sum() < means[1].sum() <= 2.0 * (1 + largest) * exceptions.sum()


def test_uncalibrated_scores_keep_the_count_known_and_blocks_beta_binomial():
    """Without recalibration one row: each block's expected exceptions, summed over its groups; each block's
    overdispersion (U_b - 1) / (lam + L_b + 1), its unlabeled items and labels counted by hand."""
    pool = lw.make_pool(3000, prevalence=0.05, seed=3)
    session = _session(pool, 200, n_strata=16, branching=16, calibration="none", prior_strength=20.0)
    gm = session.sampler.gm
    exceptions = _exceptions(gm)
    means, weights, overdispersion = gm.count_spread(exceptions)
    assert weights.tolist() == [1.0] and means.shape[0] == 1
    blocks = np.unique(gm.groups.block[exceptions > 0])
    item_block = gm.hierarchy.blocks
    labeled = np.zeros(pool.n_items, dtype=bool)
    labeled[session.sample().draws.items] = True
    for b, mean, d in zip(blocks, means[0], overdispersion):
        assert mean == pytest.approx(exceptions[gm.groups.block == b].sum(), rel=1e-12)
        in_block = item_block == b
        left, labels = np.sum(in_block & ~labeled), np.sum(in_block & labeled)
        assert d == pytest.approx((left - 1) / (20.0 + labels + 1), rel=1e-12)


def test_only_labels_that_move_the_loss_stand_for_unlabeled_exceptions(monkeypatch):
    """Precision, l = [y f, f]: a positive among the predicted negatives changes no loss, so of the labeled items
    exactly those predicted positive whose label is not their group's likeliest count ``c_n - 1`` in the centre."""
    from labelwise.designs import count_interval

    pool = lw.make_pool(4000, prevalence=0.02, separation=2.0, seed=5)
    session = _session(pool, 400, measure="precision", n_strata=16, branching=16)
    seen = {}
    monkeypatch.setattr(count_interval, "counted_exceptions",
                        lambda moves, coef: seen.update(moves=moves, coef=coef) or 0.0)
    # the design's own estimate: its 400 labels hold every predicted positive, which makes the session's exact
    session.sampler.estimate(session.measure, session.sample())
    gm, sample = session.sampler.gm, session.sample()
    items, labels = sample.draws.items, sample.labels
    mode = np.argmax(gm.posterior(interval=True), axis=1)[gm.groups.of_item[items]]
    predicted = np.asarray(pool.preds)[items, 0] == 1
    assert np.any(~predicted & (labels != mode))  # positives among the predicted negatives were labeled
    assert np.array_equal(seen["moves"], predicted & (labels != mode))
    assert lw.estimators.counted_exceptions(np.array([True, False, True]), np.array([3.0, 50.0, 1.5])) == 2.5


def test_count_multipliers_weigh_only_groups_whose_exceptions_move_the_loss(monkeypatch):
    """A posterior point with the intercept log 2 higher makes positives more likely everywhere: more exceptions
    among the predicted negatives (F1's, mostly), fewer negatives among the confident predicted positives.
    Precision's exceptions are only the latter, so its multiplier falls below 1 while F1's rises above it; each
    is its groups' expected exceptions under the point, by hand."""
    from labelwise.designs import group_model
    from labelwise.oracle.calibration import PlattPosterior

    pool = lw.make_pool(5000, prevalence=0.05, separation=4.0, seed=3)
    multiplier = {}
    for measure in ("f1", "precision"):
        gm = _session(pool, 100, measure=measure, n_strata=16, branching=16).sampler.gm
        points = PlattPosterior(np.array([gm.platt.a]), np.array([gm.platt.b + np.log(2.0)]), np.array([1.0]))
        monkeypatch.setattr(group_model, "platt_posterior", lambda *args, points=points, **kw: points)
        exceptions = _exceptions(gm)
        multiplier[measure] = gm.count_spread(exceptions)[0][0].sum() / exceptions.sum()
        assert multiplier[measure] == pytest.approx(_by_hand(gm, points, exceptions).sum() / exceptions.sum(),
                                                    rel=EM_TOLERANCE)
        live = exceptions > 0
        if measure == "precision":
            assert np.all(np.asarray(pool.preds)[gm.groups.rep[live], 0] == 1)
    assert multiplier["precision"] < 1.0 < multiplier["f1"]


@pytest.mark.slow
def test_count_interval_covers_on_a_rare_pool():
    """1:500 pool, F1 at 600 labels, 60 runs: coverage >= 0.95 - 3 s.e. (0.866)."""
    pool = lw.make_pool(20000, prevalence=0.002, separation=3.0, seed=11)
    truth = lw.true_value(pool, lw.make_measure("f1", pool))[0]
    runs, inside = 60, 0
    for r in range(runs):
        lo, hi = _session(pool, 600, seed=r).estimate().interval()
        inside += bool(lo[0] <= truth <= hi[0])
    assert inside / runs >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / runs)
