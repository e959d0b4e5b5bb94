"""Objects in S3, GCS, Azure and over HTTP(S), through obstore (imported here only).

Every request is retried by obstore on 5xx, throttling, dropped connections and timeouts (a
bounded number of times, exponential backoff with jitter); what remains is turned into one
line naming the location and what to do.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import IO, Any, NoReturn

import obstore
from obstore import exceptions as obx

from puffin_cli.storage import config as cfg
from puffin_cli.storage.base import (
    STREAM_CHUNK,
    FileInfo,
    InputFile,
    IOConfig,
    OutputStream,
    StorageError,
    has_magic,
    scheme_of,
)

RETRY = {"max_retries": 5, "retry_timeout": timedelta(seconds=60),
         "backoff": {"init_backoff": timedelta(milliseconds=100),
                     "max_backoff": timedelta(seconds=5), "base": 2}}
CLIENT = {"connect_timeout": "10s", "timeout": "300s"}
# A single create-only PUT holds the object in memory; bound it.
SPOOL_IN_MEMORY = 16 << 20
_S3 = ("s3", "s3a", "s3n")
_GCS = ("gs", "gcs")
_AZURE = ("abfss", "abfs", "az", "adl")
_HTTP = ("http", "https")
CREDENTIAL_HINTS = {
    "s3": "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or "
          "AWS_PROFILE, or --io s3.access-key-id=… --io s3.secret-access-key=…",
    "gcs": "set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or "
           "--io gcs.oauth2.token=…",
    "azure": "set AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY (or "
             "AZURE_STORAGE_SAS_KEY), or --io adls.account-name=… --io adls.account-key=…",
    "http": "the server wants credentials this tool cannot send over plain HTTP(S)",
}


@dataclass(frozen=True)
class Target:
    """A parsed object location: which store, and the key inside it."""

    kind: str  # s3, gcs, azure, http
    authority: str  # bucket, container@account, or scheme://host for http
    key: str
    prefix: str  # the location up to the key, to rebuild listed locations

    def location(self, key: str) -> str:
        return f"{self.prefix}{key}"


def parse(location: str) -> Target:
    scheme = scheme_of(location)
    rest = location.split("://", 1)[1]
    authority, _, key = rest.partition("/")
    head = location[: len(location) - len(key)]
    if not head.endswith("/"):
        head += "/"
    if scheme in _S3:
        kind = "s3"
    elif scheme in _GCS:
        kind = "gcs"
    elif scheme in _AZURE:
        kind = "azure"
    elif scheme in _HTTP:
        return Target("http", f"{scheme}://{authority}", key, head)
    else:
        raise StorageError(f"{scheme}:// locations are not supported (s3, s3a, s3n, gs, "
                           "abfss, az, http, https, file and plain paths are)", code="io.uri",
                           path=location)
    if not authority:
        raise StorageError(f"no bucket or container in the location (expected "
                           f"{scheme}://BUCKET/KEY)", code="io.uri", path=location)
    return Target(kind, authority, key, head)


def _store(fileio: IOConfig, target: Target, location: str) -> Any:
    key = (target.kind, target.authority)
    return fileio.store_for(key, lambda: _make_store(fileio, target, location))


def _make_store(fileio: IOConfig, target: Target, location: str) -> Any:
    import obstore.store

    stores: Any = obstore.store  # settings are built as plain dicts
    props = fileio.properties
    options: dict[str, Any] = dict(CLIENT)
    try:
        if target.kind == "s3":
            settings = cfg.s3_settings(props)
            if not cfg.s3_has_credentials(settings) and \
                    os.environ.get("AWS_EC2_METADATA_DISABLED", "").lower() == "true":
                raise StorageError(f"no credentials: {CREDENTIAL_HINTS['s3']}",
                                   code="io.credentials", path=location)
            options.update(settings.client_options)
            return stores.S3Store(target.authority, config=settings.config, client_options=options,
                           retry_config=RETRY)
        if target.kind == "gcs":
            settings = cfg.gcs_settings(props)
            options.update(settings.client_options)
            return stores.GCSStore(target.authority, config=settings.config, client_options=options,
                            retry_config=RETRY)
        if target.kind == "azure":
            container, _, host = target.authority.partition("@")
            account = host.split(".", 1)[0] if host else None
            settings = cfg.adls_settings(props, account)
            options.update(settings.client_options)
            return stores.AzureStore(container, config=settings.config, client_options=options,
                              retry_config=RETRY)
        if target.authority.startswith("http://"):
            options["allow_http"] = True
        return stores.HTTPStore(target.authority, client_options=options, retry_config=RETRY)
    except obx.BaseError as exc:
        _fail(exc, location, target)


def _summary(exc: BaseException) -> str:
    """One line of an obstore error's (multi-line, nested) text."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


