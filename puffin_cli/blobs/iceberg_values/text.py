"""Text forms accepted by :meth:`IcebergType.parse_value` (one value per line in
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
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction

from puffin_cli.blobs.iceberg_values.types import (
    SECONDS_PER_DAY,
    IcebergType,
    IcebergValue,
    Invalid,
    check_bytes,
    check_decimal,
    check_int,
)
from puffin_cli.errors import PuffinError

# ASCII digits (``\\d`` would take any script's) and no more than ``int`` takes quietly.
_INTEGER = re.compile(r"[+-]?[0-9]{1,40}")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_FLOAT_SPECIAL = {
    "nan": math.nan, "+nan": math.nan, "-nan": math.nan,
    "inf": math.inf, "+inf": math.inf, "-inf": -math.inf,
    "infinity": math.inf, "+infinity": math.inf, "-infinity": -math.inf,
}
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)", re.ASCII)
_DATE = r"([+-]?\d{4,9})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_RE = re.compile(_DATE, re.ASCII)
_TIME_RE = re.compile(_TIME, re.ASCII)
_TIMESTAMP_RE = re.compile(_DATE + r"[T ]" + _TIME + r"(Z|z|[+-]\d{2}:?\d{2})?", re.ASCII)
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")


def parse_values(iceberg_type: IcebergType, lines: Iterable[str],
                 first_line: int = 1) -> list[IcebergValue]:
    """Parse one value per line (line endings stripped); errors name the line, counting from
    ``first_line``."""
    values: list[IcebergValue] = []
    for number, line in enumerate(lines, start=first_line):
        text = line.rstrip("\r\n")
        try:
            values.append(parse_value(iceberg_type, text))
        except PuffinError as exc:
            raise PuffinError(f"line {number}: {exc.message}", code=exc.code) from None
    return values


def parse_value(iceberg_type: IcebergType, text: str) -> IcebergValue:
    """One value from its text form."""
    try:
        return PARSERS[iceberg_type.name](iceberg_type, text)
    except Invalid as exc:
        raise PuffinError(f"{text!r} is not a valid {iceberg_type}: {exc}",
                          code="value.parse") from None


# ---- parsing ---------------------------------------------------------------------------


def _parse_boolean(t: IcebergType, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise Invalid("expected true or false")


def _parse_integer(t: IcebergType, text: str) -> int:
    stripped = text.strip()
    if not _INTEGER.fullmatch(stripped):
        raise Invalid("expected a decimal integer")
    return check_int(t, int(stripped))


def _parse_float(t: IcebergType, text: str) -> float:
    stripped = text.strip()
    special = _FLOAT_SPECIAL.get(stripped.lower())
    if special is not None:
        return special
    if not _FLOAT.fullmatch(stripped):
        raise Invalid("expected a decimal number, NaN, Infinity or -Infinity")
    value = float(stripped)
    if math.isinf(value):
        raise Invalid("out of range for a double")
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
        raise Invalid("out of range for a float")
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
        raise Invalid("expected a decimal number such as 12.34 (no exponent)")
    return check_decimal(t, Decimal(stripped))


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 in the proleptic Gregorian calendar (any year)."""
    if not 1 <= month <= 12:
        raise Invalid("month must be 01 to 12")
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    month_days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]
    if not 1 <= day <= month_days:
        raise Invalid(f"day must be 01 to {month_days:02d}")
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def time_units(groups: tuple[str | None, ...], digits: int) -> int:
    """Units of 10**-digits seconds since midnight from (hour, minute, second, fraction)."""
    hour, minute, second, fraction = groups
    assert hour is not None and minute is not None
    h, m, s = int(hour), int(minute), int(second or 0)
    if h > 23 or m > 59 or s > 59:
        raise Invalid("time must be 00:00:00 to 23:59:59")
    frac = fraction or ""
    if len(frac) > digits:
        raise Invalid(f"expected at most {digits} fractional digits of a second")
    units_per_second: int = 10**digits
    return ((h * 60 + m) * 60 + s) * units_per_second + int(frac.ljust(digits, "0"))


def _parse_date(t: IcebergType, text: str) -> int:
    match = _DATE_RE.fullmatch(text.strip())
    if not match:
        raise Invalid("expected an ISO date such as 2024-01-31")
    return check_int(t, _days_from_civil(*(int(g) for g in match.groups())))


def _parse_time(t: IcebergType, text: str) -> int:
    match = _TIME_RE.fullmatch(text.strip())
    if not match:
        raise Invalid("expected HH:MM[:SS[.ffffff]]")
    return time_units(match.groups(), 6)


def _parse_timestamp(t: IcebergType, text: str) -> int:
    match = _TIMESTAMP_RE.fullmatch(text.strip())
    with_zone = t.name.startswith("timestamptz")
    if not match:
        example = "2024-01-31T12:34:56" + ("+00:00" if with_zone else "")
        raise Invalid(f"expected an ISO timestamp such as {example}")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if with_zone and zone is None:
        raise Invalid("expected a UTC offset (Z or +HH:MM) for a timestamp with time zone")
    if not with_zone and zone is not None:
        raise Invalid("a timestamp without time zone takes no offset")
    digits = 9 if t.name.endswith("_ns") else 6
    days = _days_from_civil(int(year), int(month), int(day))
    units = days * SECONDS_PER_DAY * 10**digits + time_units(
        (hour, minute, second, fraction), digits)
    if zone is not None and zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        offset_hours, offset_minutes = int(zone[1:3]), int(zone[-2:])
        if offset_hours > 18 or offset_minutes > 59:
            raise Invalid("UTC offset must be at most 18:00")
        units -= sign * (offset_hours * 60 + offset_minutes) * 60 * 10**digits
    return check_int(t, units)


def _parse_string(t: IcebergType, text: str) -> str:
    return text


def _parse_uuid(t: IcebergType, text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text.strip())
    except ValueError:
        raise Invalid("expected a UUID such as f79c3e09-677c-4bbd-a479-3f349cb785e7") from None


def _parse_hex(t: IcebergType, text: str) -> bytes:
    stripped = text.strip()
    if not _HEX.fullmatch(stripped):
        raise Invalid("expected hexadecimal bytes, two digits per byte")
    return check_bytes(t, bytes.fromhex(stripped))


PARSERS: dict[str, Callable[[IcebergType, str], IcebergValue]] = {
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
