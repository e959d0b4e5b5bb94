"""The fast path for well-formed deletion vectors (codec.canonical_bitmap: CRoaring reads the
vector and writes it back byte for byte) gives exactly what the detailed walk gives: the same
positions, the same error (code, message, offset), the same findings of ``validate``'s check,
the same ``DecodedDV`` of ``puffin table``; on vectors generated with run containers, runs
that touch, unsorted arrays, wrong cardinalities, keys above Iceberg Java's limit or with the
top bit, empty bitmaps, trailing bytes and random damage."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any
from unittest import mock

import pytest
from helpers import SAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from puffin_cli.analysis import dv_containers
from puffin_cli.blobs.deletion_vector import (
    DV_MAGIC,
    check_deletion_vector,
    codec,
    decode_deletion_vector,
    deletion_vector_bitmap,
    dv_blob_properties,
    encode_deletion_vector,
    handler,
)
from puffin_cli.blobs.deletion_vector.codec import Walk, canonical_bitmap, walk_vector
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader

BASE = 1000  # the blob's offset in its file: every offset below is absolute
JAVA_MAX_KEY = 0x7FFFFFFE


def _blob(vector: bytes) -> bytes:
    body = DV_MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _meta(blob: bytes, cardinality: int) -> BlobMetadata:
    return BlobMetadata(type="deletion-vector-v1", fields=(2147483645,), snapshot_id=-1,
                        sequence_number=-1, offset=BASE, length=len(blob),
                        compression_codec=None,
                        properties=dv_blob_properties("data.parquet", cardinality))


@contextmanager
def _walk_only() -> Iterator[None]:
    """The code as it was before the fast path: every vector walked."""
    with mock.patch.object(codec, "canonical_bitmap", return_value=None), \
            mock.patch.object(handler, "canonical_bitmap", return_value=None):
        yield


def _decode_range_walked(blob: bytes) -> dv_containers.DecodedDV:
    """``decode_range`` of an Iceberg DV as it was before the fast path."""
    try:
        dv = decode_deletion_vector(blob, BASE)
    except PuffinError as exc:
        return dv_containers.DecodedDV(dv_containers.PUFFIN, problem=str(exc))
    return dv_containers.DecodedDV(dv_containers.PUFFIN, dv.cardinality,
                                   int(dv.bitmap.max()) if dv.cardinality else None)


def _outcome(read: Any, blob: bytes) -> Any:
    try:
        return ("positions", read(blob))
    except PuffinError as exc:
        return ("error", exc.code, exc.message, exc.offset)


def assert_paths_agree(blob: bytes, cardinality: int = 0) -> bool:
    """Every use of the fast path against the walk on ``blob``; whether its vector is one
    the fast path takes."""
    meta = _meta(blob, cardinality)
    fast = (_outcome(lambda b: deletion_vector_bitmap(b, BASE), blob),
            check_deletion_vector(blob, meta),
            dv_containers.decode_range(blob, in_puffin=True, base_offset=BASE))
    with _walk_only():
        walked = (_outcome(lambda b: decode_deletion_vector(b, BASE).bitmap, blob),
                  check_deletion_vector(blob, meta), _decode_range_walked(blob))
    assert fast == walked
    bitmap = canonical_bitmap(blob, 8, len(blob) - 4) if len(blob) >= 16 else None
    if bitmap is not None:  # what canonical_bitmap's docstring claims: the walk finds nothing
        walk = Walk(blob, BASE)
        layouts = walk_vector(walk, 8, len(blob) - 4)
        assert walk.findings == [] and layouts is not None
        assert sum(b.cardinality for b in layouts) == len(bitmap)
    return bitmap is not None


# ---------------------------------------------------------------- hand-built portable bitmaps

def _bitmap32(containers: list[tuple[int, str, list[int] | list[tuple[int, int]]]], *,
              card_delta: int = 0, zero_offsets: bool = False) -> bytes:
    """A 32-bit portable bitmap as CRoaring writes it (offsets included) from containers
    (high16, kind, values or runs); ``card_delta`` is added to the first header's cardinality
    (the header stores cardinality - 1, so it stays in 0..65535)."""
    payloads, headers = [], []
    for i, (high, kind, content) in enumerate(containers):
        if kind == "run":
            runs: list[tuple[int, int]] = content  # type: ignore[assignment]
            payload = struct.pack("<H", len(runs)) + b"".join(
                struct.pack("<HH", s, n) for s, n in runs)
            card = sum(n + 1 for _, n in runs)
        elif kind == "array":
            values: list[int] = content  # type: ignore[assignment]
            payload = struct.pack(f"<{len(values)}H", *values)
            card = len(values)
        else:
            bits = bytearray(8192)
            for v in content:
                bits[v >> 3] |= 1 << (v & 7)  # type: ignore[operator]
            payload = bytes(bits)
            card = len(content)
        if i == 0:
            card = min(max(card + card_delta, 1), 65536)
        headers.append(struct.pack("<HH", high, card - 1))
        payloads.append(payload)
    n = len(containers)
    has_run = any(kind == "run" for _, kind, _ in containers)
    if has_run:
        flags = bytearray((n + 7) // 8)
        for i, (_, kind, _) in enumerate(containers):
            if kind == "run":
                flags[i >> 3] |= 1 << (i & 7)
        head = struct.pack("<I", 12347 | (n - 1) << 16) + bytes(flags)
    else:
        head = struct.pack("<II", 12346, n)
    head += b"".join(headers)
    if not has_run or n >= 4:
        at = len(head) + 4 * n
        offsets = []
        for payload in payloads:
            offsets.append(0 if zero_offsets else at)
            at += len(payload)
        head += struct.pack(f"<{n}I", *offsets)
    return head + b"".join(payloads)


def _vector(bitmaps: list[tuple[int, bytes]], count: int | None = None) -> bytes:
    return struct.pack("<Q", len(bitmaps) if count is None else count) + b"".join(
        struct.pack("<I", key) + body for key, body in bitmaps)


_low16 = st.integers(0, 0xFFFF)


@st.composite
def _container(draw: st.DrawFn, high: int) -> tuple[int, str, Any]:
    kind = draw(st.sampled_from(["array", "run", "bitmap"]))
    if kind == "array":
        values = sorted(draw(st.sets(_low16, min_size=1, max_size=40)))
        if len(values) > 1 and draw(st.integers(0, 3)) == 0:  # unsorted or repeated value
            i = draw(st.integers(0, len(values) - 2))
            if draw(st.booleans()):
                values[i], values[i + 1] = values[i + 1], values[i]
            else:
                values[i + 1] = values[i]
        return high, kind, values
    if kind == "bitmap":
        start = draw(st.integers(0, 0xFFFF - 5000))
        return high, kind, list(range(start, start + 4097 + draw(st.integers(0, 800))))
    runs, at = [], draw(st.integers(0, 100))
    for _ in range(draw(st.integers(1, 6))):
        length = draw(st.integers(0, 300))
        runs.append((min(at, 0xFFFF), min(length, 0xFFFF - min(at, 0xFFFF))))
        # next run: after a gap (well formed), touching, overlapping or before
        at = at + length + draw(st.sampled_from([2, 2, 2, 50, 1, 0, -5]))
        at = max(at, 0)
    return high, kind, runs


@st.composite
def _bitmap_body(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return struct.pack("<II", 12346, 0)  # an empty bitmap
    highs = sorted(draw(st.sets(st.integers(0, 20), min_size=1, max_size=5)))
    if len(highs) > 1 and draw(st.integers(0, 5)) == 0:
        highs.reverse()  # container keys out of order
    containers = [draw(_container(h)) for h in highs]
    return _bitmap32(containers, card_delta=draw(st.sampled_from([0, 0, 0, 0, 1, -1])),
                     zero_offsets=draw(st.integers(0, 5)) == 0)


_keys = st.one_of(st.integers(0, 5), st.just(JAVA_MAX_KEY), st.just(JAVA_MAX_KEY + 1),
                  st.just(1 << 31), st.integers(0, 2**32 - 1))


@st.composite
def _hand_built(draw: st.DrawFn) -> bytes:
    keys = sorted(draw(st.sets(_keys, max_size=3)))
    if len(keys) > 1 and draw(st.integers(0, 5)) == 0:
        keys.reverse()
    vector = _vector([(k, draw(_bitmap_body())) for k in keys],
                     count=draw(st.one_of(st.none(), st.none(), st.none(),
                                          st.integers(0, 4))))
    return vector + draw(st.sampled_from([b"", b"", b"", b"\0", b"\0\0\0\0"]))


# Positions near container (2^16) and bitmap (2^32) boundaries, Java's limit and the top bit.
_position = st.one_of(st.integers(0, 300_000), st.integers(2**32 - 70_000, 2**32 + 70_000),
                      st.integers((JAVA_MAX_KEY << 32) - 5, (JAVA_MAX_KEY + 1 << 32) + 5),
                      st.integers(2**63 - 5, 2**63 + 5), st.integers(0, 2**64 - 1))


@st.composite
def _from_positions(draw: st.DrawFn) -> bytes:
    """A bitmap's bytes as CRoaring writes them (run containers or not) or as Iceberg Java
    does (dense keys, Java's container kinds)."""
    bitmap = BitMap64(draw(st.lists(_position, max_size=60)))
    for start in draw(st.lists(st.integers(0, 2**33), max_size=3)):
        bitmap.add_range(start, start + draw(st.integers(1, 70_000)))
    how = draw(st.sampled_from(["croaring", "croaring-runs", "java"]))
    if how == "java":
        if len(bitmap) and bitmap.max() >= 2**63:
            bitmap = BitMap64(p for p in bitmap if p < 2**63)
        return encode_deletion_vector(bitmap)[8:-4]
    if how == "croaring-runs":
        bitmap.run_optimize()
    return bytes(bitmap.serialize())


@st.composite
def _damaged(draw: st.DrawFn, vectors: st.SearchStrategy[bytes]) -> bytes:
    vector = bytearray(draw(vectors))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        if vector:
            vector[draw(st.integers(0, len(vector) - 1))] = draw(st.integers(0, 255))
    if vector and draw(st.integers(0, 9)) == 0:
        del vector[draw(st.integers(0, len(vector) - 1)):]
    return bytes(vector)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged(st.one_of(_hand_built(), _from_positions())), st.integers(0, 5))
