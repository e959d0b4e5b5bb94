"""The rich consoles every human renderer uses: no colour or escape codes when the stream is
not a terminal or ``NO_COLOR`` is set; 80 columns when the width cannot be known."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from rich.console import Console


def console(stream: TextIO | None = None, *, stderr: bool = False) -> Console:
    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = hasattr(target, "isatty") and target.isatty()
    plain = not is_tty or "NO_COLOR" in os.environ
    return Console(
        file=target,
        no_color=plain,
        color_system=None if plain else "auto",
        force_terminal=False if plain else None,
        highlight=False,
        emoji=False,
        width=None if is_tty else 80,
        soft_wrap=False,
    )
