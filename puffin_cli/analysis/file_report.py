"""What ``puffin validate`` found in one file: the report of a Puffin file
(analysis/validate.py) and of a Paimon BLOB file (analysis/paimon.py) alike."""

from __future__ import annotations

from dataclasses import dataclass

from puffin_cli.format.findings import Finding, Severity


@dataclass(frozen=True)
class FileReport:
    """What ``puffin validate`` found in one file.

    ``file_size``, ``footer_size`` and ``blob_count`` are ``None`` when the file could not be
    read that far. ``errors``, ``warnings`` and ``infos`` count ``findings`` by severity.
    """

    path: str
    profile: str
    file_size: int | None
    footer_size: int | None
    blob_count: int | None
    errors: int
    warnings: int
    infos: int
    findings: tuple[Finding, ...]

    def failed(self, strict: bool = False) -> bool:
        """An error fails the file; with ``strict``, a warning too."""
        return self.errors > 0 or (strict and self.warnings > 0)


def report_for(path: str, profile: str, file_size: int | None, footer_size: int | None,
            blob_count: int | None, findings: list[Finding]) -> FileReport:
    counts = {severity: 0 for severity in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return FileReport(path, profile, file_size, footer_size, blob_count,
                      counts[Severity.ERROR], counts[Severity.WARNING], counts[Severity.INFO],
                      tuple(findings))
