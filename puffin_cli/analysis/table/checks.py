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
table.stats.blob-snapshot     error     a blob of the file was computed for another snapshot
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
                              warning / (error: an Iceberg DV without Puffin framing, or not
                              info      decodable; warning: unknown magic; info: Delta's or
                                        Paimon's container, decoded)
table.orphan                  info      a Puffin file under the table nobody references
table.partition-stats.*       error     a partition statistics file against the spec and
                                        its snapshot's manifests (partition_stats/checks.py)
============================  ========  ==================================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from puffin_cli.analysis import dv_containers
from puffin_cli.analysis.table.facts import (
    ABOUT_DV,
    ABOUT_FILE,
    DATA,
    DELETES,
    PARTITION_STATISTICS,
    PUFFIN,
    STATISTICS,
    Absent,
    Container,
    Detail,
    Facts,
    FileProblem,
    FileRef,
    Mismatch,
    NoBlob,
    NotLive,
    NotPuffin,
    Orphan,
    OtherSnapshot,
    OutsideFile,
    PartitionStatsIssue,
    TooLarge,
    UnknownFields,
    UnknownSnapshot,
    Unset,
    finding,
)
from puffin_cli.analysis.table.fields import FieldNames
from puffin_cli.analysis.table.live import dv_applies
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.metadata import (
    METADATA_DIR,
    PartitionStatisticsEntry,
    Snapshot,
    StatisticsEntry,
)
from puffin_cli.analysis.table.orphans import find_orphans
from puffin_cli.analysis.table.partitions import PartitionTuple, partition_tuple
from puffin_cli.analysis.table.report import DeletionVector, StatisticsChoice, StatisticsFile
from puffin_cli.analysis.table.statistics import ENGINES, StatisticsView
from puffin_cli.blobs.deletion_vector import deletion_vector_bitmap
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    DEFAULT_MAX_BLOB_SIZE,
    DV_BLOB_TYPE,
    MAGIC,
    REFERENCED_DATA_FILE_PROPERTY,
)
from puffin_cli.storage import FileInfo, StorageError, coalesce, join

# A blob of a Puffin file's footer with its index there.
IndexedBlob = tuple[int, BlobMetadata]
# A byte range of a file: (offset, length).
Range = tuple[int, int]


@dataclass
class _PuffinFile:
    """A Puffin (or bare DV) file opened once per table analysis."""

    exists: bool
    size: int = 0
    is_puffin: bool = False
    blobs: tuple[BlobMetadata, ...] | None = None
    footer_size: int | None = None
    problem: PuffinError | None = None
    decoded: dict[Range, dv_containers.DecodedDV] = field(default_factory=dict)
    _dv_index: tuple[dict[str | None, IndexedBlob], dict[int | None, IndexedBlob]] | None = None
    _dv_groups: dict[Range, list[Range]] | None = None

    def dv_index(self) -> tuple[dict[str | None, IndexedBlob], dict[int | None, IndexedBlob]]:
        """The file's first DV blob (with its index) by referenced data file and by offset,
        built once: a DV looks itself up in it instead of scanning every blob of the file
        (a Puffin file of N DVs checked in O(N), not O(N^2))."""
        if self._dv_index is None:
            by_ref: dict[str | None, IndexedBlob] = {}
            at_offset: dict[int | None, IndexedBlob] = {}
            for index, blob in enumerate(self.blobs or ()):
                if blob.type == DV_BLOB_TYPE:
                    by_ref.setdefault(blob.properties.get(REFERENCED_DATA_FILE_PROPERTY),
                                      (index, blob))
                    at_offset.setdefault(blob.offset, (index, blob))
            self._dv_index = by_ref, at_offset
        return self._dv_index

    def dv_group(self, key: Range, max_blob_size: int) -> list[Range]:
        """The ranges read with the range ``key`` (offset, length), in one request: the DV
        blobs of the footer that :func:`coalesce` groups with it (those a DV entry may be
        decoded from: inside the file, within ``max_blob_size``), or ``key`` alone when it is
        no such blob's range."""
        if self._dv_groups is None:
            ranges = sorted({(b.offset, b.length) for b in self.blobs or ()
                             if b.type == DV_BLOB_TYPE and b.offset >= 0
                             and 0 <= b.length <= max_blob_size
                             and b.offset + b.length <= self.size})
            self._dv_groups = {r: group for group in coalesce(ranges) for r in group}
        return self._dv_groups.get(key, [key])


