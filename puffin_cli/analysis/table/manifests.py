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

import io
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.table.metadata import PathMapper, Snapshot, normalize_location
from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format.avro import AvroFile, has_plain_fixed
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.format.typed import Obj, is_int
from puffin_cli.storage import FileIO, StorageError

CONTENT_DATA = 0
CONTENT_POSITION_DELETES = 1
CONTENT_EQUALITY_DELETES = 2
STATUS_EXISTING = 0
STATUS_ADDED = 1
STATUS_DELETED = 2
# Concurrent manifest reads, and how many snapshots ahead of the caller they run.
READ_THREADS = 8
SNAPSHOTS_AHEAD = 4
# The most bytes one block of a manifest or manifest list may store or inflate to (a fixed
# limit: Iceberg writes blocks of well under a MiB).
MAX_AVRO_BLOCK = DEFAULT_MAX_BLOB_SIZE
# The inflated bytes of a manifest decoded at once (whole blocks: Iceberg writes blocks of a
# few hundred entries), and the fewest records for which the columnar decode is worth its
# import (a small table's manifests are read record by record).
BATCH_BYTES = 8 << 20
COLUMNAR_RECORDS = 2_000
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


class ContentFile:
    """A live data or delete file of a snapshot, with inherited numbers filled in.

    ``referenced_data_file``, ``content_offset`` and ``content_size`` are the v3 DV fields
    (143, 144, 145), ``None`` when the manifest does not have them. ``equality_ids`` (field
    135) are the field IDs an equality delete file matches rows by, empty for other files.
    ``split_offsets`` (field 132) as the manifest has them (``None`` when null). The column
    metrics (fields 109 value counts, 110 null value counts, 125 lower and 126 upper bounds in
    Iceberg's single-value serialization) are keyed by field ID, ``None`` when the manifest
    leaves the map null.

    Immutable, compared and hashed by all those fields. A snapshot of a million files holds a
    million of them, so an entry keeps seven slots of its own: what entries of one manifest
    share (file format, spec ID, manifest) is one interned tuple, and the fields a plain data
    file leaves unset (the DV fields, equality IDs, split offsets, metrics) are one tuple,
    ``None`` when all are unset.
    """

    __slots__ = (
        "_rare",
        "_shared",
        "content",
        "file_size",
        "partition",
        "path",
        "record_count",
        "sequence_number",
        "snapshot_id",
    )
    content: int
    path: str
    partition: dict[str, Any]
    record_count: int
    file_size: int
    sequence_number: int
    snapshot_id: int | None
    _shared: tuple[str, int, str]
    _rare: tuple[Any, ...] | None

    def __init__(self, content: int, path: str, file_format: str, partition: dict[str, Any],
                 spec_id: int, record_count: int, file_size: int, sequence_number: int,
                 snapshot_id: int | None, referenced_data_file: str | None,
                 content_offset: int | None, content_size: int | None, manifest: str,
                 equality_ids: tuple[int, ...] = (),
                 split_offsets: tuple[int, ...] | None = None,
                 value_counts: dict[int, int] | None = None,
                 null_value_counts: dict[int, int] | None = None,
                 lower_bounds: dict[int, bytes] | None = None,
                 upper_bounds: dict[int, bytes] | None = None) -> None:
        rare = (referenced_data_file, content_offset, content_size, equality_ids,
                split_offsets, value_counts, null_value_counts, lower_bounds, upper_bounds)
        _fill(self, content, path, partition, record_count, file_size, sequence_number,
              snapshot_id, _shared(file_format, spec_id, manifest),
              None if rare == _UNSET else rare)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ContentFile is immutable: cannot set {name!r}")

    @property
    def file_format(self) -> str:
        return self._shared[0]

    @property
    def spec_id(self) -> int:
        return self._shared[1]

    @property
    def manifest(self) -> str:
        return self._shared[2]

    @property
    def referenced_data_file(self) -> str | None:
        return self._rare_field(0)  # type: ignore[no-any-return]

    @property
    def content_offset(self) -> int | None:
        return self._rare_field(1)  # type: ignore[no-any-return]

    @property
    def content_size(self) -> int | None:
        return self._rare_field(2)  # type: ignore[no-any-return]

    @property
    def equality_ids(self) -> tuple[int, ...]:
        return self._rare_field(3)  # type: ignore[no-any-return]

    @property
    def split_offsets(self) -> tuple[int, ...] | None:
        return self._rare_field(4)  # type: ignore[no-any-return]

    @property
    def value_counts(self) -> dict[int, int] | None:
        return self._rare_field(5)  # type: ignore[no-any-return]

    @property
    def null_value_counts(self) -> dict[int, int] | None:
        return self._rare_field(6)  # type: ignore[no-any-return]

    @property
    def lower_bounds(self) -> dict[int, bytes] | None:
        return self._rare_field(7)  # type: ignore[no-any-return]

    @property
    def upper_bounds(self) -> dict[int, bytes] | None:
        return self._rare_field(8)  # type: ignore[no-any-return]

    def _rare_field(self, index: int) -> Any:
        return (_UNSET if self._rare is None else self._rare)[index]

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in CONTENT_FILE_FIELDS)

    def replace(self, **changes: Any) -> ContentFile:
        """A copy with ``changes`` (fields named as the constructor names them), as
        ``dataclasses.replace`` makes one of a dataclass."""
        fields = dict(zip(CONTENT_FILE_FIELDS, self._fields(), strict=True))
        fields.update(changes)
        return ContentFile(**fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ContentFile:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(tuple(v if not isinstance(v, dict) else tuple(v.items())
                          for v in self._fields()))

    def __repr__(self) -> str:
        return "ContentFile(" + ", ".join(f"{name}={getattr(self, name)!r}"
                                          for name in CONTENT_FILE_FIELDS) + ")"

    @property
    def is_dv(self) -> bool:
        return self.content == CONTENT_POSITION_DELETES and self.file_format.lower() == "puffin"


# ContentFile's fields, in its constructor's order.
CONTENT_FILE_FIELDS = (
    "content", "path", "file_format", "partition", "spec_id", "record_count", "file_size",
    "sequence_number", "snapshot_id", "referenced_data_file", "content_offset", "content_size",
    "manifest", "equality_ids", "split_offsets", "value_counts", "null_value_counts",
    "lower_bounds", "upper_bounds")
# The rarely set fields of a ContentFile when all are unset, and the (file format, spec ID,
# manifest) tuples its entries share.
_UNSET: tuple[Any, ...] = (None, None, None, (), None, None, None, None, None)
_SHARED: dict[tuple[str, int, str], tuple[str, int, str]] = {}
_new = object.__new__
# The slots' own setters, which the immutable ContentFile's __setattr__ does not stand in front
# of: an entry is made with nine of these calls (~2 us), not nine object.__setattr__ calls
# over a loop of pairs (~6 us); a manifest of a million entries makes a million.
_SET = tuple(ContentFile.__dict__[name].__set__ for name in (
    "content", "path", "partition", "record_count", "file_size", "sequence_number",
    "snapshot_id", "_shared", "_rare"))


def _shared(file_format: str, spec_id: int, manifest: str) -> tuple[str, int, str]:
    """The (file format, spec ID, manifest) tuple that entries with these share."""
    shared = (file_format, spec_id, manifest)
    return _SHARED.setdefault(shared, shared)


def _fill(entry: ContentFile, content: int, path: str, partition: dict[str, Any],
          record_count: int, file_size: int, sequence_number: int, snapshot_id: int | None,
          shared: tuple[str, int, str], rare: tuple[Any, ...] | None) -> None:
    (set_content, set_path, set_partition, set_records, set_size, set_sequence, set_snapshot,
     set_shared, set_rare) = _SET
    set_content(entry, content)
    set_path(entry, path)
    set_partition(entry, partition)
    set_records(entry, record_count)
    set_size(entry, file_size)
    set_sequence(entry, sequence_number)
    set_snapshot(entry, snapshot_id)
    set_shared(entry, shared)
    set_rare(entry, rare)


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
        """The records of one Avro file as fastavro decodes them (:meth:`_containers`)."""
        for _first, _count, container, _schema in self._containers(location, what):
            yield from _decoded(location, container)

    def _containers(self, location: str, what: str
                    ) -> Iterator[tuple[int, int, bytes, Any]]:
        """One Avro file as uncompressed containers of whole blocks (``AvroFile.containers``),
        each with the index of its first record, its record count and the file's schema;
        every block within :data:`MAX_AVRO_BLOCK` bytes, stored and inflated."""
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
            def avro() -> Iterator[tuple[int, bytes, Any]]:
                read = AvroFile(handle, limit=MAX_AVRO_BLOCK, what=what, code="table.manifest")
                for count, container in read.containers(BATCH_BYTES):
                    yield count, container, read.schema

            first = 0
            for count, container, schema in _guarded(location, avro()):
                yield first, count, container, schema
                first += count

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
        """Entries that are not DELETED, as :class:`ContentFile`. A container of at least
        :data:`COLUMNAR_RECORDS` records whose schema and values are all as Iceberg writes
        them is decoded column by column (:func:`_columnar_entries`); otherwise each entry
        whose fields have their usual types is read directly (:func:`_plain_entry`) and any
        other goes through :meth:`_checked_entry`, which names what is wrong. Entries of one
        partition share one partition dict."""
        partitions: dict[tuple[Any, ...], dict[str, Any]] = {}
        shape: Any = _CHECK  # the schema's _Shape, worked out at the first big container
        for first, count, container, schema in self._containers(manifest.path, "manifest"):
            if count >= COLUMNAR_RECORDS:
                if shape is _CHECK:
                    shape = _shape(schema)
                entries = None if shape is None else \
                    _columnar_entries(container, shape, manifest, partitions)
                if entries is not None:
                    yield from entries
                    continue
            for index, record in enumerate(_decoded(manifest.path, container), first):
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

    def entries(self, manifest: ManifestFile) -> Iterator[tuple[int, ContentFile]]:
        """Every entry, DELETED ones too, as (status: 0 EXISTING, 1 ADDED, 2 DELETED; its
        file): partition statistics count DELETED entries, as Iceberg Java does. Read as
        :meth:`live_files` reads a live entry (a DELETED one as if it were EXISTING)."""
        partitions: dict[tuple[Any, ...], dict[str, Any]] = {}
        for index, record in enumerate(self._raw_records(manifest.path, "manifest")):
            status = record.get("status") if type(record) is dict else None
            deleted = status == STATUS_DELETED and type(status) is int
            if deleted:
                record = {**record, "status": STATUS_EXISTING}
            entry = _plain_entry(record, manifest, partitions)
            if entry is _CHECK:
                entry = self._checked_entry(
                    Obj(record, f"manifest record {index}", path=manifest.path,
                        code="table.manifest"), manifest)
            assert entry is not None  # only a DELETED entry reads as None
            yield (STATUS_DELETED if deleted else STATUS_ADDED if status is None
                   else status), entry

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
    return ContentFile(
        content, path, _file_format(file_format), partition, manifest.spec_id, record_count,
        file_size,
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


def _guarded(location: str, items: Iterator[Any]) -> Iterator[Any]:
    """``items`` with what reading an Avro file raises as one :class:`PuffinError` naming
    ``location``: anything the decoder raises on a corrupt file (bad blocks of any codec) is
    a bad file."""
    while True:
        try:
            item = next(items)
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
        yield item


def _decoded(location: str, container: bytes) -> Iterator[Any]:
    """The records of an uncompressed container, as ``AvroFile.records`` decodes them
    (``fixed`` values as Iceberg Java writes them too)."""
    return _guarded(location, AvroFile(io.BytesIO(container), limit=len(container),
                                       code="table.manifest").records())


# --- the columnar decode -------------------------------------------------------------------
# A manifest's entries as Iceberg writes them, decoded by polars' Avro reader into columns
# (several times faster than a record at a time) and checked column by column. It applies
# only where it gives exactly what _plain_entry gives: the writer's schema has the spec's
# types for the fields read (optional or not), partition values of types whose Python values
# polars and fastavro agree on, and no value _plain_entry would leave to _checked_entry. A
# container that is anything else is decoded record by record, so that every problem is
# named as before.

_INTS = ("int", "long")
# data_file fields read, by the Avro types the columnar decode takes for them.
_DATA_FIELDS: dict[str, tuple[str, ...]] = {
    "content": _INTS, "file_path": ("string",), "file_format": ("string",),
    "record_count": _INTS, "file_size_in_bytes": _INTS, "referenced_data_file": ("string",),
    "content_offset": _INTS, "content_size_in_bytes": _INTS,
    "equality_ids": ("array:int", "array:long"), "split_offsets": ("array:int", "array:long"),
    "value_counts": ("map:long",), "null_value_counts": ("map:long",),
    "lower_bounds": ("map:bytes",), "upper_bounds": ("map:bytes",),
}
_ENTRY_FIELDS: dict[str, tuple[str, ...]] = {
    "status": _INTS, "snapshot_id": _INTS, "sequence_number": _INTS,
}
# Partition value types whose Python values polars gives as fastavro does.
_PARTITION_TYPES = ("int", "long", "string", "boolean", "double", "int:date")
# Rows whose locations need _plain_location's check done the slow way: not ASCII, or a NUL.
_UNPLAIN_LOCATION = r"[^\x01-\x7F]"


def _avro_type(schema: Any) -> tuple[str, bool] | None:
    """A field's Avro type as the columnar decode names it, and whether it may be null
    (``["null", T]``); ``None`` for any other type."""
    nullable = False
    if isinstance(schema, list):
        others = [t for t in schema if t != "null"]
        if len(others) != 1 or len(schema) != 2:
            return None
        schema, nullable = others[0], True
    if isinstance(schema, str):
        return schema, nullable
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if kind in _INTS and schema.get("logicalType") == "date" and kind == "int":
        return "int:date", nullable
    if kind in ("int", "long", "string", "boolean", "double", "bytes") and len(schema) == 1:
        return kind, nullable
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, str) and items in _INTS:
            return f"array:{items}", nullable
        if (isinstance(items, dict) and items.get("type") == "record"
                and [f.get("name") for f in items.get("fields", ())] == ["key", "value"]):
            key, value = (_avro_type(f.get("type")) for f in items["fields"])
            if key == ("int", False) and value in (("long", False), ("bytes", False)):
                return f"map:{value[0]}", nullable
    return None


@dataclass(frozen=True)
class _Shape:
    """What the columnar decode reads of a manifest schema: the entry fields and data_file
    fields present, and the partition's field names."""

    entry: tuple[str, ...]
    data: tuple[str, ...]
    partition: tuple[str, ...]


def _shape(schema: Any) -> _Shape | None:
    """The :class:`_Shape` of a manifest's writer schema, ``None`` if any field read has
    another type than the columnar decode takes."""
    if not isinstance(schema, dict) or schema.get("type") != "record" \
            or has_plain_fixed(schema):  # polars reads a fixed as declared, not as Java wrote
        return None
    fields = {f.get("name"): f.get("type") for f in schema.get("fields", ())
              if isinstance(f, dict)}
    data = fields.get("data_file")
    if fields.get("status") not in _INTS or not isinstance(data, dict) \
            or data.get("type") != "record":
        return None
    entry = []
    for name, kinds in _ENTRY_FIELDS.items():
        if name in fields:
            found = _avro_type(fields[name])
            if found is None or found[0] not in kinds:
                return None
            entry.append(name)
    data_fields = {f.get("name"): f.get("type") for f in data.get("fields", ())
                   if isinstance(f, dict)}
    read = []
    for name, kinds in _DATA_FIELDS.items():
        if name in data_fields:
            found = _avro_type(data_fields[name])
            if found is None or found[0] not in kinds:
                return None
            read.append(name)
    if "file_path" not in read:
        return None
    partition = data_fields.get("partition")
    if not isinstance(partition, dict) or partition.get("type") != "record":
        return None
    names = []
    for field in partition.get("fields", ()):
        found = _avro_type(field.get("type")) if isinstance(field, dict) else None
        if found is None or found[0] not in _PARTITION_TYPES:
            return None
        names.append(field["name"])
    return _Shape(tuple(entry), tuple(read), tuple(names))


def _columnar_entries(container: bytes, shape: _Shape, manifest: ManifestFile,
                      partitions: dict[tuple[Any, ...], dict[str, Any]]
                      ) -> list[ContentFile] | None:
    """The live entries of an uncompressed manifest container of schema ``shape`` decoded
    by columns, exactly as :func:`_plain_entry` reads them; ``None`` when the columnar
    decode does not apply (see above) and the container is to be read record by record."""
    import polars as pl

    try:
        frame = pl.read_avro(io.BytesIO(container), columns=[*shape.entry, "data_file"])
        data = pl.col("data_file")
        columns = [data.struct.field(name) for name in shape.data]
        if shape.partition:
            columns.append(data.struct.field("partition"))
        frame = frame.select(*shape.entry, *columns)
        frame = frame.filter(pl.col("status").is_null() | (pl.col("status") != STATUS_DELETED))
        if not _plain_columns(frame, pl):
            return None
        values = {name: frame.get_column(name).to_list() for name in frame.columns
                  if name != "partition"}
        keys = (frame.get_column("partition").struct.unnest().rows()
                if shape.partition else None)
    except (Exception, pl.exceptions.PanicException):  # polars' errors and its panics
        return None
    return _entries_of(values, keys, shape.partition, manifest, partitions, frame.height)


def _plain_columns(frame: Any, pl: Any) -> bool:
    """Whether every live row has values :func:`_plain_entry` reads directly: counts,
    sizes, offsets and sequence numbers not negative, locations ASCII without a NUL, no
    null inside a list or a metrics map."""
    checks = [pl.col("file_path").is_null().any()]
    for name in ("content", "record_count", "file_size_in_bytes", "content_offset",
                 "content_size_in_bytes", "sequence_number"):
        if name in frame.columns:
            checks.append((pl.col(name) < 0).any())
    for name in ("file_path", "referenced_data_file"):
        if name in frame.columns:
            checks.append(pl.col(name).str.contains(_UNPLAIN_LOCATION).any())
    for name in ("equality_ids", "split_offsets"):
        if name in frame.columns:
            checks.append(pl.col(name).list.eval(pl.element().is_null().any())
                          .list.first().any())
    for name in ("value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
        if name in frame.columns:
            pairs = pl.element().struct
            checks.append(pl.col(name).list.eval(
                (pairs.field("key").is_null() | pairs.field("value").is_null()).any())
                .list.first().any())
    found = frame.select(c.alias(str(i)) for i, c in enumerate(checks)).row(0) \
        if frame.height else ()
    return not any(found)


def _entries_of(values: dict[str, list[Any]], keys: list[tuple[Any, ...]] | None,
                names: tuple[str, ...], manifest: ManifestFile,
                partitions: dict[tuple[Any, ...], dict[str, Any]],
                rows: int) -> list[ContentFile]:
    """:class:`ContentFile` entries from the checked columns (as :func:`_plain_entry`
    builds them: inherited numbers, shared partitions and file formats)."""
    nothing = [None] * rows

    def column(name: str) -> list[Any]:
        return values.get(name, nothing)

    def metric(name: str) -> list[Any]:
        return [None if pairs is None else {p["key"]: p["value"] for p in pairs}
                for pairs in column(name)]

    empty = partitions.setdefault((), {})
    if keys is None:
        shared_partitions = [empty] * rows
    else:
        shared_partitions = []
        for key in keys:
            if all(type(v) in _SHAREABLE for v in key):
                items = tuple(zip(names, key, strict=True))
                shared_partitions.append(partitions.get(items)
                                         or partitions.setdefault(items, dict(items)))
            else:
                shared_partitions.append(dict(zip(names, key, strict=True)))
    shares: dict[str | None, tuple[str, int, str]] = {}
    file_shares = [shares.get(f) or shares.setdefault(
        f, _shared(_file_format(f), manifest.spec_id, manifest.path))
        for f in column("file_format")]
    inherited_sequence, inherited_snapshot = manifest.sequence_number, \
        manifest.added_snapshot_id
    entries = []
    for (content, path, shared, partition, count, size, sequence, snapshot, reference, offset,
         blob_size, equality, splits, value_counts, null_value_counts, lower_bounds,
         upper_bounds) in zip(
            column("content"), values["file_path"], file_shares, shared_partitions,
            column("record_count"), column("file_size_in_bytes"), column("sequence_number"),
            column("snapshot_id"), column("referenced_data_file"), column("content_offset"),
            column("content_size_in_bytes"), column("equality_ids"), column("split_offsets"),
            metric("value_counts"), metric("null_value_counts"), metric("lower_bounds"),
            metric("upper_bounds"), strict=True):
        rare = (reference, offset, blob_size, () if equality is None else tuple(equality),
                None if splits is None else tuple(splits), value_counts, null_value_counts,
                lower_bounds, upper_bounds)
        entry = _new(ContentFile)
        _fill(entry, 0 if content is None else content, path, partition,
              0 if count is None else count, 0 if size is None else size,
              inherited_sequence if sequence is None or sequence == inherited_sequence
              else sequence,
              inherited_snapshot if snapshot is None or snapshot == inherited_snapshot
              else snapshot,
              shared, None if rare == _UNSET else rare)
        entries.append(entry)
    return entries


def _file_format(file_format: str | None) -> str:
    """A file format as manifests spell it, one string per spelling (the first few)."""
    if file_format is None:
        return ""
    if len(_FORMATS) < _MAX_FORMATS:
        return _FORMATS.setdefault(file_format, file_format)
    return file_format
