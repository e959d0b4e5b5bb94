"""Iceberg's single-value serialization of whole Arrow columns, vectorized, and its hashes.

:func:`serialize_column` turns an Arrow column into every row's serialized bytes (table spec,
Appendix D: ints and dates 4 bytes, longs, times and timestamps 8 bytes little-endian, floats
and doubles their raw IEEE bits, decimals the fewest big-endian two's-complement bytes of the
unscaled value, strings UTF-8, binary and fixed as is, uuid 16 bytes or its text), converting
the values to the Iceberg type first (int to long, float to double, decimal widening; time
units to the type's micro- or nanoseconds, rounding down). :meth:`SerializedColumn.hashes`
hashes the chosen non-null, non-empty ones with :func:`~puffin_cli.blobs.theta.hash_matrix` /
:func:`~puffin_cli.blobs.theta.hash_ragged`, never a Python call per value. Used by
``puffin write --from-parquet`` and by the Spark tasks of ``puffin stats compute``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.blobs.theta import hash_matrix, hash_ragged, hash_words
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

    BoolArray = npt.NDArray[np.bool_]
    Int64Array = npt.NDArray[np.int64]
    UInt8Array = npt.NDArray[np.uint8]

_FIXED_WIDTH = {"int": "<i4", "date": "<i4", "long": "<i8", "time": "<i8", "timestamp": "<i8",
                "timestamptz": "<i8", "timestamp_ns": "<i8", "timestamptz_ns": "<i8",
                "float": "<f4", "double": "<f8"}
_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_DECIMAL_BYTES = 16
_LONG_DIGITS = 18  # decimal precision whose unscaled values fit a long
_HEX_DIGITS = b"0123456789abcdef"
_UUID_DASHES = (8, 12, 16, 20)


@dataclass(frozen=True)
class SerializedColumn:
    """Every row's serialized value: a ``(n, width)`` matrix (``fixed``), or byte strings
    ``buffer[starts[i]:starts[i] + lengths[i]]``; null rows are zeros / empty, ``valid`` false.
    Byte strings of at most 8 bytes may also come as ``words``: each row's bytes as a
    little-endian word, zero past its length (what they are hashed from)."""

    valid: BoolArray
    fixed: UInt8Array | None = None
    buffer: UInt8Array | None = None
    starts: Int64Array | None = None
    lengths: Int64Array | None = None
    words: npt.NDArray[np.uint64] | None = None

    def hashes(self, keep: BoolArray) -> npt.NDArray[np.uint64]:
        """Hashes of the kept non-null, non-empty values, in row order."""
        import numpy as np

        chosen = self.valid & keep
        if self.fixed is not None:
            fixed = self.fixed
            if not chosen.all():
                rows, width = fixed.shape
                if width in (1, 2, 4, 8) and fixed.flags.c_contiguous:  # rows as words
                    fixed = fixed.view(f"<u{width}").reshape(rows)[chosen]
                    fixed = fixed.view(np.uint8).reshape(-1, width)
                else:
                    fixed = fixed[chosen]
            return hash_matrix(fixed)
        assert self.buffer is not None and self.starts is not None and self.lengths is not None
        chosen &= self.lengths > 0
        if self.words is not None:  # a copy: hashed in place
            return hash_words(self.words[chosen], self.lengths[chosen].astype(np.uint64))
        return hash_ragged(self.buffer, self.starts[chosen], self.lengths[chosen])

    def key(self) -> pa.Array:
        """The serialized values as one Arrow binary array (null rows empty), for joins."""
        import numpy as np
        import pyarrow as pa

        if self.fixed is not None:
            rows, width = self.fixed.shape
            data = pa.py_buffer(np.ascontiguousarray(self.fixed))
            return pa.Array.from_buffers(pa.binary(width), rows, [None, data])
        assert self.buffer is not None and self.starts is not None and self.lengths is not None
        offsets = np.zeros(self.lengths.size + 1, dtype=np.int64)
        np.cumsum(self.lengths, out=offsets[1:])
        shift = np.repeat(self.starts - offsets[:-1], self.lengths)
        data = self.buffer[np.arange(int(offsets[-1]), dtype=np.int64) + shift]
        return pa.Array.from_buffers(pa.large_binary(), self.lengths.size,
                                     [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def plain_array(array: Any) -> Any:
    """A plain Arrow array: chunks combined, dictionaries decoded, extension storage."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if isinstance(array.type, pa.BaseExtensionType):  # e.g. arrow.uuid (Parquet UUID)
        array = array.storage
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _filled_numpy(array: Any, zero: Any) -> Any:
    if array.null_count:
        array = array.fill_null(zero)
    return array.to_numpy(zero_copy_only=False)


