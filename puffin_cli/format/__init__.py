"""Puffin bytes to typed objects and back. No CLI or terminal code here.

The names below are re-exported lazily, so importing one submodule (say, the errors the CLI
catches) does not load the reader and writer too.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import Any

    from puffin_cli.format.errors import BlobTooLargeError, EncryptedFileError, PuffinError
    from puffin_cli.format.findings import Finding, Severity
    from puffin_cli.format.metadata import BlobMetadata, FileMetadata, FooterInfo
    from puffin_cli.format.reader import PuffinReader, read_footer
    from puffin_cli.format.writer import PuffinWriter, WriteResult

_EXPORTS = {
    "BlobMetadata": "metadata",
    "BlobTooLargeError": "errors",
    "EncryptedFileError": "errors",
    "FileMetadata": "metadata",
    "Finding": "findings",
    "FooterInfo": "metadata",
    "PuffinError": "errors",
    "PuffinReader": "reader",
    "PuffinWriter": "writer",
    "Severity": "findings",
    "WriteResult": "writer",
    "read_footer": "reader",
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
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
