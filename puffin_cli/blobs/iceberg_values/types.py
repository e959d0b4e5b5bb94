"""Iceberg primitive types (:class:`IcebergType`: a type name parsed, its width and numpy form)
and the range checks values of each type pass, whether read from text (:mod:`.text`) or
serialized (:mod:`.binary`).

Python values (what :meth:`IcebergType.parse_value` returns and :func:`serialize_values`
takes): ``bool``; ``int`` for int, long, and for date (days), time (microseconds) and the
timestamps (micro- or nanoseconds); ``float``; ``decimal.Decimal``; ``str``; ``uuid.UUID``;
``bytes``. :func:`serialize_values` also takes ``datetime.date``, ``datetime.time`` and
``datetime.datetime`` (naive for ``timestamp``, aware for ``timestamptz``) and ``int`` for
decimals (the unscaled value is ``value * 10**S``).
"""

from __future__ import annotations

import datetime as _dt
import re
import uuid
from dataclasses import dataclass
from decimal import Context, Decimal

from puffin_cli.errors import PuffinError

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
NUMPY_DTYPES = {
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
INT_RANGES = {
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

_DECIMAL_TYPE = re.compile(r"decimal\(\s*(\d{1,9})\s*,\s*(\d{1,9})\s*\)", re.ASCII)
_FIXED_TYPE = re.compile(r"fixed\[\s*(\d{1,9})\s*\]|fixed\(\s*(\d{1,9})\s*\)", re.ASCII)


MICROS_PER_SECOND = 1_000_000
SECONDS_PER_DAY = 86_400
EPOCH = _dt.datetime(1970, 1, 1)
EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


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
        return NUMPY_DTYPES.get(self.name)


class Invalid(Exception):
    """A value does not fit its type; the message says what was expected."""


def check_int(t: IcebergType, value: int) -> int:
    low, high = INT_RANGES[t.name]
    if not low <= value <= high:
        raise Invalid(f"expected a value from {low} to {high}")
    return value


def check_decimal(t: IcebergType, value: Decimal) -> Decimal:
    assert t.scale is not None and t.precision is not None
    if not value.is_finite():
        raise Invalid("expected a finite number")
    scaled = value.quantize(Decimal(1).scaleb(-t.scale), context=_DECIMAL_CONTEXT)
    if scaled != value:
        raise Invalid(f"expected at most {t.scale} digits after the decimal point")
    if abs(unscaled_value(scaled, t.scale)) >= 10**t.precision:
        raise Invalid(f"expected at most {t.precision} digits "
                       f"({t.precision - t.scale} before the point)")
    return scaled


def unscaled_value(value: Decimal, scale: int) -> int:
    return int(value.scaleb(scale, context=_DECIMAL_CONTEXT))


def check_bytes(t: IcebergType, value: bytes) -> bytes:
    if t.length is not None and len(value) != t.length:
        raise Invalid(f"expected exactly {t.length} bytes, found {len(value)}")
    return value
