"""``labelwise discover ...``: finding the positives of a domain on a budget.

``init``, ``next``, ``answer``, ``report`` and ``export`` run a discovery
answered by people (:class:`~labelwise.discover.DiscoverySession`, one
file, every step its own process); ``simulate`` runs the policies against a
population whose positives are known.

The method is that of Rekatsinas, Deshpande and Parameswaran, "CRUX:
Adaptive querying for efficient crowdsourced data extraction", CIKM 2019
(:mod:`labelwise.discover`).  The ``--json`` outputs are stable contracts.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from .options import (
    JsonOpt,
    SeedOpt,
    UserError,
    check_level,
    check_positive,
    session_path,
    user_errors,
)
from .render import print_json

__all__ = ["discover"]

discover = typer.Typer(name="discover", no_args_is_help=True,
                       help="Find the positives of a domain on a budget: adaptive 'give me up to k items of kind "
                            "v' queries over a hierarchy, and how many positives remain.")

DiscoArg = Annotated[Path, typer.Argument(help="Discovery session file (from `labelwise discover init`).")]
AttributesOpt = Annotated[str, typer.Option("--attributes", help="Comma-separated attribute columns: the "
                                            "hierarchy's levels (e.g. genre,decade,country).")]
BudgetOpt = Annotated[float, typer.Option("--budget", help="Total budget, in the units of the cost model.")]
CostsOpt = Annotated[Path | None, typer.Option("--costs", help="JSON cost model: per_query, per_item, "
                                               "per_excluded, per_level, k (list), l (list).")]
LevelOpt = Annotated[float, typer.Option("--level", help="Level of the remaining-positives intervals.")]


@contextmanager
def _about(path: Path):
    """Errors about a file's content, prefixed by the file."""
    try:
        yield
    except UserError:
        raise
    except ValueError as exc:
        raise UserError(f"{path}: {exc}") from None


def _table(path: Path, kind: str, columns: list[str]):
    """A CSV/TSV/Parquet file with ``columns`` (names stripped), ids as text; the errors call it ``kind``."""
    from ..pool.table import read_table

    frame = read_table(path, id_col="item_id", kind=kind)
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: no column {', '.join(missing)}; the file needs columns {', '.join(columns)}")
    return frame


def _attributes(value: str) -> list[str]:
    names = [a.strip() for a in value.split(",") if a.strip()]
    if not names:
        raise UserError(f"--attributes: give comma-separated column names, got {value!r}")
    return names


def _check_budget(budget: float) -> None:
    if not budget > 0:
        raise UserError(f"--budget: give a positive amount, got {budget:g}")


def _costs(path: Path | None):
    from ..discover import CostModel

    return CostModel() if path is None else CostModel.from_json(path)


@discover.command("init")
def init_cmd(
    session: Annotated[Path | None, typer.Argument(help="Discovery session file to create (or --session).",
                                                   show_default=False)] = None,
    hierarchy: Annotated[Path, typer.Option("--hierarchy", "--population", help="CSV/TSV/JSON lines/Parquet of the "
                                            "items: item_id and the attribute columns.")] = ...,
    attributes: AttributesOpt = ...,
    budget: BudgetOpt = ...,
    costs: CostsOpt = None,
    seed: SeedOpt = 0,
    session_opt: Annotated[Path | None, typer.Option("--session", "-s", help="The file to create, as `labelwise "
                                                     "init` names it.", show_default=False)] = None,
) -> None:
    """Start a discovery over the items of a file, organised by attribute columns."""
    with user_errors():
        from ..discover import DiscoverySession

        session = session_path(session, session_opt, "discover init")
        _check_budget(budget)
        names = _attributes(attributes)
        model = _costs(costs)
        frame = _table(hierarchy, "hierarchy file", ["item_id", *names])
        with _about(hierarchy):
            DiscoverySession.create(session, frame, names, budget, model, seed)
        typer.echo(f"created {session}: {len(frame)} items over {', '.join(names)}, budget {budget:g}; next "
                   f"`labelwise discover next {session}`")


