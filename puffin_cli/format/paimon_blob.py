"""Apache Paimon BLOB files (``.blob``): the container, read and written as Paimon does.

Facts from pypaimon 2.1.0's ``BlobFormatWriter`` / ``FormatBlobReader`` (which match Paimon
Java); every integer is little-endian and there is no file header::

    record*  index  index_length:uint32  version:uint8 (= 1)

- A record is ``magic (CF 11 4E 58) | data | length:uint64 | crc:uint32``; ``length`` counts
  the whole record (data + 16) and the CRC-32 (zlib) covers magic, data and length field.
- The index holds one value per row: the record length, ``-1`` for a null row, ``-2`` for a
  placeholder (a row an update by row id leaves alone). Nulls and placeholders have no record.
  The values are delta-encoded, ZigZag, LEB128 varints. A row's offset is the sum of the
  non-negative lengths before it.
- ``ARRAY<BLOB>`` and ``MAP<K, BLOB>`` rows are ordinary records whose data is a nested
  container (:func:`check_nested`); the file does not say which column type it holds.

Reading the metadata (:class:`PaimonBlobReader`) costs one tail read, plus a second read
only when the index is larger than the tail; record data is read only when asked, in chunks.
"""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from types import TracebackType
from typing import BinaryIO, cast

from puffin_cli.format.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.storage import FileIO, StorageError, default_io

SUFFIX = ".blob"
MAGIC = 1481511375
MAGIC_BYTES = struct.pack("<I", MAGIC)  # CF 11 4E 58
VERSION = 1
TRAILER_SIZE = 5  # index_length:uint32, version:uint8
RECORD_OVERHEAD = 16  # magic 4 + length 8 + crc 4
RECORD_TAIL = 12  # length 8 + crc 4
NULL_LENGTH = -1
PLACEHOLDER_LENGTH = -2
EMPTY_FILE = b"\x00\x00\x00\x00\x01"

ARRAY_MAGIC = 0x41424342  # "BCBA"
MAP_MAGIC = 0x4D424342  # "BCBM"
NESTED_VERSION = 1
NESTED_HEADER = 9  # magic:uint32, version:uint8, count:uint32
NESTED_NULL_LENGTH = -1
INT32_MAX = 0x7FFFFFFF
MAX_VARINT_BYTES = 10
VECTOR_DECODE_BYTES = 1 << 16  # indexes at least this large are decoded with numpy
VECTOR_CHUNK = 1 << 20  # bytes or rows numpy works on at a time
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

TAIL_READ = 64 * 1024
# Memory per index byte, at most: each varint byte may be one row, an 8-byte length and an
# 8-byte offset (arrays, not Python ints), besides the byte itself and the arrays' growth.
INDEX_MEMORY_PER_BYTE = 24
# Memory per distinct MAP key remembered while looking for duplicates, besides its bytes.
KEY_MEMORY = 100
CHUNK = 1 << 20
ROW_KINDS = ("blob", "null", "placeholder")


# -- the length index: delta, ZigZag, LEB128 -------------------------------------------------

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


# -- the file's metadata ---------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One row of the file: ``kind`` is blob, null or placeholder; ``offset`` and
    ``length`` are the record's (``length`` counts magic, data, length field and CRC)."""

    row: int
    kind: str
    offset: int | None
    length: int | None

    @property
    def data_offset(self) -> int | None:
        return None if self.offset is None else self.offset + len(MAGIC_BYTES)

    @property
    def data_length(self) -> int | None:
        return None if self.length is None else self.length - RECORD_OVERHEAD


