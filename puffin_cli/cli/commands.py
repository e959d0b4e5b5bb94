"""The command table: each command's name, its one-line summary (so that ``puffin --help``
imports no command module; tests/test_cli_grammar.py checks them against the commands) and the
click command itself, imported only when it runs."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    import click

SUMMARIES = {
    "inspect": "Show a Puffin file's footer, blobs and decoded blob contents.",
    "dump-blob": "One blob's bytes, hex, DV positions, sketch description or JSON.",
    "validate": "Check Puffin files against the spec and report every finding.",
    "table": "Show and cross-check the Puffin files of Iceberg tables.",
    "repair": "Repair what `puffin table` finds, in one commit.",
    "write": "Write a Puffin file: Theta sketches, deletion vectors, raw blobs.",
    "diff": "What changed between two snapshots, or two Puffin files.",
    "stats": "Table statistics: small tables in this process, others on Spark.",
    "scan": "Validate every Puffin file of a warehouse, in parallel on Spark.",
}


def command(name: str) -> click.Command | None:
    """The command called ``name`` (its module imported now), or ``None``."""
    if name == "inspect":
        from puffin_cli.cli.inspect import inspect

        return inspect
    if name == "dump-blob":
        from puffin_cli.cli.dump_blob import dump_blob

        return dump_blob
    if name == "validate":
        from puffin_cli.cli.validate import validate

        return validate
    if name == "table":
        from puffin_cli.cli.table import table

        return table
    if name == "repair":
        from puffin_cli.cli.repair import repair

        return repair
    if name == "write":
        from puffin_cli.cli.write import write

        return write
    if name == "diff":
        from puffin_cli.cli.diff import diff

        return diff
    if name == "stats":
        from puffin_cli.cli.stats import stats

        return stats
    if name == "scan":
        from puffin_cli.cli.scan import scan

        return scan
    return None
