"""Which statistics file an engine uses for a snapshot, and the NDVs it reads there: a view of
a loaded table's metadata with no side effects (no file opened, no finding recorded, nothing
changed). ``puffin table`` shows it (:mod:`.walk`) and checks the files it names
(:mod:`.checks`); ``stats compute`` finds a snapshot's statistics files through it; ``puffin
diff`` compares it between two snapshots.

Engines take the statistics files and NDVs from the table metadata's ``statistics`` entries
(their ``blob-metadata``), never from the Puffin files themselves:

- **Spark** (Iceberg's ``SparkScan.estimateStatistics``, Iceberg 1.10): the first file
  registered for exactly the snapshot read, else none; a column (a blob's first field ID) gets
  the ``ndv`` property of its last ``apache-datasketches-theta-v1`` blob that has one. Spark
  asks for it only with the cost-based optimizer on (``spark.sql.cbo.enabled=true``, off by
  default; and ``spark.sql.iceberg.report-column-stats``, on by default).
- **Trino** (``TableStatisticsReader``): the file of the nearest snapshot that has one, walking
  ``parent-snapshot-id`` from the snapshot read (itself included); a column gets the ``ndv``
  property of its single-field theta blob. With ``iceberg.extended-statistics.enabled`` (on by
  default). Trino refuses a table with two files for one snapshot; the view gives the first.

An ``ndv`` that is not a decimal integer gives ``None`` (both engines fail to parse it:
``validate --profile trino`` reports it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from puffin_cli.analysis.table.report import StatisticsBlob, StatisticsChoice, StatisticsFile
from puffin_cli.format.numbers import decimal_int
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE

if TYPE_CHECKING:
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.metadata import Snapshot, StatisticsBlobEntry, StatisticsEntry

SPARK, TRINO = "spark", "trino"
ENGINES = (SPARK, TRINO)


@dataclass(frozen=True)
class ColumnNdv:
    """The NDV an engine reads for one column: ``column`` is the field's name in the schema of
    the snapshot read (``None`` for a field ID it lacks); ``ndv`` is ``None`` when the blob's
    ``ndv`` property is absent or not a decimal integer."""

    field_id: int
    column: str | None
    ndv: int | None


@dataclass(frozen=True)
class EngineStatistics:
    """What ``engine`` plans a read of ``snapshot_id`` with: the statistics ``entry`` it uses
    (``None``: none) and per column, by field ID, the NDV it reads there."""

    engine: str
    snapshot_id: int
    entry: StatisticsEntry | None
    columns: tuple[ColumnNdv, ...]

    @property
    def path(self) -> str | None:
        return None if self.entry is None else self.entry.path

    @property
    def stale(self) -> bool:
        """The file is an ancestor's: it describes another snapshot than the one read."""
        return self.entry is not None and self.entry.snapshot_id != self.snapshot_id


class StatisticsView:
    """The statistics view of one loaded table (its metadata as loaded; a table reloaded
    after a commit needs a new view)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self._by_snapshot: dict[int, list[StatisticsEntry]] = defaultdict(list)
        for entry in table.metadata.statistics:
            self._by_snapshot[entry.snapshot_id].append(entry)

    def registered(self, snapshot_id: int) -> tuple[StatisticsEntry, ...]:
        """The statistics entries registered for exactly ``snapshot_id``, in metadata order."""
        return tuple(self._by_snapshot.get(snapshot_id, ()))

    def used(self, snapshot: Snapshot, engine: str) -> StatisticsEntry | None:
        """The statistics entry ``engine`` (:data:`SPARK` or :data:`TRINO`) uses for a read of
        ``snapshot``, or ``None``."""
        if engine == SPARK:
            candidates = [snapshot]
        elif engine == TRINO:
            candidates = list(self.table.ancestors(snapshot))
        else:
            raise ValueError(f"unknown engine {engine!r} (one of {', '.join(ENGINES)})")
        for candidate in candidates:
            entries = self._by_snapshot.get(candidate.snapshot_id)
            if entries:
                return entries[0]
        return None

    def engine(self, snapshot: Snapshot, engine: str) -> EngineStatistics:
        """:meth:`used` with the NDVs ``engine`` reads there, by field ID."""
        entry = self.used(snapshot, engine)
        ndvs: dict[int, int | None] = {}
        if entry is not None:
            for blob in entry.blobs:
                if blob.type != THETA_BLOB_TYPE or not blob.fields:
                    continue
                ndv = _ndv(blob.properties)
                if engine == SPARK:  # keyed by the first field; a later ndv replaces
                    if ndv is not None or blob.fields[0] not in ndvs:
                        ndvs[blob.fields[0]] = ndv
                elif len(blob.fields) == 1:
                    ndvs[blob.fields[0]] = ndv
        names = self.table.field_names(snapshot.snapshot_id)
        return EngineStatistics(engine, snapshot.snapshot_id, entry, tuple(
            ColumnNdv(fid, names.name(fid), ndv) for fid, ndv in sorted(ndvs.items())))

    def choice(self, snapshot: Snapshot) -> StatisticsChoice:
        """Which file Spark and Trino use for ``snapshot``, as ``puffin table`` reports it."""
        spark = self.used(snapshot, SPARK)
        trino = self.used(snapshot, TRINO)
        return StatisticsChoice(None if spark is None else spark.path,
                                None if trino is None else trino.path,
                                None if trino is None else trino.snapshot_id)

    def describe(self, entry: StatisticsEntry) -> StatisticsFile:
        """The entry as ``puffin table`` shows it: each blob with its column names in the
        schema its snapshot was written with (a column renamed later keeps its field ID and
        shows the name it had when the statistics were computed) and its NDV."""
        names = self.table.field_names(entry.snapshot_id)
        return StatisticsFile(
            entry.snapshot_id, entry.path, entry.file_size, entry.footer_size,
            self.table.metadata.schema_for(entry.snapshot_id)[0],
            tuple(_blob(b, tuple(names.name(f) for f in b.fields)) for b in entry.blobs))


def _blob(blob: StatisticsBlobEntry, columns: tuple[str | None, ...]) -> StatisticsBlob:
    return StatisticsBlob(type=blob.type, fields=blob.fields, columns=columns,
                          snapshot_id=blob.snapshot_id, sequence_number=blob.sequence_number,
                          ndv=_ndv(blob.properties), properties=blob.properties)


def _ndv(properties: dict[str, str]) -> int | None:
    value = properties.get(NDV_PROPERTY)
    return None if value is None else decimal_int(value)
