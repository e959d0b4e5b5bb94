"""Iceberg types, text values and single-value serialization (table spec, Appendix D)."""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from puffin_cli.blobs.iceberg_values import (
    IcebergType,
    parse_value,
    parse_values,
    serialize_array,
    serialize_value,
    serialize_values,
)
from puffin_cli.errors import PuffinError

T = IcebergType.parse


@pytest.mark.parametrize(
    ("text", "expected", "width"),
    [
        ("boolean", IcebergType("boolean"), 1),
        ("INT", IcebergType("int"), 4),
        ("long", IcebergType("long"), 8),
        ("float", IcebergType("float"), 4),
        ("double", IcebergType("double"), 8),
        ("date", IcebergType("date"), 4),
        ("time", IcebergType("time"), 8),
        ("timestamp", IcebergType("timestamp"), 8),
        ("timestamptz", IcebergType("timestamptz"), 8),
        ("timestamp_ns", IcebergType("timestamp_ns"), 8),
        ("timestamptz_ns", IcebergType("timestamptz_ns"), 8),
        ("string", IcebergType("string"), None),
        ("uuid", IcebergType("uuid"), 16),
        ("binary", IcebergType("binary"), None),
        ("decimal( 10 , 2 )", IcebergType("decimal", precision=10, scale=2), None),
        ("fixed[16]", IcebergType("fixed", length=16), 16),
        ("fixed(3)", IcebergType("fixed", length=3), 3),
    ],
)
def test_parse_type(text: str, expected: IcebergType, width: int | None) -> None:
    parsed = T(text)
    assert parsed == expected
    assert parsed.width == width
    assert T(str(parsed)) == parsed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("varchar", "unknown Iceberg type 'varchar' (expected one of boolean, int, long, float, "
         "double, date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, string, "
         "uuid, binary, decimal(P,S), fixed[L])"),
        ("decimal(39,2)", "type 'decimal(39,2)': decimal precision must be 1 to 38 and scale at "
         "most the precision"),
        ("decimal(2,3)", "type 'decimal(2,3)': decimal precision must be 1 to 38 and scale at "
         "most the precision"),
        ("fixed[0]", "type 'fixed[0]': fixed length must be at least 1"),
    ],
)
def test_parse_type_errors(text: str, message: str) -> None:
    with pytest.raises(PuffinError) as info:
        T(text)
    assert info.value.code == "value.type"
    assert info.value.message == message


# (type, text, Python value, serialized hex): checked by hand against Appendix D.
VECTORS = [
    ("boolean", "true", True, "01"),
    ("boolean", "FALSE", False, "00"),
    ("int", "1", 1, "01000000"),
    ("int", "-2", -2, "feffffff"),
    ("int", "2147483647", 2**31 - 1, "ffffff7f"),
    ("long", "34", 34, "2200000000000000"),
    ("long", "-9223372036854775808", -(2**63), "0000000000000080"),
    ("float", "1", 1.0, "0000803f"),
    ("float", "-0.0", -0.0, "00000080"),
    ("float", "NaN", float("nan"), "0000c07f"),
    ("double", "1", 1.0, "000000000000f03f"),
    ("double", "-Infinity", float("-inf"), "000000000000f0ff"),
    ("date", "1970-01-01", 0, "00000000"),
    ("date", "2017-11-16", 17486, "4e440000"),
    ("date", "1969-12-31", -1, "ffffffff"),
    ("time", "22:31:08", 81068000000, "008307e012000000"),
    ("time", "00:00:00.000001", 1, "0100000000000000"),
    ("timestamp", "2017-11-16T22:31:08", 1510871468000000, "00c3262d215e0500"),
    ("timestamp", "2017-11-16 22:31:08.000001", 1510871468000001, "01c3262d215e0500"),
    ("timestamptz", "2017-11-16T14:31:08-08:00", 1510871468000000, "00c3262d215e0500"),
    ("timestamptz", "1970-01-01T00:00:00Z", 0, "0000000000000000"),
    ("timestamp_ns", "1970-01-01T00:00:00.000000001", 1, "0100000000000000"),
    ("timestamptz_ns", "2017-11-16T22:31:08.123456789+00:00", 1510871468123456789,
     "1585c56698b1f714"),
    ("string", "iceberg", "iceberg", "69636562657267"),
    ("string", "ü", "ü", "c3bc"),
    ("string", "", "", ""),
    ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7",
     uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), "f79c3e09677c4bbda4793f349cb785e7"),
    ("fixed[3]", "CAFE01", b"\xca\xfe\x01", "cafe01"),
    ("binary", "", b"", ""),
    ("binary", "00ff", b"\x00\xff", "00ff"),
    ("decimal(10,2)", "12.34", Decimal("12.34"), "04d2"),
    ("decimal(10,2)", "12.3", Decimal("12.30"), "04ce"),
    ("decimal(5,2)", "1.27", Decimal("1.27"), "7f"),
    ("decimal(5,2)", "1.28", Decimal("1.28"), "0080"),
    ("decimal(5,2)", "-1.28", Decimal("-1.28"), "80"),
    ("decimal(5,2)", "-1.29", Decimal("-1.29"), "ff7f"),
    ("decimal(5,2)", "0", Decimal("0.00"), "00"),
    ("decimal(38,0)", "-" + "9" * 38, Decimal("-" + "9" * 38),
     "b4c4b357a5793b85f675ddc000000001"),
]


