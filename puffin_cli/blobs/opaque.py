"""Blob types puffin-cli has no decoder for: shown as size and leading bytes, never an error."""

from __future__ import annotations

from dataclasses import dataclass, field

from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.format.findings import Finding
from puffin_cli.format.metadata import BlobMetadata

PREVIEW_BYTES = 32


@dataclass(frozen=True)
class OpaqueSummary:
    size: int
    head_hex: str
    kind: str = field(default="opaque")


class OpaqueHandler:
    type_name = "*"

    def summarize(self, data: bytes, meta: BlobMetadata, options: SummaryOptions) -> OpaqueSummary:
        return OpaqueSummary(size=len(data), head_hex=data[:PREVIEW_BYTES].hex())

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]:
        return []


OPAQUE = OpaqueHandler()
