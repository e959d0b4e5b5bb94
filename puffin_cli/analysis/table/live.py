"""The live files of a snapshot: its data files and delete files (position delete files,
deletion vectors, equality delete files) with their data sequence numbers, read from its
manifests (:mod:`.manifests`) once. Every reader of live files goes through :class:`LiveFiles`:
the statistics plan, ``puffin table``'s walk, the orphan checks and the catalog scan.

A :class:`LiveFiles` is built for one snapshot (:meth:`LiveFiles.of`) or moved from one
snapshot to the next (:meth:`LiveFiles.walk`): between two snapshots only the manifests that
differ are applied, so many snapshots cost each manifest once. :meth:`LiveFiles.changes_since`
gives what changed between an ancestor and a later snapshot (data files added and removed,
delete files added and removed), by file.

Which deletion vector applies to a data file (Iceberg table spec, "Scan Planning"): the one
whose ``referenced_data_file`` is the data file's path, when the data file's data sequence
number is at most the DV's (:func:`dv_applies`). A snapshot with two live DVs for one data file,
or a DV older than its data file, cannot be read as Iceberg reads it: Iceberg Java's
``DeleteFileIndex`` fails the scan ("Can't index multiple DVs", "DV data sequence number ...
must be greater than or equal to data file sequence number"). :meth:`LiveFiles.dv_problems`
names both; ``puffin table`` reports them (``table.dv.duplicate``, ``table.dv.sequence``) and
``puffin stats compute`` refuses such a snapshot.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from puffin_cli.analysis.table.manifests import (
    CONTENT_DATA,
    ContentFile,
    ManifestKey,
    ManifestReader,
)
from puffin_cli.analysis.table.metadata import Snapshot

# A delete file entry: its manifest and its index among the manifest's live entries.
DeleteId = tuple[ManifestKey, int]


def dv_applies(dv: ContentFile, data: ContentFile) -> bool:
    """Whether a deletion vector can apply to the data file it references: the data file's
    data sequence number is at most the DV's (spec, "Scan Planning")."""
    return dv.sequence_number >= data.sequence_number


@dataclass(frozen=True)
class LiveChanges:
    """What changed from one snapshot's live files to another's: data files added (or
    replaced by another entry) and removed, delete files added and removed."""

    data_added: tuple[ContentFile, ...] = ()
    data_removed: tuple[ContentFile, ...] = ()
    deletes_added: tuple[tuple[DeleteId, ContentFile], ...] = ()
    deletes_removed: tuple[tuple[DeleteId, ContentFile], ...] = ()


@dataclass(frozen=True)
class DvProblem:
    """A data file whose deletion vectors Iceberg cannot apply: more than one (``dvs``), or
    one older than the data file (``data`` set, ``dvs`` the one DV)."""

    code: str  # the finding of ``puffin table``: table.dv.duplicate or table.dv.sequence
    data_file: str
    dvs: tuple[ContentFile, ...]
    data: ContentFile | None = None


