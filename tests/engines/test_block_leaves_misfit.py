"""The interval's recalibration: the design-weighted Platt map unless the labels counted once show it too low, or
read in hindsight where they show it too high."""

import numpy as np

from labelwise.engines.block_leaves import (
    OVERSTATED,
    weighted_overstates,
    weighted_understates,
)

COUNTED_ONCE = np.array([1.0, 10.0, 100.0, 1000.0])


def test_only_a_weighted_count_below_every_point_of_the_posterior_is_a_misfit():
    assert weighted_understates(0.99, COUNTED_ONCE)
    assert not weighted_understates(1.0, COUNTED_ONCE)  # at the lowest point: within the posterior's reach
    assert not weighted_understates(50.0, COUNTED_ONCE)
    assert not weighted_understates(5000.0, COUNTED_ONCE)  # too high: tested apart (weighted_overstates)


def misfit_leaves(tail_floor: bool):
    """Four score blocks, each its own leaf, from 100 items at 0.5 to a million at 0.001, labeled 20 / 10 / 3 / 1
    times, 5 and 8 positives in the first two: the design-weighted map (the tail's one negative standing for a
    million items) leaves fewer positives unlabeled than any point of the posterior of the labels counted once."""
    import labelwise as lw
    from labelwise.engines.block_leaves import BlockLeaves
    from labelwise.engines.blocks import BlockSummary

    prior = np.array([0.5, 0.1, 0.01, 0.001])
    counts = np.array([100, 1_000, 10_000, 1_000_000])
    summary = BlockSummary(np.arange(4, dtype=np.int64), counts, counts * prior, 1, False)
    leaves = BlockLeaves(lw.OnlinePoissonDesign(tail_floor=tail_floor), summary, prior, np.arange(4))
    blocks = np.repeat(np.arange(4), [20, 10, 3, 1])
    labels = np.zeros(blocks.size, dtype=int)
    labels[:5] = 1
    labels[20:28] = 1
    return leaves, blocks, labels


def test_where_the_weighted_map_understates_the_interval_reads_every_point_of_the_posterior():
    from labelwise.designs.tail_floor import floor_rate
    from labelwise.oracle.calibration import logits_of, platt_posterior

    leaves, blocks, labels = misfit_leaves(False)
    model = leaves.model(blocks, labels, interval=True)
    assert model.point_rates is not None  # the misfit branch: the count over the posterior's points
    posterior = platt_posterior(logits_of(leaves.prior)[blocks], labels)
    np.testing.assert_allclose(model.point_weights, posterior.weight)
    # the leaves' Beta means are the points' rates averaged over the posterior
    mean = model.positive / (model.positive + model.negative)
    np.testing.assert_allclose(model.point_weights @ model.point_rates, mean)
    assert leaves.model(blocks, labels).point_rates is None  # the rounds plan with the weighted map

    floored, _, _ = misfit_leaves(True)
    raised = floored.model(blocks, labels, interval=True)
    r0 = floor_rate(posterior(logits_of(leaves.prior)[blocks]), labels)  # under the map behind the leaves
    assert r0 > 0
    n, k = np.bincount(blocks, minlength=4), np.bincount(blocks, weights=labels, minlength=4)
    strength = (model.positive + model.negative - n)[0]  # the leaves' prior strength, the same in both
    base = (model.point_rates * (strength + n) - k) / strength  # each point's prior mean rate
    np.testing.assert_allclose(raised.point_rates, (strength * (r0 + (1 - r0) * base) + k) / (strength + n))


def test_the_interval_reads_the_far_tail_of_over_confident_scores_the_rounds_plan_on_it_as_one_group():
    """Blocks at logits -3, -15, -45 and -90 (an over-confident system's: three times the true logit): the rounds'
    model ties the two beyond the clip at -30, a floor its allocation keeps; the interval's model gives each block
    the recalibrated rate of its own logit, so the far tail holds the few positives a slope of 1/3 puts there, not a
    million items at the rate of -30."""
    from scipy.special import expit

    import labelwise as lw
    from labelwise.engines.block_leaves import BlockLeaves
    from labelwise.engines.blocks import BlockSummary

    prior = expit(np.array([-3.0, -15.0, -45.0, -90.0]))
    counts = np.array([100, 1_000, 10_000, 1_000_000])
    summary = BlockSummary(np.arange(4, dtype=np.int64), counts, counts * prior, 1, False)
    leaves = BlockLeaves(lw.OnlinePoissonDesign(), summary, prior, np.arange(4))
    blocks = np.repeat(np.arange(2), [20, 10])  # no label in the far tail: its leaves' means are their prior means
    labels = np.zeros(blocks.size, dtype=int)
    labels[:5] = 1
    planned = leaves.model(blocks, labels)
    mean = planned.positive / (planned.positive + planned.negative)
    assert mean[2] == mean[3]  # tied by the clip
    read = leaves.model(blocks, labels, interval=True)
    mean = read.positive / (read.positive + read.negative) if read.point_rates is None \
        else read.point_weights @ read.point_rates
    assert mean[3] < mean[2] * 1e-6  # 45 logits further down: far fewer positives at any slope above 0.3


