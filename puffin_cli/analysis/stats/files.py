"""The files one snapshot's ``stats compute`` reads, as the plan hands them to the tasks: the
columns to sketch, the live data files and the delete files attached to each (plain, picklable
dataclasses; :mod:`.plan` builds them, :mod:`.delete_index` decides which deletes apply).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from puffin_cli.analysis.table.metadata import PathMapper
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.errors import PuffinError
from puffin_cli.storage import is_remote

# The ``file_path`` column of position delete files (Iceberg's MetadataColumns.DELETE_FILE_PATH).
DELETE_FILE_PATH_ID = 2147483546


# Top-level field ID -> the names a data file may give the column (a name mapping).
NameMapping = tuple[tuple[int, tuple[str, ...]], ...]


@dataclass(frozen=True)
class Column:
    """One column to sketch: its field ID, name (in the snapshot's schema) and type."""

    field_id: int
    name: str
    type: IcebergType


@dataclass(frozen=True)
class EqualityDeleteFile:
    """An equality delete file that applies to at least one live data file: a data row equal
    (null matching null) to one of its rows on ``columns`` (its ``equality_ids``, in order) is
    deleted from the data files it applies to. ``partition_key`` is its (spec, partition)
    among the plan's :attr:`DataFile.partition_key`; ``None`` for a global delete."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    columns: tuple[Column, ...]
    partition_key: int | None
    file_size: int = field(default=0, compare=False)  # its weight in task planning only


@dataclass(frozen=True)
class PositionDeleteFile:
    """A v2 position delete file (rows of ``file_path``, ``pos``). ``referenced_data_file``:
    the one data file it holds deletes for when it is file-scoped (Iceberg's
    ``ContentFileUtil.referencedDataFile``: manifest field 143, else equal lower and upper
    bounds of its ``file_path`` column), ``None`` for a partition-scoped file."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    file_size: int = 0
    referenced_data_file: str | None = None


@dataclass(frozen=True)
class DeletionVectorRef:
    """A deletion vector that applies to ``data_file`` (a location as the manifest names it)."""

    data_file: str
    puffin_local: str
    offset: int
    length: int
    cardinality: int


@dataclass(frozen=True)
class DataFile:
    """A live data file: ``location`` as the manifest names it, ``local`` the path to read.
    ``partition_key`` numbers its (spec, partition) within the plan; ``equality_deletes`` are
    the equality delete files that apply to it, ``position_deletes`` the position delete
    files and ``deletion_vector`` its DV (when it has one, Iceberg attaches no position delete
    file), exactly the delete files Iceberg's ``DeleteFileIndex`` attaches to its scan task.
    ``file_size`` and ``split_offsets`` (manifest fields 104 and 132) are what Iceberg splits
    the file by (:mod:`puffin_cli.analysis.stats.task_groups`). ``constants`` are the values of its
    identity partition fields by source field ID: Iceberg's readers take such a column from
    them, so a file need not store it (Hive-style partition directories)."""

    location: str
    local: str
    file_format: str
    record_count: int
    sequence_number: int
    partition_key: int = 0
    equality_deletes: tuple[EqualityDeleteFile, ...] = ()
    file_size: int = 0
    split_offsets: tuple[int, ...] | None = None
    position_deletes: tuple[PositionDeleteFile, ...] = ()
    deletion_vector: DeletionVectorRef | None = None
    constants: tuple[tuple[int, Any], ...] = ()


# Types Spark can read and the pipeline can serialize as Iceberg does.
SUPPORTED_TYPES = frozenset({
    "boolean", "int", "long", "float", "double", "decimal", "date", "time", "timestamp",
    "timestamptz", "string", "uuid", "fixed", "binary",
})


def primitive_type(field: dict[str, Any]) -> IcebergType | None:
    """The field's type when it is a primitive type the pipeline sketches, else ``None``."""
    kind = field.get("type")
    if not isinstance(kind, str):
        return None
    try:
        parsed = IcebergType.parse(kind)
    except PuffinError:
        return None
    return parsed if parsed.name in SUPPORTED_TYPES else None


def top_level_fields(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The schema's top-level fields that have an integer ID."""
    return [f for f in schema.get("fields") or [] if isinstance(f, dict)
            and isinstance(f.get("id"), int)]


def read_location(mapper: PathMapper, location: str) -> str:
    """Where a task reads a location as a manifest names it: the mapped path made absolute,
    or an object's location as it is (a table read from an object store)."""
    found = mapper.resolve(location)
    if is_remote(found):
        return found
    absolute = os.path.abspath(found)
    return found if absolute == found else absolute  # one string, not two, per data file
