"""The Iceberg Java oracle itself is right: it reads, writes and sketches as Iceberg Java did
when the samples in tests/data/foreign and their expected/*.json were made."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import mmh3
import pytest
from helpers import SAMPLES
from interop.fixtures import java_oracle_fixture  # noqa: F401  (fixture `java_oracle`)
from interop.javaenv import InteropSetupError, iceberg_runtime_jar
from interop.oracle import JavaOracle
from interop.sparkenv import spark_env

EXPECTED = sorted((SAMPLES / "expected").glob("*.json"))
BLOB_KEYS = (
    "index",
    "type",
    "fields",
    "snapshot-id",
    "sequence-number",
    "offset",
    "length",
    "compression-codec",
    "properties",
    "decompressed_length",
    "decompressed_sha256",
)
DV_KEYS = (
    "referenced_data_file",
    "cardinality_property",
    "cardinality",
    "positions_count",
    "first_positions",
    "last_position",
    "positions_sha256",
    "length_prefix_be",
    "magic_hex",
    "crc32_be",
    "bitmap_count",
)


def _expected(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((SAMPLES / "expected" / f"{name}.json").read_text())
    return result


def test_samples_are_present() -> None:
    assert len(EXPECTED) == 8


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.name)
def test_oracle_read_matches_expected(java_oracle: JavaOracle, expected_path: Path) -> None:
    expected = json.loads(expected_path.read_text())
    got = java_oracle.read(SAMPLES / expected["file"])
    for key in ("file_size", "sha256", "footer", "properties", "java_accepted", "java_errors"):
        assert got[key] == expected[key], key
    assert len(got["blobs"]) == len(expected["blobs"])
    for got_blob, want_blob in zip(got["blobs"], expected["blobs"], strict=True):
        assert {k: got_blob[k] for k in BLOB_KEYS} == {k: want_blob[k] for k in BLOB_KEYS}
        assert ("theta" in got_blob) == ("theta" in want_blob)
        if "theta" in want_blob:
            want_theta = want_blob["theta"]
            assert {k: got_blob["theta"][k] for k in want_theta} == want_theta
        assert ("dv" in got_blob) == ("dv" in want_blob)
        if "dv" in want_blob:
            assert {k: got_blob["dv"][k] for k in DV_KEYS} == {
                k: want_blob["dv"][k] for k in DV_KEYS
            }


@pytest.mark.parametrize(
    ("name", "codec"),
    [
        ("sample-metric-data-uncompressed.bin", None),
        ("sample-metric-data-compressed-zstd.bin", "zstd"),
    ],
)
def test_oracle_write_reproduces_iceberg_test_files(
    java_oracle: JavaOracle,
    tmp_path: Path,
    name: str,
    codec: str | None,
) -> None:
    source = (SAMPLES / "public" / "sample-metric-data-uncompressed.bin").read_bytes()
    blobs = []
    for blob in _expected(name)["blobs"]:
        raw = _expected("sample-metric-data-uncompressed.bin")["blobs"][blob["index"]]
        payload = source[raw["offset"] : raw["offset"] + raw["length"]]
        blobs.append(
            {
                "type": blob["type"],
                "fields": blob["fields"],
                "snapshot-id": blob["snapshot-id"],
                "sequence-number": blob["sequence-number"],
                "payload-b64": base64.b64encode(payload).decode(),
                "codec": codec,
            }
        )
    out = tmp_path / name
    summary = java_oracle.write({"properties": {"created-by": "Test 1234"}, "blobs": blobs}, out)
    assert summary["file_size"] == out.stat().st_size
    assert out.read_bytes() == (SAMPLES / "public" / name).read_bytes()


def test_oracle_write_empty_file(java_oracle: JavaOracle, tmp_path: Path) -> None:
    out = tmp_path / "empty.bin"
    java_oracle.write({"blobs": []}, out)
    assert out.read_bytes() == (SAMPLES / "public" / "empty-puffin-uncompressed.bin").read_bytes()


def test_oracle_theta_build_exact_mode_matches_iceberg_sketch(java_oracle: JavaOracle) -> None:
    blob = _expected("multi-blob-mixed.puffin")["blobs"][0]
    sketch = java_oracle.theta_build([f"value-{i}-ü".encode() for i in range(1000)])
    assert hashlib.sha256(sketch).hexdigest() == blob["decompressed_sha256"]


def test_oracle_theta_build_estimation_mode_keeps_4096_smallest(
    java_oracle: JavaOracle,
    tmp_path: Path,
) -> None:
    # The sample's 20,000-long blob is a raw Alpha sketch (4135 entries, never unioned), so
    # check ThetaSketchAgg's union-trimmed result against hashes computed independently.
    longs = [(2**33 + i * 7).to_bytes(8, "little") for i in range(20000)]
    single = java_oracle.theta_build_file(longs, tmp_path / "one.bin")
    split = java_oracle.theta_build_file(longs, tmp_path / "three.bin", partitions=[5000, 12000])
    assert (single["partitions"], split["partitions"]) == (1, 3)
    assert single["sha256"] == split["sha256"]
    hashes = sorted(mmh3.hash64(v, seed=9001, signed=False)[0] >> 1 for v in longs)
    kept = "".join(f"{h}\n" for h in hashes[:4096]).encode()
    theta = single["theta"]
    assert (theta["retained_entries"], theta["theta_long"]) == (4096, hashes[4096])
    assert theta["hashes_sha256"] == hashlib.sha256(kept).hexdigest()


def test_oracle_theta_build_summary(java_oracle: JavaOracle, tmp_path: Path) -> None:
    values = [b"a", b"b", b"", b"a"]
    summary = java_oracle.theta_build_file(values, tmp_path / "s.bin")
    assert (summary["values"], summary["partitions"]) == (4, 1)
    # DataSketches ignores empty byte arrays, duplicates collapse.
    assert summary["theta"]["estimate"] == 2.0
    assert summary["sha256"] == hashlib.sha256((tmp_path / "s.bin").read_bytes()).hexdigest()


def test_oracle_dv_file_writer_reproduces_sample(java_oracle: JavaOracle, tmp_path: Path) -> None:
    base = "file:/tmp/oracle-build/fake-data/"
    dv_a = {
        "referenced-data-file": base + "dv64-a.parquet",
        "positions": [0, 1, 2, 65535, 4294967295, 4294967296, 4294967297, 21474836487],
        "ranges": [[65536, 65541], [8589934692, 8589934792]],
    }
    dv_c = {"referenced-data-file": base + "dv64-c.parquet", "ranges": [[0, 100000]]}
    dv_b = {"referenced-data-file": base + "dv64-b.parquet", "positions": [2**40]}
    out = tmp_path / "dv.puffin"
    summary = java_oracle.write({"dv-file-writer": True, "dvs": [dv_a, dv_c, dv_b]}, out)
    expected = _expected("dv-64bit.puffin")
    assert [
        (f["content_offset"], f["content_size_in_bytes"], f["record_count"])
        for f in summary["delete_files"]
    ] == [
        (b["offset"], b["length"], int(b["properties"]["cardinality"])) for b in expected["blobs"]
    ]
    assert hashlib.sha256(out.read_bytes()).hexdigest() == expected["sha256"]


def test_oracle_write_dv_blob_reads_back(java_oracle: JavaOracle, tmp_path: Path) -> None:
    out = tmp_path / "dv-blob.puffin"
    spec = {
        "blobs": [
            {
                "dv": {
                    "referenced-data-file": "s3://b/data.parquet",
                    "positions": [7, 2**33],
                    "ranges": [[10, 13]],
                }
            }
        ]
    }
    java_oracle.write(spec, out)
    blob = java_oracle.read(out)["blobs"][0]
    assert blob["properties"] == {"referenced-data-file": "s3://b/data.parquet", "cardinality": "5"}
    assert (blob["fields"], blob["snapshot-id"], blob["compression-codec"]) == (
        [2147483645],
        -1,
        None,
    )
    assert blob["dv"]["first_positions"] == [7, 10, 11, 12, 2**33]


def test_oracle_reports_rejected_file(java_oracle: JavaOracle, tmp_path: Path) -> None:
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1" + b"\x00" * 20)
    got = java_oracle.read(bad)
    assert got["java_accepted"] is False
    assert got["java_errors"] and "magic" in got["java_errors"][0].lower()


@pytest.mark.spark  # PySpark 3.5 of the interop cache builds the table
def test_spark_v3_table_dvs_and_stats_match_oracle(
    java_oracle: JavaOracle,
    tmp_path: Path,
) -> None:
    spark = spark_env()
    warehouse = tmp_path / "warehouse"
    script = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "v3_dv_table.py"
    summary = json.loads(spark.run(script, json.dumps(spark.session_conf(warehouse))))
    assert summary["remaining"] == 900
    dvs = summary["delete_files"]
    assert {d["file_format"] for d in dvs} == {"PUFFIN"}
    assert sum(d["record_count"] for d in dvs) == 100
    puffin = java_oracle.read(dvs[0]["file_path"])
    blobs = {b["properties"]["referenced-data-file"]: b for b in puffin["blobs"]}
    for dv in dvs:
        blob = blobs[dv["referenced_data_file"]]
        assert (blob["offset"], blob["length"], blob["dv"]["cardinality"]) == (
            dv["content_offset"],
            dv["content_size_in_bytes"],
            dv["record_count"],
        )
    stats = java_oracle.read(summary["statistics_file"])
    id_blob = next(b for b in stats["blobs"] if b["fields"] == [1])
    assert id_blob["properties"] == {"ndv": "900"}
    live_ids = [i.to_bytes(8, "little") for i in range(1000) if i % 10 != 3]
    sketch = java_oracle.theta_build(live_ids)
    assert hashlib.sha256(sketch).hexdigest() == id_blob["decompressed_sha256"]


def test_missing_runtime_jar_fails_loudly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ICEBERG_RUNTIME_JAR", str(tmp_path / "nope.jar"))
    with pytest.raises(InteropSetupError) as excinfo:
        iceberg_runtime_jar(tmp_path)
    assert str(excinfo.value) == f"ICEBERG_RUNTIME_JAR={tmp_path / 'nope.jar'}: no such file"
