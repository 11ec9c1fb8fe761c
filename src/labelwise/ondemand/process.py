"""One run of on-demand evaluation: systems arrive, labels and documents are bought.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3
(summary): documents :math:`\\hat Y_0` are annotated when the evaluation is
launched (and more when recall needs them); on arrival of system ``m`` the
number of new draws :math:`n_m` is found by bisection on the predicted
variance given the data so far, :math:`\\hat X_m` is drawn and verified, and
all estimates are updated. :class:`Process` holds this per-run state;
the configuration and the fixed inputs are kept apart from it
(:mod:`~labelwise.ondemand.config`).
"""

from __future__ import annotations

import numpy as np

from .composite import composite_precision
from .config import OnDemandConfig, Problem
from .costs import CostLedger
from .estimators import (
    Estimate,
    design_factor,
    finite_population_correction,
    grouped_cov,
    joint_precision,
    pooled_recall,
    ratio_estimate,
    recall_product,
    simple_precision,
)
from .floors import own_share, reported_variance
from .intervals import (
    agresti_coull_floor,
    floored_normal_interval,
    score_interval,
    wilson_interval,
)
from .normalized import normalized_joint_precision
from .planning import (
    exchangeable_variance,
    plan_documents,
    plan_verifications,
    predicted_composite_variance,
    predicted_interval_variance,
    predicted_joint_variance,
    predicted_simple_variance,
)
from .plug_in import stratified_plug_in
from .recall import combined_recall, pooled_recall_floor
from .universe import is_uniform

__all__ = ["Process"]


