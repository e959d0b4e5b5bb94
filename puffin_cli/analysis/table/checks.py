"""The cross-checks of ``puffin table``: everything a table's metadata and manifests say about a
Puffin file (registered statistics files, partition statistics files, deletion vectors) against
what the file says. :mod:`.walk` applies them snapshot by snapshot and builds the report.

Findings (``table.*`` codes; validate's own codes for the Puffin files themselves):

============================  ========  ==================================================
code                          severity  meaning
============================  ========  ==================================================
table.stats.missing           error     a statistics / partition-statistics file is absent
table.stats.size              error     ``file-size-in-bytes`` != the file's size
table.stats.footer-size       error     ``file-footer-size-in-bytes`` != the footer's size
table.stats.blob-metadata     error     ``blob-metadata`` != the Puffin footer's blobs
table.stats.snapshot          error     statistics for a snapshot the table does not have
table.stats.field             error     a blob field ID not in the snapshot's schema
table.dv.missing              error     the DV's file is absent
table.dv.offset               error     ``content_offset`` != the blob's offset
table.dv.length               error     ``content_size_in_bytes`` != the blob's length
table.dv.record-count         error     ``record_count`` != the bitmap's cardinality, or
                                        more than the data file's ``record_count``
table.dv.referenced-file      error     ``referenced_data_file`` missing or != the blob's
                                        ``referenced-data-file`` property
table.dv.not-live             error     the referenced data file is not live in the snapshot
table.dv.duplicate            error     more than one DV for one data file
table.dv.position-range       error     a position >= the data file's ``record_count``
table.dv.sequence             error     DV data sequence number < the data file's
table.dv.partition            error     partition spec or values != the data file's
table.dv.container            error /   the range is not an Iceberg DV in a Puffin file
                              info      (info: a known other container, decoded)
table.orphan                  info      a Puffin file under the table nobody references
============================  ========  ==================================================
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from puffin_cli.analysis import dv_containers
from puffin_cli.analysis.table.fields import FieldNames
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.metadata import (
    METADATA_DIR,
    PartitionStatisticsEntry,
    Snapshot,
    StatisticsEntry,
)
from puffin_cli.analysis.table.report import (
    DeletionVector,
    StatisticsBlob,
    StatisticsChoice,
    StatisticsFile,
)
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    DEFAULT_MAX_BLOB_SIZE,
    DV_BLOB_TYPE,
    MAGIC,
    NDV_PROPERTY,
    REFERENCED_DATA_FILE_PROPERTY,
)
from puffin_cli.storage import FileInfo, is_remote, join

PUFFIN_SUFFIXES = (".puffin", ".stats")


@dataclass
class _PuffinFile:
    """A Puffin (or bare DV) file opened once per table analysis."""

    exists: bool
    size: int = 0
    is_puffin: bool = False
    blobs: tuple[BlobMetadata, ...] | None = None
    footer_size: int | None = None
    problem: PuffinError | None = None
    decoded: dict[tuple[int, int], dv_containers.DecodedDV] = field(default_factory=dict)


class TableChecks:
    """The cross-checks of one table, each Puffin file opened (and validated) once; findings
    accumulate in :attr:`findings`."""

    def __init__(self, table: Table, validate: bool,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> None:
        self.table = table
        self.max_blob_size = max_blob_size
        self.metadata = table.metadata
        self.table_dir = table.table_dir
        self.mapper = table.mapper
        self.fileio = table.fileio
        self.validate = validate
        self.findings: list[Finding] = []
        self.files: dict[str, _PuffinFile] = {}
        self.validated: set[str] = set()
        self.referenced: set[str] = set()
        self.dvs: dict[tuple[Any, ...], DeletionVector] = {}
        self.by_snapshot: defaultdict[int, list[StatisticsEntry]] | None = None

    def add(self, code: str, message: str, severity: Severity = Severity.ERROR,
            offset: int | None = None, blob_index: int | None = None) -> None:
        self.findings.append(Finding(code, severity, message, offset, blob_index))

    def local(self, location: str) -> str:
        path = self.mapper.local(location)
        self.referenced.add(_same(path))
        return path

    def _file(self, local: str) -> FileInfo | None:
        """What is at ``local`` when it is a file (a regular one, or a FIFO or device that
        reading will refuse); ``None`` when nothing or a directory is there."""
        found = self.fileio.stat(local)
        return None if found is None or found.kind == "dir" else found

    # Puffin files ------------------------------------------------------------------------

    def puffin(self, location: str) -> _PuffinFile:
        local = self.local(location)
        cached = self.files.get(local)
        if cached is not None:
            return cached
        info = self._file(local)
        if info is None:
            found = _PuffinFile(exists=False)
        else:
            found = _PuffinFile(exists=True, size=info.size)
            try:
                with self.fileio.new_input(local, length=info.size) as head:
                    found.is_puffin = head.size >= len(MAGIC) and \
                        head.read(0, len(MAGIC)) == MAGIC
                if found.is_puffin:
                    with PuffinReader(local, length=info.size, fileio=self.fileio,
                                      max_blob_size=self.max_blob_size) as reader:
                        found.blobs = reader.metadata.blobs
                        found.footer_size = reader.footer.footer_size
            except PuffinError as exc:
                found.problem = exc.with_path(location)
        self.files[local] = found
        return found

    def validate_file(self, location: str) -> None:
        local = self.mapper.local(location)
        if not self.validate or local in self.validated or self._file(local) is None:
            return
        self.validated.add(local)
        from puffin_cli.analysis.validate import validate_file

        for finding in validate_file(local, fileio=self.fileio,
                                     max_blob_size=self.max_blob_size).findings:
            self.findings.append(Finding(finding.code, finding.severity,
                                         f"{location}: {finding.message}", finding.offset,
                                         finding.blob_index))

    # statistics ----------------------------------------------------------------------------

    def statistics_files(self, snapshot_id: int) -> tuple[StatisticsFile, ...]:
        """The statistics files registered for the snapshot, checked."""
        if self.by_snapshot is None:
            self.by_snapshot = defaultdict(list)
            for entry in self.metadata.statistics:
                self.by_snapshot[entry.snapshot_id].append(entry)
        return tuple(self.statistics_file(e) for e in self.by_snapshot.get(snapshot_id, ()))

    def statistics_file(self, entry: StatisticsEntry) -> StatisticsFile:
        # The schema the snapshot was written with: a column renamed later keeps its field ID,
        # and shows the name it had when the statistics were computed.
        schema_id = self.metadata.schema_for(entry.snapshot_id)[0]
        names = self.table.field_names(entry.snapshot_id)
        blobs = tuple(
            StatisticsBlob(
                type=b.type, fields=b.fields, columns=tuple(names.name(f) for f in b.fields),
                snapshot_id=b.snapshot_id, sequence_number=b.sequence_number,
                ndv=_ndv(b.properties), properties=b.properties)
            for b in entry.blobs)
        self.check_statistics(entry, names)
        return StatisticsFile(entry.snapshot_id, entry.path, entry.file_size, entry.footer_size,
                              schema_id, blobs)

    def check_statistics(self, entry: StatisticsEntry, names: FieldNames) -> None:
        where = entry.path
        if self.metadata.snapshot(entry.snapshot_id) is None:
            self.add("table.stats.snapshot", f"{where}: registered for snapshot "
                     f"{entry.snapshot_id}, which the table does not have")
        for index, blob in enumerate(entry.blobs):
            unknown = [f for f in blob.fields if f not in names]
            if unknown:
                self.add("table.stats.field", f"{where}: blob {index} ({blob.type}) names field "
                         f"IDs {unknown} that schema {names.schema_id} does not have",
                         blob_index=index)
        found = self.puffin(entry.path)
        if not found.exists:
            self.add("table.stats.missing", f"{where}: statistics file for snapshot "
                     f"{entry.snapshot_id} does not exist ({self.mapper.local(entry.path)})")
            return
        if found.size != entry.file_size:
            self.add("table.stats.size", f"{where}: file-size-in-bytes is {entry.file_size}, "
                     f"the file has {found.size} bytes")
        self.validate_file(entry.path)
        if found.blobs is None:
            if found.problem is None:
                self.add("table.stats.blob-metadata", f"{where}: not a Puffin file (no PFA1 "
                         "magic at byte 0)", offset=0)
            elif not self.validate:
                self.add(found.problem.code, str(found.problem), offset=found.problem.offset)
            return
        if found.footer_size != entry.footer_size:
            self.add("table.stats.footer-size", f"{where}: file-footer-size-in-bytes is "
                     f"{entry.footer_size}, the footer has {found.footer_size} bytes")
        self.compare_blobs(entry, found.blobs)

    def compare_blobs(self, entry: StatisticsEntry, blobs: tuple[BlobMetadata, ...]) -> None:
        where = entry.path
        if len(entry.blobs) != len(blobs):
            self.add("table.stats.blob-metadata", f"{where}: blob-metadata lists "
                     f"{len(entry.blobs)} blobs, the Puffin footer {len(blobs)}")
        for index, (listed, actual) in enumerate(zip(entry.blobs, blobs, strict=False)):
            pairs = (("type", listed.type, actual.type),
                     ("snapshot-id", listed.snapshot_id, actual.snapshot_id),
                     ("sequence-number", listed.sequence_number, actual.sequence_number),
                     ("fields", list(listed.fields), list(actual.fields)),
                     ("properties", listed.properties, actual.properties))
            for key, said, has in pairs:
                if said != has:
                    self.add("table.stats.blob-metadata", f"{where}: blob {index} {key} is "
                             f"{said!r} in the table metadata, {has!r} in the Puffin footer",
                             offset=actual.offset, blob_index=index)

    def partition_statistics(self, snapshot_id: int) -> tuple[PartitionStatisticsEntry, ...]:
        out = []
        for entry in self.metadata.partition_statistics:
            if entry.snapshot_id != snapshot_id:
                continue
            local = self.local(entry.path)
            info = self._file(local)
            if info is None:
                self.add("table.stats.missing", f"{entry.path}: partition statistics file for "
                         f"snapshot {snapshot_id} does not exist ({local})")
            elif info.size != entry.file_size:
                self.add("table.stats.size", f"{entry.path}: file-size-in-bytes is "
                         f"{entry.file_size}, the file has {info.size} bytes")
            out.append(entry)
        return tuple(out)

    def statistics_choice(self, snapshot: Snapshot) -> StatisticsChoice:
        by_snapshot = {e.snapshot_id: e.path for e in self.metadata.statistics}
        spark = by_snapshot.get(snapshot.snapshot_id)
        seen: set[int] = set()
        current: Snapshot | None = snapshot
        while current is not None and current.snapshot_id not in seen:
            seen.add(current.snapshot_id)
            if current.snapshot_id in by_snapshot:
                return StatisticsChoice(spark, by_snapshot[current.snapshot_id],
                                        current.snapshot_id)
            current = (None if current.parent_id is None
                       else self.metadata.snapshot(current.parent_id))
        return StatisticsChoice(spark, None, None)

    # deletion vectors ----------------------------------------------------------------------

    def deletion_vector(self, snapshot_id: int, entry: ContentFile,
                        data_files: dict[str, ContentFile]) -> DeletionVector:
        """A DV entry with its data file, checked once however many snapshots list them
        (the same manifest entry, against the same data file entry); its findings name the
        first snapshot checked."""
        data = data_files.get(entry.referenced_data_file or "")
        key = (entry.manifest, entry.path, entry.content_offset, entry.content_size,
               entry.referenced_data_file, entry.sequence_number,
               None if data is None else (data.manifest, data.path, data.sequence_number))
        found = self.dvs.get(key)
        if found is None:
            found = self.dvs[key] = self._check_deletion_vector(snapshot_id, entry, data_files)
        return found

    def _check_deletion_vector(self, snapshot_id: int, entry: ContentFile,
                               data_files: dict[str, ContentFile]) -> DeletionVector:
        where = f"snapshot {snapshot_id}: DV for {entry.referenced_data_file} in {entry.path}"
        found = self.puffin(entry.path)
        decoded: dv_containers.DecodedDV | None = None
        if not found.exists:
            self.add("table.dv.missing", f"{where}: the file does not exist "
                     f"({self.mapper.local(entry.path)})")
        else:
            if found.is_puffin:
                self.validate_file(entry.path)
            self.check_blob(where, entry, found)
            decoded = self.decode(where, entry, found)
        self.check_data_file(where, entry, decoded, data_files)
        return DeletionVector(
            data_file=entry.referenced_data_file, path=entry.path, offset=entry.content_offset,
            length=entry.content_size, record_count=entry.record_count,
            cardinality=None if decoded is None else decoded.cardinality,
            container="missing" if decoded is None else decoded.container,
            spec_id=entry.spec_id, partition=entry.partition,
            sequence_number=entry.sequence_number)

    def check_blob(self, where: str, entry: ContentFile, found: _PuffinFile) -> None:
        if found.blobs is None:
            return
        dvs = [(i, b) for i, b in enumerate(found.blobs) if b.type == DV_BLOB_TYPE]
        ref = entry.referenced_data_file
        by_ref = [(i, b) for i, b in dvs
                  if b.properties.get(REFERENCED_DATA_FILE_PROPERTY) == ref]
        at_offset = [(i, b) for i, b in dvs if b.offset == entry.content_offset]
        if by_ref:
            index, blob = by_ref[0]
            if blob.offset != entry.content_offset:
                self.add("table.dv.offset", f"{where}: content_offset is "
                         f"{entry.content_offset}, the blob for this data file is at "
                         f"{blob.offset}", offset=blob.offset, blob_index=index)
            if blob.length != entry.content_size:
                self.add("table.dv.length", f"{where}: content_size_in_bytes is "
                         f"{entry.content_size}, the blob is {blob.length} bytes",
                         offset=blob.offset, blob_index=index)
        elif at_offset:
            index, blob = at_offset[0]
            said = blob.properties.get(REFERENCED_DATA_FILE_PROPERTY)
            self.add("table.dv.referenced-file", f"{where}: the blob at offset {blob.offset} "
                     f"is for {said}", offset=blob.offset, blob_index=index)
        else:
            self.add("table.dv.offset", f"{where}: no deletion-vector blob for this data file "
                     f"and none at offset {entry.content_offset} in the Puffin footer")

    def decode(self, where: str, entry: ContentFile,
               found: _PuffinFile) -> dv_containers.DecodedDV | None:
        offset, length = entry.content_offset, entry.content_size
        if offset is None or length is None:
            self.add("table.dv.offset", f"{where}: content_offset / content_size_in_bytes "
                     "missing (required for deletion vectors)")
            return None
        if offset < 0 or length < 0 or offset + length > found.size:
            self.add("table.dv.length", f"{where}: range [{offset}, {offset + length}) is "
                     f"outside the file of {found.size} bytes", offset=offset)
            return None
        if length > self.max_blob_size:
            self.add("blob.too-large", f"{where}: deletion vector of {length} bytes is larger "
                     f"than the limit of {self.max_blob_size} bytes; not read (raise "
                     "--max-blob-size to read it)", offset=offset)
            return None
        key = (offset, length)
        decoded = found.decoded.get(key)
        if decoded is None:
            with self.fileio.new_input(self.mapper.local(entry.path),
                                       length=found.size) as source:
                data = source.read(offset, length)
            decoded = dv_containers.decode_range(data, in_puffin=found.blobs is not None,
                                                 base_offset=offset)
            found.decoded[key] = decoded
        if decoded.problem is not None:
            severity = (Severity.WARNING if decoded.container == dv_containers.UNKNOWN
                        else Severity.ERROR)
            self.add("table.dv.container", f"{where}: {decoded.container} range "
                     f"[{offset}, {offset + length}): {decoded.problem}", severity, offset)
        elif decoded.container != dv_containers.PUFFIN:
            self.add("table.dv.container", f"{where}: the range holds a {decoded.container} "
                     "deletion vector, not a Puffin blob", Severity.INFO, offset)
        if decoded.cardinality is not None and decoded.cardinality != entry.record_count:
            self.add("table.dv.record-count", f"{where}: record_count is {entry.record_count}, "
                     f"the bitmap holds {decoded.cardinality} positions", offset=offset)
        return decoded

    def check_data_file(self, where: str, entry: ContentFile,
                        decoded: dv_containers.DecodedDV | None,
                        data_files: dict[str, ContentFile]) -> None:
        ref = entry.referenced_data_file
        if ref is None:
            self.add("table.dv.referenced-file", f"{where}: referenced_data_file is null "
                     "(required for deletion vectors)")
            return
        data = data_files.get(ref)
        if data is None:
            self.add("table.dv.not-live", f"{where}: data file {ref} is not live in the "
                     "snapshot")
            return
        if entry.record_count > data.record_count:
            self.add("table.dv.record-count", f"{where}: deletes {entry.record_count} rows, "
                     f"the data file has {data.record_count}")
        top = None if decoded is None else decoded.max_position
        if top is not None and top >= data.record_count:
            self.add("table.dv.position-range", f"{where}: position {top} is past the data "
                     f"file's {data.record_count} rows")
        if entry.sequence_number < data.sequence_number:
            self.add("table.dv.sequence", f"{where}: data sequence number "
                     f"{entry.sequence_number} is below the data file's {data.sequence_number}")
        if entry.spec_id != data.spec_id or entry.partition != data.partition:
            self.add("table.dv.partition", f"{where}: partition spec {entry.spec_id} "
                     f"{entry.partition} differs from the data file's spec {data.spec_id} "
                     f"{data.partition}")

    # one snapshot --------------------------------------------------------------------------

    def orphans(self, everywhere: bool) -> tuple[str, ...]:
        """Puffin files nobody references: under ``metadata/`` (where statistics files go);
        with ``everywhere`` (all snapshots read), anywhere under the table directory."""
        for entry in self.metadata.statistics:
            self.local(entry.path)
        root = self.table_dir if everywhere else join(self.table_dir, METADATA_DIR)
        found = [info.location for info in self.fileio.list_files(root)
                 if info.location.endswith(PUFFIN_SUFFIXES)
                 and _same(info.location) not in self.referenced]
        for path in sorted(found):
            self.add("table.orphan", f"{path}: Puffin file referenced by no "
                     f"{'snapshot' if everywhere else 'statistics entry'}", Severity.INFO)
        return tuple(sorted(found))


def _same(location: str) -> str:
    """A form of a location that is equal for two names of one file (symlinks resolved)."""
    return location if is_remote(location) else os.path.realpath(location)


def _ndv(properties: dict[str, str]) -> int | None:
    value = properties.get(NDV_PROPERTY)
    return None if value is None else decimal_int(value)
