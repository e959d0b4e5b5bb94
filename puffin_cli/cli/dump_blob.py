"""``puffin dump-blob``: one blob's bytes, positions, summary or sketch description."""

from __future__ import annotations

import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

import click

from puffin_cli.cli.main import EXIT_USAGE
from puffin_cli.cli.options import max_blob_size_option
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.paimon_blob import is_paimon_blob
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DV_BLOB_TYPE, PUFFIN_SUFFIXES, THETA_BLOB_TYPE

FORMATS = ("bytes", "hex", "positions", "json", "sketch")
# Hex output: bytes per line, and lines formatted per write.
HEX_LINE_BYTES = 32
HEX_CHUNK_LINES = 4096


def _stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _select(reader: PuffinReader, index: int | None, type_name: str | None,
            field_id: int | None) -> tuple[int, BlobMetadata]:
    """The one blob that INDEX, --type and --field together name."""
    blobs = reader.metadata.blobs
    if index is None and type_name is None and field_id is None:
        raise click.UsageError("name a blob: give its INDEX, or --type and/or --field")
    if index is not None and not 0 <= index < len(blobs):
        raise click.BadParameter(f"{reader.path} has {len(blobs)} blobs; no blob {index}",
                                 param_hint="INDEX")
    wanted = []
    if type_name is not None:
        wanted.append(f"type {type_name}")
    if field_id is not None:
        wanted.append(f"field {field_id}")
    matches = [
        i for i, blob in enumerate(blobs)
        if (index is None or i == index)
        and (type_name is None or blob.type == type_name)
        and (field_id is None or field_id in blob.fields)
    ]
    if not matches:
        where = f"blob {index}" if index is not None else reader.path
        raise click.UsageError(f"{where} has no blob of {' and '.join(wanted)}")
    if len(matches) > 1:
        raise click.UsageError(f"{len(matches)} blobs of {' and '.join(wanted)} in "
                               f"{reader.path} (indexes {', '.join(map(str, matches))}); give "
                               "the INDEX of one")
    return matches[0], blobs[matches[0]]


@contextmanager
def _output(path: str | None) -> Iterator[IO[bytes]]:
    """Standard output, or a temp file beside ``path`` renamed onto it when writing succeeds
    (a failed dump leaves nothing at ``path``)."""
    if path is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as out:
            yield out
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _write_hex(data: bytes, out: IO[bytes]) -> None:
    step = HEX_LINE_BYTES * HEX_CHUNK_LINES
    for start in range(0, len(data), step):
        chunk = memoryview(data)[start:start + step]
        lines = (chunk[i:i + HEX_LINE_BYTES].hex() for i in range(0, len(chunk), HEX_LINE_BYTES))
        out.write(("\n".join(lines) + "\n").encode("ascii"))


@click.command("dump-blob")
@click.argument("file", metavar="FILE")
@click.argument("index", type=click.IntRange(min=0), required=False)
@click.option("--type", "type_name", metavar="TYPE", help="Select the blob of this type.")
@click.option("--field", "field_id", type=int, metavar="ID",
              help="Select the blob whose fields include this field ID.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, writable=True),
              help="Write to this file (atomically) instead of standard output.")
@click.option("--raw", is_flag=True, help="The stored bytes, still compressed (bytes and hex "
              "formats).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="bytes", show_default=True,
              help="bytes: the blob's bytes; hex: the same as hex text; positions: a deletion "
                   "vector's positions, one per line; json: the decoded summary; sketch: a "
                   "theta sketch as the DataSketches library describes it.")
@click.option("--limit", type=click.IntRange(min=0), default=20, show_default=True,
              help="Deletion-vector ranges in the json summary.")
@max_blob_size_option
@click.pass_context
def dump_blob(ctx: click.Context, file: str, index: int | None, type_name: str | None,
              field_id: int | None, output: str | None, raw: bool, fmt: str, limit: int,
              max_blob_size: int) -> None:
    """Write one blob of FILE, chosen by INDEX (as `puffin inspect` numbers them) or by
    --type/--field.

    Binary bytes are not written to a terminal: redirect, use -o, or --format hex.

    For a Paimon BLOB file (*.blob, or recognised by its content), INDEX is a row: its bytes
    (the whole nested payload of an ARRAY or MAP row) are streamed, --raw adds the record's
    framing, --format json gives the row as `puffin inspect --json` shows it. A null or
    placeholder row has no bytes: that is an error (exit 1).

    \b
    Examples:
      puffin dump-blob stats.puffin 0 -o sketch.bin
      puffin dump-blob stats.puffin --field 2 --format sketch
      puffin dump-blob dv.puffin 1 --format positions | head
      puffin dump-blob stats.puffin 0 --raw --format hex
      puffin dump-blob images.blob 42 -o image.jpg
    """
    if raw and fmt not in ("bytes", "hex"):
        raise click.UsageError(f"--raw applies to the bytes and hex formats, not {fmt}")
    if fmt == "bytes" and output is None and _stdout_is_terminal():
        click.echo("puffin: not writing binary blob bytes to a terminal; use --format hex, "
                   "-o FILE or redirect the output", err=True)
        ctx.exit(EXIT_USAGE)
    if not file.endswith(PUFFIN_SUFFIXES) and is_paimon_blob(file):
        from puffin_cli.cli.paimon import dump_row

        if type_name is not None or field_id is not None:
            raise click.UsageError("--type and --field select Puffin blobs; name a Paimon BLOB "
                                   "row by its INDEX")
        dump_row(file, index, fmt=fmt, raw=raw, max_blob_size=max_blob_size,
                 output=lambda: _output(output), write_hex=_write_hex)
        return
    with PuffinReader(file, max_blob_size=max_blob_size) as reader:
        blob_index, blob = _select(reader, index, type_name, field_id)
        needs = {"positions": DV_BLOB_TYPE, "sketch": THETA_BLOB_TYPE}.get(fmt)
        if needs is not None and blob.type != needs:
            raise click.UsageError(f"--format {fmt} needs a blob of type {needs}; blob "
                                   f"{blob_index} is {blob.type}")
        data = reader.read_raw(blob) if raw else reader.read_blob(blob)
        try:
            write = _writer(fmt, data, blob, limit)
        except PuffinError as exc:
            exc.blob_index = blob_index
            raise exc.with_path(reader.path) from None
    with _output(output) as out:
        write(out)


def _writer(fmt: str, data: bytes, blob: BlobMetadata, limit: int) -> Callable[[IO[bytes]], Any]:
    """Decode what ``fmt`` needs now (so a bad blob fails before any output is opened) and
    return the function that writes it."""
    if fmt == "bytes":
        return lambda out: out.write(data)
    if fmt == "hex":
        return lambda out: _write_hex(data, out)
    if fmt == "positions":
        from puffin_cli.blobs.deletion_vector import decode_deletion_vector, write_positions_text

        dv = decode_deletion_vector(data, blob.offset)
        return lambda out: write_positions_text(dv, out)
    if fmt == "json":
        from puffin_cli.blobs import SummaryOptions, handler_for
        from puffin_cli.render import jsonout

        summary = handler_for(blob.type).summarize(data, blob, SummaryOptions(limit=limit))
        buffer = io.StringIO()
        jsonout.dump(summary, buffer)
        text = buffer.getvalue()
    else:
        from puffin_cli.blobs.theta import describe

        text = describe(data)
    return lambda out: out.write(text.encode("utf-8"))

