"""Paimon BLOB files (``.blob``): the container codec, metadata reads, every validate rule, and
the inspect / dump-blob / write / validate / scan commands. pypaimon itself is compared in
test_paimon_interop.py."""

from __future__ import annotations

import json
import os
import random
import struct
from array import array
from pathlib import Path

import pytest
from helpers import run_main
from paimon_files import PLAIN_ROWS, build, corruptions

from puffin_cli.analysis.validate import validate_file
from puffin_cli.errors import PuffinError
from puffin_cli.format import paimon_blob as pb
from puffin_cli.format.paimon_blob.index import _decode_exact as decode_exact
from puffin_cli.storage import FileIO


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- the codec -----------------------------------------------------------------------------

@pytest.mark.parametrize("values", [[], [0], [-1], [-2, -1, 16], [21, 21, 21, 5000, -1, 16],
                                    [1 << 40, -(1 << 40), 7], [(1 << 63) - 1]])
def test_lengths_round_trip(values: list[int]) -> None:
    decoded, problem = pb.decode_lengths(pb.encode_lengths(values))
    assert problem is None
    assert list(decoded) == values


def _large_index_cases() -> list[list[int]]:
    rng = random.Random(13)
    count = pb.VECTOR_DECODE_BYTES
    return [
        [rng.choice([-1, -2, 16, 17, 5000, 1 << 20]) for _ in range(count)],
        [rng.randrange(16, 1 << 40) for _ in range(count // 4)],
        [16] * count + [1 << 61, -(1 << 61), 0],
        [(1 << 62) - 1, -(1 << 62)] * (count // 8),  # 9- and 10-byte varints: exact path
    ]


@pytest.mark.parametrize("chunk", [pb.VECTOR_CHUNK, 777])
@pytest.mark.parametrize("values", _large_index_cases(), ids=["markers", "wide", "edges", "long"])
def test_large_indexes_decode_as_the_exact_decoder_does(values: list[int], chunk: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pb, "VECTOR_CHUNK", chunk)
    data = pb.encode_lengths(values)
    assert len(data) >= pb.VECTOR_DECODE_BYTES
    decoded, problem = pb.decode_lengths(data)
    assert problem is None and list(decoded) == values
    assert decode_exact(data) == (decoded, None)
    for bad in (data + b"\x80", data + b"\xff" * 10 + b"\x01"):
        assert pb.decode_lengths(bad)[1] is not None


@pytest.mark.parametrize("values", [
    [16, -1, 40, -2, 17, -5, 1 << 60, 16, -1] * 9000,
    [16, 20, -1] * 30000,
], ids=["huge-lengths", "plain"])
@pytest.mark.parametrize("chunk", [pb.VECTOR_CHUNK, 1000])
def test_large_index_offsets_are_the_loops(values: list[int], chunk: int,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pb, "VECTOR_CHUNK", chunk)
    lengths = array("q", values)
    assert len(values) >= pb.VECTOR_DECODE_BYTES
    large = pb.BlobIndex(10**9, 1, 0, lengths)
    monkeypatch.setattr(pb, "VECTOR_DECODE_BYTES", 1 << 40)  # the loop, for reference
    loop = pb.BlobIndex(10**9, 1, 0, lengths)
    assert list(large.offsets) == list(loop.offsets)
    assert large.records_end == loop.records_end == sum(v for v in values if v >= 0)
    assert (large.nulls, large.placeholders) == (loop.nulls, loop.placeholders) == \
        (values.count(-1), values.count(-2))


def test_index_encoding_is_delta_zigzag_leb128() -> None:
    # 21 -> zigzag 42; delta 0 -> 0; delta -22 (to -1) -> zigzag 43; delta 301 -> zigzag 602 = da 04
    assert pb.encode_lengths([21, 21, -1, 300]) == bytes([42, 0, 43, 0xDA, 0x04])


def test_unterminated_varint_is_a_problem_at_its_offset() -> None:
    values, problem = pb.decode_lengths(bytes([42, 0, 0x80]))
    assert list(values) == [21, 21]
    assert problem is not None and problem.code == "paimon.index.varint" and problem.at == 2


def test_empty_and_all_null_files_are_what_paimon_writes(tmp_path: Path) -> None:
    assert build([]) == pb.EMPTY_FILE == bytes.fromhex("0000000001")
    assert build([pb.Marker.NULL] * 3) == bytes.fromhex("010000" "03000000" "01")


def test_a_record_is_magic_data_length_crc() -> None:
    data = build([b"hello"])
    assert data[:4] == bytes.fromhex("cf114e58")
    assert data[4:9] == b"hello"
    assert struct.unpack("<Q", data[9:17])[0] == 21
    import zlib

    assert struct.unpack("<I", data[17:21])[0] == zlib.crc32(data[:17])


# -- the reader: metadata is the tail and the index --------------------------------------

def test_metadata_is_one_tail_read_never_the_data(tmp_path: Path) -> None:
    rows: list[bytes | pb.Marker] = [os.urandom(200_000) for _ in range(5)]
    path = write(tmp_path / "big.blob", build(rows))
    with pb.PaimonBlobReader(path, memory_limit=1 << 24, fileio=FileIO()) as reader:
        assert reader.source.reads == 1
        assert reader.source.bytes_read == pb.TAIL_READ
        assert reader.index.rows == 5 and reader.index.records_end == 5 * 200_016
        assert reader.index.row(3) == pb.Row(3, "blob", 3 * 200_016, 200_016)


def test_an_index_larger_than_the_tail_costs_one_more_read(tmp_path: Path) -> None:
    rows = [b"x", *[pb.Marker.NULL, pb.Marker.PLACEHOLDER] * 40_000]  # 1 index byte each
    path = write(tmp_path / "many.blob", build(rows))
    with pb.PaimonBlobReader(path, memory_limit=1 << 24, fileio=FileIO()) as reader:
        assert reader.index.index_length > pb.TAIL_READ
        assert reader.source.reads == 2
        assert reader.source.bytes_read == pb.TAIL_READ + reader.index.index_length
        assert reader.index.rows == 80_001 and reader.index.nulls == 40_000


def test_index_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "a.blob", build([b"x"] * 100))
    with pytest.raises(PuffinError) as error:
        pb.PaimonBlobReader(path, memory_limit=10, fileio=FileIO())
    assert error.value.code == "paimon.index.too-large"


def test_record_data_is_streamed_in_chunks(tmp_path: Path) -> None:
    payload = os.urandom(3000)
    path = write(tmp_path / "a.blob", build([payload]))
    with pb.PaimonBlobReader(path, memory_limit=1 << 24, fileio=FileIO()) as reader:
        chunks = list(reader.iter_data(reader.index.row(0), chunk=1024))
    assert [len(c) for c in chunks] == [1024, 1024, 952]
    assert b"".join(chunks) == payload


@pytest.mark.parametrize(("name", "data", "expected"), [
    ("plain", build(PLAIN_ROWS), True),
    ("empty", pb.EMPTY_FILE, True),
    ("all null", build([pb.Marker.NULL, pb.Marker.PLACEHOLDER]), True),
    ("puffin", b"PFA1" + b"\x00" * 20 + b"PFA1", False),
    ("text", b"hello world\n", False),
    ("bad version", build([b"x"])[:-1] + b"\x02", False),
])
def test_content_recognition(tmp_path: Path, name: str, data: bytes, expected: bool) -> None:
    assert pb.is_paimon_blob(write(tmp_path / "file.bin", data), fileio=FileIO()) is expected


# -- validate ------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [
    [], [pb.Marker.NULL] * 4, [pb.Marker.PLACEHOLDER] * 2, PLAIN_ROWS,
    [pb.encode_array([b"a", None, b""]), pb.encode_array([]), pb.Marker.NULL],
    [pb.encode_map([(b"k", b"v"), (None, None), (b"", b"w")]), pb.encode_map([])],
], ids=["empty", "all-null", "placeholders", "plain", "array", "map"])
def test_valid_files_have_no_findings(tmp_path: Path, rows: list[bytes | pb.Marker]) -> None:
    report = validate_file(write(tmp_path / "ok.blob", build(rows)), fileio=FileIO())
    assert report.findings == ()
    assert report.blob_count == len(rows)


