"""Recognise the deletion-vector container a delete-manifest entry points at, and decode it.

A v3 delete-manifest entry with ``file_format`` PUFFIN gives a file and a byte range. Not every
writer puts an Iceberg DV blob in a Puffin file there, so the range is read as it is and
recognised by the magic number after its 4-byte big-endian length prefix:

==================  =================  ===================================================
container           magic (as stored)  layout of the range
==================  =================  ===================================================
``puffin``          ``D1 D3 39 64``    Iceberg ``deletion-vector-v1`` blob in a Puffin file
``bare-dv``         ``D1 D3 39 64``    the same bytes in a file that is not Puffin: Delta's
                                       portable RoaringBitmapArray (magic 1681511377 LE) and
                                       Paimon's 64-bit DV are byte for byte this layout
``delta-native``    ``D0 D3 39 64``    Delta's native RoaringBitmapArray (magic 1681511376
                                       LE): bitmap count (u32 LE), then per bitmap its size
                                       (u32 LE) and a 32-bit portable Roaring bitmap; CRC-32
``paimon-bitmap``   ``5E 43 F2 D0``    Paimon's 32-bit BitmapDeletionVector (magic 1581511376
                                       written big-endian), one 32-bit portable Roaring
                                       bitmap; an optional CRC-32 after it
``unknown``         anything else      not decoded
==================  =================  ===================================================

Every container starts with the length of (magic + bitmap) as u32 big-endian; the CRC-32, when
present, is big-endian over the same bytes. The Iceberg layout (``puffin``, ``bare-dv``) is
decoded by :func:`puffin_cli.blobs.deletion_vector.deletion_vector_bitmap` (the positions as
``decode_deletion_vector`` reads them, the one decoder of that envelope and vector); the other
two are decoded here.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from puffin_cli.blobs.deletion_vector import DV_MAGIC, LENGTH_BYTES, deletion_vector_bitmap
from puffin_cli.errors import PuffinError

PUFFIN = "puffin"
BARE_DV = "bare-dv"
DELTA_NATIVE = "delta-native"
PAIMON_BITMAP = "paimon-bitmap"
UNKNOWN = "unknown"

DELTA_NATIVE_MAGIC = struct.pack("<i", 1681511376)
PAIMON_BITMAP_MAGIC = struct.pack(">i", 1581511376)


@dataclass(frozen=True)
class DecodedDV:
    """What a DV's byte range holds: its container kind and, when decoded, the number of
    positions and the highest one; ``problem`` says why it could not be decoded."""

    container: str
    cardinality: int | None = None
    max_position: int | None = None
    problem: str | None = None


def _envelope(data: bytes, container: str) -> tuple[bytes, bytes]:
    """(magic + bitmap, what follows) from a length-prefixed range."""
    (size,) = struct.unpack_from(">I", data, 0)
    if LENGTH_BYTES + size > len(data):
        raise PuffinError(f"{container} length prefix {size} runs past the {len(data)}-byte "
                          "range", code="table.dv.container")
    return data[LENGTH_BYTES:LENGTH_BYTES + size], data[LENGTH_BYTES + size:]


def _check_crc(body: bytes, rest: bytes, container: str, required: bool) -> None:
    if len(rest) < 4:
        if required:
            raise PuffinError(f"{container}: no CRC-32 after the bitmap",
                              code="table.dv.container")
        return
    (stored,) = struct.unpack_from(">I", rest, 0)
    computed = zlib.crc32(body)
    if stored != computed:
        raise PuffinError(f"{container}: CRC-32 is {stored:#010x}, computed {computed:#010x}",
                          code="table.dv.container")


def _roaring32(data: bytes, container: str) -> tuple[int, int | None]:
    from pyroaring import BitMap

    try:
        bitmap = BitMap.deserialize(data)
    except ValueError as exc:
        raise PuffinError(f"{container}: Roaring bitmap does not parse: {exc}",
                          code="table.dv.container") from None
    return len(bitmap), (int(bitmap.max()) if len(bitmap) else None)


def _delta_native(body: bytes) -> tuple[int, int | None]:
    pos = len(DELTA_NATIVE_MAGIC)
    if len(body) < pos + 4:
        raise PuffinError(f"{DELTA_NATIVE}: no bitmap count", code="table.dv.container")
    (count,) = struct.unpack_from("<i", body, pos)
    pos += 4
    total, top = 0, None
    for key in range(count):
        if len(body) < pos + 4:
            raise PuffinError(f"{DELTA_NATIVE}: bitmap {key} size missing",
                              code="table.dv.container")
        (size,) = struct.unpack_from("<i", body, pos)
        pos += 4
        if size < 0 or pos + size > len(body):
            raise PuffinError(f"{DELTA_NATIVE}: bitmap {key} of {size} bytes runs past the "
                              "container", code="table.dv.container")
        cardinality, high = _roaring32(body[pos:pos + size], DELTA_NATIVE)
        pos += size
        total += cardinality
        if high is not None:
            top = (key << 32) | high
    return total, top


def container_kind(data: bytes, *, in_puffin: bool) -> str:
    """The container kind the magic after the length prefix names."""
    magic = data[LENGTH_BYTES:LENGTH_BYTES + 4]
    if magic == DV_MAGIC:
        return PUFFIN if in_puffin else BARE_DV
    if magic == DELTA_NATIVE_MAGIC:
        return DELTA_NATIVE
    if magic == PAIMON_BITMAP_MAGIC:
        return PAIMON_BITMAP
    return UNKNOWN


def decode_range(data: bytes, *, in_puffin: bool, base_offset: int = 0) -> DecodedDV:
    """Recognise and decode the bytes of one DV range; never raises for bad bytes."""
    kind = container_kind(data, in_puffin=in_puffin)
    try:
        if kind in (PUFFIN, BARE_DV):
            bitmap = deletion_vector_bitmap(data, base_offset)
            cardinality = len(bitmap)
            return DecodedDV(kind, cardinality, int(bitmap.max()) if cardinality else None)
        if kind == DELTA_NATIVE:
            body, rest = _envelope(data, DELTA_NATIVE)
            _check_crc(body, rest, DELTA_NATIVE, required=True)
            cardinality, top = _delta_native(body)
            return DecodedDV(DELTA_NATIVE, cardinality, top)
        if kind == PAIMON_BITMAP:
            body, rest = _envelope(data, PAIMON_BITMAP)
            _check_crc(body, rest, PAIMON_BITMAP, required=False)
            cardinality, top = _roaring32(body[len(PAIMON_BITMAP_MAGIC):], PAIMON_BITMAP)
            return DecodedDV(PAIMON_BITMAP, cardinality, top)
    except PuffinError as exc:
        return DecodedDV(kind, problem=str(exc))
    shown = data[LENGTH_BYTES:LENGTH_BYTES + 4].hex() or "nothing"
    return DecodedDV(UNKNOWN, problem=f"no known deletion-vector magic after the length prefix "
                     f"(found {shown}; expected {DV_MAGIC.hex()}, "
                     f"{DELTA_NATIVE_MAGIC.hex()} or {PAIMON_BITMAP_MAGIC.hex()})")
