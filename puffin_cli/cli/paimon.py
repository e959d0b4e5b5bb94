"""The Paimon BLOB side of ``puffin dump-blob`` and ``puffin write`` (``.blob`` files); the
commands hand over to these functions when the file is a Paimon BLOB file."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import IO, Any

import click

from puffin_cli.errors import PuffinError
from puffin_cli.format import paimon_blob as pb
from puffin_cli.storage import default_io

NULL_ENTRY = ":null"
PLACEHOLDER_ENTRY = ":placeholder"
HEX_LINE_BYTES = 32  # as dump-blob's hex format
_MARKERS = {NULL_ENTRY: pb.Marker.NULL, PLACEHOLDER_ENTRY: pb.Marker.PLACEHOLDER}


def dump_row(file: str, row_number: int | None, *, fmt: str, raw: bool, max_blob_size: int,
             output: Callable[[], AbstractContextManager[IO[bytes]]],
             write_hex: Callable[[bytes, IO[bytes]], None],
             write_document: Callable[[Any, IO[bytes]], None]) -> None:
    """Write row ``row_number`` of a Paimon BLOB file: its data (``raw``: the whole record,
    framing included) as bytes or hex, streamed, or its row report as JSON. The record's magic
    and length are checked before any output, its CRC while streaming: a mismatch is an error
    (and, with -o, leaves no file)."""
    if row_number is None:
        raise click.UsageError("name a row: give its INDEX (as `puffin inspect` numbers them)")
    if fmt not in ("bytes", "hex", "json"):
        raise click.UsageError(f"--as {fmt} is for Puffin blobs; a Paimon BLOB row is "
                               "dumped as bytes, hex or --json")
    with pb.PaimonBlobReader(file, memory_limit=max_blob_size,
                             fileio=default_io()) as reader:
        rows = reader.index.rows
        if row_number >= rows:
            raise click.BadParameter(f"{reader.path} has {rows:,} rows; no row {row_number}",
                                     param_hint="INDEX")
        row = reader.index.row(row_number)
        if fmt == "json":
            from puffin_cli.analysis.paimon import DumpedRow, row_report

            document = DumpedRow(reader.path, row_report(reader, row_number, decode=True))
            with output() as out:
                write_document(document, out)
            return
        if row.kind != "blob":
            what = {"null": "a null row", "placeholder": "a placeholder row (a row an update "
                    "by row id left unchanged)"}.get(row.kind, f"an unknown marker "
                                                     f"{reader.index.lengths[row_number]}")
            raise PuffinError(f"row {row_number} is {what}: it has no bytes to dump",
                              code=f"paimon.row.{row.kind}", path=reader.path)
        try:
            frame = reader.frame(row, whole_up_to=pb.CHUNK)
        except PuffinError as exc:
            exc.message = f"row {row_number}: {exc.message}"
            raise
        assert row.offset is not None and row.length is not None
        if frame.magic != pb.MAGIC_BYTES:
            raise PuffinError(f"row {row_number}: record magic is {frame.magic.hex()}, "
                              f"expected {pb.MAGIC_BYTES.hex()}", code="paimon.record.magic",
                              path=reader.path, offset=row.offset)
        if frame.length_field != row.length:
            raise PuffinError(f"row {row_number}: length field is {frame.length_field}, the "
                              f"index says {row.length}", code="paimon.record.length",
                              path=reader.path, offset=row.offset + row.length - 12)
        tail = struct.pack("<QI", frame.length_field, frame.crc)

        def check(crc: int) -> None:
            assert row.offset is not None and row.length is not None
            if crc != frame.crc:
                raise PuffinError(f"row {row_number}: CRC-32 of the record is {crc:08x}, it "
                                  f"stores {frame.crc:08x}", code="paimon.record.crc",
                                  path=reader.path, offset=row.offset + row.length - 4)

        if frame.data is not None:  # a record of at most 1 MiB: checked before any output
            check(zlib.crc32(tail[:8], zlib.crc32(frame.data, zlib.crc32(pb.MAGIC_BYTES))))
        chunks = reader.iter_data(row) if frame.data is None else [frame.data]
        with output() as out:
            sink = _HexSink(out, write_hex) if fmt == "hex" else out
            crc = zlib.crc32(pb.MAGIC_BYTES)
            if raw:
                sink.write(pb.MAGIC_BYTES)
            for chunk in chunks:
                crc = zlib.crc32(chunk, crc)
                sink.write(chunk)
            if raw:
                sink.write(tail)
            if isinstance(sink, _HexSink):
                sink.close()
            check(zlib.crc32(tail[:8], crc))


class _HexSink:
    """Hex lines of a byte stream written in pieces of any size (whole lines at a time)."""

    def __init__(self, out: IO[bytes], write_hex: Callable[[bytes, IO[bytes]], None]) -> None:
        self._out = out
        self._write_hex = write_hex
        self._pending = b""

    def write(self, data: bytes) -> None:
        data = self._pending + data
        whole = len(data) - len(data) % HEX_LINE_BYTES
        if whole:
            self._write_hex(data[:whole], self._out)
        self._pending = data[whole:]

    def close(self) -> None:
        if self._pending:
            self._write_hex(self._pending, self._out)
        self._pending = b""


def entry_rows(entries: tuple[str, ...], entries_from: str | None) -> list[str | pb.Marker]:
    """Row sources from --entry values, then the lines of --entries-from: a file name, or
    :null / :placeholder."""
    names = list(entries)
    if entries_from is not None:
        try:
            names += default_io().read_list(entries_from)
        except PuffinError as exc:
            raise exc.for_option("--entries-from") from None
    return [_MARKERS.get(name, name) for name in names]


def write_blob(output: str, rows: list[str | pb.Marker], *, force: bool) -> pb.BlobWriteResult:
    """``puffin write OUT.blob --entry ...``."""
    return pb.write_blob_file(output, rows, overwrite=force, fileio=default_io())
