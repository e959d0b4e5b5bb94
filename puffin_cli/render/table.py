"""``puffin table``'s human view (rich) of a TablesReport (``--json`` is its serialization,
render/jsonout.py, documented in docs/table.md), and the JSON-lines stream (:func:`write_jsonl`)
written from the table walks themselves as they go.

Per table: a header (metadata file, format version, location, relocations); with more than one
snapshot, the evolution chart: one line per snapshot, oldest first, with its deletion vectors,
a bar of its deleted rows (its share of the live rows, the bar scaled to the largest share) and
a mark for its statistics (own, stale: only an ancestor's, or none); then per snapshot (all of
them for one snapshot, with ``--all-snapshots`` only when ``--limit`` asks for detail) its
statistics files (one row per blob: column names, NDV), which statistics file Spark and Trino
use, partition statistics files, its deletion vectors (at most ``--limit``) and totals; then
the findings, errors first, as ``severity code  message``.

The human view fits the console's width (a terminal's or ``COLUMNS``; for a pipe, lines are
whole) without cutting anything: paths are shown relative to the table when they are inside
it, and a path too long for its row goes on lines of its own, folded after a ``/`` (mid-name
only when one name is longer than a line). Deletion vectors are one row each when their
data-file paths fit, else two lines each: the data file, then the numbers aligned under a
header.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from puffin_cli.analysis.table.facts import facts_of
from puffin_cli.analysis.table.metadata import normalize_location
from puffin_cli.analysis.table.report import DeletionVector, SnapshotView, TableReport, TablesReport
from puffin_cli.analysis.table.walk import Progress, TableWalk
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.text import plural
from puffin_cli.render import jsonout, layout

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
# Paths, details and continuation lines on lines of their own start in this column.
_INDENT = 4
# Under a deletion vector's data file (two-line form), its numbers start in this column.
_NUMBERS_INDENT = 8
_GAP = "  "
# A URI scheme (``file:``, ``s3:``): such a location is not made absolute.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def write_jsonl(walks: Iterable[TableWalk | TableReport], out: TextIO,
                progress: Progress | None = None, *, strict: bool = False,
                warehouse: bool = False) -> bool:
    """The JSON-lines stream: per table a ``table`` record, then per snapshot (oldest first) a
    ``snapshot`` record followed by ``deletion-vector`` records for the deletion vectors that
    appeared (``change`` ``added``) and disappeared (``removed``) since the snapshot before
    (so each appears once, not once per snapshot), then ``finding`` records, and an ``end``
    record. Written as the walk goes; True when a table has an error (with ``strict``, or a
    warning). In a ``warehouse`` a table that cannot be read (a report in ``walks``, or a
    walk that fails) is a ``table.unreadable`` finding of it, and the next table follows."""
    failed = False

    def record(kind: str, value: Any, **extra: Any) -> None:
        body = {"record": kind, **extra, **(jsonout.to_jsonable(value) if value else {})}
        out.write(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n")

    for walk in walks:
        if isinstance(walk, TableReport):
            report = walk
            record("table", None, **_jsonl_head(
                report.path, report.metadata_file, report.format_version, report.table_uuid,
                report.location, report.relocated, report.current_snapshot_id))
            for finding in report.findings:
                record("finding", finding)
        else:
            report = _jsonl_walk(record, walk, progress, warehouse)
        record("end", None, **{"path": report.path, "orphans": list(report.orphans),
                               "manifests-read": report.manifests_read,
                               "errors": report.errors, "warnings": report.warnings})
        failed = failed or bool(report.errors or (strict and report.warnings))
    return failed


def _jsonl_head(path: str, metadata_file: str | None, format_version: int | None,
                table_uuid: str | None, location: str,
                relocated: Iterable[tuple[str, str]], current: int | None) -> dict[str, Any]:
    """A ``table`` record's keys (a table report's, up to ``current-snapshot-id``)."""
    return {"schema-version": jsonout.SCHEMA_VERSIONS["table"], "path": path,
            "metadata-file": metadata_file, "format-version": format_version,
            "table-uuid": table_uuid, "location": location,
            "relocated": [list(rule) for rule in relocated], "current-snapshot-id": current}


def _jsonl_walk(record: Callable[..., None], walk: TableWalk, progress: Progress | None,
                warehouse: bool) -> TableReport:
    """One table's records but its ``end``; its report."""
    table, metadata = walk.table, walk.table.metadata
    record("table", None, **_jsonl_head(
        str(table.table_dir), str(table.metadata_file), metadata.format_version,
        metadata.table_uuid, metadata.location, table.mapper.rules,
        metadata.current_snapshot_id))
    written = 0
    try:
        for view, changes in walk.snapshots(progress):
            summary = jsonout.to_jsonable(view)
            for key in ("deletion-vectors", "deletion-vectors-omitted"):
                del summary[key]
            record("snapshot", None, **summary)
            for change, dvs in (("removed", changes.removed), ("added", changes.added)):
                for dv in dvs:
                    record("deletion-vector", dv, **{"snapshot-id": view.snapshot_id,
                                                     "change": change})
            written = _jsonl_findings(record, walk, written)
        report = walk.finish()
    except PuffinError as exc:
        if not warehouse:
            raise
        report = walk.failed(exc)
    _jsonl_findings(record, walk, written)
    return report


