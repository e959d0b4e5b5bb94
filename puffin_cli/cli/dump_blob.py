"""``puffin dump-blob``: one blob's bytes, positions or sketch description (``--as``), or its
decoded summary as a JSON document (``--json``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, cast

import click

from puffin_cli.cli.grammar import Command, emit, renamed_choice
from puffin_cli.cli.options import (
    DecimalInt,
    force_option,
    io_option,
    json_option,
    max_blob_size_option,
    output_file_option,
)
from puffin_cli.cli.quick import directory_hint
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.paimon_blob import is_paimon_blob
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    DEFAULT_LIMIT,
    DV_BLOB_TYPE,
    PUFFIN_SUFFIXES,
    REFERENCED_DATA_FILE_PROPERTY,
    THETA_BLOB_TYPE,
)
from puffin_cli.format.text import encode, text_on
from puffin_cli.storage import default_io

FORMATS = ("bytes", "hex", "positions", "sketch")
# The old --format (before --as and --json).
_OLD_FORMAT = renamed_choice("--as", {"json": ["--json"]}, "--as FORM (--json for json)")
# Hex output: bytes per line, and lines formatted per write.
HEX_LINE_BYTES = 32
HEX_CHUNK_LINES = 4096


def _stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def _select(reader: PuffinReader, index: int | None, type_name: str | None,
            field_id: int | None, data_file: str | None = None) -> tuple[int, BlobMetadata]:
    """The one blob that INDEX, --type, --field and --data-file together name."""
    blobs = reader.metadata.blobs
    if index is None and type_name is None and field_id is None and data_file is None:
        raise click.UsageError("name a blob: give its INDEX, or --type, --field and/or "
                               "--data-file")
    if index is not None and not 0 <= index < len(blobs):
        raise click.BadParameter(f"{reader.path} has {len(blobs)} blobs; no blob {index}",
                                 param_hint="INDEX")
    wanted = []
    if type_name is not None:
        wanted.append(f"type {type_name}")
    if field_id is not None:
        wanted.append(f"field {field_id}")
    if data_file is not None:
        wanted.append(f"data file {data_file}")
    matches = [
        i for i, blob in enumerate(blobs)
        if (index is None or i == index)
        and (type_name is None or blob.type == type_name)
        and (field_id is None or field_id in blob.fields)
        and (data_file is None
             or blob.properties.get(REFERENCED_DATA_FILE_PROPERTY) == data_file)
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
def _output(path: str | None, force: bool) -> Iterator[IO[bytes]]:
    """Standard output, or the storage output for ``path``, published only when writing
    succeeds (a failed dump leaves nothing at ``path``; an existing file is replaced only with
    ``force``, a special file never)."""
    if path is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with default_io().new_output(path).create(overwrite=force) as out:
        yield cast(IO[bytes], out)  # write() is all the writers use


def _write_hex(chunks: Iterable[bytes], out: IO[bytes]) -> None:
    """Hex text, :data:`HEX_LINE_BYTES` bytes a line, whatever the chunks' sizes."""
    step = HEX_LINE_BYTES * HEX_CHUNK_LINES
    carry = b""
    for piece in chunks:
        data = carry + piece
        whole = len(data) - len(data) % HEX_LINE_BYTES
        for start in range(0, whole, step):
            chunk = memoryview(data)[start:min(start + step, whole)]
            lines = (chunk[i:i + HEX_LINE_BYTES].hex()
                     for i in range(0, len(chunk), HEX_LINE_BYTES))
            out.write(("\n".join(lines) + "\n").encode("ascii"))
        carry = data[whole:]
    if carry:
        out.write((carry.hex() + "\n").encode("ascii"))


@click.command("dump-blob", cls=Command, renamed={"--format": _OLD_FORMAT},
               short_help="One blob's bytes, hex, DV positions, sketch description or JSON.")
@click.argument("file", metavar="FILE")
@click.argument("index", type=DecimalInt(min=0), required=False)
@click.option("--type", "type_name", metavar="TYPE", help="Select the blob of this type.")
@click.option("--field", "field_id", type=DecimalInt(signed=True), metavar="ID",
              help="Select the blob whose fields include this field ID.")
@click.option("--data-file", metavar="PATH",
              help="Select the deletion vector of this data file (its referenced-data-file "
                   "property, as `puffin inspect` shows it).")
@output_file_option("the blob (atomically: a temp file renamed into place) instead of "
                    "standard output")
@force_option
@click.option("--raw", is_flag=True, help="The stored bytes, still compressed (--as bytes or "
              "hex).")
@click.option("--as", "form", type=click.Choice(FORMATS), default="bytes", show_default=True,
              help="bytes: the blob's bytes; hex: the same as hex text; positions: a deletion "
                   "vector's positions, one per line; sketch: a theta sketch as the "
                   "DataSketches library describes it.")
@json_option
@click.option("--limit", type=DecimalInt(min=0), default=DEFAULT_LIMIT, show_default=True,
              help="Deletion-vector ranges in the --json summary.")
