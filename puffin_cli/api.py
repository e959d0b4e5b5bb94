"""puffin-cli from Python (docs/python.md): the same analyses the commands run, returning the
result dataclasses their ``--json`` documents serialize (docs/json.md).

Stable across minor versions: the names in ``__all__``, their parameters and the fields of the
results they return. Importing this module is as cheap as ``puffin inspect`` (no Spark, no
click, no rich; numpy, pyarrow and datasketches only when a call needs them). Every error is a
:class:`~puffin_cli.errors.PuffinError` with a stable ``code``, the file and the byte offset,
the one line a command prints.

Locations are local paths, ``file:`` URIs or object-store URLs (``s3://``, ``gs://``,
``abfss://``, ``az://``, ``http(s)://``); ``io`` takes the FileIO properties ``--io`` takes
(pyiceberg's names, e.g. ``{"s3.endpoint": ...}``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import (
    CODEC_ZSTD,
    DEFAULT_MAX_BLOB_SIZE,
    DV_BLOB_TYPE,
    NDV_PROPERTY,
    THETA_BLOB_TYPE,
)
from puffin_cli.storage import FileIO

if TYPE_CHECKING:
    from puffin_cli.analysis.file_report import FileReport as ValidationReport
    from puffin_cli.analysis.inspection import FileReport
    from puffin_cli.analysis.table.loading import Table as LoadedTable
    from puffin_cli.analysis.table.metadata import Snapshot
    from puffin_cli.analysis.table.report import DeletionVector, TableReport
    from puffin_cli.analysis.table.statistics import EngineStatistics
    from puffin_cli.analysis.write.plan import BlobSpec, WriteSummary
    from puffin_cli.blobs import BlobSummary
    from puffin_cli.blobs.theta import CompactTheta
    from puffin_cli.format.findings import Finding
    from puffin_cli.format.metadata import BlobMetadata

__all__ = [
    "Blob", "IcebergTable", "PuffinError", "PuffinFile", "as_json", "dv_blob", "open_file",
    "open_table", "theta_blob", "theta_sketch", "validate", "write_deletion_vector",
    "write_file",
]

Location = str | os.PathLike[str]
ENGINES = ("spark", "trino")


def _fileio(io: Mapping[str, str] | None) -> FileIO:
    return FileIO(dict(io or {}))


# --- Puffin files --------------------------------------------------------------------------


def open_file(location: Location, *, io: Mapping[str, str] | None = None,
              footer_size: int | None = None,
              max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> PuffinFile:
    """Read a Puffin file's footer (a few KiB whatever the file's size; ``footer_size``, the
    ``file-footer-size-in-bytes`` a table registers, makes it one exact read). Blobs are read
    when asked for, each bounded by ``max_blob_size`` as ``--max-blob-size`` bounds them."""
    from puffin_cli.analysis.inspection import inspect_file

    fileio = _fileio(io)
    report = inspect_file(location, decode=False, footer_size=footer_size,
                          max_blob_size=max_blob_size, fileio=fileio)
    return PuffinFile(report, fileio, max_blob_size)


@dataclass(frozen=True)
class PuffinFile:
    """A read Puffin file: ``report`` is ``inspect --no-decode``'s result for it (path, size,
    footer, properties, blob metadata)."""

    report: FileReport
    fileio: FileIO
    max_blob_size: int = DEFAULT_MAX_BLOB_SIZE

    @property
    def path(self) -> str:
        return self.report.path

    @property
    def properties(self) -> dict[str, str]:
        return self.report.properties

    @property
    def blobs(self) -> tuple[Blob, ...]:
        return tuple(Blob(self, b.index, b.metadata) for b in self.report.blobs)

    def blob(self, index: int) -> Blob:
        """Blob ``index`` (0-based, in footer order)."""
        if not 0 <= index < len(self.report.blobs):
            raise PuffinError(f"no blob {index}: the file has {len(self.report.blobs)}",
                              code="api.no-blob", path=self.path)
        return self.blobs[index]

    def inspect(self) -> FileReport:
        """``puffin inspect``'s result: every blob decoded and summarized."""
        from puffin_cli.analysis.inspection import inspect_file

        return inspect_file(self.path, footer_size=self.report.footer.footer_size,
                            max_blob_size=self.max_blob_size, fileio=self.fileio)

    def validate(self, profile: str = "spec") -> ValidationReport:
        """:func:`validate` of this file."""
        return validate(self.path, profile=profile, fileio=self.fileio,
                        max_blob_size=self.max_blob_size)