class Process:
    """State of one on-demand evaluation run, joint (``joint=True``) or simple.

    The simple process draws each system's sample for its own use (Eq. 1)
    but, like the joint one, pays once per distinct verified instance.
    ``fixed_labels`` (draws per system), ``label_budget`` (new verifications
    bought on each system's arrival) and ``fixed_documents`` replace planning
    (equal-cost runs).
    """

    def __init__(self, problem: Problem, config: OnDemandConfig, rng: np.random.Generator, joint: bool = True,
                 fixed_labels: np.ndarray | None = None, fixed_documents: int | None = None,
                 label_budget: np.ndarray | None = None) -> None:
        self.pb, self.cfg, self.rng, self.joint = problem, config, rng, joint
        self.fixed_labels, self.fixed_documents, self.label_budget = fixed_labels, fixed_documents, label_budget
        self.normalized = config.normalized and not (config.control_variate or config.composite)
        m, K = problem.P.shape
        self.support = (problem.P > 0).sum(axis=1)
        self.wor = is_uniform(problem.P)
        self.gram = problem.P @ problem.P.T
        self.known = np.full(K, -1, dtype=np.int8)
        self.idx: list[np.ndarray] = []
        self.grp: list[np.ndarray] = []
        self.n = np.zeros(m, dtype=np.int64)
        self.perm = [rng.permutation(problem.members(i)) for i in range(m)]
        self.doc_perm = rng.permutation(problem.universe.n_docs)
        self.D = 0
        self.ledger = CostLedger(config.prices)
        self.labels_at = np.zeros(m, dtype=np.int64)
        self.docs_at = np.zeros(m, dtype=np.int64)
        self.hw_at = np.full(m, np.nan)
        self.hw_recall_at = np.full(m, np.nan)
        self.arrived = 0
        # exhaustive annotation reveals u(x) f(x) for every instance of a drawn document
        u, truth = problem.universe.u, problem.truth.astype(float)
        self._b = problem.universe.doc_totals(u * truth)
        self._a = problem.universe.doc_totals((problem.P > 0) * (u * truth)[None, :])

    # ---- buying -------------------------------------------------------------------------------
    def _draw(self, i: int, target: int) -> None:
        """Extend system ``i``'s sample to ``target`` draws and verify the new instances."""
        extra = target - int(self.n[i])
        if extra <= 0:
            return
        if self.wor[i]:
            new = self.perm[i][self.n[i]:target]  # uniform without replacement: a prefix of a permutation
        else:
            new = self.rng.choice(self.pb.P.shape[1], size=extra, p=self.pb.P[i])
        fresh = np.unique(new[self.known[new] < 0])
        self.known[fresh] = self.pb.truth[fresh]
        self.ledger.buy(labels=fresh.size)
        self.idx.append(new)
        self.grp.append(np.full(new.size, i))
        self.n[i] = target

    def _draws_buying(self, i: int, budget: int) -> int:
        """Draws of system ``i`` after buying ``budget`` new verifications (instances already verified are free).

        Uniform draws without replacement continue ``i``'s permutation up to, not including, the
        ``budget + 1``-th unverified instance (or to the end of ``X_i``): every free draw on the way is
        taken. Draws with replacement add ``budget`` draws.
        """
        if not self.wor[i]:
            return int(self.n[i]) + max(budget, 0)
        rest = self.perm[i][self.n[i]:]
        bought = np.cumsum(self.known[rest] < 0)
        return int(self.n[i]) + int(np.searchsorted(bought, max(budget, 0), side="right"))

    def _annotate(self, total: int) -> None:
        total = min(total, self.pb.universe.n_docs)
        if total > self.D:
            self.ledger.buy(documents=total - self.D)
            self.D = total

    # ---- estimates ----------------------------------------------------------------------------
    def samples(self, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        idx = np.concatenate(self.idx) if self.idx else np.zeros(0, dtype=np.int64)
        grp = np.concatenate(self.grp) if self.grp else np.zeros(0, dtype=np.int64)
        n = self.n[:s]
        fpc = finite_population_correction(self.support[:s], n, self.wor[:s])
        return idx, grp, self.known[idx].astype(float), n, fpc

    def estimates(self, s: int | None = None) -> dict[str, np.ndarray]:
        """Estimates, variances and intervals for the first ``s`` systems (default: all arrived)."""
        s = self.arrived if s is None else s
        P = self.pb.P[:s]
        idx, grp, f, n, fpc = self.samples(s)
        docs = self.doc_perm[:self.D]
        b = self._b[docs]
        out: dict[str, np.ndarray] = {}
        if self.joint:
            if self.normalized:
                factor = design_factor(self.support[:s], n, self.wor[:s])
                prec = normalized_joint_precision(P, idx, grp, f, n, fpc, factor, self.cfg.scheme, self.gram[:s, :s],
                                                  self.cfg.post_stratified)
            else:
                prec = joint_precision(P, idx, grp, f, n, fpc, self.cfg.scheme, self.gram[:s, :s],
                                       self.cfg.control_variate)
            var_prec = reported_variance(prec.var, *own_share(P, idx, grp, f, n, self.wor[:s]),
                                         self.normalized and self.cfg.post_stratified, self.cfg.level)
            if self.cfg.composite:
                prec = composite_precision(prec, var_prec, grp, f, n, fpc)
                var_prec = prec.var
            nu = pooled_recall(P, idx, grp, f, n, fpc, self.pb.universe.u)
            pooled = (self.pb.P[:s] > 0).any(axis=0) * self.pb.universe.u * self.pb.truth
            a_pool = self.pb.universe.doc_totals(pooled)[docs]
            theta, var_theta = ratio_estimate(a_pool[None, :], b, self.pb.universe.n_docs)
            # floors on the factors: theta at the documents' design size, nu stratum by stratum (.recall)
            var_theta = np.maximum(var_theta, agresti_coull_floor(theta, self._docs_cap(b), self.cfg.level))
            var_nu = np.maximum(nu.var, pooled_recall_floor(P, idx, grp, f, n, fpc, self.pb.universe.u,
                                                            self.cfg.level))
            rec, var_rec = recall_product(theta[0], var_theta[0], nu.value, var_nu, coupled=True)
            # pi and nu share the draws; rho = theta nu with theta independent of them
            cov = theta[0] * grouped_cov(prec.contributions, nu.contributions, grp, n, fpc)
            if self.cfg.combined_recall:
                rec, var_rec, weight = combined_recall(theta[0], var_theta[0], nu.value, var_nu, a_pool,
                                                       self._a[:s][:, docs], b, self.pb.universe.n_docs,
                                                       self._docs_cap(b), self.cfg.level)
                cov = (1 - weight) * cov  # the direct ratio shares no draw with the precision
            out.update(theta=theta[0], var_theta=var_theta[0], nu=nu.value, var_nu=var_nu)
            rec_cap = np.inf
        else:
            prec = simple_precision(grp, f, n, fpc)
            var_prec = prec.var
            rec, var_rec = ratio_estimate(self._a[:s][:, docs], b, self.pb.universe.n_docs)
            cov = np.zeros(s)
            rec_cap = self._docs_cap(b)
        out.update(precision=prec.value, var_precision=var_prec, recall=rec, var_recall=var_rec, cov=cov)
        out["precision_ci"] = np.array(self._precision_interval(prec, var_prec, n))
        out["recall_ci"] = np.array(floored_normal_interval(rec, var_rec, self.cfg.level, rec_cap))
        return out

    def _precision_interval(self, prec: Estimate, var: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score interval for the plain and the self-normalized joint estimators (their variance at the
        hypothesized precision, see :func:`score_interval`); Wilson for the regression estimator, whose variance shrinks with
        :math:`p(1 - p)` like a proportion's; floored normal for the simple and composite ones."""
        level, s = self.cfg.level, n.size
        if not self.joint or self.cfg.composite:
            return floored_normal_interval(prec.value, var, level, prec.ess)
        if self.cfg.control_variate:
            return wilson_interval(prec.value, var, level, prec.ess)
        alpha, beta = exchangeable_variance(self.pb.P[:s], n, self.support[:s], self.wor[:s], self.cfg.scheme,
                                            self.gram[:s, :s], self.normalized)
        return score_interval(prec.value, var, alpha, beta, level, prec.ess)

    def _docs_cap(self, b: np.ndarray) -> float:
        """Design size of the documents: correct instances found, over the fpc."""
        fpc = 1.0 - self.D / self.pb.universe.n_docs
        return float(b.sum() / fpc) if fpc > 0 else np.inf

    # ---- planning -----------------------------------------------------------------------------
    def _f_hat(self, i: int) -> np.ndarray:
        """Plug-in correctness for planning system ``i``: known labels, else
        :func:`~labelwise.ondemand.plug_in.stratified_plug_in` on ``X_i`` (the prior off it)."""
        members = self.pb.members(i)
        lab = self.known[members]
        if not self.joint:  # the simple estimator knows only its own draws of X_i
            own = np.zeros(self.known.size, dtype=bool)
            for ix, g in zip(self.idx, self.grp, strict=True):
                own[ix[g == i]] = True
            lab = np.where(own[members], lab, -1)
        covered_by = self.pb.P[:i][self.n[:i] > 0][:, members].T > 0  # (|X_i|, earlier sampled systems)
        f_hat = np.full(self.known.size, self.cfg.prior)
        f_hat[members] = stratified_plug_in(lab, covered_by, self.cfg.prior, self.cfg.prior_strength)
        if self.joint:
            f_hat[self.known >= 0] = self.known[self.known >= 0]
        return f_hat

    def plan_precision(self, s: int) -> int:
        """Draws of system ``s`` that give its precision the target half-width (bisection on the predicted
        width of the interval :meth:`estimates` reports for the joint estimator, on the predicted variance
        of the composite, control-variate and simple ones, given the labels known now)."""
        lo, hi = int(self.n[s]), int(self.support[s]) if self.wor[s] else 10 * int(self.support[s])
        hw, level = self.cfg.half_width, self.cfg.level
        f_hat = self._f_hat(s)
        if self.joint:
            P, sup, wor, gram = self.pb.P[: s + 1], self.support[: s + 1], self.wor[: s + 1], self.gram[: s + 1, : s + 1]

            def variance(k: int) -> float:
                n = self.n[: s + 1].astype(float).copy()
                n[s] = k
                if self.cfg.composite:
                    return predicted_composite_variance(P, n, s, f_hat, sup, wor, self.cfg.scheme, gram,
                                                        self.cfg.control_variate)
                if self.cfg.control_variate:
                    return predicted_joint_variance(P, n, s, f_hat, sup, wor, self.cfg.scheme, gram, True)
                return predicted_interval_variance(P, n, s, f_hat, sup, wor, self.cfg.scheme, gram, self.normalized,
                                                   self.cfg.post_stratified, level)
        else:

            def variance(k: int) -> float:
                return predicted_simple_variance(k, f_hat, self.pb.P[s], int(self.support[s]), bool(self.wor[s]))

        return plan_verifications(variance, lo, hi, hw, level)

    def plan_documents_for(self, s: int) -> int:
        """Annotated documents the recall of systems ``0..s`` needs for the target half-width."""
        est = self.estimates(s + 1)
        docs = self.doc_perm[:self.D]
        b = self._b[docs]
        n_docs = self.pb.universe.n_docs
        if self.D < 2 or b.sum() <= 0:
            return min(max(2 * self.D, self.D + 2), n_docs)
        bbar2 = (b.sum() / self.D) ** 2
        if self.joint:
            pooled = (self.pb.P[: s + 1] > 0).any(axis=0) * self.pb.universe.u * self.pb.truth
            a = self.pb.universe.doc_totals(pooled)[docs]
            spread = np.var(a - est["theta"] * b, ddof=1) / bbar2
            coef = np.nan_to_num(est["nu"], nan=1.0)
            other = np.nan_to_num(est["theta"] ** 2 * est["var_nu"], nan=0.0)
            return plan_documents(np.full(coef.size, spread), coef, other, self.D, n_docs, self.cfg.half_width,
                                  self.cfg.level)
        a = self._a[: s + 1][:, docs]
        rec = np.nan_to_num(est["recall"], nan=0.5)
        spread = np.var(a - rec[:, None] * b[None, :], axis=1, ddof=1) / bbar2
        return plan_documents(spread, np.ones(s + 1), np.zeros(s + 1), self.D, n_docs, self.cfg.half_width,
                              self.cfg.level)

    # ---- one arrival --------------------------------------------------------------------------
    def arrive(self, draws: int | None = None) -> None:
        """Submit the next system: plan and buy its verifications, then documents for recall.

        ``draws`` replaces the plan of this system's draws (or ``fixed_labels``) by that many.
        """
        s = self.arrived
        labels0, docs0 = self.ledger.labels, self.ledger.documents
        if s == 0:
            self._annotate(self.cfg.initial_documents)
        if draws is not None or self.fixed_labels is not None:
            draws = self.fixed_labels[s] if draws is None else draws
            self._draw(s, int(min(draws, self.support[s] if self.wor[s] else np.inf)))
        elif self.label_budget is not None:
            self._draw(s, self._draws_buying(s, int(self.label_budget[s])))
        else:
            if self.cfg.pilot and (self._f_hat(s)[self.pb.members(s)] % 1 != 0).mean() > 0.5:
                self._draw(s, min(self.cfg.pilot, int(self.support[s])))
            self._draw(s, self.plan_precision(s))
        self.arrived = s + 1
        if self.fixed_documents is not None:
            self._annotate(self.fixed_documents)
        else:
            for _ in range(3):  # the spread is re-estimated on the larger set of documents
                need = self.plan_documents_for(s)
                if need <= self.D:
                    break
                self._annotate(need)
        est = self.estimates()
        lo, hi = est["precision_ci"][:, s]
        self.hw_at[s] = (hi - lo) / 2
        lo, hi = est["recall_ci"][:, s]
        self.hw_recall_at[s] = (hi - lo) / 2
        self.labels_at[s] = self.ledger.labels - labels0
        self.docs_at[s] = self.ledger.documents - docs0
