"""The columnar decode of big manifests (polars' Avro reader, checked column by column) gives
exactly the entries the record-by-record read gives, and leaves to that read every container it
cannot decode exactly: unusual types, values the checked read has to name, partition types whose
Python values could differ."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puffin_cli.analysis.table import manifests
from puffin_cli.analysis.table.manifests import ManifestFile, ManifestReader
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO


def _map(name: str, value: str) -> dict[str, Any]:
    return {"type": ["null", {"type": "array", "logicalType": "map", "items": {
        "type": "record", "name": name, "fields": [
            {"name": "key", "type": "int"}, {"name": "value", "type": value}]}}],
        "default": None}


def _schema(partition: list[dict[str, Any]]) -> dict[str, Any]:
    """A manifest entry schema as Iceberg Java writes it (v3, with metrics)."""
    return {"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int"},
        {"name": "snapshot_id", "type": ["null", "long"], "default": None},
        {"name": "sequence_number", "type": ["null", "long"], "default": None},
        {"name": "file_sequence_number", "type": ["null", "long"], "default": None},
        {"name": "data_file", "type": {"type": "record", "name": "r2", "fields": [
            {"name": "content", "type": "int"},
            {"name": "file_path", "type": "string"},
            {"name": "file_format", "type": "string"},
            {"name": "partition", "type": {"type": "record", "name": "r102",
                                           "fields": partition}},
            {"name": "record_count", "type": "long"},
            {"name": "file_size_in_bytes", "type": "long"},
            {"name": "value_counts", **_map("k119_v120", "long")},
            {"name": "null_value_counts", **_map("k121_v122", "long")},
            {"name": "lower_bounds", **_map("k126_v127", "bytes")},
            {"name": "upper_bounds", **_map("k129_v130", "bytes")},
            {"name": "split_offsets", "type": ["null", {"type": "array", "items": "long"}],
             "default": None},
            {"name": "equality_ids", "type": ["null", {"type": "array", "items": "int"}],
             "default": None},
            {"name": "referenced_data_file", "type": ["null", "string"], "default": None},
            {"name": "content_offset", "type": ["null", "long"], "default": None},
            {"name": "content_size_in_bytes", "type": ["null", "long"], "default": None},
        ]}},
    ]}


PARTITION = [
    {"name": "id_bucket", "type": ["null", "int"], "default": None},
    {"name": "name", "type": ["null", "string"], "default": None},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
    {"name": "big", "type": ["null", "long"], "default": None},
    {"name": "flag", "type": ["null", "boolean"], "default": None},
    {"name": "ratio", "type": ["null", "double"], "default": None},
]


def _entry(i: int, **data: Any) -> dict[str, Any]:
    status = data.pop("status", 1)
    sequence = data.pop("sequence_number", None)
    snapshot = data.pop("snapshot_id", None)
    fields = {
        "content": 0, "file_path": f"s3://b/t/data/f-{i}.parquet", "file_format": "PARQUET",
        "partition": {"id_bucket": i % 7, "name": f"n{i % 3}",
                      "day": datetime.date(2024, 1, 1 + i % 28), "big": 1 << 40,
                      "flag": i % 2 == 0, "ratio": i / 8},
        "record_count": 1000 + i, "file_size_in_bytes": 10_000 + i,
        "value_counts": [{"key": 1, "value": i}], "null_value_counts": None,
        "lower_bounds": [{"key": 1, "value": i.to_bytes(8, "little")}],
        "upper_bounds": [], "split_offsets": [4, 4 + i], "equality_ids": None,
        "referenced_data_file": None, "content_offset": None, "content_size_in_bytes": None}
    fields.update(data)
    return {"status": status, "snapshot_id": snapshot, "sequence_number": sequence,
            "file_sequence_number": None, "data_file": fields}


def _write(path: Path, records: list[dict[str, Any]],
           partition: list[dict[str, Any]] | None = None) -> ManifestFile:
    import fastavro

    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(_schema(PARTITION if partition is None
                                                           else partition)),
                        records, codec="deflate", sync_interval=2_000)
    return ManifestFile(str(path), 0, 3, 9, 77)


def _read(manifest: ManifestFile, monkeypatch: pytest.MonkeyPatch, *, columnar: bool
          ) -> tuple[list[manifests.ContentFile], int]:
    """The live entries read one way or the other, and how many containers the columnar
    decode gave."""
    used = []
    real = manifests._entries_of

    def counted(*args: Any) -> list[manifests.ContentFile]:
        used.append(1)
        return real(*args)

    monkeypatch.setattr(manifests, "COLUMNAR_RECORDS", 0 if columnar else 1 << 60)
    monkeypatch.setattr(manifests, "_entries_of", counted)
    reader = ManifestReader(_Identity(), FileIO({}))
    return list(reader.live_files(manifest)), len(used)


class _Identity:
    def resolve(self, location: str) -> str:
        return location


def _same_both_ways(manifest: ManifestFile, monkeypatch: pytest.MonkeyPatch
                    ) -> tuple[list[manifests.ContentFile], int]:
    by_record, none = _read(manifest, monkeypatch, columnar=False)
    by_column, used = _read(manifest, monkeypatch, columnar=True)
    assert none == 0
    assert by_column == by_record
    assert repr(by_column) == repr(by_record)  # the same Python types, not only equal values
    return by_column, used


def test_entries_as_iceberg_writes_them_are_decoded_by_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [_entry(i) for i in range(300)]
    records[5] = _entry(5, status=2)  # DELETED: not live
    records[6] = _entry(6, sequence_number=4, snapshot_id=12)  # numbers of its own
    records[7] = _entry(7, partition={k: None for k in records[7]["data_file"]["partition"]})
    records[8] = _entry(8, content=1, file_format="PUFFIN", referenced_data_file="s3://b/x",
                        content_offset=4, content_size_in_bytes=40, split_offsets=None,
                        value_counts=None, lower_bounds=None, upper_bounds=None)
    records[9] = _entry(9, content=2, equality_ids=[1, 3], split_offsets=[])
    monkeypatch.setattr(manifests, "BATCH_BYTES", 8_000)  # containers of a few blocks
    entries, used = _same_both_ways(_write(tmp_path / "m.avro", records), monkeypatch)
    assert used > 1  # several containers, each decoded by columns
    assert len(entries) == 299
    by_path = {e.path: e for e in entries}
    assert by_path["s3://b/t/data/f-6.parquet"].sequence_number == 4
    assert by_path["s3://b/t/data/f-0.parquet"].sequence_number == 9  # inherited
    assert by_path["s3://b/t/data/f-0.parquet"].snapshot_id == 77
    assert by_path["s3://b/t/data/f-8.parquet"].is_dv
    assert by_path["s3://b/t/data/f-9.parquet"].equality_ids == (1, 3)
    assert by_path["s3://b/t/data/f-1.parquet"].partition["day"] == datetime.date(2024, 1, 2)


@pytest.mark.parametrize("change", [
    {"record_count": -1},
    {"file_path": "s3://b/t/data/caf\u00e9.parquet"},
    {"file_path": "s3://b/t/data/a\x00b.parquet"},
    {"split_offsets": [4, None]},
    {"value_counts": [{"key": 1, "value": None}]},
], ids=["negative", "non-ascii", "nul", "null-in-list", "null-in-map"])
def test_a_container_with_a_value_to_check_is_read_by_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict[str, Any]) -> None:
    """The whole container goes the record-by-record way, which reads or names the value
    exactly as it always has."""
    import fastavro

    schema = _schema(PARTITION)
    if None in change.get("split_offsets", ()) or (change.get("value_counts") or [{}])[0].get(
            "value", 0) is None:  # a null inside needs a nullable item type to be written
        for field in schema["fields"][4]["type"]["fields"]:
            if field["name"] == "split_offsets":
                field["type"] = ["null", {"type": "array", "items": ["null", "long"]}]
            if field["name"] == "value_counts":
                field["type"][1]["items"]["fields"][1]["type"] = ["null", "long"]
    records = [_entry(i) for i in range(50)]
    records[3] = _entry(3, **change)
    path = tmp_path / "m.avro"
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), records, codec="deflate")
    manifest = ManifestFile(str(path), 0, 3, 9, 77)
    outcomes = []
    for columnar in (False, True):
        try:
            outcomes.append(_read(manifest, monkeypatch, columnar=columnar))
        except PuffinError as exc:
            outcomes.append((exc.message, 0))
    assert outcomes[0] == outcomes[1]
    assert outcomes[1][1] == 0


@pytest.mark.parametrize("partition", [
    [{"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}]}],
    [{"name": "amount", "type": ["null", {"type": "fixed", "name": "f", "size": 4,
                                          "logicalType": "decimal", "precision": 9,
                                          "scale": 2}]}],
    [{"name": "raw", "type": ["null", "bytes"]}],
    [{"name": "u", "type": ["null", {"type": "fixed", "name": "u16", "size": 16}]}],
], ids=["timestamp", "decimal", "binary", "fixed"])
def test_partition_types_polars_could_give_otherwise_are_read_by_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, partition: list[dict[str, Any]]
        ) -> None:
    values = {"ts": 1_700_000_000_000_000, "amount": b"\x00\x00\x01\x00", "raw": b"\x01\x02",
              "u": bytes(range(16))}
    name = partition[0]["name"]
    value: Any = values[name]
    if name == "ts":
        value = datetime.datetime.fromtimestamp(1_700_000_000, datetime.UTC)
    elif name == "amount":
        import decimal

        value = decimal.Decimal("2.56")
    records = [_entry(i, partition={name: value}) for i in range(50)]
    entries, used = _same_both_ways(_write(tmp_path / "m.avro", records, partition),
                                    monkeypatch)
    assert used == 0 and len(entries) == 50


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1 << 40), st.booleans(),
                          st.none() | st.integers(0, 30), st.none() | st.text(max_size=4)),
                min_size=1, max_size=60))
def test_any_plain_entries_read_the_same_both_ways(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        rows: list[tuple[int, int, bool, int | None, str | None]]) -> None:
    records = []
    for i, (status, count, flag, sequence, name) in enumerate(rows):
        record = _entry(i, status=status, record_count=count, sequence_number=sequence)
        record["data_file"]["partition"].update(flag=flag, name=name)
        records.append(record)
    path = tmp_path_factory.mktemp("m") / "m.avro"
    _same_both_ways(_write(path, records), monkeypatch)
