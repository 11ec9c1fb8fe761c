"""A generated KBP-like corpus for on-demand evaluation experiments.

Documents hold candidate relation instances of several relation types, some
correct. Systems score instances with a shared latent difficulty plus their
own noise, so their outputs overlap the way real extractors' do; some are
near-copies of earlier systems, some cover relation types nobody else
predicts (disjoint outputs). Used by the benchmark and the tests; the
setting follows the KBP experiments of Chaganty, Paranjape, Liang and
Manning, "Importance sampling for unbiased on-demand evaluation of knowledge
base population", EMNLP 2017.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SystemSpec", "default_systems", "make_kbp_corpus"]


@dataclass(frozen=True)
class SystemSpec:
    """How one generated system predicts.

    ``kind`` is 'scored' (predict where latent + noise > threshold, with a
    stricter threshold ``gap`` for incorrect instances), 'copy' (system
    ``source`` with a fraction ``change`` of its output swapped) or
    'disjoint' (a scored system restricted to the rare relation types).
    """

    name: str
    kind: str = "scored"
    threshold: float = 0.0
    gap: float = 1.0
    noise: float = 0.5
    source: int = 0
    change: float = 0.05


def default_systems() -> list[SystemSpec]:
    """Fifteen systems of varied precision and recall, with near-copies and disjoint ones."""
    return [
        SystemSpec("base_a", threshold=0.0, gap=1.0, noise=0.5),
        SystemSpec("base_b", threshold=0.5, gap=1.5, noise=0.6),
        SystemSpec("copy_a", kind="copy", source=0, change=0.05),
        SystemSpec("loose_c", threshold=-0.6, gap=0.4, noise=0.7),
        SystemSpec("strict_d", threshold=1.0, gap=2.0, noise=0.4),
        SystemSpec("rare_e", kind="disjoint", threshold=-0.2, gap=0.8, noise=0.5),
        SystemSpec("copy_b", kind="copy", source=1, change=0.10),
        SystemSpec("mid_f", threshold=0.2, gap=0.8, noise=0.9),
        SystemSpec("noisy_g", threshold=-0.3, gap=0.3, noise=1.2),
        SystemSpec("copy_d", kind="copy", source=4, change=0.03),
        SystemSpec("rare_h", kind="disjoint", threshold=0.4, gap=1.5, noise=0.8),
        SystemSpec("base_i", threshold=-0.2, gap=1.2, noise=0.5),
        SystemSpec("copy_f", kind="copy", source=7, change=0.08),
        SystemSpec("tail_j", threshold=0.8, gap=0.6, noise=1.0),
        SystemSpec("copy_i", kind="copy", source=11, change=0.05),
    ]


def make_kbp_corpus(n_docs: int = 2000, candidates_per_doc: float = 10.0, correct_rate: float = 0.3,
                    systems: list[SystemSpec] | None = None, n_types: int = 10, rare_types: int = 3,
                    seed: int = 0) -> dict:
    """Generate documents, candidate instances, correctness and system outputs.

    Returns
    -------
    dict
        ``instance_id`` (str), ``doc_id`` (int), ``correct`` (bool) arrays of the
        truth table, ``n_docs``, and ``systems``: list of ``(name, instance ids)``
        in submission order.
    """
    rng = np.random.default_rng(seed)
    specs = default_systems() if systems is None else systems
    counts = rng.poisson(candidates_per_doc, n_docs)
    doc = np.repeat(np.arange(n_docs), counts)
    K = doc.size
    correct = rng.random(K) < correct_rate
    rtype = rng.integers(0, n_types, K)
    rare = rtype >= n_types - rare_types
    latent = rng.normal(size=K)  # shared difficulty: systems agree on easy instances
    ids = np.char.add(np.char.add("d", doc.astype(str)), np.char.add("_r", np.arange(K).astype(str)))
    outputs: list[np.ndarray] = []
    for spec in specs:
        if spec.kind == "copy":
            src = outputs[spec.source]
            keep = src[rng.random(src.size) >= spec.change]
            pool = np.flatnonzero(~rare)
            extra = rng.choice(pool, size=src.size - keep.size, replace=False)
            out = np.union1d(keep, extra)
        else:
            score = latent + spec.noise * rng.normal(size=K)
            thr = spec.threshold + np.where(correct, 0.0, spec.gap)
            allowed = rare if spec.kind == "disjoint" else ~rare
            out = np.flatnonzero((score > thr) & allowed)
        outputs.append(out)
    return {
        "instance_id": ids,
        "doc_id": doc,
        "correct": correct,
        "n_docs": n_docs,
        "systems": [(s.name, ids[o]) for s, o in zip(specs, outputs, strict=True)],
    }
