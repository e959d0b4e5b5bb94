"""``validate_file``: every finding about one Puffin file, as one :class:`FileReport`
(analysis/file_report.py, shared with the Paimon BLOB files of analysis/paimon.py).

Order of checks: leading magic; footer structure (:func:`read_footer`); footer JSON
(:func:`decode_footer_json`); value ranges; blob layout (offsets, overlaps, gaps); then each
blob in turn: codec, decompression with its content size, and its type's
``HANDLER.check(data, meta)``. Blobs are read in that order, neighbours together (spans of
up to 8 MiB: a file of small deletion vectors costs a few requests, not one per blob), and each
is released before the next, so peak memory is about the largest decompressed blob and a
span. Finally the engine profile
(:mod:`puffin_cli.analysis.profiles`) adds what the chosen engine rejects.

``validate_file`` never raises: an unexpected exception becomes an ``internal.error`` finding.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from puffin_cli.analysis.file_report import FileReport, report_for
from puffin_cli.analysis.profiles import BLOB_LZ4, FOOTER_LZ4, SPEC, apply_profile
from puffin_cli.blobs import handler_for
from puffin_cli.errors import PuffinError
from puffin_cli.format import codecs
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata, FileMetadata, decode_footer_json
from puffin_cli.format.paimon_blob import is_paimon_blob
from puffin_cli.format.reader import FooterRead, read_footer
from puffin_cli.format.spec import (
    CODEC_LZ4,
    DEFAULT_MAX_BLOB_SIZE,
    ENCRYPTED_MAGIC,
    KNOWN_CODECS,
    MAGIC,
    MAGIC_LENGTH,
    PUFFIN_SUFFIXES,
)
from puffin_cli.storage import FileIO, InputFile, StorageError, is_remote

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
LZ4_READERS = "Iceberg Java, iceberg-rust and pyiceberg cannot read it"


class _Validation:
    def __init__(self, path: str, max_blob_size: int, fileio: FileIO,
                 length: int | None) -> None:
        self.path = path
        self.fileio = fileio
        self.length = length
        self.max_blob_size = max_blob_size
        self.findings: list[Finding] = []
        self.file_size: int | None = None
        self.footer_size: int | None = None
        self.metadata: FileMetadata | None = None

    def add(self, code: str, severity: Severity, message: str, offset: int | None = None,
            blob_index: int | None = None) -> None:
        self.findings.append(Finding(code, severity, message, offset, blob_index))

    def error(self, code: str, message: str, offset: int | None = None,
              blob_index: int | None = None) -> None:
        self.add(code, Severity.ERROR, message, offset, blob_index)

    def run(self) -> None:
        try:
            source = self.fileio.new_input(self.path, length=self.length)
        except PuffinError as exc:
            self.error("file.open", exc.message)
            return
        with source:
            try:
                self.check_file(source)
            except StorageError as exc:
                code = "file.open" if source.reads == 0 else "file.read"
                self.error(code, exc.message, exc.offset)
            except OSError as exc:
                self.error("file.read", f"cannot read: {exc.strerror or exc}")

    def check_file(self, source: InputFile) -> None:
        # The tail first: one request on an object store gives the size and the footer.
        found: FooterRead | None = None
        failure: PuffinError | None = None
        try:
            found = read_footer(source, max_payload=self.max_blob_size)
        except PuffinError as exc:
            failure = exc
        self.file_size = source.size
        head = source.read(0, min(source.size, MAGIC_LENGTH)) if source.size else b""
        if head == ENCRYPTED_MAGIC:
            self.error("file.encrypted", "encrypted Iceberg file (AES-GCM stream, magic AGS1): "
                       "key needed", 0)
            return
        if len(head) == MAGIC_LENGTH and head != MAGIC:
            self.error("file.magic", f"leading magic is {head.hex()}, expected {MAGIC.hex()} "
                       f"({MAGIC.decode()})", 0)
        if found is None:
            assert failure is not None
            if isinstance(failure, StorageError):
                raise failure
            self.error(failure.code, failure.message, failure.offset)
            return
        self.findings.extend(found.findings)
        if found.info is None or found.payload is None:
            return
        info = found.info
        self.footer_size = info.footer_size
        payload_at = info.footer_start + MAGIC_LENGTH
        if info.compressed:
            self.add(FOOTER_LZ4, Severity.WARNING, "footer payload is LZ4-compressed: valid "
                     f"Puffin, but {LZ4_READERS}", payload_at)
        metadata, json_findings = decode_footer_json(found.payload, payload_at,
                                                    self.max_blob_size)
        self.findings.extend(json_findings)
        if metadata is None:
            return
        self.metadata = metadata
        self.check_ranges(metadata.blobs, payload_at)
        readable = self.check_layout(metadata.blobs, info.footer_start)
        # the blobs' ranges, read in this order: neighbours come in one request
        source.prefetch((blob.offset, blob.length) for index, blob in enumerate(metadata.blobs)
                        if readable[index] and blob.length <= self.max_blob_size)
        for index, blob in enumerate(metadata.blobs):
            if readable[index]:
                self.check_blob(source, index, blob)

    def check_ranges(self, blobs: tuple[BlobMetadata, ...], payload_at: int) -> None:
        for index, blob in enumerate(blobs):
            bad = [f for f in blob.fields if not INT32_MIN <= f <= INT32_MAX]
            if bad:
                self.error("json.range", f"blob {index} field ID {bad[0]} does not fit in a "
                           "32-bit int", payload_at, index)
            for key, value in (("snapshot-id", blob.snapshot_id),
                               ("sequence-number", blob.sequence_number)):
                if not INT64_MIN <= value <= INT64_MAX:
                    self.error("json.range", f"blob {index} {key!r} {value} does not fit in a "
                               "64-bit long", payload_at, index)

    def check_layout(self, blobs: tuple[BlobMetadata, ...], footer_start: int) -> list[bool]:
        """Offsets and lengths against the blob area; overlaps (errors) and gaps (info).
        Returns, per blob, whether its range can be read."""
        readable = []
        for index, blob in enumerate(blobs):
            end = blob.offset + blob.length
            if blob.offset < MAGIC_LENGTH:
                self.error("blob.range", f"blob offset {blob.offset} is inside the leading "
                           f"magic; blobs start at byte {MAGIC_LENGTH} or later", blob.offset,
                           index)
            elif end > footer_start:
                self.error("blob.range", f"blob range [{blob.offset}, {end}) runs past the blob "
                           f"area, which ends where the footer starts at byte {footer_start}",
                           blob.offset, index)
            readable.append(blob.offset >= MAGIC_LENGTH and end <= footer_start)
        placed = sorted((b.offset, b.offset + b.length, i) for i, b in enumerate(blobs)
                        if readable[i] and b.length > 0)
        covered_to, covered_by = MAGIC_LENGTH, None
        for start, end, index in placed:
            if start < covered_to and covered_by is not None:
                self.error("blob.overlap", f"blob {index} [{start}, {end}) overlaps blob "
                           f"{covered_by}, which extends to byte {covered_to}", start, index)
            elif start > covered_to:
                self.gap(covered_to, start)
            if end > covered_to:
                covered_to, covered_by = end, index
        if covered_to < footer_start:
            self.gap(covered_to, footer_start)
        return readable

    def gap(self, start: int, end: int) -> None:
        self.add("blob.gap", Severity.INFO, f"{end - start} bytes at [{start}, {end}) belong to "
                 "no blob", start)

    def check_blob(self, source: InputFile, index: int, blob: BlobMetadata) -> None:
        codec = blob.compression_codec
        if codec is not None and codec not in KNOWN_CODECS:
            self.error("blob.codec.unknown", f"unknown compression codec {codec!r}; expected "
                       f"one of {', '.join(KNOWN_CODECS)} or none", blob.offset, index)
            return
        if codec == CODEC_LZ4:
            self.add(BLOB_LZ4, Severity.WARNING, f"blob is LZ4-compressed: valid Puffin, but "
                     f"{LZ4_READERS}", blob.offset, index)
        if blob.length > self.max_blob_size:
            self.error("blob.too-large", f"blob of {blob.length} bytes is larger than the limit "
                       f"of {self.max_blob_size} bytes; not checked (raise --max-blob-size)",
                       blob.offset, index)
            return
        try:
            data = codecs.decompress(codec, source.read(blob.offset, blob.length),
                                     self.max_blob_size)
        except PuffinError as exc:
            self.error(exc.code, exc.message, blob.offset, index)
            return
        try:
            found = handler_for(blob.type).check(data, blob)
        except Exception as exc:  # a checker bug must not hide the other findings
            self.error("internal.error", f"the {blob.type!r} check failed: "
                       f"{type(exc).__name__}: {exc}", blob.offset, index)
            return
        finally:
            del data
        self.findings.extend(f if f.blob_index is not None
                             else dataclasses.replace(f, blob_index=index) for f in found)


def validate_file(path: str | os.PathLike[str], *, profile: str = SPEC,
                  max_blob_size: int = DEFAULT_MAX_BLOB_SIZE, length: int | None = None,
                  fileio: FileIO) -> FileReport:
    """Check one file against the Puffin spec (and ``profile``'s engine rules); a Paimon
    BLOB file (a ``.blob`` name, or recognised by its content) against Paimon's format.
    ``length`` (from a listing) saves a request on object stores."""
    name = os.fspath(path)
    if not name.endswith(PUFFIN_SUFFIXES) and is_paimon_blob(name, fileio):
        from puffin_cli.analysis.paimon import validate_paimon

        return validate_paimon(name, profile=profile, max_blob_size=max_blob_size,
                               length=length, fileio=fileio)
    run = _Validation(name, max_blob_size, fileio, length)
    try:
        run.run()
        findings = apply_profile(profile, run.findings, run.metadata)
    except Exception as exc:  # never raise on any input: report it instead
        findings = [*run.findings, Finding("internal.error", Severity.ERROR,
                                           f"validation stopped: {type(exc).__name__}: {exc}")]
    blob_count = None if run.metadata is None else len(run.metadata.blobs)
    return report_for(name, profile, run.file_size, run.footer_size, blob_count, findings)


@dataclass(frozen=True)
class ValidationRun:
    """What one ``puffin validate`` run found: every file's report, in the order checked, and
    the counts over all of them. ``failed_files`` names the files that failed (with
    ``strict``, warnings fail a file too)."""

    profile: str
    strict: bool
    files: tuple[FileReport, ...]
    checked: int
    passed: int
    failed: int
    errors: int
    warnings: int
    infos: int
    failed_files: tuple[str, ...]

    @classmethod
    def of(cls, reports: list[FileReport], *, profile: str, strict: bool) -> ValidationRun:
        failed = tuple(r.path for r in reports if r.failed(strict))
        return cls(profile, strict, tuple(reports), len(reports), len(reports) - len(failed),
                   len(failed), sum(r.errors for r in reports), sum(r.warnings for r in reports),
                   sum(r.infos for r in reports), failed)


# A summary names at most this many failed files (validate's --json names them all; scan's
# document gives the reports of this many).
NAMED_FAILURES = 50

# Objects validated at once: requests overlap; memory stays about this many blobs.
CONCURRENT_OBJECTS = 16
# (files done, files in all): told after each file.
Progress = Callable[[int, int], None]


def validate_files(paths: Sequence[str], *, profile: str = SPEC,
                   max_blob_size: int = DEFAULT_MAX_BLOB_SIZE,
                   fileio: FileIO,
                   progress: Progress | None = None) -> list[FileReport]:
    """:func:`validate_file` of each path, in order, ``progress`` told after each; objects in
    a store are validated :data:`CONCURRENT_OBJECTS` at a time (local files one by one)."""

    def one(path: str) -> FileReport:
        return validate_file(path, profile=profile, max_blob_size=max_blob_size, fileio=fileio)

    def told(reports: Iterable[FileReport]) -> list[FileReport]:
        done = []
        for report in reports:
            done.append(report)
            if progress is not None:
                progress(len(done), len(paths))
        return done

    if len(paths) < 2 or not any(is_remote(p) for p in paths):
        return told(one(p) for p in paths)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(CONCURRENT_OBJECTS, len(paths))) as pool:
        return told(pool.map(one, paths))
