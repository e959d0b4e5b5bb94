"""The footer's metadata model, and the one walk over footer JSON that builds it.

``decode_footer_json`` returns every finding about the JSON (so ``validate`` can report them
all) together with the model when the JSON is usable; the reader raises on the first error.
Unknown keys are kept (``extra``) and reported as info. Codec names are not checked here: an
unsupported codec only matters when that blob's bytes are read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from puffin_cli.errors import ErrorKind, LimitError, PuffinError
from puffin_cli.format import jsonload
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.spec import CREATED_BY, DEFAULT_MAX_BLOB_SIZE, DEFAULT_TAIL_READ

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any

_BLOB_KEYS = (
    "type",
    "fields",
    "snapshot-id",
    "sequence-number",
    "offset",
    "length",
    "compression-codec",
    "properties",
)
_REQUIRED_BLOB_KEYS = _BLOB_KEYS[:6]
_BLOB_KEY_SET = frozenset(_BLOB_KEYS)
_REQUIRED_BLOB_KEY_SET = frozenset(_REQUIRED_BLOB_KEYS)
_FILE_KEYS = ("blobs", "properties")


@dataclass(frozen=True)
class BlobMetadata:
    """One entry of the footer's ``blobs`` list, named as the spec names it."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The footer JSON object, keys in the order Iceberg Java writes them."""
        obj: dict[str, Any] = {
            "type": self.type,
            "fields": list(self.fields),
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            obj["compression-codec"] = self.compression_codec
        if self.properties:
            obj["properties"] = dict(self.properties)
        obj.update(self.extra)
        return obj


@dataclass(frozen=True)
class FooterInfo:
    """Where the footer is and how it is stored."""

    payload_size: int
    footer_size: int
    footer_start: int
    flags: bytes
    compressed: bool


@dataclass(frozen=True)
class FileMetadata:
    """A Puffin file's footer: its blobs and file properties."""

    blobs: tuple[BlobMetadata, ...]
    properties: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {"blobs": [b.to_json() for b in self.blobs]}
        if self.properties:
            obj["properties"] = dict(self.properties)
        obj.update(self.extra)
        return obj

    def to_payload(self) -> bytes:
        """The uncompressed footer payload: compact UTF-8 JSON, as Iceberg Java writes it."""
        text = json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"))
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = text[max(exc.start - 20, 0): exc.end + 20]
            raise PuffinError(f"footer text is not valid Unicode (a lone surrogate) near "
                              f"{bad!r}; footer strings must be UTF-8", code="write.utf8",
                              kind=ErrorKind.BAD_ARGUMENT) from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Walk:
    def __init__(self, offset: int | None) -> None:
        self.offset = offset
        self.findings: list[Finding] = []

    def add(
        self, code: str, message: str, severity: Severity = Severity.ERROR, blob: int | None = None
    ) -> None:
        self.findings.append(Finding(code, severity, message, self.offset, blob))

    def properties(self, value: Any, where: str, blob: int | None) -> dict[str, str] | None:
        if not isinstance(value, dict):
            self.add("json.type",
                     f"{where} 'properties' must be an object, found {json_kind(value)}", blob=blob)
            return None
        bad = [k for k, v in value.items() if not isinstance(v, str)]
        for key in bad:
            self.add("json.type",
                     f"{where} property {key!r} must be a string, found {json_kind(value[key])}",
                     blob=blob)
        return None if bad else dict(value)

    def blob(self, index: int, obj: Any) -> BlobMetadata | None:
        well_formed = _well_formed_blob(obj)
        if well_formed is not None:
            return well_formed
        where = f"blob {index}"
        if not isinstance(obj, dict):
            self.add("json.type", f"{where} must be an object, found {json_kind(obj)}", blob=index)
            return None
        ok = True
        for key in _REQUIRED_BLOB_KEYS:
            if key not in obj:
                self.add("json.missing-field", f"{where} has no {key!r}", blob=index)
                ok = False
        if "type" in obj and not isinstance(obj["type"], str):
            self.add("json.type",
                     f"{where} 'type' must be a string, found {json_kind(obj['type'])}", blob=index)
            ok = False
        if "fields" in obj:
            value = obj["fields"]
            if not isinstance(value, list) or not all(_is_int(v) for v in value):
                self.add("json.type", f"{where} 'fields' must be a list of integers, found "
                         f"{json.dumps(value)[:80]}", blob=index)
                ok = False
        for key in ("snapshot-id", "sequence-number", "offset", "length"):
            if key in obj and not _is_int(obj[key]):
                self.add("json.type", f"{where} {key!r} must be an integer, found "
                         f"{json.dumps(obj[key])[:80]}", blob=index)
                ok = False
        for key in ("offset", "length"):
            if _is_int(obj.get(key)) and obj[key] < 0:
                self.add("json.value", f"{where} {key!r} must not be negative, found {obj[key]}",
                         blob=index)
                ok = False
        codec = obj.get("compression-codec")
        if codec is not None and not isinstance(codec, str):
            self.add("json.type", f"{where} 'compression-codec' must be a string, found "
                     f"{json_kind(codec)}", blob=index)
            ok = False
        properties: dict[str, str] | None = {}
        if "properties" in obj:
            properties = self.properties(obj["properties"], where, index)
        extra = {k: v for k, v in obj.items() if k not in _BLOB_KEYS}
        for key in extra:
            self.add("json.unknown-field", f"{where} has an unknown key {key!r}", Severity.INFO,
                     index)
        if not ok or properties is None:
            return None
        return BlobMetadata(
            type=obj["type"],
            fields=tuple(obj["fields"]),
            snapshot_id=obj["snapshot-id"],
            sequence_number=obj["sequence-number"],
            offset=obj["offset"],
            length=obj["length"],
            compression_codec=codec,
            properties=properties,
            extra=extra,
        )


def _well_formed_blob(obj: Any) -> BlobMetadata | None:
    """``obj`` as a blob entry when it has nothing for :meth:`_Walk.blob` to report (the
    common case, checked in one pass: a footer may list thousands of blobs); else ``None``,
    and the walk names each problem."""
    if type(obj) is not dict or not _BLOB_KEY_SET.issuperset(obj) \
            or not _REQUIRED_BLOB_KEY_SET.issubset(obj):
        return None
    kind, fields = obj["type"], obj["fields"]
    snapshot_id, sequence_number = obj["snapshot-id"], obj["sequence-number"]
    offset, length = obj["offset"], obj["length"]
    codec = obj.get("compression-codec")
    properties = obj.get("properties", {})
    # plain loops and comparisons: generators cost more than the checks (~2x per blob)
    if type(kind) is not str or type(fields) is not list or type(properties) is not dict \
            or (codec is not None and type(codec) is not str) \
            or type(snapshot_id) is not int or type(sequence_number) is not int \
            or type(offset) is not int or type(length) is not int or offset < 0 or length < 0:
        return None
    for value in fields:
        if type(value) is not int:
            return None
    for value in properties.values():
        if type(value) is not str:
            return None
    return BlobMetadata(kind, tuple(fields), snapshot_id, sequence_number, offset, length, codec,
                        dict(properties), {})


def json_kind(value: Any) -> str:
    """What a JSON value is, for messages: ``null``, ``the number 5``, ``the string 'x'``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    return "an object"


# The footer decoded last, (payload, offset, limit) and what it gave: ``table`` opens a
# Puffin file's footer for its cross-checks and validates the same file right after, so a
# footer of thousands of DV blobs is parsed once, not twice (issue 26). One entry: what it
# holds is one footer's metadata, which the caller holds anyway.
_last: tuple[tuple[bytes, int | None, int], tuple[FileMetadata | None, list[Finding]]] | None \
    = None


def decode_footer_json(
    payload: bytes, offset: int | None = None, limit: int = DEFAULT_MAX_BLOB_SIZE
) -> tuple[FileMetadata | None, list[Finding]]:
    """Parse an (uncompressed) footer payload.

    Returns the metadata (``None`` when an error makes it unusable) and every finding;
    ``offset`` is the payload's position in the file, used for the findings; ``limit``
    (``--max-blob-size``, but never below the 64 KiB one tail read holds) bounds the payload's
    bytes and the values it may parse into. The same payload decoded again (at the same
    offset, with the same limit) gives the same (frozen) metadata without parsing it again.
    """
    global _last
    key = (payload, offset, limit)
    last = _last
    if last is not None and last[0] == key:
        metadata, findings = last[1]
    else:
        metadata, findings = _decode_footer_json(payload, offset, limit)
        _last = key, (metadata, findings)
    return metadata, list(findings)


def _decode_footer_json(payload: bytes, offset: int | None, limit: int
                        ) -> tuple[FileMetadata | None, list[Finding]]:
    walk = _Walk(offset)
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        walk.offset = None if offset is None else offset + exc.start
        walk.add("json.utf8", f"footer payload is not UTF-8: {exc.reason} at payload byte "
                 f"{exc.start}")
        return None, walk.findings
    try:
        obj = jsonload.loads(payload, limit=max(limit, DEFAULT_TAIL_READ),
                             option="--max-blob-size", what="footer payload",
                             code="json.syntax")
    except LimitError as exc:
        walk.add("footer.payload-size", exc.message)
        return None, walk.findings
    except PuffinError as exc:
        walk.add(exc.code, exc.message)
        return None, walk.findings
    if not isinstance(obj, dict):
        walk.add("json.type", f"footer payload must be a JSON object, found {json_kind(obj)}")
        return None, walk.findings
    if "blobs" not in obj:
        walk.add("json.missing-field", "footer has no 'blobs' list")
        return None, walk.findings
    if not isinstance(obj["blobs"], list):
        walk.add("json.type", f"footer 'blobs' must be a list, found {json_kind(obj['blobs'])}")
        return None, walk.findings
    blobs = [walk.blob(i, b) for i, b in enumerate(obj["blobs"])]
    properties: dict[str, str] | None = {}
    if "properties" in obj:
        properties = walk.properties(obj["properties"], "file", None)
    extra = {k: v for k, v in obj.items() if k not in _FILE_KEYS}
    for key in extra:
        walk.add("json.unknown-field", f"footer has an unknown key {key!r}", Severity.INFO)
    if properties is not None and CREATED_BY not in properties:
        walk.add("json.created-by", "file properties have no 'created-by'", Severity.INFO)
    if properties is None or any(b is None for b in blobs):
        return None, walk.findings
    return (
        FileMetadata(tuple(b for b in blobs if b is not None), properties, extra),
        walk.findings,
    )
