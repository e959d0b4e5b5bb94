"""Decoding a deletion vector: the envelope and the vector structure are walked before
``pyroaring.BitMap64`` sees the bytes, so a bad
blob is reported with a stable code, the numbers and an absolute file offset; the walk also gives
the container layout, from which the summary, the ranges and the position stream are computed
without materialising positions in Python. The walk checks everything CRoaring's validation
does (container payloads included, with numpy over all containers of a 32-bit bitmap at once),
so :meth:`DeletionVectorHandler.check` never deserializes a large vector: it runs at about the
speed of the CRC-32. A small vector that is exactly CRoaring's own serialization (what Iceberg
Java writes; :func:`canonical_bitmap`) has nothing for the walk to find: checking it and
reading its positions (:func:`deletion_vector_bitmap`) is left to CRoaring, which is ~100 times
faster there than the walk's numpy calls.
"""

from __future__ import annotations

import struct
import zlib
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.deletion_vector.layout import (
    ARRAY_KIND,
    ARRAY_MAX,
    BITMAP_BYTES,
    BITMAP_COUNT_BYTES,
    BITMAP_KIND,
    COOKIE_NO_RUN,
    COOKIE_RUN,
    CRC_BYTES,
    DV_MAGIC,
    JAVA_MAX_KEY,
    KEY_BYTES,
    KINDS,
    LENGTH_BYTES,
    MAX_CONTAINERS,
    MIN_BITMAP_BYTES,
    MIN_BLOB_BYTES,
    NO_OFFSET_THRESHOLD,
    RUN_KIND,
    TOP_BIT_KEY,
    VECTOR_START,
    BitmapLayout,
    DeletionVector,
    Problem,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Int64Array = npt.NDArray[np.int64]


# --------------------------------------------------------------------------------------------
# Walking the bytes


class Walk:
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


def _need(walk: Walk, pos: int, n: int, end: int, what: str) -> None:
    if pos + n > end:
        walk.add("dv.vector", f"{what} needs {n} bytes, only {max(end - pos, 0)} left before "
                 "the CRC", pos)
        raise _Truncated


def walk_envelope(walk: Walk) -> tuple[int, int] | None:
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


def walk_vector(walk: Walk, start: int, end: int) -> tuple[BitmapLayout, ...] | None:
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
        left = count
        while left:
            empty = _empty_bitmaps(buf, pos, end, left)
            if empty is not None:  # a run of empty bitmaps: checked at once
                last_key = _check_keys(walk, empty, pos, last_key)
                if len(layouts) + len(empty) <= MAX_EMPTY_LAYOUTS:
                    layouts.extend(BitmapLayout(key, COOKIE_NO_RUN, EMPTY_BITMAP_BYTES - KEY_BYTES,
                                                0, _no_containers()) for key in empty.tolist())
                pos += EMPTY_BITMAP_BYTES * len(empty)
                left -= len(empty)
                continue
            left -= 1
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
            if len(layouts) > MAX_BITMAPS:
                walk.add("blob.too-large", f"the vector holds more than {MAX_BITMAPS:,} "
                         "non-empty 32-bit bitmaps (positions spread over more than 2^48); "
                         "puffin-cli does not decode that many (each costs about 2 KiB)", pos)
                return None
            pos += KEY_BYTES + layout.serialized_bytes
    except _Truncated:
        return None
    if pos != end:
        walk.add("dv.trailing", f"{end - pos} bytes left after the last bitmap, before the CRC",
                 pos)
    if walk.touching is not None and not walk.failed:
        walk.findings.append(walk.touching)
    return tuple(layouts)


# A key, the no-run cookie and a container count of 0: an empty 32-bit bitmap. Iceberg Java
# writes one for every key below the highest, so runs of them are normal; millions are not,
# and are walked as arrays, not one object each.
EMPTY_BITMAP_BYTES = 12
_EMPTY_RUN_MAX = 1 << 16
# Empty bitmaps are listed in the layout (inspect --json shows them) up to this many; beyond,
# they are checked and counted in the vector's size but not kept one object each.
MAX_EMPTY_LAYOUTS = 1 << 16
# Non-empty bitmaps decoded at most: a bitmap costs ~2 KiB to walk and decode, and Iceberg Java
# itself reads keys only up to 2^31 - 2 into an array; a real vector has a handful.
MAX_BITMAPS = 1 << 16


def _empty_bitmaps(buf: bytes, pos: int, end: int, most: int) -> Any:
    """The keys of the run of empty bitmaps at ``pos`` (at most ``most``), or ``None`` when
    the bitmap there is not empty. Runs are found by galloping, so alternating empty and
    non-empty bitmaps cost no more than walking them one by one."""
    if end - pos < EMPTY_BITMAP_BYTES or struct.unpack_from("<II", buf, pos + KEY_BYTES) != (
            COOKIE_NO_RUN, 0):
        return None
    import numpy as np

    found: list[Any] = []
    chunk = 16
    while most:
        k = min(most, (end - pos) // EMPTY_BITMAP_BYTES, chunk)
        if not k:
            break
        records = np.frombuffer(buf, "<u4", 3 * k, pos).reshape(k, 3)
        empty = (records[:, 1] == COOKIE_NO_RUN) & (records[:, 2] == 0)
        run = k if bool(empty.all()) else int(np.argmin(empty))
        found.append(records[:run, 0].astype(np.int64))
        pos += EMPTY_BITMAP_BYTES * run
        most -= run
        if run < k:
            break
        chunk = min(chunk * 2, _EMPTY_RUN_MAX)
    return np.concatenate(found)


def _check_keys(walk: Walk, keys: Any, pos: int, last_key: int) -> int:
    """The key checks of :func:`walk_vector` over a run of keys at once (the first offender of
    each kind is reported); returns the last key."""
    import numpy as np

    where = pos + EMPTY_BITMAP_BYTES * np.arange(len(keys))
    top = np.flatnonzero(keys >= TOP_BIT_KEY)
    if top.size:
        key = int(keys[top[0]])
        walk.add("dv.top-bit", f"bitmap key {key:#x} has the top bit set: its positions "
                 f"({key << 32} and up) are negative as signed 64-bit", int(where[top[0]]))
    high = np.flatnonzero((keys > JAVA_MAX_KEY) & (keys < TOP_BIT_KEY))
    if high.size:
        key = int(keys[high[0]])
        walk.add("dv.key-above-java-limit", f"bitmap key {key:#x} is above {JAVA_MAX_KEY:#x}: "
                 "Iceberg Java rejects it", int(where[high[0]]), Severity.WARNING)
    previous = np.concatenate(([last_key], keys[:-1]))
    unordered = np.flatnonzero(keys <= previous)
    if unordered.size:
        i = unordered[0]
        walk.add("dv.keys-order", f"bitmap key {int(keys[i])} follows key {int(previous[i])}: "
                 "keys must be strictly ascending", int(where[i]))
    return int(keys[-1])


def _walk_bitmap32(walk: Walk, key: int, start: int, end: int) -> BitmapLayout | None:
    """Walk one 32-bit portable bitmap. The container headers are read as arrays and the
    payloads checked per kind across all containers at once; a bad container is reported as
    a sequential walk would find it first (key order, then bytes present, then contents)."""
    buf = walk.buf
    where = f"bitmap key {key}"
    _need(walk, start, 4, end, f"{where} cookie")
    (cookie,) = struct.unpack_from("<I", buf, start)
    pos = start + 4
    run_flags: bytes = b""
    if cookie & 0xFFFF == COOKIE_RUN:
        n = (cookie >> 16) + 1
        _need(walk, pos, (n + 7) // 8, end, f"{where} run-container bitset")
        run_flags = buf[pos:pos + (n + 7) // 8]
        pos += len(run_flags)
        has_offsets = n >= NO_OFFSET_THRESHOLD
    elif cookie == COOKIE_NO_RUN:
        _need(walk, pos, 4, end, f"{where} container count")
        (n,) = struct.unpack_from("<I", buf, pos)
        if n > MAX_CONTAINERS:
            walk.add("dv.vector", f"{where} has {n} containers, at most {MAX_CONTAINERS} fit "
                     "in 32 bits", pos)
            return None
        pos += 4
        has_offsets = True
    else:
        walk.add("dv.vector", f"{where} cookie is {cookie}, expected {COOKIE_NO_RUN} or "
                 f"{COOKIE_RUN} in the low 16 bits", start)
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
    big = cards > ARRAY_MAX
    kinds = np.where(is_run, RUN_KIND, np.where(big, BITMAP_KIND, ARRAY_KIND))
    sizes = np.where(is_run, 0, np.where(big, BITMAP_BYTES, 2 * cards))
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
        if kinds[i] == RUN_KIND:
            _need(walk, at, 2, end, f"{what} run count")
            _need(walk, at + 2, int(sizes[i]) - 2, end, f"{what} runs")
        _need(walk, at, int(sizes[i]), end, f"{what} {KINDS[kinds[i]]}")
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


def _first_bad_content(buf: bytes, table: Int64Array) -> tuple[Problem | None, Problem | None]:
    """The first container whose payload contradicts its header, and the first run container
    whose runs touch (see :class:`Walk`). Consecutive array or bitmap containers have
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
        bad = (_bad_array(buf, table, first, stop) if kind == ARRAY_KIND
               else _bad_bitmap(buf, table, first, stop) if kind == BITMAP_KIND else None)
        if bad is not None:
            return bad, touching
    return bad_run, touching


def _bad_array(buf: bytes, table: Int64Array, first: int, stop: int) -> Problem | None:
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


def _bad_bitmap(buf: bytes, table: Int64Array, first: int, stop: int) -> Problem | None:
    import numpy as np

    words = np.frombuffer(buf, "<u8", (stop - first) * BITMAP_BYTES // 8,
                          int(table[3, first])).reshape(stop - first, -1)
    actual = np.bitwise_count(words).sum(axis=1, dtype=np.uint32)
    wrong = np.flatnonzero(actual != table[2, first:stop]).tolist()
    if not wrong:
        return None
    index = first + wrong[0]
    return index, f"header says {table[2, index]} positions, its bitmap holds {actual[wrong[0]]}"


def _bad_runs(buf: bytes, table: Int64Array) -> tuple[Problem | None, Problem | None]:
    """The first run container with runs that overlap, are out of order, pass 65535 or hold
    other than its header's cardinality; and the first one with runs that touch."""
    import numpy as np

    which = np.flatnonzero(table[1] == RUN_KIND)
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
    problems: list[Problem] = []
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


# Vectors of up to this many bytes are offered to CRoaring first (:func:`canonical_bitmap`);
# larger ones are walked, whose cost per byte is numpy's (the walk's fixed cost per call, ~0.1
# ms, is what makes a small vector slow), so that a check never holds a deserialized copy of a
# large vector.
CANONICAL_MAX_BYTES = 1 << 20
# The highest position of a bitmap whose keys are all within Iceberg Java's limit.
JAVA_MAX_POSITION = ((JAVA_MAX_KEY + 1) << 32) - 1


def canonical_bitmap(buf: bytes, start: int, end: int) -> Any:
    """The positions (``pyroaring.BitMap64``) of the vector in ``buf[start:end]`` when those
    bytes are exactly what CRoaring writes for the bitmap it reads from them, its keys are
    within Iceberg Java's limit and it has at most :data:`MAX_BITMAPS` bitmaps; otherwise
    ``None`` (the vector must be walked). What Iceberg Java writes for a data file of fewer
    than 2^32 rows is such a vector.

    For such bytes :func:`walk_vector` finds nothing, not even a warning: CRoaring's
    validation on reading checks each container as the walk does (keys and array values
    strictly ascending, bitmap cardinalities, runs that overlap, touch or pass 65535), and its
    own serialization has strictly ascending keys, no empty bitmap, the cardinality of every
    container as its contents hold (run containers included), and nothing after the last
    bitmap; the keys' limits follow from the maximum. So the vector's cardinality is the
    bitmap's. tests/test_dv_fast_path.py checks the two ways agree on generated vectors."""
    if not BITMAP_COUNT_BYTES <= end - start <= CANONICAL_MAX_BYTES:
        return None
    (count,) = struct.unpack_from("<Q", buf, start)
    if count > MAX_BITMAPS:
        return None
    from pyroaring import BitMap64

    vector = buf[start:end]
    try:
        bitmap = BitMap64.deserialize(vector)
    except ValueError:
        return None
    if bitmap.serialize() != vector or (len(bitmap) and bitmap.max() > JAVA_MAX_POSITION):
        return None
    return bitmap


def _deserialize(walk: Walk, start: int, end: int) -> Any:
    from pyroaring import BitMap64

    try:
        return BitMap64.deserialize(walk.buf[start:end])
    except ValueError as exc:
        walk.add("dv.vector", f"the Roaring library rejected the vector: {exc}", start)
        return None


def raise_first_error(findings: list[Finding]) -> None:
    for f in findings:
        if f.severity is Severity.ERROR:
            raise PuffinError(f.message, code=f.code, offset=f.offset)


def vector_of(bitmap: Any) -> DeletionVector:
    """A :class:`DeletionVector` over an in-memory ``pyroaring.BitMap64`` (its portable
    serialization walked), for the ranges and counts of :mod:`.containers`; its envelope
    fields (length prefix, CRC) are 0: it was never a blob."""
    source = bitmap.serialize()
    walk = Walk(source, 0)
    layouts = walk_vector(walk, 0, len(source))
    raise_first_error(walk.findings)
    assert layouts is not None
    return DeletionVector(bitmap, layouts, source, 0, 0)


def deletion_vector_bitmap(data: bytes, base_offset: int = 0) -> Any:
    """The positions (``pyroaring.BitMap64``) of a ``deletion-vector-v1`` blob, as
    ``decode_deletion_vector(data, base_offset).bitmap`` gives them, with the same error; a
    well-formed vector (:func:`canonical_bitmap`) is not walked."""
    walk = Walk(data, base_offset)
    if walk_envelope(walk) is not None and not walk.findings:
        bitmap = canonical_bitmap(data, VECTOR_START, len(data) - CRC_BYTES)
        if bitmap is not None:
            return bitmap
    return decode_deletion_vector(data, base_offset).bitmap


def decode_deletion_vector(data: bytes, base_offset: int = 0) -> DeletionVector:
    """Decode a ``deletion-vector-v1`` blob; ``base_offset`` is the blob's offset in the file.

    Raises :class:`PuffinError` (codes ``dv.*``) with an absolute offset on the first error.
    """
    walk = Walk(data, base_offset)
    envelope = walk_envelope(walk)
    raise_first_error(walk.findings)
    assert envelope is not None  # the only way it is None is an error finding
    layouts = walk_vector(walk, VECTOR_START, len(data) - CRC_BYTES)
    raise_first_error(walk.findings)
    assert layouts is not None
    bitmap = _deserialize(walk, VECTOR_START, len(data) - CRC_BYTES)
    raise_first_error(walk.findings)
    return DeletionVector(bitmap, layouts, data, envelope[0], envelope[1])