class BlobIndex:
    """The decoded trailer and index of a Paimon BLOB file."""

    def __init__(self, file_size: int, version: int, index_length: int,
                 lengths: array[int]) -> None:
        self.file_size = file_size
        self.version = version
        self.index_length = index_length
        self.index_offset = file_size - TRAILER_SIZE - index_length
        self.lengths = lengths
        if len(lengths) >= VECTOR_DECODE_BYTES:
            self._place_vectorized()
            return
        self.offsets = array("q")
        position = 0
        nulls = placeholders = 0
        for length in lengths:
            if length >= 0:
                # a record past the file's end makes the rest meaningless; keep them past it
                self.offsets.append(min(position, file_size + 1))
                position += length
            else:
                self.offsets.append(-1)
                if length == NULL_LENGTH:
                    nulls += 1
                elif length == PLACEHOLDER_LENGTH:
                    placeholders += 1
        self.records_end = position
        self.nulls = nulls
        self.placeholders = placeholders

    def _place_vectorized(self) -> None:
        """Offsets and counts of a large index with numpy, as the loop above computes them,
        :data:`VECTOR_CHUNK` rows at a time (bounded temporaries)."""
        import numpy as np

        every = np.frombuffer(self.lengths, dtype=np.int64)
        # Lengths clipped to the file size + 1 cannot overflow the running sum; a record that
        # long already lies past the file, so every later offset is past it too.
        limit = self.file_size + 1
        self.offsets = array("q", [0]) * len(every)  # allocated once: no growth, no copies
        out = np.frombuffer(self.offsets, dtype=np.int64)
        position = 0  # of the clipped lengths
        total = 0  # of the real lengths (a Python int: no overflow)
        nulls = placeholders = 0
        for start in range(0, len(every), VECTOR_CHUNK):
            lengths = every[start:start + VECTOR_CHUNK]
            present = lengths >= 0
            sizes = np.where(present, np.minimum(lengths, limit), 0)
            ends = np.cumsum(sizes) + position
            out[start:start + len(lengths)] = np.where(present, np.minimum(ends - sizes, limit),
                                                       -1)
            position = min(int(ends[-1]), limit)
            real = lengths[present]
            total += int(real.sum()) if not (real > limit).any() else sum(int(v) for v in real)
            nulls += int((lengths == NULL_LENGTH).sum())
            placeholders += int((lengths == PLACEHOLDER_LENGTH).sum())
        self.records_end = total
        self.nulls = nulls
        self.placeholders = placeholders

    @property
    def rows(self) -> int:
        return len(self.lengths)

    @property
    def records(self) -> int:
        return self.rows - self.nulls - self.placeholders - self.unknown_markers

    @property
    def unknown_markers(self) -> int:
        return sum(1 for length in self.lengths
                   if length < 0 and length not in (NULL_LENGTH, PLACEHOLDER_LENGTH))

    def row(self, index: int) -> Row:
        length = self.lengths[index]
        if length >= 0:
            return Row(index, "blob", self.offsets[index], length)
        kind = {NULL_LENGTH: "null", PLACEHOLDER_LENGTH: "placeholder"}.get(length, "marker")
        return Row(index, kind, None, None)


@dataclass(frozen=True)
class RecordFrame:
    """What a record says about itself: its leading magic, its length field and its CRC."""

    magic: bytes
    length_field: int
    crc: int
    nested_header: bytes  # the first up-to-9 data bytes (a nested container's header)
    data: bytes | None = None  # all data bytes, when the whole record was read


@dataclass(frozen=True)
class ScannedRecord:
    """A record read whole: its magic, first (up to 4) data bytes, length field, stored CRC
    and the CRC-32 computed over its magic, data and length field."""

    row: Row
    magic: bytes
    data_head: bytes
    length_field: int
    stored_crc: int
    crc: int


