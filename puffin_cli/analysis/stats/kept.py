"""What a new statistics file keeps of the snapshot's statistics file: ``set-statistics``
replaces a snapshot's statistics file as a whole, so the blobs of the columns not computed again
(``--columns``) are copied into the new file as stored (bytes, codec and properties, as
``write --copy-blob`` copies them) rather than lost.

A blob of the registered file is
- *replaced* when it is a theta sketch and one of its fields is a column computed again (a blob
  of another type, another engine's statistics of that column, is not what the new sketch
  replaces);
- *kept* when it describes this snapshot (its ``snapshot-id``), each of its fields is in the
  snapshot's schema, its bytes can be read and (a theta sketch) its header is DataSketches'
  compact sketch; a theta sketch of a uuid column also needs the file's uuid hashing
  (``puffin-cli.uuid-hash``; a file without it is Iceberg's, which hashes the text) to be the new
  file's;
- *dropped* otherwise, with the reason (also every blob of a file that cannot be read).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from puffin_cli.analysis.table.fields import Field, FieldNames
from puffin_cli.errors import PuffinError
from puffin_cli.format import codecs
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE
from puffin_cli.storage import StorageError

if TYPE_CHECKING:
    from puffin_cli.analysis.stats.plan import StatsPlan
    from puffin_cli.format.writer import PuffinWriter

UUID_HASH_PROPERTY = "puffin-cli.uuid-hash"  # file property: "text" or "bytes"


@dataclass(frozen=True)
class OtherColumn:
    """A blob of the snapshot's registered statistics file that no column computed now
    replaces: ``kept`` (copied into the new file) or dropped, and why."""

    fields: tuple[int, ...]
    name: str  # the fields' names in the snapshot's schema, comma-separated
    blob_type: str
    ndv: int | None
    kept: bool
    reason: str | None = None  # why it was dropped


@dataclass(frozen=True)
class KeptBlobs:
    """The registered statistics file of the plan's snapshot (``source``, ``None`` when it has
    none) and what the new file does with each blob no column computed now replaces."""

    source: str | None
    others: tuple[OtherColumn, ...]
    _blobs: tuple[BlobMetadata, ...] = ()  # the kept ones, in file order

    def copy_into(self, writer: PuffinWriter, plan: StatsPlan) -> tuple[OtherColumn, ...]:
        """Copy the kept blobs into ``writer`` as stored; the outcome of every other column
        (a kept blob that can no longer be read is dropped)."""
        if not self._blobs:
            return self.others
        reasons: list[str | None] = []
        try:
            with _reader(plan, self.source) as reader:
                for blob in self._blobs:
                    reasons.append(_copy(reader, blob, writer))
        except (PuffinError, StorageError) as exc:
            why = f"the statistics file cannot be read: {_text(exc)}"
            reasons.extend([why] * (len(self._blobs) - len(reasons)))
        outcome = iter(reasons)
        return tuple(_dropped(o, next(outcome)) if o.kept else o for o in self.others)


def _dropped(other: OtherColumn, reason: str | None) -> OtherColumn:
    return other if reason is None else replace(other, kept=False, reason=reason)


def _text(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _reader(plan: StatsPlan, source: str | None) -> PuffinReader:
    assert source is not None
    return PuffinReader(plan.table.resolve(source), fileio=plan.table.fileio)


def _copy(reader: PuffinReader, blob: BlobMetadata, writer: PuffinWriter) -> str | None:
    """Copy one blob as stored; why not when its bytes cannot be read or checked."""
    try:
        stored = reader.read_raw(blob)
        if blob.type == THETA_BLOB_TYPE:
            from puffin_cli.blobs.theta.compact import read_header

            read_header(codecs.decompress(blob.compression_codec, stored,
                                          reader.max_blob_size), blob)
    except (PuffinError, StorageError) as exc:
        return f"its bytes cannot be read: {_text(exc)}"
    writer.add_stored_blob(blob.type, stored, fields=blob.fields, snapshot_id=blob.snapshot_id,
                           sequence_number=blob.sequence_number, properties=blob.properties,
                           codec=blob.compression_codec)
    return None


def kept_blobs(plan: StatsPlan, uuid_hash: str) -> KeptBlobs:
    """What a new statistics file for the plan's snapshot keeps of the registered one (the
    columns of ``plan`` are computed again; ``uuid_hash`` is the new file's hashing)."""
    snapshot_id = plan.snapshot.snapshot_id
    entry = next((s for s in plan.metadata.statistics if s.snapshot_id == snapshot_id), None)
    if entry is None:
        return KeptBlobs(None, ())
    try:
        with _reader(plan, entry.path) as reader:
            blobs = reader.metadata.blobs
            hashing = reader.metadata.properties.get(UUID_HASH_PROPERTY, "text")
    except (PuffinError, StorageError) as exc:
        why = f"the statistics file cannot be read: {_text(exc)}"
        names = plan.table.field_names(snapshot_id)
        return KeptBlobs(entry.path, tuple(
            OtherColumn(b.fields, _names(names, b.fields), b.type, None, False, why)
            for b in entry.blobs if not _replaced(plan, b.type, b.fields)))
    others, kept = [], []
    names = plan.table.field_names(snapshot_id)
    for blob, reason in _judged(plan, blobs, hashing, uuid_hash):
        ndv = blob.properties.get(NDV_PROPERTY)
        others.append(OtherColumn(blob.fields, _names(names, blob.fields), blob.type,
                                  int(ndv) if ndv is not None and ndv.isdigit() else None,
                                  reason is None, reason))
        if reason is None:
            kept.append(blob)
    return KeptBlobs(entry.path, tuple(others), tuple(kept))


def _replaced(plan: StatsPlan, blob_type: str, fields: tuple[int, ...]) -> bool:
    computed = {c.field_id for c in plan.columns}
    return blob_type == THETA_BLOB_TYPE and any(f in computed for f in fields)


def _judged(plan: StatsPlan, blobs: tuple[BlobMetadata, ...], hashing: str,
            uuid_hash: str) -> Iterator[tuple[BlobMetadata, str | None]]:
    """Each blob no column computed now replaces, with why it is dropped (``None``: kept)."""
    snapshot_id = plan.snapshot.snapshot_id
    names = plan.table.field_names(snapshot_id)
    for blob in blobs:
        if _replaced(plan, blob.type, blob.fields):
            continue
        missing = [f for f in blob.fields if names.field(f) is None]
        if blob.snapshot_id != snapshot_id:
            yield blob, f"computed for snapshot {blob.snapshot_id}, not this one"
        elif missing:
            yield blob, (f"field {', '.join(map(str, missing))} is not in the snapshot's "
                         "schema")
        elif (blob.type == THETA_BLOB_TYPE and hashing != uuid_hash
              and any(_is_uuid(names.field(f)) for f in blob.fields)):
            yield blob, (f"its uuid values were hashed as {hashing}, this file hashes them "
                         f"as {uuid_hash} (--uuid-hash)")
        else:
            yield blob, None


def _is_uuid(field: Field | None) -> bool:
    return field is not None and field.type == "uuid"


def _names(names: FieldNames, fields: tuple[int, ...]) -> str:
    return ",".join(names.name(f) or f"field {f}" for f in fields)
