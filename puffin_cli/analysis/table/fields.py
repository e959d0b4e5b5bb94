"""Field IDs to column names, from an Iceberg schema.

Puffin blobs name columns by field ID. :class:`FieldNames` indexes one schema of a table's
metadata: nested struct fields are dotted (``address.city``), list elements ``name.element``,
map keys and values ``name.key`` / ``name.value`` (Iceberg's own naming), and Iceberg's reserved
metadata columns (``_pos`` = 2147483645, ...) are known too.

Which schema: the current schema (what engines use to read the current snapshot), or the schema
a given snapshot was written with (its ``schema-id``) for an older snapshot.

    names = Table.load("warehouse/db/orders").field_names(snapshot_id=None)  # loading.py
    names.name(3)   # "customer_id"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Iceberg's reserved metadata columns (MetadataColumns in Iceberg Java).
METADATA_COLUMNS: dict[int, str] = {
    2147483646: "_file",
    2147483645: "_pos",
    2147483644: "_deleted",
    2147483643: "_spec_id",
    2147483642: "_partition",
    2147483546: "file_path",
    2147483545: "pos",
    2147483544: "row",
    2147483540: "_row_id",
    2147483539: "_last_updated_sequence_number",
}


@dataclass(frozen=True)
class Field:
    """One field of a schema: its full dotted name and its type (a JSON string or object)."""

    field_id: int
    name: str
    type: Any


def _index(fields: list[Any], prefix: str, out: dict[int, Field]) -> None:
    for item in fields:
        if not isinstance(item, dict) or not isinstance(item.get("id"), int):
            continue
        name = f"{prefix}{item.get('name')}"
        out[item["id"]] = Field(item["id"], name, item.get("type"))
        _index_type(item.get("type"), name, out)


def _index_type(field_type: Any, name: str, out: dict[int, Field]) -> None:
    if not isinstance(field_type, dict):
        return
    kind = field_type.get("type")
    if kind == "struct":
        _index(field_type.get("fields") or [], f"{name}.", out)
    elif kind == "list" and isinstance(field_type.get("element-id"), int):
        element = f"{name}.element"
        out[field_type["element-id"]] = Field(field_type["element-id"], element,
                                              field_type.get("element"))
        _index_type(field_type.get("element"), element, out)
    elif kind == "map":
        for part in ("key", "value"):
            part_id = field_type.get(f"{part}-id")
            if isinstance(part_id, int):
                out[part_id] = Field(part_id, f"{name}.{part}", field_type.get(part))
                _index_type(field_type.get(part), f"{name}.{part}", out)


class FieldNames:
    """Field ID -> column name for one schema."""

    def __init__(self, schema: dict[str, Any], schema_id: int | None = None) -> None:
        self.schema_id = schema_id if schema_id is not None else schema.get("schema-id")
        self._fields: dict[int, Field] = {}
        _index(schema.get("fields") or [], "", self._fields)

    def field(self, field_id: int) -> Field | None:
        return self._fields.get(field_id)

    def name(self, field_id: int) -> str | None:
        """The column's name, a metadata column's name, or ``None`` when the schema has no such
        field."""
        found = self._fields.get(field_id)
        if found is not None:
            return found.name
        return METADATA_COLUMNS.get(field_id)

    def ids(self) -> dict[str, int]:
        """Column name (dotted below the top level) -> field ID."""
        return {found.name: field_id for field_id, found in self._fields.items()}

    def __contains__(self, field_id: object) -> bool:
        return field_id in self._fields
