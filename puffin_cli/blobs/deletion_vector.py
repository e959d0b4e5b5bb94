"""Deletion vectors: blob type ``deletion-vector-v1`` (Iceberg v3).

Blob layout::

    +-------------------+-------------+------------------------------+-------------------+
    | length (u32 BE)   | magic       | vector: 64-bit Roaring,      | CRC-32 (u32 BE)   |
    | = 4 + len(vector) | D1 D3 39 64 | "portable" serialization     | of magic + vector |
    +-------------------+-------------+------------------------------+-------------------+

The vector is a bitmap count (u64 LE), then per 32-bit bitmap its key (u32 LE, the high 32 bits
of the positions) and a standard 32-bit portable Roaring bitmap of the low 32 bits. The envelope
and the vector structure are walked here before ``pyroaring.BitMap64`` sees the bytes, so a bad
blob is reported with a stable code, the numbers and an absolute file offset; the walk also gives
the container layout, from which the summary, the ranges and the position stream are computed
without materialising positions in Python. The walk checks everything CRoaring's validation
does (container payloads included, with numpy over all containers of a 32-bit bitmap at once),
so :meth:`DeletionVectorHandler.check` never deserializes: it runs at about the speed of the
CRC-32.

Severities of :meth:`DeletionVectorHandler.check` findings (the Iceberg spec says MUST for every
rule below except the Java key limit, so those are errors):

============================  ========  ==================================================
code                          severity  meaning
============================  ========  ==================================================
dv.length                     error     blob too short, or length prefix != blob length - 8
dv.magic                      error     magic is not D1 D3 39 64
dv.crc                        error     CRC-32 of magic + vector does not match
dv.vector                     error     the Roaring vector is truncated or inconsistent
dv.keys-order                 error     bitmap keys not strictly ascending
dv.top-bit                    error     a key >= 0x80000000 (negative 64-bit positions)
dv.trailing                   error     bytes left between the last bitmap and the CRC
dv.key-above-java-limit       warning   key 0x7FFFFFFF: valid, but Iceberg Java rejects it
dv.cardinality                error     ``cardinality`` property missing, malformed or wrong
dv.referenced-data-file       error     ``referenced-data-file`` property missing
dv.compressed                 error     the blob has a compression codec
dv.snapshot-id                error     ``snapshot-id`` is not -1
dv.sequence-number            error     ``sequence-number`` is not -1
dv.fields                     error     ``fields`` is not [2147483645]
============================  ========  ==================================================

Encoding reproduces Iceberg Java's bytes: Java sets positions one by one (array or bitmap
containers), calls ``runOptimize`` (a container becomes a run container when that is strictly
smaller: ``2 + 4 * runs < 2 * cardinality`` for arrays, ``< 8192`` for bitmaps), and writes every
32-bit bitmap from key 0 to the highest key, empty ones included. CRoaring decides some
containers differently (e.g. a 3-position range stays a run container), so the container kinds
are re-decided here by Java's rule.
"""

from __future__ import annotations

import array
import re
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import IO, TYPE_CHECKING, Any

from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import (
    CARDINALITY_PROPERTY,
    DV_BLOB_TYPE,
    REFERENCED_DATA_FILE_PROPERTY,
    ROW_POSITION_FIELD_ID,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]
    UInt64Array = npt.NDArray[np.uint64]

DV_MAGIC = b"\xd1\xd3\x39\x64"
LENGTH_BYTES = 4
CRC_BYTES = 4
BITMAP_COUNT_BYTES = 8
KEY_BYTES = 4
# Where the vector starts in the blob, and the bytes around it.
VECTOR_START = LENGTH_BYTES + len(DV_MAGIC)
ENVELOPE_BYTES = VECTOR_START + CRC_BYTES
MIN_BLOB_BYTES = ENVELOPE_BYTES + BITMAP_COUNT_BYTES
# Each 32-bit bitmap takes at least its key, a cookie and a container count.
MIN_BITMAP_BYTES = KEY_BYTES + 8

MAX_POSITION = (1 << 63) - 1
TOP_BIT_KEY = 1 << 31
# Iceberg Java's RoaringPositionBitmap.MAX_KEY (Integer.MAX_VALUE - 1).
JAVA_MAX_KEY = 0x7FFFFFFE
# Encoding writes Java's dense layout (an empty bitmap for every missing key below the highest)
# while the highest key is below this; above it (positions >= 2^52, which Java cannot even
# allocate) only the non-empty bitmaps are written, which every reader, Java included, accepts.
DENSE_KEY_LIMIT = 1 << 20

DV_SNAPSHOT_ID = -1
DV_SEQUENCE_NUMBER = -1
DV_FIELDS = (ROW_POSITION_FIELD_ID,)

# 32-bit portable Roaring format (RoaringFormatSpec).
_COOKIE_NO_RUN = 12346
_COOKIE_RUN = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX = 4096
_BITMAP_BYTES = 8192
_MAX_CONTAINERS = 1 << 16

ARRAY, BITMAP, RUN = "array", "bitmap", "run"


@dataclass(frozen=True)
class ContainerLayout:
    """One Roaring container: its high 16 bits, kind, cardinality, and where its payload is
    (``offset``, ``size``: bytes of the buffer that was walked)."""

    high16: int
    kind: str
    cardinality: int
    offset: int
    size: int


# Container kinds as stored in a BitmapLayout's ``table``.
_KINDS = (ARRAY, BITMAP, RUN)
_ARRAY_KIND, _BITMAP_KIND, _RUN_KIND = range(3)
# A container's index in its bitmap and what is wrong with it.
_Problem = tuple[int, str]


