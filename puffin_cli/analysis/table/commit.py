"""Committing a new table metadata version of a file-system ("Hadoop") Iceberg table.

The protocol (Iceberg table spec, "File System Tables"), as ``puffin stats compute --commit``
runs it:

1. find the latest version N: ``metadata/version-hint.text``, then forward while
   ``v<N+1>.metadata.json`` exists (a writer may have died before updating the hint), else the
   highest ``v<N>.metadata.json``;
2. read ``v<N>.metadata.json``, apply the change (for statistics: drop any entry for the same
   snapshot, append the new one; ``last-updated-ms`` moves on and ``v<N>`` joins the
   ``metadata-log``, trimmed to ``write.metadata.previous-versions-max``);
3. write the result as ``v<N+1>.metadata.json`` with the storage layer's create-only output:
   locally a fsynced temporary file in ``metadata/`` published by a hard link, which fails when
   that name exists; in an object store one PUT with ``If-None-Match: *``. A metadata file is
   never overwritten. If another writer got there first, re-read the new latest version and go
   to step 2 (up to ``max_attempts``);
4. replace ``version-hint.text`` (temp file + rename; a PUT in an object store) unless it
   already names a newer version (locally, puffin writers take
   ``metadata/.puffin-version-hint.lock`` for this step).

Tables whose metadata files use metastore naming (``<N>-<uuid>.metadata.json``) belong to a
catalog; committing to them behind the catalog's back is refused.
"""

from __future__ import annotations

import copy
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from puffin_cli.analysis.table.metadata import (
    METADATA_DIR,
    VERSION_HINT,
    hadoop_versions,
    load_metadata,
    version_hint,
)
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.numbers import decimal_int
from puffin_cli.storage import FileIO, StorageError, join, name_of

DEFAULT_MAX_ATTEMPTS = 10
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
DEFAULT_PREVIOUS_VERSIONS = 100


@dataclass(frozen=True)
class StatisticsFileEntry:
    """One ``statistics`` entry of table metadata (its JSON form is :meth:`to_json`)."""

    snapshot_id: int
    path: str
    file_size: int
    footer_size: int
    blobs: tuple[dict[str, Any], ...]

    @classmethod
    def for_blobs(cls, snapshot_id: int, path: str, file_size: int, footer_size: int,
                  blobs: list[dict[str, Any]]) -> StatisticsFileEntry:
        return cls(snapshot_id, path, file_size, footer_size, tuple(blobs))

    def to_json(self) -> dict[str, Any]:
        return {"snapshot-id": self.snapshot_id, "statistics-path": self.path,
                "file-size-in-bytes": self.file_size,
                "file-footer-size-in-bytes": self.footer_size,
                "blob-metadata": [dict(b) for b in self.blobs]}


@dataclass(frozen=True)
class CommitResult:
    version: int
    metadata_file: str
    attempts: int
    replaced: tuple[str, ...]  # statistics paths dropped for the same snapshot


def _version_path(metadata_dir: str, version: int, fileio: FileIO) -> str | None:
    for name in (f"v{version}.metadata.json", f"v{version}.gz.metadata.json",
                 f"v{version}.metadata.json.gz"):
        candidate = join(metadata_dir, name)
        if fileio.stat(candidate) is not None:
            return candidate
    return None


def latest_version(metadata_dir: str | os.PathLike[str], fileio: FileIO | None = None
                   ) -> tuple[int, str]:
    """(N, location of v<N>) for the newest published version (see the module docstring)."""
    fileio = fileio or FileIO()
    metadata_dir = os.fspath(metadata_dir)
    found = fileio.stat(metadata_dir)
    versions = hadoop_versions(metadata_dir, fileio) if found and found.kind == "dir" else {}
    if not versions:
        raise PuffinError(f"{metadata_dir}: no v<N>.metadata.json; only file-system tables "
                          "(Hadoop catalog) can be committed to directly; register the "
                          "statistics file through the table's catalog instead",
                          code="commit.not-file-system-table")
    version = version_hint(metadata_dir, fileio)
    if version is None or version not in versions:
        version = max(versions)
    path = versions[version]
    while (following := _version_path(metadata_dir, version + 1, fileio)) is not None:
        version, path = version + 1, following
    return version, path


