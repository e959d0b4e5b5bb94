"""Hashing as DataSketches hashes bytes: MurmurHash3 x64-128 with seed 9001, first 64-bit
half, shifted right by one (:func:`hash_values`; vectorized: :func:`hash_matrix` for rows of
one length, :func:`hash_ragged` for values of any length), over Iceberg's single-value
serialization (:func:`hash_iceberg_values`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    UInt64Array = npt.NDArray[np.uint64]

    from puffin_cli.blobs.iceberg_values import IcebergType


DEFAULT_SEED = 9001
# First 16 bits of MurmurHash3 x64-128 (seed 0) of the seed as a little-endian long.
DEFAULT_SEED_HASH = 0x93CC


_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_HASH_CHUNK = 1 << 16  # rows hashed at a time by _hash_short
_FEW_LENGTHS = 16  # hash_ragged groups by length with one pass each up to this many lengths


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

    # here, not at the top: reading a sketch (compact.py imports the seed) needs no values
    from puffin_cli.blobs.iceberg_values import serialize_array, serialize_values

    if isinstance(values, np.ndarray) and (iceberg_type.numpy_dtype is not None
                                           or iceberg_type.name == "boolean"):
        return hash_matrix(serialize_array(iceberg_type, values))
    serialized = serialize_values(iceberg_type, values)
    width = iceberg_type.width
    if width is not None:
        joined = np.frombuffer(b"".join(serialized), dtype=np.uint8)
        return hash_matrix(joined.reshape(len(serialized), width))
    return hash_values(serialized)
