"""The rich consoles every human renderer uses.

Width: ``COLUMNS`` when set, else the terminal's; text for a pipe or a file is not fitted to
any width (:data:`UNFITTED`: one fact per line, whole, for grep and scripts). Colour: the
``--color`` / ``--no-color`` choice when given; else none when ``NO_COLOR`` is set (to anything
but empty), colour when ``FORCE_COLOR`` is, else colour only on a terminal. Live displays
(render/progress.py) only on a terminal.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from typing import TextIO

from rich.console import Console

from puffin_cli.render.jsonout import is_terminal

# The width of drawings (a bar, a density strip) in lines that are not fitted.
DEFAULT_WIDTH = 80
# The width of a console for a pipe or a file: no line is ever that long, so none folds.
UNFITTED = 1 << 24


def _env(name: str) -> bool:
    return os.environ.get(name, "") != ""


def use_color(stream: TextIO, color: bool | None = None) -> bool:
    if color is not None:
        return color
    if _env("NO_COLOR"):
        return False
    if _env("FORCE_COLOR"):
        return True
    return is_terminal(stream)


def width(stream: TextIO) -> int:
    """``COLUMNS`` when set, else the terminal's width; :data:`UNFITTED` off a terminal."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isascii() and columns.isdigit() and 0 < len(columns) < 5 and int(columns) > 0:
        return int(columns)
    if is_terminal(stream):
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return UNFITTED


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """A reader that stopped early (``| head``): rich would exit 1 here; raise the error
        instead, for ``puffin_cli.cli.main`` to end quietly with 0."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def console(stream: TextIO | None = None, *, stderr: bool = False,
            color: bool | None = None) -> Console:
    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    colored = use_color(target, color)
    terminal = is_terminal(target)
    return _Console(
        file=target,
        no_color=not colored,
        color_system="auto" if colored else None,
        force_terminal=colored or terminal,
        force_interactive=None if terminal else False,  # rich: not on a dumb terminal
        highlight=False,
        emoji=False,
        width=width(target),
        soft_wrap=False,
    )
