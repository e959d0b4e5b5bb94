"""Incremental ``stats compute``: which columns of a snapshot can reuse an older snapshot's
sketches, and the sketches of a refresh built from them. Metadata only (no Spark, no data
reads) for the decision; the sketching is handed in (Spark or this process).

A theta sketch of a snapshot is Iceberg's union of one Alpha sketch per Spark task. A union
is exact and does not depend on its order, so the target snapshot's sketch of a column equals
``union(base sketch, sketches of the target's other tasks)`` whenever every one of the base
snapshot's tasks is also one of the target's, and the target's other tasks read only files
the base did not have. :func:`decide_refresh` checks that and everything else the equality
needs, per column (docs/spark.md, "Incremental refresh", gives each rule and why it keeps the
result exact):

- a **base**: the newest ancestor of the target (``parent-snapshot-id``; a rolled-back
  snapshot is no ancestor) whose statistics file holds an ``apache-datasketches-theta-v1``
  blob whose ``fields`` are exactly the column's field ID, for that snapshot, in a file that
  passes its checks (the size the table metadata gives, a readable footer, a blob that
  decodes), written by Iceberg's Spark action or puffin-cli (whose sketches are built by
  Iceberg's tasks), and for a uuid column with the same uuid hashing (file property
  ``puffin-cli.uuid-hash``; absent means ``text``, as Iceberg's Spark procedure hashes a uuid
  read as a Spark string);
- a **history** that only added rows: no ``delete``, ``overwrite`` or ``replace`` snapshot
  between them, no data file removed, no delete file added or removed;
- the column's **type** unchanged between the base's schema and the target's;
- **task groups**: the target's (:func:`.task_groups.plan_task_groups` with the current split
  properties and parallelism) are the base's plus groups of new files only, the base's
  planned with the inputs its file records (``puffin-cli.task-planning``; without it, the
  current ones). Unless the base sketch is **exact** (theta 1.0): an exact sketch is the set
  of the column's hashes whatever the tasks, and so is the union of it with the new rows'
  sketch while that union holds at most the nominal 4,096 entries, as Iceberg's own union of
  any grouping of the same rows then does. Such a column is incremental on that condition
  (``if_inexact``), checked by :func:`refresh_sketches` once the new rows are sketched: a
  union in estimation mode makes the column full.

Any failed rule makes the column ``full`` (with the reason); a column whose target snapshot
already has such a blob is ``fresh``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.files import Column, top_level_fields
from puffin_cli.analysis.stats.plan import StatsPlan, plan_snapshot
from puffin_cli.analysis.stats.result import Mode
from puffin_cli.analysis.stats.steps import UUID_HASH_PROPERTY, Sketches, plan_statistics
from puffin_cli.analysis.stats.task_groups import (
    OPEN_FILE_COST,
    TASK_PLANNING_PROPERTY,
    TaskGroup,
    TaskPlanning,
    plan_task_groups,
    split_planning,
    split_size,
)
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.statistics import StatisticsView
from puffin_cli.blobs.theta.compact import MAX_THETA
from puffin_cli.blobs.theta.sketches import NOMINAL_ENTRIES
from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import CREATED_BY, THETA_BLOB_TYPE
from puffin_cli.format.text import plural

if TYPE_CHECKING:
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.metadata import Snapshot, StatisticsEntry
    from puffin_cli.blobs.theta.compact import CompactTheta

FRESH, INCREMENTAL, FULL = Mode.FRESH, Mode.INCREMENTAL, Mode.FULL
# Operations that remove rows or regroup files (Iceberg's DataOperations).
ROW_REMOVING_OPERATIONS = frozenset({"delete", "overwrite", "replace"})
# Writers whose theta blobs are Iceberg's compute_table_stats sketches: Iceberg's Spark action
# ("Iceberg <version> Spark <version>") and this tool ("puffin-cli <version>").
_TRUSTED_WRITERS = ("Iceberg ", "puffin-cli")


@dataclass(frozen=True)
class ColumnDecision:
    """How one column is refreshed: ``fresh`` (the target has a valid blob: ``base`` is the
    target), ``incremental`` (the base's sketch unioned with the new files') or ``full``."""

    field_id: int
    name: str
    mode: Mode
    base_snapshot_id: int | None
    reason: str  # why full, or which base is used
    base_file: str | None = None  # the statistics file whose blob is reused
    # for an incremental column whose base's task groups differ from the target's (its base
    # sketch exact): why it becomes full if the union with the new rows is not exact
    if_inexact: str | None = None


@dataclass(frozen=True)
class RefreshDecision:
    """What a refresh of ``snapshot_id`` takes: per column its :class:`ColumnDecision`;
    ``new_data_files`` and ``new_rows`` (record counts) are what the incremental columns need
    sketched. ``plan``, ``groups`` (the target's task groups), ``new_groups`` (per base
    snapshot, the groups to sketch) and ``base_sketches`` (field ID -> the reused sketch) are
    what :func:`refresh_sketches` runs on; ``planning`` what ``groups`` were planned with."""

    snapshot_id: int
    columns: tuple[ColumnDecision, ...]
    new_data_files: int
    new_rows: int
    plan: StatsPlan = field(repr=False, compare=False)
    planning: TaskPlanning = field(repr=False, compare=False)
    groups: tuple[TaskGroup, ...] = field(default=(), repr=False, compare=False)
    new_groups: tuple[tuple[int, tuple[TaskGroup, ...]], ...] = field(
        default=(), repr=False, compare=False)
    base_sketches: tuple[tuple[int, CompactTheta], ...] = field(
        default=(), repr=False, compare=False)

    @property
    def mode(self) -> Mode:
        """``fresh`` when every column is; ``full`` when any column is (the whole snapshot
        is read); else ``incremental``."""
        modes = {c.mode for c in self.columns}
        if modes == {FRESH}:
            return FRESH
        return FULL if FULL in modes else INCREMENTAL

    @property
    def reason(self) -> str:
        """The one reason of the columns' mode when they share it, else a summary."""
        wanted = [c for c in self.columns if c.mode == self.mode]
        reasons = list(dict.fromkeys(c.reason for c in wanted))
        if len(reasons) == 1:
            return reasons[0]
        names = ", ".join(c.name for c in wanted)
        return f"{plural(len(reasons), 'reason')}, per column ({names})"


