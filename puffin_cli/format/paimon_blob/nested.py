"""Nested ARRAY<BLOB> / MAP<K, BLOB> payloads: checked when read, built for writing."""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Iterable

from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.paimon_blob.index import decode_lengths, encode_lengths
from puffin_cli.format.paimon_blob.spec import (
    ARRAY_MAGIC,
    INDEX_MEMORY_PER_BYTE,
    INT32_MAX,
    KEY_MEMORY,
    MAP_MAGIC,
    NESTED_HEADER,
    NESTED_NULL_LENGTH,
    NESTED_VERSION,
)


def nested_kind(header: bytes) -> str | None:
    """``array`` or ``map`` when data starts with a nested container's magic."""
    if len(header) < 4:
        return None
    magic = struct.unpack("<I", header[:4])[0]
    return {ARRAY_MAGIC: "array", MAP_MAGIC: "map"}.get(magic)


def nested_header(header: bytes) -> tuple[str, int, int] | None:
    """(kind, version, count) of a nested container's 9-byte header, if it is one."""
    kind = nested_kind(header)
    if kind is None or len(header) < NESTED_HEADER:
        return None
    _, version, count = struct.unpack("<IBI", header[:NESTED_HEADER])
    return kind, version, count


def check_nested(read: Callable[[int, int], bytes], start: int, length: int,
                 row: int, *, memory_limit: int) -> list[Finding]:
    """Check the nested container in the ``length`` data bytes at absolute offset ``start``
    (whose first 4 bytes are its magic), reading its header, index lengths, indexes and (for
    duplicate detection) a map's keys, never element data. Indexes that could take more than
    ``memory_limit`` bytes once decoded are not read (a finding); nor are keys whose
    duplicates could not be looked for within that limit (not a finding)."""
    findings: list[Finding] = []

    def bad(code: str, message: str, offset: int) -> list[Finding]:
        findings.append(Finding(f"paimon.nested.{code}", Severity.ERROR,
                                f"row {row}: {message}", offset, row))
        return findings

    kind = nested_kind(read(start, 4))
    assert kind is not None
    label = "ARRAY<BLOB>" if kind == "array" else "MAP<K, BLOB>"
    index_lengths_size = 4 if kind == "array" else 8
    minimum = NESTED_HEADER + index_lengths_size
    if length < minimum:
        return bad("too-short", f"{label} payload of {length} bytes is shorter than its "
                   f"{minimum}-byte minimum (header and index lengths)", start)
    _, version, count = struct.unpack("<IBI", read(start, NESTED_HEADER))
    if version != NESTED_VERSION:
        return bad("version", f"{label} payload version is {version}, expected "
                   f"{NESTED_VERSION}", start + 4)
    if count > INT32_MAX:
        return bad("count", f"{label} count {count} is larger than {INT32_MAX}", start + 5)
    end = start + length
    sizes = struct.unpack("<" + "I" * (index_lengths_size // 4),
                          read(end - index_lengths_size, index_lengths_size))
    room = length - minimum
    if sum(sizes) > room:
        what = "element index length" if kind == "array" else "key and value index lengths"
        return bad("index-length", f"{label} {what} {' + '.join(map(str, sizes))} exceed the "
                   f"{room} bytes between header and index lengths", end - index_lengths_size)
    if sum(sizes) * INDEX_MEMORY_PER_BYTE > memory_limit:
        return bad("too-large", f"{label} indexes of {sum(sizes)} bytes may decode to more "
                   f"than the limit of {memory_limit} bytes (raise --max-blob-size)",
                   end - index_lengths_size)
    index_start = end - index_lengths_size - sum(sizes)
    indexes: list[array[int]] = []
    position = index_start
    names = ("element",) if kind == "array" else ("key", "value")
    for name, size in zip(names, sizes, strict=True):
        decoded, problem = decode_lengths(read(position, size))
        if problem is not None:
            return bad("index", f"{label} {name} index: {problem.message}",
                       position + problem.at)
        if len(decoded) != count:
            return bad("count", f"{label} header count {count} but its {name} index holds "
                       f"{len(decoded)} values", start + 5)
        indexes.append(decoded)
        position += size
    data_start = start + NESTED_HEADER
    data_length = index_start - data_start
    total = 0
    for name, values in zip(names, indexes, strict=True):
        for number, value in enumerate(values):
            if value == NESTED_NULL_LENGTH:
                continue
            if value < 0:
                return bad("marker", f"{label} {name} {number} has length {value}; only -1 "
                           "(null) is allowed", index_start)
            total += value
    if total != data_length:
        return bad("fill", f"{label} {' and '.join(names)} lengths add up to {total} bytes, "
                   f"but {data_length} bytes lie between header and indexes", data_start)
    if kind == "map":
        keys = indexes[0]
        key_bytes = sum(k for k in keys if k >= 0)
        if keys.count(NESTED_NULL_LENGTH) > 1:
            return bad("duplicate-key", f"{label} has {keys.count(NESTED_NULL_LENGTH)} null "
                       "keys; keys must be unique", data_start)
        if key_bytes + KEY_MEMORY * count <= memory_limit:
            seen: set[bytes] = set()
            position = data_start
            for number, key_length in enumerate(keys):
                if key_length < 0:
                    continue
                key = read(position, key_length)
                if key in seen:
                    return bad("duplicate-key", f"{label} key {number} repeats an earlier "
                               f"key ({key[:32].hex()}); keys must be unique", position)
                seen.add(key)
                position += key_length
    return findings


def encode_array(elements: Iterable[bytes | None]) -> bytes:
    """The data of an ``ARRAY<BLOB>`` row (``None``: a null element), as pypaimon writes it."""
    items = list(elements)
    lengths = [NESTED_NULL_LENGTH if item is None else len(item) for item in items]
    index = encode_lengths(lengths)
    return b"".join([struct.pack("<IBI", ARRAY_MAGIC, NESTED_VERSION, len(items)),
                     *(item for item in items if item is not None),
                     index, struct.pack("<I", len(index))])


def encode_map(entries: Iterable[tuple[bytes | None, bytes | None]]) -> bytes:
    """The data of a ``MAP<K, BLOB>`` row from serialized keys and values (``None``: null),
    as pypaimon writes it."""
    items = list(entries)
    key_index = encode_lengths([NESTED_NULL_LENGTH if k is None else len(k) for k, _ in items])
    value_index = encode_lengths([NESTED_NULL_LENGTH if v is None else len(v)
                                  for _, v in items])
    return b"".join([struct.pack("<IBI", MAP_MAGIC, NESTED_VERSION, len(items)),
                     *(k for k, _ in items if k is not None),
                     *(v for _, v in items if v is not None),
                     key_index, value_index,
                     struct.pack("<II", len(key_index), len(value_index))])
