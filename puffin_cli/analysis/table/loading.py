"""One Iceberg table as every command sees it (``table``, ``inspect --table``, ``stats compute``
and its commit): :meth:`Table.load` is the one place a table is found and read, a snapshot
chosen and a field ID named.

- Loading: a table directory or a metadata JSON file (the current metadata file of a directory
  is found by :func:`~.metadata.current_metadata_file`); a catalog resolves a table to its
  metadata location and FileIO properties and passes both here (``io_properties``).
- Storage: :attr:`Table.fileio`, built once at load from the caller's FileIO (the CLI's
  ``--io``) and the table's own properties, opens every location the table holds (metadata,
  manifests, data, delete and Puffin files), so that tables loaded in one process with
  different (vended) credentials are each read with their own.
- Locations: :attr:`Table.mapper` maps the metadata's locations onto local paths
  (``--relocate FROM=TO``, and the table's own ``location`` onto the directory it was found in).
- Snapshots: :meth:`Table.snapshot` (one by ID, or the current one), :meth:`Table.snapshots`.
- Field names: :meth:`Table.field_names` indexes the schema a snapshot was written with, once
  per schema (many snapshots share one), not once per snapshot.
- Manifests: :attr:`Table.manifests` reads manifest lists and manifests, each file once per
  table, so snapshots that share manifests cost them once.
- Versions: :meth:`Table.reload` reads the table's current version again (what a commit
  builds on, :mod:`.commit`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from puffin_cli.analysis.table.fields import FieldNames
from puffin_cli.analysis.table.manifests import ManifestReader
from puffin_cli.analysis.table.metadata import (
    DATA_DIR,
    METADATA_DIR,
    PathMapper,
    Snapshot,
    TableMetadata,
    current_metadata_file,
    default_mapper,
    is_table_dir,
    load_metadata,
    normalize_location,
    resolve_metadata_path,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.storage import FileIO, is_remote, join

if TYPE_CHECKING:
    from puffin_cli.analysis.catalog import CatalogTable

# How many snapshot IDs an unknown-snapshot error lists (the newest ones).
_KNOWN_SNAPSHOTS_SHOWN = 5


@dataclass
class Table:
    """A loaded table: its current metadata, where it was found, and how its locations map."""

    metadata: TableMetadata
    metadata_file: str
    table_dir: str
    mapper: PathMapper
    fileio: FileIO
    _names: dict[int, FieldNames] = field(default_factory=dict, repr=False)
    manifest_reader: ManifestReader | None = field(default=None, repr=False)
    catalog_table: CatalogTable | None = None  # for a table named in a catalog

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, fileio: FileIO,
             relocate: list[tuple[str, str]] | None = None,
             io_properties: Mapping[str, str] | None = None,
             catalog: str | None = None,
             max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Table:
        """The table at ``path`` (a table directory or a metadata JSON file); with
        ``catalog``, table ``path`` (``namespace.table``) of that catalog
        (:mod:`puffin_cli.analysis.catalog`): its current metadata file, read with the FileIO
        properties the catalog gives for it, and commits go through the catalog. The table's
        FileIO is ``fileio`` (the CLI's, with ``--io``; required, so that no caller loses
        it) with ``io_properties`` on top. ``max_blob_size`` bounds the
        metadata file (``--max-blob-size``)."""
        if catalog is not None:
            from puffin_cli.analysis.catalog import load_table

            return cls.of_catalog(load_table(catalog, os.fspath(path)), fileio=fileio,
                                  relocate=relocate, io_properties=io_properties,
                                  max_blob_size=max_blob_size)
        fileio = fileio.with_properties(io_properties or {})
        target = os.fspath(path)
        found = fileio.stat(target)
        if found is None or (found.kind == "dir" and not is_table_dir(target, fileio)):
            what = ("a directory without metadata/*.metadata.json" if found is not None
                    else "no such file or directory")
            raise PuffinError(f"{what}; expected an Iceberg table directory or a "
                              "*.metadata.json file", code="table.not-found", path=target)
        metadata_file, table_dir = resolve_metadata_path(target, fileio)
        metadata = load_metadata(metadata_file, fileio, limit=max_blob_size)
        return cls(metadata, metadata_file, table_dir,
                   default_mapper(metadata, table_dir, relocate, fileio), fileio)

    @classmethod
    def of_catalog(cls, named: CatalogTable, *, fileio: FileIO,
                   relocate: list[tuple[str, str]] | None = None,
                   io_properties: Mapping[str, str] | None = None,
                   max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Table:
        """The table a catalog resolved (:meth:`load`'s ``catalog``): its current metadata
        file, read with the catalog's FileIO properties for it (``io_properties`` on top). A
        metadata file that is gone is named as the catalog gave it, with the table: the user
        gave no path."""
        try:
            table = cls.load(normalize_location(named.metadata_location), fileio=fileio,
                             relocate=relocate,
                             io_properties={**named.io_properties, **(io_properties or {})},
                             max_blob_size=max_blob_size)
        except PuffinError as exc:
            if exc.code != "table.not-found":
                raise
            raise PuffinError(f"catalog {named.catalog}: table {named.identifier}: its metadata "
                              f"file {named.metadata_location} is missing",
                              code="catalog.metadata-missing") from None
        table.catalog_table = named
        return table

    # snapshots ------------------------------------------------------------------------------

    def current_snapshot(self) -> Snapshot | None:
        """The current snapshot; ``None`` for a table without one."""
        current = self.metadata.current_snapshot_id
        if current is None:
            return None
        snapshot = self.metadata.snapshot(current)
        if snapshot is None:
            raise PuffinError(f"current-snapshot-id {current} is not in 'snapshots'",
                              code="table.metadata", path=self.metadata.path)
        return snapshot

    def snapshot(self, snapshot_id: int | None) -> Snapshot | None:
        """Snapshot ``snapshot_id`` (an error when the table has none by that ID, unless exactly
        one snapshot's ID rounds to the same double: a 64-bit ID a JSON tool rounded), or the
        current snapshot for ``None``."""
        if snapshot_id is None:
            return self.current_snapshot()
        snapshot = self.metadata.snapshot(snapshot_id) or self._rounded(snapshot_id)
        if snapshot is None:
            newest = self.snapshots()[-_KNOWN_SNAPSHOTS_SHOWN:]
            known = ", ".join(str(s.snapshot_id) for s in newest) or "none"
            raise PuffinError(f"no snapshot {snapshot_id} (latest snapshots: {known})",
                              code="table.snapshot", path=self.metadata.path)
        return snapshot

    def _rounded(self, snapshot_id: int) -> Snapshot | None:
        """The one snapshot whose ID a tool that reads JSON numbers as doubles (jq 1.6,
        JavaScript) turned into ``snapshot_id``: its ID rounds to the same double. Several is
        an error that lists them."""
        try:
            near = float(snapshot_id)
        except OverflowError:
            return None
        found = [s for s in self.metadata.snapshots if float(s.snapshot_id) == near]
        if len(found) > 1:
            ids = ", ".join(str(s.snapshot_id) for s in found)
            raise PuffinError(f"no snapshot {snapshot_id}; it is a rounded form of each of "
                              f"{ids}: name one exactly", code="table.snapshot",
                              path=self.metadata.path)
        return found[0] if found else None

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, oldest first (by sequence number, then time)."""
        return sorted(self.metadata.snapshots, key=lambda s: (s.sequence_number, s.timestamp_ms))

    def ancestors(self, snapshot: Snapshot) -> Iterator[Snapshot]:
        """``snapshot``, its parent, the parent's parent... (``parent-snapshot-id``) while the
        table has them; each snapshot at most once, so a cycle in the parents ends the walk
        (and so does the number of snapshots the table has)."""
        seen: set[int] = set()
        current: Snapshot | None = snapshot
        while current is not None and current.snapshot_id not in seen:
            yield current
            seen.add(current.snapshot_id)
            current = (None if current.parent_id is None
                       else self.metadata.snapshot(current.parent_id))

    # field names ----------------------------------------------------------------------------

    def field_names(self, snapshot_id: int | None) -> FieldNames:
        """Field ID -> column name in the schema ``snapshot_id`` was written with (the current
        schema for ``None`` or a snapshot the table does not have): a column renamed later
        shows the name it had then. Each schema is indexed once."""
        schema_id, schema = self.metadata.schema_for(snapshot_id)
        names = self._names.get(schema_id)
        if names is None:
            names = self._names[schema_id] = FieldNames(schema, schema_id)
        return names

    # files ----------------------------------------------------------------------------------

    @property
    def manifests(self) -> ManifestReader:
        """The table's manifest reader (one per table: what it read is read once)."""
        if self.manifest_reader is None:
            self.manifest_reader = ManifestReader(self.mapper, self.fileio)
        return self.manifest_reader

    def resolve(self, location: str) -> str:
        """Where a location the metadata holds is read (:meth:`.PathMapper.resolve`; the
        inverse of :meth:`location_of` for the files this table writes)."""
        return self.mapper.resolve(location)

    def reload(self) -> Table:
        """This table's current version, read again: through its catalog for a table named in
        one, else the current metadata file of its directory
        (:func:`~.metadata.current_metadata_file`); locations map as before."""
        if self.catalog_table is not None:
            found = self.catalog_table
            fresh = Table.load(found.identifier, catalog=found.catalog, fileio=self.fileio)
        else:
            fresh = self.at(current_metadata_file(self.table_dir, self.fileio))
        fresh.mapper = self.mapper
        return fresh

    def at(self, metadata_file: str) -> Table:
        """This table as ``metadata_file`` (another version in its directory) describes it."""
        return Table(load_metadata(metadata_file, self.fileio), metadata_file, self.table_dir,
                     self.mapper, self.fileio)

    @property
    def statistics_dir(self) -> str:
        """Where statistics files are written: the table's ``metadata/`` directory."""
        return join(self.table_dir, METADATA_DIR)

    def statistics_location(self, file_name: str) -> str:
        """How the table metadata should name a statistics file written to
        :attr:`statistics_dir` (:meth:`location_of`)."""
        return self.location_of(join(self.statistics_dir, file_name))

    @property
    def data_dir(self) -> str:
        """Where new delete files are written: the table's ``data/`` directory, as Iceberg
        Java writes deletion vectors."""
        return join(self.table_dir, DATA_DIR)

    def location_of(self, written: str) -> str:
        """How the table metadata should name a file written at ``written`` under the table's
        directory: under the table's ``location`` when that is this directory, else by its
        local path (a copied or moved table, whose ``location`` names another place)."""
        location = self.metadata.location.rstrip("/")
        here = normalize_location(location)
        found = normalize_location(self.table_dir)
        relative = normalize_location(written)[len(found):]
        if is_remote(found):
            return f"{location}{relative}" if here == found else written
        if not is_remote(here) and os.path.realpath(here) == os.path.realpath(found):
            return f"{location}{relative}"
        return os.path.realpath(written)
