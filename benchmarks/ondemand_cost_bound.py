"""What label reuse can save in total on the on-demand corpus: the documents both methods must pay.

Chaganty, Paranjape, Liang and Manning, "Importance sampling for unbiased
on-demand evaluation of knowledge base population", EMNLP 2017, Sec. 3.3: the
joint estimator reuses *verifications* across systems; recall still needs
exhaustively annotated documents (samples of the correct instances), and the
first system's recall is its pool recall, which only documents inform. The
issue's cost target ("total cost for a given half-width at most half the simple
estimator's") is measured here against that floor:

* ``floor documents``: the documents the ratio estimator over uniformly drawn
  documents (the one both methods use for pool recall) needs for the first
  system's recall to reach the half-width, from its exact design variance
  :math:`(1/D - 1/N_d)\\,S^2(a - \\theta b)/\\bar b^2` over all documents of the
  corpus (Cochran, *Sampling Techniques*, 1977, Sec. 6.4);
  ``simple documents (exact)`` the same for the simple estimator's recall of
  every system (the largest need);
* the joint and simple processes of ``ondemand_benchmark.py`` at the same
  corpus and seeds (``--repeats`` runs): verifications, documents and dollars;
* ratios: verification dollars joint / simple (what reuse saves), total
  dollars joint / simple (measured), the best total ratio any reuse of
  verifications can reach (joint paying the floor documents and no
  verification at all, against simple's measured total), and the ratio with
  the joint's measured verifications at the floor documents; and the price of a
  document at which the measured verifications would meet the target ratio.

Prints a markdown section and writes ``benchmarks/out/ondemand_cost_bound.{json,png}``.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ondemand_cost_bound.py --repeats 50
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from ondemand_benchmark import corpus_problem

from labelwise.ondemand.config import OnDemandConfig, Problem
from labelwise.ondemand.planning import plan_documents
from labelwise.ondemand.simulate import run_repeats

OUT = Path(__file__).resolve().parent / "out"
TARGET_RATIO = 0.5  # the claim: total cost at most half the simple estimator's


def exact_documents(problem: Problem, members: np.ndarray, half_width: float, level: float) -> np.ndarray:
    """Documents the ratio estimator of each recall in ``members`` (rows: instance sets) needs, exactly.

    The spread :math:`S^2(a - \\rho b)/\\bar b^2` is taken over every document of the corpus (the design
    variance with the true labels), ``a`` the correct instances of the set per document, ``b`` all of them.
    """
    universe = problem.universe
    correct = universe.u * problem.truth
    b = universe.doc_totals(correct)
    a = universe.doc_totals(members * correct[None, :])
    ratio = a.sum(axis=1) / b.sum()
    spread = np.var(a - ratio[:, None] * b[None, :], axis=1, ddof=1) / b.mean() ** 2
    return np.array([plan_documents(np.array([k]), np.ones(1), np.zeros(1), 0, universe.n_docs, half_width, level)
                     for k in spread])


def measure(problem: Problem, config: OnDemandConfig, repeats: int, draw_seed: int) -> dict[str, dict[str, float]]:
    """Mean verifications, documents and dollars of the joint and simple processes (benchmark's seeds)."""
    out = {}
    for name, joint, offset in (("joint", True, 1), ("simple", False, 2)):
        runs = run_repeats(problem, config, repeats, draw_seed + offset, joint=joint)
        labels, docs = float(runs.labels.sum(axis=1).mean()), float(runs.documents.sum(axis=1).mean())
        out[name] = {"labels": labels, "documents": docs,
                     "verification_dollars": labels * config.prices.verification,
                     "document_dollars": docs * config.prices.document,
                     "dollars": config.prices.dollars(labels, docs)}
    return out


def bound(data: dict) -> dict[str, float]:
    """The ratios of the module docstring from the measured costs and the exact document floor."""
    J, S = data["costs"]["joint"], data["costs"]["simple"]
    floor = data["floor_documents"] * data["prices"]["document"]
    return {
        "verification ratio joint / simple": J["verification_dollars"] / S["verification_dollars"],
        "total ratio joint / simple (measured)": J["dollars"] / S["dollars"],
        "best total ratio: floor documents, no verification / simple total": floor / S["dollars"],
        "floor documents + joint verifications / simple total": (floor + J["verification_dollars"]) / S["dollars"],
        "floor documents + joint verifications / (floor documents + simple verifications)":
            (floor + J["verification_dollars"]) / (floor + S["verification_dollars"]),
        # (c D + V_j) / (c D + V_s) = r  <=>  c = (r V_s - V_j) / ((1 - r) D), at the floor documents
        "document price at which floor documents + measured verifications reach the target ratio ($)":
            (TARGET_RATIO * S["verification_dollars"] - J["verification_dollars"])
            / ((1 - TARGET_RATIO) * data["floor_documents"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--half-width", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated corpus")
    parser.add_argument("--draw-seed", type=int, default=2000, help="seed of the draws (as ondemand_benchmark.py)")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args()

    problem = corpus_problem(args.seed)
    config = OnDemandConfig(half_width=args.half_width)
    member = (problem.P > 0).astype(float)
    t0 = time.perf_counter()
    simple_docs = exact_documents(problem, member, args.half_width, config.level)
    data = {"config": vars(args), "names": list(problem.names),
            "prices": {"verification": config.prices.verification, "document": config.prices.document},
            "floor_documents": int(simple_docs[0]), "simple_documents_exact": simple_docs.tolist(),
            "costs": measure(problem, config, args.repeats, args.draw_seed)}
    data["bound"] = bound(data)
    data["seconds"] = time.perf_counter() - t0
    print(summary_section(json.loads(json.dumps(data))))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "ondemand_cost_bound.json").write_text(json.dumps(data, indent=1))
    if not args.no_plot:
        plot(data, OUT / "ondemand_cost_bound.png")


def summary_section(data: dict) -> str:
    """Markdown: the cost decomposition of joint and simple and the best total ratio reuse can reach."""
    cfg, costs, prices = data["config"], data["costs"], data["prices"]
    floor = data["floor_documents"]
    out = [
        "## On-demand cost: what reusing verifications can save in total", "",
        (f"`OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/ondemand_cost_bound.py "
         f"--repeats {cfg['repeats']} --half-width {cfg['half_width']} --seed {cfg['seed']} --draw-seed "
         f"{cfg['draw_seed']}` ({data['seconds']:.0f} s): the corpus and processes of `ondemand_benchmark.py` "
         f"(${prices['verification']:.2f} a verification, ${prices['document']:.0f} a document). Reuse "
         f"(Chaganty et al., EMNLP 2017) saves verifications; recall needs exhaustively annotated documents, and "
         f"the first system's recall is its pool recall, which only documents inform: the ratio estimator over "
         f"uniformly drawn documents needs **{floor} documents** (${floor * prices['document']:,.0f}) for it to "
         f"reach the half-width, from its exact design variance over all documents (the simple estimator's recall "
         f"of every system needs at most {max(data['simple_documents_exact'])}). Both methods pay them."), "",
        "| method | verifications | documents | verification $ | document $ | total $ |", "|---|---|---|---|---|---|",
    ]
    for name in ("joint", "simple"):
        c = costs[name]
        out.append(f"| {name} | {c['labels']:.0f} | {c['documents']:.1f} | {c['verification_dollars']:.0f} | "
                   f"{c['document_dollars']:.0f} | {c['dollars']:.0f} |")
    out.append(f"| floor (documents only) | 0 | {floor} | 0 | {floor * prices['document']:.0f} | "
               f"{floor * prices['document']:.0f} |")
    out += ["", "| ratio | value |", "|---|---|"]
    for k, v in data["bound"].items():
        # a negative price: the verifications alone are above the target ratio, no document price helps
        out.append(f"| {k} | {'none (verifications above the target ratio)' if v < 0 else f'{v:.3f}'} |")
    holds = data["bound"]["verification ratio joint / simple"] <= TARGET_RATIO
    out += ["", (f"The target ratio {TARGET_RATIO} {'holds' if holds else 'does not hold'} for verifications; for "
                 "the total it is out of reach on this corpus at these prices for any reuse of verifications: "
                 "documents dominate both totals.")]
    return "\n".join(out) + "\n"


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    costs, prices = data["costs"], data["prices"]
    rows = [("joint", costs["joint"]), ("simple", costs["simple"]),
            ("floor", {"verification_dollars": 0.0, "document_dollars": data["floor_documents"] * prices["document"]})]
    fig, ax = plt.subplots(figsize=(6, 4))
    names = [r[0] for r in rows]
    docs = [r[1]["document_dollars"] for r in rows]
    ver = [r[1]["verification_dollars"] for r in rows]
    ax.bar(names, docs, label="documents")
    ax.bar(names, ver, bottom=docs, label="verifications")
    ax.axhline(TARGET_RATIO * (costs["simple"]["dollars"]), color="r", ls=":", label="half of simple's total")
    ax.set_ylabel("dollars")
    ax.set_title("on-demand cost at the target half-width")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
