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

    def containers(self, max_bytes: int) -> Iterator[tuple[int, bytes]]:
        """The records as uncompressed containers of consecutive blocks (null codec, this
        file's schema), each holding whole blocks of at most ``max_bytes`` inflated bytes
        together (or one block, when one alone is larger), with its record count: what a
        decoder (fastavro, an Arrow reader) reads without inflating anything itself."""
        schema = json.dumps(self.schema).encode()
        head = (MAGIC + long_bytes(1) + long_bytes(11) + b"avro.schema"
                + long_bytes(len(schema)) + schema + long_bytes(0) + self.sync)
        parts: list[bytes] = []
        count = size = 0
        for block in self.blocks():
            if parts and size + len(block.data) > max_bytes:
                yield count, b"".join((head, *parts))
                parts, count, size = [], 0, 0
            parts.append(b"".join((long_bytes(block.count), long_bytes(len(block.data)),
                                   block.data, self.sync)))
            count += block.count
            size += len(block.data)
        if parts:
            yield count, b"".join((head, *parts))

    def records(self) -> Iterator[Any]:
        """Every record, decoded by fastavro from the bounded blocks: each inflated block is
        handed to it as a container of one uncompressed block (its record loop is faster
        than decoding record by record).

        Iceberg Java writes a ``fixed[N]`` value held in a ``ByteBuffer`` (the partition value
        of an identity partition on a ``fixed`` column) as Avro ``bytes``, its length first,
        under a schema that declares ``fixed`` (``ValueWriters.FixedByteBufferWriter``,
        apache/iceberg#17501; 1.10.2 and 1.11 do). Read as declared, such a record shifts by
        the length's bytes and often decodes anyway, to wrong values. So a block of a schema
        with a plain ``fixed`` (no ``logicalType``: decimals and UUIDs are written as the
        specification says) is first decoded with each such ``fixed`` as ``bytes``: when that
        decodes exactly (the block's records end at its last byte) and every one of those
        values has its type's size, it is Java's encoding; otherwise the declared schema
        reads the block, and the blocks after it (a file has one writer: a file written as
        the specification says is read as fast as any once a block has shown it). Decoding
        record by record and checking sizes makes a manifest Java wrote so 2-4 times slower to
        read than one without a plain ``fixed``."""
        import fastavro

        schema = json.dumps(self.schema).encode()
        head = (MAGIC + long_bytes(1) + long_bytes(11) + b"avro.schema"
                + long_bytes(len(schema)) + schema + long_bytes(0) + self.sync)
        as_bytes = _fixed_as_bytes(self.schema)
        parsed = None
        if as_bytes is not None:
            try:
                parsed = fastavro.parse_schema(as_bytes)
            except Exception:  # a schema fastavro refuses: the declared one says why, below
                parsed = None
        sized = _sized(as_bytes)
        for block in self.blocks():
            if parsed is not None:
                decoded = _as_java_wrote(block, as_bytes, parsed, sized)
                if decoded is not None:
                    yield from decoded
                    continue
                parsed = None
            one = io.BytesIO(b"".join((head, long_bytes(block.count),
                                       long_bytes(len(block.data)), block.data, self.sync)))
            yield from fastavro.reader(one)


_SIZE = "puffin-fixed-size"  # the size of a ``fixed`` read as ``bytes`` (_fixed_as_bytes)


def _as_java_wrote(block: Block, schema: Any, parsed: Any, sized: set[int]
                   ) -> list[Any] | None:
    """The block's records read with ``schema`` (from :func:`_fixed_as_bytes`; ``parsed`` by
    fastavro; ``sized`` from :func:`_sized`) if it decodes the block exactly and every former
    ``fixed`` has its size."""
    import fastavro

    data = io.BytesIO(block.data)
    try:
        records = [fastavro.schemaless_reader(data, parsed, None) for _ in range(block.count)]
    except Exception:  # a misread runs into any of fastavro's errors, or past the end
        return None
    if data.tell() != len(block.data):
        return None
    named: dict[str, Any] = {}
    if all(_sizes_fit(schema, record, named, sized) for record in records):
        return records
    return None


