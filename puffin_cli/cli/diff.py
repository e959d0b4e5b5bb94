"""``puffin diff``: what two Puffin files say differently."""

from __future__ import annotations

import sys

import click

from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit
from puffin_cli.cli.options import DecimalInt, io_option, json_option, max_blob_size_option
from puffin_cli.format.spec import DEFAULT_LIMIT


@click.command("diff", cls=Command)
@click.argument("files", nargs=-1, metavar="A B")
@click.option("--limit", type=DecimalInt(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Ranges of positions shown per deletion vector for those only in A and "
                   "only in B.")
@json_option
@max_blob_size_option
@io_option
@click.pass_context
def diff(ctx: click.Context, files: tuple[str, ...], limit: int, as_json: bool,
         max_blob_size: int) -> None:
    """What two Puffin files say differently, blob by blob.

    Blobs are matched by type, fields and referenced data file, not by index. For each pair:
    the blob metadata (snapshot ID, sequence number, codec, properties) and the content: Theta
    sketches by NDV, theta, retained entries and their hashes (equal sketches in other bytes
    are the same), deletion vectors by their positions (those only in A and only in B, counted,
    the first ranges shown). File properties and footer compression are compared too; offsets,
    lengths and sizes are shown, never a difference. Exit 0 when the files say the same, 1 when
    they differ (as cmp and diff), 2 on a usage error.

    \b
    Examples:
      puffin diff ours.puffin java.puffin
      puffin diff --json --limit 5 a.puffin s3://bucket/t/data/b.puffin
    """
    from puffin_cli.analysis.puffin_diff import diff_files
    from puffin_cli.storage import default_io

    if len(files) != 2:
        raise click.UsageError(f"give two Puffin files A B (got {len(files)})")
    result = diff_files(files[0], files[1], fileio=default_io(), limit=limit,
                        max_blob_size=max_blob_size)
    if as_json:
        emit(ctx, result)
    else:
        from puffin_cli.render.diff import render_human

        emit(ctx, result, render_human)
    sys.exit(EXIT_OK if result.same else EXIT_BAD_FILE)
