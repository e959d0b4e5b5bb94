"""The rich consoles every human renderer uses.

Width: ``COLUMNS`` when set, else the terminal's, else 80 columns. Colour: the ``--color`` /
``--no-color`` choice when given; else none when ``NO_COLOR`` is set (to anything but empty),
colour when ``FORCE_COLOR`` is, else colour only on a terminal.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from typing import TextIO

from rich.console import Console

DEFAULT_WIDTH = 80


def _env(name: str) -> bool:
    return os.environ.get(name, "") != ""


def use_color(stream: TextIO, color: bool | None = None) -> bool:
    if color is not None:
        return color
    if _env("NO_COLOR"):
        return False
    if _env("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


def width(stream: TextIO) -> int:
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isascii() and columns.isdigit() and 0 < len(columns) < 5 and int(columns) > 0:
        return int(columns)
    if hasattr(stream, "isatty") and stream.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


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
    return _Console(
        file=target,
        no_color=not colored,
        color_system="auto" if colored else None,
        force_terminal=colored,
        force_interactive=False,
        highlight=False,
        emoji=False,
        width=width(target),
        soft_wrap=False,
    )
