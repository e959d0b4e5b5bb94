"""Layer 0: the one place that opens, lists, range-reads and writes locations.

Modelled on Iceberg's FileIO: two small nouns and a few verbs, chosen by the location's scheme
and configured by a flat property map with pyiceberg's FileIO property names.

Locations
    Plain paths and ``file:`` URIs are local files. ``s3://``, ``s3a://``, ``s3n://``,
    ``gs://``, ``abfss://container@account.dfs.core.windows.net/…``, ``az://container/…`` and
    ``http(s)://`` (read only) are objects, read through obstore (imported only when a remote
    location is used).

Reading
    :meth:`FileIO.new_input` gives an :class:`InputFile`: ``size``, ``read(offset, length)``,
    ``read_tail(n)`` (one suffix-range request that also learns the size: a Puffin footer costs
    one request), ``stream()`` and ``reader()`` (a seekable binary file for libraries such as
    pyarrow). Pass ``length`` when a manifest or a listing already knows it. ``prefetch``
    plans the reads to come: neighbouring ranges (:func:`coalesce`) are then read with one
    request, so the small blobs of a file cost a few requests, not one each. Inputs that need
    random access refuse FIFOs, devices and other non-regular files at once.
    :meth:`FileIO.open_stream` is for inputs read once from start to end (positions, values,
    spec and file lists): pipes and ``<(…)`` work there. :func:`read_list` reads a list of
    locations (``--files-from``, ``--entries-from``), bounded in line length, entries and bytes.

Writing
    :meth:`FileIO.new_output` gives an :class:`OutputFile`; ``create()`` (or
    ``create(overwrite=True)``) returns an :class:`OutputStream` that is published only by
    ``commit()``: locally a temp file beside the target, fsynced, then linked (create-only) or
    renamed (overwrite); on object stores a single create-only PUT (``If-None-Match: *`` on
    S3). ``abort()`` (or leaving its ``with`` block with an exception) leaves no trace. An
    existing target is refused unless ``overwrite``; a FIFO, device or other special file is
    never replaced.

Deleting
    :meth:`FileIO.delete` removes one file or object (a missing one is no error); it is the
    only deletion verb, used to remove files written for a commit that failed.

Listing
    :meth:`FileIO.list_files` lists a directory or prefix recursively (regular files only,
    symlink loops skipped); :meth:`FileIO.glob` expands ``*``, ``?``, ``[…]`` and ``**``.

Configuration
    ``FileIO(properties)`` takes pyiceberg's names (``s3.endpoint``, ``s3.access-key-id``,
    ``s3.secret-access-key``, ``s3.session-token``, ``s3.region``,
    ``s3.force-virtual-addressing``, ``gcs.*``, ``adls.*``) on top of each cloud's standard
    environment variables. :func:`configure` sets the process-wide properties (``--io``);
    :func:`default_io` is the FileIO that commands use. A FileIO pickles as its properties, so
    Spark tasks rebuild the same configuration on executors.

Errors are :class:`StorageError` (a :class:`~puffin_cli.errors.PuffinError`, so every
command reports them as one line, exit 1), with ``io.*`` / ``write.*`` codes.
"""

from __future__ import annotations

from puffin_cli.storage.base import (
    FileInfo,
    InputFile,
    OutputStream,
    StorageError,
    coalesce,
    has_magic,
    is_remote,
    join,
    name_of,
    os_path,
    parent,
    scheme_of,
)
from puffin_cli.storage.io import FileIO, OutputFile, configure, default_io, read_list

__all__ = [
    "FileIO",
    "FileInfo",
    "InputFile",
    "OutputFile",
    "OutputStream",
    "StorageError",
    "coalesce",
    "configure",
    "default_io",
    "has_magic",
    "is_remote",
    "join",
    "name_of",
    "os_path",
    "parent",
    "read_list",
    "scheme_of",
]