def _jsonl_findings(record: Callable[..., None], walk: TableWalk, written: int) -> int:
    """``finding`` records for the findings made since ``written`` of them were."""
    findings = walk.checks.findings
    for finding in findings[written:]:
        record("finding", finding)
    return len(findings)


def render_human(report: TablesReport, console: Console) -> None:
    for number, table in enumerate(report.tables):
        if number:
            console.print()
        _table(console, table, TablePaths(table.location, table.path))


def github(report: TablesReport, console: Console) -> None:
    """``--github``: each table's findings as GitHub Actions annotations (as ``validate
    --github`` writes them) on the file the finding is about, where it was read (its table's
    metadata file for a finding about no file), then one summary line; never folded."""
    from puffin_cli.render.validate import annotation

    out = console.file
    for table in report.tables:
        for finding in table.findings:
            facts = facts_of(finding)
            where = (facts.local_path or facts.path) if facts is not None else None
            out.write(annotation(where or table.metadata_file or table.path, finding) + "\n")
    errors = sum(t.errors for t in report.tables)
    warnings = sum(t.warnings for t in report.tables)
    out.write(f"{plural(len(report.tables), 'table')} checked: "
              f"{plural(errors, 'error')}, {plural(warnings, 'warning')}\n")


# --- paths and lines --------------------------------------------------------------------------


def _absolute(location: str) -> str:
    """A comparable form of a location; a local path made absolute."""
    text = normalize_location(location)
    return text if _SCHEME.match(text) else os.path.abspath(text)


class TablePaths:
    """Shows locations relative to the table (its ``location`` or its local directory
    ``path``) when they are inside it: ``puffin table``'s and ``puffin repair``'s views."""

    def __init__(self, location: str, path: str) -> None:
        bases = {normalize_location(location), _absolute(path)}
        self.bases = sorted(bases, key=len, reverse=True)
        self.directory = _absolute(path)
        # In messages: a base (optionally as a file: URI; the directory also as given, when
        # relative) followed by '/', not inside a longer path.
        in_text = sorted(bases | {normalize_location(path)}, key=len, reverse=True)
        self.in_text = re.compile("|".join(
            rf"(?<![\w./:-])(?:file:(?://)?)?{re.escape(base)}/" for base in in_text
            if base != "/"))

    def short(self, location: str | None) -> str:
        if location is None:
            return "?"
        text = _absolute(location)
        for base in self.bases:
            if text.startswith(base + "/"):
                return text[len(base) + 1:]
        return location

    def message(self, text: str) -> str:
        return self.in_text.sub("", text) if self.in_text.pattern else text


def _path_row(console: Console, label: str, path: str, style: str = "") -> None:
    """A label and a path: on one line when it fits, else the path on lines of its own."""
    pad = max(layout.LABEL_WIDTH - cell_len(label), 1)
    if cell_len(label) + pad + cell_len(path) <= console.width:
        layout.print_line(console, Text.assemble(label + " " * pad, (path, style)))
        return
    layout.print_line(console, Text(label))
    layout.print_folded(console, path, _INDENT, style=style, spaces=False)


def _grid(console: Console, grid: Table, indent: int) -> None:
    """A rich table in the width left after ``indent``, without trailing blanks."""
    options = console.options.update_width(max(console.width - indent, 20))
    for segments in console.render_lines(grid, options, pad=False):
        line = Text(" " * indent)
        for segment in segments:
            line.append(segment.text, segment.style)
        layout.print_line(console, line)


# --- a table ----------------------------------------------------------------------------------


