"""Engine profiles for ``puffin validate --profile``: will this engine accept this file?

The ``spec`` profile checks the Puffin spec only. Each engine profile adds what that engine
rejects, as ``profile.<engine>.<rule>`` errors. All rules live in :data:`RULES`, one table; each
says where it comes from (the engine's source, read for this project). A rule either
*escalates* a spec finding (the spec-level warning is then replaced by the engine's error) or
*detects* something in the footer metadata that the spec allows but the engine does not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import FileMetadata
from puffin_cli.format.spec import DV_BLOB_TYPE, NDV_PROPERTY, THETA_BLOB_TYPE

SPEC = "spec"
ENGINES = ("java", "rust", "pyiceberg", "trino")
PROFILES = (SPEC, *ENGINES)

# Spec-level finding codes that engine rules escalate (emitted by analysis/validate.py and by the
# deletion-vector blob handler).
BLOB_LZ4 = "blob.lz4"
FOOTER_LZ4 = "footer.lz4"
DV_KEY_ABOVE_JAVA_MAX = "dv.key-above-java-limit"

JAVA_LONG_MIN, JAVA_LONG_MAX = -(1 << 63), (1 << 63) - 1

# (blob index or None, message) pairs for what a detecting rule found.
Hits = Iterable[tuple[int | None, str]]


@dataclass(frozen=True)
class EngineRule:
    """One thing an engine rejects. ``code`` is the rule's part of ``profile.<engine>.<code>``."""

    code: str
    engines: tuple[str, ...]
    message: str
    source: str
    escalates: tuple[str, ...] = ()
    detect: Callable[[FileMetadata], Hits] | None = None


def _dv_file_with_other_blobs(metadata: FileMetadata) -> Hits:
    types = [blob.type for blob in metadata.blobs]
    if DV_BLOB_TYPE in types:
        for index, blob_type in enumerate(types):
            if blob_type != DV_BLOB_TYPE:
                yield index, f"blob {index} is a {blob_type!r} in a file of deletion vectors"


def _ndv_not_a_java_long(metadata: FileMetadata) -> Hits:
    for index, blob in enumerate(metadata.blobs):
        value = blob.properties.get(NDV_PROPERTY)
        if blob.type != THETA_BLOB_TYPE or value is None:
            continue
        body = value[1:] if value[:1] in ("+", "-") else value
        ok = (body.isascii() and body.isdigit() and len(body) <= 19
              and JAVA_LONG_MIN <= int(value) <= JAVA_LONG_MAX)
        if not ok:
            yield index, f"'ndv' property {value[:40]!r} is not a Java long"


def _duplicate_theta_field(metadata: FileMetadata) -> Hits:
    single = [(i, b.fields[0]) for i, b in enumerate(metadata.blobs)
              if b.type == THETA_BLOB_TYPE and len(b.fields) == 1]
    counts = Counter(field for _, field in single)
    for index, field in single:
        if counts[field] > 1:
            yield index, f"field {field} has {counts[field]} single-field theta blobs"


