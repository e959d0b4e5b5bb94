"""``puffin scan --spark``: validate many Puffin files in parallel on Spark executors.

The driver lists the files; each executor task runs :func:`puffin_cli.analysis.validate.
validate_file` (the code of ``puffin validate``) on its share and returns one JSON-ready record
per file (the :class:`~puffin_cli.analysis.validate.FileReport` in its JSON form); the driver
collects them, writes them as JSON lines or Parquet, and summarizes. Executors must see the
files at the same paths as the driver (local mode, or a shared file system) and have
puffin-cli installed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from puffin_cli.format.errors import PuffinError


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

    @property
    def failed(self) -> bool:
        return self.errors > 0


def validate_records(paths: Iterable[str], profile: str, max_blob_size: int
                     ) -> Iterator[dict[str, Any]]:
    """One JSON-ready report per file (runs on executors)."""
    from puffin_cli.analysis.validate import validate_file
    from puffin_cli.render.jsonout import to_jsonable

    for path in paths:
        report = validate_file(path, profile=profile, max_blob_size=max_blob_size)
        record: dict[str, Any] = to_jsonable(report)
        yield record


def summarize(records: Sequence[dict[str, Any]], output: str | None,
              output_format: str | None, seconds: float) -> ScanResult:
    codes: Counter[str] = Counter()
    for record in records:
        codes.update(f["code"] for f in record["findings"])
    return ScanResult(
        files=len(records),
        files_with_errors=sum(1 for r in records if r["errors"]),
        files_with_warnings=sum(1 for r in records if r["warnings"]),
        errors=sum(r["errors"] for r in records),
        warnings=sum(r["warnings"] for r in records),
        infos=sum(r["infos"] for r in records),
        codes=tuple(sorted(codes.items(), key=lambda item: (-item[1], item[0]))),
        output=output, output_format=output_format, seconds=round(seconds, 3))


def write_records(records: Sequence[dict[str, Any]], output: str, output_format: str) -> None:
    """JSON lines (one file report per line) or Parquet (one row per file, findings a list of
    structs), written to a temp file and renamed into place."""
    import json
    import os

    temp = f"{output}.{os.getpid()}.tmp"
    try:
        if output_format == "jsonl":
            with open(temp, "w", encoding="utf-8") as handle:
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(list(records), schema=_arrow_schema()), temp)
        os.replace(temp, output)
    except OSError as exc:
        raise PuffinError(f"cannot write: {exc.strerror}", code="scan.output",
                          path=output) from None
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


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
         quiet_spark: bool = True) -> ScanResult:
    """Validate ``paths`` (on Spark executors with ``use_spark``, else in this process)."""
    start = time.monotonic()
    if use_spark:
        from puffin_cli.spark.session import get_session, ship_package

        spark = get_session(master, spark_conf, quiet=quiet_spark)
        ship_package(spark)
        sc = spark.sparkContext
        slices = max(1, min(len(paths), sc.defaultParallelism * 4))
        records = sc.parallelize(list(paths), slices).mapPartitions(
            lambda part: validate_records(part, profile, max_blob_size)).collect()
    else:
        records = list(validate_records(paths, profile, max_blob_size))
    if output is not None:
        write_records(records, output, output_format)
    return summarize(records, output, output_format if output else None,
                     time.monotonic() - start)
