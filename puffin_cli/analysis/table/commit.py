"""The one commit path: :func:`commit` builds a change (requirements and updates,
:mod:`.updates`) on the table's current version and publishes it, building again on the new
version when another writer got there first.

The loop, for every table
    1. read the table's current version (:meth:`~.loading.Table.reload`);
    2. ``build(base)`` returns a :class:`~.updates.TableChange`; it may refuse (a snapshot
       that is gone: :func:`require_snapshot`) and may write files (manifests), which it
       names in ``written``;
    3. publish; on a conflict remove the files this attempt wrote, wait (bounded exponential
       backoff with jitter) and go to 1, at most ``max_attempts`` times. When the commit fails
       for good, the files written for it are removed (Iceberg's cleanup of uncommitted
       files), except when the publish itself failed in a way that leaves its outcome unknown.

Publishing to a file-system ("Hadoop") table (Iceberg table spec, "File System Tables")
    The current version N is :func:`~.metadata.current_version` (the reader's rule too). The
    requirements are checked against ``v<N>``, the updates applied to its JSON
    (``last-updated-ms`` moves on and ``v<N>`` joins the ``metadata-log``, trimmed to
    ``write.metadata.previous-versions-max``), and the result written as
    ``v<N+1>.metadata.json`` with the storage layer's create-only output: locally a fsynced
    temporary file published by a hard link, in an object store one PUT with
    ``If-None-Match: *``. A metadata file is never overwritten; an existing ``v<N+1>`` is a
    conflict. Then ``version-hint.text`` is replaced unless it already names a newer version
    (locally, puffin writers take ``metadata/.puffin-version-hint.lock`` for this step).
    Tables whose metadata files use metastore naming (``<N>-<uuid>.metadata.json``) belong to
    a catalog; committing to them behind the catalog's back is refused.

Publishing through a catalog (SQL, REST)
    The change goes to the catalog (:func:`~puffin_cli.analysis.catalog.commit_table`), which
    checks the requirements against its current metadata and swaps the metadata location
    atomically; a refusal is a conflict.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Literal

from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import (
    METADATA_DIR,
    VERSION_HINT,
    current_version,
    metadata_version,
    version_file,
    version_hint,
)
from puffin_cli.analysis.table.updates import (
    MAIN_BRANCH,
    AddSnapshot,
    AssertTableUUID,
    CommitConflict,
    CommitResult,
    RemovePartitionStatistics,
    RemoveStatistics,
    SetPartitionStatistics,
    SetSnapshotRef,
    SetStatistics,
    StatisticsFileEntry,
    TableChange,
    TableRequirement,
    TableUpdate,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.text import encode
from puffin_cli.storage import FileIO, StorageError, join, name_of

DEFAULT_MAX_ATTEMPTS = 10
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
DEFAULT_PREVIOUS_VERSIONS = 100
# Backoff between attempts: doubling from the first wait, capped (seconds).
_FIRST_WAIT = 0.02
_MAX_WAIT = 1.0

Build = Callable[[Table], TableChange]


def _where(table: Table) -> str:
    """The table as messages name it."""
    found = table.catalog_table
    return table.table_dir if found is None else f"catalog {found.catalog}: table " \
        f"{found.identifier}"


def require_snapshot(base: Table, snapshot_id: int, what: str) -> None:
    """The one "snapshot still exists" check: a change about a snapshot that another writer
    expired meanwhile is refused (``what`` names what is then not committed)."""
    if base.metadata.snapshot(snapshot_id) is None:
        raise PuffinError(f"{_where(base)}: snapshot {snapshot_id} is no longer in the table "
                          f"(expired by another writer?); {what} not committed",
                          code="commit.snapshot")


def _remove(fileio: FileIO, locations: Iterable[str]) -> None:
    """Remove files written for a change that was not committed (best effort: a file that
    cannot be removed is an orphan, as in Iceberg)."""
    for location in locations:
        try:
            fileio.delete(location)
        except StorageError:
            continue


def commit(table: Table, build: Build, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS,
           written: Iterable[str] = ()) -> CommitResult:
    """Publish ``build(base)`` on the table's current version ``base``, building again on
    the new version after a conflict (see the module docstring). ``written`` names files
    written before the commit for it (a statistics file), removed when it fails."""
    publisher: _FileSystem | _Catalog = (_Catalog(table) if table.catalog_table is not None
                                         else _FileSystem(table))
    fileio = table.fileio
    change: TableChange | None = None
    try:
        for attempt in range(1, max_attempts + 1):
            publisher.sent = False
            base = publisher.base()
            change = build(base)
            try:
                version, location = publisher.publish(base, change)
            except CommitConflict:
                _remove(fileio, change.written)
                change = None
                if attempt < max_attempts:
                    time.sleep(min(_FIRST_WAIT * 2 ** (attempt - 1), _MAX_WAIT)
                               * random.uniform(0.5, 1.0))
                continue
            return CommitResult(version, location, attempt)
    except BaseException:
        if not publisher.sent:  # else the outcome is unknown: the files may be committed
            _remove(fileio, [*(change.written if change else ()), *written])
        raise
    _remove(fileio, written)
    raise PuffinError(f"{publisher.where}: gave up after {max_attempts} attempts: other "
                      "writers committed a new metadata version each time; nothing was "
                      "changed", code="commit.conflict")


def commit_statistics(table: Table, entry: StatisticsFileEntry, *,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS, written: Iterable[str] = (),
                      based_on: str | Literal["any"] | None = "any") -> CommitResult:
    """Register a statistics file for its snapshot, replacing any older entry for it
    (``replaced`` names those). ``written`` is removed when the commit fails (the statistics
    file). ``based_on`` is the snapshot's statistics file the new one was made from (its other
    columns kept; ``None``: it had none): when another writer registered another one
    meanwhile, the commit is refused rather than dropping that writer's columns."""
    replaced: list[str] = []

    def build(base: Table) -> TableChange:
        require_snapshot(base, entry.snapshot_id, "statistics")
        replaced[:] = [s.path for s in base.metadata.statistics
                       if s.snapshot_id == entry.snapshot_id]
        if based_on != "any" and replaced[:1] != ([] if based_on is None else [based_on]):
            now = replaced[0] if replaced else "none"
            raise PuffinError(f"{_where(base)}: another writer registered statistics for "
                              f"snapshot {entry.snapshot_id} meanwhile ({now}); statistics "
                              "not committed: run again to keep its columns",
                              code="commit.statistics-changed")
        return TableChange(table_requirements(base), (SetStatistics(entry),))

    result = commit(table, build, max_attempts=max_attempts, written=written)
    return replace(result, replaced=tuple(replaced))


