"""``puffin table``: statistics and deletion vectors in the context of their Iceberg table."""

from __future__ import annotations

import click

from puffin_cli.cli.grammar import Command, emit
from puffin_cli.cli.main import EXIT_BAD_FILE
from puffin_cli.cli.options import (
    catalog_option,
    io_option,
    json_option,
    relocate_option,
    snapshot_option,
)


@click.command("table", cls=Command)
@click.argument("path", metavar="PATH")
@snapshot_option("Show this snapshot instead of the current one.")
@click.option("--all-snapshots", is_flag=True,
              help="Show every snapshot (reads every snapshot's manifests) and look for "
                   "orphan Puffin files anywhere under the table.")
@relocate_option
@catalog_option
@click.option("--no-validate", is_flag=True,
              help="Skip validating each Puffin file itself (table cross-checks only).")
@json_option
@io_option
@click.pass_context
def table(ctx: click.Context, path: str, snapshot_id: int | None, all_snapshots: bool,
          relocate: list[tuple[str, str]], catalog: str | None, no_validate: bool,
          as_json: bool) -> None:
    """Show and cross-check the Puffin files of Iceberg tables.

    PATH is a table directory, a *.metadata.json file, or a warehouse directory (every table
    under it); with --catalog, a table identifier NAMESPACE.TABLE of that catalog. For the
    current snapshot (or --snapshot, --all-snapshots): the statistics files with column names
    and NDVs, which file Spark and Trino use, partition statistics, and the deletion vectors
    of the snapshot's delete manifests. Everything that points at a Puffin
    file is checked against the file. Exit 1 when a check finds an error.

    \b
    Examples:
      puffin table warehouse/db/orders
      puffin table warehouse/db/orders/metadata/v7.metadata.json --snapshot 2057551240464674718
      puffin table --json --all-snapshots warehouse
      puffin table --relocate s3://bucket/warehouse=/data/warehouse /data/warehouse/db/orders
      puffin table --catalog prod sales.orders
    """
    from puffin_cli.analysis.table.checks import analyze_path

    if snapshot_id is not None and all_snapshots:
        raise click.UsageError("--snapshot and --all-snapshots exclude each other")
    report = analyze_path(path, snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                          relocate=relocate, validate=not no_validate, catalog=catalog)
    emit(ctx, report, "puffin_cli.render.table:render_human", as_json=as_json)
    if not report.ok:
        ctx.exit(EXIT_BAD_FILE)
