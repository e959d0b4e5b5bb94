"""validate never crashes, never hangs and never allocates what a length field claims.

Hypothesis mutates valid files (our own, with every codec and a compressed footer, plus the
samples written by Iceberg Java and Trino): bit flips, truncation, splicing two files,
and huge values written over length fields. Every case must give a report without an
``internal.error`` finding; truncations must fail.
"""

from __future__ import annotations

import atexit
import re
import shutil
import struct
import tempfile
import tracemalloc
from pathlib import Path

from helpers import SAMPLE_FILES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from puffin_cli.analysis.file_report import FileReport
from puffin_cli.analysis.profiles import PROFILES
from puffin_cli.analysis.validate import validate_file
from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector
from puffin_cli.blobs.theta import build_theta_blob
from puffin_cli.format import PuffinWriter
from puffin_cli.storage import FileIO

WORK = Path(tempfile.mkdtemp(prefix="puffin-validate-fuzz-"))
atexit.register(shutil.rmtree, WORK, True)
def fuzz(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
# Python-level allocations allowed for one small file, whatever its length fields claim.
ALLOCATION_LIMIT = 32 << 20


def _own_files() -> list[bytes]:
    from pyroaring import BitMap64

    theta, ndv = build_theta_blob("string", [f"v{i}" for i in range(300)])
    dv = BitMap64([*range(0, 5000, 3), 1 << 33, (1 << 33) + 7])
    out = []
    for compress_footer, codec in ((False, "zstd"), (True, "lz4"), (False, None)):
        path = WORK / f"own-{codec}-{compress_footer}.puffin"
        writer = PuffinWriter(path, compress_footer=compress_footer, overwrite=True)
        writer.add_blob("apache-datasketches-theta-v1", theta, fields=[1], codec=codec,
                        properties={"ndv": str(ndv)})
        writer.add_blob("deletion-vector-v1", encode_deletion_vector(dv), fields=[2147483645],
                        properties=dv_blob_properties("file:/data/a.parquet", len(dv)))
        writer.add_blob("x-opaque", b"opaque" * 20, fields=[3], codec=codec)
        writer.finish()
        out.append(path.read_bytes())
    return out


def _foreign_files() -> list[bytes]:
    return [p.read_bytes() for p in SAMPLE_FILES if p.stat().st_size < 64 << 10]


BASES = _own_files() + _foreign_files()
bases = st.sampled_from(BASES)


def check(data: bytes, profile: str = "spec") -> FileReport:
    path = WORK / "case.puffin"
    path.write_bytes(data)
    report = validate_file(path, profile=profile, fileio=FileIO())
    assert isinstance(report, FileReport)
    assert report.file_size == len(data)
    internal = [f for f in report.findings if f.code == "internal.error"]
    assert not internal, internal
    return report


def test_the_bases_are_valid() -> None:
    for data in BASES:
        assert check(data).errors == 0


@fuzz(1200)
@given(bases, st.lists(st.integers(min_value=0), min_size=1, max_size=8),
       st.sampled_from(PROFILES))
def test_bit_flips(data: bytes, positions: list[int], profile: str) -> None:
    mutated = bytearray(data)
    for p in positions:
        bit = p % (len(mutated) * 8)
        mutated[bit // 8] ^= 1 << (bit % 8)
    check(bytes(mutated), profile)


@fuzz(500)
@given(bases, st.data())
def test_truncation_fails(data: bytes, draw: st.DataObject) -> None:
    cut = draw.draw(st.integers(min_value=0, max_value=len(data) - 1))
    from_end = draw.draw(st.booleans())
    mutated = data[len(data) - cut:] if from_end and cut else data[:cut]
    assert check(mutated).errors > 0


@fuzz(500)
@given(bases, bases, st.data())
def test_splicing(first: bytes, second: bytes, draw: st.DataObject) -> None:
    head = draw.draw(st.integers(min_value=0, max_value=len(first)))
    tail = draw.draw(st.integers(min_value=0, max_value=len(second)))
    check(first[:head] + second[tail:])


_NUMBER = re.compile(rb'"(offset|length)":\s*\d+')
huge = st.sampled_from([2**31 - 1, 2**31, 2**32 - 1, 2**40, 2**62, 2**63 - 1, 2**64, 10**30])


@fuzz(400)
@given(bases, huge, st.data())
def test_huge_length_fields_allocate_nothing_big(data: bytes, value: int,
                                                 draw: st.DataObject) -> None:
    target = draw.draw(st.sampled_from(["json", "payload-size", "window"]))
    mutated = bytearray(data)
    if target == "json" and _NUMBER.search(data):
        matches = list(_NUMBER.finditer(data))
        m = matches[draw.draw(st.integers(0, len(matches) - 1))]
        replacement = b'"' + m.group(1) + b'":' + str(value).encode()
        mutated[m.start():m.end()] = replacement
        # Keep the footer's payload size consistent, so the JSON is what gets tested.
        old_size = struct.unpack_from("<i", data, len(data) - 12)[0]
        new_size = old_size + len(replacement) - (m.end() - m.start())
        struct.pack_into("<i", mutated, len(mutated) - 12, new_size)
    elif target == "payload-size":
        struct.pack_into("<I", mutated, len(mutated) - 12, value & 0xFFFFFFFF)
    else:  # any 4- or 8-byte window: DV length prefix, bitmap count, frame content size, ...
        width = draw.draw(st.sampled_from([4, 8]))
        at = draw.draw(st.integers(0, len(mutated) - width))
        order = draw.draw(st.sampled_from(["<", ">"]))
        fmt = f"{order}{'I' if width == 4 else 'Q'}"
        struct.pack_into(fmt, mutated, at, value % (1 << (8 * width)))
    tracemalloc.start()
    try:
        check(bytes(mutated))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < ALLOCATION_LIMIT
