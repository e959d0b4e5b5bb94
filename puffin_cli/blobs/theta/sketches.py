"""Building (what Iceberg Java's Spark ``compute_table_stats`` does, reproduced byte for byte):

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from puffin_cli.blobs.theta.compact import MAX_THETA, CompactTheta
from puffin_cli.blobs.theta.hashing import hash_iceberg_values

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    UInt64Array = npt.NDArray[np.uint64]

    from puffin_cli.blobs.iceberg_values import IcebergType


NOMINAL_ENTRIES = 4096


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
        if self._empty:  # DataSketches rejects a zero hash: zeros alone leave it empty
            if not stream.any():
                return
            self._empty = False
        # Hashes at or above theta are rejected whenever they arrive: drop them before the
        # (sorting) search for first arrivals, which keeps the others' order; then the zeros.
        stream = stream[stream < np.uint64(self.theta_long)]
        if stream.size and not stream.all():
            stream = stream[stream != 0]
        arrivals = _new_arrivals(stream, self._retained)
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
        retained = self._retained
        merged = np.concatenate((retained[retained < limit], arrivals[arrivals < limit]))
        merged.sort()
        self._retained = merged

    def result(self) -> CompactTheta:
        return CompactTheta(self.theta_long, self._retained, empty=self._empty)


def _new_arrivals(stream: UInt64Array, retained: UInt64Array) -> UInt64Array:
    """The distinct hashes of ``stream`` not in ``retained`` (sorted), in order of first
    arrival: equal hashes are found by an (unstable, SIMD) sort, the first arrival of each as
    its smallest position, and the retained ones by a search of the sorted distinct hashes."""
    import numpy as np

    if stream.size == 0:
        return stream
    if retained.size and stream.size > 2 * retained.size:  # mostly repeats, as a rule
        # Drop the repeats a table indexed by the low bits finds (equal hashes: exact; a slot
        # holds one of the retained hashes that share it, the search below finds the others).
        mask = (1 << (4 * retained.size).bit_length()) - 1
        table = np.zeros(mask + 1, dtype=np.uint64)
        table[retained & np.uint64(mask)] = retained
        stream = stream[table[stream & np.uint64(mask)] != stream]
        if stream.size == 0:
            return stream
    order = np.argsort(stream)
    ordered = stream[order]
    starts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    if starts.size + 1 < stream.size:  # repeated hashes: keep each one's first position
        starts = np.concatenate(([0], starts))
        distinct = ordered[starts]
        first = np.minimum.reduceat(order, starts)
    else:
        distinct, first = ordered, order
    if retained.size:
        found = np.searchsorted(retained, distinct)
        np.minimum(found, retained.size - 1, out=found)
        first = first[retained[found] != distinct]
    first.sort()
    return stream[first]


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
        from puffin_cli.blobs.iceberg_values import IcebergType

        iceberg_type = IcebergType.parse(iceberg_type)
    if not isinstance(values, np.ndarray):
        values = [v for v in values if v is not None]
    sketch = build_sketch(hash_iceberg_values(iceberg_type, values))
    return sketch.to_bytes(), sketch.ndv
