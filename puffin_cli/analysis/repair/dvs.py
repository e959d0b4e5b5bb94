"""The deletion-vector repairs of ``puffin repair``: planned from ``puffin table``'s findings
(their facts, never their messages), carried out as new Puffin files and the delete-file
entries a new snapshot replaces (:func:`~.table.snapshot_writer.replace_delete_files`).

=======================  ===========================  ==============================================
repair                   finding                      what it does
=======================  ===========================  ==============================================
``dv.merge``             ``table.dv.duplicate``       the live DVs of one data file become one DV
                                                      holding the union of their positions
``dv.frame``             ``table.dv.container``       a DV stored as a bare blob (container
                         (``bare-dv``)                ``bare-dv``: no Puffin magic, no footer) is
                                                      written into a Puffin file
``dv.referenced-file``   ``table.dv.referenced-file`` a DV whose blob names another data file than
                         (a :class:`Mismatch`)        its manifest entry is written with the
                                                      manifest's data file
=======================  ===========================  ==============================================

Repairs change the current snapshot only (a new snapshot replaces its delete files; history is
kept). Each repaired DV is decoded from its range (through the table's storage, within
``--max-blob-size``) and written again as Iceberg Java writes it (``puffin write --dv``'s
encoding), with the blob properties ``referenced-data-file`` (the manifest's data file) and
``cardinality``; all DVs of one repair run go into one new Puffin file in the table's
``data/`` directory, as Iceberg Java writes the DVs of one commit. The entries they replace
are removed; other DVs in the same old Puffin files stay live and untouched. Delta's and
Paimon's own containers are recognised by ``puffin table`` but not converted.

A :class:`~.model.Repair`'s ``paths`` name the files as the metadata does, the data file
first: for ``dv.merge`` then each DV's delete file; for the others the DV's delete file.

Every input a repair needs is read while planning: the positions of each DV it rewrites
(decoded through the table's storage, within ``--max-blob-size``). A repair whose input cannot
be read is not planned; its finding is left as it is, with the reason.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis import dv_containers
from puffin_cli.analysis.repair.model import Repair, Unrepairable
from puffin_cli.analysis.table.facts import (
    ABOUT_DV,
    Container,
    Duplicate,
    Facts,
    Mismatch,
    detail_of,
    facts_of,
)
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.snapshot_writer import DeleteFile
from puffin_cli.blobs.deletion_vector import (
    decode_deletion_vector,
    dv_blob_properties,
    encode_deletion_vector,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE, DV_BLOB_TYPE, ROW_POSITION_FIELD_ID
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import join

MERGE = "dv.merge"
FRAME = "dv.frame"
REFERENCED_FILE = "dv.referenced-file"

DUPLICATE_CODE = "table.dv.duplicate"
CONTAINER_CODE = "table.dv.container"
REFERENCED_FILE_CODE = "table.dv.referenced-file"

# Findings that say a DV's positions cannot be read: a merge that needs them is not planned.
_UNREADABLE = ("table.dv.missing", "table.dv.length", "table.dv.offset", "blob.too-large",
               CONTAINER_CODE)

# A DV entry as findings name it: delete file, offset, length, data file.
_DvKey = tuple[str, int | None, int | None, str | None]


@dataclass(frozen=True)
class DvRewrite:
    """What :func:`write_dv_repairs` did: the live delete-file entries to remove, the new
    ones to add (for :func:`~puffin_cli.analysis.table.snapshot_writer.replace_delete_files`),
    and the files it wrote (storage locations, removed when the commit fails)."""

    removed: tuple[ContentFile, ...]
    added: tuple[DeleteFile, ...]
    written: tuple[str, ...]


def _key(entry: ContentFile) -> _DvKey:
    return entry.path, entry.content_offset, entry.content_size, entry.referenced_data_file


def _fact_key(facts: Facts) -> _DvKey | None:
    deletes = facts.deletes()
    if deletes is None or deletes.path is None:
        return None
    return deletes.path, deletes.offset, deletes.length, facts.data_file()


def _live_dvs(table: Table) -> tuple[int | None, dict[str, list[ContentFile]],
                                     dict[str, ContentFile]]:
    """The current snapshot's ID, its live DVs by data file, and its live data files."""
    snapshot = table.current_snapshot()
    if snapshot is None:
        return None, {}, {}
    files = LiveFiles.of(table.manifests, snapshot)
    by_data_file: defaultdict[str, list[ContentFile]] = defaultdict(list)
    for entry in files.delete_files:
        if entry.is_dv and entry.referenced_data_file is not None:
            by_data_file[entry.referenced_data_file].append(entry)
    for entries in by_data_file.values():
        entries.sort(key=lambda e: (e.path, e.content_offset or 0))
    return snapshot.snapshot_id, dict(by_data_file), files.data


def _unreadable(findings: Sequence[Finding]) -> dict[_DvKey, str]:
    """DV entry -> why its positions cannot be read (the first such finding's message)."""
    out: dict[_DvKey, str] = {}
    for found in findings:
        facts = facts_of(found)
        if found.code not in _UNREADABLE or facts is None or facts.about != ABOUT_DV:
            continue
        if _is_bare(found):
            continue  # a bare DV decodes: it is repaired, not in the way
        key = _fact_key(facts)
        if key is not None:
            out.setdefault(key, found.message)
    return out


