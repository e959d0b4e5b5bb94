"""Ranged reads from a local file, named by path or ``file:`` URI."""

from __future__ import annotations

import os
import stat
from types import TracebackType
from urllib.parse import unquote, urlparse

from puffin_cli.format.errors import PuffinError


def local_path(location: str | os.PathLike[str]) -> str:
    """A local filesystem path for a path or ``file:`` URI (``file:/x``, ``file:///x``)."""
    text = os.fspath(location)
    if text.startswith("file:"):
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise PuffinError(f"{text}: file URI with host {parsed.netloc!r} is not local",
                              code="io.uri")
        return unquote(parsed.path)
    if "://" in text:
        scheme = text.split("://", 1)[0]
        raise PuffinError(f"{text}: {scheme}:// locations are not supported yet; "
                          "copy the file locally", code="io.uri")
    return text


class RangeFile:
    """A read-only file that is read by (offset, length) ranges and counts what it reads."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.name = os.fspath(location)
        path = local_path(location)
        try:
            self._fd = os.open(path, os.O_RDONLY)
        except OSError as exc:
            raise PuffinError(f"cannot open: {exc.strerror}", code="io.open",
                              path=self.name) from None
        status = os.fstat(self._fd)
        if stat.S_ISDIR(status.st_mode):
            os.close(self._fd)
            raise PuffinError("cannot open: is a directory", code="io.open", path=self.name)
        self.size = status.st_size
        self.bytes_read = 0
        self.reads = 0

    def read(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``; an error when the file ends first."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise PuffinError(
                f"range [{offset}, {offset + length}) is outside the file of {self.size} bytes",
                code="io.range", path=self.name, offset=offset,
            )
        try:
            data = os.pread(self._fd, length, offset)
        except OSError as exc:
            raise PuffinError(f"cannot read: {exc.strerror}", code="io.read", path=self.name,
                              offset=offset) from None
        self.reads += 1
        self.bytes_read += len(data)
        if len(data) != length:
            raise PuffinError(f"short read: wanted {length} bytes, got {len(data)}",
                              code="io.range", path=self.name, offset=offset)
        return data

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> RangeFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
