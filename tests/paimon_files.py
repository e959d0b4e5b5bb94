"""Paimon BLOB test files built from parts, and corrupt copies of each kind validate reports.

Valid files are encoded with :class:`BlobFileEncoder` (checked byte for byte against pypaimon
by the interop tests); each corruption changes one thing a writer guarantees, recomputing what
it must (the CRC, the index) so that the one rule it breaks is the one expected to fire.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from puffin_cli.format import paimon_blob as pb

Row = bytes | pb.Marker


def build(rows: Sequence[Row], *, index: Callable[[bytes], bytes] = lambda b: b,
          lengths: Callable[[list[int]], list[int]] = lambda v: v,
          before_index: bytes = b"") -> bytes:
    """A file of ``rows`` (bytes, or a marker); ``lengths`` may change the index values and
    ``index`` the index bytes; ``before_index`` goes between the records and the index."""
    out = io.BytesIO()
    encoder = pb.BlobFileEncoder(out)
    for row in rows:
        if row is pb.Marker.NULL:
            encoder.add_null()
        elif row is pb.Marker.PLACEHOLDER:
            encoder.add_placeholder()
        else:
            assert isinstance(row, bytes)
            encoder.add([row])
    index_bytes = index(pb.encode_lengths(lengths(list(encoder.lengths))))
    return (out.getvalue() + before_index + index_bytes
            + struct.pack("<IB", len(index_bytes), pb.VERSION))


def record(data: bytes, *, magic: bytes = pb.MAGIC_BYTES, length: int | None = None,
           crc: int | None = None) -> bytes:
    """One record, with a chosen magic, length field or CRC (else the right ones; the CRC is
    computed over what is written)."""
    length_field = struct.pack("<Q", len(data) + pb.RECORD_OVERHEAD if length is None
                               else length)
    body = magic + data + length_field
    return body + struct.pack("<I", zlib.crc32(body) if crc is None else crc)


def file_of_records(records: Sequence[bytes], lengths: Sequence[int]) -> bytes:
    index = pb.encode_lengths(lengths)
    return b"".join(records) + index + struct.pack("<IB", len(index), pb.VERSION)


PLAIN_ROWS: list[Row] = [b"hello", pb.Marker.NULL, b"", pb.Marker.PLACEHOLDER, b"x" * 300]


def _flip_byte(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


def _with_tail(data: bytes, index_length: int | None = None, version: int | None = None
               ) -> bytes:
    old_length, old_version = struct.unpack("<IB", data[-5:])
    return data[:-5] + struct.pack("<IB", old_length if index_length is None else index_length,
                                   old_version if version is None else version)


def _row_with_nested(payload: bytes) -> bytes:
    return build([payload, pb.Marker.NULL])


def _array_with_index(index: bytes, count: int, data: bytes) -> bytes:
    return struct.pack("<IBI", pb.ARRAY_MAGIC, 1, count) + data + index + struct.pack(
        "<I", len(index))


@dataclass(frozen=True)
class Corruption:
    name: str
    code: str
    data: bytes
    paimon_notices: bool  # does pypaimon's FormatBlobReader fail reading it as `column`?
    column: str = "blob"  # the column type pypaimon reads it as: blob, array or map


def _corrupt_length_field() -> bytes:
    records = [record(b"hello", length=99), record(b"x" * 300)]
    return file_of_records(records, [21, -1, 316])


def corruptions() -> list[Corruption]:
    valid = build(PLAIN_ROWS)
    array = pb.encode_array([b"ab", None, b"cde"])
    map_payload = pb.encode_map([(b"k1", b"v1"), (b"k2", None)])
    return [
        Corruption("trailer version 2", "paimon.trailer.version",
                   _with_tail(valid, version=2), True),
        Corruption("index length past the file start", "paimon.index.length",
                   _with_tail(valid, index_length=len(valid)), True),
        Corruption("file shorter than the trailer", "paimon.file.size", b"\x00\x01", True),
        Corruption("unterminated last varint", "paimon.index.varint",
                   build(PLAIN_ROWS, index=lambda b: b + b"\x80"), False),
        Corruption("varint of 11 bytes", "paimon.index.varint",
                   build(PLAIN_ROWS, index=lambda b: b + b"\xff" * 10 + b"\x01"), False),
        Corruption("unknown negative marker -3", "paimon.index.marker",
                   build(PLAIN_ROWS, lengths=lambda v: [*v, -3]), True),
        Corruption("record length under 16", "paimon.record.too-short",
                   build([b"hello"], lengths=lambda v: [10, 11]), True),
        Corruption("bytes between records and index", "paimon.records.fill",
                   build(PLAIN_ROWS, before_index=b"\x00" * 7), False),
        Corruption("records run into the index", "paimon.records.fill",
                   build(PLAIN_ROWS, lengths=lambda v: [v[0] + 5, *v[1:]]), False),
        Corruption("record magic", "paimon.record.magic",
                   file_of_records([record(b"hello", magic=b"XXXX")], [21]), False),
        Corruption("length field differs from the index", "paimon.record.length",
                   _corrupt_length_field(), False),
        Corruption("data byte flipped (CRC)", "paimon.record.crc",
                   _flip_byte(valid, 6), False),
        Corruption("stored CRC changed", "paimon.record.crc",
                   _flip_byte(valid, 20), False),
        Corruption("ARRAY version 2", "paimon.nested.version",
                   _row_with_nested(array[:4] + b"\x02" + array[5:]), True, "array"),
        Corruption("ARRAY count 4 for 3 elements", "paimon.nested.count",
                   _row_with_nested(array[:5] + struct.pack("<I", 4) + array[9:]), True, "array"),
        Corruption("ARRAY element index unterminated", "paimon.nested.index",
                   _row_with_nested(_array_with_index(b"\x04\x80", 1, b"ab")), True, "array"),
        Corruption("ARRAY index length too large", "paimon.nested.index-length",
                   _row_with_nested(array[:-4] + struct.pack("<I", 1000)), True, "array"),
        Corruption("ARRAY element lengths do not fill", "paimon.nested.fill",
                   _row_with_nested(_array_with_index(pb.encode_lengths([2]), 1, b"abc")),
                   True, "array"),
        Corruption("ARRAY element marker -2", "paimon.nested.marker",
                   _row_with_nested(_array_with_index(pb.encode_lengths([-2, 2]), 2, b"ab")),
                   True, "array"),
        Corruption("ARRAY payload shorter than header", "paimon.nested.too-short",
                   _row_with_nested(array[:8]), True, "array"),
        Corruption("MAP duplicate key", "paimon.nested.duplicate-key",
                   _row_with_nested(pb.encode_map([(b"k", b"1"), (b"k", b"2")])), True, "map"),
        Corruption("MAP two null keys", "paimon.nested.duplicate-key",
                   _row_with_nested(pb.encode_map([(None, b"1"), (None, b"2")])), True, "map"),
        Corruption("MAP version 0", "paimon.nested.version",
                   _row_with_nested(map_payload[:4] + b"\x00" + map_payload[5:]), True, "map"),
    ]
