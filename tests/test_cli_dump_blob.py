"""``puffin dump-blob``: selection, every format, atomic -o, and the terminal refusal."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers import SAMPLES, blob_entry, footer_payload, puffin_bytes

from puffin_cli.blobs.deletion_vector import bitmap_from_ranges, encode_deletion_vector
from puffin_cli.cli import dump_blob as dump_blob_module
from puffin_cli.cli.main import cli
from puffin_cli.format.spec import DV_BLOB_TYPE, ROW_POSITION_FIELD_ID

MIXED = SAMPLES / "iceberg-java/multi-blob-mixed.puffin"
THETA = SAMPLES / "public/apache-datasketches-theta-v1.puffin"
DV64 = SAMPLES / "iceberg-java/dv-64bit.puffin"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["dump-blob", *args])


def expected(sample: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (SAMPLES / "expected" / f"{sample.name}.json").read_text(encoding="utf-8"))
    return data


def stored_bytes(sample: Path, index: int) -> bytes:
    blob = expected(sample)["blobs"][index]
    return sample.read_bytes()[blob["offset"]:blob["offset"] + blob["length"]]


# --------------------------------------------------------------------------------------------
# Formats


@pytest.mark.parametrize("index", range(6))
def test_bytes_are_decompressed_blob(index: int) -> None:
    result = run(str(MIXED), str(index))
    assert result.exit_code == 0, result.output
    want = expected(MIXED)["blobs"][index]
    assert len(result.stdout_bytes) == want["decompressed_length"]
    assert hashlib.sha256(result.stdout_bytes).hexdigest() == want["decompressed_sha256"]


def test_raw_bytes_are_stored_bytes() -> None:
    result = run(str(MIXED), "2", "--raw")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == stored_bytes(MIXED, 2)
    assert result.stdout_bytes[:4] == b"\x28\xb5\x2f\xfd"  # still a zstd frame


def test_hex_is_the_bytes_in_lines_of_32(monkeypatch: pytest.MonkeyPatch) -> None:
    # Small chunks so the 33 KiB blob crosses many chunk boundaries.
    monkeypatch.setattr(dump_blob_module, "HEX_CHUNK_LINES", 3)
    raw = stored_bytes(MIXED, 2)
    result = run(str(MIXED), "2", "--raw", "--as", "hex")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert all(len(line) == 64 for line in lines[:-1])
    assert 0 < len(lines[-1]) <= 64
    assert bytes.fromhex("".join(lines)) == raw


def test_hex_of_an_empty_blob_is_empty() -> None:
    result = run(str(MIXED), "4", "--as", "hex")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""


@pytest.mark.parametrize("sample", [DV64, SAMPLES / "public/deletion-vector-v1.puffin"],
                         ids=lambda p: p.stem)
def test_positions_match_iceberg_java(sample: Path) -> None:
    for index, blob in enumerate(expected(sample)["blobs"]):
        result = run(str(sample), str(index), "--as", "positions")
        assert result.exit_code == 0, result.output
        dv = blob["dv"]
        assert hashlib.sha256(result.stdout_bytes).hexdigest() == dv["positions_sha256"]
        lines = result.stdout.splitlines()
        assert len(lines) == dv["cardinality"]
        assert [int(p) for p in lines[:len(dv["first_positions"])]] == dv["first_positions"]


def test_json_is_the_decoded_summary() -> None:
    result = run(str(DV64), "0", "--json", "--limit", "3")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document)[:4] == ["schema-version", "command", "path", "blob"]
    assert document["blob"]["index"] == 0
    summary = document["blob"]["summary"]
    assert summary["kind"] == "deletion-vector"
    assert summary["cardinality"] == 113
    assert summary["ranges"] == [[0, 2], [65535, 65540], [4294967295, 4294967297]]
    assert summary["truncated"] is True


def test_sketch_is_the_library_description() -> None:
    import datasketches
    import zstandard

    result = run(str(THETA), "1", "--as", "sketch")
    assert result.exit_code == 0, result.output
    data = zstandard.ZstdDecompressor().decompress(stored_bytes(THETA, 1))
    assert result.stdout == datasketches.compact_theta_sketch.deserialize(data).to_string()
    assert "estimate             : 5\n" in result.stdout


# --------------------------------------------------------------------------------------------
# Selection


def test_select_by_field() -> None:
    by_field = run(str(THETA), "--field", "2")
    by_index = run(str(THETA), "1")
    assert by_field.exit_code == 0, by_field.output
    assert by_field.stdout_bytes == by_index.stdout_bytes


def test_select_by_type_and_field() -> None:
    result = run(str(MIXED), "--type", "oracle-empty-blob-v1", "--field", "7", "--raw")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == stored_bytes(MIXED, 5)


def test_select_a_deletion_vector_by_its_data_file(tmp_path: Path) -> None:
    data_file = "file:/tmp/oracle-build/fake-data/dv64-b.parquet"
    by_file = run(str(DV64), "--data-file", data_file, "--as", "positions")
    assert by_file.exit_code == 0, by_file.output
    index = [i for i, blob in enumerate(expected(DV64)["blobs"])
             if blob["properties"].get("referenced-data-file") == data_file]
    assert len(index) == 1
    assert by_file.stdout == run(str(DV64), str(index[0]), "--as", "positions").stdout
    # two DVs of one data file: name the INDEX
    twice = tmp_path / "twice.puffin"
    assert CliRunner().invoke(cli, ["write", str(twice), "--dv", "d.parquet", "--positions",
                                    "1", "--dv", "d.parquet", "--positions", "2"]).exit_code == 0
    both = run(str(twice), "--data-file", "d.parquet", "--as", "positions")
    assert both.exit_code == 2
    assert (f"2 blobs of data file d.parquet in {twice} (indexes 0, 1); give the INDEX of one"
            in both.stderr)
    assert run(str(twice), "1", "--data-file", "d.parquet", "--as", "positions").stdout == "2\n"


@pytest.mark.parametrize(("args", "message"), [
    ([], "name a blob: give its INDEX, or --type, --field and/or --data-file"),
    (["--data-file", "nowhere.parquet"], "{path} has no blob of data file nowhere.parquet"),
    (["9"], "invalid value for INDEX: {path} has 6 blobs; no blob 9"),
    (["--type", "apache-datasketches-theta-v1"],
     "3 blobs of type apache-datasketches-theta-v1 in {path} (indexes 0, 1, 2); give "
     "the INDEX of one"),
    (["--field", "99"], "{path} has no blob of field 99"),
    (["3", "--type", "apache-datasketches-theta-v1"],
     "blob 3 has no blob of type apache-datasketches-theta-v1"),
    (["3", "--as", "positions"],
     "--as positions needs a blob of type deletion-vector-v1; blob 3 is "
     "oracle-test-blob-v1"),
    (["3", "--as", "sketch"],
     "--as sketch needs a blob of type apache-datasketches-theta-v1; blob 3 is "
     "oracle-test-blob-v1"),
    (["0", "--raw", "--as", "positions"], "--raw applies to --as bytes and hex, not positions"),
    (["0", "--raw", "--json"], "--json writes the decoded summary; it excludes --as and --raw"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run(str(MIXED), *args)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"puffin dump-blob: error: {message.format(path=MIXED)}",
        "Try 'puffin dump-blob --help' for help."]
    assert result.stdout == ""


def test_old_format_option_still_works_with_a_warning() -> None:
    old = run(str(DV64), "0", "--format", "positions")
    assert old.exit_code == 0
    assert old.stdout == run(str(DV64), "0", "--as", "positions").stdout
    assert old.stderr == ("puffin: warning: --format is deprecated; use --as FORM (--json for "
                          "json)\n")
    as_json = run(str(DV64), "0", "--format=json")
    assert json.loads(as_json.stdout)["command"] == "dump-blob"


# --------------------------------------------------------------------------------------------
# Output file, terminal


def test_output_file_replaces_target_only_with_force(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    refused = run(str(MIXED), "3", "-o", str(target))
    assert refused.exit_code == 1
    assert str(refused.exception) == f"{target}: exists; use --force to overwrite it"
    assert target.read_bytes() == b"old"
    result = run(str(MIXED), "3", "-o", str(target), "--force")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert hashlib.sha256(target.read_bytes()).hexdigest() == \
        expected(MIXED)["blobs"][3]["decompressed_sha256"]
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def _bad_dv_file(path: Path) -> Path:
    blob = bytearray(encode_deletion_vector(bitmap_from_ranges([(1, 3)])))
    blob[-1] ^= 0xFF
    entry = blob_entry(4, len(blob), type=DV_BLOB_TYPE, fields=[ROW_POSITION_FIELD_ID])
    path.write_bytes(puffin_bytes(footer_payload([entry]), blob_data=bytes(blob)))
    return path


def test_failed_dump_leaves_target_untouched(tmp_path: Path) -> None:
    source = _bad_dv_file(tmp_path / "bad.puffin")
    target = tmp_path / "positions.txt"
    target.write_bytes(b"old")
    result = run(str(source), "0", "--as", "positions", "-o", str(target), "--force")
    assert result.exit_code == 1
    assert "CRC-32" in str(result.exception)
    assert "CRC-32" in str(result.exception)
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.puffin", "positions.txt"]


def test_bad_blob_error_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from puffin_cli.cli.main import main

    source = _bad_dv_file(tmp_path / "bad.puffin")
    with pytest.raises(SystemExit) as exit_info:
        main(["dump-blob", str(source), "0", "--as", "positions"])
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"puffin: error: {source}: blob 0: CRC-32 is ")
    crc_at = 4 + len(encode_deletion_vector(bitmap_from_ranges([(1, 3)]))) - 4
    assert err.endswith(f"(at byte {crc_at})\n")


def test_raw_bytes_refused_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dump_blob_module, "_stdout_is_terminal", lambda: True)
    result = run(str(MIXED), "0")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines()[0] == (
        "puffin dump-blob: error: not writing binary blob bytes to a terminal; use --as hex, "
        "-o FILE or redirect the output")
    assert run(str(MIXED), "0", "--as", "hex").exit_code == 0