# --- the base sketches ------------------------------------------------------------------------


# What a statistics file records of its sketches' task planning: the inputs, none (Iceberg's
# files, older puffin-cli's), or why the property cannot be read.
Recorded = TaskPlanning | str | None


@dataclass(frozen=True)
class _Blobs:
    found: dict[int, tuple[str, CompactTheta]]  # field ID -> (file, sketch)
    problems: dict[int, str]  # field ID -> why its blob cannot be used
    planning: dict[str, Recorded] = field(default_factory=dict)  # file -> its recorded inputs


def reusable_blobs(table: Table, snapshot: Snapshot, columns: Sequence[Column],
                   uuid_hash: str, *, trusted_writer: bool) -> _Blobs:
    """The theta blobs of ``snapshot``'s statistics files that a refresh can reuse for
    ``columns`` (module docstring), and why the others cannot be."""
    found: dict[int, tuple[str, CompactTheta]] = {}
    problems: dict[int, str] = {}
    planning: dict[str, Recorded] = {}
    wanted = {c.field_id: c for c in columns}
    for entry in StatisticsView(table).registered(snapshot.snapshot_id):
        listed: dict[int, bool] = {}
        for blob in entry.blobs:
            for fid in blob.fields:
                if fid in wanted:
                    exact = blob.type == THETA_BLOB_TYPE and blob.fields == (fid,)
                    listed[fid] = listed.get(fid, False) or exact
        for fid, exact in listed.items():
            if not exact and fid not in found:
                problems.setdefault(fid, f"the blob of snapshot {snapshot.snapshot_id} for "
                                         f"field {fid} is not a theta sketch of that one field")
        useful = [fid for fid, exact in listed.items() if exact and fid not in found]
        if not useful:
            continue
        try:
            sketches, planning[entry.path] = _read_sketches(table, entry, useful, wanted,
                                                            uuid_hash, trusted_writer)
        except (PuffinError, OSError) as exc:
            for fid in useful:
                problems.setdefault(fid, f"statistics file {entry.path} of snapshot "
                                         f"{snapshot.snapshot_id} fails its checks: {exc}")
            continue
        for fid, sketch in sketches.items():
            if isinstance(sketch, str):
                problems.setdefault(fid, sketch)
            else:
                found[fid] = (entry.path, sketch)
                problems.pop(fid, None)
    return _Blobs(found, problems, planning)


