"""FileIO: every verb on a location, dispatched by its scheme to the local backend
(storage/local.py) or the object-store one (storage/remote.py, imported only when a remote
location is used), and the process-wide default the CLI configures (``--io``). See the package
docstring."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager

from puffin_cli.errors import ErrorKind, PuffinError
from puffin_cli.storage import local
from puffin_cli.storage.base import (
    FileInfo,
    InputFile,
    IOConfig,
    OutputStream,
    StorageError,
    is_remote,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import IO

# A list of locations (--files-from, --entries-from): the longest line, the most entries and
# the most bytes read, so that no list (/dev/zero, an endless pipe) holds more than ~150 MiB.
LIST_MAX_LINE = 1 << 16
LIST_MAX_ENTRIES = 1_000_000
LIST_MAX_BYTES = 64 << 20


class OutputFile:
    """A location to write: :meth:`create` refuses an existing file unless ``overwrite``."""

    def __init__(self, fileio: FileIO, location: str) -> None:
        self.fileio = fileio
        self.location = location

    def create(self, overwrite: bool = False) -> OutputStream:
        """An :class:`OutputStream` for the location; an existing file is refused unless
        ``overwrite``, a special file (FIFO, device) always."""
        if is_remote(self.location):
            from puffin_cli.storage import remote

            return remote.create(self.fileio, self.location, overwrite)
        return local.create(self.location, overwrite)


class FileIO(IOConfig):
    """Reads, lists and writes locations of any supported scheme with one set of properties
    (pyiceberg FileIO names; see the package docstring). Pickles as its properties."""

    def with_properties(self, properties: Mapping[str, str]) -> FileIO:
        """A FileIO with ``properties`` on top of these (a table's FileIO from a catalog)."""
        return FileIO({**self.properties, **properties})

    def new_input(self, location: str | os.PathLike[str], *,
                  length: int | None = None) -> InputFile:
        """An input for random access; ``length``, when known, saves a request on objects. A
        local input is opened at once (a missing or non-regular file is refused here)."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.RemoteInput(self, text, length)
        return local.LocalInput(text)

    def open_reader(self, location: str | os.PathLike[str], *,
                    length: int | None = None) -> IO[bytes]:
        """A seekable binary file over a location (for pyarrow, fastavro...); the caller
        closes it. Non-regular local files are refused, as for :meth:`new_input`."""
        source = self.new_input(location, length=length)
        try:
            return source.reader()
        finally:
            source.close()

    def new_output(self, location: str | os.PathLike[str]) -> OutputFile:
        return OutputFile(self, os.fspath(location))

    def open_stream(self, location: str | os.PathLike[str], *,
                    regular_only: bool = False) -> AbstractContextManager[IO[bytes]]:
        """A binary stream read once from start to end: local pipes, ``<(…)`` and devices
        are fine here unless ``regular_only`` (files that must be whole: table metadata,
        manifests); objects are streamed in chunks."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.open_stream(self, text)
        return local.open_stream(text, regular_only)

    def read_all(self, location: str | os.PathLike[str], limit: int) -> bytes:
        """A whole (small) file, refused when it has more than ``limit`` bytes."""
        with self.open_stream(location) as stream:
            data = stream.read(limit + 1)
        if len(data) > limit:
            raise StorageError(f"larger than the limit of {limit} bytes", code="io.too-large",
                               path=os.fspath(location))
        return data

    def read_list(self, location: str | os.PathLike[str]) -> list[str]:
        """The entries of a list read as a stream (:func:`read_list`)."""
        with self.open_stream(location) as stream:
            return read_list(stream, os.fspath(location))

    def stat(self, location: str | os.PathLike[str]) -> FileInfo | None:
        """What is at a location (a prefix with objects under it is a ``dir``); ``None`` when
        nothing is."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.stat(self, text)
        return local.stat(text)

    def find(self, location: str | os.PathLike[str]
             ) -> tuple[FileInfo | None, Iterable[FileInfo]]:
        """:meth:`stat` and, for a directory or prefix, :meth:`list_files` in one go: in an
        object store the listing itself tells that a prefix is not empty, so no LIST page is
        fetched only to learn that."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.find(self, text)
        info = self.stat(text)
        if info is None or info.kind != "dir":
            return info, []
        return info, self.list_files(text)

    def list_dir(self, location: str | os.PathLike[str]) -> tuple[list[FileInfo], list[str]]:
        """The regular files directly in a directory or prefix, and its subdirectories
        (locations), both sorted; a symlinked directory is not a subdirectory (as
        ``os.walk``)."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.list_dir(self, text)
        return local.list_dir(text)

    def delete(self, location: str | os.PathLike[str]) -> None:
        """Remove a file (one DELETE on an object store); nothing there is not an error, as
        object stores answer. The one deletion verb: for files a failed commit leaves behind
        (Iceberg's cleanup of uncommitted files). A directory is refused."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            remote.delete(self, text)
            return
        local.delete(text)

    def lock(self, location: str | os.PathLike[str]) -> AbstractContextManager[None]:
        """An exclusive lock named by a location, held while the context lasts: a lock
        file (``flock``) locally; object stores have none, so nothing there."""
        text = os.fspath(location)
        if is_remote(text):
            from contextlib import nullcontext

            return nullcontext()
        return local.lock(text)

    def list_files(self, location: str | os.PathLike[str]) -> Iterator[FileInfo]:
        """Every regular file under a directory or prefix, recursively, sorted by location."""
        text = os.fspath(location)
        if is_remote(text):
            from puffin_cli.storage import remote

            return remote.list_files(self, text)
        return local.list_files(text)

    def glob(self, pattern: str) -> list[str]:
        """Locations matching ``pattern`` (``*``, ``?``, ``[…]`` within a name, ``**`` for any
        number of directories), sorted; symlink loops are not followed twice."""
        if is_remote(pattern):
            from puffin_cli.storage import remote

            return remote.glob(self, pattern)
        return local.glob(pattern)


def read_list(stream: IO[bytes], location: str) -> list[str]:
    """The non-blank lines of a list of locations, stripped; bytes that are not UTF-8 become
    surrogates, as in file names. A line over :data:`LIST_MAX_LINE` bytes, more than
    :data:`LIST_MAX_ENTRIES` entries or :data:`LIST_MAX_BYTES` bytes is refused before more is
    read (``io.too-large``)."""
    entries: list[str] = []
    total = 0
    number = 0
    while True:
        line = stream.readline(LIST_MAX_LINE + 1)
        if not line:
            return entries
        number += 1
        total += len(line)
        if len(line) > LIST_MAX_LINE:
            raise _list_too_large(location, f"line {number} is longer than {LIST_MAX_LINE:,} "
                                            "bytes (one location per line expected)")
        if total > LIST_MAX_BYTES:
            raise _list_too_large(location, f"more than {LIST_MAX_BYTES >> 20} MiB")
        entry = line.decode("utf-8", "surrogateescape").strip()
        if entry:
            if len(entries) == LIST_MAX_ENTRIES:
                raise _list_too_large(location, f"more than {LIST_MAX_ENTRIES:,} entries")
            entries.append(entry)


def _list_too_large(location: str, reason: str) -> PuffinError:
    return PuffinError(f"list too large: {reason}", code="io.too-large", path=location,
                       kind=ErrorKind.LIMIT)


_default = FileIO()


def configure(properties: Mapping[str, str]) -> FileIO:
    """Set the process-wide FileIO properties (the ``--io KEY=VALUE`` options)."""
    global _default
    _default = FileIO(properties)
    return _default


def default_io() -> FileIO:
    """The FileIO commands use: :func:`configure`'s properties on top of the environment."""
    return _default
