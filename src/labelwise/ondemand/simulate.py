"""Repeated on-demand evaluation against a truth table: joint vs simple estimator.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.
Given a truth table ``(instance_id, doc_id, correct)`` covering every
instance predicted by any system and every correct instance of the corpus,
and systems submitted in a given order, :func:`simulate` repeats the
on-demand process ``R`` times and reports per system the true scores, the
MSE and interval coverage of the ``joint`` and ``simple`` estimators, the
verifications and documents each bought on the system's arrival, and the
total cost against exhaustive annotation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .config import OnDemandConfig, Problem
from .estimators import f1_delta
from .intervals import floored_normal_interval
from .process import Process
from .universe import Universe, stack_systems, system_distribution

__all__ = ["Runs", "build_problem", "final_estimates", "run_repeats", "simulate", "summarize", "true_scores"]


def build_problem(instance_id: Sequence, doc_id: Sequence, correct: Sequence,
                  systems: Mapping[str, Sequence] | Sequence[tuple[str, Sequence]],
                  scores: Mapping[str, Sequence[float]] | None = None, n_docs: int | None = None) -> Problem:
    """A :class:`Problem` from a truth table and the systems' predicted instance ids (in order).

    Raises ``ValueError`` if a system predicts an instance missing from the truth table.
    """
    ids = np.asarray(instance_id)
    if np.unique(ids).size != ids.size:
        raise ValueError("instance ids in the truth table must be unique")
    _, doc_codes = np.unique(np.asarray(doc_id), return_inverse=True)
    universe = Universe.from_docs(doc_codes, n_docs=n_docs)
    truth = np.asarray(correct).astype(bool)
    order = np.argsort(ids, kind="stable")
    items = list(systems.items()) if isinstance(systems, Mapping) else list(systems)
    rows, names = [], []
    for name, given in items:
        predicted, first = np.unique(np.asarray(given), return_index=True)
        pos = np.searchsorted(ids[order], predicted)
        pos = np.minimum(pos, ids.size - 1)
        if np.any(ids[order][pos] != predicted):
            raise ValueError(f"system {name!r} predicts instances missing from the truth table")
        members = order[pos]
        sc = None
        if scores is not None and name in scores:
            given_scores = np.asarray(scores[name], dtype=float)
            if given_scores.size != np.asarray(given).size:
                raise ValueError(f"system {name!r}: {given_scores.size} scores for {np.asarray(given).size} instances")
            sc = given_scores[first]  # each instance's score, in the order of ``predicted``
        rows.append(system_distribution(members, universe.size, sc))
        names.append(str(name))
    return Problem(universe=universe, P=stack_systems(rows), truth=truth, names=tuple(names))


def true_scores(problem: Problem) -> dict[str, np.ndarray]:
    """True precision :math:`\\pi_i = \\sum_x p_i f`, recall :math:`\\rho_i` and F1 of every system."""
    wf = problem.universe.u * problem.truth
    precision = problem.P @ problem.truth.astype(float)
    recall = ((problem.P > 0) @ wf) / wf.sum()
    f1, _ = f1_delta(precision, recall, np.zeros_like(recall), np.zeros_like(recall))
    return {"precision": precision, "recall": recall, "f1": f1}


@dataclass(frozen=True)
class Runs:
    """Per-repeat results of one estimator, arrays of shape ``(R, m)``.

    ``est``/``lo``/``hi`` map 'precision', 'recall', 'f1' to final estimates and
    interval bounds (after every system has arrived); ``labels``/``documents``
    are bought on each system's arrival; ``half_width`` is the realized
    precision half-width just after the system's arrival; ``draws`` the
    system's draws :math:`n_i` at the end (verified before or not).
    """

    est: dict[str, np.ndarray]
    lo: dict[str, np.ndarray]
    hi: dict[str, np.ndarray]
    labels: np.ndarray
    documents: np.ndarray
    half_width: np.ndarray
    half_width_recall: np.ndarray
    draws: np.ndarray


def final_estimates(process: Process, level: float) -> dict[str, np.ndarray]:
    """Precision, recall and F1 of every system of ``process`` with their ``level`` intervals (``_lo``, ``_hi``)."""
    est = process.estimates()
    f1, var_f1 = f1_delta(est["precision"], est["recall"], est["var_precision"], est["var_recall"], est["cov"])
    f1_lo, f1_hi = floored_normal_interval(f1, var_f1, level)
    return {
        "precision": est["precision"], "recall": est["recall"], "f1": f1,
        "precision_lo": est["precision_ci"][0], "precision_hi": est["precision_ci"][1],
        "recall_lo": est["recall_ci"][0], "recall_hi": est["recall_ci"][1], "f1_lo": f1_lo, "f1_hi": f1_hi,
    }


def run_repeats(problem: Problem, config: OnDemandConfig, repeats: int, seed: int = 0, joint: bool = True,
                fixed_labels: np.ndarray | None = None, fixed_documents: int | None = None,
                label_budget: np.ndarray | None = None) -> Runs:
    """Run the on-demand process ``repeats`` times (independent seeds) and collect the results.

    ``fixed_labels``, ``fixed_documents`` and ``label_budget`` replace planning (see :class:`Process`).
    """
    m = problem.m
    keys = ("precision", "recall", "f1")
    est = {k: np.empty((repeats, m)) for k in keys}
    lo = {k: np.empty((repeats, m)) for k in keys}
    hi = {k: np.empty((repeats, m)) for k in keys}
    labels = np.empty((repeats, m), dtype=np.int64)
    documents = np.empty((repeats, m), dtype=np.int64)
    hw = np.empty((repeats, m))
    hw_rec = np.empty((repeats, m))
    draws = np.empty((repeats, m), dtype=np.int64)
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(repeats)):
        process = Process(problem, config, np.random.default_rng(child), joint, fixed_labels, fixed_documents,
                          label_budget)
        for _ in range(m):
            process.arrive()
        final = final_estimates(process, config.level)
        for k in keys:
            est[k][r], lo[k][r], hi[k][r] = final[k], final[f"{k}_lo"], final[f"{k}_hi"]
        labels[r], documents[r] = process.labels_at, process.docs_at
        hw[r], hw_rec[r], draws[r] = process.hw_at, process.hw_recall_at, process.n
    return Runs(est, lo, hi, labels, documents, hw, hw_rec, draws)


def _method_summary(runs: Runs, truth: dict[str, np.ndarray], i: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in ("precision", "recall", "f1"):
        out[f"mse_{k}"] = float(np.nanmean((runs.est[k][:, i] - truth[k][i]) ** 2))
    for k in ("precision", "recall"):
        inside = (runs.lo[k][:, i] <= truth[k][i]) & (truth[k][i] <= runs.hi[k][:, i])
        out[f"coverage_{k}"] = float(inside.mean())
    out["labels"] = float(runs.labels[:, i].mean())
    out["documents"] = float(runs.documents[:, i].mean())
    return out


def summarize(problem: Problem, joint: Runs, simple: Runs, config: OnDemandConfig) -> dict:
    """The plain-dict report of :func:`simulate` (JSON-ready)."""
    truth = true_scores(problem)
    systems = []
    for i, name in enumerate(problem.names):
        systems.append({
            "name": name,
            "true_precision": float(truth["precision"][i]),
            "true_recall": float(truth["recall"][i]),
            "true_f1": float(truth["f1"][i]),
            "joint": _method_summary(joint, truth, i),
            "simple": _method_summary(simple, truth, i),
        })
    prices = config.prices

    def dollars(runs: Runs) -> float:
        return float(np.mean([prices.dollars(lab, doc) for lab, doc in
                              zip(runs.labels.sum(axis=1), runs.documents.sum(axis=1), strict=True)]))

    cost = {
        "joint_dollars": dollars(joint),
        "simple_dollars": dollars(simple),
        "exhaustive_dollars": prices.exhaustive(problem.universe.n_docs),
    }
    return {"systems": systems, "cost": cost}


def simulate(instance_id: Sequence, doc_id: Sequence, correct: Sequence,
             systems: Mapping[str, Sequence] | Sequence[tuple[str, Sequence]],
             config: OnDemandConfig | None = None, repeats: int = 100, seed: int = 0,
             scores: Mapping[str, Sequence[float]] | None = None, n_docs: int | None = None) -> dict:
    """Simulate on-demand evaluation of systems submitted one after another.

    Parameters
    ----------
    instance_id, doc_id, correct : sequences of equal length
        Truth table: every instance predicted by a system and every correct
        instance of the corpus, its document, and whether it is correct.
    systems : mapping or sequence of (name, instance ids)
        Prediction sets :math:`X_i`, in submission order.
    config : OnDemandConfig, optional
        Target half-width, level, prices, weighting scheme.
    repeats, seed : int
        Number of independent runs and the seed of the first.
    scores : mapping, optional
        Per-system scores (aligned with ``systems[name]``): sampling
        distributions :math:`p_i \\propto` score (drawn with replacement).
    n_docs : int, optional
        Documents in the corpus if some hold no instance of the truth table.

    Returns
    -------
    dict
        ``{"systems": [{"name", "true_precision", "true_recall", "true_f1",
        "joint": {...}, "simple": {...}}], "cost": {"joint_dollars",
        "simple_dollars", "exhaustive_dollars"}}`` where each method holds
        ``mse_precision, mse_recall, mse_f1, coverage_precision,
        coverage_recall, labels, documents`` (labels and documents bought on
        that system's arrival, averaged over the runs; dollars are totals).
    """
    config = OnDemandConfig() if config is None else config
    problem = build_problem(instance_id, doc_id, correct, systems, scores, n_docs)
    joint = run_repeats(problem, config, repeats, seed, joint=True)
    simple = run_repeats(problem, config, repeats, seed + 1, joint=False)
    return summarize(problem, joint, simple, config)
