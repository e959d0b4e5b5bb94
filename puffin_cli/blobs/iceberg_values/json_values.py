"""Values as JSON and as text for people: the one serialization of partition values (and any
other single Iceberg value) that every document and view uses.

:func:`json_value` is the table spec's JSON single-value serialization (Appendix D, "JSON
single-value serialization"), as Iceberg Java's ``SingleValueParser.toJson`` writes it:

=====================  =====================================================================
type                   JSON
=====================  =====================================================================
boolean, int, long     JSON boolean / number
float, double          JSON number; ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` as strings
decimal(P,S)           string, ``BigDecimal.toString`` of the value at scale S (``"14.20"``,
                       ``"1E+2"`` only for a negative scale)
date                   ``"2024-03-02"`` (ISO-8601; years past 9999 with ``+``)
time                   ``"22:31:08"``, ``"22:31:08.123456"`` (fraction without trailing 0s)
timestamp              ``"2017-11-16T22:31:08.123456"``
timestamptz            ``"2017-11-16T22:31:08.123456+00:00"`` (always UTC)
timestamp(tz)_ns       the same with up to nine fraction digits
string                 string
uuid                   ``"f79c3e09-677c-4bbd-a479-3f349cb785e7"``
fixed(L), binary       lowercase hex (``"000102ff"``, the spec's example; Java writes capitals)
=====================  =====================================================================

:func:`human_value` is the form Iceberg's partition paths show (``Transform.toHumanString``,
not URL-encoded): the JSON text above for most types, base64 for fixed and binary, ``null``
for null; :func:`partition_human` adds the transforms' own forms (``year`` ``2024``, ``month``
``2024-03``, ``hour`` ``2024-03-02-10``, ``bucket`` its number), whose JSON stays the spec's
result type (an int: months from 1970-01 for ``month``).

Values come as Iceberg's units (``int`` days, micro- or nanoseconds; unscaled ``int`` or
``Decimal`` decimals) or as the Python objects Avro and Arrow readers give (``date``,
``datetime``, ``time``, ``Decimal``, ``UUID``, ``bytes``). A value that does not fit its type
(hostile metadata) is written as its own type would write it (:func:`infer_type`), never
refused: these are outputs.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
import uuid
from decimal import Decimal
from typing import Any

from puffin_cli.blobs.iceberg_values.types import (
    EPOCH,
    EPOCH_UTC,
    MICROS_PER_SECOND,
    SECONDS_PER_DAY,
    IcebergType,
    Invalid,
    check_decimal,
)

_NANOS = {"timestamp_ns", "timestamptz_ns"}
_ZONED = {"timestamptz", "timestamptz_ns"}


def json_value(iceberg_type: IcebergType | None, value: Any) -> Any:
    """``value`` in the spec's JSON single-value serialization for ``iceberg_type`` (``None``:
    the type the value's Python form implies). ``None`` is JSON null."""
    if value is None:
        return None
    kind = iceberg_type or infer_type(value)
    try:
        return _JSON[kind.name](kind, value)
    except (Invalid, KeyError, TypeError, ValueError, OverflowError):
        if iceberg_type is None:
            return repr(value)
        return json_value(None, value)


def human_value(iceberg_type: IcebergType | None, value: Any) -> str:
    """``value`` as Iceberg's partition paths show an identity value of ``iceberg_type``
    (``Transform.toHumanString``, before URL encoding); ``null`` for null."""
    if value is None:
        return "null"
    kind = iceberg_type or infer_type(value)
    if kind.name in ("fixed", "binary"):
        try:
            return base64.b64encode(_bytes(kind, value)).decode("ascii")
        except Invalid:
            return human_value(None, value)
    shown = json_value(kind, value)
    if isinstance(shown, bool):
        return "true" if shown else "false"
    return str(shown)


def transform_result_type(transform: str, source: IcebergType | None) -> IcebergType | None:
    """The partition field's type (the spec's "Partition Transforms" table): the source type
    for ``identity``, ``truncate[W]`` and ``void``, ``date`` for ``day``, ``int`` for
    ``bucket[N]``, ``year``, ``month`` and ``hour``; ``None`` when unknown."""
    name = transform.split("[", 1)[0].strip().lower()
    if name in ("bucket", "year", "month", "hour"):
        return IcebergType("int")
    if name == "day":
        return IcebergType("date")
    if name in ("identity", "truncate", "void"):
        return source
    return None


def partition_human(transform: str, result_type: IcebergType | None, value: Any) -> str:
    """A partition value as Iceberg's partition paths show it (``ts_day=2024-03-02``'s value
    part): ``year`` as ``2024``, ``month`` ``2024-03``, ``hour`` ``2024-03-02-10``, ``day`` a
    date, others as :func:`human_value` of the result type."""
    name = transform.split("[", 1)[0].strip().lower()
    if value is None or name == "void":
        return "null"
    if name in ("year", "month", "hour") and isinstance(value, int) \
            and not isinstance(value, bool):
        if name == "year":
            return _year(1970 + value)
        if name == "month":
            return f"{_year(1970 + value // 12)}-{value % 12 + 1:02d}"
        days, hour = divmod(value, 24)
        return f"{_date(days)}-{hour:02d}"
    return human_value(result_type, value)


