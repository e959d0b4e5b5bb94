"""Theta sketches: blob type ``apache-datasketches-theta-v1``.

Building (what Iceberg Java's Spark ``compute_table_stats`` does, reproduced byte for byte):

1. each non-null value is serialized with Iceberg's single-value serialization
   (:mod:`puffin_cli.blobs.iceberg_values`); empty byte strings are skipped (DataSketches
   ignores them);
2. hashed as DataSketches hashes bytes: MurmurHash3 x64-128 with seed 9001, first 64-bit
   half, shifted right by one (:func:`hash_values`, or the vectorized :func:`hash_matrix`);
3. each Spark partition feeds its values, in order, to an Alpha-family update sketch with
   4096 nominal entries (:func:`alpha_sketch`); its theta starts at 1.0 and, from the 4097th
   distinct hash on, is multiplied by ``4096 / 4097`` at each accepted hash, so it depends on
   the order of the values;
4. the partitions' sketches are merged with a Theta union (:class:`ThetaAccumulator`):
   theta = min(every input theta, the 4097th smallest retained hash), at most 4096 hashes kept;
5. the result is written in the uncompressed compact form, serial version 3
   (:meth:`CompactTheta.to_bytes`), with ``ndv`` = the estimate truncated to an integer.

When every partition's Alpha theta stays above the 4097th smallest distinct hash of the
column (the usual case with several partitions; about half of the value sets in one
partition), the result is the same for every partitioning and order: the 4096 smallest
distinct hashes with theta = the 4097th smallest, which is also what :meth:`ThetaAccumulator.update`
computes from raw hashes. Otherwise Iceberg's result depends on how Spark split and ordered
the rows, and only :func:`alpha_sketch` over the same partitions in the same order
reproduces it.

Compact serialization (serial version 3, little-endian), as Java DataSketches writes it::

    byte  0     preamble longs: 1 (empty, or one hash in exact mode), 2 (exact), 3 (estimation)
    byte  1     serial version 3           byte 2   family 3 (compact)
    bytes 3-4   0 (lgNomLongs, lgArrLongs: unused in compact sketches)
    byte  5     flags: 2 read-only, 4 empty, 8 compact, 16 ordered, 32 single item
    bytes 6-7   seed hash: 0x93CC for seed 9001 (Java writes 0 in an empty sketch)
    bytes 8-11  retained entries (int32)   bytes 12-15  p = 1.0 as float32 (00 00 80 3F)
    bytes 16-23 theta as a long (preamble longs 3 only)
    then the retained hashes, ascending, 8 bytes each

Java writes an empty sketch as ``01 03 03 00 00 1E 00 00`` and a single hash in exact mode as
``01 03 03 00 00 3A CC 93`` + the hash; the C++ serializer of the ``datasketches`` package
differs in those two forms and in bytes 12-15, so the bytes are built here.

Findings of :meth:`ThetaHandler.check`:

=====================  ========  =========================================================
code                   severity  meaning
=====================  ========  =========================================================
theta.truncated        error     fewer bytes than the preamble or the entries need
theta.serial-version   error     serial version other than 3 or 4
theta.serial-version   warning   serial version 4 (compressed): DataSketches reads it, but
                                 Iceberg writes 3 and readers on DataSketches older than
                                 the compressed form cannot read it
theta.family           error     family id is not a Theta family
theta.not-compact      error     an update sketch (family 1 or 2, or no compact flag)
theta.preamble         error     preamble longs impossible for the serial version
theta.flags            error     big-endian flag, or the empty flag with entries
theta.seed             error     seed hash is not the default seed 9001's (0x93CC)
theta.theta            error     theta not in 1 to 2^63-1
theta.entries          error     a hash is 0, not below theta, or out of order
theta.length           warning   bytes after the last entry
theta.decode           error     the ``datasketches`` library cannot deserialize the sketch
theta.ndv-property     error     ``ndv`` is not a non-negative integer in decimal digits
theta.ndv-property     warning   ``ndv`` differs from the sketch estimate truncated
theta.fields           error     ``fields`` is empty
=====================  ========  =========================================================

Offsets in errors and findings are absolute file offsets when the blob is stored
uncompressed; for a compressed blob they are the blob's offset (the message gives the byte
within the decompressed sketch).
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.base import SummaryOptions
from puffin_cli.blobs.iceberg_values import IcebergType, serialize_array, serialize_values
from puffin_cli.format.errors import PuffinError
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.format.metadata import BlobMetadata
from puffin_cli.format.spec import NDV_PROPERTY, THETA_BLOB_TYPE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    UInt64Array = npt.NDArray[np.uint64]

DEFAULT_SEED = 9001
# First 16 bits of MurmurHash3 x64-128 (seed 0) of the seed as a little-endian long.
DEFAULT_SEED_HASH = 0x93CC
NOMINAL_ENTRIES = 4096
MAX_THETA = 2**63 - 1
_MAX_THETA_DOUBLE = float(MAX_THETA)  # Java's LONG_MAX_VALUE_AS_DOUBLE (= 2^63)

SERIAL_VERSION = 3
COMPRESSED_SERIAL_VERSION = 4
FAMILY_ALPHA = 1
FAMILY_QUICKSELECT = 2
FAMILY_COMPACT = 3
_FAMILY_NAMES = {FAMILY_ALPHA: "Alpha", FAMILY_QUICKSELECT: "QuickSelect"}

FLAG_BIG_ENDIAN = 1
FLAG_READ_ONLY = 2
FLAG_EMPTY = 4
FLAG_COMPACT = 8
FLAG_ORDERED = 16
FLAG_SINGLE_ITEM = 32

PREAMBLE_LONG = 8
_PREAMBLE = struct.Struct("<BBBBBBH")  # pre-longs, ser-ver, family, lgNom, lgArr, flags, seed
_COUNT_P = struct.Struct("<if")  # bytes 8-15: retained entries, p
_THETA = struct.Struct("<q")  # bytes 16-23
_COUNT_OFFSET = 8
_THETA_OFFSET = 16
_SEED_HASH_OFFSET = 6
_FLAGS_OFFSET = 5
# Java's EmptyCompactSketch bytes: no seed hash.
EMPTY_SKETCH_BYTES = bytes((1, SERIAL_VERSION, FAMILY_COMPACT, 0, 0,
                            FLAG_READ_ONLY | FLAG_EMPTY | FLAG_COMPACT | FLAG_ORDERED, 0, 0))
_FLAGS_OUT = FLAG_READ_ONLY | FLAG_COMPACT | FLAG_ORDERED

_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_HASH_CHUNK = 1 << 16  # rows hashed at a time by _hash_short
_FEW_LENGTHS = 16  # hash_ragged groups by length with one pass each up to this many lengths
_NDV_DIGITS = re.compile(r"[0-9]+")


# --------------------------------------------------------------------------------------------
# Hashing


def hash_values(values: Iterable[bytes]) -> UInt64Array:
    """DataSketches hashes of byte strings, in order; empty byte strings are skipped."""
    import mmh3
    import numpy as np

    hash64 = mmh3.hash64
    hashes = np.fromiter((hash64(v, seed=DEFAULT_SEED, signed=False)[0] for v in values if v),
                         dtype=np.uint64)
    hashes >>= np.uint64(1)
    return hashes


def _rotl(x: UInt64Array, r: int) -> UInt64Array:
    import numpy as np

    result: UInt64Array = (x << np.uint64(r)) | (x >> np.uint64(64 - r))
    return result


def _fmix(k: UInt64Array) -> UInt64Array:
    import numpy as np

    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xFF51AFD7ED558CCD)
    k = k ^ (k >> np.uint64(33))
    k = k * np.uint64(0xC4CEB9FE1A85EC53)
    result: UInt64Array = k ^ (k >> np.uint64(33))
    return result


def hash_matrix(rows: npt.NDArray[np.uint8]) -> UInt64Array:
    """Vectorized :func:`hash_values` of equal-length byte strings: the rows of an ``(n, w)``
    uint8 matrix (MurmurHash3 x64-128 in numpy; ``w = 0`` gives no hashes)."""
    import numpy as np

    n, width = rows.shape
    if width == 0:
        return np.zeros(0, dtype=np.uint64)
    if width <= 8:
        return _hash_short(rows)
    out = np.empty(n, dtype=np.uint64)
    for start in range(0, n, _HASH_CHUNK):  # in row chunks whose temporaries stay in cache
        part = rows[start:start + _HASH_CHUNK]
        out[start:start + part.shape[0]] = _hash_blocks(part)
    return out


def _hash_blocks(rows: npt.NDArray[np.uint8]) -> UInt64Array:
    import numpy as np

    n, width = rows.shape
    padded = np.zeros((n, width + (-width) % 16), dtype=np.uint8)
    padded[:, :width] = rows
    words = padded.view("<u8")
    c1, c2 = np.uint64(_C1), np.uint64(_C2)
    h1 = np.full(n, DEFAULT_SEED, dtype=np.uint64)
    h2 = h1.copy()
    blocks = width // 16
    for block in range(blocks):
        k1 = _rotl(words[:, 2 * block] * c1, 31) * c2
        h1 = _rotl(h1 ^ k1, 27) + h2
        h1 = h1 * np.uint64(5) + np.uint64(0x52DCE729)
        k2 = _rotl(words[:, 2 * block + 1] * c2, 33) * c1
        h2 = _rotl(h2 ^ k2, 31) + h1
        h2 = h2 * np.uint64(5) + np.uint64(0x38495AB5)
    tail = width % 16
    if tail > 8:
        h2 = h2 ^ (_rotl(words[:, 2 * blocks + 1] * c2, 33) * c1)
    if tail > 0:
        h1 = h1 ^ (_rotl(words[:, 2 * blocks] * c1, 31) * c2)
    length = np.uint64(width)
    h1 = h1 ^ length
    h2 = h2 ^ length
    h1 = h1 + h2
    h2 = h2 + h1
    result: UInt64Array = (_fmix(h1) + _fmix(h2)) >> np.uint64(1)
    return result


def _hash_short(rows: npt.NDArray[np.uint8]) -> UInt64Array:
    """:func:`hash_matrix` of rows of 1 to 8 bytes: one tail word, no block; computed in place
    on a single buffer (in row chunks that stay in cache), since these are the columns of
    numbers a statistics job hashes by the billion."""
    import numpy as np

    n, width = rows.shape
    if width == 8 and rows.flags.c_contiguous:
        words = rows.view("<u8").reshape(n).copy()
    else:
        padded = np.zeros((n, 8), dtype=np.uint8)
        padded[:, :width] = rows
        words = padded.view("<u8").reshape(n)
    seeded = np.uint64(DEFAULT_SEED ^ width)  # h2 before the finalization, for every row
    c1, c2 = np.uint64(_C1), np.uint64(_C2)
    m1, m2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)
    s31, s33, s1 = np.uint64(31), np.uint64(33), np.uint64(1)
    scratch = np.empty(min(n, _HASH_CHUNK), dtype=np.uint64)
    second = np.empty_like(scratch)
    for start in range(0, n, _HASH_CHUNK):
        k = words[start:start + _HASH_CHUNK]
        t = scratch[:k.size]
        h2 = second[:k.size]
        k *= c1  # k1 = rotl(k1 * c1, 31) * c2
        np.right_shift(k, s33, out=t)
        k <<= s31
        k |= t
        k *= c2
        k ^= seeded  # h1 = seed ^ k1 ^ len; h1 += h2; h2 += h1
        k += seeded
        np.add(k, seeded, out=h2)
        for h in (k, h2):  # fmix64
            np.right_shift(h, s33, out=t)
            h ^= t
            np.multiply(h, m1, out=h)
            np.right_shift(h, s33, out=t)
            h ^= t
            np.multiply(h, m2, out=h)
            np.right_shift(h, s33, out=t)
            h ^= t
        k += h2
        k >>= s1
    return words


def hash_ragged(buffer: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64],
                lengths: npt.NDArray[np.int64]) -> UInt64Array:
    """Vectorized :func:`hash_values` of the byte strings ``buffer[starts[i]:starts[i] +
    lengths[i]]``, in order (no string is skipped: leave empty ones out before). Strings of
    one length are hashed together with :func:`hash_matrix`."""
    import numpy as np

    out = np.empty(lengths.size, dtype=np.uint64)
    if lengths.size == 0:
        return out
    present = np.flatnonzero(np.bincount(lengths))
    if present.size <= _FEW_LENGTHS:  # one pass per length beats sorting by length
        groups = [np.flatnonzero(lengths == width) for width in present.tolist()]
    else:
        order = np.argsort(lengths, kind="stable")
        bounds = np.flatnonzero(np.diff(lengths[order])) + 1
        groups = np.split(order, bounds)
    for rows in groups:
        width = int(lengths[rows[0]])
        # each string is a row of the buffer's sliding windows of this width: gathering
        # rows copies them whole
        windows = np.lib.stride_tricks.sliding_window_view(buffer, width)
        out[rows] = hash_matrix(windows[starts[rows]])
    return out


def hash_iceberg_values(iceberg_type: IcebergType, values: Any) -> UInt64Array:
    """Serialize and hash non-null values of one Iceberg type, in order.

    A numpy array of a fixed-width numeric or boolean type (integers for dates, times and
    timestamps) takes the vectorized path; anything else is serialized value by value.
    """
    import numpy as np

    if isinstance(values, np.ndarray) and (iceberg_type.numpy_dtype is not None
                                           or iceberg_type.name == "boolean"):
        return hash_matrix(serialize_array(iceberg_type, values))
    serialized = serialize_values(iceberg_type, values)
    width = iceberg_type.width
    if width is not None:
        joined = np.frombuffer(b"".join(serialized), dtype=np.uint8)
        return hash_matrix(joined.reshape(len(serialized), width))
    return hash_values(serialized)


# --------------------------------------------------------------------------------------------
# Sketches


@dataclass(frozen=True, eq=False)
class CompactTheta:
    """A compact Theta sketch's content: ``theta_long`` and the sorted distinct hashes below it.

    ``empty`` means no value was ever offered (a sketch with no hashes and theta 1.0 is
    always serialized as empty, as Java does).
    """

    theta_long: int
    hashes: UInt64Array
    empty: bool = False

    @property
    def retained(self) -> int:
        return int(self.hashes.size)

    @property
    def estimate(self) -> float:
        """Java's estimate: retained * (2^63 / theta_long) (0.0 when empty)."""
        return _estimate(self.retained, self.theta_long)

    @property
    def ndv(self) -> int:
        """The ``ndv`` property Iceberg writes: the estimate truncated (Java ``(long)``)."""
        return int(self.estimate)

    def to_bytes(self) -> bytes:
        """The uncompressed compact serialization (serial version 3) Java DataSketches writes."""
        return serialize_compact(self.theta_long, self.hashes, empty=self.empty)


