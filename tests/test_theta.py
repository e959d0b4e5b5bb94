"""Theta sketches: hashing, building, serialization, decoding and checks against Iceberg Java."""

from __future__ import annotations

import itertools
import json
import struct
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import datasketches
import mmh3
import numpy as np
import pytest
from helpers import SAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st
from interop.fixtures import java_oracle_fixture  # noqa: F401  (fixture `java_oracle`)
from interop.oracle import JavaOracle

from puffin_cli.blobs import handler_for
from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.blobs.iceberg_values import IcebergType, serialize_values
from puffin_cli.blobs.theta import (
    DEFAULT_SEED_HASH,
    EMPTY_SKETCH_BYTES,
    MAX_THETA,
    AlphaSketch,
    ThetaAccumulator,
    ThetaSummary,
    alpha_sketch,
    build_sketch,
    build_theta_blob,
    check_theta,
    describe,
    hash_iceberg_values,
    hash_matrix,
    hash_ragged,
    hash_values,
    read_header,
    serialize_compact,
    summarize_theta,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader

MIXED = SAMPLES / "iceberg-java" / "multi-blob-mixed.puffin"
TRINO = SAMPLES / "public" / "apache-datasketches-theta-v1.puffin"
# The TPC-H ``region`` table, which Trino's sample sketches (regionkey, name, comment).
REGION_COMMENTS = [
    "lar deposits. blithely final packages cajole. regular waters are final requests. "
    "regular accounts are according to ",
    "hs use ironic, even requests. s",
    "ges. thinly even pinto beans ca",
    "ly final courts cajole furiously final excuse",
    "uickly special accounts cajole carefully blithely close requests. carefully final "
    "asymptotes haggle furiousl",
]
OPTIONS = SummaryOptions()


def _blob(path: Path, index: int) -> bytes:
    with PuffinReader(path) as reader:
        return reader.read_blob(reader.metadata.blobs[index])


def _meta(properties: dict[str, str] | None = None, *, fields: tuple[int, ...] = (1,),
          codec: str | None = None, offset: int = 100) -> BlobMetadata:
    return BlobMetadata(type="apache-datasketches-theta-v1", fields=fields, snapshot_id=1,
                        sequence_number=1, offset=offset, length=0, compression_codec=codec,
                        properties={} if properties is None else properties)


def _mmh3(value: bytes) -> int:
    result: int = mmh3.hash64(value, seed=9001, signed=False)[0] >> 1
    return result


# ---- hashing ---------------------------------------------------------------------------


def test_seed_hash_is_derived_from_seed_9001() -> None:
    derived = mmh3.hash64(struct.pack("<q", 9001), seed=0, signed=False)[0] & 0xFFFF
    assert derived == DEFAULT_SEED_HASH == 0x93CC


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=40), max_size=30))
def test_hash_values_equals_mmh3_and_skips_empty(values: list[bytes]) -> None:
    assert hash_values(values).tolist() == [_mmh3(v) for v in values if v]


@settings(max_examples=200)
@given(st.integers(0, 48), st.integers(0, 20), st.randoms())
def test_hash_matrix_equals_mmh3(width: int, rows: int, rnd: Any) -> None:
    matrix = np.array([[rnd.randrange(256) for _ in range(width)] for _ in range(rows)],
                      dtype=np.uint8).reshape(rows, width)
    expected = [] if width == 0 else [_mmh3(row.tobytes()) for row in matrix]
    assert hash_matrix(matrix).tolist() == expected


@pytest.mark.parametrize("width", [1, 4, 7, 8, 9, 16, 17])
def test_hash_matrix_across_chunks_and_strided_rows(width: int) -> None:
    """More rows than one in-cache chunk, and rows that are a column slice of a wider
    matrix (not contiguous): the same hashes as mmh3."""
    wide = np.random.default_rng(width).integers(0, 256, (70_000, width + 3), dtype=np.uint8)
    matrix = wide[:, 1:width + 1]
    assert not matrix.flags.c_contiguous
    expected = [_mmh3(row.tobytes()) for row in matrix]
    assert hash_matrix(matrix).tolist() == expected
    assert hash_matrix(np.ascontiguousarray(matrix)).tolist() == expected


