"""Human views of ``puffin stats compute`` and ``puffin scan``: plain summary lines (no colour,
no folding: paths stay whole for copying). ``--json`` is the result's serialization."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console

from puffin_cli.analysis.scan import ScanResult
from puffin_cli.analysis.stats.batch import RefreshPlan, StatsBatchResult, Status, TableOutcome
from puffin_cli.analysis.stats.result import (
    Chosen,
    ColumnStats,
    Mode,
    SketcherReason,
    StatsResult,
    Where,
)
from puffin_cli.format.text import plural
from puffin_cli.render.layout import plain_lines

# "rows/s" is shown only for a sketching step that read at least this many rows: below it the
# figure is the cost of opening a few files, not a rate.
RATE_ROWS = 100_000


def stats_lines(result: StatsResult) -> list[str]:
    """Summary of what ``stats compute`` did: each statistics file named once."""
    deletes = []
    if result.position_delete_files:
        deletes.append(plural(result.position_delete_files, "position delete file"))
    if result.deletion_vectors:
        deletes.append(plural(result.deletion_vectors, "deletion vector"))
    applied = f", deletes: {', '.join(deletes)}" if deletes else ""
    lines = [f"snapshot {result.snapshot_id} (sequence {result.sequence_number}): "
             f"{plural(result.data_files, 'data file')}{applied}", mode_line(result)]
    if result.mode is not Mode.FRESH:
        lines.append(timing_line(result))
    width = max([len(c.name) for c in result.columns] + [6])
    lines.append(f"  {'column':<{width}}  {'field ID':>8}  {'type':<16} {'ndv':>14}  sketch")
    for c in result.columns:
        sketch = "exact" if c.exact else f"estimate ({c.retained} hashes)"
        lines.append(f"  {c.name:<{width}}  {c.field_id:>8}  {c.type:<16} {c.ndv:>14,}  "
                     f"{sketch}")
    reasons = reason_groups(result.columns)
    if len(reasons) > 1:
        lines.extend(f"  {mode} ({', '.join(names)}): {why}" for (mode, why), names in reasons)
    for name, why in result.skipped_columns:
        lines.append(f"  skipped {name}: {why}")
    if result.mode is Mode.FRESH:
        lines.append("nothing written (--full recomputes)")
        return lines
    lines.extend(other_column_lines(result))
    lines.append(f"wrote {result.statistics_path} ({result.file_size:,} bytes, footer "
                 f"{result.footer_size:,} bytes)")
    if result.committed_version is not None:
        name = (result.committed_metadata or "").rsplit("/", 1)[-1]
        lines.append(f"committed as {name} "
                     f"(statistics for snapshot {result.snapshot_id})")
        if result.deleted_file is not None:
            old = ("the snapshot's statistics file above" if result.deleted_file
                   == result.kept_from else result.deleted_file)
            lines.append(f"deleted {old}, which the commit replaced (no other entry names "
                         "it)")
    else:
        lines.append(NOT_REGISTERED)
    lines.extend(missing_lines(result))
    return lines


NOT_REGISTERED = ("not registered in the table: no engine uses it until it is committed "
                  "(--commit)")


def timing_line(result: StatsResult) -> str:
    """The run's time and the sketching's, where (and why, unless the work was small), with
    its rate when enough rows were read."""
    why = sketcher_why(result.sketcher)
    where = (f"in this process{why}" if result.in_process
             else f"on Spark{why}, its start-up not counted")
    rate = ""
    if result.rows_read >= RATE_ROWS and result.sketch_seconds > 0:
        rate = f", {plural(round(result.rows_read / result.sketch_seconds), 'row')}/s"
    return (f"{result.seconds:.1f} s; sketching {result.sketch_seconds:.1f} s {where}{rate}")


def sketcher_why(chosen: Chosen | None) -> str:
    """Why the sketcher is the one it is, in parentheses, unless the work's size (under the
    threshold) or a fresh snapshot says it."""
    if chosen is None or chosen.reason in (SketcherReason.SMALL, SketcherReason.FRESH):
        return ""
    return f" ({chosen.text})"


def reason_groups(columns: Sequence[ColumnStats]
                  ) -> list[tuple[tuple[Mode, str], list[str]]]:
    """The distinct (mode, reason) of the columns, in column order, each with the columns it
    applies to; a fresh column's reason is the snapshot's own file, named once elsewhere."""
    groups: dict[tuple[Mode, str], list[str]] = {}
    for c in columns:
        why = FRESH_REASON if c.mode is Mode.FRESH else c.mode_reason
        groups.setdefault((c.mode, why), []).append(c.name)
    return list(groups.items())


FRESH_REASON = "the snapshot's own sketch, as it is"


def other_column_lines(result: StatsResult) -> list[str]:
    """What the new file holds of the snapshot's registered statistics file: its sketches of
    fresh columns (as they are) and the blobs no column computed now replaces, kept (copied)
    or dropped, and why; the counts are those of the lines."""
    if result.kept_from is None:
        return []
    fresh = sum(1 for c in result.columns if c.mode is Mode.FRESH)
    kept = [o for o in result.other_columns if o.kept]
    dropped = [o for o in result.other_columns if not o.kept]
    counts = [f"{len(result.columns) - fresh} recomputed"]
    if fresh:
        counts.append(f"{fresh} fresh (its sketch kept)")
    counts += [f"{len(kept)} kept", f"{len(dropped)} dropped"]
    lines = [f"the snapshot's statistics file {result.kept_from}: {', '.join(counts)}"]
    lines.extend(f"  kept {o.name} ({o.blob_type}"
                 f"{'' if o.ndv is None else f', ndv {o.ndv:,}'})" for o in kept)
    lines.extend(f"  dropped {o.name} ({o.blob_type}): {o.reason}" for o in dropped)
    return lines


def missing_lines(result: StatsResult) -> list[str]:
    """The columns the new file has no statistics of (``--columns`` named fewer and the
    snapshot had none to keep), and the command that adds them."""
    if not result.missing_columns:
        return []
    names = ", ".join(result.missing_columns)
    return [f"the new file has no statistics of {plural(len(result.missing_columns), 'column')}"
            f" ({names}): an engine planning with it has none for them; "
            f"`{result.follow_up}` adds them"
            f"{' (the sketches there kept)' if result.committed_version is not None else ''}"]


def outcome_line(outcome: TableOutcome) -> str:
    """One table of a run over many tables, in one line."""
    where = f"{outcome.table}: "
    if outcome.error is not None:
        return f"{where}failed: {outcome.error.message}"
    if outcome.status is Status.EMPTY:
        return f"{where}no snapshot: nothing to compute"
    if outcome.result is not None and outcome.result.mode is Mode.FRESH:
        return (f"{where}snapshot {outcome.result.snapshot_id}: fresh, left as it is "
                f"({outcome.result.statistics_path})")
    if outcome.result is not None:
        r = outcome.result
        done = (f"committed as v{r.committed_version}" if r.committed_version is not None
                and r.committed_version >= 0 else "committed" if r.committed_metadata
                else f"wrote {r.statistics_path}")
        fresh = sum(1 for c in r.columns if c.mode is Mode.FRESH)
        kept = sum(1 for o in r.other_columns if o.kept)
        dropped = len(r.other_columns) - kept
        others = f", {fresh} fresh" if fresh else ""
        others += f", {kept} kept" if kept else ""
        others += f", {dropped} dropped" if dropped else ""
        how = "in process" if r.in_process else "on Spark"
        return (f"{where}snapshot {r.snapshot_id}: {r.mode} {how}{sketcher_why(r.sketcher)}, "
                f"{plural(len(r.columns) - fresh, 'column')} computed{others}, "
                f"{plural(r.files_read, 'data file')} and {plural(r.rows_read, 'row')} read; "
                f"{done} ({r.seconds:.1f} s)")
    assert outcome.plan is not None
    return f"{where}{plan_line(outcome.plan)}"


def plan_line(plan: RefreshPlan) -> str:
    spark = plan.spark_uses or "none"
    if plan.mode is Mode.FRESH:
        what = "fresh"
    else:
        how = "in process" if plan.sketcher.where is Where.IN_PROCESS else "on Spark"
        what = (f"{plan.mode} {how}{sketcher_why(plan.sketcher)}, "
                f"reads {plural(plan.files_to_read, 'data file')}, "
                f"{plural(plan.rows_to_read, 'row')} of {plural(plan.data_files, 'file')} "
                f"({plan.mode_reason})")
    return f"snapshot {plan.snapshot_id}: {what}; Spark uses: {spark}"


def batch_lines(result: StatsBatchResult) -> list[str]:
    """Every table's line, then the summary."""
    lines = []
    for outcome in result.tables:
        lines.append(outcome_line(outcome))
        plan = outcome.plan
        if result.dry_run and plan is not None and len({c.mode for c in plan.columns}) > 1:
            groups: dict[tuple[Mode, str], list[str]] = {}
            for c in plan.columns:
                groups.setdefault((c.mode, c.reason), []).append(c.name)
            lines.extend(f"  {mode} ({', '.join(names)}): {why}"
                         for (mode, why), names in groups.items())
    s = result.summary
    if result.dry_run:
        plans = [o.plan for o in result.tables if o.plan is not None]
        modes = []
        for mode in Mode:
            found = [p for p in plans if p.mode is mode]
            if found:
                read = "" if mode is Mode.FRESH else (
                    f" ({plural(sum(p.files_to_read for p in found), 'data file')}, "
                    f"{plural(sum(p.rows_to_read for p in found), 'row')})")
                modes.append(f"{len(found):,} {mode}{read}")
        if s.empty:
            modes.append(f"{s.empty:,} empty")
        failed = f", {s.failed:,} failed" if s.failed else ""
        spark = sum(1 for p in plans if p.sketcher.where is Where.SPARK)
        on_spark = f"; {spark:,} would run on Spark" if spark else ""
        lines.append(f"plan for {plural(s.tables, 'table')}: {', '.join(modes) or 'nothing'}"
                     f"{failed}{on_spark}; nothing computed, no Spark started")
        return lines
    empty = f"{s.empty:,} empty, " if s.empty else ""
    lines.append(f"{plural(s.tables, 'table')}: {s.computed:,} computed, {s.fresh:,} fresh, "
                 f"{empty}{s.failed:,} failed; {plural(s.rows_read, 'row')} read in "
                 f"{s.seconds:.1f} s"
                 f"{' (one Spark session)' if s.spark_started else ' (no Spark needed)'}")
    if s.computed and not result.commit:
        lines.append("the statistics files are not registered in their tables: no engine "
                     "uses them until they are committed (--commit)")
    return lines


def mode_line(result: StatsResult) -> str:
    """How the statistics were made, in one line: fresh (the file), incremental (from which
    base) or full (why), with the data files and rows read; the reason when the columns share
    one (else one line per reason follows the columns)."""
    read = (f"read {plural(result.files_read, 'data file')}, "
            f"{plural(result.rows_read, 'live row')}")
    if result.mode is Mode.FRESH:
        return (f"fresh: snapshot {result.snapshot_id} has statistics of every column: "
                f"{result.statistics_path}")
    why = result.mode_reason if len(reason_groups(result.columns)) <= 1 else ""
    if result.mode is Mode.INCREMENTAL:
        return f"incremental: {read}; {why}" if why else f"incremental: {read}"
    return f"full: {read} ({why})" if why else f"full: {read}"


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
        if result.unreadable_tables:
            lines.append(f"{plural(len(result.unreadable_tables), 'table')} could not be "
                         "read (its Puffin files not scanned):")
            lines.extend(f"  {text}" for text in result.unreadable_tables)
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


def batch_view(result: StatsBatchResult, console: Console) -> None:
    plain_lines(console, batch_lines(result))


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
