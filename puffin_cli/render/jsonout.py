"""The JSON serialization of result dataclasses: the documented machine output.

Field names become kebab-case keys (``snapshot_id`` -> ``snapshot-id``), enums their value,
bytes lowercase hex, tuples lists; a partition tuple (analysis/table/partitions.py) its field
names to values in the table spec's JSON single-value serialization. Field order is the
dataclass's, so output is stable.

Every document a command writes is an object that starts with ``schema-version`` and
``command`` (docs/json.md); :func:`document` builds it around a command's result.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from enum import Enum

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any, TextIO


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal: a document is indented there (and a console fits its
    lines and draws live progress there, render/console.py)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


# The version of each command's document: it grows when a key is removed or renamed or a
# value changes meaning (adding keys does not change it). docs/json.md documents each.
SCHEMA_VERSIONS = {
    "inspect": 1,
    "dump-blob": 1,
    "validate": 1,
    "table": 2,
    "repair": 1,
    "write": 1,
    "diff": 1,
    "diff table": 1,
    "stats compute": 1,
    "scan": 1,
}

_PARTITION_TUPLE = ("puffin_cli.analysis.table.partitions", "PartitionTuple")
# type -> the function that makes its values JSON-able, built once per type.
_CONVERTERS: dict[type, Callable[[Any], Any]] = {}
# Values that are JSON as they are (checked inline: most values of a document are these).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def to_jsonable(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    convert = _CONVERTERS.get(kind)
    if convert is None:
        convert = _CONVERTERS[kind] = _converter(kind)
    return convert(value)


def _converter(kind: type) -> Callable[[Any], Any]:
    """How to make a value of type ``kind`` JSON-able: dataclasses become objects with
    kebab-case keys in field order, enums their value, dicts string-keyed objects, tuples and
    lists lists, bytes lowercase hex; anything else is left as it is."""
    plain = _PLAIN
    from puffin_cli.format.findings import Finding

    if kind is Finding:
        return _finding
    # A partition tuple: field name -> value, the spec's JSON single-value form. Known by
    # name, not imported: the metadata-only path imports no table module.
    if (kind.__module__, kind.__qualname__) == _PARTITION_TUPLE:
        return lambda value: value.to_json()
    if dataclasses.is_dataclass(kind):
        fields = [(f.name, f.name.replace("_", "-")) for f in dataclasses.fields(kind)]

        def convert(value: Any) -> Any:
            out = {}
            for name, key in fields:
                item = getattr(value, name)
                out[key] = item if type(item) in plain else to_jsonable(item)
            return out
        return convert
    if issubclass(kind, Enum):
        return lambda value: to_jsonable(value.value)
    if issubclass(kind, dict):
        return lambda value: {str(k): v if type(v) in plain else to_jsonable(v)
                              for k, v in value.items()}
    if issubclass(kind, (list, tuple)):
        return lambda value: [v if type(v) in plain else to_jsonable(v) for v in value]
    if issubclass(kind, (bytes, bytearray)):
        return lambda value: bytes(value).hex()
    return lambda value: value


def _finding(value: Any) -> Any:
    """A finding: ``code``, ``severity``, ``message``, ``offset``, ``blob-index``, and for a
    table finding its facts' keys (``path``, ``local-path``, ``snapshot-id``, ...) beside them."""
    out = {"code": value.code, "severity": value.severity.value, "message": value.message,
           "offset": value.offset, "blob-index": value.blob_index}
    if value.facts is not None:
        out.update(to_jsonable(value.facts))
    return out


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
    text = json.dumps(document, ensure_ascii=False, check_circular=False,
                      indent=2 if indent else None,
                      separators=None if indent else (",", ":"))
    out.write(text + "\n")
