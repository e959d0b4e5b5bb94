"""Iceberg primitive types: parse a type name, parse values from text, and serialize values.

The serialization is Iceberg's single-value serialization (table spec, Appendix D), the bytes
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

Text forms accepted by :meth:`IcebergType.parse_value` (one value per line in
``puffin write --values-file``):

- boolean: ``true`` / ``false`` (any case).
- int, long: a decimal integer (``-12``, ``+7``), range-checked.
- float, double: a decimal number (``1.5``, ``-0.0``, ``1e-3``) or ``NaN``, ``Infinity``,
  ``-Infinity`` (also ``inf``); rounded once, to nearest even, like Java's
  ``Float.parseFloat`` / ``Double.parseDouble``. Finite text that overflows is refused.
- decimal(P,S): a decimal number with at most S digits after the point (``12.3`` is read as
  ``12.30`` for scale 2) and at most P digits in all; no exponent.
- date: ISO ``2024-01-31`` (proleptic Gregorian; years may have a sign and more digits).
- time: ``HH:MM[:SS[.ffffff]]``.
- timestamp, timestamp_ns: ``2024-01-31T12:34:56[.ffffff]`` (``T`` or a space), no offset.
- timestamptz, timestamptz_ns: the same with an offset, ``Z`` or ``+02:00``; stored as UTC.
  Fractions have up to 6 digits for the microsecond types and 9 for the ``_ns`` types.
- string: the text as is (an empty line is the empty string, which sketches skip).
- uuid: canonical text ``f79c3e09-677c-4bbd-a479-3f349cb785e7`` (any case).
- fixed(L), binary: hexadecimal, two digits per byte (``cafe01``); fixed needs exactly L bytes.

Python values (what :meth:`IcebergType.parse_value` returns and :func:`serialize_values`
takes): ``bool``; ``int`` for int, long, and for date (days), time (microseconds) and the
timestamps (micro- or nanoseconds); ``float``; ``decimal.Decimal``; ``str``; ``uuid.UUID``;
``bytes``. :func:`serialize_values` also takes ``datetime.date``, ``datetime.time`` and
``datetime.datetime`` (naive for ``timestamp``, aware for ``timestamptz``) and ``int`` for
decimals (the unscaled value is ``value * 10**S``).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import struct
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from puffin_cli.format.errors import PuffinError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

IcebergValue = bool | int | float | Decimal | str | uuid.UUID | bytes

_SIMPLE_WIDTHS: dict[str, int | None] = {
    "boolean": 1,
    "int": 4,
    "long": 8,
    "float": 4,
    "double": 8,
    "date": 4,
    "time": 8,
    "timestamp": 8,
    "timestamptz": 8,
    "timestamp_ns": 8,
    "timestamptz_ns": 8,
    "string": None,
    "uuid": 16,
    "binary": None,
}
# numpy dtype of the serialized form of each fixed-width numeric type (little-endian).
_NUMPY_DTYPES = {
    "int": "<i4",
    "date": "<i4",
    "long": "<i8",
    "time": "<i8",
    "timestamp": "<i8",
    "timestamptz": "<i8",
    "timestamp_ns": "<i8",
    "timestamptz_ns": "<i8",
    "float": "<f4",
    "double": "<f8",
}
_INT_RANGES = {
    "int": (-(2**31), 2**31 - 1),
    "date": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
    "time": (0, 86_400_000_000 - 1),
    "timestamp": (-(2**63), 2**63 - 1),
    "timestamptz": (-(2**63), 2**63 - 1),
    "timestamp_ns": (-(2**63), 2**63 - 1),
    "timestamptz_ns": (-(2**63), 2**63 - 1),
}
_MAX_DECIMAL_PRECISION = 38
# Exact arithmetic for any value we accept (the default context rounds to 28 digits).
_DECIMAL_CONTEXT = Context(prec=4 * _MAX_DECIMAL_PRECISION)

_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_FIXED_TYPE = re.compile(r"fixed\[\s*(\d+)\s*\]|fixed\(\s*(\d+)\s*\)")
_INTEGER = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_FLOAT_SPECIAL = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
    "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf,
}
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_RE = re.compile(_DATE)
_TIME_RE = re.compile(_TIME)
_TIMESTAMP_RE = re.compile(_DATE + r"[T ]" + _TIME + r"(Z|z|[+-]\d{2}:?\d{2})?")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")

_MICROS_PER_SECOND = 1_000_000
_SECONDS_PER_DAY = 86_400
_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class IcebergType:
    """An Iceberg primitive type: ``name`` plus decimal precision/scale or fixed length."""

    name: str
    precision: int | None = None
    scale: int | None = None
    length: int | None = None

    @classmethod
    def parse(cls, text: str) -> IcebergType:
        """Parse a type as Iceberg writes it: ``long``, ``decimal(10,2)``, ``fixed[16]``.

        ``fixed(16)`` is accepted too; names are case-insensitive.
        """
        name = text.strip().lower()
        if name in _SIMPLE_WIDTHS:
            return cls(name)
        match = _DECIMAL_TYPE.fullmatch(name)
        if match:
            precision, scale = int(match.group(1)), int(match.group(2))
            if not 1 <= precision <= _MAX_DECIMAL_PRECISION or scale > precision:
                raise PuffinError(
                    f"type {text.strip()!r}: decimal precision must be 1 to "
                    f"{_MAX_DECIMAL_PRECISION} and scale at most the precision",
                    code="value.type",
                )
            return cls("decimal", precision=precision, scale=scale)
        match = _FIXED_TYPE.fullmatch(name)
        if match:
            length = int(match.group(1) or match.group(2))
            if length < 1:
                raise PuffinError(f"type {text.strip()!r}: fixed length must be at least 1",
                                  code="value.type")
            return cls("fixed", length=length)
        raise PuffinError(
            f"unknown Iceberg type {text.strip()!r} (expected one of "
            f"{', '.join(_SIMPLE_WIDTHS)}, decimal(P,S), fixed[L])",
            code="value.type",
        )

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.name == "fixed":
            return f"fixed[{self.length}]"
        return self.name

    @property
    def width(self) -> int | None:
        """Byte length of every serialized value, or ``None`` when it varies."""
        if self.name == "fixed":
            return self.length
        if self.name == "decimal":
            return None
        return _SIMPLE_WIDTHS[self.name]

    @property
    def numpy_dtype(self) -> str | None:
        """The little-endian numpy dtype whose raw bytes are the serialization, if any."""
        return _NUMPY_DTYPES.get(self.name)

    def parse_value(self, text: str) -> IcebergValue:
        """Parse one value from its text form (see the module docstring)."""
        try:
            return _PARSERS[self.name](self, text)
        except _Invalid as exc:
            raise PuffinError(f"{text!r} is not a valid {self}: {exc}",
                              code="value.parse") from None

    def serialize(self, value: Any) -> bytes:
        """Iceberg's single-value serialization of ``value`` (Appendix D)."""
        try:
            return _SERIALIZERS[self.name](self, value)
        except _Invalid as exc:
            raise PuffinError(f"{value!r} is not a valid {self}: {exc}",
                              code="value.invalid") from None