def _update_hint(metadata_dir: str | os.PathLike[str], version: int,
                 fileio: FileIO | None = None) -> None:
    """Point the hint at the newest version (at least ``version``), never backwards; puffin
    writers serialize this step on a lock file so a slower one cannot roll the hint back."""
    fileio = fileio or FileIO()
    metadata_dir = os.fspath(metadata_dir)
    with fileio.lock(join(metadata_dir, ".puffin-version-hint.lock")):
        newest = max(version, latest_version(metadata_dir, fileio)[0])
        current = version_hint(metadata_dir, fileio)
        if current is not None and current >= newest:
            return
        with fileio.new_output(join(metadata_dir, VERSION_HINT)).create(overwrite=True) as out:
            out.write(f"{newest}\n".encode())


def commit(table_dir: str | os.PathLike[str],
           change: Callable[[dict[str, Any], str], dict[str, Any]], *,
           max_attempts: int = DEFAULT_MAX_ATTEMPTS,
           fileio: FileIO | None = None) -> tuple[int, str, int]:
    """Apply ``change(base_metadata_json, base_location)`` and publish the result as the
    next version; (version, file, attempts). ``change`` gets a deep copy to modify."""
    fileio = fileio or FileIO()
    metadata_dir = join(os.fspath(table_dir), METADATA_DIR)
    for attempt in range(1, max_attempts + 1):
        version, base_path = latest_version(metadata_dir, fileio)
        base = load_metadata(base_path, fileio)
        location = f"{base.location.rstrip('/')}/{METADATA_DIR}/{name_of(base_path)}"
        updated = change(copy.deepcopy(base.raw), location)
        text = json.dumps(updated, separators=(",", ":"), ensure_ascii=False)
        # lone surrogates (from \ud800 escapes in the metadata read) stay JSON escapes
        content = text.encode("utf-8", "backslashreplace")
        target = join(metadata_dir, f"v{version + 1}.metadata.json")
        try:
            if _version_path(metadata_dir, version + 1, fileio) is not None:
                raise StorageError("exists", code="write.exists", path=target)
            with fileio.new_output(target).create() as out:
                out.write(content)
        except StorageError as exc:
            if exc.code != "write.exists":
                raise
            time.sleep(random.uniform(0.01, 0.05) * attempt)
            continue
        _update_hint(metadata_dir, version + 1, fileio)
        return version + 1, target, attempt
    raise PuffinError(f"{metadata_dir}: gave up after {max_attempts} attempts: other writers "
                      "committed a new metadata version each time; nothing was changed",
                      code="commit.conflict")


def _log_previous(metadata: dict[str, Any], previous_location: str) -> None:
    previous_ms = metadata.get("last-updated-ms")
    now = int(time.time() * 1000)
    if isinstance(previous_ms, int):
        log = list(metadata.get("metadata-log") or [])
        log.append({"timestamp-ms": previous_ms, "metadata-file": previous_location})
        properties = metadata.get("properties") or {}
        setting = properties.get(PREVIOUS_VERSIONS_MAX) if isinstance(properties, dict) else None
        keep = (decimal_int(setting) if isinstance(setting, str) else None) \
            or DEFAULT_PREVIOUS_VERSIONS
        metadata["metadata-log"] = log[-max(keep, 1):]
        now = max(now, previous_ms)
    metadata["last-updated-ms"] = now


def commit_statistics(table_dir: str | os.PathLike[str], entry: StatisticsFileEntry, *,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                      fileio: FileIO | None = None) -> CommitResult:
    """Register a statistics file for its snapshot, replacing any older entry for it."""
    replaced: list[str] = []

    def change(metadata: dict[str, Any], previous: str) -> dict[str, Any]:
        snapshots = metadata.get("snapshots") or []
        if not any(s.get("snapshot-id") == entry.snapshot_id for s in snapshots):
            raise PuffinError(f"{table_dir}: snapshot {entry.snapshot_id} is no longer in the "
                              "table (expired by another writer?); statistics not committed",
                              code="commit.snapshot")
        kept = []
        replaced.clear()
        for stats in metadata.get("statistics") or []:
            if stats.get("snapshot-id") == entry.snapshot_id:
                replaced.append(str(stats.get("statistics-path")))
            else:
                kept.append(stats)
        metadata["statistics"] = [*kept, entry.to_json()]
        _log_previous(metadata, previous)
        return metadata

    version, path, attempts = commit(table_dir, change, max_attempts=max_attempts,
                                     fileio=fileio)
    return CommitResult(version, str(path), attempts, tuple(replaced))