def test_fast_path_and_walk_agree(vector: bytes, cardinality_property: int) -> None:
    blob = _blob(vector)
    assert_paths_agree(blob, cardinality_property)
    wrong_crc = bytearray(blob)
    wrong_crc[-1] ^= 1
    assert_paths_agree(bytes(wrong_crc), cardinality_property)


def test_fast_path_is_taken_for_what_iceberg_java_and_trino_write() -> None:
    """Every sample but those of positions past 2^32, for which Java writes an empty bitmap
    for each key below the highest (CRoaring writes none: those are walked)."""
    taken = []
    for path in sorted(SAMPLES.rglob("*.puffin")):
        with PuffinReader(path) as reader:
            for blob in reader.metadata.blobs:
                if blob.type == "deletion-vector-v1":
                    data = reader.read_blob(blob)
                    fast = assert_paths_agree(data, len(deletion_vector_bitmap(data)))
                    bitmaps = decode_deletion_vector(data).bitmaps
                    assert fast == all(b.cardinality for b in bitmaps)
                    taken.append((path.name, fast))
    assert sorted(taken) == [("deletion-vector-v1.puffin", True), ("dv-64bit.puffin", False),
                             ("dv-64bit.puffin", False), ("dv-64bit.puffin", True)]
    for positions in ([], [0], [0, 1, 2, 3, 9], list(range(0, 20_000, 2)),
                      [*range(10_000), 70_000, 70_001, 2**32 - 1]):
        blob = encode_deletion_vector(BitMap64(positions))
        assert assert_paths_agree(blob, len(positions)), positions


