"""``inspect_file``: what a Puffin file holds, as one frozen dataclass tree.

The footer is read once (exactly the footer when its size is known). Each blob is then decoded
through its type's handler unless ``decode`` is false, in which case no blob byte is read. A
blob that cannot be decoded does not stop the others: its report carries the problem instead
of a summary. A file whose footer cannot be read raises :class:`PuffinError`.

Given a table (``--table``/``--metadata``), each blob's field IDs are also named by
:class:`TableColumns`: with the schema of the blob's snapshot, or the current schema for a
snapshot the table does not have (a deletion vector's -1), where 2147483645 is ``_pos``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata, FooterInfo
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DEFAULT_LIMIT, DEFAULT_MAX_BLOB_SIZE, PUFFIN_SUFFIXES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any

    from puffin_cli.analysis.paimon import PaimonFileReport
    from puffin_cli.analysis.partition_stats.inspection import PartitionStatsFileReport
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.blobs import BlobSummary
    from puffin_cli.storage import FileIO


def _is_paimon_blob(location: str, fileio: FileIO) -> bool:
    """A Paimon BLOB file (the Paimon reader is imported only for a file not named *.puffin
    or *.stats)."""
    from puffin_cli.format.paimon_blob import is_paimon_blob

    return is_paimon_blob(location, fileio)


def _is_parquet(location: str, fileio: FileIO) -> bool:
    """A Parquet file: a partition statistics file (read by analysis/partition_stats). A
    file named as a Paimon BLOB file is not sniffed (on an object store that costs two
    requests)."""
    from puffin_cli.analysis.partition_stats.inspection import is_parquet
    from puffin_cli.format.paimon_blob.spec import SUFFIX

    if location.endswith(SUFFIX):
        return False

    return is_parquet(location, fileio)


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

    Both ``summary`` and ``error`` are ``None`` when decoding was not asked for. ``columns``
    names ``metadata.fields`` one by one (``None`` for an ID the schema does not have); it is
    ``None`` itself when no table was given.
    """

    index: int
    metadata: BlobMetadata
    columns: tuple[str | None, ...] | None = None
    summary: BlobSummary | None = None
    error: Problem | None = None


@dataclass(frozen=True)
class DumpedBlob:
    """One blob of one file, decoded (``dump-blob --json``)."""

    path: str
    blob: BlobReport


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
    """Everything one ``puffin inspect`` run found, in the order the files were given (Paimon
    BLOB files among them as :class:`~puffin_cli.analysis.paimon.PaimonFileReport`)."""

    files: tuple[FileReport | PaimonFileReport | PartitionStatsFileReport, ...]
    errors: tuple[FileError, ...]

    @property
    def ok(self) -> bool:
        return not self.errors and all(f.ok for f in self.files)

    def failures(self) -> list[PuffinError]:
        """Every file that could not be read and every blob that could not be decoded, as an
        error naming the file, the blob, the problem and the byte offset."""
        found = [PuffinError(e.error.message, code=e.error.code, path=e.path,
                             offset=e.error.offset) for e in self.errors]
        for file in self.files:
            if not isinstance(file, FileReport):
                found += file.failures()
                continue
            found += [PuffinError(b.error.message, code=b.error.code, path=file.path,
                                  offset=b.error.offset, blob_index=b.index)
                      for b in file.blobs if b.error is not None]
        return found


class TableColumns:
    """Column names for blob field IDs from one loaded table's metadata: every snapshot is
    looked up in the same metadata version, each schema indexed once."""

    def __init__(self, table: Table) -> None:
        self.table = table

    def columns(self, blob: BlobMetadata) -> tuple[str | None, ...]:
        """The names of ``blob.fields`` in the schema of the blob's snapshot."""
        names = self.table.field_names(blob.snapshot_id)
        return tuple(names.name(field_id) for field_id in blob.fields)

    def name(self, report: FileReport) -> FileReport:
        """``report`` with every blob's ``columns`` filled in."""
        blobs = tuple(replace(blob, columns=self.columns(blob.metadata))
                      for blob in report.blobs)
        return replace(report, blobs=blobs)


def inspect_file(location: str | os.PathLike[str], *, decode: bool = True,
                 limit: int = DEFAULT_LIMIT,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                 footer_size: int | None = None, fileio: FileIO) -> FileReport:
    """Read the footer of ``location`` (with ``fileio``) and, when ``decode``, summarize
    every blob.

    ``limit`` bounds lists in summaries (e.g. deletion-vector ranges); ``footer_size`` is
    Iceberg's ``file-footer-size-in-bytes``, making the metadata read exactly the footer.
    """
    if decode:  # the blob handlers (and what they import) only when blobs are decoded
        from puffin_cli.blobs import SummaryOptions, handler_for

        options = SummaryOptions(limit=limit)
    with PuffinReader(location, footer_size=footer_size, max_blob_size=max_blob_size,
                      fileio=fileio) as reader:
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


def inspect_files(locations: list[str], *, decode: bool = True, limit: int = DEFAULT_LIMIT,
                  max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                  footer_size: int | None = None, table: Table | None = None,
                  fileio: FileIO) -> InspectReport:
    """Inspect each file (with ``fileio``); a file that cannot be read becomes a
    :class:`FileError`.

    With ``table`` (loaded by the caller), blobs get column names, and the files are read
    with the table's storage configuration (a catalog's FileIO properties for its table)
    instead.
    """
    columns = None if table is None else TableColumns(table)
    fileio = fileio if table is None else table.fileio
    files: list[FileReport | PaimonFileReport | PartitionStatsFileReport] = []
    errors: list[FileError] = []
    for location in locations:
        try:
            if not location.endswith(PUFFIN_SUFFIXES) and _is_parquet(location, fileio):
                from puffin_cli.analysis.partition_stats.inspection import (
                    inspect_partition_stats,
                )

                found = inspect_partition_stats(location, limit=limit, table=table,
                                                fileio=fileio)
                if found is not None:
                    files.append(found)
                    continue
            if not location.endswith(PUFFIN_SUFFIXES) and _is_paimon_blob(location, fileio):
                from puffin_cli.analysis.paimon import inspect_paimon

                files.append(inspect_paimon(location, decode=decode, limit=limit,
                                            max_blob_size=max_blob_size, fileio=fileio))
                continue
            report = inspect_file(location, decode=decode, limit=limit,
                                  max_blob_size=max_blob_size, footer_size=footer_size,
                                  fileio=fileio)
        except PuffinError as exc:
            errors.append(FileError(exc.path or location, Problem.from_error(exc)))
            continue
        files.append(report if columns is None else columns.name(report))
    return InspectReport(tuple(files), tuple(errors))
