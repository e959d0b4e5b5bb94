"""Positions as text: decimal lines out (:func:`write_positions_text`, vectorized) and in
(:func:`bitmap_from_positions_file`, streamed), and the ``0,5,10-20`` position specs of
``puffin write``.
"""

from __future__ import annotations

import array
import re
import struct
from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any

from puffin_cli.blobs.deletion_vector.containers import iter_position_chunks
from puffin_cli.blobs.deletion_vector.layout import MAX_POSITION, DeletionVector
from puffin_cli.errors import LimitError, PuffinError
from puffin_cli.format.spec import DEFAULT_MAX_BLOB_SIZE

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    UInt64Array = npt.NDArray[np.uint64]


_DIGIT_GROUPS: Any = None  # "0000".."9999" as 10,000 little-endian uint32, built on first use


def format_positions(positions: UInt64Array) -> bytes:
    """Ascending positions as decimal text, one per line (``"0\\n2\\n4\\n"``), vectorized.

    Relies on the order: positions with the same number of digits are contiguous, so each such
    slice is formatted at a fixed width.
    """
    import numpy as np

    global _DIGIT_GROUPS
    if _DIGIT_GROUPS is None:
        text = "".join(f"{i:04d}" for i in range(10_000)).encode("ascii")
        _DIGIT_GROUPS = np.frombuffer(text, "<u4")
    powers = np.array([10**k for k in range(1, 20)], dtype=np.uint64)
    bounds = [0, *np.searchsorted(positions, powers).tolist(), positions.size]
    out: list[bytes] = []
    ten_thousand = np.uint64(10_000)
    for digits in range(1, 21):
        lo, hi = bounds[digits - 1], bounds[digits]
        if hi <= lo:
            continue
        groups = (digits + 3) // 4
        cells = np.empty((hi - lo, groups + 1), dtype="<u4")
        rest = positions[lo:hi]
        for g in range(groups - 1, 0, -1):
            quotient = rest // ten_thousand
            cells[:, g] = _DIGIT_GROUPS[rest - quotient * ten_thousand]
            rest = quotient
        cells[:, 0] = _DIGIT_GROUPS[rest]
        chars = cells.view(np.uint8)
        chars[:, 4 * groups] = ord("\n")
        out.append(chars[:, 4 * groups - digits:4 * groups + 1].tobytes())
    return b"".join(out)


def write_positions_text(dv: DeletionVector, out: IO[bytes], chunk: int = 1 << 20) -> int:
    """Write every position as a decimal line, ``chunk`` positions at a time; returns count."""
    written = 0
    for positions in iter_position_chunks(dv, chunk):
        out.write(format_positions(positions))
        written += positions.size
    return written


# Positions from text

# Decimal digits (superscripts are not), at most 19 after leading zeros (2^63-1 has 19):
# ``int`` never sees a 4,300-digit number.
_ITEM = re.compile(r"\s*0*(\d{1,19})\s*(?:-\s*0*(\d{1,19})\s*)?")
# A positions line is a number or a range: a longer line (e.g. /dev/zero) is refused, not
# accumulated.
MAX_POSITIONS_LINE = 4096
# What a bitmap of positions costs in memory (measured with pyroaring's BitMap64): about 160
# bytes per 2^16-position block (a CRoaring container) and 2 KiB per 2^32-position key. Positions
# input may build a bitmap of at most MEMORY_PER_BLOB_BYTE times --max-blob-size.
CONTAINER_COST = 160
KEY_COST = 2048
MEMORY_PER_BLOB_BYTE = 4
_FEW_KEYS = 1 << 10  # a range over fewer keys adds them one by one, else as a count


class BlockBudget:
    """The memory a positions bitmap may take, from ``--max-blob-size``: checked before a
    range is added (an upper bound) and after each block of a file is added."""

    def __init__(self, max_blob_size: int) -> None:
        self.max_blob_size = max_blob_size
        self.limit = MEMORY_PER_BLOB_BYTE * max_blob_size
        self.keys: set[int] = set()
        self.more_keys = 0

    def _check(self, containers: int) -> int:
        keys = len(self.keys) + self.more_keys
        cost = containers * CONTAINER_COST + keys * KEY_COST
        if cost > self.limit:
            raise LimitError(
                f"the positions need about {cost >> 20:,} MiB as a bitmap ({containers:,} "
                f"blocks of 65,536 positions under {keys:,} 32-bit keys), more than the "
                f"{self.limit >> 20:,} MiB that --max-blob-size ({self.max_blob_size:,} bytes) "
                f"allows ({MEMORY_PER_BLOB_BYTE} times it); raise --max-blob-size to write them",
                code="dv.positions")
        return containers

    def check_range(self, containers: int, start: int, end: int) -> int:
        """Containers after adding [start, end] to a bitmap of ``containers`` (at most)."""
        first, last = start >> 32, end >> 32
        if last - first < _FEW_KEYS:
            self.keys.update(range(first, last + 1))
        else:
            self.more_keys += last - first + 1
        return self._check(containers + (end >> 16) - (start >> 16) + 1)

    def add_numbers(self, numbers: Any) -> None:
        import numpy as np

        self.keys.update(np.unique(numbers >> np.uint64(32)).tolist())

    def check_bitmap(self, bitmap: Any) -> None:
        self._check(int(bitmap.get_statistics()["n_containers"]))


