"""Orphans, defined once: the Puffin and ``.stats`` files under a table that no metadata names
(a statistics file left behind by a failed or replaced commit, a delete file of an expired
snapshot, or one a running writer has not committed yet: its age, ``FileInfo.modified``, tells
them apart)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from puffin_cli.format.spec import PUFFIN_SUFFIXES
from puffin_cli.storage import FileInfo, FileIO, is_remote


def same_file(location: str) -> str:
    """A form of a location that is equal for two names of one file (symlinks resolved)."""
    return location if is_remote(location) else os.path.realpath(location)


def find_orphans(fileio: FileIO, root: str, referenced: Iterable[str]) -> list[FileInfo]:
    """The Puffin and ``.stats`` files under ``root`` that none of ``referenced`` (locations
    as the storage layer opens them) names, by location, with their size and age."""
    known = {same_file(location) for location in referenced}
    return sorted((info for info in fileio.list_files(root)
                   if info.location.endswith(PUFFIN_SUFFIXES)
                   and same_file(info.location) not in known), key=lambda info: info.location)
