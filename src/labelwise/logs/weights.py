"""Weights of rows kept from a log whose zero-reward rows were subsampled.

Mineiro, "On the Unimportance of Zeroes", Machined Learnings (blog, 2010): a logging
system keeps every row with a non-zero reward and each zero-reward row with
probability ``l`` (the keep rate).  Every expectation under the original
distribution ``S`` is a weighted expectation under the subsampled one
``S~``::

    E_S[f] = E_S~[w(l, r) f] / E_S~[w(l, r)],   w(l, r) = l^-1 1{r = 0} + 1{r != 0},

so a kept zero-reward row stands for ``1/l`` logged rows, and the effective
size of the kept log ``H~`` is ``eta(H~) = sum_{H~} w(l, r)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["check_keep_rates", "effective_size", "keep_weights"]


def check_keep_rates(keep_rate, n_rows: int, name: str = "keep_rate") -> np.ndarray:
    """Keep rates as a float array of ``n_rows`` (a scalar is broadcast), each in ``(0, 1]``.

    Raises
    ------
    ValueError
        Naming ``name``, the first offending row (0-based) and its value.
    """
    rates = np.broadcast_to(np.asarray(keep_rate, dtype=float), (n_rows,))
    bad = ~((rates > 0) & (rates <= 1))
    if bad.any():
        row = int(np.argmax(bad))
        raise ValueError(f"{name}: row {row} has keep rate {rates[row]!r}; keep rates must lie in (0, 1]")
    return rates


def keep_weights(reward, keep_rate) -> np.ndarray:
    """``w(l, r) = 1/l`` for a zero reward, 1 otherwise: the logged rows each kept row stands for.

    Parameters
    ----------
    reward : array_like, shape (n,)
    keep_rate : float or array_like, shape (n,)
        Probability ``l`` in ``(0, 1]`` with which a zero-reward row was kept.

    Returns
    -------
    ndarray, shape (n,)
    """
    reward = np.asarray(reward, dtype=float)
    rates = check_keep_rates(keep_rate, reward.shape[0])
    return np.where(reward == 0, 1.0 / rates, 1.0)


def effective_size(reward, keep_rate) -> float:
    """``eta(H~) = sum w(l, r)``: the number of logged rows the kept rows stand for (unbiased for it)."""
    return float(keep_weights(reward, keep_rate).sum())
