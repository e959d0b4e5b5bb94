"""PuffinWriter: byte-exact output (equal to files Iceberg Java and Trino wrote), footer JSON
layout, properties, and atomic replacement of the target."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import SAMPLES

from puffin_cli import CREATED_BY
from puffin_cli.format import PuffinError, PuffinReader, PuffinWriter

SAMPLE_FILES = [
    "public/sample-metric-data-uncompressed.bin",
    "public/sample-metric-data-compressed-zstd.bin",
    "public/empty-puffin-uncompressed.bin",
    "public/apache-datasketches-theta-v1.puffin",
    "public/deletion-vector-v1.puffin",
    "iceberg-java/multi-blob-mixed.puffin",
    "iceberg-java/default-zstd.puffin",
    "iceberg-java/dv-64bit.puffin",
]


@pytest.mark.parametrize("name", SAMPLE_FILES)
def test_rewriting_a_sample_reproduces_it_byte_for_byte(tmp_path: Path, name: str) -> None:
    source = SAMPLES / name
    target = tmp_path / "out.puffin"
    with PuffinReader(source) as reader:
        metadata = reader.metadata
        with PuffinWriter(target, properties=metadata.properties, created_by=None) as writer:
            for blob in metadata.blobs:
                writer.add_blob(blob.type, reader.read_blob(blob), fields=blob.fields,
                                snapshot_id=blob.snapshot_id,
                                sequence_number=blob.sequence_number,
                                properties=blob.properties, codec=blob.compression_codec)
    assert target.read_bytes() == source.read_bytes()


def test_write_result_matches_the_file(tmp_path: Path) -> None:
    target = tmp_path / "r.puffin"
    writer = PuffinWriter(target, properties={"a": "b"})
    first = writer.add_blob("t", b"x" * 1000, fields=[1, 2], codec="zstd")
    writer.add_stored_blob("u", b"stored", fields=[3], snapshot_id=7, sequence_number=8)
    result = writer.finish()
    assert result.path == str(target)
    assert result.file_size == target.stat().st_size
    assert first.offset == 4 and first.compression_codec == "zstd"
    with PuffinReader(target) as reader:
        assert result.footer_size == reader.footer.footer_size
        assert result.metadata == reader.metadata
        assert reader.read_blob(reader.blob(0)) == b"x" * 1000
        assert reader.read_raw(reader.blob(1)) == b"stored"
        assert reader.metadata.properties == {"a": "b", "created-by": CREATED_BY}


def test_footer_json_layout(tmp_path: Path) -> None:
    target = tmp_path / "j.puffin"
    with PuffinWriter(target, properties={"z": "ü", "created-by": "me"}) as writer:
        writer.add_blob("t", b"abc", fields=[1], snapshot_id=2, sequence_number=3,
                        properties={"k": "日本"}, codec="lz4")
        writer.add_blob("u", b"", fields=[], snapshot_id=-1, sequence_number=-1)
    data = target.read_bytes()
    with PuffinReader(target) as reader:
        footer = reader.footer
        length = reader.blob(0).length
    payload = data[footer.footer_start + 4: footer.footer_start + 4 + footer.payload_size]
    assert payload.decode("utf-8") == (
        '{"blobs":[{"type":"t","fields":[1],"snapshot-id":2,"sequence-number":3,"offset":4,'
        f'"length":{length},"compression-codec":"lz4","properties":{{"k":"日本"}}}},'
        f'{{"type":"u","fields":[],"snapshot-id":-1,"sequence-number":-1,"offset":{4 + length},'
        '"length":0}],"properties":{"z":"ü","created-by":"me"}}')
    assert data[-12:] == len(payload).to_bytes(4, "little") + bytes(4) + b"PFA1"


@pytest.mark.parametrize("properties, created_by, expected", [
    (None, CREATED_BY, {"created-by": CREATED_BY}),
    ({"a": "1"}, CREATED_BY, {"a": "1", "created-by": CREATED_BY}),
    ({"created-by": "Trino"}, CREATED_BY, {"created-by": "Trino"}),
    (None, "other 2.0", {"created-by": "other 2.0"}),
    ({}, None, {}),
    ({"a": "1"}, None, {"a": "1"}),
])
def test_file_properties(tmp_path: Path, properties: dict[str, str] | None,
                         created_by: str | None, expected: dict[str, str]) -> None:
    target = tmp_path / "p.puffin"
    with PuffinWriter(target, properties=properties, created_by=created_by):
        pass
    with PuffinReader(target) as reader:
        assert reader.metadata.properties == expected
    if not expected:
        assert target.read_bytes() == (SAMPLES / "public/empty-puffin-uncompressed.bin"
                                       ).read_bytes()


def test_compressed_footer(tmp_path: Path) -> None:
    target = tmp_path / "c.puffin"
    with PuffinWriter(target, compress_footer=True) as writer:
        writer.add_blob("t", b"abc", fields=[1])
    data = target.read_bytes()
    assert data[-8:-4] == b"\x01\x00\x00\x00"
    with PuffinReader(target) as reader:
        assert reader.footer.compressed is True
        assert reader.read_blob(reader.blob(0)) == b"abc"
        start = reader.footer.footer_start + 4
        assert data[start:start + 4] == bytes.fromhex("04224d18")
        assert json.loads(reader.metadata.to_payload())["blobs"][0]["type"] == "t"


# --- atomicity ------------------------------------------------------------------------------


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


@pytest.fixture
def other_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Work from a different directory than the target's, to see where temp files go."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    yield cwd
    assert listing(cwd) == []


def test_exception_inside_with_leaves_nothing(tmp_path: Path, other_cwd: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(RuntimeError, match="boom"), PuffinWriter(out / "x.puffin") as writer:
        writer.add_blob("t", b"abc" * 1000, fields=[1])
        raise RuntimeError("boom")
    assert listing(out) == []


def test_interrupt_inside_with_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), PuffinWriter(tmp_path / "x.puffin") as writer:
        writer.add_blob("t", b"abc", fields=[1])
        raise KeyboardInterrupt
    assert listing(tmp_path) == []


def test_temp_file_is_beside_the_target(tmp_path: Path, other_cwd: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with PuffinWriter(out / "x.puffin") as writer:
        writer.add_blob("t", b"abc", fields=[1])
        (temp,) = listing(out)
        assert temp.startswith(".x.puffin.") and temp.endswith(".tmp")
    assert listing(out) == ["x.puffin"]


def test_abort_leaves_nothing(tmp_path: Path) -> None:
    writer = PuffinWriter(tmp_path / "x.puffin")
    writer.add_blob("t", b"abc", fields=[1])
    writer.abort()
    assert listing(tmp_path) == []


def test_no_overwrite_refuses_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "x.puffin"
    target.write_bytes(b"precious")
    with pytest.raises(PuffinError) as info:
        PuffinWriter(target)
    assert (info.value.code, info.value.message, info.value.path) == (
        "write.exists", "exists; use --force to overwrite it", str(target))
    assert str(info.value) == f"{target}: exists; use --force to overwrite it"
    assert target.read_bytes() == b"precious"
    assert listing(tmp_path) == ["x.puffin"]


def test_no_overwrite_never_clobbers_a_file_that_appears(tmp_path: Path) -> None:
    target = tmp_path / "x.puffin"
    with pytest.raises(PuffinError) as info, PuffinWriter(target) as writer:
        writer.add_blob("t", b"abc", fields=[1])
        target.write_bytes(b"someone else")
    assert (info.value.code, info.value.message) == (
        "write.exists", "appeared while writing; not overwriting it")
    assert target.read_bytes() == b"someone else"
    assert listing(tmp_path) == ["x.puffin"]


def test_overwrite_replaces(tmp_path: Path) -> None:
    target = tmp_path / "x.puffin"
    target.write_bytes(b"old")
    with PuffinWriter(target, overwrite=True) as writer:
        writer.add_blob("t", b"new", fields=[1])
    with PuffinReader(target) as reader:
        assert reader.read_blob(reader.blob(0)) == b"new"
    assert listing(tmp_path) == ["x.puffin"]


def test_failed_final_rename_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "x.puffin"
    target.mkdir()  # a file never replaces a directory
    with pytest.raises(PuffinError, match="cannot write: a directory is there"):
        PuffinWriter(target, overwrite=True)
    assert listing(tmp_path) == ["x.puffin"]
    assert listing(target) == []


def test_missing_directory(tmp_path: Path) -> None:
    target = tmp_path / "nope" / "x.puffin"
    with pytest.raises(PuffinError) as info:
        PuffinWriter(target)
    assert (info.value.code, info.value.message, info.value.path) == (
        "write.open", "cannot write: No such file or directory", str(target))


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_file_mode_follows_umask(tmp_path: Path, umask: int, mode: int) -> None:
    previous = os.umask(umask)
    try:
        with PuffinWriter(tmp_path / "x.puffin"):
            pass
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "x.puffin").stat().st_mode) == mode