class PaimonBlobReader:
    """A Paimon BLOB file opened for reading: :attr:`index` is read at once (the tail, and
    the index when it does not fit in the tail); record bytes only by the methods below.

    ``memory_limit`` bounds the memory the index may take once decoded (up to
    :data:`INDEX_MEMORY_PER_BYTE` bytes per index byte): a larger index is an error that names
    the limit.
    """

    def __init__(self, location: str | os.PathLike[str], *, memory_limit: int,
                 fileio: FileIO | None = None, length: int | None = None) -> None:
        self.source = (fileio or default_io()).new_input(location, length=length)
        self.path = self.source.name
        try:
            self.index = self._read_index(memory_limit)
        except BaseException:
            self.source.close()
            raise

    @property
    def file_size(self) -> int:
        return self.source.size

    def _error(self, message: str, code: str, offset: int | None) -> PuffinError:
        return PuffinError(message, code=code, path=self.path, offset=offset)

    def _read_index(self, memory_limit: int) -> BlobIndex:
        tail = self.source.read_tail(TAIL_READ)  # one request, which also learns the size
        size = self.source.size
        if size < TRAILER_SIZE:
            raise self._error(f"file of {size} bytes is shorter than the {TRAILER_SIZE}-byte "
                              "trailer (index length and version)", "paimon.file.size", 0)
        tail_length = len(tail)
        index_length, version = struct.unpack("<IB", tail[-TRAILER_SIZE:])
        if version != VERSION:
            raise self._error(f"trailer version is {version}, expected {VERSION}",
                              "paimon.trailer.version", size - 1)
        if index_length > size - TRAILER_SIZE:
            raise self._error(f"index length {index_length} is larger than the "
                              f"{size - TRAILER_SIZE} bytes before the trailer",
                              "paimon.index.length", size - TRAILER_SIZE)
        if index_length * INDEX_MEMORY_PER_BYTE > memory_limit:
            raise self._error(f"index of {index_length} bytes may decode to "
                              f"{index_length * INDEX_MEMORY_PER_BYTE} bytes, more than the "
                              f"limit of {memory_limit} bytes (raise --max-blob-size)",
                              "paimon.index.too-large", size - TRAILER_SIZE - index_length)
        index_offset = size - TRAILER_SIZE - index_length
        if index_length + TRAILER_SIZE <= tail_length:
            index_bytes = tail[tail_length - TRAILER_SIZE - index_length:-TRAILER_SIZE]
        else:
            index_bytes = self.source.read(index_offset, index_length)
        lengths, problem = decode_lengths(index_bytes)
        if problem is not None:
            raise self._error(problem.message, problem.code, index_offset + problem.at)
        return BlobIndex(size, version, index_length, lengths)

    def read(self, offset: int, length: int) -> bytes:
        return self.source.read(offset, length)

    def iter_range(self, offset: int, length: int, chunk: int = CHUNK) -> Iterator[bytes]:
        """``length`` bytes from ``offset``, in chunks of at most ``chunk`` bytes."""
        end = offset + length
        while offset < end:
            step = min(chunk, end - offset)
            yield self.source.read(offset, step)
            offset += step

    def frame(self, row: Row, whole_up_to: int = 4096) -> RecordFrame:
        """A record's magic, length field, CRC and first data bytes: one read of the whole
        record (kept as ``data``) when it has at most ``whole_up_to`` bytes, else two (head
        and tail) and never the rest of its data."""
        assert row.offset is not None and row.length is not None
        if row.length < RECORD_OVERHEAD:
            raise self._error(f"record length {row.length} is less than {RECORD_OVERHEAD}",
                              "paimon.record.too-short", row.offset)
        end = row.offset + row.length
        if end > self.index.index_offset:
            raise self._error(f"record [{row.offset}, {end}) runs past the index at byte "
                              f"{self.index.index_offset}",
                              "paimon.records.fill", row.offset)
        head_length = len(MAGIC_BYTES) + min(NESTED_HEADER, row.length - RECORD_OVERHEAD)
        data = None
        if row.length <= whole_up_to:
            record = self.source.read(row.offset, row.length)
            head, tail = record[:head_length], record[-RECORD_TAIL:]
            data = record[len(MAGIC_BYTES):-RECORD_TAIL]
        else:
            head = self.source.read(row.offset, head_length)
            tail = self.source.read(end - RECORD_TAIL, RECORD_TAIL)
        length_field, crc = struct.unpack("<QI", tail)
        return RecordFrame(head[:4], length_field, crc, head[4:], data)

    def scan(self, rows: Iterable[Row]) -> Iterator[ScannedRecord]:
        """Read each record of ``rows`` (in ascending offset order, each within the data
        section) once: records up to :data:`CHUNK` bytes from 1 MiB blocks read in sequence,
        larger ones streamed in chunks. Yields what each holds and its computed CRC."""
        block = b""
        block_start = 0
        for row in rows:
            assert row.offset is not None and row.length is not None
            offset, length = row.offset, row.length
            if length > CHUNK:
                crc = 0
                head = b""
                for data in self.iter_range(offset, length - 4):
                    if len(head) < 8:
                        head += data[:8 - len(head)]
                    crc = zlib.crc32(data, crc)
                tail = self.source.read(offset + length - RECORD_TAIL, RECORD_TAIL)
            else:
                if offset < block_start or offset + length > block_start + len(block):
                    block_start = offset
                    block = self.source.read(offset, min(max(CHUNK, length),
                                                         self.index.index_offset - offset))
                view = memoryview(block)[offset - block_start:offset - block_start + length]
                crc = zlib.crc32(view[:-4])
                head = bytes(view[:8])
                tail = bytes(view[-RECORD_TAIL:])
            length_field, stored_crc = struct.unpack("<QI", tail)
            yield ScannedRecord(row, head[:4], head[4:8], length_field, stored_crc, crc)

    def iter_data(self, row: Row, chunk: int = CHUNK) -> Iterator[bytes]:
        """A row's data bytes (the record without its framing), streamed."""
        assert row.data_offset is not None and row.data_length is not None
        return self.iter_range(row.data_offset, row.data_length, chunk)

    def close(self) -> None:
        self.source.close()

    def __enter__(self) -> PaimonBlobReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def is_paimon_blob(location: str | os.PathLike[str], fileio: FileIO | None = None) -> bool:
    """Whether ``location`` is (meant to be) a Paimon BLOB file: a ``.blob`` name, or
    content that looks like one (no Puffin magic, version 1 in the last byte, and a first
    record magic or an index that fills the file). Unreadable files are not."""
    name = os.fspath(location)
    if name.endswith(SUFFIX):
        return True
    try:
        with (fileio or default_io()).new_input(location) as source:
            tail = source.read_tail(TRAILER_SIZE)
            if source.size < TRAILER_SIZE:
                return False
            return looks_like_paimon_blob(source.read(0, 4), tail, source.size)
    except PuffinError:
        return False


