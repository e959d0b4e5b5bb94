"""codecs: one frame per blob, content size required and checked, limits before allocation."""

from __future__ import annotations

import struct

import lz4.frame
import pytest
import zstandard

from puffin_cli.format import BlobTooLargeError, PuffinError, codecs

DATA = bytes(range(256)) * 40


def error(codec: str | None, data: bytes, max_size: int = 1 << 20) -> tuple[str, str]:
    with pytest.raises(PuffinError) as info:
        codecs.decompress(codec, data, max_size)
    return info.value.code, info.value.message


def lz4_with_declared_size(data: bytes, declared: int) -> bytes:
    """An LZ4 frame of ``data`` whose header claims ``declared`` bytes, with a valid header
    checksum (found by trying all 256 values: the one lz4 accepts)."""
    frame: bytes = lz4.frame.compress(data, store_size=True)
    for checksum in range(256):
        forged = frame[:6] + struct.pack("<Q", declared) + bytes([checksum]) + frame[15:]
        try:
            lz4.frame.LZ4FrameDecompressor().decompress(forged, max_length=1)
        except RuntimeError:
            continue
        return forged
    raise AssertionError("no header checksum fits")


@pytest.mark.parametrize("codec", [None, "lz4", "zstd"])
@pytest.mark.parametrize("data", [b"", b"x", DATA])
def test_round_trip(codec: str | None, data: bytes) -> None:
    stored = codecs.compress(codec, data)
    if codec is None:
        assert stored == data
    else:
        assert codecs.content_size(codec, stored) == len(data)
    assert codecs.decompress(codec, stored, len(data)) == data


def test_empty_lz4_frame_records_its_size() -> None:
    # lz4 itself omits the content size of an empty frame; the spec requires it.
    frame = codecs.compress("lz4", b"")
    assert frame == bytes.fromhex("04224d18" "6840" "0000000000000000" "05" "00000000")
    assert lz4.frame.decompress(frame) == b""
    assert codecs.content_size("lz4", frame) == 0


def test_zstd_frame_as_java_writes_it() -> None:
    # Iceberg Java (zstd-jni): content size and checksum; 13 bytes for no content.
    assert codecs.compress("zstd", b"").hex() == "28b52ffd240001000099e9d851"


def test_limit_is_inclusive() -> None:
    stored = codecs.compress("zstd", DATA)
    assert codecs.decompress("zstd", stored, len(DATA)) == DATA
    with pytest.raises(BlobTooLargeError) as info:
        codecs.decompress("zstd", stored, len(DATA) - 1)
    assert (info.value.code, info.value.message) == (
        "blob.too-large", f"zstd frame declares {len(DATA)} bytes of content, more than the "
        f"limit of {len(DATA) - 1} bytes (raise --max-blob-size to decode it)")


@pytest.mark.parametrize("codec", ["snappy", "LZ4", "gzip", ""])
def test_unknown_codec(codec: str) -> None:
    message = f"unknown compression codec {codec!r}; expected one of lz4, zstd"
    assert error(codec, b"abc") == ("blob.codec.unknown", message)
    with pytest.raises(PuffinError) as info:
        codecs.compress(codec, b"abc")
    assert info.value.message == message


@pytest.mark.parametrize("data, message", [
    (b"", "not an LZ4 frame: expected magic 04224d18, found nothing"),
    (b"\x28\xb5\x2f\xfd\x00\x00\x00", "not an LZ4 frame: expected magic 04224d18, found 28b52ffd"),
    (b"\x04\x22\x4d\x18\x68", "LZ4 frame header truncated: 5 bytes"),
    (b"\x04\x22\x4d\x18\x68\x40\x00\x00\x00", "LZ4 frame header truncated: 9 bytes"),
    (lz4.frame.compress(b"abc", store_size=False), "LZ4 frame has no content size; the spec "
     "requires it"),
])
def test_lz4_header_problems(data: bytes, message: str) -> None:
    assert error("lz4", data) == ("blob.decompress", message)


def test_lz4_truncated_and_trailing() -> None:
    frame = codecs.compress("lz4", DATA)
    assert error("lz4", frame[:-5]) == (
        "blob.decompress", f"lz4 frame is truncated: {len(frame) - 5} bytes end before the frame "
        "does")
    assert error("lz4", frame + frame) == (
        "blob.decompress", f"{len(frame)} bytes follow the lz4 frame; expected exactly one frame")


def test_lz4_frame_holding_more_than_declared() -> None:
    forged = lz4_with_declared_size(b"x" * 100, 50)
    assert codecs.content_size("lz4", forged) == 50
    assert error("lz4", forged) == ("blob.decompress",
                                    "lz4 frame declares 50 bytes of content but holds more")


def test_lz4_frame_holding_less_than_declared() -> None:
    forged = lz4_with_declared_size(b"x" * 100, 200)
    code, message = error("lz4", forged)
    assert code == "blob.decompress"
    assert message == ("lz4 decompression failed: LZ4F_decompress failed with code: "
                       "ERROR_frameSize_wrong")


@pytest.mark.parametrize("data, message", [
    (b"", "not a Zstandard frame: expected magic 28b52ffd, found nothing"),
    (b"PFA1", "not a Zstandard frame: expected magic 28b52ffd, found 50464131"),
    (zstandard.FRAME_HEADER, "bad Zstandard frame header: error when determining content size"),
    (zstandard.ZstdCompressor(write_content_size=False).compress(b"abc"),
     "Zstandard frame has no content size; the spec requires it"),
])
def test_zstd_header_problems(data: bytes, message: str) -> None:
    assert error("zstd", data) == ("blob.decompress", message)


def test_zstd_truncated_trailing_and_corrupt() -> None:
    frame = codecs.compress("zstd", DATA)
    assert error("zstd", frame[:-2]) == (
        "blob.decompress", f"zstd frame is truncated: {len(frame) - 2} bytes end before the "
        "frame does")
    assert error("zstd", frame + b"\0\0\0") == (
        "blob.decompress", "3 bytes follow the zstd frame; expected exactly one frame")
    corrupt = frame[:6] + bytes(b ^ 0xFF for b in frame[6:])
    code, message = error("zstd", corrupt)
    assert code == "blob.decompress"
    assert message.startswith("zstd decompression failed: ")


def test_zstd_frame_declaring_less_than_it_holds() -> None:
    frame = codecs.compress("zstd", b"x" * 100)
    assert frame[5] == 100  # single-segment frame, 1-byte content size field
    forged = frame[:5] + bytes([50]) + frame[6:]
    code, message = error("zstd", forged)
    assert code == "blob.decompress"
    assert message.startswith("zstd decompression failed: ")


def test_stored_is_returned_as_is() -> None:
    assert codecs.decompress(None, b"anything", 0) == b"anything"
