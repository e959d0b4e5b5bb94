"""The bytes of a ``deletion-vector-v1`` blob: named sizes and limits, and the layout a walk of
them gives (bitmaps, containers) with the decoded vector.

Blob layout::

    +-------------------+-------------+------------------------------+-------------------+
    | length (u32 BE)   | magic       | vector: 64-bit Roaring,      | CRC-32 (u32 BE)   |
    | = 4 + len(vector) | D1 D3 39 64 | "portable" serialization     | of magic + vector |
    +-------------------+-------------+------------------------------+-------------------+

The vector is a bitmap count (u64 LE), then per 32-bit bitmap its key (u32 LE, the high 32 bits
of the positions) and a standard 32-bit portable Roaring bitmap of the low 32 bits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from puffin_cli.format.spec import (
    ROW_POSITION_FIELD_ID,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]


DV_MAGIC = b"\xd1\xd3\x39\x64"
LENGTH_BYTES = 4
CRC_BYTES = 4
BITMAP_COUNT_BYTES = 8
KEY_BYTES = 4
# Where the vector starts in the blob, and the bytes around it.
VECTOR_START = LENGTH_BYTES + len(DV_MAGIC)
ENVELOPE_BYTES = VECTOR_START + CRC_BYTES
MIN_BLOB_BYTES = ENVELOPE_BYTES + BITMAP_COUNT_BYTES
# Each 32-bit bitmap takes at least its key, a cookie and a container count.
MIN_BITMAP_BYTES = KEY_BYTES + 8

MAX_POSITION = (1 << 63) - 1
TOP_BIT_KEY = 1 << 31
# Iceberg Java's RoaringPositionBitmap.MAX_KEY (Integer.MAX_VALUE - 1).
JAVA_MAX_KEY = 0x7FFFFFFE
# Encoding writes Java's dense layout (an empty bitmap for every missing key below the highest)
# while the highest key is below this; above it (positions >= 2^52, which Java cannot even
# allocate) only the non-empty bitmaps are written, which every reader, Java included, accepts.
DENSE_KEY_LIMIT = 1 << 20

DV_SNAPSHOT_ID = -1
DV_SEQUENCE_NUMBER = -1
DV_FIELDS = (ROW_POSITION_FIELD_ID,)

# 32-bit portable Roaring format (RoaringFormatSpec).
COOKIE_NO_RUN = 12346
COOKIE_RUN = 12347
NO_OFFSET_THRESHOLD = 4
ARRAY_MAX = 4096
BITMAP_BYTES = 8192
MAX_CONTAINERS = 1 << 16

ARRAY, BITMAP, RUN = "array", "bitmap", "run"


@dataclass(frozen=True)
class ContainerLayout:
    """One Roaring container: its high 16 bits, kind, cardinality, and where its payload is
    (``offset``, ``size``: bytes of the buffer that was walked)."""

    high16: int
    kind: str
    cardinality: int
    offset: int
    size: int


# Container kinds as stored in a BitmapLayout's ``table``.
KINDS = (ARRAY, BITMAP, RUN)
ARRAY_KIND, BITMAP_KIND, RUN_KIND = range(3)
# A container's index in its bitmap and what is wrong with it.
Problem = tuple[int, str]


@dataclass(frozen=True, eq=False)
class BitmapLayout:
    """One 32-bit bitmap of the vector: its key (high 32 bits), cookie, size and containers.

    ``table`` holds the containers as an int64 array of shape (5, containers): rows high16,
    kind (index into ``ARRAY, BITMAP, RUN``), cardinality, payload offset, payload size; the
    :class:`ContainerLayout` objects are made from it on first use of ``containers``.
    """

    key: int
    cookie: int
    serialized_bytes: int
    cardinality: int
    table: Int64Array = field(repr=False)

    @cached_property
    def containers(self) -> tuple[ContainerLayout, ...]:
        highs, kinds, cards, offsets, sizes = self.table.tolist()
        return tuple(ContainerLayout(h, KINDS[k], c, o, s)
                     for h, k, c, o, s in zip(highs, kinds, cards, offsets, sizes, strict=True))


@dataclass(frozen=True)
class DeletionVector:
    """A decoded deletion vector. ``buffer`` is the buffer the layout's offsets point into."""

    bitmap: Any  # pyroaring.BitMap64
    bitmaps: tuple[BitmapLayout, ...]
    buffer: bytes
    length_prefix: int
    crc: int

    @property
    def cardinality(self) -> int:
        return sum(b.cardinality for b in self.bitmaps)
