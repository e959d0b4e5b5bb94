"""PuffinReader and read_footer on hand-built bytes: every malformed branch (exact message, code
and offset), the I/O contract (what is read, and how often), and file locations."""

from __future__ import annotations

import json
import os
import random
import struct
from pathlib import Path

import lz4.frame
import pytest
import zstandard
from helpers import blob_entry, footer_payload, puffin_bytes

from puffin_cli.format import (
    BlobTooLargeError,
    EncryptedFileError,
    PuffinError,
    PuffinReader,
    PuffinWriter,
)
from puffin_cli.format.spec import DEFAULT_TAIL_READ, MIN_FILE_LENGTH
from puffin_cli.storage import default_io

ENCRYPTED = "encrypted Iceberg file (AES-GCM stream, magic AGS1): key needed"


def write(tmp_path: Path, data: bytes, name: str = "f.puffin") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def metadata_error(tmp_path: Path, data: bytes, **options: int) -> PuffinError:
    """The error reading ``data``'s metadata raises (path set to the file)."""
    path = write(tmp_path, data)
    with PuffinReader(path, **options) as reader, pytest.raises(PuffinError) as info:
        reader.metadata  # noqa: B018
    assert info.value.path == str(path)
    return info.value


def blob_error(tmp_path: Path, data: bytes, index: int = 0, **options: int) -> PuffinError:
    """The error reading blob ``index`` of ``data`` raises; its metadata must read fine."""
    path = write(tmp_path, data)
    with PuffinReader(path, **options) as reader:
        blob = reader.blob(index)
        with pytest.raises(PuffinError) as info:
            reader.read_blob(blob)
    assert info.value.path == str(path)
    return info.value


def facts(exc: PuffinError) -> tuple[str, str, int | None]:
    return exc.code, exc.message, exc.offset


def one_blob_file(stored: bytes, **fields: object) -> bytes:
    """A file with ``stored`` as its one blob, described by a footer entry with ``fields``."""
    return puffin_bytes(footer_payload([blob_entry(4, len(stored), **fields)]),
                        blob_data=stored)


# --- file too short, encrypted, not Puffin ------------------------------------------------------


@pytest.mark.parametrize("data, what", [(b"", "empty"), (b"PFA", "3 bytes"),
                                        (b"PFA1" * 4 + b"PFA", "19 bytes")])
def test_too_short(tmp_path: Path, data: bytes, what: str) -> None:
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("file.too-short", f"file is {what}; the smallest Puffin file is 20 "
                          "bytes (magic and an empty footer)", len(data))
    assert MIN_FILE_LENGTH == 20


@pytest.mark.parametrize("size", [4, 19, 20, 1000, DEFAULT_TAIL_READ + 10])
def test_encrypted_file_short_and_long(tmp_path: Path, size: int) -> None:
    data = b"AGS1" + random.Random(size).randbytes(size - 4)
    exc = metadata_error(tmp_path, data)
    assert isinstance(exc, EncryptedFileError)
    assert facts(exc) == ("file.encrypted", ENCRYPTED, 0)
    assert str(exc) == f"{tmp_path / 'f.puffin'}: {ENCRYPTED} (at byte 0)"


def test_random_bytes(tmp_path: Path) -> None:
    data = random.Random(7).randbytes(5000)
    assert data[:4] != b"AGS1" and data[-4:] != b"PFA1"
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("footer.magic", f"footer end magic is {data[-4:].hex()}, expected "
                          "50464131 (PFA1)", 4996)


def test_wrong_end_magic(tmp_path: Path) -> None:
    data = puffin_bytes(end_magic=b"PFA2")
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("footer.magic", "footer end magic is 50464132, expected 50464131 "
                          "(PFA1)", len(data) - 4)


def test_wrong_footer_start_magic(tmp_path: Path) -> None:
    exc = metadata_error(tmp_path, puffin_bytes(footer_magic=b"XXXX"))
    assert facts(exc) == ("footer.magic", "footer start magic is 58585858, expected 50464131 "
                          "(PFA1); payload size 12 may be wrong", 4)