def _estimate(retained: int, theta_long: int) -> float:
    if theta_long >= MAX_THETA:
        return float(retained)
    return retained * (_MAX_THETA_DOUBLE / theta_long)


def serialize_compact(theta_long: int, hashes: UInt64Array, *, empty: bool = False) -> bytes:
    """Java DataSketches' compact ordered serialization of sorted distinct ``hashes`` < theta."""
    import numpy as np

    count = int(hashes.size)
    if empty or (count == 0 and theta_long == MAX_THETA):
        return EMPTY_SKETCH_BYTES
    if count == 1 and theta_long == MAX_THETA:
        return _PREAMBLE.pack(1, SERIAL_VERSION, FAMILY_COMPACT, 0, 0,
                              _FLAGS_OUT | FLAG_SINGLE_ITEM, DEFAULT_SEED_HASH) + \
            hashes.astype("<u8").tobytes()
    pre_longs = 3 if theta_long < MAX_THETA else 2
    head = _PREAMBLE.pack(pre_longs, SERIAL_VERSION, FAMILY_COMPACT, 0, 0, _FLAGS_OUT,
                          DEFAULT_SEED_HASH) + _COUNT_P.pack(count, 1.0)
    if pre_longs == 3:
        head += _THETA.pack(theta_long)
    return head + np.ascontiguousarray(hashes, dtype="<u8").tobytes()


