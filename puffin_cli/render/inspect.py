"""``puffin inspect``'s human view (rich) of an InspectReport; ``--json`` is its plain
serialization (render/jsonout.py, documented in docs/json.md).

The human view is a header per file, then one block per blob; decoded summaries are drawn by
their ``kind`` (theta sketch, deletion vector, opaque bytes; any other kind field by field).
Long values (a 300-character data-file path) fold onto further lines instead of being cut.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console
from rich.text import Text

from puffin_cli.analysis.inspection import BlobReport, FileReport, InspectReport
from puffin_cli.analysis.partition_stats.inspection import PartitionStatsFileReport
from puffin_cli.blobs.base import BlobSummary
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import CARDINALITY_PROPERTY
from puffin_cli.format.text import plural
from puffin_cli.render import jsonout, layout

if TYPE_CHECKING:
    from puffin_cli.blobs.deletion_vector import DeletionVectorSummary
    from puffin_cli.blobs.opaque import OpaqueSummary
    from puffin_cli.blobs.theta import ThetaSummary

_FLAG = "bold red"
_OK = "green"


def render_human(report: InspectReport, console: Console) -> None:
    for number, file in enumerate(report.files):
        if number:
            console.print()
        if isinstance(file, FileReport):
            _print_file(console, file)
        elif isinstance(file, PartitionStatsFileReport):
            from puffin_cli.render.partition_stats import print_partition_stats_file

            print_partition_stats_file(console, file)
        else:
            from puffin_cli.render.paimon import print_paimon_file

            print_paimon_file(console, file)


def render_brief(report: InspectReport, console: Console) -> None:
    """``--brief``: per file one line (path, size, blob count), then one line per blob
    (index, type, fields, what it holds: NDV, or a deletion vector's positions and data
    file), whole and unfolded, so that paths stay intact for copying and grep."""
    lines: list[str] = []
    for file in report.files:
        if not isinstance(file, FileReport):
            from puffin_cli.render.paimon import print_paimon_file
            from puffin_cli.render.partition_stats import print_partition_stats_file

            layout.plain_lines(console, lines)
            lines = []
            if isinstance(file, PartitionStatsFileReport):
                print_partition_stats_file(console, file)
            else:
                print_paimon_file(console, file)
            continue
        lines.append(f"{file.path}  {_bytes(file.file_size)}, "
                     f"{plural(len(file.blobs), 'blob')}")
        rows = [(str(b.index), b.metadata.type, _fields(b), *_brief(b)) for b in file.blobs]
        widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
        for row in rows:
            lines.append("  " + "  ".join([row[0].rjust(widths[0]), row[1].ljust(widths[1]),
                                           row[2].ljust(widths[2]), row[3].ljust(widths[3]),
                                           row[4]]).rstrip())
    layout.plain_lines(console, lines)


def _brief(blob: BlobReport) -> tuple[str, str]:
    """What one blob holds, in a few words (a property that disagrees with the bytes is
    flagged), and a deletion vector's data file."""
    if blob.error is not None:
        return f"error: {blob.error.message} [{blob.error.code}]", ""
    summary = blob.summary
    if summary is None:
        return _bytes(blob.metadata.length), ""
    if summary.kind == "theta":
        theta = cast("ThetaSummary", summary)
        ndv = f"ndv {'' if theta.exact else '≈ '}{_count(int(theta.estimate))}"
        return ndv + ("" if theta.ndv_property_matches is not False
                      else f" (MISMATCH: ndv property {theta.ndv_property})"), ""
    if summary.kind == "deletion-vector":
        dv = cast("DeletionVectorSummary", summary)
        text = plural(dv.cardinality, "position")
        if dv.cardinality_matches is False:
            text += f" (MISMATCH: cardinality property {dv.cardinality_property})"
        return text, dv.referenced_data_file or "(no data file)"
    if summary.kind == "opaque":
        return _bytes(cast("OpaqueSummary", summary).size), ""
    return summary.kind, ""


Value = str | Text | list[Text]
Rows = Iterable[tuple[str, Value]]


