"""Paimon BLOB files: ``inspect`` reports and ``validate`` findings.

:func:`inspect_paimon` reads the trailer and index (the metadata) and, for at most ``limit``
rows, each record's framing (magic, length field, CRC and a nested container's header), never
record data. :func:`validate_paimon` checks every structural rule of
:mod:`puffin_cli.format.paimon_blob` (listed with their codes in docs/validate.md), streaming
each record once for its CRC; it never raises.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass

from puffin_cli.analysis.file_report import FileReport, report_for
from puffin_cli.errors import PuffinError
from puffin_cli.format import paimon_blob as pb
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.spec import DEFAULT_LIMIT, DEFAULT_MAX_BLOB_SIZE
from puffin_cli.storage import FileIO

FORMAT = "paimon-blob"
# Findings of one code beyond this many are counted in one last finding instead.
MAX_FINDINGS_PER_CODE = 50


@dataclass(frozen=True)
class NestedSummary:
    """A row whose data is a nested ``ARRAY<BLOB>`` (``array``) or ``MAP<K, BLOB>`` (``map``)
    container: its version and element (entry) count, from its header."""

    kind: str
    version: int
    count: int


@dataclass(frozen=True)
class RowReport:
    """One row: ``kind`` blob, null, placeholder (or marker, an unknown negative index
    value). For a blob row, its record's ``offset`` and ``length`` (from the index) and
    ``data_length``; when the record was read (not --no-decode), its stored ``crc`` (8 hex
    digits), the ``nested`` container it holds, and a ``problem`` when its framing is wrong."""

    row: int
    kind: str
    offset: int | None
    length: int | None
    data_length: int | None
    crc: str | None = None
    nested: NestedSummary | None = None
    problem: str | None = None


@dataclass(frozen=True)
class PaimonFileReport:
    """A readable Paimon BLOB file: trailer, index and the first ``limit`` rows."""

    path: str
    format: str
    file_size: int
    version: int
    index_offset: int
    index_length: int
    row_count: int
    records: int
    nulls: int
    placeholders: int
    data_size: int
    decoded: bool
    limit: int
    rows: tuple[RowReport, ...]

    @property
    def ok(self) -> bool:
        return all(row.problem is None for row in self.rows)

    def failures(self) -> list[PuffinError]:
        return [PuffinError(f"row {row.row}: {row.problem}", code="paimon.record",
                            path=self.path, offset=row.offset)
                for row in self.rows if row.problem is not None]


@dataclass(frozen=True)
class DumpedRow:
    """One row of a Paimon BLOB file (``dump-blob --json``)."""

    path: str
    row: RowReport


def row_report(reader: pb.PaimonBlobReader, number: int, decode: bool) -> RowReport:
    """Row ``number``: from the index; with ``decode``, also from its record's framing."""
    row = reader.index.row(number)
    if row.kind != "blob":
        return RowReport(number, row.kind, None, None, None)
    base = RowReport(number, row.kind, row.offset, row.length, row.data_length)
    if not decode:
        return base
    try:
        frame = reader.frame(row)
    except PuffinError as exc:
        return RowReport(number, row.kind, row.offset, row.length, row.data_length,
                         problem=exc.message)
    problems = []
    if frame.magic != pb.MAGIC_BYTES:
        problems.append(f"record magic is {frame.magic.hex()}, expected "
                        f"{pb.MAGIC_BYTES.hex()}")
    if frame.length_field != row.length:
        problems.append(f"length field {frame.length_field} differs from the index's "
                        f"{row.length}")
    header = pb.nested_header(frame.nested_header)
    nested = None if header is None else NestedSummary(*header)
    return RowReport(number, row.kind, row.offset, row.length, row.data_length,
                     f"{frame.crc:08x}", nested, "; ".join(problems) or None)


def inspect_paimon(location: str | os.PathLike[str], *, decode: bool = True,
                   limit: int = DEFAULT_LIMIT,
                   max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                   fileio: FileIO) -> PaimonFileReport:
    """The trailer, index and first ``limit`` rows of a Paimon BLOB file; raises
    :class:`PuffinError` when its trailer or index cannot be read."""
    with pb.PaimonBlobReader(location, memory_limit=max_blob_size, fileio=fileio) as reader:
        index = reader.index
        rows = tuple(row_report(reader, n, decode) for n in range(min(limit, index.rows)))
        return PaimonFileReport(
            path=reader.path, format=FORMAT, file_size=index.file_size,
            version=index.version, index_offset=index.index_offset,
            index_length=index.index_length, row_count=index.rows, records=index.records,
            nulls=index.nulls, placeholders=index.placeholders, data_size=index.records_end,
            decoded=decode, limit=limit, rows=rows)