def _table(console: Console, table: TableReport, paths: TablePaths) -> None:
    layout.print_folded(console, table.path, 0, style="bold", spaces=False)
    _path_row(console, "  metadata", paths.short(table.metadata_file))
    if table.format_version is not None:
        layout.row(console, "  format", f"v{table.format_version}")
    if _absolute(table.location) == paths.directory:
        layout.row(console, "  location", Text("this directory", style="dim"))
    else:
        _path_row(console, "  location", table.location)
    for source, target in table.relocated:
        layout.row(console, "  relocated", f"{source} -> {target}")
    if table.format_version is None:
        layout.print_folded(console, "the table's metadata could not be read (see findings)",
                            _INDENT, style="dim")
    elif not table.snapshots:
        layout.print_folded(console, "no snapshot to show (the table has no current snapshot)",
                            _INDENT, style="dim")
    if len(table.snapshots) > 1:
        console.print()
        _evolution(console, table.snapshots)
    detail = len(table.snapshots) == 1 or any(v.deletion_vectors for v in table.snapshots)
    for view in table.snapshots if detail else ():
        console.print()
        _snapshot(console, view, paths)
    if table.orphans:
        console.print()
        layout.print_folded(console, f"{len(table.orphans)} orphan Puffin file(s) (referenced "
                            "by nothing; see findings)", 2, style="dim")
    console.print()
    findings = sorted(table.findings, key=lambda f: _ORDER[f.severity])
    width = max((len(f.severity.value) for f in findings), default=0)
    for finding in findings:
        _finding(console, finding, width, paths)
    verdict = (f"{table.errors} error(s), {table.warnings} warning(s)" if findings
               else "no findings")
    layout.print_line(console, Text(f"  {verdict}; {table.manifests_read} manifest file(s) read"))


def _finding(console: Console, finding: Finding, severity_width: int, paths: TablePaths) -> None:
    """``severity code  message``; the message's further lines indented."""
    style = _STYLE[finding.severity]
    message = paths.message(finding.message)
    where = [f"blob {finding.blob_index}"] if finding.blob_index is not None else []
    if finding.offset is not None and f"at byte {finding.offset}" not in message:
        where.append(f"at byte {finding.offset}")
    message += f" ({', '.join(where)})" if where else ""
    head = Text.assemble("  ", (finding.severity.value.ljust(severity_width), style), _GAP,
                         (finding.code, style), _GAP)
    lines = layout.fold(message, console.width - _INDENT, first=console.width - head.cell_len)
    layout.print_line(console, head + lines[0])
    for line in lines[1:]:
        layout.print_line(console, Text(" " * _INDENT + line))


# --- a snapshot -------------------------------------------------------------------------------


def _snapshot(console: Console, view: SnapshotView, paths: TablePaths) -> None:
    title = f"snapshot {view.snapshot_id}" + (" (current)" if view.current else "")
    operation = f", {view.operation}" if view.operation else ""
    detail = f"sequence {view.sequence_number}{operation}, schema {view.schema_id}"
    if cell_len(title) + len(_GAP) + cell_len(detail) <= console.width:
        layout.print_line(console, Text.assemble((title, "bold"), _GAP, (detail, "dim")))
    else:
        layout.print_line(console, Text(title, style="bold"))
        layout.print_folded(console, detail, 2, style="dim")
    for stats in view.statistics:
        _path_row(console, "  statistics file", paths.short(stats.path))
        layout.print_folded(console, f"{stats.file_size:,} bytes, footer "
                            f"{stats.footer_size:,} bytes", _INDENT, style="dim")
        grid = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False,
                     header_style="bold")
        for name in ("blob type", "column", "field", "ndv"):
            grid.add_column(name, overflow="fold", justify="right" if name == "ndv" else "left")
        for blob in stats.blobs:
            grid.add_row(blob.type, ", ".join(c if c is not None else "?" for c in blob.columns),
                         ", ".join(str(f) for f in blob.fields),
                         "" if blob.ndv is None else f"{blob.ndv:,}")
        _grid(console, grid, _INDENT)
    if view.columns_without_statistics:
        layout.row(console, "  no statistics", Text(
            f"{', '.join(view.columns_without_statistics)} (puffin stats compute adds them)",
            style="yellow"))
    _statistics_used(console, view, paths)
    for part in view.partition_statistics:
        _path_row(console, "  partition statistics", paths.short(part.path))
        layout.print_folded(console, f"{part.file_size:,} bytes", _INDENT, style="dim")
    by_file: dict[str, list[DeletionVector]] = {}
    for dv in view.deletion_vectors:
        by_file.setdefault(dv.path, []).append(dv)
    for path, dvs in by_file.items():
        _path_row(console, "  deletion vectors in", paths.short(path))
        _deletion_vectors(console, dvs, paths)
    if view.deletion_vectors_omitted:
        layout.print_folded(console, f"{view.deletion_vectors_omitted:,} more deletion "
                            "vector(s) not listed (--limit)", 2, style="dim")
    _totals(console, view)


