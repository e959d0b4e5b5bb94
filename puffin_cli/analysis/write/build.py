"""What ``puffin write`` writes: a write spec (JSON, see docs/write.md) or the CLI shortcuts
become a :class:`WritePlan`, whose blobs are built one at a time and streamed into a
:class:`~puffin_cli.format.writer.PuffinWriter`.

Planning (:func:`.spec.load_spec`, :func:`.parquet.parquet_theta_blobs`) checks everything that
can be checked without reading payloads (spec structure, types, field IDs, that files exist);
building (:func:`build_blob`) reads one source and makes its bytes:

- a raw payload: bytes from a file or inline (base64 or text), any blob type;
- a Theta sketch from values (inline, or a file with one value per line) or from Parquet columns,
  with :mod:`puffin_cli.blobs.theta` (Iceberg's serialization, hashing and compact form);
- a deletion vector from positions and ranges, with :mod:`puffin_cli.blobs.deletion_vector`;
- a copy of another Puffin file's blob, as stored (no decompression, no recompression).
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.write.parquet import theta_from_parquet
from puffin_cli.analysis.write.plan import (
    JAVA_CANNOT_READ_LZ4,
    BlobSpec,
    CopiedBlob,
    DvFromPositions,
    RawPayload,
    ThetaFromValues,
    WritePlan,
    WriteSummary,
    WrittenBlob,
    spec_error,
)
from puffin_cli.blobs.iceberg_values import IcebergType, parse_values
from puffin_cli.errors import PuffinError
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    CARDINALITY_PROPERTY,
    CODEC_LZ4,
    DEFAULT_MAX_BLOB_SIZE,
    NDV_PROPERTY,
)
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from puffin_cli.blobs.theta import CompactTheta

    UInt64Array = npt.NDArray[np.uint64]


# --------------------------------------------------------------------------------------------
# Building


@dataclass(frozen=True)
class BuiltBlob:
    """A blob's bytes (``stored``: already in stored form, else to be compressed with
    ``spec.codec``) and its final metadata fields."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    properties: dict[str, str]
    codec: str | None
    data: bytes
    stored: bool
    source: str


def _with_computed(properties: Mapping[str, str], computed: Mapping[str, str],
                   where: str) -> dict[str, str]:
    """Computed properties first (as Iceberg writes them), then the user's extra ones."""
    clash = [k for k in properties if k in computed]
    if clash:
        raise spec_error(f"{where}: property {clash[0]!r} is computed from the data; do not "
                         "set it")
    return {**computed, **properties}


def _theta_hashes(iceberg_type: IcebergType, values: Any, uuid_as_string: bool
                  ) -> UInt64Array:
    from puffin_cli.blobs.theta import hash_iceberg_values

    if uuid_as_string and iceberg_type.name == "uuid":
        # What Iceberg's Spark procedure hashes for a uuid: its canonical text.
        return hash_iceberg_values(IcebergType("string"), [str(v) for v in values])
    return hash_iceberg_values(iceberg_type, values)


VALUES_CHUNK = 1 << 16  # lines of a values file parsed and hashed at a time
MAX_VALUE_LINE = 16 << 20


def _values_file_chunks(path: str, fileio: FileIO) -> Iterator[tuple[int, list[str]]]:
    """(number of the first line, lines) of a values file, :data:`VALUES_CHUNK` lines at a
    time, read as a stream (pipes and ``<(…)`` work); a line longer than
    :data:`MAX_VALUE_LINE` characters is an error."""
    with fileio.open_stream(path) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        first = 1
        while True:
            lines: list[str] = []
            for _ in range(VALUES_CHUNK):
                line = text.readline(MAX_VALUE_LINE + 1)
                if not line:
                    break
                if len(line) > MAX_VALUE_LINE and not line.endswith("\n"):
                    raise PuffinError(f"line {first + len(lines)} is longer than "
                                      f"{MAX_VALUE_LINE} characters", code="value.parse")
                lines.append(line)
            if not lines:
                return
            yield first, lines
            first += len(lines)


def theta_from_values(source: ThetaFromValues, *, fileio: FileIO) -> CompactTheta:
    """Iceberg's sketch of the values as one Spark partition, in order: an Alpha sketch fed
    in order, then the union's trim (a values file is read and hashed in chunks, so memory
    stays bounded)."""
    from puffin_cli.blobs.theta import AlphaSketch, ThetaAccumulator

    sketch = AlphaSketch()
    if source.values is not None:
        sketch.update(_theta_hashes(source.iceberg_type, list(source.values),
                                    source.uuid_as_string))
    else:
        assert source.values_file is not None
        try:
            for first, lines in _values_file_chunks(source.values_file, fileio):
                values = parse_values(source.iceberg_type, lines, first)
                sketch.update(_theta_hashes(source.iceberg_type, values,
                                            source.uuid_as_string))
        except PuffinError as exc:
            raise exc.with_path(source.values_file) from None
        except UnicodeDecodeError as exc:
            raise PuffinError(f"not UTF-8 text: {exc.reason}", code="value.parse",
                              path=source.values_file) from None
    union = ThetaAccumulator()
    union.add(sketch.result())
    return union.result()