@pytest.mark.parametrize("corruption", corruptions(), ids=lambda c: c.name)
def test_each_corruption_has_its_finding(tmp_path: Path, corruption) -> None:  # type: ignore[no-untyped-def]
    report = validate_file(write(tmp_path / "bad.blob", corruption.data), fileio=FileIO())
    codes = {finding.code for finding in report.findings}
    assert corruption.code in codes
    assert report.errors > 0
    assert all(finding.offset is None or finding.offset >= 0 for finding in report.findings)


def test_large_records_are_checked_streamed_and_across_blocks(tmp_path: Path) -> None:
    rows: list[bytes | pb.Marker] = [os.urandom(pb.CHUNK + 10), *[os.urandom(600_000)] * 4]
    data = build(rows)
    assert validate_file(write(tmp_path / "ok.blob", data), fileio=FileIO()).findings == ()
    bad = bytearray(data)
    bad[pb.CHUNK] ^= 1  # inside the first (streamed) record
    bad[pb.CHUNK + 26 + 2 * 600_016 + 300_000] ^= 1  # inside row 3, read from a block
    report = validate_file(write(tmp_path / "bad.blob", bytes(bad)), fileio=FileIO())
    assert [(f.code, f.message.split(":")[0], f.blob_index) for f in report.findings] == \
        [("paimon.record.crc", "row 0", 0), ("paimon.record.crc", "row 3", 3)]