class _Invalid(Exception):
    """A value does not fit its type; the message says what was expected."""


def parse_values(iceberg_type: IcebergType, lines: Iterable[str]) -> list[IcebergValue]:
    """Parse one value per line (line endings stripped); errors name the 1-based line."""
    values: list[IcebergValue] = []
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        try:
            values.append(iceberg_type.parse_value(text))
        except PuffinError as exc:
            raise PuffinError(f"line {number}: {exc.message}", code=exc.code) from None
    return values


def serialize_values(iceberg_type: IcebergType, values: Iterable[Any]) -> list[bytes]:
    """Serialize every value (no nulls: drop them before)."""
    serialize = _SERIALIZERS[iceberg_type.name]
    out: list[bytes] = []
    for value in values:
        try:
            out.append(serialize(iceberg_type, value))
        except _Invalid as exc:
            raise PuffinError(f"{value!r} is not a valid {iceberg_type}: {exc}",
                              code="value.invalid") from None
    return out


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
    dtype = _NUMPY_DTYPES.get(name)
    if dtype is None:
        raise PuffinError(f"type {iceberg_type} has no fixed-width numeric serialization",
                          code="value.type")
    if name in _INT_RANGES:
        if array.dtype.kind not in "iu":
            raise PuffinError(f"{name} values must be integers, found numpy dtype {array.dtype}",
                              code="value.invalid")
        low, high = _INT_RANGES[name]
        if array.size and (int(array.min()) < low or int(array.max()) > high):
            raise PuffinError(f"{name} values must be from {low} to {high}, found "
                              f"{int(array.min())} to {int(array.max())}", code="value.invalid")
    converted = np.ascontiguousarray(array, dtype=dtype).reshape(-1)
    return converted.view(np.uint8).reshape(-1, np.dtype(dtype).itemsize)


# ---- parsing ---------------------------------------------------------------------------