def _is_bare(found: Finding) -> bool:
    detail = detail_of(found)
    return found.code == CONTAINER_CODE and isinstance(detail, Container) and \
        detail.container == dv_containers.BARE_DV and detail.problem is None


def is_dv_finding(found: Finding) -> bool:
    """Whether :func:`plan_dv_repairs` answers for ``found`` (a repair, or why none): a
    duplicate, a bare DV, a ``referenced-data-file`` that differs or is missing. Every other
    DV finding (a container that does not decode, Delta's or Paimon's, a wrong record count,
    ...) has no repair here."""
    detail = detail_of(found)
    return (found.code == DUPLICATE_CODE and isinstance(detail, Duplicate)) or _is_bare(found) \
        or (found.code == REFERENCED_FILE_CODE and detail is not None)


class _Plan:
    def __init__(self, table: Table, findings: Sequence[Finding], max_blob_size: int) -> None:
        self.table = table
        self.max_blob_size = max_blob_size
        self.snapshot_id, self.live, self.data = _live_dvs(table)
        self.blocked = _unreadable(findings)
        self.repairs: dict[str, Repair] = {}  # by data file
        self.unrepairable: list[Unrepairable] = []

    def refuse(self, code: str, path: str | None, reason: str, severity: str = "error"
               ) -> None:
        found = Unrepairable(code, path, reason, severity)
        if found not in self.unrepairable:
            self.unrepairable.append(found)

    def unreadable(self, entries: Sequence[ContentFile]) -> str | None:
        """Why the positions of one of ``entries`` cannot be read (``None``: all can), read
        now as applying the repair will read them."""
        for entry in entries:
            try:
                _positions(self.table, entry, self.max_blob_size)
            except PuffinError as exc:  # StorageError too
                return f"{entry.path}: {exc.message}"
        return None

    def live_entry(self, key: _DvKey) -> ContentFile | None:
        path, offset, length, data_file = key
        return next((e for e in self.live.get(data_file or "", ())
                     if _key(e) == (path, offset, length, data_file)), None)

    def not_current(self, code: str, path: str | None, facts: Facts) -> None:
        self.refuse(code, path, f"not in the current snapshot {self.snapshot_id} (found in "
                    f"snapshot {facts.snapshot_id}): repairs change only the current snapshot; "
                    "history is kept", "info")

    def merge(self, found: Finding, facts: Facts) -> None:
        data_file = facts.path
        entries = self.live.get(data_file or "", [])
        if data_file is None or len(entries) < 2:
            self.not_current(found.code, data_file, facts)
            return
        blocked = [self.blocked[_key(e)] for e in entries if _key(e) in self.blocked]
        why = blocked[0] if blocked else self.unreadable(entries)
        if why is not None:
            self.refuse(found.code, data_file, "the positions of every DV are needed for "
                        f"their union, and one cannot be read: {why}; its finding says what "
                        "to do")
            return
        self.repairs[data_file] = Repair(
            MERGE, (found.code,), (data_file, *(e.path for e in entries)),
            f"{len(entries)} live deletion vectors for one data file become one holding the "
            "union of their positions, in a new Puffin file", self.snapshot_id)

    def rewrite(self, found: Finding, facts: Facts, kind: str, reason: str) -> None:
        key = _fact_key(facts)
        entry = None if key is None else self.live_entry(key)
        if entry is None or entry.referenced_data_file is None:
            self.not_current(found.code, facts.path, facts)
            return
        data_file = entry.referenced_data_file
        before = self.repairs.get(data_file)
        if before is None:
            why = self.unreadable([entry])
            if why is not None:
                self.refuse(found.code, entry.path, f"the deletion vector of {data_file} "
                            f"cannot be read to write it again: {why}")
                return
            self.repairs[data_file] = Repair(kind, (found.code,), (data_file, entry.path),
                                             reason, self.snapshot_id)
        elif found.code not in before.finding_codes:  # the merge rewrites this DV too
            self.repairs[data_file] = Repair(
                before.kind, (*before.finding_codes, found.code), before.paths, before.reason,
                before.snapshot_id)


