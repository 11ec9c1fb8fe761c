"""The Horvitz-Thompson covariance of a Poisson sample as the oracle model sees it, read in hindsight.

The design-based variance estimator of Poisson sampling (Yilmaz et al.,
"Sample Efficient Model Evaluation", 2021, eq. 25),
``sum_{n in S} (1 - pi_n) / pi_n^2 u_n u_n^T / N^2``, weighs the sampled
items' squares by ``1 / pi_n``.  On a rare pool its largest terms are the
positives the scores call negatives, sampled with a small ``pi``: a run
that samples few of them has both a biased estimate and a small variance
(coverage 0.62-0.83 on the entity-resolution pools).  The variance it
estimates is a sum over *every* item of the pool,
``sum_n (1 - pi_n) / pi_n u_n u_n^T / N^2``: here labeled items enter at
their labels (each once) and the items not labeled yet at the oracle
model's label distribution, the hindsight reading of ``online-poisson``.
Its rare cases (an exception: an unlabeled item whose label is not its
group's most likely one) are split into likely cases by
:func:`~labelwise.estimators.model_covariance.mixture_variance`, as for
importance sampling.
"""

from __future__ import annotations

import numpy as np

from .model_covariance import ModelCovariance, exception_terms, model_second_moment

__all__ = ["poisson_model_covariance"]


def poisson_model_covariance(u: np.ndarray, pi: np.ndarray, unlabeled: np.ndarray, inclusion: np.ndarray,
                             u_labeled: np.ndarray, inclusion_labeled: np.ndarray, n_items: int) -> ModelCovariance:
    """The covariance of ``Dg R-hat`` for a Poisson sample, labeled items at their labels, the others at the model.

    Parameters
    ----------
    u : ndarray (C, G, m)
        ``Dg(R) l`` of a group's items for each label.
    pi : ndarray (G, C)
        The model's label distribution of a group's unlabeled items.
    unlabeled : ndarray (G,)
        Unlabeled items per group.
    inclusion : ndarray (G,)
        The inclusion probability of a group's items in the sample (``> 0`` where the group has unlabeled items).
    u_labeled : ndarray (L, m)
        ``u`` of each labeled item at its label.
    inclusion_labeled : ndarray (L,)
        Each labeled item's inclusion probability.
    n_items : int

    Returns
    -------
    ModelCovariance
        ``full`` and ``modal`` are the estimator's covariance (not per draw); ``hits`` is the number of
        exceptions the sample was expected to include.
    """
    u_mode, exceptions, miss = exception_terms(u, pi, unlabeled, n_items)
    # each item's (1 - pi) / pi: how much its label moves the Horvitz-Thompson total, squared, on average
    factor = unlabeled * np.divide(1.0 - inclusion, inclusion, out=np.zeros_like(inclusion), where=inclusion > 0)
    # the second moments of an unlabeled member of each group under the model and at its likely label
    S = np.stack([np.einsum("gc,cgi,cgj->gij", pi, u, u), np.einsum("gi,gj->gij", u_mode, u_mode)])
    full, modal = model_second_moment(factor, S, (1.0 - inclusion_labeled) / inclusion_labeled, u_labeled)
    return ModelCovariance(full / n_items**2, modal / n_items**2, miss, float(exceptions.sum()),
                           float(exceptions @ inclusion))
