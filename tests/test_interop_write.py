"""Interop tier, both directions, against Iceberg Java 1.10.2 itself (tests/interop/).

1. puffin-cli -> Java: every kind of file ``puffin write`` produces (driven through the CLI) is
   read by Iceberg Java's ``PuffinReader`` / ``PositionDeleteIndex`` / DataSketches with the
   metadata, bytes, positions and sketches we meant to write; Theta sketches equal, byte for
   byte, the ones Java builds from the same serialized values (``ThetaSketchAgg``, one
   partition); files of raw payloads and deletion vectors equal, byte for byte, what Iceberg's
   ``PuffinWriter`` writes from the same inputs.
2. Java -> puffin-cli: files written by Iceberg's ``PuffinWriter`` and ``BaseDVFileWriter``
   (random blob sets, codecs, DVs, Java-built sketches) are read by puffin-cli (``inspect_file``,
   the decoders, ``dump-blob --format positions``) exactly as Java reads them.

All randomness is seeded. The Java oracle is one JVM for the session; if it cannot be built
the tier errors (never skips).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import random
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from interop.fixtures import java_oracle_fixture  # noqa: F401  (fixture `java_oracle`)
from interop.oracle import JavaOracle

from puffin_cli import CREATED_BY
from puffin_cli.analysis.inspection import FileReport, inspect_file
from puffin_cli.blobs.deletion_vector import DeletionVectorSummary, decode_deletion_vector
from puffin_cli.blobs.iceberg_values import IcebergType, parse_value, serialize_values
from puffin_cli.blobs.opaque import OpaqueSummary
from puffin_cli.blobs.theta import ThetaSummary, decode_theta
from puffin_cli.cli.main import cli
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DV_BLOB_TYPE, ROW_POSITION_FIELD_ID, THETA_BLOB_TYPE
from puffin_cli.storage import FileIO

META_KEYS = ("type", "fields", "snapshot-id", "sequence-number", "offset", "length",
             "compression-codec", "properties")
UNICODE = "ünï€ode 中文 🦆 \"q\" \\ tab\t nl\n nul\x00 \u2028"
KEY = 1 << 32  # positions per 64-bit Roaring key


# --------------------------------------------------------------------------------------------
# Helpers


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def positions_text(positions: np.ndarray[Any, Any]) -> bytes:
    """Positions ascending, one decimal per line: what the oracle hashes (independent of
    puffin-cli's own formatter)."""
    return "".join(f"{p}\n" for p in positions.tolist()).encode("ascii")


def expected_positions(ranges: Iterable[tuple[int, int]],
                       points: Iterable[int] | np.ndarray[Any, Any] = ()) -> np.ndarray[Any, Any]:
    """The distinct positions of inclusive ``ranges`` and ``points``, ascending (uint64)."""
    parts = [np.arange(s, e + 1, dtype=np.uint64) for s, e in ranges]
    parts.append(np.asarray(points if isinstance(points, np.ndarray) else list(points),
                            dtype=np.uint64))
    positions = np.sort(np.concatenate(parts))
    return positions[np.concatenate(([True], positions[1:] != positions[:-1]))]


def puffin(*args: str) -> bytes:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def puffin_write(out: Path, *args: str, spec: dict[str, Any] | None = None) -> Path:
    extra: list[str] = []
    if spec is not None:
        spec_path = out.with_suffix(".spec.json")
        spec_path.write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
        extra = ["--spec", str(spec_path)]
    puffin("write", str(out), *extra, *args)
    return out


def java_meta(blob: dict[str, Any]) -> dict[str, Any]:
    return {k: blob[k] for k in META_KEYS}


def our_meta(report: FileReport, index: int) -> dict[str, Any]:
    m = report.blobs[index].metadata
    return {"type": m.type, "fields": list(m.fields), "snapshot-id": m.snapshot_id,
            "sequence-number": m.sequence_number, "offset": m.offset, "length": m.length,
            "compression-codec": m.compression_codec, "properties": dict(m.properties)}


def hashes_sha256(data: bytes) -> str:
    """SHA-256 of the retained hashes ascending, as decimal lines (the oracle's form)."""
    hashes = sorted(int(h) for h in decode_theta(data))
    return sha256("".join(f"{h}\n" for h in hashes).encode("ascii"))


def assert_reads_like_java(path: Path, java: dict[str, Any]) -> FileReport:
    """puffin-cli reads ``path`` exactly as Iceberg Java did (``java`` = oracle.read(path)):
    footer, file properties, each blob's metadata and decompressed bytes, every DV position
    (through ``dump-blob --format positions``), every sketch figure."""
    assert java["java_accepted"], java["java_errors"]
    report = inspect_file(path, limit=3, fileio=FileIO())
    assert report.ok, [b.error for b in report.blobs]
    footer = java["footer"]
    assert (report.file_size, report.footer.payload_size, report.footer.footer_size,
            report.footer.footer_start, list(report.footer.flags), report.footer.compressed) == \
        (java["file_size"], footer["payload_size"], footer["footer_size"],
         footer["footer_start"], footer["flags_bytes"], footer["footer_payload_compressed"])
    assert report.properties == java["properties"]
    assert len(report.blobs) == len(java["blobs"])
    with PuffinReader(path) as reader:
        for index, theirs in enumerate(java["blobs"]):
            assert our_meta(report, index) == java_meta(theirs), index
            data = reader.read_blob(report.blobs[index].metadata)
            assert (len(data), sha256(data)) == \
                (theirs["decompressed_length"], theirs["decompressed_sha256"]), index
            summary = report.blobs[index].summary
            if theirs["type"] == THETA_BLOB_TYPE:
                assert isinstance(summary, ThetaSummary)
                assert_theta_like_java(summary, data, theirs["theta"])
            elif theirs["type"] == DV_BLOB_TYPE:
                assert isinstance(summary, DeletionVectorSummary)
                dv = theirs["dv"]
                assert summary.cardinality == dv["cardinality"] == dv["positions_count"]
                assert summary.cardinality_property == int(dv["cardinality_property"])
                assert summary.referenced_data_file == dv["referenced_data_file"]
                assert (summary.min, summary.max) == (dv["first_positions"][0],
                                                      dv["last_position"])
                ours = decode_deletion_vector(data, theirs["offset"])
                assert (ours.length_prefix, ours.crc, len(ours.bitmaps)) == \
                    (dv["length_prefix_be"], dv["crc32_be"], dv["bitmap_count"])
                text = puffin("dump-blob", str(path), str(index), "--as", "positions")
                assert text.split(b"\n", 20)[:len(dv["first_positions"])] == \
                    [str(p).encode() for p in dv["first_positions"]]
                assert sha256(text) == dv["positions_sha256"], index
            else:
                assert isinstance(summary, OpaqueSummary)
    return report


def assert_theta_like_java(summary: ThetaSummary, data: bytes, java: dict[str, Any]) -> None:
    assert (summary.estimate, summary.lower_bound, summary.upper_bound) == \
        (java["estimate"], java["lower_bound_2sd"], java["upper_bound_2sd"])
    assert int(summary.estimate) == java["estimate_long"]
    assert (summary.retained_entries, summary.theta, summary.theta_long) == \
        (java["retained_entries"], java["theta"], java["theta_long"])
    assert (summary.exact, summary.empty, summary.ordered) == \
        (not java["is_estimation_mode"], java["is_empty"], java["is_ordered"])
    assert (summary.serial_version, summary.seed_hash) == \
        (java["serial_version"], java["seed_hash"])
    assert summary.ndv_property == java["ndv_property"]
    if java["ndv_property"] is not None:
        assert summary.ndv_property_matches is java["ndv_property_equals_long_estimate"]
    assert hashes_sha256(data) == java["hashes_sha256"]


def java_theta_facts(facts: dict[str, Any]) -> dict[str, Any]:
    """Sketch figures of an oracle ``theta`` object, without those of the blob's properties."""
    return {k: v for k, v in facts.items() if not k.startswith("ndv_property")}


# --------------------------------------------------------------------------------------------
# 1. puffin-cli -> Java: deletion vectors


def _random_dv(rng: random.Random, max_key: int) -> tuple[list[Any], np.ndarray[Any, Any]]:
    """A spec ``positions`` list (ints, "A-B" strings, [A, B] pairs, inclusive) and its
    positions: sparse points, short and long runs, a dense patch; some above 2^32."""
    base = rng.choice([0, 0, rng.randint(1, max_key) * KEY + rng.randint(0, KEY - 70_000)])
    items: list[Any] = []
    ranges: list[tuple[int, int]] = []
    points: list[int] = []
    for _ in range(rng.randint(1, 12)):
        kind = rng.random()
        start = base + rng.randint(0, 3_000_000)
        if kind < 0.4:
            points.append(start)
            items.append(start)
        elif kind < 0.8:
            end = start + rng.choice([1, 2, 100, 4095, 4096, 70_000])
            ranges.append((start, end))
            items.append(f"{start}-{end}" if rng.random() < 0.5 else [start, end])
        else:  # dense: about half of 10,000 positions
            dense = [start + i for i in range(10_000) if rng.random() < 0.5]
            points.extend(dense)
            items.extend(dense)
    if base and rng.random() < 0.5:  # across a key boundary
        edge = (base // KEY + 1) * KEY
        ranges.append((edge - 5, edge + 5))
        items.append([edge - 5, edge + 5])
    return items, expected_positions(ranges, points)


def _java_dv(referenced: str, positions: np.ndarray[Any, Any]) -> dict[str, Any]:
    """An oracle DV spec for these positions, as end-exclusive ranges (Iceberg's API)."""
    if positions.size == 0:
        return {"referenced-data-file": referenced, "ranges": []}
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [positions.size]))
    ranges = [[int(positions[s]), int(positions[e - 1]) + 1] for s, e in zip(starts, ends,
                                                                              strict=True)]
    return {"referenced-data-file": referenced, "ranges": ranges}