def test_the_normal_case_reads_the_map_fitted_to_the_labels_each_counted_once():
    """``counted_once``: the leaves' prior means are the unweighted Platt map's (each block its own leaf here), plain
    Beta posteriors with no points of the posterior, whatever the weighted map says."""
    from scipy.special import expit

    from labelwise.oracle.calibration import fit_platt, logits_of

    leaves, blocks, labels = misfit_leaves(False)
    once = leaves.model(blocks, labels, interval=True, counted_once=True)
    assert once.point_rates is None
    n, k = np.bincount(blocks, minlength=4), np.bincount(blocks, weights=labels, minlength=4)
    strength = (once.positive + once.negative - n)[0]
    prior_mean = (once.positive - k) / strength
    platt = fit_platt(logits_of(leaves.prior)[blocks], labels)
    np.testing.assert_allclose(prior_mean, expit(platt.a * logits_of(leaves.prior) + platt.b))
    weighted = leaves.model(blocks, labels)  # the rounds' map, steeper: the tail's one label stands for 1e6 items
    weighted_mean = (weighted.positive - k) / (weighted.positive + weighted.negative - n)[0]
    assert weighted_mean[3] < prior_mean[3] / 10


def test_a_weighted_count_the_posterior_gives_less_than_its_tail_probability_overstates():
    weight = np.array([0.5, 0.3, 0.2 - OVERSTATED / 2, OVERSTATED / 2])
    assert weighted_overstates(1000.0, COUNTED_ONCE, weight)  # only the last point reaches it
    assert weighted_overstates(1001.0, COUNTED_ONCE, weight)  # none does
    assert not weighted_overstates(100.0, COUNTED_ONCE, weight)  # the last two: 0.2
    assert not weighted_overstates(1000.0, COUNTED_ONCE, np.full(4, 0.25))


def test_where_the_weighted_map_overstates_the_interval_is_read_in_hindsight():
    """Five score blocks at logits 2 to -7 of an under-confident system (true logits twice those), 100 to a
    million items, 50 labels each with the 49 and 6 positives of the top two: the top labels stand for few items
    each, the weighted slope stays near its prior's 1 (the tail's rates of 1e-3) while the labels counted once read
    a slope near 2, under which the weighted count of positives left is in the posterior's far tail."""
    from scipy.special import expit

    import labelwise as lw
    from labelwise.engines.block_leaves import BlockLeaves
    from labelwise.engines.blocks import BlockSummary
    from labelwise.oracle.calibration import logits_of, platt_posterior

    prior = expit(np.array([2.0, -1.0, -3.0, -5.0, -7.0]))
    counts = np.array([100, 1_000, 10_000, 100_000, 1_000_000])
    summary = BlockSummary(np.arange(5, dtype=np.int64), counts, counts * prior, 1, False)
    leaves = BlockLeaves(lw.OnlinePoissonDesign(), summary, prior, np.arange(5))
    blocks = np.repeat(np.arange(5), 50)
    labels = np.zeros(blocks.size, dtype=int)
    labels[:49] = 1
    labels[50:56] = 1
    model = leaves.model(blocks, labels, interval=True)
    assert model.rate_spread is not None and model.point_rates is None  # the hindsight read
    posterior = platt_posterior(logits_of(leaves.prior)[blocks], labels)
    n = np.bincount(blocks, minlength=5)
    strength = (model.positive + model.negative - n)[0]
    at_points = expit(logits_of(prior)[:, None] * posterior.a + posterior.b).T  # each block its own leaf
    # the leaves' Beta means are the posterior's average rates, their spread that average's over its points
    np.testing.assert_allclose(model.positive, strength * (posterior.weight @ at_points) + labels @ np.eye(5)[blocks])
    assert leaves.model(blocks, labels).rate_spread is None  # the rounds plan with the weighted map


