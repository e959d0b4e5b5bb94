"""Small shared test helpers: Puffin bytes built by hand, part by part, and the samples folder.

Import as ``from helpers import puffin_bytes`` (``tests/`` is on ``sys.path`` via conftest).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from puffin_cli.format.spec import MAGIC

# Puffin files written by Iceberg Java and Trino, and what Iceberg Java reads from each
# (``expected/<name>.json``, whose ``file`` key is relative to this folder): see its README.md.
SAMPLES = Path(__file__).resolve().parent / "data" / "foreign"
# Every Puffin file there (``public/``, ``iceberg-java/``), sorted.
SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*")
                      if p.is_file() and p.parent.name != "expected" and p.name != "README.md")


def footer_payload(blobs: list[dict[str, Any]], properties: dict[str, str] | None = None,
                   **extra: Any) -> bytes:
    """Compact footer JSON (as Iceberg Java writes it) for ``blobs`` and file ``properties``;
    ``extra`` keys are added at the top level verbatim."""
    obj: dict[str, Any] = {"blobs": blobs}
    if properties is not None:
        obj["properties"] = properties
    obj.update(extra)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def puffin_bytes(payload: bytes | str = b'{"blobs":[]}', *, blob_data: bytes = b"",
                 flags: bytes = bytes(4), payload_size: int | None = None,
                 head: bytes = MAGIC, footer_magic: bytes = MAGIC, end_magic: bytes = MAGIC
                 ) -> bytes:
    """A Puffin file from its parts, each replaceable to make it malformed:

    ``head`` (leading magic) + ``blob_data`` + ``footer_magic`` + ``payload`` +
    ``payload_size`` (int32 LE; defaults to the payload's length) + ``flags`` + ``end_magic``.
    A ``str`` payload is UTF-8 encoded. Blob offsets in the payload start at ``len(head)``.
    """
    raw = payload.encode("utf-8") if isinstance(payload, str) else payload
    size = len(raw) if payload_size is None else payload_size
    return (head + blob_data + footer_magic + raw + struct.pack("<i", size) + flags
            + end_magic)


def blob_entry(offset: int = 4, length: int = 0, **fields: Any) -> dict[str, Any]:
    """One footer ``blobs`` entry with every required key (type ``t``, fields ``[1]``,
    snapshot-id 1, sequence-number 1); keyword arguments (``snapshot_id=...``) override or add
    keys, with ``_`` standing for ``-``."""
    entry: dict[str, Any] = {"type": "t", "fields": [1], "snapshot-id": 1, "sequence-number": 1,
                             "offset": offset, "length": length}
    entry.update({k.replace("_", "-"): v for k, v in fields.items()})
    return entry


def run_main(capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, str]:
    """Run the CLI's ``main`` in this process, as the ``puffin`` script does: (exit code,
    stdout bytes, stderr text)."""
    from puffin_cli.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsysbinary.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 0), out, err.decode()


def record_local_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    """The range reads of local files from now on, as the storage layer makes them:
    (location, offset, length) each."""
    from puffin_cli.storage.local import LocalInput

    reads: list[tuple[str, int, int]] = []
    original = LocalInput._read

    def record(self: LocalInput, offset: int, length: int) -> bytes:
        reads.append((self.location, offset, length))
        return original(self, offset, length)

    monkeypatch.setattr(LocalInput, "_read", record)
    return reads