def check_committable(table: Table) -> None:
    """Refuse, before any work, a commit that cannot succeed: a table found by its location
    whose metadata files are not file-system (``v<N>.metadata.json``) ones belongs to a
    catalog, and only the catalog may commit to it; a catalog table whose catalog cannot
    write its metadata (:func:`~puffin_cli.analysis.catalog.check_commit`) is refused too."""
    if table.catalog_table is None:
        _FileSystem(table).current()
    else:
        from puffin_cli.analysis.catalog import check_commit

        check_commit(table.catalog_table.catalog, table.catalog_table.identifier)


def table_requirements(base: Table) -> tuple[TableRequirement, ...]:
    """The requirement every change has: the same table (its UUID, when it has one)."""
    uuid = base.metadata.table_uuid
    return () if uuid is None else (AssertTableUUID(uuid),)


# --- through a catalog ---------------------------------------------------------------------


class _Catalog:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.where = _where(table)
        self.sent = False  # the change went out: a failure now leaves the outcome unknown

    def base(self) -> Table:
        return self.table.reload()

    def publish(self, base: Table, change: TableChange) -> tuple[int, str]:
        from puffin_cli.analysis.catalog import commit_table

        found = self.table.catalog_table
        assert found is not None
        self.sent = True
        location = commit_table(found.catalog, found.identifier, change)
        version = metadata_version(location)
        return (-1 if version is None else version), location