class _Findings:
    """Findings with at most :data:`MAX_FINDINGS_PER_CODE` of one code; the rest counted."""

    def __init__(self) -> None:
        self.items: list[Finding] = []
        self.counts: Counter[str] = Counter()

    def error(self, code: str, message: str, offset: int | None,
              row: int | None = None) -> None:
        self.counts[code] += 1
        if self.counts[code] <= MAX_FINDINGS_PER_CODE:
            self.items.append(Finding(code, Severity.ERROR, message, offset, row))

    def extend(self, found: list[Finding]) -> None:
        for finding in found:
            self.error(finding.code, finding.message, finding.offset, finding.blob_index)

    def done(self) -> list[Finding]:
        for code, count in self.counts.items():
            if count > MAX_FINDINGS_PER_CODE:
                self.items.append(Finding(code, Severity.ERROR, f"{count - MAX_FINDINGS_PER_CODE}"
                                          " more findings of this code not listed"))
        return self.items


def _check_record(reader: pb.PaimonBlobReader, record: pb.ScannedRecord, found: _Findings,
                  max_blob_size: int) -> None:
    row = record.row
    assert row.offset is not None and row.length is not None
    end = row.offset + row.length
    where = f"row {row.row}"
    if record.magic != pb.MAGIC_BYTES:
        found.error("paimon.record.magic", f"{where}: record magic is {record.magic.hex()}, "
                    f"expected {pb.MAGIC_BYTES.hex()}", row.offset, row.row)
    if record.length_field != row.length:
        found.error("paimon.record.length", f"{where}: length field is {record.length_field}, "
                    f"the index says {row.length}", end - pb.RECORD_TAIL, row.row)
    if record.crc != record.stored_crc:
        found.error("paimon.record.crc", f"{where}: CRC-32 of magic, data and length field "
                    f"is {record.crc:08x}, the record stores {record.stored_crc:08x}", end - 4,
                    row.row)
    if pb.nested_kind(record.data_head) is not None:
        found.extend(pb.check_nested(reader.read, row.offset + 4, row.length - 16, row.row,
                                     memory_limit=max_blob_size))


def _check(reader: pb.PaimonBlobReader, found: _Findings, max_blob_size: int) -> None:
    index = reader.index
    for number, length in enumerate(index.lengths):
        if length < 0 and length not in (pb.NULL_LENGTH, pb.PLACEHOLDER_LENGTH):
            found.error("paimon.index.marker", f"row {number}: index value {length} is "
                        "neither a record length nor -1 (null) or -2 (placeholder)",
                        index.index_offset, number)
        elif 0 <= length < pb.RECORD_OVERHEAD:
            found.error("paimon.record.too-short", f"row {number}: record length {length} is "
                        f"less than the {pb.RECORD_OVERHEAD} bytes of magic, length and CRC",
                        index.offsets[number], number)
    if index.records_end != index.index_offset:
        if index.records_end > index.index_offset:
            detail = (f"run {index.records_end - index.index_offset} bytes past the index "
                      "start")
        else:
            detail = (f"leave {index.index_offset - index.records_end} bytes before the index "
                      "that belong to no record")
        found.error("paimon.records.fill", f"the index's record lengths add up to "
                    f"{index.records_end} bytes, but the index starts at byte "
                    f"{index.index_offset}: the records {detail}",
                    min(index.records_end, index.index_offset))
    readable = (index.row(number) for number, length in enumerate(index.lengths)
                if length >= pb.RECORD_OVERHEAD
                and index.offsets[number] + length <= index.index_offset)
    for record in reader.scan(readable):
        _check_record(reader, record, found, max_blob_size)


def validate_paimon(path: str | os.PathLike[str], *, profile: str = "spec",
                    max_blob_size: int = DEFAULT_MAX_BLOB_SIZE, length: int | None = None,
                    fileio: FileIO) -> FileReport:
    """Every finding about one Paimon BLOB file. ``footer_size`` of the report is the size of
    index and trailer, ``blob_count`` the number of rows, and a finding's ``blob_index`` the
    row it is about."""
    name = os.fspath(path)
    found = _Findings()
    file_size = footer_size = rows = None
    try:
        with pb.PaimonBlobReader(name, memory_limit=max_blob_size, fileio=fileio,
                                 length=length) as reader:
            file_size = reader.file_size
            footer_size = reader.index.index_length + pb.TRAILER_SIZE
            rows = reader.index.rows
            _check(reader, found, max_blob_size)
    except PuffinError as exc:
        code = exc.code if exc.code.startswith("paimon.") else \
            "file.read" if exc.code in ("io.read", "io.range") else "file.open"
        found.error(code, exc.message, exc.offset)
    except OSError as exc:
        found.error("file.read", f"cannot read: {exc.strerror or exc}", None)
    except Exception as exc:  # never raise on any input: report it instead
        found.error("internal.error", f"validation stopped: {type(exc).__name__}: {exc}", None)
    return report_for(name, profile, file_size, footer_size, rows, found.done())
