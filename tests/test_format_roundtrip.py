"""Write random blob sets, read them back: identical metadata and bytes."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from puffin_cli.format import PuffinReader, PuffinWriter

INT64 = st.one_of(st.sampled_from([-(2**63), 2**63 - 1, -1, 0, 1]),
                  st.integers(-(2**63), 2**63 - 1))
INT32 = st.integers(-(2**31), 2**31 - 1)
TEXT = st.text(max_size=20)
PROPERTIES = st.dictionaries(TEXT, TEXT, max_size=4)


@dataclass(frozen=True)
class Blob:
    type: str
    data: bytes
    fields: list[int]
    snapshot_id: int
    sequence_number: int
    properties: dict[str, str]
    codec: str | None


BLOBS = st.builds(
    Blob,
    type=TEXT,
    data=st.one_of(st.just(b""), st.binary(max_size=3000),
                   st.binary(min_size=1, max_size=4).map(lambda b: b * 500)),
    fields=st.lists(INT32, max_size=4),
    snapshot_id=INT64,
    sequence_number=INT64,
    properties=PROPERTIES,
    codec=st.sampled_from([None, "lz4", "zstd"]),
)


@settings(max_examples=150, deadline=None)
@given(blobs=st.lists(BLOBS, max_size=6), properties=st.one_of(st.none(), PROPERTIES),
       created_by=st.one_of(st.none(), TEXT), compress_footer=st.booleans())
def test_write_then_read(blobs: list[Blob], properties: dict[str, str] | None,
                         created_by: str | None, compress_footer: bool) -> None:
    expected_properties = dict(properties or {})
    if created_by is not None:
        expected_properties.setdefault("created-by", created_by)
    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "r.puffin"
        writer = PuffinWriter(target, properties=properties, created_by=created_by,
                              compress_footer=compress_footer)
        for blob in blobs:
            writer.add_blob(blob.type, blob.data, fields=blob.fields,
                            snapshot_id=blob.snapshot_id, sequence_number=blob.sequence_number,
                            properties=blob.properties, codec=blob.codec)
        result = writer.finish()
        assert result.file_size == target.stat().st_size
        for footer_size in (None, result.footer_size):
            with PuffinReader(target, footer_size=footer_size) as reader:
                metadata = reader.metadata
                assert metadata == result.metadata
                assert reader.footer.footer_size == result.footer_size
                assert reader.footer.compressed is compress_footer
                assert metadata.properties == expected_properties
                assert metadata.extra == {}
                assert len(metadata.blobs) == len(blobs)
                offset = 4
                for meta, blob in zip(metadata.blobs, blobs, strict=True):
                    assert (meta.type, list(meta.fields), meta.snapshot_id,
                            meta.sequence_number, meta.properties, meta.compression_codec,
                            meta.extra) == (blob.type, blob.fields, blob.snapshot_id,
                                            blob.sequence_number, blob.properties, blob.codec,
                                            {})
                    assert meta.offset == offset
                    offset += meta.length
                    assert reader.read_blob(meta) == blob.data
                assert reader.footer.footer_start == offset
