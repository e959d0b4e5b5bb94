"""``puffin repair``: plan the repairs of what ``puffin table`` finds, and with ``--apply``
commit them as one new metadata version."""

from __future__ import annotations

import sys
from typing import Any

import click

from puffin_cli.cli.exit_codes import EXIT_BAD_FILE, EXIT_OK
from puffin_cli.cli.grammar import Command, emit
from puffin_cli.cli.options import (
    catalog_option,
    io_option,
    json_option,
    max_blob_size_option,
    quiet_option,
    shown_value,
    snapshot_option,
)


class Age(click.ParamType[tuple[float, str], Any]):
    """An age such as ``3d``, ``12h``, ``30m`` or ``45s``: (seconds, as typed)."""

    name = "AGE"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> tuple[float, str]:
        if isinstance(value, tuple):
            return value
        from puffin_cli.analysis.repair.orphans import parse_age

        seconds = parse_age(str(value))
        if seconds is None:
            self.fail(f"{shown_value(value)} is not an age like 3d, 12h or 30m", param, ctx)
        return seconds, str(value).strip().lower()


@click.command("repair", cls=Command)
@click.argument("table", metavar="TABLE")
@catalog_option
@snapshot_option("Repair only what concerns this snapshot: its statistics entries, and its "
                 "deletion vectors when it is the current snapshot.")
@click.option("--apply", "apply", is_flag=True,
              help="Carry the plan out: one new metadata version (through the catalog with "
                   "--catalog, else the file-system table protocol).")
@click.option("--delete-orphans", is_flag=True,
              help="Also delete orphan Puffin and .stats files (referenced by no metadata) "
                   "older than --older-than, after the commit.")
@click.option("--older-than", type=Age(), default="3d", show_default=True, metavar="AGE",
              help="With --delete-orphans: only orphans modified longer ago than this "
                   "(e.g. 3d, 12h, 30m): a running writer's uncommitted file looks the same.")
@json_option
@quiet_option
@max_blob_size_option
@io_option
@click.pass_context
def repair(ctx: click.Context, table: str, catalog: str | None, snapshot_id: int | None,
           apply: bool, delete_orphans: bool, older_than: tuple[float, str], as_json: bool,
           quiet: bool, max_blob_size: int) -> None:
    """Repair what `puffin table` finds, in one commit.

    TABLE is a table directory or a *.metadata.json file; with --catalog, a table identifier
    NAMESPACE.TABLE of that catalog. Without --apply it only plans and writes nothing: one
    line per repair (what, which files, why, the finding it fixes) and one per finding it
    leaves, why, and what to do (restore a file, roll back, the stats compute to run). With
    --apply it writes what the repairs need (create-only) and commits them as one new
    metadata version, building again on the table's new version when another writer commits
    first; a failure leaves the table as it was. Exit 0 only when no error is left once the
    plan is applied (or after --apply); 1 while repairs are pending or errors remain that no
    repair covers.

    Repairs: in the current snapshot, the live deletion vectors of one data file become one
    holding their union, bare DV blobs are framed as Puffin files and DVs whose blob names
    another data file are rewritten (one new Puffin file, one new snapshot replacing the
    delete files) with the parent's statistics carried to it when its live rows are the
    parent's; statistics entries with a wrong size, footer size or blob-metadata are
    corrected from the file; entries whose file is missing, whose snapshot does not exist or
    whose blobs describe another snapshot are removed (the same for partition statistics);
    with --delete-orphans, orphans older than --older-than are deleted after the commit.
    Nothing else changes: no data file is removed and snapshot history is kept
    (docs/table.md, "Repairing a table").

    \b
    Examples:
      puffin repair warehouse/db/orders
      puffin repair warehouse/db/orders --apply
      puffin repair warehouse/db/orders --apply --delete-orphans --older-than 7d
      puffin repair --catalog prod sales.orders --apply --json
    """
    from puffin_cli.analysis.repair.plan import RepairOptions, apply_plan, plan_repairs
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.render.progress import ProgressDisplay
    from puffin_cli.storage import default_io

    if delete_orphans and snapshot_id is not None:
        raise click.UsageError("--delete-orphans and --snapshot exclude each other (orphans "
                               "belong to no snapshot)")
    if not delete_orphans and \
            ctx.get_parameter_source("older_than") is not click.core.ParameterSource.DEFAULT:
        raise click.UsageError("--older-than needs --delete-orphans (it says which orphans "
                               "to delete)")
    options = RepairOptions(snapshot_id=snapshot_id, delete_orphans=delete_orphans,
                            older_than=older_than[0], older_than_text=older_than[1])
    with ProgressDisplay(not quiet) as display:
        display.phase("reading snapshots")
        loaded = Table.load(table, fileio=default_io(), catalog=catalog,
                            max_blob_size=max_blob_size)
        plan = plan_repairs(loaded, table, options=options, max_blob_size=max_blob_size)
        if apply:
            display.phase("repairing")
            result = apply_plan(plan)
        else:
            result = plan.result()
    if as_json:
        emit(ctx, result)
    elif not quiet:
        from puffin_cli.render.repair import repair_view

        emit(ctx, result, repair_view)
    sys.exit(EXIT_BAD_FILE if result.pending or result.errors_left else EXIT_OK)
