"""``puffin validate``'s views of a ValidationRun: the problems (default: the files with errors
or warnings, a rich table each, then a summary naming the failed files), every file
(``--verbose``), and GitHub Actions annotations (``--github``). ``--json`` is the run's
serialization (render/jsonout.py, docs/json.md)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from puffin_cli.analysis.validate import FileReport, ValidationRun
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.render import layout

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
# The summary names at most this many failed files (--json names them all).
NAMED_FAILURES = 50


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _where(finding: Finding) -> str:
    parts = []
    if finding.blob_index is not None:
        parts.append(f"blob {finding.blob_index}")
    if finding.offset is not None:
        parts.append(f"byte {finding.offset}")
    return ", ".join(parts)


def status(report: FileReport, strict: bool) -> str:
    if report.failed(strict):
        return "FAIL"
    return "ok" if report.warnings == 0 else "ok (warnings)"


def summary_line(run: ValidationRun) -> str:
    return (f"{_plural(run.checked, 'file')} checked (profile {run.profile}"
            f"{', strict' if run.strict else ''}): {run.passed} passed, {run.failed} failed; "
            f"{_plural(run.errors, 'error')}, {_plural(run.warnings, 'warning')}, "
            f"{run.infos} info")


def _summary(con: Console, run: ValidationRun) -> None:
    """The failed files by name, then the summary line (last and never folded, for a CI log's
    tail and grep)."""
    if run.failed_files:
        layout.print_folded(con, f"failed ({run.failed:,}):")
        for path in run.failed_files[:NAMED_FAILURES]:
            layout.print_folded(con, path, 2, spaces=False)
        if run.failed > NAMED_FAILURES:
            layout.print_folded(con, f"… and {run.failed - NAMED_FAILURES:,} more (--json names "
                                "them all)", 2)
    layout.plain_lines(con, [summary_line(run)])


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
        counts = (f"{_plural(report.errors, 'error')}, {_plural(report.warnings, 'warning')}, "
                  f"{report.infos} info")
        con.print(f"[{style}]{verdict}[/] {escape(report.path)}  [dim]({counts})[/]",
                  soft_wrap=True)
        if not report.findings:
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


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(run: ValidationRun, con: Console) -> None:
    """One workflow command per finding (``::error file=...,title=...::message``), then the
    summary line; written as is (never folded)."""
    out = con.file
    for report in run.files:
        for finding in report.findings:
            where = _where(finding)
            message = f"{finding.message} ({where})" if where else finding.message
            out.write(f"::{_GITHUB_LEVEL[finding.severity]} "
                      f"file={_escape_property(report.path)},"
                      f"title={_escape_property(finding.code)}::{_escape_data(message)}\n")
    out.write(summary_line(run) + "\n")
