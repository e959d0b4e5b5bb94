"""Puffin bytes to typed objects and back. No CLI or terminal code here.

The names below (and the error family of :mod:`puffin_cli.errors`, below every layer) are
re-exported lazily, so importing one submodule does not load the reader and writer too.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any

    from puffin_cli.errors import BlobTooLargeError, EncryptedFileError, PuffinError
    from puffin_cli.format.findings import Finding, Severity
    from puffin_cli.format.metadata import BlobMetadata, FileMetadata, FooterInfo
    from puffin_cli.format.reader import PuffinReader, read_footer
    from puffin_cli.format.writer import PuffinWriter, WriteResult

_EXPORTS = {
    "BlobMetadata": "puffin_cli.format.metadata",
    "BlobTooLargeError": "puffin_cli.errors",
    "EncryptedFileError": "puffin_cli.errors",
    "FileMetadata": "puffin_cli.format.metadata",
    "Finding": "puffin_cli.format.findings",
    "FooterInfo": "puffin_cli.format.metadata",
    "PuffinError": "puffin_cli.errors",
    "PuffinReader": "puffin_cli.format.reader",
    "PuffinWriter": "puffin_cli.format.writer",
    "Severity": "puffin_cli.format.findings",
    "WriteResult": "puffin_cli.format.writer",
    "read_footer": "puffin_cli.format.reader",
}

__all__ = [
    "BlobMetadata",
    "BlobTooLargeError",
    "EncryptedFileError",
    "FileMetadata",
    "Finding",
    "FooterInfo",
    "PuffinError",
    "PuffinReader",
    "PuffinWriter",
    "Severity",
    "WriteResult",
    "read_footer",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
