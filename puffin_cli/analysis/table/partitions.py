"""Partition tuples as every output shows them: :func:`partition_tuple` is the one way a
document or a view gets a data or delete file's partition (``puffin table``'s deletion
vectors and findings, repair, stats compute, partition statistics rows).

A :class:`PartitionTuple` holds, per field of the file's partition spec, its name, transform,
result type (the transform's result over the source column's type), its value in the spec's
JSON single-value serialization and its human form, both from
:mod:`puffin_cli.blobs.iceberg_values.json_values`. Its JSON form (:meth:`PartitionTuple.
to_json`, what render/jsonout.py writes) is an object of field name to value; its text form
(``str``) is the path Iceberg gives the partition (``PartitionSpec.partitionToPath``:
``id_bucket=1/ts_day=2024-03-02``, each name and value URL-encoded as Java's ``URLEncoder``
does), which is also the data files' directory under ``data/``.

Values come as the manifest holds them (fastavro's ``date``, ``datetime``, ``Decimal``,
``bytes``...) or as Iceberg's units; a field the spec does not name, or a spec the metadata
does not list, is still shown (type from the value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote_plus

from puffin_cli.analysis.table.metadata import TableMetadata
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.blobs.iceberg_values.json_values import (
    json_value,
    partition_human,
    transform_result_type,
)
from puffin_cli.errors import PuffinError


@dataclass(frozen=True)
class PartitionValue:
    """One field of a partition tuple: ``value`` is its JSON single-value serialization,
    ``human`` its form in Iceberg's partition paths (not URL-encoded), ``type`` its result type
    (``None`` when the metadata does not say)."""

    name: str
    transform: str
    type: str | None
    value: Any
    human: str


@dataclass(frozen=True)
class PartitionTuple:
    """A file's partition: its spec ID and one :class:`PartitionValue` per field, in the
    spec's order (fields the manifest has beyond the spec's after them)."""

    spec_id: int
    fields: tuple[PartitionValue, ...]

    def to_json(self) -> dict[str, Any]:
        """Field name -> value in the JSON single-value serialization (docs/json.md)."""
        return {f.name: f.value for f in self.fields}

    def path(self) -> str:
        """Iceberg's partition path: ``name=value`` per field joined by ``/``, URL-encoded."""
        return "/".join(f"{_url(f.name)}={_url(f.human)}" for f in self.fields)

    def __str__(self) -> str:
        return self.path() or "(unpartitioned)"


def _url(text: str) -> str:
    """``text`` as Java's ``URLEncoder`` writes it (UTF-8; letters, digits and ``.-*_`` kept,
    a blank as ``+``)."""
    return quote_plus(text, safe="*").replace("~", "%7E")


def partition_tuple(metadata: TableMetadata, spec_id: int, values: Mapping[str, Any]
                    ) -> PartitionTuple:
    """The partition tuple ``values`` (field name -> value, as a manifest's ``partition``
    record holds them) of a file written with spec ``spec_id`` of the table ``metadata``."""
    spec = metadata.specs.get(spec_id) or {}
    fields = [f for f in spec.get("fields") or [] if isinstance(f, dict)
              and isinstance(f.get("name"), str)]
    out = []
    for field in fields:
        transform = field.get("transform")
        transform = transform if isinstance(transform, str) else ""
        kind = transform_result_type(transform, _source_type(metadata, field.get("source-id")))
        value = values.get(field["name"])
        out.append(PartitionValue(field["name"], transform, None if kind is None else str(kind),
                                  json_value(kind, value), partition_human(transform, kind,
                                                                           value)))
    named = {f["name"] for f in fields}
    for name, value in values.items():
        if name not in named:
            out.append(PartitionValue(str(name), "", None, json_value(None, value),
                                      partition_human("", None, value)))
    return PartitionTuple(spec_id, tuple(out))


def _source_type(metadata: TableMetadata, source_id: Any) -> IcebergType | None:
    """The primitive type of field ``source_id``: in the current schema, else the newest
    schema that has it (a column dropped since the spec was made)."""
    if not isinstance(source_id, int) or isinstance(source_id, bool):
        return None
    order = [metadata.current_schema_id, *sorted(metadata.schemas, reverse=True)]
    for schema_id in order:
        found = _find(metadata.schemas.get(schema_id) or {}, source_id)
        if isinstance(found, str):
            try:
                return IcebergType.parse(found)
            except PuffinError:
                return None
    return None


def _find(struct: Mapping[str, Any], field_id: int) -> Any:
    """The ``type`` of field ``field_id`` in a struct and the structs nested in it."""
    for field in struct.get("fields") or []:
        if not isinstance(field, dict):
            continue
        if field.get("id") == field_id:
            return field.get("type")
        nested = field.get("type")
        if isinstance(nested, dict) and nested.get("type") == "struct":
            found = _find(nested, field_id)
            if found is not None:
                return found
    return None
