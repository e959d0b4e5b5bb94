"""The one way out of every command: its result object, rendered either as the command's JSON
document (render/jsonout.py, docs/json.md) or by the command's human view.

A human view is a function of the result and a rich console (render/console.py); a command
imports it only in the branch that draws, so that neither it nor rich is imported for a JSON
document. A view never writes JSON and the JSON path never draws: a command picks one, here."""

from __future__ import annotations

import sys
from collections.abc import Callable

from puffin_cli.render import jsonout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from rich.console import Console

    HumanView = Callable[[Any, Console], None]


def emit(command: str, result: Any, view: HumanView | None = None, *,
         color: bool | None = None, out: TextIO | None = None) -> None:
    """Write ``result`` to ``out`` (standard output): drawn by the human ``view``, or without
    one as ``command``'s JSON document (indented on a terminal, one line otherwise)."""
    stream = sys.stdout if out is None else out
    if view is None:
        jsonout.write(jsonout.document(command, result), stream, indent=jsonout.is_terminal(stream))
        return
    from puffin_cli.render.console import console

    view(result, console(stream, color=color))