def test_payload_size_one_short_lands_off_the_start_magic(tmp_path: Path) -> None:
    data = puffin_bytes(b'{"blobs":[]}', payload_size=11)
    exc = metadata_error(tmp_path, data)
    # The footer would start one byte later, inside "PFA1": "FA1{".
    assert facts(exc) == ("footer.magic", "footer start magic is 4641317b, expected 50464131 "
                          "(PFA1); payload size 11 may be wrong", 5)


def test_negative_payload_size(tmp_path: Path) -> None:
    data = puffin_bytes(payload_size=-1)
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("footer.payload-size", "footer payload size is negative (-1)",
                          len(data) - 12)


@pytest.mark.parametrize("payload_size, start", [(13, 3), (1000, -984)])
def test_payload_size_past_file_start(tmp_path: Path, payload_size: int, start: int) -> None:
    data = puffin_bytes(payload_size=payload_size)
    assert len(data) == 32
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("footer.payload-size", f"footer payload size {payload_size} does not "
                          f"fit in a file of 32 bytes (footer would start at byte {start}, "
                          "before the end of the leading magic at 4)", 20)


@pytest.mark.parametrize("flags", [b"\x02\x00\x00\x00", b"\x00\x00\x00\x80", b"\x03\x00\x01\x00"])
def test_reserved_flag_bits(tmp_path: Path, flags: bytes) -> None:
    data = puffin_bytes(flags=flags)
    exc = metadata_error(tmp_path, data)
    assert facts(exc) == ("footer.flags.reserved", f"reserved footer flag bits are set (flags "
                          f"{flags.hex()}); only bit 0 of byte 0 is defined", len(data) - 8)


# --- compressed footers ---------------------------------------------------------------------

COMPRESSED = b"\x01\x00\x00\x00"
PLAIN = b'{"blobs":[],"properties":{"created-by":"x"}}'


def lz4_footer_error(tmp_path: Path, payload: bytes, **options: int) -> PuffinError:
    return metadata_error(tmp_path, puffin_bytes(payload, flags=COMPRESSED), **options)


def test_compressed_footer_reads(tmp_path: Path) -> None:
    path = write(tmp_path, puffin_bytes(lz4.frame.compress(PLAIN, store_size=True),
                                        flags=COMPRESSED))
    with PuffinReader(path) as reader:
        assert reader.metadata.properties == {"created-by": "x"}
        assert reader.footer.compressed is True
        assert reader.footer.flags == COMPRESSED


def test_compressed_footer_not_lz4(tmp_path: Path) -> None:
    exc = lz4_footer_error(tmp_path, PLAIN)
    assert facts(exc) == ("footer.decompress", "footer payload: not an LZ4 frame: expected magic "
                          "04224d18, found 7b22626c", 8)


def test_compressed_footer_without_content_size(tmp_path: Path) -> None:
    exc = lz4_footer_error(tmp_path, lz4.frame.compress(PLAIN, store_size=False))
    assert facts(exc) == ("footer.decompress", "footer payload: LZ4 frame has no content size; "
                          "the spec requires it", 8)


def test_compressed_footer_truncated(tmp_path: Path) -> None:
    frame = lz4.frame.compress(PLAIN, store_size=True)[:-3]
    exc = lz4_footer_error(tmp_path, frame)
    assert facts(exc) == ("footer.decompress", f"footer payload: lz4 frame is truncated: "
                          f"{len(frame)} bytes end before the frame does", 8)


def test_compressed_footer_trailing_bytes(tmp_path: Path) -> None:
    exc = lz4_footer_error(tmp_path, lz4.frame.compress(PLAIN, store_size=True) + b"zz")
    assert facts(exc) == ("footer.decompress", "footer payload: 2 bytes follow the lz4 frame; "
                          "expected exactly one frame", 8)


