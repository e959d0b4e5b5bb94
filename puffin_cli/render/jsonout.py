"""The JSON serialization of result dataclasses: the documented machine output.

Field names become kebab-case keys (``snapshot_id`` -> ``snapshot-id``), enums their value,
bytes lowercase hex, tuples lists. Field order is the dataclass's, so output is stable.
"""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from typing import Any, TextIO


def to_jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name.replace("_", "-"): to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Enum):
        return to_jsonable(value.value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return value


def dump(value: Any, out: TextIO) -> None:
    """Write ``value`` as indented JSON followed by a newline."""
    json.dump(to_jsonable(value), out, indent=2, ensure_ascii=False)
    out.write("\n")