def _read_sketches(table: Table, entry: StatisticsEntry, fields: Sequence[int],
                   columns: dict[int, Column], uuid_hash: str, trusted_writer: bool
                   ) -> tuple[dict[int, CompactTheta | str], Recorded]:
    """Field ID -> the sketch of ``entry``'s file, or why it cannot be reused, and what the
    file records of its task planning; raises when the file fails its checks."""
    from puffin_cli.blobs.theta.compact import compact_from_bytes
    from puffin_cli.format.reader import PuffinReader

    with PuffinReader(table.resolve(entry.path), footer_size=entry.footer_size,
                      fileio=table.fileio) as reader:
        if reader.file_size != entry.file_size:
            raise PuffinError(f"the file has {reader.file_size} bytes, the table metadata "
                              f"says {entry.file_size}", code="stats.base")
        metadata = reader.metadata
        writer = metadata.properties.get(CREATED_BY, "")
        hashing = metadata.properties.get(UUID_HASH_PROPERTY, "text")
        recorded = _recorded_planning(entry.path, metadata.properties.get(
            TASK_PLANNING_PROPERTY))
        out: dict[int, CompactTheta | str] = {}
        for fid in fields:
            blob = next((b for b in metadata.blobs if b.type == THETA_BLOB_TYPE
                         and b.fields == (fid,) and b.snapshot_id == entry.snapshot_id), None)
            if blob is None:
                out[fid] = (f"statistics file {entry.path} has no theta blob of field {fid} "
                            f"for snapshot {entry.snapshot_id}, as the table metadata says")
            elif trusted_writer and not writer.startswith(_TRUSTED_WRITERS):
                who = writer or "an unnamed writer"
                out[fid] = (f"statistics file {entry.path} was written by {who}, whose "
                            "sketches need not be those of Iceberg's tasks")
            elif str(columns[fid].type) == "uuid" and hashing != uuid_hash:
                out[fid] = (f"statistics file {entry.path} hashed uuid values as {hashing}, "
                            f"not {uuid_hash}")
            else:
                out[fid] = compact_from_bytes(reader.read_blob(blob), blob)
    return out, recorded


def _recorded_planning(path: str, text: str | None) -> Recorded:
    if text is None:
        return None
    try:
        return TaskPlanning.from_property(text)
    except ValueError as exc:
        return (f"statistics file {path} has a {TASK_PLANNING_PROPERTY} property that cannot "
                f"be read ({exc}): the task groups of its sketches are unknown")


# --- the history between a base and the target ------------------------------------------------


def _history_problem(table: Table, base: Snapshot, target: Snapshot) -> str | None:
    """Why ``base``'s sketches cannot be extended to ``target`` whatever the column (rows
    removed or regrouped between them), or ``None``."""
    for snapshot in table.ancestors(target):
        if snapshot.snapshot_id == base.snapshot_id:
            break
        if snapshot.operation in ROW_REMOVING_OPERATIONS:
            return (f"snapshot {snapshot.snapshot_id} since base {base.snapshot_id} is a "
                    f"{snapshot.operation} (rows removed or files regrouped)")
    changes = LiveFiles.between(table.manifests, base, target)
    if changes.data_removed:
        return (f"{plural(len(changes.data_removed), 'data file')} removed since base "
                f"{base.snapshot_id}")
    if changes.deletes_added:
        return (f"{plural(len(changes.deletes_added), 'delete file')} added since base "
                f"{base.snapshot_id} (rows deleted)")
    if changes.deletes_removed:
        return (f"{plural(len(changes.deletes_removed), 'delete file')} removed since base "
                f"{base.snapshot_id} (deleted rows back)")
    return None


