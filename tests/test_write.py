"""The write path (puffin_cli.analysis.write): specs, Parquet columns, DVs, copies, samples.

Sketch contents are checked against independent references: each value serialized with
``struct`` as Iceberg's Appendix D says, hashed with ``mmh3`` as NOTES.md says, then either the
4096 smallest distinct hashes kept (theta = the 4097th), or, where the two differ, Iceberg's
one-task Alpha sketch and union replayed value by value in plain Python.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import random
import struct
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import mmh3
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from helpers import SAMPLES

from puffin_cli import CREATED_BY
from puffin_cli.analysis.write import parquet as write_parquet
from puffin_cli.analysis.write.build import write_plan
from puffin_cli.analysis.write.parquet import expand_paths, iceberg_type_of, parquet_theta_blobs
from puffin_cli.analysis.write.plan import (
    JAVA_CANNOT_READ_LZ4,
    DvFromPositions,
    ThetaFromValues,
    WritePlan,
    dv_blob,
    theta_blob,
)
from puffin_cli.analysis.write.spec import load_spec
from puffin_cli.blobs.deletion_vector import decode_deletion_vector, iter_ranges
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

REPO = Path(__file__).resolve().parents[1]
MAX_THETA = 2**63 - 1
IO = FileIO()  # the environment's configuration, as the CLI without --io


def reference_sketch(serialized: list[bytes]) -> tuple[int, list[int]]:
    """(theta_long, retained hashes) of the deterministic Iceberg sketch of these bytes."""
    hashes = sorted({mmh3.hash64(v, seed=9001, signed=False)[0] >> 1 for v in serialized if v})
    if len(hashes) > 4096:
        return hashes[4096], hashes[:4096]
    return MAX_THETA, hashes


def reference_alpha_sketch(serialized: list[bytes], k: int = 4096) -> tuple[int, list[int]]:
    """(theta_long, retained hashes) of Iceberg's sketch of these bytes read as one Spark task
    in this order: an Alpha update sketch (each distinct hash accepted below theta after the
    first k lowers theta by k/(k+1)), then a union that keeps at most k hashes."""
    theta, seen = MAX_THETA, set()
    for value in serialized:
        h = mmh3.hash64(value, seed=9001, signed=False)[0] >> 1 if value else None
        if h is None or h in seen or h >= theta:
            continue
        if len(seen) >= k:
            theta = int(theta * (k / (k + 1.0)))
        seen.add(h)
    retained = sorted(h for h in seen if h < theta)
    if len(retained) > k:
        return retained[k], retained[:k]
    return theta, retained


def sketch_of(data: bytes) -> tuple[int, list[int]]:
    """(theta_long, hashes) read straight from compact serial-version-3 bytes."""
    pre_longs, count = data[0] & 0x3F, struct.unpack_from("<i", data, 8)[0]
    theta = struct.unpack_from("<q", data, 16)[0] if pre_longs == 3 else MAX_THETA
    return theta, list(struct.unpack_from(f"<{count}Q", data, 8 * pre_longs))


def blobs_of(path: Path) -> list[tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return [(b, reader.read_blob(b)) for b in reader.metadata.blobs]


def write_spec(tmp_path: Path, spec: dict[str, Any], name: str = "spec.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(spec), encoding="utf-8")
    return str(path)


# --------------------------------------------------------------------------------------------
# Iceberg Java's files, rebuilt


def test_iceberg_java_dvs_rebuilt_from_positions_are_byte_identical(tmp_path: Path) -> None:
    source = SAMPLES / "iceberg-java" / "dv-64bit.puffin"
    blobs = []
    with PuffinReader(source) as reader:
        created_by = reader.metadata.properties["created-by"]
        for meta in reader.metadata.blobs:
            dv = decode_deletion_vector(reader.read_blob(meta))
            blobs.append({"dv": {
                "referenced-data-file": meta.properties["referenced-data-file"],
                "positions": [list(r) for r in iter_ranges(dv)]}})
    spec = write_spec(tmp_path, {"properties": {"created-by": created_by}, "blobs": blobs})
    out = tmp_path / "out.puffin"
    write_plan(load_spec(spec, fileio=IO), str(out), fileio=IO)
    assert out.read_bytes() == source.read_bytes()


# --------------------------------------------------------------------------------------------
# Spec documents


def test_spec_defaults_are_iceberg_javas(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"raw bytes")
    spec = write_spec(tmp_path, {"blobs": [
        {"theta": {"iceberg-type": "int", "values": [1, 2, 2, None, 3]}, "fields": [7]},
        {"dv": {"referenced-data-file": "d.parquet", "positions": "5,1-3"}},
        {"type": "x-v1", "fields": [1, 2], "payload": {"file": "blob.bin"}},
    ]})
    out = tmp_path / "out.puffin"
    summary = write_plan(load_spec(spec, fileio=IO), str(out), fileio=IO)
    (theta, theta_data), (dv, _), (raw, raw_data) = blobs_of(out)
    assert (theta.type, theta.fields, theta.snapshot_id, theta.sequence_number) == \
        ("apache-datasketches-theta-v1", (7,), -1, -1)
    assert theta.compression_codec == "zstd"
    assert theta.properties == {"ndv": "3"}
    assert sketch_of(theta_data) == reference_sketch([struct.pack("<i", v) for v in (1, 2, 3)])
    assert (dv.type, dv.fields, dv.snapshot_id, dv.sequence_number, dv.compression_codec) == \
        ("deletion-vector-v1", (2147483645,), -1, -1, None)
    assert list(dv.properties.items()) == [("referenced-data-file", "d.parquet"),
                                           ("cardinality", "4")]
    assert (raw.type, raw.fields, raw.compression_codec, raw_data) == \
        ("x-v1", (1, 2), None, b"raw bytes")
    assert summary.properties == {"created-by": CREATED_BY}
    assert [(b.source, b.ndv, b.cardinality) for b in summary.blobs] == \
        [("theta", 3, None), ("dv", None, 4), ("payload", None, None)]
    assert summary.warnings == ()


def test_spec_file_settings_and_inline_payloads(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {
        "properties": {"a": "1"}, "created-by": None, "footer-compression": "lz4",
        "blobs": [
            {"type": "t", "fields": [], "payload": {"base64": "AAEC"}, "compression": "lz4",
             "snapshot-id": 9, "sequence-number": 8, "properties": {"p": "q"}},
            {"type": "u", "fields": [3], "payload": {"text": "héllo"}},
        ]})
    out = tmp_path / "out.puffin"
    plan = load_spec(spec, fileio=IO)
    assert plan.warnings() == [
        "the footer is LZ4-compressed: " + JAVA_CANNOT_READ_LZ4,
        "blob 0 is LZ4-compressed: " + JAVA_CANNOT_READ_LZ4]
    summary = write_plan(plan, str(out), fileio=IO)
    assert summary.footer_compressed
    with PuffinReader(out) as reader:
        assert reader.footer.compressed
        assert reader.metadata.properties == {"a": "1"}
    (first, first_data), (_, second_data) = blobs_of(out)
    assert (first.snapshot_id, first.sequence_number, first.compression_codec,
            first.properties, first_data) == (9, 8, "lz4", {"p": "q"}, b"\x00\x01\x02")
    assert second_data == "héllo".encode()


def test_compress_option_applies_to_blobs_that_name_none(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {"blobs": [
        {"theta": {"iceberg-type": "long", "values": [1]}, "fields": [1]},
        {"theta": {"iceberg-type": "long", "values": [1]}, "fields": [1],
         "compression": "zstd"},
        {"type": "t", "fields": [1], "payload": {"text": "x"}},
        {"dv": {"referenced-data-file": "f", "positions": [1]}},
    ]})
    plan = load_spec(spec, compress="none", fileio=IO)
    assert [b.codec for b in plan.blobs] == [None, "zstd", None, None]
    plan = load_spec(spec, compress="lz4", fileio=IO)
    assert [b.codec for b in plan.blobs] == ["lz4", "zstd", "lz4", None]


@pytest.mark.parametrize(("spec", "message"), [
    ([], "spec: expected an object, found a list"),
    ({"blob": []}, "spec: unknown key 'blob' (expected 'properties', 'created-by', "
     "'footer-compression', 'blobs')"),
    ({"blobs": {}}, "blobs: expected a list, found an object"),
    ({"footer-compression": "zstd"}, "footer-compression: the footer can only be "
     "LZ4-compressed (lz4 or none)"),
    ({"properties": {"a": 1}}, "properties.a: expected a string, found the number 1"),
    ({"blobs": [{"fields": [1]}]}, "blobs[0]: expected exactly one of 'payload', 'theta', "
     "'dv', 'copy', found none"),
    ({"blobs": [{"payload": {"text": ""}, "dv": {}}]}, "blobs[0]: expected exactly one of "
     "'payload', 'theta', 'dv', 'copy', found 'payload', 'dv'"),
    ({"blobs": [{"payload": {"text": ""}, "fields": [1]}]}, "blobs[0]: a payload blob needs "
     "'type' and 'fields'"),
    ({"blobs": [{"type": "t", "fields": [1], "payload": {"base64": "!!"}}]},
     "blobs[0].payload.base64: not valid base64 (Only base64 data is allowed)"),
    ({"blobs": [{"type": "t", "fields": ["1"], "payload": {"text": ""}}]},
     "blobs[0].fields[0]: expected an integer, found the string '1'"),
    ({"blobs": [{"type": "t", "fields": [1], "payload": {"file": "nope.bin"}}]},
     "blobs[0].payload.file: {dir}/nope.bin: no such file"),
    ({"blobs": [{"type": "t", "fields": [1], "payload": {"text": ""},
                 "compression": "gzip"}]},
     "blobs[0]: compression 'gzip' is not one of lz4, zstd, none"),
    ({"blobs": [{"theta": {"values": [1]}, "fields": [1]}]},
     "blobs[0].theta: 'iceberg-type' is required (e.g. \"long\", \"decimal(10,2)\")"),
    ({"blobs": [{"theta": {"iceberg-type": "long", "values": [1]}}]},
     "blobs[0]: 'fields' is required (the field ID of the column)"),
    ({"blobs": [{"theta": {"iceberg-type": "int", "values": [1, "x"]}, "fields": [1]}]},
     "blobs[0].theta.values[1]: 'x' is not a valid int: expected a decimal integer"),
    ({"blobs": [{"theta": {"iceberg-type": "int", "values": [2147483648]}, "fields": [1]}]},
     "blobs[0].theta.values[0]: '2147483648' is not a valid int: expected a value from "
     "-2147483648 to 2147483647"),
    ({"blobs": [{"theta": {"iceberg-type": "varchar", "values": []}, "fields": [1]}]},
     "blobs[0].theta.iceberg-type: unknown Iceberg type 'varchar' (expected one of boolean, "
     "int, long, float, double, date, time, timestamp, timestamptz, timestamp_ns, "
     "timestamptz_ns, string, uuid, binary, decimal(P,S), fixed[L])"),
    ({"blobs": [{"dv": {"positions": "1"}}]},
     "blobs[0].dv: 'referenced-data-file' is required"),
    ({"blobs": [{"dv": {"referenced-data-file": "f"}}]},
     "blobs[0].dv: expected 'positions' or 'positions-file'"),
    ({"blobs": [{"dv": {"referenced-data-file": "f", "positions": "3-1"}}]},
     "blobs[0].dv.positions: position list item 1: range 3-1 ends before it starts"),
    ({"blobs": [{"dv": {"referenced-data-file": "f", "positions": [[5, 4]]}}]},
     "blobs[0].dv.positions[0]: range [5, 4] ends before it starts"),
    ({"blobs": [{"dv": {"referenced-data-file": "f", "positions": [2**63]}}]},
     "blobs[0].dv.positions[0]: 9223372036854775808 is not from 0 to 9223372036854775807"),
    ({"blobs": [{"dv": {"referenced-data-file": "f", "positions": [1]},
                 "compression": "zstd"}]},
     "blobs[0].compression: a deletion vector is always written as Iceberg writes it (type "
     "deletion-vector-v1, fields [2147483645], ids -1, uncompressed)"),
    ({"blobs": [{"copy": {"file": "x.puffin"}}]}, "blobs[0].copy: expected 'file' and 'index'"),
    ({"blobs": [{"copy": {"file": "x", "index": 0}, "fields": [1]}]},
     "blobs[0]: a copied blob keeps its own metadata; 'copy' takes no other keys"),
])
def test_spec_errors_name_the_place(tmp_path: Path, spec: Any, message: str) -> None:
    path = write_spec(tmp_path, spec)
    with pytest.raises(PuffinError) as caught:
        load_spec(path, fileio=IO)
    assert caught.value.path == path
    assert caught.value.message == message.format(dir=tmp_path)
    assert caught.value.code == "spec.invalid"


def test_spec_not_json(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text('{"blobs": [}')
    with pytest.raises(PuffinError) as caught:
        load_spec(str(path), fileio=IO)
    assert str(caught.value) == (f"{path}: spec is not valid JSON: Expecting value at line 1 "
                                 "column 12")


def test_computed_property_cannot_be_set(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, {"blobs": [
        {"theta": {"iceberg-type": "long", "values": [1]}, "fields": [1],
         "properties": {"ndv": "5"}}]})
    with pytest.raises(PuffinError) as caught:
        write_plan(load_spec(spec, fileio=IO), str(tmp_path / "out.puffin"), fileio=IO)
    assert caught.value.message == ("blob 0: property 'ndv' is computed from the data; do not "
                                    "set it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json"]


# --------------------------------------------------------------------------------------------
# Theta from values


def test_values_file_and_inline_values_agree_with_the_reference(tmp_path: Path) -> None:
    values = [f"name-{i % 5000}" for i in range(12_000)] + ["", "é"]
    (tmp_path / "v.txt").write_text("\n".join(values) + "\n", encoding="utf-8")
    spec = write_spec(tmp_path, {"blobs": [
        {"theta": {"iceberg-type": "string", "values-file": "v.txt"}, "fields": [1],
         "compression": "none"},
        {"theta": {"iceberg-type": "string", "values": values}, "fields": [1],
         "compression": "none"}]})
    out = tmp_path / "out.puffin"
    write_plan(load_spec(spec, fileio=IO), str(out), fileio=IO)
    (meta, from_file), (_, inline) = blobs_of(out)
    assert from_file == inline
    theta, hashes = sketch_of(from_file)
    ref_theta, ref_hashes = reference_sketch([v.encode() for v in values])
    # one partition in order: Alpha theta may end below the union's 4097th hash
    assert theta <= ref_theta
    assert hashes == [h for h in ref_hashes if h < theta]
    assert meta.properties["ndv"] == str(int(len(hashes) * (2**63 / theta)))


def test_values_file_error_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "v.txt").write_text("2024-01-01\n2024-02-30\n")
    spec = write_spec(tmp_path, {"blobs": [
        {"theta": {"iceberg-type": "date", "values-file": "v.txt"}, "fields": [1]}]})
    with pytest.raises(PuffinError) as caught:
        write_plan(load_spec(spec, fileio=IO), str(tmp_path / "out.puffin"), fileio=IO)
    assert str(caught.value) == (f"{tmp_path}/v.txt: line 2: '2024-02-30' is not a valid date: "
                                 "day must be 01 to 29")
    assert not (tmp_path / "out.puffin").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.json", "v.txt"]


def test_uuid_as_string_hashes_the_text(tmp_path: Path) -> None:
    ids = [uuid.UUID(int=i * 7919 + 1) for i in range(50)]
    plan = WritePlan(tuple(
        theta_blob(ThetaFromValues(IcebergType("uuid"), values=tuple(ids),
                                   uuid_as_string=as_text), 1, codec=None)
        for as_text in (False, True)))
    out = tmp_path / "out.puffin"
    write_plan(plan, str(out), fileio=IO)
    (_, as_bytes), (_, as_text) = blobs_of(out)
    assert sketch_of(as_bytes) == reference_sketch([u.bytes for u in ids])
    assert sketch_of(as_text) == reference_sketch([str(u).encode() for u in ids])


# --------------------------------------------------------------------------------------------
# Theta from Parquet


@pytest.mark.parametrize(("arrow_type", "expected"), [
    (pa.bool_(), "boolean"), (pa.int8(), "int"), (pa.int16(), "int"), (pa.int32(), "int"),
    (pa.uint16(), "int"), (pa.uint32(), "long"), (pa.int64(), "long"),
    (pa.float32(), "float"), (pa.float64(), "double"),
    (pa.decimal128(38, 9), "decimal(38,9)"), (pa.decimal128(5, 0), "decimal(5,0)"),
    (pa.date32(), "date"), (pa.time64("us"), "time"), (pa.time32("ms"), "time"),
    (pa.timestamp("us"), "timestamp"), (pa.timestamp("us", tz="UTC"), "timestamptz"),
    (pa.timestamp("ms", tz="+01:00"), "timestamptz"), (pa.timestamp("ns"), "timestamp_ns"),
    (pa.timestamp("ns", tz="UTC"), "timestamptz_ns"),
    (pa.string(), "string"), (pa.large_string(), "string"),
    (pa.dictionary(pa.int32(), pa.string()), "string"),
    (pa.binary(), "binary"), (pa.large_binary(), "binary"), (pa.binary(7), "fixed[7]"),
    (pa.uuid(), "uuid"),
    (pa.list_(pa.int32()), None), (pa.struct([("a", pa.int32())]), None), (pa.uint64(), None),
])
def test_iceberg_type_of_arrow_types(arrow_type: pa.DataType, expected: str | None) -> None:
    found = iceberg_type_of(arrow_type)
    assert (None if found is None else str(found)) == expected


def _field(name: str, arrow_type: pa.DataType, field_id: int | None) -> pa.Field:
    metadata = None if field_id is None else {b"PARQUET:field_id": str(field_id).encode()}
    return pa.field(name, arrow_type, metadata=metadata)


def test_parquet_types_timestamps_and_decimals_read_from_parquet(tmp_path: Path) -> None:
    ts = [dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=i * 37)
          for i in range(100)]
    prices = [decimal.Decimal(i * 3 - 150) / 100 for i in range(100)]
    table = pa.table([pa.array(ts, pa.timestamp("us", tz="UTC")),
                      pa.array(prices, pa.decimal128(7, 2))],
                     schema=pa.schema([_field("ts", pa.timestamp("us", tz="UTC"), 4),
                                       _field("price", pa.decimal128(7, 2), 5)]))
    pq.write_table(table, tmp_path / "a.parquet")
    blobs = parquet_theta_blobs([str(tmp_path / "a.parquet")], fileio=IO)
    assert [(b.fields, str(b.source.iceberg_type)) for b in blobs  # type: ignore[union-attr]
            ] == [((4,), "timestamptz"), ((5,), "decimal(7,2)")]
    out = tmp_path / "out.puffin"
    write_plan(WritePlan(tuple(blobs)), str(out), fileio=IO)
    (_, ts_data), (_, price_data) = blobs_of(out)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    micros = [(t - epoch) // dt.timedelta(microseconds=1) for t in ts]
    assert sketch_of(ts_data) == reference_sketch([struct.pack("<q", m) for m in micros])
    unscaled = [int(p * 100) for p in prices]
    assert sketch_of(price_data) == reference_sketch(
        [u.to_bytes((u.bit_length() if u >= 0 else (~u).bit_length()) // 8 + 1, "big",
                    signed=True) for u in unscaled])


def test_parquet_many_files_batches_and_estimation_mode(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(write_parquet, "PARQUET_BATCH_ROWS", 1000)
    schema = pa.schema([_field("id", pa.int64(), 1), _field("v", pa.int32(), 2)])
    everything: list[int] = []
    for i in range(3):
        ids: list[int | None] = [*range(i * 7000, (i + 1) * 7000), None]
        everything += [x for x in ids if x is not None]
        table = pa.table([pa.array(ids, pa.int64()),
                          pa.array([None if x is None else x % 300 for x in ids], pa.int32())],
                         schema=schema)
        pq.write_table(table, tmp_path / f"part-{i}.parquet", row_group_size=2500)
    files = expand_paths(["part-*.parquet"], str(tmp_path), fileio=IO)
    assert [Path(f).name for f in files] == ["part-0.parquet", "part-1.parquet",
                                             "part-2.parquet"]
    out = tmp_path / "out.puffin"
    summary = write_plan(WritePlan(tuple(parquet_theta_blobs(files, fileio=IO))), str(out),
                         fileio=IO)
    (_, ids_data), (_, v_data) = blobs_of(out)
    theta, hashes = sketch_of(ids_data)
    assert theta < MAX_THETA and len(hashes) == 4096
    assert (theta, hashes) == reference_sketch([struct.pack("<q", x) for x in everything])
    assert sketch_of(v_data) == reference_sketch([struct.pack("<i", x) for x in range(300)])
    assert [b.ndv for b in summary.blobs] == [int(4096 * (2**63 / theta)), 300]


def test_parquet_sketch_is_icebergs_one_task_alpha_sketch(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Random longs for which Iceberg's Alpha sketch keeps fewer than 4096 hashes, so the
    # "4096 smallest" sketch differs: the files, read in order, must give Iceberg's.
    monkeypatch.setattr(write_parquet, "PARQUET_BATCH_ROWS", 1000)
    rng = random.Random(1)  # keeps 4,087 hashes
    values = [rng.randrange(-(2**63), 2**63) for _ in range(21000)]
    schema = pa.schema([_field("id", pa.int64(), 1)])
    for i in range(3):
        pq.write_table(pa.table([pa.array(values[i * 7000:(i + 1) * 7000], pa.int64())],
                                schema=schema), tmp_path / f"part-{i}.parquet")
    out = tmp_path / "out.puffin"
    files = expand_paths(["part-*.parquet"], str(tmp_path), fileio=IO)
    write_plan(WritePlan(tuple(parquet_theta_blobs(files, fileio=IO))), str(out), fileio=IO)
    serialized = [struct.pack("<q", x) for x in values]
    expected = reference_alpha_sketch(serialized)
    assert expected != reference_sketch(serialized)
    assert sketch_of(blobs_of(out)[0][1]) == expected


def test_parquet_schema_evolution_by_field_id(tmp_path: Path) -> None:
    old = pa.table([pa.array([1, 2, 3], pa.int32())],
                   schema=pa.schema([_field("qty", pa.int32(), 3)]))
    new = pa.table([pa.array([3, 4], pa.int64()), pa.array(["a", "b"])],
                   schema=pa.schema([_field("quantity", pa.int64(), 3),
                                     _field("note", pa.string(), 4)]))
    pq.write_table(old, tmp_path / "a.parquet")
    pq.write_table(new, tmp_path / "b.parquet")
    files = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    with pytest.raises(PuffinError) as caught:
        parquet_theta_blobs(files, columns=["note"], fileio=IO)
    assert caught.value.message == (f"no column 'note' in {files[0]} (columns: qty)")
    (blob,) = parquet_theta_blobs(files, fileio=IO)
    assert str(blob.source.iceberg_type) == "long"  # type: ignore[union-attr]
    out = tmp_path / "out.puffin"
    write_plan(WritePlan((blob,)), str(out), fileio=IO)
    ((_, data),) = blobs_of(out)
    assert sketch_of(data) == reference_sketch([struct.pack("<q", x) for x in (1, 2, 3, 4)])


def test_parquet_field_ids(tmp_path: Path) -> None:
    table = pa.table({"a": pa.array([1, 2]), "b": pa.array(["x", "y"])})
    pq.write_table(table, tmp_path / "plain.parquet")
    files = [str(tmp_path / "plain.parquet")]
    with pytest.raises(PuffinError) as caught:
        parquet_theta_blobs(files, fileio=IO)
    assert caught.value.message == (
        f"column 'a' in {files[0]} has no field ID in its Parquet schema (PARQUET:field_id), "
        "as files not written by Iceberg usually have: name the Iceberg table they belong to "
        "with --table PATH (field IDs by column name from its schema), or give --field-id a=ID "
        "(repeatable) for each such column")
    assert [b.fields for b in parquet_theta_blobs(files, table_ids={"a": 7, "b": 8},
                                                  fileio=IO)] == [(7,), (8,)]
    with pytest.raises(PuffinError) as caught:
        parquet_theta_blobs(files, columns=["b"], field_ids={"a": 1}, fileio=IO)
    assert caught.value.message == ("--field-id a=...: no column 'a' is sketched (columns: b)")
    blobs = parquet_theta_blobs(files, field_ids={"a": 10, "b": 11}, snapshot_id=5,
                                sequence_number=6, codec=None, fileio=IO)
    assert [(b.fields, b.snapshot_id, b.sequence_number, b.codec) for b in blobs] == \
        [((10,), 5, 6, None), ((11,), 5, 6, None)]


def test_parquet_column_without_iceberg_type(tmp_path: Path) -> None:
    table = pa.table({"tags": pa.array([[1], [2]])})
    pq.write_table(table, tmp_path / "n.parquet")
    with pytest.raises(PuffinError) as caught:
        parquet_theta_blobs([str(tmp_path / "n.parquet")], columns=["tags"], fileio=IO)
    assert caught.value.message == (f"column 'tags' in {tmp_path}/n.parquet is list<element: "
                                    "int64>, which has no Iceberg primitive type to sketch")
    with pytest.raises(PuffinError) as caught:
        parquet_theta_blobs([str(tmp_path / "n.parquet")], fileio=IO)
    assert caught.value.message == (f"{tmp_path}/n.parquet has no top-level column of a "
                                    "primitive type to sketch")


def test_parquet_missing_files(tmp_path: Path) -> None:
    with pytest.raises(PuffinError) as caught:
        expand_paths(["*.parquet"], str(tmp_path), fileio=IO)
    assert caught.value.message == "*.parquet: no file matches this pattern"
    with pytest.raises(PuffinError) as caught:
        expand_paths(["x.parquet"], str(tmp_path), fileio=IO)
    assert caught.value.message == f"{tmp_path}/x.parquet: no such file"


def test_parquet_values_match_values_file_for_every_type(tmp_path: Path) -> None:
    """The same values through Parquet and through a values file give the same sketch bytes
    (exact mode, where one partition and the union agree)."""
    n = 200
    columns: dict[str, tuple[pa.Array, str, list[str]]] = {}

    def add(name: str, array: pa.Array, type_name: str, text: list[str]) -> None:
        columns[name] = (array, type_name, text)

    add("b", pa.array([i % 3 == 0 for i in range(n)]), "boolean",
        ["true" if i % 3 == 0 else "false" for i in range(n)])
    add("i", pa.array([i - 100 for i in range(n)], pa.int16()), "int",
        [str(i - 100) for i in range(n)])
    floats = np.arange(n, dtype=np.float32) / np.float32(3)
    add("f", pa.array(floats), "float", [repr(float(v)) for v in floats])
    add("d", pa.array([i / 7 for i in range(n)]), "double", [repr(i / 7) for i in range(n)])
    days = [dt.date(1969, 12, 1) + dt.timedelta(days=i) for i in range(n)]
    add("day", pa.array(days), "date", [d.isoformat() for d in days])
    times = [dt.time(i % 24, i % 60, 0, i * 11) for i in range(n)]
    add("t", pa.array(times, pa.time64("us")), "time", [t.isoformat() for t in times])
    stamps = [dt.datetime(2001, 2, 3) + dt.timedelta(milliseconds=i * 1501) for i in range(n)]
    add("ts", pa.array(stamps, pa.timestamp("ms")), "timestamp",
        [s.isoformat() for s in stamps])
    add("s", pa.array([f"ß{i}" for i in range(n)]), "string", [f"ß{i}" for i in range(n)])
    ids = [uuid.UUID(int=(i + 1) * 2**100 + i) for i in range(n)]
    add("u", pa.array([u.bytes for u in ids], pa.uuid()), "uuid", [str(u) for u in ids])
    add("fx", pa.array([bytes([i % 256, 9]) for i in range(n)], pa.binary(2)), "fixed[2]",
        [bytes([i % 256, 9]).hex() for i in range(n)])
    add("bin", pa.array([bytes(i % 4) + b"z" for i in range(n)]), "binary",
        [(bytes(i % 4) + b"z").hex() for i in range(n)])
    schema = pa.schema([_field(k, a.type, i + 1) for i, (k, (a, _, _)) in
                        enumerate(columns.items())])
    table = pa.Table.from_arrays([a for a, _, _ in columns.values()], schema=schema)
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=64)
    blobs = []
    for i, (name, (_, type_name, text)) in enumerate(columns.items()):
        (tmp_path / f"{name}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
        blobs.append({"theta": {"iceberg-type": type_name, "values-file": f"{name}.txt"},
                      "fields": [i + 1]})
    blobs.append({"theta": {"parquet": "t.parquet"}})
    out = tmp_path / "out.puffin"
    write_plan(load_spec(write_spec(tmp_path, {"blobs": blobs}), fileio=IO), str(out),
               fileio=IO)
    written = blobs_of(out)
    from_files, from_parquet = written[:len(columns)], written[len(columns):]
    assert [m.fields for m, _ in from_parquet] == [m.fields for m, _ in from_files]
    for (meta, expected), (_, found) in zip(from_files, from_parquet, strict=True):
        assert found == expected, meta.fields


# --------------------------------------------------------------------------------------------
# Deletion vectors


def test_dv_from_ranges_and_positions_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("7\n1000-1999\n\n2\n")
    (tmp_path / "b.txt").write_text("\n".join(str(p) for p in range(5, 100_000, 3)) + "\n")
    source = DvFromPositions("data.parquet", ((2**40, 2**40 + 9), (2, 2)),
                             (str(tmp_path / "a.txt"), str(tmp_path / "b.txt")))
    out = tmp_path / "out.puffin"
    summary = write_plan(WritePlan((dv_blob(source),)), str(out), fileio=IO)
    ((meta, data),) = blobs_of(out)
    dv = decode_deletion_vector(data)
    expected = {2, 7, *range(1000, 2000), *range(5, 100_000, 3), *range(2**40, 2**40 + 10)}
    assert set(dv.bitmap) == expected
    assert summary.blobs[0].cardinality == len(expected)
    assert meta.properties == {"referenced-data-file": "data.parquet",
                               "cardinality": str(len(expected))}


def test_dv_without_positions_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("\n")
    source = DvFromPositions("f.parquet", (), (str(tmp_path / "empty.txt"),))
    with pytest.raises(PuffinError) as caught:
        write_plan(WritePlan((dv_blob(source),)), str(tmp_path / "out.puffin"), fileio=IO)
    assert caught.value.message == "blob 0: deletion vector for f.parquet has no positions"


def test_positions_file_error_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_text("1\n2-x\n")
    source = DvFromPositions("f.parquet", (), (str(tmp_path / "p.txt"),))
    with pytest.raises(PuffinError) as caught:
        write_plan(WritePlan((dv_blob(source),)), str(tmp_path / "out.puffin"), fileio=IO)
    assert str(caught.value) == f"{tmp_path}/p.txt: line 2: '2-x' is not a position or a " \
        "range START-END"


# --------------------------------------------------------------------------------------------
# Copies, overwriting


def test_copy_keeps_stored_bytes_and_metadata(tmp_path: Path) -> None:
    source = SAMPLES / "iceberg-java" / "multi-blob-mixed.puffin"
    spec = write_spec(tmp_path, {"blobs": [{"copy": {"file": str(source), "index": i}}
                                           for i in (5, 1, 4)]})
    out = tmp_path / "out.puffin"
    summary = write_plan(load_spec(spec, fileio=IO), str(out), fileio=IO)
    with PuffinReader(source) as original, PuffinReader(out) as copy:
        for index, (i, meta) in enumerate(zip((5, 1, 4), copy.metadata.blobs, strict=True)):
            was = original.metadata.blobs[i]
            assert copy.read_raw(meta) == original.read_raw(was)
            assert (meta.type, meta.fields, meta.snapshot_id, meta.sequence_number,
                    meta.compression_codec, meta.properties) == \
                (was.type, was.fields, was.snapshot_id, was.sequence_number,
                 was.compression_codec, was.properties)
            assert summary.blobs[index].source == "copy"


def test_copy_of_a_missing_blob(tmp_path: Path) -> None:
    source = SAMPLES / "public" / "empty-puffin-uncompressed.bin"
    spec = write_spec(tmp_path, {"blobs": [{"copy": {"file": str(source), "index": 0}}]})
    with pytest.raises(PuffinError) as caught:
        write_plan(load_spec(spec, fileio=IO), str(tmp_path / "out.puffin"), fileio=IO)
    assert str(caught.value) == f"{source}: no blob 0: the file has 0 blobs"


def test_existing_output_needs_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "out.puffin"
    out.write_bytes(b"keep")
    with pytest.raises(PuffinError) as caught:
        write_plan(WritePlan(), str(out), fileio=IO)
    assert str(caught.value) == f"{out}: exists; use --force to overwrite it"
    assert out.read_bytes() == b"keep"
    write_plan(WritePlan(), str(out), overwrite=True, fileio=IO)
    assert out.read_bytes()[:4] == b"PFA1"


# --------------------------------------------------------------------------------------------
# samples/


def test_samples_regenerate_byte_for_byte(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "samples" / "generate.py"),
                           str(tmp_path)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["deletion-vectors.puffin", "empty.puffin", "lz4-footer.puffin",
                     "stats.puffin"]
    for name in names:
        assert (tmp_path / name).read_bytes() == (REPO / "samples" / name).read_bytes(), name


def test_samples_hold_what_the_readme_promises() -> None:
    from puffin_cli.analysis.inspection import inspect_file

    stats = inspect_file(REPO / "samples" / "stats.puffin", fileio=FileIO())
    assert len(stats.blobs) >= 4
    assert all(b.metadata.compression_codec == "zstd" for b in stats.blobs)
    assert any(not b.summary.exact for b in stats.blobs)  # type: ignore[union-attr]
    dvs = inspect_file(REPO / "samples" / "deletion-vectors.puffin", fileio=FileIO())
    summaries = [b.summary for b in dvs.blobs]
    assert any(s.max >= 2**32 for s in summaries)  # type: ignore[union-attr]
    big = max(summaries, key=lambda s: s.cardinality)  # type: ignore[union-attr]
    assert big.cardinality >= 1_000_000  # type: ignore[union-attr]
    assert big.bitmap_containers and big.array_containers and big.run_containers  # type: ignore[union-attr]
    assert os.path.getsize(REPO / "samples" / "deletion-vectors.puffin") < 64 * 1024
    lz4 = inspect_file(REPO / "samples" / "lz4-footer.puffin", fileio=FileIO())
    assert lz4.footer.compressed and lz4.blobs
    assert inspect_file(REPO / "samples" / "empty.puffin", fileio=FileIO()).blobs == ()


def test_parquet_uuid_as_string(tmp_path: Path) -> None:
    ids = [uuid.UUID(int=i * 2**64 + 3) for i in range(40)]
    schema = pa.schema([_field("u", pa.uuid(), 9)])
    pq.write_table(pa.table([pa.array([u.bytes for u in ids], pa.uuid())], schema=schema),
                   tmp_path / "u.parquet")
    files = [str(tmp_path / "u.parquet")]
    plan = WritePlan((*parquet_theta_blobs(files, codec=None, fileio=IO),
                      *parquet_theta_blobs(files, uuid_as_string=True, codec=None, fileio=IO)))
    write_plan(plan, str(tmp_path / "out.puffin"), fileio=IO)
    (_, as_bytes), (_, as_text) = blobs_of(tmp_path / "out.puffin")
    assert sketch_of(as_bytes) == reference_sketch([u.bytes for u in ids])
    assert sketch_of(as_text) == reference_sketch([str(u).encode() for u in ids])
