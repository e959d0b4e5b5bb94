"""Iceberg table metadata: finding the current ``*.metadata.json``, reading it (format versions
1, 2 and 3) and mapping the locations it holds onto the local directory.

Discovery, for a table directory (one holding ``metadata/``):

1. ``metadata/version-hint.text`` names version N: ``v<N>.metadata.json`` (also the gzip
   spellings ``v<N>.gz.metadata.json`` and ``v<N>.metadata.json.gz``), else the highest
   ``v<N>.metadata.json``; then forward while ``v<N+1>`` exists, as Iceberg Java does (the
   committer uses the same rule: :func:`current_version`);
2. else the highest ``<N>-<uuid>.metadata.json`` (metastore naming), newest file on a tie.

A directory without ``metadata/`` is a warehouse: every table directory under it is found.
Locations in metadata are URIs (``file:/x``, ``file:///x``, ``s3://bucket/x``); a
:class:`PathMapper` rewrites a prefix onto a local directory (``--relocate FROM=TO``, and
automatically the table's ``location`` onto the directory the metadata was found in when that
location is another directory or does not exist here: a moved or copied table).
"""

from __future__ import annotations

import os
import re
import shlex
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import unquote, urlparse

from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format import jsonload
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE, MAGIC, MAGIC_LENGTH
from puffin_cli.format.typed import Obj
from puffin_cli.storage import FileInfo, FileIO, is_remote, join, name_of, parent

METADATA_DIR = "metadata"
DATA_DIR = "data"  # where Iceberg Java writes data and delete files
VERSION_HINT = "version-hint.text"
# Metadata files are read within --max-blob-size, but never less than this: lowering the limit
# to keep deletion vectors out of memory does not make a table unreadable.
MIN_METADATA_LIMIT = 16 << 20
# ASCII digits, and no more than a 64-bit version needs (``int`` refuses 4,300 digits).
_HADOOP_NAME = re.compile(r"^v([0-9]{1,19})(\.gz)?\.metadata\.json(\.gz)?$")
_METASTORE_NAME = re.compile(r"^([0-9]{1,19})-[0-9a-fA-F-]+(\.gz)?\.metadata\.json(\.gz)?$")


@dataclass(frozen=True)
class Snapshot:
    """One entry of ``snapshots``; ``manifests`` is the v1 inline manifest list."""

    snapshot_id: int
    parent_id: int | None
    sequence_number: int
    timestamp_ms: int
    manifest_list: str | None
    manifests: tuple[str, ...]
    schema_id: int | None
    operation: str | None
    # Rows of the data files it removed less rows of those it added (summary deleted-records
    # and added-records), when more: rows a copy-on-write delete rewrote away.
    removed_rows: int = 0


@dataclass(frozen=True)
class StatisticsBlobEntry:
    """One ``blob-metadata`` entry of a ``statistics`` file, as the table metadata says."""

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: dict[str, str]


@dataclass(frozen=True)
class StatisticsEntry:
    snapshot_id: int
    path: str
    file_size: int
    footer_size: int
    blobs: tuple[StatisticsBlobEntry, ...]
    key_metadata: str | None = None


@dataclass(frozen=True)
class PartitionStatisticsEntry:
    snapshot_id: int
    path: str
    file_size: int


