"""A BLOB file's metadata (tail read + index) and its records, read in ranges."""

from __future__ import annotations

import os
import struct
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from types import TracebackType

from puffin_cli.errors import PuffinError
from puffin_cli.format.paimon_blob.index import decode_lengths
from puffin_cli.format.paimon_blob.spec import (
    CHUNK,
    INDEX_MEMORY_PER_BYTE,
    MAGIC_BYTES,
    NESTED_HEADER,
    NULL_LENGTH,
    PLACEHOLDER_LENGTH,
    RECORD_OVERHEAD,
    RECORD_TAIL,
    SUFFIX,
    TAIL_READ,
    TRAILER_SIZE,
    VECTOR_CHUNK,
    VECTOR_DECODE_BYTES,
    VERSION,
)
from puffin_cli.storage import FileIO


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
                 fileio: FileIO, length: int | None = None) -> None:
        self.source = fileio.new_input(location, length=length)
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


def is_paimon_blob(location: str | os.PathLike[str], fileio: FileIO) -> bool:
    """Whether ``location`` is (meant to be) a Paimon BLOB file: a ``.blob`` name, or
    content that looks like one (no Puffin magic, version 1 in the last byte, and a first
    record magic or an index that fills the file). Unreadable files are not."""
    name = os.fspath(location)
    if name.endswith(SUFFIX):
        return True
    try:
        with fileio.new_input(location) as source:
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
