"""``puffin validate``'s views of a ValidationRun: the problems (default: the files with errors
or warnings, a rich table each, then a summary naming the failed files), every file
(``--verbose``), and GitHub Actions annotations (``--github``). ``--json`` is the run's
serialization (render/jsonout.py, docs/json.md)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from puffin_cli.analysis.file_report import FileReport
from puffin_cli.analysis.validate import NAMED_FAILURES, ValidationRun
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.text import plural
from puffin_cli.render import layout

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def status(report: FileReport, strict: bool) -> str:
    if report.failed(strict):
        return "FAIL"
    return "ok" if report.warnings == 0 else "ok (warnings)"


def summary_line(run: ValidationRun) -> str:
    return (f"{plural(run.checked, 'file')} checked (profile {run.profile}"
            f"{', strict' if run.strict else ''}): {run.passed} passed, {run.failed} failed; "
            f"{plural(run.errors, 'error')}, {plural(run.warnings, 'warning')}, "
            f"{run.infos} info")


def _summary(con: Console, run: ValidationRun) -> None:
    """The failed files by name, then the summary line (last and never folded, for a CI log's
    tail and grep)."""
    failed_files(con, run.failed, run.failed_files)
    layout.plain_lines(con, [summary_line(run)])


def failed_files(con: Console, count: int, named: Sequence[str]) -> None:
    """``failed (N):`` and the first :data:`NAMED_FAILURES` of the ``count`` failed files,
    ``named`` (nothing when none failed)."""
    if not count:
        return
    layout.print_folded(con, f"failed ({count:,}):")
    for path in named[:NAMED_FAILURES]:
        layout.print_folded(con, path, 2, spaces=False)
    if count > NAMED_FAILURES:
        layout.print_folded(con, f"… and {count - NAMED_FAILURES:,} more (--json names "
                            "them all)", 2)


def problems(run: ValidationRun, con: Console) -> None:
    """The files with errors or warnings, then the summary."""
    _files(con, [r for r in run.files if r.errors or r.warnings], run.strict)
    _summary(con, run)


def every_file(run: ValidationRun, con: Console) -> None:
    """Every file (``--verbose``), then the summary."""
    _files(con, run.files, run.strict)
    _summary(con, run)


def _files(con: Console, reports: Sequence[FileReport], strict: bool) -> None:
    for report in reports:
        verdict = status(report, strict)
        style = "bold red" if verdict == "FAIL" else "green"
        counts = (f"{plural(report.errors, 'error')}, {plural(report.warnings, 'warning')}, "
                  f"{report.infos} info")
        con.print(f"[{style}]{verdict}[/] {escape(report.path)}  [dim]({counts})[/]",
                  soft_wrap=True)
        if not report.findings:
            continue
        if not layout.fitted(con):
            _plain_findings(con, report.findings)
            continue
        table = Table(show_header=True, header_style="bold", show_lines=False, expand=False,
                      pad_edge=False)
        table.add_column("severity", no_wrap=True)
        table.add_column("code", no_wrap=True)
        table.add_column("blob", justify="right", no_wrap=True)
        table.add_column("offset", justify="right", no_wrap=True)
        table.add_column("message", overflow="fold")
        for finding in report.findings:
            table.add_row(
                f"[{_STYLE[finding.severity]}]{finding.severity.value}[/]",
                escape(finding.code),
                "" if finding.blob_index is None else str(finding.blob_index),
                "" if finding.offset is None else str(finding.offset),
                escape(finding.message),
            )
        con.print(table)


def _plain_findings(con: Console, findings: Sequence[Finding]) -> None:
    """A file's findings as aligned lines under it (for a pipe or a file: no box, nothing
    folded, one finding per line)."""
    rows = [["severity", "code", "blob", "offset", "message"]]
    rows += [[f.severity.value, f.code, "" if f.blob_index is None else str(f.blob_index),
              "" if f.offset is None else str(f.offset), f.message] for f in findings]
    lines = layout.columns(rows, right={2, 3})
    layout.print_line(con, Text("  " + lines[0], style="bold"))
    for finding, line in zip(findings, lines[1:], strict=True):
        text = Text("  " + line)
        text.stylize(_STYLE[finding.severity], 2, 2 + len(finding.severity.value))
        layout.print_line(con, text)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(path: str, finding: Finding) -> str:
    """One GitHub Actions workflow command (``::error file=...,title=...::message``) for a
    finding about the file ``path``."""
    where = finding.where
    message = f"{finding.message} ({where})" if where else finding.message
    return (f"::{_GITHUB_LEVEL[finding.severity]} file={_escape_property(path)},"
            f"title={_escape_property(finding.code)}::{_escape_data(message)}")


def github(run: ValidationRun, con: Console) -> None:
    """One workflow command per finding (:func:`annotation`), then the summary line; written
    as is (never folded)."""
    out = con.file
    for report in run.files:
        for finding in report.findings:
            out.write(annotation(report.path, finding) + "\n")
    out.write(summary_line(run) + "\n")