def test_compressed_footer_content_over_limit(tmp_path: Path) -> None:
    exc = lz4_footer_error(tmp_path, lz4.frame.compress(PLAIN, store_size=True),
                           max_blob_size=10)
    assert facts(exc) == ("footer.decompress", f"footer payload: lz4 frame declares {len(PLAIN)} "
                          "bytes of content, more than the limit of 10 bytes (raise "
                          "--max-blob-size to decode it)", 8)


@pytest.mark.parametrize("compressed", [False, True])
def test_footer_beyond_tail_over_limit_is_not_read(tmp_path: Path, compressed: bool) -> None:
    payload = b" " * (DEFAULT_TAIL_READ + 100)  # never parsed: refused by its size
    data = puffin_bytes(payload, flags=COMPRESSED if compressed else bytes(4))
    path = write(tmp_path, data)
    with default_io().new_input(path) as source:
        from puffin_cli.format import read_footer

        found = read_footer(source, max_payload=DEFAULT_TAIL_READ)
        assert source.reads == 1 and source.bytes_read == DEFAULT_TAIL_READ
    assert found.payload is None and found.info is not None
    assert [(f.code, f.message, f.offset) for f in found.findings] == [
        ("footer.payload-size", f"footer payload of {len(payload)} bytes is larger than the "
         f"limit of {DEFAULT_TAIL_READ} bytes (raise --max-blob-size to read it)",
         len(data) - 12)]


# --- footer JSON ----------------------------------------------------------------------------


def test_bad_utf8(tmp_path: Path) -> None:
    payload = b'{"blobs":[],"properties":{"a":"\xff"}}'
    exc = metadata_error(tmp_path, puffin_bytes(payload))
    assert facts(exc) == ("json.utf8", "footer payload is not UTF-8: invalid start byte at "
                          "payload byte 31", 8 + 31)


@pytest.mark.parametrize("payload, message", [
    ('{"blobs":[', "footer payload is not valid JSON: Expecting value at line 1 column 11"),
    ("", "footer payload is not valid JSON: Expecting value at line 1 column 1"),
    ('{"blobs":[]}x', "footer payload is not valid JSON: Extra data at line 1 column 13"),
    ('{"blobs":[]}\n{', "footer payload is not valid JSON: Extra data at line 2 column 1"),
    ("[" * 100_000, "footer payload JSON is nested too deeply"),
])
def test_bad_json(tmp_path: Path, payload: str, message: str) -> None:
    exc = metadata_error(tmp_path, puffin_bytes(payload))
    assert facts(exc) == ("json.syntax", message, 8)


def test_integer_too_long_for_python(tmp_path: Path) -> None:
    payload = '{"blobs":[],"x":' + "9" * 5000 + "}"
    exc = metadata_error(tmp_path, puffin_bytes(payload))
    assert exc.code == "json.syntax" and exc.offset == 8
    assert exc.message.startswith("footer payload is not usable JSON: Exceeds the limit (4300 "
                                  "digits) for integer string conversion")


@pytest.mark.parametrize("payload, code, message", [
    ("[]", "json.type", "footer payload must be a JSON object, found a list"),
    ("5", "json.type", "footer payload must be a JSON object, found the number 5"),
    ('"x"', "json.type", "footer payload must be a JSON object, found the string 'x'"),
    ("null", "json.type", "footer payload must be a JSON object, found null"),
    ("{}", "json.missing-field", "footer has no 'blobs' list"),
    ('{"properties":{}}', "json.missing-field", "footer has no 'blobs' list"),
    ('{"blobs":{}}', "json.type", "footer 'blobs' must be a list, found an object"),
    ('{"blobs":true}', "json.type", "footer 'blobs' must be a list, found a boolean"),
    ('{"blobs":[],"properties":"x"}', "json.type",
     "file 'properties' must be an object, found the string 'x'"),
    ('{"blobs":[],"properties":{"created-by":null}}', "json.type",
     "file property 'created-by' must be a string, found null"),
    ('{"blobs":[],"properties":{"n":1.5}}', "json.type",
     "file property 'n' must be a string, found the number 1.5"),
])
def test_footer_structure(tmp_path: Path, payload: str, code: str, message: str) -> None:
    exc = metadata_error(tmp_path, puffin_bytes(payload))
    assert facts(exc) == (code, message, 8)
    assert exc.blob_index is None