@settings(max_examples=100)
@given(st.lists(st.binary(min_size=1, max_size=40), max_size=60), st.booleans())
def test_hash_ragged_equals_mmh3(values: list[bytes], more: bool) -> None:
    """Byte strings of a shared buffer, hashed by length groups (few lengths: one pass per
    length; many: sorted by length), come back in their own order, whether the buffer goes
    on after the last string or ends there."""
    buffer = np.frombuffer(b"".join(values) + (b"tail" if more else b""), dtype=np.uint8)
    lengths = np.array([len(v) for v in values], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    assert hash_ragged(buffer, starts, lengths).tolist() == [_mmh3(v) for v in values]


@pytest.mark.parametrize("lengths", [(3,), (8,), (16,), (32,), (15, 16), (5, 9, 16, 33)])
def test_hash_ragged_across_chunks_one_length_or_few(lengths: tuple[int, ...]) -> None:
    """More strings than one in-cache chunk, of one length (no tail block to mask when it is a
    multiple of 16) or of a few, in a buffer that ends with the last string."""
    rng = np.random.default_rng(len(lengths))
    sizes = rng.choice(lengths, 40_000)
    values = [rng.bytes(int(size)) for size in sizes]
    buffer = np.frombuffer(b"".join(values), dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
    hashes = hash_ragged(buffer, starts, sizes.astype(np.int64))
    assert hashes.tolist() == [_mmh3(v) for v in values]


def test_hash_iceberg_values_fast_and_slow_paths_agree() -> None:
    values = [0, 1, -1, 2**40, -(2**63)]
    long_type = IcebergType.parse("long")
    expected = [_mmh3(struct.pack("<q", v)) for v in values]
    assert hash_iceberg_values(long_type, np.array(values, dtype=np.int64)).tolist() == expected
    assert hash_iceberg_values(long_type, values).tolist() == expected
    strings = ["a", "", "ü"]
    assert hash_iceberg_values(IcebergType.parse("string"), strings).tolist() == \
        [_mmh3(b"a"), _mmh3("ü".encode())]


# ---- building, against Java-written sketches ---------------------------------------------


def test_java_exact_string_sketch_reproduced() -> None:
    data, ndv = build_theta_blob("string", [f"value-{i}-ü" for i in range(1000)])
    assert data == _blob(MIXED, 0)
    assert ndv == 1000


def test_java_alpha_update_sketch_reproduced() -> None:
    # Blob 2 is a raw Alpha update sketch (4135 entries, theta not a hash): the Alpha theta
    # schedule over the values in order gives exactly Java's theta and bytes.
    hashes = hash_iceberg_values(IcebergType.parse("long"),
                                 np.array([2**33 + i * 7 for i in range(20000)]))
    sketch = alpha_sketch(hashes)
    assert sketch.theta_long == 1867811953969918976
    assert sketch.retained == 4135
    assert sketch.to_bytes() == _blob(MIXED, 2)
    assert sketch.ndv == 20418


def test_union_of_alpha_keeps_4096_smallest_here() -> None:
    hashes = hash_iceberg_values(IcebergType.parse("long"),
                                 np.array([2**33 + i * 7 for i in range(20000)]))
    result = build_sketch(hashes)
    distinct = np.unique(hashes)
    assert result.retained == 4096
    assert result.theta_long == int(distinct[4096])
    assert result.hashes.tolist() == distinct[:4096].tolist()


def test_trino_sketches_reproduced() -> None:
    columns = [("long", list(range(5))),
               ("string", ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]),
               ("string", REGION_COMMENTS)]
    for index, (type_text, values) in enumerate(columns):
        data, ndv = build_theta_blob(type_text, values)
        assert data == _blob(TRINO, index)
        assert ndv == 5


def test_empty_and_single_value_forms_are_javas() -> None:
    data, ndv = build_theta_blob("string", ["", None])
    assert data == EMPTY_SKETCH_BYTES == bytes.fromhex("010303000" "01e0000")
    assert ndv == 0
    data, ndv = build_theta_blob("string", ["x", "x"])
    assert data == bytes.fromhex("01030300003acc93") + struct.pack("<Q", _mmh3(b"x"))
    assert ndv == 1


def test_alpha_theta_can_fall_below_the_4097th_hash() -> None:
    # For this value set Iceberg's (Alpha-then-union) result keeps fewer than 4096 hashes:
    # the simple "4096 smallest" sketch differs (checked against Java in the interop test).
    rng = np.random.default_rng(1)
    hashes = hash_values(struct.pack("<q", int(v)) for v in
                         rng.integers(-(2**63), 2**63 - 1, size=21561, dtype=np.int64))
    iceberg = build_sketch(hashes)
    kmv = ThetaAccumulator()
    kmv.update(hashes)
    assert iceberg.retained == 4043
    assert kmv.result().retained == 4096
    assert iceberg.theta_long < kmv.theta_long


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(1, MAX_THETA - 1), max_size=12000),
       st.lists(st.integers(0, 12000), max_size=6), st.integers(1, 64))