@dataclass(frozen=True)
class Blob:
    """One blob of a :class:`PuffinFile`: ``metadata`` is its footer entry (type, fields,
    snapshot ID, sequence number, offset, length, codec, properties)."""

    file: PuffinFile
    index: int
    metadata: BlobMetadata

    @property
    def type(self) -> str:
        return self.metadata.type

    def data(self) -> bytes:
        """The blob's bytes, decompressed."""
        from puffin_cli.format.reader import PuffinReader

        with PuffinReader(self.file.path, footer_size=self.file.report.footer.footer_size,
                          max_blob_size=self.file.max_blob_size,
                          fileio=self.file.fileio) as reader:
            return reader.read_blob(self.metadata)

    def summary(self) -> BlobSummary:
        """What ``inspect`` shows of it: a ``ThetaSummary`` (estimate, bounds, exact, ...), a
        ``DeletionVectorSummary`` (cardinality, ranges, ...) or an opaque blob's summary."""
        from puffin_cli.blobs import SummaryOptions, handler_for

        return handler_for(self.type).summarize(self.data(), self.metadata, SummaryOptions())

    def _of_type(self, wanted: str) -> bytes:
        if self.type != wanted:
            raise PuffinError(f"blob {self.index} is a {self.type} blob, not {wanted}",
                              code="api.blob-type", path=self.file.path)
        return self.data()

    # Theta sketches ---------------------------------------------------------------------

    def theta(self) -> CompactTheta:
        """The Theta sketch, decoded and checked: ``ndv`` (the estimate truncated, what
        Iceberg writes as the ``ndv`` property), ``estimate``, ``retained``, ``theta_long``."""
        from puffin_cli.blobs.theta.compact import compact_from_bytes

        return compact_from_bytes(self._of_type(THETA_BLOB_TYPE), self.metadata)

    def sketch(self) -> Any:
        """The Theta sketch as a ``datasketches.compact_theta_sketch`` (to union, intersect or
        estimate with the library)."""
        import datasketches

        return datasketches.compact_theta_sketch.deserialize(self.theta().to_bytes())

    # Deletion vectors -------------------------------------------------------------------

    def _vector(self) -> Any:
        from puffin_cli.blobs.deletion_vector import decode_deletion_vector

        return decode_deletion_vector(self._of_type(DV_BLOB_TYPE), self.metadata.offset)

    def cardinality(self) -> int:
        """How many row positions the deletion vector deletes (from its bytes)."""
        return int(self._vector().cardinality)

    def positions(self) -> Any:
        """Every deleted position, ascending, as one numpy ``uint64`` array (for a huge
        vector, :meth:`position_chunks` holds one chunk at a time)."""
        import numpy as np

        chunks = list(self.position_chunks())
        return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.uint64)

    def position_chunks(self, chunk: int = 1 << 20) -> Iterator[Any]:
        """The deleted positions, ascending, as numpy ``uint64`` arrays of about ``chunk``."""
        from puffin_cli.blobs.deletion_vector import iter_position_chunks

        return iter_position_chunks(self._vector(), chunk)

    def bitmap(self) -> Any:
        """The deleted positions as a ``pyroaring.BitMap64``."""
        return self._vector().bitmap


