"""Deletion vectors (deletion-vector-v1): decode, summary, positions, encode, checks."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zlib
from typing import Any

import numpy as np
import pytest
from helpers import SAMPLES
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from puffin_cli.blobs import SummaryOptions, handler_for
from puffin_cli.blobs.deletion_vector import (
    DV_MAGIC,
    HANDLER,
    bitmap_from_positions_file,
    bitmap_from_ranges,
    check_deletion_vector,
    count_ranges,
    decode_deletion_vector,
    dv_blob_properties,
    encode_deletion_vector,
    format_positions,
    iter_position_chunks,
    iter_ranges,
    parse_position_spec,
    write_positions_text,
)
from puffin_cli.blobs.deletion_vector.positions_text import _plain_numbers
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader

BASE = 100  # blob offset used for hand-built blobs: findings carry BASE + position in blob


def _dv_samples() -> list[tuple[str, int, dict[str, Any]]]:
    found = []
    for path in sorted((SAMPLES / "expected").glob("*.json")):
        expected = json.loads(path.read_text())
        for blob in expected["blobs"]:
            if "dv" in blob:
                found.append((expected["file"], blob["index"], blob))
    return found


DV_SAMPLES = _dv_samples()


def _read(file: str, index: int) -> tuple[bytes, BlobMetadata]:
    with PuffinReader(SAMPLES / file) as reader:
        meta = reader.metadata.blobs[index]
        return reader.read_blob(meta), meta


def _meta(length: int, **changes: Any) -> BlobMetadata:
    values: dict[str, Any] = dict(
        type="deletion-vector-v1", fields=(2147483645,), snapshot_id=-1, sequence_number=-1,
        offset=BASE, length=length, compression_codec=None,
        properties=dv_blob_properties("data.parquet", 0))
    values.update(changes)
    return BlobMetadata(**values)


def _blob(vector: bytes, *, prefix: int | None = None, magic: bytes = DV_MAGIC,
          crc: int | None = None) -> bytes:
    body = magic + vector
    length = len(body) if prefix is None else prefix
    checksum = zlib.crc32(body) if crc is None else crc
    return struct.pack(">I", length) + body + struct.pack(">I", checksum)


def _bitmap32(containers: list[tuple[int, int]], payload: bytes, *, cookie: int = 12346,
              run_flags: bytes = b"") -> bytes:
    """A 32-bit portable bitmap from (high16, cardinality) headers and container payloads."""
    n = len(containers)
    if cookie == 12346:
        head = struct.pack("<II", cookie, n)
    else:
        head = struct.pack("<I", cookie | (n - 1) << 16) + run_flags
    head += b"".join(struct.pack("<HH", h, c - 1) for h, c in containers)
    if cookie == 12346 or n >= 4:
        head += b"\0" * 4 * n  # offsets are not read
    return head + payload


def _vector(*bitmaps: tuple[int, bytes]) -> bytes:
    return struct.pack("<Q", len(bitmaps)) + b"".join(
        struct.pack("<I", key) + body for key, body in bitmaps)


ARRAY_0_2_4 = _bitmap32([(0, 3)], struct.pack("<3H", 0, 2, 4))


def _decode_error(blob: bytes) -> PuffinError:
    with pytest.raises(PuffinError) as info:
        decode_deletion_vector(blob, BASE)
    return info.value


# ------------------------------------------------------- samples by Iceberg Java and Trino


def test_samples_are_present_and_handler_is_registered() -> None:
    assert len(DV_SAMPLES) == 4
    assert handler_for("deletion-vector-v1") is HANDLER


@pytest.mark.parametrize(("file", "index", "expected"), DV_SAMPLES,
                         ids=[f"{f}#{i}" for f, i, _ in DV_SAMPLES])
def test_sample_decodes_as_iceberg_java_reads_it(file: str, index: int,
                                                 expected: dict[str, Any]) -> None:
    data, meta = _read(file, index)
    want = expected["dv"]
    dv = decode_deletion_vector(data, meta.offset)
    assert dv.cardinality == want["cardinality"] == len(dv.bitmap)
    assert dv.length_prefix == want["length_prefix_be"]
    assert dv.crc == want["crc32_be"]
    first = next(iter_position_chunks(dv, chunk=1)).tolist()
    chunks = list(iter_position_chunks(dv, chunk=64))
    everything = np.concatenate(chunks).tolist()
    assert everything[:len(want["first_positions"])] == want["first_positions"]
    assert first == everything[:len(first)]
    assert everything[-1] == want["last_position"]
    out = io.BytesIO()
    assert write_positions_text(dv, out) == want["positions_count"]
    assert hashlib.sha256(out.getvalue()).hexdigest() == want["positions_sha256"]
    layout = [{"key": b.key, "cookie": b.cookie, "serialized_bytes": b.serialized_bytes,
               "cardinality": b.cardinality,
               "containers": [{"high16": c.high16, "kind": c.kind, "cardinality": c.cardinality}
                              for c in b.containers]} for b in dv.bitmaps]
    assert layout == want["bitmaps"]
    summary = HANDLER.summarize(data, meta, SummaryOptions(limit=3))
    assert summary.kind == "deletion-vector"
    assert (summary.array_containers, summary.bitmap_containers, summary.run_containers) == (
        want["container_totals"]["array"], want["container_totals"]["bitmap"],
        want["container_totals"]["run"])
    assert summary.bitmaps == want["bitmap_count"]
    assert summary.referenced_data_file == want["referenced_data_file"]
    assert summary.cardinality_property == int(want["cardinality_property"])
    assert summary.cardinality_matches is True
    assert summary.min == everything[0] and summary.max == everything[-1]
    assert HANDLER.check(data, meta) == []


@pytest.mark.parametrize(("file", "index"), [(f, i) for f, i, _ in DV_SAMPLES])
def test_sample_reencodes_byte_for_byte(file: str, index: int) -> None:
    data, meta = _read(file, index)
    assert encode_deletion_vector(decode_deletion_vector(data, meta.offset).bitmap) == data


def test_sample_ranges() -> None:
    data, meta = _read("iceberg-java/dv-64bit.puffin", 0)
    summary = HANDLER.summarize(data, meta, SummaryOptions(limit=4))
    assert summary.ranges == ((0, 2), (65535, 65540), (4294967295, 4294967297),
                              (8589934692, 8589934791))
    assert summary.ranges_total == 5
    assert summary.truncated is True


# ---------------------------------------------------------------------------- malformed bytes


def test_too_short() -> None:
    error = _decode_error(b"\0" * 19)
    assert (error.code, error.offset) == ("dv.length", BASE)
    assert error.message == ("deletion vector blob is 19 bytes, shorter than the 20-byte "
                             "minimum (length, magic, bitmap count, CRC)")


def test_length_prefix() -> None:
    error = _decode_error(_blob(_vector((0, ARRAY_0_2_4)), prefix=7))
    assert (error.code, error.offset) == ("dv.length", BASE)
    assert error.message == "length prefix is 7, expected 38 (blob length 46 minus 8)"


def test_magic() -> None:
    error = _decode_error(_blob(_vector(), magic=b"\xd1\xd3\x39\x65"))
    assert (error.code, error.offset) == ("dv.magic", BASE + 4)
    assert error.message == "magic is d1d33965, expected d1d33964"


def test_crc() -> None:
    error = _decode_error(_blob(_vector(), crc=0x12345678))
    assert (error.code, error.offset) == ("dv.crc", BASE + 16)
    assert error.message == (f"CRC-32 is 0x12345678, computed "
                             f"{zlib.crc32(DV_MAGIC + bytes(8)):#010x} over blob bytes 4..15")


def test_bitmap_count_too_large() -> None:
    error = _decode_error(_blob(struct.pack("<Q", 2**40) + bytes(12)))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8)
    assert error.message == ("bitmap count is 1099511627776, but the 12 bytes that follow hold "
                             "at most 1 bitmaps")


def test_truncated_offsets() -> None:
    vector = _vector((0, struct.pack("<II", 12346, 1) + struct.pack("<HH", 0, 0)))
    error = _decode_error(_blob(vector))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 24)
    assert error.message == ("bitmap key 0 container offsets needs 4 bytes, only 0 left before "
                             "the CRC")


def test_unknown_cookie() -> None:
    error = _decode_error(_blob(_vector((0, struct.pack("<II", 12345, 0)))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 20)
    assert error.message == ("bitmap key 0 cookie is 12345, expected 12346 or 12347 in the low "
                             "16 bits")


def test_too_many_containers() -> None:
    error = _decode_error(_blob(_vector((0, struct.pack("<II", 12346, 65537)))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 24)
    assert error.message == "bitmap key 0 has 65537 containers, at most 65536 fit in 32 bits"


def test_container_keys_not_ascending() -> None:
    body = _bitmap32([(5, 1), (5, 1)], struct.pack("<2H", 1, 2))
    error = _decode_error(_blob(_vector((0, body))))
    assert error.code == "dv.vector"
    assert error.message == ("bitmap key 0 container 5 follows container 5: container keys must "
                             "be strictly ascending")


def test_array_not_ascending() -> None:
    error = _decode_error(_blob(_vector((0, _bitmap32([(0, 3)], struct.pack("<3H", 0, 4, 2))))))
    assert error.code == "dv.vector"
    assert error.message == "bitmap key 0 container 0 array of 3 values is not strictly ascending"


def test_bitmap_cardinality_mismatch() -> None:
    bits = b"\xff" * 600 + bytes(8192 - 600)  # 4800 positions
    error = _decode_error(_blob(_vector((0, _bitmap32([(0, 5000)], bits)))))
    assert error.code == "dv.vector"
    assert error.message == ("bitmap key 0 container 0 header says 5000 positions, its bitmap "
                             "holds 4800")


def test_run_overlap() -> None:
    runs = struct.pack("<5H", 2, 10, 5, 12, 1)  # 10..15 then 12..13
    body = _bitmap32([(0, 8)], runs, cookie=12347, run_flags=b"\x01")
    error = _decode_error(_blob(_vector((0, body))))
    assert error.code == "dv.vector"
    assert error.message == ("bitmap key 0 container 0 has runs that overlap, are out of order "
                             "or pass 65535")


def test_run_cardinality_mismatch() -> None:
    body = _bitmap32([(0, 9)], struct.pack("<3H", 1, 10, 5), cookie=12347, run_flags=b"\x01")
    error = _decode_error(_blob(_vector((0, body))))
    assert error.code == "dv.vector"
    assert error.message == "bitmap key 0 container 0 header says 9 positions, its runs hold 6"


def test_touching_runs() -> None:
    # 10..15 then 16..17: Roaring keeps such runs as one (CRoaring rejects the bitmap)
    runs = struct.pack("<5H", 2, 10, 5, 16, 1)
    body = _bitmap32([(0, 8)], runs, cookie=12347, run_flags=b"\x01")
    blob = _blob(_vector((0, body)))
    error = _decode_error(blob)
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 8 + 4 + 9)
    assert error.message == ("bitmap key 0 container 0 has a run ending at 15 and the next "
                             "starting at 16: runs that touch must be one run")
    [finding] = check_deletion_vector(blob, _meta(len(blob),
                                                  properties=dv_blob_properties("d", 8)))
    assert (finding.code, finding.message, finding.offset) == (
        error.code, error.message, error.offset)
    # Reported only when nothing else is wrong, as CRoaring's rejection would be.
    body = _bitmap32([(0, 8), (1, 2)], runs + struct.pack("<2H", 7, 7), cookie=12347,
                     run_flags=b"\x01")
    error = _decode_error(_blob(_vector((0, body))))
    assert error.message == "bitmap key 0 container 1 array of 2 values is not strictly ascending"


def test_truncated_run_count() -> None:
    body = _bitmap32([(0, 1)], b"", cookie=12347, run_flags=b"\x01")
    error = _decode_error(_blob(_vector((0, body))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 8 + 4 + 9)
    assert error.message == ("bitmap key 0 container 0 run count needs 2 bytes, only 0 left "
                             "before the CRC")


def test_bad_array_after_arrays_at_an_odd_offset() -> None:
    # One byte of run flags puts every payload at an odd offset. The second array may start
    # below the first one's last value; the third one is not ascending.
    payload = struct.pack("<7H", 5, 9, 1, 2, 4, 4, 7)
    body = _bitmap32([(0, 2), (1, 2), (2, 3)], payload, cookie=12347, run_flags=b"\x00")
    error = _decode_error(_blob(_vector((0, body))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 8 + 4 + 17 + 8)
    assert error.message == "bitmap key 0 container 2 array of 3 values is not strictly ascending"


def test_first_bad_container_is_reported() -> None:
    bits = b"\xff" * 600 + bytes(8192 - 600)  # 4800 positions
    payload = struct.pack("<2H", 1, 2) + bits + struct.pack("<3H", 3, 2, 1)
    body = _bitmap32([(0, 2), (1, 5000), (2, 3)], payload, cookie=12347, run_flags=b"\x00")
    error = _decode_error(_blob(_vector((0, body))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 8 + 4 + 17 + 4)
    assert error.message == ("bitmap key 0 container 1 header says 5000 positions, its bitmap "
                             "holds 4800")
    # A key out of order is found before that container's contents are read.
    body = _bitmap32([(0, 2), (0, 5000), (2, 3)], payload, cookie=12347, run_flags=b"\x00")
    error = _decode_error(_blob(_vector((0, body))))
    assert (error.code, error.offset) == ("dv.vector", BASE + 8 + 8 + 4 + 17 + 4)
    assert error.message == ("bitmap key 0 container 0 follows container 0: container keys must "
                             "be strictly ascending")


def test_keys_not_ascending() -> None:
    error = _decode_error(_blob(_vector((3, ARRAY_0_2_4), (3, ARRAY_0_2_4))))
    assert (error.code, error.offset) == ("dv.keys-order", BASE + 8 + 8 + 26)
    assert error.message == "bitmap key 3 follows key 3: keys must be strictly ascending"


def test_top_bit() -> None:
    error = _decode_error(_blob(_vector((0x80000000, ARRAY_0_2_4))))
    assert (error.code, error.offset) == ("dv.top-bit", BASE + 16)
    assert error.message == ("bitmap key 0x80000000 has the top bit set: its positions "
                             "(9223372036854775808 and up) are negative as signed 64-bit")


def test_trailing_bytes() -> None:
    error = _decode_error(_blob(_vector((0, ARRAY_0_2_4)) + b"\0\0"))
    assert (error.code, error.offset) == ("dv.trailing", BASE + 8 + 34)
    assert error.message == "2 bytes left after the last bitmap, before the CRC"


def test_key_above_java_limit_decodes_with_a_warning() -> None:
    blob = _blob(_vector((0x7FFFFFFF, ARRAY_0_2_4)))
    dv = decode_deletion_vector(blob, BASE)
    assert list(dv.bitmap) == [0x7FFFFFFF << 32, (0x7FFFFFFF << 32) + 2, (0x7FFFFFFF << 32) + 4]
    meta = _meta(len(blob), properties=dv_blob_properties("d.parquet", 3))
    [finding] = check_deletion_vector(blob, meta)
    assert (finding.code, finding.severity, finding.offset) == (
        "dv.key-above-java-limit", Severity.WARNING, BASE + 16)
    assert finding.message == "bitmap key 0x7fffffff is above 0x7ffffffe: Iceberg Java rejects it"


def test_check_reports_every_envelope_problem_and_never_raises() -> None:
    blob = _blob(_vector((0, ARRAY_0_2_4)), prefix=1, magic=b"XXXX", crc=0)
    findings = check_deletion_vector(blob, _meta(len(blob),
                                                 properties=dv_blob_properties("d", 3)))
    assert [f.code for f in findings] == ["dv.length", "dv.magic", "dv.crc"]
    assert check_deletion_vector(b"", _meta(0))[0].code == "dv.length"


def test_check_metadata_rules() -> None:
    blob = encode_deletion_vector(bitmap_from_ranges([(0, 0), (2, 2), (4, 4)]))
    meta = _meta(len(blob), snapshot_id=7, sequence_number=3, fields=(1,),
                 compression_codec="zstd", properties={})
    findings = check_deletion_vector(blob, meta)
    assert [(f.code, f.severity, f.message) for f in findings] == [
        ("dv.cardinality", Severity.ERROR, "blob has no 'cardinality' property"),
        ("dv.referenced-data-file", Severity.ERROR,
         "blob has no 'referenced-data-file' property"),
        ("dv.compressed", Severity.ERROR,
         "deletion vector is compressed with 'zstd'; it must be stored as is"),
        ("dv.snapshot-id", Severity.ERROR, "snapshot-id is 7, expected -1"),
        ("dv.sequence-number", Severity.ERROR, "sequence-number is 3, expected -1"),
        ("dv.fields", Severity.INFO, "fields is [1]; Iceberg Java writes [2147483645] (the _pos "
         "column), but the spec sets no rule for a deletion vector's fields and Java's reader "
         "ignores them"),
    ]


@pytest.mark.parametrize(("value", "message"), [
    ("4", "'cardinality' property is 4, the bitmap holds 3 positions"),
    ("three", "'cardinality' property 'three' is not a non-negative integer"),
])
def test_check_cardinality_property(value: str, message: str) -> None:
    blob = encode_deletion_vector(bitmap_from_ranges([(0, 0), (2, 2), (4, 4)]))
    meta = _meta(len(blob), properties={"referenced-data-file": "d", "cardinality": value})
    [finding] = check_deletion_vector(blob, meta)
    assert (finding.code, finding.severity, finding.message) == (
        "dv.cardinality", Severity.ERROR, message)
    summary = HANDLER.summarize(blob, meta, SummaryOptions())
    assert summary.cardinality_matches is False


# ---------------------------------------------------------------------------- encoding


def _kinds(blob: bytes) -> list[tuple[int, str]]:
    return [(b.key << 16 | c.high16, c.kind) for b in decode_deletion_vector(blob).bitmaps
            for c in b.containers]


def test_container_kinds_follow_iceberg_java_run_optimize() -> None:
    # 3 positions in one run: a run container (6 bytes) is not smaller than the array (6)
    assert _kinds(encode_deletion_vector(bitmap_from_ranges([(0, 2)]))) == [(0, "array")]
    assert _kinds(encode_deletion_vector(bitmap_from_ranges([(0, 3)]))) == [(0, "run")]
    sparse = [(i, i) for i in range(0, 20_000, 2)]  # 10,000 positions, 10,000 runs
    assert _kinds(encode_deletion_vector(bitmap_from_ranges(sparse))) == [(0, "bitmap")]
    long_run = bitmap_from_ranges([(0, 9999), (70_000, 70_001)])
    assert _kinds(encode_deletion_vector(long_run)) == [(0, "run"), (1, "array")]


def test_dense_key_layout_like_java() -> None:
    blob = encode_deletion_vector(bitmap_from_ranges([(3 << 32, 3 << 32)]))
    dv = decode_deletion_vector(blob)
    assert [(b.key, b.cardinality, b.serialized_bytes) for b in dv.bitmaps] == [
        (0, 0, 8), (1, 0, 8), (2, 0, 8), (3, 1, 18)]
    far = decode_deletion_vector(encode_deletion_vector(bitmap_from_ranges([(1 << 60, 1 << 60)])))
    assert [b.key for b in far.bitmaps] == [1 << 28]


def test_empty_bitmap() -> None:
    blob = encode_deletion_vector(BitMap64())
    assert blob == _blob(bytes(8))
    summary = HANDLER.summarize(blob, _meta(len(blob)),
                                                          SummaryOptions())
    assert (summary.cardinality, summary.min, summary.max, summary.ranges,
            summary.ranges_total) == (0, None, None, (), 0)


def test_encode_refuses_negative_positions() -> None:
    with pytest.raises(PuffinError) as info:
        encode_deletion_vector(BitMap64([1 << 63]))
    assert info.value.code == "dv.top-bit"
    assert info.value.message == ("position 9223372036854775808 is above 2^63-1: deletion "
                                  "vector positions are non-negative 64-bit")


def test_largest_position_round_trips() -> None:
    bitmap = bitmap_from_ranges([(2**63 - 5, 2**63 - 1)])
    assert decode_deletion_vector(encode_deletion_vector(bitmap)).bitmap == bitmap


def test_properties() -> None:
    assert dv_blob_properties("s3://b/f.parquet", 12) == {
        "referenced-data-file": "s3://b/f.parquet", "cardinality": "12"}


# ---------------------------------------------------------------------------- position input


def test_parse_position_spec() -> None:
    assert parse_position_spec("0,2,4,10-20") == [(0, 0), (2, 2), (4, 4), (10, 20)]
    assert parse_position_spec(" 7 - 9 ") == [(7, 9)]


@pytest.mark.parametrize(("spec", "message"), [
    ("1,x", "position list item 2: 'x' is not a position or a range START-END"),
    ("1,,2", "position list item 2: '' is not a position or a range START-END"),
    ("-3", "position list item 1: '-3' is not a position or a range START-END"),
    ("9-3", "position list item 1: range 9-3 ends before it starts"),
    ("9223372036854775808",
     "position list item 1: position 9223372036854775808 is above 2^63-1 (9223372036854775807)"),
])
def test_parse_position_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(PuffinError) as info:
        parse_position_spec(spec)
    assert (info.value.code, info.value.message) == ("dv.positions", message)


def test_bitmap_from_ranges_rejects_bad_ranges() -> None:
    with pytest.raises(PuffinError) as info:
        bitmap_from_ranges([(5, 4)])
    assert info.value.message == "range 5-4 is not within 0..2^63-1 in ascending order"


def test_positions_file_fast_and_slow_paths() -> None:
    numbers = b"".join(b"%d\n" % i for i in range(0, 3000, 3))
    mixed = b"5\n\n10-20\n" + b"4294967296\n"
    for block in (7, 1 << 22):
        assert list(bitmap_from_positions_file(io.BytesIO(numbers), block)) == list(
            range(0, 3000, 3))
        assert list(bitmap_from_positions_file(io.BytesIO(mixed + b"30"), block)) == [
            5, *range(10, 21), 30, 4294967296]


def test_positions_file_error_names_the_line() -> None:
    text = b"".join(b"%d\n" % i for i in range(100)) + b"12a\n"
    with pytest.raises(PuffinError) as info:
        bitmap_from_positions_file(io.BytesIO(text), 64)
    assert info.value.message == "line 101: '12a' is not a position or a range START-END"
    with pytest.raises(PuffinError) as info:
        bitmap_from_positions_file(io.BytesIO(b"1\n9223372036854775808\n"))
    assert info.value.message == ("line 2: position 9223372036854775808 is above 2^63-1 "
                                  "(9223372036854775807)")


def test_format_positions_edges() -> None:
    values = [0, 1, 9, 10, 99, 100, 9999, 10000, 12345678, 2**32, 10**18, 2**63 - 1]
    text = format_positions(np.array(values, dtype=np.uint64))
    assert text == "".join(f"{v}\n" for v in values).encode()
    assert format_positions(np.array([], dtype=np.uint64)) == b""


# ---------------------------------------------------------------------------- round trips

# Starts near container (2^16) and bitmap (2^32) boundaries, lengths up to a container.
_ranges = st.lists(
    st.tuples(st.one_of(st.integers(0, 200_000), st.integers(2**32 - 70_000, 2**32 + 70_000),
                        st.integers(0, 2**63 - 1)),
              st.one_of(st.integers(0, 20), st.integers(0, 70_000))),
    max_size=4)


@settings(max_examples=40, deadline=None)
@given(_ranges, st.lists(st.integers(0, 2**40), max_size=50))
def test_round_trip(ranges: list[tuple[int, int]], singles: list[int]) -> None:
    spans = [(s, min(s + n, 2**63 - 1)) for s, n in ranges] + [(p, p) for p in singles]
    bitmap = bitmap_from_ranges(spans)
    blob = encode_deletion_vector(bitmap)
    dv = decode_deletion_vector(blob)
    assert dv.bitmap == bitmap
    assert encode_deletion_vector(dv.bitmap) == blob
    meta = _meta(len(blob), properties=dv_blob_properties("d", len(bitmap)))
    findings = check_deletion_vector(blob, meta)
    above_java = len(bitmap) > 0 and bitmap.max() >> 32 > 0x7FFFFFFE
    assert [f.code for f in findings] == (["dv.key-above-java-limit"] if above_java else [])
    positions = sorted(set().union(*(range(s, e + 1) for s, e in spans))) if spans else []
    expected_ranges: list[tuple[int, int]] = []
    for p in positions:
        if expected_ranges and expected_ranges[-1][1] + 1 == p:
            expected_ranges[-1] = (expected_ranges[-1][0], p)
        else:
            expected_ranges.append((p, p))
    assert list(iter_ranges(dv)) == expected_ranges
    assert count_ranges(dv) == len(expected_ranges)
    out = io.BytesIO()
    assert write_positions_text(dv, out, chunk=1000) == len(positions)
    assert out.getvalue() == "".join(f"{p}\n" for p in positions).encode()


# ---------------------------------------------------------------------------- bulk position parsing

_MAX = 2**63 - 1
# A line of a positions file: a number (small, near 2^32, near 2^63-1), maybe with leading zeros
# (up to 19 characters, the bulk parser's limit), or blank.
_number_line = st.one_of(
    st.tuples(st.one_of(st.integers(0, 10**6), st.integers(2**32 - 5, 2**32 + 5),
                        st.integers(_MAX - 10**6, _MAX), st.integers(0, _MAX)),
              st.integers(0, 18)).map(lambda t: f"{t[0]:0{min(len(str(t[0])) + t[1], 19)}d}"),
    st.just(""))


def _text(lines: list[str], newline: str, final: bool) -> bytes:
    return (newline.join(lines) + (newline if final else "")).encode()


@settings(max_examples=150, deadline=None)
@given(st.lists(_number_line, min_size=1, max_size=60), st.sampled_from(["\n", "\r\n"]),
       st.booleans(), st.integers(1, 48))
def test_bulk_and_exact_paths_give_the_same_bitmap(lines: list[str], newline: str, final: bool,
                                                   block: int) -> None:
    text = _text(lines, newline, final)
    assume(text)
    expected = BitMap64(int(line) for line in lines if line)
    bulk = _plain_numbers(text)
    assert bulk is not None  # the whole text is one bulk block
    assert (list(bulk[0]), bulk[1]) == ([int(line) for line in lines if line],
                                        len(lines) - (not final and not lines[-1]))
    # A space after each number sends every block down the exact path.
    exact = _text([f"{line} " if line else "" for line in lines], newline, final)
    assert _plain_numbers(exact) is None or not any(lines)
    for size in (block, 1 << 20):
        assert bitmap_from_positions_file(io.BytesIO(text), size) == expected
        assert bitmap_from_positions_file(io.BytesIO(exact), size) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(_number_line, min_size=1, max_size=60), st.data(),
       st.sampled_from(["12a", "1 2", "-3", "5-1", "9223372036854775808", "+4", "7\r8"]),
       st.integers(1, 48))
def test_bad_line_inside_a_bulk_block_names_its_line(lines: list[str], data: st.DataObject,
                                                     bad: str, block: int) -> None:
    at = data.draw(st.integers(0, len(lines)))
    text = _text([*lines[:at], bad, *lines[at:]], "\n", True)
    expected = {"12a": "'12a' is not a position or a range START-END",
                "1 2": "'1 2' is not a position or a range START-END",
                "-3": "'-3' is not a position or a range START-END",
                "5-1": "range 5-1 ends before it starts",
                "9223372036854775808": "position 9223372036854775808 is above 2^63-1 "
                                       "(9223372036854775807)",
                "+4": "'+4' is not a position or a range START-END",
                "7\r8": "'7' is not a position or a range START-END"}[bad]
    for size in (block, 1 << 20):
        if bad == "7\r8":  # a lone CR ends a line, as str.splitlines does: two positions
            assert set(bitmap_from_positions_file(io.BytesIO(text), size)) == {
                7, 8, *(int(line) for line in lines if line)}
            continue
        with pytest.raises(PuffinError) as info:
            bitmap_from_positions_file(io.BytesIO(text), size)
        assert (info.value.code, info.value.message) == ("dv.positions",
                                                         f"line {at + 1}: {expected}")


@pytest.mark.parametrize(("text", "positions", "lines"), [
    (b"10\n11\n12\n", [10, 11, 12], 3),  # one length: strided words
    (b"1\n\n22\n", [1, 22], 3),  # as long as three 1-digit lines, but not
    (b"\n\n", [], 2),
    (b"7", [7], 1),
    (b"0000000000000000009\n9223372036854775807\n", [9, 2**63 - 1], 2),
    (b"99999999\n100000000\n1234567890123456\n12345678901234567\n",
     [99999999, 100000000, 1234567890123456, 12345678901234567], 4),
])
def test_plain_numbers(text: bytes, positions: list[int], lines: int) -> None:
    parsed = _plain_numbers(text)
    assert parsed is not None
    assert (list(parsed[0]), parsed[1]) == (positions, lines)


@pytest.mark.parametrize("text", [
    b"00000000000000000009\n",  # 20 characters: longer than any position
    b"9223372036854775808\n",  # above 2^63-1
    b"9999999999999999999\n",
    b"5\r6\n",  # a lone CR
    b"5\r",
    b"1 2\n",
    b"1-2\n",
    b"\xd9\xa3\n",  # ARABIC-INDIC DIGIT THREE: a digit to the exact path only
])
def test_plain_numbers_leaves_other_blocks_to_the_exact_path(text: bytes) -> None:
    assert _plain_numbers(text) is None


def test_positions_file_long_zero_padded_and_unicode_digits() -> None:
    text = b"00000000000000000009\n" + "\u0663\n".encode() + b"4294967296\n1\n"
    assert list(bitmap_from_positions_file(io.BytesIO(text), 8)) == [1, 3, 9, 2**32]


def test_positions_file_moves_32_bit_positions_over_in_several_folds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("puffin_cli.blobs.deletion_vector.positions_text._FOLD_POSITIONS", 3)
    numbers = [*range(0, 40, 3), 2**32 + 1, 2**40, *range(100, 140, 7), 2**32 - 1]
    text = b"".join(b"%d\n" % n for n in numbers) + b"50-60\n" + b"7\n8\n9\n"
    expected = {*numbers, *range(50, 61), 7, 8, 9}
    for block in (4, 9, 1 << 20):
        assert set(bitmap_from_positions_file(io.BytesIO(text), block)) == expected
