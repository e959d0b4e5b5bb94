"""puffin_cli.analysis.stats: one Spark task's reading, deletes and sketches."""

from __future__ import annotations

import datetime as dt
import pickle
import struct
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap64

from puffin_cli.analysis.stats.data_files import SliceSpec, read_batches
from puffin_cli.analysis.stats.files import (
    Column,
    DeletionVectorRef,
    EqualityDeleteFile,
    PositionDeleteFile,
)
from puffin_cli.analysis.stats.plan import parse_name_mapping
from puffin_cli.analysis.stats.sketch_task import TaskSpec, sketch_task
from puffin_cli.analysis.table.metadata import TableMetadata
from puffin_cli.blobs.arrow_values import serialize_column
from puffin_cli.blobs.deletion_vector import encode_deletion_vector
from puffin_cli.blobs.iceberg_values import IcebergType, serialize_values
from puffin_cli.blobs.theta import alpha_sketch, hash_values
from puffin_cli.errors import PuffinError


def _column(field_id: int, type_text: str, name: str | None = None) -> Column:
    return Column(field_id, name or f"c{field_id}", IcebergType.parse(type_text))


_LONG_1 = _column(1, "long")


def _write_parquet(path: Path, columns: dict[int, pa.Array], **options: Any) -> str:
    fields = [pa.field(f"col_{fid}", array.type,
                       metadata={b"PARQUET:field_id": str(fid).encode()})
              for fid, array in columns.items()]
    pq.write_table(pa.Table.from_arrays(list(columns.values()), schema=pa.schema(fields)),
                   path, **options)
    return str(path)


def _whole(local: str, fmt: str = "parquet", **fields: Any) -> SliceSpec:
    return SliceSpec(local, local, fmt, 0, Path(local).stat().st_size, **fields)


def _expected(type_text: str, values: list[Any]) -> np.ndarray[Any, Any]:
    return hash_values(serialize_values(IcebergType.parse(type_text),
                                        [v for v in values if v is not None]))


def _hashes_of(local: str, fmt: str, column: Column, *, uuid_as_string: bool = False,
               **fields: Any) -> np.ndarray[Any, Any]:
    parts = []
    for _, rows, arrays in read_batches(_whole(local, fmt, **fields), [column]):
        serialized = serialize_column(column.type, arrays.get(column.field_id), rows,
                                      uuid_as_string)
        parts.append(serialized.hashes(np.ones(rows, dtype=bool)))
    return np.concatenate(parts)


_MICROS = 1_000_000
_DECIMALS_38 = [Decimal("-12345678901234567890123456.7890123456"), Decimal("0E-10"),
                Decimal("-1E-10"), Decimal("1.27E-8"), Decimal("1.28E-8"),
                Decimal("-1.28E-8"), Decimal("-1.29E-8"), None,
                Decimal("9999999999999999999999999999.9999999999"),
                Decimal("-9999999999999999999999999999.9999999999")]
# precision <= 18: unscaled longs, every byte length from 1 to 8 at both ends of it
_DECIMALS_18 = [Decimal(sign * v).scaleb(-3) for v in (
    0, 1, 127, 128, 129, 255, 256, 32767, 32768, 32769, 2**23 - 1, 2**23, 2**31 - 1, 2**31,
    2**39, 2**47 - 1, 2**47, 2**55 - 1, 2**55, 10**18 - 1) for sign in (1, -1)] + [None]
_UUIDS = [uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), None,
          uuid.UUID("00000000-0000-0000-0000-0000000000ff")]

