"""``puffin diff``'s human view of a :class:`~puffin_cli.analysis.puffin_diff.PuffinDiff`
(``--json`` is its serialization, docs/json.md).

The two files (``A`` and ``B``), the footer values that differ, then one entry per blob: its
status, its key (type, fields, data file) and its index in each file; for a pair, the metadata
that differs as ``key  A -> B``, and the content: identical bytes, equivalent (other bytes, the
same sketch or positions) or what differs (NDV, theta, retained entries and hashes of sketches;
positions only in A and only in B with their first ranges). Layout (offsets, lengths, sizes) is
shown dim. Blobs that are the same are one line each. The last line says whether the files say
the same.
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from puffin_cli.analysis.puffin_diff import (
    DIFFERENT,
    EQUIVALENT,
    IDENTICAL,
    ONLY_IN_A,
    ONLY_IN_B,
    SAME,
    BlobDiff,
    Change,
    PositionsComparison,
    PuffinDiff,
    SketchComparison,
)
from puffin_cli.format.text import plural
from puffin_cli.render import layout

_STATUS_STYLE = {SAME: "green", DIFFERENT: "bold red", ONLY_IN_A: "red", ONLY_IN_B: "red"}
_STATUS_TEXT = {SAME: "same", DIFFERENT: "differs", ONLY_IN_A: "only in A",
                ONLY_IN_B: "only in B"}
_COUNTED = {**_STATUS_TEXT, DIFFERENT: "different"}
_INDENT = 4
_STATUS_WIDTH = max(len(text) for text in _STATUS_TEXT.values()) + 2


def _value(value: Any) -> str:
    if value is None:
        return "(absent)"
    if isinstance(value, str):
        return repr(value) if value == "" or value != value.strip() else value
    return str(value)


def _change(console: Console, change: Change, style: str = "") -> None:
    layout.print_folded(console, Text(f"{change.key}  {_value(change.a)} -> "
                                      f"{_value(change.b)}", style=style), _INDENT)


def _ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    return ", ".join(str(s) if s == e else f"{s}-{e}" for s, e in ranges)


def _positions(console: Console, p: PositionsComparison) -> None:
    layout.print_folded(console, f"positions  {p.cardinality_a:,} in A, {p.cardinality_b:,} "
                        f"in B; {p.only_in_a:,} only in A, {p.only_in_b:,} only in B", _INDENT)
    for side, count, ranges, total in (("A", p.only_in_a, p.only_in_a_ranges,
                                        p.only_in_a_ranges_total),
                                       ("B", p.only_in_b, p.only_in_b_ranges,
                                        p.only_in_b_ranges_total)):
        if not count:
            continue
        more = (f" (first {len(ranges):,} of {total:,} ranges; --limit shows more)"
                if total > len(ranges) else "")
        layout.print_folded(console, f"only in {side}  {_ranges(ranges)}{more}", _INDENT + 2)


def _sketch(console: Console, s: SketchComparison) -> None:
    layout.print_folded(console, f"theta sketch  NDV {s.ndv_a:,} in A, {s.ndv_b:,} in B; theta "
                        f"{s.theta_a:.10f} / {s.theta_b:.10f}; retained {s.retained_a:,} / "
                        f"{s.retained_b:,}", _INDENT)
    if not s.same_hashes:
        layout.print_folded(console, f"hashes  {s.only_in_a:,} only in A, {s.only_in_b:,} only "
                            "in B (below the smaller theta)", _INDENT + 2)


def _blob(console: Console, blob: BlobDiff) -> None:
    fields = ",".join(str(f) for f in blob.fields)
    where = "/".join("-" if i is None else str(i) for i in (blob.index_a, blob.index_b))
    head = Text.assemble((_STATUS_TEXT[blob.status].ljust(_STATUS_WIDTH),
                          _STATUS_STYLE[blob.status]), (blob.type, "bold"),
                         f"  fields {fields}", ("  index " + where, "dim"))
    data_file = blob.referenced_data_file
    if data_file is not None and head.cell_len + 2 + cell_len(data_file) <= console.width:
        head.append(f"  {data_file}")
        data_file = None
    layout.print_folded(console, head, 0)
    if data_file is not None:
        layout.print_folded(console, data_file, _INDENT, spaces=False)
    if blob.content is None:
        return
    for change in blob.metadata:
        _change(console, change)
    if blob.content == IDENTICAL:
        if blob.status != SAME:
            layout.print_folded(console, "content  identical bytes", _INDENT, style="dim")
    elif blob.content == EQUIVALENT:
        layout.print_folded(console, "content  equivalent: the bytes differ, the "
                            + ("sketch is the same" if blob.sketch is not None
                               else "positions are the same"), _INDENT)
    elif blob.sketch is not None:
        _sketch(console, blob.sketch)
    elif blob.positions is not None:
        _positions(console, blob.positions)
    elif blob.problem is not None:
        layout.print_folded(console, f"content  not compared: {blob.problem}", _INDENT)
    else:
        layout.print_folded(console, "content  the bytes differ", _INDENT)
    if blob.status != SAME:
        for change in blob.layout:
            _change(console, change, "dim")


def render_human(diff: PuffinDiff, console: Console) -> None:
    layout.print_folded(console, Text.assemble(("A  ", "bold"), diff.a,
                                               (f"  {diff.file_size_a:,} bytes", "dim")), 0)
    layout.print_folded(console, Text.assemble(("B  ", "bold"), diff.b,
                                               (f"  {diff.file_size_b:,} bytes", "dim")), 0)
    if diff.footer or diff.layout:
        layout.print_line(console, Text("footer", style="bold"))
        for change in diff.footer:
            _change(console, change)
        for change in diff.layout:
            _change(console, change, "dim")
    for blob in diff.blobs:
        _blob(console, blob)
    counts = diff.counts
    parts = [f"{counts[status]:,} {_COUNTED[status]}" for status in
             (SAME, DIFFERENT, ONLY_IN_A, ONLY_IN_B) if counts[status]]
    blobs = plural(len(diff.blobs), "blob") + (f" ({', '.join(parts)})" if parts else "")
    if diff.same:
        verdict = Text.assemble(("the same", "bold green"), f": {blobs}")
    else:
        changed = len(diff.footer)
        what = [f"{plural(changed, 'footer value')} {'differs' if changed == 1 else 'differ'}"
                ] if changed else []
        verdict = Text.assemble(("different", "bold red"), f": {blobs}",
                                f"; {what[0]}" if what else "")
    layout.print_folded(console, verdict, 0)
