"""validate_file: every finding, with its code, severity, offset and blob index."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from helpers import SAMPLE_FILES, SAMPLES

from puffin_cli.analysis import validate as validate_module
from puffin_cli.analysis.file_report import FileReport
from puffin_cli.analysis.profiles import PROFILES, RULES
from puffin_cli.analysis.validate import validate_file
from puffin_cli.format import Finding, PuffinWriter, Severity
from puffin_cli.format.codecs import compress
from puffin_cli.storage import FileIO


def codes(report: FileReport, severity: Severity | None = None) -> list[str]:
    return [f.code for f in report.findings if severity is None or f.severity is severity]


def only(report: FileReport, code: str) -> Finding:
    found = [f for f in report.findings if f.code == code]
    assert len(found) == 1, report.findings
    return found[0]


def assemble(body: bytes, footer: Any, flags: bytes = bytes(4)) -> bytes:
    """PFA1 + body + a footer whose payload is ``footer`` (JSON-encoded unless bytes)."""
    payload = footer if isinstance(footer, bytes) else json.dumps(footer).encode()
    return b"PFA1" + body + b"PFA1" + payload + struct.pack("<i", len(payload)) + flags + b"PFA1"


def blob_json(offset: int, length: int, **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": "x-test", "fields": [1], "snapshot-id": 1,
                           "sequence-number": 1, "offset": offset, "length": length}
    obj.update(extra)
    return obj


def put(tmp_path: Path, data: bytes, name: str = "f.puffin") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def written(tmp_path: Path, blobs: list[tuple[str, bytes, str | None]],
            compress_footer: bool = False) -> Path:
    target = tmp_path / "w.puffin"
    writer = PuffinWriter(target, compress_footer=compress_footer)
    for type_name, data, codec in blobs:
        writer.add_blob(type_name, data, fields=[1], snapshot_id=1, sequence_number=1,
                        codec=codec)
    writer.finish()
    return target


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name)
def test_every_foreign_sample_passes_every_profile(path: Path) -> None:
    expected = json.loads((SAMPLES / "expected" / f"{path.name}.json").read_text())
    assert expected["java_accepted"] is True
    for profile in PROFILES:
        report = validate_file(path, profile=profile, fileio=FileIO())
        if profile == "trino" and path.name == "multi-blob-mixed.puffin":
            # Blobs 0 and 1 are both single-field theta sketches of field 1.
            assert codes(report) == ["profile.trino.duplicate-theta-field"] * 2
            continue
        assert report.errors == 0 and report.warnings == 0, report.findings
        assert report.blob_count == len(expected["blobs"])
        assert report.footer_size == expected["footer"]["footer_size"]


def test_sample_without_created_by_is_info_only() -> None:
    report = validate_file(SAMPLES / "public/empty-puffin-uncompressed.bin", fileio=FileIO())
    assert codes(report) == ["json.created-by"]
    assert not report.failed(strict=True)


def test_empty_file(tmp_path: Path) -> None:
    report = validate_file(put(tmp_path, b""), fileio=FileIO())
    finding = only(report, "file.too-short")
    assert finding.message == ("file is empty; the smallest Puffin file is 20 bytes (magic and an "
                               "empty footer)")
    assert report.failed() and report.file_size == 0 and report.blob_count is None


def test_three_byte_file(tmp_path: Path) -> None:
    report = validate_file(put(tmp_path, b"PFA"), fileio=FileIO())
    assert codes(report) == ["file.too-short"]
    assert only(report, "file.too-short").message.startswith("file is 3 bytes;")


def test_missing_file_is_a_finding_not_an_exception(tmp_path: Path) -> None:
    report = validate_file(tmp_path / "nope.puffin", fileio=FileIO())
    assert codes(report) == ["file.open"]
    assert report.file_size is None


def test_a_read_failing_after_the_footer_is_file_read(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """An I/O error once the file is open and its footer read (a disk error, a file cut
    under us) is one file.read finding at that point, not an exception."""
    import errno
    import os

    sample = tmp_path / "big.puffin"
    with PuffinWriter(sample) as writer:  # a blob beyond the footer's tail read
        writer.add_blob("opaque-v1", bytes(4 << 20), fields=[1])
        writer.finish()
    reads: list[int] = []
    pread = os.pread

    def failing(fd: int, length: int, offset: int) -> bytes:
        reads.append(offset)
        if len(reads) > 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return pread(fd, length, offset)

    monkeypatch.setattr(os, "pread", failing)
    report = validate_file(sample, fileio=FileIO())
    assert [(f.code, f.severity) for f in report.findings] == [("file.read", Severity.ERROR)]
    assert "Input/output error" in report.findings[0].message
    assert len(reads) == 2


def test_encrypted_file(tmp_path: Path) -> None:
    report = validate_file(put(tmp_path, b"AGS1" + bytes(100)), fileio=FileIO())
    assert codes(report) == ["file.encrypted"]
    assert "key needed" in report.findings[0].message


def test_bad_leading_magic_still_checks_the_footer(tmp_path: Path) -> None:
    data = bytearray(assemble(b"", {"blobs": [], "properties": {"created-by": "t"}}))
    data[:4] = b"PFA2"
    report = validate_file(put(tmp_path, bytes(data)), fileio=FileIO())
    finding = only(report, "file.magic")
    assert finding.message == "leading magic is 50464132, expected 50464131 (PFA1)"
    assert finding.offset == 0
    assert report.blob_count == 0


def test_bad_end_magic(tmp_path: Path) -> None:
    data = assemble(b"", {"blobs": []})[:-4] + b"XXXX"
    report = validate_file(put(tmp_path, data), fileio=FileIO())
    assert codes(report) == ["footer.magic"]
    assert report.findings[0].offset == len(data) - 4


def test_reserved_flag_bits_and_json_findings_are_all_reported(tmp_path: Path) -> None:
    data = assemble(b"", {"blobs": [], "x-extra": 1}, flags=b"\x00\x02\x00\x00")
    report = validate_file(put(tmp_path, data), fileio=FileIO())
    assert codes(report) == ["footer.flags.reserved", "json.unknown-field", "json.created-by"]
    assert codes(report, Severity.ERROR) == ["footer.flags.reserved"]


@pytest.mark.parametrize("size", [-5, 1 << 30])
def test_impossible_payload_size(tmp_path: Path, size: int) -> None:
    data = bytearray(assemble(b"", {"blobs": []}))
    data[-12:-8] = struct.pack("<i", size)
    report = validate_file(put(tmp_path, bytes(data)), fileio=FileIO())
    assert codes(report) == ["footer.payload-size"]
    assert report.findings[0].offset == len(data) - 12


def test_bad_json(tmp_path: Path) -> None:
    report = validate_file(put(tmp_path, assemble(b"", b'{"blobs": [}')), fileio=FileIO())
    finding = only(report, "json.syntax")
    assert finding.offset == 8
    assert finding.message.startswith("footer payload is not valid JSON:")


def test_not_utf8(tmp_path: Path) -> None:
    report = validate_file(put(tmp_path, assemble(b"", b'{"blobs": [], "\xff": 1}')),
                           fileio=FileIO())
    assert codes(report) == ["json.utf8"]


def test_every_json_problem_of_every_blob(tmp_path: Path) -> None:
    bad_type = blob_json(4, 0, fields=["a"])
    missing = blob_json(4, 0)
    del missing["length"]
    negative = blob_json(4, -1)
    report = validate_file(put(tmp_path, assemble(b"", {"blobs": [bad_type, missing, negative]})),
                           fileio=FileIO())
    assert [(f.code, f.blob_index) for f in report.findings if f.severity is Severity.ERROR] == [
        ("json.type", 0), ("json.missing-field", 1), ("json.value", 2)]
    assert report.blob_count is None


def test_field_ids_and_ids_out_of_range(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(4, 0, fields=[1 << 31]),
                        blob_json(4, 0, **{"snapshot-id": 1 << 63})],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(b"", footer)), fileio=FileIO())
    assert [(f.code, f.blob_index) for f in report.findings] == [("json.range", 0),
                                                                ("json.range", 1)]
    assert report.findings[0].message == "blob 0 field ID 2147483648 does not fit in a 32-bit int"


def test_blob_offset_inside_leading_magic(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(2, 4)], "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(b"abcd", footer)), fileio=FileIO())
    finding = only(report, "blob.range")
    assert finding.message == ("blob offset 2 is inside the leading magic; blobs start at byte 4 "
                               "or later")
    assert (finding.offset, finding.blob_index) == (2, 0)


def test_blob_past_the_blob_area(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(4, 5)], "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(b"abcd", footer)), fileio=FileIO())
    assert only(report, "blob.range").message == (
        "blob range [4, 9) runs past the blob area, which ends where the footer starts at byte 8")


def test_huge_length_does_not_allocate(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(4, 1 << 62)], "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(b"abcd", footer)), fileio=FileIO())
    assert codes(report) == ["blob.range", "blob.gap"]


def test_overlap_and_gaps(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(6, 4), blob_json(8, 4), blob_json(4, 0)],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(bytes(12), footer)), fileio=FileIO())
    overlap = only(report, "blob.overlap")
    assert overlap.message == "blob 1 [8, 12) overlaps blob 0, which extends to byte 10"
    assert (overlap.offset, overlap.blob_index) == (8, 1)
    gaps = [f for f in report.findings if f.code == "blob.gap"]
    assert [(g.severity, g.offset, g.message) for g in gaps] == [
        (Severity.INFO, 4, "2 bytes at [4, 6) belong to no blob"),
        (Severity.INFO, 12, "4 bytes at [12, 16) belong to no blob")]


def test_unknown_codec(tmp_path: Path) -> None:
    footer = {"blobs": [blob_json(4, 4, **{"compression-codec": "snappy"})],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(b"abcd", footer)), fileio=FileIO())
    assert only(report, "blob.codec.unknown").message == (
        "unknown compression codec 'snappy'; expected one of lz4, zstd or none")


def test_corrupt_zstd_blob(tmp_path: Path) -> None:
    frame = bytearray(compress("zstd", b"hello world" * 50))
    frame[-6] ^= 0xFF
    footer = {"blobs": [blob_json(4, len(frame), **{"compression-codec": "zstd"})],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(bytes(frame), footer)), fileio=FileIO())
    assert codes(report) == ["blob.decompress"]
    assert report.findings[0].blob_index == 0


def test_zstd_frame_without_content_size(tmp_path: Path) -> None:
    import zstandard

    frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"abc" * 10)
    footer = {"blobs": [blob_json(4, len(frame), **{"compression-codec": "zstd"})],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(frame, footer)), fileio=FileIO())
    assert only(report, "blob.decompress").message == (
        "Zstandard frame has no content size; the spec requires it")


def test_frame_declaring_gigabytes_is_refused_before_allocating(tmp_path: Path) -> None:
    frame = bytearray(compress("lz4", b"abc" * 10))
    frame[6:14] = struct.pack("<Q", 1 << 40)  # content size field of the LZ4 frame header
    footer = {"blobs": [blob_json(4, len(frame), **{"compression-codec": "lz4"})],
              "properties": {"created-by": "t"}}
    report = validate_file(put(tmp_path, assemble(bytes(frame), footer)), fileio=FileIO())
    assert codes(report, Severity.ERROR) == ["blob.too-large"]


def test_blob_larger_than_the_limit_is_not_read(tmp_path: Path) -> None:
    path = written(tmp_path, [("x-test", bytes(1000), None)])
    report = validate_file(path, max_blob_size=999, fileio=FileIO())
    assert only(report, "blob.too-large").message == (
        "blob of 1000 bytes is larger than the limit of 999 bytes; not checked (raise "
        "--max-blob-size)")
    assert validate_file(path, max_blob_size=1000, fileio=FileIO()).errors == 0


def test_lz4_is_a_spec_warning_and_an_engine_error(tmp_path: Path) -> None:
    path = written(tmp_path, [("x-test", b"abc" * 100, "lz4"), ("x-test", b"z", "zstd")],
                   compress_footer=True)
    spec = validate_file(path, fileio=FileIO())
    assert codes(spec) == ["footer.lz4", "blob.lz4"]
    assert spec.warnings == 2 and not spec.failed() and spec.failed(strict=True)
    assert "Iceberg Java, iceberg-rust and pyiceberg cannot read it" in spec.findings[0].message
    java = validate_file(path, profile="java", fileio=FileIO())
    assert codes(java) == ["profile.java.lz4", "profile.java.lz4"]
    assert java.errors == 2 and java.warnings == 0
    assert [f.blob_index for f in java.findings] == [None, 0]
    assert codes(validate_file(path, profile="rust",
                               fileio=FileIO())) == ["profile.rust.lz4", "profile.rust.lz4"]
    assert codes(validate_file(path, profile="pyiceberg", fileio=FileIO())) == [
        "profile.pyiceberg.compressed-footer", "profile.pyiceberg.lz4"]
    assert codes(validate_file(path, profile="trino",
                               fileio=FileIO())) == ["footer.lz4", "blob.lz4"]


def test_pyiceberg_refuses_other_blobs_in_a_dv_file(tmp_path: Path) -> None:
    from pyroaring import BitMap64

    from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector

    target = tmp_path / "mixed.puffin"
    writer = PuffinWriter(target)
    writer.add_blob("deletion-vector-v1", encode_deletion_vector(BitMap64([1, 2, 3])),
                    fields=[2147483645], properties=dv_blob_properties("file:/d.parquet", 3))
    writer.add_blob("x-test", b"abc", fields=[1])
    writer.finish()
    assert validate_file(target, fileio=FileIO()).errors == 0
    report = validate_file(target, profile="pyiceberg", fileio=FileIO())
    finding = only(report, "profile.pyiceberg.mixed-blobs")
    assert finding.blob_index == 1
    assert finding.message.endswith("blob 1 is a 'x-test' in a file of deletion vectors")
    assert validate_file(target, profile="java", fileio=FileIO()).errors == 0


def _theta_metadata_file(tmp_path: Path, ndvs: list[str], fields: list[int]) -> Path:
    """Theta-typed opaque bytes: only the footer matters to the Trino rules; the sketch
    itself is replaced by a registered handler that finds nothing."""
    body = b"".join(b"s" for _ in ndvs)
    blobs = [{"type": "apache-datasketches-theta-v1", "fields": [field], "snapshot-id": 1,
              "sequence-number": 1, "offset": 4 + i, "length": 1, "properties": {"ndv": ndv}}
             for i, (ndv, field) in enumerate(zip(ndvs, fields, strict=True))]
    return put(tmp_path, assemble(body, {"blobs": blobs, "properties": {"created-by": "t"}}))


class _NoFindings:
    type_name = "apache-datasketches-theta-v1"

    def check(self, data: bytes, meta: Any) -> list[Finding]:
        return []


def test_trino_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate_module, "handler_for", lambda type_name: _NoFindings())
    path = _theta_metadata_file(tmp_path, ["12", "1e3", "+7", "99999999999999999999"], [1, 1, 2, 3])
    assert validate_file(path, fileio=FileIO()).errors == 0
    report = validate_file(path, profile="trino", fileio=FileIO())
    assert [(f.code, f.blob_index) for f in report.findings] == [
        ("profile.trino.ndv", 1), ("profile.trino.ndv", 3),
        ("profile.trino.duplicate-theta-field", 0), ("profile.trino.duplicate-theta-field", 1)]
    assert report.findings[0].message == (
        "trino: parses the 'ndv' property with Long.parseLong and fails the query when it "
        "cannot: 'ndv' property '1e3' is not a Java long")


def test_handler_crash_becomes_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        type_name = "x-test"

        def check(self, data: bytes, meta: Any) -> list[Finding]:
            raise ValueError("boom")

    monkeypatch.setattr(validate_module, "handler_for", lambda type_name: Broken())
    report = validate_file(written(tmp_path, [("x-test", b"abc", None)]), fileio=FileIO())
    assert only(report, "internal.error").message == "the 'x-test' check failed: ValueError: boom"


def test_handler_findings_get_the_blob_index(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    class Picky:
        type_name = "x-test"

        def check(self, data: bytes, meta: Any) -> list[Finding]:
            return [Finding("x.bad", Severity.WARNING, f"{len(data)} bytes", meta.offset)]

    monkeypatch.setattr(validate_module, "handler_for", lambda type_name: Picky())
    report = validate_file(written(tmp_path, [("x-test", b"a", None), ("x-test", b"bc", "zstd")]),
                           fileio=FileIO())
    assert [(f.message, f.blob_index) for f in report.findings] == [("1 bytes", 0),
                                                                    ("2 bytes", 1)]


def test_rules_table_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "validate.md").read_text()
    for rule in RULES:
        for engine in rule.engines:
            assert f"profile.{engine}.{rule.code}" in doc
        assert rule.source


# Deletion vectors: the DV handler's findings come through validate with the blob index.

def _dv_file(tmp_path: Path, positions: list[int], cardinality: int | None = None) -> Path:
    from pyroaring import BitMap64

    from puffin_cli.blobs.deletion_vector import dv_blob_properties, encode_deletion_vector

    target = tmp_path / "dv.puffin"
    writer = PuffinWriter(target, overwrite=True)
    count = len(positions) if cardinality is None else cardinality
    writer.add_blob("deletion-vector-v1", encode_deletion_vector(BitMap64(positions)),
                    fields=[2147483645], properties=dv_blob_properties("file:/d.parquet", count))
    writer.finish()
    return target


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_dv_crc(tmp_path: Path) -> None:
    path = _dv_file(tmp_path, [1, 5, 9])
    _flip(path, 4 + 4 + 4 + 8 + 4 + 12)  # a byte inside the 32-bit bitmap of key 0
    report = validate_file(path, fileio=FileIO())
    assert "dv.crc" in codes(report, Severity.ERROR)
    assert {f.blob_index for f in report.findings if f.code == "dv.crc"} == {0}


def test_dv_magic(tmp_path: Path) -> None:
    path = _dv_file(tmp_path, [1, 5, 9])
    _flip(path, 4 + 4)
    assert "dv.magic" in codes(validate_file(path, fileio=FileIO()), Severity.ERROR)


def test_dv_cardinality(tmp_path: Path) -> None:
    report = validate_file(_dv_file(tmp_path, [1, 5, 9], cardinality=4), fileio=FileIO())
    assert codes(report) == ["dv.cardinality"]
    assert report.findings[0].blob_index == 0


def test_dv_key_above_java_limit(tmp_path: Path) -> None:
    path = _dv_file(tmp_path, [0x7FFFFFFF << 32 | 5])
    spec = validate_file(path, fileio=FileIO())
    assert codes(spec) == ["dv.key-above-java-limit"] and spec.warnings == 1
    java = validate_file(path, profile="java", fileio=FileIO())
    assert codes(java) == ["profile.java.dv-key"] and java.errors == 1
    assert validate_file(path, profile="pyiceberg", fileio=FileIO()).errors == 0


def test_dv_stored_crc_is_big_endian_zlib(tmp_path: Path) -> None:
    # A hand-built DV (not our encoder): envelope facts as the spec states them.
    vector = struct.pack("<Q", 1) + struct.pack("<I", 0) + bytes.fromhex(
        "3a300000" "01000000" "0000" "0000" "10000000" "0700")  # one array container: {7}
    body = b"\xd1\xd3\x39\x64" + vector
    blob = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    footer = {"blobs": [{"type": "deletion-vector-v1", "fields": [2147483645],
                         "snapshot-id": -1, "sequence-number": -1, "offset": 4,
                         "length": len(blob), "properties": {"cardinality": "1",
                                                             "referenced-data-file": "f"}}],
              "properties": {"created-by": "t"}}
    assert validate_file(put(tmp_path, assemble(blob, footer)), fileio=FileIO()).findings == ()


# Theta sketches: the theta handler's findings come through validate.

def _theta_file(tmp_path: Path, ndv: str | None, seed_hash: bytes | None = None) -> Path:
    from puffin_cli.blobs.theta import build_theta_blob

    data, _ = build_theta_blob("string", ["a", "b", "c"])
    if seed_hash is not None:
        data = data[:6] + seed_hash + data[8:]
    target = tmp_path / "theta.puffin"
    writer = PuffinWriter(target, overwrite=True)
    writer.add_blob("apache-datasketches-theta-v1", data, fields=[1], codec="zstd",
                    properties={} if ndv is None else {"ndv": ndv})
    writer.finish()
    return target


def test_theta_valid(tmp_path: Path) -> None:
    assert validate_file(_theta_file(tmp_path, "3"), fileio=FileIO()).findings == ()


def test_theta_seed(tmp_path: Path) -> None:
    report = validate_file(_theta_file(tmp_path, "3", seed_hash=b"\x00\x00"), fileio=FileIO())
    assert codes(report) == ["theta.seed"]
    assert report.findings[0].blob_index == 0


def test_theta_ndv_differs_is_a_warning(tmp_path: Path) -> None:
    report = validate_file(_theta_file(tmp_path, "4"), fileio=FileIO())
    assert codes(report, Severity.WARNING) == ["theta.ndv-property"]
    assert not report.failed() and report.failed(strict=True)


def test_theta_ndv_not_digits_is_an_error_and_trino_cannot_parse_it(tmp_path: Path) -> None:
    path = _theta_file(tmp_path, "3.0")
    assert codes(validate_file(path, fileio=FileIO()), Severity.ERROR) == ["theta.ndv-property"]
    assert "profile.trino.ndv" in codes(validate_file(path, profile="trino", fileio=FileIO()))