# (iceberg type, arrow array written to the file, the values as Iceberg sees them)
_CASES: list[tuple[str, pa.Array, list[Any]]] = [
    ("boolean", pa.array([True, None, False, True]), [True, None, False, True]),
    ("int", pa.array([1, None, -5, 2**31 - 1], pa.int32()), [1, None, -5, 2**31 - 1]),
    ("long", pa.array([1, None, -(2**31)], pa.int32()), [1, None, -(2**31)]),  # promoted
    ("long", pa.array([2**63 - 1, -7, None], pa.int64()), [2**63 - 1, -7, None]),
    ("float", pa.array([1.5, -0.0, 0.0, None, float("inf")], pa.float32()),
     [1.5, -0.0, 0.0, None, float("inf")]),
    ("double", pa.array([1.1, -0.0, None, 0.0], pa.float64()), [1.1, -0.0, None, 0.0]),
    ("double", pa.array([0.1, -0.0, None], pa.float32()),  # promoted: float's exact value
     [float(np.float32(0.1)), -0.0, None]),
    ("decimal(38,10)", pa.array(_DECIMALS_38, pa.decimal128(38, 10)), _DECIMALS_38),
    ("decimal(18,3)", pa.array(_DECIMALS_18, pa.decimal128(18, 3)), _DECIMALS_18),
    ("decimal(12,2)", pa.array([Decimal("-1.28"), Decimal("99.99"), None],
                               pa.decimal128(9, 2)),  # promoted precision
     [Decimal("-1.28"), Decimal("99.99"), None]),
    ("date", pa.array([dt.date(2024, 1, 31), None, dt.date(1900, 1, 1)]),
     [dt.date(2024, 1, 31), None, dt.date(1900, 1, 1)]),
    ("time", pa.array([dt.time(12, 34, 56, 789012), None], pa.time64("us")),
     [dt.time(12, 34, 56, 789012), None]),
    ("timestamp", pa.array([1_700_000_000_123_456, -1, None], pa.timestamp("us")),
     [1_700_000_000_123_456, -1, None]),
    ("timestamptz", pa.array([1_700_000_000_123_456, None], pa.timestamp("us", "UTC")),
     [1_700_000_000_123_456, None]),
    ("timestamp", pa.array([1_700_000_000_123, -1_001], pa.timestamp("ms")),  # MILLIS
     [1_700_000_000_123_000, -1_001_000]),
    ("timestamp_ns", pa.array([1_700_000_000_123_456_789, -1, None], pa.timestamp("ns")),
     [1_700_000_000_123_456_789, -1, None]),
    ("timestamptz_ns", pa.array([1_700_000_000_123_456, -1], pa.timestamp("us", "UTC")),
     [1_700_000_000_123_456_000, -1_000]),  # micros widened to nanos
    ("string", pa.array(["a", "", None, "żółw", "x" * 40]), ["a", "", None, "żółw", "x" * 40]),
    ("binary", pa.array([b"\x00", b"", None, bytes(range(33))]),
     [b"\x00", b"", None, bytes(range(33))]),
    ("fixed[3]", pa.array([b"abc", None, b"\x00\x00\x00"], pa.binary(3)),
     [b"abc", None, b"\x00\x00\x00"]),
    ("uuid", pa.array([u.bytes if u else None for u in _UUIDS], pa.binary(16)), _UUIDS),
]


@pytest.mark.parametrize(("type_text", "array", "values"), _CASES,
                         ids=[f"{c[0]}-{c[1].type}" for c in _CASES])
def test_parquet_values_hash_as_iceberg_serializes_them(
        tmp_path: Path, type_text: str, array: pa.Array, values: list[Any]) -> None:
    local = _write_parquet(tmp_path / "d.parquet", {3: array})
    got = _hashes_of(local, "parquet", _column(3, type_text))
    assert got.tolist() == _expected(type_text, values).tolist()


def test_float_nan_payloads_are_kept(tmp_path: Path) -> None:
    bits32 = np.array([0x7FC00001, 0x7FC00000, 0xFFC00000], dtype=np.uint32)
    bits64 = np.array([0x7FF8000000000001, 0x7FF8000000000000, 0x8000000000000000],
                      dtype=np.uint64)
    local = _write_parquet(tmp_path / "d.parquet", {1: pa.array(bits32.view(np.float32)),
                                                   2: pa.array(bits64.view(np.float64))})
    assert _hashes_of(local, "parquet", _column(1, "float")).tolist() == hash_values(
        [struct.pack("<I", b) for b in bits32.tolist()]).tolist()
    assert _hashes_of(local, "parquet", _column(2, "double")).tolist() == hash_values(
        [struct.pack("<Q", b) for b in bits64.tolist()]).tolist()


def test_uuid_as_string_hashes_the_canonical_text(tmp_path: Path) -> None:
    array = pa.array([u.bytes if u else None for u in _UUIDS], pa.binary(16))
    local = _write_parquet(tmp_path / "d.parquet", {1: array})
    got = _hashes_of(local, "parquet", _column(1, "uuid"), uuid_as_string=True)
    assert got.tolist() == hash_values([str(u).encode() for u in _UUIDS if u]).tolist()


