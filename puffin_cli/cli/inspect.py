"""``puffin inspect``: what a Puffin file holds."""

from __future__ import annotations

import click

from puffin_cli.cli.grammar import Command, renamed_option, settings
from puffin_cli.cli.options import (
    DecimalInt,
    catalog_option,
    io_option,
    json_option,
    max_blob_size_option,
    path_option,
)
from puffin_cli.format.spec import DEFAULT_LIMIT


@click.command("inspect", cls=Command, renamed={"--metadata": renamed_option("--table")})
@click.argument("files", nargs=-1, metavar="FILE...")
@path_option
@json_option
@click.option("--no-decode", is_flag=True,
              help="Show the footer metadata only; read no blob bytes.")
@click.option("--brief", is_flag=True,
              help="One line per blob (index, type, fields, NDV or a deletion vector's "
                   "positions and data file), paths whole.")
@click.option("--limit", type=DecimalInt(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Deletion-vector position ranges shown per blob, and rows shown per "
                   "Paimon BLOB file.")
@click.option("--footer-size", type=DecimalInt(min=0), default=None, metavar="N",
              help="The footer's size in bytes (Iceberg's file-footer-size-in-bytes): read "
                   "exactly the footer.")
@click.option("--table", "table", default=None, metavar="PATH",
              help="An Iceberg table directory or its *.metadata.json file: show column names "
                   "next to field IDs, from the schema of each blob's snapshot.")
@catalog_option
@max_blob_size_option
@io_option
@click.pass_context
def inspect(ctx: click.Context, files: tuple[str, ...], path_options: tuple[str, ...],
            as_json: bool, no_decode: bool, brief: bool, limit: int, footer_size: int | None,
            table: str | None, catalog: str | None, max_blob_size: int) -> None:
    """Show a Puffin file's footer, blobs and decoded blob contents.

    Theta sketches show their NDV estimate and bounds; deletion vectors their cardinality,
    data file and first positions as ranges. A blob property that disagrees with the blob's
    bytes (ndv, cardinality) is flagged. With --table, field IDs show their column names;
    with --catalog, --table names a table NAMESPACE.TABLE of that catalog. Exit 1 when a file,
    any blob or the table cannot be read.

    \b
    Examples:
      puffin inspect stats.puffin
      puffin inspect --json --no-decode a.puffin b.puffin
      puffin inspect --brief deletion-vectors.puffin
      puffin inspect --path dv.puffin --limit 100
      puffin inspect --footer-size 632 stats.puffin
      puffin inspect --table warehouse/db/orders warehouse/db/orders/metadata/1-abc.stats
      puffin inspect --catalog prod --table sales.orders s3://bucket/sales/orders/metadata/1-a.stats
    """
    from puffin_cli.cli.quick import run_inspect

    locations = list(files) + list(path_options)
    if not locations:
        raise click.UsageError("no file given: name one or more Puffin files (or --path FILE)")
    if as_json and brief:
        raise click.UsageError("--json and --brief exclude each other")
    if footer_size is not None and len(locations) > 1:
        raise click.UsageError("--footer-size describes one file; give exactly one")
    if catalog is not None and table is None:
        raise click.UsageError("--catalog names the catalog of --table NAMESPACE.TABLE; "
                               "give --table too")
    code = run_inspect(locations, as_json=as_json, decode=not no_decode, limit=limit,
                       max_blob_size=max_blob_size, footer_size=footer_size, table=table,
                       catalog=catalog, color=settings(ctx).color, brief=brief)
    if code:
        ctx.exit(code)