def _print_rows(console: Console, rows: Rows) -> None:
    """Label rows (render/layout.py); a list value is one paragraph per line."""
    for label, value in rows:
        for number, paragraph in enumerate(value if isinstance(value, list) else [value]):
            layout.row(console, "" if number else label, paragraph)


def _count(value: int) -> str:
    return f"{value:,}"


def _bytes(value: int) -> str:
    return "1 byte" if value == 1 else f"{value:,} bytes"


def _properties(properties: dict[str, str]) -> Value:
    if not properties:
        return Text("none", style="dim")
    return [Text.assemble((key, "bold"), " = ", value) for key, value in properties.items()]


def _unknown_keys(extra: dict[str, Any]) -> Rows:
    for key, value in extra.items():
        yield f"  {key}", Text(f"{json.dumps(value)} (unknown footer key)", style="yellow")


def _print_file(console: Console, file: FileReport) -> None:
    footer = file.footer
    stored = "LZ4-compressed" if footer.compressed else "not compressed"
    layout.print_folded(console, file.path, style="bold", spaces=False)
    _print_rows(console, [
        ("  file size", _bytes(file.file_size)),
        ("  footer", f"{_bytes(footer.footer_size)} at offset {footer.footer_start} (payload "
                     f"{_bytes(footer.payload_size)}, {stored}, flags {footer.flags.hex()})"),
        ("  blobs", _count(len(file.blobs)) + ("" if file.decoded else
                                              ", contents not read (--no-decode)")),
        ("  properties", _properties(file.properties)),
        *_unknown_keys(file.extra),
    ])
    for blob in file.blobs:
        console.print()
        layout.print_folded(console, Text.assemble((f"blob {blob.index}", "bold"), "  ",
                                                   (blob.metadata.type, "bold")))
        _print_rows(console, _blob_rows(blob, layout.drawing_width(console, layout.LABEL_WIDTH)))


def _fields(blob: BlobReport) -> str:
    """Field IDs, each with its column name when a table was given (``?`` when the table's
    schema has no such field)."""
    ids = [str(f) for f in blob.metadata.fields]
    if blob.columns is not None:
        ids = [f"{field_id} ({'?' if name is None else name})"
               for field_id, name in zip(ids, blob.columns, strict=True)]
    return ", ".join(ids) or "none"


def _blob_rows(blob: BlobReport, width: int) -> Rows:
    """The rows of one blob; ``width`` is what a row's value may fill."""
    meta = blob.metadata
    yield "  fields", _fields(blob)
    yield "  snapshot-id", str(meta.snapshot_id)
    yield "  sequence-number", str(meta.sequence_number)
    yield "  offset", str(meta.offset)
    yield "  length", _bytes(meta.length)
    yield "  codec", meta.compression_codec or "none (stored as is)"
    yield "  properties", _properties(meta.properties)
    yield from _unknown_keys(meta.extra)
    if blob.error is not None:
        offset = "" if blob.error.offset is None else f" (at byte {blob.error.offset})"
        yield "  error", Text(f"{blob.error.message}{offset} [{blob.error.code}]", style=_FLAG)
    elif blob.summary is not None:
        for label, value in _summary_rows(blob.summary, meta, width):
            yield f"  {label}" if label else "", value


def _summary_rows(summary: BlobSummary, meta: BlobMetadata, width: int) -> Rows:
    """Rows for a decoded summary, by its ``kind``."""
    if summary.kind == "theta":
        return _theta_rows(cast("ThetaSummary", summary))
    if summary.kind == "deletion-vector":
        return _dv_rows(cast("DeletionVectorSummary", summary), meta, width)
    if summary.kind == "opaque":
        return _opaque_rows(cast("OpaqueSummary", summary))
    return _generic_rows(summary)


def _agreement(label: str, stored: str | None, matches: bool | None, actual: str) -> Text:
    """How a blob property compares with what the bytes say; a mismatch is flagged so that it
    shows without colour too."""
    if stored is None:
        return Text(f"no {label} property", style="dim")
    if matches:
        return Text(f"{label} property {stored} agrees", style=_OK)
    return Text(f"MISMATCH: {label} property is {stored}, the blob says {actual}", style=_FLAG)