# --- file-system tables --------------------------------------------------------------------


class _FileSystem:
    def __init__(self, table: Table) -> None:
        self.table = table
        self.fileio = table.fileio
        self.metadata_dir = join(table.table_dir, METADATA_DIR)
        self.where = self.metadata_dir
        self.version = 0
        self.sent = False  # the change went out: a failure now leaves the outcome unknown

    def current(self) -> tuple[int, str]:
        found = current_version(self.metadata_dir, self.fileio)
        if found is None:
            raise PuffinError(f"{self.metadata_dir}: no v<N>.metadata.json, so the table "
                              "belongs to a catalog and only the catalog can commit to it: "
                              "name it there, --catalog NAME NAMESPACE.TABLE",
                              code="commit.not-file-system-table")
        return found

    def base(self) -> Table:
        self.version, metadata_file = self.current()
        return self.table.at(metadata_file)

    def publish(self, base: Table, change: TableChange) -> tuple[int, str]:
        raw = base.metadata.raw
        for requirement in change.requirements:
            _check(raw, requirement)
        updated = copy.deepcopy(raw)
        for update in change.updates:
            _apply(updated, update, change.updates)
        previous = f"{base.metadata.location.rstrip('/')}/{METADATA_DIR}/" \
            f"{name_of(base.metadata_file)}"
        _log_previous(updated, previous)
        text = json.dumps(updated, separators=(",", ":"), ensure_ascii=False)
        # lone surrogates (from \ud800 escapes in the metadata read) stay JSON escapes
        content = encode(text)
        version = self.version + 1
        target = join(self.metadata_dir, f"v{version}.metadata.json")
        if version_file(self.metadata_dir, version, self.fileio) is not None:
            raise CommitConflict(target)
        try:
            self.sent = True
            with self.fileio.new_output(target).create() as out:
                out.write(content)
        except StorageError as exc:
            if exc.code == "write.exists":
                raise CommitConflict(target) from None
            raise
        with contextlib.suppress(StorageError):  # committed; readers walk past an old hint
            update_hint(self.metadata_dir, version, self.fileio)
        return version, target


def update_hint(metadata_dir: str, version: int, fileio: FileIO) -> None:
    """Point the hint at the newest version (at least ``version``), never backwards; puffin
    writers serialize this step on a lock file so a slower one cannot roll the hint back."""
    with fileio.lock(join(metadata_dir, ".puffin-version-hint.lock")):
        found = current_version(metadata_dir, fileio)
        newest = max(version, found[0] if found else 0)
        current = version_hint(metadata_dir, fileio)
        if current is not None and current >= newest:
            return
        with fileio.new_output(join(metadata_dir, VERSION_HINT)).create(overwrite=True) as out:
            out.write(f"{newest}\n".encode())


def _ref_snapshot(metadata: dict[str, Any], ref: str) -> int | None:
    refs = metadata.get("refs")
    if isinstance(refs, dict) and ref in refs:
        found = refs[ref].get("snapshot-id") if isinstance(refs[ref], dict) else None
        return found if isinstance(found, int) else None
    if ref == MAIN_BRANCH:  # v1 metadata without refs: main is the current snapshot
        current = metadata.get("current-snapshot-id")
        return current if isinstance(current, int) and current != -1 else None
    return None


def _check(metadata: dict[str, Any], requirement: TableRequirement) -> None:
    """A requirement against the base's JSON, as a catalog checks it; a failed one is a
    conflict (the change is built again on the table's new version)."""
    if isinstance(requirement, AssertTableUUID):
        found = metadata.get("table-uuid")
        if not isinstance(found, str) or found.lower() != requirement.uuid.lower():
            raise CommitConflict(f"table UUID {found} is not {requirement.uuid}")
    elif _ref_snapshot(metadata, requirement.ref) != requirement.snapshot_id:
        raise CommitConflict(f"branch {requirement.ref} has moved")


def _replace_entry(metadata: dict[str, Any], key: str, snapshot_id: int,
                   entry: dict[str, Any] | None) -> None:
    kept = [e for e in metadata.get(key) or [] if e.get("snapshot-id") != snapshot_id]
    metadata[key] = kept if entry is None else [*kept, entry]


