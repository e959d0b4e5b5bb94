"""``puffin inspect`` on a partition statistics file: what it is (the Iceberg 1.10 layout or
1.9.x's), its partition type, how its schema differs from the spec's, and its first rows.

With a table (``--table``) the partition values are named and typed by the table's unified
partition type and the schema is checked against it; without, by the file's own partition
struct (names, field IDs and types as stored).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.partition_stats.model import (
    PartitionField,
    StatsRow,
    unified_partition_type,
)
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileIO

FORMAT = "iceberg-partition-statistics"
PARQUET_MAGIC = b"PAR1"


def is_parquet(location: str, fileio: FileIO) -> bool:
    """The file starts with Parquet's magic (a partition statistics file, as Iceberg writes
    them by default)."""
    try:
        with fileio.new_input(location) as source:
            return source.size >= 8 and source.read(0, 4) == PARQUET_MAGIC
    except PuffinError:
        return False


@dataclass(frozen=True)
class PartitionStatsRowView:
    """One row as shown: the partition (field name -> value), then the spec's fields."""

    partition: dict[str, Any]
    spec_id: int
    data_record_count: int
    data_file_count: int
    total_data_file_size_in_bytes: int
    position_delete_record_count: int
    position_delete_file_count: int
    equality_delete_record_count: int
    equality_delete_file_count: int
    total_record_count: int | None
    last_updated_at: int | None
    last_updated_snapshot_id: int | None
    dv_count: int


@dataclass(frozen=True)
class PartitionStatsFileReport:
    """A partition statistics file: ``format`` (``iceberg-partition-statistics``), its
    ``layout``, the ``partition-type`` its rows are shown with (and where it came from:
    ``table`` or ``file``), the schema's ``problems``, ``row-count`` and the first ``limit``
    ``rows``."""

    path: str
    format: str
    file_size: int
    layout: str
    partition_type: tuple[PartitionField, ...]
    partition_type_from: str
    problems: tuple[str, ...]
    row_count: int
    limit: int
    rows: tuple[PartitionStatsRowView, ...]

    @property
    def ok(self) -> bool:
        return True

    def failures(self) -> list[PuffinError]:
        return []


def _view(row: StatsRow, unified: tuple[PartitionField, ...]) -> PartitionStatsRowView:
    from puffin_cli.analysis.partition_stats.checks import partition_values

    return PartitionStatsRowView(
        partition_values(unified, row.partition), row.spec_id, row.data_record_count,
        row.data_file_count, row.total_data_file_size_in_bytes,
        row.position_delete_record_count, row.position_delete_file_count,
        row.equality_delete_record_count, row.equality_delete_file_count,
        row.total_record_count, row.last_updated_at, row.last_updated_snapshot_id,
        row.dv_count)


def inspect_partition_stats(location: str | os.PathLike[str], *, limit: int,
                            table: Table | None, fileio: FileIO
                            ) -> PartitionStatsFileReport | None:
    """The report of the partition statistics file at ``location`` (footer, then the
    columns of at most ``limit`` rows); ``None`` for a Parquet file without a partition
    struct at field ID 1 (or 0, as Iceberg 1.9.x wrote)."""
    from puffin_cli.analysis.partition_stats.parquet import file_partition_type, read_file

    text = os.fspath(location)
    if table is not None:
        unified = unified_partition_type(table.metadata)
        version = table.metadata.format_version
        source = "table"
    else:
        unified, version = file_partition_type(text, fileio)
        source = "file"
    read = read_file(text, unified, version, fileio=fileio, limit=limit)
    if read.rows is None:  # another Parquet file: the Puffin reader names it
        return None
    return PartitionStatsFileReport(
        text, FORMAT, read.file_size, read.layout, unified, source,
        tuple(p.text() for p in read.problems), read.row_count, limit,
        tuple(_view(r, unified) for r in read.rows))
