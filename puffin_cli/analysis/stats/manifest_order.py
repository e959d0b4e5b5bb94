"""The order in which Iceberg Java's scan planning reads a snapshot's data manifests, and so
the order of the data files that reach its task planning (:mod:`.task_groups`).

Iceberg 1.10 (``ManifestGroup``'s constructor, ``core/.../ManifestGroup.java``) puts the data
manifests into ``Sets.newHashSet(dataManifests)`` and reads them in that set's iteration
order, one after the other when scans do not plan in the worker pool, each manifest's entries
in file order. Spark's scan (``SparkDistributedDataScan``, planning mode ``auto``, planned
locally: ``BaseDistributedDataScan.planFileTasksLocally``) hands it a list of the data
manifests that have added or existing files (``filterManifests``), in manifest-list order. The
list is a ``Collection``, so Guava's ``newHashSet`` calls Java's ``new HashSet<>(collection)``,
whose iteration order is fixed by the elements' hash codes and the insertion order:

- ``GenericManifestFile.hashCode`` is Guava's ``Objects.hashCode(manifestPath)``, i.e.
  ``31 + manifestPath.hashCode()`` (``Arrays.hashCode`` of a one-element array), where
  ``String.hashCode`` is ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code units in 32-bit int
  arithmetic; equality is by path.
- Java 17's ``HashSet(Collection c)`` sizes its ``HashMap`` with
  ``max((int) (c.size() / .75f) + 1, 16)``, rounded up to a power of two (``tableSizeFor``),
  so no resize happens for the load factor; ``HashMap.hash`` spreads ``h ^ (h >>> 16)`` and
  the bucket is ``hash & (capacity - 1)``; a bucket keeps its insertion order; iteration goes
  bucket by bucket.
- A bucket reaching 9 entries (``TREEIFY_THRESHOLD``) doubles the table while it has fewer
  than 64 buckets (``treeifyBin``; a resize keeps the relative order within each bucket), else
  becomes a tree, whose order this module does not replay (9 manifests in one bucket of a set
  of at least 48: not met by chance).

Delete manifests do not change the order: the delete files attached to a data file only add
to its weight (:mod:`.task_groups`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

TREEIFY_THRESHOLD = 8  # HashMap.TREEIFY_THRESHOLD
MIN_TREEIFY_CAPACITY = 64  # HashMap.MIN_TREEIFY_CAPACITY
MIN_CAPACITY = 16  # HashSet(Collection): at least 16


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode``: over the UTF-16 code units, in 32-bit int arithmetic."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return _int32(h)


def manifest_hash(path: str) -> int:
    """``GenericManifestFile.hashCode``: Guava's ``Objects.hashCode(manifestPath)``."""
    return _int32(31 + java_string_hash(path))


def _spread(h: int) -> int:
    """``HashMap.hash``: ``h ^ (h >>> 16)`` (as an unsigned 32-bit value)."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def _table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (at least 1)."""
    return 1 << max(cap - 1, 0).bit_length()


def hash_set_order(paths: Sequence[str]) -> list[str]:
    """The iteration order of Java 17's ``new HashSet<>(list)`` of manifests with these paths
    (in list order): see the module docstring."""
    # (int) (n / .75f) + 1: 4n/3 is truncated exactly while n < 2**22
    capacity = _table_size_for(max(4 * len(paths) // 3 + 1, MIN_CAPACITY))
    buckets: list[list[tuple[int, str]]] = [[] for _ in range(capacity)]
    seen: set[str] = set()
    size = 0
    for path in paths:
        if path in seen:
            continue
        seen.add(path)
        h = _spread(manifest_hash(path))
        bucket = buckets[h & (capacity - 1)]
        bucket.append((h, path))
        grow = len(bucket) > TREEIFY_THRESHOLD and capacity < MIN_TREEIFY_CAPACITY
        size += 1
        if grow or size > capacity * 3 // 4:
            capacity *= 2
            resized: list[list[tuple[int, str]]] = [[] for _ in range(capacity)]
            for entry in (e for b in buckets for e in b):
                resized[entry[0] & (capacity - 1)].append(entry)
            buckets = resized
    return [path for bucket in buckets for _, path in bucket]


class _InManifest(Protocol):
    @property
    def manifest(self) -> str: ...


F = TypeVar("F", bound=_InManifest)


def planning_order(files: Iterable[F]) -> list[F]:
    """Live data files (given in manifest-list order, each manifest's in file order) in the
    order Iceberg's scan planning yields them: their manifests in hash-set order."""
    listed = list(files)
    manifests = hash_set_order(list(dict.fromkeys(f.manifest for f in listed)))
    rank = {path: i for i, path in enumerate(manifests)}
    return sorted(listed, key=lambda f: rank[f.manifest])
