"""Local files: paths and ``file:`` URIs."""

from __future__ import annotations

import errno
import fnmatch
import os
import stat as _st
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from puffin_cli.storage import cleanup
from puffin_cli.storage.base import (
    FileInfo,
    InputFile,
    OutputStream,
    StorageError,
    has_magic,
    os_path,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up)
if TYPE_CHECKING:
    from typing import IO, Any


def _kind_name(mode: int) -> str:
    if _st.S_ISFIFO(mode):
        return "a FIFO"
    if _st.S_ISCHR(mode):
        return "a character device"
    if _st.S_ISBLK(mode):
        return "a block device"
    if _st.S_ISSOCK(mode):
        return "a socket"
    if _st.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class LocalInput(InputFile):
    """A regular local file read with ``pread``; FIFOs, devices and directories are refused
    when it is opened (opening never blocks: ``O_NONBLOCK``)."""

    def __init__(self, location: str) -> None:
        super().__init__(location)
        path = os_path(location)
        try:
            self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            code = "io.not-found" if exc.errno == errno.ENOENT else "io.open"
            raise StorageError(f"cannot open: {_reason(exc)}", code=code,
                               path=location) from None
        status = os.fstat(self._fd)
        if not _st.S_ISREG(status.st_mode):
            os.close(self._fd)
            self._fd = -1
            raise StorageError(f"cannot open: {_kind_name(status.st_mode)}, not a regular file "
                               "(this input needs random access)", code="io.not-regular",
                               path=location)
        os.set_blocking(self._fd, True)
        self._size = status.st_size

    @property
    def size(self) -> int:
        return self._size

    def _read(self, offset: int, length: int) -> bytes:
        try:
            return os.pread(self._fd, length, offset)
        except OSError as exc:
            raise StorageError(f"cannot read: {_reason(exc)}", code="io.read",
                               path=self.location, offset=offset) from None

    def _read_tail(self, length: int) -> bytes:
        want = min(length, self._size)
        return self._read(self._size - want, want) if want else b""

    def reader(self) -> IO[bytes]:
        """A file of its own (a duplicate descriptor): it outlives :meth:`close`."""
        handle = open(os.dup(self._fd), "rb", closefd=True)  # noqa: SIM115 - the caller's
        handle.seek(0)
        return handle

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@contextmanager
def open_stream(location: str, regular_only: bool = False) -> Iterator[IO[bytes]]:
    """A file read from start to end; pipes, ``<(…)`` and devices are allowed unless
    ``regular_only``."""
    if regular_only:
        with LocalInput(location) as source:  # refuses what is not a regular file
            handle = source.reader()
        with handle:
            yield handle
        return
    path = os_path(location)
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except IsADirectoryError:
        raise StorageError("cannot open: a directory", code="io.open", path=location) from None
    except OSError as exc:
        code = "io.not-found" if exc.errno == errno.ENOENT else "io.open"
        raise StorageError(f"cannot open: {_reason(exc)}", code=code, path=location) from None
    with handle:
        yield handle


def stat_path(path: str) -> FileInfo | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    if _st.S_ISREG(status.st_mode):
        return FileInfo(path, status.st_size, "file", status.st_mtime)
    if _st.S_ISDIR(status.st_mode):
        return FileInfo(path, 0, "dir")
    return FileInfo(path, 0, "other")


def stat(location: str) -> FileInfo | None:
    info = stat_path(os_path(location))
    return None if info is None else FileInfo(location, info.size, info.kind, info.modified)


def list_dir(location: str) -> tuple[list[FileInfo], list[str]]:
    root = os_path(location)
    files, dirs = [], []
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return [], []
    for entry in entries:
        path = os.path.join(location, entry.name)
        if entry.is_dir(follow_symlinks=False):
            dirs.append(path)
            continue
        info = stat_path(entry.path)
        if info is not None and info.kind == "file":
            files.append(FileInfo(path, info.size, "file", info.modified))
    return files, dirs


def delete(location: str) -> None:
    try:
        os.unlink(os_path(location))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot delete: {_reason(exc)}", code="io.delete",
                           path=location) from None


@contextmanager
def lock(location: str) -> Iterator[None]:
    """``flock`` on a lock file (created when missing, never removed)."""
    import fcntl

    try:
        handle = open(os_path(location), "a")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise StorageError(f"cannot lock: {_reason(exc)}", code="io.lock",
                           path=location) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def list_files(location: str) -> Iterator[FileInfo]:
    """Regular files under a directory, recursively, in sorted order. Symlinks to files are
    followed; symlinked directories are not descended into (as ``os.walk``), so a symlink
    loop is never walked; a dangling or looping symlink is skipped."""
    root = os_path(location)
    for directory, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(directory, name)
            info = stat_path(path)
            if info is not None and info.kind == "file":
                yield info


