"""Runs inside the pypaimon venv (tests/interop/paimonenv.py); not part of the package.

    python paimon_oracle.py < [job, ...]   > [result, ...]

A job is ``{"op": "write", "path": OUT, "column": C, "key-type": K, "rows": [...]}`` or
``{"op": "read", "path": IN, "column": C, "key-type": K}``; its result ``{"rows": [...]}``
(``null`` for a write) or ``{"error": "the last line of what pypaimon raised"}``.

``column`` is ``blob``, ``array`` or ``map`` (``MAP<key-type, BLOB>``, key type STRING or
INT). A row is ``null``, ``"placeholder"``, or: for ``blob`` the data as hex; for ``array`` a
list of hex strings and nulls; for ``map`` a list of ``[key, hex-or-null]`` pairs. ``write``
uses pypaimon's ``BlobFormatWriter``; ``read`` its ``FormatBlobReader`` (which reads the
trailer and index) and the record iterator it reads rows with.
"""

from __future__ import annotations

import json
import sys

from pypaimon.filesystem.local_file_io import LocalFileIO
from pypaimon.read.reader.format_blob_reader import FormatBlobReader
from pypaimon.schema.data_types import ArrayType, AtomicType, DataField, MapType
from pypaimon.table.row.blob import Blob, BlobData
from pypaimon.table.row.generic_row import GenericRow
from pypaimon.table.row.row_kind import RowKind
from pypaimon.write.blob_format_writer import BlobFormatWriter


def field(column: str, key_type: str) -> DataField:
    blob = AtomicType("BLOB")
    if column == "blob":
        data_type = blob
    elif column == "array":
        data_type = ArrayType(True, blob)
    else:
        data_type = MapType(True, AtomicType(key_type, nullable=key_type != "STRING"), blob)
    return DataField(0, "b", data_type)


def placeholder(column: str) -> object:
    return {"blob": Blob.PLACE_HOLDER, "array": Blob.ARRAY_PLACE_HOLDER,
            "map": Blob.MAP_PLACE_HOLDER}[column]


def to_value(column: str, row: object) -> object:
    if row is None:
        return None
    if row == "placeholder":
        return placeholder(column)
    if column == "blob":
        return BlobData(bytes.fromhex(row))
    if column == "array":
        return [None if e is None else BlobData(bytes.fromhex(e)) for e in row]
    return [(k, None if v is None else BlobData(bytes.fromhex(v))) for k, v in row]


def from_value(column: str, value: object) -> object:
    if value is None:
        return None
    if value is placeholder(column):
        return "placeholder"
    if column == "blob":
        return value.to_data().hex()
    if column == "array":
        return [None if e is None else e.to_data().hex() for e in value]
    return [[k, None if v is None else v.to_data().hex()] for k, v in value.items()]


def run(job: dict) -> object:
    column, key_type, path = job["column"], job.get("key-type", "STRING"), job["path"]
    data_field = field(column, key_type)
    if job["op"] == "write":
        with open(path, "wb") as out:
            writer = BlobFormatWriter(out)
            for row in job["rows"]:
                writer.add_element(GenericRow([to_value(column, row)], [data_field],
                                              RowKind.INSERT))
            writer.close()
        return None
    reader = FormatBlobReader(LocalFileIO(), path, ["b"], [data_field], None, False)
    try:
        values = reader.read_values_at(list(range(reader.record_count)))
    finally:
        reader.close()
    return [from_value(column, v) for v in values]


def main() -> None:
    results = []
    for job in json.load(sys.stdin):
        try:
            results.append({"rows": run(job)})
        except Exception as exc:  # the oracle's answer: what pypaimon raised
            results.append({"error": f"{type(exc).__name__}: {exc}"})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