def test_orc_values_by_names_and_nanosecond_timestamps(tmp_path: Path) -> None:
    local = str(tmp_path / "d.orc")
    ts = pa.array([1_700_000_000_123_456_789, -1, None], pa.timestamp("ns"))
    _write_orc(local, {7: ("a", pa.array([1, None, 3], pa.int32())), 8: ("t", ts),
                       9: ("d", pa.array(_DECIMALS_38[:3], pa.decimal128(38, 10)))})
    assert _hashes_of(local, "orc", _column(7, "long")).tolist() == \
        _expected("long", [1, 3]).tolist()
    assert _hashes_of(local, "orc", _column(8, "timestamp")).tolist() == \
        _expected("timestamp", [1_700_000_000_123_456, -1]).tolist()  # floor to micros
    assert _hashes_of(local, "orc", _column(9, "decimal(38,10)")).tolist() \
        == _expected("decimal(38,10)", _DECIMALS_38[:3]).tolist()


def _write_orc(local: str, columns: dict[int, tuple[str, pa.Array]], **options: Any) -> None:
    """An ORC file as Iceberg writes one: each column's field ID in its ``iceberg.id`` type
    attribute (pyarrow writes field metadata as ORC type attributes)."""
    schema = pa.schema([pa.field(name, array.type, metadata={"iceberg.id": str(field_id)})
                        for field_id, (name, array) in columns.items()])
    po.write_table(pa.table([array for _, array in columns.values()], schema=schema), local,
                   **options)


def test_orc_columns_are_matched_by_their_iceberg_id_attributes(tmp_path: Path) -> None:
    """The IDs come from the file itself: a column renamed in the table since (its name in
    the file is the old one) is still found, and one with another ID is not."""
    local = str(tmp_path / "d.orc")
    _write_orc(local, {3: ("old_name", pa.array([5, 6], pa.int64())),
                       4: ("other", pa.array([7, 8], pa.int64()))})
    assert _hashes_of(local, "orc", _column(3, "long")).tolist() == \
        _expected("long", [5, 6]).tolist()
    assert _hashes_of(local, "orc", _column(5, "long")).tolist() == []


def test_an_orc_iceberg_id_that_is_no_number_is_one_clear_error(tmp_path: Path) -> None:
    local = str(tmp_path / "bad.orc")
    schema = pa.schema([pa.field("a", pa.int64(), metadata={"iceberg.id": "seven"})])
    po.write_table(pa.table([pa.array([1], pa.int64())], schema=schema), local)
    with pytest.raises(PuffinError) as err:
        _hashes_of(local, "orc", _column(7, "long"))
    assert err.value.code == "stats.read"
    assert "'a' has the iceberg.id attribute 'seven', not a field ID" in str(err.value)


_AVRO_SCHEMA = {"type": "record", "name": "r", "fields": [
    {"name": "id", "type": "long", "field-id": 1},
    {"name": "d", "type": ["null", {"type": "fixed", "name": "dec", "size": 16,
                                    "logicalType": "decimal", "precision": 38, "scale": 10}],
     "field-id": 2},
    {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "field-id": 3},
    {"name": "u", "type": ["null", {"type": "fixed", "name": "u16", "size": 16,
                                    "logicalType": "uuid"}], "field-id": 4},
    {"name": "s", "type": ["null", "string"], "field-id": 5},
]}


def _uuid_bytes(value: uuid.UUID | None) -> bytes | None:
    return value.bytes if value is not None else None


def _write_avro(path: Path, rows: int, sync_interval: int = 16_000) -> str:
    records = [{"id": i, "d": _DECIMALS_38[i % len(_DECIMALS_38)],
                "day": dt.date(2020, 1, 1) + dt.timedelta(days=i % 50) if i % 7 else None,
                "u": _uuid_bytes(_UUIDS[i % 3]),
                "s": "" if i % 5 == 0 else f"v{i}"} for i in range(rows)]
    with open(path, "wb") as out:
        fastavro.writer(out, _AVRO_SCHEMA, records, sync_interval=sync_interval)
    return str(path)


def test_avro_values_by_field_id(tmp_path: Path) -> None:
    local = _write_avro(tmp_path / "d.avro", 300)
    rows = range(300)
    cases: list[tuple[str, int, list[Any]]] = [
             ("long", 1, list(rows)),
             ("decimal(38,10)", 2, [_DECIMALS_38[i % len(_DECIMALS_38)] for i in rows]),
             ("date", 3, [dt.date(2020, 1, 1) + dt.timedelta(days=i % 50) if i % 7 else None
                          for i in rows]),
             ("uuid", 4, [_UUIDS[i % 3] for i in rows]),
             ("string", 5, ["" if i % 5 == 0 else f"v{i}" for i in rows])]
    for type_text, fid, values in cases:
        got = _hashes_of(local, "avro", _column(fid, type_text))
        assert got.tolist() == _expected(type_text, values).tolist(), type_text