def _parse_boolean(t: IcebergType, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise _Invalid("expected true or false")


def _parse_integer(t: IcebergType, text: str) -> int:
    stripped = text.strip()
    if not _INTEGER.fullmatch(stripped):
        raise _Invalid("expected a decimal integer")
    return _check_int(t, int(stripped))


def _check_int(t: IcebergType, value: int) -> int:
    low, high = _INT_RANGES[t.name]
    if not low <= value <= high:
        raise _Invalid(f"expected a value from {low} to {high}")
    return value


def _parse_float(t: IcebergType, text: str) -> float:
    stripped = text.strip()
    special = _FLOAT_SPECIAL.get(stripped.lower())
    if special is not None:
        return special
    if not _FLOAT.fullmatch(stripped):
        raise _Invalid("expected a decimal number, NaN, Infinity or -Infinity")
    value = float(stripped)
    if math.isinf(value):
        raise _Invalid("out of range for a double")
    if t.name == "float":
        value = _round_to_float32(stripped, value)
    return value


def _round_to_float32(text: str, value: float) -> float:
    """Round decimal ``text`` (whose nearest double is ``value``) once to binary32."""
    import numpy as np

    with np.errstate(over="ignore"):
        single = float(np.float32(value))
    if math.isinf(single):
        # The double may be exactly the midpoint between the largest float and the next power
        # of two, while the text itself lies below it (Java's parseFloat then gives the
        # largest float); above it, or on it (ties to even), the float overflows.
        largest = float(np.finfo(np.float32).max)
        midpoint = largest + 2.0**103
        if abs(value) == midpoint and abs(Fraction(Decimal(text))) < Fraction(midpoint):
            return math.copysign(largest, value)
        raise _Invalid("out of range for a float")
    if single != value:
        # Rounding twice (text -> double -> float) can differ from rounding once only when
        # the double lies exactly halfway between two floats: decide with exact arithmetic.
        with np.errstate(over="ignore"):
            other = float(np.nextafter(np.float32(single),
                                       np.float32(math.copysign(math.inf, value - single))))
        if not math.isinf(other) and (single + other) / 2 == value:
            exact = Fraction(Decimal(text))
            middle = Fraction(value)
            if exact != middle:
                closer_to_other = (exact > middle) == (other > single)
                single = other if closer_to_other else single
    return single


def _parse_decimal(t: IcebergType, text: str) -> Decimal:
    stripped = text.strip()
    if not _DECIMAL.fullmatch(stripped):
        raise _Invalid("expected a decimal number such as 12.34 (no exponent)")
    return _check_decimal(t, Decimal(stripped))


def _check_decimal(t: IcebergType, value: Decimal) -> Decimal:
    assert t.scale is not None and t.precision is not None
    if not value.is_finite():
        raise _Invalid("expected a finite number")
    scaled = value.quantize(Decimal(1).scaleb(-t.scale), context=_DECIMAL_CONTEXT)
    if scaled != value:
        raise _Invalid(f"expected at most {t.scale} digits after the decimal point")
    if abs(_unscaled(scaled, t.scale)) >= 10**t.precision:
        raise _Invalid(f"expected at most {t.precision} digits "
                       f"({t.precision - t.scale} before the point)")
    return scaled


def _unscaled(value: Decimal, scale: int) -> int:
    return int(value.scaleb(scale, context=_DECIMAL_CONTEXT))


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 in the proleptic Gregorian calendar (any year)."""
    if not 1 <= month <= 12:
        raise _Invalid("month must be 01 to 12")
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    month_days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    if not 1 <= day <= month_days:
        raise _Invalid(f"day must be 01 to {month_days:02d}")
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _time_units(groups: tuple[str | None, ...], digits: int) -> int:
    """Units of 10**-digits seconds since midnight from (hour, minute, second, fraction)."""
    hour, minute, second, fraction = groups
    assert hour is not None and minute is not None
    h, m, s = int(hour), int(minute), int(second or 0)
    if h > 23 or m > 59 or s > 59:
        raise _Invalid("time must be 00:00:00 to 23:59:59")
    frac = fraction or ""
    if len(frac) > digits:
        raise _Invalid(f"expected at most {digits} fractional digits of a second")
    units_per_second: int = 10**digits
    return ((h * 60 + m) * 60 + s) * units_per_second + int(frac.ljust(digits, "0"))


def _parse_date(t: IcebergType, text: str) -> int:
    match = _DATE_RE.fullmatch(text.strip())
    if not match:
        raise _Invalid("expected an ISO date such as 2024-01-31")
    return _check_int(t, _days_from_civil(*(int(g) for g in match.groups())))


def _parse_time(t: IcebergType, text: str) -> int:
    match = _TIME_RE.fullmatch(text.strip())
    if not match:
        raise _Invalid("expected HH:MM[:SS[.ffffff]]")
    return _time_units(match.groups(), 6)


def _parse_timestamp(t: IcebergType, text: str) -> int:
    match = _TIMESTAMP_RE.fullmatch(text.strip())
    with_zone = t.name.startswith("timestamptz")
    if not match:
        example = "2024-01-31T12:34:56" + ("+00:00" if with_zone else "")
        raise _Invalid(f"expected an ISO timestamp such as {example}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if with_zone and zone is None:
        raise _Invalid("expected a UTC offset (Z or +HH:MM) for a timestamp with time zone")
    if not with_zone and zone is not None:
        raise _Invalid("a timestamp without time zone takes no offset")
    digits = 9 if t.name.endswith("_ns") else 6
    days = _days_from_civil(int(year), int(month), int(day))
    units = days * _SECONDS_PER_DAY * 10**digits + _time_units(
        (hour, minute, second, fraction), digits)
    if zone is not None and zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        offset_hours, offset_minutes = int(zone[1:3]), int(zone[-2:])
        if offset_hours > 18 or offset_minutes > 59:
            raise _Invalid("UTC offset must be at most 18:00")
        units -= sign * (offset_hours * 60 + offset_minutes) * 60 * 10**digits
    return _check_int(t, units)


def _parse_string(t: IcebergType, text: str) -> str:
    return text


def _parse_uuid(t: IcebergType, text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        raise _Invalid("expected a UUID such as f79c3e09-677c-4bbd-a479-3f349cb785e7") from None


def _parse_hex(t: IcebergType, text: str) -> bytes:
    stripped = text.strip()
    if not _HEX.fullmatch(stripped):
        raise _Invalid("expected hexadecimal bytes, two digits per byte")
    return _check_bytes(t, bytes.fromhex(stripped))


def _check_bytes(t: IcebergType, value: bytes) -> bytes:
    if t.length is not None and len(value) != t.length:
        raise _Invalid(f"expected exactly {t.length} bytes, found {len(value)}")
    return value


_PARSERS: dict[str, Callable[[IcebergType, str], IcebergValue]] = {
    "boolean": _parse_boolean,
    "int": _parse_integer,
    "long": _parse_integer,
    "float": _parse_float,
    "double": _parse_float,
    "decimal": _parse_decimal,
    "date": _parse_date,
    "time": _parse_time,
    "timestamp": _parse_timestamp,
    "timestamptz": _parse_timestamp,
    "timestamp_ns": _parse_timestamp,
    "timestamptz_ns": _parse_timestamp,
    "string": _parse_string,
    "uuid": _parse_uuid,
    "fixed": _parse_hex,
    "binary": _parse_hex,
}


# ---- serialization -----------------------------------------------------------------------

_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _as_int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid("expected an integer")
    return int(value)


def _ser_boolean(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, bool):
        raise _Invalid("expected True or False")
    return b"\x01" if value else b"\x00"


def _ser_int32(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime) and t.name == "date":
        value = (value - _EPOCH.date()).days
    return _I32.pack(_check_int(t, _as_int(value)))


def _ser_int64(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, _dt.time) and t.name == "time":
        if value.tzinfo is not None:
            raise _Invalid("expected a time without time zone")
        value = _time_units((str(value.hour), str(value.minute), str(value.second),
                             f"{value.microsecond:06d}"), 6)
    elif isinstance(value, _dt.datetime) and t.name.startswith("timestamp"):
        value = _datetime_units(t, value)
    return _I64.pack(_check_int(t, _as_int(value)))


def _datetime_units(t: IcebergType, value: _dt.datetime) -> int:
    with_zone = t.name.startswith("timestamptz")
    if with_zone != (value.tzinfo is not None):
        raise _Invalid("expected an aware datetime" if with_zone else "expected a naive datetime")
    delta = value - (_EPOCH_UTC if with_zone else _EPOCH)
    micros = (delta.days * _SECONDS_PER_DAY + delta.seconds) * _MICROS_PER_SECOND
    micros += delta.microseconds
    return micros * 1000 if t.name.endswith("_ns") else micros


def _ser_float(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid("expected a number")
    try:
        return (_F32 if t.name == "float" else _F64).pack(value)
    except OverflowError:
        raise _Invalid("out of range for a float") from None


def _ser_decimal(t: IcebergType, value: Any) -> bytes:
    assert t.scale is not None
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise _Invalid("expected a Decimal")
    unscaled = _unscaled(_check_decimal(t, Decimal(value)), t.scale)
    # Java's BigInteger.toByteArray: the fewest bytes that hold the value and its sign bit.
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _ser_string(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, str):
        raise _Invalid("expected a str")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _Invalid(f"not encodable as UTF-8 ({exc.reason})") from None


def _ser_uuid(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, uuid.UUID):
        raise _Invalid("expected a uuid.UUID")
    return value.bytes


def _ser_bytes(t: IcebergType, value: Any) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise _Invalid("expected bytes")
    return _check_bytes(t, bytes(value))


_SERIALIZERS: dict[str, Callable[[IcebergType, Any], bytes]] = {
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

__all__: Sequence[str] = (
    "IcebergType",
    "IcebergValue",
    "parse_values",
    "serialize_array",
    "serialize_values",
)