class TableChecks:
    """The cross-checks of one table, each Puffin file opened (and validated) once; findings
    accumulate in :attr:`findings`. Which statistics files apply to a snapshot is
    :attr:`view`'s (no side effects); the checks are these."""

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
        self.view = StatisticsView(table)
        self.statistics_checked: set[int] = set()  # id() of the entries checked
        self._partitions: dict[tuple[Any, ...], PartitionTuple] = {}

    def add(self, code: str, facts: Facts, severity: Severity = Severity.ERROR,
            offset: int | None = None, blob_index: int | None = None) -> None:
        self.findings.append(finding(code, facts, severity, offset, blob_index))

    def facts_of_file(self, path: str, snapshot_id: int | None, detail: Detail,
                      content: str = STATISTICS) -> Facts:
        """Facts about a statistics (or partition statistics) file the metadata names."""
        return Facts(path, self.elsewhere(path), snapshot_id, ABOUT_FILE,
                     (FileRef(content, path),), detail)

    def facts_of_dv(self, snapshot_id: int, entry: ContentFile, detail: Detail) -> Facts:
        """Facts about a deletion vector: its delete file and its data file."""
        return Facts(entry.path, self.elsewhere(entry.path), snapshot_id, ABOUT_DV,
                     (FileRef(DELETES, entry.path, entry.content_offset, entry.content_size),
                      FileRef(DATA, entry.referenced_data_file)), detail)

    def partition(self, spec_id: int, values: Mapping[str, Any]) -> PartitionTuple:
        """:func:`partition_tuple` of a file, made once per distinct spec and values (with
        their types: 1, 1.0 and True are other values here) however many DVs share them."""
        key = (spec_id, tuple((name, type(value), value) for name, value in values.items()))
        try:
            found = self._partitions.get(key)
        except TypeError:  # a value that is no dictionary key (none Avro decodes to)
            return partition_tuple(self.metadata, spec_id, values)
        if found is None:
            found = self._partitions[key] = partition_tuple(self.metadata, spec_id, values)
        return found

    def elsewhere(self, location: str) -> str | None:
        """Where ``location`` is read when that is another location (else ``None``)."""
        local = self.mapper.resolve(location)
        return None if local == location else local

    def reference(self, location: str) -> str:
        """Where ``location`` is read, recorded as referenced (orphans are the rest)."""
        path = self.mapper.resolve(location)
        self.referenced.add(path)
        return path

    def _file(self, local: str) -> FileInfo | None:
        """What is at ``local`` when it is a file (a regular one, or a FIFO or device that
        reading will refuse); ``None`` when nothing or a directory is there."""
        found = self.fileio.stat(local)
        return None if found is None or found.kind == "dir" else found

    # Puffin files ------------------------------------------------------------------------

    def puffin(self, location: str) -> _PuffinFile:
        local = self.reference(location)
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

    def validate_file(self, location: str, snapshot_id: int | None, content: str) -> None:
        """Validate's findings about the Puffin file at ``location``, once per file (the
        first statistics entry or deletion vector that names it gives their facts)."""
        local = self.mapper.resolve(location)
        if not self.validate or local in self.validated or self._file(local) is None:
            return
        self.validated.add(local)
        from puffin_cli.analysis.validate import validate_file

        for found in validate_file(local, fileio=self.fileio,
                                   max_blob_size=self.max_blob_size).findings:
            self.add(found.code, Facts(location, self.elsewhere(location), snapshot_id,
                                       ABOUT_FILE, (FileRef(content, location),),
                                       FileProblem(found.message)),
                     found.severity, found.offset, found.blob_index)

    # statistics ----------------------------------------------------------------------------

    def statistics_files(self, snapshot_id: int) -> tuple[StatisticsFile, ...]:
        """The statistics files registered for the snapshot, checked."""
        return tuple(self.statistics_file(e) for e in self.view.registered(snapshot_id))

    def statistics_file(self, entry: StatisticsEntry) -> StatisticsFile:
        """The entry as the view describes it, checked (once per table analysis)."""
        if id(entry) not in self.statistics_checked:
            self.statistics_checked.add(id(entry))
            self.check_statistics(entry, self.table.field_names(entry.snapshot_id))
        return self.view.describe(entry)

    def statistics_used(self, snapshot: Snapshot) -> StatisticsChoice:
        """The statistics files engines use for ``snapshot`` (the view's choice), each
        checked as the snapshot's own are: an ancestor's file Trino would use is as much a
        part of the snapshot's plans."""
        for engine in ENGINES:
            entry = self.view.used(snapshot, engine)
            if entry is not None:
                self.statistics_file(entry)
        return self.view.choice(snapshot)

    def check_statistics(self, entry: StatisticsEntry, names: FieldNames) -> None:
        def facts(detail: Detail) -> Facts:
            return self.facts_of_file(entry.path, entry.snapshot_id, detail)

        if self.metadata.snapshot(entry.snapshot_id) is None:
            self.add("table.stats.snapshot", facts(UnknownSnapshot()))
        for index, blob in enumerate(entry.blobs):
            unknown = tuple(f for f in blob.fields if f not in names)
            if unknown:
                self.add("table.stats.field", facts(UnknownFields(index, blob.type, unknown,
                                                                  names.schema_id)),
                         blob_index=index)
        found = self.puffin(entry.path)
        if not found.exists:
            self.add("table.stats.missing", facts(Absent()))
            return
        if found.size != entry.file_size:
            self.add("table.stats.size", facts(Mismatch("file-size-in-bytes", "file",
                                                         entry.file_size, found.size)))
        self.validate_file(entry.path, entry.snapshot_id, STATISTICS)
        if found.blobs is None:
            if found.problem is None:
                self.add("table.stats.blob-metadata", facts(NotPuffin()), offset=0)
            elif not self.validate:
                # PuffinError's own text: it names the file (where it was read) itself
                problem = found.problem
                self.findings.append(Finding(
                    problem.code, Severity.ERROR, str(problem), problem.offset,
                    facts=facts(FileProblem(problem.message))))
            return
        if found.footer_size != entry.footer_size:
            self.add("table.stats.footer-size", facts(Mismatch(
                "file-footer-size-in-bytes", "footer", entry.footer_size, found.footer_size)))
        self.compare_blobs(entry, found.blobs)
        self.check_blob_snapshots(entry, found.blobs)

    def compare_blobs(self, entry: StatisticsEntry, blobs: tuple[BlobMetadata, ...]) -> None:
        def facts(detail: Detail) -> Facts:
            return self.facts_of_file(entry.path, entry.snapshot_id, detail)

        if len(entry.blobs) != len(blobs):
            self.add("table.stats.blob-metadata", facts(Mismatch(
                "blob-count", "footer", len(entry.blobs), len(blobs))))
        for index, (listed, actual) in enumerate(zip(entry.blobs, blobs, strict=False)):
            pairs = (("type", listed.type, actual.type),
                     ("snapshot-id", listed.snapshot_id, actual.snapshot_id),
                     ("sequence-number", listed.sequence_number, actual.sequence_number),
                     ("fields", list(listed.fields), list(actual.fields)),
                     ("properties", listed.properties, actual.properties))
            for key, said, has in pairs:
                if said != has:
                    self.add("table.stats.blob-metadata",
                             facts(Mismatch(key, "footer", said, has, blob_index=index)),
                             offset=actual.offset, blob_index=index)

    def check_blob_snapshots(self, entry: StatisticsEntry,
                             blobs: tuple[BlobMetadata, ...]) -> None:
        """Every blob of the file describes the entry's snapshot: the table spec registers a
        statistics file for "the snapshot the statistics file is associated with" and each
        blob's ``snapshot-id`` is "the snapshot the blob was computed from" (Spark plans with
        the ``ndv`` of the entry's blob-metadata as if it were that snapshot's). An entry for
        a snapshot the table does not have is ``table.stats.snapshot`` already."""
        if self.metadata.snapshot(entry.snapshot_id) is None:
            return
        other = [(i, b) for i, b in enumerate(blobs) if b.snapshot_id != entry.snapshot_id]
        if other:
            first = other[0]
            self.add("table.stats.blob-snapshot", self.facts_of_file(
                entry.path, entry.snapshot_id,
                OtherSnapshot(tuple(i for i, _b in other),
                              tuple(b.snapshot_id for _i, b in other))),
                offset=first[1].offset, blob_index=first[0])

    def partition_statistics(self, snapshot_id: int) -> tuple[PartitionStatisticsEntry, ...]:
        out = []
        for entry in self.metadata.partition_statistics:
            if entry.snapshot_id != snapshot_id:
                continue
            info = self._file(self.reference(entry.path))
            if info is None:
                self.add("table.stats.missing", self.facts_of_file(
                    entry.path, snapshot_id, Absent(), PARTITION_STATISTICS))
            elif info.size != entry.file_size:
                self.add("table.stats.size", self.facts_of_file(
                    entry.path, snapshot_id,
                    Mismatch("file-size-in-bytes", "file", entry.file_size, info.size),
                    PARTITION_STATISTICS))
            if info is not None:
                self.check_partition_statistics(entry)
            out.append(entry)
        return tuple(out)

    def check_partition_statistics(self, entry: PartitionStatisticsEntry) -> None:
        """The file against the spec and its snapshot's manifests (analysis/partition_stats)."""
        from puffin_cli.analysis.partition_stats.checks import check_file

        def add(code: str, detail: PartitionStatsIssue, severity: Severity) -> None:
            self.add(code, self.facts_of_file(entry.path, entry.snapshot_id, detail,
                                              PARTITION_STATISTICS), severity)
        check_file(self.table, entry, add)

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
        def facts(detail: Detail) -> Facts:
            return self.facts_of_dv(snapshot_id, entry, detail)

        found = self.puffin(entry.path)
        decoded: dv_containers.DecodedDV | None = None
        if not found.exists:
            self.add("table.dv.missing", facts(Absent()))
        else:
            if found.is_puffin:
                self.validate_file(entry.path, snapshot_id, DELETES)
            self.check_blob(facts, entry, found)
            decoded = self.decode(facts, entry, found)
        self.check_data_file(facts, entry, decoded, data_files)
        return DeletionVector(
            data_file=entry.referenced_data_file, path=entry.path, offset=entry.content_offset,
            length=entry.content_size, record_count=entry.record_count,
            cardinality=None if decoded is None else decoded.cardinality,
            container="missing" if decoded is None else decoded.container,
            spec_id=entry.spec_id,
            partition=self.partition(entry.spec_id, entry.partition),
            sequence_number=entry.sequence_number)

    def check_blob(self, facts: Callable[[Detail], Facts], entry: ContentFile,
                   found: _PuffinFile) -> None:
        if found.blobs is None:
            return
        by_ref, at_offset = found.dv_index()
        ref = entry.referenced_data_file
        if ref in by_ref:
            index, blob = by_ref[ref]
            if blob.offset != entry.content_offset:
                self.add("table.dv.offset", facts(Mismatch(
                    "content_offset", "footer", entry.content_offset, blob.offset)),
                    offset=blob.offset, blob_index=index)
            if blob.length != entry.content_size:
                self.add("table.dv.length", facts(Mismatch(
                    "content_size_in_bytes", "footer", entry.content_size, blob.length)),
                    offset=blob.offset, blob_index=index)
        elif entry.content_offset in at_offset:
            index, blob = at_offset[entry.content_offset]
            said = blob.properties.get(REFERENCED_DATA_FILE_PROPERTY)
            self.add("table.dv.referenced-file", facts(Mismatch(
                "referenced_data_file", "blob", ref, said)), offset=blob.offset,
                blob_index=index)
        else:
            self.add("table.dv.offset", facts(NoBlob()))

    def decode(self, facts: Callable[[Detail], Facts], entry: ContentFile,
               found: _PuffinFile) -> dv_containers.DecodedDV | None:
        offset, length = entry.content_offset, entry.content_size
        if offset is None or length is None:
            self.add("table.dv.offset", facts(Unset("content_offset / content_size_in_bytes")))
            return None
        if offset < 0 or length < 0 or offset + length > found.size:
            self.add("table.dv.length", facts(OutsideFile(found.size)), offset=offset)
            return None
        if length > self.max_blob_size:
            self.add("blob.too-large", facts(TooLarge(self.max_blob_size)), offset=offset)
            return None
        key = (offset, length)
        decoded = found.decoded.get(key)
        if decoded is None:
            decoded = self._decode_range(entry.path, found, key)
        if decoded.problem is not None:
            severity = (Severity.WARNING if decoded.container == dv_containers.UNKNOWN
                        else Severity.ERROR)
            self.add("table.dv.container", facts(Container(decoded.container,
                                                           decoded.problem)), severity, offset)
        elif decoded.container != dv_containers.PUFFIN:
            # Iceberg stores DVs as blobs of Puffin files: a bare Iceberg DV breaks the spec
            # (Java's Puffin reader and pyiceberg refuse the file); Delta's and Paimon's own
            # containers are recognised as theirs
            severity = (Severity.ERROR if decoded.container == dv_containers.BARE_DV
                        else Severity.INFO)
            self.add("table.dv.container", facts(Container(decoded.container, None)),
                     severity, offset)
        if decoded.cardinality is not None and decoded.cardinality != entry.record_count:
            self.add("table.dv.record-count", facts(Mismatch(
                "record_count", "bitmap", entry.record_count, decoded.cardinality)),
                offset=offset)
        return decoded

    def _decode_range(self, location: str, found: _PuffinFile, key: Range
                      ) -> dv_containers.DecodedDV:
        """The range ``key`` of the file decoded, and with it (kept for the DV entries that
        name them) the footer's DV blobs read in the same request: a Puffin file's DVs cost a
        few requests, not one each. A neighbour that cannot be read is left to its own
        entry."""
        with self.fileio.new_input(self.mapper.resolve(location), length=found.size) as source:
            group = found.dv_group(key, self.max_blob_size)
            source.prefetch(group)
            for offset, length in group:
                if (offset, length) in found.decoded:
                    continue
                try:
                    data = source.read(offset, length)
                except StorageError:
                    if (offset, length) == key:
                        raise
                    continue
                found.decoded[offset, length] = dv_containers.decode_range(
                    data, in_puffin=found.blobs is not None, base_offset=offset)
        return found.decoded[key]

    def check_data_file(self, facts: Callable[[Detail], Facts], entry: ContentFile,
                        decoded: dv_containers.DecodedDV | None,
                        data_files: dict[str, ContentFile]) -> None:
        ref = entry.referenced_data_file
        if ref is None:
            self.add("table.dv.referenced-file", facts(Unset("referenced_data_file")))
            return
        data = data_files.get(ref)
        if data is None:
            self.add("table.dv.not-live", facts(NotLive()))
            return
        if entry.record_count > data.record_count:
            self.add("table.dv.record-count", facts(Mismatch(
                "record_count", "data-file", entry.record_count, data.record_count)))
        top = None if decoded is None else decoded.max_position
        if top is not None and top >= data.record_count:
            self.add("table.dv.position-range", facts(Mismatch(
                "position", "data-file", data.record_count, top)))
        if not dv_applies(entry, data):
            self.add("table.dv.sequence", facts(Mismatch(
                "sequence_number", "data-file", entry.sequence_number, data.sequence_number)))
        if entry.spec_id != data.spec_id or entry.partition != data.partition:
            self.add("table.dv.partition", facts(Mismatch(
                "partition", "data-file",
                (entry.spec_id, partition_tuple(self.metadata, entry.spec_id, entry.partition)),
                (data.spec_id, partition_tuple(self.metadata, data.spec_id, data.partition)))))

    def deleted_rows(self, dvs: tuple[DeletionVector, ...]) -> int:
        """The rows the live DVs of one data file delete: one DV's ``record_count``; for
        several (``table.dv.duplicate``), the size of the union of their positions, as
        pyiceberg applies them (Iceberg Java refuses to plan the scan), with the
        ``record_count`` of any that cannot be decoded added."""
        if len(dvs) == 1:
            return dvs[0].record_count
        from pyroaring import BitMap64

        union, unread = BitMap64(), 0
        for dv in dvs:
            positions = self.positions(dv)
            if positions is None:
                unread += dv.record_count
            else:
                union |= positions
        return len(union) + unread

    def positions(self, dv: DeletionVector) -> Any:
        """The positions (``pyroaring.BitMap64``) of an Iceberg DV (in a Puffin file or bare)
        that decodes within the blob size limit, else ``None``."""
        if dv.container not in (dv_containers.PUFFIN, dv_containers.BARE_DV) or \
                dv.offset is None or dv.length is None or dv.length > self.max_blob_size:
            return None
        with self.fileio.new_input(self.mapper.resolve(dv.path)) as source:
            data = source.read(dv.offset, dv.length)
        try:
            return deletion_vector_bitmap(data, dv.offset)
        except PuffinError:
            return None

    # one snapshot --------------------------------------------------------------------------

    def orphans(self, everywhere: bool) -> tuple[str, ...]:
        """Puffin files nobody references: under ``metadata/`` (where statistics files go);
        with ``everywhere`` (all snapshots read), anywhere under the table directory."""
        for entry in self.metadata.statistics:
            self.reference(entry.path)
        root = self.table_dir if everywhere else join(self.table_dir, METADATA_DIR)
        found = find_orphans(self.fileio, root, self.referenced)
        scope = "snapshot" if everywhere else "statistics entry"
        for info in found:
            named = self.mapper.location(info.location)
            self.add("table.orphan", Facts(
                named, None if named == info.location else info.location, None, ABOUT_FILE,
                (FileRef(PUFFIN, named),), Orphan(scope, info.size, info.modified)),
                Severity.INFO)
        return tuple(info.location for info in found)