@max_blob_size_option
@io_option
@click.pass_context
def dump_blob(ctx: click.Context, file: str, index: int | None, type_name: str | None,
              field_id: int | None, data_file: str | None, output: str | None, force: bool,
              raw: bool, form: str, as_json: bool, limit: int, max_blob_size: int) -> None:
    """Write one blob of FILE, chosen by INDEX (as `puffin inspect` numbers them) or by
    --type/--field/--data-file: its bytes or another form of them (--as), or with --json its decoded
    summary (the blob's part of `puffin inspect --json`).

    Binary bytes are not written to a terminal: redirect, use -o, or --as hex.

    For a Paimon BLOB file (*.blob, or recognised by its content), INDEX is a row: its bytes
    (the whole nested payload of an ARRAY or MAP row) are streamed, --raw adds the record's
    framing, --json gives the row as `puffin inspect --json` shows it. A null or
    placeholder row has no bytes: that is an error (exit 1).

    \b
    Examples:
      puffin dump-blob stats.puffin 0 -o sketch.bin
      puffin dump-blob stats.puffin --field 2 --as sketch
      puffin dump-blob dv.puffin 1 --as positions | head
      puffin dump-blob dv.puffin --data-file s3://b/t/data/f1.parquet --as positions
      puffin dump-blob stats.puffin 0 --raw --as hex
      puffin dump-blob dv.puffin 0 --json --limit 5
      puffin dump-blob images.blob 42 -o image.jpg
    """
    given = ctx.get_parameter_source("form") is not click.core.ParameterSource.DEFAULT
    if as_json and (given or raw):
        raise click.UsageError("--json writes the decoded summary; it excludes --as and --raw")
    if raw and form not in ("bytes", "hex"):
        raise click.UsageError(f"--raw applies to --as bytes and hex, not {form}")
    if form == "bytes" and not as_json and output is None and _stdout_is_terminal():
        raise click.UsageError("not writing binary blob bytes to a terminal; use --as hex, "
                               "-o FILE or redirect the output")
    if not file.endswith(PUFFIN_SUFFIXES) and is_paimon_blob(file, default_io()):
        from puffin_cli.cli.paimon import dump_row

        if type_name is not None or field_id is not None or data_file is not None:
            raise click.UsageError("--type, --field and --data-file select Puffin blobs; name "
                                   "a Paimon BLOB row by its INDEX")
        dump_row(file, index, fmt="json" if as_json else form, raw=raw,
                 max_blob_size=max_blob_size, output=lambda: _output(output, force),
                 write_hex=lambda data, out: _write_hex((data,), out),
                 write_document=lambda result, out: _write_document(ctx, result, out))
        return
    try:
        opened = PuffinReader(file, max_blob_size=max_blob_size, fileio=default_io())
    except PuffinError as exc:
        exc.message += directory_hint(file)
        raise
    with opened as reader:
        blob_index, blob = _select(reader, index, type_name, field_id, data_file)
        needs = {"positions": DV_BLOB_TYPE, "sketch": THETA_BLOB_TYPE}.get(form)
        if needs is not None and not as_json and blob.type != needs:
            raise click.UsageError(f"--as {form} needs a blob of type {needs}; blob "
                                   f"{blob_index} is {blob.type}")
        if not as_json and form in ("bytes", "hex") and (raw or blob.compression_codec is None):
            # As stored: streamed from the blob's byte range, never all in memory.
            chunks = reader.stream_raw(blob)
            with _output(output, force) as out:
                if form == "hex":
                    _write_hex(chunks, out)
                else:
                    for chunk in chunks:
                        out.write(chunk)
            return
        data = reader.read_blob(blob)
        try:
            write = (_document(ctx, reader.path, blob_index, data, blob, limit) if as_json
                     else _writer(form, data, blob))
        except PuffinError as exc:
            exc.blob_index = blob_index
            raise exc.with_path(reader.path) from None
    with _output(output, force) as out:
        write(out)


def _document(ctx: click.Context, path: str, index: int, data: bytes, blob: BlobMetadata,
              limit: int) -> Callable[[IO[bytes]], Any]:
    """Decode the blob now and return the function that writes its JSON document."""
    from puffin_cli.analysis.inspection import BlobReport, DumpedBlob
    from puffin_cli.blobs import SummaryOptions, handler_for

    summary = handler_for(blob.type).summarize(data, blob, SummaryOptions(limit=limit))
    document = DumpedBlob(path, BlobReport(index, blob, summary=summary))
    return lambda out: _write_document(ctx, document, out)


def _write_document(ctx: click.Context, result: Any, out: IO[bytes]) -> None:
    """``result``'s JSON document (it has no human view) on the binary stream ``out``."""
    with text_on(out) as text:
        emit(ctx, result, out=text)


def _writer(form: str, data: bytes, blob: BlobMetadata) -> Callable[[IO[bytes]], Any]:
    """Decode what ``form`` needs now (so a bad blob fails before any output is opened) and
    return the function that writes it."""
    if form == "bytes":
        return lambda out: out.write(data)
    if form == "hex":
        return lambda out: _write_hex((data,), out)
    if form == "positions":
        from puffin_cli.blobs.deletion_vector import decode_deletion_vector, write_positions_text

        dv = decode_deletion_vector(data, blob.offset)
        return lambda out: write_positions_text(dv, out)
    from puffin_cli.blobs.theta import describe

    text = describe(data)
    return lambda out: out.write(encode(text))


