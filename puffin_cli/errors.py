"""The one exception family of the format layer, and the kinds of error it carries.

Every error carries the file it is about, the byte offset where the problem was found (when
there is one), a stable ``code`` (the same codes ``puffin validate`` reports), a message that
says what was expected and what was found, and a :class:`ErrorKind`. The kind, not the command,
decides the exit code (``puffin_cli.cli.main`` maps kinds to codes in one place).
"""

from __future__ import annotations

from enum import Enum


class ErrorKind(str, Enum):
    """What went wrong, as far as the user is concerned."""

    BAD_FILE = "bad-file"            # an input is not what its format says it must be
    BAD_ARGUMENT = "bad-argument"    # an option or argument is wrong (a usage error)
    LIMIT = "limit"                  # a configured limit was hit; an option raises it
    IO = "io"                        # the operating system refused a read or a write
    UNSUPPORTED = "not-supported"    # valid, but puffin-cli cannot do it (yet)


class PuffinError(Exception):
    """A Puffin file (or a blob in it, or another input) is not what it must be."""

    kind: ErrorKind = ErrorKind.BAD_FILE

    def __init__(
        self,
        message: str,
        *,
        code: str = "format",
        path: str | None = None,
        offset: int | None = None,
        blob_index: int | None = None,
        kind: ErrorKind | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        self.offset = offset
        self.blob_index = blob_index
        if kind is not None:
            self.kind = kind

    def with_path(self, path: str) -> PuffinError:
        if self.path is None:
            self.path = path
        return self

    def for_option(self, option: str) -> PuffinError:
        """This error, named by the option whose input it is about (``--files-from LIST:``)."""
        self.path = option if self.path is None else f"{option} {self.path}"
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

    kind = ErrorKind.UNSUPPORTED


class LimitError(PuffinError):
    """An input needs more memory (or work) than a limit allows; the message names the option
    that raises the limit."""

    kind = ErrorKind.LIMIT


class BlobTooLargeError(LimitError):
    """A blob would need more memory than the configured limit allows."""