@discover.command("next")
def next_cmd(
    session: DiscoArg,
    out: Annotated[Path | None, typer.Option("--out", help="Write the query here: .csv, .tsv or .parquet (one row "
                                             "per excluded item) or .json/.jsonl (one object); default: JSON on "
                                             "standard output.")] = None,
) -> None:
    """The next query for the annotators: a node, how many items to ask for, and the items to leave out.

    The query waiting for answers is shown again until `answer` stores them.
    """
    with user_errors():
        from ..discover import DiscoverySession
        from ..pool.table import file_suffixes
        from ..pool.writers import check_folder, is_stdout, write_table

        query = DiscoverySession.open(session).next_query()
        if is_stdout(out):
            print_json(query)
        elif file_suffixes(out).endswith((".csv", ".tsv", ".parquet")):
            write_table(_query_frame(query), out)
        else:
            check_folder(out)
            out.write_text(json.dumps(query) + "\n")
        where = " AND ".join(f"{a}={v}" for a, v in query["node"].items()) or "(everything)"
        typer.echo(f"query {query['query']}: up to {query['k']} items with {where}, excluding "
                   f"{len(query['exclude'])}; cost {query['cost']:g}", err=True)


def _query_frame(query: dict):
    """The query as a table: one row per excluded item (one row with an empty ``exclude_item_id`` if none)."""
    import pandas as pd

    node = ";".join(f"{a}={v}" for a, v in query["node"].items())
    return pd.DataFrame({"query": query["query"], "node": node, "k": query["k"],
                         "exclude_item_id": list(query["exclude"]) or [""]})


@discover.command("answer")
def answer_cmd(
    session: DiscoArg,
    answers: Annotated[Path, typer.Argument(help="CSV/TSV/JSONL/Parquet with an item_id column: the items returned to the "
                                            "waiting query; fewer than k (or no rows) tells the policy that the "
                                            "node has no other positive outside the exclude list.")],
) -> None:
    """Store the items the annotators returned to the waiting query."""
    with user_errors():
        from ..discover import DiscoverySession

        ids = _table(answers, "answers file", ["item_id"])["item_id"]
        if ids.isna().any():
            raise UserError(f"{answers}, data row {int(ids.index[ids.isna().to_numpy()][0])}: item_id is empty; "
                            "fill it or drop the row")
        with _about(answers):
            done = DiscoverySession.open(session).answer(ids.astype(str).str.strip().to_numpy())
        typer.echo(f"query {done['query']}: {done['returned']} items, {done['new']} new; {done['found']} found "
                   "in all")


@discover.command("report")
def report_cmd(session: DiscoArg, level: LevelOpt = 0.95, as_json: JsonOpt = False) -> None:
    """Positives found (overall and per queried node), the spend, and how many are estimated to remain."""
    with user_errors():
        from ..discover import DiscoverySession

        report = DiscoverySession.open(session).report(check_level(level))
        if as_json:
            print_json(report)
            return
        _print_report(report)


def _print_report(report: dict) -> None:
    from rich.table import Table

    from .render import rich_console

    table = Table(title="Discovery: queried nodes", caption="(root): the estimate below; other nodes: a rough "
                  "guide from every answer at or above them, exclude lists too, not bounds")
    for head in ("node", "queries", "spent", "found", "est. remaining", f"{100 * report['level']:g}% interval"):
        table.add_column(head)
    for row in report["nodes"]:
        lo, hi = row["interval"]
        interval = f">= {lo:.1f}" if row["lower_bound_only"] and row["depth"] == 0 else f"[{lo:.1f}, {hi:.1f}]"
        table.add_row(" AND ".join(f"{a}={v}" for a, v in row["node"].items()) or "(root)", str(row["queries"]),
                      f"{row['spent']:g}", str(row["found"]), f"{row['remaining']:.1f}", interval)
    console = rich_console()
    console.print(table)
    est = report["remaining_estimate"]
    console.print(f"{report['found']} positives found in {report['queries']} queries; spent {report['spent']:g} of "
                  f"{report['budget']:g}")
    low, high = est["interval"]
    if est["lower_bound_only"]:
        console.print(f"not found yet: {est['value']:.1f} [{low:.1f}, {high:.1f}], lower bound only: at least "
                      f"{low:.1f}; the estimate and the upper end are no bounds (about {est['unseen_share']:.0%} "
                      "of answers would still be new). Why: " + "; ".join(est["doubts"]))
    else:
        console.print(f"not found yet: {est['value']:.1f} [{low:.1f}, {high:.1f}]")


