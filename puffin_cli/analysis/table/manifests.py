"""Manifest lists and manifests (Avro), read with fastavro.

Only what the table checks need is kept. Sequence numbers and snapshot IDs that an entry leaves
null are inherited from the manifest list, as the spec says (0 for v1 manifests). A
:class:`ManifestReader` counts every Avro file it opens, so a caller (and the benchmark) can
show that a snapshot costs exactly its manifest list and its own manifests, and that many
snapshots (:meth:`ManifestReader.snapshots_files`) cost each manifest once however many of
them list it: manifests are immutable, so one read serves every snapshot that lists it. Those
reads run concurrently, a few snapshots ahead of the caller, and a manifest is dropped once no
later snapshot lists it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, TypeVar

from puffin_cli.analysis.table.metadata import PathMapper, Snapshot
from puffin_cli.format.errors import PuffinError
from puffin_cli.storage import FileIO, StorageError, default_io

CONTENT_DATA = 0
CONTENT_POSITION_DELETES = 1
CONTENT_EQUALITY_DELETES = 2
STATUS_DELETED = 2
# Concurrent manifest reads, and how many snapshots ahead of the caller they run.
READ_THREADS = 8
SNAPSHOTS_AHEAD = 4
_V = TypeVar("_V")
# A manifest as its entries inherit from it: path, sequence number, adding snapshot.
ManifestKey = tuple[str, int, int | None]


@dataclass(frozen=True)
class ManifestFile:
    """One entry of a manifest list."""

    path: str
    content: int
    spec_id: int
    sequence_number: int
    added_snapshot_id: int | None


@dataclass(frozen=True)
class ContentFile:
    """A live data or delete file of a snapshot, with inherited numbers filled in.

    ``referenced_data_file``, ``content_offset`` and ``content_size`` are the v3 DV fields
    (143, 144, 145), ``None`` when the manifest does not have them. ``equality_ids`` (field
    135) are the field IDs an equality delete file matches rows by, empty for other files.
    ``split_offsets`` (field 132) as the manifest has them (``None`` when null). The column
    metrics (fields 109 value counts, 110 null value counts, 125 lower and 126 upper bounds in
    Iceberg's single-value serialization) are keyed by field ID, ``None`` when the manifest
    leaves the map null.
    """

    content: int
    path: str
    file_format: str
    partition: dict[str, Any]
    spec_id: int
    record_count: int
    file_size: int
    sequence_number: int
    snapshot_id: int | None
    referenced_data_file: str | None
    content_offset: int | None
    content_size: int | None
    manifest: str
    equality_ids: tuple[int, ...] = ()
    split_offsets: tuple[int, ...] | None = None
    value_counts: dict[int, int] | None = None
    null_value_counts: dict[int, int] | None = None
    lower_bounds: dict[int, bytes] | None = None
    upper_bounds: dict[int, bytes] | None = None

    @property
    def is_dv(self) -> bool:
        return self.content == CONTENT_POSITION_DELETES and self.file_format.lower() == "puffin"


class ManifestReader:
    """Reads Avro metadata files through a :class:`PathMapper`; counts the files opened."""

    def __init__(self, mapper: PathMapper, fileio: FileIO | None = None) -> None:
        self.mapper = mapper
        self.fileio = fileio or default_io()
        self.files_opened = 0
        self._count = threading.Lock()

    def _records(self, location: str) -> Iterator[dict[str, Any]]:
        import fastavro

        local = self.mapper.local(location)
        opened = ExitStack()
        try:
            handle = opened.enter_context(self.fileio.open_stream(local, regular_only=True))
        except StorageError as exc:
            raise PuffinError(exc.message, code="table.manifest-missing",
                              path=location) from None
        with self._count:
            self.files_opened += 1
        with opened:
            try:
                for record in fastavro.reader(handle):
                    assert isinstance(record, dict)
                    yield record
            except (ValueError, EOFError, StopIteration, TypeError, KeyError) as exc:
                raise PuffinError(f"not a readable Avro file: {exc}", code="table.manifest",
                                  path=location) from None

    def manifest_files(self, snapshot: Snapshot) -> list[ManifestFile]:
        """The manifests of a snapshot: its manifest list, or the v1 inline ``manifests``."""
        if snapshot.manifest_list is None:
            return [ManifestFile(path, 0, 0, 0, snapshot.snapshot_id)
                    for path in snapshot.manifests]
        out = []
        for record in self._records(snapshot.manifest_list):
            out.append(ManifestFile(
                path=record["manifest_path"],
                content=int(record.get("content") or 0),
                spec_id=int(record.get("partition_spec_id") or 0),
                sequence_number=int(record.get("sequence_number") or 0),
                added_snapshot_id=record.get("added_snapshot_id"),
            ))
        return out

    def live_files(self, manifest: ManifestFile) -> Iterator[ContentFile]:
        """Entries that are not DELETED, as :class:`ContentFile`."""
        for record in self._records(manifest.path):
            if record.get("status") == STATUS_DELETED:
                continue
            data_file = record["data_file"]
            sequence = record.get("sequence_number")
            snapshot_id = record.get("snapshot_id")
            yield ContentFile(
                content=int(data_file.get("content") or 0),
                path=data_file["file_path"],
                file_format=str(data_file.get("file_format", "")),
                partition=dict(data_file.get("partition") or {}),
                spec_id=manifest.spec_id,
                record_count=int(data_file.get("record_count") or 0),
                file_size=int(data_file.get("file_size_in_bytes") or 0),
                sequence_number=manifest.sequence_number if sequence is None else int(sequence),
                snapshot_id=manifest.added_snapshot_id if snapshot_id is None else snapshot_id,
                referenced_data_file=data_file.get("referenced_data_file"),
                content_offset=data_file.get("content_offset"),
                content_size=data_file.get("content_size_in_bytes"),
                manifest=manifest.path,
                equality_ids=tuple(int(i) for i in data_file.get("equality_ids") or ()),
                split_offsets=_offsets(data_file.get("split_offsets")),
                value_counts=_metric(data_file.get("value_counts"), int),
                null_value_counts=_metric(data_file.get("null_value_counts"), int),
                lower_bounds=_metric(data_file.get("lower_bounds"), bytes),
                upper_bounds=_metric(data_file.get("upper_bounds"), bytes),
            )

    def _all_live_files(self, manifest: ManifestFile) -> list[ContentFile]:
        return list(self.live_files(manifest))

    def snapshots_manifests(self, snapshots: Sequence[Snapshot]
                            ) -> Iterator[list[tuple[ManifestKey, list[ContentFile]]]]:
        """The manifests of each snapshot, in order, as (key, live entries): each manifest
        list and manifest read once (see the module docstring), so a manifest listed by many
        snapshots comes with the same key and the same entries list every time."""
        with ThreadPoolExecutor(READ_THREADS, thread_name_prefix="manifests") as pool:
            lists = list(pool.map(self.manifest_files, snapshots))
            uses = Counter(manifest_key(m) for listed in lists for m in listed)
            reads: dict[ManifestKey, Future[list[ContentFile]]] = {}

            def read_ahead(first: int) -> None:
                for listed in lists[first:first + SNAPSHOTS_AHEAD]:
                    for m in listed:
                        if manifest_key(m) not in reads and uses[manifest_key(m)] > 0:
                            reads[manifest_key(m)] = pool.submit(self._all_live_files, m)

            try:
                for index, listed in enumerate(lists):
                    read_ahead(index)
                    read = []
                    for manifest in listed:
                        key = manifest_key(manifest)
                        read.append((key, reads[key].result()))
                        uses[key] -= 1
                        if uses[key] == 0:
                            del reads[key]
                    yield read
            finally:
                for future in reads.values():
                    future.cancel()

def _offsets(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(v) for v in value)


def _metric(value: Any, convert: Callable[[Any], _V]) -> dict[int, _V] | None:
    """A manifest metrics map (an Avro array of ``key``/``value`` records, or a map) by
    field ID."""
    if value is None:
        return None
    pairs = value.items() if isinstance(value, dict) else ((kv["key"], kv["value"])
                                                          for kv in value)
    return {int(k): convert(v) for k, v in pairs}


@dataclass(frozen=True)
class SnapshotFiles:
    """The live files of one snapshot, split by content."""

    data_files: dict[str, ContentFile]
    delete_files: tuple[ContentFile, ...]


def snapshot_files(reader: ManifestReader, snapshot: Snapshot) -> SnapshotFiles:
    """Read a snapshot's manifest list and every manifest it lists, nothing else."""
    data: dict[str, ContentFile] = {}
    deletes: list[ContentFile] = []
    for _key, entries in next(reader.snapshots_manifests([snapshot])):
        for entry in entries:
            if entry.content == CONTENT_DATA:
                data[entry.path] = entry
            else:
                deletes.append(entry)
    return SnapshotFiles(data, tuple(deletes))

def manifest_key(manifest: ManifestFile) -> ManifestKey:
    """A manifest as entries inherit from it: the same file listed with the same numbers."""
    return manifest.path, manifest.sequence_number, manifest.added_snapshot_id