@dataclass(frozen=True, eq=False)
class BitmapLayout:
    """One 32-bit bitmap of the vector: its key (high 32 bits), cookie, size and containers.

    ``table`` holds the containers as an int64 array of shape (5, containers): rows high16,
    kind (index into ``ARRAY, BITMAP, RUN``), cardinality, payload offset, payload size; the
    :class:`ContainerLayout` objects are made from it on first use of ``containers``.
    """

    key: int
    cookie: int
    serialized_bytes: int
    cardinality: int
    table: Int64Array = field(repr=False)

    @cached_property
    def containers(self) -> tuple[ContainerLayout, ...]:
        highs, kinds, cards, offsets, sizes = self.table.tolist()
        return tuple(ContainerLayout(h, _KINDS[k], c, o, s)
                     for h, k, c, o, s in zip(highs, kinds, cards, offsets, sizes, strict=True))


@dataclass(frozen=True)
class DeletionVector:
    """A decoded deletion vector. ``buffer`` is the buffer the layout's offsets point into."""

    bitmap: Any  # pyroaring.BitMap64
    bitmaps: tuple[BitmapLayout, ...]
    buffer: bytes
    length_prefix: int
    crc: int

    @property
    def cardinality(self) -> int:
        return sum(b.cardinality for b in self.bitmaps)


@dataclass(frozen=True)
class DeletionVectorSummary:
    """What ``inspect`` shows about a deletion vector.

    ``ranges`` are the first ``limit`` maximal runs of positions as inclusive (start, end)
    pairs, ``ranges_total`` the number of runs, ``truncated`` whether ranges were left out.
    """

    cardinality: int
    min: int | None
    max: int | None
    referenced_data_file: str | None
    cardinality_property: int | None
    cardinality_matches: bool | None
    ranges: tuple[tuple[int, int], ...]
    ranges_total: int
    truncated: bool
    bitmaps: int
    array_containers: int
    bitmap_containers: int
    run_containers: int
    kind: str = field(default="deletion-vector")


# --------------------------------------------------------------------------------------------
# Walking the bytes


