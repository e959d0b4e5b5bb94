"""Findings: what a check says about a file. Shared by the blob checks, ``validate`` and
``table``.

A file's own checks (``validate``) say what they found in ``message``; the file is the one
checked. ``table``'s findings involve files the table metadata names (a statistics file, a
deletion vector's delete file and its data file), so they also carry typed facts, defined with
the table analysis that makes them (:mod:`puffin_cli.analysis.table.facts`): this layer reads
bytes and knows no table.
"""

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
    offset in the file when one applies; ``blob_index`` the footer index of the blob concerned;
    ``facts`` what a table finding is about (its ``message`` is rendered from them;
    ``None`` for a file's own findings): an ``analysis.table.facts.Facts``, read there with
    ``facts_of``.
    """

    code: str
    severity: Severity
    message: str
    offset: int | None = None
    blob_index: int | None = None
    facts: object = None

    @property
    def where(self) -> str:
        """Where in the file, in words (``blob 2, byte 1234``); empty when nowhere."""
        parts = []
        if self.blob_index is not None:
            parts.append(f"blob {self.blob_index}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        return ", ".join(parts)

