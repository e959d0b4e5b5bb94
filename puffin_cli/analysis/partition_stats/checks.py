"""``puffin table``'s checks of a registered partition statistics file against the spec and
against its snapshot's manifests (:mod:`.compute`'s full count; no data file is read).

=====================================  ========  =============================================
code                                   severity  meaning
=====================================  ========  =============================================
table.partition-stats.unreadable       error     not a Parquet file with the spec's fields
table.partition-stats.legacy-ids       warning   Iceberg 1.9.x's field IDs (one lower)
table.partition-stats.schema           error     a field missing, of another type, or
                                                 optional where the spec requires it; the
                                                 partition struct not the unified type
table.partition-stats.order            error     rows not sorted by partition
table.partition-stats.duplicate        error     two rows for one (spec, partition)
table.partition-stats.count            error     a count differs from the manifests'
table.partition-stats.missing-row      error     a partition with files has no row
table.partition-stats.extra-row        error     a row with counts for no files
table.partition-stats.total-records    error     total_record_count where equality deletes
                                                 make it unknowable, or another count
                                                 where no deletes apply
=====================================  ========  =============================================

A row whose counts are all 0 for a partition without files is what Iceberg's incremental
compute leaves when a partition's files are all removed: not a finding.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

from puffin_cli.analysis.partition_stats.compute import compute_full
from puffin_cli.analysis.partition_stats.model import (
    PartitionField,
    StatsRow,
    sort_key,
    unified_partition_type,
    value_text,
)
from puffin_cli.analysis.partition_stats.parquet import LAYOUT_1_9, LAYOUT_UNKNOWN, read_file
from puffin_cli.analysis.table.facts import PartitionStatsIssue
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import PartitionStatisticsEntry
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Severity

Add = Callable[[str, PartitionStatsIssue, Severity], None]
PREFIX = "table.partition-stats."


def partition_values(unified: tuple[PartitionField, ...], partition: tuple[Any, ...]
                     ) -> dict[str, Any]:
    """A partition tuple as field name -> value (JSON and human form alike)."""
    return {pf.name: value_text(pf.type, v) for pf, v in zip(unified, partition, strict=False)}


def check_file(table: Table, entry: PartitionStatisticsEntry, report: Add) -> None:
    """Every check of the module docstring on the file ``entry`` names (it exists)."""

    def add(code: str, detail: PartitionStatsIssue,
            severity: Severity = Severity.ERROR) -> None:
        report(code, detail, severity)

    metadata = table.metadata
    snapshot = metadata.snapshot(entry.snapshot_id)
    try:
        unified = unified_partition_type(metadata)
        read = read_file(table.resolve(entry.path), unified, metadata.format_version,
                         fileio=table.fileio)
    except PuffinError as exc:
        add(PREFIX + "unreadable", PartitionStatsIssue("unreadable", text=exc.message))
        return
    if read.layout == LAYOUT_UNKNOWN or read.rows is None:
        add(PREFIX + "unreadable", PartitionStatsIssue(
            "unreadable", text="no struct field 'partition' with field ID 1"))
        return
    if read.layout == LAYOUT_1_9:
        # its other differences (fields 6-9 optional, no dv_count) are 1.9.x's: named once
        # a warning: 1.10's deprecated org.apache.iceberg.data.PartitionStatsHandler still
        # writes and reads it; the core handler recomputes in full
        add(PREFIX + "legacy-ids", PartitionStatsIssue("layout"), Severity.WARNING)
    for problem in () if read.layout == LAYOUT_1_9 else read.problems:
        add(PREFIX + "schema", PartitionStatsIssue("schema", column=problem.field,
                                                   expected=problem.expected,
                                                   actual=problem.actual, text=problem.text()))
    rows = read.rows

    def issue(problem: str, row: StatsRow, **kw: Any) -> PartitionStatsIssue:
        return PartitionStatsIssue(problem, partition_values(unified, row.partition),
                                   row.spec_id, **kw)

    key = sort_key(unified)
    for before, after in itertools.pairwise(rows):
        if key(after.partition) < key(before.partition):
            add(PREFIX + "order", issue("order", after))
            break
    seen = Counter(r.key for r in rows)
    for row in rows:
        if seen[row.key] > 1:
            add(PREFIX + "duplicate", issue("duplicate", row, actual=seen[row.key]))
            seen[row.key] = 1
    if snapshot is None:
        return
    expected = {r.key: r for r in compute_full(table, snapshot)}
    found = {r.key: r for r in rows}
    for k, want in expected.items():
        has = found.get(k)
        if has is None:
            if any(want.counts().values()):
                add(PREFIX + "missing-row", issue("missing-row", want))
            continue
        for name, value in _expected_counts(want, read.has_dv_count, has).items():
            if has.counts()[name] != value:
                add(PREFIX + "count", issue("count", has, column=name, expected=value,
                                            actual=has.counts()[name]))
        total = _total_problem(has, want)
        if total is not False:
            add(PREFIX + "total-records", issue("total-record-count", has, expected=total,
                                                actual=has.total_record_count))
    for k, has in found.items():
        if k not in expected and any(has.counts().values()):
            add(PREFIX + "extra-row", issue("extra-row", has))


def _expected_counts(want: StatsRow, has_dv_count: bool, has: StatsRow) -> dict[str, int]:
    """The counts the file's row ``has`` should hold. A file without dv_count (the 1.9.x
    layout) may count the partition's DVs as position delete files, as Iceberg 1.9.x did, or
    leave them out, as 1.10's deprecated 1.9.x-layout writer
    (``org.apache.iceberg.data.PartitionStatsHandler``) does: either is Iceberg's."""
    counts = want.counts()
    if not has_dv_count:
        counts["dv_count"] = 0
        with_dvs = want.position_delete_file_count + want.dv_count
        if has.position_delete_file_count == with_dvs:
            counts["position_delete_file_count"] = with_dvs
    return counts


def _total_problem(has: StatsRow, want: StatsRow) -> int | bool | None:
    """What ``total_record_count`` should be when the file's is wrong (``None``: unknowable),
    else ``False``. The spec: the accurate count after applying deletes. From manifests alone
    it is known only where no deletes apply (the data records); with equality deletes it
    cannot be known without the data, so it must be null."""
    if has.total_record_count is None:
        return False
    if want.equality_delete_file_count:
        return None
    if not (want.position_delete_record_count or want.dv_count) \
            and has.total_record_count != want.data_record_count:
        return want.data_record_count
    return False
