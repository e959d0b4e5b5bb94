"""The typed facts of a ``table`` finding (format/findings.py :class:`Finding` ``facts``): the
file as the table metadata names it, the snapshot, the content files involved and a typed
:class:`Detail` per kind of finding, from which the finding's message is rendered
(:meth:`Facts.message`), never written by hand, so a script or ``puffin repair`` reads the
facts and a person the same finding as text. With the table analysis, not in the bytes layer:
reading a Puffin file's footer makes findings, never facts, and does not define these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from puffin_cli.format.findings import Finding, Severity

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any


# What a FileRef is (its ``content``).
DATA = "data"
DELETES = "deletes"  # a delete file: a deletion vector's Puffin file (``offset``, ``length``)
STATISTICS = "statistics"
PARTITION_STATISTICS = "partition-statistics"
PUFFIN = "puffin"  # a Puffin file no metadata names (an orphan)

# What a finding's message starts with (``Facts.about``).
ABOUT_FILE = "file"  # "{path}: "
ABOUT_DV = "deletion-vector"  # "snapshot {snapshot-id}: DV for {data file} in {path}: "
ABOUT_SNAPSHOT = "snapshot"  # "snapshot {snapshot-id}: "


@dataclass(frozen=True)
class FileRef:
    """A file a finding involves, named as the table metadata names it; for a deletion
    vector's delete file, its ``content_offset`` and ``content_size_in_bytes``."""

    content: str
    path: str | None
    offset: int | None = None
    length: int | None = None


# --- details: one small typed record per kind of finding ----------------------------------


@dataclass(frozen=True)
class Mismatch:
    """The metadata's ``key`` is ``expected``; ``source`` (the file, its footer, the blob, the
    decoded bitmap, the data file's manifest entry) says ``actual``."""

    key: str
    source: str
    expected: Any
    actual: Any
    blob_index: int | None = None
    kind: str = field(default="mismatch", init=False)

    def describe(self, facts: Facts) -> str:
        e, a = self.expected, self.actual
        if self.blob_index is not None:
            return (f"blob {self.blob_index} {self.key} is {e!r} in the table metadata, "
                    f"{a!r} in the Puffin footer")
        deletes = facts.deletes()
        texts = {
            ("file-size-in-bytes", "file"): f"file-size-in-bytes is {e}, the file has {a} bytes",
            ("file-footer-size-in-bytes", "footer"):
                f"file-footer-size-in-bytes is {e}, the footer has {a} bytes",
            ("blob-count", "footer"): f"blob-metadata lists {e} blobs, the Puffin footer {a}",
            ("content_offset", "footer"):
                f"content_offset is {e}, the blob for this data file is at {a}",
            ("content_size_in_bytes", "footer"):
                f"content_size_in_bytes is {e}, the blob is {a} bytes",
            ("referenced_data_file", "blob"):
                f"the blob at offset {None if deletes is None else deletes.offset} is for {a}",
            ("record_count", "bitmap"): f"record_count is {e}, the bitmap holds {a} positions",
            ("record_count", "data-file"): f"deletes {e} rows, the data file has {a}",
            ("position", "data-file"): f"position {a} is past the data file's {e} rows",
            ("sequence_number", "data-file"):
                f"data sequence number {e} is below the data file's {a}",
        }
        if (self.key, self.source) == ("partition", "data-file"):
            return (f"partition spec {e[0]} {e[1]} differs from the data file's spec "
                    f"{a[0]} {a[1]}")
        return texts[self.key, self.source]


@dataclass(frozen=True)
class Absent:
    """The file is not there (``local-path`` or ``path`` names where it was looked for)."""

    kind: str = field(default="absent", init=False)

    def describe(self, facts: Facts) -> str:
        where = facts.local_path or facts.path
        if facts.about == ABOUT_DV:
            return f"the file does not exist ({where})"
        what = ("partition statistics" if facts.files[0].content == PARTITION_STATISTICS
                else "statistics")
        return f"{what} file for snapshot {facts.snapshot_id} does not exist ({where})"


@dataclass(frozen=True)
class UnknownSnapshot:
    """Registered for ``snapshot-id``, a snapshot the table does not have."""

    kind: str = field(default="unknown-snapshot", init=False)

    def describe(self, facts: Facts) -> str:
        return f"registered for snapshot {facts.snapshot_id}, which the table does not have"