RUNS_TOUCH = _bitmap32([(0, "run", [(10, 5), (16, 1)])])
RUNS_APART = _bitmap32([(0, "run", [(10, 5), (17, 1)])])
ARRAY = _bitmap32([(0, "array", [0, 2, 4])])


@pytest.mark.parametrize(("vector", "codes"), [
    (_vector([(0, RUNS_APART)]), []),
    (_vector([(0, RUNS_TOUCH)]), ["dv.vector"]),
    (_vector([(0, _bitmap32([(0, "array", [4, 2, 9])]))]), ["dv.vector"]),
    (_vector([(0, _bitmap32([(0, "array", [0, 2, 4])], card_delta=1))]), ["dv.vector"]),
    (_vector([(0, _bitmap32([(0, "run", [(10, 5)])], card_delta=1))]), ["dv.vector"]),
    (_vector([(JAVA_MAX_KEY, ARRAY)]), []),
    (_vector([(JAVA_MAX_KEY + 1, ARRAY)]), ["dv.key-above-java-limit"]),
    (_vector([(1 << 31, ARRAY)]), ["dv.top-bit"]),
    (_vector([(0, struct.pack("<II", 12346, 0)), (1, ARRAY)]), []),
    (_vector([(3, ARRAY), (1, ARRAY)]), ["dv.keys-order"]),
    (_vector([(0, ARRAY)]) + b"\0\0", ["dv.trailing"]),
    (_vector([(0, _bitmap32([(0, "array", [0, 2, 4])], zero_offsets=True))]), []),
    (_vector([]), []),
])
def test_each_kind_of_vector(vector: bytes, codes: list[str]) -> None:
    blob = _blob(vector)
    cardinality = 0
    with suppress(PuffinError):
        cardinality = len(decode_deletion_vector(blob, BASE).bitmap)
    assert_paths_agree(blob, cardinality)
    findings = check_deletion_vector(blob, _meta(blob, cardinality))
    assert [f.code for f in findings] == codes
    # The fast path only for what the walk would find nothing in.
    fast = canonical_bitmap(blob, 8, len(blob) - 4) is not None
    assert fast == (vector in (_vector([(0, RUNS_APART)]), _vector([(JAVA_MAX_KEY, ARRAY)]),
                               _vector([])))
