"""Progress bars that stay out of the way of the timings.

rich redraws from a background thread by default; while a native call has
released the GIL that thread can take it and delay the timed call's return,
which shows up in the p99. These bars redraw only from the caller's thread,
between calls, at most ten times a second.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

REFRESH_S = 0.1
"""Least time between two redraws."""


class Bars:
    """A set of progress bars, redrawn on demand from the calling thread.

    Example:
        >>> import io
        >>> with Bars(Console(file=io.StringIO())) as bars:
        ...     step = bars.add("build", total=2)
        ...     step(); step()
    """

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            auto_refresh=False,
        )
        self._drawn = 0.0

    def __enter__(self) -> Bars:
        self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._progress.stop()

    def add(self, description: str, total: int) -> Callable[[], None]:
        """Add a bar; return the function that advances it by one step."""
        task = self._progress.add_task(description, total=total)
        self._progress.refresh()

        def step() -> None:
            self._advance(task)

        return step

    def _advance(self, task: TaskID) -> None:
        """Advance ``task`` by one and redraw if the last redraw is old enough."""
        self._progress.advance(task)
        now = time.monotonic()
        if now - self._drawn >= REFRESH_S:
            self._drawn = now
            self._progress.refresh()

    def finish(self, description: str) -> None:
        """Mark every bar with ``description`` complete and redraw."""
        for task in self._progress.tasks:
            if task.description == description and task.total is not None:
                self._progress.update(task.id, completed=task.total)
        self._progress.refresh()
