"""What the ``labelwise`` commands print: rich tables, one-line summaries and strict JSON."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import typer

if TYPE_CHECKING:  # rich is imported by the functions that print with it: `next` and `label` do not
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..estimators import Estimate
    from ..simulate import SimulationResult

__all__ = [
    "demo_legend",
    "demo_table",
    "emptied_note",
    "estimate_table",
    "excluded_note",
    "passive_comparison",
    "print_estimate",
    "print_json",
    "rich_console",
    "simulation_table",
]


def _finite(obj: Any) -> Any:
    """Replace NaN/inf by ``None`` so that the output is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def print_json(obj: dict) -> None:
    """Print exactly one JSON object (and a newline) on standard output."""
    typer.echo(json.dumps(_finite(obj)))


def rich_console() -> Console:
    """A console for standard output that leaves numbers and names uncoloured."""
    from rich.console import Console

    return Console(highlight=False)


def _fmt(x: float, spec: str = ".4f") -> str:
    """``x`` formatted by ``spec``; ``nan`` when it is not finite."""
    return "nan" if not math.isfinite(x) else format(x, spec)


def excluded_note(n_excluded: int) -> str:
    """The line every estimate of a session with excluded items carries."""
    return f"{n_excluded} items excluded as not judgeable; the estimate is over the judgeable items"


def print_estimate(est: Estimate, measure_name: str, pool_name: str, n_excluded: int, as_json: bool,
                   note: str | None) -> None:
    """A session's estimate as a table (with a line on excluded items, if any) or as JSON (``excluded``: their
    number), after the ``note`` on its measure, if any (:func:`~labelwise.session_report.loss_rules_note`), on
    stderr."""
    from ..session_report import estimate_record

    if note:
        typer.echo(note, err=True)
    if as_json:
        print_json(estimate_record(est, measure_name, n_excluded))
        return
    # a measure extended to added systems repeats its parts' names ("f1+recall+f1+recall"): each once in the title,
    # the systems are in the rows
    title = "+".join(dict.fromkeys(measure_name.split("+")))
    rich_console().print(estimate_table(est, f"{title} on {pool_name}"))
    if n_excluded:
        typer.echo(excluded_note(n_excluded))


def emptied_note(names: tuple[str, ...] | list[str]) -> str:
    """The line an anytime result carries when the confidence sequence of components ``names`` is empty."""
    return (f"note: the confidence sequence of {', '.join(names)} has excluded every value (the labels contradict "
            "it: a rare event, or labels that do not follow the design); the interval shown is the whole range")


def estimate_table(est: Estimate, title: str) -> Table:
    """Component, estimate, standard error, interval and defined flag."""
    from rich.table import Table
    from rich.text import Text

    lo, hi = est.interval()
    caption = f"{est.n_labels} labels, {est.n_draws} draws, {est.level:.0%} intervals"
    table = Table(title=Text(title), caption=Text(caption + (f"; interval: {est.basis}" if est.basis else "")))
    for header in ("component", "estimate", "std error", "interval", "defined"):
        table.add_column(header, justify="left" if header == "component" else "right")
    for name, v, s, a, b, d in zip(est.names, est.value, est.std, lo, hi, est.defined):
        table.add_row(Text(name), _fmt(v), _fmt(s), f"[{_fmt(a)}, {_fmt(b)}]", "yes" if d else "no")
    return table


def demo_table(est: Estimate, truth: np.ndarray) -> Table:
    """True value, estimate, interval and whether the interval covers the truth."""
    from rich.table import Table
    from rich.text import Text

    lo, hi = est.interval()
    table = Table(title="Estimates vs the truth",
                  caption=f"{est.n_labels} labels, {est.level:.0%} intervals")
    for header in ("component", "true value", "estimate", "interval", "covered?"):
        table.add_column(header, justify="left" if header == "component" else "right")
    for name, t, v, a, b in zip(est.names, truth, est.value, lo, hi):
        table.add_row(Text(name), _fmt(t), _fmt(v), f"[{_fmt(a)}, {_fmt(b)}]", "yes" if a <= t <= b else "NO")
    return table