class AlphaSketch:
    """An Alpha-family update sketch fed hashes in order, chunk by chunk, in bounded memory.

    This is what one Spark partition of Iceberg's ``ThetaSketchAgg`` builds (before the union):
    theta starts at 2^63-1; once more than ``nominal_entries`` distinct hashes were accepted,
    each further accepted hash (one below the current theta, not seen before) multiplies theta
    by ``k / (k + 1)`` (in double precision, truncated to a long, as Java does). The retained
    hashes are all distinct hashes below the final theta, so the result may hold more than
    ``nominal_entries`` hashes. Theta never rises, so a hash at or above it is rejected now and
    later: only the distinct hashes below theta are kept, and the result does not depend on how
    the stream was cut into chunks.
    """

    def __init__(self, nominal_entries: int = NOMINAL_ENTRIES) -> None:
        import numpy as np

        self.nominal_entries = nominal_entries
        self.theta_long = MAX_THETA
        self._retained: UInt64Array = np.zeros(0, dtype=np.uint64)  # sorted, below theta
        self._free = nominal_entries  # distinct hashes still accepted without lowering theta
        self._empty = True

    def update(self, hashes: npt.ArrayLike) -> None:
        import numpy as np

        stream = np.asarray(hashes, dtype=np.uint64)
        nonzero = stream != 0  # DataSketches rejects a zero hash
        if not nonzero.any():
            return
        self._empty = False
        # Hashes at or above theta are rejected whenever they arrive: drop them before the
        # (sorting) search for first arrivals, which keeps the others' order.
        stream = stream[nonzero & (stream < np.uint64(self.theta_long))]
        # So are hashes already retained (repeated values): drop them before it too.
        retained = self._retained
        if retained.size and stream.size:
            found = np.searchsorted(retained, stream)
            np.minimum(found, retained.size - 1, out=found)
            stream = stream[retained[found] != stream]
        _, first_seen = np.unique(stream, return_index=True)
        arrivals = stream[np.sort(first_seen)]  # distinct, in order of first arrival
        free = min(self._free, arrivals.size)
        self._free -= free
        theta = self.theta_long
        alpha = self.nominal_entries / (self.nominal_entries + 1.0)
        block = 512  # small, so that few hashes are looked at after theta fell below them
        rest = arrivals[free:]
        for start in range(0, rest.size, block):
            chunk = rest[start:start + block]
            for value in chunk[chunk < np.uint64(theta)].tolist():
                if value < theta:
                    theta = int(theta * alpha)
        self.theta_long = theta
        limit = np.uint64(theta)
        # arrivals are distinct and none is retained already: a sort merges them
        merged = np.concatenate((retained[retained < limit], arrivals[arrivals < limit]))
        merged.sort()
        self._retained = merged

    def result(self) -> CompactTheta:
        return CompactTheta(self.theta_long, self._retained, empty=self._empty)