class _Walk:
    """Collects findings; ``base`` turns buffer positions into file offsets.

    ``touching`` is the first run container whose runs touch (one ends right before the next
    starts): the positions are still clear, but CRoaring (pyroaring) rejects such a bitmap. It
    is reported only when the vector has no other error, as CRoaring's rejection would be.
    """

    def __init__(self, buf: bytes, base: int) -> None:
        self.buf = buf
        self.base = base
        self.findings: list[Finding] = []
        self.touching: Finding | None = None

    def add(self, code: str, message: str, pos: int, severity: Severity = Severity.ERROR) -> None:
        self.findings.append(Finding(code, severity, message, self.base + pos))

    @property
    def failed(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


class _Truncated(Exception):
    pass


def _need(walk: _Walk, pos: int, n: int, end: int, what: str) -> None:
    if pos + n > end:
        walk.add("dv.vector", f"{what} needs {n} bytes, only {max(end - pos, 0)} left before "
                 "the CRC", pos)
        raise _Truncated


def _walk_envelope(walk: _Walk) -> tuple[int, int] | None:
    """Length prefix, magic, CRC. Returns (length prefix, stored CRC) unless too short."""
    buf = walk.buf
    n = len(buf)
    if n < MIN_BLOB_BYTES:
        walk.add("dv.length", f"deletion vector blob is {n} bytes, shorter than the "
                 f"{MIN_BLOB_BYTES}-byte minimum (length, magic, bitmap count, CRC)", 0)
        return None
    (prefix,) = struct.unpack_from(">I", buf, 0)
    if prefix != n - LENGTH_BYTES - CRC_BYTES:
        walk.add("dv.length", f"length prefix is {prefix}, expected {n - 8} (blob length {n} "
                 "minus 8)", 0)
    magic = buf[LENGTH_BYTES:VECTOR_START]
    if magic != DV_MAGIC:
        walk.add("dv.magic", f"magic is {magic.hex()}, expected {DV_MAGIC.hex()}", LENGTH_BYTES)
    (stored,) = struct.unpack_from(">I", buf, n - CRC_BYTES)
    computed = zlib.crc32(memoryview(buf)[LENGTH_BYTES:n - CRC_BYTES])
    if stored != computed:
        walk.add("dv.crc", f"CRC-32 is {stored:#010x}, computed {computed:#010x} over blob "
                 f"bytes {LENGTH_BYTES}..{n - CRC_BYTES - 1}", n - CRC_BYTES)
    return prefix, stored


def _walk_vector(walk: _Walk, start: int, end: int) -> tuple[BitmapLayout, ...] | None:
    """Walk the 64-bit portable vector in ``walk.buf[start:end]``; ``None`` if unreadable."""
    buf = walk.buf
    try:
        _need(walk, start, BITMAP_COUNT_BYTES, end, "bitmap count")
        (count,) = struct.unpack_from("<Q", buf, start)
        room = (end - start - BITMAP_COUNT_BYTES) // MIN_BITMAP_BYTES
        if count > room:
            walk.add("dv.vector", f"bitmap count is {count}, but the {end - start - 8} bytes "
                     f"that follow hold at most {room} bitmaps", start)
            return None
        pos = start + BITMAP_COUNT_BYTES
        layouts: list[BitmapLayout] = []
        last_key = -1
        for _ in range(count):
            _need(walk, pos, KEY_BYTES, end, "bitmap key")
            (key,) = struct.unpack_from("<I", buf, pos)
            if key >= TOP_BIT_KEY:
                walk.add("dv.top-bit", f"bitmap key {key:#x} has the top bit set: its positions "
                         f"({key << 32} and up) are negative as signed 64-bit", pos)
            elif key > JAVA_MAX_KEY:
                walk.add("dv.key-above-java-limit", f"bitmap key {key:#x} is above "
                         f"{JAVA_MAX_KEY:#x}: Iceberg Java rejects it", pos, Severity.WARNING)
            if key <= last_key:
                walk.add("dv.keys-order", f"bitmap key {key} follows key {last_key}: keys must "
                         "be strictly ascending", pos)
            last_key = key
            layout = _walk_bitmap32(walk, key, pos + KEY_BYTES, end)
            if layout is None:
                return None
            layouts.append(layout)
            pos += KEY_BYTES + layout.serialized_bytes
    except _Truncated:
        return None
    if pos != end:
        walk.add("dv.trailing", f"{end - pos} bytes left after the last bitmap, before the CRC",
                 pos)
    if walk.touching is not None and not walk.failed:
        walk.findings.append(walk.touching)
    return tuple(layouts)


def _walk_bitmap32(walk: _Walk, key: int, start: int, end: int) -> BitmapLayout | None:
    """Walk one 32-bit portable bitmap. The container headers are read as arrays and the
    payloads checked per kind across all containers at once; a bad container is reported as
    a sequential walk would find it first (key order, then bytes present, then contents)."""
    buf = walk.buf
    where = f"bitmap key {key}"
    _need(walk, start, 4, end, f"{where} cookie")
    (cookie,) = struct.unpack_from("<I", buf, start)
    pos = start + 4
    run_flags: bytes = b""
    if cookie & 0xFFFF == _COOKIE_RUN:
        n = (cookie >> 16) + 1
        _need(walk, pos, (n + 7) // 8, end, f"{where} run-container bitset")
        run_flags = buf[pos:pos + (n + 7) // 8]
        pos += len(run_flags)
        has_offsets = n >= _NO_OFFSET_THRESHOLD
    elif cookie == _COOKIE_NO_RUN:
        _need(walk, pos, 4, end, f"{where} container count")
        (n,) = struct.unpack_from("<I", buf, pos)
        if n > _MAX_CONTAINERS:
            walk.add("dv.vector", f"{where} has {n} containers, at most {_MAX_CONTAINERS} fit "
                     "in 32 bits", pos)
            return None
        pos += 4
        has_offsets = True
    else:
        walk.add("dv.vector", f"{where} cookie is {cookie}, expected {_COOKIE_NO_RUN} or "
                 f"{_COOKIE_RUN} in the low 16 bits", start)
        return None
    _need(walk, pos, 4 * n, end, f"{where} container headers")
    header_at = pos
    pos += 4 * n
    if has_offsets:
        _need(walk, pos, 4 * n, end, f"{where} container offsets")
        pos += 4 * n
    if n == 0:
        return BitmapLayout(key, cookie & 0xFFFF, pos - start, 0, _no_containers())
    import numpy as np

    header = np.frombuffer(buf, "<u2", 2 * n, header_at).astype(np.int64)
    highs, cards = header[0::2], header[1::2] + 1
    is_run = np.zeros(n, dtype=bool)
    if run_flags:  # (numpy's unpackbits pads an empty input with garbage, not zeros)
        is_run[:] = np.unpackbits(np.frombuffer(run_flags, np.uint8), count=n,
                                  bitorder="little")
    big = cards > _ARRAY_MAX
    kinds = np.where(is_run, _RUN_KIND, np.where(big, _BITMAP_KIND, _ARRAY_KIND))
    sizes = np.where(is_run, 0, np.where(big, _BITMAP_BYTES, 2 * cards))
    _run_sizes(buf, pos, end, sizes, is_run)
    offsets = np.cumsum(sizes) - sizes + pos
    # Containers [0, truncated) lie within the vector; containers [0, unordered) have ascending
    # keys; contents are checked for containers below both.
    truncated = int(np.searchsorted(offsets + sizes, end, "right"))
    unordered = (np.flatnonzero(highs[1:] <= highs[:-1]) + 1).tolist()[:1] or [n]
    table = np.stack((highs, kinds, cards, offsets, sizes))
    bad, touching = _first_bad_content(buf, table[:, :min(truncated, unordered[0])])
    if bad is not None:
        index, message = bad
        walk.add("dv.vector", f"{where} container {highs[index]} {message}",
                 int(offsets[index]))
        return None
    if unordered[0] < n and unordered[0] <= truncated:
        i = unordered[0]
        walk.add("dv.vector", f"{where} container {highs[i]} follows container {highs[i - 1]}: "
                 "container keys must be strictly ascending", int(offsets[i]))
        return None
    if truncated < n:
        i, at = truncated, int(offsets[truncated])
        what = f"{where} container {highs[i]}"
        if kinds[i] == _RUN_KIND:
            _need(walk, at, 2, end, f"{what} run count")
            _need(walk, at + 2, int(sizes[i]) - 2, end, f"{what} runs")
        _need(walk, at, int(sizes[i]), end, f"{what} {_KINDS[kinds[i]]}")
    if touching is not None and walk.touching is None:
        index, message = touching
        walk.touching = Finding("dv.vector", Severity.ERROR, f"{where} container {highs[index]} "
                                f"{message}", walk.base + int(offsets[index]))
    return BitmapLayout(key, cookie & 0xFFFF, int(offsets[-1] + sizes[-1]) - start,
                        int(cards.sum()), table)


_NO_CONTAINERS: Any = None  # the table of an empty bitmap, shared; built on first use


def _no_containers() -> Int64Array:
    global _NO_CONTAINERS
    if _NO_CONTAINERS is None:
        import numpy as np

        _NO_CONTAINERS = np.zeros((5, 0), np.int64)
        _NO_CONTAINERS.flags.writeable = False
    table: Int64Array = _NO_CONTAINERS
    return table


def _run_sizes(buf: bytes, pos: int, end: int, sizes: Int64Array, is_run: Any) -> None:
    """Fill in the payload sizes of run containers (2 + 4 * run count), read in order since
    each one's place depends on the sizes before it; stops at a run count past ``end``."""
    import numpy as np

    runs = np.flatnonzero(is_run)
    if not runs.size:
        return
    found: list[int] = []
    extra = 0
    for fixed in (np.cumsum(sizes) - sizes)[runs].tolist():
        at = pos + fixed + extra
        if at + 2 > end:
            found.append(2)
            break
        found.append(2 + 4 * (buf[at] | buf[at + 1] << 8))
        extra += found[-1]
    sizes[runs[:len(found)]] = found


def _first_bad_content(buf: bytes, table: Int64Array) -> tuple[_Problem | None, _Problem | None]:
    """The first container whose payload contradicts its header, and the first run container
    whose runs touch (see :class:`_Walk`). Consecutive array or bitmap containers have
    contiguous payloads and are checked together; run containers all at once."""
    import numpy as np

    kinds = table[1]
    if not kinds.size:
        return None, None
    bad_run, touching = _bad_runs(buf, table)
    bounds = [0, *(np.flatnonzero(kinds[1:] != kinds[:-1]) + 1).tolist(), kinds.size]
    for first, stop in pairwise(bounds):
        if bad_run is not None and first > bad_run[0]:
            break
        kind = kinds[first]
        bad = (_bad_array(buf, table, first, stop) if kind == _ARRAY_KIND
               else _bad_bitmap(buf, table, first, stop) if kind == _BITMAP_KIND else None)
        if bad is not None:
            return bad, touching
    return bad_run, touching


def _bad_array(buf: bytes, table: Int64Array, first: int, stop: int) -> _Problem | None:
    import numpy as np

    base = int(table[3, first])
    values = np.frombuffer(buf, "<u2", int(table[3, stop - 1] + table[4, stop - 1] - base) // 2,
                           base)
    descending = values[1:] <= values[:-1]
    # Pairs across two arrays (last of one, first of the next) may descend.
    seams = (table[3, first + 1:stop] - base) // 2 - 1
    if np.count_nonzero(descending) == np.count_nonzero(descending[seams]):
        return None
    descending[seams] = False
    where = (table[3, first:stop] - base) // 2
    index = first + int(np.searchsorted(where, np.flatnonzero(descending)[0], "right")) - 1
    return index, f"array of {table[2, index]} values is not strictly ascending"


def _bad_bitmap(buf: bytes, table: Int64Array, first: int, stop: int) -> _Problem | None:
    import numpy as np

    words = np.frombuffer(buf, "<u8", (stop - first) * _BITMAP_BYTES // 8,
                          int(table[3, first])).reshape(stop - first, -1)
    actual = np.bitwise_count(words).sum(axis=1, dtype=np.uint32)
    wrong = np.flatnonzero(actual != table[2, first:stop]).tolist()
    if not wrong:
        return None
    index = first + wrong[0]
    return index, f"header says {table[2, index]} positions, its bitmap holds {actual[wrong[0]]}"


def _bad_runs(buf: bytes, table: Int64Array) -> tuple[_Problem | None, _Problem | None]:
    """The first run container with runs that overlap, are out of order, pass 65535 or hold
    other than its header's cardinality; and the first one with runs that touch."""
    import numpy as np

    which = np.flatnonzero(table[1] == _RUN_KIND)
    if not which.size:
        return None, None
    n_runs = (table[4, which] - 2) // 4
    firsts = np.cumsum(n_runs) - n_runs  # index of each container's first run
    total = int(n_runs.sum())
    # Every run's (start, length), gathered byte by byte (payloads may sit at odd offsets).
    at = np.repeat(table[3, which] + 2 - 4 * firsts, n_runs) + 4 * np.arange(total)
    raw = np.frombuffer(buf, np.uint8)
    starts = raw[at].astype(np.int64) | raw[at + 1].astype(np.int64) << 8
    lengths = raw[at + 2].astype(np.int64) | raw[at + 3].astype(np.int64) << 8
    ends = starts + lengths
    owner = np.repeat(np.arange(which.size), n_runs)
    follows = np.ones(total, dtype=bool)
    follows[firsts[n_runs > 0]] = False  # a container's first run follows nothing
    previous_end = np.concatenate(([-2], ends[:-1]))
    disordered = (ends > 0xFFFF) | (follows & (starts <= previous_end))
    held = np.concatenate(([0], np.cumsum(lengths + 1)))[np.concatenate((firsts, [total]))]
    actual = np.diff(held)
    problems: list[_Problem] = []
    for j in np.flatnonzero(disordered).tolist()[:1]:
        problems.append((int(which[owner[j]]), "has runs that overlap, are out of order or "
                         "pass 65535"))
    for c in np.flatnonzero(actual != table[2, which]).tolist()[:1]:
        problems.append((int(which[c]), f"header says {table[2, which[c]]} positions, its runs "
                         f"hold {actual[c]}"))
    touching = [(int(which[owner[j]]), f"has a run ending at {previous_end[j]} and the next "
                 f"starting at {starts[j]}: runs that touch must be one run")
                for j in np.flatnonzero(follows & (starts == previous_end + 1)).tolist()[:1]]
    return min(problems, key=lambda p: p[0], default=None), next(iter(touching), None)


def _deserialize(walk: _Walk, start: int, end: int) -> Any:
    from pyroaring import BitMap64

    try:
        return BitMap64.deserialize(walk.buf[start:end])
    except ValueError as exc:
        walk.add("dv.vector", f"the Roaring library rejected the vector: {exc}", start)
        return None


def _raise_first_error(findings: list[Finding]) -> None:
    for f in findings:
        if f.severity is Severity.ERROR:
            raise PuffinError(f.message, code=f.code, offset=f.offset)


def decode_deletion_vector(data: bytes, base_offset: int = 0) -> DeletionVector:
    """Decode a ``deletion-vector-v1`` blob; ``base_offset`` is the blob's offset in the file.

    Raises :class:`PuffinError` (codes ``dv.*``) with an absolute offset on the first error.
    """
    walk = _Walk(data, base_offset)
    envelope = _walk_envelope(walk)
    _raise_first_error(walk.findings)
    assert envelope is not None  # the only way it is None is an error finding
    layouts = _walk_vector(walk, VECTOR_START, len(data) - CRC_BYTES)
    _raise_first_error(walk.findings)
    assert layouts is not None
    bitmap = _deserialize(walk, VECTOR_START, len(data) - CRC_BYTES)
    _raise_first_error(walk.findings)
    return DeletionVector(bitmap, layouts, data, envelope[0], envelope[1])


# --------------------------------------------------------------------------------------------
# Container contents (numpy; positions never become Python ints in bulk)


def _container_runs(buf: bytes, c: ContainerLayout) -> tuple[Int64Array, Int64Array]:
    """Maximal runs of one container as (starts, ends) inclusive, low 16 bits."""
    import numpy as np

    if c.kind == RUN:
        n_runs = (c.size - 2) // 4
        runs = np.frombuffer(buf, "<u2", 2 * n_runs, c.offset + 2).astype(np.int64)
        starts, ends = runs[0::2], runs[0::2] + runs[1::2]
        keep = np.flatnonzero(starts[1:] > ends[:-1] + 1)  # runs that touch are one range
        return (np.concatenate(([starts[0]], starts[keep + 1])),
                np.concatenate((ends[keep], [ends[-1]])))
    if c.kind == ARRAY:
        values = np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int64)
        breaks = np.flatnonzero(np.diff(values) != 1)
        return (np.concatenate((values[:1], values[breaks + 1])),
                np.concatenate((values[breaks], values[-1:])))
    bits = np.unpackbits(np.frombuffer(buf, np.uint8, _BITMAP_BYTES, c.offset),
                         bitorder="little").astype(np.int8)
    edges = np.diff(np.concatenate(([0], bits, [0])))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1


def _container_run_count(buf: bytes, c: ContainerLayout) -> int:
    """How many maximal runs one container holds, without listing them."""
    import numpy as np

    if c.kind == ARRAY:
        values = np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int32)
        return c.cardinality - int(np.count_nonzero(np.diff(values) == 1))
    if c.kind == BITMAP:
        words = np.frombuffer(buf, "<u8", _BITMAP_BYTES // 8, c.offset)
        carry = np.concatenate(([np.uint64(0)], words[:-1] >> np.uint64(63)))
        starts = words & ~((words << np.uint64(1)) | carry)
        return int(np.unpackbits(starts.view(np.uint8)).sum())
    return len(_container_runs(buf, c)[0])


def _container_values(buf: bytes, c: ContainerLayout) -> Int64Array:
    """The low 16 bits of every position in one container, ascending."""
    import numpy as np

    if c.kind == ARRAY:
        return np.frombuffer(buf, "<u2", c.cardinality, c.offset).astype(np.int64)
    if c.kind == BITMAP:
        bits = np.unpackbits(np.frombuffer(buf, np.uint8, _BITMAP_BYTES, c.offset),
                             bitorder="little")
        return np.flatnonzero(bits).astype(np.int64)
    starts, ends = _container_runs(buf, c)
    lengths = ends - starts + 1
    firsts = np.cumsum(lengths) - lengths
    values: Int64Array = np.arange(c.cardinality, dtype=np.int64) + np.repeat(starts - firsts,
                                                                               lengths)
    return values


def _touches(buf: bytes, c: ContainerLayout) -> tuple[bool, bool]:
    """Whether a container holds its first (0) and last (65535) low value."""
    if c.kind == BITMAP:
        return bool(buf[c.offset] & 1), bool(buf[c.offset + _BITMAP_BYTES - 1] & 0x80)
    if c.kind == ARRAY:
        first = struct.unpack_from("<H", buf, c.offset)[0]
        last = struct.unpack_from("<H", buf, c.offset + c.size - 2)[0]
        return first == 0, last == 0xFFFF
    first = struct.unpack_from("<H", buf, c.offset + 2)[0]
    start, length = struct.unpack_from("<HH", buf, c.offset + c.size - 4)
    return first == 0, start + length == 0xFFFF


def _containers(dv: DeletionVector) -> Iterator[tuple[int, ContainerLayout]]:
    """Every container with the high 48 bits of its positions (``key << 16 | high16``)."""
    for b in dv.bitmaps:
        for c in b.containers:
            yield b.key << 16 | c.high16, c


def iter_ranges(dv: DeletionVector) -> Iterator[tuple[int, int]]:
    """The maximal runs of positions, ascending, as inclusive (start, end) pairs."""
    pending: tuple[int, int] | None = None
    for high, c in _containers(dv):
        starts, ends = _container_runs(dv.buffer, c)
        offset = high << 16
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            if pending is not None and pending[1] + 1 == s + offset:
                pending = (pending[0], e + offset)
                continue
            if pending is not None:
                yield pending
            pending = (s + offset, e + offset)
    if pending is not None:
        yield pending


def count_ranges(dv: DeletionVector) -> int:
    """The number of maximal runs of positions (runs crossing containers count once)."""
    total = 0
    previous: tuple[int, bool] | None = None  # (high 48 bits, holds 65535)
    for high, c in _containers(dv):
        total += _container_run_count(dv.buffer, c)
        first, last = _touches(dv.buffer, c)
        if previous is not None and previous[0] + 1 == high and previous[1] and first:
            total -= 1
        previous = (high, last)
    return total


def iter_position_chunks(dv: DeletionVector, chunk: int = 1 << 20) -> Iterator[UInt64Array]:
    """All positions, ascending, as uint64 arrays of about ``chunk`` positions each."""
    import numpy as np

    parts: list[Int64Array] = []
    held = 0
    for high, c in _containers(dv):
        parts.append(_container_values(dv.buffer, c) + (high << 16))
        held += c.cardinality
        if held >= chunk:
            yield np.concatenate(parts).astype(np.uint64)
            parts, held = [], 0
    if parts:
        yield np.concatenate(parts).astype(np.uint64)


_DIGIT_GROUPS: Any = None  # "0000".."9999" as 10,000 little-endian uint32, built on first use


def format_positions(positions: UInt64Array) -> bytes:
    """Ascending positions as decimal text, one per line (``"0\\n2\\n4\\n"``), vectorized.

    Relies on the order: positions with the same number of digits are contiguous, so each such
    slice is formatted at a fixed width.
    """
    import numpy as np

    global _DIGIT_GROUPS
    if _DIGIT_GROUPS is None:
        text = "".join(f"{i:04d}" for i in range(10_000)).encode("ascii")
        _DIGIT_GROUPS = np.frombuffer(text, "<u4")
    powers = np.array([10**k for k in range(1, 20)], dtype=np.uint64)
    bounds = [0, *np.searchsorted(positions, powers).tolist(), positions.size]
    out: list[bytes] = []
    ten_thousand = np.uint64(10_000)
    for digits in range(1, 21):
        lo, hi = bounds[digits - 1], bounds[digits]
        if hi <= lo:
            continue
        groups = (digits + 3) // 4
        cells = np.empty((hi - lo, groups + 1), dtype="<u4")
        rest = positions[lo:hi]
        for g in range(groups - 1, 0, -1):
            quotient = rest // ten_thousand
            cells[:, g] = _DIGIT_GROUPS[rest - quotient * ten_thousand]
            rest = quotient
        cells[:, 0] = _DIGIT_GROUPS[rest]
        chars = cells.view(np.uint8)
        chars[:, 4 * groups] = ord("\n")
        out.append(chars[:, 4 * groups - digits:4 * groups + 1].tobytes())
    return b"".join(out)


def write_positions_text(dv: DeletionVector, out: IO[bytes], chunk: int = 1 << 20) -> int:
    """Write every position as a decimal line, ``chunk`` positions at a time; returns count."""
    written = 0
    for positions in iter_position_chunks(dv, chunk):
        out.write(format_positions(positions))
        written += positions.size
    return written


# --------------------------------------------------------------------------------------------
# Summary and checks


def _cardinality_property(meta: BlobMetadata) -> int | None:
    value = meta.properties.get(CARDINALITY_PROPERTY)
    if value is None or not value.isascii() or not value.isdigit():
        return None
    return int(value)


def summarize_deletion_vector(dv: DeletionVector, meta: BlobMetadata,
                              options: SummaryOptions) -> DeletionVectorSummary:
    ranges: list[tuple[int, int]] = []
    if options.limit > 0:
        for r in iter_ranges(dv):
            ranges.append(r)
            if len(ranges) == options.limit:
                break
    total = count_ranges(dv)
    cardinality = dv.cardinality
    prop = _cardinality_property(meta)
    matches = None if CARDINALITY_PROPERTY not in meta.properties else prop == cardinality
    kinds = [c.kind for b in dv.bitmaps for c in b.containers]
    empty = cardinality == 0
    return DeletionVectorSummary(
        cardinality=cardinality,
        min=None if empty else int(dv.bitmap.min()),
        max=None if empty else int(dv.bitmap.max()),
        referenced_data_file=meta.properties.get(REFERENCED_DATA_FILE_PROPERTY),
        cardinality_property=prop,
        cardinality_matches=matches,
        ranges=tuple(ranges),
        ranges_total=total,
        truncated=total > len(ranges),
        bitmaps=len(dv.bitmaps),
        array_containers=kinds.count(ARRAY),
        bitmap_containers=kinds.count(BITMAP),
        run_containers=kinds.count(RUN),
    )


def check_deletion_vector(data: bytes, meta: BlobMetadata) -> list[Finding]:
    """Every finding about a DV blob and its metadata (see the module docstring); never raises
    for bad bytes."""
    walk = _Walk(data, meta.offset)
    if _walk_envelope(walk) is not None:
        end = len(data) - CRC_BYTES
        layouts = _walk_vector(walk, VECTOR_START, end)
        if layouts is not None and not walk.failed:
            _check_cardinality(walk, meta, sum(b.cardinality for b in layouts))
    findings = walk.findings
    if CARDINALITY_PROPERTY not in meta.properties:
        findings.append(_meta_finding("dv.cardinality", "blob has no 'cardinality' property"))
    if REFERENCED_DATA_FILE_PROPERTY not in meta.properties:
        findings.append(_meta_finding("dv.referenced-data-file",
                                      "blob has no 'referenced-data-file' property"))
    if meta.compression_codec is not None:
        findings.append(_meta_finding("dv.compressed", f"deletion vector is compressed with "
                                      f"{meta.compression_codec!r}; it must be stored as is"))
    if meta.snapshot_id != DV_SNAPSHOT_ID:
        findings.append(_meta_finding("dv.snapshot-id",
                                      f"snapshot-id is {meta.snapshot_id}, expected -1"))
    if meta.sequence_number != DV_SEQUENCE_NUMBER:
        findings.append(_meta_finding("dv.sequence-number",
                                      f"sequence-number is {meta.sequence_number}, expected -1"))
    if meta.fields != DV_FIELDS:
        findings.append(_meta_finding("dv.fields", f"fields is {list(meta.fields)}, expected "
                                      f"[{ROW_POSITION_FIELD_ID}] (the _pos column)"))
    return findings


def _meta_finding(code: str, message: str) -> Finding:
    return Finding(code, Severity.ERROR, message)


def _check_cardinality(walk: _Walk, meta: BlobMetadata, cardinality: int) -> None:
    value = meta.properties.get(CARDINALITY_PROPERTY)
    if value is None:
        return
    prop = _cardinality_property(meta)
    if prop is None:
        walk.findings.append(_meta_finding(
            "dv.cardinality", f"'cardinality' property {value!r} is not a non-negative integer"))
    elif prop != cardinality:
        walk.findings.append(_meta_finding(
            "dv.cardinality", f"'cardinality' property is {prop}, the bitmap holds "
            f"{cardinality} positions"))


class DeletionVectorHandler:
    type_name = DV_BLOB_TYPE

    def summarize(self, data: bytes, meta: BlobMetadata,
                  options: SummaryOptions) -> DeletionVectorSummary:
        return summarize_deletion_vector(decode_deletion_vector(data, meta.offset), meta,
                                         options)

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]:
        return check_deletion_vector(data, meta)


HANDLER = DeletionVectorHandler()


# --------------------------------------------------------------------------------------------
# Encoding


def _java_kind(card: int, n_runs: int) -> str:
    """The container kind Iceberg Java's runOptimize leaves for a freshly built container."""
    run_bytes = 2 + 4 * n_runs
    if card <= _ARRAY_MAX:
        return RUN if run_bytes < 2 * card else ARRAY
    return RUN if run_bytes < _BITMAP_BYTES else BITMAP


def _container_payload(buf: bytes, c: ContainerLayout, kind: str) -> bytes:
    import numpy as np

    if kind == c.kind:
        return buf[c.offset:c.offset + c.size]
    if kind == RUN:
        starts, ends = _container_runs(buf, c)
        pairs = np.empty(2 * len(starts), dtype="<u2")
        pairs[0::2], pairs[1::2] = starts, ends - starts
        return struct.pack("<H", len(starts)) + pairs.tobytes()
    values = _container_values(buf, c)
    if kind == ARRAY:
        return values.astype("<u2").tobytes()
    bits = np.zeros(1 << 16, dtype=np.uint8)
    bits[values] = 1
    return np.packbits(bits, bitorder="little").tobytes()


def _encode_bitmap32(buf: bytes, layout: BitmapLayout | None) -> bytes:
    """One 32-bit portable Roaring bitmap, containers as Iceberg Java writes them."""
    containers = () if layout is None else layout.containers
    kinds = [_java_kind(c.cardinality, _container_run_count(buf, c)) for c in containers]
    payloads = [_container_payload(buf, c, k) for c, k in zip(containers, kinds, strict=True)]
    n = len(containers)
    has_run = RUN in kinds
    if has_run:
        flags = bytearray((n + 7) // 8)
        for i, kind in enumerate(kinds):
            if kind == RUN:
                flags[i // 8] |= 1 << (i % 8)
        head = struct.pack("<I", _COOKIE_RUN | (n - 1) << 16) + bytes(flags)
    else:
        head = struct.pack("<II", _COOKIE_NO_RUN, n)
    head += b"".join(struct.pack("<HH", c.high16, c.cardinality - 1) for c in containers)
    if not has_run or n >= _NO_OFFSET_THRESHOLD:
        offset = len(head) + 4 * n
        for payload in payloads:
            head += struct.pack("<I", offset)
            offset += len(payload)
    return head + b"".join(payloads)


def encode_vector(bitmap: Any) -> bytes:
    """The 64-bit portable vector of a ``pyroaring.BitMap64`` as Iceberg Java writes it."""
    if len(bitmap) and bitmap.max() > MAX_POSITION:
        raise PuffinError(f"position {bitmap.max()} is above 2^63-1: deletion vector positions "
                          "are non-negative 64-bit", code="dv.top-bit")
    source = bitmap.serialize()
    walk = _Walk(source, 0)
    layouts = _walk_vector(walk, 0, len(source))
    _raise_first_error(walk.findings)
    assert layouts is not None
    by_key = {b.key: b for b in layouts if b.cardinality}
    top = max(by_key, default=-1)
    keys = range(top + 1) if top < DENSE_KEY_LIMIT else sorted(by_key)
    parts = [struct.pack("<Q", len(keys))]
    for key in keys:
        parts.append(struct.pack("<I", key))
        parts.append(_encode_bitmap32(source, by_key.get(key)))
    return b"".join(parts)


def encode_deletion_vector(bitmap: Any) -> bytes:
    """A complete ``deletion-vector-v1`` blob for a ``pyroaring.BitMap64`` of positions."""
    body = DV_MAGIC + encode_vector(bitmap)
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def dv_blob_properties(referenced_data_file: str, cardinality: int) -> dict[str, str]:
    """The blob properties Iceberg writes for a DV (``puffin write`` adds nothing else)."""
    return {REFERENCED_DATA_FILE_PROPERTY: referenced_data_file,
            CARDINALITY_PROPERTY: str(cardinality)}


# --------------------------------------------------------------------------------------------
# Positions from text

_ITEM = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def _parse_item(text: str, where: str) -> tuple[int, int]:
    match = _ITEM.fullmatch(text)
    if match is None:
        raise PuffinError(f"{where}: {text.strip()!r} is not a position or a range START-END",
                          code="dv.positions")
    start = int(match.group(1))
    end = start if match.group(2) is None else int(match.group(2))
    if end < start:
        raise PuffinError(f"{where}: range {start}-{end} ends before it starts",
                          code="dv.positions")
    if end > MAX_POSITION:
        raise PuffinError(f"{where}: position {end} is above 2^63-1 ({MAX_POSITION})",
                          code="dv.positions")
    return start, end


def parse_position_spec(spec: str) -> list[tuple[int, int]]:
    """``"0,2,4,10-20"`` as inclusive ranges ``[(0, 0), (2, 2), (4, 4), (10, 20)]``."""
    return [_parse_item(item, f"position list item {i}")
            for i, item in enumerate(spec.split(","), 1)]


def bitmap_from_ranges(ranges: Iterable[tuple[int, int]]) -> Any:
    """A ``pyroaring.BitMap64`` holding inclusive ranges, each added as a range."""
    from pyroaring import BitMap64

    bitmap = BitMap64()
    for start, end in ranges:
        if not 0 <= start <= end <= MAX_POSITION:
            raise PuffinError(f"range {start}-{end} is not within 0..2^63-1 in ascending order",
                              code="dv.positions")
        if start == end:
            bitmap.add(start)
        else:
            bitmap.add_range(start, end + 1)
    return bitmap


_DIGITS = b"0123456789"
# Bytes before the first line, so that every line's last 24 bytes can be read as three words.
_PAD = b"0" * 24
_MAX_DIGITS = 19  # 2^63-1 has 19 digits; a longer line takes the exact path
_ASCII_ZEROS = 0x3030303030303030


def _add_lines(bitmap: Any, text: bytes, line_no: int) -> int:
    """The exact path: each line of ``text`` parsed as a position or a range and added to
    ``bitmap``; errors name the line (numbering continues from ``line_no``). Returns the number
    of the last line read."""
    for raw in text.decode("utf-8", "replace").splitlines():
        line_no += 1
        if raw.strip():
            start, end = _parse_item(raw, f"line {line_no}")
            if start == end:
                bitmap.add(start)
            else:
                bitmap.add_range(start, end + 1)
    return line_no


def _eight_digits(words: UInt64Array) -> UInt64Array:
    """Each little-endian word of 8 digit values (0-9, most significant first) as its number,
    in place: digit pairs, then pairs of pairs, then halves (SWAR)."""
    import numpy as np

    for shift, scale, mask in ((8, 10, 0x00FF00FF00FF00FF), (16, 100, 0x0000FFFF0000FFFF),
                               (32, 10_000, 0xFFFFFFFF)):
        low = words >> np.uint64(shift)
        words *= np.uint64(scale)
        words += low
        words &= np.uint64(mask)
    return words


def _plain_numbers(text: bytes) -> tuple[UInt64Array, int] | None:
    """The bulk path: when every line of ``text`` is ASCII digits or blank (LF or CRLF line
    ends), its numbers parsed with numpy and the number of lines; else ``None``, and the exact
    path reads the block (ranges, spaces, signs, more than 19 digits, a number above 2^63-1).

    Each line's last 8, 16 or 24 bytes are read as little-endian words ending at its newline
    (from a strided view when all lines have the same length, else gathered), the bytes before
    the line's start are masked to zero digits, and each word is converted by :func:`_eight_digits`.
    """
    import numpy as np

    breaks = text.translate(None, _DIGITS)
    if breaks.translate(None, b"\n"):
        if breaks.translate(None, b"\r\n") or text.count(b"\r\n") != breaks.count(b"\r"):
            return None
        text = text.replace(b"\r\n", b"\n")
    lines = breaks.count(b"\n")
    if not text.endswith(b"\n"):  # the last line of the file
        text += b"\n"
        lines += 1
    data = _PAD + text
    buf = np.frombuffer(data, np.uint8)
    first = text.index(b"\n")
    lengths: Any
    newlines = buf[len(_PAD) + first::first + 1]
    if first and len(text) == lines * (first + 1) and (newlines == 10).all():
        ends = None  # every line has `first` digits
        lengths = shortest = longest = first
    else:
        ends = np.flatnonzero(buf == 10)
        lengths = np.diff(ends, prepend=len(_PAD) - 1) - 1
        if not lengths.all():  # blank lines
            ends = ends[lengths > 0]
            lengths = lengths[lengths > 0]
            if not ends.size:
                return np.empty(0, np.uint64), lines
        shortest, longest = int(lengths.min()), int(lengths.max())
    if longest > _MAX_DIGITS:
        return None
    count = lines if ends is None else ends.size
    unaligned = np.ndarray((len(data) - 7,), "<u8", data, 0, (1,))
    keep = np.array([(0xFFFFFFFFFFFFFFFF << (8 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(9)],
                    dtype=np.uint64)  # keep[i]: the bytes after the first i
    numbers = np.zeros(count, np.uint64)
    for back in range(-(-longest // 8) * 8, 0, -8):  # the word starting `back` bytes before the end
        if ends is None:
            word = np.ndarray((count,), "<u8", data, len(_PAD) + first - back, (first + 1,))
        else:
            word = unaligned[ends - back]
        digits = np.bitwise_xor(word, np.uint64(_ASCII_ZEROS))
        if shortest < back:  # some lines start inside this word
            digits &= keep[np.clip(back - lengths, 0, 8)]
        numbers *= np.uint64(100_000_000)
        numbers += _eight_digits(digits)
    if longest == _MAX_DIGITS and int(numbers.max()) > MAX_POSITION:
        return None
    return numbers, lines


_FOLD_POSITIONS = 1 << 24  # positions kept in the 32-bit bitmap before moving them over


def _fold(bitmap: Any, low: Any) -> None:
    """Move the positions of a 32-bit ``pyroaring.BitMap`` (all below 2^32) into ``bitmap``:
    through the portable 64-bit serialization (one 32-bit bitmap, key 0), not one by one."""
    from pyroaring import BitMap64

    bitmap |= BitMap64.deserialize(struct.pack("<QI", 1, 0) + low.serialize())
    low.clear()


def bitmap_from_positions_file(lines: IO[bytes], block: int = 1 << 20) -> Any:
    """A ``pyroaring.BitMap64`` from a text stream: one position or START-END range per line,
    blank lines ignored. Read in blocks of ``block`` bytes (a line may span blocks); blocks of
    plain numbers are parsed in bulk (:func:`_plain_numbers`), others line by line."""
    from pyroaring import BitMap, BitMap64

    bitmap = BitMap64()
    low = BitMap()  # bulk-parsed positions below 2^32: a 32-bit bitmap takes them 3x faster
    pending = 0
    line_no = 0
    tail = b""
    while True:
        chunk = lines.read(block)
        text = tail + chunk
        if chunk:
            cut = text.rfind(b"\n") + 1
            text, tail = text[:cut], text[cut:]
        if text:
            plain = _plain_numbers(text)
            if plain is None:
                line_no = _add_lines(bitmap, text, line_no)
            else:
                numbers, count = plain
                line_no += count
                if (numbers[1:] < numbers[:-1]).any():
                    numbers.sort()  # CRoaring adds ascending positions about 3x faster
                if numbers.size and int(numbers.max()) <= 0xFFFFFFFF:
                    low.update(array.array("I", numbers.astype("<u4").tobytes()))
                    pending += numbers.size
                elif numbers.size:
                    bitmap.update(array.array("Q", numbers.tobytes()))
        if pending >= _FOLD_POSITIONS or (pending and not chunk):
            _fold(bitmap, low)
            pending = 0
        if not chunk:
            return bitmap