@pytest.mark.parametrize("key", ["type", "fields", "snapshot-id", "sequence-number", "offset",
                                 "length"])
def test_missing_blob_field(tmp_path: Path, key: str) -> None:
    entry = blob_entry()
    del entry[key]
    exc = metadata_error(tmp_path, puffin_bytes(footer_payload([blob_entry(), entry])))
    assert facts(exc) == ("json.missing-field", f"blob 1 has no {key!r}", 8)
    assert exc.blob_index == 1


@pytest.mark.parametrize("key, value, message", [
    ("type", 5, "blob 0 'type' must be a string, found the number 5"),
    ("type", None, "blob 0 'type' must be a string, found null"),
    ("fields", "1", "blob 0 'fields' must be a list of integers, found \"1\""),
    ("fields", [True], "blob 0 'fields' must be a list of integers, found [true]"),
    ("fields", [1, 2.0], "blob 0 'fields' must be a list of integers, found [1, 2.0]"),
    ("snapshot-id", "1", "blob 0 'snapshot-id' must be an integer, found \"1\""),
    ("snapshot-id", False, "blob 0 'snapshot-id' must be an integer, found false"),
    ("sequence-number", 1.5, "blob 0 'sequence-number' must be an integer, found 1.5"),
    ("offset", None, "blob 0 'offset' must be an integer, found null"),
    ("length", [1], "blob 0 'length' must be an integer, found [1]"),
    ("compression-codec", 5, "blob 0 'compression-codec' must be a string, found the number 5"),
    ("properties", [], "blob 0 'properties' must be an object, found a list"),
    ("properties", {"ndv": 5}, "blob 0 property 'ndv' must be a string, found the number 5"),
    ("properties", {"a": {}}, "blob 0 property 'a' must be a string, found an object"),
])
def test_mistyped_blob_field(tmp_path: Path, key: str, value: object, message: str) -> None:
    entry = blob_entry()
    entry[key] = value
    exc = metadata_error(tmp_path, puffin_bytes(footer_payload([entry])))
    assert facts(exc) == ("json.type", message, 8)
    assert exc.blob_index == 0


def test_blob_not_an_object(tmp_path: Path) -> None:
    exc = metadata_error(tmp_path, puffin_bytes('{"blobs":[1]}'))
    assert facts(exc) == ("json.type", "blob 0 must be an object, found the number 1", 8)


@pytest.mark.parametrize("key", ["offset", "length"])
def test_negative_offset_or_length(tmp_path: Path, key: str) -> None:
    exc = metadata_error(tmp_path, puffin_bytes(footer_payload([blob_entry(**{key: -1})])))
    assert facts(exc) == ("json.value", f"blob 0 {key!r} must not be negative, found -1", 8)


def test_null_codec_means_none(tmp_path: Path) -> None:
    path = write(tmp_path, one_blob_file(b"abc", compression_codec=None))
    with PuffinReader(path) as reader:
        blob = reader.blob(0)
        assert blob.compression_codec is None
        assert reader.read_blob(blob) == b"abc"


def test_unknown_keys_are_kept_and_written_back(tmp_path: Path) -> None:
    from puffin_cli.format.metadata import decode_footer_json

    payload = footer_payload([blob_entry(4, 3, **{"x-vendor": {"a": [1]}})],
                             {"created-by": "me"}, **{"x-top": 7})
    path = write(tmp_path, puffin_bytes(payload, blob_data=b"abc"))
    with PuffinReader(path) as reader:
        metadata = reader.metadata
        assert reader.read_blob(reader.blob(0)) == b"abc"
    assert metadata.extra == {"x-top": 7}
    assert metadata.blobs[0].extra == {"x-vendor": {"a": [1]}}
    assert metadata.to_payload() == payload
    again, findings = decode_footer_json(payload, 8)
    assert again == metadata
    assert [(f.code, f.severity.value, f.message, f.offset, f.blob_index) for f in findings] == [
        ("json.unknown-field", "info", "blob 0 has an unknown key 'x-vendor'", 8, 0),
        ("json.unknown-field", "info", "footer has an unknown key 'x-top'", 8, None),
    ]