def alpha_sketch(hashes: npt.ArrayLike, nominal_entries: int = NOMINAL_ENTRIES) -> CompactTheta:
    """The compact sketch of an Alpha-family update sketch fed ``hashes`` in this order."""
    sketch = AlphaSketch(nominal_entries)
    sketch.update(hashes)
    return sketch.result()


class ThetaAccumulator:
    """A Theta union with ``nominal_entries`` (4096) entries: bounded memory, any merge order.

    State: theta and the sorted distinct hashes below it, never more than ``nominal_entries``
    after an operation. Every operation lowers theta to the minimum of the inputs' thetas and,
    when more hashes remain below it, to the (k+1)-th smallest, keeping the k smallest. The
    result equals Java's ``Union.getResult()`` over the same inputs, and does not depend on
    how the inputs were split or ordered: trimming early discards only hashes that the final
    trim would discard.
    """

    def __init__(self, nominal_entries: int = NOMINAL_ENTRIES) -> None:
        import numpy as np

        self.nominal_entries = nominal_entries
        self.theta_long = MAX_THETA
        self.hashes: UInt64Array = np.zeros(0, dtype=np.uint64)
        self.empty = True

    def update(self, hashes: npt.ArrayLike) -> None:
        """Union with raw hashes taken as a set (as an exact sketch of them would be)."""
        import numpy as np

        incoming = np.asarray(hashes, dtype=np.uint64)
        if incoming.size:
            self.empty = False
        self._absorb(MAX_THETA, incoming)

    def add(self, sketch: CompactTheta) -> None:
        """Union with a compact sketch (e.g. a partition's :func:`alpha_sketch`)."""
        self.empty = self.empty and sketch.empty
        self._absorb(sketch.theta_long, sketch.hashes)

    def _absorb(self, theta_long: int, incoming: UInt64Array) -> None:
        import numpy as np

        self.theta_long = min(self.theta_long, theta_long)
        limit = np.uint64(self.theta_long)
        below = incoming[(incoming < limit) & (incoming != 0)]
        merged = np.union1d(self.hashes[self.hashes < limit], below)
        if merged.size > self.nominal_entries:
            self.theta_long = int(merged[self.nominal_entries])
            merged = merged[:self.nominal_entries]
        self.hashes = merged

    def result(self) -> CompactTheta:
        return CompactTheta(self.theta_long, self.hashes.copy(), empty=self.empty)

    def to_compact_bytes(self) -> bytes:
        return self.result().to_bytes()