@dataclass(frozen=True)
class OtherSnapshot:
    """Blobs ``blob-indexes`` of the statistics file were computed for ``snapshot-ids`` (one
    each), not for the snapshot the entry registers the file for."""

    blob_indexes: tuple[int, ...]
    snapshot_ids: tuple[int, ...]
    kind: str = field(default="other-snapshot", init=False)

    def describe(self, facts: Facts) -> str:
        blobs = ", ".join(map(str, self.blob_indexes))
        named = ", ".join(map(str, dict.fromkeys(self.snapshot_ids)))
        were = f"blob {blobs} was" if len(self.blob_indexes) == 1 else f"blobs {blobs} were"
        return (f"{were} computed for snapshot {named}, not for snapshot "
                f"{facts.snapshot_id}, which the entry registers the file for")


@dataclass(frozen=True)
class UnknownFields:
    """Blob ``blob-index`` (of ``blob-type``) names ``field-ids`` schema ``schema-id`` lacks."""

    blob_index: int
    blob_type: str
    field_ids: tuple[int, ...]
    schema_id: int | None
    kind: str = field(default="unknown-fields", init=False)

    def describe(self, facts: Facts) -> str:
        return (f"blob {self.blob_index} ({self.blob_type}) names field IDs "
                f"{list(self.field_ids)} that schema {self.schema_id} does not have")


@dataclass(frozen=True)
class NotPuffin:
    """The statistics file does not start with the Puffin magic."""

    kind: str = field(default="not-puffin", init=False)

    def describe(self, facts: Facts) -> str:
        return "not a Puffin file (no PFA1 magic at byte 0)"


@dataclass(frozen=True)
class Unset:
    """A field deletion vectors require is null in the manifest entry (``key``)."""

    key: str
    kind: str = field(default="unset", init=False)

    def describe(self, facts: Facts) -> str:
        if self.key == "referenced_data_file":
            return "referenced_data_file is null (required for deletion vectors)"
        return f"{self.key} missing (required for deletion vectors)"


@dataclass(frozen=True)
class NoBlob:
    """The Puffin footer has no deletion-vector blob for the data file, nor one at the
    entry's offset."""

    kind: str = field(default="no-blob", init=False)

    def describe(self, facts: Facts) -> str:
        deletes = facts.deletes()
        offset = None if deletes is None else deletes.offset
        return (f"no deletion-vector blob for this data file and none at offset {offset} "
                "in the Puffin footer")


@dataclass(frozen=True)
class OutsideFile:
    """The entry's byte range is not inside the file of ``file-size`` bytes."""

    file_size: int
    kind: str = field(default="outside-file", init=False)

    def describe(self, facts: Facts) -> str:
        start, end = _range(facts)
        return f"range [{start}, {end}) is outside the file of {self.file_size} bytes"


@dataclass(frozen=True)
class TooLarge:
    """The deletion vector is longer than ``limit`` (``--max-blob-size``): not read."""

    limit: int
    kind: str = field(default="too-large", init=False)

    def describe(self, facts: Facts) -> str:
        deletes = facts.deletes()
        length = None if deletes is None else deletes.length
        return (f"deletion vector of {length} bytes is larger than the limit of {self.limit} "
                "bytes; not read (raise --max-blob-size to read it)")


@dataclass(frozen=True)
class Container:
    """The range holds a ``container`` (``puffin``, ``bare-dv``, ...); ``problem`` when it
    could not be read as one."""

    container: str
    problem: str | None
    kind: str = field(default="container", init=False)

    def describe(self, facts: Facts) -> str:
        if self.problem is None:
            return f"the range holds a {self.container} deletion vector, not a Puffin blob"
        start, end = _range(facts)
        return f"{self.container} range [{start}, {end}): {self.problem}"


@dataclass(frozen=True)
class NotLive:
    """The referenced data file is not live in the snapshot."""

    kind: str = field(default="not-live", init=False)

    def describe(self, facts: Facts) -> str:
        return f"data file {facts.data_file()} is not live in the snapshot"


@dataclass(frozen=True)
class Duplicate:
    """``count`` live deletion vectors for one data file (``path``; each in ``files``)."""

    count: int
    kind: str = field(default="duplicate", init=False)

    def describe(self, facts: Facts) -> str:
        return (f"{self.count} deletion vectors for data file {facts.path}; at most one is "
                "allowed")


@dataclass(frozen=True)
class Orphan:
    """A Puffin file under the table that no ``scope`` (``snapshot``: no metadata at all;
    ``statistics entry``) names; ``modified`` is its age (seconds since the epoch, when the
    store says)."""

    scope: str
    size: int
    modified: float | None
    kind: str = field(default="orphan", init=False)

    def describe(self, facts: Facts) -> str:
        return f"Puffin file referenced by no {self.scope}"


