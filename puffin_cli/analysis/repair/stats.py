"""Repairs of ``statistics`` and ``partition-statistics`` entries (the ``table.stats.*``
findings of :mod:`puffin_cli.analysis.table.checks`).

- ``table.stats.size``, ``table.stats.footer-size``, ``table.stats.blob-metadata`` (a
  mismatch): the entry is corrected from the file itself, its size, footer size and the
  footer's blobs (``stats.correct``: ``SetStatistics``, or ``SetPartitionStatistics`` with the
  file's size for partition statistics), only from a file whose blobs describe the entry's own
  snapshot (else the entry is removed, below);
- ``table.stats.missing`` (the file is gone), ``table.stats.snapshot`` (registered for a
  snapshot the table does not have) and ``table.stats.blob-snapshot`` (the file's blobs were
  computed for another snapshot: correcting the entry from the file would make it claim
  statistics its snapshot does not have): the entry is removed (``stats.remove``:
  ``RemoveStatistics``; ``partition-stats.remove``: ``RemovePartitionStatistics``). A snapshot
  that still exists is then left without statistics: when an engine would have used them
  for the current snapshot, the plan names the ``stats compute`` that gives the current
  snapshot statistics again (:class:`~.model.FollowUp`).

Everything else about a statistics file (a field ID its schema lacks, a file that is no Puffin
file or whose footer cannot be read) is left as it is, with the reason. The corrected entries
are read once, while planning; :func:`statistics_updates` turns them into updates on the base
a commit attempt builds on, leaving out an entry another writer has changed meanwhile.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from puffin_cli.analysis.repair.model import FollowUp, Repair, Unrepairable
from puffin_cli.analysis.table.facts import (
    ABOUT_FILE,
    PARTITION_STATISTICS,
    STATISTICS,
    Mismatch,
    OtherSnapshot,
    detail_of,
    facts_of,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import (
    PartitionStatisticsFileEntry,
    RemovePartitionStatistics,
    RemoveStatistics,
    SetPartitionStatistics,
    SetStatistics,
    StatisticsFileEntry,
    TableUpdate,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding
from puffin_cli.format.reader import PuffinReader

CORRECT, REMOVE, REMOVE_PARTITION = "stats.correct", "stats.remove", "partition-stats.remove"
CORRECTED = ("table.stats.size", "table.stats.footer-size", "table.stats.blob-metadata")
REMOVED = ("table.stats.missing", "table.stats.snapshot", "table.stats.blob-snapshot")


@dataclass(frozen=True)
class StatisticsChange:
    """One repair of an entry: its ``content`` (statistics or partition statistics), snapshot
    and path, and the ``corrected`` entry (``None``: the entry is removed)."""

    repair: Repair
    content: str
    snapshot_id: int
    path: str
    corrected: StatisticsFileEntry | PartitionStatisticsFileEntry | None


@dataclass
class StatisticsPlan:
    """The statistics repairs of a plan and what each commits."""

    changes: list[StatisticsChange] = field(default_factory=list)
    left: list[Unrepairable] = field(default_factory=list)
    follow_ups: list[FollowUp] = field(default_factory=list)

    @property
    def repairs(self) -> list[Repair]:
        return [change.repair for change in self.changes]


def is_statistics_finding(found: Finding) -> bool:
    facts = facts_of(found)
    return (facts is not None and facts.about == ABOUT_FILE and bool(facts.files)
            and facts.files[0].content in (STATISTICS, PARTITION_STATISTICS))


def plan_statistics_repairs(table: Table, findings: Sequence[Finding],
                            restore_command: str) -> StatisticsPlan:
    """The repairs of the statistics findings among ``findings``; ``restore_command`` is the
    ``stats compute`` that restores a snapshot's statistics, with ``{snapshot}`` for its ID."""
    plan = StatisticsPlan()
    groups: defaultdict[tuple[str, int, str], list[Finding]] = defaultdict(list)
    for found in findings:
        facts = facts_of(found)
        if not is_statistics_finding(found) or facts is None or facts.path is None \
                or facts.snapshot_id is None:
            continue
        groups[facts.files[0].content, facts.snapshot_id, facts.path].append(found)
    for (content, snapshot_id, path), about in groups.items():
        _plan_entry(table, plan, content, snapshot_id, path, about, restore_command)
    return plan