def build_sketch(hashes: npt.ArrayLike) -> CompactTheta:
    """Iceberg's sketch of one partition of values hashed in this order: Alpha, then union."""
    union = ThetaAccumulator()
    union.add(alpha_sketch(hashes))
    return union.result()


def build_theta_blob(iceberg_type: IcebergType | str,
                     values: Sequence[Any] | Any) -> tuple[bytes, int]:
    """Blob bytes (uncompressed) and ``ndv`` for non-null ``values`` of one Iceberg type, as
    Iceberg Java's Spark procedure writes them when the values form one partition in this
    order (``None`` values are skipped, as Iceberg skips nulls)."""
    import numpy as np

    if isinstance(iceberg_type, str):
        iceberg_type = IcebergType.parse(iceberg_type)
    if not isinstance(values, np.ndarray):
        values = [v for v in values if v is not None]
    sketch = build_sketch(hash_iceberg_values(iceberg_type, values))
    return sketch.to_bytes(), sketch.ndv


# --------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class ThetaHeader:
    """The preamble of a serialized compact Theta sketch, checked (see :func:`read_header`)."""

    preamble_longs: int
    serial_version: int
    family: int
    flags: int
    seed_hash: int
    retained: int | None  # serial version 3 only
    theta_long: int
    end: int  # where the sketch's bytes end (serial version 3); len(data) for version 4

    @property
    def compressed(self) -> bool:
        return self.serial_version == COMPRESSED_SERIAL_VERSION

    @property
    def empty(self) -> bool:
        return bool(self.flags & FLAG_EMPTY)

    @property
    def ordered(self) -> bool:
        return bool(self.flags & FLAG_ORDERED)