def infer_type(value: Any) -> IcebergType:
    """The Iceberg type a Python value's form implies (for values whose type is unknown)."""
    if isinstance(value, bool):
        return IcebergType("boolean")
    if isinstance(value, int):
        return IcebergType("long")
    if isinstance(value, float):
        return IcebergType("double")
    if isinstance(value, Decimal):
        exponent = value.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return IcebergType("decimal", precision=38, scale=scale)
    if isinstance(value, _dt.datetime):
        return IcebergType("timestamp" if value.tzinfo is None else "timestamptz")
    if isinstance(value, _dt.date):
        return IcebergType("date")
    if isinstance(value, _dt.time):
        return IcebergType("time")
    if isinstance(value, uuid.UUID):
        return IcebergType("uuid")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return IcebergType("binary")
    return IcebergType("string")


# ---- per type --------------------------------------------------------------------------------


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid("expected an integer")
    return value


def _json_boolean(t: IcebergType, value: Any) -> Any:
    if not isinstance(value, bool):
        raise Invalid("expected a boolean")
    return value


def _json_integer(t: IcebergType, value: Any) -> Any:
    return _integer(value)


def _json_float(t: IcebergType, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Invalid("expected a number")
    number = float(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def _json_decimal(t: IcebergType, value: Any) -> Any:
    scale = t.scale or 0
    if isinstance(value, (bytes, bytearray, memoryview)):  # unscaled, two's complement
        value = int.from_bytes(bytes(value), "big", signed=True)
    if isinstance(value, int) and not isinstance(value, bool):
        digits = tuple(int(d) for d in str(abs(value)))
        return str(Decimal((1 if value < 0 else 0, digits, -scale)))
    if not isinstance(value, Decimal) or not value.is_finite():
        raise Invalid("expected a decimal")
    if t.scale is not None and value.as_tuple().exponent != -scale:
        value = check_decimal(t, value)  # at the type's scale, as Java's BigDecimal is
    return str(value)


def _days(value: Any) -> int:
    if isinstance(value, _dt.datetime):
        raise Invalid("expected a date")
    if isinstance(value, _dt.date):
        return (value - EPOCH.date()).days
    return _integer(value)


def _year(year: int) -> str:
    """A year as Java's ``LocalDate`` writes it: four digits at least, ``+`` past 9999."""
    if year > 9999:
        return f"+{year}"
    return f"-{-year:04d}" if year < 0 else f"{year:04d}"


def _date(days: int) -> str:
    """Days from 1970-01-01 as ISO-8601, any year (proleptic Gregorian, as Java's)."""
    z = days + 719468  # days from 0000-03-01
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    return f"{_year(year)}-{month:02d}-{day:02d}"


def _clock(units: int, per_second: int) -> str:
    """A time of day in ``units`` (``per_second`` of them a second) as ISO-8601, the
    fraction without trailing zeros (Java's ``ISO_LOCAL_TIME``)."""
    seconds, fraction = divmod(units, per_second)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    text = f"{hour:02d}:{minute:02d}:{second:02d}"
    if fraction:
        width = len(str(per_second)) - 1
        text += "." + f"{fraction:0{width}d}".rstrip("0")
    return text


def _json_date(t: IcebergType, value: Any) -> Any:
    return _date(_days(value))


def _json_time(t: IcebergType, value: Any) -> Any:
    if isinstance(value, _dt.time):
        value = ((value.hour * 60 + value.minute) * 60 + value.second) * MICROS_PER_SECOND \
            + value.microsecond
    micros = _integer(value)
    if not 0 <= micros < SECONDS_PER_DAY * MICROS_PER_SECOND:
        raise Invalid("expected a time of day")
    return _clock(micros, MICROS_PER_SECOND)


def _json_timestamp(t: IcebergType, value: Any) -> Any:
    per_second = 1_000_000_000 if t.name in _NANOS else MICROS_PER_SECOND
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        micros = (value - EPOCH_UTC) // _dt.timedelta(microseconds=1)
        value = micros * (per_second // MICROS_PER_SECOND)
    units = _integer(value)
    days, rest = divmod(units, SECONDS_PER_DAY * per_second)
    text = f"{_date(days)}T{_clock(rest, per_second)}"
    return text + "+00:00" if t.name in _ZONED else text


def _json_string(t: IcebergType, value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    if not isinstance(value, str):
        raise Invalid("expected a string")
    return value


def _json_uuid(t: IcebergType, value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value) == 16:
        return str(uuid.UUID(bytes=bytes(value)))
    if isinstance(value, str):
        return str(uuid.UUID(value))
    raise Invalid("expected a UUID")


def _bytes(t: IcebergType, value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, uuid.UUID):
        return value.bytes
    raise Invalid("expected bytes")


def _json_bytes(t: IcebergType, value: Any) -> Any:
    return _bytes(t, value).hex()


_JSON = {
    "boolean": _json_boolean,
    "int": _json_integer,
    "long": _json_integer,
    "float": _json_float,
    "double": _json_float,
    "decimal": _json_decimal,
    "date": _json_date,
    "time": _json_time,
    "timestamp": _json_timestamp,
    "timestamptz": _json_timestamp,
    "timestamp_ns": _json_timestamp,
    "timestamptz_ns": _json_timestamp,
    "string": _json_string,
    "uuid": _json_uuid,
    "fixed": _json_bytes,
    "binary": _json_bytes,
}
