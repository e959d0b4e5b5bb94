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

:func:`commit_table` sends a commit (:mod:`.table.updates`) through the catalog
(``Catalog.commit_table``): the catalog checks the requirements against the table's current
metadata (the SQL catalog swaps the metadata location only if it is still the one it read; a
REST catalog does the same server-side), so a concurrent commit is never overwritten; the retry
on the new version is :mod:`.table.commit`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.table.updates import CommitConflict, TableChange
from puffin_cli.errors import ErrorKind, PuffinError

CONFIG_HINT = ("configure it as pyiceberg does: a .pyiceberg.yaml in $PYICEBERG_HOME, ~ or "
               "the working directory, or PYICEBERG_CATALOG__{name}__URI and friends")


@dataclass(frozen=True)
class CatalogTable:
    """A table found in a catalog: its identifier, its current metadata file and the FileIO
    properties for its files."""

    catalog: str
    identifier: str
    metadata_location: str
    io_properties: dict[str, str]


def _pyiceberg() -> Any:
    try:
        import pyiceberg.catalog
    except ImportError:
        raise PuffinError("pyiceberg is not installed; install the catalog extra: "
                          "pip install 'puffin-cli[catalog]'", code="catalog.missing") from None
    return pyiceberg.catalog


def _error(name: str, exc: Exception, what: str) -> PuffinError:
    return PuffinError(f"catalog {name}: {what}: {_reason(exc)}", code="catalog.error")


def _reason(exc: BaseException) -> str:
    """One line of what went wrong: pydantic's first complaint (pyiceberg wraps it; its own
    first line only counts the complaints) with where it is, else the error's first line."""
    for cause in (exc, exc.__cause__):
        errors = getattr(cause, "errors", None)
        if callable(errors):
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return f"{where}: {first['msg']}" if where else str(first["msg"])
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


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


def _fileio_properties(properties: Any) -> dict[str, str]:
    """``properties`` without the catalog's own (type, uri, warehouse...): its FileIO ones."""
    from puffin_cli.storage.config import unknown_properties

    found = {str(k): str(v) for k, v in properties.items()}
    for key in unknown_properties(found):
        del found[key]
    return found


def _described(name: str, table: Any) -> CatalogTable:
    return CatalogTable(catalog=name, identifier=".".join(table.name()),
                        metadata_location=str(table.metadata_location),
                        io_properties=_fileio_properties(table.io.properties))


def _metastore_location(catalog: Any, identifier: tuple[str, ...]) -> str | None:
    """The current metadata location a SQL catalog stores for ``identifier``, read from its
    table without parsing the metadata file (``None``: another kind of catalog, or no such
    table)."""
    from pyiceberg.catalog.sql import IcebergTables, SqlCatalog

    if not isinstance(catalog, SqlCatalog):
        return None
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    with Session(catalog.engine) as session:
        row = session.scalar(select(IcebergTables).where(
            IcebergTables.catalog_name == catalog.name,
            IcebergTables.table_namespace == ".".join(identifier[:-1]),
            IcebergTables.table_name == identifier[-1]))
    return None if row is None or not row.metadata_location else str(row.metadata_location)


def _rest_table(name: str, catalog: Any, identifier: tuple[str, ...]) -> CatalogTable | None:
    """Table ``identifier`` as a REST catalog's load-table answer gives it, asked through the
    catalog's own (authenticated) session, without parsing the metadata it embeds: its
    ``metadata-location``, and the FileIO properties pyiceberg would merge (the catalog's, the
    table's, the answer's ``config`` and its best-matching ``storage-credentials``) (``None``:
    another kind of catalog, or no such table)."""
    from pydantic import TypeAdapter
    from pyiceberg.catalog.rest import Endpoints, RestCatalog
    from pyiceberg.catalog.rest.scan_planning import StorageCredential

    if not isinstance(catalog, RestCatalog):
        return None
    response = catalog._session.get(catalog.url(
        Endpoints.load_table, prefixed=True,
        **catalog._split_identifier_for_path(identifier)))
    if response.status_code == 404:
        return None
    response.raise_for_status()
    answer = TypeAdapter(dict[str, Any]).validate_json(response.text)
    location = TypeAdapter(str).validate_python(answer.get("metadata-location"))
    metadata = TypeAdapter(dict[str, Any]).validate_python(answer.get("metadata"))
    strings = TypeAdapter(dict[str, str])
    credentials = catalog._resolve_storage_credentials(
        TypeAdapter(list[StorageCredential]).validate_python(
            answer.get("storage-credentials", [])), location)
    properties = {**catalog.properties, **strings.validate_python(metadata.get("properties", {})),
                  **strings.validate_python(answer.get("config", {})), **credentials}
    return CatalogTable(catalog=name, identifier=".".join(identifier),
                        metadata_location=location, io_properties=_fileio_properties(properties))