def test_accumulator_chunked_equals_whole(values: list[int], cuts: list[int], k: int) -> None:
    hashes = np.array(values, dtype=np.uint64)
    whole = ThetaAccumulator(k)
    whole.update(hashes)
    distinct = np.unique(hashes)
    assert whole.hashes.tolist() == distinct[:k].tolist()
    assert whole.theta_long == (int(distinct[k]) if distinct.size > k else MAX_THETA)
    bounds = [0, *sorted(cuts), len(values)]
    parts = [ThetaAccumulator(k) for _ in bounds[1:]]
    for part, start, end in zip(parts, bounds, bounds[1:], strict=False):
        part.update(hashes[start:end])
    merged = ThetaAccumulator(k)
    for part in reversed(parts):
        merged.add(part.result())
    assert merged.result().to_bytes() == whole.result().to_bytes()


def test_accumulator_union_of_alpha_sketches_is_order_independent() -> None:
    hashes = hash_values(str(i).encode() for i in range(30000))
    sketches = [alpha_sketch(hashes[a:b]) for a, b in ((0, 7000), (7000, 15000),
                                                        (15000, 30000))]
    results = []
    for order in ((0, 1, 2), (2, 1, 0), (1, 2, 0)):
        union = ThetaAccumulator()
        for i in order:
            union.add(sketches[i])
        results.append(union.result().to_bytes())
    assert results[0] == results[1] == results[2]
    assert ThetaAccumulator().result().to_bytes() == EMPTY_SKETCH_BYTES


def test_sketch_loads_and_unions_in_datasketches() -> None:
    a = build_sketch(hash_values(str(i).encode() for i in range(0, 15000)))
    b = build_sketch(hash_values(str(i).encode() for i in range(10000, 25000)))
    for ours in (a, b):
        loaded = datasketches.compact_theta_sketch.deserialize(ours.to_bytes())
        assert loaded.num_retained == ours.retained
        assert loaded.theta64 == ours.theta_long
        assert loaded.get_estimate() == pytest.approx(ours.estimate, rel=1e-12)
    union = datasketches.theta_union(12)
    union.update(datasketches.compact_theta_sketch.deserialize(a.to_bytes()))
    union.update(datasketches.compact_theta_sketch.deserialize(b.to_bytes()))
    ours_union = ThetaAccumulator()
    ours_union.add(a)
    ours_union.add(b)
    theirs = union.get_result()
    assert theirs.theta64 == ours_union.theta_long
    assert theirs.num_retained == ours_union.result().retained
    assert theirs.get_estimate() == pytest.approx(25000, rel=0.05)


# ---- summaries ---------------------------------------------------------------------------

EXPECTED_THETA = [
    (name, blob)
    for name in ("multi-blob-mixed.puffin", "apache-datasketches-theta-v1.puffin")
    for blob in json.loads((SAMPLES / "expected" / f"{name}.json").read_text())["blobs"]
    if "theta" in blob
]


@pytest.mark.parametrize(("name", "expected"), EXPECTED_THETA,
                         ids=[f"{n}-{b['index']}" for n, b in EXPECTED_THETA])