def _check_dv_blob(java_blob: dict[str, Any], referenced: str,
                   positions: np.ndarray[Any, Any]) -> None:
    """Java reads the DV we meant: Iceberg's metadata and exactly these positions."""
    assert java_blob["type"] == DV_BLOB_TYPE
    assert (java_blob["fields"], java_blob["snapshot-id"], java_blob["sequence-number"],
            java_blob["compression-codec"]) == ([ROW_POSITION_FIELD_ID], -1, -1, None)
    assert java_blob["properties"] == {"referenced-data-file": referenced,
                                       "cardinality": str(positions.size)}
    dv = java_blob["dv"]
    assert dv["cardinality"] == positions.size
    assert dv["first_positions"] == positions[:20].tolist()
    assert dv["last_position"] == int(positions[-1])
    assert dv["positions_sha256"] == sha256(positions_text(positions))


def test_fifty_dvs_read_by_java_and_equal_javas_file(java_oracle: JavaOracle,
                                                     tmp_path: Path) -> None:
    rng = random.Random(4101)
    blobs, wanted = [], []
    for i in range(50):
        items, positions = _random_dv(rng, max_key=300)
        referenced = f"s3://bücket/tåble/data/part-{i:05d}-{UNICODE[:12]}.parquet"
        blobs.append({"dv": {"referenced-data-file": referenced, "positions": items}})
        wanted.append((referenced, positions))
    props = {"created-by": "interop test", "ünï": "🦆"}
    ours = puffin_write(tmp_path / "dvs.puffin", spec={"properties": props, "blobs": blobs})
    java = java_oracle.read(ours)
    assert java["properties"] == props
    for java_blob, (referenced, positions) in zip(java["blobs"], wanted, strict=True):
        _check_dv_blob(java_blob, referenced, positions)
    assert_reads_like_java(ours, java)
    # Iceberg's PuffinWriter, given the same DVs (built and serialized by Iceberg), writes the
    # same bytes.
    theirs = tmp_path / "java-dvs.puffin"
    java_oracle.write({"properties": props,
                       "blobs": [{"dv": _java_dv(r, p)} for r, p in wanted]}, theirs)
    assert ours.read_bytes() == theirs.read_bytes()


