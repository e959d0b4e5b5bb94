"""PuffinWriter: streams blobs into a storage output that is published only when complete.

A failed or interrupted write leaves nothing at the target (locally: a temp file beside the
target, then a hard link or rename; on object stores: one create-only PUT). With
``overwrite=False`` an existing target is never replaced, even by a writer racing this one.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

from puffin_cli import CREATED_BY as DEFAULT_CREATED_BY
from puffin_cli.format import codecs
from puffin_cli.format.metadata import BlobMetadata, FileMetadata
from puffin_cli.format.spec import (
    CODEC_LZ4,
    CREATED_BY,
    FLAG_FOOTER_COMPRESSED_BIT,
    FLAG_FOOTER_COMPRESSED_BYTE,
    FLAGS_LENGTH,
    FOOTER_OVERHEAD,
    MAGIC,
)
from puffin_cli.storage import FileIO, OutputStream


@dataclass(frozen=True)
class WriteResult:
    path: str
    file_size: int
    footer_size: int
    metadata: FileMetadata


class PuffinWriter:
    """Write a Puffin file blob by blob.

    ``properties`` are the file properties; ``created_by`` (default ``puffin-cli <version>``)
    is added as ``created-by`` unless ``properties`` already has that key. Pass
    ``created_by=None`` with no ``properties`` for a footer without properties (as some Iceberg
    test files have). ``fileio`` writes the file; without one, a FileIO configured by the
    environment alone (not ``--io``), for a library caller with no other configuration;
    every command passes its own.
    """

    def __init__(self, target: str | os.PathLike[str], *,
                 properties: Mapping[str, str] | None = None,
                 created_by: str | None = DEFAULT_CREATED_BY,
                 compress_footer: bool = False, overwrite: bool = False,
                 fileio: FileIO | None = None) -> None:
        self.target = os.fspath(target)
        self._properties = dict(properties or {})
        if created_by is not None and CREATED_BY not in self._properties:
            self._properties[CREATED_BY] = created_by
        self._compress_footer = compress_footer
        self._out: OutputStream = (fileio or FileIO()).new_output(self.target).create(
            overwrite)
        self._out.write(MAGIC)
        self._position = len(MAGIC)
        self._blobs: list[BlobMetadata] = []
        self._done = False

    def add_blob(self, type: str, data: bytes, *, fields: Sequence[int],
                 snapshot_id: int = -1, sequence_number: int = -1,
                 properties: Mapping[str, str] | None = None,
                 codec: str | None = None) -> BlobMetadata:
        """Compress ``data`` with ``codec`` (``None``: stored as is) and append it."""
        return self.add_stored_blob(type, codecs.compress(codec, data), fields=fields,
                                    snapshot_id=snapshot_id, sequence_number=sequence_number,
                                    properties=properties, codec=codec)

    def add_stored_blob(self, type: str, stored: bytes, *, fields: Sequence[int],
                        snapshot_id: int = -1, sequence_number: int = -1,
                        properties: Mapping[str, str] | None = None,
                        codec: str | None = None) -> BlobMetadata:
        """Append bytes that are already in their stored form (e.g. copied from another file
        without decompressing them); ``codec`` names how they are compressed."""
        meta = BlobMetadata(type=type, fields=tuple(fields), snapshot_id=snapshot_id,
                            sequence_number=sequence_number, offset=self._position,
                            length=len(stored), compression_codec=codec,
                            properties=dict(properties or {}))
        self._out.write(stored)
        self._position += len(stored)
        self._blobs.append(meta)
        return meta

    def finish(self) -> WriteResult:
        """Write the footer, flush to disk and move the file into place (on any failure, drop
        the temp file and leave the target as it was)."""
        try:
            return self._finish()
        except BaseException:
            self.abort()
            raise

    def _finish(self) -> WriteResult:
        metadata = FileMetadata(tuple(self._blobs), self._properties)
        payload = metadata.to_payload()
        flags = bytearray(FLAGS_LENGTH)
        if self._compress_footer:
            payload = codecs.compress(CODEC_LZ4, payload)
            flags[FLAG_FOOTER_COMPRESSED_BYTE] |= 1 << FLAG_FOOTER_COMPRESSED_BIT
        self._out.write(MAGIC + payload + struct.pack("<i", len(payload)) + flags + MAGIC)
        footer_size = FOOTER_OVERHEAD + len(payload)
        self._out.commit()
        self._done = True
        return WriteResult(self.target, self._position + footer_size, footer_size, metadata)

    def abort(self) -> None:
        """Drop what was written; the target is left as it was."""
        if not self._out.done:
            self._out.abort()
        self._done = True

    def __enter__(self) -> PuffinWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None or not self._done:
            if exc_type is None:
                self.finish()
            else:
                self.abort()
