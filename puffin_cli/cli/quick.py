"""``puffin inspect [--json] [--no-decode] FILE...``, the commonest invocation, without click.

Importing click costs more than the rest of a metadata-only ``inspect --json``, so
:func:`quick_inspect` runs these arguments itself; any other argument (an option it does not
know, ``--debug``, a file name starting with ``-``) leaves it to the click group, which parses
everything. Both run :func:`run_inspect`, so the output is the same (tests/test_cli_grammar.py).
"""

from __future__ import annotations

import os
import sys

from puffin_cli.format.spec import DEFAULT_LIMIT, DEFAULT_MAX_BLOB_SIZE

# The flags the quick path knows: all default to off.
_FLAGS = {"--json", "--no-decode"}


def run_inspect(locations: list[str], *, as_json: bool, decode: bool,
                limit: int = DEFAULT_LIMIT, max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                footer_size: int | None = None, table: str | None = None,
                catalog: str | None = None, color: bool | None = None,
                brief: bool = False) -> int:
    """Inspect ``locations``, hand the report to the renderer, name every failure on stderr;
    the exit status (1 when a file, a blob or the table could not be read)."""
    from puffin_cli.analysis.inspection import inspect_files
    from puffin_cli.render.output import emit
    from puffin_cli.storage import default_io

    loaded = None
    if table is not None:  # a table that cannot be read is no fault of the Puffin files
        from puffin_cli.analysis.table.loading import Table

        loaded = Table.load(table, fileio=default_io(), catalog=catalog)
    report = inspect_files(locations, decode=decode, limit=limit, max_blob_size=max_blob_size,
                           footer_size=footer_size, table=loaded, fileio=default_io())
    if as_json:
        emit("inspect", report)
    else:
        from puffin_cli.render.inspect import render_brief, render_human

        emit("inspect", report, render_brief if brief else render_human, color=color)
    sys.stdout.flush()
    for failure in report.failures():
        sys.stderr.write(f"puffin: error: {failure}{directory_hint(failure.path)}\n")
    return 0 if report.ok else 1


def directory_hint(location: str | None) -> str:
    """For a local directory given where a Puffin file is wanted, the command that reads it:
    ``table`` for a table directory, else ``validate`` (every Puffin file under it); else
    nothing."""
    import shlex

    from puffin_cli.errors import PuffinError
    from puffin_cli.storage import default_io, is_remote

    if location is None or is_remote(location):
        return ""
    try:
        info = default_io().stat(location)
    except PuffinError:
        return ""
    if info is None or info.kind != "dir":
        return ""
    from puffin_cli.analysis.table.metadata import is_table_dir

    if is_table_dir(location, default_io()):
        return f"; for a table directory, use: puffin table {shlex.quote(location)}"
    return f"; for the Puffin files under a directory, use: puffin validate {shlex.quote(location)}"


def quick_inspect(args: list[str]) -> int | None:
    """Run ``inspect`` when ``args`` are its flags --json / --no-decode and file names only
    (and ``PUFFIN_DEBUG`` is not set); ``None`` otherwise."""
    if len(args) < 2 or args[0] != "inspect" or os.environ.get("PUFFIN_DEBUG", "") not in ("", "0"):
        return None
    flags = {arg for arg in args[1:] if arg in _FLAGS}
    files = [arg for arg in args[1:] if arg not in _FLAGS]
    if not files or any(not name or name.startswith("-") for name in files):
        return None
    return run_inspect(files, as_json="--json" in flags, decode="--no-decode" not in flags)