# What a request of the AWS credential chain names in its error (the instance metadata
# service's token and credential paths, at AWS_METADATA_ENDPOINT or its link-local address;
# the ECS container endpoint): whatever answer or silence came from there, the store found no
# credentials, even when the S3 endpoint itself is up.
_CREDENTIAL_SOURCES = ("/latest/api/token", "/latest/meta-data/", "169.254.169.254",
                       "169.254.170.2")


def _fail(exc: BaseException, location: str, target: Target, *,
          writing: bool = False) -> NoReturn:
    text = str(exc)
    lowered = text.lower()
    hint = CREDENTIAL_HINTS[target.kind]
    if isinstance(exc, obx.AlreadyExistsError | obx.PreconditionError):
        raise StorageError("exists; use --force to overwrite it", code="write.exists",
                           path=location) from None
    if isinstance(exc, FileNotFoundError) or "nosuchkey" in lowered:
        if "nosuchbucket" in lowered or "bucket does not exist" in lowered \
                or "containernotfound" in lowered:
            raise StorageError(f"no such bucket or container: {target.authority}",
                               code="io.not-found", path=location) from None
        raise StorageError("no such object", code="io.not-found", path=location) from None
    if "nosuchbucket" in lowered or "containernotfound" in lowered:
        raise StorageError(f"no such bucket or container: {target.authority}",
                           code="io.not-found", path=location) from None
    if isinstance(exc, obx.UnauthenticatedError) or "invalidaccesskeyid" in lowered \
            or "signaturedoesnotmatch" in lowered:
        raise StorageError(f"not authenticated (credentials missing or wrong): {hint}",
                           code="io.credentials", path=location) from None
    if isinstance(exc, obx.PermissionDeniedError) or "accessdenied" in lowered:
        what = "write" if writing else "read"
        raise StorageError(f"access denied: the credentials may not {what} this location",
                           code="io.denied", path=location) from None
    if "credential" in lowered or "instancecredentialprovider" in lowered \
            or any(marker in lowered for marker in _CREDENTIAL_SOURCES):
        raise StorageError(f"no credentials: {hint}", code="io.credentials",
                           path=location) from None
    if any(word in lowered for word in ("error sending request", "connection refused",
                                        "dns error", "tcp connect", "connect error",
                                        "operation timed out", "timed out")):
        raise StorageError(f"endpoint unreachable ({_endpoint_hint(target)}); check the "
                           "endpoint and the network", code="io.unreachable",
                           path=location) from None
    if "range" in lowered and ("416" in lowered or "not satisfiable" in lowered):
        raise StorageError(f"range not satisfiable: {_summary(exc)}", code="io.range",
                           path=location) from None
    raise StorageError(f"object store error: {_summary(exc)}", code="io.store",
                       path=location) from None


def _endpoint_hint(target: Target) -> str:
    if target.kind == "s3":
        return "s3.endpoint / AWS_ENDPOINT_URL"
    if target.kind == "gcs":
        return "gcs.service.host"
    if target.kind == "azure":
        return "adls.account-host"
    return target.authority