def _integers(iceberg_type: IcebergType, array: Any) -> Any:
    """int64 (or int32) numpy values of an integer-like column in the type's unit (micros)."""
    import numpy as np
    import pyarrow as pa

    kind = array.type
    if pa.types.is_timestamp(kind) or pa.types.is_time(kind):
        values = _filled_numpy(array.cast(pa.int64()), 0)
        target = _PER_SECOND["ns" if iceberg_type.name.endswith("_ns") else "us"]
        source = _PER_SECOND[kind.unit]
        if source > target:
            return values // np.int64(source // target)
        return values * np.int64(target // source)
    if pa.types.is_date32(kind):
        return _filled_numpy(array.cast(pa.int32()), 0)
    if pa.types.is_integer(kind):
        return _filled_numpy(array, 0)
    raise PuffinError(f"column of type {iceberg_type} holds Arrow type {kind}",
                      code="stats.column-type")


def _numbers(iceberg_type: IcebergType, array: Any) -> UInt8Array:
    """The ``(n, width)`` serialization of a fixed-width numeric column (nulls zero)."""
    import numpy as np
    import pyarrow as pa

    dtype = _FIXED_WIDTH[iceberg_type.name]
    if iceberg_type.name in ("float", "double"):
        if not pa.types.is_floating(array.type):
            raise PuffinError(f"column of type {iceberg_type} holds Arrow type {array.type}",
                              code="stats.column-type")
        values = _filled_numpy(array, 0.0)  # raw bits kept: -0.0 and NaN payloads
    else:
        values = _integers(iceberg_type, array)
    converted = np.ascontiguousarray(values, dtype=dtype)
    result: UInt8Array = converted.view(np.uint8).reshape(-1, np.dtype(dtype).itemsize)
    return result


def _ragged(array: Any) -> tuple[UInt8Array, Int64Array, Int64Array]:
    """(buffer, starts, lengths) of a binary-like Arrow array (null rows get length 0)."""
    import numpy as np
    import pyarrow as pa

    kind = array.type
    rows = len(array)
    if pa.types.is_fixed_size_binary(kind):
        width = kind.byte_width
        data = array.buffers()[1]
        buffer = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        starts = (np.arange(rows, dtype=np.int64) + array.offset) * width
        lengths = np.full(rows, width, dtype=np.int64)
    else:
        if not (pa.types.is_string(kind) or pa.types.is_binary(kind)
                or pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)):
            if not (pa.types.is_string_view(kind) or pa.types.is_binary_view(kind)):
                raise PuffinError(f"a string or binary column holds Arrow type {kind}",
                                  code="stats.column-type")
            array = array.cast(pa.large_binary())
            kind = array.type
        width = 8 if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind) else 4
        _, offsets_buffer, data = array.buffers()
        offsets = np.frombuffer(offsets_buffer, f"<i{width}", rows + 1,
                                array.offset * width).astype(np.int64)
        buffer = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        starts = offsets[:-1]
        lengths = np.diff(offsets)
    if array.null_count:
        lengths[~array.is_valid().to_numpy(zero_copy_only=False)] = 0
    return buffer, starts, lengths


def _gather(buffer: UInt8Array, starts: Int64Array, width: int) -> UInt8Array:
    import numpy as np

    index = starts[:, None] + np.arange(width, dtype=np.int64)
    np.clip(index, 0, max(buffer.size - 1, 0), out=index)
    result: UInt8Array = buffer[index] if buffer.size else np.zeros(index.shape, np.uint8)
    return result


