"""``puffin repair``: the plan made from a table's findings, and carrying it out as one commit.

Planning (:func:`plan_repairs`) walks every snapshot of the table as ``puffin table
--all-snapshots`` does (every statistics entry is checked, and an orphan is a file no snapshot
names) and turns the findings' facts into repairs: deletion vectors (:mod:`.dvs`), statistics
entries (:mod:`.stats`) and orphans (:mod:`.orphans`). Every error or warning no repair covers
is listed as left, with the reason. Planning reads; it writes nothing.

Applying (:func:`apply_plan`)
    1. the deletion-vector repairs write their new Puffin files (create-only, under the table's
       ``data/``);
    2. one commit (:func:`~puffin_cli.analysis.table.commit.commit`) publishes one new metadata
       version: the new snapshot that replaces the broken delete files, and the statistics
       updates. Each attempt builds on the table's current version: the replaced delete files
       must still be live in it (else the table changed under the repair: nothing is
       committed), and a statistics entry another writer changed meanwhile is left to it;
    3. only after the commit (or with nothing to commit), old orphans are deleted.
    A failure in 1 or 2 removes the files written for the repair: the table is as it was.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from puffin_cli.analysis.repair import orphans as orphan_repairs
from puffin_cli.analysis.repair.carry import (
    Carry,
    new_snapshot_command,
    plan_carry,
    write_carried,
)
from puffin_cli.analysis.repair.dvs import is_dv_finding, plan_dv_repairs, write_dv_repairs
from puffin_cli.analysis.repair.left import Advice
from puffin_cli.analysis.repair.model import FollowUp, Repair, Unrepairable
from puffin_cli.analysis.repair.stats import (
    StatisticsPlan,
    is_statistics_finding,
    plan_statistics_repairs,
    statistics_updates,
)
from puffin_cli.analysis.table.commit import DEFAULT_MAX_ATTEMPTS, commit, table_requirements
from puffin_cli.analysis.table.facts import facts_of
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.snapshot_writer import delete_key, replace_delete_files
from puffin_cli.analysis.table.updates import (
    AddSnapshot,
    CommitResult,
    TableChange,
    TableUpdate,
)
from puffin_cli.analysis.table.walk import TableWalk
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE


@dataclass(frozen=True)
class RepairResult:
    """What ``puffin repair`` planned and did (``--json``: docs/json.md).

    ``path`` and ``location`` are the table's directory and its metadata's ``location``
    (the human view names the files inside the table relative to it, as ``puffin table``
    does); ``planned``: every repair of the plan; ``applied``: those carried out (none without
    ``--apply``); ``unrepairable``: the findings left as they are, why, and what to do;
    ``follow-ups``: commands that restore what a repair leaves without; ``commit``: the new
    metadata version (``None`` when nothing was committed)."""

    table: str
    metadata_file: str
    path: str
    location: str
    apply: bool
    planned: tuple[Repair, ...]
    applied: tuple[Repair, ...]
    unrepairable: tuple[Unrepairable, ...]
    follow_ups: tuple[FollowUp, ...]
    commit: CommitResult | None

    @property
    def pending(self) -> bool:
        """Repairs planned and not carried out."""
        return bool(self.planned) and not self.apply

    @property
    def errors_left(self) -> int:
        """Error findings the repair leaves as they are (none: the table has no error left
        once the plan is applied)."""
        return sum(u.severity == "error" for u in self.unrepairable)


@dataclass(frozen=True)
class RepairOptions:
    """``--snapshot``, ``--delete-orphans`` and ``--older-than`` (seconds, and as typed)."""

    snapshot_id: int | None = None
    delete_orphans: bool = False
    older_than: float = orphan_repairs.DEFAULT_OLDER_THAN
    older_than_text: str = "3d"


@dataclass
class Plan:
    """A plan for one table, with what applying it needs."""

    table: Table
    name: str
    options: RepairOptions
    statistics: StatisticsPlan
    dv_repairs: list[Repair]
    orphans: list[Repair]
    left: list[Unrepairable]
    now: float
    max_blob_size: int = DEFAULT_MAX_BLOB_SIZE
    carry: Carry | None = None
    follow_ups: list[FollowUp] = field(default_factory=list)

    @property
    def repairs(self) -> list[Repair]:
        carried = [] if self.carry is None else [self.carry.repair]
        return [*self.dv_repairs, *carried, *self.statistics.repairs, *self.orphans]

    def result(self, *, apply: bool = False, applied: Sequence[Repair] = (),
               commit: CommitResult | None = None, left: Sequence[Unrepairable] = (),
               new_snapshot: int | None = None) -> RepairResult:
        follow_ups = self.follow_ups
        if new_snapshot is not None:  # committed: the new snapshot's ID is known
            follow_ups = [replace(f, snapshot_id=new_snapshot, command=new_snapshot_command(
                restore_command(self.name, self.catalog), new_snapshot))
                if f.snapshot_id is None else f for f in follow_ups]
        return RepairResult(
            table=self.name, metadata_file=self.table.metadata_file,
            path=str(self.table.table_dir), location=self.table.metadata.location,
            apply=apply, planned=tuple(self.repairs),
            applied=tuple(applied), unrepairable=(*self.left, *left),
            follow_ups=tuple(follow_ups), commit=commit)

    @property
    def catalog(self) -> str | None:
        found = self.table.catalog_table
        return None if found is None else found.catalog


def restore_command(name: str, catalog: str | None) -> str:
    """The ``stats compute`` that restores a snapshot's statistics (``{snapshot}``)."""
    where = f"--catalog {shlex.quote(catalog)} " if catalog is not None else ""
    quoted = shlex.quote(name).replace("{", "{{").replace("}", "}}")
    return f"puffin stats compute {where}{quoted} --snapshot {{snapshot}} --commit"