@pytest.mark.parametrize(("type_text", "text", "value", "hex_bytes"), VECTORS)
def test_parse_and_serialize(type_text: str, text: str, value: object, hex_bytes: str) -> None:
    iceberg_type = T(type_text)
    parsed = parse_value(iceberg_type, text)
    if isinstance(value, float) and value != value:
        assert isinstance(parsed, float) and parsed != parsed
    else:
        assert parsed == value and type(parsed) is type(value)
    assert serialize_value(iceberg_type, parsed).hex() == hex_bytes
    assert serialize_values(iceberg_type, [parsed]) == [bytes.fromhex(hex_bytes)]


def test_float_text_is_rounded_once_like_java() -> None:
    # Just above the midpoint between 1.0 and the next float: its nearest double *is* the
    # midpoint, which a double->float cast rounds to even (1.0); Java's parseFloat gives the
    # next float up.
    assert parse_value(T("float"), "1.0000000596046447753906251") == 1.0000001192092896
    assert parse_value(T("float"), "1.0000000596046447753906249") == 1.0
    assert parse_value(T("float"), "0.1") == float(np.float32(0.1))


@pytest.mark.parametrize(
    ("type_text", "text", "message"),
    [
        ("boolean", "yes", "'yes' is not a valid boolean: expected true or false"),
        ("int", "2147483648",
         "'2147483648' is not a valid int: expected a value from -2147483648 to 2147483647"),
        ("long", "1.5", "'1.5' is not a valid long: expected a decimal integer"),
        ("float", "1e39", "'1e39' is not a valid float: out of range for a float"),
        ("double", "1e309", "'1e309' is not a valid double: out of range for a double"),
        ("double", "1_0", "'1_0' is not a valid double: expected a decimal number, NaN, "
         "Infinity or -Infinity"),
        ("decimal(4,2)", "1.234",
         "'1.234' is not a valid decimal(4,2): expected at most 2 digits after the decimal "
         "point"),
        ("decimal(4,2)", "123.4",
         "'123.4' is not a valid decimal(4,2): expected at most 4 digits (2 before the point)"),
        ("decimal(4,2)", "1e2",
         "'1e2' is not a valid decimal(4,2): expected a decimal number such as 12.34 (no "
         "exponent)"),
        ("date", "2023-02-29", "'2023-02-29' is not a valid date: day must be 01 to 28"),
        ("date", "2023-13-01", "'2023-13-01' is not a valid date: month must be 01 to 12"),
        ("date", "31/01/2024",
         "'31/01/2024' is not a valid date: expected an ISO date such as 2024-01-31"),
        ("time", "24:00:00", "'24:00:00' is not a valid time: time must be 00:00:00 to 23:59:59"),
        ("time", "12:00:00.1234567",
         "'12:00:00.1234567' is not a valid time: expected at most 6 fractional digits of a "
         "second"),
        ("timestamp", "2020-01-01T00:00:00Z",
         "'2020-01-01T00:00:00Z' is not a valid timestamp: a timestamp without time zone "
         "takes no offset"),
        ("timestamptz", "2020-01-01T00:00:00",
         "'2020-01-01T00:00:00' is not a valid timestamptz: expected a UTC offset (Z or "
         "+HH:MM) for a timestamp with time zone"),
        ("timestamptz", "2020-01-01T00:00:00+19:00",
         "'2020-01-01T00:00:00+19:00' is not a valid timestamptz: UTC offset must be at most "
         "18:00"),
        ("timestamp", "2020-01-01",
         "'2020-01-01' is not a valid timestamp: expected an ISO timestamp such as "
         "2024-01-31T12:34:56"),
        ("uuid", "xyz", "'xyz' is not a valid uuid: expected a UUID such as "
         "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        ("fixed[2]", "abc",
         "'abc' is not a valid fixed[2]: expected hexadecimal bytes, two digits per byte"),
        ("fixed[2]", "abcdef",
         "'abcdef' is not a valid fixed[2]: expected exactly 2 bytes, found 3"),
    ],
)
def test_parse_value_errors(type_text: str, text: str, message: str) -> None:
    with pytest.raises(PuffinError) as info:
        parse_value(T(type_text), text)
    assert info.value.code == "value.parse"
    assert info.value.message == message


