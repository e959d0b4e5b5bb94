"""The deletes a Spark task of ``puffin stats compute`` applies to the rows it reads: the
deletion vector, the rows of the position delete files whose ``file_path`` is the slice's
``location`` (the driver passes only files that apply: sequence number at least the data
file's), and the equality delete files (a row is deleted when it equals a delete row on every
equality column, null matching null). Equality is decided on Iceberg's serialized values, which
are equal exactly when the values are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from puffin_cli.analysis.stats.data_files import WHOLE_FILE, SliceSpec, read_batches, read_error
from puffin_cli.analysis.stats.files import (
    Column,
    DeletionVectorRef,
    EqualityDeleteFile,
    PositionDeleteFile,
)
from puffin_cli.blobs.arrow_values import SerializedColumn, serialize_column
from puffin_cli.errors import PuffinError
from puffin_cli.format.avro import AvroFile
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE
from puffin_cli.storage import FileIO, StorageError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    BoolArray = npt.NDArray[np.bool_]
    Int64Array = npt.NDArray[np.int64]


def _dv_positions(fileio: FileIO, dv: DeletionVectorRef) -> Int64Array:
    import numpy as np

    from puffin_cli.blobs.deletion_vector import decode_deletion_vector, iter_position_chunks
    try:
        with fileio.new_input(dv.puffin_local) as source:
            data = source.read(dv.offset, dv.length)
        decoded = decode_deletion_vector(data, dv.offset)
    except PuffinError as exc:
        raise exc.with_path(dv.puffin_local) from None
    parts = list(iter_position_chunks(decoded))
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


def _read_position_deletes(fileio: FileIO, d: PositionDeleteFile) -> Any:
    """The (file_path, pos) rows of a position delete file, as an Arrow table."""
    import pyarrow as pa

    try:
        if d.file_format == "parquet":
            import pyarrow.parquet as pq

            with fileio.open_reader(d.local) as handle:
                table = pq.read_table(handle, columns=["file_path", "pos"])
        elif d.file_format == "orc":
            import pyarrow.orc as po

            with fileio.open_reader(d.local) as handle:
                table = po.read_table(handle, columns=["file_path", "pos"])
        elif d.file_format == "avro":
            with fileio.open_stream(d.local) as source:
                container = AvroFile(source, limit=DEFAULT_MAX_BLOB_SIZE,
                                     what="position delete file")
                records = [(r["file_path"], r["pos"]) for r in container.records()]
            table = pa.table({"file_path": pa.array([r[0] for r in records], pa.string()),
                              "pos": pa.array([r[1] for r in records], pa.int64())})
        else:
            raise PuffinError(f"position delete file format {d.file_format!r} is not "
                              "supported (supported: parquet, orc, avro)", code="stats.format",
                              path=d.local)
    except StorageError as exc:
        raise read_error(d.local, d.file_format, exc) from None
    except PuffinError as exc:
        raise exc.with_path(d.local) from None
    except Exception as exc:
        raise read_error(d.local, d.file_format, exc) from None
    return table


class RowDeletes:
    """The deletes of a task, each delete file read once, with the FileIO of the slice that
    needs it (its table's)."""

    def __init__(self) -> None:
        self._position_files: dict[str, Any] = {}
        self._keys: dict[str, Any] = {}

    def positions(self, s: SliceSpec) -> Int64Array:
        """Sorted distinct deleted positions of the slice's file."""
        import numpy as np

        parts = [self._position_file(s.fileio, d, s.location) for d in s.position_deletes]
        if s.deletion_vector is not None:
            dv = _dv_positions(s.fileio, s.deletion_vector)
            if not parts:  # a deletion vector's positions come sorted and distinct
                return dv
            parts.append(dv)
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def _position_file(self, fileio: FileIO, d: PositionDeleteFile, location: str
                       ) -> Int64Array:
        """The positions a position delete file holds for one data file (a partition-scoped
        file holds those of several: it is read once per task)."""
        import numpy as np
        import pyarrow.compute as pc

        if d.local not in self._position_files:
            self._position_files[d.local] = _read_position_deletes(fileio, d)
        table = self._position_files[d.local]
        mine = table.filter(pc.equal(table["file_path"], location))
        positions: Int64Array = mine["pos"].to_numpy().astype(np.int64)
        return positions

    def equality_keys(self, d: EqualityDeleteFile, fileio: FileIO) -> Any:
        if d.location not in self._keys:
            spec = SliceSpec(d.location, d.local, d.file_format, 0, WHOLE_FILE,
                             fileio=fileio)
            tables = [_key_table(d.columns, columns, rows)
                      for _, rows, columns in read_batches(spec, d.columns)]
            if tables:
                import pyarrow as pa

                self._keys[d.location] = pa.concat_tables(tables)
            else:
                self._keys[d.location] = None
        return self._keys[d.location]


def _key_table(columns: Sequence[Column], arrays: dict[int, Any], rows: int,
               serialized: dict[int, SerializedColumn] | None = None) -> Any:
    """Join keys: per equality column its serialized value and a validity flag."""
    import pyarrow as pa

    data: dict[str, Any] = {}
    for i, c in enumerate(columns):
        ser = (serialized or {}).get(c.field_id)
        if ser is None:
            ser = serialize_column(c.type, arrays.get(c.field_id), rows)
        data[f"k{i}"] = ser.key()
        data[f"v{i}"] = pa.array(ser.valid)
    return pa.table(data)


def equality_keep(d: EqualityDeleteFile, keys: Any, arrays: dict[int, Any], rows: int,
                   serialized: dict[int, SerializedColumn]) -> BoolArray:
    import numpy as np
    import pyarrow as pa

    keep = np.zeros(rows, dtype=bool)
    left = _key_table(d.columns, arrays, rows, serialized)
    left = left.append_column("row", pa.array(np.arange(rows, dtype=np.int64)))
    names = [n for i in range(len(d.columns)) for n in (f"k{i}", f"v{i}")]
    survivors = left.join(keys, keys=names, join_type="left anti", use_threads=False)
    keep[survivors["row"].to_numpy()] = True
    return keep