class LiveFiles:
    """The live files of one snapshot (see the module docstring). ``data`` maps a data file's
    path to its entry (in manifest order); ``deletes`` every live delete file entry, of which
    ``dv_count`` are deletion vectors."""

    def __init__(self) -> None:
        self.manifests: dict[ManifestKey, list[ContentFile]] = {}
        self.data: dict[str, ContentFile] = {}
        self.data_rows = 0
        self.deletes: dict[DeleteId, ContentFile] = {}
        self.dvs_by_data_file: defaultdict[str, set[DeleteId]] = defaultdict(set)
        self.dv_count = 0

    @classmethod
    def of(cls, reader: ManifestReader, snapshot: Snapshot) -> LiveFiles:
        """The live files of ``snapshot``: its manifest list and its manifests, read once."""
        live = cls()
        live.advance(next(reader.snapshots_manifests([snapshot])))
        return live

    @classmethod
    def walk(cls, reader: ManifestReader, snapshots: Sequence[Snapshot], *,
             deletes_only: bool = False
             ) -> Iterator[tuple[Snapshot, LiveFiles, LiveChanges]]:
        """One :class:`LiveFiles`, moved through ``snapshots`` in order: each snapshot with
        the state (the same object, updated) and what changed since the one before.
        ``deletes_only`` skips the data manifests (for a caller that needs delete files only)."""
        live = cls()
        every = reader.snapshots_manifests(snapshots, deletes_only=deletes_only)
        for snapshot, manifests in zip(snapshots, every, strict=True):
            yield snapshot, live, live.advance(manifests)

    @classmethod
    def between(cls, reader: ManifestReader, base: Snapshot, target: Snapshot) -> LiveChanges:
        """What changed from ``base`` (an ancestor) to ``target``, by file
        (:meth:`changes_since`); the manifests both list are read once."""
        states = cls.walk(reader, [base, target])
        _, first, _ = next(states)
        before = first.copy()
        _, after, _ = next(states)
        return after.changes_since(before)

    @property
    def delete_files(self) -> tuple[ContentFile, ...]:
        """Every live delete file entry, in manifest order."""
        return tuple(self.deletes.values())

    def copy(self) -> LiveFiles:
        other = LiveFiles()
        other.manifests = dict(self.manifests)
        other.data = dict(self.data)
        other.data_rows = self.data_rows
        other.deletes = dict(self.deletes)
        other.dv_count = self.dv_count
        for path, ids in self.dvs_by_data_file.items():
            other.dvs_by_data_file[path] = set(ids)
        return other

    def advance(self, manifests: Iterable[tuple[ManifestKey, list[ContentFile]]]
                ) -> LiveChanges:
        """Make the state the one of a snapshot whose manifests are ``manifests``; what
        changed, manifest by manifest (entries of manifests no longer listed, and of manifests
        newly listed)."""
        listed = dict(manifests)
        data_added: list[ContentFile] = []
        data_removed: list[ContentFile] = []
        deletes_added: list[tuple[DeleteId, ContentFile]] = []
        deletes_removed: list[tuple[DeleteId, ContentFile]] = []
        for key in [k for k in self.manifests if k not in listed]:
            for index, entry in enumerate(self.manifests.pop(key)):
                if entry.content == CONTENT_DATA:
                    if self.data.get(entry.path) is entry:
                        del self.data[entry.path]
                        self.data_rows -= entry.record_count
                        data_removed.append(entry)
                    continue
                delete_id = (key, index)
                del self.deletes[delete_id]
                if entry.is_dv:
                    self.dvs_by_data_file[entry.referenced_data_file or ""].discard(delete_id)
                    self.dv_count -= 1
                deletes_removed.append((delete_id, entry))
        for key, entries in listed.items():
            if key in self.manifests:
                continue
            self.manifests[key] = entries
            for index, entry in enumerate(entries):
                if entry.content == CONTENT_DATA:
                    before = self.data.get(entry.path)
                    self.data_rows += entry.record_count - (0 if before is None
                                                            else before.record_count)
                    self.data[entry.path] = entry
                    data_added.append(entry)
                    continue
                delete_id = (key, index)
                self.deletes[delete_id] = entry
                if entry.is_dv:
                    self.dvs_by_data_file[entry.referenced_data_file or ""].add(delete_id)
                    self.dv_count += 1
                deletes_added.append((delete_id, entry))
        return LiveChanges(tuple(data_added), tuple(data_removed), tuple(deletes_added),
                           tuple(deletes_removed))

    def changes_since(self, base: LiveFiles) -> LiveChanges:
        """What changed from ``base`` to this state, by file rather than by manifest: data
        files whose path is new or whose entry's data sequence number changed, those gone,
        and delete files (by path, and blob range for a DV) added and removed."""
        def same_data(a: ContentFile, b: ContentFile | None) -> bool:
            return b is not None and a.sequence_number == b.sequence_number

        def delete_key(entry: ContentFile) -> tuple[object, ...]:
            return (entry.path, entry.content_offset, entry.content_size,
                    entry.referenced_data_file, entry.sequence_number)

        before = {delete_key(e) for e in base.deletes.values()}
        after = {delete_key(e) for e in self.deletes.values()}
        return LiveChanges(
            tuple(e for p, e in self.data.items() if not same_data(e, base.data.get(p))),
            tuple(e for p, e in base.data.items() if not same_data(e, self.data.get(p))),
            tuple((i, e) for i, e in self.deletes.items() if delete_key(e) not in before),
            tuple((i, e) for i, e in base.deletes.items() if delete_key(e) not in after))

    def dvs_for(self, data_file: str) -> tuple[ContentFile, ...]:
        """The live deletion vectors that reference ``data_file``."""
        return tuple(self.deletes[i] for i in sorted(self.dvs_by_data_file.get(data_file, ()),
                                                     key=_delete_order))

    def dv_problems(self) -> list[DvProblem]:
        """The data files whose deletion vectors Iceberg cannot apply (module docstring), in
        data file order."""
        problems = []
        for path in sorted(p for p, ids in self.dvs_by_data_file.items() if ids):
            dvs = self.dvs_for(path)
            data = self.data.get(path)
            if len(dvs) > 1:
                problems.append(DvProblem("table.dv.duplicate", path, dvs, data))
            elif data is not None and not dv_applies(dvs[0], data):
                problems.append(DvProblem("table.dv.sequence", path, dvs, data))
        return problems


def _delete_order(delete_id: DeleteId) -> tuple[str, int, int]:
    (path, sequence, _snapshot), index = delete_id
    return path, sequence, index
