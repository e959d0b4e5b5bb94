"""``puffin write``'s human view: a short summary of the :class:`WriteSummary` in plain lines
(no colour, no wrapping: paths stay whole for copying). ``--json`` is its serialization."""

from __future__ import annotations

from rich.console import Console

from puffin_cli.analysis.write.plan import WriteSummary, WrittenBlob
from puffin_cli.format.spec import REFERENCED_DATA_FILE_PROPERTY
from puffin_cli.render.layout import plain_lines


def _blob_lines(blob: WrittenBlob) -> list[str]:
    """``  0  TYPE  fields [..]``, then what it holds, its size and codec, and for a DV its
    data file (each on its own line, so an 80-column terminal shows them unbroken)."""
    facts = []
    if blob.ndv is not None:
        facts.append(f"ndv {blob.ndv:,}")
    if blob.cardinality is not None:
        facts.append(f"cardinality {blob.cardinality:,}")
    meta = blob.metadata
    stored = f"{meta.length:,} bytes"
    if meta.compression_codec is not None:
        stored += f" {meta.compression_codec}"
    facts.append(stored)
    if blob.source == "copy":
        facts.append("copied as stored")
    lines = [f"  {blob.index}  {meta.type}  fields {list(meta.fields)}",
             f"     {', '.join(facts)}"]
    referenced = meta.properties.get(REFERENCED_DATA_FILE_PROPERTY)
    if referenced is not None:
        lines.append(f"     data file {referenced}")
    return lines


def human_lines(summary: WriteSummary) -> list[str]:
    footer = "LZ4-compressed" if summary.footer_compressed else "plain"
    count = len(summary.blobs)
    lines = [f"wrote {summary.path}: {summary.file_size:,} bytes, footer {summary.footer_size:,}"
             f" bytes ({footer}), {count} blob{'' if count == 1 else 's'}"]
    for blob in summary.blobs:
        lines.extend(_blob_lines(blob))
    return lines


def write_view(summary: WriteSummary, console: Console) -> None:
    plain_lines(console, human_lines(summary))
