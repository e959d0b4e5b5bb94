"""A progress display on stderr for long commands: a status line and a bar, shown only when
stderr is a terminal (never in a pipe or a log; rich is not even imported then), removed when
done."""

from __future__ import annotations

import sys
from typing import Any


class ProgressDisplay:
    """``phase(text)`` names what is happening; ``advance(done, total)`` moves the bar;
    ``line(text)`` prints a line that stays, fitted to the terminal."""

    def __init__(self, enabled: bool = True) -> None:
        self.progress: Any = None
        if not enabled or not sys.stderr.isatty():
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from puffin_cli.render.console import console

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), console=console(stderr=True),
                                 transient=True)
        self.task = self.progress.add_task("starting", total=None)

    def phase(self, text: str) -> None:
        if self.progress is not None:
            self.progress.update(self.task, description=text, completed=0, total=None)

    def line(self, text: str) -> None:
        """A line that stays (one per finished table of a run), above the live status."""
        if self.progress is not None:
            self.progress.console.print(text, markup=False, highlight=False, soft_wrap=False,
                                        overflow="ellipsis", no_wrap=True)

    def advance(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=total or None)

    def __enter__(self) -> ProgressDisplay:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
