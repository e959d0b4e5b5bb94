"""The storage nouns (:class:`InputFile`, :class:`OutputStream`), the configuration a backend
reads (:class:`IOConfig`) and location helpers; storage/io.py picks a backend by scheme. See
the package docstring."""

from __future__ import annotations

import _thread
import io
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import unquote, urlparse

from puffin_cli.errors import ErrorKind, PuffinError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import IO, Any

LOCAL_SCHEMES = ("", "file")
_GLOB_CHARS = frozenset("*?[")
STREAM_CHUNK = 1 << 20
# Ranges read together (:func:`coalesce`, :meth:`InputFile.prefetch`): a gap of up to
# COALESCE_GAP bytes between two is read with them (object_store's own default: a request
# costs about what a MiB of transfer does), and a span read at once holds at most
# COALESCE_SPAN bytes.
COALESCE_GAP = 1 << 20
COALESCE_SPAN = 8 << 20

# A byte range: (offset, length).
Range = tuple[int, int]


class StorageError(PuffinError):
    """A location could not be opened, read, listed or written (``io.*`` and ``write.*``
    codes); the message says what to do where there is something to do."""

    kind = ErrorKind.IO

    def __init__(self, message: str, *, code: str = "io.open", path: str | None = None,
                 offset: int | None = None) -> None:
        super().__init__(message, code=code, path=path, offset=offset)


def scheme_of(location: str | os.PathLike[str]) -> str:
    """``""`` for a plain path, else the URI scheme in lower case (``file``, ``s3``, ...)."""
    text = os.fspath(location)
    if text.startswith("file:"):
        return "file"
    head, sep, _ = text.partition("://")
    if not sep or not head or "/" in head:
        return ""
    return head.lower()


def is_remote(location: str | os.PathLike[str]) -> bool:
    """Whether a location is an object (read through the object-store backend)."""
    return scheme_of(location) not in LOCAL_SCHEMES


def os_path(location: str | os.PathLike[str]) -> str:
    """The operating system's path of a plain path or ``file:`` URI (``file:/x``,
    ``file:///x``)."""
    text = os.fspath(location)
    scheme = scheme_of(text)
    if scheme == "file":
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise StorageError(f"file URI with host {parsed.netloc!r} is not local",
                               code="io.uri", path=text)
        return _file_name(unquote(parsed.path), text)
    if scheme:
        raise StorageError(f"{scheme}:// is not a local location", code="io.uri", path=text)
    return _file_name(text, text)


def _file_name(path: str, location: str) -> str:
    """``path``, refused when no file can have that name: text such as a lone UTF-16
    surrogate from a table's metadata has no bytes (undecodable bytes of real names do), and
    no file name holds a NUL character."""
    if "\0" in path:
        raise StorageError("not a usable file name (it holds a NUL character)", code="io.uri",
                           path=location)
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        raise StorageError("not a usable file name (it holds a lone surrogate character)",
                           code="io.uri", path=location) from None
    return path


def has_magic(text: str) -> bool:
    """Whether a location holds glob characters (``*``, ``?``, ``[``)."""
    return bool(_GLOB_CHARS & set(text))


def parent(location: str) -> str:
    """The directory (or prefix) holding a location."""
    if not is_remote(location):
        return os.path.dirname(location.rstrip("/") or "/")
    return location.rstrip("/").rsplit("/", 1)[0]


def name_of(location: str) -> str:
    """The last part of a location (a file or directory name)."""
    return location.rstrip("/").rsplit("/", 1)[-1]


def join(base: str, *names: str) -> str:
    """``base`` and names joined with ``/`` (``os.path.join`` for local paths)."""
    if not is_remote(base):
        return os.path.join(base, *names)
    out = base
    for name in names:
        out = out.rstrip("/") + "/" + name.lstrip("/")
    return out


@dataclass(frozen=True)
class FileInfo:
    """A listed or stat'ed location: ``kind`` is ``file``, ``dir`` or ``other`` (a FIFO, a
    device, a socket)."""

    location: str
    size: int
    kind: str = "file"
    modified: float | None = None  # seconds since the epoch, when known


def coalesce(ranges: Iterable[Range], *, gap: int = COALESCE_GAP,
             span: int = COALESCE_SPAN) -> list[list[Range]]:
    """Non-empty ranges, in their order, grouped to be read with one request each: a range
    joins the group before it when it starts at or after the group's end, at most ``gap``
    bytes past it, and the group then spans at most ``span`` bytes. A range longer than
    ``span`` is a group of its own."""
    groups: list[list[Range]] = []
    start = end = 0
    for offset, length in ranges:
        if length <= 0:
            continue
        if groups and end <= offset <= end + gap and offset + length - start <= span:
            groups[-1].append((offset, length))
        else:
            groups.append([(offset, length)])
            start = offset
        end = offset + length
    return groups