@dataclass(frozen=True)
class Regrouped:
    """The target's task groups are not the base's plus groups of new files (``detail`` says
    how): in estimation mode Iceberg's sketch would differ. ``new_only``: the target's groups
    cut to the new files' splits, what an exact column sketches (its union does not depend on
    the groups); ``split_size``: the one the target is planned with."""

    detail: str
    new_only: tuple[TaskGroup, ...]
    split_size: int
    shared: bool  # some target task reads new files and older ones

    def reason(self, planning: TaskPlanning, estimate: str) -> str:
        """Why a column in estimation mode (``estimate`` says which sketch is an estimate) is
        full, in a user's words, with the table property that keeps new files in tasks of
        their own (when raising it would)."""
        lead = ("new rows share a Spark task with older files" if self.shared else
                "the older files are read in other Spark tasks than the base's")
        why = f"{lead}, so Iceberg would sketch them differently ({self.detail}), and {estimate}"
        if not self.shared or planning.split.open_file_cost >= self.split_size:
            return why
        return (f"{why}; setting the table property {OPEN_FILE_COST}={self.split_size} (this "
                "snapshot's split size) gives every file a Spark task of its own (run once "
                "with --full after setting it)")


def _base_new_groups(table: Table, base: Snapshot, recorded: Recorded, now: TaskPlanning,
                     groups: Sequence[TaskGroup], size: int
                     ) -> tuple[TaskGroup, ...] | Regrouped | str:
    """:func:`_new_groups` with the base's groups planned as its file records (without a
    record, with the inputs in force ``now``), the reason naming what changed since."""
    if isinstance(recorded, str):
        return recorded
    then = now if recorded is None else recorded
    base_plan = plan_snapshot(table, base, None)
    extra = _new_groups(plan_task_groups(base_plan, then.parallelism, then.split), groups,
                        {f.location for f in base_plan.data_files}, size)
    changes = then.changes(now)
    if isinstance(extra, Regrouped) and changes:
        return replace(extra, detail=f"the base was computed with {'; '.join(changes)}: "
                                     f"{extra.detail}")
    return extra


def _group_key(group: TaskGroup) -> tuple[tuple[str, int, int], ...]:
    return tuple((s.file.location, s.start, s.length) for s in group.splits)


def _new_groups(base_groups: Sequence[TaskGroup], groups: Sequence[TaskGroup],
                base_files: set[str], size: int) -> tuple[TaskGroup, ...] | Regrouped:
    """The target's groups that are not the base's, when all the base's are the target's and
    the others read new files only; else how they differ."""
    cut = [(g, tuple(s for s in g.splits if s.file.location not in base_files))
           for g in groups]
    new_only = tuple(TaskGroup(splits) for _, splits in cut if splits)
    shared = any(0 < len(splits) < len(g.splits) for g, splits in cut)
    keys = {_group_key(g) for g in groups}
    changed = sum(1 for g in base_groups if _group_key(g) not in keys)
    if changed:
        return Regrouped(f"{changed:,} of the base's {plural(len(base_groups), 'Spark task')} "
                         f"{'reads' if changed == 1 else 'read'} other splits at the target "
                         f"({plural(len(groups), 'task')})", new_only, size, shared)
    known = {_group_key(g) for g in base_groups}
    extra = tuple(g for g in groups if _group_key(g) not in known)
    mixed = sum(1 for g in extra if any(s.file.location in base_files for s in g.splits))
    if mixed:
        return Regrouped(f"{mixed:,} of the target's Spark tasks "
                         f"{'reads' if mixed == 1 else 'read'} new files together with older "
                         "splits", new_only, size, shared)
    return extra


def _field_types(table: Table, snapshot_id: int) -> dict[int, Any]:
    return {f["id"]: f.get("type")
            for f in top_level_fields(table.metadata.schema_for(snapshot_id)[1])}


# --- the decision -----------------------------------------------------------------------------


