"""``puffin write``: build a Puffin file from a spec and/or command-line shortcuts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from puffin_cli.analysis.write.build import write_plan
from puffin_cli.analysis.write.parquet import (
    check_snapshot_files,
    expand_paths,
    parquet_theta_blobs,
)
from puffin_cli.analysis.write.plan import (
    COMPRESSION_CHOICES,
    DEFAULT_THETA_CODEC,
    BlobSpec,
    DvFromPositions,
    ThetaFromValues,
    WritePlan,
    copy_blob,
    dv_blob,
    parse_codec,
    parse_copy_ref,
    parse_key_value,
    theta_blob,
)
from puffin_cli.analysis.write.spec import load_spec, parse_type
from puffin_cli.cli.grammar import Command, emit, renamed_flag, renamed_option
from puffin_cli.cli.options import (
    NO_SNAPSHOT,
    DecimalInt,
    SnapshotId,
    io_option,
    json_option,
    max_blob_size_option,
    output_file_option,
    quiet_option,
    uuid_hash_option,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.paimon_blob import SUFFIX as PAIMON_SUFFIX
from puffin_cli.format.spec import CREATED_BY
from puffin_cli.storage import FileIO, default_io

_ORDER_KEY = "puffin.write.order"
# Options whose relative order on the command line matters (which --dv a --positions
# belongs to, where a shortcut's blob goes).
_ORDERED = ("dv", "positions", "positions_file", "theta", "iceberg_type", "values_file",
            "from_parquet", "copy_blob")

EPILOG = """\b
Examples:
  # a deletion vector (positions and ranges), and a second one from a file
  puffin write dvs.puffin --dv s3://b/t/data/f1.parquet --positions 0,2,4,10-20 \\
                          --dv s3://b/t/data/f2.parquet --positions-file f2.txt

\b
  # NDV sketches of every column of a table's data files (field IDs from the
  # Parquet schema), for snapshot 42
  puffin write stats.puffin --from-parquet 'data/*.parquet' --snapshot 42

\b
  # the same for Parquet files without field IDs: IDs by column name from the
  # table's schema, blobs for its current snapshot (the files must be exactly its
  # live data files, without deletes; else use puffin stats compute)
  puffin write stats.puffin --from-parquet 't/data/*.parquet' --table t

\b
  # one sketch from a file of values, one value per line
  puffin write stats.puffin --theta 3 --type 'decimal(10,2)' --values-file prices.txt

\b
  # everything from a spec (see docs/write.md), plus a blob copied as stored
  puffin write out.puffin --spec spec.json --copy-blob old.puffin:2 --force

\b
  # a Paimon BLOB file of three rows, the second one null
  puffin write images.blob --entry a.jpg --entry :null --entry c.jpg

\b
  A spec is JSON:
  {"properties": {"k": "v"},
   "blobs": [
     {"theta": {"iceberg-type": "long", "values": [1, 2, 3]}, "fields": [1],
      "snapshot-id": 42, "sequence-number": 7},
     {"theta": {"parquet": "data/*.parquet", "columns": ["id", "ts"]}},
     {"dv": {"referenced-data-file": "f1.parquet", "positions": "0,2,10-20"}},
     {"type": "my-blob-v1", "fields": [5], "payload": {"file": "blob.bin"},
      "compression": "zstd"},
     {"copy": {"file": "old.puffin", "index": 2}}]}