def test_avro_split_reads_blocks_whose_sync_marker_starts_in_range(tmp_path: Path) -> None:
    local = _write_avro(tmp_path / "d.avro", 2000, sync_interval=2000)
    with open(local, "rb") as source:
        blocks = [(b.offset, b.num_records) for b in fastavro.block_reader(source)]
    assert len(blocks) > 4
    # bytes from the sync marker before block 2 to the one before block 4 (exclusive)
    start, end = blocks[2][0] - 16, blocks[4][0] - 16
    spec = SliceSpec(local, local, "avro", start, end - start)
    got = [(first, rows) for first, rows, _ in read_batches(spec, [_LONG_1])]
    first_row = blocks[0][1] + blocks[1][1]
    assert got == [(first_row, blocks[2][1] + blocks[3][1])]
    shifted = SliceSpec(local, local, "avro", start + 1, end - start)  # marker 2 now outside
    assert [(f, r) for f, r, _ in read_batches(shifted, [_LONG_1])] == [
        (first_row + blocks[2][1], blocks[3][1] + blocks[4][1])]


def test_missing_column_reads_as_nulls(tmp_path: Path) -> None:
    local = _write_parquet(tmp_path / "d.parquet", {1: pa.array([1, 2, 3], pa.int64())})
    result = sketch_task(TaskSpec((_whole(local),), (_column(1, "long"), _column(2, "string"))))
    assert result.rows == 3
    assert result.sketches[0].hashes.tolist() == sorted(_expected("long", [1, 2, 3]).tolist())
    assert result.sketches[1].empty


# --- files without field IDs (add_files, migrate, snapshot) ----------------------------------


def _plain_parquet(tmp_path: Path) -> str:
    local = str(tmp_path / "plain.parquet")
    pq.write_table(pa.table({"a": pa.array([1, 2, None], pa.int64()),
                             "b": pa.array(["x", "", "y"])}), local)
    return local


def test_parquet_without_ids_and_mapping_numbers_columns_by_position(tmp_path: Path) -> None:
    local = _plain_parquet(tmp_path)
    assert _hashes_of(local, "parquet", _column(1, "long", "b")).tolist() == \
        _expected("long", [1, 2]).tolist()
    assert _hashes_of(local, "parquet", _column(2, "string", "a")).tolist() == \
        _expected("string", ["x", "y"]).tolist()
    assert _hashes_of(local, "parquet", _column(3, "long", "a")).size == 0


def test_parquet_without_ids_reads_by_the_name_mapping(tmp_path: Path) -> None:
    local = _plain_parquet(tmp_path)
    mapping = ((1, ("old", "b")), (2, ("a",)))  # field 1 renamed from b: both names kept
    got = _hashes_of(local, "parquet", _column(1, "string", "new"), name_mapping=mapping)
    assert got.tolist() == _expected("string", ["x", "y"]).tolist()
    got = _hashes_of(local, "parquet", _column(2, "long", "b"), name_mapping=mapping)
    assert got.tolist() == _expected("long", [1, 2]).tolist()
    unmapped = _hashes_of(local, "parquet", _column(3, "long", "a"), name_mapping=mapping)
    assert unmapped.size == 0  # no mapping entry: nulls, even though a column is named "a"


def test_files_with_ids_ignore_the_name_mapping(tmp_path: Path) -> None:
    local = _write_parquet(tmp_path / "d.parquet", {1: pa.array([5, 6], pa.int64()),
                                                    2: pa.array([7, 8], pa.int64())})
    got = _hashes_of(local, "parquet", _column(1, "long"), name_mapping=((1, ("col_2",)),))
    assert got.tolist() == _expected("long", [5, 6]).tolist()