def test_findings_collect_every_problem_and_created_by() -> None:
    from puffin_cli.format.metadata import decode_footer_json

    bad = blob_entry(offset=-1)
    del bad["type"]
    payload = footer_payload([bad, {**blob_entry(), "length": "x"}], {"a": "b"})
    metadata, findings = decode_footer_json(payload)
    assert metadata is None
    assert [(f.code, f.severity.value, f.message, f.offset, f.blob_index) for f in findings] == [
        ("json.missing-field", "error", "blob 0 has no 'type'", None, 0),
        ("json.value", "error", "blob 0 'offset' must not be negative, found -1", None, 0),
        ("json.type", "error", "blob 1 'length' must be an integer, found \"x\"", None, 1),
        ("json.created-by", "info", "file properties have no 'created-by'", None, None),
    ]


# --- blob bytes -----------------------------------------------------------------------------


def test_blob_range_past_blob_area(tmp_path: Path) -> None:
    data = puffin_bytes(footer_payload([blob_entry(4, 100)]), blob_data=b"0123456789")
    exc = blob_error(tmp_path, data)
    assert facts(exc) == ("blob.range", "blob range [4, 104) is outside the blob area [4, 14)", 4)
    assert exc.blob_index == 0


def test_blob_range_over_leading_magic(tmp_path: Path) -> None:
    data = puffin_bytes(footer_payload([blob_entry(0, 4)]), blob_data=b"0123")
    exc = blob_error(tmp_path, data)
    assert facts(exc) == ("blob.range", "blob range [0, 4) is outside the blob area [4, 8)", 0)


def test_blob_over_max_blob_size_is_not_read(tmp_path: Path) -> None:
    data = one_blob_file(b"0123456789")
    path = write(tmp_path, data)
    with PuffinReader(path, max_blob_size=9) as reader:
        blob = reader.blob(0)
        before = reader.bytes_read
        with pytest.raises(BlobTooLargeError) as info:
            reader.read_raw(blob)
        assert reader.bytes_read == before
    assert facts(info.value) == ("blob.too-large", "blob of 10 bytes is larger than the limit "
                                 "of 9 bytes (raise --max-blob-size to read it)", 4)
    assert info.value.blob_index == 0


def test_no_such_blob(tmp_path: Path) -> None:
    path = write(tmp_path, one_blob_file(b"x"))
    with PuffinReader(path) as reader, pytest.raises(PuffinError) as info:
        reader.blob(1)
    assert facts(info.value) == ("blob.index", "no blob 1: the file has 1 blobs", None)


def huge_zstd_header(size: int) -> bytes:
    # Frame header descriptor 0xE0: single segment, 8-byte content size; no block follows.
    return zstandard.FRAME_HEADER + b"\xe0" + struct.pack("<Q", size)


def test_zstd_frame_declaring_huge_size_refused_before_allocation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_decompressor() -> None:
        raise AssertionError("a decompressor was created")

    monkeypatch.setattr(zstandard, "ZstdDecompressor", no_decompressor)
    exc = blob_error(tmp_path, one_blob_file(huge_zstd_header(1 << 40),
                                             compression_codec="zstd"))
    assert isinstance(exc, BlobTooLargeError)
    assert facts(exc) == ("blob.too-large", "zstd frame declares 1099511627776 bytes of content, "
                          "more than the limit of 67108864 bytes (raise --max-blob-size to "
                          "decode it)", 4)


