"""The oracle model that adaptive designs share: a tree over score (or feature) blocks, a
Dirichlet-tree model of ``p(y|x)`` per block, and the pool grouped by (block, loss key).

Marchant & Rubinstein, "Needle in a Haystack: Label-Efficient Evaluation
under Extreme Class Imbalance" (KDD 2021), sec. 4.  The model is per leaf
block, and a measure's loss depends on x only through a small key (the
predicted label, the threshold index of a PR curve), so every unlabeled item
of a (block, key) group has the same posterior and the same influence: an
update costs O(groups + labels), not O(N).  ``ais`` and ``online-poisson``
hold a :class:`GroupModel` (composition), configured by the settings of
:class:`~labelwise.designs.tree_model.TreeModelDesign`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..estimators import with_unseen_labels
from ..measures import Measure
from ..oracle import DirichletTreeModel, score_prior
from ..oracle.calibration import (
    Platt,
    block_quantiles,
    fit_platt,
    items_per_label,
    logits_of,
    marginal_strength,
    platt_posterior,
)
from ..oracle.temperature import fit_temperature, tempered
from ..partition import Hierarchy
from ..pool import Pool
from .grouped import GroupedPool

__all__ = ["CALIBRATIONS", "CLASS_MODEL_BASIS", "MODEL_BASIS", "GroupModel", "model_basis"]

#: Convergence tolerance of the oracle model's EM (largest change of a posterior probability): it only
#: steers the proposal and the covariance, and 1e-8 cost 40% more time for the same error.
MODEL_TOL = 1e-6

#: The recalibrations of the scores :class:`~labelwise.designs.tree_model.TreeModelDesign` offers.
CALIBRATIONS = ("platt", "platt-posterior", "none")

#: Prior strength before the first label when it is learned (``prior_strength="auto"``).
START_STRENGTH = 10.0

#: The start of :func:`model_basis`.
_MODEL_PART = "design-based for the labeled items; the items not labeled yet enter through the oracle model"


def model_basis(calibration: str = "platt", multiclass: bool = False) -> str:
    """What an interval that takes the unlabeled items from the oracle model assumes, shown with every estimate
    (:attr:`~labelwise.estimators.Estimate.basis`): how the model reads the systems' scores under ``calibration``
    (one of :data:`CALIBRATIONS`), on a ``multiclass`` pool their class probabilities."""
    if multiclass:
        read = "taken at face value" if calibration == "none" else "temperature-scaled to the labels"
        return (f"{_MODEL_PART} (the systems' class probabilities, {read}), so the interval assumes those "
                "probabilities do not understate the systems' errors left among them")
    read = {"platt": "recalibrated on the labels", "none": "taken at face value",
            "platt-posterior": "recalibrated on the labels, the map averaged over its posterior"}[calibration]
    return (f"{_MODEL_PART} (the systems' scores {read}), so the interval assumes those scores do not understate the "
            "positives left among them")


#: :func:`model_basis` of the default calibration (Platt) on a binary pool.
MODEL_BASIS = model_basis()
#: :func:`model_basis` on a multi-class pool, whose class probabilities the model temperature-scales to the labels.
CLASS_MODEL_BASIS = model_basis(multiclass=True)


class GroupModel:
    """Dirichlet-tree model of the oracle over a grouped pool, updated from labels.

    Attributes
    ----------
    model : DirichletTreeModel
        Steers the proposal.
    interval_model : DirichletTreeModel
        Behind the interval (the same object unless its prior strength differs).
    groups : GroupedPool
        Items by (block, loss key), with the labeled ones tracked.
    rep_out, rep_loss, rep_nonzero
        Outputs of one item per group; its loss ``(C, G, d)`` and whether the
        loss is nonzero ``(C, G)`` for each label.
    labeled_y : ndarray
        Labels of ``groups.labeled_items`` (deterministic oracle).
    labeled_loss_sum : ndarray (d,)
        Sum of the labeled items' losses (deterministic oracle).
    calibration_uncertainty : bool
        Whether the scores' recalibration is averaged over its parameters' posterior.
    """

    calibration_uncertainty = False
    #: whether a multi-class pool's probabilities are temperature-scaled to the labels (models stored before it: no)
    temper = False
    #: the temperature :attr:`tempered_blocks` (the tempered probabilities' block means) were computed at
    tempered_at: float | None = None
    tempered_blocks: np.ndarray

    @property
    def basis(self) -> str:
        """What an interval taking the unlabeled items from this model assumes (:attr:`~labelwise.estimators.Estimate.basis`)."""
        if self.temper:
            return CLASS_MODEL_BASIS
        if self.calibrate:
            return model_basis("platt-posterior" if self.calibration_uncertainty else "platt")
        return model_basis("none", multiclass=self.n_classes > 2 and not self.pool.label_names)

    def __init__(self, pool: Pool, measure: Measure, oracle: str, hierarchy: Hierarchy, lam: float,
                 prior_strength: float | str, interval_prior_strength: float | None = None, *,
                 calibrate: bool = False, calibration_uncertainty: bool = False, within: np.ndarray | None = None,
                 temper: bool = False):
        self.pool, self.measure, self.oracle = pool, measure, oracle
        self.n_items, self.n_classes = pool.n_items, pool.n_classes
        self.hierarchy = hierarchy
        self.lam = lam  # the prior is recomputed from the pool when needed, not held: a stored set-up stays small
        prior = self.item_prior()
        self.auto_strength = prior_strength == "auto"
        strength = START_STRENGTH if self.auto_strength else float(prior_strength)
        self.model = DirichletTreeModel(hierarchy, prior, oracle=oracle, prior_strength=strength, tol=MODEL_TOL)
        self.interval_model = self.model
        if interval_prior_strength is not None and (self.auto_strength or interval_prior_strength != strength):
            self.interval_model = DirichletTreeModel(hierarchy, prior, oracle=oracle,
                                                     prior_strength=interval_prior_strength, tol=MODEL_TOL)
        self.calibrate = calibrate
        if calibration_uncertainty:  # (not set otherwise: models stored before it take the class's False)
            self.calibration_uncertainty = True
        self.platt = Platt()
        if temper:
            self.temper = True
        if calibrate or temper:
            self._seen_items = np.empty(0, dtype=np.int64)
            self._seen_y = np.empty(0)
        if calibrate:  # the block means of recalibrated scores, by quadrature over each block's logits
            self._quantiles = block_quantiles(hierarchy.blocks, logits_of(prior[:, 1]), hierarchy.n_leaves)
            self._seen_logits = np.empty(0)
        self._interval_fitted = True
        key = measure.loss_key(pool.outputs())
        if within is not None and key is not None:  # groups inside given classes (blocks earlier rounds drew on)
            key = np.unique(key, return_inverse=True)[1] * (int(within.max()) + 1) + within
        self.groups = GroupedPool(hierarchy.blocks, key)
        G, C = self.groups.n_groups, self.n_classes
        # binary pools: a block is a score interval whose groups share their prior
        self.prior_shift = _prior_shift(_group_sums(prior, self.groups), self.groups) if C > 2 else np.ones((G, C))
        self.rep_out = pool.outputs(self.groups.rep)
        self.rep_loss = np.stack([measure.loss(self.rep_out, np.full(G, c)) for c in range(C)])  # (C, G, d)
        self.rep_nonzero = np.stack([measure.loss_is_nonzero(self.rep_out, np.full(G, c)) for c in range(C)])
        self.labeled_y = np.empty(0, dtype=np.int64)
        self.labeled_loss_sum = np.zeros(measure.dim)

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        """Learn from new labels (under a stochastic oracle every label counts, an item's first
        label also moves it out of the unlabeled count)."""
        items = np.asarray(items, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        blocks = self.hierarchy.blocks[items]
        new = None if self.oracle == "deterministic" else _first_labels(items, self.groups.known)
        if self.interval_model is not self.model:  # fitted when an interval needs it
            self.interval_model.observe(blocks, labels, new=new, refit=False)
            self._interval_fitted = False
        learns = self.calibrate or self.temper or self.auto_strength
        self.model.observe(blocks, labels, new=new, refit=not learns)
        if new is None:
            self.groups.mark_labeled(items)
            self.labeled_y = np.concatenate([self.labeled_y, labels])
            self.labeled_loss_sum += self.measure.loss(self.pool.outputs(items), labels).sum(axis=0)
        else:
            self.groups.mark_labeled(items[new])
        if learns:
            self._learn_prior(items, labels)

    def item_prior(self, items: np.ndarray | None = None) -> np.ndarray:
        """The systems' scores as a prior on the labels of ``items`` (default all), ``(n, C)``
        (:func:`~labelwise.oracle.score_prior`)."""
        return score_prior(self.pool, self.lam, items=items)

    def _learn_prior(self, items: np.ndarray, labels: np.ndarray) -> None:
        """Refit the scores' recalibration and the prior strength to every label so far."""
        model = self.model
        block_prior = model.block_prior
        if self.calibrate:
            self._seen_items = np.concatenate([self._seen_items, items])
            self._seen_logits = np.concatenate([self._seen_logits, logits_of(self.item_prior(items)[:, 1])])
            self._seen_y = np.concatenate([self._seen_y, labels])
            weights = self._label_weights()
            self.platt = fit_platt(self._seen_logits, self._seen_y, weights)
            recalibration = self.platt
            if self.calibration_uncertainty:
                recalibration = platt_posterior(self._seen_logits, self._seen_y, weights, self.platt)
            s1 = recalibration(self._quantiles).mean(axis=1)
            filled = self.hierarchy.block_sizes > 0
            block_prior = np.where(filled[:, None], np.stack([1.0 - s1, s1], axis=1), 0.0)
        elif self.temper:  # multi-class: the probabilities temperature-scaled, block by block and group by group
            self._seen_items = np.concatenate([self._seen_items, items])
            self._seen_y = np.concatenate([self._seen_y, labels])
            self.temperature = fit_temperature(self.item_prior(self._seen_items), self._seen_y, self._label_weights())
            if self.pool.label_names:
                # multi-label: only softened.  The rare labels' few positives fit a sharpening temperature as often as
                # not on calibrated probabilities, which emptied the tail (coverage 0.81-0.89 at 500-1000 labels on
                # the 1:1000 pools of benchmarks/multilabel_grid.py); what the labels must correct is over-confidence
                self.temperature = max(self.temperature, 1.0)
            if self.temperature != self.tempered_at:  # the pool's tempered probabilities, once per temperature
                group_sum = _group_sums(tempered(self.item_prior(), self.temperature), self.groups)
                self.tempered_blocks = _block_means(group_sum, self.groups, self.hierarchy.n_leaves)
                self.prior_shift = _prior_shift(group_sum, self.groups)
                self.tempered_at = self.temperature
            block_prior = self.tempered_blocks
        strength = model.prior_strength
        if self.auto_strength:
            strength = marginal_strength(block_prior, model.observed_counts)
        model.set_prior(block_prior, strength)
        if self.interval_model is not model:
            self.interval_model.set_prior(block_prior, self.interval_model.prior_strength, refit=False)

    def _label_weights(self) -> np.ndarray:
        """Items each label stands for in the recalibration: its group's size over its group's labels."""
        sizes = self.groups.sizes
        return items_per_label(sizes, sizes - self.groups.unlabeled, self.groups.of_item[self._seen_items])

    def count_spread(self, exceptions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distribution of the exceptions left unlabeled: their expected numbers per block, uncertain twice over.

        An exception is an unlabeled item whose label is not its group's
        most likely one and changes the loss (a positive in a tail of
        negatives); the model expects ``E_g`` of them in group ``g``
        (:func:`~labelwise.estimators.missed_count_variance` takes the
        distribution returned here).

        * **The recalibration.**  The labeled items were chosen from the
          scores and earlier labels only, so their likelihood ignores the
          design (Rubin, "Inference and missing data", Biometrika 1976) and
          the posterior of the Platt parameters given the labels, each
          counted once (:func:`~labelwise.oracle.calibration.platt_posterior`
          without design weights), is that of a correct model of the scores.
          Under each of its points ``i`` a group's exceptions are expected
          ``r_gi`` times as often as under the design's recalibration (the
          ratio of the block's mean probability of the exception's label
          under the two maps).  The design-weighted fit steers the design
          well, but its weighted zeros can steepen the slope and understate
          the tail; the unweighted posterior's spread is the slope's
          uncertainty where the tail is far from every label.  Of a block's
          posterior probability of an exception, ``(lam s_b + O_b) / (lam +
          L_b)``, only the prior's part ``lam s_b`` moves with the
          recalibration; the ``O_b`` exceptions its labels showed do not.
        * **The block.**  Given the recalibration, the oracle model holds a
          block's probability of an exception as a Beta distribution of
          total ``lam + L_b`` (prior strength plus the block's labels;
          Marchant & Rubinstein, KDD 2021, sec. 4: exactly so for the flat
          tree, taken leaf by leaf for deeper ones), so the number left among
          its ``U_b`` unlabeled items is Beta-binomial: variance
          ``E (1 + d_b)`` with ``d_b = (U_b - 1) / (lam + L_b + 1)`` for rare
          exceptions.  Large blocks of a large pool whose few labels show
          nothing can still hold several exceptions together.

        Parameters
        ----------
        exceptions : ndarray (G,)
            ``E_g``: the expected unlabeled exceptions of each group, only
            those whose label changes the loss
            (:func:`~labelwise.estimators.exception_shifts`); a group where no
            label does (for precision, the predicted negatives) has none.

        Returns
        -------
        means : ndarray (k, B)
            Expected exceptions of each block that holds some, under each
            posterior point (one row, the model's own, when the scores are
            not recalibrated or nothing is labeled yet).
        weights : ndarray (k,)
            The points' probabilities.
        overdispersion : ndarray (B,)
            ``d_b`` of each block.
        """
        live = exceptions > 0
        if not live.any():
            return np.zeros((1, 1)), np.ones(1), np.zeros(1)
        blocks, part = np.unique(self.groups.block[live], return_inverse=True)
        E = exceptions[live]
        strength = self.interval_model.prior_strength
        seen = self.interval_model.observed_counts[self.groups.block[live]]  # (G', C): the block's labels
        labels = seen.sum(axis=1)
        ratio, weights = np.ones((E.size, 1)), np.ones(1)
        if self.calibrate and self._seen_y.size > 0:
            posterior = platt_posterior(self._seen_logits, self._seen_y)
            logits = self._quantiles[self.groups.block[live]]  # (G', 16): quadrature points of each group's block
            fitted = self.platt(logits).mean(axis=1)
            points = expit(logits[:, :, None] * posterior.a + posterior.b).mean(axis=1)  # (G', k)
            pi = self.posterior(interval=True)[live]
            positive_mode = np.argmax(pi, axis=1) == 1  # the exceptions are negatives
            ratio = np.where(positive_mode[:, None], (1.0 - points) / np.maximum(1.0 - fitted, 1e-300)[:, None],
                             points / np.maximum(fitted, 1e-300)[:, None])
            # the block's posterior probability of an exception is (lam s + O) / (lam + L): only the prior's
            # part lam s moves with the recalibration, the exceptions its labels showed do not
            exceptional = np.where(positive_mode, pi[:, 0], pi[:, 1])
            found = np.where(positive_mode, seen[:, 0], seen[:, 1])
            prior_share = np.clip(1.0 - found / np.maximum(exceptional * (strength + labels), 1e-300), 0.0, 1.0)
            ratio = 1.0 + prior_share[:, None] * (ratio - 1.0)
            weights = posterior.weight
        means = np.zeros((blocks.size, weights.size))
        np.add.at(means, part, E[:, None] * ratio)
        left = np.bincount(part, weights=self.groups.unlabeled[live].astype(float), minlength=blocks.size)
        block_labels = np.zeros(blocks.size)
        block_labels[part] = labels
        overdispersion = np.maximum(left - 1.0, 0.0) / (strength + block_labels + 1.0)
        return means.T, weights, overdispersion

    def posterior(self, interval: bool = False) -> np.ndarray:
        """Posterior label distribution of an unlabeled member of each group, ``(G, C)``.

        ``interval=True`` uses the interval's model (fitted here if stale).
        The tree models a block's items as exchangeable; in multi-class and
        multi-label pools the groups of one block (items with different
        predictions) can have very different prior scores.  There each group
        keeps its prior and takes the block's update as a per-class factor:
        ``pi_g(y) ∝ s_g(y) pi_block(y) / s_block(y)``.
        """
        model = self.model
        if interval:
            model = self.interval_model
            if model is not self.model and not self._interval_fitted:
                model.fit(warm_start=True)
                self._interval_fitted = True
        pi = model.predictive()[self.groups.block] * self.prior_shift
        total = pi.sum(axis=1, keepdims=True)
        return np.divide(pi, total, out=np.full_like(pi, 1.0 / pi.shape[1]), where=total > 0)

    def influence(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The model's posterior, its estimate of R and the influence of each label on each group.

        Returns
        -------
        pi : ndarray (G, C)
            :meth:`posterior`.
        R : ndarray (d,)
            Labeled items at their labels, unlabeled ones in expectation
            under ``pi`` (under a stochastic oracle every item in expectation).
        influence : ndarray (C, G)
            ``||Dg(R) l||^2`` for each label and group.
        """
        pi = self.posterior()
        counts = self.groups.unlabeled if self.oracle == "deterministic" else self.groups.sizes
        expected = np.einsum("g,gc,cgd->d", counts.astype(float), pi, self.rep_loss)
        R = (expected + self.labeled_loss_sum) / self.n_items
        G = self.groups.n_groups
        influence = np.stack([self.measure.influence_norm_sq(self.rep_out, np.full(G, c), R)
                              for c in range(self.n_classes)])
        return pi, R, influence

    def with_unseen_labels(self, cov: np.ndarray, basis: str, J: np.ndarray, expected: float,
                           labels: np.ndarray) -> tuple[np.ndarray, str]:
        """``cov`` and its ``basis`` raised to what labels that hold no exception yet cannot rule out
        (:func:`~labelwise.estimators.with_unseen_labels`), for the model's measure.

        Parameters
        ----------
        cov : ndarray (m, m)
        basis : str
        J : ndarray (m, d)
            The measure's Jacobian ``Dg`` at the estimate.
        expected : float
            The exceptions the interval's model expects among the unlabeled items.
        labels : ndarray
            Every label so far (the sample's: under a stochastic oracle the model keeps no per-item labels).
        """
        u = np.einsum("cgd,md->cgm", self.rep_loss, J)
        return with_unseen_labels(cov, basis, u, self.posterior(interval=True), self.groups.unlabeled.astype(float),
                                  labels, expected, self.n_items, self.groups.labeled_items.size)