@dataclass(frozen=True)
class FileProblem:
    """What checking the file itself found (``validate``'s finding, or why it could not be
    read); ``message`` is that finding's."""

    message: str
    kind: str = field(default="file-problem", init=False)

    def describe(self, facts: Facts) -> str:
        return self.message


@dataclass(frozen=True)
class PartitionStatsIssue:
    """What a partition statistics file gets wrong: ``problem`` (``layout``, ``schema``,
    ``unreadable``, ``order``, ``duplicate``, ``count``, ``missing-row``, ``extra-row``,
    ``total-record-count``); the row's ``partition`` (field name -> value) and ``spec-id``;
    the ``column``; what the spec or the snapshot's manifests say (``expected``) against the
    file (``actual``); ``text`` the reader's words for ``schema`` and ``unreadable``."""

    problem: str
    partition: dict[str, Any] | None = None
    spec_id: int | None = None
    column: str | None = None
    expected: Any = None
    actual: Any = None
    text: str | None = None
    kind: str = field(default="partition-statistics", init=False)

    def where(self) -> str:
        if self.partition is None:
            return ""
        values = ", ".join(f"{k}={v}" for k, v in self.partition.items())
        return f"partition {{{values}}} of spec {self.spec_id}"

    def describe(self, facts: Facts) -> str:
        e, a = self.expected, self.actual
        texts = {
            "layout": "written with Iceberg 1.9.x's field IDs (partition is field 0, not 1): "
                      "Iceberg 1.10 cannot read it and computes in full",
            "schema": f"schema: {self.text}",
            "unreadable": f"not a partition statistics file: {self.text}",
            "order": f"rows are not sorted by partition: {self.where()} comes after a "
                     "greater one",
            "duplicate": f"{self.where()} has {a} rows; one is allowed",
            "count": f"{self.where()}: {self.column} is {a}, the manifests give {e}",
            "missing-row": f"{self.where()} has files in the manifests but no row",
            "extra-row": f"{self.where()} has a row with counts but no files in the manifests",
            "total-record-count":
                f"{self.where()}: total_record_count is {a}, "
                + ("which equality deletes make unknowable from the manifests" if e is None
                   else f"the manifests give {e}"),
        }
        return texts[self.problem]


Detail = (Mismatch | Absent | UnknownSnapshot | OtherSnapshot | UnknownFields | NotPuffin | Unset
          | NoBlob | OutsideFile | TooLarge | Container | NotLive | Duplicate | Orphan
          | FileProblem | PartitionStatsIssue)


@dataclass(frozen=True)
class Facts:
    """What a table finding is about. ``path`` is the file as the table metadata names it (an
    orphan: as its table would name it); ``local_path`` where it was read, when that is
    another location (a moved table, ``--relocate``); ``files`` the content files involved."""

    path: str | None
    local_path: str | None
    snapshot_id: int | None
    about: str
    files: tuple[FileRef, ...]
    detail: Detail

    def deletes(self) -> FileRef | None:
        return next((f for f in self.files if f.content == DELETES), None)

    def data_file(self) -> str | None:
        return next((f.path for f in self.files if f.content == DATA), None)

    def message(self) -> str:
        text = self.detail.describe(self)
        if self.about == ABOUT_FILE:
            return f"{self.path}: {text}"
        if self.about == ABOUT_DV:
            return (f"snapshot {self.snapshot_id}: DV for {self.data_file()} in {self.path}: "
                    f"{text}")
        return f"snapshot {self.snapshot_id}: {text}"


def _range(facts: Facts) -> tuple[int | None, int | None]:
    deletes = facts.deletes()
    if deletes is None or deletes.offset is None or deletes.length is None:
        return None, None
    return deletes.offset, deletes.offset + deletes.length


def finding(code: str, facts: Facts, severity: Severity = Severity.ERROR,
            offset: int | None = None, blob_index: int | None = None) -> Finding:
    """A finding about ``facts``, its message rendered from them."""
    return Finding(code, severity, facts.message(), offset, blob_index, facts)


def facts_of(found: Finding) -> Facts | None:
    """A table finding's facts; ``None`` for a file's own finding (it has none)."""
    return found.facts if isinstance(found.facts, Facts) else None


def detail_of(found: Finding) -> Detail | None:
    """A table finding's typed detail; ``None`` for a file's own finding."""
    facts = facts_of(found)
    return None if facts is None else facts.detail
