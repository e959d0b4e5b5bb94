"""What a repair plan is made of: one :class:`Repair` per change it makes and one
:class:`Unrepairable` per finding it leaves alone, with the reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Repair:
    """One change the repair makes.

    ``kind`` names the change (``dv.merge``, ``dv.frame``, ``dv.referenced-file``,
    ``stats.correct``, ``stats.remove``, ``stats.carry``, ``partition-stats.remove``,
    ``orphan.delete``), ``finding_codes`` the finding(s) it fixes (none for ``stats.carry``,
    which goes with the DV repairs), ``paths`` the files involved as the metadata names them
    (the data file first for a DV repair), ``reason`` why, in one line."""

    kind: str
    finding_codes: tuple[str, ...]
    paths: tuple[str, ...]
    reason: str
    snapshot_id: int | None = None


@dataclass(frozen=True)
class Unrepairable:
    """A finding the repair leaves as it is: why, and what the user can do (``reason``), and
    its ``severity`` (``error``, ``warning``, ``info``) as the repair's exit status counts it:
    a finding about older snapshots only (history, kept) counts as ``info``."""

    finding_code: str
    path: str | None
    reason: str
    severity: str = "error"


@dataclass(frozen=True)
class FollowUp:
    """What to run after the repair: ``command`` restores what a repair leaves without
    (a snapshot's statistics). ``snapshot_id`` is ``None`` for the repair's new snapshot
    before it is committed (its ID is not known yet)."""

    snapshot_id: int | None
    command: str
    reason: str
