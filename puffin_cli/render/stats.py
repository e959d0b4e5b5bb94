"""Human views of ``puffin stats compute`` and ``puffin scan``: plain summary lines (no colour,
no folding: paths stay whole for copying). ``--json`` is the result's serialization."""

from __future__ import annotations

from rich.console import Console

from puffin_cli.analysis.scan import ScanResult
from puffin_cli.analysis.stats.result import StatsResult
from puffin_cli.render.layout import plain_lines, plural


def stats_lines(result: StatsResult) -> list[str]:
    """Summary of what ``stats compute`` did."""
    deletes = []
    if result.position_delete_files:
        deletes.append(plural(result.position_delete_files, "position delete file"))
    if result.deletion_vectors:
        deletes.append(plural(result.deletion_vectors, "deletion vector"))
    applied = f", deletes: {', '.join(deletes)}" if deletes else ""
    rate = result.rows_read / result.sketch_seconds if result.sketch_seconds > 0 else 0.0
    lines = [f"snapshot {result.snapshot_id} (sequence {result.sequence_number}): "
             f"{plural(result.data_files, 'data file')}{applied}", mode_line(result)]
    if result.mode != "fresh":
        where = "in this process" if result.in_process else "Spark's start-up not counted"
        lines.append(f"{result.seconds:.1f} s; sketching {result.sketch_seconds:.1f} s "
                     f"({plural(round(rate), 'row')}/s, {where})")
    width = max([len(c.name) for c in result.columns] + [6])
    mixed = len({c.mode for c in result.columns}) > 1
    lines.append(f"  {'column':<{width}}  {'id':>5}  {'type':<16} {'ndv':>14}  sketch")
    for c in result.columns:
        sketch = "exact" if c.exact else f"estimate ({c.retained} hashes)"
        how = f"; {c.mode}: {c.mode_reason}" if mixed else ""
        lines.append(f"  {c.name:<{width}}  {c.field_id:>5}  {c.type:<16} {c.ndv:>14,}  "
                     f"{sketch}{how}")
    for name, why in result.skipped_columns:
        lines.append(f"  skipped {name}: {why}")
    if result.mode == "fresh":
        lines.append(f"already fresh: {result.statistics_path} (nothing written; --full "
                     "recomputes)")
    else:
        lines.append(f"wrote {result.statistics_path} ({result.file_size:,} bytes, footer "
                     f"{result.footer_size:,} bytes)")
    if result.committed_version is not None:
        name = (result.committed_metadata or "").rsplit("/", 1)[-1]
        lines.append(f"committed as {name} "
                     f"(statistics for snapshot {result.snapshot_id})")
    return lines


def mode_line(result: StatsResult) -> str:
    """How the statistics were made, in one line: fresh, incremental (from which base) or
    full (why), with the data files and rows read."""
    read = (f"read {plural(result.files_read, 'data file')}, "
            f"{plural(result.rows_read, 'live row')}")
    if result.mode == "fresh":
        return f"fresh: {result.mode_reason}"
    if result.mode == "incremental":
        return f"incremental: {read}; {result.mode_reason}"
    return f"full: {read} ({result.mode_reason})" if result.mode_reason else f"full: {read}"


ORPHANS_SHOWN = 20


def scan_lines(result: ScanResult) -> list[str]:
    """Summary of what ``scan`` found; the files that failed are named first, as
    ``validate``'s summary names them (the last line is the one to grep)."""
    rate = result.files / result.seconds if result.seconds > 0 else 0.0
    lines = []
    if result.files_failed:
        lines.append(f"failed ({result.files_failed:,}):")
        lines.extend(f"  {report.path}" for report in result.failures)
        if result.files_failed > len(result.failures):
            lines.append(f"  … and {result.files_failed - len(result.failures):,} more "
                         "(--output has every file's findings)")
    for code, count in result.codes:
        lines.append(f"  {count:>8,}  {code}")
    if result.catalog is not None:
        lines.append(f"{plural(result.tables or 0, 'table')} of catalog {result.catalog}; "
                     f"{plural(len(result.orphans), 'orphan Puffin file')} (under a table, "
                     "referenced by none of its metadata)")
        shown = result.orphans[:ORPHANS_SHOWN]
        lines.extend(f"  orphan  {path}" for path in shown)
        if len(result.orphans) > len(shown):
            lines.append(f"  … {len(result.orphans) - len(shown):,} more (--json lists all)")
    if result.output is not None:
        lines.append(f"findings written to {result.output} ({result.output_format})")
    lines.append(f"scanned {plural(result.files, 'Puffin file')} in {result.seconds:.1f} s "
                 f"({plural(round(rate), 'file')}/s){', strict' if result.strict else ''}: "
                 f"{result.files_with_errors:,} with errors, "
                 f"{result.files_with_warnings:,} with warnings; "
                 f"{plural(result.errors, 'error')}, {plural(result.warnings, 'warning')}, "
                 f"{result.infos:,} info")
    return lines


def stats_view(result: StatsResult, console: Console) -> None:
    plain_lines(console, stats_lines(result))


def scan_view(result: ScanResult, console: Console) -> None:
    plain_lines(console, scan_lines(result))


def scan_github(result: ScanResult, console: Console) -> None:
    """GitHub Actions annotations for the findings of the failed files the result names (as
    ``validate --github`` writes them), then the summary's last line."""
    from puffin_cli.render.validate import annotation

    out = console.file
    for report in result.failures:
        for finding in report.findings:
            out.write(annotation(report.path, finding) + "\n")
    out.write(scan_lines(result)[-1] + "\n")
