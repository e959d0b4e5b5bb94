"""PuffinReader: metadata from one tail read, blob bytes only when asked for.

Reading metadata costs one read of the file's last ``tail_read`` bytes (64 KiB by default), and a
second read only when the footer is larger than that. Given Iceberg's
``file-footer-size-in-bytes``, exactly the footer is read. No blob byte is read until a blob is
asked for, and then only that blob's range.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from types import TracebackType

from puffin_cli.errors import BlobTooLargeError, EncryptedFileError, PuffinError
from puffin_cli.format import codecs
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata, FileMetadata, FooterInfo, decode_footer_json
from puffin_cli.format.spec import (
    CODEC_LZ4,
    DEFAULT_MAX_BLOB_SIZE,
    DEFAULT_TAIL_READ,
    ENCRYPTED_MAGIC,
    FLAG_FOOTER_COMPRESSED_BIT,
    FLAG_FOOTER_COMPRESSED_BYTE,
    FOOTER_OVERHEAD,
    FOOTER_STRUCT_LENGTH,
    MAGIC,
    MAGIC_LENGTH,
    MIN_FILE_LENGTH,
)
from puffin_cli.storage import FileIO, InputFile


@dataclass(frozen=True)
class FooterRead:
    """The footer as found: where it is, and its payload (decompressed when it was stored
    compressed); ``payload`` is ``None`` when a structural error makes it unreadable."""

    info: FooterInfo | None
    payload: bytes | None
    findings: list[Finding]


# The first bytes read to tell what a file that is not Puffin is (JSON may start with blanks).
HEAD_SNIFF = 64


def other_format(head: bytes, tail: bytes, size: int) -> str | None:
    """What a file that does not end in Puffin's magic is, from its first bytes (``head``),
    its last bytes (``tail``) and its size, when its magic says so (``None`` otherwise)."""
    from puffin_cli.format.paimon_blob.reader import looks_like_paimon_blob

    if tail.endswith(b"PAR1"):
        return "a Parquet file (magic PAR1)"
    if head.startswith(b"Obj\x01"):
        return "an Avro file (magic Obj\\x01)"
    if head.startswith(b"ORC"):
        return "an ORC file (magic ORC)"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file (magic 1f8b)"
    if head.lstrip(b" \t\r\n")[:1] in (b"{", b"["):
        return "a JSON document"
    if looks_like_paimon_blob(head, tail, size):
        return "a Paimon BLOB file (puffin inspect reads it when it is named *.blob)"
    return None


def _error(findings: list[Finding], code: str, message: str, offset: int | None) -> None:
    findings.append(Finding(code, Severity.ERROR, message, offset))


def read_footer(source: InputFile, *, footer_size: int | None = None,
                tail_read: int = DEFAULT_TAIL_READ,
                max_payload: int = DEFAULT_MAX_BLOB_SIZE) -> FooterRead:
    """Locate and check the footer structure, collecting every finding along the way."""
    findings: list[Finding] = []
    # One read of the tail, which also learns the size (one request on an object store).
    tail = source.read_tail(max(footer_size, 0) if footer_size is not None else tail_read)
    size = source.size
    if size < MIN_FILE_LENGTH:
        if tail[:MAGIC_LENGTH] == ENCRYPTED_MAGIC:
            raise EncryptedFileError("encrypted Iceberg file (AES-GCM stream, magic AGS1): key "
                                     "needed", code="file.encrypted", offset=0)
        what = "empty" if size == 0 else f"{size} bytes"
        _error(findings, "file.too-short", f"file is {what}; the smallest Puffin file is "
               f"{MIN_FILE_LENGTH} bytes (magic and an empty footer)", size)
        return FooterRead(None, None, findings)
    if footer_size is not None and not FOOTER_OVERHEAD <= footer_size <= size - MAGIC_LENGTH:
        raise PuffinError(f"given footer size {footer_size} is impossible for a file of "
                          f"{size} bytes", code="footer.size-mismatch")
    tail_start = size - len(tail)
    struct_at = size - FOOTER_STRUCT_LENGTH
    if tail[-MAGIC_LENGTH:] != MAGIC:
        head = tail[:HEAD_SNIFF] if tail_start == 0 else source.read(0, min(HEAD_SNIFF, size))
        if head[:MAGIC_LENGTH] == ENCRYPTED_MAGIC:
            raise EncryptedFileError("encrypted Iceberg file (AES-GCM stream, magic AGS1): key "
                                     "needed", code="file.encrypted", offset=0)
        other = other_format(head, tail, size)
        _error(findings, "footer.magic", f"footer end magic is {tail[-MAGIC_LENGTH:].hex()}, "
               f"expected {MAGIC.hex()} ({MAGIC.decode()})"
               + ("" if other is None else f": this is {other}, not a Puffin file"),
               size - MAGIC_LENGTH)
        return FooterRead(None, None, findings)
    (payload_size,) = struct.unpack_from("<i", tail, len(tail) - FOOTER_STRUCT_LENGTH)
    flags = tail[len(tail) - FOOTER_STRUCT_LENGTH + 4: len(tail) - MAGIC_LENGTH]
    footer_start = size - FOOTER_OVERHEAD - payload_size
    if payload_size < 0:
        _error(findings, "footer.payload-size", f"footer payload size is negative "
               f"({payload_size})", struct_at)
        return FooterRead(None, None, findings)
    if footer_start < MAGIC_LENGTH:
        _error(findings, "footer.payload-size", f"footer payload size {payload_size} does not "
               f"fit in a file of {size} bytes (footer would start at byte {footer_start}, "
               f"before the end of the leading magic at {MAGIC_LENGTH})", struct_at)
        return FooterRead(None, None, findings)
    footer_total = FOOTER_OVERHEAD + payload_size
    if footer_size is not None and footer_size != footer_total:
        raise PuffinError(f"given footer size {footer_size} does not match the file's footer "
                          f"size {footer_total}", code="footer.size-mismatch")
    compressed = bool(flags[FLAG_FOOTER_COMPRESSED_BYTE] >> FLAG_FOOTER_COMPRESSED_BIT & 1)
    reserved = bytearray(flags)
    reserved[FLAG_FOOTER_COMPRESSED_BYTE] &= ~(1 << FLAG_FOOTER_COMPRESSED_BIT) & 0xFF
    if any(reserved):
        _error(findings, "footer.flags.reserved", f"reserved footer flag bits are set (flags "
               f"{flags.hex()}); only bit 0 of byte 0 is defined", struct_at + 4)
    info = FooterInfo(payload_size, footer_total, footer_start, bytes(flags), compressed)
    if footer_total > len(tail):
        if payload_size > max_payload:
            _error(findings, "footer.payload-size", f"footer payload of {payload_size} bytes is "
                   f"larger than the limit of {max_payload} bytes (raise --max-blob-size to "
                   "read it)", struct_at)
            return FooterRead(info, None, findings)
        tail = source.read(footer_start, footer_total)
    footer = tail[len(tail) - footer_total:]
    if footer[:MAGIC_LENGTH] != MAGIC:
        _error(findings, "footer.magic", f"footer start magic is {footer[:MAGIC_LENGTH].hex()}, "
               f"expected {MAGIC.hex()} ({MAGIC.decode()}); payload size {payload_size} may be "
               f"wrong", footer_start)
        return FooterRead(info, None, findings)
    payload = footer[MAGIC_LENGTH: MAGIC_LENGTH + payload_size]
    if compressed:
        try:
            payload = codecs.decompress(CODEC_LZ4, payload, max_payload)
        except PuffinError as exc:
            _error(findings, "footer.decompress", f"footer payload: {exc.message}",
                   footer_start + MAGIC_LENGTH)
            return FooterRead(info, None, findings)
    return FooterRead(info, payload, findings)


class PuffinReader:
    """Read a Puffin file's metadata and blobs. Never writes to the file.

    ``footer_size`` (Iceberg's ``file-footer-size-in-bytes``) makes the metadata read exactly the
    footer; ``max_blob_size`` bounds the bytes any one blob may need in memory. ``length``
    (``file-size-in-bytes``, a listing's size) saves asking the store for it; ``fileio`` is the
    storage configuration. Without one, a FileIO configured by the environment alone (not
    ``--io``): for a library caller reading a file with no other configuration; every command
    passes its own.
    """

    def __init__(self, location: str | os.PathLike[str], *, footer_size: int | None = None,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE, length: int | None = None,
                 fileio: FileIO | None = None) -> None:
        self.path = os.fspath(location)
        self._file = (fileio or FileIO()).new_input(location, length=length)
        self._footer_size = footer_size
        self.max_blob_size = max_blob_size
        self._footer: FooterInfo | None = None
        self._metadata: FileMetadata | None = None

    @property
    def file_size(self) -> int:
        return self._file.size

    @property
    def bytes_read(self) -> int:
        return self._file.bytes_read

    def _fail(self, exc: PuffinError) -> PuffinError:
        return exc.with_path(self.path)

    def _load(self) -> None:
        try:
            found = read_footer(self._file, footer_size=self._footer_size,
                                max_payload=self.max_blob_size)
            errors = [f for f in found.findings if f.severity is Severity.ERROR]
            if errors:
                raise PuffinError(errors[0].message, code=errors[0].code, offset=errors[0].offset)
            assert found.info is not None and found.payload is not None
            metadata, json_findings = decode_footer_json(
                found.payload, found.info.footer_start + MAGIC_LENGTH, self.max_blob_size)
            errors = [f for f in json_findings if f.severity is Severity.ERROR]
            if metadata is None:
                first = errors[0]
                raise PuffinError(first.message, code=first.code, offset=first.offset,
                                  blob_index=first.blob_index)
        except PuffinError as exc:
            raise self._fail(exc) from None
        self._footer, self._metadata = found.info, metadata

    @property
    def footer(self) -> FooterInfo:
        if self._footer is None:
            self._load()
        assert self._footer is not None
        return self._footer

    @property
    def metadata(self) -> FileMetadata:
        if self._metadata is None:
            self._load()
        assert self._metadata is not None
        return self._metadata

    def blob(self, index: int) -> BlobMetadata:
        blobs = self.metadata.blobs
        if not 0 <= index < len(blobs):
            raise PuffinError(f"no blob {index}: the file has {len(blobs)} blobs",
                              code="blob.index", path=self.path)
        return blobs[index]

    def _check_range(self, blob: BlobMetadata, index: int | None) -> None:
        end = self.footer.footer_start
        if blob.offset < MAGIC_LENGTH or blob.offset + blob.length > end:
            raise PuffinError(
                f"blob range [{blob.offset}, {blob.offset + blob.length}) is outside the blob "
                f"area [{MAGIC_LENGTH}, {end})", code="blob.range", path=self.path,
                offset=blob.offset, blob_index=index)
        if blob.length > self.max_blob_size:
            raise BlobTooLargeError(
                f"blob of {blob.length} bytes is larger than the limit of {self.max_blob_size} "
                f"bytes (raise --max-blob-size to read it)", code="blob.too-large",
                path=self.path, offset=blob.offset, blob_index=index)

    def _index_of(self, blob: BlobMetadata) -> int | None:
        for i, candidate in enumerate(self.metadata.blobs):
            if candidate is blob:
                return i
        return None

    def read_raw(self, blob: BlobMetadata) -> bytes:
        """The blob's bytes as stored (still compressed)."""
        index = self._index_of(blob)
        self._check_range(blob, index)
        return self._file.read(blob.offset, blob.length)

    def stream_raw(self, blob: BlobMetadata) -> Iterator[bytes]:
        """The blob's stored bytes in chunks (one ranged request on an object store), never
        all in memory: for copying a blob out as it is."""
        index = self._index_of(blob)
        self._check_range(blob, index)
        return self._file.stream(blob.offset, blob.length)

    def read_blob(self, blob: BlobMetadata) -> bytes:
        """The blob's bytes, decompressed."""
        raw = self.read_raw(blob)
        try:
            return codecs.decompress(blob.compression_codec, raw, self.max_blob_size)
        except PuffinError as exc:
            exc.offset = blob.offset if exc.offset is None else exc.offset
            exc.blob_index = self._index_of(blob)
            raise self._fail(exc) from None

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> PuffinReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