def _sized(schema: Any) -> set[int]:
    """The ``id`` of every node (record, field type, union...) of ``schema`` that holds a
    former ``fixed`` (:func:`_fixed_as_bytes`): :func:`_sizes_fit` walks only those."""
    found: set[int] = set()

    def walk(node: Any) -> bool:
        if isinstance(node, list):
            inner = [walk(n) for n in node]
        elif isinstance(node, dict):
            inner = [_SIZE in node, *(walk(v) for k, v in node.items()
                                      if k in ("type", "items", "values", "fields"))]
        else:
            return False
        if any(inner):
            found.add(id(node))
            return True
        return False

    walk(schema)
    return found


def _sizes_fit(schema: Any, value: Any, named: dict[str, Any], sized: set[int]) -> bool:
    """Whether every ``bytes`` of ``value`` that was a ``fixed`` in ``schema`` has its size
    (``named``: the named types met so far, by name; ``sized``: the nodes that hold one)."""
    if isinstance(schema, str):
        return schema not in named or _sizes_fit(named[schema], value, named, sized)
    if id(schema) not in sized:
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            named[schema["name"]] = schema
        return True
    if isinstance(schema, list):  # a union: the value fits one of its branches
        return any(_sizes_fit(branch, value, named, sized) for branch in schema
                   if branch != "null" or value is None)
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    if isinstance(schema.get("name"), str):
        named[schema["name"]] = schema
    if _SIZE in schema:
        return isinstance(value, bytes) and len(value) == schema[_SIZE]
    if kind in ("record", "error"):
        return isinstance(value, dict) and all(
            _sizes_fit(f.get("type"), value.get(f.get("name")), named, sized)
            for f in schema.get("fields") or [] if isinstance(f, dict))
    if kind == "array":
        return isinstance(value, list) and all(
            _sizes_fit(schema.get("items"), v, named, sized) for v in value)
    if kind == "map":
        return isinstance(value, dict) and all(
            _sizes_fit(schema.get("values"), v, named, sized) for v in value.values())
    if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind in named):
        return _sizes_fit(kind, value, named, sized)
    return value is not None or kind == "null"


def has_plain_fixed(schema: Any) -> bool:
    """Whether ``schema`` has a ``fixed`` type without a ``logicalType``: one Iceberg Java may
    have written as ``bytes`` (:meth:`AvroFile.records` reads either)."""
    return _fixed_as_bytes(schema) is not None


def _fixed_as_bytes(schema: Any) -> Any:
    """``schema`` with every plain ``fixed`` type (no ``logicalType``), and every reference
    to one by name, as ``bytes`` that remembers the size; ``None`` if it has none."""
    sizes: dict[str, int] = {}

    def walk(node: Any, namespace: str) -> Any:
        if isinstance(node, list):
            return [walk(branch, namespace) for branch in node]
        if isinstance(node, str):
            size = sizes.get(node, sizes.get(f"{namespace}.{node}".lstrip(".")))
            return node if size is None else {"type": "bytes", _SIZE: size}
        if not isinstance(node, dict):
            return node
        kind, name, size = node.get("type"), node.get("name"), node.get("size")
        inner = node.get("namespace", namespace)
        inner = inner if isinstance(inner, str) else namespace
        if kind == "fixed" and "logicalType" not in node and isinstance(name, str) \
                and isinstance(size, int):
            sizes[name] = sizes[name if "." in name else f"{inner}.{name}".lstrip(".")] = size
            return {"type": "bytes", _SIZE: size}
        if isinstance(name, str) and "." in name:
            inner = name.rsplit(".", 1)[0]
        out = dict(node)
        if kind in ("record", "error"):
            out["fields"] = [{**f, "type": walk(f.get("type"), inner)} if isinstance(f, dict)
                             else f for f in node.get("fields") or []]
        elif kind == "array":
            out["items"] = walk(node.get("items"), inner)
        elif kind == "map":
            out["values"] = walk(node.get("values"), inner)
        elif isinstance(kind, (dict, list)):
            out["type"] = walk(kind, inner)
        return out

    replaced = walk(schema, "")
    return replaced if sizes else None


def long_bytes(value: int) -> bytes:
    """An Avro long: zig-zag, then a varint."""
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