class InputFile(ABC):
    """A file or object read by byte ranges. ``size`` may cost one request on an object
    unless it was passed in or learnt by :meth:`read_tail`; ``reads`` and ``bytes_read``
    count what was read (requests and bytes)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.reads = 0
        self.bytes_read = 0
        self._tail_at = 0
        self._tail = b""
        # prefetch(): each planned range's span (start, end, id), the ranges of each span
        # not read yet, the span held and the spans read before
        self._planned: dict[Range, tuple[int, int, int]] = {}
        self._unread: dict[int, int] = {}
        self._span: tuple[int, bytes] | None = None
        self._spans_read: set[int] = set()

    @property
    def name(self) -> str:
        return self.location

    @property
    @abstractmethod
    def size(self) -> int: ...

    @abstractmethod
    def _read(self, offset: int, length: int) -> bytes: ...

    @abstractmethod
    def _read_tail(self, length: int) -> bytes: ...

    def read(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``; an error when the file ends first."""
        size = self.size
        if offset < 0 or length < 0 or offset + length > size:
            raise StorageError(f"range [{offset}, {offset + length}) is outside the file of "
                               f"{size} bytes", code="io.range", path=self.location,
                               offset=offset)
        if length == 0:
            return b""
        if self._tail and offset >= self._tail_at:  # within the tail already read
            start = offset - self._tail_at
            return self._tail[start:start + length]
        if self._planned:
            held = self._from_span(offset, length)
            if held is not None:
                return held
        return self._counted_read(offset, length)

    def _counted_read(self, offset: int, length: int) -> bytes:
        data = self._read(offset, length)
        self.reads += 1
        self.bytes_read += len(data)
        if len(data) != length:
            raise StorageError(f"short read: wanted {length} bytes, got {len(data)}",
                               code="io.range", path=self.location, offset=offset)
        return data

    def prefetch(self, ranges: Iterable[Range]) -> None:
        """Plan the reads of ``ranges`` (offset, length), in the order they will be read:
        those that :func:`coalesce` groups are read with one request, when the first of them
        is read, and served from it after; the span is dropped once all of its ranges were
        read, or when the next one is. Reads stay exact: a read outside the plan, a second
        read of a range, a read from a span dropped or one that failed to read is a request
        of its own (failing as it would have). Replaces an earlier plan."""
        self._planned, self._unread, self._span = {}, {}, None
        self._spans_read = set()
        size = self.size
        for number, group in enumerate(coalesce(
                (o, n) for o, n in ranges
                if o >= 0 and o + n <= size and not (self._tail and o >= self._tail_at))):
            if len(group) < 2:
                continue
            start, end = group[0][0], group[-1][0] + group[-1][1]
            for piece in group:
                self._planned[piece] = (start, end, number)
            self._unread[number] = len(group)

    def _from_span(self, offset: int, length: int) -> bytes | None:
        """A planned range's bytes out of its span (read now if it was not yet), or ``None``
        when the range must be read by itself."""
        found = self._planned.pop((offset, length), None)
        if found is None:
            return None
        start, end, number = found
        if self._span is None or self._span[0] != number:
            if number in self._spans_read:
                return None
            self._spans_read.add(number)
            self._span = None
            try:
                self._span = (number, self._counted_read(start, end - start))
            except StorageError:
                return None
        data = self._span[1][offset - start:offset - start + length]
        self._unread[number] -= 1
        if not self._unread[number]:
            self._span = None
        return data

    def read_tail(self, length: int) -> bytes:
        """The last ``min(length, size)`` bytes, in one request (which also learns ``size``).
        Later reads inside them are served from memory."""
        data = self._read_tail(max(length, 0))
        self.reads += 1
        self.bytes_read += len(data)
        self._tail_at, self._tail = self.size - len(data), data
        return data

    def stream(self, offset: int = 0, length: int | None = None,
               chunk: int = STREAM_CHUNK) -> Iterator[bytes]:
        """The bytes of ``[offset, offset + length)`` (to the end by default) in chunks of at
        most ``chunk`` bytes, never all in memory at once."""
        end = self.size if length is None else offset + length
        if offset < 0 or end > self.size or end < offset:
            raise StorageError(f"range [{offset}, {end}) is outside the file of {self.size} "
                               "bytes", code="io.range", path=self.location, offset=offset)
        position = offset
        while position < end:
            step = min(chunk, end - position)
            yield self.read(position, step)
            position += step

    def reader(self) -> IO[bytes]:
        """A seekable, read-only binary file over this input (for pyarrow, fastavro...)."""
        return io.BufferedReader(_RangeRaw(self), buffer_size=256 * 1024)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the input holds (a file descriptor)."""

    def __enter__(self) -> InputFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _RangeRaw(io.RawIOBase):
    def __init__(self, source: InputFile) -> None:
        self._source = source
        self._position = 0
        self.name = source.location

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            self._position = offset
        elif whence == io.SEEK_CUR:
            self._position += offset
        else:
            self._position = self._source.size + offset
        self._position = max(self._position, 0)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), max(self._source.size - self._position, 0))
        if want == 0:
            return 0
        data = self._source.read(self._position, want)
        view[:want] = data
        self._position += want
        return want


class OutputStream(io.RawIOBase):
    """What :meth:`OutputFile.create` returns: ``write`` bytes, then ``commit()`` publishes
    them at the location (create-only unless overwriting was asked for) and ``abort()`` drops
    them. Used as a context manager it commits on success and aborts on an exception. A
    write-only raw binary file otherwise (``close()`` publishes nothing)."""

    def __init__(self, location: str) -> None:
        super().__init__()
        self.location = location
        self.done = False

    def writable(self) -> bool:
        return True

    @abstractmethod
    def write(self, data: Any) -> int: ...

    @abstractmethod
    def commit(self) -> None: ...

    @abstractmethod
    def abort(self) -> None: ...

    def __enter__(self) -> OutputStream:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.done:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()


class IOConfig:
    """A FileIO's properties (pyiceberg FileIO names) and the object-store clients made from
    them, cached: what a backend needs of a FileIO. Pickles as its properties."""

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        self.properties: dict[str, str] = dict(properties or {})
        self._stores: dict[Any, Any] = {}
        self._lock = _thread.allocate_lock()

    def __getstate__(self) -> dict[str, Any]:
        return {"properties": self.properties}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["properties"])  # type: ignore[misc]

    def store_for(self, key: Any, make: Any) -> Any:
        """A cached backend client (one per bucket/container and configuration)."""
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self._stores[key] = make()
            return store
