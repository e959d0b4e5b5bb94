"""The human views of partition statistics: a file in ``puffin inspect`` (what it is, its
partition type, then one line per row) and what ``stats compute --partition-stats`` did."""

from __future__ import annotations

from datetime import datetime, timezone

from rich.console import Console
from rich.text import Text

from puffin_cli.analysis.partition_stats.inspection import PartitionStatsFileReport
from puffin_cli.analysis.partition_stats.parquet import LAYOUT_1_9
from puffin_cli.analysis.partition_stats.steps import PartitionStatsResult
from puffin_cli.render import layout

_LAYOUTS = {"iceberg-1.10": "Iceberg 1.10 field IDs (table spec)",
            LAYOUT_1_9: "Iceberg 1.9.x field IDs (one lower than the spec's)"}


def print_partition_stats_file(console: Console, file: PartitionStatsFileReport) -> None:
    layout.print_folded(console, file.path, style="bold", spaces=False)
    fields = ", ".join(f"{f.name} {f.type} ({f.field_id})" for f in file.partition_type)
    for label, value in [
        ("  format", "Iceberg partition statistics (Parquet)"),
        ("  file size", f"{file.file_size:,} bytes"),
        ("  layout", _LAYOUTS.get(file.layout, file.layout)),
        ("  partition", f"{{{fields}}} (from the {file.partition_type_from})"),
        ("  rows", f"{file.row_count:,}"),
    ]:
        layout.row(console, label, value)
    for problem in file.problems:
        console.print(Text(f"  schema: {problem}", style="bold red"), soft_wrap=True)
    if not file.rows:
        return
    console.print()
    header = ("partition", "spec", "records", "files", "bytes", "pos del", "pos files",
              "eq del", "eq files", "dvs", "total", "last update")
    cells = []
    for r in file.rows:
        values = ", ".join(f"{k}={'null' if v is None else v}" for k, v in r.partition.items())
        cells.append((f"{{{values}}}", str(r.spec_id), f"{r.data_record_count:,}",
                      f"{r.data_file_count:,}", f"{r.total_data_file_size_in_bytes:,}",
                      f"{r.position_delete_record_count:,}",
                      f"{r.position_delete_file_count:,}",
                      f"{r.equality_delete_record_count:,}",
                      f"{r.equality_delete_file_count:,}", f"{r.dv_count:,}",
                      "-" if r.total_record_count is None else f"{r.total_record_count:,}",
                      _updated(r.last_updated_snapshot_id, r.last_updated_at)))
    lines = layout.columns([header, *cells], right=range(1, len(header)))
    console.print(Text(lines[0], style="bold"), soft_wrap=True)
    for text in lines[1:]:
        console.print(Text(text), soft_wrap=True)
    if len(file.rows) < file.row_count:
        console.print(Text(f"… (first {len(file.rows):,} of {file.row_count:,} rows; --limit "
                           "shows more)", style="dim"))


def _updated(snapshot_id: int | None, at: int | None) -> str:
    if snapshot_id is None:
        return "-"
    if at is None:
        return str(snapshot_id)
    when = datetime.fromtimestamp(at / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return f"{snapshot_id} at {when} UTC"


def computed_view(result: PartitionStatsResult, console: Console) -> None:
    """What ``stats compute --partition-stats`` did, in a few lines."""
    how = result.mode
    if result.base_snapshot_id is not None and result.mode == "incremental":
        how = f"incremental from snapshot {result.base_snapshot_id}"
    lines = [f"snapshot {result.snapshot_id}: partition statistics, {how}"
             + ("" if result.partitions is None else f", {result.partitions} partition(s)")]
    if result.reason is not None:
        lines.append(f"  full: {result.reason}")
    if result.mode == "fresh":
        lines.append(f"  the snapshot has its file already: {result.path}")
    else:
        lines.append(f"  wrote {result.path} ({result.file_size or 0:,} bytes)")
    if result.committed:
        lines.append(f"  committed: {result.metadata_file}")
    layout.plain_lines(console, lines)
