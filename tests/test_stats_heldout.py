"""``puffin stats compute`` against Iceberg Java's ``compute_table_stats`` on tables unlike
those of test_stats_spark.py (tests/interop/spark_scripts/heldout_tables.py, Spark 3.5 +
Iceberg 1.10.2, built once and cached by the script's hash): partition transforms, merge-on-read
and copy-on-write UPDATE / MERGE INTO, deletion vectors, equality deletes, renamed, dropped
and re-added, and promoted columns, decimal(38), fixed, all-null and nested columns, files
split across tasks (Parquet row groups, ORC stripes, Avro blocks) in estimation mode, migrated
Parquet (INT96 timestamps, legacy decimals), snappy and zstd Avro, older snapshots.

For every statistics file Iceberg wrote, the same snapshot and columns computed here give the
same live row count and NDVs (with the blob's columns named; without, the same columns are
chosen), and the same sketch bytes wherever Iceberg's own result is
deterministic: a column in exact mode, or a snapshot with one data manifest (with several,
Iceberg plans them in parallel and its task order varies; see docs/spark.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from stats_compute import SKETCHERS, compute_stats
from tiers import needs

from puffin_cli.format.reader import PuffinReader

SCRIPT = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "heldout_tables.py"
TABLES = ("part_mor_v2", "trunc_dv_v3", "evolve_cow_v2", "eq_promote_v2", "split_estim_v2",
          "avro_estim_v2", "orc_estim_v2", "fixed_v3", "eq_dv_v3", "nested_v2",
          "migrated_legacy_v2", "avro_codecs_v2")


@pytest.fixture(scope="session")
@needs("spark")
def heldout_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (Iceberg's own view)."""
    return script_output(SCRIPT, "heldout-tables", "build")


def read_blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {blob.fields[0]: (blob, reader.read_blob(blob)) for blob in reader.metadata.blobs}


@pytest.mark.parametrize("sketcher", SKETCHERS)
@pytest.mark.parametrize("name", TABLES)
def test_statistics_equal_icebergs(name: str, sketcher: str, heldout_tables: Path,
                                   tmp_path: Path) -> None:
    table = tmp_path / name
    shutil.copytree(heldout_tables / "warehouse" / "db" / name, table)
    expected = json.loads((heldout_tables / "tables.json").read_text())[name]
    assert expected["statistics"]
    differences: list[str] = []
    for stats in expected["statistics"]:
        snapshot = stats["snapshot-id"]
        iceberg = read_blobs(table / "metadata" / Path(stats["path"]).name)
        columns = [b["columns"][0] for b in stats["blobs"]]
        result = compute_stats(table, snapshot_id=snapshot, columns=columns,
                               sketcher=sketcher, full=True)
        assert result.snapshot_id == snapshot
        assert result.rows_read == stats["live-rows"], snapshot
        fields = [b["fields"][0] for b in stats["blobs"]]
        assert [c.field_id for c in result.columns] == fields
        default = compute_stats(table, snapshot_id=snapshot, sketcher=sketcher, full=True)
        assert [(c.field_id, c.ndv) for c in default.columns] == \
            [(c.field_id, c.ndv) for c in result.columns]
        ours = read_blobs(result.statistics_path)
        deterministic = stats["data-manifests"] == 1
        for column in result.columns:
            blob, data = ours[column.field_id]
            ice_blob, ice_data = iceberg[column.field_id]
            where = f"snapshot {snapshot} column {column.name} (exact: {column.exact})"
            if blob.properties != ice_blob.properties:
                differences.append(f"{where}: ndv {blob.properties} != {ice_blob.properties}")
            elif (column.exact or deterministic) and data != ice_data:
                differences.append(f"{where}: same ndv, other sketch bytes")
    assert differences == []