class RemoteInput(InputFile):
    """An object read by ranged GETs; the footer read is one suffix-range GET."""

    def __init__(self, fileio: IOConfig, location: str, length: int | None) -> None:
        super().__init__(location)
        self.target = parse(location)
        self._store = _store(fileio, self.target, location)
        self._size = length

    @property
    def size(self) -> int:
        if self._size is None:
            try:
                meta = obstore.head(self._store, self.target.key)
            except Exception as exc:
                _fail(exc, self.location, self.target)
            self.reads += 1
            self._size = int(meta["size"])
        return self._size

    def _read(self, offset: int, length: int) -> bytes:
        try:
            return bytes(obstore.get_range(self._store, self.target.key, start=offset,
                                           length=length))
        except Exception as exc:
            _fail(exc, self.location, self.target)

    def _read_tail(self, length: int) -> bytes:
        if self._size is None and self.target.kind == "azure":
            # Azure Blob has no suffix ranges (obstore refuses them): one HEAD, one ranged GET
            self.size  # noqa: B018
        if self._size is not None:
            want = min(length, self._size)
            return self._read(self._size - want, want) if want else b""
        if length == 0:
            self.size  # noqa: B018 - one HEAD learns the size
            return b""
        try:
            result = obstore.get(self._store, self.target.key,
                                 options={"range": {"suffix": length}})
            data = bytes(result.bytes())
        except Exception as exc:
            if "range" in str(exc).lower() and self.size == 0:  # an empty object
                return b""
            _fail(exc, self.location, self.target)
        self._size = int(result.meta["size"])
        return data

    def stream(self, offset: int = 0, length: int | None = None,
               chunk: int = STREAM_CHUNK) -> Iterator[bytes]:
        """One ranged GET, its body read chunk by chunk."""
        end = self.size if length is None else offset + length
        if offset < 0 or end > self.size or end < offset:
            raise StorageError(f"range [{offset}, {end}) is outside the file of {self.size} "
                               "bytes", code="io.range", path=self.location, offset=offset)
        if end == offset:
            return
        if self._tail and offset >= self._tail_at:  # within the tail already read
            yield self._tail[offset - self._tail_at:end - self._tail_at]
            return
        try:
            result = obstore.get(self._store, self.target.key,
                                 options={"range": (offset, end)})
            self.reads += 1
            for piece in result.stream(min_chunk_size=chunk):
                self.bytes_read += len(piece)
                yield bytes(piece)
        except StorageError:
            raise
        except Exception as exc:
            _fail(exc, self.location, self.target)


class _ChunkRaw(io.RawIOBase):
    def __init__(self, chunks: Iterator[bytes], location: str, target: Target) -> None:
        self._chunks = chunks
        self._pending = b""
        self.name = location
        self._target = target

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending:
            try:
                self._pending = next(self._chunks)
            except StopIteration:
                return 0
            except obx.BaseError as exc:
                _fail(exc, self.name, self._target)
        take = min(len(view), len(self._pending))
        view[:take] = self._pending[:take]
        self._pending = self._pending[take:]
        return take


@contextmanager
def open_stream(fileio: IOConfig, location: str) -> Iterator[IO[bytes]]:
    target = parse(location)
    store = _store(fileio, target, location)
    try:
        result = obstore.get(store, target.key)
    except Exception as exc:
        _fail(exc, location, target)
    chunks = (bytes(piece) for piece in result.stream(min_chunk_size=STREAM_CHUNK))
    with io.BufferedReader(_ChunkRaw(chunks, location, target), STREAM_CHUNK) as reader:
        yield reader


def _object(fileio: IOConfig, location: str, target: Target) -> FileInfo | None:
    """The object at exactly this key (one HEAD), if the location can name one."""
    if not target.key or target.key.endswith("/"):
        return None
    store = _store(fileio, target, location)
    try:
        meta = obstore.head(store, target.key)
    except FileNotFoundError:
        return None
    except Exception as exc:
        _fail(exc, location, target)
    return FileInfo(location, int(meta["size"]), "file", _timestamp(meta))


def stat(fileio: IOConfig, location: str) -> FileInfo | None:
    target = parse(location)
    found = _object(fileio, location, target)
    if found is not None or target.kind == "http":
        return found
    store = _store(fileio, target, location)
    prefix = target.key.rstrip("/")
    try:
        for batch in obstore.list(store, prefix or None, chunk_size=1):
            if batch:
                return FileInfo(location, 0, "dir")
            break
    except Exception as exc:
        _fail(exc, location, target)
    return None


def delete(fileio: IOConfig, location: str) -> None:
    target = parse(location)
    if target.kind == "http" or not target.key or target.key.endswith("/"):
        raise StorageError("cannot delete: not an object location", code="io.delete",
                           path=location)
    try:
        obstore.delete(_store(fileio, target, location), target.key)
    except FileNotFoundError:
        return
    except Exception as exc:
        _fail(exc, location, target, writing=True)