def plan_repairs(table: Table, name: str, *, options: RepairOptions,
                 max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                 now: float | None = None) -> Plan:
    """The repair plan of ``table`` (which the user named ``name``: a directory or metadata
    file, or its identifier in its catalog): reads, writes nothing."""
    walk = TableWalk(table, all_snapshots=True, limit=0, max_blob_size=max_blob_size)
    if options.snapshot_id is not None:
        named = table.snapshot(options.snapshot_id)  # refuses an unknown one
        assert named is not None
        options = replace(options, snapshot_id=named.snapshot_id)
    views = {view.snapshot_id: view for view, _changes in walk.snapshots()}
    findings = list(walk.finish().findings)
    catalog = None if table.catalog_table is None else table.catalog_table.catalog
    chosen = [f for f in findings if _chosen(f, table, options.snapshot_id)]
    restore = restore_command(name, catalog)
    statistics = plan_statistics_repairs(
        table, [f for f in chosen if is_statistics_finding(f)], restore)
    dv_repairs, dv_left = plan_dv_repairs(table, [f for f in chosen if is_dv_finding(f)],
                                          max_blob_size=max_blob_size)
    removed = {c.snapshot_id for c in statistics.changes if c.corrected is None}
    carry, carry_follow_ups = plan_carry(table, dv_repairs, removed, restore,
                                         max_blob_size=max_blob_size)
    follow_ups = statistics.follow_ups
    if dv_repairs:  # the current snapshot once committed is the repair's new one
        follow_ups = [replace(f, snapshot_id=None, command=new_snapshot_command(restore, None),
                              reason=f"{f.reason}, and the repair's new snapshot has none")
                      if f.snapshot_id == table.metadata.current_snapshot_id else f
                      for f in follow_ups]
    moment = time.time() if now is None else now
    orphans = orphan_repairs.plan_orphans(
        chosen, delete=options.delete_orphans, older_than=options.older_than,
        older_than_text=options.older_than_text, now=moment)
    covered = {id(f) for f in chosen if is_statistics_finding(f) or is_dv_finding(f)
               or f.code == orphan_repairs.ORPHAN_CODE}
    advice = Advice(table, views, restore, name if catalog is not None else "<db>.<table>")
    others = [advice.left(f) for f in chosen
              if id(f) not in covered and f.severity is not Severity.INFO]
    return Plan(table, name, options, statistics, dv_repairs, orphans.repairs,
                [*dv_left, *statistics.left, *orphans.left, *others], moment, max_blob_size,
                carry, [*follow_ups, *carry_follow_ups])