def validate(location: Location, *, profile: str = "spec", io: Mapping[str, str] | None = None,
             fileio: FileIO | None = None,
             max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> ValidationReport:
    """``puffin validate`` of one file: every finding (code, severity, message, byte offset)
    against the Puffin spec and ``profile``'s engine rules (``spec``, ``java``, ``trino``, ...).
    Never raises on a bad file: what is wrong is in the findings."""
    from puffin_cli.analysis.validate import validate_file

    return validate_file(location, profile=profile, max_blob_size=max_blob_size,
                         fileio=fileio if fileio is not None else _fileio(io))


# --- Tables --------------------------------------------------------------------------------


def open_table(location: Location, *, catalog: str | None = None,
               io: Mapping[str, str] | None = None,
               relocate: Sequence[tuple[str, str]] = (),
               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> IcebergTable:
    """An Iceberg table: a table directory or a ``*.metadata.json`` file; with ``catalog``,
    ``location`` is ``NAMESPACE.TABLE`` of that catalog, configured as pyiceberg configures it
    (``.pyiceberg.yaml``, ``PYICEBERG_CATALOG__<NAME>__*``). ``relocate`` maps (from, to)
    location prefixes, as ``--relocate FROM=TO``."""
    from puffin_cli.analysis.table.loading import Table

    table = Table.load(location, fileio=_fileio(io), catalog=catalog,
                       relocate=list(relocate) or None, max_blob_size=max_blob_size)
    return IcebergTable(table, max_blob_size)


@dataclass(frozen=True)
class IcebergTable:
    """A loaded table (its metadata file read; manifests read when a call needs them)."""

    table: LoadedTable
    max_blob_size: int = DEFAULT_MAX_BLOB_SIZE

    @property
    def metadata_file(self) -> str:
        return self.table.metadata_file

    @property
    def snapshots(self) -> list[Snapshot]:
        """Every snapshot of the metadata, in its order."""
        return self.table.snapshots()

    def _snapshot(self, snapshot_id: int | None) -> Snapshot:
        snapshot = self.table.snapshot(snapshot_id)  # an unknown ID raises there
        if snapshot is None:
            raise PuffinError("the table has no current snapshot", code="table.snapshot",
                              path=self.metadata_file)
        return snapshot

    def report(self, snapshot_id: int | None = None, *, all_snapshots: bool = False,
               validate: bool = True) -> TableReport:
        """``puffin table``'s result (``--snapshot``, ``--all-snapshots``, ``--no-validate``):
        per snapshot its statistics files, the files engines use, every live deletion
        vector and the totals; the table's findings."""
        from puffin_cli.analysis.table.walk import analyze_table

        return analyze_table(self.table, snapshot_id=snapshot_id, all_snapshots=all_snapshots,
                             validate=validate, max_blob_size=self.max_blob_size)

    def statistics(self, snapshot_id: int | None = None) -> dict[str, EngineStatistics]:
        """What Spark and Trino plan a read of the snapshot (default: the current one) with:
        the statistics file each uses (Spark: only one registered for exactly that snapshot;
        Trino: the nearest ancestor's) and the NDV each reads per column. Metadata only."""
        from puffin_cli.analysis.table.statistics import StatisticsView

        view, snapshot = StatisticsView(self.table), self._snapshot(snapshot_id)
        return {engine: view.engine(snapshot, engine) for engine in ENGINES}

    def ndvs(self, snapshot_id: int | None = None, engine: str = "spark"
             ) -> dict[str, int | None]:
        """Column name -> the NDV ``engine`` reads for it (``None``: a blob without a usable
        ``ndv`` property); columns without statistics are absent."""
        if engine not in ENGINES:
            raise PuffinError(f"engine {engine!r}: expected one of {', '.join(ENGINES)}",
                              code="api.engine")
        used = self.statistics(snapshot_id)[engine]
        return {c.column if c.column is not None else str(c.field_id): c.ndv
                for c in used.columns}

    def deletion_vectors(self, snapshot_id: int | None = None) -> tuple[DeletionVector, ...]:
        """Every live deletion vector of the snapshot (default: the current one), one per
        data file: its Puffin file, offset, length, the manifest's and the bytes' counts."""
        [view] = self.report(snapshot_id, validate=False).snapshots
        return view.deletion_vectors

    def findings(self, snapshot_id: int | None = None, *, all_snapshots: bool = False
                 ) -> tuple[Finding, ...]:
        """``puffin table``'s findings (codes ``table.*``, docs/findings.md)."""
        return self.report(snapshot_id, all_snapshots=all_snapshots).findings

    # As Arrow tables ----------------------------------------------------------------------

    def snapshots_arrow(self) -> Any:
        """:attr:`snapshots` as a ``pyarrow.Table`` (``.to_pandas()`` with pandas installed)."""
        import pyarrow as pa

        return pa.Table.from_pylist([
            {"snapshot_id": s.snapshot_id, "parent_id": s.parent_id,
             "sequence_number": s.sequence_number, "timestamp_ms": s.timestamp_ms,
             "operation": s.operation, "schema_id": s.schema_id} for s in self.snapshots],
            schema=pa.schema([("snapshot_id", pa.int64()), ("parent_id", pa.int64()),
                              ("sequence_number", pa.int64()), ("timestamp_ms", pa.int64()),
                              ("operation", pa.string()), ("schema_id", pa.int32())]))

    def ndvs_arrow(self, snapshot_id: int | None = None) -> Any:
        """One row per engine and column: ``engine``, ``field_id``, ``column``, ``ndv``,
        ``path`` (the statistics file) and ``stale`` (an ancestor's file)."""
        import pyarrow as pa

        rows = [{"engine": used.engine, "field_id": c.field_id, "column": c.column,
                 "ndv": c.ndv, "path": used.path, "stale": used.stale}
                for used in self.statistics(snapshot_id).values() for c in used.columns]
        return pa.Table.from_pylist(rows, schema=pa.schema([
            ("engine", pa.string()), ("field_id", pa.int32()), ("column", pa.string()),
            ("ndv", pa.int64()), ("path", pa.string()), ("stale", pa.bool_())]))

    def deletion_vectors_arrow(self, snapshot_id: int | None = None) -> Any:
        """:meth:`deletion_vectors` as a ``pyarrow.Table``, one row per data file."""
        import pyarrow as pa

        rows = [{"data_file": dv.data_file, "path": dv.path, "offset": dv.offset,
                 "length": dv.length, "record_count": dv.record_count,
                 "cardinality": dv.cardinality, "sequence_number": dv.sequence_number}
                for dv in self.deletion_vectors(snapshot_id)]
        return pa.Table.from_pylist(rows, schema=pa.schema([
            ("data_file", pa.string()), ("path", pa.string()), ("offset", pa.int64()),
            ("length", pa.int64()), ("record_count", pa.int64()), ("cardinality", pa.int64()),
            ("sequence_number", pa.int64())]))


# --- Writing -------------------------------------------------------------------------------


def theta_sketch(column: Any, iceberg_type: str | None = None, *,
                 uuid_as_string: bool = False) -> CompactTheta:
    """The Theta sketch Iceberg's Spark procedure builds of an Arrow column (a
    ``pyarrow.Array`` or ``ChunkedArray``, read as one Spark task in this order), its values
    serialized as Iceberg serializes ``iceberg_type`` (default: the type the Arrow type maps
    to, as ``puffin write --parquet`` maps it). Nulls are skipped."""
    import numpy as np
    import pyarrow as pa

    from puffin_cli.analysis.write.parquet import iceberg_type_of
    from puffin_cli.blobs.arrow_values import serialize_column
    from puffin_cli.blobs.iceberg_values import IcebergType
    from puffin_cli.blobs.theta import AlphaSketch, ThetaAccumulator

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    kind = IcebergType.parse(iceberg_type) if iceberg_type is not None \
        else iceberg_type_of(column.type)
    if kind is None:
        raise PuffinError(f"Arrow type {column.type} has no Iceberg type; give iceberg_type",
                          code="api.type")
    sketch = AlphaSketch()
    for chunk in chunks:
        rows = len(chunk)
        serialized = serialize_column(kind, chunk, rows, uuid_as_string)
        sketch.update(serialized.hashes(np.ones(rows, dtype=bool)))
    union = ThetaAccumulator()
    union.add(sketch.result())
    return union.result()


def theta_blob(sketch: CompactTheta, field_id: int, *, snapshot_id: int = -1,
               sequence_number: int = -1, codec: str | None = CODEC_ZSTD) -> BlobSpec:
    """A Theta blob of ``sketch`` (:func:`theta_sketch`) for column ``field_id``, to write
    with :func:`write_file`: its ``ndv`` property the sketch's, compressed as Iceberg writes
    it (``codec=None``: stored as is)."""
    from puffin_cli.analysis.write.plan import BlobSpec, RawPayload

    return BlobSpec(RawPayload(data=sketch.to_bytes()), THETA_BLOB_TYPE, (field_id,),
                    snapshot_id, sequence_number, {NDV_PROPERTY: str(sketch.ndv)}, codec)


def dv_blob(referenced_data_file: str, positions: Iterable[int] | Any) -> BlobSpec:
    """A deletion-vector blob of ``positions`` (integers, a numpy array or a
    ``pyroaring.BitMap64``) for ``referenced_data_file``, as ``puffin write --dv`` writes it
    (fields [_pos], IDs -1, never compressed, ``cardinality`` and ``referenced-data-file``)."""
    from pyroaring import BitMap64

    from puffin_cli.analysis.write import plan
    from puffin_cli.blobs.deletion_vector import iter_ranges, vector_of

    bitmap = positions if isinstance(positions, BitMap64) else BitMap64(positions)
    ranges = tuple(iter_ranges(vector_of(bitmap))) if len(bitmap) else ()
    return plan.dv_blob(plan.DvFromPositions(referenced_data_file, ranges))


def write_file(output: Location, blobs: Sequence[BlobSpec], *,
               properties: Mapping[str, str] | None = None, created_by: str | None = None,
               io: Mapping[str, str] | None = None, overwrite: bool = False) -> WriteSummary:
    """What ``puffin write`` does: the blobs in order, atomically (nothing is left behind on
    failure; an existing ``output`` is replaced only with ``overwrite``). ``created_by``
    defaults to puffin-cli's. Returns ``write --json``'s result."""
    from puffin_cli import CREATED_BY
    from puffin_cli.analysis.write.build import write_plan
    from puffin_cli.analysis.write.plan import WritePlan

    plan = WritePlan(tuple(blobs), dict(properties or {}),
                     CREATED_BY if created_by is None else created_by)
    return write_plan(plan, os.fspath(output), fileio=_fileio(io), overwrite=overwrite)


def write_deletion_vector(output: Location, referenced_data_file: str,
                          positions: Iterable[int] | Any, *,
                          io: Mapping[str, str] | None = None,
                          overwrite: bool = False) -> WriteSummary:
    """A Puffin file of one deletion vector (:func:`dv_blob`)."""
    return write_file(output, [dv_blob(referenced_data_file, positions)], io=io,
                      overwrite=overwrite)


def as_json(result: Any) -> Any:
    """A result as its JSON form (docs/json.md: the body of the command's document)."""
    from puffin_cli.render.jsonout import to_jsonable

    return to_jsonable(result)