@dataclass(frozen=True)
class ThetaSummary:
    """What ``inspect`` shows about a Theta sketch blob.

    ``estimate`` is Java's (retained * 2^63 / theta_long); the bounds are DataSketches' at 2
    standard deviations; ``exact`` is not estimation mode (theta = 1.0); ``seed_hash_ok`` is
    true for every sketch that decodes (a foreign seed hash is a ``theta.seed`` error), and an
    empty sketch may carry seed hash 0 (as Java writes it). ``ndv_property_matches`` compares
    the ``ndv`` property with the estimate truncated; ``None`` when the property is absent or
    not an integer.
    """

    estimate: float
    lower_bound: float
    upper_bound: float
    retained_entries: int
    theta: float
    theta_long: int
    exact: bool
    empty: bool
    serial_version: int
    compressed: bool
    ordered: bool
    seed_hash: int
    seed_hash_ok: bool
    ndv_property: str | None
    ndv_property_matches: bool | None
    kind: str = field(default="theta")


class _Place:
    """Turns a position in the sketch into the offset errors carry."""

    def __init__(self, meta: BlobMetadata | None) -> None:
        self.base = None if meta is None else meta.offset
        self.stored_as_is = meta is None or meta.compression_codec is None

    def __call__(self, pos: int) -> int | None:
        if self.base is None:
            return pos
        return self.base + pos if self.stored_as_is else self.base


def _fail(place: _Place, code: str, message: str, pos: int) -> PuffinError:
    return PuffinError(f"theta sketch: {message}", code=code, offset=place(pos))


def read_header(data: bytes, meta: BlobMetadata | None = None) -> ThetaHeader:
    """Check a serialized compact sketch's preamble and lengths; raise :class:`PuffinError`
    (code ``theta.*``) on the first problem. ``meta`` (when given) places the offsets."""
    place = _Place(meta)
    size = len(data)
    if size < PREAMBLE_LONG:
        raise _fail(place, "theta.truncated", f"{size} bytes, shorter than the "
                    f"{PREAMBLE_LONG}-byte preamble", size)
    pre_longs_byte, ser_ver, family, _, _, flags, seed_hash = _PREAMBLE.unpack_from(data)
    pre_longs = pre_longs_byte & 0x3F
    if ser_ver not in (SERIAL_VERSION, COMPRESSED_SERIAL_VERSION):
        raise _fail(place, "theta.serial-version", f"serial version {ser_ver} at sketch byte 1 "
                    f"is not supported (expected {SERIAL_VERSION}, or "
                    f"{COMPRESSED_SERIAL_VERSION} for the compressed form)", 1)
    if family in _FAMILY_NAMES:
        raise _fail(place, "theta.not-compact", f"family {family} at sketch byte 2 is an "
                    f"{_FAMILY_NAMES[family]} update sketch (expected {FAMILY_COMPACT}, "
                    "a compact sketch)", 2)
    if family != FAMILY_COMPACT:
        raise _fail(place, "theta.family", f"family {family} at sketch byte 2 is not a Theta "
                    f"sketch family (expected {FAMILY_COMPACT}, compact)", 2)
    if not flags & FLAG_COMPACT:
        raise _fail(place, "theta.not-compact", f"flags 0x{flags:02X} at sketch byte 5 lack "
                    f"the compact flag 0x{FLAG_COMPACT:02X}", _FLAGS_OFFSET)
    if flags & FLAG_BIG_ENDIAN:
        raise _fail(place, "theta.flags", f"flags 0x{flags:02X} at sketch byte 5 set the "
                    "big-endian flag 0x01 (DataSketches writes little-endian only)",
                    _FLAGS_OFFSET)
    empty = bool(flags & FLAG_EMPTY)
    if seed_hash != DEFAULT_SEED_HASH and not (empty and seed_hash == 0):
        raise _fail(place, "theta.seed", f"seed hash 0x{seed_hash:04X} at sketch byte 6 is not "
                    f"the default seed {DEFAULT_SEED}'s (0x{DEFAULT_SEED_HASH:04X})",
                    _SEED_HASH_OFFSET)
    if ser_ver == COMPRESSED_SERIAL_VERSION:
        return _read_v4_header(data, place, pre_longs, flags, seed_hash)
    if pre_longs not in (1, 2, 3):
        raise _fail(place, "theta.preamble", f"{pre_longs} preamble longs at sketch byte 0 "
                    "(expected 1, 2 or 3)", 0)
    theta_long = MAX_THETA
    if pre_longs == 1:
        retained = 0 if empty else 1
    else:
        _need(place, size, _THETA_OFFSET, "the retained-entries count")
        retained = _COUNT_P.unpack_from(data, _COUNT_OFFSET)[0]
        if retained < 0:
            raise _fail(place, "theta.truncated", f"retained entries {retained} at sketch byte "
                        f"{_COUNT_OFFSET} is negative", _COUNT_OFFSET)
        if pre_longs == 3:
            _need(place, size, _THETA_OFFSET + 8, "theta")
            theta_long = _THETA.unpack_from(data, _THETA_OFFSET)[0]
            if theta_long <= 0:
                raise _fail(place, "theta.theta", f"theta {theta_long} at sketch byte "
                            f"{_THETA_OFFSET} is not in 1 to {MAX_THETA}", _THETA_OFFSET)
    if empty and retained:
        raise _fail(place, "theta.flags", f"the empty flag is set but the sketch has {retained} "
                    "entries", _FLAGS_OFFSET)
    end = PREAMBLE_LONG * (pre_longs + retained)
    _need(place, size, end, f"{retained} entries")
    return ThetaHeader(pre_longs, ser_ver, family, flags, seed_hash, retained, theta_long, end)


