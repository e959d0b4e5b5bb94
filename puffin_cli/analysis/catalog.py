"""Iceberg catalogs (``--catalog NAME``), through pyiceberg (the ``catalog`` extra).

A catalog is configured exactly as pyiceberg configures it: ``.pyiceberg.yaml`` in
``PYICEBERG_HOME``, the home directory or the working directory, and
``PYICEBERG_CATALOG__<NAME>__<KEY>`` environment variables (``type``, ``uri``, ``warehouse``
and the FileIO properties: ``s3.endpoint``, ``s3.access-key-id``...). pyiceberg is imported
only here, so only catalog commands pay for it.

What the commands take from a catalog is where a table's current metadata file is and the
FileIO properties of its files: the catalog's own properties merged with the table's (a REST
catalog's ``config`` in its load-table answer, vended credentials included), exactly the
properties pyiceberg's own FileIO would use. Everything else is read from the metadata file
by puffin-cli's table reader, as for a table given by its location.

``commit_statistics`` registers a statistics file through the catalog (pyiceberg's
``update_statistics``): the catalog checks that the table did not change since it was loaded
(the SQL catalog swaps the metadata location only if it is still the one read; a REST catalog
does the same server-side), so a concurrent commit is never overwritten: on a conflict the
table is loaded again and the update applied to the new version, a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.table.commit import CommitResult, StatisticsFileEntry
from puffin_cli.analysis.table.metadata import normalize_location
from puffin_cli.format.errors import ErrorKind, PuffinError
from puffin_cli.format.spec import PUFFIN_SUFFIXES

if TYPE_CHECKING:
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileIO

DEFAULT_MAX_ATTEMPTS = 10
_METASTORE_VERSION = re.compile(r"(?:^|/)(\d{1,19})-[0-9a-fA-F-]+\.metadata\.json(?:\.gz)?$",
                                re.ASCII)
CONFIG_HINT = ("configure it as pyiceberg does: a .pyiceberg.yaml in $PYICEBERG_HOME, ~ or "
               "the working directory, or PYICEBERG_CATALOG__{name}__URI and friends")


@dataclass(frozen=True)
class CatalogTable:
    """A table found in a catalog: its identifier, its current metadata file and the FileIO
    properties for its files."""

    catalog: str
    identifier: str
    metadata_location: str
    location: str
    io_properties: dict[str, str]


def _pyiceberg() -> Any:
    try:
        import pyiceberg.catalog
    except ImportError:
        raise PuffinError("pyiceberg is not installed; install the catalog extra: "
                          "pip install 'puffin-cli[catalog]'", code="catalog.missing") from None
    return pyiceberg.catalog


def _error(name: str, exc: Exception, what: str) -> PuffinError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return PuffinError(f"catalog {name}: {what}: {text}", code="catalog.error")


def load_catalog(name: str) -> Any:
    """The pyiceberg catalog ``name``, configured as pyiceberg configures it."""
    module = _pyiceberg()
    from pyiceberg.utils.config import Config

    # Read now, not when pyiceberg was imported (its own copy), then given to it explicitly.
    config = Config().get_catalog_config(name)
    if config is None:
        raise PuffinError(f"catalog {name!r} is not configured; "
                          + CONFIG_HINT.format(name=name.upper()), code="catalog.config",
                          kind=ErrorKind.BAD_ARGUMENT)
    try:
        return module.load_catalog(name, **config)
    except Exception as exc:  # pyiceberg raises ValueError, its own errors, driver errors
        raise _error(name, exc, "cannot load the catalog") from None


def _identifier(text: str) -> tuple[str, ...]:
    parts = tuple(text.split("."))
    if len(parts) < 2 or not all(parts):
        raise PuffinError(f"{text!r}: expected a table identifier NAMESPACE.TABLE",
                          code="catalog.identifier", kind=ErrorKind.BAD_ARGUMENT)
    return parts


def _table(name: str, catalog: Any, identifier: tuple[str, ...]) -> Any:
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    try:
        return catalog.load_table(identifier)
    except (NoSuchTableError, NoSuchNamespaceError):
        raise PuffinError(f"catalog {name}: no table {'.'.join(identifier)}",
                          code="catalog.no-table") from None
    except Exception as exc:
        raise _error(name, exc, f"cannot load table {'.'.join(identifier)}") from None


def _described(name: str, table: Any) -> CatalogTable:
    from puffin_cli.storage.config import unknown_properties

    properties = {str(k): str(v) for k, v in table.io.properties.items()}
    for key in unknown_properties(properties):  # the catalog's own: type, uri, warehouse...
        del properties[key]
    return CatalogTable(catalog=name, identifier=".".join(table.name()),
                        metadata_location=str(table.metadata_location),
                        location=str(table.location()), io_properties=properties)


def load_table(name: str, identifier: str) -> CatalogTable:
    """Table ``identifier`` (``namespace.table``) of catalog ``name``."""
    catalog = load_catalog(name)
    return _described(name, _table(name, catalog, _identifier(identifier)))


def _namespaces(name: str, catalog: Any, roots: Sequence[tuple[str, ...]]
                ) -> Iterator[tuple[str, ...]]:
    """Every namespace under ``roots`` (all top-level ones when empty), depth first; a catalog
    without nested namespaces answers with none below a namespace."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    seen: set[tuple[str, ...]] = set()
    pending = list(roots) if roots else [tuple(n) for n in catalog.list_namespaces()]
    for _ in range(100_000):  # bounded: a catalog answering in a cycle stops here
        if not pending:
            return
        namespace = pending.pop(0)
        if namespace in seen:
            continue
        seen.add(namespace)
        yield namespace
        try:
            children = [tuple(n) for n in catalog.list_namespaces(namespace)]
        except NoSuchNamespaceError:
            if roots and namespace in roots:
                raise PuffinError(f"catalog {name}: no namespace {'.'.join(namespace)}",
                                  code="catalog.no-namespace") from None
            children = []
        pending.extend(c for c in children if len(c) > len(namespace))


