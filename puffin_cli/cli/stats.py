"""``puffin stats compute``: NDV statistics of an Iceberg table, computed with Spark."""

from __future__ import annotations

import click

from puffin_cli.cli.grammar import Group, emit, renamed_flag, settings
from puffin_cli.cli.options import (
    catalog_option,
    io_option,
    json_option,
    quiet_option,
    relocate_option,
    snapshot_option,
    spark_conf_option,
    uuid_hash_option,
)


@click.group("stats", cls=Group, short_help="Table statistics computed with Apache Spark.")
def stats() -> None:
    """Table statistics computed with Apache Spark (needs the `spark` extra: pyspark 4.1+)."""


def _columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise click.BadParameter("give column names separated by commas", param_hint="--columns")
    return names


@stats.command("compute", renamed={"--uuid-as-bytes": renamed_flag("--uuid-hash", "bytes")})
@click.argument("table", metavar="TABLE")
@click.option("--columns", metavar="A,B", default=None,
              help="Columns to sketch (default: every top-level column of primitive type).")
@snapshot_option("Snapshot to compute statistics for (default: the current one).")
@click.option("--commit", is_flag=True,
              help="Register the statistics file in a new table metadata version (through "
                   "the catalog with --catalog, else the file-system table protocol), "
                   "replacing older statistics of that snapshot.")
@click.option("--full", is_flag=True,
              help="Read the whole snapshot, even when its statistics are fresh or an "
                   "ancestor's sketches could be extended (the default: incremental).")
@click.option("--in-process-rows", type=click.IntRange(min=0), default=None, metavar="N",
              help="Sketch an increment of at most N new rows in this process, without "
                   "Spark (default 1000000; 0: always Spark).")
@click.option("--master", default=None, metavar="URL",
              help="Spark master (default local[*]; ignored under spark-submit).")
@uuid_hash_option
@spark_conf_option
@relocate_option
@catalog_option
@quiet_option
@json_option
@io_option
@click.pass_context
def compute(ctx: click.Context, table: str, columns: str | None, snapshot_id: int | None,
            commit: bool, full: bool, in_process_rows: int | None, master: str | None,
            uuid_hash: str, spark_conf: dict[str, str],
            relocate: list[tuple[str, str]], catalog: str | None, quiet: bool,
            as_json: bool) -> None:
    """Compute Theta-sketch NDV statistics of TABLE, as Iceberg's compute_table_stats does.

    TABLE is a table directory or a *.metadata.json file; with --catalog, a table identifier
    NAMESPACE.TABLE of that catalog (and --commit commits through the catalog). Reads the
    snapshot's live rows (position delete files, deletion vectors and equality deletes
    applied) with Spark, matching columns by field ID, and writes
    TABLE/metadata/<snapshot-id>-<uuid>.stats: one zstd-compressed
    apache-datasketches-theta-v1 blob per column with its `ndv`.

    Incremental by default: when an ancestor snapshot has statistics and only appends
    followed (Iceberg's tasks unchanged), only the new data files are sketched and unioned
    with its sketches, which gives the same bytes as a full compute; a snapshot whose
    statistics are already there is left as it is. --full reads everything.

    \b
    Examples:
      puffin stats compute warehouse/db/orders
      puffin stats compute warehouse/db/orders --columns id,customer --commit
      puffin stats compute warehouse/db/orders --master spark://host:7077 --json
      puffin stats compute --catalog prod sales.orders --commit
    """
    from puffin_cli.spark.stats import compute_table_stats
    from puffin_cli.storage import default_io

    debug = settings(ctx).debug
    from puffin_cli.render.progress import ProgressDisplay

    with ProgressDisplay(not quiet) as display:
        result = compute_table_stats(
            table, catalog=catalog, columns=_columns(columns), snapshot_id=snapshot_id,
            master=master,
            spark_conf=spark_conf, uuid_as_string=uuid_hash == "text", commit=commit,
            relocate=relocate, quiet_spark=not debug, on_phase=display.phase,
            progress=display.advance, fileio=default_io(), full=full,
            **({} if in_process_rows is None else {"in_process_rows": in_process_rows}))
    if as_json:
        emit(ctx, result)
    elif not quiet:
        from puffin_cli.render.stats import stats_view

        emit(ctx, result, stats_view)
