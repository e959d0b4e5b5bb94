"""Regenerate the sample Puffin files (``make samples``) with puffin-cli's own write path.

    python samples/generate.py [OUTDIR]      # default: this folder

Everything is fixed (values, ids, paths) except ``created-by`` (``puffin-cli <version>``), so
running it again with the same version gives the same bytes (a test checks this):

- ``stats.puffin``: Theta sketches (zstd) of six columns of different Iceberg types, one in
  estimation mode (20,000 distinct values);
- ``deletion-vectors.puffin``: four deletion vectors, one with positions across 2^32 and one
  with 1,000,000+ positions mixing runs, a dense block (a bitmap container) and sparse ones;
- ``lz4-footer.puffin``: a Theta sketch and a DV behind an LZ4-compressed footer (valid Puffin
  that Iceberg Java cannot read);
- ``empty.puffin``: no blobs.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
import uuid
from decimal import Decimal
from pathlib import Path

from puffin_cli.analysis.write.build import write_plan
from puffin_cli.analysis.write.plan import (
    BlobSpec,
    DvFromPositions,
    ThetaFromValues,
    WritePlan,
    dv_blob,
    theta_blob,
)
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.storage import FileIO

HERE = Path(__file__).resolve().parent
SNAPSHOT_ID = 3055729675574597004
SEQUENCE_NUMBER = 4
DATA = "s3://warehouse/sales/orders/data"


def _theta(field_id: int, type_name: str, values: list[object]) -> BlobSpec:
    source = ThetaFromValues(IcebergType.parse(type_name), values=tuple(values))
    return theta_blob(source, field_id, snapshot_id=SNAPSHOT_ID,
                      sequence_number=SEQUENCE_NUMBER)


def stats_plan() -> WritePlan:
    rng = random.Random(20240131)
    order_ids = list(range(1_000_000, 1_020_000))  # 20,000 distinct: estimation mode
    rng.shuffle(order_ids)
    cities = ["Amsterdam", "Berlin", "Lisboa", "München", "Oslo", "Paris", "Québec", "Zürich"]
    prices = [Decimal(rng.randrange(100, 100_000)) / 100 for _ in range(600)]
    epoch = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    created = [epoch + dt.timedelta(seconds=rng.randrange(0, 86_400 * 90)) for _ in range(900)]
    days = [dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(0, 366)) for _ in range(700)]
    customers = [uuid.UUID(int=rng.getrandbits(128)) for _ in range(250)]
    return WritePlan((
        _theta(1, "long", list(order_ids)),
        _theta(2, "string", [rng.choice(cities) for _ in range(1_000)]),
        _theta(3, "decimal(9,2)", list(prices)),
        _theta(4, "timestamptz", list(created)),
        _theta(5, "date", list(days)),
        _theta(6, "uuid", list(customers)),
    ))


def _dv(name: str, ranges: list[tuple[int, int]]) -> BlobSpec:
    return dv_blob(DvFromPositions(f"{DATA}/{name}.parquet", tuple(ranges)))


def deletion_vectors_plan() -> WritePlan:
    rng = random.Random(7)
    big: list[tuple[int, int]] = [(0, 999_999)]  # one long run
    # a dense block: every other position of one 65,536-position container (a bitmap)
    big += [(p, p) for p in range(1 << 20, (1 << 20) + (1 << 16), 2)]
    # short runs and sparse positions further on (run and array containers)
    big += [(s, s + 99) for s in range(2_000_000, 2_100_000, 1_000)]
    big += [(p, p) for p in sorted(rng.sample(range(3_000_000, 4_000_000), 2_000))]
    high = 1 << 32
    return WritePlan((
        _dv("00000-0-small", [(0, 0), (2, 2), (4, 4), (10, 20)]),
        _dv("00001-0-large", big),
        _dv("00002-0-above-2-32", [(high - 3, high + 2), (5 * high + 17, 5 * high + 17)]),
        _dv("00003-0-sparse", [(p, p) for p in range(7, 700_000, 7_001)]),
    ))


def lz4_footer_plan() -> WritePlan:
    return WritePlan((
        _theta(1, "long", list(range(100))),
        _dv("00000-0-lz4", [(3, 9), (1_000, 1_000)]),
    ), footer_compression="lz4")


PLANS = {
    "stats.puffin": stats_plan,
    "deletion-vectors.puffin": deletion_vectors_plan,
    "lz4-footer.puffin": lz4_footer_plan,
    "empty.puffin": WritePlan,
}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else HERE
    out.mkdir(parents=True, exist_ok=True)
    for name, plan in PLANS.items():
        summary = write_plan(plan(), str(out / name), fileio=FileIO(), overwrite=True)
        print(f"{out / name}: {summary.file_size:,} bytes, {len(summary.blobs)} blobs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