def _listed(fileio: IOConfig, location: str, target: Target) -> list[FileInfo]:
    if target.kind == "http":
        raise StorageError("an http(s) location cannot be listed; name the files",
                           code="io.list", path=location)
    store = _store(fileio, target, location)
    prefix = target.key.rstrip("/")
    found = []
    try:
        for batch in obstore.list(store, prefix or None, chunk_size=1000):
            for meta in batch:
                found.append(FileInfo(target.location(meta["path"]), int(meta["size"]), "file",
                                      _timestamp(meta)))
    except Exception as exc:
        _fail(exc, location, target)
    found.sort(key=lambda info: info.location)
    return found


def find(fileio: IOConfig, location: str) -> tuple[FileInfo | None, list[FileInfo]]:
    """The object at the location (one HEAD), else the objects under it as a prefix (the
    LIST pages of the listing, no more)."""
    target = parse(location)
    found = _object(fileio, location, target)
    if found is not None or target.kind == "http":
        return found, []
    listing = _listed(fileio, location, target)
    return (FileInfo(location, 0, "dir") if listing else None), listing


def list_dir(fileio: IOConfig, location: str) -> tuple[list[FileInfo], list[str]]:
    target = parse(location)
    if target.kind == "http":
        raise StorageError("an http(s) location cannot be listed; name the files",
                           code="io.list", path=location)
    store = _store(fileio, target, location)
    prefix = target.key.rstrip("/")
    try:
        found = obstore.list_with_delimiter(store, prefix or None)
    except Exception as exc:
        _fail(exc, location, target)
    files = [FileInfo(target.location(meta["path"]), int(meta["size"]), "file",
                      _timestamp(meta)) for meta in found["objects"]]
    dirs = [target.location(p) for p in found["common_prefixes"]]
    return sorted(files, key=lambda f: f.location), sorted(dirs)


def _timestamp(meta: Any) -> float | None:
    modified = meta.get("last_modified")
    return None if modified is None else float(modified.timestamp())


def list_files(fileio: IOConfig, location: str) -> Iterator[FileInfo]:
    return iter(_listed(fileio, location, parse(location)))


def _matches(parts: list[str], names: list[str]) -> bool:
    import fnmatch

    if not parts:
        return not names
    if parts[0] == "**":
        return any(_matches(parts[1:], names[i:]) for i in range(len(names) + 1))
    return bool(names) and fnmatch.fnmatchcase(names[0], parts[0]) \
        and _matches(parts[1:], names[1:])


def glob(fileio: IOConfig, pattern: str) -> list[str]:
    target = parse(pattern)
    parts = target.key.split("/")
    fixed = []
    for part in parts:
        if has_magic(part) or part == "**":
            break
        fixed.append(part)
    rest = parts[len(fixed):]
    base = "/".join(fixed)
    listing = _listed(fileio, target.location(base), parse(target.location(base)))
    out = []
    for info in listing:
        key = info.location[len(target.prefix):]
        relative = key[len(base):].lstrip("/") if base else key
        if _matches(rest, relative.split("/")):
            out.append(info.location)
    return out


class RemoteOutput(OutputStream):
    """Bytes spooled locally (memory, then a temp file), uploaded by ``commit`` in one PUT:
    create-only (``If-None-Match: *`` on S3) unless overwriting. A failed or interrupted
    upload publishes nothing."""

    def __init__(self, fileio: IOConfig, location: str, overwrite: bool) -> None:
        super().__init__(location)
        self.target = parse(location)
        if self.target.kind == "http":
            raise StorageError("http(s) locations are read-only", code="write.open",
                               path=location)
        self.overwrite = overwrite
        self._store = _store(fileio, self.target, location)
        if not overwrite:
            try:
                obstore.head(self._store, self.target.key)
            except FileNotFoundError:
                pass
            except Exception as exc:
                _fail(exc, location, self.target, writing=True)
            else:
                raise StorageError("exists; use --force to overwrite it", code="write.exists",
                                   path=location)
        self._spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115

    def write(self, data: Any) -> int:
        return self._spool.write(data)

    def commit(self) -> None:
        try:
            self._spool.seek(0)
            obstore.put(self._store, self.target.key, self._spool,
                        mode="overwrite" if self.overwrite else "create", use_multipart=False)
        except Exception as exc:
            self.abort()
            _fail(exc, self.location, self.target, writing=True)
        self._spool.close()
        self.done = True

    def abort(self) -> None:
        self._spool.close()
        self.done = True


def create(fileio: IOConfig, location: str, overwrite: bool) -> OutputStream:
    return RemoteOutput(fileio, location, overwrite)