"""


class _OrderedCommand(Command):
    """Remembers the order in which options were given (click keeps only per-option lists)."""

    def inspect_args(self, ctx: click.Context, args: list[str]) -> None:
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        ctx.meta[_ORDER_KEY] = [param.name for param in order if param.name in _ORDERED]


def _events(ctx: click.Context, params: dict[str, Any]) -> list[tuple[str, str]]:
    """(option name, value) for every ordered option, in command-line order."""
    taken = dict.fromkeys(_ORDERED, 0)
    events = []
    for name in ctx.meta.get(_ORDER_KEY, []):
        values: Sequence[str] = params[name]
        events.append((name, values[taken[name]]))
        taken[name] += 1
    return events


def _table_ids(table: str | None, snapshot_id: int | None, sequence_number: int | None,
               theta_ids: dict[str, int], files: Sequence[str], fileio: FileIO
               ) -> tuple[dict[str, int] | None, dict[str, int]]:
    """Field IDs by column name from ``table``'s schema (of --snapshot, else of its current
    snapshot), and the snapshot-id and sequence-number of the --from-parquet blobs: the
    table's snapshot's unless given, after checking that ``files`` are exactly its live rows
    (:func:`check_snapshot_files`). ``--snapshot none`` (-1): blobs that claim no snapshot."""
    if table is None:
        return None, theta_ids
    from puffin_cli.analysis.table.loading import Table

    loaded = Table.load(table, fileio=fileio)
    claimed = snapshot_id != NO_SNAPSHOT
    snapshot = loaded.snapshot(snapshot_id if claimed else None)
    ids = loaded.field_names(None if snapshot is None else snapshot.snapshot_id).ids()
    if snapshot is None or not claimed:
        return ids, theta_ids
    check_snapshot_files(files, loaded, snapshot, table)
    return ids, {"snapshot_id": snapshot.snapshot_id,
                 "sequence_number": snapshot.sequence_number if sequence_number is None
                 else sequence_number}


def _usage(message: str) -> click.UsageError:
    return click.UsageError(message)


class _Pending:
    """A --dv or --theta shortcut still collecting the options that follow it."""

    def __init__(self, kind: str, value: str) -> None:
        self.kind = kind
        self.value = value
        self.items: dict[str, list[str]] = {}

    def add(self, name: str, value: str) -> None:
        self.items.setdefault(name, []).append(value)


def _close(pending: _Pending, *, uuid_as_string: bool, snapshot_id: int,
           sequence_number: int, codec: str | None) -> BlobSpec:
    if pending.kind == "dv":
        from puffin_cli.blobs.deletion_vector import parse_position_spec

        ranges = []
        for text in pending.items.get("positions", []):
            try:
                ranges.extend(parse_position_spec(text))
            except PuffinError as exc:
                raise _usage(f"--positions {text!r}: {exc.message}") from None
        files = pending.items.get("positions_file", [])
        if not ranges and not files:
            raise _usage(f"--dv {pending.value}: give --positions or --positions-file after it")
        return dv_blob(DvFromPositions(pending.value, tuple(ranges), tuple(files)))
    field_text = pending.value
    field_id = decimal_int(field_text, signed=True)
    if field_id is None:
        raise _usage(f"--theta {field_text!r}: expected a field ID (an integer)")
    types = pending.items.get("iceberg_type", [])
    values_files = pending.items.get("values_file", [])
    if len(types) != 1 or len(values_files) != 1:
        raise _usage(f"--theta {field_text}: give exactly one --type and one --values-file "
                     "after it")
    try:
        iceberg_type = parse_type(types[0], "--type")
    except PuffinError as exc:
        raise _usage(exc.message) from None
    source = ThetaFromValues(iceberg_type, values_file=values_files[0],
                             uuid_as_string=uuid_as_string)
    return theta_blob(source, field_id, snapshot_id=snapshot_id,
                      sequence_number=sequence_number, codec=codec)


@click.command("write", cls=_OrderedCommand, epilog=EPILOG,
               short_help="Write a Puffin file: Theta sketches, deletion vectors, raw blobs.",
               renamed={"--snapshot-id": renamed_option("--snapshot"),
                        "--uuid-as-string": renamed_flag("--uuid-hash", "text")})
@click.argument("target", metavar="OUTPUT", required=False)
@output_file_option("the Puffin file (the same as giving OUTPUT)")
@click.option("--spec", "spec_path", metavar="SPEC.json",
              help="Blobs and properties as a JSON document ('-': stdin); see docs/write.md.")
@click.option("--dv", multiple=True, metavar="DATA_FILE",
              help="A deletion vector for DATA_FILE (its referenced-data-file); follow it with "
                   "--positions and/or --positions-file.")
@click.option("--positions", multiple=True, metavar="LIST",
              help="Positions and inclusive ranges for the preceding --dv: 0,2,4,10-20.")
@click.option("--positions-file", multiple=True, metavar="FILE",
              help="One position or START-END range per line, for the preceding --dv.")
@click.option("--theta", multiple=True, metavar="FIELD_ID",
              help="A Theta sketch of field FIELD_ID; follow it with --type and --values-file.")
@click.option("--type", "iceberg_type", multiple=True, metavar="TYPE",
              help="Iceberg type of the preceding --theta's values: long, string, "
                   "decimal(10,2), timestamptz, fixed[16], ...")
@click.option("--values-file", multiple=True, metavar="FILE",
              help="One value per line, parsed as --type (see docs/write.md for the forms).")
@click.option("--from-parquet", multiple=True, metavar="PATH|GLOB",
              help="Parquet data files (repeatable, globs allowed): one Theta sketch per column "
                   "over all of them together.")
@click.option("--columns", metavar="A,B",
              help="Columns to sketch with --from-parquet (default: every top-level column of "
                   "primitive type).")
@click.option("--table", "table", default=None, metavar="PATH",
              help="An Iceberg table directory or its *.metadata.json file: --from-parquet "
                   "columns without field IDs take them from its schema by name, and the "
                   "blobs claim its current snapshot (or --snapshot), so the files must be "
                   "that snapshot's live data files without deletes (for a snapshot's "
                   "statistics in general: puffin stats compute).")
@click.option("--field-id", "field_id_options", multiple=True, metavar="NAME=ID",
              help="Field ID of a Parquet column that has none in its schema (or to override).")
@click.option("--copy-blob", multiple=True, metavar="FILE:INDEX",
              help="Copy blob INDEX of Puffin file FILE as stored (no recompression).")
@click.option("--snapshot", "snapshot_id", type=SnapshotId(), default=None, metavar="ID|none",
              help="snapshot-id of the Theta blobs built by --theta / --from-parquet "
                   "[default: -1; with --table, its current snapshot]. With --table, the "
                   "files must be exactly that snapshot's live data files, none with deleted "
                   "rows; 'none' (or -1): blobs that claim no snapshot.")
@click.option("--sequence-number", type=DecimalInt(signed=True), default=None,
              help="sequence-number of those Theta blobs [default: -1].")
@click.option("--property", "property_options", multiple=True, metavar="KEY=VALUE",
              help="A file property (repeatable).")
@click.option("--created-by", metavar="TEXT",
              help="The created-by file property [default: puffin-cli <version>].")
@click.option("--compress", type=click.Choice(COMPRESSION_CHOICES, case_sensitive=False),
              default=None,
              help="Compression of Theta and raw blobs that do not name one [default: zstd for "
                   "Theta, none for raw]. Deletion vectors are never compressed.")
@click.option("--footer-compression", type=click.Choice(("lz4", "none"), case_sensitive=False),
              default=None, help="Compress the footer (Iceberg Java cannot read it) "
                                 "[default: none].")
@uuid_hash_option
@click.option("--entry", "entries", multiple=True, metavar="FILE",
               help="Paimon BLOB files: FILE's bytes are the next row (repeatable, in order); "
                    "':null' is a null row, ':placeholder' a placeholder row.")
@click.option("--entries-from", metavar="LIST",
              help="Paimon BLOB files: more rows after the --entry ones, one FILE (or :null, "
                   ":placeholder) per line of LIST (at most 1,000,000 lines of 64 KiB).")
@click.option("--paimon", is_flag=True,
              help="Write a Paimon BLOB file whatever OUTPUT's name (a *.blob name implies it).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@max_blob_size_option
@json_option
@quiet_option
@io_option
@click.pass_context
def write(ctx: click.Context, /, target: str | None, output: str | None, spec_path: str | None,
          columns: str | None, table: str | None, field_id_options: tuple[str, ...],
          snapshot_id: int | None,
          sequence_number: int | None, property_options: tuple[str, ...],
          created_by: str | None, compress: str | None, footer_compression: str | None,
          uuid_hash: str, entries: tuple[str, ...], entries_from: str | None,
          paimon: bool, force: bool, max_blob_size: int, as_json: bool, quiet: bool,
          **shortcuts: Any) -> None:
    """Write the Puffin file OUTPUT from a --spec and/or shortcuts, as Iceberg Java would.

    Blobs come in order: the spec's, then the shortcuts' in command-line order. Defaults are
    Iceberg Java's: plain footer, Theta blobs zstd-compressed with an ndv property, deletion
    vectors uncompressed with referenced-data-file and cardinality, snapshot-id and
    sequence-number -1. The file is written to a temp file and renamed into place.

    An OUTPUT named *.blob (or --paimon) is an Apache Paimon BLOB file instead, one row per
    --entry, byte for byte as Paimon's BlobFormatWriter writes it (see docs/paimon.md).
    """
    if (target is None) == (output is None):
        raise _usage("name the Puffin file to write once: OUTPUT or -o/--output FILE")
    output = target or output
    assert output is not None
    uuid_as_string = uuid_hash == "text"
    if paimon or output.endswith(PAIMON_SUFFIX):
        puffin_options = [name for name, value in (
            ("--spec", spec_path), ("--columns", columns), ("--table", table),
            ("--field-id", field_id_options),
            ("--snapshot", snapshot_id), ("--sequence-number", sequence_number),
            ("--property", property_options), ("--created-by", created_by),
            ("--compress", compress), ("--footer-compression", footer_compression),
            ("--uuid-hash", ctx.get_parameter_source("uuid_hash")
             is not click.core.ParameterSource.DEFAULT)) if value]
        puffin_options += [f"--{name.replace('_', '-')}" for name in _ORDERED
                           if shortcuts[name]]
        if puffin_options:
            raise _usage(f"{', '.join(puffin_options)}: Puffin options, but {output} is a "
                         "Paimon BLOB file (give its rows with --entry)")
        if not entries and entries_from is None:
            raise _usage("give the rows of the Paimon BLOB file: --entry FILE (repeatable) "
                         "or --entries-from LIST")
        from puffin_cli.cli.paimon import entry_rows, write_blob

        result = write_blob(output, entry_rows(entries, entries_from), force=force)
        if as_json:
            emit(ctx, result)
        elif not quiet:
            from puffin_cli.render.paimon import write_view

            emit(ctx, result, write_view)
        return
    if entries or entries_from is not None:
        raise _usage(f"--entry and --entries-from write Paimon BLOB files: name OUTPUT "
                     f"*.blob or add --paimon ({output} is written as a Puffin file)")

    fileio = default_io()
    plan = WritePlan()
    if spec_path is not None:
        plan = load_spec(spec_path, fileio=fileio, compress=compress,
                         uuid_as_string=uuid_as_string)
    theta_codec = DEFAULT_THETA_CODEC if compress is None else parse_codec(compress, "--compress")
    theta_ids = {"snapshot_id": -1 if snapshot_id is None else snapshot_id,
                 "sequence_number": -1 if sequence_number is None else sequence_number}
    blobs = list(plan.blobs)
    pending: _Pending | None = None
    parquet_at: int | None = None

    def close() -> None:
        nonlocal pending
        if pending is not None:
            blobs.append(_close(pending, uuid_as_string=uuid_as_string, codec=theta_codec,
                                **theta_ids))
            pending = None

    for name, value in _events(ctx, shortcuts):
        if name in ("dv", "theta"):
            close()
            pending = _Pending(name, value)
        elif name in ("positions", "positions_file", "iceberg_type", "values_file"):
            owner = "dv" if name.startswith("positions") else "theta"
            if pending is None or pending.kind != owner:
                flag = "--" + ("type" if name == "iceberg_type" else name.replace("_", "-"))
                raise _usage(f"{flag} {value}: it must follow a --{owner}")
            pending.add(name, value)
        elif name == "copy_blob":
            close()
            blobs.append(copy_blob(parse_copy_ref(value)))
        elif name == "from_parquet":
            close()
            if parquet_at is None:
                parquet_at = len(blobs)
    close()
    if parquet_at is not None:
        field_ids = {}
        for text in field_id_options:
            key, id_text = parse_key_value(text, "--field-id")
            field_id = decimal_int(id_text, signed=True)
            if field_id is None:
                raise _usage(f"--field-id {text!r}: the ID must be an integer")
            field_ids[key] = field_id
        files = expand_paths(shortcuts["from_parquet"], fileio=fileio)
        wanted = None if columns is None else [c.strip() for c in columns.split(",") if c]
        table_ids, parquet_ids = _table_ids(table, snapshot_id, sequence_number, theta_ids,
                                            files, fileio)
        blobs[parquet_at:parquet_at] = parquet_theta_blobs(
            files, fileio=fileio, columns=wanted, field_ids=field_ids, table_ids=table_ids,
            uuid_as_string=uuid_as_string, codec=theta_codec, **parquet_ids)
    elif columns is not None or field_id_options or table is not None:
        raise _usage("--columns, --field-id and --table go with --from-parquet")
    if (snapshot_id is not None or sequence_number is not None) and not shortcuts["theta"] \
            and parquet_at is None:
        raise _usage("--snapshot and --sequence-number apply to Theta blobs from --theta or "
                     "--from-parquet (deletion vectors always have -1; a spec sets its own)")
    properties = dict(plan.properties)
    for text in property_options:
        key, value = parse_key_value(text, "--property")
        properties[key] = value
    if created_by is not None:
        properties[CREATED_BY] = created_by
    plan = WritePlan(tuple(blobs), properties, plan.created_by,
                     plan.footer_compression if footer_compression is None
                     else parse_codec(footer_compression, "--footer-compression"))
    for warning in plan.warnings():
        click.echo(f"puffin: warning: {warning}", err=True)
    summary = write_plan(plan, output, fileio=fileio, overwrite=force,
                         max_blob_size=max_blob_size)
    for warning in summary.warnings[len(plan.warnings()):]:
        click.echo(f"puffin: warning: {warning}", err=True)
    if as_json:
        emit(ctx, summary)
    elif not quiet:
        from puffin_cli.render.write import write_view as draw

        emit(ctx, summary, draw)
