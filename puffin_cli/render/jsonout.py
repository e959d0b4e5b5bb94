"""The JSON serialization of result dataclasses: the documented machine output.

Field names become kebab-case keys (``snapshot_id`` -> ``snapshot-id``), enums their value,
bytes lowercase hex, tuples lists. Field order is the dataclass's, so output is stable.

Every document a command writes is an object that starts with ``schema-version`` and
``command`` (docs/json.md); :func:`document` builds it around a command's result.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any, TextIO

# The version of each command's document: it grows when a key is removed or renamed or a
# value changes meaning (adding keys does not change it). docs/json.md documents each.
SCHEMA_VERSIONS = {
    "inspect": 1,
    "dump-blob": 1,
    "validate": 1,
    "table": 2,
    "write": 1,
    "stats compute": 1,
    "scan": 1,
}

# dataclass type -> [(attribute, key)], computed once per type.
_FIELDS: dict[type, list[tuple[str, str]]] = {}


def _fields_of(cls: type) -> list[tuple[str, str]]:
    names = _FIELDS.get(cls)
    if names is None:
        names = [(f.name, f.name.replace("_", "-")) for f in dataclasses.fields(cls)]
        _FIELDS[cls] = names
    return names


def to_jsonable(value: Any) -> Any:
    if value is None or type(value) in (str, int, float, bool):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {key: to_jsonable(getattr(value, name)) for name, key in _fields_of(type(value))}
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return value


def document(command: str, result: Any) -> dict[str, Any]:
    """The JSON document of ``command``: ``schema-version``, ``command``, then the result's
    own keys (a result that is not an object goes under ``result``)."""
    body = to_jsonable(result)
    head: dict[str, Any] = {"schema-version": SCHEMA_VERSIONS[command], "command": command}
    if isinstance(body, dict):
        head.update(body)
    else:
        head["result"] = body
    return head


def write(document: Any, out: TextIO, *, indent: bool = True) -> None:
    """Write an already JSON-able ``document`` and a newline, in one write: indented by two
    blanks, or on one line (Python's C encoder: many times faster on big documents)."""
    text = json.dumps(document, ensure_ascii=False, indent=2 if indent else None,
                      separators=None if indent else (",", ":"))
    out.write(text + "\n")