def test_with_no_positive_labeled_the_interval_keeps_the_maps_rates_the_rounds_take_the_weakest_strength():
    """Four blocks at rates 1e-3 to 1e-6 (11 expected positives among 2.2 million items), 300 negatives in each of
    the first three: the labels' likelihood moves by less than 1.92 across the strengths, so the interval's leaves
    hold the map's rates (strength 500) where the rounds' most likely strength is the weakest (0.5), whose Beta
    posterior means, 0.5 / 300.5 of the map's rate in a labeled leaf, empty the tail of positives 900 negatives at
    these rates could not have shown."""
    import labelwise as lw
    from labelwise.engines.block_leaves import BlockLeaves
    from labelwise.engines.blocks import BlockSummary
    from labelwise.oracle.calibration import STRENGTHS

    prior = np.array([1e-3, 1e-4, 1e-5, 1e-6])
    counts = np.array([1_000, 10_000, 100_000, 2_000_000])
    summary = BlockSummary(np.arange(4, dtype=np.int64), counts, counts * prior, 1, False)
    leaves = BlockLeaves(lw.OnlinePoissonDesign(calibration="none"), summary, prior, np.arange(4))
    blocks = np.repeat(np.arange(3), 300)
    labels = np.zeros(blocks.size, dtype=int)
    n = np.array([300, 300, 300, 0])
    for interval, strength in ((False, STRENGTHS[0]), (True, STRENGTHS[-1])):
        model = leaves.model(blocks, labels, interval=interval)
        np.testing.assert_allclose(model.positive, strength * prior)
        np.testing.assert_allclose(model.negative, strength * (1 - prior) + n)



def test_where_exceptions_are_common_no_run_reads_them_as_missed():
    """Precision on a 30%-positive pool with a weak system: the rounds draw exceptions at every turn and the
    design-weighted labels carry them, so the interval keeps the weighted map. Reading the recalibration's
    posterior there (where the labels counted once happened to disagree with the weighted map) took the whole count
    of exceptions left as missed: 3 of the 30 runs had intervals 7-12 times as wide as the median run's (0.52
    against 0.07 at 500 labels). Without it the widest run is 1.05-1.10 times the median (pool seeds 0-6)."""
    import labelwise as lw

    pool = lw.make_pool(20_000, prevalence=0.3, separation=2.0, seed=1)
    result = lw.simulate(pool, lw.make_measure("precision", pool), "online-poisson", budget=1000, batch_size=50,
                         repeats=30, seed=0, checkpoints=[500, 1000])
    widths = result.upper[:, :, 0] - result.lower[:, :, 0]
    assert np.all(widths.max(axis=1) < 1.5 * np.median(widths, axis=1))


def test_exceptions_are_common_only_when_both_maps_expect_them():
    """The weighted map alone can expect exceptions common early on a rare pool (a tail label standing for a
    million items): the posterior is still read unless the map of the labels counted once agrees."""
    import labelwise as lw
    from labelwise.engines.block_leaves import BlockLeaves
    from labelwise.engines.blocks import BlockSummary
    from labelwise.oracle.calibration import logits_of

    leaves, blocks, _ = misfit_leaves(False)  # rare: rates 0.5 to 0.001, a million items at the bottom
    labels = np.zeros(blocks.size, dtype=int)
    labels[:10] = 1  # half the top block, none below: the labels agree with the rates
    labels[20] = 1
    logits = logits_of(leaves.prior)
    common_map = np.full(4, 0.3)  # a weighted map expecting 30% exceptions everywhere
    assert leaves._exceptions_rare(common_map, logits, blocks, labels)  # the counted-once map says rare
    assert leaves._exceptions_rare(leaves.prior, logits, blocks, labels)

    prior = np.array([0.5, 0.3, 0.2, 0.1])  # common positives, labels as the rates
    counts = np.array([1_000, 10_000, 10_000, 10_000])
    common = BlockLeaves(lw.OnlinePoissonDesign(), BlockSummary(np.arange(4, dtype=np.int64), counts, counts * prior,
                                                                1, False), prior, np.arange(4))
    blocks = np.repeat(np.arange(4), 50)
    labels = (np.arange(200) % 50 < np.repeat(prior * 50, 50)).astype(int)
    assert not common._exceptions_rare(common_map, logits_of(common.prior), blocks, labels)
    assert common._exceptions_rare(np.full(4, 1e-4), logits_of(common.prior), blocks, labels)  # weighted: rare
    # the hindsight-read intervals always read the posterior
    hindsight = BlockLeaves(lw.OnlinePoissonDesign(variance="hindsight"), common.summary, prior, np.arange(4))
    assert hindsight._exceptions_rare(common_map, logits_of(prior), blocks, labels)
