"""Manifest lists and manifests (Avro), read block by block within a bound (format/avro.py).

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
from typing import Any

from puffin_cli.analysis.table.metadata import PathMapper, Snapshot, normalize_location
from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format.avro import AvroFile
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.format.typed import Obj, is_int
from puffin_cli.storage import FileIO, StorageError

CONTENT_DATA = 0
CONTENT_POSITION_DELETES = 1
CONTENT_EQUALITY_DELETES = 2
STATUS_DELETED = 2
# Concurrent manifest reads, and how many snapshots ahead of the caller they run.
READ_THREADS = 8
SNAPSHOTS_AHEAD = 4
# The most bytes one block of a manifest or manifest list may store or inflate to (a fixed
# limit: Iceberg writes blocks of well under a MiB).
MAX_AVRO_BLOCK = DEFAULT_MAX_BLOB_SIZE
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


@dataclass(frozen=True, slots=True)
class ContentFile:
    """A live data or delete file of a snapshot, with inherited numbers filled in.

    ``referenced_data_file``, ``content_offset`` and ``content_size`` are the v3 DV fields
    (143, 144, 145), ``None`` when the manifest does not have them. ``equality_ids`` (field
    135) are the field IDs an equality delete file matches rows by, empty for other files.
    ``split_offsets`` (field 132) as the manifest has them (``None`` when null). The column
    metrics (fields 109 value counts, 110 null value counts, 125 lower and 126 upper bounds in
    Iceberg's single-value serialization) are keyed by field ID, ``None`` when the manifest
    leaves the map null. Slotted: a snapshot of a million files holds a million of them.
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

    def __init__(self, mapper: PathMapper, fileio: FileIO) -> None:
        self.mapper = mapper
        self.fileio = fileio
        self.files_opened = 0
        self._count = threading.Lock()

    def _records(self, location: str, what: str) -> Iterator[Obj]:
        """The records of one Avro file (:meth:`_raw_records`), each an :class:`Obj` for
        typed reads."""
        for index, record in enumerate(self._raw_records(location, what)):
            yield Obj(record, f"{what} record {index}", path=location, code="table.manifest")

    def _raw_records(self, location: str, what: str) -> Iterator[Any]:
        """The records of one Avro file as fastavro decodes them; every block within
        :data:`MAX_AVRO_BLOCK` bytes, stored and inflated; anything the Avro decoder raises
        on a corrupt file (bad blocks of any codec) is a bad file."""
        local = self.mapper.resolve(location)
        opened = ExitStack()
        try:
            handle = opened.enter_context(self.fileio.open_stream(local, regular_only=True))
        except StorageError as exc:
            raise PuffinError(exc.message, code="table.manifest-missing",
                              path=location) from None
        with self._count:
            self.files_opened += 1
        with opened:
            def avro() -> Iterator[Any]:
                yield from AvroFile(handle, limit=MAX_AVRO_BLOCK, what=what,
                                    code="table.manifest").records()

            records = avro()
            while True:
                try:
                    record = next(records)
                except StopIteration:
                    return
                except PuffinError as exc:
                    raise exc.with_path(location) from None
                except OSError as exc:
                    raise PuffinError(f"cannot read: {exc.strerror}", code="table.manifest",
                                      path=location, kind=ErrorKind.IO) from None
                except (Exception, RecursionError) as exc:  # fastavro's and its codecs' errors
                    message = " ".join(str(exc).split())[:200] or type(exc).__name__
                    raise PuffinError(f"not a readable Avro file: {message}",
                                      code="table.manifest", path=location) from None
                yield record

    def manifest_files(self, snapshot: Snapshot) -> list[ManifestFile]:
        """The manifests of a snapshot: its manifest list, or the v1 inline ``manifests``."""
        if snapshot.manifest_list is None:
            return [ManifestFile(path, 0, 0, 0, snapshot.snapshot_id)
                    for path in snapshot.manifests]
        listing = normalize_location(snapshot.manifest_list)
        out = []
        for record in self._records(snapshot.manifest_list, "manifest list"):
            path = record.location("manifest_path")
            if normalize_location(path) == listing:
                raise PuffinError(f"{record.where}: the manifest list lists itself as a "
                                  "manifest", code="table.manifest",
                                  path=snapshot.manifest_list)
            out.append(ManifestFile(
                path=path,
                content=record.integer("content", 0, minimum=0),
                spec_id=record.integer("partition_spec_id", 0),
                sequence_number=record.integer("sequence_number", 0, minimum=0),
                added_snapshot_id=record.integer("added_snapshot_id", None),
            ))
        return out

    def live_files(self, manifest: ManifestFile) -> Iterator[ContentFile]:
        """Entries that are not DELETED, as :class:`ContentFile`. An entry whose fields all
        have their usual types is read directly (:func:`_plain_entry`); any other goes
        through :meth:`_checked_entry`, which names what is wrong. Entries of one partition
        share one partition dict."""
        partitions: dict[tuple[Any, ...], dict[str, Any]] = {}
        for index, record in enumerate(self._raw_records(manifest.path, "manifest")):
            entry = _plain_entry(record, manifest, partitions)
            if entry is _CHECK:
                entry = self._checked_entry(
                    Obj(record, f"manifest record {index}", path=manifest.path,
                        code="table.manifest"), manifest)
            if entry is not None:
                yield entry

    def _checked_entry(self, record: Obj, manifest: ManifestFile) -> ContentFile | None:
        """One entry read field by field, each checked (``None``: a DELETED entry)."""
        if record.integer("status", None) == STATUS_DELETED:
            return None
        data_file = record.child("data_file", f"{record.where} data_file")
        if not data_file.value:
            raise PuffinError(f"{record.where} has no 'data_file'", code="table.manifest",
                              path=manifest.path)
        sequence = record.integer("sequence_number", None, minimum=0)
        snapshot_id = record.integer("snapshot_id", None)
        return ContentFile(
            content=data_file.integer("content", 0, minimum=0),
            path=data_file.location("file_path"),
            file_format=data_file.text("file_format", ""),
            partition=dict(data_file.child("partition").value),
            spec_id=manifest.spec_id,
            record_count=data_file.integer("record_count", 0, minimum=0),
            file_size=data_file.integer("file_size_in_bytes", 0, minimum=0),
            sequence_number=manifest.sequence_number if sequence is None else sequence,
            snapshot_id=manifest.added_snapshot_id if snapshot_id is None else snapshot_id,
            referenced_data_file=data_file.location("referenced_data_file", None),
            content_offset=data_file.integer("content_offset", None, minimum=0),
            content_size=data_file.integer("content_size_in_bytes", None, minimum=0),
            manifest=manifest.path,
            equality_ids=data_file.ints("equality_ids"),
            split_offsets=data_file.ints("split_offsets")
            if data_file.has("split_offsets") else None,
            value_counts=_metric(data_file, "value_counts", is_int),
            null_value_counts=_metric(data_file, "null_value_counts", is_int),
            lower_bounds=_metric(data_file, "lower_bounds", _is_bytes),
            upper_bounds=_metric(data_file, "upper_bounds", _is_bytes),
        )

    def _all_live_files(self, manifest: ManifestFile) -> list[ContentFile]:
        return list(self.live_files(manifest))

    def snapshots_manifests(self, snapshots: Sequence[Snapshot], *, deletes_only: bool = False
                            ) -> Iterator[list[tuple[ManifestKey, list[ContentFile]]]]:
        """The manifests of each snapshot, in order, as (key, live entries): each manifest
        list and manifest read once (see the module docstring), so a manifest listed by many
        snapshots comes with the same key and the same entries list every time.
        ``deletes_only``: the delete manifests only."""
        with ThreadPoolExecutor(READ_THREADS, thread_name_prefix="manifests") as pool:
            lists = [[m for m in listed if not deletes_only or m.content != CONTENT_DATA]
                     for listed in pool.map(self.manifest_files, snapshots)]
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

# What _plain_entry returns for an entry it leaves to ManifestReader._checked_entry.
_CHECK: Any = object()
# File formats as manifests spell them, one string each (the first few spellings).
_FORMATS: dict[str, str] = {}
_MAX_FORMATS = 16
# Partition values whose equal values print the same (not floats: 0.0 == -0.0; not
# decimals: 1.0 == 1.00; not booleans: True == 1), so that equal partitions share a dict.
_SHAREABLE = (int, str, type(None))


def _count(value: Any) -> int | None:
    """A non-negative integer, or ``None`` for anything else."""
    return value if type(value) is int and value >= 0 else None


def _plain_location(value: Any) -> bool:
    """A location that needs no check: ASCII (no lone surrogate) without a NUL."""
    return type(value) is str and value.isascii() and "\0" not in value


def _plain_entry(record: Any, manifest: ManifestFile,
                 partitions: dict[tuple[Any, ...], dict[str, Any]]) -> Any:
    """The entry as :meth:`ManifestReader._checked_entry` reads it when every field has its
    usual type (``None`` for a DELETED entry; column metrics as :func:`_plain_metric` reads
    them), else :data:`_CHECK`."""
    if type(record) is not dict:
        return _CHECK
    status = record.get("status")
    if status == STATUS_DELETED and type(status) is int:
        return None
    data = record.get("data_file")
    if type(data) is not dict or not data or type(status) not in (int, type(None)):
        return _CHECK
    get: Callable[[str], Any] = data.get
    value_counts = _plain_metric(get("value_counts"), int)
    null_value_counts = _plain_metric(get("null_value_counts"), int)
    lower_bounds = _plain_metric(get("lower_bounds"), bytes)
    upper_bounds = _plain_metric(get("upper_bounds"), bytes)
    if _CHECK in (value_counts, null_value_counts, lower_bounds, upper_bounds):
        return _CHECK
    path, reference, file_format = get("file_path"), get("referenced_data_file"), \
        get("file_format")
    content = get("content")
    content = 0 if content is None else _count(content)
    record_count = get("record_count")
    record_count = 0 if record_count is None else _count(record_count)
    file_size = get("file_size_in_bytes")
    file_size = 0 if file_size is None else _count(file_size)
    offset, size = get("content_offset"), get("content_size_in_bytes")
    sequence, snapshot_id = record.get("sequence_number"), record.get("snapshot_id")
    partition, equality, splits = get("partition"), get("equality_ids"), get("split_offsets")
    if (content is None or record_count is None or file_size is None
            or not _plain_location(path)
            or not (reference is None or _plain_location(reference))
            or not (file_format is None or type(file_format) is str)
            or not (offset is None or _count(offset) is not None)
            or not (size is None or _count(size) is not None)
            or not (sequence is None or _count(sequence) is not None)
            or not (snapshot_id is None or type(snapshot_id) is int)
            or not (partition is None or type(partition) is dict)
            or not (equality is None or (type(equality) is list
                                         and all(type(i) is int for i in equality)))
            or not (splits is None or (type(splits) is list
                                       and all(type(i) is int for i in splits)))):
        return _CHECK
    if not partition:
        partition = {}
    elif all(type(v) in _SHAREABLE for v in partition.values()):
        partition = partitions.setdefault(tuple(partition.items()), partition)
    else:
        partition = dict(partition)
    if file_format is None:
        file_format = ""
    elif len(_FORMATS) < _MAX_FORMATS:
        file_format = _FORMATS.setdefault(file_format, file_format)
    return ContentFile(
        content, path, file_format, partition, manifest.spec_id, record_count, file_size,
        manifest.sequence_number if sequence is None else sequence,
        manifest.added_snapshot_id if snapshot_id is None else snapshot_id,
        reference, offset, size, manifest.path,
        () if equality is None else tuple(equality),
        None if splits is None else tuple(splits),
        value_counts, null_value_counts, lower_bounds, upper_bounds)


def _plain_metric(value: Any, kind: type) -> Any:
    """A metrics map as :func:`_metric` reads it when it is the usual Avro array of
    ``key``/``value`` records with an integer key and a value of ``kind``; else
    :data:`_CHECK`."""
    if value is None:
        return None
    if type(value) is not list:
        return _CHECK
    out: dict[int, Any] = {}
    for pair in value:
        if type(pair) is not dict:
            return _CHECK
        number, item = pair.get("key"), pair.get("value")
        if type(number) is not int or type(item) is not kind:
            return _CHECK
        out[number] = item
    return out


def _is_bytes(value: Any) -> bool:
    return isinstance(value, bytes)


def _metric(data_file: Obj, key: str, valid: Callable[[Any], bool]) -> dict[int, Any] | None:
    """A manifest metrics map (an Avro array of ``key``/``value`` records, or a map) by
    field ID; ``None`` when the manifest leaves it null."""
    value = data_file.value.get(key)
    if value is None:
        return None
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list) and all(isinstance(kv, dict) and "key" in kv and "value" in kv
                                         for kv in value):
        pairs = [(kv["key"], kv["value"]) for kv in value]
    else:
        raise data_file.fail(key, "a map of field IDs", value)
    out: dict[int, Any] = {}
    for field_id, item in pairs:
        number = decimal_int(field_id, signed=True) if isinstance(field_id, str) else field_id
        if not isinstance(number, int) or isinstance(number, bool) or not valid(item):
            raise data_file.fail(key, "a map of field IDs to values", item)
        out[number] = item
    return out


def manifest_key(manifest: ManifestFile) -> ManifestKey:
    """A manifest as entries inherit from it: the same file listed with the same numbers."""
    return manifest.path, manifest.sequence_number, manifest.added_snapshot_id
