"""Values as bytes: Iceberg's single-value serialization (table spec, Appendix D), the bytes
Iceberg feeds to a Theta sketch for each non-null value:

=====================  ==========================================================  =========
type                   bytes                                                       width
=====================  ==========================================================  =========
boolean                ``00`` false, ``01`` true                                   1
int, date              int32 little-endian (date: days from 1970-01-01)            4
long                   int64 little-endian                                         8
time                   int64 LE microseconds from midnight                         8
timestamp(tz)          int64 LE microseconds from 1970-01-01T00:00:00 (UTC)        8
timestamp(tz)_ns       int64 LE nanoseconds from 1970-01-01T00:00:00 (UTC)         8
float                  IEEE 754 binary32, little-endian (raw bits: -0.0 != 0.0)    4
double                 IEEE 754 binary64, little-endian                            8
decimal(P,S)           unscaled value, big-endian two's complement, fewest bytes   varies
string                 UTF-8, no length                                            varies
uuid                   16 bytes big-endian (most significant byte first)           16
fixed(L)               the L bytes                                                 L
binary                 the bytes                                                   varies
=====================  ==========================================================  =========
"""

from __future__ import annotations

import datetime as _dt
import struct
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.iceberg_values.text import time_units
from puffin_cli.blobs.iceberg_values.types import (
    EPOCH,
    EPOCH_UTC,
    INT_RANGES,
    MICROS_PER_SECOND,
    NUMPY_DTYPES,
    SECONDS_PER_DAY,
    IcebergType,
    Invalid,
    check_bytes,
    check_decimal,
    check_int,
    unscaled_value,
)
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def serialize_values(iceberg_type: IcebergType, values: Iterable[Any]) -> list[bytes]:
    """Serialize every value (no nulls: drop them before)."""
    return [serialize_value(iceberg_type, value) for value in values]


def serialize_value(iceberg_type: IcebergType, value: Any) -> bytes:
    """Iceberg's single-value serialization of ``value`` (Appendix D)."""
    try:
        return SERIALIZERS[iceberg_type.name](iceberg_type, value)
    except Invalid as exc:
        raise PuffinError(f"{value!r} is not a valid {iceberg_type}: {exc}",
                          code="value.invalid") from None


def serialize_array(iceberg_type: IcebergType, values: npt.ArrayLike) -> np.ndarray[Any, Any]:
    """Vectorized serialization of a fixed-width numeric or boolean type.

    ``values`` holds the Python-value form (integers for dates, times and timestamps). Returns
    a C-contiguous ``(n, width)`` uint8 matrix whose row ``i`` is the serialization of value
    ``i``. Raises :class:`PuffinError` for types without a fixed-width numeric form (decimal,
    string, uuid, fixed, binary) and for integers out of the type's range.
    """
    import numpy as np

    name = iceberg_type.name
    array = np.asarray(values)
    if name == "boolean":
        return np.ascontiguousarray((array != 0).astype(np.uint8).reshape(-1, 1))
    dtype = NUMPY_DTYPES.get(name)
    if dtype is None:
        raise PuffinError(f"type {iceberg_type} has no fixed-width numeric serialization",
                          code="value.type")
    if name in INT_RANGES:
        if array.dtype.kind not in "iu":
            raise PuffinError(f"{name} values must be integers, found numpy dtype {array.dtype}",
                              code="value.invalid")
        low, high = INT_RANGES[name]
        if array.size and (int(array.min()) < low or int(array.max()) > high):
            raise PuffinError(f"{name} values must be from {low} to {high}, found "
                              f"{int(array.min())} to {int(array.max())}", code="value.invalid")
    converted = np.ascontiguousarray(array, dtype=dtype).reshape(-1)
    return converted.view(np.uint8).reshape(-1, np.dtype(dtype).itemsize)


# ---- serialization -----------------------------------------------------------------------

_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("expected an integer")
    return int(value)


def _ser_boolean(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, bool):
        raise Invalid("expected True or False")
    return b"\x01" if value else b"\x00"


def _ser_int32(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime) and t.name == "date":
        value = (value - EPOCH.date()).days
    return _I32.pack(check_int(t, _as_int(value)))


def _ser_int64(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, _dt.time) and t.name == "time":
        if value.tzinfo is not None:
            raise Invalid("expected a time without time zone")
        value = time_units((str(value.hour), str(value.minute), str(value.second),
                             f"{value.microsecond:06d}"), 6)
    elif isinstance(value, _dt.datetime) and t.name.startswith("timestamp"):
        value = _datetime_units(t, value)
    return _I64.pack(check_int(t, _as_int(value)))


def _datetime_units(t: IcebergType, value: _dt.datetime) -> int:
    with_zone = t.name.startswith("timestamptz")
    if with_zone != (value.tzinfo is not None):
        raise Invalid("expected an aware datetime" if with_zone else "expected a naive datetime")
    delta = value - (EPOCH_UTC if with_zone else EPOCH)
    micros = (delta.days * SECONDS_PER_DAY + delta.seconds) * MICROS_PER_SECOND
    micros += delta.microseconds
    return micros * 1000 if t.name.endswith("_ns") else micros


def _ser_float(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid("expected a number")
    try:
        return (_F32 if t.name == "float" else _F64).pack(value)
    except OverflowError:
        raise Invalid("out of range for a float") from None


def _ser_decimal(t: IcebergType, value: Any) -> bytes:
    assert t.scale is not None
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise Invalid("expected a Decimal")
    unscaled = unscaled_value(check_decimal(t, Decimal(value)), t.scale)
    # Java's BigInteger.toByteArray: the fewest bytes that hold the value and its sign bit.
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _ser_string(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, str):
        raise Invalid("expected a str")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Invalid(f"not encodable as UTF-8 ({exc.reason})") from None


def _ser_uuid(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, uuid.UUID):
        raise Invalid("expected a uuid.UUID")
    return value.bytes


def _ser_bytes(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise Invalid("expected bytes")
    return check_bytes(t, bytes(value))


SERIALIZERS: dict[str, Callable[[IcebergType, Any], bytes]] = {
    "boolean": _ser_boolean,
    "int": _ser_int32,
    "date": _ser_int32,
    "long": _ser_int64,
    "time": _ser_int64,
    "timestamp": _ser_int64,
    "timestamptz": _ser_int64,
    "timestamp_ns": _ser_int64,
    "timestamptz_ns": _ser_int64,
    "float": _ser_float,
    "double": _ser_float,
    "decimal": _ser_decimal,
    "string": _ser_string,
    "uuid": _ser_uuid,
    "fixed": _ser_bytes,
    "binary": _ser_bytes,
}
