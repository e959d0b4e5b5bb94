"""``puffin inspect``: samples read as Iceberg Java reads them, the human view, JSON goldens,
options, and one stderr line per malformed input."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import SAMPLES, blob_entry, footer_payload, puffin_bytes

from puffin_cli import blobs
from puffin_cli.analysis.inspection import inspect_files
from puffin_cli.blobs.deletion_vector import (
    bitmap_from_ranges,
    dv_blob_properties,
    encode_deletion_vector,
)
from puffin_cli.cli.main import cli
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import DV_BLOB_TYPE, ROW_POSITION_FIELD_ID, THETA_BLOB_TYPE
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.render.console import console
from puffin_cli.render.inspect import render_human
from puffin_cli.storage import FileIO
from puffin_cli.storage.local import LocalInput

EXPECTED = sorted((SAMPLES / "expected").glob("*.json"))


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["inspect", *args])


def inspect_json(*args: str) -> dict[str, Any]:
    result = run("--json", *args)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def write_dv_file(path: Path, data_file: str, ranges: list[tuple[int, int]],
                  cardinality: int | None = None) -> Path:
    bitmap = bitmap_from_ranges(ranges)
    properties = dv_blob_properties(data_file, len(bitmap) if cardinality is None
                                    else cardinality)
    with PuffinWriter(path) as writer:
        writer.add_blob(DV_BLOB_TYPE, encode_deletion_vector(bitmap),
                        fields=[ROW_POSITION_FIELD_ID], properties=properties)
    return path


def theta_bytes(values: range) -> bytes:
    import datasketches

    sketch = datasketches.update_theta_sketch()
    for value in values:
        sketch.update(value)
    return bytes(sketch.compact().serialize())


# --------------------------------------------------------------------------------------------
# Samples: what Iceberg Java reads


@pytest.mark.parametrize("expected_file", EXPECTED, ids=lambda p: p.stem)
def test_sample_shows_what_iceberg_java_reads(expected_file: Path) -> None:
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    document = inspect_json("--limit", "1000", str(SAMPLES / expected["file"]))
    assert document["errors"] == []
    (report,) = document["files"]
    assert report["file-size"] == expected["file_size"]
    footer = expected["footer"]
    assert report["footer"] == {
        "payload-size": footer["payload_size"], "footer-size": footer["footer_size"],
        "footer-start": footer["footer_start"], "flags": bytes(footer["flags_bytes"]).hex(),
        "compressed": footer["footer_payload_compressed"],
    }
    assert report["properties"] == expected["properties"]
    assert len(report["blobs"]) == len(expected["blobs"])
    for blob, want in zip(report["blobs"], expected["blobs"], strict=True):
        assert blob["index"] == want["index"]
        meta = blob["metadata"]
        for key in ("type", "fields", "snapshot-id", "sequence-number", "offset", "length",
                    "compression-codec", "properties"):
            assert meta[key] == want[key], key
        assert blob["error"] is None
        summary = blob["summary"]
        if "theta" in want:
            theta = want["theta"]
            assert summary["kind"] == "theta"
            assert summary["estimate"] == theta["estimate"]
            assert summary["lower-bound"] == pytest.approx(theta["lower_bound_2sd"], rel=1e-12)
            assert summary["upper-bound"] == pytest.approx(theta["upper_bound_2sd"], rel=1e-12)
            assert summary["retained-entries"] == theta["retained_entries"]
            assert summary["theta"] == theta["theta"]
            assert summary["exact"] is not theta["is_estimation_mode"]
            assert summary["ndv-property-matches"] is theta["ndv_property_equals_long_estimate"]
        elif "dv" in want:
            dv = want["dv"]
            assert summary["kind"] == "deletion-vector"
            assert summary["cardinality"] == dv["cardinality"]
            assert summary["referenced-data-file"] == dv["referenced_data_file"]
            assert summary["max"] == dv["last_position"]
            assert summary["cardinality-matches"] is True
            positions: list[int] = []
            for start, end in summary["ranges"]:
                positions.extend(range(start, min(end, start + 100) + 1))
            assert positions[:len(dv["first_positions"])] == dv["first_positions"]
        else:
            assert summary["kind"] == "opaque"
            assert summary["size"] == want["decompressed_length"]


def test_json_top_level_and_schema_version() -> None:
    document = inspect_json(str(SAMPLES / "public/empty-puffin-uncompressed.bin"))
    assert list(document) == ["schema-version", "command", "files", "errors"]
    assert document["command"] == "inspect"
    assert document["schema-version"] == 1


# --------------------------------------------------------------------------------------------
# Human view


def test_human_view_of_theta_sketches() -> None:
    result = run(str(SAMPLES / "iceberg-java/multi-blob-mixed.puffin"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "NDV 1,000 (exact)" in out
    assert "NDV ≈ 20,418 (bounds 19,856 – 20,997" in out
    assert "ndv property 20418 agrees" in out
    assert "blob 3  oracle-test-blob-v1" in out
    assert "oracle.custom-key = custom value ü 日本" in out


def test_human_view_of_file_header_and_deletion_vector() -> None:
    result = run("--limit", "2", str(SAMPLES / "iceberg-java/dv-64bit.puffin"))
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "  file size        4,113 bytes\n" in out
    assert "  footer           800 bytes at offset 3313 (payload 784 bytes, not compressed," in out
    assert "  blobs            3\n" in out
    assert "  positions        0-2, 65535-65540, … (first 2 of 5 ranges" in out
    assert "  data file        file:/tmp/oracle-build/fake-data/dv64-b.parquet\n" in out
    assert "cardinality property 100000 agrees" in out


def test_limit_0_and_large_positions_read_cleanly(tmp_path: Path) -> None:
    path = write_dv_file(tmp_path / "dv.puffin", "f.parquet", [(0, 9), (3_999_000, 3_999_490)])
    out = run("--limit", "0", str(path)).stdout
    assert "  positions        … (first 0 of 2 ranges; --limit shows more)\n" in out
    assert "min 0, max 3,999,490\n" in out
    assert "  deletion vector  501 positions\n" in out


def test_brief_is_one_line_per_blob_with_whole_paths(tmp_path: Path) -> None:
    long = "s3://bucket/warehouse/" + "very-long-directory-name/" * 6 + "data-file.parquet"
    path = write_dv_file(tmp_path / "dv.puffin", long, [(0, 9)])
    result = CliRunner().invoke(cli, ["inspect", "--brief", str(path),
                                      str(SAMPLES / "public/apache-datasketches-theta-v1.puffin")],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{path}  ") and lines[0].endswith(", 1 blob")
    assert lines[1].split() == ["0", "deletion-vector-v1", "2147483645", "10", "positions", long]
    assert lines[2].endswith("blobs")
    assert [line.split()[:3] for line in lines[3:]] == [
        [str(i), "apache-datasketches-theta-v1", str(i + 1)] for i in range(len(lines) - 3)]
    assert all("ndv" in line for line in lines[3:])
    assert run("--brief", "--json", str(path)).exit_code == 2


def test_density_strip_shows_where_deleted_rows_lie(tmp_path: Path) -> None:
    """Rows 0-99 and 900-999 of 0-999 deleted: full marks at both ends, none between; one
    deleted row in a bucket still shows."""
    path = write_dv_file(tmp_path / "dv.puffin", "f.parquet", [(0, 99), (500, 500), (900, 999)])
    result = run(str(path))
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("  density")]
    strip, span = line[19:].split("  ")
    assert span == "positions 0 – 999"
    assert strip[0] == strip[-1] == "█"
    assert set(strip[len(strip) // 4:len(strip) * 3 // 4]) == {"·", "▁"}
    assert strip.count("▁") == 1
    narrow = CliRunner().invoke(cli, ["inspect", str(path)], env={"COLUMNS": "50"}).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 50


def test_density_buckets_count_every_position() -> None:
    from pyroaring import BitMap64

    from puffin_cli.blobs.deletion_vector.handler import DENSITY_BUCKETS, density
    from puffin_cli.render.inspect import density_marks

    bitmap = BitMap64(range(0, 1000, 3))
    bitmap.add(12345)
    counts, step = density(bitmap, 12345)
    assert step == -(-12346 // DENSITY_BUCKETS) and len(counts) <= DENSITY_BUCKETS
    assert sum(counts) == len(bitmap)
    assert counts[0] == len(range(0, step, 3)) and counts[-1] == 1
    assert density(BitMap64([0]), 0) == ((1,), 1)
    assert density_marks((4, 0, 2, 1), 4, 15, 4) == "█·▄▂"
    assert density_marks((4, 0, 2, 1), 4, 15, 2) == "▄▃"


def _fold_data_file(path: Path, data_file: str) -> tuple[list[str], list[str]]:
    """``puffin inspect`` of a DV file for ``data_file`` at 80 columns (``COLUMNS``): its lines
    (checked to fit, with no trailing blanks and no escape codes), and the data file's row as
    folded (its first line and the continuation lines, from column 19)."""
    result = CliRunner().invoke(cli, ["inspect", str(write_dv_file(path, data_file, [(0, 9)]))],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert all(line == line.rstrip() for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("  data file  "))
    parts = [lines[start][19:]]
    for line in lines[start + 1:]:
        if not line.startswith(" " * 19):
            break
        parts.append(line[19:])
    assert "".join(parts) == data_file
    return lines, parts


def test_long_data_file_path_folds_within_80_columns(tmp_path: Path) -> None:
    data_file = "s3://warehouse/" + "/".join(f"partition_{i:03d}=value" for i in range(10))
    data_file += "/" + "x" * (300 - len(data_file) - 9) + ".parquet"
    assert len(data_file) == 300
    _, parts = _fold_data_file(tmp_path / "dv.puffin", data_file)
    # The last name (84 characters) is longer than a line: only it is split inside.
    assert all(part.endswith("/") for part in parts[:-2]), parts
    assert parts[-2] + parts[-1] == data_file.rsplit("/", 1)[1]


def test_long_paths_fold_after_a_slash(tmp_path: Path) -> None:
    data_file = "s3://warehouse/db/orders/data/" + "/".join(
        f"region_{i}=" + "r" * 24 for i in range(7))
    data_file += "/00000-26-" + "d" * (300 - len(data_file) - 18) + ".parquet"
    assert len(data_file) == 300
    directory = tmp_path / ("long-directory-" + "a" * 40) / ("another-" + "b" * 40)
    directory.mkdir(parents=True)
    lines, parts = _fold_data_file(directory / "dv.puffin", data_file)
    assert len(parts) > 4
    assert all(part.endswith("/") for part in parts[:-1]), parts
    # The file's own path, the header, folds the same way.
    header = lines[:next(i for i, line in enumerate(lines) if line.startswith("  file size"))]
    assert len(header) > 1
    assert "".join(header) == str(directory / "dv.puffin")
    assert all(part.endswith("/") for part in header[:-1]), header


def test_lines_for_a_pipe_are_whole(tmp_path: Path) -> None:
    """Not on a terminal and without ``COLUMNS``: nothing folds, so ``grep`` finds a fact
    with its value (the 300-character data file path, a property) on one line."""
    data_file = "s3://warehouse/db/orders/data/" + "/".join(
        f"region_{i}=" + "r" * 24 for i in range(7)) + "/00000-26-data.parquet"
    path = write_dv_file(tmp_path / "dv.puffin", data_file, [(0, 9)])
    lines = CliRunner().invoke(cli, ["inspect", str(path)], env={"COLUMNS": ""}).stdout\
        .splitlines()
    assert f"  data file        {data_file}" in lines
    assert f"  properties       referenced-data-file = {data_file}" in lines
    assert all(line == line.rstrip() for line in lines)
    # Drawings keep their nominal width: the density strip fits 80 columns.
    (density,) = [line for line in lines if line.startswith("  density")]
    assert len(density) <= 80


def test_a_long_label_has_a_line_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "extra.puffin"
    extra: dict[str, Any] = {"a-rather-long-footer-key": 1}
    path.write_bytes(puffin_bytes(footer_payload([], **extra)))
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("  properties       none\n"
                                  "  a-rather-long-footer-key\n"
                                  "                   1 (unknown footer key)\n")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("no_color", [False, True])
def test_escape_codes_only_on_a_terminal_without_no_color(
        monkeypatch: pytest.MonkeyPatch, no_color: bool) -> None:
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    report = inspect_files([str(SAMPLES / "public/deletion-vector-v1.puffin")], fileio=FileIO())
    stream = _Terminal()
    render_human(report, console(stream))
    assert ("\x1b[" in stream.getvalue()) is not no_color


def test_cardinality_property_mismatch_is_flagged(tmp_path: Path) -> None:
    path = write_dv_file(tmp_path / "dv.puffin", "file:/d.parquet", [(5, 7)], cardinality=4)
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert "MISMATCH: cardinality property is 4, the blob says 3" in result.stdout


def test_ndv_property_mismatch_is_flagged(tmp_path: Path) -> None:
    path = tmp_path / "theta.puffin"
    with PuffinWriter(path) as writer:
        writer.add_blob(THETA_BLOB_TYPE, theta_bytes(range(10)), fields=[1],
                        properties={"ndv": "11"}, codec="zstd")
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert "NDV 10 (exact)" in result.stdout
    assert "MISMATCH: ndv property is 11, the blob says 10" in result.stdout


# --------------------------------------------------------------------------------------------
# Options


def test_path_option_and_positional_files_together() -> None:
    one = str(SAMPLES / "public/deletion-vector-v1.puffin")
    two = str(SAMPLES / "public/empty-puffin-uncompressed.bin")
    document = inspect_json(one, "--path", two)
    assert [f["path"] for f in document["files"]] == [one, two]


def test_no_file_is_a_usage_error() -> None:
    result = run()
    assert result.exit_code == 2
    assert "no file given" in result.stderr


def test_no_decode_reads_no_blob_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: PuffinReader, *args: Any) -> bytes:
        raise AssertionError("a blob was read")

    monkeypatch.setattr(PuffinReader, "read_raw", refuse)
    document = inspect_json("--no-decode", str(SAMPLES / "iceberg-java/multi-blob-mixed.puffin"))
    (report,) = document["files"]
    assert report["decoded"] is False
    assert [(b["summary"], b["error"]) for b in report["blobs"]] == [(None, None)] * 6


def test_footer_size_reads_exactly_the_footer(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[tuple[int, int]] = []
    original = LocalInput._read

    def record(self: LocalInput, offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return original(self, offset, length)

    monkeypatch.setattr(LocalInput, "_read", record)
    inspect_json("--no-decode", "--footer-size", "632",
                 str(SAMPLES / "public/apache-datasketches-theta-v1.puffin"))
    assert reads == [(211, 632)]


def test_wrong_footer_size_is_an_error() -> None:
    path = SAMPLES / "public/apache-datasketches-theta-v1.puffin"
    result = run("--footer-size", "600", str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"puffin: error: {path}: given footer size 600 does not match the "
                             "file's footer size 632\n")


def test_footer_size_with_several_files_is_a_usage_error() -> None:
    path = str(SAMPLES / "public/empty-puffin-uncompressed.bin")
    result = run("--footer-size", "28", path, path)
    assert result.exit_code == 2
    assert "--footer-size describes one file" in result.stderr


def test_max_blob_size_refuses_a_blob_and_exits_1() -> None:
    path = SAMPLES / "iceberg-java/multi-blob-mixed.puffin"
    result = run("--max-blob-size", "8k", str(path))
    assert result.exit_code == 1
    assert "blob 3  oracle-test-blob-v1" in result.stdout  # everything else still shown
    assert result.stderr.splitlines() == [
        f"puffin: error: {path}: blob 2: blob of 33118 bytes is larger than the limit of 8192 "
        "bytes (raise --max-blob-size to read it) (at byte 16050)",
    ]


# --------------------------------------------------------------------------------------------
# Bad files and bad blobs


def _dv_with_bad_crc() -> bytes:
    blob = bytearray(encode_deletion_vector(bitmap_from_ranges([(1, 3)])))
    blob[-1] ^= 0xFF
    return bytes(blob)


MALFORMED: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "file is empty; the smallest Puffin file is 20 bytes (magic and an empty "
              "footer) (at byte 0)"),
    "three-bytes": (b"PFA", "file is 3 bytes; the smallest Puffin file is 20 bytes (magic and "
                    "an empty footer) (at byte 3)"),
    "random": (bytes((i * 37 + 11) % 256 for i in range(200)),
               "footer end magic is 5f84a9ce, expected 50464131 (PFA1) (at byte 196)"),
    "truncated-footer": (puffin_bytes()[:-5], "footer end magic is 00000000, expected "
                         "50464131 (PFA1) (at byte 23)"),
    "bad-json": (puffin_bytes(b'{"blobs":['), "footer payload is not valid JSON: Expecting "
                 "value at line 1 column 11 (at byte 8)"),
    "wrong-magic": (puffin_bytes(end_magic=b"PFA2"), "footer end magic is 50464132, expected "
                    "50464131 (PFA1) (at byte 28)"),
    "blob-past-end": (puffin_bytes(footer_payload([blob_entry(4, 100)]), blob_data=b"abc"),
                      "blob 0: blob range [4, 104) is outside the blob area [4, 7) (at byte 4)"),
    "encrypted": (b"AGS1" + bytes(60), "encrypted Iceberg file (AES-GCM stream, magic AGS1): "
                  "key needed (at byte 0)"),
    "bad-dv-crc": (puffin_bytes(footer_payload([blob_entry(
        4, len(_dv_with_bad_crc()), type=DV_BLOB_TYPE, fields=[ROW_POSITION_FIELD_ID],
        properties={"cardinality": "3", "referenced-data-file": "f"})]),
        blob_data=_dv_with_bad_crc()), "blob 0: "),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_file_gives_one_stderr_line(tmp_path: Path, name: str) -> None:
    data, message = MALFORMED[name]
    path = tmp_path / f"{name}.puffin"
    path.write_bytes(data)
    result = run(str(path))
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert "Traceback" not in result.output
    if name == "bad-dv-crc":
        assert lines[0].startswith(f"puffin: error: {path}: blob 0: CRC-32 is ")
        assert lines[0].endswith(f"(at byte {4 + len(_dv_with_bad_crc()) - 4})")
    else:
        assert lines[0] == f"puffin: error: {path}: {message}"


def test_bad_blob_does_not_hide_the_rest(tmp_path: Path) -> None:
    bad = _dv_with_bad_crc()
    payload = footer_payload([
        blob_entry(4, len(bad), type=DV_BLOB_TYPE, fields=[ROW_POSITION_FIELD_ID]),
        blob_entry(4 + len(bad), 5, type="vendor-blob"),
    ])
    path = tmp_path / "mixed.puffin"
    path.write_bytes(puffin_bytes(payload, blob_data=bad + b"hello"))
    result = run("--json", str(path))
    assert result.exit_code == 1
    (report,) = json.loads(result.stdout)["files"]
    first, second = report["blobs"]
    assert first["summary"] is None
    assert first["error"]["code"] == "dv.crc"
    assert first["error"]["offset"] == 4 + len(bad) - 4
    assert second["summary"] == {"size": 5, "head-hex": b"hello".hex(), "kind": "opaque"}
    assert len(result.stderr.splitlines()) == 1


def test_one_bad_file_among_good_ones(tmp_path: Path) -> None:
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"")
    good = str(SAMPLES / "public/deletion-vector-v1.puffin")
    result = run("--json", good, str(bad))
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [f["path"] for f in document["files"]] == [good]
    assert document["errors"] == [{
        "path": str(bad),
        "error": {"code": "file.too-short", "message": "file is empty; the smallest Puffin file "
                  "is 20 bytes (magic and an empty footer)", "offset": 0},
    }]
    assert result.stderr.count("\n") == 1


def test_missing_file() -> None:
    result = run("/nonexistent/x.puffin")
    assert result.exit_code == 1
    assert result.stderr == ("puffin: error: /nonexistent/x.puffin: cannot open: No such file "
                             "or directory\n")


def test_compressed_footer_and_empty_deletion_vector(tmp_path: Path) -> None:
    path = tmp_path / "lz4.puffin"
    with PuffinWriter(path, compress_footer=True) as writer:
        writer.add_blob(DV_BLOB_TYPE, encode_deletion_vector(bitmap_from_ranges([])),
                        fields=[ROW_POSITION_FIELD_ID],
                        properties=dv_blob_properties("file:/d.parquet", 0))
    result = run(str(path))
    assert result.exit_code == 0, result.output
    unfolded = result.stdout.replace("\n" + " " * 19, " ")
    assert ", LZ4-compressed, flags 01000000)" in unfolded
    assert "  deletion vector  0 positions\n                   cardinality property 0 agrees\n" \
        in result.stdout
    assert "  positions        none\n" in result.stdout


@dataclass(frozen=True)
class _FutureSummary:
    entries: int
    label: str
    kind: str = field(default="future-kind")


class _FutureHandler:
    type_name = "future-blob-v1"

    def summarize(self, data: bytes, meta: Any, options: Any) -> _FutureSummary:
        return _FutureSummary(len(data), data.decode())

    def check(self, data: bytes, meta: Any) -> list[Any]:
        return []


def test_a_summary_of_an_unknown_kind_is_shown_field_by_field(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blobs, "handler_for", lambda type_name: _FutureHandler())
    path = tmp_path / "future.puffin"
    path.write_bytes(puffin_bytes(footer_payload([blob_entry(4, 5, type="future-blob-v1")]),
                                  blob_data=b"hello"))
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.endswith("  decoded          future-kind\n"
                                  "  entries          5\n"
                                  '  label            "hello"\n')


def _other_formats(folder: Path) -> dict[str, tuple[Path, str]]:
    """Real files of other formats (written by pyarrow, fastavro, gzip; a Paimon BLOB file
    named *.puffin) and what inspect should call each."""
    import gzip

    import fastavro
    import pyarrow as pa
    import pyarrow.orc as orc
    import pyarrow.parquet as pq
    from paimon_files import build

    table = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    pq.write_table(table, folder / "data.parquet")
    orc.write_table(table, folder / "data.orc")
    with open(folder / "manifest.avro", "wb") as out:
        fastavro.writer(out, {"type": "record", "name": "r", "fields": [
            {"name": "id", "type": "long"}]}, [{"id": 1}, {"id": 2}])
    (folder / "v1.metadata.json").write_text('\n  {"format-version": 2, "location": "x"}\n')
    (folder / "v1.metadata.json.gz").write_bytes(gzip.compress(b'{"format-version": 2}' * 9))
    (folder / "paimon.puffin").write_bytes(build([b"first row", b"second"]))
    return {"parquet": (folder / "data.parquet", "a Parquet file (magic PAR1)"),
            "orc": (folder / "data.orc", "an ORC file (magic ORC)"),
            "avro": (folder / "manifest.avro", "an Avro file (magic Obj\\x01)"),
            "json": (folder / "v1.metadata.json", "a JSON document"),
            "gzip": (folder / "v1.metadata.json.gz", "a gzip file (magic 1f8b)"),
            "paimon": (folder / "paimon.puffin", "a Paimon BLOB file (puffin inspect reads it "
                                                 "when it is named *.blob)")}


def test_a_file_of_another_format_is_named(tmp_path: Path) -> None:
    """Not only the wrong magic: what the file is, in the same one line with its offset."""
    for path, what in _other_formats(tmp_path).values():
        size = path.stat().st_size
        result = run(str(path))
        assert result.exit_code == 1
        tail = path.read_bytes()[-4:].hex()
        assert result.stderr == (f"puffin: error: {path}: footer end magic is {tail}, expected "
                                 f"50464131 (PFA1): this is {what}, not a Puffin file (at byte "
                                 f"{size - 4})\n")


def test_an_unknown_file_is_not_named(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(b"NOPE" + bytes(40))
    result = run(str(path))
    assert result.stderr == (f"puffin: error: {path}: footer end magic is 00000000, expected "
                             "50464131 (PFA1) (at byte 40)\n")


def test_a_directory_gets_the_command_that_reads_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    plain = tmp_path / "some files"
    plain.mkdir()
    table = tmp_path / "orders"
    (table / "metadata").mkdir(parents=True)
    (table / "metadata" / "v1.metadata.json").write_text("{}")
    for command in (["inspect"], ["dump-blob", "0"]):
        for folder, hint in ((plain, f"puffin validate '{plain}'"),
                             (table, f"puffin table {table}")):
            done = subprocess.run([sys.executable, "-m", "puffin_cli", command[0], str(folder),
                                   *command[1:]], capture_output=True, text=True, check=False)
            assert done.returncode == 1, done.stderr
            (line,) = done.stderr.splitlines()
            assert line.startswith(f"puffin: error: {folder}: cannot open: a directory")
            assert line.endswith(f", use: {hint}")
