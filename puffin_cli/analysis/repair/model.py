"""What a repair plan is made of: one :class:`Repair` per change it makes and one
:class:`Unrepairable` per finding it leaves alone, with the reason."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Repair:
    """One change the repair makes.

    ``kind`` names the change (``dv.merge``, ``dv.frame``, ``dv.referenced-file``,
    ``stats.correct``, ``stats.remove``, ``partition-stats.remove``, ``orphan.delete``),
    ``finding_codes`` the finding(s) it fixes, ``paths`` the files involved as the metadata names
    them, ``reason`` why, in one line."""

    kind: str
    finding_codes: tuple[str, ...]
    paths: tuple[str, ...]
    reason: str
    snapshot_id: int | None = None


@dataclass(frozen=True)
class Unrepairable:
    """A finding the repair leaves as it is, and why."""

    finding_code: str
    path: str | None
    reason: str


@dataclass(frozen=True)
class FollowUp:
    """What to run after the repair: ``command`` restores what a repair leaves without
    (a snapshot's statistics)."""

    snapshot_id: int
    command: str
    reason: str
