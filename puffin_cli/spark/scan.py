"""``puffin scan --spark``: validate many Puffin files in parallel on Spark executors.

The driver lists the files; each executor task runs :func:`puffin_cli.analysis.validate.
validate_file` (the code of ``puffin validate``) on its share (two tasks per core, so
Spark's cost per task is spread over many files) and returns one :class:`Tally` of its
share: counts, finding codes and, only when ``--output`` asks for them, each file's report
in its JSON form. The driver merges the tallies, writes the records as JSON lines or Parquet,
and summarizes. Executors read the files themselves with the storage layer and the driver's
FileIO configuration (shipped with each task, so object stores need nothing on the executors
but puffin-cli's dependencies); local paths must be the same on every executor (local mode,
or a shared file system).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.scan import ScanResult
from puffin_cli.analysis.validate import NAMED_FAILURES
from puffin_cli.errors import PuffinError

if TYPE_CHECKING:
    from puffin_cli.analysis.file_report import FileReport
    from puffin_cli.analysis.validate import Progress
    from puffin_cli.storage import FileIO


@dataclass
class Tally:
    """The counts of a share of the files (one Spark task's, or all of them) and, when the
    findings are to be written, each file's report in its JSON form. Executors return one
    tally per task, so the driver receives a few small objects, never a record per file
    unless ``--output`` asks for them."""

    files: int = 0
    files_with_errors: int = 0
    files_with_warnings: int = 0
    errors: int = 0
    warnings: int = 0
    infos: int = 0
    codes: Counter[str] = field(default_factory=Counter)
    records: list[dict[str, Any]] = field(default_factory=list)
    files_failed: int = 0
    failures: list[FileReport] = field(default_factory=list)  # the first NAMED_FAILURES

    def add(self, report: FileReport, keep_record: bool, strict: bool = False) -> None:
        self.files += 1
        if report.failed(strict):
            self.files_failed += 1
            if len(self.failures) < NAMED_FAILURES:
                self.failures.append(report)
        self.files_with_errors += report.errors > 0
        self.files_with_warnings += report.warnings > 0
        self.errors += report.errors
        self.warnings += report.warnings
        self.infos += report.infos
        self.codes.update(finding.code for finding in report.findings)
        if keep_record:
            from puffin_cli.render.jsonout import to_jsonable

            self.records.append(to_jsonable(report))

    def merge(self, other: Tally) -> None:
        self.files += other.files
        self.files_with_errors += other.files_with_errors
        self.files_with_warnings += other.files_with_warnings
        self.errors += other.errors
        self.warnings += other.warnings
        self.infos += other.infos
        self.codes.update(other.codes)
        self.records.extend(other.records)
        self.files_failed += other.files_failed
        self.failures.extend(other.failures[:NAMED_FAILURES - len(self.failures)])


def validate_share(items: Iterable[tuple[str, int]], profile: str, max_blob_size: int,
                   keep_records: bool, fileios: Sequence[FileIO], strict: bool = False,
                   progress: Progress | None = None) -> Iterator[Tally]:
    """Validate a share of the files, each ``(location, i)`` read with ``fileios[i]`` (the
    driver's storage configurations, shipped with the task: executors read the objects
    themselves, concurrently); one :class:`Tally` (runs on executors; in this process,
    ``progress`` is told the files done after each)."""
    from itertools import groupby

    from puffin_cli.analysis.validate import validate_files

    shares = [(index, [path for path, _ in run])
              for index, run in groupby(items, key=lambda item: item[1])]
    total = sum(len(paths) for _, paths in shares)
    tally = Tally()
    for index, paths in shares:
        done = tally.files

        def told(count: int, _share: int, done: int = done) -> None:
            if progress is not None:
                progress(done + count, total)

        for report in validate_files(paths, profile=profile, max_blob_size=max_blob_size,
                                     fileio=fileios[index], progress=told):
            tally.add(report, keep_records, strict)
    yield tally


def summarize(tally: Tally, output: str | None, output_format: str | None,
              seconds: float, strict: bool = False) -> ScanResult:
    return ScanResult(
        files=tally.files, files_with_errors=tally.files_with_errors,
        files_with_warnings=tally.files_with_warnings, errors=tally.errors,
        warnings=tally.warnings, infos=tally.infos,
        codes=tuple(sorted(tally.codes.items(), key=lambda item: (-item[1], item[0]))),
        output=output, output_format=output_format, seconds=round(seconds, 3), strict=strict,
        files_failed=tally.files_failed, failures=tuple(tally.failures))


def write_records(records: Sequence[dict[str, Any]], output: str, output_format: str,
                  fileio: FileIO, force: bool = False) -> None:
    """JSON lines (one file report per line) or Parquet (one row per file, findings a list of
    structs), published only when complete (an existing output is replaced only with
    ``force``)."""
    import json

    from puffin_cli.format.text import encode

    try:
        with fileio.new_output(output).create(overwrite=force) as out:
            if output_format == "jsonl":
                for record in records:
                    # a lone surrogate (a file name that is not UTF-8) is written as its JSON escape
                    out.write(encode(json.dumps(record, ensure_ascii=False) + "\n"))
            else:
                import io

                import pyarrow as pa
                import pyarrow.parquet as pq

                table = pa.Table.from_pylist(list(records), schema=_arrow_schema())
                buffer = io.BytesIO()  # one small row per file
                pq.write_table(table, buffer)
                out.write(buffer.getbuffer())
    except OSError as exc:
        raise PuffinError(f"cannot write: {exc.strerror}", code="scan.output",
                          path=output) from None


def _arrow_schema() -> Any:
    import pyarrow as pa

    finding = pa.struct([("code", pa.string()), ("severity", pa.string()),
                         ("message", pa.string()), ("offset", pa.int64()),
                         ("blob-index", pa.int64())])
    return pa.schema([("path", pa.string()), ("profile", pa.string()),
                      ("file-size", pa.int64()), ("footer-size", pa.int64()),
                      ("blob-count", pa.int64()), ("errors", pa.int64()),
                      ("warnings", pa.int64()), ("infos", pa.int64()),
                      ("findings", pa.list_(finding))])


def scan(paths: Sequence[str], *, master: str | None = None, profile: str = "spec",
         max_blob_size: int, output: str | None = None, output_format: str = "jsonl",
         use_spark: bool = True, spark_conf: dict[str, str] | None = None,
         quiet_spark: bool = True, force: bool = False,
         fileio: FileIO,
         fileios: Sequence[FileIO] | None = None, strict: bool = False,
         progress: Progress | None = None) -> ScanResult:
    """Validate ``paths`` (on Spark executors with ``use_spark``, else in this process).
    ``fileios`` gives each path its storage configuration (one per path: the FileIO of its
    table, for a catalog scan); by default ``fileio`` (the CLI's), which also writes
    ``output``. ``progress`` is told (files done, files) in this process, (Spark tasks done,
    tasks) on Spark."""
    start = time.monotonic()
    keep = output is not None
    distinct: dict[tuple[tuple[str, str], ...], int] = {}
    configs: list[FileIO] = []
    items = []
    for path, its_io in zip(paths, fileios or [fileio] * len(paths), strict=True):
        key = tuple(sorted(its_io.properties.items()))
        if key not in distinct:
            distinct[key] = len(configs)
            configs.append(its_io)
        items.append((path, distinct[key]))
    tally = Tally()
    if use_spark:
        from puffin_cli.spark.session import get_session, run_with_progress, ship_package

        spark = get_session(master, spark_conf, quiet=quiet_spark)
        ship_package(spark)
        sc = spark.sparkContext
        # Two tasks per core: Spark's cost per task (tens of ms) spread over many files, and
        # still a second task for a core whose first share was quick.
        slices = max(1, min(len(paths), sc.defaultParallelism * 2))
        parts = run_with_progress(spark, sc.parallelize(items, slices).mapPartitions(
            lambda share: validate_share(share, profile, max_blob_size, keep, configs, strict)
        ).collect, progress, "puffin scan")
        for part in parts:
            tally.merge(part)
    else:
        for part in validate_share(items, profile, max_blob_size, keep, configs, strict,
                                   progress):
            tally.merge(part)
    if output is not None:
        write_records(tally.records, output, output_format, fileio, force)
    return summarize(tally, output, output_format if output else None,
                     time.monotonic() - start, strict)
