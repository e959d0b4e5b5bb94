"""Broken tables made by Iceberg Java (spark_scripts/broken_tables.py: what each holds), fresh
copies of them for a test, and the judge of what Iceberg Java reads (interop/judge.py).

Fixtures (in a test module: ``from interop.broken import broken_table_fixture,
broken_tables_fixture, java_judge_fixture  # noqa: F401``):

- ``broken_tables`` (session): the directory of the built tables (:func:`built_tables`).
- ``broken_table`` (per test): ``broken_table(name) -> BrokenTable``, a fresh copy of table
  ``name`` (one of :data:`NAMES`) under the test's ``tmp_path``; the test may change it.
- ``java_judge`` (session): :class:`interop.judge.JavaJudge`; ``java_judge.reads(dir)``.

The tables are built once per version of the build script and of the judge (cached like
tests/tables, keyed by the scripts' hash). A copy is a table of its own: its location, and
every path in its metadata JSON, manifest lists, manifests and Puffin footers, names the copy
(the build pads the original's path so that the copy's path can have the same length: each
string in an Avro record or a Puffin footer keeps its length). Files keep the build's
modification times, except the orphans of ``orphans``, which get their recorded ages relative
to the time of the copy.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tiers import needs

from interop.judge import JavaJudge
from interop.sparkenv import script_output

SCRIPT = Path(__file__).resolve().parent / "spark_scripts" / "broken_tables.py"
# What the build records of each table is the judge's report: a new judge rebuilds them (the
# judge reads partition statistics rows with partition_stats_tables.py's reader).
JUDGE_SCRIPTS = (SCRIPT.parent / "java_judge.py", SCRIPT.parent / "partition_stats_tables.py")
NAMES = ("dup_dv", "bare_dv", "moved_dv", "bad_stats", "orphans")
DAY = 86400.0
AVRO_MAGIC = b"Obj\x01"


@dataclass(frozen=True)
class BrokenTable:
    """A copy of one broken table. ``built`` is what the build did and ``java`` what Iceberg
    Java read from it then (the judge's report); both name the copy's files.
    ``orphans``: the orphans' paths under ``root`` and their ages in days."""

    name: str
    root: Path
    built: dict[str, Any]
    java: dict[str, Any]
    orphans: dict[str, float]

    def file(self, location: str) -> Path:
        """The local file of a location (``file:/...`` or a path) in this table."""
        return Path(location.removeprefix("file:"))


def built_tables() -> Path:
    """The directory holding the built tables and their ``<name>.json`` (built once)."""
    return script_output(SCRIPT, "broken-tables", depends=JUDGE_SCRIPTS)


# --- relocation ---------------------------------------------------------------------------


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("Avro: varint too long")


def _long(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _relocate_avro(data: bytes, old: bytes, new: bytes) -> bytes:
    """An Avro container file with ``old`` replaced by ``new`` (same length) in its header
    and in every block's decoded bytes; blocks are re-compressed with the file's codec."""
    if not data.startswith(AVRO_MAGIC):
        raise ValueError("not an Avro container file")
    pos = len(AVRO_MAGIC)
    meta: dict[bytes, bytes] = {}
    while True:
        count, pos = _read_long(data, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _size, pos = _read_long(data, pos)
        for _ in range(count):
            klen, pos = _read_long(data, pos)
            key = data[pos:pos + klen]
            pos += klen
            vlen, pos = _read_long(data, pos)
            meta[key] = data[pos:pos + vlen]
            pos += vlen
    sync = data[pos:pos + 16]
    pos += 16
    codec = meta.get(b"avro.codec", b"null")
    if codec not in (b"null", b"deflate"):
        raise ValueError(f"Avro codec {codec!r} not handled")
    out = bytearray(data[:pos].replace(old, new))
    while pos < len(data):
        count, pos = _read_long(data, pos)
        size, pos = _read_long(data, pos)
        block = data[pos:pos + size]
        pos += size
        if data[pos:pos + 16] != sync:
            raise ValueError("Avro: block not followed by the sync marker")
        pos += 16
        if codec == b"deflate":
            block = zlib.decompress(block, -15).replace(old, new)
            packer = zlib.compressobj(6, zlib.DEFLATED, -15)
            block = packer.compress(block) + packer.flush()
        else:
            block = block.replace(old, new)
        out += _long(count) + _long(len(block)) + block + sync
    return bytes(out)


def _copy_path(parent: Path, name: str, length: int) -> Path:
    """A new directory under ``parent`` whose path has ``length`` characters."""
    need = length - len(str(parent)) - 1
    if need < len(name) + 1:
        raise ValueError(f"{parent} is too long for a copy of a table whose path has "
                         f"{length} characters")
    parts = []
    while need > 0:
        part = min(need, 120)
        if need - part == 1:  # a last part of 1 would need 2 with its separator
            part -= 1
        parts.append(part)
        need -= part + 1
    names = [name + "-" + "x" * (parts[0] - len(name) - 1)] + ["x" * p for p in parts[1:]]
    target = parent.joinpath(*names)
    assert len(str(target)) == length
    return target


def relocate(source: Path, target: Path) -> Callable[[str], str]:
    """Copy the table directory ``source`` to ``target`` (a path of the same length), every
    path naming the copy; returns the same change for other texts."""
    old, new = str(source), str(target)
    if len(old) != len(new):
        raise ValueError("a copy's path must have the original's length")
    shutil.copytree(source, target)
    for path in target.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if path.suffix == ".avro":
            changed = _relocate_avro(data, old.encode(), new.encode())
        elif path.suffix in (".json", ".puffin", ".stats"):
            changed = data.replace(old.encode(), new.encode())
        else:
            continue
        if changed != data:
            stat = path.stat()
            path.write_bytes(changed)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return lambda text: text.replace(old, new)


def copy_broken(built: Path, name: str, parent: Path) -> BrokenTable:
    """A fresh copy of broken table ``name`` of ``built`` (:func:`built_tables`) under
    ``parent``, its orphans aged as recorded."""
    doc_text = (built / f"{name}.json").read_text()
    source = Path(json.loads(doc_text)["root"])
    target = _copy_path(parent, name, len(str(source)))
    target.parent.mkdir(parents=True, exist_ok=True)
    rename = relocate(source, target)
    doc = json.loads(rename(doc_text))
    ages: dict[str, float] = doc["built"].get("orphans", {})
    now = time.time()
    for relative, days in ages.items():
        moment = now - days * DAY
        os.utime(target / relative, (moment, moment))
    return BrokenTable(name, target, doc["built"], doc["java"], ages)


# --- fixtures -----------------------------------------------------------------------------


@pytest.fixture(scope="session", name="broken_tables")
@needs("spark")
def broken_tables_fixture() -> Path:
    return built_tables()


@pytest.fixture(name="broken_table")
def broken_table_fixture(broken_tables: Path,
                         tmp_path: Path) -> Callable[[str], BrokenTable]:
    def make(name: str) -> BrokenTable:
        if name not in NAMES:
            raise ValueError(f"no broken table {name!r}; there are {', '.join(NAMES)}")
        return copy_broken(broken_tables, name, tmp_path)
    return make


@pytest.fixture(scope="session", name="java_judge")
@needs("spark")
def java_judge_fixture() -> Iterator[JavaJudge]:
    judge = JavaJudge()
    try:
        yield judge
    finally:
        judge.close()