def looks_like_paimon_blob(head: bytes, tail: bytes, size: int) -> bool:
    """Content sniffing from the first 4 and the last 5 bytes of a file of ``size`` bytes."""
    if size < TRAILER_SIZE or len(tail) < TRAILER_SIZE or tail[-1] != VERSION:
        return False
    index_length = struct.unpack("<I", tail[-TRAILER_SIZE:-1])[0]
    if index_length > size - TRAILER_SIZE:
        return False
    return head[:4] == MAGIC_BYTES or index_length == size - TRAILER_SIZE


# -- nested ARRAY<BLOB> / MAP<K, BLOB> payloads ------------------------------------------------

def nested_kind(header: bytes) -> str | None:
    """``array`` or ``map`` when data starts with a nested container's magic."""
    if len(header) < 4:
        return None
    magic = struct.unpack("<I", header[:4])[0]
    return {ARRAY_MAGIC: "array", MAP_MAGIC: "map"}.get(magic)


def nested_header(header: bytes) -> tuple[str, int, int] | None:
    """(kind, version, count) of a nested container's 9-byte header, if it is one."""
    kind = nested_kind(header)
    if kind is None or len(header) < NESTED_HEADER:
        return None
    _, version, count = struct.unpack("<IBI", header[:NESTED_HEADER])
    return kind, version, count


