"""``puffin diff TABLE``'s human view of a :class:`~puffin_cli.analysis.table.diff.TableDiff`
(``--json`` is its serialization, docs/json.md).

The table, the two snapshots (ID, commit time UTC, operation), then each count ``from -> to``
with what was added and removed: live data files, rows, deletion vectors (how many data files'
DVs were added, grown, replaced, removed) and the rows they delete, other delete files; the data
files whose DVs changed (the first ``--limit``); per engine the statistics file at each end
(current, stale, missing) and per column the NDVs and the change; the partition statistics file at
each end and the partitions whose rows or files changed (the first ``--limit``). The last line
says whether the snapshots are the same.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from puffin_cli.analysis.table.diff import (
    STATS_CURRENT,
    DiffEnd,
    PartitionStatisticsDiff,
    StatisticsDiff,
    TableDiff,
)
from puffin_cli.format.text import plural
from puffin_cli.render import layout
from puffin_cli.render.table import TablePaths

_INDENT = 2
_STATE_STYLE = {STATS_CURRENT: "green"}


def _end(label: str, end: DiffEnd) -> Text:
    import time

    if end.snapshot_id is None:
        return Text.assemble((label, "bold"), "(before the first snapshot: an empty table)")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((end.timestamp_ms or 0) / 1000))
    given = f"  ({end.ref})" if end.ref is not None and end.ref != str(end.snapshot_id) else ""
    return Text.assemble((label, "bold"), str(end.snapshot_id), given,
                         (f"  {when} UTC  {end.operation or '-'}", "dim"))


def _count(a: int, b: int) -> str:
    change = b - a
    return f"{a:,} -> {b:,}" + (f" ({change:+,})" if change else "")


def _ndv(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _statistics(console: Console, diff: StatisticsDiff, paths: TablePaths) -> None:
    def side(path: str | None, state: str, snapshot_id: int | None) -> Text:
        if path is None:
            return Text(state, style="red")
        of = f" (of {snapshot_id})" if state != STATS_CURRENT else ""
        return Text.assemble((state, _STATE_STYLE.get(state, "yellow")), of,
                             f"  {paths.short(path)}")

    layout.print_folded(console, Text.assemble((diff.engine, "bold"), "  from ",
                                               side(diff.path_from, diff.state_from,
                                                    diff.file_snapshot_from)), _INDENT)
    layout.print_folded(console, Text.assemble(" " * len(diff.engine), "  to   ",
                                               side(diff.path_to, diff.state_to,
                                                    diff.file_snapshot_to)), _INDENT)
    if not diff.columns:
        return
    rows = [["column", "field", "NDV from", "NDV to", "change"]]
    for column in diff.columns:
        rows.append([column.column or "?", str(column.field_id), _ndv(column.ndv_from),
                     _ndv(column.ndv_to),
                     "" if column.change is None else f"{column.change:+,}"])
    for line in layout.columns(rows, right={1, 2, 3, 4}):
        layout.print_folded(console, line, _INDENT * 2)


def _partition_statistics(console: Console, diff: PartitionStatisticsDiff,
                          paths: TablePaths) -> None:
    if diff.path_from is None and diff.path_to is None:
        return
    layout.print_line(console, Text("partition statistics", style="bold"))
    for label, path in (("from ", diff.path_from), ("to   ", diff.path_to)):
        layout.print_folded(console, Text.assemble(
            label, ("none", "red") if path is None else paths.short(path)), _INDENT)
    if diff.problem is not None:
        layout.print_folded(console, Text(diff.problem, style="red"), _INDENT)
        return
    if diff.path_from is None or diff.path_to is None:
        return
    if not diff.partitions_changed:
        layout.print_folded(console, "no partition's rows or files changed", _INDENT)
        return
    rows = [["partition", "spec", "rows from", "rows to", "files from", "files to"]]
    for change in diff.changes:
        partition = "{" + ", ".join(f"{k}={v}" for k, v in change.partition.items()) + "}"
        rows.append([partition, str(change.spec_id), _ndv(change.rows_from),
                     _ndv(change.rows_to), _ndv(change.files_from), _ndv(change.files_to)])
    for line in layout.columns(rows, right={1, 2, 3, 4, 5}):
        layout.print_folded(console, line, _INDENT * 2)
    if diff.changes_omitted:
        layout.print_folded(console, f"... {plural(diff.changes_omitted, 'more partition')}"
                            " (--limit shows more)", _INDENT, style="dim")


def render_human(diff: TableDiff, console: Console) -> None:
    a, b = diff.from_snapshot, diff.to_snapshot
    paths = TablePaths(diff.location, diff.path)
    layout.print_folded(console, Text.assemble(("table ", "bold"), diff.table), 0,
                        spaces=False)
    layout.print_line(console, _end("from  ", a))
    layout.print_line(console, _end("to    ", b))
    files = diff.data_files
    layout.row(console, "data files", f"{_count(a.data_files, b.data_files)}: "
               f"{files.added:,} added, {files.removed:,} removed")
    layout.row(console, "rows", f"{_count(a.data_rows, b.data_rows)}: "
               f"{files.rows_added:,} added, {files.rows_removed:,} removed")
    deletes = diff.deletes
    kinds = [f"{count:,} {kind}" for count, kind in (
        (deletes.dvs_added, "added"), (deletes.dvs_grown, "grown"),
        (deletes.dvs_replaced, "replaced"), (deletes.dvs_removed, "removed")) if count]
    layout.row(console, "deletion vectors", f"{_count(a.deletion_vectors, b.deletion_vectors)}"
               f": {', '.join(kinds) or 'none changed'}")
    layout.row(console, "deleted rows", _count(a.deleted_rows, b.deleted_rows))
    if a.other_delete_files or b.other_delete_files:
        layout.row(console, "other deletes", f"{_count(a.other_delete_files, b.other_delete_files)}"
                   f": {deletes.other_added:,} added, {deletes.other_removed:,} removed")
    for change in deletes.changes:
        positions = f"{_ndv(change.positions_from)} -> {_ndv(change.positions_to)} positions"
        layout.print_folded(console, Text.assemble(
            (change.change.ljust(9), "bold"), positions, "  ", paths.short(change.data_file)),
            _INDENT, spaces=False)
    if deletes.changes_omitted:
        layout.print_folded(console, f"... {plural(deletes.changes_omitted, 'more data file')}"
                            " (--limit shows more)", _INDENT, style="dim")
    layout.print_line(console, Text("statistics", style="bold"))
    for engine in diff.statistics:
        _statistics(console, engine, paths)
    _partition_statistics(console, diff.partition_statistics, paths)
    if diff.same:
        layout.print_line(console, Text("the same", style="bold green"))
    else:
        layout.print_line(console, Text("different", style="bold red"))