def test_orc_without_ids_reads_by_mapping_else_by_column_names(tmp_path: Path) -> None:
    local = str(tmp_path / "plain.orc")
    po.write_table(pa.table({"a": pa.array([1, 2], pa.int64()),
                             "b": pa.array([3, None], pa.int64())}), local)
    # no mapping: the read column's own name (not its position)
    assert _hashes_of(local, "orc", _column(1, "long", "b")).tolist() == \
        _expected("long", [3]).tolist()
    assert _hashes_of(local, "orc", _column(2, "long", "c")).size == 0
    # no column of the file read: its rows still count
    assert sketch_task(TaskSpec((_whole(local, "orc"),), (_column(2, "long", "c"),))).rows == 2
    mapping = ((1, ("z", "a")),)
    got = _hashes_of(local, "orc", _column(1, "long", "b"), name_mapping=mapping)
    assert got.tolist() == _expected("long", [1, 2]).tolist()


def test_avro_without_ids_reads_by_mapping_else_by_column_names(tmp_path: Path) -> None:
    local = str(tmp_path / "plain.avro")
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "a", "type": "long"}, {"name": "b", "type": ["null", "string"]}]}
    with open(local, "wb") as out:
        fastavro.writer(out, schema, [{"a": 1, "b": "x"}, {"a": 2, "b": None}])
    assert _hashes_of(local, "avro", _column(1, "string", "b")).tolist() == \
        _expected("string", ["x"]).tolist()
    mapping = ((2, ("old_a", "a")),)
    got = _hashes_of(local, "avro", _column(2, "long", "renamed"), name_mapping=mapping)
    assert got.tolist() == _expected("long", [1, 2]).tolist()
    assert _hashes_of(local, "avro", _column(1, "string", "b"), name_mapping=mapping).size == 0


def _metadata(properties: dict[str, str]) -> TableMetadata:
    return TableMetadata("/t/v1.metadata.json", 2, None, "/t", None, 0, {}, {}, (), (), (),
                         raw={"properties": properties})


def test_name_mapping_is_parsed_from_the_table_property() -> None:
    text = ('[{"field-id": 1, "names": ["s", "s_renamed", "s"]}, {"names": ["x"]}, '
            '{"field-id": 2, "names": ["st"], "fields": [{"field-id": 3, "names": ["a"]}]}, '
            '{"field-id": 4}]')
    assert parse_name_mapping(_metadata({"schema.name-mapping.default": text})) == (
        (1, ("s", "s_renamed")), (2, ("st",)), (4, ()))
    assert parse_name_mapping(_metadata({})) is None


@pytest.mark.parametrize(("text", "problem"), [
    ("[{", "Expecting property name enclosed in double quotes: line 1 column 3 (char 2)"),
    ('{"field-id": 1}', "mapping is not a JSON array"),
    ("[1]", "mapping[0] is not a JSON object"),
    ('[{"field-id": "1"}]', "mapping[0]: field-id '1' is not a 32-bit integer"),
    ('[{"field-id": 2147483648}]', "mapping[0]: field-id 2147483648 is not a 32-bit integer"),
    ('[{"field-id": 1, "names": "a"}]', "mapping[0]: names is not a list of strings"),
    ('[{"field-id": 1, "names": ["a"]}, {"field-id": 2, "names": ["a"]}]',
     "mapping[1]: name 'a' is mapped twice"),
    ('[{"field-id": 1, "fields": [{"field-id": 1}]}]',
     "mapping[0].fields[0]: field-id 1 is not unique"),
    ('[{"field-id": 1, "fields": {}}]', "mapping[0].fields is not a JSON array"),
])
def test_malformed_name_mapping(text: str, problem: str) -> None:
    with pytest.raises(PuffinError) as caught:
        parse_name_mapping(_metadata({"schema.name-mapping.default": text}))
    assert caught.value.code == "stats.name-mapping"
    assert str(caught.value) == (
        "/t/v1.metadata.json: table property schema.name-mapping.default is not a valid name "
        f"mapping ({problem}); expected a JSON array of objects with \"field-id\", \"names\" "
        'and "fields"')


def _parquet_ids(tmp_path: Path, rows: int, row_group_size: int) -> str:
    return _write_parquet(tmp_path / "d.parquet",
                          {1: pa.array(np.arange(rows, dtype=np.int64)),
                           2: pa.array([f"s{i % 11}" if i % 13 else None for i in range(rows)])},
                          row_group_size=row_group_size)


def _sketch_of(values: list[int]) -> tuple[int, list[int]]:
    sketch = alpha_sketch(_expected("long", values))
    return sketch.theta_long, sketch.hashes.tolist()