# --- the evolution chart ----------------------------------------------------------------------

# Eighths of a cell, for the bars.
_EIGHTHS = " ▏▎▍▌▋▊▉█"
_OWN, _STALE, _NONE = "●", "○", "·"
# The bar of the evolution chart: at most this many cells, and none when fewer fit.
_BAR_WIDTH, _BAR_MIN = 24, 8


def _bar(share: float, width: int) -> str:
    """``share`` (0 to 1) of ``width`` cells, in eighths; a non-zero share shows at least an
    eighth."""
    eighths = round(share * width * 8)
    if share > 0:
        eighths = max(eighths, 1)
    full, rest = divmod(min(eighths, width * 8), 8)
    return ("█" * full + (_EIGHTHS[rest] if rest else "")).ljust(width)


def _statistics_mark(view: SnapshotView) -> str:
    used = view.statistics_used
    if used.spark is not None:
        return _OWN
    return _STALE if used.trino is not None else _NONE


def _committed(timestamp_ms: int) -> str:
    """A snapshot's commit time, UTC, to the minute."""
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(timestamp_ms / 1000))


def _evolution(console: Console, views: Sequence[SnapshotView]) -> None:
    """One line per snapshot: ID (``*`` current), commit time (UTC), sequence number,
    operation, deletion vectors, deleted rows with a bar to scale (the most deleted rows fill
    it, at most :data:`_BAR_WIDTH` cells), their share of the snapshot's live rows, the rows
    its replaced data files took away (copy-on-write deletes) and the statistics mark. What
    does not fit the width is left out: the bar first, then the commit time."""
    top = max((v.totals.deleted_rows for v in views), default=0)
    head = ["snapshot", "committed (UTC)", "seq", "operation", "DVs", "deleted", "of rows",
            "removed", "stats"]
    cells = [[str(v.snapshot_id) + ("*" if v.current else ""), _committed(v.timestamp_ms),
              str(v.sequence_number), v.operation or "", f"{v.totals.deletion_vectors:,}",
              f"{v.totals.deleted_rows:,}",
              (f"{v.totals.deleted_rows / v.totals.data_rows:.1%}" if v.totals.data_rows
               else "-"),
              f"{v.removed_rows:,}", _statistics_mark(v)] for v in views]
    widths = [max(cell_len(row[i]) for row in [head, *cells]) for i in range(len(head))]
    right = {2, 4, 5, 6, 7}
    shown = list(range(len(head)))
    room = layout.drawing_width(console, 2 + sum(widths) + len(_GAP) * (len(widths) - 1))
    bar_width = min(room - len(_GAP), _BAR_WIDTH)
    if bar_width < _BAR_MIN:
        bar_width = 0
        if room < 0:
            shown.remove(1)

    def cell(row: Sequence[str], index: int) -> str:
        text = row[index]
        return text.rjust(widths[index]) if index in right else text.ljust(widths[index])

    def line(row: Sequence[str], bar: str | None) -> str:
        parts = [cell(row, i) for i in shown]
        if bar is not None:
            parts.insert(shown.index(5) + 1, bar)
        return _GAP.join(parts).rstrip()

    layout.print_line(console, Text("  deletes and statistics by snapshot, oldest first",
                                    style="bold"))
    layout.print_line(console, Text("  " + line(head, "(to scale)".ljust(bar_width)[
        :bar_width] if bar_width else None), style="dim"))
    start = 2 + sum(widths[i] + len(_GAP) for i in shown if i <= 5)
    for view, row in zip(views, cells, strict=True):
        bar = _bar(view.totals.deleted_rows / top if top else 0.0, bar_width)
        text = Text("  " + line(row, bar if bar_width else None))
        if bar_width:
            text.stylize("red", start, start + bar_width)
        layout.print_line(console, text)
    layout.print_folded(console, f"* current; removed: rows of the data files it replaced, "
                        f"less those it rewrote; stats: {_OWN} its own, {_STALE} stale (only "
                        f"an ancestor's), {_NONE} none", 2, style="dim")