def test_parse_values_names_the_line() -> None:
    assert parse_values(T("int"), ["1\n", "2\r\n"]) == [1, 2]
    with pytest.raises(PuffinError) as info:
        parse_values(T("int"), ["1\n", "x\n"])
    assert info.value.message == "line 2: 'x' is not a valid int: expected a decimal integer"


@pytest.mark.parametrize(
    ("type_text", "value", "message"),
    [
        ("int", 2**31, "2147483648 is not a valid int: expected a value from -2147483648 to "
         "2147483647"),
        ("int", True, "True is not a valid int: expected an integer"),
        ("string", "\ud800", "'\\ud800' is not a valid string: not encodable as UTF-8 "
         "(surrogates not allowed)"),
        ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7",
         "'f79c3e09-677c-4bbd-a479-3f349cb785e7' is not a valid uuid: expected a uuid.UUID"),
        ("decimal(3,1)", Decimal("1.25"),
         "Decimal('1.25') is not a valid decimal(3,1): expected at most 1 digits after the "
         "decimal point"),
        ("timestamptz", dt.datetime(2020, 1, 1),
         "datetime.datetime(2020, 1, 1, 0, 0) is not a valid timestamptz: expected an aware "
         "datetime"),
    ],
)
def test_serialize_errors(type_text: str, value: object, message: str) -> None:
    with pytest.raises(PuffinError) as info:
        serialize_values(T(type_text), [value])
    assert info.value.code == "value.invalid"
    assert info.value.message == message


def test_serialize_python_temporal_objects() -> None:
    utc = dt.timezone.utc
    assert serialize_value(T("date"), dt.date(2017, 11, 16)).hex() == "4e440000"
    assert serialize_value(T("time"), dt.time(22, 31, 8)).hex() == "008307e012000000"
    assert serialize_value(T("timestamp"), dt.datetime(2017, 11, 16, 22, 31, 8)).hex() == \
        "00c3262d215e0500"
    assert serialize_value(T("timestamptz"),
                           dt.datetime(2017, 11, 16, 22, 31, 8, tzinfo=utc)).hex() \
        == "00c3262d215e0500"
    assert serialize_value(T("timestamptz_ns"), dt.datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=utc)) \
        == struct.pack("<q", 1000)
    assert serialize_value(T("decimal(5,2)"), 3) == (300).to_bytes(2, "big")


INT64 = st.integers(-(2**63), 2**63 - 1)
NUMERIC = {
    "int": st.integers(-(2**31), 2**31 - 1),
    "date": st.integers(-(2**31), 2**31 - 1),
    "long": INT64,
    "time": st.integers(0, 86_400_000_000 - 1),
    "timestamp": INT64,
    "timestamptz_ns": INT64,
    "double": st.floats(allow_nan=False),
    "float": st.floats(width=32, allow_nan=False),
    "boolean": st.booleans(),
}


@pytest.mark.parametrize("type_text", sorted(NUMERIC))
@given(data=st.data())
def test_serialize_array_equals_serialize_values(type_text: str, data: st.DataObject) -> None:
    values = data.draw(st.lists(NUMERIC[type_text], max_size=20))
    iceberg_type = T(type_text)
    dtype = {"boolean": np.bool_, "float": np.float32, "double": np.float64}.get(type_text,
                                                                                 np.int64)
    matrix = serialize_array(iceberg_type, np.array(values, dtype=dtype))
    assert [row.tobytes() for row in matrix] == serialize_values(iceberg_type, values)


def test_serialize_array_errors() -> None:
    with pytest.raises(PuffinError) as info:
        serialize_array(T("int"), np.array([0, 2**31]))
    assert info.value.message == "int values must be from -2147483648 to 2147483647, found 0 " \
        "to 2147483648"
    with pytest.raises(PuffinError) as info:
        serialize_array(T("string"), np.array(["a"]))
    assert info.value.message == "type string has no fixed-width numeric serialization"
    with pytest.raises(PuffinError) as info:
        serialize_array(T("long"), np.array([1.5]))
    assert info.value.message == "long values must be integers, found numpy dtype float64"


@pytest.mark.parametrize("text, expected", [
    # Nearest double is the overflow midpoint, but the text lies below it: Java gives MAX_VALUE.
    ("3.4028235677973366e38", "ffff7f7f"),
    ("-3.4028235677973366e38", "ffff7fff"),
    ("3.4028235e38", "ffff7f7f"),
])
def test_float_text_just_below_the_overflow_midpoint_is_the_largest_float(
        text: str, expected: str) -> None:
    t = IcebergType.parse("float")
    assert serialize_value(t, parse_value(t, text)).hex() == expected


@pytest.mark.parametrize("text", ["3.40282356779733661637539395458142568448e38",  # the tie
                                  "3.4028236e38", "1e39"])
def test_float_text_at_or_above_the_overflow_midpoint_is_refused(text: str) -> None:
    with pytest.raises(PuffinError, match="out of range for a float"):
        parse_value(IcebergType.parse("float"), text)