def catalog_tables(name: str, namespaces: Sequence[str] = ()) -> list[CatalogTable]:
    """Every table of catalog ``name`` in ``namespaces`` and the namespaces below them (the
    whole catalog when none is given), sorted by identifier."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    catalog = load_catalog(name)
    roots = [tuple(n.split(".")) for n in namespaces]
    found: list[CatalogTable] = []
    try:
        for namespace in _namespaces(name, catalog, roots):
            try:
                identifiers = catalog.list_tables(namespace)
            except NoSuchNamespaceError:
                raise PuffinError(f"catalog {name}: no namespace {'.'.join(namespace)}",
                                  code="catalog.no-namespace") from None
            found.extend(_described(name, _table(name, catalog, tuple(i)))
                         for i in identifiers)
    except PuffinError:
        raise
    except Exception as exc:
        raise _error(name, exc, "cannot list tables") from None
    return sorted(found, key=lambda t: t.identifier)


def commit_statistics(name: str, identifier: str, entry: StatisticsFileEntry, *,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> CommitResult:
    """Register ``entry`` for its snapshot in table ``identifier`` through catalog ``name``
    (replacing any older statistics of that snapshot); retried on a concurrent commit."""
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table.statistics import StatisticsFile

    catalog = load_catalog(name)
    parts = _identifier(identifier)
    statistics = StatisticsFile.model_validate(entry.to_json())  # the spec's JSON names
    for attempt in range(1, max_attempts + 1):
        table = _table(name, catalog, parts)
        if table.metadata.snapshot_by_id(entry.snapshot_id) is None:
            raise PuffinError(f"catalog {name}: table {identifier} no longer has snapshot "
                              f"{entry.snapshot_id} (expired by another writer?); statistics "
                              "not committed", code="commit.snapshot")
        replaced = tuple(s.statistics_path for s in table.metadata.statistics
                         if s.snapshot_id == entry.snapshot_id)
        try:
            with table.update_statistics() as update:
                update.set_statistics(statistics)
        except CommitFailedException:
            continue  # another writer committed first: load its version and apply again
        except Exception as exc:
            raise _error(name, exc, f"cannot commit to {identifier}") from None
        location = str(table.metadata_location)
        match = _METASTORE_VERSION.search(location)
        return CommitResult(int(match.group(1)) if match else -1, location, attempt, replaced)
    raise PuffinError(f"catalog {name}: table {identifier} kept changing; statistics not "
                      f"committed after {max_attempts} attempts", code="commit.conflict")


@dataclass(frozen=True)
class TablePuffinFiles:
    """The Puffin files of one catalog table: those its metadata references (statistics files,
    Puffin partition statistics, the deletion vector files of every snapshot's delete
    manifests) and the orphans, Puffin files under its location that nothing references.
    Locations are as the storage layer opens them."""

    identifier: str
    referenced: tuple[str, ...]
    orphans: tuple[str, ...]
    fileio: FileIO  # the storage configuration of the table's files


def table_puffin_files(table: Table, identifier: str) -> TablePuffinFiles:
    """Every Puffin file ``table`` references (each manifest read once) and the orphans."""
    from puffin_cli.analysis.table.manifests import CONTENT_DATA

    referenced: dict[str, None] = {}
    for stats in table.metadata.statistics:
        referenced[table.local(stats.path)] = None
    for part in table.metadata.partition_statistics:
        if part.path.endswith(PUFFIN_SUFFIXES):
            referenced[table.local(part.path)] = None
    seen: set[str] = set()
    for snapshot in table.snapshots():
        for manifest in table.manifests.manifest_files(snapshot):
            if manifest.content == CONTENT_DATA or manifest.path in seen:
                continue
            seen.add(manifest.path)
            for entry in table.manifests.live_files(manifest):
                if entry.is_dv:
                    referenced[table.local(entry.path)] = None
    from puffin_cli.analysis.table.orphans import find_orphans

    orphans = find_orphans(table.fileio, table.table_dir, referenced)
    return TablePuffinFiles(identifier, tuple(referenced),
                            tuple(info.location for info in orphans), table.fileio)


def catalog_puffin_files(name: str, namespaces: Sequence[str] = (),
                         fileio: FileIO | None = None) -> list[TablePuffinFiles]:
    """:func:`table_puffin_files` of every table of :func:`catalog_tables`, each read with
    ``fileio`` (the CLI's) and the catalog's properties for it on top."""
    from puffin_cli.analysis.table.loading import Table

    found = []
    for described in catalog_tables(name, namespaces):
        table = Table.load(normalize_location(described.metadata_location), fileio=fileio,
                           io_properties=described.io_properties)
        table.catalog_table = described
        found.append(table_puffin_files(table, described.identifier))
    return found