@discover.command("export")
def export_cmd(
    session: DiscoArg,
    out: Annotated[Path | None, typer.Option("--out", help="Labels file to write (item_id,label; label 1): .csv, "
                                             ".tsv, .jsonl, .json or .parquet; - (the default) for CSV on standard "
                                             "output.")] = None,
) -> None:
    """Write the positives found as a labels file (item_id,label).

    `labelwise label` of a pool session takes the rows of items its design
    proposed (`labelwise next`); a label of any other item has no design
    weight, and the file is refused naming the row.
    """
    with user_errors():
        import pandas as pd

        from ..discover import DiscoverySession
        from ..pool.writers import is_stdout, where, write_table

        ids = DiscoverySession.open(session).found_ids()
        write_table(pd.DataFrame({"item_id": list(ids), "label": 1}), out)
        typer.echo(f"wrote {len(ids)} positives to {where(out)}", err=is_stdout(out))


@discover.command("simulate")
def simulate_cmd(
    population: Annotated[Path, typer.Option("--population", "--hierarchy", help="CSV/TSV/JSON lines/Parquet: "
                                             "item_id, the attribute columns, "
                                             "positive (0/1) and optionally popularity (a positive weight).")],
    attributes: AttributesOpt,
    budget: BudgetOpt,
    policy: Annotated[str, typer.Option("--policy", help="crux, greedy, root, random or oracle (knows the "
                                        "population's expected yields: a reference).")] = "crux",
    repeats: Annotated[int, typer.Option("--repeats", help="Independent runs.")] = 50,
    seed: SeedOpt = 0,
    costs: CostsOpt = None,
    level: LevelOpt = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON (a stable contract).")] = False,
) -> None:
    """Run a policy against a population whose positives are known: found per budget, interval coverage."""
    with user_errors():
        from ..discover import SIMULATED_POLICIES, Hierarchy, simulate_discovery

        if policy not in SIMULATED_POLICIES:
            raise UserError(f"--policy: {policy!r} is not one of {', '.join(SIMULATED_POLICIES)}")
        check_positive(repeats=repeats)
        _check_budget(budget)
        names = _attributes(attributes)
        model = _costs(costs)
        frame = _table(population, "population file", ["item_id", *names, "positive"])
        with _about(population):
            positive = _flags(frame["positive"])
            popularity = (frame["popularity"].to_numpy(dtype=float) if "popularity" in frame.columns
                          else np.ones(len(frame)))
            if not np.all(np.isfinite(popularity) & (popularity > 0)):
                row = int(frame.index[np.argmax(~(np.isfinite(popularity) & (popularity > 0)))])
                raise ValueError(f"data row {row}: popularity must be a positive number")
            hierarchy = Hierarchy.from_frame(frame, names)
        result = simulate_discovery(hierarchy, positive, popularity, budget, policy, model, repeats, seed,
                                    check_level(level), progress=not as_json)
        if as_json:
            print_json(result)
            return
        _print_simulation(result)


def _flags(column) -> np.ndarray:
    """0/1 (or true/false) cells as booleans; ValueError naming the first data row that is neither."""
    text = column.astype(str).str.strip().str.lower()
    valid = text.isin(["0", "1", "true", "false", "0.0", "1.0"]).to_numpy()
    if not valid.all():
        raise ValueError(f"data row {int(column.index[np.argmax(~valid)])}: positive is {column.iloc[np.argmax(~valid)]!r},"
                         " not 0 or 1")
    return text.isin(["1", "true", "1.0"]).to_numpy()


def _print_simulation(result: dict) -> None:
    from rich.table import Table

    from .render import rich_console

    table = Table(title=f"Discovery with policy {result['policy']} ({result['repeats']} runs)")
    for head in ("spent", "distinct found (mean)", "true total", "interval coverage", "lower bound only",
                 "claim holds"):
        table.add_column(head)
    for point in result["curve"]:
        table.add_row(f"{point['spent']:g}", f"{point['distinct_found']:.1f}", str(point["true_total"]),
                      f"{point['coverage']:.2f}", f"{point['lower_bound_only']:.2f}", f"{point['claim_coverage']:.2f}")
    console = rich_console()
    console.print(table)
    est = result["remaining_estimate"]
    console.print(f"not found at the end: {est['true']:.1f} (estimate {est['value']:.1f}, mean interval "
                  f"[{est['interval'][0]:.1f}, {est['interval'][1]:.1f}]); coverage {result['coverage']:.2f}; flagged "
                  f"a lower bound only in {result['lower_bound_only']:.0%} of runs; the claim (interval, or its lower "
                  f"end when flagged) held in {result['claim_coverage']:.0%}")