def test_a_plain_blob_is_not_mistaken_for_a_nested_one(tmp_path: Path) -> None:
    report = validate_file(write(tmp_path / "ok.blob", build([b"BCB", b"BCBZ" * 10])),
                           fileio=FileIO())
    assert report.findings == ()


def test_an_unreadable_blob_file_is_a_file_finding(tmp_path: Path) -> None:
    (tmp_path / "dir.blob").mkdir()
    report = validate_file(tmp_path / "dir.blob", fileio=FileIO())
    assert [f.code for f in report.findings] == ["file.open"]
    report = validate_file(write(tmp_path / "empty.blob", b""), fileio=FileIO())
    assert [f.code for f in report.findings] == ["paimon.file.size"]


def test_findings_of_one_code_are_capped(tmp_path: Path) -> None:
    from puffin_cli.analysis.paimon import MAX_FINDINGS_PER_CODE

    rows: list[bytes | pb.Marker] = [b"x"] * (MAX_FINDINGS_PER_CODE + 30)
    data = bytearray(build(rows))
    for row in range(len(rows)):
        data[row * 17 + 4] ^= 0xFF  # the data byte of every record: a CRC mismatch each
    report = validate_file(write(tmp_path / "bad.blob", bytes(data)), fileio=FileIO())
    crc = [f for f in report.findings if f.code == "paimon.record.crc"]
    assert len(crc) == MAX_FINDINGS_PER_CODE + 1
    assert crc[-1].message.startswith("30 more findings")