def plan_dv_repairs(table: Table, findings: Sequence[Finding], *,
                    max_blob_size: int = DEFAULT_MAX_BLOB_SIZE
                    ) -> tuple[list[Repair], list[Unrepairable]]:
    """The deletion-vector repairs ``findings`` (``puffin table``'s, of ``table``) call for,
    and the findings of these kinds that cannot be repaired, with why. Reads the current
    snapshot's manifests and the positions of every DV a repair rewrites (within
    ``max_blob_size``); writes nothing."""
    plan = _Plan(table, findings, max_blob_size)
    chosen = [(f, facts) for f in findings if (facts := facts_of(f)) is not None]
    for found, facts in chosen:  # merges first: they take in the other repairs of a data file
        if found.code == DUPLICATE_CODE and isinstance(facts.detail, Duplicate):
            plan.merge(found, facts)
    for found, facts in chosen:
        detail = facts.detail
        if _is_bare(found):
            plan.rewrite(found, facts, FRAME, "a bare deletion-vector blob without Puffin "
                         "magic or footer (Iceberg Java's Puffin reader and pyiceberg refuse "
                         "it), written into a Puffin file")
        elif found.code == REFERENCED_FILE_CODE and isinstance(detail, Mismatch):
            plan.rewrite(found, facts, REFERENCED_FILE,
                         f"the blob names data file {detail.actual}, the manifest "
                         f"{detail.expected} (pyiceberg matches by the blob and keeps the "
                         "deleted rows): written with the manifest's data file")
        elif found.code == REFERENCED_FILE_CODE:
            plan.refuse(found.code, facts.path, "the manifest entry names no data file: "
                        "which data file the DV deletes from is not known")
    repairs = sorted(plan.repairs.values(), key=lambda r: (r.kind, r.paths))
    return repairs, plan.unrepairable


def _positions(table: Table, entry: ContentFile, max_blob_size: int) -> Any:
    """The positions (``pyroaring.BitMap64``) of a DV entry, read within ``max_blob_size``."""
    offset, length = entry.content_offset, entry.content_size
    if offset is None or length is None:
        raise PuffinError("content_offset / content_size_in_bytes missing (required for "
                          "deletion vectors)", code="table.dv.offset", path=entry.path)
    if length > max_blob_size:
        raise PuffinError(f"deletion vector of {length} bytes is larger than the limit of "
                          f"{max_blob_size} bytes (raise --max-blob-size to read it)",
                          code="blob.too-large", path=entry.path, offset=offset)
    with table.fileio.new_input(table.resolve(entry.path)) as source:
        data = source.read(offset, length)
    try:
        return decode_deletion_vector(data, offset).bitmap
    except PuffinError as exc:
        raise PuffinError(exc.message, code=exc.code, path=entry.path,
                          offset=exc.offset) from None


def _replaced(repair: Repair, live: dict[str, list[ContentFile]]) -> tuple[str, list[ContentFile]]:
    """The repair's data file and the live DV entries it replaces."""
    if repair.kind == MERGE:
        data_file = repair.paths[0]
        entries = live.get(data_file, [])
        if len(entries) < 2:
            entries = []
    elif repair.kind in (FRAME, REFERENCED_FILE):
        data_file = repair.paths[0]
        entries = [e for e in live.get(data_file, []) if e.path == repair.paths[1]]
    else:
        raise ValueError(f"not a deletion-vector repair: {repair.kind}")
    if not entries:
        raise PuffinError(f"the deletion vector(s) of {data_file} that repair {repair.kind} "
                          "replaces are no longer live in the current snapshot; plan again",
                          code="repair.stale", path=repair.paths[0])
    return data_file, entries


def write_dv_repairs(table: Table, repairs: Sequence[Repair], out_dir: str, *,
                     max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> DvRewrite:
    """Carry out the deletion-vector ``repairs`` (others are ignored) on ``table``'s current
    snapshot: one new Puffin file, created under ``out_dir`` (a storage location in the
    table's directory, normally :attr:`~puffin_cli.analysis.table.loading.Table.data_dir`),
    holding one DV per repaired data file. Nothing is written when there is nothing to
    repair; a failure leaves no file behind."""
    from pyroaring import BitMap64

    chosen = [r for r in repairs if r.kind in (MERGE, FRAME, REFERENCED_FILE)]
    if not chosen:
        return DvRewrite((), (), ())
    _snapshot_id, live, data_files = _live_dvs(table)
    merged: list[tuple[str, list[ContentFile], Any]] = []
    for repair in chosen:
        data_file, entries = _replaced(repair, live)
        positions = BitMap64()
        for entry in entries:
            positions |= _positions(table, entry, max_blob_size)
        merged.append((data_file, entries, positions))
    removed = tuple(e for _data_file, entries, _positions in merged for e in entries)
    kept = [(data_file, positions) for data_file, _entries, positions in merged if positions]
    if not kept:  # DVs without positions: removing them is the whole repair
        return DvRewrite(removed, (), ())
    target = join(out_dir, f"00000-0-{uuid.uuid4()}-00001-deletes.puffin")
    with PuffinWriter(target, fileio=table.fileio) as writer:
        blobs = [writer.add_blob(DV_BLOB_TYPE, encode_deletion_vector(positions),
                                 fields=[ROW_POSITION_FIELD_ID],
                                 properties=dv_blob_properties(data_file, len(positions)))
                 for data_file, positions in kept]
        result = writer.finish()
    location = table.location_of(target)
    added = []
    for (data_file, positions), blob in zip(kept, blobs, strict=True):
        template = data_files.get(data_file) or next(e for e in removed
                                                     if e.referenced_data_file == data_file)
        added.append(DeleteFile(
            path=location, file_format="puffin", spec_id=template.spec_id,
            partition=template.partition, record_count=len(positions),
            file_size=result.file_size, referenced_data_file=data_file,
            content_offset=blob.offset, content_size=blob.length))
    return DvRewrite(removed, tuple(added), (target,))
