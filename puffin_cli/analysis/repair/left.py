"""What the user can do about a finding ``puffin repair`` leaves as it is: each one says it,
naming the files, so that a plan never ends in "no repair" alone.

- a deletion vector that cannot be read or is wrong (its Puffin file missing or damaged, a
  wrong ``record_count``, a position past the data file's rows, ...): restore its file at its
  path (when the file is missing or damaged), or roll back to the snapshot before the one that
  added it (Spark: ``CALL <catalog>.system.rollback_to_snapshot('<table>', N)``), with the
  number of deleted rows that would reappear and of snapshots undone;
- a finding about the deletion vectors of older snapshots only (the current snapshot no longer
  lists the DV): history, kept as it is; it counts as info (it is not the table's state);
- a statistics file whose entry cannot be corrected or removed by a repair (a field ID the
  schema lacks, a file that is no Puffin file or does not read): the exact ``puffin stats
  compute ... --snapshot N --commit`` that computes snapshot N's statistics again and
  replaces its entry.
"""

from __future__ import annotations

from collections.abc import Mapping

from puffin_cli.analysis.repair.model import Unrepairable
from puffin_cli.analysis.table.facts import (
    ABOUT_DV,
    DELETES,
    STATISTICS,
    Absent,
    Container,
    FileProblem,
    detail_of,
    facts_of,
)
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.report import SnapshotView
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.text import plural

INFO, ERROR = Severity.INFO.value, Severity.ERROR.value


class Advice:
    """What to do about the findings of one table that no repair covers."""

    def __init__(self, table: Table, views: Mapping[int, SnapshotView],
                 restore_command: str, rollback_name: str) -> None:
        self.table = table
        self.views = views
        self.restore_command = restore_command
        self.rollback_name = rollback_name
        current = table.current_snapshot()
        self.current = current
        # the current snapshot's live delete files by path: the snapshot that added each
        self.live: dict[str, list[int | None]] = {}
        if current is not None:
            for entry in LiveFiles.of(table.manifests, current).delete_files:
                self.live.setdefault(entry.path, []).append(entry.snapshot_id)

    def left(self, found: Finding, reason: str | None = None) -> Unrepairable:
        """``found`` left as it is: why (``reason``, else that no repair covers it) and what
        to do."""
        facts = facts_of(found)
        why = reason or "no repair for this finding"
        severity = found.severity.value
        if facts is None:
            return Unrepairable(found.code, None, why, severity)
        content = facts.files[0].content if facts.files else None
        if facts.about == ABOUT_DV or content == DELETES:
            return self._deletes(found, why)
        if content == STATISTICS and facts.snapshot_id is not None \
                and self.table.metadata.snapshot(facts.snapshot_id) is not None:
            command = self.restore_command.format(snapshot=facts.snapshot_id)
            return Unrepairable(found.code, facts.path, f"{why}: compute snapshot "
                                f"{facts.snapshot_id}'s statistics again, replacing the entry: "
                                f"{command}", severity)
        return Unrepairable(found.code, facts.path, why, severity)

    def _deletes(self, found: Finding, why: str) -> Unrepairable:
        facts = facts_of(found)
        assert facts is not None
        path, data_file = facts.path, facts.data_file()
        dv = f" (the deletion vector of {data_file})" if data_file else ""
        added = self.live.get(path or "")
        if added is None:
            return Unrepairable(found.code, path, (
                f"{why}; only in older snapshots (first in {facts.snapshot_id}), not in the "
                "current snapshot: history is kept"), INFO)
        ways = []
        if _damaged(found):
            ways.append(f"restore {path} at its path{dv}")
        rollback = self._rollback(next((s for s in added if s is not None),
                                       facts.snapshot_id))
        if rollback is not None:
            ways.append(rollback)
        text = f"{why}: " + "; or ".join(ways) if ways else \
            f"{why}; there is no earlier snapshot to roll back to"
        return Unrepairable(found.code, path, text, found.severity.value)

    def _rollback(self, added_by: int | None) -> str | None:
        """Roll back to the parent of snapshot ``added_by`` (which added the file), when it is
        an ancestor of the current snapshot: how, and what it undoes."""
        if added_by is None or self.current is None:
            return None
        chain = list(self.table.ancestors(self.current))
        ids = [s.snapshot_id for s in chain]
        if added_by not in ids:
            return None
        adding = chain[ids.index(added_by)]
        if adding.parent_id is None or adding.parent_id not in ids:
            return None
        target = adding.parent_id
        undone = ids.index(target)
        now, then = self.views.get(self.current.snapshot_id), self.views.get(target)
        rows = "" if now is None or then is None else plural(
            max(now.totals.deleted_rows - then.totals.deleted_rows, 0), "deleted row") + \
            " would reappear and "
        return (f"roll back to snapshot {target}, before snapshot {added_by} added it (Spark: "
                f"CALL <catalog>.system.rollback_to_snapshot('{self.rollback_name}', {target})"
                f"): {rows}{plural(undone, 'snapshot')} would be undone")


def _damaged(found: Finding) -> bool:
    """Whether the finding says the file itself is gone or damaged (restoring it helps)."""
    detail = detail_of(found)
    return isinstance(detail, Absent | FileProblem) or (
        isinstance(detail, Container) and detail.problem is not None)
