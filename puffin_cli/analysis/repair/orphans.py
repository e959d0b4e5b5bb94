"""Deleting orphans (``table.orphan``: a Puffin or ``.stats`` file under the table that no
metadata names, :mod:`puffin_cli.analysis.table.orphans`).

An orphan is deleted only when asked (``--delete-orphans``) and only when it is older than
``--older-than`` (3 days by default, as Iceberg's ``remove_orphan_files``): a file a running
writer has not committed yet looks exactly like an orphan, and only its age tells them apart.
Younger files, and files whose store gives no age, are kept, with the reason. Deletion comes
after the repair's commit (:mod:`.apply`), and each file's age is checked again just before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from puffin_cli.analysis.repair.model import Repair, Unrepairable
from puffin_cli.analysis.table.facts import Orphan, facts_of
from puffin_cli.analysis.table.loading import Table
from puffin_cli.format.findings import Finding
from puffin_cli.format.text import plural
from puffin_cli.storage import StorageError

ORPHAN_CODE = "table.orphan"
INFO = "info"  # an orphan kept is no error of the table (its finding is info)
DELETE = "orphan.delete"
DEFAULT_OLDER_THAN = 3 * 86400.0  # seconds: Iceberg's remove_orphan_files default
_UNITS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}
_AGE = re.compile(r"^([0-9]{1,9})([dhms])$")


def parse_age(text: str) -> float | None:
    """``3d``, ``12h``, ``30m`` or ``45s`` in seconds; ``None`` for anything else."""
    found = _AGE.match(text.strip().lower())
    return None if found is None else int(found.group(1)) * _UNITS[found.group(2)]


def describe_age(seconds: float) -> str:
    """An age as a person reads it: ``5.0 days``, ``2.0 hours``, ``12 minutes``, ``1 minute``
    (singular only for exactly one)."""
    for unit, size in (("day", 86400.0), ("hour", 3600.0)):
        if seconds >= size:
            count = f"{seconds / size:.1f}"
            return f"{count} {unit}" if count == "1.0" else f"{count} {unit}s"
    minutes = round(max(seconds, 0) / 60)
    return plural(minutes, "minute")


@dataclass
class OrphanPlan:
    repairs: list[Repair] = field(default_factory=list)
    left: list[Unrepairable] = field(default_factory=list)


def plan_orphans(findings: Sequence[Finding], *, delete: bool, older_than: float,
                 older_than_text: str, now: float) -> OrphanPlan:
    """Which orphans to delete (modified more than ``older_than`` seconds before ``now``) and
    which to keep, and why."""
    plan = OrphanPlan()
    for found in findings:
        facts = facts_of(found)
        if found.code != ORPHAN_CODE or facts is None or facts.path is None \
                or not isinstance(facts.detail, Orphan):
            continue
        path, modified = facts.path, facts.detail.modified
        if not delete:
            plan.left.append(Unrepairable(ORPHAN_CODE, path, "kept: deleting orphans needs "
                                          "--delete-orphans", INFO))
        elif modified is None:
            plan.left.append(Unrepairable(ORPHAN_CODE, path, "kept: the store gives no "
                                          "modification time, so its age is unknown", INFO))
        elif now - modified <= older_than:
            plan.left.append(Unrepairable(ORPHAN_CODE, path, (
                f"kept: modified {describe_age(now - modified)} ago, not older than "
                f"{older_than_text} (a running writer may still commit it)"), INFO))
        else:
            plan.repairs.append(Repair(DELETE, (ORPHAN_CODE,), (path,), (
                f"referenced by no {facts.detail.scope}, modified "
                f"{describe_age(now - modified)} ago (older than {older_than_text})")))
    return plan


def delete_orphans(table: Table, repairs: Sequence[Repair], *, older_than: float,
                   now: float) -> tuple[list[Repair], list[Unrepairable]]:
    """Delete the orphans of ``repairs`` that are still there and still old enough (their
    age checked again now); the repairs done and the orphans kept."""
    done: list[Repair] = []
    kept: list[Unrepairable] = []
    for repair in repairs:
        (path,) = repair.paths
        local = table.resolve(path)
        info = table.fileio.stat(local)
        if info is None:
            continue  # gone already
        if info.modified is None or now - info.modified <= older_than:
            kept.append(Unrepairable(ORPHAN_CODE, path, "kept: modified again since it was "
                                     "planned", INFO))
            continue
        try:
            table.fileio.delete(local)
        except StorageError as exc:
            kept.append(Unrepairable(ORPHAN_CODE, path, f"kept: cannot delete: {exc}", INFO))
            continue
        done.append(repair)
    return done, kept
