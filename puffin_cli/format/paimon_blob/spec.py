"""The constants of Paimon's BLOB container: record, trailer and nested layouts, and
the sizes reading works in."""

from __future__ import annotations

import struct

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
