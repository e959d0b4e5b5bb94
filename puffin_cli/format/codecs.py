"""Blob and footer compression: single LZ4 frames and Zstandard frames, content size present.

A codec name is only checked when bytes are actually (de)compressed, so metadata with an
unknown codec still parses. Decompression refuses, before allocating anything, a frame that
declares more than ``max_size`` bytes of content.
"""

from __future__ import annotations

import struct

from puffin_cli.errors import BlobTooLargeError, PuffinError
from puffin_cli.format.spec import CODEC_LZ4, CODEC_ZSTD, KNOWN_CODECS

LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
ZSTD_FRAME_MAGIC = b"\x28\xb5\x2f\xfd"
_LZ4_FLG_CONTENT_SIZE = 0x08
# lz4 leaves the content size out of a frame of no content (0 means "unknown" to it), which the
# spec forbids: this is that frame with the size recorded (FLG 0x68, BD 0x40, size 0, header
# checksum 0x05, end mark).
_LZ4_EMPTY_FRAME = LZ4_FRAME_MAGIC + b"\x68\x40" + bytes(8) + b"\x05" + bytes(4)


def check_codec(codec: str | None) -> None:
    if codec is not None and codec not in KNOWN_CODECS:
        raise PuffinError(
            f"unknown compression codec {codec!r}; expected one of {', '.join(KNOWN_CODECS)}",
            code="blob.codec.unknown",
        )


def compress(codec: str | None, data: bytes) -> bytes:
    """Compress ``data`` as one frame with its content size recorded (``None``: as is)."""
    check_codec(codec)
    if codec == CODEC_LZ4:
        if not data:
            return _LZ4_EMPTY_FRAME
        import lz4.frame

        return bytes(lz4.frame.compress(data, store_size=True))
    if codec == CODEC_ZSTD:
        import zstandard

        # As Iceberg Java (zstd-jni) writes its frames: level 3 with a 1 MiB window (which
        # shows in the frame header of blobs over 1 MiB), content size and checksum.
        params = zstandard.ZstdCompressionParameters.from_level(
            3, window_log=20, write_content_size=True, write_checksum=True)
        return bytes(zstandard.ZstdCompressor(compression_params=params).compress(data))
    return data


def content_size(codec: str, data: bytes) -> int:
    """The content size a compressed frame declares; an error when it declares none."""
    check_codec(codec)
    if codec == CODEC_LZ4:
        if data[:4] != LZ4_FRAME_MAGIC:
            raise PuffinError(
                f"not an LZ4 frame: expected magic {LZ4_FRAME_MAGIC.hex()}, "
                f"found {data[:4].hex() or 'nothing'}",
                code="blob.decompress",
            )
        if len(data) < 7:
            raise PuffinError(
                f"LZ4 frame header truncated: {len(data)} bytes", code="blob.decompress"
            )
        if not data[4] & _LZ4_FLG_CONTENT_SIZE:
            raise PuffinError(
                "LZ4 frame has no content size; the spec requires it", code="blob.decompress"
            )
        if len(data) < 14:
            raise PuffinError(
                f"LZ4 frame header truncated: {len(data)} bytes", code="blob.decompress"
            )
        return int(struct.unpack_from("<Q", data, 6)[0])
    import zstandard

    if data[:4] != ZSTD_FRAME_MAGIC:
        raise PuffinError(
            f"not a Zstandard frame: expected magic {ZSTD_FRAME_MAGIC.hex()}, "
            f"found {data[:4].hex() or 'nothing'}",
            code="blob.decompress",
        )
    try:
        size = zstandard.frame_content_size(data)
    except zstandard.ZstdError as exc:
        raise PuffinError(f"bad Zstandard frame header: {exc}", code="blob.decompress") from None
    if size < 0:
        raise PuffinError(
            "Zstandard frame has no content size; the spec requires it", code="blob.decompress"
        )
    return int(size)


def decompress(codec: str | None, data: bytes, max_size: int) -> bytes:
    """Decompress one frame, checking its declared content size against ``max_size`` first
    and against what it actually holds after."""
    if codec is None:
        return data
    declared = content_size(codec, data)
    if declared > max_size:
        raise BlobTooLargeError(
            f"{codec} frame declares {declared} bytes of content, more than the limit of "
            f"{max_size} bytes (raise --max-blob-size to decode it)",
            code="blob.too-large",
        )
    try:
        if codec == CODEC_LZ4:
            import lz4.frame

            lz4_stream = lz4.frame.LZ4FrameDecompressor()
            out = lz4_stream.decompress(data, max_length=declared + 1)
            complete, rest = lz4_stream.eof, lz4_stream.unused_data
        else:
            import zstandard

            zstd_stream = zstandard.ZstdDecompressor().decompressobj()
            out = zstd_stream.decompress(data)
            complete, rest = zstd_stream.eof, zstd_stream.unused_data
    except Exception as exc:  # the codec libraries raise their own exception types
        raise PuffinError(f"{codec} decompression failed: {exc}", code="blob.decompress") from None
    if len(out) > declared:
        raise PuffinError(
            f"{codec} frame declares {declared} bytes of content but holds more",
            code="blob.decompress",
        )
    if not complete:
        raise PuffinError(
            f"{codec} frame is truncated: {len(data)} bytes end before the frame does",
            code="blob.decompress",
        )
    if rest:
        raise PuffinError(
            f"{len(rest)} bytes follow the {codec} frame; expected exactly one frame",
            code="blob.decompress",
        )
    if len(out) != declared:
        raise PuffinError(
            f"{codec} frame declares {declared} bytes of content but holds {len(out)}",
            code="blob.decompress",
        )
    return bytes(out)
