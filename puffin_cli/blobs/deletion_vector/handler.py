"""What ``inspect`` and ``validate`` get from a deletion vector: its summary and its findings.

Severities of :meth:`DeletionVectorHandler.check` findings (the Iceberg spec states every rule
below that is an error; the Java key limit and Java's ``fields`` are what one engine does):

============================  ========  ==================================================
code                          severity  meaning
============================  ========  ==================================================
dv.length                     error     blob too short, or length prefix != blob length - 8
dv.magic                      error     magic is not D1 D3 39 64
dv.crc                        error     CRC-32 of magic + vector does not match
dv.vector                     error     the Roaring vector is truncated or inconsistent
dv.keys-order                 error     bitmap keys not strictly ascending
dv.top-bit                    error     a key >= 0x80000000 (negative 64-bit positions)
dv.trailing                   error     bytes left between the last bitmap and the CRC
dv.key-above-java-limit       warning   key 0x7FFFFFFF: valid, but Iceberg Java rejects it
dv.cardinality                error     ``cardinality`` property missing, malformed or wrong
dv.referenced-data-file       error     ``referenced-data-file`` property missing
dv.compressed                 error     the blob has a compression codec
dv.snapshot-id                error     ``snapshot-id`` is not -1
dv.sequence-number            error     ``sequence-number`` is not -1
dv.fields                     info      ``fields`` is not [2147483645], Iceberg Java's value (the
                                        spec sets no rule for it; Java never reads it)
============================  ========  ==================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.blobs.deletion_vector.codec import (
    Walk,
    canonical_bitmap,
    decode_deletion_vector,
    walk_envelope,
    walk_vector,
)
from puffin_cli.blobs.deletion_vector.containers import count_ranges, iter_ranges
from puffin_cli.blobs.deletion_vector.layout import (
    ARRAY,
    BITMAP,
    CRC_BYTES,
    DV_FIELDS,
    DV_SEQUENCE_NUMBER,
    DV_SNAPSHOT_ID,
    RUN,
    VECTOR_START,
    DeletionVector,
)
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import (
    CARDINALITY_PROPERTY,
    DV_BLOB_TYPE,
    REFERENCED_DATA_FILE_PROPERTY,
    ROW_POSITION_FIELD_ID,
)


@dataclass(frozen=True)
class DeletionVectorSummary:
    """What ``inspect`` shows about a deletion vector.

    ``ranges`` are the first ``limit`` maximal runs of positions as inclusive (start, end)
    pairs, ``ranges_total`` the number of runs, ``truncated`` whether ranges were left out.
    ``density`` counts the deleted positions in consecutive buckets of ``density_step``
    positions from 0 to ``max`` (at most :data:`DENSITY_BUCKETS`; the last may be shorter):
    where in the data file the deleted rows lie.
    """

    cardinality: int
    min: int | None
    max: int | None
    referenced_data_file: str | None
    cardinality_property: int | None
    cardinality_matches: bool | None
    ranges: tuple[tuple[int, int], ...]
    ranges_total: int
    truncated: bool
    bitmaps: int
    array_containers: int
    bitmap_containers: int
    run_containers: int
    density: tuple[int, ...] = ()
    density_step: int = 0
    kind: str = field(default="deletion-vector")


# --------------------------------------------------------------------------------------------
# Summary and checks


def _cardinality_property(meta: BlobMetadata) -> int | None:
    value = meta.properties.get(CARDINALITY_PROPERTY)
    if value is None or not value.isascii() or not value.isdigit():
        return None
    return int(value)


# Buckets of the position range in a summary's density (a human view may merge them).
DENSITY_BUCKETS = 64


def density(bitmap: Any, last: int) -> tuple[tuple[int, ...], int]:
    """Deleted positions per bucket over positions 0 to ``last``, and the bucket size: at
    most :data:`DENSITY_BUCKETS` buckets of equal size (the last one may be shorter), each
    counted by two rank queries."""
    step = -(-(last + 1) // DENSITY_BUCKETS)
    counts = []
    below = 0
    for start in range(0, last + 1, step):
        upto = int(bitmap.rank(min(start + step, last + 1) - 1))
        counts.append(upto - below)
        below = upto
    return tuple(counts), step


def summarize_deletion_vector(dv: DeletionVector, meta: BlobMetadata,
                              options: SummaryOptions) -> DeletionVectorSummary:
    ranges: list[tuple[int, int]] = []
    if options.limit > 0:
        for r in iter_ranges(dv):
            ranges.append(r)
            if len(ranges) == options.limit:
                break
    total = count_ranges(dv)
    cardinality = dv.cardinality
    prop = _cardinality_property(meta)
    matches = None if CARDINALITY_PROPERTY not in meta.properties else prop == cardinality
    kinds = [c.kind for b in dv.bitmaps for c in b.containers]
    empty = cardinality == 0
    counts, step = ((), 0) if empty else density(dv.bitmap, int(dv.bitmap.max()))
    return DeletionVectorSummary(
        cardinality=cardinality,
        min=None if empty else int(dv.bitmap.min()),
        max=None if empty else int(dv.bitmap.max()),
        referenced_data_file=meta.properties.get(REFERENCED_DATA_FILE_PROPERTY),
        cardinality_property=prop,
        cardinality_matches=matches,
        ranges=tuple(ranges),
        ranges_total=total,
        truncated=total > len(ranges),
        bitmaps=len(dv.bitmaps),
        array_containers=kinds.count(ARRAY),
        bitmap_containers=kinds.count(BITMAP),
        run_containers=kinds.count(RUN),
        density=counts,
        density_step=step,
    )


def check_deletion_vector(data: bytes, meta: BlobMetadata) -> list[Finding]:
    """Every finding about a DV blob and its metadata (see the module docstring); never raises
    for bad bytes."""
    walk = Walk(data, meta.offset)
    if walk_envelope(walk) is not None:
        end = len(data) - CRC_BYTES
        bitmap = None if walk.findings else canonical_bitmap(data, VECTOR_START, end)
        if bitmap is not None:  # the walk would find nothing
            _check_cardinality(walk, meta, len(bitmap))
        else:
            layouts = walk_vector(walk, VECTOR_START, end)
            if layouts is not None and not walk.failed:
                _check_cardinality(walk, meta, sum(b.cardinality for b in layouts))
    findings = walk.findings
    if CARDINALITY_PROPERTY not in meta.properties:
        findings.append(_meta_finding("dv.cardinality", "blob has no 'cardinality' property"))
    if REFERENCED_DATA_FILE_PROPERTY not in meta.properties:
        findings.append(_meta_finding("dv.referenced-data-file",
                                      "blob has no 'referenced-data-file' property"))
    if meta.compression_codec is not None:
        findings.append(_meta_finding("dv.compressed", f"deletion vector is compressed with "
                                      f"{meta.compression_codec!r}; it must be stored as is"))
    if meta.snapshot_id != DV_SNAPSHOT_ID:
        findings.append(_meta_finding("dv.snapshot-id",
                                      f"snapshot-id is {meta.snapshot_id}, expected -1"))
    if meta.sequence_number != DV_SEQUENCE_NUMBER:
        findings.append(_meta_finding("dv.sequence-number",
                                      f"sequence-number is {meta.sequence_number}, expected -1"))
    if meta.fields != DV_FIELDS:
        findings.append(Finding("dv.fields", Severity.INFO, f"fields is {list(meta.fields)[:8]}"
                                f"; Iceberg Java writes [{ROW_POSITION_FIELD_ID}] (the _pos "
                                "column), but the spec sets no rule for a deletion vector's "
                                "fields and Java's reader ignores them"))
    return findings


def _meta_finding(code: str, message: str) -> Finding:
    return Finding(code, Severity.ERROR, message)


def _check_cardinality(walk: Walk, meta: BlobMetadata, cardinality: int) -> None:
    value = meta.properties.get(CARDINALITY_PROPERTY)
    if value is None:
        return
    prop = _cardinality_property(meta)
    if prop is None:
        walk.findings.append(_meta_finding(
            "dv.cardinality", f"'cardinality' property {value!r} is not a non-negative integer"))
    elif prop != cardinality:
        walk.findings.append(_meta_finding(
            "dv.cardinality", f"'cardinality' property is {prop}, the bitmap holds "
            f"{cardinality} positions"))


class DeletionVectorHandler:
    type_name = DV_BLOB_TYPE

    def summarize(self, data: bytes, meta: BlobMetadata,
                  options: SummaryOptions) -> DeletionVectorSummary:
        return summarize_deletion_vector(decode_deletion_vector(data, meta.offset), meta,
                                         options)

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]:
        return check_deletion_vector(data, meta)


HANDLER = DeletionVectorHandler()