def _theta_rows(summary: ThetaSummary) -> Rows:
    estimate = summary.estimate
    if summary.exact:
        ndv = Text(f"NDV {_count(int(estimate))} (exact)")
    else:
        low, high = math.floor(summary.lower_bound), math.ceil(summary.upper_bound)
        ndv = Text(f"NDV ≈ {_count(int(estimate))} (bounds {_count(low)} – {_count(high)} at "
                   f"2 standard deviations; estimate {estimate:,.3f})")
    yield "theta sketch", ndv
    stored = ", compressed" if summary.compressed else ""
    yield "", Text(f"{_count(summary.retained_entries)} retained entries, theta "
                   f"{summary.theta:.10g}, serial version {summary.serial_version}{stored}",
                   style="dim")
    yield "", _agreement("ndv", summary.ndv_property, summary.ndv_property_matches,
                         _count(int(estimate)))


def _range_text(item: tuple[int, int]) -> str:
    start, end = item
    return str(start) if start == end else f"{start}-{end}"


def _dv_rows(summary: DeletionVectorSummary, meta: BlobMetadata, width: int) -> Rows:
    noun = "position" if summary.cardinality == 1 else "positions"
    yield "deletion vector", f"{_count(summary.cardinality)} {noun}"
    if summary.cardinality:
        yield "", Text(f"min {_count(summary.min or 0)}, max {_count(summary.max or 0)}",
                       style="dim")
    yield "", _agreement("cardinality", meta.properties.get(CARDINALITY_PROPERTY),
                         summary.cardinality_matches, _count(summary.cardinality))
    yield "data file", summary.referenced_data_file or Text("not given", style=_FLAG)
    if summary.density:
        yield "density", _density_strip(summary, width)
    shown = [_range_text(r) for r in summary.ranges]
    if summary.truncated:
        shown.append(f"… (first {_count(len(summary.ranges))} of "
                     f"{_count(summary.ranges_total)} ranges; --limit shows more)")
    yield "positions", ", ".join(shown) or Text("none", style="dim")


# Marks of a density strip: a bucket with no deleted row, then 1/8 to 8/8 of its rows deleted.
_NONE = "·"
_LEVELS = "▁▂▃▄▅▆▇█"


def density_marks(counts: tuple[int, ...], step: int, last: int, width: int) -> str:
    """One mark per group of buckets (at most ``width`` marks): how much of the group's
    positions are deleted, in eighths, rounded up so that one deleted row shows."""
    buckets = len(counts)
    marks = min(buckets, max(width, 1))
    out = []
    for mark in range(marks):
        first, end = mark * buckets // marks, (mark + 1) * buckets // marks
        deleted = sum(counts[first:end])
        span = min(end * step, last + 1) - first * step
        out.append(_NONE if deleted == 0 else _LEVELS[max(1, -(-deleted * 8 // span)) - 1])
    return "".join(out)


def _density_strip(summary: DeletionVectorSummary, width: int) -> Text:
    """Where the deleted rows lie in positions 0 to max: a strip of marks, then its span."""
    assert summary.max is not None
    span = f"  positions 0 – {_count(summary.max)}"
    room = width - len(span)
    strip = density_marks(summary.density, summary.density_step, summary.max,
                          room if room >= 8 else width)
    return Text.assemble((strip, "bold"), (span, "dim")) if room >= 8 else Text(strip)


def _opaque_rows(summary: OpaqueSummary) -> Rows:
    yield "content", f"{_bytes(summary.size)} of an undecoded type"
    if summary.head_hex:
        yield "first bytes", summary.head_hex


def _generic_rows(summary: BlobSummary) -> Rows:
    yield "decoded", summary.kind
    for key, value in jsonout.to_jsonable(summary).items():
        if key != "kind":
            yield key, json.dumps(value, ensure_ascii=False)