def test_summary_matches_iceberg_java(name: str, expected: dict[str, Any]) -> None:
    path = MIXED if name.startswith("multi") else TRINO
    with PuffinReader(path) as reader:
        meta = reader.metadata.blobs[expected["index"]]
        data = reader.read_blob(meta)
    summary = handler_for(meta.type).summarize(data, meta, OPTIONS)
    java = expected["theta"]
    assert isinstance(summary, ThetaSummary) and summary.kind == "theta"
    assert (summary.estimate, summary.lower_bound, summary.upper_bound) == \
        (java["estimate"], java["lower_bound_2sd"], java["upper_bound_2sd"])
    assert summary.retained_entries == java["retained_entries"]
    assert (summary.theta, summary.theta_long) == (java["theta"], java["theta_long"])
    assert summary.exact is not java["is_estimation_mode"]
    assert summary.empty is java["is_empty"]
    assert summary.ordered is java["is_ordered"]
    assert summary.serial_version == java["serial_version"]
    assert summary.seed_hash == java["seed_hash"] and summary.seed_hash_ok
    assert summary.compressed is False
    assert summary.ndv_property == java["ndv_property"]
    assert summary.ndv_property_matches is java["ndv_property_equals_long_estimate"]
    assert handler_for(meta.type).check(data, meta) == []


def test_summary_of_empty_java_sketch_and_ndv_mismatch() -> None:
    summary = summarize_theta(EMPTY_SKETCH_BYTES, _meta({"ndv": "3"}))
    assert (summary.empty, summary.exact, summary.estimate) == (True, True, 0.0)
    assert (summary.seed_hash, summary.ndv_property_matches) == (0, False)
    assert summarize_theta(EMPTY_SKETCH_BYTES, _meta({"ndv": "x"})).ndv_property_matches is None


def test_compressed_form_is_read_and_flagged() -> None:
    sketch = build_sketch(hash_values(str(i).encode() for i in range(10000)))
    compressed = datasketches.compact_theta_sketch.deserialize(sketch.to_bytes()).serialize(True)
    assert compressed[1] == 4
    summary = summarize_theta(compressed, _meta())
    assert (summary.compressed, summary.serial_version) == (True, 4)
    assert summary.theta_long == sketch.theta_long
    assert summary.retained_entries == sketch.retained
    assert check_theta(compressed, _meta()) == [Finding(
        "theta.serial-version", Severity.WARNING, "theta sketch: serial version 4 (compressed "
        "form); Iceberg writes 3, and DataSketches readers older than the compressed form "
        "cannot read it", 101)]


def test_describe_uses_the_library() -> None:
    assert "num retained entries : 5" in describe(_blob(TRINO, 0))


# ---- malformed headers -------------------------------------------------------------------

EXACT = serialize_compact(MAX_THETA, np.array([5, 9], dtype=np.uint64))
ESTIMATION = serialize_compact(1000, np.array([5, 9], dtype=np.uint64))


def _patched(data: bytes, pos: int, new: bytes) -> bytes:
    return data[:pos] + new + data[pos + len(new):]


