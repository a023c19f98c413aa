"""The demo's progress display: one line per stage, with its name, a bar or a spinner, and its time.

Each stage of the tour that can take more than a second runs inside :meth:`Stages.stage`:
while it runs, a transient line shows its name, a bar (when the stage knows how much work
it has, as the import does) or a pulsing bar, and the time elapsed; when it ends, a dim
line says how long it took. Nothing here knows what a stage does.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

__all__ = ["Stages"]


class Stages:
    """Runs named stages under a live progress line on ``console``; remembers how long each took.

    Example:
        >>> import io
        >>> from rich.console import Console
        >>> stages = Stages(Console(file=io.StringIO()))
        >>> with stages.stage("counting", total=3) as advance:
        ...     for done in range(1, 4):
        ...         advance(done)
        >>> [name for name, _ in stages.timings]
        ['counting']
    """

    def __init__(self, console: Console) -> None:
        self._out = console
        #: ``(name, seconds)`` of each finished stage, in order.
        self.timings: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str, *, total: int | None = None) -> Iterator[Callable[[int], None]]:
        """Shows ``name`` while the body runs; yields ``advance(done)`` for a stage of ``total`` steps."""
        columns = (SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[done]}"), TimeElapsedColumn())
        started = time.monotonic()
        with Progress(*columns, console=self._out, transient=True) as bar:
            task = bar.add_task(name, total=total, done="")

            def advance(done: int) -> None:
                bar.update(task, completed=done, done=f"{done:,}/{total:,}" if total else "")

            yield advance
        took = time.monotonic() - started
        self.timings.append((name, took))
        self._out.print(f"[dim]✓ {name} ({took:.1f} s)[/]", highlight=False)