@dataclass(frozen=True)
class TableMetadata:
    """What puffin-cli needs from one metadata JSON file (``raw`` keeps everything)."""

    path: str
    format_version: int
    table_uuid: str | None
    location: str
    current_snapshot_id: int | None
    current_schema_id: int
    schemas: dict[int, dict[str, Any]]
    specs: dict[int, dict[str, Any]]
    snapshots: tuple[Snapshot, ...]
    statistics: tuple[StatisticsEntry, ...]
    partition_statistics: tuple[PartitionStatisticsEntry, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    def snapshot(self, snapshot_id: int) -> Snapshot | None:
        """Snapshot ``snapshot_id`` (the first listed, should the metadata repeat an ID)."""
        return self._snapshots_by_id.get(snapshot_id)

    @cached_property
    def _snapshots_by_id(self) -> dict[int, Snapshot]:
        # built once: a walk over every snapshot asks for each one's parent and ancestors
        found: dict[int, Snapshot] = {}
        for snap in self.snapshots:
            found.setdefault(snap.snapshot_id, snap)
        return found

    def schema_for(self, snapshot_id: int | None) -> tuple[int, dict[str, Any]]:
        """The schema a snapshot was written with (its ``schema-id``), else the current one."""
        snap = None if snapshot_id is None else self.snapshot(snapshot_id)
        schema_id = self.current_schema_id
        if snap is not None and snap.schema_id is not None and snap.schema_id in self.schemas:
            schema_id = snap.schema_id
        return schema_id, self.schemas[schema_id]


# --- locations --------------------------------------------------------------------------------


def normalize_location(location: str) -> str:
    """A comparable form of a location: ``file:`` URIs become plain absolute paths, other
    schemes stay as they are; no trailing slash."""
    text = location
    if text.startswith("file:"):
        parsed = urlparse(text)
        text = unquote(parsed.path)
    return text.rstrip("/") or "/"


class PathMapper:
    """Rewrites location prefixes onto local directories; longest prefix first."""

    def __init__(self, rules: list[tuple[str, str]] | None = None) -> None:
        self.rules: list[tuple[str, str]] = []
        for source, target in rules or []:
            self.add(source, target)

    def add(self, source: str, target: str) -> None:
        self.rules.append((normalize_location(source), normalize_location(target)))
        self.rules.sort(key=lambda rule: len(rule[0]), reverse=True)

    def resolve(self, location: str) -> str:
        """Where a location from the metadata is read: moved by the first ``--relocate`` rule
        that matches, else as it is (an object store location is read there)."""
        text = normalize_location(location)
        for source, target in self.rules:
            if text == source or text.startswith(source + "/"):
                return target + text[len(source):]
        return text  # read where it is (an object store location is read there)

    def location(self, local: str) -> str:
        """How the metadata would name a file read at ``local`` (what :meth:`resolve`
        undoes)."""
        text = normalize_location(local)
        for source, target in sorted(self.rules, key=lambda rule: len(rule[1]), reverse=True):
            if text == target or text.startswith(target + "/"):
                return source + text[len(target):]
        return local


# --- discovery --------------------------------------------------------------------------------


def _version_files(metadata_dir: str, fileio: FileIO
                   ) -> tuple[dict[int, FileInfo], dict[int, list[FileInfo]]]:
    hadoop: dict[int, FileInfo] = {}
    metastore: dict[int, list[FileInfo]] = {}
    files, _dirs = fileio.list_dir(metadata_dir)
    for entry in files:
        name = name_of(entry.location)
        match = _HADOOP_NAME.match(name)
        if match:
            hadoop.setdefault(int(match.group(1)), entry)
            continue
        match = _METASTORE_NAME.match(name)
        if match:
            metastore.setdefault(int(match.group(1)), []).append(entry)
    return hadoop, metastore


def version_hint(metadata_dir: str, fileio: FileIO) -> int | None:
    """The version ``metadata/version-hint.text`` names; ``None`` without a readable one."""
    try:
        raw = fileio.read_all(join(metadata_dir, VERSION_HINT), 4096)
    except PuffinError:
        return None
    text = raw.decode("utf-8", errors="replace").strip()
    return decimal_int(text)


def metadata_version(location: str) -> int | None:
    """The version a metadata file's name says (``v<N>...`` or ``<N>-<uuid>...``)."""
    name = name_of(location)
    match = _HADOOP_NAME.match(name) or _METASTORE_NAME.match(name)
    return int(match.group(1)) if match else None


def version_file(metadata_dir: str, version: int, fileio: FileIO) -> str | None:
    """``v<version>.metadata.json`` (or a gzip spelling) in ``metadata_dir``, if it exists."""
    for name in (f"v{version}.metadata.json", f"v{version}.gz.metadata.json",
                 f"v{version}.metadata.json.gz"):
        candidate = join(metadata_dir, name)
        if fileio.stat(candidate) is not None:
            return candidate
    return None


def current_version(metadata_dir: str, fileio: FileIO) -> tuple[int, str] | None:
    """(N, location of ``v<N>``): the current version of a file-system table, as Iceberg
    Java's ``HadoopTableOperations`` finds it: the hint's version (else the highest
    ``v<N>``), then forward while ``v<N+1>`` exists (a writer may have died between
    publishing a version and updating the hint). The one rule of the reader and the committer;
    ``None`` without any ``v<N>.metadata.json``."""
    versions = _version_files(metadata_dir, fileio)[0]
    if not versions:
        return None
    version = version_hint(metadata_dir, fileio)
    if version is None or version not in versions:
        version = max(versions)
    path = versions[version].location
    for _ in range(1 << 20):  # bounded; each step is a version that exists
        following = version_file(metadata_dir, version + 1, fileio)
        if following is None:
            break
        version, path = version + 1, following
    return version, path


def current_metadata_file(table_dir: str, fileio: FileIO) -> str:
    """The current metadata JSON of a table directory (see the module docstring)."""
    metadata_dir = join(table_dir, METADATA_DIR)
    found = fileio.stat(metadata_dir)
    if found is None or found.kind != "dir":
        raise PuffinError(f"{table_dir}: no {METADATA_DIR}/ directory; expected an Iceberg "
                          "table directory, a *.metadata.json file or a warehouse",
                          code="table.not-found")
    current = current_version(metadata_dir, fileio)
    if current is not None:
        return current[1]
    metastore = _version_files(metadata_dir, fileio)[1]
    if metastore:
        newest = metastore[max(metastore)]
        return max(newest, key=lambda f: (f.modified or 0.0, f.location)).location
    raise PuffinError(f"{metadata_dir}: no v<N>.metadata.json or <N>-<uuid>.metadata.json file",
                      code="table.not-found")


def is_table_dir(path: str | os.PathLike[str], fileio: FileIO) -> bool:
    metadata_dir = join(os.fspath(path), METADATA_DIR)
    found = fileio.stat(metadata_dir)
    if found is None or found.kind != "dir":
        return False
    hadoop, metastore = _version_files(metadata_dir, fileio)
    return bool(hadoop or metastore)


def find_tables(warehouse: str | os.PathLike[str], fileio: FileIO) -> list[str]:
    """Every table directory under ``warehouse`` (not descending into a table once found)."""
    found: list[str] = []
    pending = [os.fspath(warehouse)]
    while pending:
        here = pending.pop()
        _files, dirs = fileio.list_dir(here)
        if any(name_of(d) == METADATA_DIR for d in dirs) and is_table_dir(here, fileio):
            found.append(here)
        else:
            pending.extend(reversed(dirs))
    return sorted(found)


# --- reading ----------------------------------------------------------------------------------


def _read_json(path: str, fileio: FileIO, limit: int) -> Any:
    """The JSON of a metadata file (gzip or not), refused above ``limit`` bytes (compressed or
    not) before it is held in memory, and above ``limit``'s value budget before it is parsed."""
    name = str(path)
    limit = max(limit, MIN_METADATA_LIMIT)
    with fileio.open_stream(path, regular_only=True) as stream:
        raw = stream.read(limit + 1)
    if raw[:MAGIC_LENGTH] == MAGIC:  # the user named a statistics or DV file
        shown = shlex.quote(name)
        raise PuffinError(f"this is a Puffin file, not table metadata: puffin inspect {shown} "
                          f"shows it (puffin validate {shown} checks it)",
                          code="table.puffin-file", path=name, kind=ErrorKind.BAD_ARGUMENT)
    if not raw:  # what a create that failed half-way can leave
        raise PuffinError("table metadata is an empty file (0 bytes)",
                          code="table.metadata-json", path=name)
    try:
        jsonload.check_size(len(raw), limit, what="table metadata", option="--max-blob-size",
                            code="table.metadata-json")
        if raw[:2] == b"\x1f\x8b":
            raw = _gunzip(raw, limit)
        return jsonload.loads(raw, limit=limit, option="--max-blob-size",
                              what="table metadata", code="table.metadata-json")
    except PuffinError as exc:
        raise exc.with_path(name) from None


def _gunzip(data: bytes, limit: int) -> bytes:
    """One gzip member, decompressed into at most ``limit`` bytes."""
    stream = zlib.decompressobj(wbits=zlib.MAX_WBITS | 16)
    try:
        out = stream.decompress(data, limit + 1)
    except zlib.error as exc:
        raise PuffinError(f"gzip-compressed table metadata is corrupt: {exc}",
                          code="table.metadata-json") from None
    jsonload.check_size(len(out), limit, what="decompressed table metadata",
                        option="--max-blob-size", code="table.metadata-json")
    if not stream.eof:
        raise PuffinError("gzip-compressed table metadata is truncated",
                          code="table.metadata-json")
    return out


def _snapshot(item: Obj) -> Snapshot:
    summary = item.child("summary")
    return Snapshot(
        snapshot_id=item.integer("snapshot-id"),
        parent_id=item.integer("parent-snapshot-id", None),
        sequence_number=item.integer("sequence-number", 0, minimum=0),
        timestamp_ms=item.integer("timestamp-ms", 0),
        manifest_list=item.location("manifest-list", None),
        manifests=item.locations("manifests"),
        schema_id=item.integer("schema-id", None),
        operation=summary.text("operation", None),
        removed_rows=max(_summary_count(summary, "deleted-records")
                         - _summary_count(summary, "added-records"), 0),
    )


def _summary_count(summary: Obj, key: str) -> int:
    """A count of a snapshot summary (a string of digits, as Iceberg writes it); 0 when
    absent or not a count (the summary is informational)."""
    value = summary.value.get(key)
    count = decimal_int(value) if isinstance(value, str) else None
    return 0 if count is None else count


def _statistics(item: Obj) -> StatisticsEntry:
    blobs = [StatisticsBlobEntry(type=blob.text("type"), snapshot_id=blob.integer("snapshot-id"),
                                 sequence_number=blob.integer("sequence-number"),
                                 fields=blob.ints("fields"),
                                 properties=blob.str_map("properties"))
             for blob in item.items("blob-metadata", f"{item.where} blob-metadata")]
    return StatisticsEntry(
        snapshot_id=item.integer("snapshot-id"),
        path=item.location("statistics-path"),
        file_size=item.integer("file-size-in-bytes", minimum=0),
        footer_size=item.integer("file-footer-size-in-bytes", minimum=0),
        blobs=tuple(blobs),
        key_metadata=item.text("key-metadata", None),
    )


def _by_id(items: list[Obj], key: str) -> dict[int, dict[str, Any]]:
    return {item.integer(key, 0): item.value for item in items}


def load_metadata(path: str | os.PathLike[str], fileio: FileIO, *,
                  limit: int = DEFAULT_MAX_BLOB_SIZE) -> TableMetadata:
    """Read one metadata JSON file (format version 1, 2 or 3), at most ``limit`` bytes
    (``--max-blob-size``); every field read has its type checked."""
    name = os.fspath(path)
    obj = Obj(_read_json(name, fileio, limit), "table metadata", path=name,
              code="table.metadata")
    version = obj.integer("format-version")
    if version not in (1, 2, 3):
        raise PuffinError(f"format-version {version} is not supported (1, 2 or 3)",
                          code="table.metadata", path=name)
    schemas = _by_id(obj.items("schemas", "schema"), "schema-id")
    if not schemas and obj.has("schema"):  # v1: one schema
        schema = obj.child("schema")
        schemas[schema.integer("schema-id", 0)] = schema.value
    if not schemas:
        raise PuffinError("no 'schemas' and no 'schema'", code="table.metadata", path=name)
    current_schema = obj.integer("current-schema-id", max(schemas))
    if current_schema not in schemas:
        raise PuffinError(f"current-schema-id {current_schema} is not in 'schemas'",
                          code="table.metadata", path=name)
    specs = _by_id(obj.items("partition-specs", "partition spec"), "spec-id")
    if not specs and obj.has("partition-spec"):
        specs[0] = {"spec-id": 0, "fields": obj.array("partition-spec")}
    current = obj.integer("current-snapshot-id", None)
    return TableMetadata(
        path=name,
        format_version=version,
        table_uuid=obj.text("table-uuid", None),
        location=obj.location("location"),
        current_snapshot_id=None if current == -1 else current,
        current_schema_id=current_schema,
        schemas=schemas,
        specs=specs,
        snapshots=tuple(_snapshot(s) for s in obj.items("snapshots", "snapshot")),
        statistics=tuple(_statistics(s) for s in obj.items("statistics", "statistics entry")),
        partition_statistics=tuple(
            PartitionStatisticsEntry(s.integer("snapshot-id"), s.location("statistics-path"),
                                     s.integer("file-size-in-bytes", minimum=0))
            for s in obj.items("partition-statistics", "partition-statistics entry")),
        raw=obj.value,
    )


def resolve_metadata_path(path: str | os.PathLike[str], fileio: FileIO
                          ) -> tuple[str, str]:
    """(metadata file, table directory) for a table directory or a metadata JSON file."""
    text = os.fspath(path)
    found = fileio.stat(text)
    if found is not None and found.kind != "dir":
        folder = parent(text)
        table_dir = parent(folder) if name_of(folder) == METADATA_DIR else folder
        return text, table_dir
    return current_metadata_file(text, fileio), text


def default_mapper(metadata: TableMetadata, table_dir: str | os.PathLike[str],
                   rules: list[tuple[str, str]] | None, fileio: FileIO) -> PathMapper:
    """``rules`` first; then, unless a rule covers it, the table's ``location`` onto
    ``table_dir`` when that location is not the directory the metadata was found in (the table
    was moved or copied, or lives on object storage under another name)."""
    mapper = PathMapper(rules)
    here = normalize_location(metadata.location)
    found_dir = normalize_location(os.fspath(table_dir))
    covered = any(here == src or here.startswith(src + "/") for src, _ in mapper.rules)
    if covered or here == found_dir:
        return mapper
    if is_remote(found_dir):
        mapper.add(metadata.location, found_dir)
        return mapper
    found_in = parent(metadata.path)
    in_table = name_of(found_in) == METADATA_DIR and \
        os.path.realpath(parent(found_in)) == os.path.realpath(found_dir)
    local = os.path.realpath(found_dir)
    here_found = None if is_remote(here) else fileio.stat(here)
    if here_found is None or here_found.kind != "dir" or \
            (in_table and os.path.realpath(here) != local):
        mapper.add(metadata.location, local)
    return mapper