MALFORMED = [
    (b"\x02\x03\x03", "theta.truncated", "3 bytes, shorter than the 8-byte preamble", 103),
    (_patched(EXACT, 1, b"\x02"), "theta.serial-version",
     "serial version 2 at sketch byte 1 is not supported (expected 3, or 4 for the compressed "
     "form)", 101),
    (_patched(EXACT, 2, b"\x02"), "theta.not-compact",
     "family 2 at sketch byte 2 is an QuickSelect update sketch (expected 3, a compact sketch)",
     102),
    (_patched(EXACT, 2, b"\x07"), "theta.family",
     "family 7 at sketch byte 2 is not a Theta sketch family (expected 3, compact)", 102),
    (_patched(EXACT, 5, b"\x12"), "theta.not-compact",
     "flags 0x12 at sketch byte 5 lack the compact flag 0x08", 105),
    (_patched(EXACT, 5, b"\x1b"), "theta.flags",
     "flags 0x1B at sketch byte 5 set the big-endian flag 0x01 (DataSketches writes "
     "little-endian only)", 105),
    (_patched(EXACT, 6, b"\x34\x12"), "theta.seed",
     "seed hash 0x1234 at sketch byte 6 is not the default seed 9001's (0x93CC)", 106),
    (_patched(EXACT, 0, b"\x04"), "theta.preamble",
     "4 preamble longs at sketch byte 0 (expected 1, 2 or 3)", 100),
    (EXACT[:12], "theta.truncated", "12 bytes, but the retained-entries count need 16 bytes",
     112),
    (_patched(EXACT, 8, struct.pack("<i", -1)), "theta.truncated",
     "retained entries -1 at sketch byte 8 is negative", 108),
    (EXACT[:-1], "theta.truncated", "31 bytes, but 2 entries need 32 bytes", 131),
    (ESTIMATION[:20], "theta.truncated", "20 bytes, but theta need 24 bytes", 120),
    (_patched(ESTIMATION, 16, struct.pack("<q", 0)), "theta.theta",
     "theta 0 at sketch byte 16 is not in 1 to 9223372036854775807", 116),
    (_patched(EXACT, 5, b"\x1e"), "theta.flags",
     "the empty flag is set but the sketch has 2 entries", 105),
    (bytes.fromhex("01030300003acc93"), "theta.truncated",
     "8 bytes, but 1 entries need 16 bytes", 108),
]


@pytest.mark.parametrize(("data", "code", "message", "offset"), MALFORMED,
                         ids=[f"{m[1]}-{i}" for i, m in enumerate(MALFORMED)])
def test_malformed_header(data: bytes, code: str, message: str, offset: int) -> None:
    with pytest.raises(PuffinError) as info:
        summarize_theta(data, _meta())
    assert (info.value.code, info.value.message, info.value.offset) == \
        (code, f"theta sketch: {message}", offset)
    assert check_theta(data, _meta()) == [
        Finding(code, Severity.ERROR, f"theta sketch: {message}", offset)]


def test_compressed_blob_offsets_point_at_the_blob() -> None:
    with pytest.raises(PuffinError) as info:
        read_header(_patched(EXACT, 6, b"\x34\x12"), _meta(codec="zstd"))
    assert info.value.offset == 100


def test_malformed_v4_headers() -> None:
    compressed = datasketches.compact_theta_sketch.deserialize(
        build_sketch(hash_values(str(i).encode() for i in range(10000))).to_bytes()
    ).serialize(True)
    with pytest.raises(PuffinError) as info:
        read_header(_patched(compressed, 0, b"\x03"))
    assert info.value.message == "theta sketch: 3 preamble longs at sketch byte 0 (expected 1 " \
        "or 2 in serial version 4)"
    with pytest.raises(PuffinError) as info:
        read_header(_patched(compressed, 3, b"\x00"))
    assert info.value.message == "theta sketch: entry bits 0 and count bytes 2 at sketch " \
        "bytes 3-4 (expected 1 to 63 and 1 to 4)"
    with pytest.raises(PuffinError) as info:
        read_header(compressed[:17])
    assert info.value.message == "theta sketch: 17 bytes, but the entry count need 18 bytes"
    with pytest.raises(PuffinError) as info:
        summarize_theta(compressed[:40], _meta())
    assert info.value.code == "theta.decode"
    assert info.value.message.startswith("theta sketch: the DataSketches library cannot read it")


