"""``puffin table``: statistics and deletion vectors in the context of their Iceberg table."""

from __future__ import annotations

import sys

import click

from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit
from puffin_cli.cli.options import (
    DecimalInt,
    catalog_option,
    force_option,
    github_option,
    io_option,
    json_option,
    max_blob_size_option,
    quiet_option,
    relocate_option,
    snapshot_option,
    strict_option,
)
from puffin_cli.format.text import plural


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
@click.option("--limit", type=DecimalInt(min=0), default=None, metavar="N",
              help="List at most N deletion vectors per snapshot (default: all of one "
                   "snapshot; with --all-snapshots none: the evolution chart and totals).")
@strict_option
@json_option
@click.option("--jsonl", "as_jsonl", is_flag=True,
              help="Stream JSON lines as the snapshots are read: a record per table, "
                   "snapshot, deletion vector change and finding (docs/table.md).")
@click.option("--html", "html_file", default=None, metavar="FILE",
              help="Also write the snapshots as one self-contained HTML page of charts "
                   "(rows, files, deletes, NDV per column, statistics freshness, findings) "
                   "to FILE, a path or an object; nothing in it is fetched when opened.")
@force_option
@github_option
@quiet_option
@max_blob_size_option
@io_option
@click.pass_context
def table(ctx: click.Context, path: str, snapshot_id: int | None, all_snapshots: bool,
          relocate: list[tuple[str, str]], catalog: str | None, no_validate: bool,
          limit: int | None, strict: bool, as_json: bool, as_jsonl: bool,
          html_file: str | None, force: bool, github: bool, quiet: bool,
          max_blob_size: int) -> None:
    """Show and cross-check the Puffin files of Iceberg tables.

    PATH is a table directory, a *.metadata.json file, or a warehouse directory (every table
    under it); with --catalog, a table identifier NAMESPACE.TABLE of that catalog. For the
    current snapshot (or --snapshot, --all-snapshots): the statistics files with column names
    and NDVs, which file Spark and Trino use, partition statistics, and the deletion vectors
    of the snapshot's delete manifests. Everything that points at a Puffin
    file is checked against the file. Exit 1 when a check finds an error (with --strict: or
    a warning), as `puffin validate`; --github writes the findings as GitHub Actions
    annotations, -q nothing but the exit status.

    \b
    Examples:
      puffin table warehouse/db/orders
      puffin table warehouse/db/orders/metadata/v7.metadata.json --snapshot 2057551240464674718
      puffin table --all-snapshots --limit 5 warehouse/db/orders
      puffin table --jsonl --all-snapshots warehouse
      puffin table --relocate s3://bucket/warehouse=/data/warehouse /data/warehouse/db/orders
      puffin table --catalog prod sales.orders
      puffin table --strict --github warehouse
      puffin table --all-snapshots --html report.html warehouse/db/orders
    """
    from puffin_cli.analysis.table.walk import analyze_path, load_tables
    from puffin_cli.render.progress import ProgressDisplay
    from puffin_cli.storage import default_io

    if snapshot_id is not None and all_snapshots:
        raise click.UsageError("--snapshot and --all-snapshots exclude each other")
    chosen = [name for name, on in (("--json", as_json), ("--jsonl", as_jsonl),
                                    ("--github", github)) if on]
    if html_file is not None and as_jsonl:
        chosen.append("--html")
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} exclude each other")
    if limit is None and all_snapshots:
        limit = 0
    fileio = default_io()
    with ProgressDisplay(not quiet) as display:
        display.phase("reading snapshots")
        if as_jsonl:
            from puffin_cli.render.table import write_jsonl

            tables = load_tables(path, fileio=fileio, catalog=catalog, relocate=relocate,
                                 max_blob_size=max_blob_size)
            walks = tables.walks(snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                                 validate=not no_validate, limit=0, max_blob_size=max_blob_size)
            failed = write_jsonl(walks, sys.stdout, display.advance, strict=strict,
                                 warehouse=tables.warehouse)
        else:
            report = analyze_path(path, snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                                  relocate=relocate, validate=not no_validate, limit=limit,
                                  progress=display.advance, catalog=catalog, fileio=fileio,
                                  max_blob_size=max_blob_size)
            failed = report.failed(strict)
    if html_file is not None:
        from puffin_cli.render.html import render_page

        page = render_page(report).encode("utf-8")
        with fileio.new_output(html_file).create(overwrite=force) as out:
            out.write(page)
        if not as_json and not quiet:
            snapshots = sum(len(t.snapshots) for t in report.tables)
            click.echo(f"wrote {html_file}: {len(page):,} bytes, {plural(snapshots, 'snapshot')}"
                       f" of {plural(len(report.tables), 'table')}")
    if as_json and not as_jsonl:
        emit(ctx, report)
    elif not as_jsonl and not quiet and html_file is None:
        from puffin_cli.render import table as views

        emit(ctx, report, views.github if github else views.render_human)
    sys.exit(EXIT_BAD_FILE if failed else EXIT_OK)