def _group_starts(local: str) -> list[int]:
    meta = pq.ParquetFile(local).metadata
    return [min(meta.row_group(g).column(0).data_page_offset,
                meta.row_group(g).column(0).dictionary_page_offset or 1 << 62)
            for g in range(meta.num_row_groups)]


def test_split_ranges_pick_row_groups_by_midpoint(tmp_path: Path) -> None:
    local = _parquet_ids(tmp_path, 1000, 200)
    starts = _group_starts(local)
    assert len(starts) == 5
    # from the start of group 1 to the start of group 3: groups 1 and 2 have their midpoints
    spec = SliceSpec(local, local, "parquet", starts[1], starts[3] - starts[1])
    assert [(f, r) for f, r, _ in read_batches(spec, [_LONG_1])] == [(200, 200), (400, 200)]
    # a range holding the start of group 3 but not its midpoint reads nothing
    spec = SliceSpec(local, local, "parquet", starts[3] - 10, 20)
    assert list(read_batches(spec, [_LONG_1])) == []


def _dv_file(tmp_path: Path, data_file: str, positions: list[int]) -> DeletionVectorRef:
    blob = encode_deletion_vector(BitMap64(positions))
    path = tmp_path / "dv.puffin"
    path.write_bytes(b"PFA1" + b"\x00" * 6 + blob)
    return DeletionVectorRef(data_file, str(path), 10, len(blob), len(positions))


def test_deletion_vector_positions_count_rows_before_the_split(tmp_path: Path) -> None:
    local = _parquet_ids(tmp_path, 1000, 200)
    starts = _group_starts(local)
    dv = _dv_file(tmp_path, local, [0, 5, 399, 400, 401, 599, 600, 999])
    spec = SliceSpec(local, local, "parquet", starts[2], starts[3] - starts[2],
                     deletion_vector=dv)
    result = sketch_task(TaskSpec((spec,), (_column(1, "long"),)))
    expected = [i for i in range(400, 600) if i not in (400, 401, 599)]
    assert result.rows == len(expected)
    assert (result.sketches[0].theta_long, result.sketches[0].hashes.tolist()) == \
        _sketch_of(expected)


def test_position_delete_files_keep_only_rows_of_this_file(tmp_path: Path) -> None:
    local = _parquet_ids(tmp_path, 300, 100)
    deletes = {}
    for fmt in ("parquet", "orc", "avro"):
        path = tmp_path / f"pos.{fmt}"
        paths = [local, "s3://other/file.parquet", local, local]
        positions = [3, 4, 250, 299] if fmt == "parquet" else [7, 8, 9, 10]
        if fmt == "parquet":
            pq.write_table(pa.table({"file_path": paths, "pos": positions}), path)
        elif fmt == "orc":
            po.write_table(pa.table({"file_path": paths, "pos": positions}), str(path))
        else:
            schema = {"type": "record", "name": "d", "fields": [
                {"name": "file_path", "type": "string", "field-id": 2147483546},
                {"name": "pos", "type": "long", "field-id": 2147483545}]}
            with open(path, "wb") as out:
                fastavro.writer(out, schema, [{"file_path": f, "pos": p}
                                              for f, p in zip(paths, positions, strict=True)])
        deletes[fmt] = PositionDeleteFile(str(path), str(path), fmt, 4, 2)
    spec = _whole(local, position_deletes=tuple(deletes.values()))
    result = sketch_task(TaskSpec((spec,), (_column(1, "long"),)))
    # the other file's rows (4 in parquet, 8 in the others) are not this file's
    expected = [i for i in range(300) if i not in (3, 250, 299, 7, 9, 10)]
    assert result.rows == len(expected)
    assert result.sketches[0].hashes.tolist() == _sketch_of(expected)[1]