def test_check_entries_trailing_bytes_and_properties() -> None:
    zero_entry = serialize_compact(MAX_THETA, np.array([0, 9], dtype=np.uint64))
    assert check_theta(zero_entry, _meta()) == [Finding(
        "theta.entries", Severity.ERROR, "theta sketch: entry 0 = 0 is not in 1 to theta - 1 "
        "(1999)".replace("1999", str(MAX_THETA - 1)), 116)]
    above = serialize_compact(1000, np.array([5, 1000], dtype=np.uint64))
    assert check_theta(above, _meta())[0].message == \
        "theta sketch: entry 1 = 1000 is not in 1 to theta - 1 (999)"
    unordered = serialize_compact(MAX_THETA, np.array([9, 5], dtype=np.uint64))
    assert check_theta(unordered, _meta()) == [Finding(
        "theta.entries", Severity.ERROR, "theta sketch: entry 1 = 5 is not above entry 0 = 9 "
        "although the ordered flag is set", 124)]
    assert check_theta(EXACT + b"\0\0", _meta({"ndv": "2"})) == [Finding(
        "theta.length", Severity.WARNING, "theta sketch: 2 bytes after the last entry (the "
        "sketch ends at byte 32 of 34)", 132)]
    assert check_theta(EXACT, _meta({"ndv": "3"}, fields=())) == [
        Finding("theta.fields", Severity.INFO, "theta sketch blob has no fields: engines "
                "cannot tell which column it describes (the spec requires the list, not that it "
                "be non-empty)"),
        Finding("theta.ndv-property", Severity.WARNING, "'ndv' property is 3, the sketch "
                "estimate truncated is 2"),
    ]
    assert check_theta(EXACT, _meta({"ndv": " 2"})) == [Finding(
        "theta.ndv-property", Severity.ERROR, "'ndv' property ' 2' is not a non-negative "
        "integer in decimal digits")]
    assert check_theta(EXACT, _meta({"ndv": "2"})) == []


# ---- Iceberg Java oracle: every type, exact and estimation mode --------------------------

TYPE_VALUES: dict[str, Any] = {
    "boolean": lambda n: [i % 2 == 0 for i in range(n)],
    "int": lambda n: [i * 7919 - n for i in range(n)],
    "long": lambda n: [i * 2**40 + i for i in range(n)],
    "float": lambda n: [i / 8 - 3.0 for i in range(n)],
    "double": lambda n: [i / 3 for i in range(n)],
    "decimal(12,3)": lambda n: [Decimal(i * 37 - n).scaleb(-3) for i in range(n)],
    "date": lambda n: [i - n // 2 for i in range(n)],
    "time": lambda n: [i * 1_000_003 for i in range(n)],
    "timestamp": lambda n: [1_700_000_000_000_000 + i * 999 for i in range(n)],
    "timestamptz": lambda n: [-i * 12345 for i in range(n)],
    "timestamp_ns": lambda n: [i * 10**9 + 1 for i in range(n)],
    "timestamptz_ns": lambda n: [i for i in range(n)],
    "string": lambda n: [f"s{i}é" if i % 97 else "" for i in range(n)],
    "uuid": lambda n: [uuid.UUID(int=i * 2**64 + i) for i in range(n)],
    "fixed[5]": lambda n: [i.to_bytes(5, "big") for i in range(n)],
    "binary": lambda n: [b"\x01" * (i % 7) + i.to_bytes(3, "little") for i in range(n)],
}


@pytest.mark.parametrize("type_text", sorted(TYPE_VALUES))
def test_sketches_equal_iceberg_java(java_oracle: JavaOracle, type_text: str) -> None:
    iceberg_type = IcebergType.parse(type_text)
    for n in (3, 1500, 30000):
        values = TYPE_VALUES[type_text](n)
        data, ndv = build_theta_blob(iceberg_type, values)
        assert data == java_oracle.theta_build(serialize_values(iceberg_type, values)), n
        assert ndv == int(datasketches.compact_theta_sketch.deserialize(data).get_estimate())


def test_partitioned_and_alpha_limited_sketches_equal_iceberg_java(
        java_oracle: JavaOracle) -> None:
    rng = np.random.default_rng(1)
    raw = [struct.pack("<q", int(v))
           for v in rng.integers(-(2**63), 2**63 - 1, size=21561, dtype=np.int64)]
    assert build_sketch(hash_values(raw)).to_bytes() == java_oracle.theta_build(raw)
    starts = [0, 5000, 12000, 20000]
    union = ThetaAccumulator()
    hashes = hash_values(raw)
    for start, end in zip(starts, [*starts[1:], len(raw)], strict=True):
        union.add(alpha_sketch(hashes[start:end]))
    assert union.result().to_bytes() == java_oracle.theta_build(raw, starts)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3000), max_size=6000), st.lists(st.integers(0, 6000), max_size=8),
       st.integers(1, 64))