def test_big_dv_runs_dense_sparse_from_positions_files(java_oracle: JavaOracle,
                                                       tmp_path: Path) -> None:
    gen = np.random.default_rng(4102)
    run = (0, 1_499_999)
    dense = np.flatnonzero(gen.random(1_000_000) < 0.6).astype(np.uint64) + np.uint64(2_000_000)
    sparse = gen.integers(3_000_000, 4 * KEY, size=200_000, dtype=np.uint64)
    starts = np.sort(gen.choice(np.arange(KEY + 10, KEY + 50_000_000, 400, dtype=np.uint64),
                                size=5000, replace=False))
    runs = [(int(s), int(s) + int(n)) for s, n in zip(starts, gen.integers(0, 300, 5000),
                                                       strict=True)]
    singles = np.concatenate((dense, sparse, dense[:1000]))  # unsorted, with repeats
    gen.shuffle(singles)
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("".join(f"{p}\n" for p in singles.tolist()))
    ranges_file = tmp_path / "ranges.txt"
    ranges_file.write_text("".join(f"{s}-{e}\n" for s, e in runs))
    referenced = "file:/data/big.parquet"
    ours = puffin_write(tmp_path / "big.puffin", "--dv", referenced, "--positions",
                        f"{run[0]}-{run[1]},7", "--positions-file", str(numbers),
                        "--positions-file", str(ranges_file))
    positions = expected_positions([run, *runs], np.append(singles, 7))
    assert positions.size > 2_500_000
    java = java_oracle.read(ours)
    _check_dv_blob(java["blobs"][0], referenced, positions)
    assert_reads_like_java(ours, java)
    theirs = tmp_path / "java-big.puffin"
    java_oracle.write({"properties": {"created-by": CREATED_BY},
                       "blobs": [{"dv": _java_dv(referenced, positions)}]}, theirs)
    assert ours.read_bytes() == theirs.read_bytes()


# Java's RoaringPositionBitmap holds one 32-bit bitmap per key from 0 to the highest, so a
# position at its documented limit (key 0x7FFFFFFE) makes it allocate 2^31 bitmaps and run out
# of heap; 2^20 + 3 is the highest key checked here (and exercises our sparse-key encoding).
HIGH_KEYS = [1, 2, 0xFFFF, 0x10000, (1 << 20) + 3]


def test_64bit_dvs(java_oracle: JavaOracle, tmp_path: Path) -> None:
    cases: list[tuple[str, list[tuple[int, int]]]] = [
        ("boundary", [(KEY - 1, KEY - 1), (KEY, KEY + 1), (KEY - 70_000, KEY + 70_000),
                      (2 * KEY - 3, 2 * KEY + 2), (3 * KEY - 1, 3 * KEY - 1)]),
        ("keys", [(k * KEY + lo, k * KEY + lo) for k in HIGH_KEYS
                  for lo in (0, 1, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)]),
        ("runs", [(k * KEY + 0xFFFF0000, k * KEY + 0xFFFFFFFF) for k in HIGH_KEYS]),
    ]
    args: list[str] = []
    for name, ranges in cases:
        args += ["--dv", f"s3://b/{name}.parquet", "--positions",
                 ",".join(f"{s}-{e}" if s != e else str(s) for s, e in ranges)]
    ours = puffin_write(tmp_path / "dv64.puffin", *args)
    java = java_oracle.read(ours)
    for java_blob, (name, ranges) in zip(java["blobs"], cases, strict=True):
        _check_dv_blob(java_blob, f"s3://b/{name}.parquet", expected_positions(ranges))
    assert_reads_like_java(ours, java)
    assert java["blobs"][1]["dv"]["last_position"] == ((1 << 20) + 3) * KEY + 0xFFFFFFFF