def dv_bitmap(source: DvFromPositions, *, fileio: FileIO,
              max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Any:
    """The ``pyroaring.BitMap64`` of a DV source: ranges added as ranges, files streamed;
    ``max_blob_size`` bounds the blocks of positions each may hold."""
    from puffin_cli.blobs.deletion_vector import bitmap_from_positions_file, bitmap_from_ranges

    bitmap = bitmap_from_ranges(source.ranges, max_blob_size)
    for path in source.positions_files:
        try:
            with fileio.open_stream(path) as lines:
                bitmap |= bitmap_from_positions_file(lines, max_blob_size=max_blob_size)
        except PuffinError as exc:
            raise exc.with_path(path) from None
        except OSError as exc:
            raise PuffinError(f"cannot read positions: {exc.strerror}", code="dv.positions",
                              path=path) from None
    return bitmap


def build_blob(spec: BlobSpec, where: str = "blob", *, fileio: FileIO,
               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> BuiltBlob:
    """Read one blob's source and make its bytes and final properties; ``max_blob_size``
    (``--max-blob-size``) bounds what any source may hold in memory."""
    source = spec.source
    if isinstance(source, CopiedBlob):
        with PuffinReader(source.path, max_blob_size=max_blob_size,
                          fileio=fileio) as reader:
            meta = reader.blob(source.index)
            stored = reader.read_raw(meta)
        return BuiltBlob(meta.type, meta.fields, meta.snapshot_id, meta.sequence_number,
                         dict(meta.properties), meta.compression_codec, stored, True, "copy")
    if isinstance(source, RawPayload):
        if source.path is not None:
            data = fileio.read_all(source.path, max_blob_size)
        else:
            assert source.data is not None
            data = source.data
        return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                         dict(spec.properties), spec.codec, data, False, "payload")
    if isinstance(source, DvFromPositions):
        from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector

        bitmap = dv_bitmap(source, fileio=fileio, max_blob_size=max_blob_size)
        if not len(bitmap):
            raise spec_error(f"{where}: deletion vector for {source.referenced_data_file} has "
                             "no positions", code="spec.dv.empty")
        properties = _with_computed(spec.properties, dv_blob_properties(
            source.referenced_data_file, len(bitmap)), where)
        return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                         properties, None, encode_deletion_vector(bitmap), False, "dv")
    if isinstance(source, ThetaFromValues):
        sketch, kind = theta_from_values(source, fileio=fileio), "theta"
    else:
        sketch, kind = theta_from_parquet(source, fileio=fileio), "parquet"
    properties = _with_computed(spec.properties, {NDV_PROPERTY: str(sketch.ndv)}, where)
    return BuiltBlob(spec.type, spec.fields, spec.snapshot_id, spec.sequence_number,
                     properties, spec.codec, sketch.to_bytes(), False, kind)


def _int_property(properties: Mapping[str, str], key: str) -> int | None:
    value = properties.get(key)
    return None if value is None else decimal_int(value)


def write_plan(plan: WritePlan, output: str, *, fileio: FileIO, overwrite: bool = False,
               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> WriteSummary:
    """Build every blob in order, streaming each into ``output`` (atomically: temp file and
    rename; an existing ``output`` is replaced only with ``overwrite``), every source read and
    ``output`` written with ``fileio``."""
    written: list[WrittenBlob] = []
    with PuffinWriter(output, properties=plan.properties, created_by=plan.created_by,
                      compress_footer=plan.footer_compression == CODEC_LZ4,
                      overwrite=overwrite, fileio=fileio) as writer:
        for index, spec in enumerate(plan.blobs):
            built = build_blob(spec, f"blob {index}", fileio=fileio,
                               max_blob_size=max_blob_size)
            add = writer.add_stored_blob if built.stored else writer.add_blob
            meta = add(built.type, built.data, fields=built.fields,
                       snapshot_id=built.snapshot_id, sequence_number=built.sequence_number,
                       properties=built.properties, codec=built.codec)
            written.append(WrittenBlob(
                index, meta, built.source, _int_property(meta.properties, NDV_PROPERTY),
                _int_property(meta.properties, CARDINALITY_PROPERTY)))
        result = writer.finish()
    warnings = plan.warnings()
    for blob in written:
        if blob.source == "copy" and blob.metadata.compression_codec == CODEC_LZ4:
            warnings.append(f"blob {blob.index} (copied) is LZ4-compressed: "
                            f"{JAVA_CANNOT_READ_LZ4}")
    return WriteSummary(result.path, result.file_size, result.footer_size,
                        plan.footer_compression == CODEC_LZ4, dict(result.metadata.properties),
                        tuple(written), tuple(warnings))
