"""The JSON write spec (docs/write.md) as a :class:`~.plan.WritePlan` (:func:`load_spec`):
everything that can be checked without reading payloads (structure, types, field IDs, that
files exist) is checked here, each error naming its place in the document.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from typing import Any

from puffin_cli import CREATED_BY as DEFAULT_CREATED_BY
from puffin_cli.analysis.write.parquet import expand_paths, parquet_theta_blobs, relative_to
from puffin_cli.analysis.write.plan import (
    DEFAULT_THETA_CODEC,
    NO_COMPRESSION,
    BlobSpec,
    CopiedBlob,
    DvFromPositions,
    RawPayload,
    ThetaFromParquet,
    ThetaFromValues,
    WritePlan,
    copy_blob,
    dv_blob,
    parse_codec,
    spec_error,
)
from puffin_cli.blobs.iceberg_values import IcebergType, parse_value
from puffin_cli.errors import PuffinError
from puffin_cli.format import jsonload
from puffin_cli.format.metadata import json_kind
from puffin_cli.format.spec import (
    CODEC_LZ4,
    ROW_POSITION_FIELD_ID,
    THETA_BLOB_TYPE,
)
from puffin_cli.storage import FileIO

# --------------------------------------------------------------------------------------------
# The JSON spec


class _Spec:
    """Walks a spec document; every error names the spec file and where in it."""

    def __init__(self, path: str, base_dir: str, compress: str | None,
                 uuid_as_string: bool, fileio: FileIO) -> None:
        self.path = path
        self.fileio = fileio  # the files the spec names are checked and read with it
        self.base_dir = base_dir
        self.compress = compress  # --compress as given (zstd, lz4, none), None when not given
        self.uuid_as_string = uuid_as_string  # --uuid-hash text (the default) or bytes

    def uuid_hash(self, spec: dict[str, Any], where: str) -> bool:
        """Whether uuids are hashed as text: ``uuid-hash`` (``text`` or ``bytes``), the older
        ``uuid-as-string`` (true or false), else the command line's choice."""
        if "uuid-hash" in spec:
            if spec["uuid-hash"] not in ("text", "bytes"):
                raise self.fail(f"{where}.uuid-hash", "expected \"text\" or \"bytes\"")
            return bool(spec["uuid-hash"] == "text")
        if "uuid-as-string" in spec:
            if not isinstance(spec["uuid-as-string"], bool):
                raise self.fail(f"{where}.uuid-as-string", "expected true or false")
            return bool(spec["uuid-as-string"])
        return self.uuid_as_string

    def fail(self, where: str, message: str) -> PuffinError:
        return spec_error(f"{where}: {message}", path=self.path)

    def obj(self, value: Any, where: str, allowed: Sequence[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {json_kind(value)}")
        unknown = [k for k in value if k not in allowed]
        if unknown:
            raise self.fail(where, f"unknown key {unknown[0]!r} (expected "
                            f"{', '.join(repr(k) for k in allowed)})")
        return value

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, found {json_kind(value)}")
        return value

    def integer(self, value: Any, where: str, low: int = -(2**63), high: int = 2**63 - 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected an integer, found {json_kind(value)}")
        if not low <= value <= high:
            raise self.fail(where, f"{value} is not from {low} to {high}")
        return value

    def properties(self, value: Any, where: str) -> dict[str, str]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object of strings, found {json_kind(value)}")
        for key, item in value.items():
            self.string(item, f"{where}.{key}")
        return dict(value)

    def fields(self, value: Any, where: str) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list of field IDs, found {json_kind(value)}")
        return tuple(self.integer(v, f"{where}[{i}]", -(2**31), 2**31 - 1)
                     for i, v in enumerate(value))

    def file(self, value: Any, where: str) -> str:
        path = relative_to(self.base_dir, self.string(value, where))
        found = self.fileio.stat(path)
        if found is None or found.kind == "dir":
            raise self.fail(where, f"{path}: no such file")
        return path

    def codec(self, blob: dict[str, Any], where: str, default: str | None) -> str | None:
        if "compression" in blob:
            try:
                return parse_codec(self.string(blob["compression"], f"{where}.compression"),
                                   where)
            except PuffinError as exc:
                raise exc.with_path(self.path) from None
        if self.compress is not None:
            return parse_codec(self.compress, "--compress")
        return default

    def document(self, doc: Any) -> WritePlan:
        doc = self.obj(doc, "spec", ("properties", "created-by", "footer-compression",
                                     "blobs"))
        properties = self.properties(doc.get("properties", {}), "properties")
        created_by: str | None = DEFAULT_CREATED_BY
        if "created-by" in doc:
            created_by = None if doc["created-by"] is None else \
                self.string(doc["created-by"], "created-by")
        footer = None
        if "footer-compression" in doc:
            text = self.string(doc["footer-compression"], "footer-compression")
            if text.strip().lower() not in (CODEC_LZ4, NO_COMPRESSION):
                raise self.fail("footer-compression", "the footer can only be LZ4-compressed "
                                "(lz4 or none)")
            footer = parse_codec(text, "footer-compression")
        blobs_value = doc.get("blobs", [])
        if not isinstance(blobs_value, list):
            raise self.fail("blobs", f"expected a list, found {json_kind(blobs_value)}")
        blobs: list[BlobSpec] = []
        for i, item in enumerate(blobs_value):
            blobs.extend(self.blob(item, f"blobs[{i}]"))
        return WritePlan(tuple(blobs), properties, created_by, footer)

    def blob(self, value: Any, where: str) -> list[BlobSpec]:
        blob = self.obj(value, where, _BLOB_KEYS)
        kinds = [k for k in _SOURCE_KEYS if k in blob]
        if len(kinds) != 1:
            raise self.fail(where, "expected exactly one of "
                            f"{', '.join(repr(k) for k in _SOURCE_KEYS)}, found "
                            f"{', '.join(repr(k) for k in kinds) or 'none'}")
        kind = kinds[0]
        return getattr(self, kind)(blob, where)  # type: ignore[no-any-return]

    def common(self, blob: dict[str, Any], where: str) -> tuple[int, int, dict[str, str]]:
        snapshot_id = self.integer(blob.get("snapshot-id", -1), f"{where}.snapshot-id")
        sequence_number = self.integer(blob.get("sequence-number", -1),
                                       f"{where}.sequence-number")
        properties = self.properties(blob.get("properties", {}), f"{where}.properties")
        return snapshot_id, sequence_number, properties

    def payload(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        if "type" not in blob or "fields" not in blob:
            raise self.fail(where, "a payload blob needs 'type' and 'fields'")
        spec = self.obj(blob["payload"], f"{where}.payload", ("file", "base64", "text"))
        if len(spec) != 1:
            raise self.fail(f"{where}.payload", "expected exactly one of 'file', 'base64', "
                            "'text'")
        (key, value), = spec.items()
        inner = f"{where}.payload.{key}"
        if key == "file":
            source = RawPayload(path=self.file(value, inner))
        elif key == "base64":
            try:
                data = base64.b64decode(self.string(value, inner), validate=True)
            except binascii.Error as exc:
                raise self.fail(inner, f"not valid base64 ({exc})") from None
            source = RawPayload(data=data)
        else:
            text = self.string(value, inner)
            try:
                source = RawPayload(data=text.encode("utf-8"))
            except UnicodeEncodeError:
                raise self.fail(inner, "not valid Unicode text (a lone surrogate)") from None
        snapshot_id, sequence_number, properties = self.common(blob, where)
        return [BlobSpec(source, self.string(blob["type"], f"{where}.type"),
                         self.fields(blob["fields"], f"{where}.fields"), snapshot_id,
                         sequence_number, properties, self.codec(blob, where, None))]

    def theta(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        inner = f"{where}.theta"
        spec = self.obj(blob["theta"], inner, _THETA_KEYS)
        blob_type = self.string(blob.get("type", THETA_BLOB_TYPE), f"{where}.type")
        snapshot_id, sequence_number, properties = self.common(blob, where)
        codec = self.codec(blob, where, DEFAULT_THETA_CODEC)
        uuid_as_string = self.uuid_hash(spec, inner)
        given_type = None
        if "iceberg-type" in spec:
            where_type = f"{inner}.iceberg-type"
            try:
                given_type = IcebergType.parse(self.string(spec["iceberg-type"], where_type))
            except PuffinError as exc:
                raise self.fail(where_type, exc.message) from None
        if "parquet" in spec:
            return self.theta_parquet(blob, spec, where, given_type, uuid_as_string,
                                      (snapshot_id, sequence_number, properties, codec,
                                       blob_type))
        if given_type is None:
            raise self.fail(inner, "'iceberg-type' is required (e.g. \"long\", "
                            "\"decimal(10,2)\")")
        sources = [k for k in ("values", "values-file") if k in spec]
        if len(sources) != 1:
            raise self.fail(inner, "expected exactly one of 'values', 'values-file', "
                            "'parquet'")
        if "fields" not in blob:
            raise self.fail(where, "'fields' is required (the field ID of the column)")
        fields = self.fields(blob["fields"], f"{where}.fields")
        if "values" in spec:
            values = spec["values"]
            if not isinstance(values, list):
                raise self.fail(f"{inner}.values", f"expected a list, found "
                                f"{json_kind(values)}")
            parsed = tuple(self.value(given_type, v, f"{inner}.values[{i}]")
                           for i, v in enumerate(values) if v is not None)
            source = ThetaFromValues(given_type, values=parsed, uuid_as_string=uuid_as_string)
        else:
            source = ThetaFromValues(given_type, values_file=self.file(
                spec["values-file"], f"{inner}.values-file"), uuid_as_string=uuid_as_string)
        return [BlobSpec(source, blob_type, fields, snapshot_id, sequence_number, properties,
                         codec)]

    def theta_parquet(self, blob: dict[str, Any], spec: dict[str, Any], where: str,
                      given_type: IcebergType | None, uuid_as_string: bool,
                      common: tuple[int, int, dict[str, str], str | None, str]
                      ) -> list[BlobSpec]:
        snapshot_id, sequence_number, properties, codec, blob_type = common
        inner = f"{where}.theta"
        patterns = spec["parquet"]
        if isinstance(patterns, str):
            patterns = [patterns]
        if not isinstance(patterns, list) or not patterns:
            raise self.fail(f"{inner}.parquet", "expected a path or glob, or a list of them")
        files = expand_paths([self.string(p, f"{inner}.parquet") for p in patterns],
                             self.base_dir, fileio=self.fileio)
        columns: list[str] | None = None
        if "column" in spec and "columns" in spec:
            raise self.fail(inner, "give 'column' or 'columns', not both")
        if "column" in spec:
            columns = [self.string(spec["column"], f"{inner}.column")]
        elif "columns" in spec:
            if not isinstance(spec["columns"], list):
                raise self.fail(f"{inner}.columns", "expected a list of column names")
            columns = [self.string(c, f"{inner}.columns") for c in spec["columns"]]
        field_ids: dict[str, int] = {}
        if "fields" in blob:
            fields = self.fields(blob["fields"], f"{where}.fields")
            if columns is None or len(columns) != 1 or len(fields) != 1:
                raise self.fail(f"{where}.fields", "with 'parquet', 'fields' needs exactly one "
                                "'column' and one field ID (use 'field-ids' for several)")
            field_ids[columns[0]] = fields[0]
        if "field-ids" in spec:
            ids = self.obj(spec["field-ids"], f"{inner}.field-ids", list(spec["field-ids"]))
            field_ids.update({k: self.integer(v, f"{inner}.field-ids.{k}", -(2**31), 2**31 - 1)
                              for k, v in ids.items()})
        try:
            blobs = parquet_theta_blobs(files, fileio=self.fileio, columns=columns,
                                        field_ids=field_ids, uuid_as_string=uuid_as_string,
                                        snapshot_id=snapshot_id,
                                        sequence_number=sequence_number, codec=codec)
        except PuffinError as exc:
            raise exc.with_path(self.path) if exc.path is None else exc from None
        out = []
        for b in blobs:
            source = b.source
            if given_type is not None:
                assert isinstance(source, ThetaFromParquet)
                source = ThetaFromParquet(source.files, source.column, source.field_id,
                                          given_type, source.uuid_as_string)
            out.append(BlobSpec(source, blob_type, b.fields, b.snapshot_id, b.sequence_number,
                                dict(properties), b.codec))
        return out

    def value(self, iceberg_type: IcebergType, value: Any, where: str) -> Any:
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            text = str(value)
        else:
            raise self.fail(where, f"expected a value of type {iceberg_type}, found "
                            f"{json_kind(value)}")
        try:
            return parse_value(iceberg_type, text)
        except PuffinError as exc:
            raise self.fail(where, exc.message) from None

    def dv(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        for key in ("type", "fields", "snapshot-id", "sequence-number", "compression"):
            if key in blob:
                raise self.fail(f"{where}.{key}", "a deletion vector is always written as "
                                "Iceberg writes it (type deletion-vector-v1, fields "
                                f"[{ROW_POSITION_FIELD_ID}], ids -1, uncompressed)")
        inner = f"{where}.dv"
        spec = self.obj(blob["dv"], inner, ("referenced-data-file", "positions",
                                            "positions-file"))
        if "referenced-data-file" not in spec:
            raise self.fail(inner, "'referenced-data-file' is required")
        ranges: list[tuple[int, int]] = []
        if "positions" in spec:
            ranges = self.positions(spec["positions"], f"{inner}.positions")
        files: list[str] = []
        if "positions-file" in spec:
            value = spec["positions-file"]
            items = value if isinstance(value, list) else [value]
            files = [self.file(v, f"{inner}.positions-file") for v in items]
        if not ranges and not files:
            raise self.fail(inner, "expected 'positions' or 'positions-file'")
        source = DvFromPositions(self.string(spec["referenced-data-file"],
                                             f"{inner}.referenced-data-file"),
                                 tuple(ranges), tuple(files))
        spec_blob = dv_blob(source)
        properties = self.properties(blob.get("properties", {}), f"{where}.properties")
        if properties:
            spec_blob = BlobSpec(source, spec_blob.type, spec_blob.fields,
                                 properties=properties)
        return [spec_blob]

    def positions(self, value: Any, where: str) -> list[tuple[int, int]]:
        from puffin_cli.blobs.deletion_vector import MAX_POSITION

        if isinstance(value, str):
            return self.parse_positions(value, where)
        if not isinstance(value, list):
            raise self.fail(where, "expected a string like \"0,2,10-20\" or a list of "
                            "positions, \"START-END\" strings and [START, END] pairs")
        ranges: list[tuple[int, int]] = []
        for i, item in enumerate(value):
            at = f"{where}[{i}]"
            if isinstance(item, str):
                ranges.extend(self.parse_positions(item, at))
            elif isinstance(item, list) and len(item) == 2:
                start = self.integer(item[0], f"{at}[0]", 0, MAX_POSITION)
                end = self.integer(item[1], f"{at}[1]", 0, MAX_POSITION)
                if end < start:
                    raise self.fail(at, f"range [{start}, {end}] ends before it starts")
                ranges.append((start, end))
            else:
                position = self.integer(item, at, 0, MAX_POSITION)
                ranges.append((position, position))
        return ranges

    def parse_positions(self, text: str, where: str) -> list[tuple[int, int]]:
        from puffin_cli.blobs.deletion_vector import parse_position_spec

        try:
            return parse_position_spec(text)
        except PuffinError as exc:
            raise self.fail(where, exc.message) from None

    def copy(self, blob: dict[str, Any], where: str) -> list[BlobSpec]:
        if len(blob) != 1:
            raise self.fail(where, "a copied blob keeps its own metadata; 'copy' takes no "
                            "other keys")
        spec = self.obj(blob["copy"], f"{where}.copy", ("file", "index"))
        if "file" not in spec or "index" not in spec:
            raise self.fail(f"{where}.copy", "expected 'file' and 'index'")
        return [copy_blob(CopiedBlob(self.file(spec["file"], f"{where}.copy.file"),
                                     self.integer(spec["index"], f"{where}.copy.index", 0)))]


_SOURCE_KEYS = ("payload", "theta", "dv", "copy")
_BLOB_KEYS = ("type", "fields", "snapshot-id", "sequence-number", "properties", "compression",
              *_SOURCE_KEYS)
_THETA_KEYS = ("iceberg-type", "values", "values-file", "parquet", "column", "columns",
               "field-ids", "uuid-hash", "uuid-as-string")


def parse_type(text: str, where: str) -> IcebergType:
    """An Iceberg type name (``long``, ``decimal(10,2)``, ``fixed[16]``), errors naming
    ``where``."""
    try:
        return IcebergType.parse(text)
    except PuffinError as exc:
        raise spec_error(f"{where}: {exc.message}", code=exc.code) from None


MAX_SPEC_BYTES = 64 << 20


def load_spec(path: str, *, fileio: FileIO, compress: str | None = None,
              uuid_as_string: bool = True) -> WritePlan:
    """Read and check a spec file (``-``: standard input, paths relative to the current
    directory, read with ``fileio``, as the files it names are); relative paths in it are
    relative to its directory.

    ``compress`` is ``--compress`` (``zstd``, ``lz4``, ``none``; ``None`` when not given): the
    compression of Theta and payload blobs that do not name one; ``uuid_as_string`` is
    ``--uuid-hash`` (text, the default, or bytes) for Theta blobs that do not choose.
    """
    import sys

    try:
        if path == "-":
            raw, base_dir = sys.stdin.buffer.read(MAX_SPEC_BYTES + 1), ""
        else:
            with fileio.open_stream(path) as handle:
                raw = handle.read(MAX_SPEC_BYTES + 1)
            base_dir = os.path.dirname(path)
        if len(raw) > MAX_SPEC_BYTES:
            raise PuffinError(f"spec is larger than {MAX_SPEC_BYTES >> 20} MiB",
                              code="spec.read", path=path)
        text = raw.decode("utf-8")
    except OSError as exc:
        raise PuffinError(f"cannot read the spec: {exc.strerror}", code="spec.read",
                          path=path) from None
    except UnicodeDecodeError as exc:
        raise PuffinError(f"spec is not UTF-8: {exc.reason} at byte {exc.start}",
                          code="spec.read", path=path) from None
    del text  # checked as UTF-8; parsed within its limits below
    try:
        doc = jsonload.loads(raw, limit=MAX_SPEC_BYTES, option=None, what="spec",
                             code="spec.json")
    except PuffinError as exc:
        raise exc.with_path(path) from None
    return _Spec(path, base_dir, compress, uuid_as_string, fileio).document(doc)
