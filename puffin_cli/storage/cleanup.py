"""Temporary files of writes under way, to remove when a signal ends the process, wherever it
is stopped.

Writers register the temp file they create beside a target (:func:`track`) and forget it once
it is renamed or removed (:func:`untrack`). ``puffin_cli.cli.main`` removes what is still
registered when a signal ends the process, even when the main thread is blocked in C code
and cannot unwind.
"""

from __future__ import annotations

import _thread
import contextlib
import os

_lock = _thread.allocate_lock()
_temp_files: set[str] = set()


def track(path: str) -> None:
    with _lock:
        _temp_files.add(path)


def untrack(path: str) -> None:
    with _lock:
        _temp_files.discard(path)


def remove_tracked() -> None:
    """Remove every registered temp file (best effort: the process is ending)."""
    with _lock:
        paths = list(_temp_files)
        _temp_files.clear()
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)