def _decimal_matrix(iceberg_type: IcebergType, array: Any, valid: BoolArray) -> UInt8Array:
    """Unscaled values as 16-byte big-endian two's complement rows (null rows zero)."""
    import numpy as np
    import pyarrow as pa

    kind = array.type
    rows = len(array)
    if pa.types.is_decimal(kind):
        if kind.scale != iceberg_type.scale:
            raise PuffinError(f"column of type {iceberg_type} holds Arrow type {kind} (another "
                              "scale)", code="stats.column-type")
        width = kind.byte_width
        little = np.frombuffer(array.buffers()[1], np.uint8, rows * width,
                               array.offset * width).reshape(rows, width)
        if width >= _DECIMAL_BYTES:
            little = little[:, :_DECIMAL_BYTES]
        else:
            sign = np.where(little[:, -1:] >= 0x80, np.uint8(0xFF), np.uint8(0))
            little = np.hstack([little, np.repeat(sign, _DECIMAL_BYTES - width, axis=1)])
        matrix: UInt8Array = np.ascontiguousarray(little[:, ::-1])
    else:  # big-endian two's complement bytes (Avro bytes or fixed)
        buffer, starts, lengths = _ragged(array)
        if lengths.size and int(lengths.max()) > _DECIMAL_BYTES:
            raise PuffinError(f"a {iceberg_type} value has more than 16 bytes",
                              code="stats.column-type")
        first = _gather(buffer, starts, 1)[:, 0]
        negative = (first >= 0x80) & (lengths > 0)
        matrix = np.where(negative[:, None], np.uint8(0xFF), np.uint8(0)).astype(np.uint8)
        matrix = np.repeat(matrix, _DECIMAL_BYTES, axis=1)
        row = np.repeat(np.arange(rows, dtype=np.int64), lengths)
        within = np.arange(row.size, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths,
                                                                  lengths)
        target = row * _DECIMAL_BYTES + _DECIMAL_BYTES - lengths[row] + within
        matrix.reshape(-1)[target] = buffer[starts[row] + within]
    matrix[~valid] = 0
    return matrix


def _minimal_decimals(matrix: UInt8Array, valid: BoolArray) -> SerializedColumn:
    """Java's ``BigInteger.toByteArray`` of each row: the fewest big-endian bytes."""
    import numpy as np

    rows = matrix.shape[0]
    negative = matrix[:, 0] >= 0x80
    magnitude = np.where(negative[:, None], ~matrix, matrix)
    nonzero = magnitude != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), _DECIMAL_BYTES)
    needed = _DECIMAL_BYTES - first
    top = magnitude[np.arange(rows), np.minimum(first, _DECIMAL_BYTES - 1)]
    lengths = np.where(needed == 0, 1, needed + (top >= 0x80)).astype(np.int64)
    starts = np.arange(rows, dtype=np.int64) * _DECIMAL_BYTES + _DECIMAL_BYTES - lengths
    lengths[~valid] = 0
    return SerializedColumn(valid, buffer=matrix.reshape(-1), starts=starts, lengths=lengths)


def _minimal_long_decimals(iceberg_type: IcebergType, array: Any,
                           valid: BoolArray) -> SerializedColumn:
    """:func:`_minimal_decimals` of an Arrow decimal column whose unscaled values fit a long
    (precision up to 18): the low 8 bytes of each value, in numpy longs."""
    import numpy as np

    kind = array.type
    if kind.scale != iceberg_type.scale:
        raise PuffinError(f"column of type {iceberg_type} holds Arrow type {kind} (another "
                          "scale)", code="stats.column-type")
    rows = len(array)
    words = kind.byte_width // 8
    unscaled = np.frombuffer(array.buffers()[1], "<i8", rows * words,
                             array.offset * kind.byte_width)[::words]
    magnitude = unscaled ^ (unscaled >> np.int64(63))
    lengths = np.ones(rows, dtype=np.int64)
    for size in range(1, 8):  # one more byte per limit 2^7, 2^15, ... the magnitude reaches
        lengths += magnitude >= np.int64(1 << (8 * size - 1))
    # the big-endian bytes of each value, its last ``length`` ones first in a little-endian
    # word: the byte-swapped value shifted right by the bytes left out
    left_out = np.uint64(64) - (lengths << 3).astype(np.uint64)
    words = unscaled.byteswap().view(np.uint64) >> left_out
    starts = np.arange(rows, dtype=np.int64) * 8
    lengths[~valid] = 0
    return SerializedColumn(valid, buffer=words.view(np.uint8), starts=starts, lengths=lengths,
                            words=words)


