"""The human views of Paimon BLOB files: in ``puffin inspect``, trailer and index facts, then
one line per row (up to ``--limit``) with its offset, data length, CRC and nested container;
in ``puffin write``, one line."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from puffin_cli.analysis.paimon import PaimonFileReport, RowReport
from puffin_cli.format.paimon_blob import BlobWriteResult
from puffin_cli.format.text import plural
from puffin_cli.render import layout
from puffin_cli.render.layout import plain_lines

_NESTED = {"array": "ARRAY<BLOB>", "map": "MAP<K, BLOB>"}
_NOUN = {"array": "element", "map": "entry"}


def _bytes(value: int) -> str:
    return "1 byte" if value == 1 else f"{value:,} bytes"


def _plural(count: int, noun: str) -> str:
    return plural(count, noun, "entries" if noun == "entry" else None)


def _nested(row: RowReport) -> str:
    if row.nested is None:
        return ""
    version = "" if row.nested.version == 1 else f", version {row.nested.version}"
    return (f"{_NESTED[row.nested.kind]}, {_plural(row.nested.count, _NOUN[row.nested.kind])}"
            f"{version}")


def print_paimon_file(console: Console, file: PaimonFileReport) -> None:
    layout.print_folded(console, file.path, style="bold", spaces=False)
    kinds = [f"{file.records:,} with data"]
    if file.nulls:
        kinds.append(f"{file.nulls:,} null")
    if file.placeholders:
        kinds.append(f"{file.placeholders:,} placeholder{'' if file.placeholders == 1 else 's'}")
    for label, value in [
        ("  format", "Apache Paimon BLOB file"),
        ("  file size", _bytes(file.file_size)),
        ("  version", str(file.version)),
        ("  index", f"{_bytes(file.index_length)} at offset {file.index_offset} (then 5 bytes "
                    "of index length and version)"),
        ("  rows", f"{file.row_count:,} ({', '.join(kinds)})"),
        ("  data", f"{_bytes(file.data_size)} in {_plural(file.records, 'record')}"
                   + ("" if file.decoded else ", records not read (--no-decode)")),
    ]:
        layout.row(console, label, value)
    if not file.rows:
        return
    console.print()
    header = ("row", "kind", "offset", "data length", "crc", "contents")
    cells = [(str(row.row), row.kind, "" if row.offset is None else str(row.offset),
              "" if row.data_length is None else f"{row.data_length:,}", row.crc or "",
              _nested(row) if row.problem is None else f"BAD: {row.problem}")
             for row in file.rows]
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(5)]
    right = (True, False, True, True, False)

    def line(values: tuple[str, ...]) -> str:
        fitted = [v.rjust(w) if r else v.ljust(w)
                  for v, w, r in zip(values, widths, right, strict=False)]
        return "  ".join([*fitted, values[5]]).rstrip()

    console.print(Text(line(header), style="bold"), soft_wrap=True)
    for values, row in zip(cells, file.rows, strict=True):
        console.print(Text(line(values), style="bold red" if row.problem else ""),
                      soft_wrap=True)
    if len(file.rows) < file.row_count:
        console.print(Text(f"… (first {len(file.rows):,} of {file.row_count:,} rows; --limit "
                           "shows more)", style="dim"))


def write_view(result: BlobWriteResult, console: Console) -> None:
    """What ``puffin write`` wrote to a Paimon BLOB file, in one line."""
    markers = [f"{result.nulls:,} null"] if result.nulls else []
    if result.placeholders:
        markers.append(f"{result.placeholders:,} placeholder"
                       f"{'' if result.placeholders == 1 else 's'}")
    extra = f" ({', '.join(markers)})" if markers else ""
    plain_lines(console, [f"wrote {result.path}: {_bytes(result.file_size)}, Paimon BLOB file "
                          f"of {_plural(result.rows, 'row')}{extra}, index "
                          f"{_bytes(result.index_length)}"])
