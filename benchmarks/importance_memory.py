"""The in-memory ``importance`` design before and after it draws like an engine pool: MSE, coverage and time.

Before: i.i.d. draws from a per-item proposal ``q`` (Marchant & Rubinstein,
"Needle in a Haystack: Label-Efficient Evaluation under Extreme Class
Imbalance", KDD 2021, eq. 5, defensive mixture 0.1), its interval with the
oracle model of the score strata.  After: the same proposal planned on score
blocks, drawn with replacement by the shared item hash
(:mod:`labelwise.designs.block_draws`), its interval with the oracle model
of the blocks -- the draws and estimate an engine pool gives for the same
seed.  The same script runs on both code versions (``PYTHONPATH`` picks the
source tree) and ``--tag`` names its output; the summary compares the two.

    PYTHONPATH=/work/main/src nice -n 10 python benchmarks/importance_memory.py --runs 100 --tag before
    PYTHONPATH=src nice -n 10 python benchmarks/importance_memory.py --runs 100 --tag after
"""

from __future__ import annotations

from poisson_memory import compare, comparison_section

from labelwise.designs import ImportanceDesign

COMMAND = "PYTHONPATH={path} nice -n 10 python benchmarks/importance_memory.py --runs {runs} --tag {tag}"


def summary_section(data: dict) -> str:
    """Markdown section for ``benchmarks/RESULTS.md`` from ``benchmarks/out/importance_memory_{before,after}.json``
    (``data = {"before": ..., "after": ...}``)."""
    return comparison_section(data, "In-memory importance: block proposal drawn by the item hash vs per-item "
                              "proposal", COMMAND)


if __name__ == "__main__":
    compare("importance_memory", ImportanceDesign(), __doc__, summary_section)