def test_validate_cli_exit_codes_and_json(tmp_path: Path,
                                          capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    good = write(tmp_path / "good.blob", build(PLAIN_ROWS))
    bad = write(tmp_path / "bad.blob", corruptions()[11].data)
    code, _, _ = run_main(capsysbinary, "validate", str(good))
    assert code == 0
    code, out, _ = run_main(capsysbinary, "validate", "--json", str(good), str(bad))
    assert code == 1
    text = out.decode()
    assert "paimon.record.crc" in text and str(bad) in text


def test_a_directory_is_searched_for_blob_files(tmp_path: Path,
                                                capsysbinary: pytest.CaptureFixture[bytes]
                                                ) -> None:
    (tmp_path / "t" / "data").mkdir(parents=True)
    write(tmp_path / "t" / "data" / "a.blob", build(PLAIN_ROWS))
    write(tmp_path / "t" / "data" / "no-suffix", build([b"content-recognised"]))
    write(tmp_path / "t" / "data" / "bad.blob", corruptions()[0].data)
    write(tmp_path / "t" / "notes.txt", b"not a blob file")
    code, out, _ = run_main(capsysbinary, "validate", "--json", str(tmp_path / "t"))
    paths = [os.path.basename(r["path"]) for r in json.loads(out)["files"]]
    assert sorted(paths) == ["a.blob", "bad.blob", "no-suffix"]
    assert code == 1
    code, out, _ = run_main(capsysbinary, "scan", str(tmp_path / "t"), "--json")
    assert code == 1
    assert b"paimon.trailer.version" in out


# -- inspect -------------------------------------------------------------------------------

def test_inspect_json_facts(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    rows = [*PLAIN_ROWS, pb.encode_array([b"a", None]), pb.encode_map([(b"k", b"v")])]
    path = write(tmp_path / "f.bin", build(rows))  # recognised by content
    code, out, _ = run_main(capsysbinary, "inspect", "--json", str(path))
    assert code == 0
    (file,) = json.loads(out)["files"]
    assert file["format"] == "paimon-blob"
    assert (file["row-count"], file["records"], file["nulls"], file["placeholders"]) == \
        (7, 5, 1, 1)
    assert file["file-size"] == path.stat().st_size
    assert file["index-offset"] + file["index-length"] + 5 == file["file-size"]
    kinds = [r["kind"] for r in file["rows"]]
    assert kinds == ["blob", "null", "blob", "placeholder", "blob", "blob", "blob"]
    assert [r["offset"] for r in file["rows"] if r["kind"] == "blob"] == [0, 21, 37, 353, 385]
    assert file["rows"][4]["data-length"] == 300
    assert file["rows"][0]["crc"] == path.read_bytes()[17:21][::-1].hex()
    assert file["rows"][5]["nested"] == {"kind": "array", "version": 1, "count": 2}
    assert file["rows"][6]["nested"] == {"kind": "map", "version": 1, "count": 1}


def test_inspect_summarises_rows_past_the_limit(tmp_path: Path,
                                                capsysbinary: pytest.CaptureFixture[bytes]
                                                ) -> None:
    path = write(tmp_path / "f.blob", build([b"x"] * 50))
    code, out, _ = run_main(capsysbinary, "inspect", "--limit", "3", str(path))
    text = out.decode()
    assert code == 0
    assert "rows             50 (50 with data)" in text
    assert "first 3 of 50 rows; --limit shows more" in text
    code, out, _ = run_main(capsysbinary, "inspect", "--json", "--limit", "3", str(path))
    assert len(json.loads(out)["files"][0]["rows"]) == 3


def test_inspect_no_decode_reads_only_the_metadata(tmp_path: Path,
                                                   capsysbinary: pytest.CaptureFixture[bytes]
                                                   ) -> None:
    data = bytearray(build([b"x"] * 3))
    data[0:4] = b"XXXX"  # a bad record, which inspect would flag if it read it
    path = write(tmp_path / "f.blob", bytes(data))
    code, out, _ = run_main(capsysbinary, "inspect", "--json", "--no-decode", str(path))
    assert code == 0
    rows = json.loads(out)["files"][0]["rows"]
    assert [r["crc"] for r in rows] == [None] * 3
    assert [r["offset"] for r in rows] == [0, 17, 34]


def test_inspect_flags_a_bad_record_and_fails(tmp_path: Path,
                                              capsysbinary: pytest.CaptureFixture[bytes]
                                              ) -> None:
    data = bytearray(build([b"hello"]))
    data[0] = 0
    code, out, err = run_main(capsysbinary, "inspect", str(write(tmp_path / "f.blob", data)))
    assert code == 1
    assert "record magic is 00114e58" in out.decode()
    assert "row 0: record magic" in err


def test_inspect_of_an_unreadable_index_is_one_line(tmp_path: Path,
                                                    capsysbinary: pytest.CaptureFixture[bytes]
                                                    ) -> None:
    path = write(tmp_path / "f.blob", build([b"x"], index=lambda b: b + b"\x80"))
    code, _, err = run_main(capsysbinary, "inspect", str(path))
    assert code == 1
    assert err.count("\n") == 1 and "unterminated" in err and "at byte" in err


# -- dump-blob -----------------------------------------------------------------------------

def test_dump_every_row(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    array = pb.encode_array([b"a", None])
    path = write(tmp_path / "f.blob", build([*PLAIN_ROWS, array]))
    for row, expected in [(0, b"hello"), (2, b""), (4, b"x" * 300), (5, array)]:
        code, out, _ = run_main(capsysbinary, "dump-blob", str(path), str(row))
        assert (code, out) == (0, expected)
    code, out, _ = run_main(capsysbinary, "dump-blob", str(path), "0", "--as", "hex")
    assert out == b"68656c6c6f\n"
    code, out, _ = run_main(capsysbinary, "dump-blob", str(path), "0", "--json")
    document = json.loads(out)
    assert list(document)[:3] == ["schema-version", "command", "path"]
    assert (document["row"]["row"], document["row"]["data-length"]) == (0, 5)
    code, out, _ = run_main(capsysbinary, "dump-blob", str(path), "0", "--raw")
    assert out == path.read_bytes()[:21]


def test_dump_null_and_placeholder_rows_say_so(tmp_path: Path,
                                               capsysbinary: pytest.CaptureFixture[bytes]
                                               ) -> None:
    path = write(tmp_path / "f.blob", build(PLAIN_ROWS))
    code, out, err = run_main(capsysbinary, "dump-blob", str(path), "1")
    assert (code, out) == (1, b"")
    assert "row 1 is a null row" in err
    code, out, err = run_main(capsysbinary, "dump-blob", str(path), "3", "-o",
                            str(tmp_path / "out"))
    assert code == 1 and "placeholder row" in err
    assert not (tmp_path / "out").exists()
    code, _, err = run_main(capsysbinary, "dump-blob", str(path), "9")
    assert code == 2 and "has 5 rows; no row 9" in err


def test_dump_to_a_file_streams_a_large_row(tmp_path: Path,
                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    payload = os.urandom(3 * pb.CHUNK + 5)
    path = write(tmp_path / "f.blob", build([payload]))
    code, _, _ = run_main(capsysbinary, "dump-blob", str(path), "0", "-o", str(tmp_path / "o"))
    assert code == 0 and (tmp_path / "o").read_bytes() == payload


def test_dump_of_a_crc_mismatch_fails_and_leaves_no_file(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    data = bytearray(build([b"hello"]))
    data[5] ^= 1
    path = write(tmp_path / "f.blob", bytes(data))
    code, _, err = run_main(capsysbinary, "dump-blob", str(path), "0", "-o", str(tmp_path / "o"))
    assert code == 1 and "CRC-32" in err
    assert not (tmp_path / "o").exists()
    code, out, err = run_main(capsysbinary, "dump-blob", str(path), "0")
    assert (code, out) == (1, b"")  # a record of up to 1 MiB is checked before any output


# -- write ---------------------------------------------------------------------------------

def _entries(tmp_path: Path, rows: list[bytes | pb.Marker]) -> list[str]:
    names = []
    for number, row in enumerate(rows):
        if row is pb.Marker.NULL:
            names.append(":null")
        elif row is pb.Marker.PLACEHOLDER:
            names.append(":placeholder")
        else:
            assert isinstance(row, bytes)
            names.append(str(write(tmp_path / f"entry-{number}", row)))
    return names


def test_write_is_the_encoder_byte_for_byte(tmp_path: Path,
                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    args = [arg for name in _entries(tmp_path, PLAIN_ROWS) for arg in ("--entry", name)]
    code, out, _ = run_main(capsysbinary, "write", str(tmp_path / "out.blob"), *args)
    assert code == 0
    assert (tmp_path / "out.blob").read_bytes() == build(PLAIN_ROWS)
    assert b"5 rows (1 null, 1 placeholder)" in out


def test_write_entries_from_a_list_and_explicit_choice(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    rows: list[bytes | pb.Marker] = [str(n).encode() for n in range(1000)]
    rows[7] = pb.Marker.NULL
    listing = write(tmp_path / "list.txt", "\n".join(_entries(tmp_path, rows)).encode() + b"\n")
    code, out, _ = run_main(capsysbinary, "write", str(tmp_path / "out.bin"), "--paimon",
                          "--entries-from", str(listing), "--json")
    assert code == 0
    assert (tmp_path / "out.bin").read_bytes() == build(rows)
    assert json.loads(out)["rows"] == 1000
    empty = write(tmp_path / "empty.txt", b"")
    code, _, _ = run_main(capsysbinary, "write", str(tmp_path / "empty.blob"),
                        "--entries-from", str(empty))
    assert code == 0 and (tmp_path / "empty.blob").read_bytes() == pb.EMPTY_FILE


@pytest.mark.parametrize(("args", "message"), [
    (["out.blob"], "give the rows"),
    (["out.blob", "--entry", "e", "--dv", "f.parquet", "--positions", "1"], "Puffin options"),
    (["out.puffin", "--entry", "e"], "name OUTPUT *.blob or add --paimon"),
])
def test_write_usage_errors(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes],
                            args: list[str], message: str) -> None:
    os.chdir(tmp_path)
    code, _, err = run_main(capsysbinary, "write", *args)
    assert code == 2 and message in err


def test_write_refuses_what_is_not_a_regular_file_and_leaves_nothing(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    good = write(tmp_path / "good", b"data")
    target = tmp_path / "out.blob"
    for bad in (str(fifo), str(tmp_path / "missing"), str(tmp_path)):
        code, _, err = run_main(capsysbinary, "write", str(target), "--entry", str(good),
                              "--entry", bad)
        assert code == 1 and err.startswith(f"puffin: error: {bad}: ")
    assert os.listdir(tmp_path) == sorted(["fifo", "good"]) or \
        sorted(os.listdir(tmp_path)) == ["fifo", "good"]


def test_write_never_replaces_a_file_without_force(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    target = write(tmp_path / "out.blob", b"keep me")
    entry = str(write(tmp_path / "e", b"new"))
    code, _, err = run_main(capsysbinary, "write", str(target), "--entry", entry)
    assert code == 1 and "exists" in err and target.read_bytes() == b"keep me"
    code, _, _ = run_main(capsysbinary, "write", str(target), "--entry", entry, "--force")
    assert code == 0 and target.read_bytes() == build([b"new"])


def test_nested_indexes_beyond_the_memory_limit_are_not_read() -> None:
    """An ARRAY payload whose element index could decode to more than the limit is one
    paimon.nested.too-large finding, at its index lengths, and nothing of it is decoded."""
    index = bytes(10)  # ten one-byte lengths
    payload = struct.pack("<IBI", 0x41424342, 1, 10) + index + struct.pack("<I", len(index))
    reads: list[tuple[int, int]] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return payload[offset:offset + length]

    (finding,) = pb.check_nested(read, 0, len(payload), 3, memory_limit=16)
    assert finding.code == "paimon.nested.too-large"
    assert finding.offset == len(payload) - 4 and finding.blob_index == 3
    assert finding.message.startswith("row 3: ARRAY<BLOB> indexes of 10 bytes may decode to ")
    assert (9, 10) not in reads  # the index itself was not read
