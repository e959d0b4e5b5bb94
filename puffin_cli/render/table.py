"""``puffin table`` output: a human view (rich) and the JSON document, from one TablesReport.

Per table: a header (metadata file, format version, relocations), then per snapshot its
statistics files (one row per blob: column names, NDV), which statistics file Spark and Trino
use, partition statistics files, its deletion vectors (one row each) and totals; then the
findings, errors first.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from puffin_cli.analysis.table import DeletionVector, SnapshotView, TableReport, TablesReport
from puffin_cli.analysis.table_metadata import normalize_location
from puffin_cli.format.findings import Severity
from puffin_cli.render import jsonout

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def render_json(report: TablesReport, out: TextIO) -> None:
    """The documented JSON document (docs/table.md)."""
    jsonout.dump(report, out)


def render_human(report: TablesReport, console: Console) -> None:
    for number, table in enumerate(report.tables):
        if number:
            console.print()
        _table(console, table)


def _short(path: str | None, location: str) -> str:
    """A location relative to the table's location when it is under it."""
    if path is None:
        return "?"
    text, base = normalize_location(path), normalize_location(location)
    return text[len(base) + 1:] if text.startswith(base + "/") else path


def _table(console: Console, table: TableReport) -> None:
    console.print(Text(table.path, style="bold"), overflow="fold")
    console.print(f"  metadata  {table.metadata_file}", overflow="fold")
    console.print(f"  format v{table.format_version}, location {table.location}",
                  overflow="fold")
    for source, target in table.relocated:
        console.print(f"  relocated {source} -> {target}", overflow="fold")
    if not table.snapshots:
        console.print(Text("  no snapshot to show (the table has no current snapshot)",
                           style="dim"))
    for view in table.snapshots:
        console.print()
        _snapshot(console, view, table.location)
    if table.orphans:
        console.print()
        console.print(Text(f"  {len(table.orphans)} orphan Puffin file(s) "
                           "(referenced by nothing; see findings)", style="dim"))
    console.print()
    findings = sorted(table.findings, key=lambda f: _ORDER[f.severity])
    for finding in findings:
        offset = "" if finding.offset is None else f" (at byte {finding.offset})"
        console.print(Text(f"  {finding.severity.value}: [{finding.code}] {finding.message}"
                           f"{offset}", style=_STYLE[finding.severity]), overflow="fold")
    verdict = (f"{table.errors} error(s), {table.warnings} warning(s)" if findings
               else "no findings")
    console.print(f"  {verdict}; {table.manifests_read} manifest file(s) read")


def _snapshot(console: Console, view: SnapshotView, location: str) -> None:
    current = " (current)" if view.current else ""
    operation = f", {view.operation}" if view.operation else ""
    console.print(Text(f"snapshot {view.snapshot_id}{current}", style="bold"),
                  Text(f"sequence {view.sequence_number}{operation}, schema {view.schema_id}",
                       style="dim"))
    for stats in view.statistics:
        console.print(f"  statistics {_short(stats.path, location)}", overflow="fold")
        console.print(Text(f"    {stats.file_size:,} bytes, footer {stats.footer_size:,} bytes",
                           style="dim"))
        grid = Table(box=None, padding=(0, 2), show_edge=False)
        for name in ("blob type", "column", "field", "ndv"):
            grid.add_column(name, overflow="fold", justify="right" if name == "ndv" else "left")
        for blob in stats.blobs:
            columns = ", ".join(c if c is not None else "?" for c in blob.columns)
            grid.add_row(blob.type, columns, ", ".join(str(f) for f in blob.fields),
                         "" if blob.ndv is None else f"{blob.ndv:,}")
        console.print(grid)
    used = view.statistics_used
    if not view.statistics:
        console.print(Text("  no statistics file registered for this snapshot", style="dim"))
    if used.trino is not None and used.trino != used.spark:
        spark = "none" if used.spark is None else _short(used.spark, location)
        console.print(f"  Spark uses: {spark}; Trino uses the file of ancestor snapshot "
                      f"{used.trino_snapshot_id}: {_short(used.trino, location)}",
                      overflow="fold")
    for part in view.partition_statistics:
        console.print(f"  partition statistics {_short(part.path, location)} "
                      f"({part.file_size:,} bytes)",
                      overflow="fold")
    by_file: dict[str, list[DeletionVector]] = {}
    for dv in view.deletion_vectors:
        by_file.setdefault(dv.path, []).append(dv)
    for path, dvs in by_file.items():
        console.print(f"  deletion vectors in {_short(path, location)}", overflow="fold")
        grid = Table(box=None, padding=(0, 2), show_edge=False)
        for name in ("data file", "offset", "length", "rows", "container"):
            grid.add_column(name, overflow="fold",
                            justify="right" if name in ("offset", "length", "rows") else "left")
        for dv in dvs:
            rows = f"{dv.record_count:,}"
            if dv.cardinality is not None and dv.cardinality != dv.record_count:
                rows += f" (bitmap {dv.cardinality:,})"
            grid.add_row(_short(dv.data_file, location), str(dv.offset), str(dv.length), rows,
                         dv.container)
        console.print(grid)
    totals = view.totals
    console.print(Text(
        f"  totals: {totals.statistics_files} statistics file(s), {totals.statistics_blobs} "
        f"blob(s); {totals.deletion_vectors} deletion vector(s) in {totals.dv_files} file(s), "
        f"{totals.dv_bytes:,} bytes, {totals.deleted_rows:,} deleted row(s)"
        + (f"; {totals.other_delete_files} other delete file(s)"
           if totals.other_delete_files else ""), style="dim"), overflow="fold")
