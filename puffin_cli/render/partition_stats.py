"""The human view of ``stats compute --partition-stats``."""

from __future__ import annotations

from typing import Any

from puffin_cli.analysis.partition_stats.steps import PartitionStatsResult


def computed_view(result: PartitionStatsResult, console: Any) -> None:
    how = result.mode
    if result.base_snapshot_id is not None and result.mode == "incremental":
        how = f"incremental from snapshot {result.base_snapshot_id}"
    console.print(f"snapshot {result.snapshot_id}: partition statistics, {how}, "
                  f"{result.partitions} partition(s)", markup=False, highlight=False)
    if result.reason is not None:
        console.print(f"  full: {result.reason}", markup=False, highlight=False)
    if result.mode == "fresh":
        console.print(f"  the snapshot has its file already: {result.path}", markup=False,
                      highlight=False)
        return
    console.print(f"  wrote {result.path} ({result.file_size:,} bytes)", markup=False,
                  highlight=False)
    if result.committed:
        console.print(f"  committed: {result.metadata_file}", markup=False, highlight=False)
