"""The length index of a BLOB file: delta, ZigZag, LEB128 varints, one value per row."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from puffin_cli.format.paimon_blob.spec import (
    INT64_MAX,
    INT64_MIN,
    MAX_VARINT_BYTES,
    VECTOR_CHUNK,
    VECTOR_DECODE_BYTES,
)


def encode_lengths(values: Iterable[int]) -> bytes:
    """The index bytes for ``values`` (each encoded as its delta from the one before)."""
    out = bytearray()
    append = out.append
    previous = 0
    for value in values:
        delta = value - previous
        previous = value
        zigzag = delta << 1 if delta >= 0 else ((-delta) << 1) - 1
        while zigzag >= 0x80:
            append((zigzag & 0x7F) | 0x80)
            zigzag >>= 7
        append(zigzag)
    return bytes(out)


@dataclass(frozen=True)
class IndexProblem:
    """Why index bytes do not decode completely: ``at`` is the offset (within the index
    bytes) of the varint that is unterminated or too long."""

    code: str
    message: str
    at: int


def decode_lengths(data: bytes) -> tuple[array[int], IndexProblem | None]:
    """The values of index bytes, and the problem that stopped decoding (if any).

    An unterminated last varint is a problem, as in Paimon Java (pypaimon drops it), and so is
    a varint of more than 10 bytes or a value outside a 64-bit long. Indexes of at least
    :data:`VECTOR_DECODE_BYTES` are decoded with numpy when they decode cleanly.
    """
    if len(data) >= VECTOR_DECODE_BYTES:
        decoded = _decode_vectorized(data)
        if decoded is not None:
            return decoded, None
    return _decode_exact(data)


def _decode_vectorized(data: bytes) -> array[int] | None:
    """:func:`decode_lengths` of a well-formed index, with numpy, :data:`VECTOR_CHUNK` bytes at
    a time (bounded temporaries); ``None`` for an index it must leave to the exact decoder (a
    problem, or values that could leave a 64-bit long)."""
    import numpy as np

    count = sum(int(np.count_nonzero(np.frombuffer(data[at:at + VECTOR_CHUNK], np.uint8) < 0x80))
                for at in range(0, len(data), VECTOR_CHUNK))
    values = array("q", [0]) * count  # allocated once: no growth, no copies
    out = np.frombuffer(values, dtype=np.int64)
    filled = 0
    carry = 0
    view = memoryview(data)
    position = 0
    while position < len(data):
        raw = np.frombuffer(view[position:position + VECTOR_CHUNK], dtype=np.uint8)
        ends = np.flatnonzero(raw < 0x80)
        if len(ends) == 0:
            return None
        raw = raw[:ends[-1] + 1]
        position += len(raw)
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        sizes = ends - starts + 1
        # 9 bytes hold 63 bits: longer varints (and values near the long's range) go exact.
        if int(sizes.max()) > 9:
            return None
        shifts = (np.arange(len(raw), dtype=np.int64) - np.repeat(starts, sizes)) * 7
        parts = (raw & 0x7F).astype(np.uint64) << shifts.astype(np.uint64)
        zigzag = np.add.reduceat(parts, starts).astype(np.int64)
        deltas = (zigzag >> 1) ^ -(zigzag & 1)
        # each |delta| < 2**62: the running sum stays in a long unless this bound says it may
        if abs(carry) + float(np.abs(deltas).max()) * len(deltas) >= 2.0 ** 63:
            return None
        sums = out[filled:filled + len(deltas)]
        np.cumsum(deltas, out=sums)
        sums += carry
        carry = int(sums[-1])
        filled += len(deltas)
    return values


def _decode_exact(data: bytes) -> tuple[array[int], IndexProblem | None]:
    values = array("q")
    append = values.append
    current = 0
    result = 0
    shift = 0
    start = 0
    for position, byte in enumerate(data):
        result |= (byte & 0x7F) << shift
        if byte & 0x80:
            shift += 7
            if shift >= 7 * MAX_VARINT_BYTES:
                return values, IndexProblem(
                    "paimon.index.varint", f"varint at index byte {start} is longer than "
                    f"{MAX_VARINT_BYTES} bytes", start)
            continue
        current += -((result + 1) >> 1) if result & 1 else result >> 1
        if not INT64_MIN <= current <= INT64_MAX:
            return values, IndexProblem(
                "paimon.index.varint", f"value {len(values)} ({current}) does not fit in a "
                "64-bit long", start)
        append(current)
        result = 0
        shift = 0
        start = position + 1
    if start != len(data):
        return values, IndexProblem(
            "paimon.index.varint", f"the last varint (index byte {start} of {len(data)}) is "
            "unterminated: its last byte has the continuation bit set", start)
    return values, None