#: Why each design's interval is as wide as it is.
_WHY = {
    "passive": "uniform draws, so the interval is the posterior over the confusion counts (TP, FP, FN, TN), "
               "as wide as so few positives leave it",
}
_CONCENTRATED = ("labels go where the measure is decided and are weighted back to the pool; the width is what "
                 "positives among the rarely sampled items leave open")


def demo_legend(runs: list[tuple[str, Estimate, int]], truth: np.ndarray, prevalence: float) -> Text:
    """Why each run's interval is as wide as it is, and what a miss means.

    Parameters
    ----------
    runs : list of (design name, estimate, positives labeled)
    truth : ndarray
        The true value of every component.
    prevalence : float
        Fraction of positives in the pool.
    """
    from rich.text import Text

    lines = [f"Why the intervals are as wide as they are (positives are {prevalence:.2%} of the pool):"]
    for name, est, positives in runs:
        lines.append(f"  {name}: {positives} of {est.n_labels} labels were positives; {_WHY.get(name, _CONCENTRATED)}.")
    misses = []
    for name, est, _ in runs:
        lo, hi = est.interval()
        misses += [f"{name} {c}" for c, a, t, b in zip(est.names, lo, truth, hi) if not a <= t <= b]
    if misses:
        lines.append(f"  Missed the truth: {', '.join(misses)}. A {runs[0][1].level:.0%} interval misses in "
                     f"{1 - runs[0][1].level:.0%} of runs by design; `labelwise simulate` measures how often.")
    return Text("\n".join(lines))


def passive_comparison(design: str, est: Estimate, passive: Estimate, truth: np.ndarray) -> str:
    """One line: the first component by the design and by passive sampling with the same labels."""
    def summary(e: Estimate) -> str:
        lo, hi = e.interval()
        covered = "covers" if lo[0] <= truth[0] <= hi[0] else "misses"
        undefined = "" if e.defined[0] else ", undefined"
        return (f"{_fmt(e.value[0])} [{_fmt(lo[0])}, {_fmt(hi[0])}] (error {_fmt(abs(e.value[0] - truth[0]))}, "
                f"{covered} the truth{undefined})")

    return (f"{est.names[0]} with {est.n_labels} labels: {design} {summary(est)}; "
            f"passive sampling {summary(passive)}")


def simulation_table(result: SimulationResult) -> Table:
    """One row per checkpoint (and component, for vector measures)."""
    from rich.table import Table
    from rich.text import Text

    truth = np.atleast_1d(result.true_value)
    design = result.design if result.design == result.design_resolved else \
        f"{result.design} ({result.design_resolved})"
    table = Table(
        title=Text(f"{result.measure} on {result.pool} ({result.n_items} items), design {design}, "
                   f"{result.repeats} repeats"),
        caption=Text("true value " + ", ".join(f"{n} {_fmt(t)}" for n, t in zip(result.names, truth))
                     + f"; {result.seconds_per_run:.2f} s per run; {result.level:.0%} intervals"),
    )
    vector = len(result.names) > 1
    headers = (["labels"] + (["component"] if vector else [])
               + ["mse", "bias", "undefined", "coverage", "mean width"])
    for header in headers:
        table.add_column(header, justify="left" if header == "component" else "right")
    for row in result.checkpoint_rows():
        for c, name in enumerate(result.names):
            pick = (lambda v, c=c: float(np.atleast_1d(v)[c]))
            table.add_row(
                str(row["labels"]), *([Text(name)] if vector else []),
                _fmt(pick(row["mse"]), ".3g"), _fmt(pick(row["bias"]), "+.4f"),
                _fmt(pick(row["undefined_fraction"]), ".3f"), _fmt(pick(row["coverage"]), ".3f"),
                _fmt(pick(row["mean_width"]), ".4f"),
            )
    return table
