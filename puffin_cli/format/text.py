"""Text as bytes, the one way for every output: UTF-8, and a character UTF-8 cannot hold (a
lone surrogate from a footer's ``\\ud800`` escape or a file name that is not UTF-8) written as
its backslash escape (``\\ud800``), never an error. Inside a JSON string that escape is the
JSON escape of the same character, so documents stay valid.

Standard output and standard error are set up once (:func:`escape_standard_streams`, by
``cli/main.py``); a binary output (``-o FILE``, ``sys.stdout.buffer``) gets text through
:func:`encode` or :func:`text_on`; a count and its noun, :func:`plural`, for every layer's
messages. Only the standard library here: the entry point imports it before anything else.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import IO, TextIO

ENCODING = "utf-8"
ERRORS = "backslashreplace"


def encode(text: str) -> bytes:
    return text.encode(ENCODING, ERRORS)


@contextmanager
def text_on(out: IO[bytes]) -> Iterator[TextIO]:
    """A text stream over the binary ``out`` (left open), everything written through at once."""
    text = io.TextIOWrapper(out, encoding=ENCODING, errors=ERRORS, newline="\n",
                            write_through=True)
    try:
        yield text
    finally:
        text.flush()
        text.detach()


def escape_standard_streams() -> None:
    """Standard output and error write like :func:`encode` (their encoding kept)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors=ERRORS)


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many``: an irregular plural), the count with thousands
    separators."""
    return f"{count:,} {noun if count == 1 else many or noun + 's'}"