# --------------------------------------------------------------------------------------------
# 1. puffin-cli -> Java: Theta sketches of every primitive type


def _days(year: int, month: int, day: int) -> int:
    return (dt.date(year, month, day) - dt.date(1970, 1, 1)).days


def _rand_date(rng: random.Random) -> str:
    return dt.date.fromordinal(rng.randint(1, dt.date(9999, 12, 31).toordinal())).isoformat()


def _rand_time(rng: random.Random, digits: int = 6) -> str:
    seconds = rng.randrange(86_400)
    frac = rng.randrange(10**digits)
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{frac:0{digits}d}"


def _rand_offset(rng: random.Random) -> str:
    minutes = rng.randint(-18 * 60, 18 * 60)
    sign = "-" if minutes < 0 else "+"
    return rng.choice(["Z", f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"])


def _rand_float(rng: random.Random, double: bool) -> str:
    if rng.random() < 0.5:
        bits = rng.getrandbits(64 if double else 32)
        value = np.array([bits], dtype=np.uint64 if double else np.uint32).view(
            np.float64 if double else np.float32)[0]
        return repr(float(value))  # may be nan/inf: the parser takes those too
    return f"{rng.uniform(-1e6, 1e6):.{rng.randint(1, 17)}g}"  # needs rounding


def _rand_string(rng: random.Random) -> str:
    pool = "aZ09 é€中🦆\t\u0301\u00a0\"\\"
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))


def _rand_decimal(rng: random.Random, precision: int, scale: int) -> str:
    unscaled = rng.randint(-(10**precision - 1), 10**precision - 1)
    sign, digits = ("-" if unscaled < 0 else ""), str(abs(unscaled)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}" if scale else f"{sign}{digits}"


# Per type: edge values (text forms; None = null) and a random-value generator (None: the
# type has too few distinct values for estimation mode).
THETA_TYPES: dict[str, tuple[list[str | None], Any]] = {
    "boolean": (["true", "false", None, "TRUE", "false"], None),
    "int": ([str(-(2**31)), str(2**31 - 1), "0", "-1", "+7", None, "0"],
            lambda r: str(r.randint(-(2**31), 2**31 - 1))),
    "long": ([str(-(2**63)), str(2**63 - 1), "0", "-1", None],
             lambda r: str(r.randint(-(2**63), 2**63 - 1))),
    "float": (["0.0", "-0.0", "NaN", "Infinity", "-Infinity", "3.4028235e38", "1.4e-45",
               "-1.17549435e-38", "0.1", "16777217", "1.00000005960464477539062500001", None],
              lambda r: _rand_float(r, False)),
    "double": (["0.0", "-0.0", "NaN", "inf", "-inf", "1.7976931348623157e308", "4.9e-324",
                "2.2250738585072014e-308", "0.1", "9007199254740993", None],
               lambda r: _rand_float(r, True)),
    "decimal(9,2)": (["0", "-0.00", "9999999.99", "-9999999.99", "0.01", "-0.01", "1.5",
                      "127", "128", "-128", "-129", None],
                     lambda r: _rand_decimal(r, 9, 2)),
    "decimal(38,10)": (["9" * 28 + "." + "9" * 10, "-" + "9" * 28 + "." + "9" * 10, "0",
                        "-0.0000000001", None], lambda r: _rand_decimal(r, 38, 10)),
    "decimal(5,0)": (["99999", "-99999", "0", "255", "-256", None],
                     lambda r: _rand_decimal(r, 5, 0)),
    "date": (["1970-01-01", "1969-12-31", "0001-01-01", "9999-12-31", "2024-02-29", None],
             _rand_date),
    "time": (["00:00", "00:00:00", "23:59:59.999999", "12:30:00.5", None], _rand_time),
    "timestamp": (["1970-01-01T00:00:00", "1969-12-31T23:59:59.5", "0001-01-01T00:00:00",
                   "9999-12-31T23:59:59.999999", "2024-01-31 12:34:56.000001", None],
                  lambda r: f"{_rand_date(r)}T{_rand_time(r)}"),
    "timestamptz": (["1970-01-01T00:00:00Z", "1970-01-01T00:00:00+00:00",
                     "1969-12-31T23:59:59.999999-18:00", "2024-03-10T02:30:00+05:45",
                     "9999-12-31T23:59:59.999999+18:00", None],
                    lambda r: f"{_rand_date(r)}T{_rand_time(r)}{_rand_offset(r)}"),
    "timestamp_ns": (["1970-01-01T00:00:00.000000001", "1969-12-31T23:59:59.999999999",
                      "2262-04-11T23:47:16.854775807", "1677-09-21T00:12:43.145224192", None],
                     lambda r: f"{r.randint(1678, 2261)}-{r.randint(1, 12):02d}-"
                               f"{r.randint(1, 28):02d}T{_rand_time(r, 9)}"),
    "timestamptz_ns": (["1970-01-01T00:00:00.000000001Z", "2000-01-01T00:00:00-01:00", None],
                       lambda r: f"{r.randint(1678, 2261)}-{r.randint(1, 12):02d}-"
                                 f"{r.randint(1, 28):02d}T{_rand_time(r, 9)}Z"),
    "string": (["", "a", " ", "é", "e\u0301", "🦆", "中文", "x" * 5000, None, "", "a"],
               _rand_string),
    "uuid": (["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
              "F79C3E09-677C-4BBD-A479-3F349CB785E7", None],
             lambda r: str(uuid.UUID(int=r.getrandbits(128)))),
    "fixed[1]": (["00", "ff", "7f", "80", None], None),
    "fixed[16]": (["00" * 16, "ff" * 16, "0102030405060708090a0b0c0d0e0f10", None],
                  lambda r: r.randbytes(16).hex()),
    "binary": (["", "00", "ff" * 1000, "00" * 8, None, ""],
               lambda r: r.randbytes(r.randint(0, 24)).hex()),
}