def _apply(metadata: dict[str, Any], update: TableUpdate,
           updates: tuple[TableUpdate, ...]) -> None:
    """One update on a metadata JSON, as Iceberg Java's ``TableMetadata.Builder`` does."""
    if isinstance(update, SetStatistics):
        _replace_entry(metadata, "statistics", update.statistics.snapshot_id,
                       update.statistics.to_json())
    elif isinstance(update, RemoveStatistics):
        _replace_entry(metadata, "statistics", update.snapshot_id, None)
    elif isinstance(update, SetPartitionStatistics):
        entry = update.partition_statistics
        _replace_entry(metadata, "partition-statistics", entry.snapshot_id, entry.to_json())
    elif isinstance(update, RemovePartitionStatistics):
        _replace_entry(metadata, "partition-statistics", update.snapshot_id, None)
    elif isinstance(update, AddSnapshot):
        _add_snapshot(metadata, update.snapshot)
    else:
        _set_ref(metadata, update, updates)


def _add_snapshot(metadata: dict[str, Any], snapshot: dict[str, Any]) -> None:
    snapshots = list(metadata.get("snapshots") or [])
    snapshot_id = snapshot["snapshot-id"]
    if any(s.get("snapshot-id") == snapshot_id for s in snapshots):
        raise PuffinError(f"snapshot {snapshot_id} already exists", code="commit.snapshot")
    sequence = snapshot.get("sequence-number", 0)
    last = metadata.get("last-sequence-number", 0)
    if metadata.get("format-version", 1) >= 2 and sequence <= last:
        raise CommitConflict(f"sequence number {sequence} is not above {last}")
    metadata["snapshots"] = [*snapshots, dict(snapshot)]
    metadata["last-sequence-number"] = max(sequence, last)
    if metadata.get("format-version", 1) >= 3:
        next_row_id = metadata.get("next-row-id", 0)
        if snapshot.get("first-row-id") != next_row_id:
            raise CommitConflict(f"first-row-id is not the table's next-row-id {next_row_id}")
        metadata["next-row-id"] = next_row_id + snapshot.get("added-rows", 0)


def _set_ref(metadata: dict[str, Any], update: SetSnapshotRef,
             updates: tuple[TableUpdate, ...]) -> None:
    if not any(s.get("snapshot-id") == update.snapshot_id
               for s in metadata.get("snapshots") or []):
        raise PuffinError(f"no snapshot {update.snapshot_id} for ref {update.ref_name}",
                          code="commit.snapshot")
    refs = dict(metadata.get("refs") or {})
    refs[update.ref_name] = {"snapshot-id": update.snapshot_id, "type": update.type}
    metadata["refs"] = refs
    if update.ref_name == MAIN_BRANCH:
        added = [u.snapshot for u in updates if isinstance(u, AddSnapshot)
                 and u.snapshot_id == update.snapshot_id]
        when = added[0].get("timestamp-ms") if added else int(time.time() * 1000)
        metadata["current-snapshot-id"] = update.snapshot_id
        metadata["snapshot-log"] = [*(metadata.get("snapshot-log") or []),
                                    {"timestamp-ms": when, "snapshot-id": update.snapshot_id}]


def _log_previous(metadata: dict[str, Any], previous_location: str) -> None:
    previous_ms = metadata.get("last-updated-ms")
    now = int(time.time() * 1000)
    if isinstance(previous_ms, int):
        log = list(metadata.get("metadata-log") or [])
        log.append({"timestamp-ms": previous_ms, "metadata-file": previous_location})
        properties = metadata.get("properties") or {}
        setting = properties.get(PREVIOUS_VERSIONS_MAX) if isinstance(properties, dict) else None
        keep = (decimal_int(setting) if isinstance(setting, str) else None) \
            or DEFAULT_PREVIOUS_VERSIONS
        metadata["metadata-log"] = log[-max(keep, 1):]
        now = max(now, previous_ms)
    metadata["last-updated-ms"] = now
