"""The one exception family of the format layer.

Every error carries the file it is about, the byte offset where the problem was found (when
there is one), a stable ``code`` (the same codes ``puffin validate`` reports) and a message
that says what was expected and what was found.
"""

from __future__ import annotations


class PuffinError(Exception):
    """A Puffin file (or a blob in it) is not what the spec says it must be."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "format",
        path: str | None = None,
        offset: int | None = None,
        blob_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.offset = offset
        self.blob_index = blob_index

    def with_path(self, path: str) -> PuffinError:
        if self.path is None:
            self.path = path
        return self

    def __str__(self) -> str:
        parts = []
        if self.path is not None:
            parts.append(f"{self.path}: ")
        if self.blob_index is not None:
            parts.append(f"blob {self.blob_index}: ")
        parts.append(self.message)
        if self.offset is not None:
            parts.append(f" (at byte {self.offset})")
        return "".join(parts)


class EncryptedFileError(PuffinError):
    """The file is an Iceberg AES-GCM stream (magic ``AGS1``): it needs a key to be read."""


class BlobTooLargeError(PuffinError):
    """A blob would need more memory than the configured limit allows."""
