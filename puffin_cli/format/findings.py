"""Findings: what a check says about a file. Shared by the blob checks and ``validate``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    """One thing a check found.

    ``code`` is stable (``family.detail``, e.g. ``dv.crc``); ``offset`` is an absolute byte
    offset in the file when one applies; ``blob_index`` the footer index of the blob concerned.
    """

    code: str
    severity: Severity
    message: str
    offset: int | None = None
    blob_index: int | None = None