def test_equality_deletes_match_all_columns_with_null_equal_to_null(tmp_path: Path) -> None:
    ids = [1, 2, 3, 4, 5, 6]
    names = ["a", None, "b", None, "a", ""]
    local = _write_parquet(tmp_path / "d.parquet", {1: pa.array(ids, pa.int32()),
                                                   2: pa.array(names)})
    delete_path = _write_parquet(tmp_path / "eq.parquet", {
        1: pa.array([1, 2, 4, 6, 5], pa.int64()),
        2: pa.array(["a", None, "x", None, None])})
    columns = (_column(1, "long"), _column(2, "string"))
    eq = EqualityDeleteFile(delete_path, delete_path, "parquet", 5, 3, columns, None)
    result = sketch_task(TaskSpec((_whole(local, equality_deletes=(eq,)),), (columns[0],)))
    # (1, a) and (2, null) match; (4, null) vs (4, x), (5, a) vs (5, null), (6, "") vs null not
    assert result.rows == 4
    assert result.sketches[0].hashes.tolist() == _sketch_of([3, 4, 5, 6])[1]

    one_column = EqualityDeleteFile(delete_path, delete_path, "parquet", 5, 3, (columns[1],),
                                    None)
    result = sketch_task(TaskSpec((_whole(local, equality_deletes=(one_column,)),), columns))
    assert result.rows == 2  # names a, null, x: rows 1, 2, 4, 5 deleted
    assert result.sketches[0].hashes.tolist() == _sketch_of([3, 6])[1]
    assert result.sketches[1].hashes.tolist() == sorted(_expected("string", ["b"]).tolist())


def test_task_sketch_is_the_alpha_sketch_of_the_rows_in_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    first = rng.integers(0, 2**40, 9000)
    second = rng.integers(0, 2**40, 7000)
    a = _write_parquet(tmp_path / "a.parquet", {1: pa.array(first)}, row_group_size=3000)
    b = _write_parquet(tmp_path / "b.parquet", {1: pa.array(second)}, row_group_size=3000)
    spec = TaskSpec((_whole(b), _whole(a)), (_column(1, "long"),))
    result = sketch_task(pickle.loads(pickle.dumps(spec)))
    expected = alpha_sketch(_expected("long", second.tolist() + first.tolist()))
    assert result.rows == 16000
    assert result.sketches[0].theta_long == expected.theta_long < 2**63 - 1
    assert result.sketches[0].hashes.tolist() == expected.hashes.tolist()
    assert pickle.loads(pickle.dumps(result)).sketches[0].to_bytes() == expected.to_bytes()


@pytest.mark.parametrize(("type_text", "array", "problem"), [
    ("long", pa.array(["a"]), "column of type long holds Arrow type string"),
    ("string", pa.array([1]), "a string or binary column holds Arrow type int64"),
    ("boolean", pa.array([1]), "column of type boolean holds Arrow type int64"),
    ("decimal(9,2)", pa.array([Decimal("1.000")], pa.decimal128(9, 3)),
     "column of type decimal(9,2) holds Arrow type decimal128(9, 3) (another scale)"),
    ("uuid", pa.array([b"abc"]), "a uuid value is not 16 bytes"),
    ("decimal(38,0)", pa.array([b"\x01" * 17]), "a decimal(38,0) value has more than 16 bytes"),
])
def test_a_file_column_that_does_not_fit_the_type(type_text: str, array: pa.Array,
                                                  problem: str, tmp_path: Path) -> None:
    """A data file whose column does not hold the table type's values: one line naming the
    file, the column and what it holds."""
    local = _write_parquet(tmp_path / "d.parquet", {2: array})
    column = Column(2, "x", IcebergType.parse(type_text))
    with pytest.raises(PuffinError) as err:
        sketch_task(TaskSpec((_whole(local),), (column,), uuid_as_string=True))
    assert (err.value.code, str(err.value)) == ("stats.column-type",
                                                f"{local}: column x (field 2): {problem}")


def test_delete_file_errors_name_the_file(tmp_path: Path) -> None:
    local = _parquet_ids(tmp_path, 10, 10)
    dv = _dv_file(tmp_path, local, [1])
    broken = bytearray(Path(dv.puffin_local).read_bytes())
    broken[-1] ^= 0xFF  # the Roaring bytes no longer match the blob's CRC-32
    Path(dv.puffin_local).write_bytes(bytes(broken))
    with pytest.raises(PuffinError) as err:
        sketch_task(TaskSpec((_whole(local, deletion_vector=dv),), (_LONG_1,)))
    assert err.value.code == "dv.crc"
    assert str(err.value).startswith(f"{dv.puffin_local}: CRC-32 is 0x")
    assert str(err.value).endswith(f" over blob bytes 4..{dv.length - 5} (at byte "
                                   f"{10 + dv.length - 4})")
    gone = str(tmp_path / "pos.csv")
    with pytest.raises(PuffinError) as err:
        sketch_task(TaskSpec((_whole(local, position_deletes=(
            PositionDeleteFile(gone, gone, "csv", 1, 1),)),), (_LONG_1,)))
    assert (err.value.code, str(err.value)) == (
        "stats.format", f"{gone}: position delete file format 'csv' is not supported "
        "(supported: parquet, orc, avro)")


