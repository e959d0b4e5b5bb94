"""Avro object container files (manifest lists, manifests, Avro delete and data files), read
block by block with every size bounded before the bytes are held.

fastavro inflates a whole block at once, whatever it inflates to; here the container is read
first: the header (its metadata map within ``limit`` bytes), then per block the record count
and the stored size the block declares (checked against ``limit`` before reading), the bytes
inflated by a decompressor that stops at ``limit`` bytes, and the sync marker. fastavro then
only decodes records from the inflated bytes. Codecs: the Avro specification's (null, deflate,
snappy, zstandard, bzip2, xz).
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from puffin_cli.errors import LimitError, PuffinError

MAGIC = b"Obj\x01"
SYNC_SIZE = 16
CODECS = ("null", "deflate", "snappy", "zstandard", "bzip2", "xz")


@dataclass(frozen=True)
class Block:
    """One block: where it starts (its record count's first byte), its record count and its
    inflated bytes."""

    offset: int
    count: int
    data: bytes


class AvroFile:
    """The container read from ``stream`` (positioned at its start): ``schema`` (the writer's,
    as JSON), ``metadata`` (the header's map), then :meth:`blocks` and :meth:`records`.
    Problems raise :class:`PuffinError`, limits :class:`LimitError`, with ``code``."""

    def __init__(self, stream: IO[bytes], *, limit: int, what: str = "Avro file",
                 code: str = "avro") -> None:
        self._stream = stream
        self.code = code
        self._position = 0
        self.limit = limit
        self.what = what
        if self._read(4) != MAGIC:
            raise self._fail("not an Avro object container file (no Obj\\x01 magic)")
        self.metadata = self._metadata()
        self.codec = self.metadata.get("avro.codec", b"null").decode("utf-8", "replace")
        if self.codec not in CODECS:
            raise self._fail(f"unknown Avro codec {self.codec!r}; expected one of "
                             f"{', '.join(CODECS)}")
        try:
            self.schema: Any = json.loads(self.metadata["avro.schema"])
        except (KeyError, ValueError, RecursionError):
            raise self._fail("no usable avro.schema in the header") from None
        self.sync = self._read(SYNC_SIZE)

    # --- the container ------------------------------------------------------------------

    def _fail(self, message: str) -> PuffinError:
        return PuffinError(f"{self.what}: {message}", code=self.code, offset=self._position)

    def _too_large(self, what: str) -> LimitError:
        return LimitError(f"{self.what}: {what} more than the limit of {self.limit:,} bytes "
                          "(a fixed limit)", code=self.code, offset=self._position)

    def _read(self, size: int) -> bytes:
        data = self._stream.read(size) if size else b""
        if len(data) != size:
            raise self._fail(f"truncated: {size} bytes expected, {len(data)} found")
        self._position += size
        return data

    def _long(self, *, eof_ok: bool = False) -> int | None:
        """A zig-zag varint (at most 10 bytes); None at the end of the file if ``eof_ok``."""
        value = shift = 0
        for index in range(10):
            byte = self._stream.read(1)
            if not byte:
                if eof_ok and index == 0:
                    return None
                raise self._fail("truncated inside a number")
            self._position += 1
            value |= (byte[0] & 0x7F) << shift
            if not byte[0] & 0x80:
                return (value >> 1) ^ -(value & 1)
            shift += 7
        raise self._fail("a number longer than 10 bytes")

    def _size(self, what: str) -> int:
        """A size the file declares, refused above ``limit`` before anything is read."""
        size = self._long()
        assert size is not None
        if size < 0:
            raise self._fail(f"negative {what} ({size})")
        if size > self.limit:
            raise self._too_large(f"a {what} of {size:,} bytes is")
        return size

    def _metadata(self) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        budget = self.limit
        while True:
            count = self._long()
            assert count is not None
            if count == 0:
                return found
            if count < 0:
                count = -count
                self._long()  # the byte size of the entries that follow
            for _ in range(count):
                key = self._read(self._size("header key"))
                value = self._read(self._size("header value"))
                budget -= len(key) + len(value)
                if budget < 0:
                    raise self._too_large("the header holds")
                found[key.decode("utf-8", "replace")] = value

    def blocks(self) -> Iterator[Block]:
        while True:
            offset = self._position
            count = self._long(eof_ok=True)
            if count is None:
                return
            if count < 0:
                raise self._fail(f"negative record count ({count})")
            stored = self._read(self._size("stored block"))
            data = self._inflate(stored)
            if count > max(len(data), 1):
                raise self._fail(f"a block of {len(data):,} bytes claims {count:,} records")
            if self._read(SYNC_SIZE) != self.sync:
                raise self._fail("sync marker does not match the header's")
            yield Block(offset, count, data)

    def _inflate(self, stored: bytes) -> bytes:
        """The block's bytes, inflated to at most ``limit`` bytes."""
        limit = self.limit
        try:
            if self.codec == "null":
                return stored
            if self.codec == "deflate":
                inflater = zlib.decompressobj(-15)
                data = inflater.decompress(stored, limit + 1)
            elif self.codec == "zstandard":
                import zstandard

                reader = zstandard.ZstdDecompressor().stream_reader(stored,
                                                                    read_across_frames=True)
                data = reader.read(limit + 1)
            elif self.codec == "snappy":
                data = self._snappy(stored)
            elif self.codec == "bzip2":
                import bz2

                data = bz2.BZ2Decompressor().decompress(stored, limit + 1)
            else:
                import lzma

                data = lzma.LZMADecompressor().decompress(stored, limit + 1)
        except LimitError:
            raise
        except Exception as exc:  # each codec library raises its own types
            raise self._fail(f"{self.codec} block does not decompress: "
                             f"{' '.join(str(exc).split())[:200]}") from None
        if len(data) > limit:
            raise self._too_large(f"a {self.codec} block inflates to")
        return bytes(data)

    def _snappy(self, stored: bytes) -> bytes:
        """Raw snappy (its length first, checked before inflating), then a CRC-32 of it."""
        import cramjam

        body, crc = stored[:-4], stored[-4:]
        length = shift = 0
        for byte in body[:10]:
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        if length > self.limit:
            raise self._too_large(f"a snappy block of {length:,} bytes is")
        data = bytes(cramjam.snappy.decompress_raw(body))
        if len(crc) != 4 or struct.unpack(">I", crc)[0] != zlib.crc32(data):
            raise self._fail("snappy block CRC does not match")
        return data

    # --- records ------------------------------------------------------------------------

    def records(self) -> Iterator[Any]:
        """Every record, decoded by fastavro from the bounded blocks: each inflated block is
        handed to it as a container of one uncompressed block (its record loop is faster
        than decoding record by record)."""
        import fastavro

        schema = json.dumps(self.schema).encode()
        head = (MAGIC + long_bytes(1) + long_bytes(11) + b"avro.schema"
                + long_bytes(len(schema)) + schema + long_bytes(0) + self.sync)
        for block in self.blocks():
            one = io.BytesIO(b"".join((head, long_bytes(block.count),
                                       long_bytes(len(block.data)), block.data, self.sync)))
            yield from fastavro.reader(one)


def long_bytes(value: int) -> bytes:
    """An Avro long: zig-zag, then a varint."""
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
