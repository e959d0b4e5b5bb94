"""The statistics view (analysis/table/statistics.py): which statistics file Spark and Trino use
for a snapshot and the NDVs they read there, from the table metadata alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from tables.synthetic import TableBuilder

from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.statistics import (
    SPARK,
    TRINO,
    ColumnNdv,
    StatisticsView,
)
from puffin_cli.format.spec import THETA_BLOB_TYPE
from puffin_cli.storage import FileIO


def _three_snapshots(tmp_path: Path) -> TableBuilder:
    builder = TableBuilder(tmp_path / "t")
    for _ in range(3):
        builder.snapshot([])
    return builder


def _view(builder: TableBuilder) -> tuple[Table, StatisticsView]:
    builder.finish()
    table = Table.load(builder.root, fileio=FileIO())
    return table, StatisticsView(table)


def test_spark_uses_only_the_snapshots_own_file_trino_the_nearest_ancestors(
        tmp_path: Path) -> None:
    builder = _three_snapshots(tmp_path)
    builder.statistics_file(1001, {1: list(range(50)), 4: [0, 1, 1, 2]})
    table, view = _view(builder)
    current = table.snapshot(1003)
    assert current is not None
    spark, trino = view.engine(current, SPARK), view.engine(current, TRINO)
    assert spark.entry is None and spark.columns == () and not spark.stale
    assert trino.entry is not None and trino.entry.snapshot_id == 1001 and trino.stale
    assert trino.path == f"{builder.root}/metadata/1001-stats.puffin"
    assert trino.columns == (ColumnNdv(1, "id", 50), ColumnNdv(4, "part", 3))
    first = table.snapshot(1001)
    assert first is not None
    own = view.engine(first, SPARK)
    assert own.entry is not None and not own.stale and own.columns == trino.columns
    choice = view.choice(current)
    assert (choice.spark, choice.trino, choice.trino_snapshot_id) == (None, trino.path, 1001)


def test_ndvs_come_from_the_metadata_as_each_engine_reads_them(tmp_path: Path) -> None:
    builder = _three_snapshots(tmp_path)
    builder.statistics_file(1003, {1: [1, 2, 3], 4: [1]})
    blobs = builder.statistics[0]["blob-metadata"]
    # a two-field theta blob: Spark keys it by its first field, Trino skips it
    blobs.append({**blobs[0], "fields": [4, 1], "properties": {"ndv": "9"}})
    blobs[1]["properties"] = {}  # field 4's own blob has no ndv
    blobs.append({**blobs[0], "type": "other-blob-v1", "fields": [3], "properties": {"ndv": "1"}})
    table, view = _view(builder)
    current = table.snapshot(None)
    assert current is not None
    assert view.engine(current, SPARK).columns == (ColumnNdv(1, "id", 3),
                                                   ColumnNdv(4, "part", 9))
    assert view.engine(current, TRINO).columns == (ColumnNdv(1, "id", 3),
                                                   ColumnNdv(4, "part", None))
    assert all(b.type == THETA_BLOB_TYPE for b in view.registered(1003)[0].blobs[:3])


def test_the_view_opens_no_statistics_file(tmp_path: Path) -> None:
    """Engines plan with the metadata's blob-metadata; the view reads nothing else (a missing
    file is the checks' finding, not the view's)."""
    builder = _three_snapshots(tmp_path)
    builder.statistics_file(1002, {1: list(range(7))})
    (builder.root / "metadata" / "1002-stats.puffin").unlink()
    table, view = _view(builder)
    current = table.snapshot(None)
    assert current is not None
    assert view.engine(current, TRINO).columns == (ColumnNdv(1, "id", 7),)
    described = view.describe(view.registered(1002)[0])
    assert [(b.columns, b.ndv) for b in described.blobs] == [(("id",), 7)]


def test_two_files_for_one_snapshot_spark_takes_the_first(tmp_path: Path) -> None:
    builder = _three_snapshots(tmp_path)
    builder.statistics_file(1003, {1: [1, 2]})
    first = builder.statistics[0]
    builder.statistics.append({**first, "statistics-path": builder.uri("metadata/other.stats"),
                               "blob-metadata": [{**first["blob-metadata"][0],
                                                  "properties": {"ndv": "4"}}]})
    table, view = _view(builder)
    current = table.snapshot(None)
    assert current is not None
    assert len(view.registered(1003)) == 2
    assert view.engine(current, SPARK).columns == (ColumnNdv(1, "id", 2),)
    with pytest.raises(ValueError, match="unknown engine 'hive'"):
        view.used(current, "hive")