def test_errors_name_the_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.parquet")
    with pytest.raises(PuffinError) as err:
        sketch_task(TaskSpec((SliceSpec(missing, missing, "parquet", 0, 10),),
                             (_column(1, "long"),)))
    assert str(err.value) == f"{missing}: parquet file not found"
    assert err.value.code == "stats.read"

    local = _parquet_ids(tmp_path, 10, 10)
    with pytest.raises(PuffinError) as err:
        list(read_batches(_whole(local, "csv"), [_LONG_1]))
    assert str(err.value) == (f"{local}: data file format 'csv' is not supported "
                              "(supported: parquet, orc, avro)")

    orc = str(tmp_path / "d.orc")
    po.write_table(pa.table({"a": [1, 2]}), orc)
    with pytest.raises(PuffinError) as err:
        list(read_batches(SliceSpec(orc, orc, "orc", 3, 5), [_LONG_1]))
    assert str(err.value) == (f"{orc}: cannot read bytes 3 to 8 of this ORC file alone: a "
                              "split needs the stripe offsets (split_offsets with one offset "
                              "per stripe, 1)")

    garbage = tmp_path / "bad.parquet"
    garbage.write_bytes(b"not parquet at all")
    with pytest.raises(PuffinError) as err:
        list(read_batches(_whole(str(garbage)), [_LONG_1]))
    assert str(err.value).startswith(f"{garbage}: cannot read the parquet file: ")


def test_orc_split_offsets_pick_stripes_and_count_earlier_rows(tmp_path: Path) -> None:
    local = str(tmp_path / "d.orc")
    _write_orc(local, {1: ("a", pa.array(np.arange(50_000, dtype=np.int64)))},
               stripe_size=64 * 1024)
    stripes = po.ORCFile(local).nstripes
    assert stripes >= 3
    offsets = tuple(range(3, 3 + 100 * stripes, 100))  # one per stripe, as the manifest has
    spec = SliceSpec(local, local, "orc", 103, 100, split_offsets=offsets)
    batches = list(read_batches(spec, [_LONG_1]))
    rows_before = po.ORCFile(local).read_stripe(0).num_rows
    assert batches[0][0] == rows_before
    assert batches[0][2][1].to_pylist()[0] == rows_before


_UTC = dt.timezone.utc
# (type, the value as fastavro decodes it from a manifest's partition, as Iceberg sees it)
_CONSTANTS: list[tuple[str, Any, Any]] = [
    ("int", -7, -7), ("long", 2**40, 2**40), ("boolean", True, True),
    ("float", -0.0, -0.0), ("double", 2.5, 2.5), ("string", "é-east", "é-east"),
    ("binary", b"\x00\x01", b"\x00\x01"), ("fixed[2]", b"\xff\x00", b"\xff\x00"),
    ("date", dt.date(1969, 12, 31), dt.date(1969, 12, 31)),
    ("time", dt.time(1, 2, 3, 4), dt.time(1, 2, 3, 4)),
    ("timestamp", dt.datetime(2024, 3, 1, 12, 0, 0, 5, tzinfo=_UTC), 1_709_294_400_000_005),
    ("timestamptz", dt.datetime(1960, 1, 1, tzinfo=_UTC), -315_619_200_000_000),
    ("decimal(20,3)", Decimal("-12345678901234567.891"), Decimal("-12345678901234567.891")),
    ("uuid", _UUIDS[0], _UUIDS[0]), ("uuid", _UUIDS[0].bytes, _UUIDS[0]),
]


@pytest.mark.parametrize(("type_text", "decoded", "value"), _CONSTANTS)
def test_identity_partition_constants(type_text: str, decoded: Any, value: Any,
                                      tmp_path: Path) -> None:
    """An identity partition column takes the partition value on every row (stored in the
    file or not); a null partition value gives nulls."""
    local = _write_parquet(tmp_path / "d.parquet", {1: pa.array([1, 2, 3], pa.int64()),
                                                    2: pa.array([9, 9, 9], pa.int64())})
    column = _column(2, type_text)
    for constant, expected in ((decoded, _expected(type_text, [value])), (None, [])):
        spec = TaskSpec((_whole(local, constants=((2, constant),)),), (column,))
        result = sketch_task(spec)
        assert result.rows == 3
        assert result.sketches[0].hashes.tolist() == sorted(int(h) for h in expected)
