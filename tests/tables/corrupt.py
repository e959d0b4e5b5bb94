"""Corrupt copies of a table directory, one planted inconsistency at a time.

A copy keeps its metadata's ``location`` pointing at the original, so ``puffin table`` maps it
onto the copy (the automatic relocation). Manifests are rewritten with fastavro, keeping their
writer schema, metadata and codec.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.storage import FileIO

Records = list[dict[str, Any]]


def copy_table(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def edit_metadata(table: Path, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Apply ``edit`` to the current metadata JSON in place; return the edited object."""
    path = Path(current_metadata_file(table, fileio=FileIO()))
    obj: dict[str, Any] = json.loads(path.read_text())
    edit(obj)
    path.write_text(json.dumps(obj, indent=2))
    return obj


def local(table: Path, location: str, original: str) -> Path:
    """The copy's file for a location of the original table."""
    text = location.removeprefix("file:")
    while text.startswith("//"):
        text = text[1:]
    return table / text[len(original.removeprefix("file:")):].lstrip("/")


def current_manifests(table: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The current metadata and its current snapshot's manifest-list records."""
    import fastavro

    current = Path(current_metadata_file(table, FileIO()))
    meta: dict[str, Any] = json.loads(current.read_text())
    snap = next(s for s in meta["snapshots"]
                if s["snapshot-id"] == meta["current-snapshot-id"])
    with open(local(table, snap["manifest-list"], meta["location"]), "rb") as f:
        return meta, list(fastavro.reader(f))


def rewrite_manifests(table: Path, content: int, edit: Callable[[Records], Records]) -> int:
    """Rewrite every manifest of the current snapshot holding ``content`` (0 data, 1 deletes)
    through ``edit``; returns how many were rewritten."""
    import fastavro

    meta, listed = current_manifests(table)
    done = 0
    for manifest in listed:
        if manifest["content"] != content:
            continue
        path = local(table, manifest["manifest_path"], meta["location"])
        with open(path, "rb") as f:
            reader = fastavro.reader(f)
            schema, codec = reader.writer_schema, reader.codec
            extra = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
            records = list(reader)
        with open(path, "wb") as out:
            fastavro.writer(out, schema, edit(records), codec=codec, metadata=extra)
        done += 1
    return done


def live_dvs(records: Records) -> list[dict[str, Any]]:
    return [r for r in records if r["status"] != 2 and r["data_file"]["content"] == 1]