def _unparsed(name: str, catalog: Any, identifier: tuple[str, ...]) -> CatalogTable | None:
    """Table ``identifier`` as ``catalog`` locates it without pyiceberg parsing its metadata
    file: a SQL catalog's stored location (:func:`_metastore_location`) or a REST catalog's
    load-table answer (:func:`_rest_table`) (``None``: another kind of catalog, or no such
    table)."""
    location = _metastore_location(catalog, identifier)
    if location is not None:
        return CatalogTable(catalog=name, identifier=".".join(identifier),
                            metadata_location=location,
                            io_properties=_fileio_properties(catalog.properties))
    try:
        return _rest_table(name, catalog, identifier)
    except Exception as exc:  # an HTTP error, or an answer of the wrong shape
        raise _error(name, exc, f"cannot load table {'.'.join(identifier)}") from None


def _located(name: str, catalog: Any, identifier: tuple[str, ...]) -> CatalogTable:
    """Table ``identifier`` of ``catalog``. A SQL or REST catalog's table whose metadata
    pyiceberg cannot take (the file is missing or corrupt: puffin-cli's reader then says what is
    wrong with it, where; or valid but beyond pyiceberg's model, such as a statistics blob type
    other than the two it knows, which the spec allows, or a format 3 ``variant`` column) is
    still the table at the metadata location the catalog gives (:func:`_unparsed`), with its
    FileIO properties."""
    try:
        return _described(name, _table(name, catalog, identifier))
    except PuffinError as exc:
        if exc.code != "catalog.error":
            raise
        found = _unparsed(name, catalog, identifier)
        if found is None:
            raise
    return found


def load_table(name: str, identifier: str) -> CatalogTable:
    """Table ``identifier`` (``namespace.table``) of catalog ``name``."""
    catalog = load_catalog(name)
    return _located(name, catalog, _identifier(identifier))


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