def _uuid_text(matrix: UInt8Array) -> UInt8Array:
    """Canonical lower-case text (36 bytes) of 16-byte big-endian UUID rows."""
    import numpy as np

    digits = np.frombuffer(_HEX_DIGITS, np.uint8)
    hexed = np.empty((matrix.shape[0], 32), dtype=np.uint8)
    hexed[:, 0::2] = digits[matrix >> 4]
    hexed[:, 1::2] = digits[matrix & 0x0F]
    parts = np.split(hexed, _UUID_DASHES, axis=1)
    dash = np.full((matrix.shape[0], 1), ord("-"), dtype=np.uint8)
    return np.ascontiguousarray(np.hstack([parts[0], dash, parts[1], dash, parts[2], dash,
                                           parts[3], dash, parts[4]]))


def _missing(iceberg_type: IcebergType, rows: int, uuid_as_string: bool) -> SerializedColumn:
    """A column of nulls, shaped as the type's serialization (for joins with present ones)."""
    import numpy as np

    valid = np.zeros(rows, dtype=bool)
    name = iceberg_type.name
    if name == "boolean" or name in _FIXED_WIDTH or (name == "uuid" and uuid_as_string):
        width = 1 if name == "boolean" else 36 if name == "uuid" else iceberg_type.width
        return SerializedColumn(valid, fixed=np.zeros((rows, width or 0), np.uint8))
    empty = np.zeros(rows, dtype=np.int64)
    return SerializedColumn(valid, buffer=np.zeros(0, np.uint8), starts=empty, lengths=empty.copy())


def serialize_column(iceberg_type: IcebergType, array: Any, rows: int,
                     uuid_as_string: bool = False) -> SerializedColumn:
    """Iceberg's serialization of every row of ``array`` (``None``: a missing column)."""
    import numpy as np
    import pyarrow as pa

    if array is None or pa.types.is_null(array.type):
        return _missing(iceberg_type, rows, uuid_as_string)
    array = plain_array(array)
    valid = (array.is_valid().to_numpy(zero_copy_only=False) if array.null_count
             else np.ones(rows, dtype=bool))
    name = iceberg_type.name
    if name == "boolean":
        if not pa.types.is_boolean(array.type):
            raise PuffinError(f"column of type boolean holds Arrow type {array.type}",
                              code="stats.column-type")
        flags = _filled_numpy(array, False).astype(np.uint8).reshape(-1, 1)
        return SerializedColumn(valid, fixed=flags)
    if name in _FIXED_WIDTH:
        return SerializedColumn(valid, fixed=_numbers(iceberg_type, array))
    if name == "decimal":
        if pa.types.is_decimal(array.type) and (iceberg_type.precision or 0) <= _LONG_DIGITS:
            return _minimal_long_decimals(iceberg_type, array, valid)
        return _minimal_decimals(_decimal_matrix(iceberg_type, array, valid), valid)
    buffer, starts, lengths = _ragged(array)
    if name == "uuid" and uuid_as_string:
        if np.any(lengths[valid] != 16):
            raise PuffinError("a uuid value is not 16 bytes", code="stats.column-type")
        return SerializedColumn(valid, fixed=_uuid_text(_gather(buffer, starts, 16)))
    return SerializedColumn(valid, buffer=buffer, starts=starts, lengths=lengths)
