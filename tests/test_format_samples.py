"""Every file in tests/data/foreign (written by Iceberg Java and Trino) reads as Iceberg Java
reads it (``expected/*.json``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import SAMPLE_FILES, SAMPLES

from puffin_cli.format import PuffinReader

EXPECTED = sorted((SAMPLES / "expected").glob("*.json"))


def test_every_sample_has_an_expectation() -> None:
    assert len(SAMPLE_FILES) >= 8
    listed = {json.loads(p.read_text())["file"] for p in EXPECTED}
    assert listed == {str(p.relative_to(SAMPLES)) for p in SAMPLE_FILES}


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.stem)
def test_sample_reads_as_java_reads_it(expected_path: Path) -> None:
    expected: dict[str, Any] = json.loads(expected_path.read_text())
    path = SAMPLES / expected["file"]
    assert expected["java_accepted"] is True
    assert hashlib.sha256(path.read_bytes()).hexdigest() == expected["sha256"]
    with PuffinReader(path) as reader:
        assert reader.file_size == expected["file_size"]
        footer = reader.footer
        want = expected["footer"]
        assert (footer.payload_size, footer.footer_size, footer.footer_start, list(footer.flags),
                footer.compressed) == (want["payload_size"], want["footer_size"],
                                       want["footer_start"], want["flags_bytes"],
                                       want["footer_payload_compressed"])
        metadata = reader.metadata
        assert metadata.properties == expected["properties"]
        assert metadata.extra == {}
        assert len(metadata.blobs) == len(expected["blobs"])
        for blob, want_blob in zip(metadata.blobs, expected["blobs"], strict=True):
            assert {
                "type": blob.type,
                "fields": list(blob.fields),
                "snapshot-id": blob.snapshot_id,
                "sequence-number": blob.sequence_number,
                "offset": blob.offset,
                "length": blob.length,
                "compression-codec": blob.compression_codec,
                "properties": blob.properties,
            } == {key: want_blob[key] for key in (
                "type", "fields", "snapshot-id", "sequence-number", "offset", "length",
                "compression-codec", "properties")}
            assert blob.extra == {}
            data = reader.read_blob(blob)
            assert len(data) == want_blob["decompressed_length"]
            assert hashlib.sha256(data).hexdigest() == want_blob["decompressed_sha256"]


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.stem)
def test_sample_with_footer_size_reads_only_the_footer(expected_path: Path) -> None:
    expected: dict[str, Any] = json.loads(expected_path.read_text())
    footer_size = expected["footer"]["footer_size"]
    with PuffinReader(SAMPLES / expected["file"], footer_size=footer_size) as reader:
        assert len(reader.metadata.blobs) == len(expected["blobs"])
        assert reader.bytes_read == footer_size


@pytest.mark.parametrize("expected_path", EXPECTED, ids=lambda p: p.stem)
def test_sample_payload_is_what_we_would_write(expected_path: Path) -> None:
    """Our footer JSON for the parsed metadata equals the file's own payload byte for byte."""
    expected: dict[str, Any] = json.loads(expected_path.read_text())
    path = SAMPLES / expected["file"]
    with PuffinReader(path) as reader:
        start = reader.footer.footer_start + 4
        payload = path.read_bytes()[start:start + reader.footer.payload_size]
        assert reader.metadata.to_payload() == payload
