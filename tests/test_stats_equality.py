"""Equality delete files in ``puffin stats compute``: the planning rules (synthetic plans) and
the Spark pipeline against Iceberg Java's ``compute_table_stats`` on a table with equality
deletes (tests/interop/spark_scripts/equality_tables.py: Spark 3.5 + Iceberg 1.10.2, built
once and cached by the script's hash)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from stats_compute import SKETCHERS, compute_stats
from tiers import needs

from puffin_cli.analysis.stats.delete_index import (
    equality_column,
    equality_deletes_by_file,
    is_unpartitioned,
)
from puffin_cli.analysis.stats.files import Column, EqualityDeleteFile
from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import (
    CONTENT_DATA,
    CONTENT_EQUALITY_DELETES,
    CONTENT_POSITION_DELETES,
    ContentFile,
    ManifestFile,
    ManifestReader,
)
from puffin_cli.analysis.table.metadata import (
    PathMapper,
    Snapshot,
    TableMetadata,
    current_metadata_file,
    load_metadata,
)
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

SCRIPT = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "equality_tables.py"

# --- planning: which equality delete files apply to which data file ---------------------------

SPECS: dict[int, dict[str, Any]] = {
    0: {"spec-id": 0, "fields": []},
    1: {"spec-id": 1, "fields": [{"source-id": 2, "field-id": 1000, "name": "cat",
                                  "transform": "identity"}]},
    2: {"spec-id": 2, "fields": [{"source-id": 2, "field-id": 1000, "name": "cat",
                                  "transform": "void"}]},
    3: {"spec-id": 3, "fields": [{"source-id": 2, "field-id": 1000, "name": "cat",
                                  "transform": "identity"}]},
}


def entry(path: str, content: int, sequence: int, spec_id: int = 1,
          partition: dict[str, Any] | None = None, equality_ids: tuple[int, ...] = (),
          file_format: str = "PARQUET") -> ContentFile:
    return ContentFile(content, path, file_format,
                       {} if partition is None else partition, spec_id, 10, 100,
                       sequence, None, None, None, None, "m.avro", equality_ids)


def data(path: str, sequence: int, spec_id: int = 1, cat: int | None = 0) -> ContentFile:
    return entry(path, CONTENT_DATA, sequence, spec_id,
                 None if spec_id in (0, 2) else {"cat": cat})


def eq(path: str, sequence: int, spec_id: int = 1, cat: int | None = 0,
       ids: tuple[int, ...] = (1,)) -> ContentFile:
    return entry(path, CONTENT_EQUALITY_DELETES, sequence, spec_id,
                 {"cat": cat} if spec_id in (1, 3) else ({"cat": None} if spec_id == 2 else None),
                 ids)


def applied(data_files: list[ContentFile], deletes: list[ContentFile]) -> dict[str, list[str]]:
    found = equality_deletes_by_file(SPECS, data_files, deletes)
    return {k: [d.path for d in v] for k, v in found.items()}


def test_sequence_numbers_strictly_lower() -> None:
    files = [data("d1", 1), data("d2", 2), data("d3", 3)]
    # d2 has the delete's own sequence number: not deleted (only older data files are).
    assert applied(files, [eq("e", 2)]) == {"d1": ["e"]}
    assert applied(files, [eq("e", 4), eq("f", 3)]) == {"d1": ["f", "e"], "d2": ["f", "e"],
                                                        "d3": ["e"]}


def test_same_spec_and_partition_only() -> None:
    files = [data("c0", 1, cat=0), data("c1", 1, cat=1), data("null", 1, cat=None),
             data("other-spec", 1, spec_id=3, cat=0), data("unpartitioned", 1, spec_id=0)]
    assert applied(files, [eq("e0", 2, cat=0)]) == {"c0": ["e0"]}
    assert applied(files, [eq("enull", 2, cat=None)]) == {"null": ["enull"]}
    assert applied(files, [eq("e3", 2, spec_id=3, cat=0)]) == {"other-spec": ["e3"]}


def test_unpartitioned_spec_is_global() -> None:
    files = [data("c0", 1, cat=0), data("c1", 3, cat=1), data("spec3", 1, spec_id=3),
             data("unpartitioned", 1, spec_id=0)]
    everything = {"c0": ["g"], "spec3": ["g"], "unpartitioned": ["g"]}
    assert applied(files, [eq("g", 2, spec_id=0)]) == everything
    # A spec whose only field is void is unpartitioned too (Java's isUnpartitioned).
    assert applied(files, [entry("g", CONTENT_EQUALITY_DELETES, 2, 2, {"cat": None},
                                 (1,))]) == everything
    assert applied(files, [eq("g", 2, spec_id=0), eq("p", 4, cat=1)]) == {
        **everything, "c1": ["p"]}


def test_position_deletes_and_dvs_are_not_equality_deletes() -> None:
    files = [data("d1", 1)]
    assert applied(files, [entry("pos", CONTENT_POSITION_DELETES, 2, 1, {"cat": 0})]) == {}


def test_is_unpartitioned() -> None:
    assert [is_unpartitioned(SPECS[i]) for i in range(4)] == [True, False, True, False]
    assert is_unpartitioned({})


# --- planning: the equality columns ------------------------------------------------------------

def metadata(schemas: dict[int, list[dict[str, Any]]], current: int) -> TableMetadata:
    return TableMetadata("t/metadata/v1.metadata.json", 2, None, "/t", 7, current,
                         {k: {"schema-id": k, "type": "struct", "fields": v}
                          for k, v in schemas.items()},
                         SPECS, (Snapshot(7, None, 5, 0, "t/snap.avro", (), current, "append"),),
                         (), (), {})


FIELDS = [{"id": 1, "name": "id", "type": "int", "required": False},
          {"id": 2, "name": "cat", "type": "int", "required": False},
          {"id": 3, "name": "score", "type": "double", "required": False},
          {"id": 4, "name": "point", "type": "struct", "required": False,
           "fields": [{"id": 5, "name": "x", "type": "long", "required": False}]}]


def test_equality_columns_by_field_id() -> None:
    old = [*FIELDS, {"id": 6, "name": "gone", "type": "string", "required": False}]
    meta = metadata({0: old, 1: FIELDS}, 1)
    schema = meta.schemas[1]
    assert equality_column(meta, schema, 1, "e") == Column(1, "id", IcebergType.parse("int"))
    # A column dropped since the delete was written still applies: found in an older schema.
    assert equality_column(meta, schema, 6, "e") == Column(6, "gone",
                                                           IcebergType.parse("string"))
    with pytest.raises(PuffinError) as caught:
        equality_column(meta, schema, 3, "e.parquet")
    assert caught.value.code == "stats.equality-deletes"
    assert str(caught.value) == (
        "e.parquet: equality delete column 'score' (field 3) has type 'double', which equality "
        "deletes cannot be applied on (supported: binary, boolean, date, decimal, fixed, int, "
        "long, string, time, timestamp, timestamptz, uuid)")
    with pytest.raises(PuffinError) as caught:
        equality_column(meta, schema, 5, "e.parquet")
    assert str(caught.value) == ("e.parquet: equality field ID 5 is not a top-level column of "
                                 "any schema of the table (nested equality fields are not "
                                 "supported)")


class StubReader(ManifestReader):
    """Serves synthetic manifests: one data manifest and one delete manifest."""

    def __init__(self, data_files: list[ContentFile], deletes: list[ContentFile]) -> None:
        super().__init__(PathMapper(), FileIO())
        self.entries = {"data.avro": data_files, "deletes.avro": deletes}

    def manifest_files(self, snapshot: Snapshot) -> list[ManifestFile]:
        return [ManifestFile("data.avro", 0, 1, 1, 7), ManifestFile("deletes.avro", 1, 1, 1, 7)]

    def live_files(self, manifest: ManifestFile) -> Iterator[ContentFile]:
        yield from self.entries[manifest.path]


def plan(data_files: list[ContentFile], deletes: list[ContentFile]) -> Any:
    meta = metadata({0: FIELDS}, 0)
    table = Table(meta, Path(meta.path), Path("/t"), PathMapper(), FileIO(),
                  manifest_reader=StubReader(data_files, deletes))
    return plan_snapshot(table, meta.snapshots[0], ["id"])


def test_plan_lists_the_deletes_of_each_data_file() -> None:
    result = plan([data("/t/d1", 1, cat=0), data("/t/d2", 1, cat=1), data("/t/d3", 4, cat=0)],
                  [eq("/t/e", 2, cat=0, ids=(2, 1)), eq("/t/g", 3, spec_id=0),
                   eq("/t/old", 1, cat=1)])
    by_path = {f.location: f for f in result.data_files}
    e, g = (EqualityDeleteFile("/t/e", "/t/e", "parquet", 10, 2,
                               (Column(2, "cat", IcebergType.parse("int")),
                                Column(1, "id", IcebergType.parse("int"))), 0),
            EqualityDeleteFile("/t/g", "/t/g", "parquet", 10, 3,
                               (Column(1, "id", IcebergType.parse("int")),), None))
    assert by_path["/t/d1"].equality_deletes == (e, g)
    assert by_path["/t/d2"].equality_deletes == (g,)
    assert by_path["/t/d3"].equality_deletes == ()
    assert (by_path["/t/d1"].partition_key, by_path["/t/d2"].partition_key,
            by_path["/t/d3"].partition_key) == (0, 1, 0)
    assert result.equality_deletes == (e, g)  # /t/old applies to nothing: left out


def test_plan_refuses_what_it_cannot_apply() -> None:
    with pytest.raises(PuffinError) as caught:
        plan([data("/t/d1", 1)], [entry("/t/e.avro", CONTENT_EQUALITY_DELETES, 2, 1,
                                        {"cat": 0}, (1,), "AVRO")])
    assert (caught.value.code, str(caught.value)) == (
        "stats.equality-deletes", "/t/e.avro: equality delete file format AVRO is not "
        "supported (supported: parquet)")
    with pytest.raises(PuffinError) as caught:
        plan([data("/t/d1", 1)], [eq("/t/e", 2, ids=())])
    assert str(caught.value) == ("/t/e: equality delete file without equality_ids (manifest "
                                 "field 135)")
    # Not applying to any live data file: no refusal.
    assert plan([data("/t/d1", 3)], [eq("/t/e", 2, ids=())]).equality_deletes == ()


# --- against Iceberg Java ----------------------------------------------------------------------

@pytest.fixture(scope="session")
@needs("spark")
def equality_tables() -> Path:
    """OUT_DIR with warehouse/db/eq_v2 and tables.json (Iceberg's own view)."""
    return script_output(SCRIPT, "equality-tables", "build")


def read_blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {blob.fields[0]: (blob, reader.read_blob(blob)) for blob in reader.metadata.blobs}


@pytest.mark.parametrize("sketcher", SKETCHERS)
def test_sketches_equal_icebergs_with_equality_deletes(sketcher: str, equality_tables: Path,
                                                       tmp_path: Path) -> None:
    """Partition-scoped deletes in two partitions (one matching NULL), a global delete on two
    columns (also with a NULL), deletes older than some data files (not applied to them),
    position deletes on the same files, a renamed equality column: the plan names the delete
    files Iceberg's scan planning applies, and the live rows sketch to identical bytes."""
    table = tmp_path / "eq_v2"
    shutil.copytree(equality_tables / "warehouse" / "db" / "eq_v2", table)
    expected = json.loads((equality_tables / "tables.json").read_text())["eq_v2"]

    loaded = Table.load(table, fileio=FileIO())
    planned = plan_snapshot(loaded, stats_snapshot(loaded, None), None)
    ours = {f.location: sorted(d.location for d in f.equality_deletes)
            for f in planned.data_files}
    assert ours == expected["equality-deletes"]
    assert sum(1 for v in ours.values() if v) == 9 and len(planned.equality_deletes) == 3

    result = compute_stats(table, sketcher=sketcher, full=True)
    assert result.rows_read == expected["live-rows"] == 2330
    assert result.snapshot_id == expected["current-snapshot-id"]
    assert result.position_delete_files > 0
    meta = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    entry = next(s for s in meta.statistics if s.snapshot_id == result.snapshot_id)
    iceberg = read_blobs(table / "metadata" / Path(entry.path).name)
    mine = read_blobs(result.statistics_path)
    assert [c.name for c in result.columns] == ["id", "cat", "name", "code", "dt", "amount",
                                                "flag", "ts"]
    assert sorted(mine) == sorted(iceberg)
    for column in result.columns:
        blob, data_bytes = mine[column.field_id]
        assert column.exact, column.name
        assert data_bytes == iceberg[column.field_id][1], column.name
        assert blob.properties == iceberg[column.field_id][0].properties
    # id is exact and each live id is one distinct value: the same set of live ids.
    assert next(c.ndv for c in result.columns if c.name == "id") == \
        len(set(expected["live-ids"]))