def _first_labels(items: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Whether each label is its item's first: first in ``items`` and not ``known`` before."""
    first = np.zeros(items.size, dtype=bool)
    first[np.unique(items, return_index=True)[1]] = True
    return first & ~known[items]


def _group_sums(prior: np.ndarray, groups: GroupedPool) -> np.ndarray:
    """Each group's sum of its items' rows of ``prior`` ``(n, C)``, ``(G, C)``."""
    return np.stack([np.bincount(groups.of_item, weights=prior[:, c], minlength=groups.n_groups)
                     for c in range(prior.shape[1])], axis=1)


def _block_means(group_sum: np.ndarray, groups: GroupedPool, n_blocks: int) -> np.ndarray:
    """Each block's mean prior from its groups' sums, ``(n_blocks, C)``; 0 for an empty block."""
    block_sum = np.zeros((n_blocks, group_sum.shape[1]))
    np.add.at(block_sum, groups.block, group_sum)
    block_size = np.bincount(groups.block, weights=groups.sizes, minlength=n_blocks)
    # a block with no item (possible in tiny pools) has no mean; no group points at it
    return np.divide(block_sum, block_size[:, None], out=np.zeros_like(block_sum), where=block_size[:, None] > 0)


def _prior_shift(group_sum: np.ndarray, groups: GroupedPool) -> np.ndarray:
    """``s_g(y) / s_block(y)``: mean prior of each group's items over that of its block's, ``(G, C)``, from the
    groups' sums of the prior (:func:`_group_sums`)."""
    s_group = group_sum / groups.sizes[:, None]
    s_block = _block_means(group_sum, groups, int(groups.block.max()) + 1)[groups.block]
    return np.divide(s_group, s_block, out=np.ones_like(s_group), where=s_block > 0)