def _read_v4_header(data: bytes, place: _Place, pre_longs: int, flags: int,
                    seed_hash: int) -> ThetaHeader:
    entry_bits, count_bytes = data[3], data[4]
    if pre_longs not in (1, 2):
        raise _fail(place, "theta.preamble", f"{pre_longs} preamble longs at sketch byte 0 "
                    f"(expected 1 or 2 in serial version {COMPRESSED_SERIAL_VERSION})", 0)
    if not 1 <= entry_bits <= 63 or not 1 <= count_bytes <= 4:
        raise _fail(place, "theta.preamble", f"entry bits {entry_bits} and count bytes "
                    f"{count_bytes} at sketch bytes 3-4 (expected 1 to 63 and 1 to 4)", 3)
    theta_long = MAX_THETA
    if pre_longs == 2:
        _need(place, len(data), 2 * PREAMBLE_LONG, "theta")
        theta_long = _THETA.unpack_from(data, PREAMBLE_LONG)[0]
        if theta_long <= 0:
            raise _fail(place, "theta.theta", f"theta {theta_long} at sketch byte "
                        f"{PREAMBLE_LONG} is not in 1 to {MAX_THETA}", PREAMBLE_LONG)
    _need(place, len(data), PREAMBLE_LONG * pre_longs + count_bytes, "the entry count")
    return ThetaHeader(pre_longs, COMPRESSED_SERIAL_VERSION, FAMILY_COMPACT, flags, seed_hash,
                       None, theta_long, len(data))


def _need(place: _Place, size: int, needed: int, what: str) -> None:
    if size < needed:
        raise _fail(place, "theta.truncated", f"{size} bytes, but {what} need {needed} bytes",
                    size)


def _deserialize(data: bytes, header: ThetaHeader, place: _Place) -> Any:
    import datasketches

    sketch_bytes = data[:header.end]
    if header.empty and header.seed_hash == 0:
        # Java's empty sketch has no seed hash; the C++ reader wants one.
        sketch_bytes = sketch_bytes[:_SEED_HASH_OFFSET] + struct.pack("<H", DEFAULT_SEED_HASH)
    try:
        return datasketches.compact_theta_sketch.deserialize(sketch_bytes, DEFAULT_SEED)
    except Exception as exc:  # the C++ library raises several exception types
        raise _fail(place, "theta.decode", f"the DataSketches library cannot read it: {exc}",
                    0) from None


def decode_theta(data: bytes, meta: BlobMetadata | None = None) -> Any:
    """The ``datasketches.compact_theta_sketch`` for a blob, after checking its header."""
    place = _Place(meta)
    return _deserialize(data, read_header(data, meta), place)


def describe(data: bytes) -> str:
    """The DataSketches library's own description of the sketch (``dump-blob --format sketch``)."""
    return str(decode_theta(data).to_string())


def _ndv_property(meta: BlobMetadata) -> tuple[str | None, int | None]:
    value = meta.properties.get(NDV_PROPERTY)
    if value is None or not _NDV_DIGITS.fullmatch(value):
        return value, None
    return value, int(value)


