"""Finding positives on a budget: the CRUX policy against root, random and greedy, and the remaining interval.

Rekatsinas, Deshpande and Parameswaran, "CRUX: Adaptive querying for
efficient crowdsourced data extraction", CIKM 2019 (``labelwise.discover``).
Generated populations: items with uniformly drawn attribute values
(hierarchies ``small``: 4 x 5 x 3 values, 5000 items, 120 nodes, budget 300;
``large``: 6 x 5 x 4 x 3, 20000 items, 840 nodes, budget 600); each leaf (full conjunction)
holds positives at rate 0.1 (``even`` node sizes) or at a rate drawn from
Beta(0.2, 1.8) (``skewed``: a few dense leaves, many nearly empty); the
positives' popularity is Zipf with exponent 0 (uniform), 0.5, 1 or 1.5 over a
random order (all combinations on ``small``, skewed node sizes with Zipf 0
and 1.5 on ``large``).  For each population and policy, ``--repeats`` runs with the
default cost model (``CostModel()``) record the distinct positives found at
10 budget points, as the state after the last query that fits and interpolated in the spend between the
queries on either side (and crux's lead over the best other policy there, with the
standard error of that difference) and, at each, the coverage of the 95% interval for those not
found, how often it is flagged a lower bound only, and how often the claim
(the interval, or its lower end when flagged) held.
At uniform popularity, the share of the positives up to which no query can
yield more per cost than the root without exclude list is computed from the
true population (budget points before it: no policy can beat ``root``).
The ``oracle`` knows the population: each round it asks the configuration of largest true expected new
positives per cost (successive sampling with the true popularities); a budget point where even its lead
over the runner-up of crux (the best of root, random and greedy) is not above 2 standard errors leaves no
measured room for crux to be ahead there (the oracle is one-step greedy, not a proven optimum).
The policy step is timed on a hierarchy of about 10^4 nodes.

Prints markdown tables and writes ``benchmarks/out/discover_benchmark.{json,png}``.

    PYTHONPATH=src nice -n 10 python benchmarks/discover_benchmark.py --repeats 50
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from labelwise.discover import (
    POLICIES,
    CostModel,
    Hierarchy,
    QueryPolicy,
    simulate_discovery,
)
from labelwise.discover.crowd import SimulatedCrowd
from labelwise.discover.remaining import COVERAGE_LIMIT, CV2_LIMIT
from labelwise.discover.simulate import ORACLE

OUT = Path(__file__).resolve().parent / "out"
HIERARCHIES = {"small": ((4, 5, 3), 5000, 300.0), "large": ((6, 5, 4, 3), 20000, 600.0)}
# (hierarchy, node sizes, Zipf exponent): every combination on the small hierarchy, the extremes on the large
GRID = ([("small", sizes, zipf) for sizes in ("even", "skewed") for zipf in (0.0, 0.5, 1.0, 1.5)]
        + [("large", "skewed", zipf) for zipf in (0.0, 1.5)])
TIMING_LEVELS, TIMING_ITEMS = (10, 10, 10, 8), 60000
COVERAGE_TARGET = 0.9
MARGIN_SE = 2.0  # crux counts as ahead at a budget point when its lead over the runner-up exceeds 2 standard errors
INTERPOLATED = "distinct_found_interpolated"  # found at the budget point, the straddling query pro rata
COMMAND = "PYTHONPATH=src nice -n 10 python benchmarks/discover_benchmark.py --repeats {repeats}"


def population(levels: tuple[int, ...], n_items: int, node_sizes: str, zipf: float, seed: int
               ) -> tuple[Hierarchy, np.ndarray, np.ndarray]:
    """A generated domain: its hierarchy, which items are positive, and their popularity."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"a{j}": rng.integers(0, v, n_items) for j, v in enumerate(levels)})
    hierarchy = Hierarchy.from_frame(frame, list(frame.columns))
    rate = rng.beta(0.2, 1.8, hierarchy.n_nodes) if node_sizes == "skewed" else np.full(hierarchy.n_nodes, 0.1)
    positive = rng.random(n_items) < rate[hierarchy.item_node[:, -1]]
    popularity = np.ones(n_items)
    popularity[positive] = (1.0 + rng.permutation(int(positive.sum()))) ** -zipf
    return hierarchy, positive, popularity