def test_lz4_frame_declaring_huge_size_refused_before_allocation(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_decompressor() -> None:
        raise AssertionError("a decompressor was created")

    monkeypatch.setattr(lz4.frame, "LZ4FrameDecompressor", no_decompressor)
    header = lz4.frame.compress(b"x", store_size=True)[:6] + struct.pack("<Q", 1 << 40) + b"\0"
    exc = blob_error(tmp_path, one_blob_file(header, compression_codec="lz4"), max_blob_size=100)
    assert isinstance(exc, BlobTooLargeError)
    assert facts(exc) == ("blob.too-large", "lz4 frame declares 1099511627776 bytes of content, "
                          "more than the limit of 100 bytes (raise --max-blob-size to decode it)",
                          4)


def test_zstd_without_content_size(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(b"abc" * 10)
    exc = blob_error(tmp_path, one_blob_file(frame, compression_codec="zstd"))
    assert facts(exc) == ("blob.decompress", "Zstandard frame has no content size; the spec "
                          "requires it", 4)


def test_unknown_codec_parses_but_fails_on_read(tmp_path: Path) -> None:
    path = write(tmp_path, one_blob_file(b"abc", compression_codec="snappy"))
    with PuffinReader(path) as reader:
        blob = reader.blob(0)
        assert blob.compression_codec == "snappy"
        assert reader.read_raw(blob) == b"abc"
        with pytest.raises(PuffinError) as info:
            reader.read_blob(blob)
    assert facts(info.value) == ("blob.codec.unknown", "unknown compression codec 'snappy'; "
                                 "expected one of lz4, zstd", 4)
    assert info.value.blob_index == 0
    assert str(info.value) == (f"{path}: blob 0: unknown compression codec 'snappy'; expected "
                               "one of lz4, zstd (at byte 4)")


def test_second_blob_error_names_its_index_and_offset(tmp_path: Path) -> None:
    stored = b"ok" + b"notzstd"
    entries = [blob_entry(4, 2), blob_entry(6, 7, compression_codec="zstd")]
    data = puffin_bytes(footer_payload(entries), blob_data=stored)
    exc = blob_error(tmp_path, data, index=1)
    assert facts(exc) == ("blob.decompress", "not a Zstandard frame: expected magic 28b52ffd, "
                          "found 6e6f747a", 6)
    assert exc.blob_index == 1


# --- footer_size ----------------------------------------------------------------------------


@pytest.mark.parametrize("given", [15, 29, 1000])
def test_footer_size_impossible(tmp_path: Path, given: int) -> None:
    data = puffin_bytes()  # 32 bytes, footer 28
    exc = metadata_error(tmp_path, data, footer_size=given)
    assert facts(exc) == ("footer.size-mismatch", f"given footer size {given} is impossible for "
                          "a file of 32 bytes", None)


@pytest.mark.parametrize("given", [16, 27])
def test_footer_size_wrong(tmp_path: Path, given: int) -> None:
    exc = metadata_error(tmp_path, puffin_bytes(), footer_size=given)
    assert facts(exc) == ("footer.size-mismatch", f"given footer size {given} does not match the "
                          "file's footer size 28", None)


# --- InputFile ------------------------------------------------------------------------------


@pytest.mark.parametrize("offset, length, shown", [(10, 30, "[10, 40)"), (-1, 2, "[-1, 1)"),
                                                   (0, -1, "[0, -1)"), (33, 0, "[33, 33)")])
def test_range_outside_file(tmp_path: Path, offset: int, length: int, shown: str) -> None:
    path = write(tmp_path, bytes(32))
    with default_io().new_input(path) as source, pytest.raises(PuffinError) as info:
        source.read(offset, length)
    assert facts(info.value) == ("io.range", f"range {shown} is outside the file of 32 bytes",
                                 offset)
    assert info.value.path == str(path)


def test_range_inside_file_counts_reads(tmp_path: Path) -> None:
    path = write(tmp_path, bytes(range(32)))
    with default_io().new_input(path) as source:
        assert source.read(30, 2) == b"\x1e\x1f"
        assert source.read(32, 0) == b""
        assert (source.reads, source.bytes_read, source.size) == (1, 2, 32)  # 0 bytes: no I/O


def test_short_read_when_file_shrinks(tmp_path: Path) -> None:
    path = write(tmp_path, bytes(32))
    with default_io().new_input(path) as source:
        os.truncate(path, 20)
        with pytest.raises(PuffinError) as info:
            source.read(10, 20)
    assert facts(info.value) == ("io.range", "short read: wanted 20 bytes, got 10", 10)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PuffinError) as info:
        PuffinReader(tmp_path / "nope.puffin")
    assert facts(info.value) == ("io.not-found", "cannot open: No such file or directory", None)
    assert info.value.path == str(tmp_path / "nope.puffin")


def test_directory(tmp_path: Path) -> None:
    with pytest.raises(PuffinError) as info:
        PuffinReader(tmp_path)
    assert facts(info.value) == ("io.not-regular", "cannot open: a directory, not a regular "
                                 "file (this input needs random access)", None)
    assert info.value.path == str(tmp_path)


# --- locations ------------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["file:{}", "file://{}", "file://localhost{}", "{}"])
def test_file_uris(tmp_path: Path, form: str) -> None:
    path = write(tmp_path, one_blob_file(b"abc"))
    location = form.format(path)
    with PuffinReader(location) as reader:
        assert reader.read_blob(reader.blob(0)) == b"abc"
        assert reader.path == location


def test_file_uri_percent_escapes(tmp_path: Path) -> None:
    write(tmp_path, one_blob_file(b"abc"), name="a b.puffin")
    with PuffinReader(f"file://{tmp_path}/a%20b.puffin") as reader:
        assert reader.read_blob(reader.blob(0)) == b"abc"


def test_remote_file_uri_host(tmp_path: Path) -> None:
    with pytest.raises(PuffinError) as info:
        PuffinReader("file://elsewhere/x.puffin")
    assert facts(info.value) == ("io.uri", "file URI with host 'elsewhere' is not local", None)
    assert str(info.value) == ("file://elsewhere/x.puffin: file URI with host 'elsewhere' is "
                               "not local")


@pytest.mark.parametrize("location, scheme", [("ftp://host/t/x.puffin", "ftp"),
                                              ("hdfs://nn/x", "hdfs")])
def test_unsupported_scheme(location: str, scheme: str) -> None:
    with pytest.raises(PuffinError) as info:
        PuffinReader(location)
    assert facts(info.value) == ("io.uri", f"{scheme}:// locations are not supported (s3, s3a, "
                                 "s3n, gs, abfss, az, http, https, file and plain paths are)",
                                 None)
    assert info.value.path == location


# --- I/O contract ---------------------------------------------------------------------------


def sparse_file(tmp_path: Path, blob_length: int, properties: dict[str, str]) -> Path:
    """A Puffin file with one blob of ``blob_length`` zero bytes (a hole) and a real footer."""
    payload = footer_payload([blob_entry(4, blob_length)], properties)
    footer = puffin_bytes(payload)[4:]
    path = tmp_path / "big.puffin"
    with open(path, "wb") as out:
        out.write(b"PFA1")
        out.seek(4 + blob_length)
        out.write(footer)
    return path


def test_metadata_of_large_file_is_one_tail_read(tmp_path: Path) -> None:
    path = sparse_file(tmp_path, 50 * 1024 * 1024, {"created-by": "test"})
    with PuffinReader(path) as reader:
        assert reader.metadata.blobs[0].length == 50 * 1024 * 1024
        assert reader.footer.footer_start == 4 + 50 * 1024 * 1024
        assert (reader._file.reads, reader.bytes_read) == (1, DEFAULT_TAIL_READ)
        blob = reader.blob(0)
        assert reader.read_raw(blob) == bytes(blob.length)
        assert (reader._file.reads, reader.bytes_read) == (2, DEFAULT_TAIL_READ + blob.length)


def test_footer_larger_than_tail_costs_two_reads(tmp_path: Path) -> None:
    path = sparse_file(tmp_path, 1000, {"created-by": "test", "big": "é" * DEFAULT_TAIL_READ})
    with PuffinReader(path) as reader:
        assert reader.metadata.properties["big"] == "é" * DEFAULT_TAIL_READ
        footer_size = reader.footer.footer_size
        assert footer_size > DEFAULT_TAIL_READ
        assert (reader._file.reads, reader.bytes_read) == (2, DEFAULT_TAIL_READ + footer_size)


def test_given_footer_size_reads_exactly_the_footer(tmp_path: Path) -> None:
    path = sparse_file(tmp_path, 1 << 20, {"created-by": "test"})
    with PuffinReader(path) as reader:
        footer_size = reader.footer.footer_size
    with PuffinReader(path, footer_size=footer_size) as reader:
        assert reader.metadata.blobs[0].length == 1 << 20
        assert (reader._file.reads, reader.bytes_read) == (1, footer_size)


def test_small_file_reads_whole_file_once(tmp_path: Path) -> None:
    data = one_blob_file(b"abc")
    path = write(tmp_path, data)
    with PuffinReader(path) as reader:
        assert len(reader.metadata.blobs) == 1
        assert (reader._file.reads, reader.bytes_read) == (1, len(data))


def test_blobs_inside_the_tail_cost_no_read(tmp_path: Path) -> None:
    path = tmp_path / "w.puffin"
    with PuffinWriter(path) as writer:
        writer.add_blob("a", b"A" * 100, fields=[1])
        writer.add_blob("b", b"B" * 300, fields=[2], codec="zstd")
    with PuffinReader(path) as reader:
        blobs = reader.metadata.blobs
        assert reader.read_blob(blobs[1]) == b"B" * 300
        assert (reader._file.reads, reader.bytes_read) == (1, reader.file_size)


def test_blob_reads_touch_only_that_blob(tmp_path: Path) -> None:
    path = tmp_path / "w.puffin"
    with PuffinWriter(path) as writer:
        writer.add_blob("a", b"A" * 100, fields=[1])
        writer.add_blob("b", b"B" * 300, fields=[2], codec="zstd")
        writer.add_blob("c", b"C" * 50, fields=[3])
        writer.add_blob("pad", bytes(DEFAULT_TAIL_READ), fields=[0])  # a, b, c before the tail
    with PuffinReader(path) as reader:
        blobs = reader.metadata.blobs
        after_footer = reader.bytes_read
        assert reader._file.reads == 1
        assert reader.read_blob(blobs[1]) == b"B" * 300
        assert reader._file.reads == 2
        assert reader.bytes_read == after_footer + blobs[1].length
        assert reader.read_blob(blobs[2]) == b"C" * 50
        assert reader.bytes_read == after_footer + blobs[1].length + 50


def test_reader_never_modifies_input(tmp_path: Path) -> None:
    path = tmp_path / "w.puffin"
    with PuffinWriter(path) as writer:
        writer.add_blob("a", b"A" * 100, fields=[1], codec="lz4")
    os.utime(path, ns=(1_000_000_000, 2_000_000_000))
    before = path.read_bytes()
    with PuffinReader(path) as reader:
        reader.read_blob(reader.blob(0))
    assert path.read_bytes() == before
    assert os.stat(path).st_mtime_ns == 2_000_000_000


def test_metadata_model(tmp_path: Path) -> None:
    payload = footer_payload([blob_entry(4, 3, type="x", fields=[1, 2], snapshot_id=-5,
                                         sequence_number=9, compression_codec=None,
                                         properties={"k": "v"})], {"created-by": "c"})
    path = write(tmp_path, puffin_bytes(payload, blob_data=b"abc"))
    with PuffinReader(path) as reader:
        (blob,) = reader.metadata.blobs
        footer = reader.footer
    assert (blob.type, blob.fields, blob.snapshot_id, blob.sequence_number, blob.offset,
            blob.length, blob.compression_codec, blob.properties, blob.extra) == (
        "x", (1, 2), -5, 9, 4, 3, None, {"k": "v"}, {})
    assert (footer.payload_size, footer.footer_size, footer.footer_start, footer.flags,
            footer.compressed) == (len(payload), len(payload) + 16, 7, bytes(4), False)
    assert json.loads(payload)["blobs"][0] == {**blob.to_json(), "compression-codec": None}