def decide_refresh(table: Table, snapshot_id: int | None, columns: Sequence[str] | None, *,
                   full: bool = False, parallelism: int,
                   uuid_hash: str = "text") -> RefreshDecision:
    """How to refresh the statistics of ``snapshot_id`` (the current snapshot for ``None``)
    for ``columns`` (default: every primitive column), with task groups planned for
    ``parallelism`` (Iceberg's Spark scan's): metadata and statistics files only."""
    plan = plan_statistics(table, snapshot_id, None if columns is None else list(columns))
    target = plan.snapshot
    now = TaskPlanning(split_planning(plan), parallelism)
    groups = tuple(plan_task_groups(plan, parallelism, now.split))
    size = split_size(plan, parallelism, now.split)
    if full:
        return RefreshDecision(
            target.snapshot_id,
            tuple(ColumnDecision(c.field_id, c.name, FULL, None, "--full") for c in plan.columns),
            0, 0, plan, now, groups)
    decided: dict[int, ColumnDecision] = {}
    sketches: dict[int, CompactTheta] = {}
    reasons: dict[int, str] = {}
    fresh = reusable_blobs(table, target, plan.columns, uuid_hash, trusted_writer=False)
    for column in plan.columns:
        if column.field_id in fresh.found:
            path, sketch = fresh.found[column.field_id]
            decided[column.field_id] = ColumnDecision(
                column.field_id, column.name, FRESH, target.snapshot_id,
                f"snapshot {target.snapshot_id} already has statistics ({path})", path)
            sketches[column.field_id] = sketch
    reasons.update(fresh.problems)
    new_groups: dict[int, tuple[TaskGroup, ...]] = {}
    target_types = _field_types(table, target.snapshot_id)
    view = StatisticsView(table)
    for base in islice(table.ancestors(target), 1, None):
        pending = [c for c in plan.columns if c.field_id not in decided]
        if not pending:
            break
        if not view.registered(base.snapshot_id):
            continue
        blobs = reusable_blobs(table, base, pending, uuid_hash, trusted_writer=True)
        for fid, why in blobs.problems.items():
            reasons.setdefault(fid, why)
        if not blobs.found:
            continue
        history = _history_problem(table, base, target)
        recorded = {blobs.planning[path] for path, _ in blobs.found.values()}
        extra: tuple[TaskGroup, ...] | Regrouped | str
        if history is not None:
            extra = history
        elif len(recorded) > 1:  # the spec's one file per snapshot, not always kept
            extra = (f"the statistics files of base {base.snapshot_id} record different task "
                     "planning")
        else:
            extra = _base_new_groups(table, base, recorded.pop(), now, groups, size)
        base_types = _field_types(table, base.snapshot_id)
        for column in pending:
            if column.field_id not in blobs.found:
                continue
            path, sketch = blobs.found[column.field_id]
            fid, name = column.field_id, column.name
            if isinstance(extra, str):
                decided[fid] = ColumnDecision(fid, name, FULL, None, extra)
            elif base_types.get(fid) != target_types.get(fid):
                decided[fid] = ColumnDecision(
                    fid, name, FULL, None,
                    f"type changed from {base_types.get(fid)} (base {base.snapshot_id}) to "
                    f"{target_types.get(fid)}: the values hash differently")
            elif isinstance(extra, Regrouped) and sketch.theta_long != MAX_THETA:
                decided[fid] = ColumnDecision(fid, name, FULL, None, extra.reason(
                    now, "the base's sketch is an estimate"))
            else:
                tasks, if_inexact, exact = extra, None, ""
                if isinstance(tasks, Regrouped):
                    regrouped, tasks = tasks, tasks.new_only
                    if_inexact = regrouped.reason(
                        now, f"the base's sketch with the new rows' holds more than "
                             f"{NOMINAL_ENTRIES:,} hashes (an estimate)")
                    exact = (f"; exact sketches, the same for any Spark tasks while their "
                             f"union holds at most {NOMINAL_ENTRIES:,} hashes")
                decided[fid] = ColumnDecision(
                    fid, name, INCREMENTAL, base.snapshot_id,
                    f"base snapshot {base.snapshot_id} ({path}) and "
                    f"{plural(len(tasks), 'new task')}{exact}",
                    path, if_inexact)
                sketches[fid] = sketch
                new_groups[base.snapshot_id] = tasks
    for column in plan.columns:
        if column.field_id not in decided:
            decided[column.field_id] = ColumnDecision(
                column.field_id, column.name, FULL, None,
                reasons.get(column.field_id) or _no_base_reason(table, target, column))
    new_files = {s.file.location: s.file for gs in new_groups.values() for g in gs
                 for s in g.splits}
    return RefreshDecision(
        target.snapshot_id, tuple(decided[c.field_id] for c in plan.columns),
        len(new_files), sum(f.record_count for f in new_files.values()), plan, now, groups,
        tuple(new_groups.items()), tuple(sketches.items()))