_JAVA_SPELLING = {"nan": "NaN", "inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity",
                  "infinity": "Infinity", "-infinity": "-Infinity"}


def _java_text(type_text: str, text: str | None) -> str | None:
    """The spelling Java's parsers take for a text form ``puffin write`` also accepts."""
    if text is None:
        return None
    if type_text in ("float", "double"):
        return _JAVA_SPELLING.get(text.lower(), text)
    if type_text.startswith("timestamp"):
        return text.replace(" ", "T", 1)
    return text


def _serialized(oracle: JavaOracle, type_text: str, texts: Sequence[str | None], *,
                uuid_as_string: bool = False) -> list[bytes]:
    """The serialized non-null values, as Iceberg Java parses and serializes them; checked
    equal to puffin-cli's parsing and serialization of the same text."""
    iceberg_type = IcebergType.parse(type_text)
    values = [parse_value(iceberg_type, t) for t in texts if t is not None]
    if uuid_as_string:
        ours = [str(v).encode() for v in values]
        java = oracle.serialize("string", [str(v) for v in values])
    else:
        ours = serialize_values(iceberg_type, values)
        java = oracle.serialize(type_text, [_java_text(type_text, t) for t in texts])
    java_values = [v for v in java if v is not None]
    mismatches = [(t, o, j) for t, o, j in zip([t for t in texts if t is not None], ours,
                                               java_values, strict=True) if o != j]
    assert not mismatches, mismatches[:5]
    return java_values


@pytest.mark.parametrize("type_text", list(THETA_TYPES))
def test_theta_sketches_of_every_type_equal_javas(java_oracle: JavaOracle, tmp_path: Path,
                                                  type_text: str) -> None:
    """Blob 0: the edge values with nulls (spec ``values``, exact mode); blob 1: 6,000 random
    values with repeats and the edge values (``--values-file``, estimation mode); for uuid
    also blob 2, hashed as text (``"uuid-hash": "text"``; the others ``--uuid-hash bytes``)."""
    edges, generator = THETA_TYPES[type_text]
    rng = random.Random(f"theta-{type_text}")
    index = list(THETA_TYPES).index(type_text)
    blobs: list[dict[str, Any]] = [{
        "theta": {"iceberg-type": type_text, "values": edges}, "fields": [index + 1],
        "snapshot-id": rng.randint(0, 2**63 - 1), "sequence-number": rng.randint(0, 2**40),
        "compression": "none" if index % 2 else "zstd", "properties": {"note": UNICODE}}]
    expected = [_serialized(java_oracle, type_text, edges)]
    if type_text == "uuid":
        blobs.append({"theta": {"iceberg-type": "uuid", "values": edges,
                                "uuid-hash": "text"}, "fields": [99]})
        expected.append(_serialized(java_oracle, type_text, edges, uuid_as_string=True))
    args: list[str] = ["--uuid-hash", "bytes"]
    if generator is not None:
        texts = [generator(rng) for _ in range(6000)]
        texts += [texts[rng.randrange(6000)] for _ in range(200)]
        texts += [t for t in edges if t is not None and "\n" not in t]
        values_file = tmp_path / "values.txt"
        with values_file.open("w", encoding="utf-8", newline="\n") as handle:
            handle.write("".join(f"{t}\n" for t in texts))
        args += ["--theta", str(1000 + index), "--type", type_text, "--values-file",
                 str(values_file), "--snapshot", "42", "--sequence-number", "7"]
        expected.append(_serialized(java_oracle, type_text, texts))
    ours = puffin_write(tmp_path / "theta.puffin", *args, spec={"blobs": blobs})
    java = java_oracle.read(ours)
    assert len(java["blobs"]) == len(expected)
    for i, (java_blob, serialized) in enumerate(zip(java["blobs"], expected, strict=True)):
        built = java_oracle.theta_build_file(serialized, tmp_path / f"java-{i}.bin")
        assert (java_blob["decompressed_length"], java_blob["decompressed_sha256"]) == \
            (built["length"], built["sha256"]), i
        assert java_theta_facts(java_blob["theta"]) == java_theta_facts(built["theta"])
        assert java_blob["properties"]["ndv"] == str(built["theta"]["estimate_long"])
        assert java_blob["theta"]["ndv_property_equals_long_estimate"]
    if generator is not None:
        assert java["blobs"][-1]["theta"]["is_estimation_mode"]
        assert (java["blobs"][-1]["fields"], java["blobs"][-1]["snapshot-id"],
                java["blobs"][-1]["sequence-number"], java["blobs"][-1]["compression-codec"]) \
            == ([1000 + index], 42, 7, "zstd")
    assert java["blobs"][0]["theta"]["is_estimation_mode"] is False
    assert java["blobs"][0]["compression-codec"] == (None if index % 2 else "zstd")
    assert java["blobs"][0]["properties"]["note"] == UNICODE
    assert_reads_like_java(ours, java)


