"""Hashing as DataSketches hashes bytes: MurmurHash3 x64-128 with seed 9001, first 64-bit
half, shifted right by one (:func:`hash_values`; vectorized: :func:`hash_matrix` for rows of
one length, :func:`hash_words` for values of up to 8 bytes given as words,
:func:`hash_ragged` for values of any length), over Iceberg's single-value
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
_HASH_CHUNK = 1 << 14  # rows hashed at a time: a few arrays of them stay in a core's cache
_FEW_GROUPS = 16  # hash_ragged finds its groups with one pass each up to this many


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


def _rotl(x: UInt64Array, r: int, scratch: UInt64Array) -> None:
    """``x = rotl64(x, r)`` in place (``scratch``: a buffer of ``x``'s size)."""
    import numpy as np

    np.right_shift(x, np.uint64(64 - r), out=scratch)
    x <<= np.uint64(r)
    x |= scratch


def _fmix(k: UInt64Array, scratch: UInt64Array) -> None:
    """MurmurHash3's ``fmix64``, in place."""
    import numpy as np

    s33 = np.uint64(33)
    for multiplier in (np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)):
        np.right_shift(k, s33, out=scratch)
        k ^= scratch
        k *= multiplier
    np.right_shift(k, s33, out=scratch)
    k ^= scratch


def hash_matrix(rows: npt.NDArray[np.uint8]) -> UInt64Array:
    """Vectorized :func:`hash_values` of equal-length byte strings: the rows of an ``(n, w)``
    uint8 matrix (MurmurHash3 x64-128 in numpy; ``w = 0`` gives no hashes)."""
    import numpy as np

    n, width = rows.shape
    if width == 0:
        return np.zeros(0, dtype=np.uint64)
    if width <= 8:
        return hash_words(_short_words(rows), np.uint64(width))
    out = np.empty(n, dtype=np.uint64)
    for start in range(0, n, _HASH_CHUNK):  # in row chunks whose temporaries stay in cache
        part = rows[start:start + _HASH_CHUNK]
        if width % 16 == 0 and part.flags.c_contiguous:
            words = part.view("<u8")
        else:
            padded = np.zeros((part.shape[0], width + (-width) % 16), dtype=np.uint8)
            padded[:, :width] = part
            words = padded.view("<u8")
        out[start:start + part.shape[0]] = _hash_blocks(words, width // 16, np.uint64(width))
    return out


def _hash_blocks(words: UInt64Array, blocks: int, lengths: Any) -> UInt64Array:
    """Hashes of values of ``lengths`` bytes (one for all, or one per row) with ``blocks``
    full 16-byte blocks each: the rows of ``words``, little-endian words zero-padded to whole
    blocks (a tail block of zeros where a value has no tail), computed in place on a few
    buffers. A tail word of zeros is a no-op (its ``k`` is 0), so the tail needs no length."""
    import numpy as np

    n = words.shape[0]
    c1, c2 = np.uint64(_C1), np.uint64(_C2)
    h1 = np.full(n, DEFAULT_SEED, dtype=np.uint64)
    h2 = h1.copy()
    k = np.empty_like(h1)
    t = np.empty_like(h1)
    for block in range(blocks):  # h = rotl(h ^ k, r) + the other h, then * 5 + a constant
        _mix_word(h1, words[:, 2 * block], c1, c2, 31, k, t)
        _rotl(h1, 27, t)
        h1 += h2
        h1 *= np.uint64(5)
        h1 += np.uint64(0x52DCE729)
        _mix_word(h2, words[:, 2 * block + 1], c2, c1, 33, k, t)
        _rotl(h2, 31, t)
        h2 += h1
        h2 *= np.uint64(5)
        h2 += np.uint64(0x38495AB5)
    if words.shape[1] > 2 * blocks:  # the tail: k2 from its second word, k1 from its first
        _mix_word(h2, words[:, 2 * blocks + 1], c2, c1, 33, k, t)
        _mix_word(h1, words[:, 2 * blocks], c1, c2, 31, k, t)
    h1 ^= lengths
    h2 ^= lengths
    h1 += h2
    h2 += h1
    _fmix(h1, t)
    _fmix(h2, t)
    h1 += h2
    h1 >>= np.uint64(1)
    return h1


def _mix_word(h: UInt64Array, word: UInt64Array, first: Any, second: Any, r: int,
              k: UInt64Array, scratch: UInt64Array) -> None:
    """``h ^= rotl(word * first, r) * second`` in place (``k``, ``scratch``: buffers)."""
    import numpy as np

    np.multiply(word, first, out=k)
    _rotl(k, r, scratch)
    k *= second
    h ^= k


def _short_words(rows: npt.NDArray[np.uint8]) -> UInt64Array:
    """Rows of 1 to 8 bytes as little-endian words, zero-padded (a new array)."""
    import numpy as np

    n, width = rows.shape
    if width in (1, 2, 4, 8) and rows.flags.c_contiguous:
        return rows.view(f"<u{width}").reshape(n).astype(np.uint64)
    padded = np.zeros((n, 8), dtype=np.uint8)
    padded[:, :width] = rows
    return padded.view("<u8").reshape(n)


def hash_words(words: UInt64Array, lengths: Any) -> UInt64Array:
    """Vectorized :func:`hash_values` of values of 1 to 8 bytes given as little-endian words,
    zero past each value (one tail word, no block), and their ``lengths`` (one for all, or one
    per word). Computed in place on ``words`` (in row chunks that stay in cache), since these
    are the columns of numbers a statistics job hashes by the billion."""
    import numpy as np

    n = words.size
    seeded = np.uint64(DEFAULT_SEED) ^ lengths  # h2 before the finalization
    c1, c2 = np.uint64(_C1), np.uint64(_C2)
    scratch = np.empty(min(n, _HASH_CHUNK), dtype=np.uint64)
    second = np.empty_like(scratch)
    for start in range(0, n, _HASH_CHUNK):
        k = words[start:start + _HASH_CHUNK]
        t = scratch[:k.size]
        h2 = second[:k.size]
        seed = seeded if seeded.ndim == 0 else seeded[start:start + _HASH_CHUNK]
        k *= c1  # k1 = rotl(k1 * c1, 31) * c2
        _rotl(k, 31, t)
        k *= c2
        k ^= seed  # h1 = seed ^ k1 ^ len; h1 += h2; h2 += h1
        k += seed
        np.add(k, seed, out=h2)
        _fmix(k, t)
        _fmix(h2, t)
        k += h2
        k >>= np.uint64(1)
    return words


# Masks keeping the first L bytes of a little-endian word, by L = 0..8.
_BYTE_MASKS = [(1 << (8 * length)) - 1 for length in range(9)]


def hash_ragged(buffer: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64],
                lengths: npt.NDArray[np.int64]) -> UInt64Array:
    """Vectorized :func:`hash_values` of the byte strings ``buffer[starts[i]:starts[i] +
    lengths[i]]``, in order (no string is skipped: leave empty ones out before). Strings of 1
    to 8 bytes are hashed together, each read as one word; longer ones together with those
    of as many full 16-byte blocks, each read as its blocks and a tail block whose bytes past
    the string are zeroed (no tail block when every string of the group fills its blocks)."""
    import numpy as np

    out = np.empty(lengths.size, dtype=np.uint64)
    if lengths.size == 0:
        return out
    blocks = (lengths >> 4) - (lengths <= 8)  # -1: one word
    low, high = int(blocks.min()), int(blocks.max())
    present = np.arange(low, high + 1) if low == high else np.flatnonzero(
        np.bincount(blocks - low)) + low
    if present.size == 1:  # one group: no gathering and scattering of rows
        groups: list[Any] = [None]
    elif present.size <= _FEW_GROUPS:  # one pass per group beats sorting
        groups = [np.flatnonzero(blocks == count) for count in present.tolist()]
    else:
        order = np.argsort(blocks, kind="stable")
        groups = np.split(order, np.flatnonzero(np.diff(blocks[order])) + 1)
    for rows in groups:
        count = int(present[0] if rows is None else blocks[rows[0]])
        first, sizes = (starts, lengths) if rows is None else (starts[rows], lengths[rows])
        hashes = _hash_group(buffer, first, sizes, count)
        if rows is None:
            return hashes
        out[rows] = hashes
    return out


