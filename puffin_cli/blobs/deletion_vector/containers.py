"""The contents of a decoded vector's containers with numpy: maximal ranges, their count and
the positions in chunks (positions never become Python ints in bulk).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING

from puffin_cli.blobs.deletion_vector.layout import (
    ARRAY,
    BITMAP,
    BITMAP_BYTES,
    RUN,
    ContainerLayout,
    DeletionVector,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]
    UInt64Array = npt.NDArray[np.uint64]


def container_runs(buf: bytes, c: ContainerLayout) -> tuple[Int64Array, Int64Array]:
    """Maximal runs of one container as (starts, ends) inclusive, low 16 bits."""
    import numpy as np

    if c.kind == RUN:
        n_runs = (c.size - 2) // 4
        runs = np.frombuffer(buf, "<u2", 2 * n_runs, c.offset + 2).astype(np.int64)
        starts, ends = runs[0::2], runs[0::2] + runs[1::2]
        keep = np.flatnonzero(starts[1:] > ends[:-1] + 1)  # runs that touch are one range
        return (np.concatenate(([starts[0]], starts[keep + 1])),
                np.concatenate((ends[keep], [ends[-1]])))
    if c.kind == ARRAY:
        values = np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int64)
        breaks = np.flatnonzero(np.diff(values) != 1)
        return (np.concatenate((values[:1], values[breaks + 1])),
                np.concatenate((values[breaks], values[-1:])))
    bits = np.unpackbits(np.frombuffer(buf, np.uint8, BITMAP_BYTES, c.offset),
                         bitorder="little").astype(np.int8)
    edges = np.diff(np.concatenate(([0], bits, [0])))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1


def container_run_count(buf: bytes, c: ContainerLayout) -> int:
    """How many maximal runs one container holds, without listing them."""
    import numpy as np

    if c.kind == ARRAY:
        values = np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int32)
        return c.cardinality - int(np.count_nonzero(np.diff(values) == 1))
    if c.kind == BITMAP:
        words = np.frombuffer(buf, "<u8", BITMAP_BYTES // 8, c.offset)
        carry = np.concatenate(([np.uint64(0)], words[:-1] >> np.uint64(63)))
        starts = words & ~((words << np.uint64(1)) | carry)
        return int(np.unpackbits(starts.view(np.uint8)).sum())
    return len(container_runs(buf, c)[0])


def container_values(buf: bytes, c: ContainerLayout) -> Int64Array:
    """The low 16 bits of every position in one container, ascending."""
    import numpy as np

    if c.kind == ARRAY:
        return np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int64)
    if c.kind == BITMAP:
        bits = np.unpackbits(np.frombuffer(buf, np.uint8, BITMAP_BYTES, c.offset),
                             bitorder="little")
        return np.flatnonzero(bits).astype(np.int64)
    starts, ends = container_runs(buf, c)
    lengths = ends - starts + 1
    firsts = np.cumsum(lengths) - lengths
    values: Int64Array = np.arange(c.cardinality, dtype=np.int64) + np.repeat(starts - firsts,
                                                                               lengths)
    return values


def _touches(buf: bytes, c: ContainerLayout) -> tuple[bool, bool]:
    """Whether a container holds its first (0) and last (65535) low value."""
    if c.kind == BITMAP:
        return bool(buf[c.offset] & 1), bool(buf[c.offset + BITMAP_BYTES - 1] & 0x80)
    if c.kind == ARRAY:
        first = struct.unpack_from("<H", buf, c.offset)[0]
        last = struct.unpack_from("<H", buf, c.offset + c.size - 2)[0]
        return first == 0, last == 0xFFFF
    first = struct.unpack_from("<H", buf, c.offset + 2)[0]
    start, length = struct.unpack_from("<HH", buf, c.offset + c.size - 4)
    return first == 0, start + length == 0xFFFF


def _containers(dv: DeletionVector) -> Iterator[tuple[int, ContainerLayout]]:
    """Every container with the high 48 bits of its positions (``key << 16 | high16``)."""
    for b in dv.bitmaps:
        for c in b.containers:
            yield b.key << 16 | c.high16, c


def iter_ranges(dv: DeletionVector) -> Iterator[tuple[int, int]]:
    """The maximal runs of positions, ascending, as inclusive (start, end) pairs."""
    pending: tuple[int, int] | None = None
    for high, c in _containers(dv):
        starts, ends = container_runs(dv.buffer, c)
        offset = high << 16
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            if pending is not None and pending[1] + 1 == s + offset:
                pending = (pending[0], e + offset)
                continue
            if pending is not None:
                yield pending
            pending = (s + offset, e + offset)
    if pending is not None:
        yield pending


def count_ranges(dv: DeletionVector) -> int:
    """The number of maximal runs of positions (runs crossing containers count once)."""
    total = 0
    previous: tuple[int, bool] | None = None  # (high 48 bits, holds 65535)
    for high, c in _containers(dv):
        total += container_run_count(dv.buffer, c)
        first, last = _touches(dv.buffer, c)
        if previous is not None and previous[0] + 1 == high and previous[1] and first:
            total -= 1
        previous = (high, last)
    return total


def iter_position_chunks(dv: DeletionVector, chunk: int = 1 << 20) -> Iterator[UInt64Array]:
    """All positions, ascending, as uint64 arrays of about ``chunk`` positions each."""
    import numpy as np

    parts: list[Int64Array] = []
    held = 0
    for high, c in _containers(dv):
        parts.append(container_values(dv.buffer, c) + (high << 16))
        held += c.cardinality
        if held >= chunk:
            yield np.concatenate(parts).astype(np.uint64)
            parts, held = [], 0
    if parts:
        yield np.concatenate(parts).astype(np.uint64)