# --------------------------------------------------------------------------------------------
# 1. puffin-cli -> Java: raw payloads, codecs, copies, properties, empty files


def _raw_blobs(rng: random.Random, payload_dir: Path) -> tuple[list[dict[str, Any]],
                                                               list[dict[str, Any]]]:
    """Matching ``puffin write`` spec blobs and oracle spec blobs for random raw payloads."""
    ours, theirs = [], []
    sizes = [0, 1, 37, 4096, 70_000, 250_000]
    for i, size in enumerate(sizes * 2):
        if size >= 4096 and i % 2:
            payload = (rng.randbytes(64) * (size // 64 + 1))[:size]  # compressible
        else:
            payload = rng.randbytes(size)
        codec = ["none", "zstd"][i % 2]
        meta = {"type": rng.choice(["acme-blob-v1", "x", f"t-{UNICODE[:5]}",
                                    "apache-datasketches-kll-v1"]),
                "fields": rng.choice([[], [1], [1, 2, 3], [-5, 2**31 - 1]]),
                "snapshot-id": rng.choice([-1, 0, 2**63 - 1, -(2**63)]),
                "sequence-number": rng.randint(-(2**63), 2**63 - 1),
                "properties": rng.choice([{}, {"k": "v"}, {UNICODE: UNICODE, "": ""}])}
        source: dict[str, Any]
        if i % 3 == 0:
            source = {"base64": base64.b64encode(payload).decode()}
        elif i % 3 == 1:
            path = payload_dir / f"payload-{i}.bin"
            path.write_bytes(payload)
            source = {"file": str(path)}
        else:
            payload = UNICODE.encode() * (size // 40)
            source = {"text": UNICODE * (size // 40)}
        ours.append({**meta, "payload": source, "compression": codec})
        theirs.append({**meta, "payload-b64": base64.b64encode(payload).decode(),
                       "codec": codec})
    return ours, theirs


def test_raw_payloads_and_codecs_equal_javas_file(java_oracle: JavaOracle,
                                                  tmp_path: Path) -> None:
    rng = random.Random(4103)
    ours_blobs, java_blobs = _raw_blobs(rng, tmp_path)
    props = {"created-by": f"puffin interop {UNICODE}", UNICODE: "ü", "empty": ""}
    ours = puffin_write(tmp_path / "raw.puffin", spec={"properties": props,
                                                       "blobs": ours_blobs})
    java = java_oracle.read(ours)
    assert java["properties"] == props
    for java_blob, spec in zip(java["blobs"], java_blobs, strict=True):
        payload = base64.b64decode(spec["payload-b64"])
        assert {k: java_blob[k] for k in ("type", "fields", "snapshot-id", "sequence-number",
                                          "properties")} == \
            {k: spec[k] for k in ("type", "fields", "snapshot-id", "sequence-number",
                                  "properties")}
        assert java_blob["compression-codec"] == (None if spec["codec"] == "none" else "zstd")
        assert java_blob["decompressed_sha256"] == sha256(payload)
    assert_reads_like_java(ours, java)
    theirs = tmp_path / "java-raw.puffin"
    java_oracle.write({"properties": props, "blobs": java_blobs}, theirs)
    assert ours.read_bytes() == theirs.read_bytes()


def test_zstd_blobs_over_1_mib_equal_javas(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """Iceberg (aircompressor, level 3) compresses with a 1 MiB window: above 1 MiB of content
    its frame header has a window descriptor instead of the single-segment flag. For ordinary
    content the whole frame is then identical; for long runs of one byte aircompressor writes
    compressed blocks where libzstd writes RLE blocks, so only the header and the content match
    (documented in docs/write.md)."""
    rng = random.Random(4106)
    payloads = [rng.randbytes((1 << 20) + 1), (rng.randbytes(64) * 50_000)[:3_000_000],
                bytes(1 << 20), bytes((1 << 20) + 1)]
    identical = 2  # the first two: whole frames equal; the zero-filled ones: headers only
    blobs = []
    for i, payload in enumerate(payloads):
        path = tmp_path / f"big-{i}.bin"
        path.write_bytes(payload)
        blobs.append({"type": "big", "fields": [i], "payload": {"file": str(path)},
                      "compression": "zstd"})
    ours = puffin_write(tmp_path / "big.puffin", spec={"blobs": blobs})
    assert_reads_like_java(ours, java_oracle.read(ours))
    theirs = tmp_path / "java-big.puffin"
    java_oracle.write({"properties": {"created-by": CREATED_BY}, "blobs": [
        {"type": "big", "fields": [i], "payload-file": str(tmp_path / f"big-{i}.bin"),
         "codec": "zstd"} for i in range(len(payloads))]}, theirs)
    with PuffinReader(ours) as a, PuffinReader(theirs) as b:
        pairs = [(a.read_raw(x), b.read_raw(y), a.read_blob(x), b.read_blob(y))
                 for x, y in zip(a.metadata.blobs, b.metadata.blobs, strict=True)]
    assert [o[:6] == j[:6] for o, j, _, _ in pairs] == [True] * len(payloads)
    assert [o == j for o, j, _, _ in pairs[:identical]] == [True] * identical
    assert [d == e == p for (_, _, d, e), p in zip(pairs, payloads, strict=True)] == (
        [True] * len(payloads))


def test_copied_blobs_keep_codec_and_bytes(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """--copy-blob from a Java-written file (zstd raw blob, Java-built sketch, DV) and from a
    puffin-written one: Java reads each copy as it read the original."""
    rng = random.Random(4104)
    sketch = tmp_path / "sketch.bin"
    java_oracle.theta_build_file([rng.randbytes(9) for _ in range(5000)], sketch, [2500])
    source_java = tmp_path / "java-source.puffin"
    java_oracle.write({"properties": {"created-by": "Iceberg"}, "blobs": [
        {"type": "acme-v1", "fields": [3], "snapshot-id": 5, "sequence-number": 6,
         "payload-b64": base64.b64encode(b"abc" * 999).decode(), "codec": "zstd",
         "properties": {"p": UNICODE}},
        {"type": THETA_BLOB_TYPE, "fields": [2], "payload-file": str(sketch), "codec": "zstd",
         "properties": {"ndv": "5000"}},
        {"dv": {"referenced-data-file": "d.parquet", "positions": [3, KEY + 9],
                "ranges": [[10, 5000]]}}]}, source_java)
    source_ours = puffin_write(tmp_path / "ours-source.puffin", "--theta", "8", "--type",
                               "string", "--values-file", str(_lines(tmp_path, 300)),
                               "--dv", "e.parquet", "--positions", "1-100000")
    copies = [(source_java, i) for i in (0, 1, 2)] + [(source_ours, i) for i in (1, 0)]
    args = [a for path, i in copies for a in ("--copy-blob", f"{path}:{i}")]
    ours = puffin_write(tmp_path / "copies.puffin", *args)
    java = java_oracle.read(ours)
    for java_blob, (path, i) in zip(java["blobs"], copies, strict=True):
        original = java_oracle.read(path)["blobs"][i]
        same = [k for k in original if k not in ("index", "offset")]
        assert {k: java_blob[k] for k in same} == {k: original[k] for k in same}
    assert [b["compression-codec"] for b in java["blobs"]] == ["zstd", "zstd", None, None,
                                                              "zstd"]
    assert_reads_like_java(ours, java)


def _lines(tmp_path: Path, count: int) -> Path:
    path = tmp_path / f"lines-{count}.txt"
    path.write_text("".join(f"value {i} {UNICODE[:8]}\n" for i in range(count)),
                    encoding="utf-8")
    return path


def test_empty_files_equal_javas(java_oracle: JavaOracle, tmp_path: Path) -> None:
    cases: list[tuple[list[str], dict[str, Any] | None, dict[str, str]]] = [
        ([], None, {"created-by": CREATED_BY}),
        (["--property", f"{UNICODE}={UNICODE}", "--created-by", "Ü 1"], None,
         {UNICODE: UNICODE, "created-by": "Ü 1"}),  # the order puffin writes them in
        ([], {"created-by": None, "blobs": []}, {}),
    ]
    for i, (args, spec, props) in enumerate(cases):
        ours = puffin_write(tmp_path / f"empty-{i}.puffin", *args, spec=spec)
        java = java_oracle.read(ours)
        assert (java["blobs"], java["properties"]) == ([], props)
        assert_reads_like_java(ours, java)
        theirs = tmp_path / f"java-empty-{i}.puffin"
        java_oracle.write({"properties": props, "blobs": []}, theirs)
        assert ours.read_bytes() == theirs.read_bytes()


# --------------------------------------------------------------------------------------------
# 2. Java -> puffin-cli


def _java_random_file(oracle: JavaOracle, rng: random.Random, tmp_path: Path, n: int
                      ) -> tuple[dict[str, Any], list[Any]]:
    """An oracle write spec of random blobs and, per blob, what it should hold: payload bytes,
    (referenced file, positions) for a DV, or the oracle's theta-build summary."""
    blobs: list[dict[str, Any]] = []
    wanted: list[Any] = []
    default_codec = rng.choice([None, "zstd"])
    for b in range(rng.randint(1, 6)):
        kind = rng.choice(["raw", "dv", "theta"])
        meta = {"fields": rng.choice([[], [1], [7, 8], [2**31 - 1]]),
                "snapshot-id": rng.randint(-(2**63), 2**63 - 1),
                "sequence-number": rng.randint(-1, 2**40)}
        codec = rng.choice([None, "none", "zstd"])
        if kind == "raw":
            size = rng.choice([0, 1, 100, 5000, 60_000])
            payload = rng.randbytes(size) if rng.random() < 0.5 else bytes(size)
            blobs.append({**meta, "type": rng.choice(["vendor-v1", "ÿ-blob"]),
                          "payload-b64": base64.b64encode(payload).decode(), "codec": codec,
                          "properties": rng.choice([{}, {"a": UNICODE}])})
            wanted.append(payload)
        elif kind == "dv":
            base = rng.choice([0, rng.randint(1, 400) * KEY])
            points = [base + rng.randint(0, 2_000_000) for _ in range(rng.randint(0, 3000))]
            ranges = []
            for _ in range(rng.randint(0 if points else 1, 8)):
                start = base + rng.randint(0, 2_000_000)
                ranges.append([start, start + rng.choice([1, 5, 4096, 100_000])])
            referenced = f"s3://w/{UNICODE[:6]}/f{n}-{b}.parquet"
            blobs.append({"dv": {"referenced-data-file": referenced, "positions": points,
                                 "ranges": ranges}, "codec": "none"})
            wanted.append((referenced, expected_positions(
                [(s, e - 1) for s, e in ranges], points)))
        else:
            count = rng.choice([1, 50, 3000, 9000, 40_000])
            values = [rng.randbytes(rng.randint(0, 12)) for _ in range(count)]
            cuts = sorted(rng.sample(range(1, count), min(count - 1, rng.randint(0, 4))))
            sketch = tmp_path / f"sketch-{n}-{b}.bin"
            built = oracle.theta_build_file(values, sketch, cuts)
            blobs.append({**meta, "type": THETA_BLOB_TYPE, "payload-file": str(sketch),
                          "codec": codec,
                          "properties": {"ndv": str(built["theta"]["estimate_long"])}})
            wanted.append(built)
    spec = {"properties": rng.choice([{}, {"created-by": "Iceberg x", UNICODE: "v"}]),
            "blobs": blobs}
    if default_codec is not None:
        spec["default-codec"] = default_codec
    return spec, wanted


@pytest.mark.parametrize("n", range(10))
def test_java_written_random_files_read_identically(java_oracle: JavaOracle, tmp_path: Path,
                                                    n: int) -> None:
    rng = random.Random(f"java-random-{n}")
    spec, wanted = _java_random_file(java_oracle, rng, tmp_path, n)
    path = tmp_path / "java.puffin"
    summary = java_oracle.write(spec, path)
    java = java_oracle.read(path)
    report = assert_reads_like_java(path, java)
    assert report.file_size == summary["file_size"]
    assert report.footer.footer_size == summary["footer_size"]
    assert [our_meta(report, i) for i in range(len(report.blobs))] == \
        [java_meta(b) for b in summary["blobs"]]
    with PuffinReader(path) as reader:
        for i, (blob_spec, want) in enumerate(zip(spec["blobs"], wanted, strict=True)):
            data = reader.read_blob(report.blobs[i].metadata)
            summary_i = report.blobs[i].summary
            if "dv" in blob_spec:
                referenced, positions = want
                assert isinstance(summary_i, DeletionVectorSummary)
                assert (summary_i.referenced_data_file, summary_i.cardinality) == \
                    (referenced, positions.size)
                text = puffin("dump-blob", str(path), str(i), "--as", "positions")
                assert text == positions_text(positions)
            elif "payload-file" in blob_spec:
                assert isinstance(summary_i, ThetaSummary)
                assert sha256(data) == want["sha256"]
                assert summary_i.ndv_property_matches is True
                assert_theta_like_java(summary_i, data, {**want["theta"],
                                                         "ndv_property": str(
                                                             want["theta"]["estimate_long"]),
                                                         "ndv_property_equals_long_estimate":
                                                             True})
            else:
                assert data == want


def test_java_dv_file_writer_files_read_identically(java_oracle: JavaOracle,
                                                    tmp_path: Path) -> None:
    rng = random.Random(4105)
    for n in range(3):
        dvs, wanted = [], []
        for d in range(rng.randint(1, 5)):
            base = rng.choice([0, rng.randint(1, 1000) * KEY])
            points = [base + rng.randint(0, 500_000) for _ in range(rng.randint(1, 2000))]
            start = base + rng.randint(0, KEY - 200_000)
            ranges = [[start, start + rng.randint(1, 150_000)]]
            referenced = f"file:/t/data/{n}-{d}-é.parquet"
            dvs.append({"referenced-data-file": referenced, "positions": points,
                        "ranges": ranges})
            wanted.append((referenced, expected_positions([(start, ranges[0][1] - 1)],
                                                          points)))
        path = tmp_path / f"dv-writer-{n}.puffin"
        summary = java_oracle.write({"dv-file-writer": True, "dvs": dvs}, path)
        java = java_oracle.read(path)
        report = assert_reads_like_java(path, java)
        assert report.properties["created-by"].startswith("Apache Iceberg")
        by_file = {f["referenced_data_file"]: f for f in summary["delete_files"]}
        assert sorted(by_file) == sorted(r for r, _ in wanted)
        for blob in report.blobs:
            meta = blob.metadata
            entry = by_file[meta.properties["referenced-data-file"]]
            assert (meta.offset, meta.length, int(meta.properties["cardinality"])) == \
                (entry["content_offset"], entry["content_size_in_bytes"],
                 entry["record_count"])
        for i, blob in enumerate(report.blobs):
            positions = dict(wanted)[blob.metadata.properties["referenced-data-file"]]
            text = puffin("dump-blob", str(path), str(i), "--as", "positions")
            assert text == positions_text(positions)


def test_java_written_empty_file(java_oracle: JavaOracle, tmp_path: Path) -> None:
    path = tmp_path / "java-empty.puffin"
    java_oracle.write({"properties": {UNICODE: UNICODE}, "blobs": []}, path)
    report = assert_reads_like_java(path, java_oracle.read(path))
    assert (report.blobs, report.properties) == ((), {UNICODE: UNICODE})