def summarize_theta(data: bytes, meta: BlobMetadata) -> ThetaSummary:
    """Decode a Theta blob; raises :class:`PuffinError` (``theta.*``) when it cannot."""
    place = _Place(meta)
    header = read_header(data, meta)
    sketch = _deserialize(data, header, place)
    retained = int(sketch.num_retained)
    theta_long = int(sketch.theta64)
    estimate = _estimate(retained, theta_long)
    ndv_text, ndv = _ndv_property(meta)
    return ThetaSummary(
        estimate=estimate,
        lower_bound=float(sketch.get_lower_bound(2)),
        upper_bound=float(sketch.get_upper_bound(2)),
        retained_entries=retained,
        theta=float(sketch.theta),
        theta_long=theta_long,
        exact=not bool(sketch.is_estimation_mode()),
        empty=bool(sketch.is_empty()),
        serial_version=header.serial_version,
        compressed=header.compressed,
        ordered=bool(sketch.is_ordered()),
        seed_hash=header.seed_hash,
        seed_hash_ok=True,
        ndv_property=ndv_text,
        ndv_property_matches=None if ndv is None else ndv == int(estimate),
    )


def check_theta(data: bytes, meta: BlobMetadata) -> list[Finding]:
    """Every finding about a Theta blob and its metadata (see the module docstring); never
    raises for bad bytes."""
    import numpy as np

    place = _Place(meta)
    findings: list[Finding] = []
    if not meta.fields:
        findings.append(Finding("theta.fields", Severity.ERROR, "theta sketch blob has no "
                                "fields (expected the field ID of the sketched column)"))
    ndv_text, ndv = _ndv_property(meta)
    if ndv_text is not None and ndv is None:
        findings.append(Finding("theta.ndv-property", Severity.ERROR, f"'ndv' property "
                                f"{ndv_text!r} is not a non-negative integer in decimal digits"))
    try:
        header = read_header(data, meta)
        sketch = _deserialize(data, header, place)
    except PuffinError as exc:
        findings.insert(0, Finding(exc.code, Severity.ERROR, exc.message, exc.offset))
        return findings
    if header.compressed:
        findings.append(Finding(
            "theta.serial-version", Severity.WARNING, f"theta sketch: serial version "
            f"{COMPRESSED_SERIAL_VERSION} (compressed form); Iceberg writes {SERIAL_VERSION}, and "
            "DataSketches readers older than the compressed form cannot read it", place(1)))
    else:
        hashes = np.frombuffer(data, dtype="<i8", count=header.retained or 0,
                               offset=PREAMBLE_LONG * header.preamble_longs)
        bad = np.flatnonzero((hashes <= 0) | (hashes >= header.theta_long))
        if bad.size:
            i = int(bad[0])
            findings.append(Finding(
                "theta.entries", Severity.ERROR, f"theta sketch: entry {i} = {int(hashes[i])} "
                f"is not in 1 to theta - 1 ({header.theta_long - 1})",
                place(PREAMBLE_LONG * (header.preamble_longs + i))))
        elif header.ordered and hashes.size > 1:
            unordered = np.flatnonzero(hashes[1:] <= hashes[:-1])
            if unordered.size:
                i = int(unordered[0]) + 1
                findings.append(Finding(
                    "theta.entries", Severity.ERROR, f"theta sketch: entry {i} = "
                    f"{int(hashes[i])} is not above entry {i - 1} = {int(hashes[i - 1])} "
                    "although the ordered flag is set",
                    place(PREAMBLE_LONG * (header.preamble_longs + i))))
        if len(data) > header.end:
            findings.append(Finding(
                "theta.length", Severity.WARNING, f"theta sketch: {len(data) - header.end} "
                f"bytes after the last entry (the sketch ends at byte {header.end} of "
                f"{len(data)})", place(header.end)))
    if ndv is not None:
        truncated = int(_estimate(int(sketch.num_retained), int(sketch.theta64)))
        if ndv != truncated:
            findings.append(Finding(
                "theta.ndv-property", Severity.WARNING, f"'ndv' property is {ndv}, the sketch "
                f"estimate truncated is {truncated}"))
    return findings


class ThetaHandler:
    type_name = THETA_BLOB_TYPE

    def summarize(self, data: bytes, meta: BlobMetadata, options: SummaryOptions) -> ThetaSummary:
        return summarize_theta(data, meta)

    def check(self, data: bytes, meta: BlobMetadata) -> list[Finding]:
        return check_theta(data, meta)


HANDLER = ThetaHandler()
