"""The compact form of a Theta sketch: :class:`CompactTheta` written (:func:`serialize_compact`)
and read back (:func:`read_header`, :func:`decode_theta`), every malformed byte reported with
a code and an offset.

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
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.theta.hashing import DEFAULT_SEED, DEFAULT_SEED_HASH
from puffin_cli.errors import PuffinError
from puffin_cli.format.metadata import BlobMetadata

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    UInt64Array = npt.NDArray[np.uint64]


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
        return theta_estimate(self.retained, self.theta_long)

    @property
    def ndv(self) -> int:
        """The ``ndv`` property Iceberg writes: the estimate truncated (Java ``(long)``)."""
        return int(self.estimate)

    def to_bytes(self) -> bytes:
        """The uncompressed compact serialization (serial version 3) Java DataSketches writes."""
        return serialize_compact(self.theta_long, self.hashes, empty=self.empty)


def theta_estimate(retained: int, theta_long: int) -> float:
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


class Place:
    """Turns a position in the sketch into the offset errors carry."""

    def __init__(self, meta: BlobMetadata | None) -> None:
        self.base = None if meta is None else meta.offset
        self.stored_as_is = meta is None or meta.compression_codec is None

    def __call__(self, pos: int) -> int | None:
        if self.base is None:
            return pos
        return self.base + pos if self.stored_as_is else self.base


def _fail(place: Place, code: str, message: str, pos: int) -> PuffinError:
    return PuffinError(f"theta sketch: {message}", code=code, offset=place(pos))


def read_header(data: bytes, meta: BlobMetadata | None = None) -> ThetaHeader:
    """Check a serialized compact sketch's preamble and lengths; raise :class:`PuffinError`
    (code ``theta.*``) on the first problem. ``meta`` (when given) places the offsets."""
    place = Place(meta)
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


def _read_v4_header(data: bytes, place: Place, pre_longs: int, flags: int,
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


def _need(place: Place, size: int, needed: int, what: str) -> None:
    if size < needed:
        raise _fail(place, "theta.truncated", f"{size} bytes, but {what} need {needed} bytes",
                    size)


def deserialize(data: bytes, header: ThetaHeader, place: Place) -> Any:
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
    place = Place(meta)
    return deserialize(data, read_header(data, meta), place)


def describe(data: bytes) -> str:
    """The DataSketches library's own description of the sketch (``dump-blob --format sketch``)."""
    return str(decode_theta(data).to_string())


def compact_from_bytes(data: bytes, meta: BlobMetadata | None = None) -> CompactTheta:
    """A serialized compact sketch (either serial version) as a :class:`CompactTheta`, after
    the DataSketches library has read it (:func:`decode_theta`): its theta and sorted hashes."""
    import numpy as np

    sketch = decode_theta(data, meta)
    hashes = np.sort(np.fromiter(iter(sketch), dtype=np.uint64, count=sketch.num_retained))
    return CompactTheta(int(sketch.theta64), hashes, empty=bool(sketch.is_empty()))
