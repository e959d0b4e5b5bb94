"""The one serialization of partition values (blobs/iceberg_values/json_values.py,
analysis/table/partitions.py) without Spark: the spec's JSON single-value forms as Iceberg
Java's ``SingleValueParser`` writes them, the human forms of Iceberg's partition paths, and
values that do not fit their type (still shown, never a crash). tests/test_partition_values.py
checks the same against Iceberg Java on tables Spark wrote."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from puffin_cli.analysis.table.metadata import TableMetadata
from puffin_cli.analysis.table.partitions import partition_tuple
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.blobs.iceberg_values.json_values import (
    human_value,
    json_value,
    partition_human,
    transform_result_type,
)
from puffin_cli.render.jsonout import to_jsonable

UTC = dt.timezone.utc


@pytest.mark.parametrize(("type_text", "value", "expected"), [
    ("boolean", True, True),
    ("int", -7, -7),
    ("long", 2**63 - 1, 2**63 - 1),
    ("double", 1.5, 1.5),
    ("double", float("nan"), "NaN"),
    ("float", float("-inf"), "-Infinity"),
    ("decimal(9,2)", Decimal("-0.01"), "-0.01"),
    ("decimal(9,2)", Decimal("7"), "7.00"),  # at the type's scale, as Java's BigDecimal
    ("decimal(9,2)", 1050, "10.50"),  # unscaled
    ("decimal(9,2)", b"\xff", "-0.01"),  # unscaled two's complement
    ("decimal(38,0)", Decimal("-" + "9" * 38), "-" + "9" * 38),
    ("date", 19784, "2024-03-02"),
    ("date", dt.date(2024, 3, 2), "2024-03-02"),
    ("date", -1, "1969-12-31"),
    ("date", 2932897, "+10000-01-01"),
    ("date", -719529, "-0001-12-31"),
    ("time", 0, "00:00:00"),
    ("time", 36_000_500_000, "10:00:00.5"),
    ("time", dt.time(22, 31, 8, 123456), "22:31:08.123456"),
    ("timestamp", 0, "1970-01-01T00:00:00"),
    ("timestamp", -1, "1969-12-31T23:59:59.999999"),
    ("timestamp", dt.datetime(2024, 3, 2, 10, 0, 0, 100000, tzinfo=UTC),
     "2024-03-02T10:00:00.1"),
    ("timestamptz", dt.datetime(2024, 3, 2, 11, 30, tzinfo=dt.timezone(dt.timedelta(hours=1))),
     "2024-03-02T10:30:00+00:00"),
    ("timestamptz", 1_709_373_600_123_456, "2024-03-02T10:00:00.123456+00:00"),
    ("timestamp_ns", 1_709_373_600_123_456_789, "2024-03-02T10:00:00.123456789"),
    ("timestamptz_ns", -1, "1969-12-31T23:59:59.999999999+00:00"),
    ("string", "ключ-日本-🙂", "ключ-日本-🙂"),
    ("uuid", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
     "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("uuid", bytes(range(16)), "00010203-0405-0607-0809-0a0b0c0d0e0f"),
    ("fixed[4]", b"\x00\x01\x02\xff", "000102ff"),
    ("binary", b"", ""),
])
def test_json_value(type_text: str, value: Any, expected: Any) -> None:
    assert json_value(IcebergType.parse(type_text), value) == expected
    assert json_value(IcebergType.parse(type_text), None) is None


@pytest.mark.parametrize(("type_text", "value", "expected"), [
    ("binary", b"\xff\x00\xff", "/wD/"),  # base64, as Iceberg's paths
    ("fixed[4]", b"\x00\x00\x00\x00", "AAAAAA=="),
    ("boolean", False, "false"),
    ("timestamptz", 0, "1970-01-01T00:00:00+00:00"),
    ("decimal(9,2)", Decimal("10.65"), "10.65"),
    ("int", None, "null"),
])
def test_human_value(type_text: str, value: Any, expected: str) -> None:
    assert human_value(IcebergType.parse(type_text), value) == expected


@pytest.mark.parametrize(("transform", "value", "expected"), [
    ("year", 54, "2024"), ("year", -1, "1969"),
    ("month", 650, "2024-03"), ("month", -1, "1969-12"),
    ("hour", 474826, "2024-03-02-10"), ("hour", -1, "1969-12-31-23"),
    ("day", dt.date(2024, 3, 2), "2024-03-02"), ("day", 19784, "2024-03-02"),
    ("bucket[4]", 3, "3"), ("void", None, "null"), ("truncate[2]", "кл", "кл"),
])
def test_partition_human(transform: str, value: Any, expected: str) -> None:
    source = IcebergType("string") if transform.startswith("truncate") else IcebergType("date")
    kind = transform_result_type(transform, source)
    assert partition_human(transform, kind, value) == expected


def test_result_types_are_the_specs() -> None:
    source = IcebergType.parse("timestamptz")
    assert {t: str(transform_result_type(t, source)) for t in
            ("identity", "bucket[16]", "truncate[4]", "year", "month", "day", "hour", "void")
            } == {"identity": "timestamptz", "bucket[16]": "int", "truncate[4]": "timestamptz",
                  "year": "int", "month": "int", "day": "date", "hour": "int",
                  "void": "timestamptz"}
    assert transform_result_type("zorder", source) is None


@given(st.dates())
def test_dates_are_iso_8601(day: dt.date) -> None:
    assert json_value(IcebergType("date"), (day - dt.date(1970, 1, 1)).days) == day.isoformat()


@given(st.datetimes(timezones=st.just(UTC)))
def test_timestamps_are_iso_8601_without_trailing_zeros(moment: dt.datetime) -> None:
    text = moment.replace(tzinfo=None).isoformat()
    if "." in text:
        text = text.rstrip("0")
    assert json_value(IcebergType("timestamptz"), moment) == text + "+00:00"


@pytest.mark.parametrize(("type_text", "value", "expected"), [
    ("int", "text", "text"),  # hostile metadata: the value's own form
    ("date", dt.datetime(2024, 3, 2, tzinfo=UTC), "2024-03-02T00:00:00+00:00"),
    ("decimal(3,2)", Decimal("12345.6"), "12345.6"),
    ("uuid", b"short", "73686f7274"),
    ("boolean", 1, 1),
])
def test_values_that_do_not_fit_their_type_are_still_shown(type_text: str, value: Any,
                                                           expected: Any) -> None:
    assert json_value(IcebergType.parse(type_text), value) == expected


def _metadata(specs: dict[int, Any], schemas: dict[int, Any], current: int) -> TableMetadata:
    return TableMetadata(path="m.json", format_version=2, table_uuid=None, location="/t",
                         current_snapshot_id=None, current_schema_id=current, schemas=schemas,
                         specs=specs, snapshots=(), statistics=(), partition_statistics=(),
                         raw={})


def test_partition_tuple_types_each_field_by_its_spec() -> None:
    """Types from the current schema, else the newest schema that has the source column (one
    dropped since); a field the spec does not name and a spec the metadata lacks still show."""
    old = {"schema-id": 0, "fields": [
        {"id": 1, "name": "ts", "type": "timestamptz"},
        {"id": 2, "name": "gone", "type": "date"},
        {"id": 3, "name": "nested", "type": {"type": "struct", "fields": [
            {"id": 4, "name": "b", "type": "binary"}]}}]}
    new = {"schema-id": 1, "fields": [old["fields"][0], old["fields"][2]]}
    spec = {"spec-id": 0, "fields": [
        {"name": "ts_day", "transform": "day", "source-id": 1, "field-id": 1000},
        {"name": "ts_month", "transform": "month", "source-id": 1, "field-id": 1001},
        {"name": "gone", "transform": "identity", "source-id": 2, "field-id": 1002},
        {"name": "b", "transform": "identity", "source-id": 4, "field-id": 1003},
        {"name": "v", "transform": "void", "source-id": 1, "field-id": 1004}]}
    metadata = _metadata({0: spec}, {0: old, 1: new}, 1)
    values = {"ts_day": dt.date(2024, 3, 2), "ts_month": 650, "gone": 19784, "b": b"\xff",
              "v": None, "extra": Decimal("1.50")}
    found = partition_tuple(metadata, 0, values)
    assert found.to_json() == {"ts_day": "2024-03-02", "ts_month": 650, "gone": "2024-03-02",
                               "b": "ff", "v": None, "extra": "1.50"}
    assert [f.type for f in found.fields] == ["date", "int", "date", "binary", "timestamptz",
                                              None]
    assert str(found) == ("ts_day=2024-03-02/ts_month=2024-03/gone=2024-03-02/b=%2Fw%3D%3D/"
                          "v=null/extra=1.50")
    document = json.loads(json.dumps(to_jsonable({"partition": found})))
    assert document == {"partition": found.to_json()}
    unknown = partition_tuple(metadata, 7, {"d": dt.date(2024, 3, 2)})
    assert unknown.to_json() == {"d": "2024-03-02"} and str(unknown) == "d=2024-03-02"
    assert str(partition_tuple(metadata, 7, {})) == "(unpartitioned)"


def test_partition_path_encodes_as_javas_url_encoder() -> None:
    spec = {"spec-id": 0, "fields": [{"name": "s", "transform": "identity", "source-id": 1}]}
    schema = {"schema-id": 0, "fields": [{"id": 1, "name": "s", "type": "string"}]}
    found = partition_tuple(_metadata({0: spec}, {0: schema}, 0),
                            0, {"s": "naïve/slash=eq%+ sp~*"})
    assert found.path() == "s=na%C3%AFve%2Fslash%3Deq%25%2B+sp%7E*"
