"""Adaptive importance sampling (AIS) driven by a Dirichlet-tree model of the oracle.

Marchant & Rubinstein (KDD 2021) Algorithm 1 with the proposals of Prop. 2: after every batch the
proposal is rebuilt from the current model ``pi_t(y|x)`` and the current
risk estimate ``R_t``:

    deterministic oracle:  v_t(x) = p(x) sum_y max(||Dg(R_t) l(x,y)||, eps_t 1{l(x,y) != 0}) pi_t(y|x)
    stochastic oracle:     v_t(x) = p(x) [sum_y max(||Dg(R_t) l(x,y)||^2, eps_t 1{l != 0}) pi_t(y|x)]^(1/2)

with ``eps_t = eps_0 (1 - observed fraction)`` (Prop. 3) and an optional
defensive mixture with p(x) (3.3.1).  The oracle model is the shared
:class:`~labelwise.designs.group_model.GroupModel`.  Under a deterministic oracle a labeled
item's ``pi_t`` is a point mass on its label.

The model is per leaf block, and the loss depends on x only through a small
key (the predicted label, the threshold index of a PR curve), so every
unlabeled item of a (block, key) group has the same ``v``: an update costs
O(groups + labels), not O(N), and draws pick a group and then a uniform
unlabeled member.  ``R_t`` is the model's estimate of R: labeled items at
their labels, unlabeled ones in expectation under ``pi_t`` (always defined,
unlike the IS estimate before the first positive).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..draws import Draws, Sample
from ..estimators import (
    Estimate,
    ModelCovariance,
    exception_terms,
    importance_moments,
    make_estimate,
    model_interval_covariance,
    model_second_moment,
)
from ..measures import Measure
from ..pool import Pool
from .base import Sampler
from .group_model import GroupModel
from .tree_model import TreeModelDesign

__all__ = ["AISDesign", "AISSampler"]

#: A batch of ``n`` new items may take ``DRAWS_PER_NEW_ITEM * n`` draws of unlabeled items; when fewer than
#: ``FILL_MARGIN * n`` distinct ones are expected in that many, a little uniform mass fills the batch up.
DRAWS_PER_NEW_ITEM = 1000
FILL_MARGIN = 1.5


@dataclass(frozen=True, kw_only=True)
class AISDesign(TreeModelDesign):
    """Adaptive importance sampling with a Dirichlet-tree oracle model (Marchant & Rubinstein, KDD 2021).

    Parameters
    ----------
    epsilon0 : float
        ``eps_0`` of Prop. 3, relative to the mean of ``||Dg l||`` over the pool
        under the prior (so it does not depend on the measure's scale).
    defensive : float in [0, 1)
        Weight of the uniform distribution in the proposal (sec. 3.3.1):
        keeps every item's probability at least ``defensive / N`` (sample
        reuse, wrong priors).
    deviation : {"mean", "rms"}
        Deterministic oracle only.  ``mean`` is Prop. 2's
        ``sum_y pi(y|x) ||Dg l(x, y)||``, asymptotically optimal once the
        model is sure of every label.  ``rms`` uses
        ``sqrt(sum_y pi(y|x) ||Dg l(x, y)||^2)`` for unlabeled items, which
        minimises the variance expected under the model while labels are
        still uncertain: it explores low-probability regions more.
    variance : {"mixture", "model", "plugin"}
        Covariance estimator (see :meth:`AISSampler.estimate`).
    **model
        The oracle model's settings (:class:`TreeModelDesign`).
    """

    name = "ais"
    epsilon0: float = 1e-3
    defensive: float = 0.0
    deviation: str = "mean"
    variance: str = "mixture"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.variance not in ("mixture", "model", "plugin"):
            raise ValueError(f"variance: choose 'mixture', 'model' or 'plugin', got {self.variance!r}")
        if self.deviation not in ("mean", "rms"):
            raise ValueError(f"deviation: choose 'mean' or 'rms', got {self.deviation!r}")
        if not 0.0 <= self.defensive < 1.0:
            raise ValueError(f"defensive: must lie in [0, 1), got {self.defensive}")
        if self.epsilon0 <= 0:
            raise ValueError(f"epsilon0: must be positive, got {self.epsilon0}")

    def start(self, pool: Pool, measure: Measure, *, rng: np.random.Generator, budget: int | None = None,
              oracle: str = "deterministic") -> AISSampler:
        return AISSampler(self, self.group_model(pool, measure, oracle), rng)


class AISSampler(Sampler):
    """One run of :class:`AISDesign`."""

    def __init__(self, design: AISDesign, model: GroupModel, rng: np.random.Generator):
        super().__init__(model.pool, model.measure, model.oracle, rng)
        self.design, self.gm = design, model
        measure, N, C = model.measure, model.n_items, model.n_classes
        # eps scale: mean over the pool of E_prior ||Dg(R0) l|| (Prop. 2 is scale dependent)
        groups = model.groups
        prior = model.item_prior()
        R0 = measure.expected_loss_sum(self.pool.outputs(), prior) / N
        prior_g = np.zeros((groups.n_groups, C))
        np.add.at(prior_g, groups.of_item, prior)
        norms = np.stack([np.sqrt(measure.influence_norm_sq(model.rep_out, np.full(groups.n_groups, c), R0))
                          for c in range(C)])
        scale = float(np.sum(prior_g.T * norms)) / N
        self._eps_scale = scale if np.isfinite(scale) and scale > 0 else 1.0
        # per batch: draws, proposal per group, labeled items (sorted) and their proposal
        self._history: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
        self._fill = False  # set once a batch could not find its new items in a reasonable number of draws
        self._dirty = True

    def observe(self, items: np.ndarray, labels: np.ndarray) -> None:
        self.gm.observe(items, labels)
        self._dirty = True

    def state(self) -> dict:
        """The newest batch's proposal (per group, and each labeled item's), which the interval needs and
        labels replayed in a later process cannot rebuild: without it a reopened session's interval
        would fall back to the plug-in."""
        return self._batch_state(*self._history[-1])

    def states(self) -> list[dict]:
        """Every batch's :meth:`state`, in draw order, as a session file stores them and :meth:`set_state`
        takes them back (what a session without a file carries to a new sampler)."""
        return [self._batch_state(*batch) for batch in self._history]

    @property
    def group_proposals(self) -> list[np.ndarray]:
        """Each batch's proposal per group (shape (G,) each), in draw order."""
        return [q_group for _, q_group, _, _ in self._history]

    def _batch_state(self, n_t: int, q_group: np.ndarray, labeled: np.ndarray, q_labeled: np.ndarray) -> dict:
        return {"n_draws": int(n_t), "q_group": q_group.tolist(), "labeled": labeled.tolist(),
                "q_labeled": q_labeled.tolist(), "fill": self._fill}

    def set_state(self, states: list[dict]) -> None:
        self._history = [(int(s["n_draws"]), np.asarray(s["q_group"], dtype=float),
                          np.asarray(s["labeled"], dtype=np.int64), np.asarray(s["q_labeled"], dtype=float))
                         for s in states if "q_group" in s]
        self._fill = bool(states[-1].get("fill", False)) if states else False
        self._dirty = True

    def _update(self) -> None:
        """Rebuild the proposal from the current model and risk estimate (Prop. 2)."""
        if not self._dirty:
            return
        gm, m, N = self.gm, self.measure, self.pool.n_items
        pi, self.R, inf_g = gm.influence()
        U = gm.groups.unlabeled.astype(float)
        lab_items = gm.groups.labeled_items
        eps = self.design.epsilon0 * self._eps_scale * (1.0 - lab_items.size / N)
        lab_out = self.pool.outputs(lab_items)
        inf_lab = m.influence_norm_sq(lab_out, gm.labeled_y, self.R) if lab_items.size else np.empty(0)
        nz_lab = m.loss_is_nonzero(lab_out, gm.labeled_y) if lab_items.size else np.empty(0, bool)
        if self.stochastic:  # a labeled item is as uncertain as the rest of its group
            v_g = np.sqrt(np.sum(pi.T * np.maximum(inf_g, eps**2 * gm.rep_nonzero), axis=0))
            v_lab = v_g[gm.groups.of_item[lab_items]]
        elif self.design.deviation == "rms":
            v_g = np.sqrt(np.sum(pi.T * np.maximum(inf_g, eps**2 * gm.rep_nonzero), axis=0))
            v_lab = np.maximum(np.sqrt(inf_lab), eps * nz_lab)
        else:
            v_g = np.sum(pi.T * np.maximum(np.sqrt(inf_g), eps * gm.rep_nonzero), axis=0)
            v_lab = np.maximum(np.sqrt(inf_lab), eps * nz_lab)
        total = float(U @ v_g + v_lab.sum())
        if not np.isfinite(total) or total <= 0:  # no information at all: sample uniformly
            v_g, v_lab, total = np.ones(gm.groups.n_groups), np.ones(lab_items.size), float(N)
        d = self.design.defensive
        if self._fill:
            # fewer unlabeled items have any mass than a batch asks for (e.g. precision once the
            # predicted positives are labeled): a little uniform mass on items whose loss is zero
            # lets the batch fill up and leaves the estimator's expectation unchanged
            d = max(d, 1e-2)
        self._q_group = (1 - d) * v_g / total + d / N
        self._q_lab = (1 - d) * v_lab / total + d / N
        self._dirty = False

    def _reachable(self, n_draws: int) -> float:
        """Expected number of distinct unlabeled items among ``n_draws`` draws from the unlabeled part of q.

        ``sum_g U_g (1 - exp(-n q_g / M_U))``: below the batch size, the
        proposal keeps (almost) all its unlabeled mass on fewer items than a
        batch needs (e.g. precision once the predicted positives are
        labeled, or over-confident scores), and the batch would not fill up.
        """
        U = self.gm.groups.unlabeled.astype(float)
        mass = float(U @ self._q_group)
        if mass <= 0:
            return 0.0
        return float(U @ -np.expm1(-n_draws * self._q_group / mass))

    def q_of(self, items: np.ndarray) -> np.ndarray:
        """Current proposal probability of each item (labeled items at their label)."""
        self._update()
        return self.gm.groups.q_of(items, self._q_group, self._q_lab)

    def draw(self, n_new: int, labeled: np.ndarray) -> Draws:
        self._update()
        groups, N = self.gm.groups, self.pool.n_items
        if self.stochastic:  # every draw is a label; labeled items keep their group's q
            self._history.append((n_new, self._q_group, np.empty(0, np.int64), np.empty(0)))
            return groups.draw_any(self._q_group, n_new, N, self.rng)
        if not self._fill and self._reachable(DRAWS_PER_NEW_ITEM * n_new) < FILL_MARGIN * n_new:
            self._fill, self._dirty = True, True
            self._update()
        draws = groups.draw(self._q_group, self._q_lab, n_new, N, self.rng)
        order = np.argsort(groups.labeled_items)
        self._history.append((draws.n_draws, self._q_group, groups.labeled_items[order], self._q_lab[order]))
        return draws

    def estimate(self, measure: Measure, sample: Sample, level: float = 0.95) -> Estimate:
        """AIS estimate (eq. 1) with its covariance.

        The design's ``variance`` chooses the covariance:

        * ``"plugin"``: the martingale estimate
          ``(1/n^2) sum_j (w_j Dg l_j - Dg R)(...)^T``, which estimates
          ``sum_j V_j / n^2`` of Theorem 2 with every draw at its own
          proposal ``q_{j-1}``;
        * ``"model"``: the sampling variance expected under the oracle model,
          ``(1/n) sum_t (n_t/n) V_t`` with ``V_t = sum_x E_pi[(Dg l)(Dg l)^T] /
          (N^2 q_t(x)) - Dg R (Dg R)^T``, labeled items at their labels;
          conservative where the model leaves rare positives possible;
        * ``"mixture"`` (default): the variance whose normal interval covers,
          with probability ``level``, the model's error distribution split
          into no surprise / surprises missed / a surprise drawn
          (:func:`~labelwise.estimators.mixture_variance`), never below ``plugin``.

        ``model`` and ``mixture`` apply to the target measure (other
        measures, i.e. sample reuse, get ``plugin``) and use the proposals of
        the batches drawn since the session was created or last opened.
        """
        d = sample.draws
        if len(d) == 0:
            return Estimate.undefined(measure, level)
        R, _, cov = importance_moments(measure, self.losses(measure, sample), d.weight, counts=d.count)
        variance, basis = self.design.variance, ""
        if variance != "plugin" and measure == self.measure and self._history:
            model = self._model_covariance(R, d.n_draws)
            cov = model_interval_covariance(cov, model, d.n_draws, level, variance)
            # no exception labeled, and less than one expected: what the labels cannot rule out
            cov, basis = self.gm.with_unseen_labels(cov, self.gm.basis, measure.finite_jacobian(R), model.exceptions,
                                                     sample.judged_labels)
        return make_estimate(measure, R, cov, sample.n_labels, d.n_draws, level, basis=basis)

    def _model_covariance(self, R: np.ndarray, n_draws: int) -> ModelCovariance:
        """Average over stages of the per-draw covariance of ``w Dg l`` under the model, for an estimate of
        ``n_draws`` draws."""
        m, gm, N = self.measure, self.gm, self.pool.n_items
        J = m.finite_jacobian(R)
        pi = gm.posterior(interval=True)
        u = np.einsum("cgd,md->cgm", gm.rep_loss, J)  # (C, G, m)
        r = J @ R
        if self.stochastic:  # every item at its group's label distribution and q
            S = np.einsum("gc,cgi,cgj->gij", pi, u, u)
            total = np.zeros((m.size, m.size))
            for n_t, q_group, _, _ in self._history:  # loop over batches
                inv = np.divide(gm.groups.sizes, q_group, out=np.zeros(q_group.shape), where=q_group > 0)
                total += n_t * (np.einsum("g,gij->ij", inv, S) / N**2 - np.outer(r, r))
            total /= sum(h[0] for h in self._history)
            # one case, the full variance (no hits); the exceptions expected left for the unseen-labels floor
            exceptions = float(exception_terms(u, pi, gm.groups.unlabeled.astype(float), N)[1].sum())
            return ModelCovariance(total, total, np.zeros(m.size), exceptions, 0.0)
        U = gm.groups.unlabeled.astype(float)
        u_mode, exceptions, miss = exception_terms(u, pi, U, N)
        hits = sum(n_t * float(exceptions @ q_group) for n_t, q_group, _, _ in self._history)
        full, modal = self._stage_average(J, r, u, pi, u_mode, n_draws)
        return ModelCovariance(full, modal, miss, float(exceptions.sum()), hits)

    def _stage_average(self, J: np.ndarray, r: np.ndarray, u: np.ndarray, pi: np.ndarray,
                       u_mode: np.ndarray, n_draws: int) -> np.ndarray:
        """``(1/n) sum_t n_t V_t`` with every unlabeled item of group g at ``pi`` (full) and at its group's most
        likely label (modal), and a labeled one at its own ``u``; shape ``(2, m, m)``.

        A draw at stage t of an item of proposal ``q`` moves the estimate of ``n`` draws by ``u / (N q n)`` to
        first order; each ``u`` is held to where that move stays within the measure's range
        (:func:`move_limit`), as in ``online-poisson``: where the proposal of an early stage
        gave an item ``q ~ 1e-20`` that the recalibrated model now gives exceptions, the unheld term made an
        accuracy's variance 1e12.
        """
        m, gm, N = self.measure, self.gm, self.pool.n_items
        groups = gm.groups
        lab = groups.labeled_items
        u_lab = m.loss(self.pool.outputs(lab), gm.labeled_y) @ J.T
        U = groups.unlabeled.astype(float)
        span = m.upper - m.lower
        total, n_total = np.zeros((2, m.size, m.size)), 0
        for n_t, q_group, lab_t, q_lab_t in self._history:  # loop over batches
            q_lab_now = q_group[groups.of_item[lab]]
            if lab_t.size:  # items already labeled at stage t had their own probability
                pos = np.minimum(np.searchsorted(lab_t, lab), lab_t.size - 1)
                was = lab_t[pos] == lab
                q_lab_now = np.where(was, q_lab_t[pos], q_lab_now)
            limit = move_limit(q_group, N * n_draws, span)
            held, held_mode = np.clip(u, -limit, limit), np.clip(u_mode, -limit, limit)
            S = np.stack([np.einsum("gc,cgi,cgj->gij", pi, held, held), np.einsum("gi,gj->gij", held_mode, held_mode)])
            lab_limit = move_limit(q_lab_now, N * n_draws, span)
            # q = 0 only where the loss (hence u) is 0 for every label the model allows
            inv_g = np.divide(U, q_group, out=np.zeros_like(U), where=q_group > 0)
            inv_lab = np.divide(1.0, q_lab_now, out=np.zeros_like(q_lab_now), where=q_lab_now > 0)
            second = model_second_moment(inv_g, S, inv_lab, np.clip(u_lab, -lab_limit, lab_limit))
            total += n_t * (second / N**2 - np.outer(r, r))
            n_total += n_t
        return total / n_total


def move_limit(q: np.ndarray, scale: float, span: np.ndarray) -> np.ndarray:
    """The largest ``|u|`` whose draw at proposal ``q`` moves an estimate of ``n`` draws, by ``u / (N q n)``, at most
    the measure's ``span``: ``span N n q``, ``(len(q), m)`` (``scale = N n``; ``inf`` where nothing holds it: no
    range, or ``q = 0``)."""
    with np.errstate(invalid="ignore"):
        limit = span[None, :] * (scale * q)[:, None]
    return np.where(np.isnan(limit) | (limit <= 0), np.inf, limit)
