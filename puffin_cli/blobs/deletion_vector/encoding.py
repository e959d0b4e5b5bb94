"""Encoding reproduces Iceberg Java's bytes: Java sets positions one by one (array or bitmap
containers), calls ``runOptimize`` (a container becomes a run container when that is strictly
smaller: ``2 + 4 * runs < 2 * cardinality`` for arrays, ``< 8192`` for bitmaps), and writes every
32-bit bitmap from key 0 to the highest key, empty ones included. CRoaring decides some
containers differently (e.g. a 3-position range stays a run container), so the container kinds
are re-decided here by Java's rule.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from puffin_cli.blobs.deletion_vector.codec import vector_of
from puffin_cli.blobs.deletion_vector.containers import (
    container_run_count,
    container_runs,
    container_values,
)
from puffin_cli.blobs.deletion_vector.layout import (
    ARRAY,
    ARRAY_MAX,
    BITMAP,
    BITMAP_BYTES,
    COOKIE_NO_RUN,
    COOKIE_RUN,
    DENSE_KEY_LIMIT,
    DV_MAGIC,
    MAX_POSITION,
    NO_OFFSET_THRESHOLD,
    RUN,
    BitmapLayout,
    ContainerLayout,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import (
    CARDINALITY_PROPERTY,
    REFERENCED_DATA_FILE_PROPERTY,
)

# --------------------------------------------------------------------------------------------
# Encoding


def _java_kind(card: int, n_runs: int) -> str:
    """The container kind Iceberg Java's runOptimize leaves for a freshly built container."""
    run_bytes = 2 + 4 * n_runs
    if card <= ARRAY_MAX:
        return RUN if run_bytes < 2 * card else ARRAY
    return RUN if run_bytes < BITMAP_BYTES else BITMAP


def _container_payload(buf: bytes, c: ContainerLayout, kind: str) -> bytes:
    import numpy as np

    if kind == c.kind:
        return buf[c.offset:c.offset + c.size]
    if kind == RUN:
        starts, ends = container_runs(buf, c)
        pairs = np.empty(2 * len(starts), dtype="<u2")
        pairs[0::2], pairs[1::2] = starts, ends - starts
        return struct.pack("<H", len(starts)) + pairs.tobytes()
    values = container_values(buf, c)
    if kind == ARRAY:
        return values.astype("<u2").tobytes()
    bits = np.zeros(1 << 16, dtype=np.uint8)
    bits[values] = 1
    return np.packbits(bits, bitorder="little").tobytes()


def _encode_bitmap32(buf: bytes, layout: BitmapLayout | None) -> bytes:
    """One 32-bit portable Roaring bitmap, containers as Iceberg Java writes them."""
    containers = () if layout is None else layout.containers
    kinds = [_java_kind(c.cardinality, container_run_count(buf, c)) for c in containers]
    payloads = [_container_payload(buf, c, k) for c, k in zip(containers, kinds, strict=True)]
    n = len(containers)
    has_run = RUN in kinds
    if has_run:
        flags = bytearray((n + 7) // 8)
        for i, kind in enumerate(kinds):
            if kind == RUN:
                flags[i // 8] |= 1 << (i % 8)
        head = struct.pack("<I", COOKIE_RUN | (n - 1) << 16) + bytes(flags)
    else:
        head = struct.pack("<II", COOKIE_NO_RUN, n)
    head += b"".join(struct.pack("<HH", c.high16, c.cardinality - 1) for c in containers)
    if not has_run or n >= NO_OFFSET_THRESHOLD:
        offset = len(head) + 4 * n
        for payload in payloads:
            head += struct.pack("<I", offset)
            offset += len(payload)
    return head + b"".join(payloads)


def encode_vector(bitmap: Any) -> bytes:
    """The 64-bit portable vector of a ``pyroaring.BitMap64`` as Iceberg Java writes it."""
    if len(bitmap) and bitmap.max() > MAX_POSITION:
        raise PuffinError(f"position {bitmap.max()} is above 2^63-1: deletion vector positions "
                          "are non-negative 64-bit", code="dv.top-bit")
    vector = vector_of(bitmap)
    source = vector.buffer
    by_key = {b.key: b for b in vector.bitmaps if b.cardinality}
    top = max(by_key, default=-1)
    keys = range(top + 1) if top < DENSE_KEY_LIMIT else sorted(by_key)
    parts = [struct.pack("<Q", len(keys))]
    for key in keys:
        parts.append(struct.pack("<I", key))
        parts.append(_encode_bitmap32(source, by_key.get(key)))
    return b"".join(parts)


def encode_deletion_vector(bitmap: Any) -> bytes:
    """A complete ``deletion-vector-v1`` blob for a ``pyroaring.BitMap64`` of positions."""
    body = DV_MAGIC + encode_vector(bitmap)
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def dv_blob_properties(referenced_data_file: str, cardinality: int) -> dict[str, str]:
    """The blob properties Iceberg writes for a DV (``puffin write`` adds nothing else)."""
    return {REFERENCED_DATA_FILE_PROPERTY: referenced_data_file,
            CARDINALITY_PROPERTY: str(cardinality)}
