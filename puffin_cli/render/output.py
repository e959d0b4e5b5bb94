"""The one way out of every command: its result object, rendered either as the command's JSON
document (render/jsonout.py, docs/json.md) or by the command's human view.

A human view is a function of the result and a rich console (render/console.py), named as
``"module:function"`` so that neither it nor rich is imported for a JSON document; it never
writes JSON and the JSON path never draws: a command picks one, here."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

from puffin_cli.render import jsonout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from rich.console import Console

    HumanView = Callable[[Any, Console], None]



def emit(command: str, result: Any, human: str | None, *, as_json: bool,
         color: bool | None = None, out: TextIO | None = None) -> None:
    """Write ``result`` to ``out`` (standard output): as ``command``'s JSON document (indented
    on a terminal, one line otherwise), or drawn by the human view ``human``
    (``"module:function"``; None: JSON is the only form)."""
    stream = sys.stdout if out is None else out
    if as_json:
        jsonout.write(jsonout.document(command, result), stream, indent=is_terminal(stream))
        return
    if human is None:
        raise ValueError(f"{command} has no human view; its result is only a JSON document")
    from puffin_cli.render.console import console

    module, _, name = human.partition(":")
    view: HumanView = getattr(importlib.import_module(module), name)
    view(result, console(stream, color=color))


def is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())