def time_policy_step(queries: int, seed: int) -> dict:
    """Milliseconds of ``choose`` and of ``record`` per round of crux on a hierarchy of about 10^4 nodes."""
    hierarchy, positive, popularity = population(TIMING_LEVELS, TIMING_ITEMS, "skewed", 1.0, seed)
    policy = QueryPolicy(hierarchy, CostModel(), "crux", seed=seed)
    crowd = SimulatedCrowd(hierarchy, positive, popularity)
    rng = np.random.default_rng(seed)
    choose, record = [], []
    for _ in range(queries):
        start = time.perf_counter()
        query = policy.choose(np.inf, rng)
        middle = time.perf_counter()
        policy.record(query, crowd.answer(query, rng))
        choose.append(middle - start)
        record.append(time.perf_counter() - middle)
    ms = 1000 * np.array([choose, record])
    return {"nodes": hierarchy.n_nodes, "items": hierarchy.n_items, "queries": queries,
            "choose_median_ms": float(np.median(ms[0])), "choose_p95_ms": float(np.percentile(ms[0], 95)),
            "record_median_ms": float(np.median(ms[1])), "record_p95_ms": float(np.percentile(ms[1], 95)),
            "step_median_ms": float(np.median(ms.sum(axis=0))), "step_p95_ms": float(np.percentile(ms.sum(axis=0), 95))}


def root_optimal_share(hierarchy: Hierarchy, positive: np.ndarray, zipf: float, costs: CostModel) -> float | None:
    """Share of the positives found below which no query yields more per cost than the root without exclude list.

    Only at uniform popularity (``zipf == 0``, else None), where yields are exact: with ``F`` of the ``N``
    positives found, the root with ``k`` answers and an exclude list of ``l`` yields ``k (N - F) / (N -
    min(l, F))`` (at most ``N - F``), and no query below the root can yield more than its ``k``, whatever
    was found where.  While the root without exclude list (largest ``k``) yields more per cost than all
    of these, every policy's expected yield per cost is at most the root's at the same number found, so
    no policy finds more in expectation than always asking the root until that share is reached.
    """
    if zipf != 0.0:
        return None
    k, l = costs.configurations()
    depth = hierarchy.depth()
    n = int(positive.sum())
    found = np.arange(n)[:, None]
    root_price = costs.price(k, l, 0)
    root_yield = np.minimum(k * (n - found) / (n - np.minimum(l, found)), n - found) / root_price
    best = int(np.lexsort((l, -k))[0])
    rivals = np.delete(root_yield, best, axis=1).max(axis=1)
    below = float(np.max(k / costs.price(k, l, depth[depth > 0].min()))) if hierarchy.n_nodes > 1 else 0.0
    beaten = np.flatnonzero(root_yield[:, best] < np.maximum(rivals, below))
    return float(beaten[0] / n) if beaten.size else 1.0


def lead(leader: dict, results: dict, key: str = "distinct_found") -> list[dict]:
    """At each budget point: ``leader``'s mean lead over the best of root, random and greedy there, and its
    standard error (``key``: the curve's measure of positives found, and ``key + "_se"`` its standard error).

    The runs of two policies are independent given the population, so the standard error of the
    difference of their means is the root sum of squares of theirs.
    """
    margins = []
    for j, point in enumerate(leader["curve"]):
        rival = max((k for k in results if k != "crux"), key=lambda k: results[k]["curve"][j][key])
        other = results[rival]["curve"][j]
        margins.append({"spent": point["spent"], "versus": rival, "difference": point[key] - other[key],
                        "se": float(np.hypot(point[f"{key}_se"], other[f"{key}_se"]))})
    return margins


def select_grid(names: str | None) -> list[tuple[str, str, float]]:
    """The populations of ``GRID`` named in ``names`` (comma-separated ``<hierarchy>/<node sizes>/zipf<exponent>``;
    None: all).

    Raises
    ------
    ValueError
        A name not in the grid.
    """
    grid = {f"{name}/{sizes}/zipf{zipf:g}": (name, sizes, zipf) for name, sizes, zipf in GRID}
    if names is None:
        return list(grid.values())
    unknown = [w for w in names.split(",") if w not in grid]
    if unknown:
        raise ValueError(f"unknown population {unknown[0]}; choose from {', '.join(grid)}")
    return [grid[w] for w in names.split(",")]


