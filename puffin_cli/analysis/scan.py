"""What ``puffin scan`` reports: counts of the findings over many Puffin files, as the Spark
pipeline (:mod:`puffin_cli.spark.scan`) or the local scan returns them."""

from __future__ import annotations

from dataclasses import dataclass

from puffin_cli.analysis.file_report import FileReport


@dataclass(frozen=True)
class ScanResult:
    files: int
    files_with_errors: int
    files_with_warnings: int
    errors: int
    warnings: int
    infos: int
    codes: tuple[tuple[str, int], ...]  # finding code -> count, most frequent first
    output: str | None
    output_format: str | None
    seconds: float
    catalog: str | None = None  # scan --catalog: the catalog, its tables scanned, the orphans
    tables: int | None = None
    orphans: tuple[str, ...] = ()
    strict: bool = False  # --strict: a warning fails a file too
    files_failed: int = 0  # files with an error (with ``strict``: or a warning)
    failures: tuple[FileReport, ...] = ()  # the first NAMED_FAILURES of them, in order

    @property
    def failed(self) -> bool:
        return self.files_failed > 0
