"""ais on generated pools whose probabilities are off: the default against Marchant & Rubinstein's prior strength.

Pools of 50,000 items with 0.2% positives whose probabilities are shifted
by ``c`` on the logit scale (``c < 0`` understates, ``c > 0`` overstates the
positives).  For each shift, ``ais`` with its defaults (prior strength 10,
``mixture`` covariance) and with ``prior_strength=1`` (Marchant & Rubinstein,
"Needle in a Haystack: Label-Efficient Evaluation under Extreme Class
Imbalance", KDD 2021, sec. 5.2) and the ``max`` covariance (the earlier
defaults; ``max`` is no longer a labelwise option and is computed by
:mod:`variance_modes`) runs ``--repeats`` times; prints MSE, coverage of the
95% interval and its width at 250/500/1000/2000 labels.

Usage::

    .venv/bin/python benchmarks/miscalibrated.py [--repeats 150] [--shifts -2,2]
"""

from __future__ import annotations

import argparse

from variance_modes import ais_design

import labelwise as lw

#: label -> settings of the ais design (``variance`` may be one of :data:`variance_modes.MODES`)
SETTINGS = {"default": {}, "MR-prior,max": {"prior_strength": 1.0, "variance": "max"}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=150)
    parser.add_argument("--shifts", default="-2,2", help="comma-separated logit shifts")
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    head = f"{'shift':>6} {'ais':<16} {'labels':>6} {'MSE':>9} {'cover':>6} {'width':>7}"
    print(f"{head}\n{'-' * len(head)}")
    for shift in (float(c) for c in args.shifts.split(",")):
        pool = lw.make_pool(50_000, prevalence=0.002, separation=3.0, calibration_error=shift, seed=4)
        measure = lw.make_measure("f1", pool)
        for label, params in SETTINGS.items():
            result = lw.simulate(pool, measure, ais_design(**params), repeats=args.repeats, seed=args.seed)
            for c in result.checkpoint_rows():
                print(f"{shift:>+6.1f} {label:<16} {c['labels']:>6} {c['mse']:>9.2e} {c['coverage']:>6.3f} "
                      f"{c['mean_width']:>7.3f}", flush=True)


if __name__ == "__main__":
    main()
