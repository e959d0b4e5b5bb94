"""Spark SQL expressions whose ``theta_sketch_agg`` hashes equal Iceberg's for each type.

``theta_sketch_agg`` (Spark 4.1+, DataSketches Java inside) hashes its input as DataSketches'
``update`` does: a BIGINT as its 8 little-endian bytes, an ARRAY<INT> as 4 little-endian
bytes per element, a STRING as UTF-8, a BINARY as is, a DOUBLE as the 8 little-endian bytes of
``Double.doubleToLongBits`` after turning ``-0.0`` into ``0.0`` (empty strings and binaries are
skipped, as Iceberg's sketches skip them). Iceberg feeds each value's single-value
serialization (table spec, Appendix D), so each column is first projected to an input whose
DataSketches bytes are exactly those:

==============  ===========================================================================
Iceberg type    projected input (``c`` is the column)
==============  ===========================================================================
boolean         BINARY ``X'01'`` / ``X'00'``
int             ARRAY<INT> ``array(c)``: one int, 4 bytes little-endian
date            ARRAY<INT> ``array(unix_date(c))``
long, time      BIGINT ``c``
timestamp(tz)   BIGINT ``unix_micros(c)`` (the session time zone is UTC)
float           ARRAY<INT> of ``Float.floatToRawIntBits(c)`` (through ``reflect``, so in a
                projection of its own: reflect is not allowed inside an aggregate)
double          DOUBLE ``c`` with ``-0.0`` left out; a second aggregate records whether the
                column holds ``-0.0``, whose hash (raw bits ``0x8000000000000000``) is added to
                the sketch on the driver. NaN is hashed as the canonical NaN
                (``0x7FF8000000000000``), as Spark produces it; a NaN with another payload in a
                data file would hash differently from Iceberg's raw bits.
decimal(P,S)    BINARY: the unscaled value in big-endian two's complement, fewest bytes
                (Java's ``BigInteger.toByteArray``). For P <= 18 the tail of
                ``CAST(unscaled AS BINARY)`` (8 bytes big-endian; needs the session's
                ``spark.sql.ansi.enabled=false``), its length a sum of comparisons without
                branches, so that Spark computes the unscaled value once per row (common
                subexpression elimination skips the branches of a CASE); above, built from
                hex digits of two 64-bit halves of the DECIMAL(38,0) unscaled value
string          STRING ``c``
binary, fixed   BINARY ``c``
uuid            BINARY ``c`` (16 bytes, big-endian); with ``uuid_as_string`` the canonical
                lower-case text, as Iceberg's Spark procedure hashes it
==============  ===========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from puffin_cli.blobs.iceberg_values import IcebergType

# The hash of -0.0's Iceberg serialization is added on the driver (see the module docstring).
NEGATIVE_ZERO_DOUBLE = b"\x00\x00\x00\x00\x00\x00\x00\x80"
_TWO_64 = "18446744073709551616BD"
_MAX_LONG_PRECISION = 18


@dataclass(frozen=True)
class SketchInput:
    """How one column is sketched: ``projection`` (SQL over the read column) is computed in a
    projection before the aggregate; ``negative_zero`` (SQL, or ``None``) flags rows whose value
    is ``-0.0`` and must then be left out of ``projection``."""

    projection: str
    negative_zero: str | None = None


def _minimal_bytes(unscaled: str, hex_digits: str, max_bytes: int) -> str:
    """BINARY of the fewest big-endian bytes of ``unscaled`` whose two's complement holds it,
    given ``hex_digits`` (SQL: 2 * max_bytes hex digits of its two's complement)."""
    cases = " ".join(
        f"WHEN {unscaled} BETWEEN {-(1 << (8 * n - 1))} AND {(1 << (8 * n - 1)) - 1} "
        f"THEN {2 * n}" for n in range(1, max_bytes))
    width = f"CASE {cases} ELSE {2 * max_bytes} END"
    return f"unhex(substr({hex_digits}, {2 * max_bytes + 1} - ({width})))"


def _long_minimal_bytes(unscaled: str) -> str:
    """BINARY of the fewest big-endian bytes holding the BIGINT ``unscaled`` in two's
    complement: the last ``n`` of its 8 bytes, ``n`` = 1 + how many of the limits
    2^7, 2^15, ..., 2^55 its magnitude ``unscaled XOR (unscaled >> 63)`` reaches."""
    magnitude = f"({unscaled} ^ shiftright({unscaled}, 63))"
    width = "(1 + " + " + ".join(
        f"CAST({magnitude} >= {1 << (8 * n - 1)} AS INT)" for n in range(1, 8)) + ")"
    return f"substr(CAST({unscaled} AS BINARY), 9 - {width}, {width})"


def _decimal(column: str, precision: int, scale: int) -> str:
    if precision <= _MAX_LONG_PRECISION:
        unscaled = f"CAST({column} * 1{'0' * scale}BD AS BIGINT)" if scale else \
            f"CAST({column} AS BIGINT)"
        return _long_minimal_bytes(unscaled)
    # Unscaled DECIMAL(38,0): the digits of the plain text form with all S decimals
    # (format_number; CAST AS STRING writes 1E-18 outside ANSI mode), separators dropped.
    unscaled = (f"CAST(replace(replace(format_number({column}, {scale}), ',', ''), '.', '') "
                "AS DECIMAL(38,0))")
    low = f"pmod({unscaled}, {_TWO_64})"
    high = f"CAST(({unscaled} - {low}) div {_TWO_64} AS BIGINT)"
    low_high = f"CAST({low} div 4294967296BD AS BIGINT)"
    low_low = f"CAST(pmod({low}, 4294967296BD) AS BIGINT)"
    digits = (f"concat(lpad(hex({high}), 16, '0'), lpad(hex({low_high}), 8, '0'), "
              f"lpad(hex({low_low}), 8, '0'))")
    return _minimal_bytes(unscaled, digits, 16)


def sketch_input(column: str, iceberg_type: IcebergType, *, uuid_as_string: bool = False
                 ) -> SketchInput:
    """The projection feeding ``theta_sketch_agg`` for a column read with its Spark type."""
    name = iceberg_type.name
    c = column
    if name == "boolean":
        return SketchInput(f"CASE WHEN {c} THEN X'01' WHEN NOT {c} THEN X'00' END")
    if name == "int":
        return SketchInput(f"CASE WHEN {c} IS NOT NULL THEN array({c}) END")
    if name == "date":
        return SketchInput(f"CASE WHEN {c} IS NOT NULL THEN array(unix_date({c})) END")
    if name in ("long", "time"):
        return SketchInput(c)
    if name in ("timestamp", "timestamptz"):
        return SketchInput(f"unix_micros(CAST({c} AS TIMESTAMP))")
    if name == "float":
        bits = f"CAST(reflect('java.lang.Float', 'floatToRawIntBits', {c}) AS INT)"
        return SketchInput(f"CASE WHEN {c} IS NOT NULL THEN array({bits}) END")
    if name == "double":
        negative = f"({c} = 0.0D AND startswith(CAST({c} AS STRING), '-'))"
        return SketchInput(f"CASE WHEN NOT {negative} THEN {c} END", negative)
    if name == "decimal":
        assert iceberg_type.precision is not None and iceberg_type.scale is not None
        return SketchInput(_decimal(c, iceberg_type.precision, iceberg_type.scale))
    if name == "uuid" and uuid_as_string:
        h = f"lower(hex({c}))"
        return SketchInput(f"concat_ws('-', substr({h}, 1, 8), substr({h}, 9, 4), "
                           f"substr({h}, 13, 4), substr({h}, 17, 4), substr({h}, 21, 12))")
    if name in ("string", "binary", "fixed", "uuid"):
        return SketchInput(c)
    raise ValueError(f"no sketch input for type {iceberg_type}")