def _glob(base: str, parts: list[str], seen: set[tuple[int, int]]) -> Iterator[str]:
    if not parts:
        yield base
        return
    part, rest = parts[0], parts[1:]
    if part == "**":
        yield from _glob(base, rest, seen)
        for name in _names(base, part):
            path = os.path.join(base, name)
            try:
                status = os.stat(path)
            except OSError:
                continue
            key = (status.st_dev, status.st_ino)
            if _st.S_ISDIR(status.st_mode) and key not in seen:
                seen.add(key)  # a directory reached twice (a symlink loop) is walked once
                yield from _glob(path, parts, seen)
        return
    if not has_magic(part):
        path = os.path.join(base, part)
        if os.path.lexists(path) and (not rest or os.path.isdir(path)):
            yield from _glob(path, rest, seen)
        return
    for name in _names(base, part):
        if fnmatch.fnmatchcase(name, part):
            path = os.path.join(base, name)
            if not rest or os.path.isdir(path):
                yield from _glob(path, rest, seen)


def _names(directory: str, part: str) -> list[str]:
    try:
        names = sorted(os.listdir(directory or "."))
    except OSError:
        return []
    return [n for n in names if part.startswith(".") or not n.startswith(".")]


def glob(pattern: str) -> list[str]:
    """``glob.glob(pattern, recursive=True)``'s matches, sorted, but a directory reached again
    through a symlink loop is not walked again."""
    path = os_path(pattern)
    absolute = path.startswith(os.sep)
    parts = [p for p in path.split(os.sep) if p]
    base = os.sep if absolute else ""
    seen: set[tuple[int, int]] = set()
    found = dict.fromkeys(_glob(base, parts, seen))
    return sorted(p for p in found if p)


class LocalOutput(OutputStream):
    """A temp file beside the target (mode from the umask), published by a hard link
    (create-only: fails when the name exists) or a rename (overwrite)."""

    def __init__(self, location: str, overwrite: bool) -> None:
        super().__init__(location)
        self.path = os_path(location)
        self.overwrite = overwrite
        _check_target(self.path, location, overwrite)
        directory = os.path.dirname(os.path.abspath(self.path))
        self._temp = os.path.join(
            directory, f".{os.path.basename(self.path)}.{os.urandom(6).hex()}.tmp")
        try:
            fd = os.open(self._temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:
            raise StorageError(f"cannot write: {_reason(exc)}", code="write.open",
                               path=location) from None
        cleanup.track(self._temp)  # removed even when a signal ends the process
        self._out = os.fdopen(fd, "wb")

    def write(self, data: Any) -> int:
        return self._out.write(data)

    def commit(self) -> None:
        try:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()
            if self.overwrite:
                _check_target(self.path, self.location, True)
                os.replace(self._temp, self.path)
            else:
                try:
                    os.link(self._temp, self.path)
                except FileExistsError:
                    raise StorageError("appeared while writing; not overwriting it",
                                       code="write.exists", path=self.location) from None
                os.unlink(self._temp)
            cleanup.untrack(self._temp)
        except OSError as exc:
            self.abort()
            raise StorageError(f"cannot write: {_reason(exc)}", code="write.open",
                               path=self.location) from None
        except BaseException:
            self.abort()
            raise
        self.done = True

    def abort(self) -> None:
        if not self._out.closed:
            self._out.close()
        with suppress(FileNotFoundError):
            os.unlink(self._temp)
        cleanup.untrack(self._temp)
        self.done = True


def _check_target(path: str, location: str, overwrite: bool) -> None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot write: {_reason(exc)}", code="write.open",
                           path=location) from None
    if _st.S_ISLNK(status.st_mode):
        try:
            status = os.stat(path)
        except OSError:
            status = os.lstat(path)
    if _st.S_ISDIR(status.st_mode):
        raise StorageError("cannot write: a directory is there", code="write.open",
                           path=location)
    if not _st.S_ISREG(status.st_mode) and not _st.S_ISLNK(status.st_mode):
        raise StorageError(f"{_kind_name(status.st_mode)} is there, not a regular file; "
                           "never replacing it", code="write.special", path=location)
    if not overwrite:
        raise StorageError("exists; use --force to overwrite it", code="write.exists",
                           path=location)


def create(location: str, overwrite: bool) -> OutputStream:
    return LocalOutput(location, overwrite)