def _parse_item(text: str, where: str) -> tuple[int, int]:
    match = _ITEM.fullmatch(text)
    if match is None:
        shown = text.strip()
        shown = repr(shown) if len(shown) <= 60 else f"{shown[:60]!r}…"
        raise PuffinError(f"{where}: {shown} is not a position or a range START-END",
                          code="dv.positions")
    start = int(match.group(1))
    end = start if match.group(2) is None else int(match.group(2))
    if end < start:
        raise PuffinError(f"{where}: range {start}-{end} ends before it starts",
                          code="dv.positions")
    if end > MAX_POSITION:
        raise PuffinError(f"{where}: position {end} is above 2^63-1 ({MAX_POSITION})",
                          code="dv.positions")
    return start, end


def parse_position_spec(spec: str) -> list[tuple[int, int]]:
    """``"0,2,4,10-20"`` as inclusive ranges ``[(0, 0), (2, 2), (4, 4), (10, 20)]``."""
    return [_parse_item(item, f"position list item {i}")
            for i, item in enumerate(spec.split(","), 1)]


def bitmap_from_ranges(ranges: Iterable[tuple[int, int]],
                       max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Any:
    """A ``pyroaring.BitMap64`` holding inclusive ranges, each added as a range; refused
    before adding when the ranges would need more blocks than ``max_blob_size`` allows."""
    from pyroaring import BitMap64

    bitmap = BitMap64()
    budget = BlockBudget(max_blob_size)
    used = 0
    for start, end in ranges:
        if not 0 <= start <= end <= MAX_POSITION:
            raise PuffinError(f"range {start}-{end} is not within 0..2^63-1 in ascending order",
                              code="dv.positions")
        used = budget.check_range(used, start, end)
        if start == end:
            bitmap.add(start)
        else:
            bitmap.add_range(start, end + 1)
    return bitmap


_DIGITS = b"0123456789"
# Bytes before the first line, so that every line's last 24 bytes can be read as three words.
_PAD = b"0" * 24
_MAX_DIGITS = 19  # 2^63-1 has 19 digits; a longer line takes the exact path
_ASCII_ZEROS = 0x3030303030303030


def _add_lines(bitmap: Any, text: bytes, line_no: int, budget: BlockBudget) -> int:
    """The exact path: each line of ``text`` parsed as a position or a range and added to
    ``bitmap``; errors name the line (numbering continues from ``line_no``). Returns the number
    of the last line read."""
    used = int(bitmap.get_statistics()["n_containers"])
    for raw in text.decode("utf-8", "replace").splitlines():
        line_no += 1
        if raw.strip():
            start, end = _parse_item(raw, f"line {line_no}")
            used = budget.check_range(used, start, end)
            if start == end:
                bitmap.add(start)
            else:
                bitmap.add_range(start, end + 1)
    return line_no


def _eight_digits(words: UInt64Array) -> UInt64Array:
    """Each little-endian word of 8 digit values (0-9, most significant first) as its number,
    in place: digit pairs, then pairs of pairs, then halves (SWAR)."""
    import numpy as np

    for shift, scale, mask in ((8, 10, 0x00FF00FF00FF00FF), (16, 100, 0x0000FFFF0000FFFF),
                               (32, 10_000, 0xFFFFFFFF)):
        low = words >> np.uint64(shift)
        words *= np.uint64(scale)
        words += low
        words &= np.uint64(mask)
    return words


def _plain_numbers(text: bytes) -> tuple[UInt64Array, int] | None:
    """The bulk path: when every line of ``text`` is ASCII digits or blank (LF or CRLF line
    ends), its numbers parsed with numpy and the number of lines; else ``None``, and the exact
    path reads the block (ranges, spaces, signs, more than 19 digits, a number above 2^63-1).

    Each line's last 8, 16 or 24 bytes are read as little-endian words ending at its newline
    (from a strided view when all lines have the same length, else gathered), the bytes before
    the line's start are masked to zero digits, and each word is converted by :func:`_eight_digits`.
    """
    import numpy as np

    breaks = text.translate(None, _DIGITS)
    if breaks.translate(None, b"\n"):
        if breaks.translate(None, b"\r\n") or text.count(b"\r\n") != breaks.count(b"\r"):
            return None
        text = text.replace(b"\r\n", b"\n")
    lines = breaks.count(b"\n")
    if not text.endswith(b"\n"):  # the last line of the file
        text += b"\n"
        lines += 1
    data = _PAD + text
    buf = np.frombuffer(data, np.uint8)
    first = text.index(b"\n")
    lengths: Any
    newlines = buf[len(_PAD) + first::first + 1]
    if first and len(text) == lines * (first + 1) and (newlines == 10).all():
        ends = None  # every line has `first` digits
        lengths = shortest = longest = first
    else:
        ends = np.flatnonzero(buf == 10)
        lengths = np.diff(ends, prepend=len(_PAD) - 1) - 1
        if not lengths.all():  # blank lines
            ends = ends[lengths > 0]
            lengths = lengths[lengths > 0]
            if not ends.size:
                return np.empty(0, np.uint64), lines
        shortest, longest = int(lengths.min()), int(lengths.max())
    if longest > _MAX_DIGITS:
        return None
    count = lines if ends is None else ends.size
    unaligned = np.ndarray((len(data) - 7,), "<u8", data, 0, (1,))
    keep = np.array([(0xFFFFFFFFFFFFFFFF << (8 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(9)],
                    dtype=np.uint64)  # keep[i]: the bytes after the first i
    numbers = np.zeros(count, np.uint64)
    for back in range(-(-longest // 8) * 8, 0, -8):  # the word starting `back` bytes before the end
        if ends is None:
            word = np.ndarray((count,), "<u8", data, len(_PAD) + first - back, (first + 1,))
        else:
            word = unaligned[ends - back]
        digits = np.bitwise_xor(word, np.uint64(_ASCII_ZEROS))
        if shortest < back:  # some lines start inside this word
            digits &= keep[np.clip(back - lengths, 0, 8)]
        numbers *= np.uint64(100_000_000)
        numbers += _eight_digits(digits)
    if longest == _MAX_DIGITS and int(numbers.max()) > MAX_POSITION:
        return None
    return numbers, lines


_FOLD_POSITIONS = 1 << 24  # positions kept in the 32-bit bitmap before moving them over


def _fold(bitmap: Any, low: Any) -> None:
    """Move the positions of a 32-bit ``pyroaring.BitMap`` (all below 2^32) into ``bitmap``:
    through the portable 64-bit serialization (one 32-bit bitmap, key 0), not one by one."""
    from pyroaring import BitMap64

    bitmap |= BitMap64.deserialize(struct.pack("<QI", 1, 0) + low.serialize())
    low.clear()


def bitmap_from_positions_file(lines: IO[bytes], block: int = 1 << 20,
                               max_blob_size: int = DEFAULT_MAX_BLOB_SIZE) -> Any:
    """A ``pyroaring.BitMap64`` from a text stream: one position or START-END range per line,
    blank lines ignored. Read in blocks of ``block`` bytes (a line may span blocks); blocks of
    plain numbers are parsed in bulk (:func:`_plain_numbers`), others line by line. A line
    longer than :data:`MAX_POSITIONS_LINE` bytes, or positions needing more blocks than
    ``max_blob_size`` allows (:class:`BlockBudget`), are refused as soon as they are read."""
    from pyroaring import BitMap, BitMap64

    budget = BlockBudget(max_blob_size)
    bitmap = BitMap64()
    low = BitMap()  # bulk-parsed positions below 2^32: a 32-bit bitmap takes them 3x faster
    pending = 0
    line_no = 0
    tail = b""
    while True:
        chunk = lines.read(block)
        text = tail + chunk
        if chunk:
            cut = text.rfind(b"\n") + 1
            text, tail = text[:cut], text[cut:]
            if len(tail) > MAX_POSITIONS_LINE:
                at = line_no + text.count(b"\n") + 1
                raise PuffinError(f"line {at} is longer than "
                                  f"{MAX_POSITIONS_LINE} bytes; expected one position or "
                                  "START-END range per line", code="dv.positions")
        if text:
            plain = _plain_numbers(text)
            if plain is None:
                if pending:
                    _fold(bitmap, low)
                    pending = 0
                line_no = _add_lines(bitmap, text, line_no, budget)
            else:
                numbers, count = plain
                line_no += count
                budget.add_numbers(numbers)
                if (numbers[1:] < numbers[:-1]).any():
                    numbers.sort()  # CRoaring adds ascending positions about 3x faster
                if numbers.size and int(numbers.max()) <= 0xFFFFFFFF:
                    low.update(array.array("I", numbers.astype("<u4").tobytes()))
                    pending += numbers.size
                elif numbers.size:
                    bitmap.update(array.array("Q", numbers.tobytes()))
        if pending >= _FOLD_POSITIONS or (pending and not chunk):
            _fold(bitmap, low)
            pending = 0
        budget.check_bitmap(bitmap)
        if not chunk:
            return bitmap