def parse_with_grid(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, list[tuple[str, str, float]]]:
    """The command line and the populations its ``--populations`` names (the parser exits on an unknown one)."""
    args = parser.parse_args()
    try:
        return args, select_grid(args.populations)
    except ValueError as exc:
        parser.error(str(exc))


def measure_populations(description: str, repeats: int, populations: str, measure: Callable[..., dict], name: str,
                        summary: Callable[[dict], str]) -> None:
    """Command line of a script measuring populations of this benchmark one by one (``--repeats``, ``--seed``,
    ``--populations``): ``measure(hierarchy, node_sizes, zipf, repeats, seed)`` per population, the results
    written to ``benchmarks/out/<name>.json`` and ``summary`` of them printed."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=repeats)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--populations", default=populations,
                        help="comma-separated <hierarchy>/<node sizes>/zipf<exponent> of the discovery benchmark")
    args, grid = parse_with_grid(parser)
    start = time.time()
    data = {"repeats": args.repeats, "seed": args.seed, "population_names": args.populations,
            "populations": [measure(*population, args.repeats, args.seed) for population in grid]}
    data["elapsed_s"] = time.time() - start
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1))
    print(summary(data))


def run(repeats: int, seed: int, grid: list[tuple[str, str, float]]) -> dict:
    populations = []
    for name, sizes, zipf in grid:
        levels, n_items, budget = HIERARCHIES[name]
        hierarchy, positive, popularity = population(levels, n_items, sizes, zipf, seed)
        results = {policy: simulate_discovery(hierarchy, positive, popularity, budget, policy, repeats=repeats,
                                              seed=seed, progress=True)
                   for policy in (*POLICIES, ORACLE)}
        oracle = results.pop(ORACLE)
        populations.append({"hierarchy": name, "nodes": hierarchy.n_nodes, "node_sizes": sizes, "zipf": zipf,
                            "positives": int(positive.sum()), "budget": budget, "policies": results,
                            "oracle": oracle, "crux_margin": lead(results["crux"], results),
                            "oracle_margin": lead(oracle, results),
                            "crux_margin_interpolated": lead(results["crux"], results, INTERPOLATED),
                            "oracle_margin_interpolated": lead(oracle, results, INTERPOLATED),
                            "root_optimal_share": root_optimal_share(hierarchy, positive, zipf, CostModel())})
    return {"repeats": repeats, "seed": seed, "populations": populations, "timing": time_policy_step(300, seed)}


def is_skewed(p: dict) -> bool:
    """The populations of the targets: skewed node sizes or popularity Zipf 1 and above."""
    return p["node_sizes"] == "skewed" or p["zipf"] >= 1.0


def label(p: dict) -> str:
    return f"{p['hierarchy']}/{p['node_sizes']}/zipf{p['zipf']:g}"


def ahead(margins: list[dict]) -> np.ndarray:
    """At each budget point: is the lead above ``MARGIN_SE`` standard errors?"""
    return np.array([m["difference"] > MARGIN_SE * m["se"] for m in margins])


def found_table(data: dict) -> str:
    """Distinct positives found at half and at the full budget, and crux's margins."""
    head = ("| population | positives | budget | crux @1/2 | crux @full | greedy @full | root @full | random @full "
            f"| oracle @full | crux / root @full | crux ahead (> {MARGIN_SE:g} s.e.) at every point "
            "| points with room (oracle ahead) | crux ahead at all of them | the same, interpolated |")
    rows = [head, "|" + "---|" * 14]
    for p in data["populations"]:
        curves = {k: np.array([c["distinct_found"] for c in v["curve"]])
                  for k, v in {**p["policies"], ORACLE: p["oracle"]}.items()}
        crux, room = ahead(p["crux_margin"]), ahead(p["oracle_margin"])
        crux_at, room_at = ahead(p["crux_margin_interpolated"]), ahead(p["oracle_margin_interpolated"])
        target = "" if is_skewed(p) else " (not a target)"
        rows.append(f"| {label(p)} | {p['positives']} | {p['budget']:g} | {curves['crux'][4]:.0f} | "
                    f"{curves['crux'][-1]:.0f} | {curves['greedy'][-1]:.0f} | {curves['root'][-1]:.0f} | "
                    f"{curves['random'][-1]:.0f} | {curves[ORACLE][-1]:.0f} | "
                    f"{curves['crux'][-1] / curves['root'][-1]:.2f} | {'yes' if crux.all() else 'no'}{target} | "
                    f"{room.sum()} of {room.size} | {'yes' if crux[room].all() else 'no'}{target} | "
                    f"{'yes' if crux_at.all() else 'no'}, room at {room_at.sum()}, ahead at all of them: "
                    f"{'yes' if crux_at[room_at].all() else 'no'} |")
    return "\n".join(rows)


