"""``inspect_file``: what a Puffin file holds, as one frozen dataclass tree.

The footer is read once (exactly the footer when its size is known). Each blob is then decoded
through its type's handler unless ``decode`` is false, in which case no blob byte is read. A
blob that cannot be decoded does not stop the others: its report carries the problem instead
of a summary. A file whose footer cannot be read raises :class:`PuffinError`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from puffin_cli.blobs import BlobSummary, SummaryOptions, handler_for
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata, FooterInfo
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Problem:
    """Why a file or a blob could not be read: the stable error code, the bare message and the
    absolute byte offset where it was found (when there is one)."""

    code: str
    message: str
    offset: int | None

    @classmethod
    def from_error(cls, exc: PuffinError) -> Problem:
        return cls(exc.code, exc.message, exc.offset)


@dataclass(frozen=True)
class BlobReport:
    """One footer entry, with its decoded summary, or the problem that stopped decoding.

    Both ``summary`` and ``error`` are ``None`` when decoding was not asked for.
    """

    index: int
    metadata: BlobMetadata
    summary: BlobSummary | None = None
    error: Problem | None = None


@dataclass(frozen=True)
class FileReport:
    """A readable Puffin file: its size, footer, file properties and blobs."""

    path: str
    file_size: int
    footer: FooterInfo
    properties: dict[str, str]
    extra: dict[str, Any]
    decoded: bool
    blobs: tuple[BlobReport, ...]

    @property
    def ok(self) -> bool:
        """Every blob that was to be decoded was decoded."""
        return all(blob.error is None for blob in self.blobs)


@dataclass(frozen=True)
class FileError:
    """A file whose footer could not be read at all."""

    path: str
    error: Problem


@dataclass(frozen=True)
class InspectReport:
    """Everything one ``puffin inspect`` run found, in the order the files were given."""

    schema_version: int
    files: tuple[FileReport, ...]
    errors: tuple[FileError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors and all(f.ok for f in self.files)

    def failures(self) -> list[PuffinError]:
        """Every file that could not be read and every blob that could not be decoded, as an
        error naming the file, the blob, the problem and the byte offset."""
        found = [PuffinError(e.error.message, code=e.error.code, path=e.path,
                             offset=e.error.offset) for e in self.errors]
        found += [PuffinError(b.error.message, code=b.error.code, path=f.path,
                              offset=b.error.offset, blob_index=b.index)
                  for f in self.files for b in f.blobs if b.error is not None]
        return found


def inspect_file(location: str | os.PathLike[str], *, decode: bool = True, limit: int = 20,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                 footer_size: int | None = None) -> FileReport:
    """Read the footer of ``location`` and, when ``decode``, summarize every blob.

    ``limit`` bounds lists in summaries (e.g. deletion-vector ranges); ``footer_size`` is
    Iceberg's ``file-footer-size-in-bytes``, making the metadata read exactly the footer.
    """
    options = SummaryOptions(limit=limit)
    with PuffinReader(location, footer_size=footer_size, max_blob_size=max_blob_size) as reader:
        metadata = reader.metadata
        blobs = []
        for index, blob in enumerate(metadata.blobs):
            if not decode:
                blobs.append(BlobReport(index, blob))
                continue
            try:
                data = reader.read_blob(blob)
                summary = handler_for(blob.type).summarize(data, blob, options)
            except PuffinError as exc:
                if exc.offset is None:
                    exc.offset = blob.offset
                blobs.append(BlobReport(index, blob, error=Problem.from_error(exc)))
            else:
                blobs.append(BlobReport(index, blob, summary=summary))
        return FileReport(
            path=reader.path,
            file_size=reader.file_size,
            footer=reader.footer,
            properties=dict(metadata.properties),
            extra=dict(metadata.extra),
            decoded=decode,
            blobs=tuple(blobs),
        )


def inspect_files(locations: list[str], *, decode: bool = True, limit: int = 20,
                  max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                  footer_size: int | None = None) -> InspectReport:
    """Inspect each file; a file that cannot be read becomes a :class:`FileError`."""
    files: list[FileReport] = []
    errors: list[FileError] = []
    for location in locations:
        try:
            files.append(inspect_file(location, decode=decode, limit=limit,
                                      max_blob_size=max_blob_size, footer_size=footer_size))
        except PuffinError as exc:
            errors.append(FileError(exc.path or location, Problem.from_error(exc)))
    return InspectReport(SCHEMA_VERSION, tuple(files), tuple(errors))
