"""What ``puffin scan`` reports: counts of the findings over many Puffin files, as the Spark
pipeline (:mod:`puffin_cli.spark.scan`) or the local scan returns them, and the Puffin files
of a catalog's tables that ``scan --catalog`` reads."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from puffin_cli.analysis.file_report import FileReport
from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import PUFFIN_SUFFIXES

if TYPE_CHECKING:
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.storage import FileIO


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
    unreadable_tables: tuple[str, ...] = ()  # --catalog: "IDENTIFIER: error" of each
    strict: bool = False  # --strict: a warning fails a file too
    files_failed: int = 0  # files with an error (with ``strict``: or a warning)
    failures: tuple[FileReport, ...] = ()  # the first NAMED_FAILURES of them, in order

    @property
    def failed(self) -> bool:
        return self.files_failed > 0 or bool(self.unreadable_tables)


@dataclass(frozen=True)
class TablePuffinFiles:
    """The Puffin files of one catalog table: those its metadata references (statistics files,
    Puffin partition statistics, the deletion vector files of every snapshot's delete
    manifests) and the orphans, Puffin files under its location that nothing references.
    Locations are as the storage layer opens them."""

    identifier: str
    referenced: tuple[str, ...]
    orphans: tuple[str, ...]
    fileio: FileIO  # the storage configuration of the table's files
    error: str | None = None  # why the table could not be read (then no file is listed)


def table_puffin_files(table: Table, identifier: str) -> TablePuffinFiles:
    """Every Puffin file ``table`` references (its delete manifests read once: the live
    files of every snapshot, :class:`LiveFiles`) and the orphans."""
    from puffin_cli.analysis.table.live import LiveFiles
    from puffin_cli.analysis.table.orphans import find_orphans

    referenced: dict[str, None] = {}
    for stats in table.metadata.statistics:
        referenced[table.resolve(stats.path)] = None
    for part in table.metadata.partition_statistics:
        if part.path.endswith(PUFFIN_SUFFIXES):
            referenced[table.resolve(part.path)] = None
    for _snapshot, _live, changes in LiveFiles.walk(table.manifests, table.snapshots(),
                                                    deletes_only=True):
        for _id, entry in changes.deletes_added:
            if entry.is_dv:
                referenced[table.resolve(entry.path)] = None
    orphans = find_orphans(table.fileio, table.table_dir, referenced)
    return TablePuffinFiles(identifier, tuple(referenced),
                            tuple(info.location for info in orphans), table.fileio)


def catalog_puffin_files(name: str, namespaces: Sequence[str], fileio: FileIO
                         ) -> list[TablePuffinFiles]:
    """:func:`table_puffin_files` of every table of
    :func:`~puffin_cli.analysis.catalog.catalog_tables`, each read with ``fileio`` (the CLI's)
    and the catalog's properties for it on top. A table that cannot be read (its metadata, a
    manifest list or a manifest) is listed with its ``error``: one broken table does not keep
    the others from being scanned."""
    from puffin_cli.analysis.catalog import catalog_tables
    from puffin_cli.analysis.table.loading import Table

    found = []
    for described in catalog_tables(name, namespaces):
        try:
            table = Table.of_catalog(described, fileio=fileio)
            found.append(table_puffin_files(table, described.identifier))
        except PuffinError as exc:
            found.append(TablePuffinFiles(described.identifier, (), (), fileio, str(exc)))
    return found
