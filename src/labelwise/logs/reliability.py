"""Reliability diagram: observed against predicted reward per bin, before and after calibration."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .calibration import bin_means, equal_count_bins, expected_calibration_error

__all__ = ["reliability_diagram"]


def reliability_diagram(path: str | Path, reward, curves: dict[str, np.ndarray], weight=None,
                        n_bins: int = 10) -> None:
    """Write a PNG plotting, per bin of equal weight, the weighted mean reward against the mean prediction.

    Parameters
    ----------
    path : str or Path
        PNG file to write.
    reward : array_like, shape (n,)
    curves : dict of str to ndarray, shape (n,)
        Predictions to plot, by name (e.g. ``{"before": raw, "after": calibrated}``); the
        legend shows each one's expected calibration error.
    weight : array_like, shape (n,), optional
        Rows each row stands for (1 by default).
    n_bins : int
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    weight = np.ones(len(reward)) if weight is None else np.asarray(weight, dtype=float)
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", label="perfect calibration")
    for name, prob in curves.items():
        bins = equal_count_bins(prob, n_bins, weight)
        p, total = bin_means(bins, prob, weight, n_bins)
        r, _ = bin_means(bins, reward, weight, n_bins)
        kept = total > 0
        ece = expected_calibration_error(prob, reward, weight, n_bins)
        ax.plot(p[kept], r[kept], marker="o", label=f"{name} (ECE {ece:.4f})")
    ax.set_xlabel("mean predicted")
    ax.set_ylabel("mean observed (weighted)")
    ax.set_title("reliability diagram")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