def _chosen(found: Finding, table: Table, snapshot_id: int | None) -> bool:
    """Whether a finding is about ``--snapshot`` (every finding without one): its statistics,
    and its deletion vectors when it is the current snapshot."""
    if snapshot_id is None:
        return True
    if found.code.startswith("table.dv."):  # DVs are repaired in the current snapshot
        return snapshot_id == table.metadata.current_snapshot_id
    facts = facts_of(found)
    return facts is not None and facts.snapshot_id == snapshot_id


def apply_plan(plan: Plan, *, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> RepairResult:
    """Carry the plan out (see the module docstring)."""
    table = plan.table
    committed: CommitResult | None = None
    applied: list[Repair] = []
    new_snapshot: list[int] = []
    if plan.dv_repairs or plan.statistics.changes:
        rewrite = write_dv_repairs(table, plan.dv_repairs, table.data_dir,
                                   max_blob_size=plan.max_blob_size)
        included: list[Repair] = []

        def build(base: Table) -> TableChange:
            changes = statistics_updates(base, plan.statistics)
            included[:] = [repair for repair, _update in changes]
            updates = tuple(update for _repair, update in changes)
            if rewrite.removed:
                _require_live(base, rewrite.removed)
                dvs = replace_delete_files(base, rewrite.removed, rewrite.added)
                included[:0] = plan.dv_repairs
                (snapshot,) = [u for u in dvs.updates if isinstance(u, AddSnapshot)]
                new_snapshot[:] = [snapshot.snapshot_id]
                written = dvs.written
                if plan.carry is not None:
                    carried = _carried(base, plan, snapshot, dvs.written)
                    if carried is not None:
                        updates = (*updates, carried[0])
                        written = (*written, carried[1])
                        included.insert(len(plan.dv_repairs), plan.carry.repair)
                return TableChange(dvs.requirements, (*dvs.updates, *updates), written)
            if not updates:
                raise _NothingLeft
            return TableChange(table_requirements(base), updates)

        try:
            committed = commit(table, build, max_attempts=max_attempts,
                               written=rewrite.written)
        except _NothingLeft:
            committed = None
        else:
            applied += included
    done, kept = orphan_repairs.delete_orphans(
        table, plan.orphans, older_than=plan.options.older_than, now=time.time())
    applied += done
    return plan.result(apply=True, applied=applied, commit=committed, left=kept,
                       new_snapshot=new_snapshot[0] if committed and new_snapshot else None)


def _carried(base: Table, plan: Plan, snapshot: AddSnapshot,
             written: Sequence[str]) -> tuple[TableUpdate, str] | None:
    """The carried statistics of the new ``snapshot`` (:mod:`.carry`); when writing them
    fails, the attempt's manifests (``written``) are removed before the error goes on."""
    assert plan.carry is not None
    try:
        return write_carried(base, plan.carry, snapshot, max_blob_size=plan.max_blob_size)
    except BaseException:
        for location in written:
            base.fileio.delete(location)
        raise


def _require_live(base: Table, removed: Sequence[ContentFile]) -> None:
    """The delete files a repair replaces are still live in ``base`` (the table's version a
    commit attempt builds on); else another writer changed them and nothing is committed."""
    snapshot = base.current_snapshot()
    live = set() if snapshot is None else {
        delete_key(e) for e in LiveFiles.of(base.manifests, snapshot).delete_files}
    gone = [e for e in removed if delete_key(e) not in live]
    if gone:
        raise PuffinError(f"the table changed under the repair: the deletion vector for "
                          f"{gone[0].referenced_data_file} in {gone[0].path} is no longer "
                          "live in the current snapshot; nothing was committed",
                          code="repair.changed")


class _NothingLeft(Exception):
    """Every entry the plan repairs was changed by another writer meanwhile: nothing to
    commit."""
