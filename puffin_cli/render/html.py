"""``puffin table --html FILE``: a table's snapshots as one self-contained HTML page.

Everything is inline: the charting library (uPlot 1.6.32, MIT, from npm; ``assets/``, about
53 KB with its style sheet), the page's own script and style, and the data as one JSON
document, so the page fetches nothing when it is opened. Per table, over its snapshots (oldest
first, x = the snapshot's place in that order): live rows and deleted rows; live data files,
deletion vectors and the files holding them; the NDV of each column from the statistics file
each snapshot has (Trino's view: its own, else the nearest ancestor's; Spark uses only its
own), with a strip marking where Spark and where Trino find none; statistics freshness
(snapshots and hours behind the snapshot whose statistics Trino uses); findings per snapshot.
Hovering a point shows the snapshot ID, operation and commit time. Below: the findings, each
linked to its snapshot's row in the snapshot list.

Size is bounded by snapshots and charted columns, never by data files or DVs (only their
counts per snapshot are charted): at most 64 KiB fixed, plus per table its paths, per
snapshot at most 400 bytes (its operation cut at :data:`MAX_OPERATION` characters) and 21
bytes per charted column (about 80 and 8 in practice), per listed finding at most
:data:`MAX_MESSAGE` characters of message and about 100 bytes more; at most
:data:`MAX_COLUMNS` columns are charted and :data:`MAX_FINDINGS` findings listed per table
(the page says how many more there are).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from puffin_cli.analysis.table.facts import facts_of
from puffin_cli.analysis.table.report import SnapshotView, StatisticsFile, TableReport, TablesReport
from puffin_cli.format.findings import Finding, Severity

MAX_COLUMNS = 32
MAX_FINDINGS = 1000
MAX_MESSAGE = 500  # characters of a listed finding's message (longer ones end in "…")
MAX_OPERATION = 16  # characters of a snapshot's operation (the spec's are at most 9)
_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def _asset(name: str) -> str:
    return resources.files("puffin_cli.render").joinpath("assets", name).read_text("utf-8")


def _ndv_columns(views: tuple[SnapshotView, ...]) -> tuple[list[tuple[int, str]],
                                                            dict[str, StatisticsFile], int]:
    """The columns charted (field ID, name), at most :data:`MAX_COLUMNS` in field-ID order,
    the statistics files by path, and how many columns are left out."""
    files: dict[str, StatisticsFile] = {}
    names: dict[int, str] = {}
    for view in views:
        for stats in view.statistics:
            files.setdefault(stats.path, stats)
            for blob in stats.blobs:
                if len(blob.fields) == 1 and blob.ndv is not None:
                    names.setdefault(blob.fields[0], blob.columns[0] or f"field {blob.fields[0]}")
    ordered = sorted(names.items())
    return ordered[:MAX_COLUMNS], files, max(len(ordered) - MAX_COLUMNS, 0)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _snapshot_of(found: Finding) -> int | None:
    facts = facts_of(found)
    return None if facts is None else facts.snapshot_id


def _table_data(table: TableReport) -> dict[str, Any]:
    views = table.snapshots
    columns, files, columns_left_out = _ndv_columns(views)
    by_id = {v.snapshot_id: v for v in views}
    ndv: list[list[int | None]] = [[] for _ in columns]
    stats_mark: list[str] = []
    behind: list[int | None] = []
    hours_behind: list[float | None] = []
    for view in views:
        used = view.statistics_used
        stats_mark.append("own" if used.spark is not None else
                          "stale" if used.trino is not None else "none")
        source = files.get(used.trino) if used.trino is not None else None
        values: dict[int, int] = {}
        for blob in source.blobs if source is not None else ():
            if len(blob.fields) == 1 and blob.ndv is not None:
                values.setdefault(blob.fields[0], blob.ndv)
        for series, (field_id, _name) in zip(ndv, columns, strict=True):
            series.append(values.get(field_id))
        base = by_id.get(used.trino_snapshot_id) if used.trino_snapshot_id is not None else None
        if used.trino is None or base is None:
            behind.append(None)
            hours_behind.append(None)
        else:
            behind.append(view.sequence_number - base.sequence_number)
            hours_behind.append(round((view.timestamp_ms - base.timestamp_ms) / 3_600_000, 3))
    findings = sorted(table.findings, key=lambda f: _SEVERITY_ORDER[f.severity])
    per_snapshot = {v.snapshot_id: 0 for v in views}
    for found in findings:
        sid = _snapshot_of(found)
        if sid in per_snapshot:
            per_snapshot[sid] += 1
    listed = [{"severity": f.severity.value, "code": f.code,
               "message": _clip(f.message, MAX_MESSAGE),
               "snapshot": None if (sid := _snapshot_of(f)) is None else str(sid)}
              for f in findings[:MAX_FINDINGS]]
    return {
        "path": table.path, "metadata": table.metadata_file,
        "format": table.format_version, "errors": table.errors, "warnings": table.warnings,
        # snapshot IDs are 64-bit: text, as JavaScript numbers would round them
        "id": [str(v.snapshot_id) for v in views],
        "current": [v.current for v in views],
        "seq": [v.sequence_number for v in views],
        "time": [v.timestamp_ms for v in views],
        "op": [_clip(v.operation or "", MAX_OPERATION) for v in views],
        "rows": [v.totals.data_rows for v in views],
        "deleted": [v.totals.deleted_rows for v in views],
        "removed": [v.removed_rows for v in views],
        "files": [v.totals.data_files for v in views],
        "dvs": [v.totals.deletion_vectors for v in views],
        "dvFiles": [v.totals.dv_files for v in views],
        "stats": stats_mark, "behind": behind, "hoursBehind": hours_behind,
        "findingsPer": [per_snapshot[v.snapshot_id] for v in views],
        "columns": [name for _, name in columns], "ndv": ndv,
        "columnsLeftOut": columns_left_out,
        "findings": listed, "findingsLeftOut": max(len(findings) - MAX_FINDINGS, 0),
    }


def _json_in_script(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</``, no HTML comment opener)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def render_page(report: TablesReport) -> str:
    """The whole page, as text."""
    data = {"tables": [_table_data(t) for t in report.tables]}
    title = "puffin table: " + ", ".join(t.path for t in report.tables)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{_asset('uPlot.min.css')}\n{_asset('page.css')}</style>\n"
        f"<script>{_asset('uPlot.iife.min.js')}</script>\n"
        "</head><body><main id=\"tables\"></main>\n"
        f"<script type=\"application/json\" id=\"data\">{_json_in_script(data)}</script>\n"
        f"<script>{_asset('page.js')}</script>\n"
        "</body></html>\n")
