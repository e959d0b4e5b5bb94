"""Writing BLOB files exactly as pypaimon's ``BlobFormatWriter`` does, atomically."""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import BinaryIO, cast

from puffin_cli.errors import PuffinError
from puffin_cli.format.paimon_blob.index import encode_lengths
from puffin_cli.format.paimon_blob.spec import (
    CHUNK,
    MAGIC_BYTES,
    NULL_LENGTH,
    PLACEHOLDER_LENGTH,
    RECORD_OVERHEAD,
    TRAILER_SIZE,
    VERSION,
)
from puffin_cli.storage import FileIO, StorageError


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


def _entry_chunks(fileio: FileIO, path: str, chunk: int = CHUNK) -> Iterator[bytes]:
    """The bytes of the regular file ``path``, in chunks (a FIFO or device is refused before
    it is read, so that it cannot block or stream without end)."""
    try:
        with fileio.new_input(path) as source:
            yield from source.stream(chunk=chunk)
    except StorageError as exc:
        raise PuffinError(f"cannot read entry: {exc.message}", code="write.entry",
                          path=path) from None


def write_blob_file(target: str | os.PathLike[str], rows: Iterable[str | Marker], *,
                    fileio: FileIO, overwrite: bool = False) -> BlobWriteResult:
    """Write a Paimon BLOB file whose rows are the bytes of the files named by ``rows``
    (a :class:`Marker` for a null or placeholder row), byte for byte as pypaimon's
    ``BlobFormatWriter`` would. Entries are streamed; the file is written beside ``target``
    and moved into place when complete (never replacing an existing file unless
    ``overwrite``). ``fileio`` reads the entries and writes the file."""
    name = os.fspath(target)
    try:
        with fileio.new_output(name).create(overwrite) as out:
            encoder = BlobFileEncoder(cast(BinaryIO, out))  # write() is all it uses
            for source in rows:
                if source is Marker.NULL:
                    encoder.add_null()
                elif source is Marker.PLACEHOLDER:
                    encoder.add_placeholder()
                else:
                    encoder.add(_entry_chunks(fileio, source))
            size = encoder.finish()
    except OSError as exc:
        raise PuffinError(f"cannot write: {exc.strerror}", code="write.io", path=name) from None
    lengths = encoder.lengths
    return BlobWriteResult(name, size, len(lengths), lengths.count(NULL_LENGTH),
                           lengths.count(PLACEHOLDER_LENGTH),
                           size - encoder.position - TRAILER_SIZE)
