"""``puffin diff``: what two Puffin files say differently."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit
from puffin_cli.cli.options import (
    DecimalInt,
    catalog_option,
    io_option,
    json_option,
    max_blob_size_option,
    relocate_option,
)
from puffin_cli.format.spec import DEFAULT_LIMIT

if TYPE_CHECKING:
    from puffin_cli.storage import FileIO

_METADATA_SUFFIXES = (".metadata.json", ".metadata.json.gz")


@click.command("diff", cls=Command)
@click.argument("files", nargs=-1, metavar="TABLE | A B")
@click.option("--from", "from_ref", default=None, metavar="REF",
              help="TABLE: the snapshot to compare from: a snapshot ID, a branch or tag name, "
                   "or an ISO 8601 time (UTC unless it has an offset). Default: the parent "
                   "of the --to snapshot.")
@click.option("--to", "to_ref", default=None, metavar="REF",
              help="TABLE: the snapshot to compare to (as --from). Default: the current "
                   "snapshot.")
@catalog_option
@relocate_option
@click.option("--limit", type=DecimalInt(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Ranges of positions shown per deletion vector for those only in A and "
                   "only in B; for a TABLE, data files whose deletion vectors changed and "
                   "partitions whose partition statistics changed.")
@json_option
@max_blob_size_option
@io_option
@click.pass_context
def diff(ctx: click.Context, files: tuple[str, ...], from_ref: str | None, to_ref: str | None,
         catalog: str | None, relocate: list[tuple[str, str]], limit: int, as_json: bool,
         max_blob_size: int) -> None:
    """What changed between two snapshots, or two Puffin files.

    With one TABLE (a table directory, a *.metadata.json file, or with --catalog a
    NAMESPACE.TABLE): from the --from snapshot to the --to snapshot (default: the current
    snapshot's parent to the current snapshot), from the metadata and manifests: live
    data files and rows added and removed; deletion vectors added, grown, replaced and removed
    (positions per data file) and the rows they delete; per engine (Spark, Trino) the
    statistics file each end uses (current, stale: an ancestor's, or missing) and per column
    its NDV and the change; the partition statistics file of each end and, when both have
    one, the partitions whose rows or files changed.

    With two Puffin files A B: blobs are matched by type, fields and referenced data file, not
    by index. For each pair: the blob metadata (snapshot ID, sequence number, codec, properties)
    and the content: Theta sketches by NDV, theta, retained entries and their hashes (equal
    sketches in other bytes are the same), deletion vectors by their positions (those only in A
    and only in B, counted, the first ranges shown). File properties and footer compression are
    compared too; offsets, lengths and sizes are shown, never a difference. Exit 0 when the
    files say the same, 1 when they differ (as cmp and diff), 2 on a usage error; for a TABLE, 0
    when both snapshots have the same live files and statistics.

    \b
    Examples:
      puffin diff warehouse/db/orders
      puffin diff --from 2057551240464674718 --to main warehouse/db/orders
      puffin diff --from 2026-12-01T00:00:00 --catalog prod sales.orders
      puffin diff ours.puffin java.puffin
      puffin diff --json --limit 5 a.puffin s3://bucket/t/data/b.puffin
    """
    from puffin_cli.storage import default_io

    fileio = default_io()
    table_options = [name for name, given in (("--from", from_ref), ("--to", to_ref),
                                              ("--catalog", catalog), ("--relocate", relocate))
                     if given]
    if len(files) == 1:
        if catalog is None and not _is_table(files[0], fileio):
            raise click.UsageError(f"{files[0]} is a file, not a table (a directory or a "
                                   "*.metadata.json file): give two Puffin files A B to "
                                   "compare files")
        _diff_table(ctx, files[0], from_ref=from_ref, to_ref=to_ref, catalog=catalog,
                    relocate=relocate, limit=limit, as_json=as_json,
                    max_blob_size=max_blob_size, fileio=fileio)
    if len(files) != 2:
        raise click.UsageError(f"give one TABLE or two Puffin files A B (got {len(files)})")
    if table_options:
        raise click.UsageError(f"{', '.join(table_options)}: for one TABLE, not two Puffin "
                               "files")
    tables = [name for name in files if _is_table(name, fileio)]
    if tables:
        raise click.UsageError(f"{tables[0]} is a table, not a Puffin file: give one TABLE "
                               "(with --from/--to) or two Puffin files A B")
    from puffin_cli.analysis.puffin_diff import diff_files

    result = diff_files(files[0], files[1], fileio=fileio, limit=limit,
                        max_blob_size=max_blob_size)
    if as_json:
        emit(ctx, result)
    else:
        from puffin_cli.render.diff import render_human

        emit(ctx, result, render_human)
    sys.exit(EXIT_OK if result.same else EXIT_BAD_FILE)


def _is_table(name: str, fileio: FileIO) -> bool:
    """Whether ``name`` names a table rather than a Puffin file: a directory (or, in an
    object store, a prefix) or a table metadata file."""
    if name.rstrip("/").endswith(_METADATA_SUFFIXES):
        return True
    found = fileio.stat(name)
    return found is not None and found.kind == "dir"


def _diff_table(ctx: click.Context, name: str, *, from_ref: str | None, to_ref: str | None,
                catalog: str | None, relocate: list[tuple[str, str]], limit: int,
                as_json: bool, max_blob_size: int, fileio: FileIO) -> None:
    from puffin_cli.analysis.table.diff import diff_table
    from puffin_cli.analysis.table.loading import Table

    table = Table.load(name, fileio=fileio, relocate=relocate, catalog=catalog,
                       max_blob_size=max_blob_size)
    result = diff_table(table, name=name, from_ref=from_ref, to_ref=to_ref, limit=limit)
    if as_json:
        emit(ctx, result, document="diff table")
    else:
        from puffin_cli.render.table_diff import render_human

        emit(ctx, result, render_human)
    sys.exit(EXIT_OK if result.same else EXIT_BAD_FILE)
