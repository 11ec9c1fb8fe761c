"""A rich progress bar that is a no-op when not wanted."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(show: bool, total: int, label: str, done: int = 0) -> Iterator[Callable[[int], None]]:
    """Yield ``update(completed)``; draws a bar on standard error when ``show`` is true."""
    if not show:
        yield lambda completed: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True)) as bar:
        task = bar.add_task(label, total=total, completed=done)
        yield lambda completed: bar.update(task, completed=completed)