def _hash_group(buffer: npt.NDArray[np.uint8], first: npt.NDArray[np.int64],
                sizes: npt.NDArray[np.int64], count: int) -> UInt64Array:
    """:func:`hash_ragged` of strings with ``count`` full 16-byte blocks each (-1: at most 8
    bytes), each read as a window of whole words from ``buffer``; the few windows that would
    reach past the buffer's end are read from a zero-padded copy of its last bytes."""
    import numpy as np

    if first.size == 0:
        return np.zeros(0, dtype=np.uint64)
    masks = np.array(_BYTE_MASKS, dtype=np.uint64)
    uniform = bool((sizes == sizes[0]).all())
    tail = int(sizes[0]) - 16 * max(count, 0)  # the bytes past the full blocks
    width = 8 if count < 0 else 16 * count + (0 if uniform and tail == 0 else 16)
    if buffer.size < width:
        buffer = np.concatenate((buffer, np.zeros(width, dtype=np.uint8)))
    limit = buffer.size - width
    over = np.flatnonzero(first > limit)
    if over.size:  # hashed apart from a padded copy of the end, the others read in place
        base = int(first[over].min())
        end = np.concatenate((buffer[base:], np.zeros(width, dtype=np.uint8)))
        past_end = _hash_group(end, first[over] - base, sizes[over], count)
        first = np.minimum(first, limit)
    windows = np.lib.stride_tricks.sliding_window_view(buffer, width)
    out = np.empty(first.size, dtype=np.uint64)
    for start in range(0, first.size, _HASH_CHUNK):
        part = slice(start, start + _HASH_CHUNK)
        words = windows[first[part]].view("<u8")  # a copy: (n, width // 8) words
        size = sizes[part]
        if count < 0:
            words = words.reshape(-1)
            words &= masks[tail] if uniform else masks[size]
            out[part] = hash_words(words, np.uint64(tail) if uniform else size.astype(np.uint64))
            continue
        if width > 16 * count:  # zero the tail block's bytes past the string
            if uniform:
                words[:, -2] &= masks[min(tail, 8)]
                words[:, -1] &= masks[max(tail - 8, 0)]
            else:
                rest = size - 16 * count  # 0..15 bytes in the tail block
                words[:, -2] &= masks[np.minimum(rest, 8)]
                words[:, -1] &= masks[np.maximum(rest - 8, 0)]
        out[part] = _hash_blocks(words, count, np.uint64(sizes[0]) if uniform
                                 else size.astype(np.uint64))
    if over.size:
        out[over] = past_end
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
