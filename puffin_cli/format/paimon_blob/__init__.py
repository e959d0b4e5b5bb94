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

The package: ``spec`` (constants), ``index`` (the length index), ``reader`` (metadata and
records), ``nested`` (ARRAY/MAP payloads) and ``writer``; this module re-exports their
public names.
"""

from __future__ import annotations

from puffin_cli.format.paimon_blob.index import (
    IndexProblem,
    decode_lengths,
    encode_lengths,
)
from puffin_cli.format.paimon_blob.nested import (
    check_nested,
    encode_array,
    encode_map,
    nested_header,
    nested_kind,
)
from puffin_cli.format.paimon_blob.reader import (
    BlobIndex,
    PaimonBlobReader,
    RecordFrame,
    Row,
    ScannedRecord,
    is_paimon_blob,
    looks_like_paimon_blob,
)
from puffin_cli.format.paimon_blob.spec import (
    ARRAY_MAGIC,
    CHUNK,
    EMPTY_FILE,
    INDEX_MEMORY_PER_BYTE,
    INT32_MAX,
    INT64_MAX,
    INT64_MIN,
    KEY_MEMORY,
    MAGIC,
    MAGIC_BYTES,
    MAP_MAGIC,
    MAX_VARINT_BYTES,
    NESTED_HEADER,
    NESTED_NULL_LENGTH,
    NESTED_VERSION,
    NULL_LENGTH,
    PLACEHOLDER_LENGTH,
    RECORD_OVERHEAD,
    RECORD_TAIL,
    ROW_KINDS,
    SUFFIX,
    TAIL_READ,
    TRAILER_SIZE,
    VECTOR_CHUNK,
    VECTOR_DECODE_BYTES,
    VERSION,
)
from puffin_cli.format.paimon_blob.writer import (
    BlobFileEncoder,
    BlobWriteResult,
    Marker,
    write_blob_file,
)

__all__ = [
    "ARRAY_MAGIC",
    "CHUNK",
    "EMPTY_FILE",
    "INDEX_MEMORY_PER_BYTE",
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "KEY_MEMORY",
    "MAGIC",
    "MAGIC_BYTES",
    "MAP_MAGIC",
    "MAX_VARINT_BYTES",
    "NESTED_HEADER",
    "NESTED_NULL_LENGTH",
    "NESTED_VERSION",
    "NULL_LENGTH",
    "PLACEHOLDER_LENGTH",
    "RECORD_OVERHEAD",
    "RECORD_TAIL",
    "ROW_KINDS",
    "SUFFIX",
    "TAIL_READ",
    "TRAILER_SIZE",
    "VECTOR_CHUNK",
    "VECTOR_DECODE_BYTES",
    "VERSION",
    "BlobFileEncoder",
    "BlobIndex",
    "BlobWriteResult",
    "IndexProblem",
    "Marker",
    "PaimonBlobReader",
    "RecordFrame",
    "Row",
    "ScannedRecord",
    "check_nested",
    "decode_lengths",
    "encode_array",
    "encode_lengths",
    "encode_map",
    "is_paimon_blob",
    "looks_like_paimon_blob",
    "nested_header",
    "nested_kind",
    "write_blob_file",
]