def root_is_optimal(p: dict) -> list[bool]:
    """At each budget point: is the root's share found below :func:`root_optimal_share` (no policy can beat it)?"""
    share = p.get("root_optimal_share")
    root = [c["distinct_found"] / p["positives"] for c in p["policies"]["root"]["curve"]]
    return [share is not None and r < share for r in root]


def margin_table(data: dict, key: str = "crux_margin", room: str = "oracle_margin") -> str:
    """A policy's lead over the runner-up at each of the 10 budget points: mean difference (standard error),
    marked † where the root is optimal and ‡ where the oracle is not ahead (no room; ``room``: the oracle's
    margins to read that from)."""
    rows = ["| population | " + " | ".join(f"{10 * (j + 1)}%" for j in range(10)) + " |", "|" + "---|" * 11]
    for p in data["populations"]:
        marks = zip(p[key], root_is_optimal(p), ahead(p[room]), strict=True)
        cells = [f"{m['difference']:+.1f} ({m['se']:.1f}) {m['versus']}{' †' if optimal else ''}{'' if room else ' ‡'}"
                 for m, optimal, room in marks]
        rows.append(f"| {label(p)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def shares_line(data: dict) -> str:
    """The root-optimal shares of the uniform-popularity populations, as text."""
    return ", ".join(f"{label(p)} {p['root_optimal_share']:.2f}" for p in data["populations"]
                     if p.get("root_optimal_share") is not None)


def coverage_table(data: dict) -> str:
    """Per population and policy, at the 10 budget points: interval coverage, share flagged, claim held."""
    def points(r: dict, key: str) -> str:
        return " ".join(f"{c[key]:.2f}" for c in r["curve"])

    rows = ["| population | policy | interval coverage | lower bound only | claim holds (min) | est / true at the end |",
            "|" + "---|" * 6]
    for p in data["populations"]:
        for k in POLICIES:
            r = p["policies"][k]
            worst = min(c["claim_coverage"] for c in r["curve"])
            rows.append(f"| {label(p)} | {k} | {points(r, 'coverage')} | {points(r, 'lower_bound_only')} | "
                        f"{points(r, 'claim_coverage')} ({worst:.2f}{'' if worst >= COVERAGE_TARGET else ' !'}) | "
                        f"{r['remaining_estimate']['value']:.0f} / {r['remaining_estimate']['true']:.0f} |")
    return "\n".join(rows)


def timing_line(t: dict) -> str:
    return (f"One crux round on {t['nodes']} nodes ({t['items']} items, {t['queries']} rounds): choosing "
            f"{t['choose_median_ms']:.2f} ms median ({t['choose_p95_ms']:.2f} p95), taking in the answers "
            f"{t['record_median_ms']:.2f} ms ({t['record_p95_ms']:.2f} p95), together {t['step_median_ms']:.2f} ms "
            f"({t['step_p95_ms']:.2f} p95); target 10 ms.")


def summary_section(data: dict) -> str:
    """Markdown: the found-positives and coverage tables, the step timing and the command."""
    return "\n".join([
        "## Finding positives on a budget (CRUX)",
        "",
        (f"Mean over {data['repeats']} runs per policy and population (seed {data['seed']}); populations "
         "`<hierarchy>/<node sizes>/zipf<exponent>` as in the script's docstring. Targets: crux ahead of root, "
         "random and greedy at every one of the 10 budget points on the skewed populations (skewed node sizes "
         "or Zipf >= 1), and >= 1.5 x root at the full budget on the most skewed."),
        "",
        found_table(data),
        "",
        ("crux's lead over the runner-up at each budget point: mean difference of distinct positives found "
         "(standard error of that difference over the runs), and the runner-up. †: at uniform popularity, "
         "the root's share found there is below the share up to which the root without exclude list yields "
         "more per cost than any query can in any state (exact yields from the true population; "
         f"{shares_line(data)}): no policy finds more than `root` in expectation, a tie is the best possible. "
         f"‡: the oracle of the next table is not ahead of the runner-up there by more than {MARGIN_SE:g} "
         "standard errors (no room measured)."),
        "",
        margin_table(data),
        "",
        ("The oracle's lead over the same runner-up (the oracle knows the population: each round the configuration "
         "of largest true expected new positives per cost, by successive sampling with the true popularities and "
         f"an exclude list's mean effect). ‡: not above {MARGIN_SE:g} standard errors, so no room measured for crux "
         "to be ahead there (one-step greedy with exact gains, a reference rather than a proven optimum)."),
        "",
        margin_table(data, "oracle_margin"),
        "",
        ("The same two tables with the positives found interpolated at the budget point (linearly in the spend "
         "between the queries on either side: the tables above count the state after the last query that fits, "
         "so a policy whose prices do not add up to the point exactly loses the straddling query there, which "
         "a run with that budget would not have asked; with the default costs `root`'s price, 2, divides every "
         "point). crux:"),
        "",
        margin_table(data, "crux_margin_interpolated", "oracle_margin_interpolated"),
        "",
        "The oracle, interpolated:",
        "",
        margin_table(data, "oracle_margin_interpolated", "oracle_margin_interpolated"),
        "",
        ("The 95% interval for the positives not found, at each of the 10 budget points (10% .. 100%): iChao1 "
         "(Chiu, Wang, Walther and Chao, Biometrics 2014) on the answers of the queries that excluded nothing "
         "in the item's stratum (the coarsest node along the attribute chain that no query split), pooled over "
         "the strata, with the queries as sampling units; the interval runs from the lower end of Chao's (1987) log-normal "
         "interval around Chao1 to the upper end of the one around iChao1. It assumes "
         "those answers are draws by fixed popularity and that the positives not seen are about as popular as "
         "the rarely seen ones. It is flagged a lower bound only when the sample says otherwise: open strata "
         "no clean query sampled, a squared CV of the rare positives' detection rates above "
         f"{CV2_LIMIT:g} (Chao and Lee 1992), more positives found than the sample's estimate of all of them, "
         f"or a sample coverage below {COVERAGE_LIMIT:g}. Columns: two-sided coverage; share of runs flagged; "
         f"share whose claim held (the interval, or its lower end when flagged; `!`: below {COVERAGE_TARGET} "
         "somewhere); mean estimate and true number at the end."),
        "",
        coverage_table(data),
        "",
        timing_line(data["timing"]),
        "",
        f"Reproduce: `{COMMAND.format(repeats=data['repeats'])}"
        + (f" --populations {data['population_names']}`" if data.get("population_names") else "`"),
    ])


def plot(data: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [p for p in data["populations"] if p["zipf"] in (0.0, 1.5)]
    fig, axes = plt.subplots(2, (len(shown) + 1) // 2, figsize=(4 * ((len(shown) + 1) // 2), 7), squeeze=False)
    for ax, p in zip(axes.ravel(), shown, strict=False):
        for k, r in {**p["policies"], ORACLE: p["oracle"]}.items():
            ax.plot([c["spent"] for c in r["curve"]], [c["distinct_found"] for c in r["curve"]], marker="o",
                    ms=3, label=k, ls="--" if k == ORACLE else "-")
        ax.axhline(p["positives"], color="grey", lw=0.8, ls=":")
        ax.set_title(label(p), fontsize=9)
        ax.set_xlabel("budget spent")
        ax.set_ylabel("distinct positives found")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--populations", help="comma-separated <hierarchy>/<node sizes>/zipf<exponent> to run "
                        "(default: all); the output is then discover_benchmark_subset.json")
    args, grid = parse_with_grid(parser)
    start = time.time()
    data = {**run(args.repeats, args.seed, grid), "population_names": args.populations}
    data["elapsed_s"] = time.time() - start
    OUT.mkdir(exist_ok=True)
    name = "discover_benchmark" if args.populations is None else "discover_benchmark_subset"
    (OUT / f"{name}.json").write_text(json.dumps(data, indent=1))
    print(summary_section(data))
    if not args.no_plot:
        plot(data, OUT / f"{name}.png")


if __name__ == "__main__":
    main()