RULES: tuple[EngineRule, ...] = (
    # Iceberg Java core/.../puffin/PuffinFormat.java: compress() and decompress() have a TODO
    # for LZ4 and throw UnsupportedOperationException("Unsupported codec: LZ4"), for blobs and
    # for the footer (FOOTER_COMPRESSION_CODEC is LZ4). Checked on Iceberg 1.10.x; LZ4 pull
    # requests (#16048, #16054, #16348) were not merged at the time of writing.
    # iceberg-rust crates/iceberg/src/puffin/compression.rs: CompressionCodec::Lz4 decompress
    # returns FeatureUnsupported "LZ4 decompression is not supported currently" (released
    # versions up to 0.7; PR #1966 and #2438, which add it, were closed).
    EngineRule(
        "lz4", ("java", "rust"),
        "cannot decompress LZ4 (its Puffin codec code has no LZ4 frame support)",
        "Iceberg Java PuffinFormat.decompress; iceberg-rust puffin/compression.rs",
        escalates=(BLOB_LZ4, FOOTER_LZ4),
    ),
    # pyiceberg pyiceberg/table/puffin.py PuffinFile.get_blob_payload: only None and "zstd";
    # anything else raises ValueError("Unsupported puffin compression codec").
    EngineRule(
        "lz4", ("pyiceberg",),
        "cannot decompress LZ4 blobs (it reads only uncompressed and zstd blobs)",
        "pyiceberg table/puffin.py PuffinFile.get_blob_payload",
        escalates=(BLOB_LZ4,),
    ),
    # pyiceberg pyiceberg/table/puffin.py PuffinFile.__init__: `if flags[0] != 0: raise
    # ValueError("The Puffin-file has a compressed footer, which is not yet supported")`.
    EngineRule(
        "compressed-footer", ("pyiceberg",),
        "refuses a compressed footer ('compressed footer, which is not yet supported')",
        "pyiceberg table/puffin.py PuffinFile.__init__",
        escalates=(FOOTER_LZ4,),
    ),
    # Iceberg Java core/.../deletes/RoaringPositionBitmap.java readKey(): "Key is too large"
    # unless key <= Integer.MAX_VALUE - 1 (MAX_POSITION is key 0x7FFFFFFE); the spec allows
    # every position with the top bit 0 (pyiceberg's limit, MAX_JAVA_SIGNED, is 0x7FFFFFFF).
    EngineRule(
        "dv-key", ("java",),
        "rejects deletion-vector keys above 0x7FFFFFFE ('Key is too large')",
        "Iceberg Java deletes/RoaringPositionBitmap.readKey",
        escalates=(DV_KEY_ABOVE_JAVA_MAX,),
    ),
    # pyiceberg pyiceberg/table/deletion_vector.py deletion_vectors_from_puffin_file: decodes
    # every blob of the file as a deletion vector and reads properties["referenced-data-file"],
    # so any other blob in a DV file fails (KeyError or a garbage bitmap).
    EngineRule(
        "mixed-blobs", ("pyiceberg",),
        "decodes every blob of a deletion-vector file as a deletion vector",
        "pyiceberg table/deletion_vector.py deletion_vectors_from_puffin_file",
        detect=_dv_file_with_other_blobs,
    ),
    # Trino plugin/trino-iceberg/.../TableStatisticsReader.readNdvs: NDV comes from the theta
    # blob's 'ndv' property through Long.parseLong (NumberFormatException otherwise); the
    # sketch itself is never read.
    EngineRule(
        "ndv", ("trino",),
        "parses the 'ndv' property with Long.parseLong and fails the query when it cannot",
        "Trino TableStatisticsReader.readNdvs",
        detect=_ndv_not_a_java_long,
    ),
    # Trino TableStatisticsReader.readNdvs: single-field theta blobs are collected with
    # toImmutableMap keyed by field ID ("Fail loud upon duplicates (there must be none)").
    EngineRule(
        "duplicate-theta-field", ("trino",),
        "fails on two single-field theta blobs for the same field (toImmutableMap duplicate)",
        "Trino TableStatisticsReader.readNdvs",
        detect=_duplicate_theta_field,
    ),
)


def rules_for(profile: str) -> list[EngineRule]:
    return [rule for rule in RULES if profile in rule.engines]


def apply_profile(profile: str, findings: Sequence[Finding],
                  metadata: FileMetadata | None) -> list[Finding]:
    """The findings under ``profile``: spec findings, with escalated ones replaced by the
    engine's error, plus what the engine's detecting rules find in ``metadata``."""
    rules = rules_for(profile)
    if not rules:
        return list(findings)
    escalation = {code: rule for rule in rules for code in rule.escalates}
    out: list[Finding] = []
    for finding in findings:
        rule = escalation.get(finding.code)
        if rule is None:
            out.append(finding)
        else:
            out.append(Finding(f"profile.{profile}.{rule.code}", Severity.ERROR,
                               f"{profile}: {rule.message}: {finding.message}",
                               finding.offset, finding.blob_index))
    if metadata is not None:
        for rule in rules:
            if rule.detect is None:
                continue
            for blob_index, what in rule.detect(metadata):
                offset = None if blob_index is None else metadata.blobs[blob_index].offset
                out.append(Finding(f"profile.{profile}.{rule.code}", Severity.ERROR,
                                   f"{profile}: {rule.message}: {what}", offset, blob_index))
    return out