def _plan_entry(table: Table, plan: StatisticsPlan, content: str, snapshot_id: int, path: str,
                found: list[Finding], restore_command: str) -> None:
    codes = tuple(dict.fromkeys(f.code for f in found))
    what = "partition statistics" if content == PARTITION_STATISTICS else "statistics"
    entries = [e.path for e in (table.metadata.partition_statistics
                                if content == PARTITION_STATISTICS else table.metadata.statistics)
               if e.snapshot_id == snapshot_id]
    if any(code in REMOVED for code in codes):  # every finding about the entry goes with it
        if len(entries) > 1:
            plan.left.extend(_several(code, path, snapshot_id, len(entries), what)
                             for code in codes)
            return
        gone = table.metadata.snapshot(snapshot_id) is None
        other = next((d for f in found if isinstance(d := detail_of(f), OtherSnapshot)), None)
        if gone:
            why = f"registered for snapshot {snapshot_id}, which the table does not have"
        elif other is not None:
            named = ", ".join(map(str, dict.fromkeys(other.snapshot_ids)))
            why = (f"its blobs were computed for snapshot {named}, not {snapshot_id} (an "
                   f"engine would plan snapshot {snapshot_id} with them); snapshot "
                   f"{snapshot_id} is left without {what}")
        else:
            why = f"the file does not exist; snapshot {snapshot_id} is left without {what}"
        kind = REMOVE_PARTITION if content == PARTITION_STATISTICS else REMOVE
        plan.changes.append(StatisticsChange(
            Repair(kind, codes, (path,), f"remove the entry: {why}", snapshot_id),
            content, snapshot_id, path, None))
        if not gone and content == STATISTICS:
            follow_up = _follow_up(table, snapshot_id, restore_command)
            if follow_up is not None:
                plan.follow_ups.append(follow_up)
        return
    fixable = [f for f in found
               if f.code in CORRECTED and isinstance(detail_of(f), Mismatch)]
    command = restore_command.format(snapshot=snapshot_id)
    plan.left.extend(Unrepairable(f.code, path, _why_not(f, command), f.severity.value)
                     for f in found if f not in fixable)
    if not fixable:
        return
    fixed = tuple(dict.fromkeys(f.code for f in fixable))
    if len(entries) > 1:
        plan.left.extend(_several(code, path, snapshot_id, len(entries), what)
                         for code in fixed)
        return
    try:
        corrected = _corrected(table, content, snapshot_id, path)
    except PuffinError as exc:
        plan.left.extend(Unrepairable(code, path, f"cannot read the file to correct the entry: "
                                      f"{exc}") for code in fixed)
        return
    changes = "; ".join(_change(f) for f in fixable)
    plan.changes.append(StatisticsChange(
        Repair(CORRECT, fixed, (path,), f"correct the entry from the file: {changes}",
               snapshot_id), content, snapshot_id, path, corrected))


def _follow_up(table: Table, snapshot_id: int, restore_command: str) -> FollowUp | None:
    """The ``stats compute`` for the snapshot that needs statistics once snapshot
    ``snapshot_id``'s entry is removed: the current snapshot, when the entry is its own (Spark
    plans with it) or, the current one having none, the nearest ancestor's (Trino's). An
    older snapshot's statistics that no engine uses for the current snapshot need none."""
    current = table.current_snapshot()
    if current is None:
        return None
    own = {e.snapshot_id for e in table.metadata.statistics}
    if snapshot_id == current.snapshot_id:
        why = f"snapshot {snapshot_id} has no statistics once its entry is removed"
    else:
        if current.snapshot_id in own:
            return None
        nearest = next((a.snapshot_id for a in table.ancestors(current)
                        if a.snapshot_id in own), None)
        if nearest != snapshot_id:
            return None
        why = (f"Trino plans the current snapshot {current.snapshot_id} with ancestor "
               f"{snapshot_id}'s statistics, whose entry is removed")
    return FollowUp(current.snapshot_id,
                    restore_command.format(snapshot=current.snapshot_id), why)


def _several(code: str, path: str, snapshot_id: int, count: int, what: str) -> Unrepairable:
    return Unrepairable(code, path, f"snapshot {snapshot_id} has {count} {what} entries; a "
                        "change would replace them all")


def _change(found: Finding) -> str:
    detail = detail_of(found)
    assert isinstance(detail, Mismatch)
    where = "" if detail.blob_index is None else f"blob {detail.blob_index} "
    return f"{where}{detail.key} {detail.expected!r} -> {detail.actual!r}"


def _why_not(found: Finding, command: str) -> str:
    """Why the entry is left as it is, and the ``stats compute`` that replaces it."""
    if found.code == "table.stats.field":
        why = "a blob names a field ID the snapshot's schema lacks"
    elif found.code == "table.stats.blob-metadata":
        why = "the file is not a Puffin file; its entry cannot be corrected from it"
    else:
        why = "the statistics file itself is broken"
    return f"{why}: compute the snapshot's statistics again, replacing the entry: {command}"


def _corrected(table: Table, content: str, snapshot_id: int, path: str
               ) -> StatisticsFileEntry | PartitionStatisticsFileEntry:
    """The entry as the file says it should be."""
    local = table.resolve(path)
    info = table.fileio.stat(local)
    if info is None or info.kind != "file":
        raise PuffinError("the file is gone", path=path)
    if content == PARTITION_STATISTICS:
        return PartitionStatisticsFileEntry(snapshot_id, path, info.size)
    with PuffinReader(local, length=info.size, fileio=table.fileio) as reader:
        blobs = reader.metadata.blobs
        footer_size = reader.footer.footer_size
    return StatisticsFileEntry.of_footer(snapshot_id, path, info.size, footer_size, blobs)


def statistics_updates(base: Table, plan: StatisticsPlan
                       ) -> list[tuple[Repair, TableUpdate]]:
    """The plan's updates on ``base``, each with its repair: an entry is corrected or removed
    only while ``base`` still has it as planned (another writer may have replaced or removed
    it since)."""
    metadata = base.metadata
    present = {(STATISTICS, e.snapshot_id, e.path) for e in metadata.statistics} | {
        (PARTITION_STATISTICS, e.snapshot_id, e.path) for e in metadata.partition_statistics}
    out: list[tuple[Repair, TableUpdate]] = []
    for change in plan.changes:
        if (change.content, change.snapshot_id, change.path) not in present:
            continue
        entry = change.corrected
        update: TableUpdate
        if isinstance(entry, PartitionStatisticsFileEntry):
            update = SetPartitionStatistics(entry)
        elif isinstance(entry, StatisticsFileEntry):
            update = SetStatistics(entry)
        elif change.content == PARTITION_STATISTICS:
            update = RemovePartitionStatistics(change.snapshot_id)
        else:
            update = RemoveStatistics(change.snapshot_id)
        out.append((change.repair, update))
    return out
