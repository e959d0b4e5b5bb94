"""The statistics of a repair's new snapshot (issue 27): a deletion-vector repair commits a
new snapshot, and Spark uses only statistics registered for exactly the snapshot it reads.

- When the new snapshot has exactly the live rows of its parent (every DV repair of the plan
  is ``dv.frame`` or ``dv.referenced-file``: the same positions, now framed or naming the
  manifest's data file), the parent's statistics file is carried to it in the same commit
  (``stats.carry``): a new file ``metadata/<new-snapshot-id>-<uuid>.stats`` holding the
  parent's blobs copied as stored (bytes, codec, fields, properties), each blob's
  ``snapshot-id`` and ``sequence-number`` the new snapshot's (a theta sketch's bytes name no
  snapshot), registered for the new snapshot. Its inputs are read while planning (the footer,
  each blob's bytes): a file that cannot be carried is not in the plan, the follow-up says so.
- When it does not (a ``dv.merge`` deletes the union of the duplicates' positions: rows the
  parent's statistics counted may be gone), nothing is carried and the plan names the
  ``stats compute`` that gives the new snapshot statistics (a :class:`~.model.FollowUp`).
- A parent without statistics of its own has nothing to carry (Trino's nearest ancestor's
  statistics are the new snapshot's ancestors' too).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from puffin_cli.analysis.repair.dvs import FRAME, REFERENCED_FILE
from puffin_cli.analysis.repair.model import FollowUp, Repair
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import AddSnapshot, StatisticsFileEntry, TableUpdate
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.format.writer import PuffinWriter

CARRY = "stats.carry"
SAME_ROWS = (FRAME, REFERENCED_FILE)  # repairs after which the live rows are the parent's


@dataclass(frozen=True)
class Carry:
    """``stats.carry``: the parent snapshot's statistics file (``path``, as the metadata names
    it) copied to the repair's new snapshot."""

    repair: Repair
    parent_id: int
    path: str


def plan_carry(table: Table, dv_repairs: Sequence[Repair], removed: set[int],
               restore_command: str, *,
               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> tuple[Carry | None,
                                                                    list[FollowUp]]:
    """What happens to the current snapshot's statistics when the plan's DV repairs commit a
    new snapshot: carried (:class:`Carry`), or a follow-up that restores them. ``removed``:
    the snapshots whose statistics entry the plan removes (nothing to carry: their own
    follow-up says what restores them); ``restore_command`` has ``{snapshot}`` for the
    snapshot ID."""
    parent = table.current_snapshot()
    if not dv_repairs or parent is None:
        return None, []
    parent_id = parent.snapshot_id
    entries = [e for e in table.metadata.statistics if e.snapshot_id == parent_id]
    if not entries or parent_id in removed:
        return None, []
    command = new_snapshot_command(restore_command, None)
    other = sorted({r.kind for r in dv_repairs} - set(SAME_ROWS))
    if other:
        return None, [FollowUp(None, command, (
            f"the repair's new snapshot has no statistics: {', '.join(other)} changes its live "
            f"rows, so snapshot {parent_id}'s statistics do not describe it"))]
    if len(entries) > 1:
        return None, [FollowUp(None, command, (
            f"the repair's new snapshot has no statistics: snapshot {parent_id} has "
            f"{len(entries)} statistics entries, and which one to carry is not known"))]
    (entry,) = entries
    try:
        _blobs(table, entry.path, parent_id, max_blob_size)
    except PuffinError as exc:  # StorageError too
        return None, [FollowUp(None, command, (
            f"the repair's new snapshot has no statistics: snapshot {parent_id}'s file "
            f"cannot be carried to it: {exc}"))]
    return Carry(Repair(CARRY, (), (entry.path,), (
        f"the new snapshot has exactly the live rows of snapshot {parent_id} (the same "
        "positions, only framed or naming the manifest's data file): its statistics are "
        "copied to the new snapshot in the same commit (blobs as stored, with the new "
        "snapshot's ID and sequence number)"), parent_id), parent_id, entry.path), []


def new_snapshot_command(restore_command: str, snapshot_id: int | None) -> str:
    """The ``stats compute`` for the repair's new snapshot: before the commit its ID is not
    known, and the command computes the current snapshot (the new one, once committed)."""
    if snapshot_id is not None:
        return restore_command.format(snapshot=snapshot_id)
    return restore_command.replace(" --snapshot {snapshot}", "")


def _blobs(table: Table, path: str, snapshot_id: int,
           max_blob_size: int) -> tuple[tuple[BlobMetadata, bytes], ...]:
    """Each blob of the statistics file with its stored bytes, every one computed for
    ``snapshot_id`` (else the file is not that snapshot's to carry)."""
    with PuffinReader(table.resolve(path), fileio=table.fileio,
                      max_blob_size=max_blob_size) as reader:
        blobs = reader.metadata.blobs
        other = [b.snapshot_id for b in blobs if b.snapshot_id != snapshot_id]
        if other:
            raise PuffinError(f"a blob was computed for snapshot {other[0]}", path=path)
        return tuple((b, reader.read_raw(b)) for b in blobs)


def write_carried(base: Table, carry: Carry, snapshot: AddSnapshot, *,
                  max_blob_size: int = DEFAULT_MAX_BLOB_SIZE
                  ) -> tuple[TableUpdate, str] | None:
    """Write the carried statistics file for the new ``snapshot`` (built on ``base``): the
    ``set-statistics`` update and the file's storage location; ``None`` when ``base`` no
    longer registers the planned file for the parent (another writer changed it)."""
    from puffin_cli.analysis.stats.steps import statistics_file_name
    from puffin_cli.analysis.table.updates import SetStatistics
    from puffin_cli.storage import join

    if not any(e.snapshot_id == carry.parent_id and e.path == carry.path
               for e in base.metadata.statistics):
        return None
    blobs = _blobs(base, carry.path, carry.parent_id, max_blob_size)
    new_id = snapshot.snapshot_id
    sequence = int(snapshot.snapshot["sequence-number"])
    name = statistics_file_name(new_id)
    target = join(base.statistics_dir, name)
    with PuffinWriter(target, fileio=base.fileio) as writer:
        for blob, stored in blobs:
            writer.add_stored_blob(blob.type, stored, fields=blob.fields, snapshot_id=new_id,
                                   sequence_number=sequence, properties=blob.properties,
                                   codec=blob.compression_codec)
        result = writer.finish()
    entry = StatisticsFileEntry.of_footer(new_id, base.statistics_location(name),
                                          result.file_size, result.footer_size,
                                          result.metadata.blobs)
    return SetStatistics(entry), target
