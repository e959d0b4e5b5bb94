"""``puffin diff A B`` of two Puffin files: what one says that the other does not.

Blobs are matched by what they are about, not by their index: their type, fields and
``referenced-data-file`` property (blobs with the same key are matched in the order they appear
in each file). For each pair, the blob metadata that says something (snapshot ID, sequence
number, compression codec, properties) and the content are compared; content by what it means
where the bytes differ: Theta sketches by theta and their set of retained hashes, deletion
vectors by their positions (counts and the first ranges only in A and only in B, computed on
the compressed bitmaps, so memory stays a small multiple of the blobs' sizes). Where a blob is
is layout, not content: offsets, lengths, file and footer sizes are shown, never a difference.
The footer's file properties and whether the footer is compressed are compared too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.spec import (
    DEFAULT_LIMIT,
    DEFAULT_MAX_BLOB_SIZE,
    DV_BLOB_TYPE,
    REFERENCED_DATA_FILE_PROPERTY,
    THETA_BLOB_TYPE,
)
from puffin_cli.storage import FileIO

# A blob pair's status, and a whole diff's.
SAME, DIFFERENT, ONLY_IN_A, ONLY_IN_B = "same", "different", "only-in-a", "only-in-b"
# How the content of a pair compares.
IDENTICAL = "identical"          # the same bytes (decompressed)
EQUIVALENT = "equivalent"        # other bytes, the same meaning (sketch, positions)
CONTENT_DIFFERS = "different"    # they say different things
UNREADABLE = "unreadable"        # a side could not be read or decoded (bytes differ)


@dataclass(frozen=True)
class Change:
    """One value that differs: ``key`` (a footer key; ``properties.NAME`` for a property)
    and the values in A and B (``None``: absent)."""

    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class SketchComparison:
    """Two Theta sketches. ``ndv`` is the estimate truncated (as Iceberg's ``ndv``);
    ``same_hashes``: the retained hashes are equal as sets; ``only_in_a``/``only_in_b``: hashes
    below the smaller theta that one sketch retains and the other does not."""

    ndv_a: int
    ndv_b: int
    estimate_a: float
    estimate_b: float
    theta_a: float
    theta_b: float
    retained_a: int
    retained_b: int
    same_hashes: bool
    only_in_a: int
    only_in_b: int


@dataclass(frozen=True)
class PositionsComparison:
    """Two deletion vectors' positions: how many each holds, how many only one holds, and the
    first ``limit`` maximal ranges (inclusive) of those only in A and only in B."""

    cardinality_a: int
    cardinality_b: int
    only_in_a: int
    only_in_b: int
    only_in_a_ranges: tuple[tuple[int, int], ...]
    only_in_b_ranges: tuple[tuple[int, int], ...]
    only_in_a_ranges_total: int
    only_in_b_ranges_total: int


@dataclass(frozen=True)
class BlobDiff:
    """One blob matched across the files (or found in one only). ``metadata`` lists the
    blob-metadata values that differ, ``layout`` where the blob is (offset, length: never a
    difference); ``content`` how the contents compare (``None`` for a blob of one file);
    ``problem`` why one side could not be decoded."""

    status: str
    type: str
    fields: tuple[int, ...]
    referenced_data_file: str | None
    index_a: int | None
    index_b: int | None
    metadata: tuple[Change, ...]
    layout: tuple[Change, ...]
    content: str | None
    sketch: SketchComparison | None = None
    positions: PositionsComparison | None = None
    problem: str | None = None


@dataclass(frozen=True)
class PuffinDiff:
    """Two Puffin files compared. ``same``: they say the same (every blob matched, nothing in
    ``footer`` or any blob ``different``); ``footer`` the file properties and footer flags
    that differ, ``layout`` the sizes that differ (never a difference)."""

    a: str
    b: str
    same: bool
    file_size_a: int
    file_size_b: int
    footer: tuple[Change, ...]
    layout: tuple[Change, ...]
    blobs: tuple[BlobDiff, ...]

    @property
    def counts(self) -> dict[str, int]:
        """Blobs by status."""
        out = {SAME: 0, DIFFERENT: 0, ONLY_IN_A: 0, ONLY_IN_B: 0}
        for blob in self.blobs:
            out[blob.status] += 1
        return out


BlobKey = tuple[str, tuple[int, ...], str | None]


def blob_key(blob: BlobMetadata) -> BlobKey:
    """What a blob is about: type, fields and referenced data file."""
    return blob.type, blob.fields, blob.properties.get(REFERENCED_DATA_FILE_PROPERTY)


def _changes(pairs: list[tuple[str, Any, Any]]) -> tuple[Change, ...]:
    return tuple(Change(key, a, b) for key, a, b in pairs if a != b)


def _property_changes(a: dict[str, str], b: dict[str, str]) -> list[tuple[str, Any, Any]]:
    keys = list(a) + [k for k in b if k not in a]
    return [(f"properties.{k}", a.get(k), b.get(k)) for k in keys]


def match_blobs(a: tuple[BlobMetadata, ...], b: tuple[BlobMetadata, ...]
                ) -> list[tuple[int | None, int | None]]:
    """Index pairs of blobs with the same :func:`blob_key`, in order of A then of B's rest;
    ``None`` where a blob has no partner."""
    waiting: dict[BlobKey, list[int]] = {}
    for index, blob in enumerate(b):
        waiting.setdefault(blob_key(blob), []).append(index)
    pairs: list[tuple[int | None, int | None]] = []
    for index, blob in enumerate(a):
        partners = waiting.get(blob_key(blob))
        pairs.append((index, partners.pop(0) if partners else None))
    matched = {j for _, j in pairs if j is not None}
    pairs += [(None, j) for j in range(len(b)) if j not in matched]
    return pairs


def compare_sketches(a: bytes, b: bytes, meta_a: BlobMetadata,
                     meta_b: BlobMetadata) -> SketchComparison:
    import numpy as np

    from puffin_cli.blobs.theta.compact import MAX_THETA, compact_from_bytes

    sa, sb = compact_from_bytes(a, meta_a), compact_from_bytes(b, meta_b)
    below = np.uint64(min(sa.theta_long, sb.theta_long))
    ha, hb = sa.hashes[sa.hashes < below], sb.hashes[sb.hashes < below]
    return SketchComparison(
        ndv_a=sa.ndv, ndv_b=sb.ndv, estimate_a=sa.estimate, estimate_b=sb.estimate,
        theta_a=sa.theta_long / MAX_THETA, theta_b=sb.theta_long / MAX_THETA,
        retained_a=sa.retained, retained_b=sb.retained,
        same_hashes=bool(np.array_equal(sa.hashes, sb.hashes)),
        only_in_a=int(np.setdiff1d(ha, hb, assume_unique=True).size),
        only_in_b=int(np.setdiff1d(hb, ha, assume_unique=True).size))


def _first_ranges(bitmap: Any, limit: int) -> tuple[tuple[tuple[int, int], ...], int]:
    """The first ``limit`` maximal ranges of a bitmap and how many it has, read from its
    containers (never position by position)."""
    from itertools import islice

    from puffin_cli.blobs.deletion_vector import count_ranges, iter_ranges, vector_of

    if not bitmap:
        return (), 0
    vector = vector_of(bitmap)
    return tuple(islice(iter_ranges(vector), limit)), count_ranges(vector)


def compare_positions(a: bytes, b: bytes, meta_a: BlobMetadata, meta_b: BlobMetadata,
                      limit: int) -> PositionsComparison:
    from puffin_cli.blobs.deletion_vector import decode_deletion_vector

    va = decode_deletion_vector(a, meta_a.offset).bitmap
    vb = decode_deletion_vector(b, meta_b.offset).bitmap
    only_a = va - vb
    ranges_a, total_a = _first_ranges(only_a, limit)
    count_a = len(only_a)
    del only_a
    only_b = vb - va
    ranges_b, total_b = _first_ranges(only_b, limit)
    return PositionsComparison(
        cardinality_a=len(va), cardinality_b=len(vb), only_in_a=count_a,
        only_in_b=len(only_b), only_in_a_ranges=ranges_a, only_in_b_ranges=ranges_b,
        only_in_a_ranges_total=total_a, only_in_b_ranges_total=total_b)


def _compare_content(ra: PuffinReader, rb: PuffinReader, blob_a: BlobMetadata,
                     blob_b: BlobMetadata, limit: int
                     ) -> tuple[str, SketchComparison | None, PositionsComparison | None,
                                str | None]:
    """(content verdict, sketch comparison, positions comparison, problem) of two blobs."""
    try:
        data_a, data_b = ra.read_blob(blob_a), rb.read_blob(blob_b)
    except PuffinError as exc:
        if exc.kind is ErrorKind.LIMIT:  # a limit names the option that raises it
            raise
        return UNREADABLE, None, None, str(exc)
    identical = data_a == data_b
    try:
        if blob_a.type == THETA_BLOB_TYPE:
            sketch = compare_sketches(data_a, data_b, blob_a, blob_b)
            same = sketch.same_hashes and sketch.theta_a == sketch.theta_b
            return _verdict(identical, same), sketch, None, None
        if blob_a.type == DV_BLOB_TYPE:
            positions = compare_positions(data_a, data_b, blob_a, blob_b, limit)
            same = not positions.only_in_a and not positions.only_in_b
            return _verdict(identical, same), None, positions, None
    except PuffinError as exc:
        return (IDENTICAL if identical else UNREADABLE), None, None, str(exc)
    return (IDENTICAL if identical else CONTENT_DIFFERS), None, None, None


def _verdict(identical: bool, same: bool) -> str:
    if identical:
        return IDENTICAL
    return EQUIVALENT if same else CONTENT_DIFFERS


def _blob_metadata_pairs(a: BlobMetadata, b: BlobMetadata) -> list[tuple[str, Any, Any]]:
    return [("snapshot-id", a.snapshot_id, b.snapshot_id),
            ("sequence-number", a.sequence_number, b.sequence_number),
            ("compression-codec", a.compression_codec, b.compression_codec),
            *_property_changes(a.properties, b.properties),
            *((f"extra.{k}", a.extra.get(k), b.extra.get(k)) for k in {**a.extra, **b.extra})]


def _one_sided(status: str, blob: BlobMetadata, index: int) -> BlobDiff:
    key = blob_key(blob)
    return BlobDiff(status, key[0], key[1], key[2], index if status == ONLY_IN_A else None,
                    index if status == ONLY_IN_B else None, (), (), None)


def diff_files(a: str | os.PathLike[str], b: str | os.PathLike[str], *, fileio: FileIO,
               limit: int = DEFAULT_LIMIT,
               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> PuffinDiff:
    """Compare two Puffin files (read with ``fileio``); one pair of blobs is held at a time.
    Raises :class:`PuffinError` when a file's footer cannot be read or a blob is larger than
    ``max_blob_size``; a blob that cannot be read or decoded is a difference (``problem``)."""
    with PuffinReader(a, fileio=fileio, max_blob_size=max_blob_size) as ra, \
            PuffinReader(b, fileio=fileio, max_blob_size=max_blob_size) as rb:
        ma, mb = ra.metadata, rb.metadata
        footer = _changes([("footer-compressed", ra.footer.compressed, rb.footer.compressed),
                           *_property_changes(ma.properties, mb.properties),
                           *((f"extra.{k}", ma.extra.get(k), mb.extra.get(k))
                             for k in {**ma.extra, **mb.extra})])
        layout = _changes([("file-size", ra.file_size, rb.file_size),
                           ("footer-size", ra.footer.footer_size, rb.footer.footer_size),
                           ("blob-count", len(ma.blobs), len(mb.blobs))])
        blobs: list[BlobDiff] = []
        for i, j in match_blobs(ma.blobs, mb.blobs):
            if j is None:
                assert i is not None
                blobs.append(_one_sided(ONLY_IN_A, ma.blobs[i], i))
                continue
            if i is None:
                blobs.append(_one_sided(ONLY_IN_B, mb.blobs[j], j))
                continue
            blob_a, blob_b = ma.blobs[i], mb.blobs[j]
            metadata = _changes(_blob_metadata_pairs(blob_a, blob_b))
            content, sketch, positions, problem = _compare_content(ra, rb, blob_a, blob_b,
                                                                   limit)
            status = SAME if not metadata and content in (IDENTICAL, EQUIVALENT) else DIFFERENT
            key = blob_key(blob_a)
            blobs.append(BlobDiff(
                status, key[0], key[1], key[2], i, j, metadata,
                _changes([("offset", blob_a.offset, blob_b.offset),
                          ("length", blob_a.length, blob_b.length)]),
                content, sketch, positions, problem))
        same = not footer and all(blob.status == SAME for blob in blobs)
        return PuffinDiff(ra.path, rb.path, same, ra.file_size, rb.file_size, footer, layout,
                          tuple(blobs))
