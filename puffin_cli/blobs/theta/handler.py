"""What ``inspect`` and ``validate`` get from a Theta blob: its summary and its findings.

Findings of :meth:`ThetaHandler.check`:

=====================  ========  =========================================================
code                   severity  meaning
=====================  ========  =========================================================
theta.truncated        error     fewer bytes than the preamble or the entries need
theta.serial-version   error     serial version other than 3 or 4
theta.serial-version   warning   serial version 4 (compressed): DataSketches reads it, but
                                 Iceberg writes 3 and readers on DataSketches older than
                                 the compressed form cannot read it
theta.family           error     family id is not a Theta family
theta.not-compact      error     an update sketch (family 1 or 2, or no compact flag)
theta.preamble         error     preamble longs impossible for the serial version
theta.flags            error     big-endian flag, or the empty flag with entries
theta.seed             error     seed hash is not the default seed 9001's (0x93CC)
theta.theta            error     theta not in 1 to 2^63-1
theta.entries          error     a hash is 0, not below theta, or out of order
theta.length           warning   bytes after the last entry
theta.decode           error     the ``datasketches`` library cannot deserialize the sketch
theta.ndv-property     error     ``ndv`` is not a non-negative integer in decimal digits
theta.ndv-property     warning   ``ndv`` differs from the sketch estimate truncated
theta.fields           info      ``fields`` is empty (the spec requires the list only)
=====================  ========  =========================================================

Offsets in errors and findings are absolute file offsets when the blob is stored
uncompressed; for a compressed blob they are the blob's offset (the message gives the byte
within the decompressed sketch).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.blobs.theta.compact import (
    COMPRESSED_SERIAL_VERSION,
    MAX_THETA,
    PREAMBLE_LONG,
    SERIAL_VERSION,
    Place,
    ThetaHeader,
    deserialize,
    read_header,
    theta_estimate,
)
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE

_NDV_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class ThetaSummary:
    """What ``inspect`` shows about a Theta sketch blob.

    ``estimate`` is Java's (retained * 2^63 / theta_long); the bounds are DataSketches' at 2
    standard deviations; ``exact`` is not estimation mode (theta = 1.0); ``seed_hash_ok`` is
    true for every sketch that decodes (a foreign seed hash is a ``theta.seed`` error), and an
    empty sketch may carry seed hash 0 (as Java writes it). ``ndv_property_matches`` compares
    the ``ndv`` property with the estimate truncated; ``None`` when the property is absent or
    not an integer.
    """

    estimate: float
    lower_bound: float
    upper_bound: float
    retained_entries: int
    theta: float
    theta_long: int
    exact: bool
    empty: bool
    serial_version: int
    compressed: bool
    ordered: bool
    seed_hash: int
    seed_hash_ok: bool
    ndv_property: str | None
    ndv_property_matches: bool | None
    kind: str = field(default="theta")


def _ndv_property(meta: BlobMetadata) -> tuple[str | None, int | None]:
    value = meta.properties.get(NDV_PROPERTY)
    if value is None or not _NDV_DIGITS.fullmatch(value):
        return value, None
    return value, int(value)


# Above this many retained entries DataSketches bounds an estimate with the continuous
# approximation of the binomial bounds (below it, with tables): computed here the same way.
_CLASSIC_BOUNDS_ABOVE = 120


def _bounds(retained: int, theta: float, std_devs: int = 2) -> tuple[float, float]:
    """DataSketches' lower and upper bounds of an estimation-mode sketch with more than
    :data:`_CLASSIC_BOUNDS_ABOVE` entries (its ``cont_classic_lb``/``ub``, rounded by half a
    count and clamped to the estimate and the retained count); the same doubles."""
    estimate = retained / theta
    b = std_devs * math.sqrt((1 - theta) / theta)
    low_n, high_n = (retained - 0.5) / theta, (retained + 0.5) / theta
    low = low_n + 0.5 * b * b - 0.5 * b * math.sqrt(b * b + 4.0 * low_n)
    high = high_n + 0.5 * b * b + 0.5 * b * math.sqrt(b * b + 4.0 * high_n)
    return min(estimate, max(float(retained), low - 0.5)), max(estimate, high + 0.5)


def _summary_without_library(header: ThetaHeader, meta: BlobMetadata) -> ThetaSummary | None:
    """The summary of an uncompressed sketch read from its preamble alone (no DataSketches,
    no numpy: a cold ``inspect`` starts much faster), or ``None`` when its bounds need the
    library's tables (estimation mode with few entries) or it is compressed."""
    retained = header.retained
    if retained is None:
        return None
    estimating = header.theta_long < MAX_THETA and not header.empty
    if estimating and retained <= _CLASSIC_BOUNDS_ABOVE:
        return None
    theta = float(header.theta_long) / float(MAX_THETA)
    low, high = _bounds(retained, theta) if estimating else (float(retained), float(retained))
    return _summary(header, meta, retained, header.theta_long, theta, low, high,
                    exact=not estimating, empty=header.empty, ordered=header.ordered)