def check_nested(read: Callable[[int, int], bytes], start: int, length: int,
                 row: int, *, memory_limit: int) -> list[Finding]:
    """Check the nested container in the ``length`` data bytes at absolute offset ``start``
    (whose first 4 bytes are its magic), reading its header, index lengths, indexes and (for
    duplicate detection) a map's keys, never element data. Indexes that could take more than
    ``memory_limit`` bytes once decoded are not read (a finding); nor are keys whose
    duplicates could not be looked for within that limit (not a finding)."""
    findings: list[Finding] = []

    def bad(code: str, message: str, offset: int) -> list[Finding]:
        findings.append(Finding(f"paimon.nested.{code}", Severity.ERROR,
                                f"row {row}: {message}", offset, row))
        return findings

    kind = nested_kind(read(start, 4))
    assert kind is not None
    label = "ARRAY<BLOB>" if kind == "array" else "MAP<K, BLOB>"
    index_lengths_size = 4 if kind == "array" else 8
    minimum = NESTED_HEADER + index_lengths_size
    if length < minimum:
        return bad("too-short", f"{label} payload of {length} bytes is shorter than its "
                   f"{minimum}-byte minimum (header and index lengths)", start)
    _, version, count = struct.unpack("<IBI", read(start, NESTED_HEADER))
    if version != NESTED_VERSION:
        return bad("version", f"{label} payload version is {version}, expected "
                   f"{NESTED_VERSION}", start + 4)
    if count > INT32_MAX:
        return bad("count", f"{label} count {count} is larger than {INT32_MAX}", start + 5)
    end = start + length
    sizes = struct.unpack("<" + "I" * (index_lengths_size // 4),
                          read(end - index_lengths_size, index_lengths_size))
    room = length - minimum
    if sum(sizes) > room:
        what = "element index length" if kind == "array" else "key and value index lengths"
        return bad("index-length", f"{label} {what} {' + '.join(map(str, sizes))} exceed the "
                   f"{room} bytes between header and index lengths", end - index_lengths_size)
    if sum(sizes) * INDEX_MEMORY_PER_BYTE > memory_limit:
        return bad("too-large", f"{label} indexes of {sum(sizes)} bytes may decode to more "
                   f"than the limit of {memory_limit} bytes (raise --max-blob-size)",
                   end - index_lengths_size)
    index_start = end - index_lengths_size - sum(sizes)
    indexes: list[array[int]] = []
    position = index_start
    names = ("element",) if kind == "array" else ("key", "value")
    for name, size in zip(names, sizes, strict=True):
        decoded, problem = decode_lengths(read(position, size))
        if problem is not None:
            return bad("index", f"{label} {name} index: {problem.message}",
                       position + problem.at)
        if len(decoded) != count:
            return bad("count", f"{label} header count {count} but its {name} index holds "
                       f"{len(decoded)} values", start + 5)
        indexes.append(decoded)
        position += size
    data_start = start + NESTED_HEADER
    data_length = index_start - data_start
    total = 0
    for name, values in zip(names, indexes, strict=True):
        for number, value in enumerate(values):
            if value == NESTED_NULL_LENGTH:
                continue
            if value < 0:
                return bad("marker", f"{label} {name} {number} has length {value}; only -1 "
                           "(null) is allowed", index_start)
            total += value
    if total != data_length:
        return bad("fill", f"{label} {' and '.join(names)} lengths add up to {total} bytes, "
                   f"but {data_length} bytes lie between header and indexes", data_start)
    if kind == "map":
        keys = indexes[0]
        key_bytes = sum(k for k in keys if k >= 0)
        if keys.count(NESTED_NULL_LENGTH) > 1:
            return bad("duplicate-key", f"{label} has {keys.count(NESTED_NULL_LENGTH)} null "
                       "keys; keys must be unique", data_start)
        if key_bytes + KEY_MEMORY * count <= memory_limit:
            seen: set[bytes] = set()
            position = data_start
            for number, key_length in enumerate(keys):
                if key_length < 0:
                    continue
                key = read(position, key_length)
                if key in seen:
                    return bad("duplicate-key", f"{label} key {number} repeats an earlier "
                               f"key ({key[:32].hex()}); keys must be unique", position)
                seen.add(key)
                position += key_length
    return findings


# -- writing -------------------------------------------------------------------------------

class BlobFileEncoder:
    """Encodes rows to a binary stream exactly as pypaimon's ``BlobFormatWriter`` does.

    ``add`` appends a row whose data comes from byte chunks, ``add_null`` / ``add_placeholder``
    the markers; ``finish`` writes the index and trailer. The stream is not closed.
    """

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self.lengths: list[int] = []
        self.position = 0

    def add(self, chunks: Iterable[bytes]) -> int:
        """Append one record with the data in ``chunks``; returns its length."""
        write = self._out.write
        write(MAGIC_BYTES)
        crc = zlib.crc32(MAGIC_BYTES)
        data_length = 0
        for chunk in chunks:
            write(chunk)
            crc = zlib.crc32(chunk, crc)
            data_length += len(chunk)
        length = data_length + RECORD_OVERHEAD
        length_field = struct.pack("<Q", length)
        crc = zlib.crc32(length_field, crc)
        write(length_field)
        write(struct.pack("<I", crc))
        self.lengths.append(length)
        self.position += length
        return length

    def add_null(self) -> None:
        self.lengths.append(NULL_LENGTH)

    def add_placeholder(self) -> None:
        self.lengths.append(PLACEHOLDER_LENGTH)

    def finish(self) -> int:
        """Write the index and trailer; returns the file size."""
        index = encode_lengths(self.lengths)
        self._out.write(index + struct.pack("<IB", len(index), VERSION))
        return self.position + len(index) + TRAILER_SIZE


def encode_array(elements: Iterable[bytes | None]) -> bytes:
    """The data of an ``ARRAY<BLOB>`` row (``None``: a null element), as pypaimon writes it."""
    items = list(elements)
    lengths = [NESTED_NULL_LENGTH if item is None else len(item) for item in items]
    index = encode_lengths(lengths)
    return b"".join([struct.pack("<IBI", ARRAY_MAGIC, NESTED_VERSION, len(items)),
                     *(item for item in items if item is not None),
                     index, struct.pack("<I", len(index))])


def encode_map(entries: Iterable[tuple[bytes | None, bytes | None]]) -> bytes:
    """The data of a ``MAP<K, BLOB>`` row from serialized keys and values (``None``: null),
    as pypaimon writes it."""
    items = list(entries)
    key_index = encode_lengths([NESTED_NULL_LENGTH if k is None else len(k) for k, _ in items])
    value_index = encode_lengths([NESTED_NULL_LENGTH if v is None else len(v)
                                  for _, v in items])
    return b"".join([struct.pack("<IBI", MAP_MAGIC, NESTED_VERSION, len(items)),
                     *(k for k, _ in items if k is not None),
                     *(v for _, v in items if v is not None),
                     key_index, value_index,
                     struct.pack("<II", len(key_index), len(value_index))])


class Marker(Enum):
    """A row without data, as a row source of :func:`write_blob_file`."""

    NULL = NULL_LENGTH
    PLACEHOLDER = PLACEHOLDER_LENGTH


@dataclass(frozen=True)
class BlobWriteResult:
    path: str
    file_size: int
    rows: int
    nulls: int
    placeholders: int
    index_length: int


def _entry_chunks(path: str, chunk: int = CHUNK) -> Iterator[bytes]:
    """The bytes of the regular file ``path``, in chunks (a FIFO or device is refused before
    it is read, so that it cannot block or stream without end)."""
    try:
        with default_io().new_input(path) as source:
            yield from source.stream(chunk=chunk)
    except StorageError as exc:
        raise PuffinError(f"cannot read entry: {exc.message}", code="write.entry",
                          path=path) from None


def write_blob_file(target: str | os.PathLike[str], rows: Iterable[str | Marker], *,
                    overwrite: bool = False) -> BlobWriteResult:
    """Write a Paimon BLOB file whose rows are the bytes of the files named by ``rows``
    (a :class:`Marker` for a null or placeholder row), byte for byte as pypaimon's
    ``BlobFormatWriter`` would. Entries are streamed; the file is written beside ``target``
    and moved into place when complete (never replacing an existing file unless
    ``overwrite``)."""
    name = os.fspath(target)
    try:
        with default_io().new_output(name).create(overwrite) as out:
            encoder = BlobFileEncoder(cast(BinaryIO, out))  # write() is all it uses
            for source in rows:
                if source is Marker.NULL:
                    encoder.add_null()
                elif source is Marker.PLACEHOLDER:
                    encoder.add_placeholder()
                else:
                    encoder.add(_entry_chunks(source))
            size = encoder.finish()
    except OSError as exc:
        raise PuffinError(f"cannot write: {exc.strerror}", code="write.io", path=name) from None
    lengths = encoder.lengths
    return BlobWriteResult(name, size, len(lengths), lengths.count(NULL_LENGTH),
                           lengths.count(PLACEHOLDER_LENGTH),
                           size - encoder.position - TRAILER_SIZE)