def test_alpha_sketch_fed_in_chunks_equals_one_update(values: list[int], cuts: list[int],
                                                      k: int) -> None:
    # Few distinct values and a small k: theta falls many times, duplicates recur across chunks.
    hashes = np.array([v * 0x9E3779B97F4A7C15 % MAX_THETA for v in values], dtype=np.uint64)
    whole = AlphaSketch(k)
    whole.update(hashes)
    bounds = [0, *sorted(cuts), len(values)]
    chunked = AlphaSketch(k)
    for start, end in itertools.pairwise(bounds):
        chunked.update(hashes[start:end])
    assert chunked.result().to_bytes() == whole.result().to_bytes()


def _alpha_one_by_one(hashes: list[int], k: int) -> tuple[int, list[int]]:
    """The Alpha update rule read literally, one hash at a time: theta and retained hashes."""
    theta, accepted, free = MAX_THETA, set(), k
    for value in hashes:
        if value == 0 or value >= theta or value in accepted:
            continue
        accepted.add(value)
        if free:
            free -= 1
        else:
            theta = int(theta * (k / (k + 1.0)))
    return theta, sorted(v for v in accepted if v < theta)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 400), max_size=3000), st.lists(st.integers(0, 3000), max_size=6),
       st.integers(1, 64), st.booleans())
def test_alpha_sketch_equals_the_rule_applied_one_hash_at_a_time(
        values: list[int], cuts: list[int], k: int, zeros: bool) -> None:
    # Repeats within and across chunks, and zero hashes (value 0), through the vectorized
    # search for first arrivals and the theta schedule.
    hashes = [0 if zeros and v == 0 else (v + 1) * 0x9E3779B97F4A7C15 % MAX_THETA
              for v in values]
    sketch = AlphaSketch(k)
    for start, end in itertools.pairwise([0, *sorted(cuts), len(values)]):
        sketch.update(np.array(hashes[start:end], dtype=np.uint64))
    theta, kept = _alpha_one_by_one(hashes, k)
    result = sketch.result()
    assert (result.theta_long, result.hashes.tolist()) == (theta, kept)


def test_alpha_sketch_in_chunks_equals_javas_one_partition() -> None:
    # The Java-written estimation-mode blob of multi-blob-mixed.puffin (20,000 longs, one
    # partition, no union): rebuilt from 7 uneven chunks, byte for byte.
    values = [2**33 + i * 7 for i in range(20000)]
    hashes = hash_iceberg_values(IcebergType.parse("long"), values)
    sketch = AlphaSketch()
    for start, end in ((0, 1), (1, 4096), (4096, 4097), (4097, 9000), (9000, 9001),
                       (9001, 15000), (15000, 20000)):
        sketch.update(hashes[start:end])
    assert sketch.result().to_bytes() == alpha_sketch(hashes).to_bytes()
    assert sketch.result().retained == 4135


def test_summary_from_the_preamble_equals_the_library_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exact and estimation-mode sketches (over 120 entries) are summarized without
    DataSketches; every fact equals what the library reports, bounds to the last bit."""
    from puffin_cli.blobs.theta import handler
    from puffin_cli.blobs.theta.compact import read_header
    from puffin_cli.format.metadata import BlobMetadata

    meta = BlobMetadata("apache-datasketches-theta-v1", (1,), 1, 1, 4, 0,
                        properties={"ndv": "100"})
    for count, lg_k in [(0, 12), (100, 12), (4000, 12), (5000, 12), (200_000, 12), (600, 7),
                        (10_000, 9)]:
        sketch = datasketches.update_theta_sketch(lg_k=lg_k)
        for value in range(count):
            sketch.update(value * 7919)
        data = sketch.compact().serialize()
        quick = handler._summary_without_library(read_header(data), meta)
        assert quick is not None, count
        with monkeypatch.context() as patch:
            patch.setattr(handler, "_summary_without_library", lambda *_: None)
            assert handler.summarize_theta(data, meta) == quick, count
    few = datasketches.update_theta_sketch(lg_k=5)
    for value in range(100):
        few.update(value)
    assert few.compact().is_estimation_mode() and few.compact().num_retained <= 120
    assert handler._summary_without_library(read_header(few.compact().serialize()), meta) is None
