"""Puffin bytes to typed objects and back. No CLI or terminal code here."""

from puffin_cli.format.errors import BlobTooLargeError, EncryptedFileError, PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata, FileMetadata, FooterInfo
from puffin_cli.format.reader import PuffinReader, read_footer
from puffin_cli.format.writer import PuffinWriter, WriteResult

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
