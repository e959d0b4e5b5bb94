"""What every blob type module provides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from puffin_cli.format.findings import Finding
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import DEFAULT_LIMIT


@dataclass(frozen=True)
class SummaryOptions:
    """How much detail a summary carries. ``limit`` bounds any list (e.g. DV ranges)."""

    limit: int = DEFAULT_LIMIT


class BlobSummary(Protocol):
    """A decoded blob's summary: a frozen dataclass; ``kind`` names the decoder."""

    @property
    def kind(self) -> str: ...


class BlobHandler(Protocol):
    """Decode, summarize and check one blob type.

    ``data`` is always the decompressed blob. ``summarize`` raises
    :class:`~puffin_cli.errors.PuffinError` when the blob cannot be decoded; ``check``
    never raises for bad bytes: it returns findings (offsets absolute, using ``meta.offset``).
    """

    type_name: str

    def summarize(self, data: bytes, meta: BlobMetadata, options: SummaryOptions) -> BlobSummary:
        ...

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]: ...
