"""``puffin scan``: validate every Puffin file of a warehouse, in parallel on Spark."""

from __future__ import annotations

import sys
from dataclasses import replace

import click

from puffin_cli.analysis.profiles import PROFILES
from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit, renamed_option, settings
from puffin_cli.cli.options import (
    catalog_option,
    force_option,
    github_option,
    io_option,
    json_option,
    max_blob_size_option,
    output_file_option,
    quiet_option,
    spark_conf_option,
    strict_option,
)
from puffin_cli.errors import PuffinError


def _listed(files_from: str) -> list[str]:
    """The locations listed in a file (``-``: standard input), read as a stream, bounded."""
    from puffin_cli.storage import default_io, read_list

    try:
        if files_from == "-":
            return read_list(sys.stdin.buffer, "standard input")
        return default_io().read_list(files_from)
    except PuffinError as exc:
        raise exc.for_option("--files-from") from None


@click.command("scan", cls=Command, renamed={"--format": renamed_option("--file-format")},
               short_help="Validate every Puffin file of a warehouse, in parallel on Spark.")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--files-from", metavar="FILE",
              help="Also scan the files listed in FILE (one location per line; '-': "
                   "standard input; at most 1,000,000 lines of 64 KiB).")
@click.option("--spark", "use_spark", is_flag=True,
              help="Validate on Spark executors (else in this process).")
@click.option("--master", default=None, metavar="URL",
              help="Spark master (default local[*]; ignored under spark-submit).")
@output_file_option("every file's findings (one record per file)")
@force_option
@click.option("--file-format", "output_format", type=click.Choice(["jsonl", "parquet"]),
              default=None, help="Format of the --output file (default: from its extension, "
                                 ".parquet or else JSON lines).")
@click.option("--profile", type=click.Choice(PROFILES), default="spec", show_default=True,
              help="Also check what this engine rejects (as `puffin validate`).")
@spark_conf_option
@catalog_option
@max_blob_size_option
@strict_option
@json_option
@github_option
@quiet_option
@io_option
@click.pass_context
def scan(ctx: click.Context, paths: tuple[str, ...], files_from: str | None, use_spark: bool,
         master: str | None, output: str | None, force: bool, output_format: str | None,
         profile: str, spark_conf: dict[str, str], catalog: str | None, max_blob_size: int,
         strict: bool, as_json: bool, github: bool, quiet: bool) -> None:
    """Validate every Puffin file under PATH (directories are searched recursively, as
    `puffin validate` does) with the checks of `puffin validate`.

    With --catalog NAME, each PATH is a namespace of that catalog (none: the whole catalog):
    scans every Puffin file its tables reference (statistics files, deletion vectors of every
    snapshot) and the orphans, Puffin files under a table nobody references (listed).

    Prints a summary (the files that failed, the most frequent finding codes, then files,
    errors and warnings); --output writes one record per file (its report as `puffin validate
    --json` gives it) as JSON lines or Parquet. Exit 1 when any file has an error (with
    --strict: or a warning), as `puffin validate`.

    \b
    Examples:
      puffin scan /data/warehouse --spark
      puffin scan --spark --master spark://host:7077 --files-from puffin-files.txt \\
          --output findings.parquet
      puffin scan --catalog prod sales --spark
    """
    from puffin_cli.cli.validate import expand
    from puffin_cli.render.progress import ProgressDisplay
    from puffin_cli.spark.scan import scan as run_scan
    from puffin_cli.storage import default_io

    if as_json and github:
        raise click.UsageError("--json and --github exclude each other")
    tables = None
    if catalog is not None:
        from puffin_cli.analysis.scan import catalog_puffin_files

        if files_from:
            raise click.UsageError("--catalog scans the catalog's tables; --files-from "
                                   "names files, give one or the other")
        tables = catalog_puffin_files(catalog, paths, default_io())
        found = {path: t.fileio for t in tables for path in (*t.referenced, *t.orphans)}
        files, fileios = list(found), list(found.values())
    else:
        fileios = None
        names = list(paths) + (_listed(files_from) if files_from else [])
        if not names:
            raise click.UsageError("give a PATH or --files-from FILE")
        files = expand(names)
        if not files:
            raise click.UsageError(f"no Puffin files found in {', '.join(paths) or files_from}")
    if output_format is None and output is not None:
        output_format = "parquet" if output.endswith(".parquet") else "jsonl"
    debug = settings(ctx).debug
    spark = use_spark and bool(files)
    with ProgressDisplay(not quiet) as display:
        display.phase("validating on Spark (tasks)" if spark else "validating")
        result = run_scan(files, master=master, profile=profile, max_blob_size=max_blob_size,
                          output=output, output_format=output_format or "jsonl", force=force,
                          use_spark=spark, spark_conf=spark_conf, quiet_spark=not debug,
                          fileio=default_io(), fileios=fileios, strict=strict,
                          progress=display.advance)
    if tables is not None:
        result = replace(result, catalog=catalog, tables=len(tables),
                         orphans=tuple(path for t in tables for path in t.orphans),
                         unreadable_tables=tuple(f"{t.identifier}: {t.error}" for t in tables
                                                 if t.error is not None))
    if as_json:
        emit(ctx, result)
    elif not quiet:
        from puffin_cli.render import stats as views

        emit(ctx, result, views.scan_github if github else views.scan_view)
    sys.exit(EXIT_BAD_FILE if result.failed else EXIT_OK)
