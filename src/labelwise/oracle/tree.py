"""Online Bayesian models of the oracle response ``p(y|x)`` on a hierarchical partition.

:class:`DirichletTreeModel` is the Dirichlet-tree model of Marchant and
Rubinstein, section 4.  The pool is partitioned into leaf blocks of a tree
``T`` (:class:`labelwise.partition.Hierarchy`) and the labels are generated
as (section 4.1)::

    theta              ~ Dirichlet(alpha)                      global class distribution
    y_i | theta        ~ Categorical(theta)                    i = 1..N
    psi_y              ~ DirichletTree(beta_y; T)              y = 1..C
    k_i | y_i, psi     ~ Categorical(psi_{y_i})                block of item i

A Dirichlet-tree prior puts an independent ``Dirichlet(beta_{y, children of
v})`` on the branch probabilities ``psi_y(c|v)`` of every internal node ``v``;
the leaf probability ``psi_y(k)`` is the product of the branch probabilities
on the root-to-leaf path.  Blocks that are close in the tree thus share
statistical strength: a label in one block moves the estimates of its
neighbours.

Inference (section 4.2, :mod:`labelwise.oracle.em`) is by expectation-maximisation: point (MAP)
estimates of ``theta`` and ``psi`` and a posterior ``r[k, y]`` over the label
of every unlabeled item of block ``k``.  All work is on ``(n_leaves, C)``
count arrays, so an update costs ``O(n_leaves * C * iterations)`` whatever the
pool size (the per-level sums over a complete tree add up to about
``n_leaves * b / (b - 1)`` nodes).

The flat Beta-Bernoulli (Dirichlet-categorical) model with independent blocks
is the depth-1 case ``Hierarchy(depth=1, branching=K)``: with the
hyperparameters of section 5.2 its EM fixed point is exactly the
per-block posterior mean ``r[k, y] = (lam s(y|k) + O[k, y]) / (lam + L_k)``
(``L_k`` labels received in block ``k``, ``lam = prior_strength``), so no
separate class is provided.

References
----------
N. G. Marchant and B. I. P. Rubinstein, "Needle in a Haystack: Label-Efficient
Evaluation under Extreme Class Imbalance", KDD 2021.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..partition import Hierarchy
from . import em
from .prior import block_hyperparameters, tree_hyperparameters
from .tree_checks import check_settings, checked_observations

__all__ = ["DirichletTreeModel"]

#: The constructor's fit (the no-label fixed point, reused by ``fresh``) may run
#: ``INIT_FACTOR * max_iter`` EM iterations.
INIT_FACTOR = 10


class DirichletTreeModel:
    """Dirichlet-tree model of the oracle response per leaf block, fitted by EM.

    Parameters
    ----------
    hierarchy : Hierarchy
        Tree over the pool; ``hierarchy.blocks`` gives each item's leaf block.
    prior_probs : ndarray, shape (N, C) or (N,)
        Prior label distribution ``s(y|x_i)`` of every item, e.g. classifier
        probabilities (Marchant and Rubinstein, section 5.2; see
        :func:`labelwise.oracle.prior.score_prior`).  A 1-d array is read as the
        binary ``s(y=1|x_i)``.  Rows are normalised to sum to one.
    oracle : {"deterministic", "stochastic"}
        ``"deterministic"``: every item has one true label, observed at most
        once (Marchant and Rubinstein, section 4).  ``"stochastic"``: an item may be labeled
        several times with differing labels; every label received is counted.
    prior_strength : float
        ``lam >= 0``, the weight of the score evidence in the hyperparameters
        ``alpha`` and ``beta`` (:func:`~labelwise.oracle.prior.tree_hyperparameters`;
        ``lam = 1`` reproduces Marchant and Rubinstein, section 5.2, exactly).
        ``lam = 0`` ignores the scores.
    max_iter : int
        Maximum EM iterations (M-step + E-step pairs, including those of the
        acceleration) per fit.  The constructor's own fit (no labels, cold
        start) gets ``10 * max_iter``.
    tol : float
        EM stops when the largest change of ``r`` in one plain EM iteration is
        below ``tol``.
    accelerate : bool
        Accelerate EM with SQUAREM extrapolation (see Notes); ``False`` runs
        plain EM.  Both have the same fixed points.

    Attributes
    ----------
    hierarchy : Hierarchy
    n_classes : int
    oracle : str
    prior_strength, max_iter, tol, accelerate
        As given.
    alpha : ndarray, shape (C,)
        Dirichlet hyperparameters of ``theta``.
    beta : list of ndarray
        ``beta[l]``, shape ``(branching**l, C)``, hyperparameters of the
        level-``l`` nodes (``beta[0]`` is ``None``: the root has none).
    block_prior : ndarray, shape (n_leaves, C)
        ``s(y|k)``.
    n_iter_last : int
        EM iterations of the last fit.
    converged_last : bool
        Whether the last fit met ``tol`` within ``max_iter`` iterations.

    Notes
    -----
    The fit is EM to the MAP estimates of ``theta`` and ``psi``, accelerated
    by SQUAREM steps that never lower :meth:`log_posterior`
    (:mod:`labelwise.oracle.em` gives the steps).  It is warm-started from
    the last fixed point on every update; a fit may stop at ``max_iter``
    before ``tol`` is met (see ``converged_last``), and later fits continue
    from where it stopped.  ``r`` is the ``pi_t(y|x)`` (deterministic
    oracle) or ``p_t(y|x)`` (stochastic oracle) of Marchant and Rubinstein,
    Proposition 2, for every not-yet-labeled item ``x`` of the block.

    Every numerator of the M-step is non-negative because ``alpha_y >= 1``
    and ``beta >= 1``; it is zero only where the prior scores give a class
    zero mass in a whole level-1 subtree and no label of that class was seen
    there.  Such a class then gets zero probability, which violates the
    support condition of Marchant and Rubinstein, Proposition 2: keep
    ``prior_probs`` strictly positive (``score_prior`` with ``lam < 1``
    does).  Leaves with zero probability under every class (only possible
    for empty leaves) report ``theta`` as their predictive.

    Each update costs ``O(n_leaves * C * iterations)`` (the complete-tree
    level sums total ``O(n_leaves * C)``), independent of the pool size; the
    constructor is ``O(N * C)`` plus one fit.  :meth:`fresh` returns a model
    with the same hyperparameters and no labels in ``O(n_leaves * C)``.

    Examples
    --------
    >>> from labelwise.partition import Hierarchy
    >>> h = Hierarchy(depth=2, branching=2, blocks=np.repeat(np.arange(4), 25))
    >>> s = np.repeat([[0.9, 0.1], [0.7, 0.3], [0.4, 0.6], [0.2, 0.8]], 25, axis=0)
    >>> m = DirichletTreeModel(h, s)
    >>> m.observe(np.array([3, 3, 3]), np.array([1, 1, 1]))
    >>> bool(m.predictive()[3, 1] > 0.8)
    True
    """

    def __init__(
        self,
        hierarchy: Hierarchy,
        prior_probs: np.ndarray,
        oracle: Literal["deterministic", "stochastic"] = "deterministic",
        prior_strength: float = 1.0,
        max_iter: int = 100,
        tol: float = 1e-8,
        accelerate: bool = True,
    ) -> None:
        check_settings(hierarchy, oracle, prior_strength, max_iter, tol)
        block_prior, alpha, beta = tree_hyperparameters(hierarchy, prior_probs, prior_strength)

        self.hierarchy = hierarchy
        self.oracle = oracle
        self.prior_strength = float(prior_strength)
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.accelerate = bool(accelerate)
        self.n_classes = int(block_prior.shape[1])
        self.block_prior, self.alpha, self.beta = block_prior, alpha, beta
        self._beta_m1 = [None] + [b - 1.0 for b in beta[1:]]
        sizes = hierarchy.block_sizes.astype(np.float64)
        self._sizes = sizes
        self._O = np.zeros((hierarchy.n_leaves, self.n_classes))
        self._U = sizes.copy()
        self.n_iter_last = 0
        self.converged_last = True
        self._cold_start()
        budget, self.max_iter = self.max_iter, INIT_FACTOR * self.max_iter
        try:  # the no-label fixed point is computed once and reused by fresh()/reset()
            self.fit(warm_start=True)
        finally:
            self.max_iter = budget
        self._init_state = (self._log_theta.copy(), [a.copy() for a in self._log_branch], self._r.copy())
        self._init_prior = (self.block_prior, self.alpha, self.beta, self._beta_m1, self.prior_strength)

    def set_prior(self, block_prior: np.ndarray, prior_strength: float, refit: bool = True) -> None:
        """Replace the prior ``s(y|k)`` and its strength, keeping the labels; refit (warm start).

        Parameters
        ----------
        block_prior : ndarray, shape (n_leaves, C)
            New prior label distribution of each block (e.g. recalibrated scores).
        prior_strength : float
            ``lam >= 0``.
        refit : bool
            Run EM now (``False``: the caller fits later).
        """
        self.block_prior = np.asarray(block_prior, dtype=float)
        self.prior_strength = float(prior_strength)
        self.alpha, self.beta = block_hyperparameters(self.hierarchy, self.block_prior, self.prior_strength)
        self._beta_m1 = [None] + [b - 1.0 for b in self.beta[1:]]
        if refit:
            self.fit(warm_start=True)

    # ------------------------------------------------------------ EM steps
    def _em_map(self, r: np.ndarray) -> em.State:
        """One EM iteration from ``r``: M-step on the expected counts, then E-step."""
        log_theta, log_branch = em.m_step(self.hierarchy, self.alpha, self._beta_m1, self._expected_counts(r))
        return log_theta, log_branch, em.e_step(self.hierarchy, log_theta, log_branch)

    def _expected_counts(self, r: np.ndarray) -> np.ndarray:
        return self._O + self._U[:, None] * r

    def _cold_start(self) -> None:
        """Parameters from the M-step with the prior scores as the guess for unlabeled labels."""
        self._log_theta, self._log_branch, self._r = self._em_map(self.block_prior)

    # ------------------------------------------------------------ fitting
    def fit(self, warm_start: bool = True) -> DirichletTreeModel:
        """Run EM to a fixed point for the labels observed so far.

        Parameters
        ----------
        warm_start : bool
            Start from the current parameters (the last fixed point); otherwise
            from the M-step with ``r = s(y|k)`` (the prior scores).

        Returns
        -------
        DirichletTreeModel
            ``self``; ``n_iter_last`` and ``converged_last`` are updated.
        """
        if not warm_start:
            self._cold_start()
        state = (self._log_theta, self._log_branch, self._r)
        state, n_maps, converged = em.iterate(self._em_map, self._log_posterior, state, self.max_iter, self.tol,
                                              self.accelerate)
        self._log_theta, self._log_branch, self._r = state
        self.n_iter_last = n_maps
        self.converged_last = converged
        return self

    def observe(
        self,
        blocks: np.ndarray,
        labels: np.ndarray,
        *,
        new: np.ndarray | bool | None = None,
        refit: bool = True,
    ) -> None:
        """Add labels received from the oracle and refit (warm start).

        Parameters
        ----------
        blocks : ndarray of int, shape (n,)
            Leaf block of each labeled item (``hierarchy.blocks[positions]``).
        labels : ndarray of int, shape (n,)
            Labels ``0..C-1``.
        new : bool or ndarray of bool, shape (n,), optional
            Whether each label is the first one received for its item
            (default: all ``True``).  A first label moves the item from the
            unlabeled count ``U[k]`` to the observed counts.  Deterministic
            oracle: labels with ``new=False`` repeat a known label and are
            ignored; the caller guarantees that each item is new at most once.
            Stochastic oracle: every label is counted in ``O``; pass
            ``new=False`` for repeat labels of an item.
        refit : bool
            Run EM now (set ``False`` to add several batches, then call :meth:`fit`).

        Raises
        ------
        ValueError
            On invalid blocks/labels, or when a block would receive more new
            labels than it has unlabeled items.
        """
        b, y = checked_observations(blocks, labels, self.hierarchy.n_leaves, self.n_classes)
        if new is None:
            new = np.ones(b.shape[0], dtype=bool)
        try:
            new = np.broadcast_to(np.asarray(new, dtype=bool), b.shape)
        except ValueError:
            raise ValueError(f"new: expected a bool or {b.shape[0]} bools, got shape {np.shape(new)}") from None
        n_leaves, C = self.hierarchy.n_leaves, self.n_classes
        drop = np.bincount(b[new], minlength=n_leaves).astype(np.float64)
        if (drop > self._U).any():
            k = int(np.argmax(drop > self._U))
            raise ValueError(
                f"blocks: block {k} would receive {int(drop[k])} new label(s) but has only "
                f"{int(self._U[k])} unlabeled item(s) left; pass new=False for repeat labels"
            )
        keep = new if self.oracle == "deterministic" else np.ones(b.shape[0], dtype=bool)
        self._O += np.bincount(b[keep] * C + y[keep], minlength=n_leaves * C).reshape(n_leaves, C)
        self._U -= drop
        if refit:
            self.fit(warm_start=True)

    # ------------------------------------------------------------ outputs
    def predictive(self) -> np.ndarray:
        """Posterior label distribution of a not-yet-labeled item in each block.

        Returns
        -------
        ndarray, shape (n_leaves, C)
            ``r[k, y]`` (Marchant and Rubinstein, section 4.2; ``pi_t(y|x)`` of
            Proposition 2),
            rows summing to one.  Rows of empty leaves are defined but unused.
        """
        return self._r.copy()

    def item_probs(self, positions: np.ndarray | None = None) -> np.ndarray:
        """``predictive()[hierarchy.blocks[positions]]``, shape (n, C) (all N items by default).

        For items already labeled under a deterministic oracle the label is
        known; this still returns the block's posterior for an unlabeled item,
        and the caller should substitute the observed label.
        """
        blocks = self.hierarchy.blocks if positions is None else self.hierarchy.blocks[positions]
        return self._r[blocks]

    @property
    def theta(self) -> np.ndarray:
        """MAP global class distribution ``theta``, shape (C,)."""
        return np.exp(self._log_theta)

    @property
    def leaf_probs(self) -> np.ndarray:
        """MAP ``psi_y(k)``, shape (n_leaves, C) (column ``y`` sums to one; may underflow to 0 for deep trees)."""
        return np.exp(em.leaf_log_psi(self.hierarchy, self._log_branch))

    @property
    def branch_probs(self) -> list[np.ndarray]:
        """MAP branch probabilities: ``out[l][j, y] = psi_y(j | parent(j))`` for level ``l >= 1``, shape (b**l, C)."""
        return [np.exp(a) for a in self._log_branch]

    @property
    def observed_counts(self) -> np.ndarray:
        """``O[k, y]``, labels received per block and class, shape (n_leaves, C)."""
        return self._O.copy()

    @property
    def unlabeled_counts(self) -> np.ndarray:
        """``U[k]``, items of block ``k`` not yet labeled, shape (n_leaves,)."""
        return self._U.copy()

    def expected_counts(self) -> np.ndarray:
        """``n[k, y] = O[k, y] + U[k] r[k, y]`` at the current fit, shape (n_leaves, C)."""
        return self._expected_counts(self._r)

    def log_posterior(self) -> float:
        """EM objective at the current parameters: log posterior of ``theta, psi`` up to a constant.

        The log Dirichlet and Dirichlet-tree prior densities (Marchant and
        Rubinstein, section 4.1) plus the log likelihood of the observed
        labels and block assignments, the unobserved labels summed out
        (section 4.2; the stochastic oracle counts every label in ``O``), as
        written out in :func:`labelwise.oracle.em.log_posterior`.  Each EM
        iteration does not decrease it, and the MAP estimates maximise it.

        Returns
        -------
        float
        """
        return self._log_posterior(self._log_theta, self._log_branch)

    def _log_posterior(self, log_theta: np.ndarray, log_branch: list[np.ndarray]) -> float:
        return em.log_posterior(self.hierarchy, self.alpha, self.beta, self._O, self._U, log_theta, log_branch)

    # ------------------------------------------------------------ reuse
    def _clone(self, with_state: bool) -> DirichletTreeModel:
        new = object.__new__(DirichletTreeModel)
        new.__dict__.update(self.__dict__)  # shares the read-only hyperparameters and hierarchy
        if with_state:
            new._O = self._O.copy()
            new._U = self._U.copy()
            new._log_theta = self._log_theta.copy()
            new._log_branch = [a.copy() for a in self._log_branch]
            new._r = self._r.copy()
        else:
            new.reset()
        return new

    def reset(self) -> None:
        """Forget all labels: back to the no-label fixed point computed by the constructor (``O(n_leaves C)``)."""
        log_theta, log_branch, r = self._init_state
        self.block_prior, self.alpha, self.beta, self._beta_m1, self.prior_strength = self._init_prior
        self._O = np.zeros_like(self._O)
        self._U = self._sizes.copy()
        self._log_theta = log_theta.copy()
        self._log_branch = [a.copy() for a in log_branch]
        self._r = r.copy()
        self.n_iter_last = 0
        self.converged_last = True

    def fresh(self) -> DirichletTreeModel:
        """A new model with the same hierarchy and hyperparameters and no labels, in ``O(n_leaves C)``."""
        return self._clone(with_state=False)

    def copy(self) -> DirichletTreeModel:
        """An independent copy including the labels observed so far."""
        return self._clone(with_state=True)

    def __repr__(self) -> str:
        h = self.hierarchy
        return (
            f"DirichletTreeModel(depth={h.depth}, branching={h.branching}, n_leaves={h.n_leaves}, "
            f"C={self.n_classes}, oracle={self.oracle!r}, labels={int(self._O.sum())})"
        )
