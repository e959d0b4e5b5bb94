"""Constants of the Puffin format, named and derived from each other.

File layout::

    Magic Blob_1 ... Blob_n Footer

Footer layout (offsets relative to the footer start)::

    +-------+----------------+---------------------+----------+-------+
    | Magic | FooterPayload  | FooterPayloadSize   | Flags    | Magic |
    | 4     | payload_size   | 4 (int32, LE)       | 4        | 4     |
    +-------+----------------+---------------------+----------+-------+

Footer size (Iceberg's ``file-footer-size-in-bytes``) = 4 + payload_size + 12.
"""

from __future__ import annotations

MAGIC = b"PFA1"
MAGIC_LENGTH = len(MAGIC)
PUFFIN_SUFFIXES = (".puffin", ".stats")  # names taken as Puffin files without looking inside
ENCRYPTED_MAGIC = b"AGS1"  # Iceberg's AES-GCM stream files start with this

PAYLOAD_SIZE_LENGTH = 4
FLAGS_LENGTH = 4
# The fixed part after the payload: payload size, flags, closing magic.
FOOTER_STRUCT_LENGTH = PAYLOAD_SIZE_LENGTH + FLAGS_LENGTH + MAGIC_LENGTH
FOOTER_OVERHEAD = MAGIC_LENGTH + FOOTER_STRUCT_LENGTH
# The smallest Puffin file: leading magic, then a footer with an empty payload.
MIN_FILE_LENGTH = MAGIC_LENGTH + FOOTER_OVERHEAD

# Flag bits: byte 0, bit 0 is the only one defined.
FLAG_FOOTER_COMPRESSED_BYTE = 0
FLAG_FOOTER_COMPRESSED_BIT = 0

CODEC_LZ4 = "lz4"
CODEC_ZSTD = "zstd"
KNOWN_CODECS = (CODEC_LZ4, CODEC_ZSTD)

# Blob types named by the Iceberg spec.
THETA_BLOB_TYPE = "apache-datasketches-theta-v1"
DV_BLOB_TYPE = "deletion-vector-v1"

# File and blob properties named by the spec.
CREATED_BY = "created-by"
NDV_PROPERTY = "ndv"
CARDINALITY_PROPERTY = "cardinality"
REFERENCED_DATA_FILE_PROPERTY = "referenced-data-file"

# Field ID of the ``_pos`` metadata column, the one field of a deletion vector blob.
ROW_POSITION_FIELD_ID = 2147483645

# Metadata reads: one tail read of this size, a second only when the footer is larger.
DEFAULT_TAIL_READ = 64 * 1024
# Decoding refuses a blob whose stored or decompressed size exceeds this, and reading refuses a
# footer payload (compressed or not) above it (``--max-blob-size``). A decoded blob costs a few
# times its size, so 64 MiB keeps every command under 512 MiB of memory by default.
DEFAULT_MAX_BLOB_SIZE = 64 * 1024 * 1024
# How many items of a list (deletion-vector ranges, Paimon rows) a summary shows (``--limit``).
DEFAULT_LIMIT = 20
