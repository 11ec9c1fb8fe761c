"""Horvitz-Thompson estimator for Poisson (Bernoulli) samples, with its covariance.

Yilmaz et al., "Sample Efficient Model Evaluation" (2021), eqs. 18 and 25-28:
with items included independently with probabilities ``pi_n``,

    R-hat = (1/N) sum_{n in S} l_n / pi_n,
    cov(G-hat) = (1/N^2) sum_{n in S} (1 - pi_n) / pi_n^2 u_n u_n^T,   u_n = Dg(R-hat) l_n,

the unbiased variance estimator of Poisson sampling (conservative for a
fixed-size systematic sample).  Items taken with certainty add no variance.
Under a stochastic oracle (eq. 27) the labels are random too:
``(1/N^2) sum s_n / pi_n (<u u^T> / pi_n - <u><u>^T)``, where one label
estimates ``<u u^T>`` and ``<u>`` comes from a label model; a model that
overstates ``<u>`` would understate the error, so the result is never below
the deterministic formula's.
"""

from __future__ import annotations

import numpy as np

from ..measures import Measure
from .model_covariance import larger_variance

__all__ = ["horvitz_thompson_moments", "horvitz_thompson_totals_covariance"]


def horvitz_thompson_moments(measure: Measure, losses: np.ndarray, inclusion: np.ndarray, n_items: int,
                             expected_losses: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Horvitz-Thompson estimate of R and the covariance of G-hat.

    Parameters
    ----------
    measure : Measure
    losses : ndarray, shape (n, d)
        Losses of the sampled items at their labels.
    inclusion : ndarray, shape (n,)
        Inclusion probability ``pi_n`` of each sampled item.
    n_items : int
        Pool size ``N``.
    expected_losses : ndarray, shape (n, d), optional
        ``E[l_n]`` under a label model: given, the labels are taken as noisy
        (stochastic oracle, eq. 27) and their noise enters the covariance.

    Returns
    -------
    R : ndarray, shape (d,)
    cov_G : ndarray, shape (m, m)
    """
    losses = np.asarray(losses, dtype=float)
    pi = np.asarray(inclusion, dtype=float)
    R = (losses / pi[:, None]).sum(axis=0) / n_items
    with np.errstate(divide="ignore", invalid="ignore"):
        J = measure.jacobian(R)
        u = losses @ J.T
        cov = (u.T * ((1 - pi) / pi**2)) @ u / n_items**2
        if expected_losses is not None:
            mean_u = np.asarray(expected_losses, dtype=float) @ J.T
            noisy = ((u.T / pi**2) @ u - (mean_u.T / pi) @ mean_u) / n_items**2
            cov = larger_variance(noisy, cov)
    return R, cov


def horvitz_thompson_totals_covariance(losses: np.ndarray, inclusion: np.ndarray, n_items: int) -> np.ndarray:
    """The Poisson-sampling covariance of ``R-hat`` itself, ``(1/N^2) sum_S (1 - pi_n) / pi_n^2 l_n l_n^T``, (d, d).

    The covariance of :func:`horvitz_thompson_moments` before the Jacobian (for Fieller's interval of a
    ratio, :mod:`~labelwise.estimators.fieller`).
    """
    losses = np.asarray(losses, dtype=float)
    pi = np.asarray(inclusion, dtype=float)
    return (losses.T * ((1 - pi) / pi**2)) @ losses / n_items**2