def _identifiers(name: str, catalog: Any, roots: Sequence[tuple[str, ...]]
                 ) -> Iterator[tuple[str, ...]]:
    """The identifiers of every table in ``roots`` and the namespaces below them (the whole
    catalog when ``roots`` is empty)."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    for namespace in _namespaces(name, catalog, roots):
        try:
            identifiers = catalog.list_tables(namespace)
        except NoSuchNamespaceError:
            raise PuffinError(f"catalog {name}: no namespace {'.'.join(namespace)}",
                              code="catalog.no-namespace") from None
        yield from (tuple(i) for i in identifiers)


def catalog_tables(name: str, namespaces: Sequence[str] = ()) -> list[CatalogTable]:
    """Every table of catalog ``name`` in ``namespaces`` and the namespaces below them (the
    whole catalog when none is given), sorted by identifier."""
    catalog = load_catalog(name)
    roots = [tuple(n.split(".")) for n in namespaces]
    try:
        found = [_located(name, catalog, i)
                 for i in _identifiers(name, catalog, roots)]
    except PuffinError:
        raise
    except Exception as exc:
        raise _error(name, exc, "cannot list tables") from None
    return sorted(found, key=lambda t: t.identifier)


def _is_table(name: str, catalog: Any, identifier: tuple[str, ...]) -> bool:
    """Whether ``identifier`` is a table of ``catalog``. A SQL catalog (and a REST one whose
    server has no table-exists endpoint) answers by loading the table, so one whose metadata
    pyiceberg cannot take is still a table (that fails alone in a run, or is read by
    puffin-cli's reader), not a failed listing."""
    try:
        return bool(catalog.table_exists(identifier))
    except Exception:
        if _unparsed(name, catalog, identifier) is None:
            raise
        return True


def table_names(name: str, names: Sequence[str]) -> list[str]:
    """The tables ``names`` stand for in catalog ``name``, sorted, each once: a name that is a
    table is that table, any other a namespace (its tables and those of the namespaces below
    it); no name at all, the whole catalog. Only listed, not loaded."""
    catalog = load_catalog(name)
    tables: set[str] = set()
    roots: list[tuple[str, ...]] = []
    try:
        for text in names:
            parts = tuple(text.split("."))
            if len(parts) >= 2 and all(parts) and _is_table(name, catalog, parts):
                tables.add(text)
            else:
                roots.append(parts)
        if roots or not names:
            tables.update(".".join(i) for i in _identifiers(name, catalog, roots))
    except PuffinError as exc:
        if exc.code == "catalog.no-namespace" and names:
            raise PuffinError(f"{exc.message.replace('no namespace', 'no table or namespace')}",
                              code="catalog.no-namespace") from None
        raise
    except Exception as exc:
        raise _error(name, exc, "cannot list tables") from None
    return sorted(tables)


def check_commit(name: str, identifier: str) -> None:
    """Refuse, before any work, a commit catalog ``name`` cannot make for table
    ``identifier``. pyiceberg sends every commit from the table it parsed, so a table whose
    metadata it cannot parse (read by puffin-cli's reader: :func:`_located`) cannot take one.
    A catalog whose metadata files pyiceberg writes on this side (a ``MetastoreCatalog``: SQL,
    Glue, Hive...; a REST server writes its own) commits by serializing the new metadata with
    pyiceberg, which refuses some format versions (pyiceberg 0.12:
    ``TableMetadataV3.model_dump_json`` raises ``NotImplementedError``, "Writing V3 is not yet
    supported"); the table's current metadata is serialized the same way here, so exactly what
    the commit would refuse is refused now."""
    from pyiceberg.catalog import MetastoreCatalog

    catalog = load_catalog(name)
    writes = isinstance(catalog, MetastoreCatalog)
    try:
        table = catalog.load_table(_identifier(identifier))
    except Exception as exc:
        who = ("pyiceberg writes this catalog's metadata" if writes
               else "pyiceberg sends this catalog's commits")
        raise _error(name, exc, f"cannot commit to {identifier}: {who} and cannot read the "
                     "table's") from None
    if not writes:
        return
    try:
        table.metadata.model_dump_json()
    except NotImplementedError as exc:
        version = table.metadata.format_version
        raise _error(name, exc, f"cannot commit to {identifier}: pyiceberg writes this "
                     f"catalog's metadata and cannot write format {version}") from None


def commit_table(name: str, identifier: str, change: TableChange) -> str:
    """Send ``change`` (requirements and updates, converted to pyiceberg's own classes) to
    table ``identifier`` of catalog ``name``; the new metadata location.
    :class:`~.table.updates.CommitConflict` when the catalog refuses it because the table
    changed: a requirement failed, or (SQL catalog) the metadata location was swapped by
    another writer since the catalog read it."""
    from pydantic import TypeAdapter
    from pyiceberg.exceptions import CommitFailedException
    from pyiceberg.table.update import TableRequirement, TableUpdate

    catalog = load_catalog(name)
    table = _table(name, catalog, _identifier(identifier))
    requirements = TypeAdapter(tuple[TableRequirement, ...]).validate_python(
        [r.to_json() for r in change.requirements])
    updates = TypeAdapter(tuple[TableUpdate, ...]).validate_python(
        [u.to_json() for u in change.updates])
    try:
        response = catalog.commit_table(table, requirements, updates)
    except CommitFailedException as exc:
        raise CommitConflict(str(exc)) from None
    except Exception as exc:
        raise _error(name, exc, f"cannot commit to {identifier}") from None
    return str(response.metadata_location)