def _no_base_reason(table: Table, target: Snapshot, column: Column) -> str:
    ancestors = {s.snapshot_id for s in table.ancestors(target)}
    for entry in table.metadata.statistics:
        if entry.snapshot_id not in ancestors and any(
                column.field_id in b.fields for b in entry.blobs):
            return (f"no ancestor has statistics of this column (those of snapshot "
                    f"{entry.snapshot_id} are not of an ancestor: rolled back?)")
    return "no ancestor has statistics of this column"


# --- the sketches of a refresh ----------------------------------------------------------------

SketchGroups = Callable[[StatsPlan, Sequence[TaskGroup]], Sketches]


@dataclass(frozen=True)
class RefreshSketches:
    """The refreshed sketches (in plan column order) with what was read for them: the rows
    and the data files of the tasks that ran; ``columns``: the decision's, an incremental
    column whose union was not exact (``if_inexact``) made full."""

    sketches: Sketches
    files_read: int
    columns: tuple[ColumnDecision, ...]


def refresh_sketches(decision: RefreshDecision, sketch: SketchGroups) -> RefreshSketches:
    """The target's sketches: incremental columns sketched over their base's new groups and
    unioned with the base sketch, ``full`` ones over every task group, fresh ones as they are.
    An incremental column with ``if_inexact`` whose union is not exact joins the full ones
    (the incremental passes run first, so one full pass reads them all). ``sketch(plan,
    groups)`` runs the tasks (on Spark or in this process)."""
    from puffin_cli.blobs.theta.sketches import ThetaAccumulator

    plan = decision.plan
    by_id: dict[int, CompactTheta] = dict(decision.base_sketches)
    decided = {d.field_id: d for d in decision.columns}
    result: dict[int, CompactTheta] = {}
    rows = 0
    files: set[str] = set()

    def run(chosen: tuple[Column, ...], groups: Sequence[TaskGroup]) -> None:
        nonlocal rows
        done = sketch(replace(plan, columns=chosen), groups) if groups else None
        for i, column in enumerate(chosen):
            fid = column.field_id
            union = ThetaAccumulator()
            if decided[fid].mode == INCREMENTAL:
                union.add(by_id[fid])
            if done is not None:
                union.add(done.sketches[i])
            out = union.result()
            why = decided[fid].if_inexact
            if why is not None and out.theta_long != MAX_THETA:
                decided[fid] = ColumnDecision(fid, column.name, FULL, None, why)
            else:
                result[fid] = out
        if done is not None:
            # The passes' groups are nested (the full pass reads every group; a newer base's
            # new groups are among an older base's), so the rows read are the largest pass's:
            # a sum would count the new files' rows twice when some columns are full.
            rows = max(rows, done.rows)
            files.update(s.file.location for g in groups for s in g.splits)

    for base_id, groups in decision.new_groups:
        run(tuple(c for c in plan.columns if decided[c.field_id].mode == INCREMENTAL
                  and decided[c.field_id].base_snapshot_id == base_id), groups)
    full = tuple(c for c in plan.columns if decided[c.field_id].mode == FULL)
    if full:
        run(full, decision.groups)
    for column in plan.columns:
        if column.field_id not in result:  # fresh
            result[column.field_id] = by_id[column.field_id]
    return RefreshSketches(
        Sketches(tuple(result[c.field_id] for c in plan.columns), rows), len(files),
        tuple(decided[c.field_id] for c in plan.columns))
