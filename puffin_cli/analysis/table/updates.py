"""A table commit as the Iceberg REST catalog spec models one: requirements the table must meet
and updates to apply to it (the ``CommitTableRequest`` vocabulary, which pyiceberg's table
updates and iceberg-rust's transaction actions use too).

These are plain values. :mod:`.commit` applies them to the metadata JSON of a file-system
table, or sends them through a catalog (:mod:`puffin_cli.analysis.catalog` converts them to
pyiceberg's classes); :meth:`to_json` is the REST spec's JSON of each.

Updates
    :class:`SetStatistics`, :class:`RemoveStatistics`, :class:`SetPartitionStatistics`,
    :class:`RemovePartitionStatistics`, :class:`AddSnapshot`, :class:`SetSnapshotRef`.
Requirements
    :class:`AssertRefSnapshotId` (a branch points at this snapshot, or does not exist for
    ``None``), :class:`AssertTableUUID`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from puffin_cli.format.metadata import BlobMetadata

MAIN_BRANCH = "main"


@dataclass(frozen=True)
class StatisticsFileEntry:
    """One ``statistics`` entry of table metadata (its JSON form is :meth:`to_json`)."""

    snapshot_id: int
    path: str
    file_size: int
    footer_size: int
    blobs: tuple[dict[str, Any], ...]

    @classmethod
    def for_blobs(cls, snapshot_id: int, path: str, file_size: int, footer_size: int,
                  blobs: list[dict[str, Any]]) -> StatisticsFileEntry:
        return cls(snapshot_id, path, file_size, footer_size, tuple(blobs))

    @classmethod
    def of_footer(cls, snapshot_id: int, path: str, file_size: int, footer_size: int,
                  blobs: Sequence[BlobMetadata]) -> StatisticsFileEntry:
        """The entry of a Puffin file whose footer lists ``blobs``: its ``blob-metadata``
        repeats them (``properties`` left out when a blob has none)."""
        return cls(snapshot_id, path, file_size, footer_size, tuple(
            {"type": b.type, "snapshot-id": b.snapshot_id,
             "sequence-number": b.sequence_number, "fields": list(b.fields),
             **({"properties": dict(b.properties)} if b.properties else {})}
            for b in blobs))

    def to_json(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id, "statistics-path": self.path,
                "file-size-in-bytes": self.file_size,
                "file-footer-size-in-bytes": self.footer_size,
                "blob-metadata": [dict(b) for b in self.blobs]}


@dataclass(frozen=True)
class PartitionStatisticsFileEntry:
    """One ``partition-statistics`` entry of table metadata."""

    snapshot_id: int
    path: str
    file_size: int

    def to_json(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id, "statistics-path": self.path,
                "file-size-in-bytes": self.file_size}


# --- updates -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetStatistics:
    """Register a statistics file for its snapshot, replacing any other one of that
    snapshot."""

    statistics: StatisticsFileEntry

    def to_json(self) -> dict[str, Any]:
        return {"action": "set-statistics", "statistics": self.statistics.to_json()}


@dataclass(frozen=True)
class RemoveStatistics:
    snapshot_id: int

    def to_json(self) -> dict[str, Any]:
        return {"action": "remove-statistics", "snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class SetPartitionStatistics:
    partition_statistics: PartitionStatisticsFileEntry

    def to_json(self) -> dict[str, Any]:
        return {"action": "set-partition-statistics",
                "partition-statistics": self.partition_statistics.to_json()}


@dataclass(frozen=True)
class RemovePartitionStatistics:
    snapshot_id: int

    def to_json(self) -> dict[str, Any]:
        return {"action": "remove-partition-statistics", "snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class AddSnapshot:
    """A new snapshot: its entry of ``snapshots`` as the table spec writes it
    (``snapshot-id``, ``parent-snapshot-id``, ``sequence-number``, ``timestamp-ms``,
    ``manifest-list``, ``summary``, ``schema-id``; in v3 ``first-row-id`` and
    ``added-rows``)."""

    snapshot: dict[str, Any]

    @property
    def snapshot_id(self) -> int:
        return int(self.snapshot["snapshot-id"])

    def to_json(self) -> dict[str, Any]:
        return {"action": "add-snapshot", "snapshot": dict(self.snapshot)}


@dataclass(frozen=True)
class SetSnapshotRef:
    """Point a branch (``main`` is the table's current snapshot) or tag at a snapshot."""

    ref_name: str
    snapshot_id: int
    type: str = "branch"

    def to_json(self) -> dict[str, Any]:
        return {"action": "set-snapshot-ref", "ref-name": self.ref_name,
                "snapshot-id": self.snapshot_id, "type": self.type}


TableUpdate = (SetStatistics | RemoveStatistics | SetPartitionStatistics
               | RemovePartitionStatistics | AddSnapshot | SetSnapshotRef)


# --- requirements --------------------------------------------------------------------------


@dataclass(frozen=True)
class AssertRefSnapshotId:
    """Branch or tag ``ref`` points at ``snapshot_id``; with ``None``, it does not exist."""

    ref: str
    snapshot_id: int | None

    def to_json(self) -> dict[str, Any]:
        return {"type": "assert-ref-snapshot-id", "ref": self.ref,
                "snapshot-id": self.snapshot_id}


@dataclass(frozen=True)
class AssertTableUUID:
    uuid: str

    def to_json(self) -> dict[str, Any]:
        return {"type": "assert-table-uuid", "uuid": self.uuid}


TableRequirement = AssertRefSnapshotId | AssertTableUUID


@dataclass(frozen=True)
class TableChange:
    """What one attempt of a commit asks: ``requirements`` of the table it was built on,
    ``updates`` to apply, and the files ``written`` for it (manifests, manifest lists, delete
    files), removed when this attempt is not the one committed."""

    requirements: tuple[TableRequirement, ...]
    updates: tuple[TableUpdate, ...]
    written: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommitResult:
    version: int  # of the new metadata file (-1 when its name does not say)
    metadata_file: str
    attempts: int
    replaced: tuple[str, ...] = ()  # statistics paths dropped for the same snapshot


class CommitConflict(Exception):
    """Another writer committed first, or a requirement no longer holds: build again on the
    table's new version."""