def _summary(header: ThetaHeader, meta: BlobMetadata, retained: int, theta_long: int,
             theta: float, low: float, high: float, *, exact: bool, empty: bool,
             ordered: bool) -> ThetaSummary:
    estimate = theta_estimate(retained, theta_long)
    ndv_text, ndv = _ndv_property(meta)
    return ThetaSummary(
        estimate=estimate, lower_bound=low, upper_bound=high, retained_entries=retained,
        theta=theta, theta_long=theta_long, exact=exact, empty=empty,
        serial_version=header.serial_version, compressed=header.compressed, ordered=ordered,
        seed_hash=header.seed_hash, seed_hash_ok=True, ndv_property=ndv_text,
        ndv_property_matches=None if ndv is None else ndv == int(estimate))


def summarize_theta(data: bytes, meta: BlobMetadata) -> ThetaSummary:
    """Decode a Theta blob; raises :class:`PuffinError` (``theta.*``) when it cannot. An
    uncompressed sketch is read by its preamble alone when that gives every fact
    (:func:`_summary_without_library`); otherwise the DataSketches library decodes it."""
    place = Place(meta)
    header = read_header(data, meta)
    quick = _summary_without_library(header, meta)
    if quick is not None:
        return quick
    sketch = deserialize(data, header, place)
    return _summary(header, meta, int(sketch.num_retained), int(sketch.theta64),
                    float(sketch.theta), float(sketch.get_lower_bound(2)),
                    float(sketch.get_upper_bound(2)), exact=not sketch.is_estimation_mode(),
                    empty=bool(sketch.is_empty()), ordered=bool(sketch.is_ordered()))


def check_theta(data: bytes, meta: BlobMetadata) -> list[Finding]:
    """Every finding about a Theta blob and its metadata (see the module docstring); never
    raises for bad bytes."""
    import numpy as np

    place = Place(meta)
    findings: list[Finding] = []
    if not meta.fields:
        findings.append(Finding("theta.fields", Severity.INFO, "theta sketch blob has no "
                                "fields: engines cannot tell which column it describes (the "
                                "spec requires the list, not that it be non-empty)"))
    ndv_text, ndv = _ndv_property(meta)
    if ndv_text is not None and ndv is None:
        findings.append(Finding("theta.ndv-property", Severity.ERROR, f"'ndv' property "
                                f"{ndv_text!r} is not a non-negative integer in decimal digits"))
    try:
        header = read_header(data, meta)
        sketch = deserialize(data, header, place)
    except PuffinError as exc:
        findings.insert(0, Finding(exc.code, Severity.ERROR, exc.message, exc.offset))
        return findings
    if header.compressed:
        findings.append(Finding(
            "theta.serial-version", Severity.WARNING, f"theta sketch: serial version "
            f"{COMPRESSED_SERIAL_VERSION} (compressed form); Iceberg writes {SERIAL_VERSION}, and "
            "DataSketches readers older than the compressed form cannot read it", place(1)))
    else:
        hashes = np.frombuffer(data, dtype="<i8", count=header.retained or 0,
                               offset=PREAMBLE_LONG * header.preamble_longs)
        bad = np.flatnonzero((hashes <= 0) | (hashes >= header.theta_long))
        if bad.size:
            i = int(bad[0])
            findings.append(Finding(
                "theta.entries", Severity.ERROR, f"theta sketch: entry {i} = {int(hashes[i])} "
                f"is not in 1 to theta - 1 ({header.theta_long - 1})",
                place(PREAMBLE_LONG * (header.preamble_longs + i))))
        elif header.ordered and hashes.size > 1:
            unordered = np.flatnonzero(hashes[1:] <= hashes[:-1])
            if unordered.size:
                i = int(unordered[0]) + 1
                findings.append(Finding(
                    "theta.entries", Severity.ERROR, f"theta sketch: entry {i} = "
                    f"{int(hashes[i])} is not above entry {i - 1} = {int(hashes[i - 1])} "
                    "although the ordered flag is set",
                    place(PREAMBLE_LONG * (header.preamble_longs + i))))
        if len(data) > header.end:
            findings.append(Finding(
                "theta.length", Severity.WARNING, f"theta sketch: {len(data) - header.end} "
                f"bytes after the last entry (the sketch ends at byte {header.end} of "
                f"{len(data)})", place(header.end)))
    if ndv is not None:
        truncated = int(theta_estimate(int(sketch.num_retained), int(sketch.theta64)))
        if ndv != truncated:
            findings.append(Finding(
                "theta.ndv-property", Severity.WARNING, f"'ndv' property is {ndv}, the sketch "
                f"estimate truncated is {truncated}"))
    return findings


class ThetaHandler:
    type_name = THETA_BLOB_TYPE

    def summarize(self, data: bytes, meta: BlobMetadata, options: SummaryOptions) -> ThetaSummary:
        return summarize_theta(data, meta)

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]:
        return check_theta(data, meta)


HANDLER = ThetaHandler()