def _totals(console: Console, view: SnapshotView) -> None:
    """One line when it fits, else one line per part."""
    totals = view.totals
    parts = [f"{totals.data_files:,} live data file(s), {totals.data_rows:,} row(s)",
             f"{totals.statistics_files} statistics file(s), {totals.statistics_blobs} blob(s)",
             f"{totals.deletion_vectors} deletion vector(s) in {totals.dv_files} file(s), "
             f"{totals.dv_bytes:,} bytes",
             f"{totals.deleted_rows:,} deleted row(s)"]
    if view.removed_rows:
        parts.append(f"{view.removed_rows:,} row(s) removed by replaced data files")
    if totals.other_delete_files:
        parts.append(f"{totals.other_delete_files} other delete file(s)")
    joined = "; ".join(parts)
    if cell_len(joined) <= console.width - layout.LABEL_WIDTH:
        parts = [joined]
    for number, part in enumerate(parts):
        layout.row(console, "" if number else "  totals", part)


def _statistics_used(console: Console, view: SnapshotView, paths: TablePaths) -> None:
    """Which statistics file Spark (this snapshot's only, and only with its cost-based
    optimizer on) and Trino (the nearest ancestor's) use; a difference is spelled out, so
    that it shows without colour too."""
    used = view.statistics_used
    if not view.statistics:
        nothing = used.spark is None and used.trino is None
        layout.row(console, "  statistics", Text("none registered for this snapshot"
                                                 + (" or its ancestors" if nothing else ""),
                                                 style="dim"))
        if nothing:
            return
    listed = [s.path for s in view.statistics]
    if used.spark is None:
        layout.row(console, "  Spark uses", "none")
    elif listed == [used.spark]:
        layout.row(console, "  Spark uses", "this snapshot's file (above), if "
                   "spark.sql.cbo.enabled")
    else:
        _path_row(console, "  Spark uses", paths.short(used.spark))
    if used.trino is None:
        layout.row(console, "  Trino uses", "none")
    elif used.trino == used.spark:
        layout.row(console, "  Trino uses", "the same file")
    else:
        whose = ("this snapshot" if used.trino_snapshot_id == view.snapshot_id
                 else f"ancestor {used.trino_snapshot_id}")
        layout.row(console, "  Trino uses", Text.assemble(f"{whose}'s file ",
                                                          ("(differs from Spark)", "yellow")))
        layout.print_folded(console, paths.short(used.trino), _INDENT, spaces=False)


def _deletion_vectors(console: Console, dvs: list[DeletionVector], paths: TablePaths) -> None:
    """One row per DV when the data-file paths fit beside the numbers; else the data file on
    its own line(s) and the numbers aligned on the next."""
    header = ["offset", "length", "rows", "container"]
    cells = [["?" if dv.offset is None else str(dv.offset),
              "?" if dv.length is None else f"{dv.length:,}", _rows(dv), dv.container]
             for dv in dvs]
    names = [paths.short(dv.data_file) for dv in dvs]
    wide = layout.columns([["data file", *header], *([n, *c] for n, c in zip(names, cells,
                                                                      strict=True))],
                    right={1, 2, 3})
    if max(cell_len(line) for line in wide) + _INDENT <= console.width:
        layout.print_line(console, Text.assemble(" " * _INDENT, (wide[0], "bold")))
        for line in wide[1:]:
            layout.print_line(console, Text(" " * _INDENT + line))
        return
    numbers = layout.columns([header, *cells], right={0, 1, 2})
    layout.print_line(console, Text.assemble(" " * _INDENT, ("data file", "bold")))
    layout.print_line(console, Text.assemble(" " * _NUMBERS_INDENT, (numbers[0], "bold")))
    for name, line in zip(names, numbers[1:], strict=True):
        layout.print_folded(console, name, _INDENT, spaces=False)
        layout.print_line(console, Text(" " * _NUMBERS_INDENT + line))


def _rows(dv: DeletionVector) -> str:
    """The manifest's record count, and the bitmap's when it differs."""
    rows = f"{dv.record_count:,}"
    if dv.cardinality is not None and dv.cardinality != dv.record_count:
        rows += f" (bitmap {dv.cardinality:,})"
    return rows
