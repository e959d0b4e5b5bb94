"""Output of ``puffin validate``: human (a rich table per file and a summary line), JSON (the
list of file reports, documented in docs/validate.md) and GitHub Actions annotations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rich.markup import escape
from rich.table import Table

from puffin_cli.analysis.validate import FileReport
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.render import jsonout
from puffin_cli.render.console import console

_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "dim"}
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


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


def summary_line(reports: Sequence[FileReport], strict: bool) -> str:
    failed = sum(r.failed(strict) for r in reports)
    totals = (sum(r.errors for r in reports), sum(r.warnings for r in reports),
              sum(r.infos for r in reports))
    profile = reports[0].profile if reports else "spec"
    return (f"{_plural(len(reports), 'file')} checked (profile {profile}"
            f"{', strict' if strict else ''}): {len(reports) - failed} passed, {failed} failed; "
            f"{_plural(totals[0], 'error')}, {_plural(totals[1], 'warning')}, "
            f"{totals[2]} info")


def human(reports: Sequence[FileReport], out: TextIO, *, strict: bool) -> None:
    con = console(out)
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
    con.print(summary_line(reports, strict))


def as_json(reports: Sequence[FileReport], out: TextIO) -> None:
    jsonout.dump(list(reports), out)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(reports: Sequence[FileReport], out: TextIO, *, strict: bool) -> None:
    """One workflow command per finding (``::error file=...,title=...::message``)."""
    for report in reports:
        for finding in report.findings:
            where = _where(finding)
            message = f"{finding.message} ({where})" if where else finding.message
            out.write(f"::{_GITHUB_LEVEL[finding.severity]} "
                      f"file={_escape_property(report.path)},"
                      f"title={_escape_property(finding.code)}::{_escape_data(message)}\n")
    out.write(summary_line(reports, strict) + "\n")
