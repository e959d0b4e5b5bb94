"""The Python API (puffin_cli/api.py, docs/python.md, whose examples run in
test_docs_examples.py): what it costs to import, and that it answers as the commands do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap64
from s3server import ACCESS_KEY, REGION, SECRET_KEY, S3Server
from tables.synthetic import dv_table
from test_catalog import sql_catalog  # noqa: F401  (fixture)

from puffin_cli import api
from puffin_cli.analysis.write.parquet import theta_from_parquet
from puffin_cli.analysis.write.plan import ThetaFromParquet
from puffin_cli.blobs.iceberg_values import IcebergType
from puffin_cli.storage import FileIO

REPO = Path(__file__).resolve().parents[1]
STATS = REPO / "samples" / "stats.puffin"
DVS = REPO / "samples" / "deletion-vectors.puffin"
# What importing the API must not load: Spark, the CLI's and the terminal's libraries, and the
# heavy libraries only some calls need.
NOT_ON_IMPORT = ("pyspark", "click", "rich", "numpy", "pyarrow", "datasketches", "pyiceberg",
                 "obstore")


def _loaded(code: str) -> list[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True, timeout=120)
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_importing_the_api_loads_no_spark_cli_or_heavy_library() -> None:
    loaded = _loaded("import puffin_cli.api")
    assert [m for m in loaded if m.split(".")[0] in NOT_ON_IMPORT] == []


def test_importing_the_api_costs_what_inspect_costs() -> None:
    """Every puffin_cli module the import loads, `inspect --json --no-decode` loads too."""
    api_modules = {m for m in _loaded("import puffin_cli.api") if m.startswith("puffin_cli")}
    inspect = _loaded("import io, contextlib\nfrom puffin_cli.cli.quick import quick_inspect\n"
                      "with contextlib.redirect_stdout(io.StringIO()):\n"
                      f"    quick_inspect(['inspect', '--json', '--no-decode', {str(STATS)!r}])")
    assert sorted(api_modules - set(inspect) - {"puffin_cli.api"}) == []


def test_each_dv_of_the_samples_as_positions_chunks_bitmap_and_summary() -> None:
    for blob in api.open_file(DVS).blobs:
        positions = blob.positions()
        assert positions.dtype == np.uint64
        assert np.all(positions[1:] > positions[:-1])
        assert np.array_equal(np.concatenate(list(blob.position_chunks(1000))), positions)
        assert blob.bitmap() == BitMap64(positions.tolist())
        assert blob.cardinality() == len(positions) == blob.summary().cardinality


def test_a_blob_of_another_type_or_index_is_refused_in_one_error() -> None:
    stats = api.open_file(STATS)
    with pytest.raises(api.PuffinError, match="is a apache-datasketches-theta-v1 blob, not "
                       "deletion-vector-v1") as caught:
        stats.blob(0).positions()
    assert caught.value.code == "api.blob-type"
    with pytest.raises(api.PuffinError, match="no blob 6: the file has 6") as caught:
        stats.blob(6)
    assert caught.value.code == "api.no-blob"
    with pytest.raises(api.PuffinError, match="deletion-vector-v1 blob, not apache"):
        api.open_file(DVS).blob(0).sketch()


def test_every_theta_blob_agrees_with_its_summary_and_the_library() -> None:
    for blob in api.open_file(STATS).blobs:
        theta, summary, sketch = blob.theta(), blob.summary(), blob.sketch()
        assert theta.estimate == summary.estimate == sketch.get_estimate()
        assert str(theta.ndv) == blob.metadata.properties["ndv"]


def test_an_arrow_column_sketches_as_puffin_write_sketches_its_parquet_file(
        tmp_path: Path) -> None:
    column = pa.chunked_array([pa.array(range(30_000), pa.int64()),
                               pa.array([None, 7, *range(50_000, 60_000)], pa.int64())])
    pq.write_table(pa.table({"id": column}), tmp_path / "f.parquet", row_group_size=7000)
    ours = api.theta_sketch(column)
    written = theta_from_parquet(ThetaFromParquet((str(tmp_path / "f.parquet"),), "id", None,
                                                  IcebergType("long")), fileio=FileIO())
    assert ours.to_bytes() == written.to_bytes()
    assert api.theta_sketch(column, "long").to_bytes() == ours.to_bytes()
    with pytest.raises(api.PuffinError, match="Arrow type list<item: int64> has no Iceberg"):
        api.theta_sketch(pa.array([[1]]))


def test_a_dv_of_a_range_an_array_or_a_bitmap_is_the_same_blob(tmp_path: Path) -> None:
    positions = [0, 1, 2, 9, 1 << 33, (1 << 33) + 1]
    sources = [positions, np.array(positions, dtype=np.uint64), BitMap64(positions)]
    data = set()
    for n, source in enumerate(sources):
        api.write_deletion_vector(tmp_path / f"{n}.puffin", "f.parquet", source)
        blob = api.open_file(tmp_path / f"{n}.puffin").blob(0)
        assert blob.positions().tolist() == positions
        data.add(blob.data())
    assert len(data) == 1
    with pytest.raises(api.PuffinError, match="has no positions") as caught:
        api.write_deletion_vector(tmp_path / "none.puffin", "f.parquet", [])
    assert caught.value.code == "spec.dv.empty"
    assert not (tmp_path / "none.puffin").exists()
    with pytest.raises(api.PuffinError, match="exists"):
        api.write_deletion_vector(tmp_path / "0.puffin", "f.parquet", [1])
    api.write_deletion_vector(tmp_path / "0.puffin", "f.parquet", [1], overwrite=True)
    assert api.open_file(tmp_path / "0.puffin").blob(0).positions().tolist() == [1]


def test_a_table_without_statistics_or_snapshot(tmp_path: Path) -> None:
    dv_table(tmp_path / "t", snapshots=2, dvs_per_snapshot=2, carry=False).finish()
    table = api.open_table(tmp_path / "t")
    assert table.ndvs() == {} and table.ndvs_arrow().num_rows == 0
    assert table.statistics()["spark"].path is None
    assert len(table.deletion_vectors()) == 2  # without carry: the current snapshot's own
    assert table.deletion_vectors_arrow().column("cardinality").to_pylist() == [3, 3]
    with pytest.raises(api.PuffinError, match="expected one of spark, trino") as caught:
        table.ndvs(engine="hive")
    assert caught.value.code == "api.engine"
    with pytest.raises(api.PuffinError, match="no snapshot 5 ") as caught:
        table.statistics(5)
    assert caught.value.code == "table.snapshot"
    dv_table(tmp_path / "empty", snapshots=0, dvs_per_snapshot=0, carry=False).finish()
    with pytest.raises(api.PuffinError, match="the table has no current snapshot"):
        api.open_table(tmp_path / "empty").ndvs()


def test_a_catalog_table_by_its_identifier(sql_catalog: Any) -> None:  # noqa: F811
    """``catalog=``: the table pyiceberg's configuration names, its current metadata."""
    table = api.open_table("db.events", catalog="test")
    loaded = sql_catalog.load_table("db.events")
    assert table.metadata_file.endswith(loaded.metadata_location.rsplit("/", 1)[1])
    assert [s.snapshot_id for s in table.snapshots] == [s.snapshot_id
                                                        for s in loaded.snapshots()]
    assert table.ndvs() == {} and table.deletion_vectors() == ()
    with pytest.raises(api.PuffinError, match=r"catalog test: no table db\.nothing"):
        api.open_table("db.nothing", catalog="test")


def test_objects_read_with_fileio_properties(s3_server: S3Server) -> None:
    """``io=``: the properties ``--io`` takes (pyiceberg's names), no environment needed."""
    s3_server.client().create_bucket(Bucket="api")
    for sample in (STATS, DVS):
        s3_server.client().put_object(Bucket="api", Key=sample.name, Body=sample.read_bytes())
    io = {"s3.endpoint": s3_server.endpoint, "s3.region": REGION,
          "s3.access-key-id": ACCESS_KEY, "s3.secret-access-key": SECRET_KEY}
    remote, local = api.open_file("s3://api/stats.puffin", io=io), api.open_file(STATS)
    assert remote.report.blobs == local.report.blobs
    assert [b.theta().ndv for b in remote.blobs] == [b.theta().ndv for b in local.blobs]
    dv = api.open_file("s3://api/deletion-vectors.puffin", io=io).blob(1)
    assert np.array_equal(dv.positions(), api.open_file(DVS).blob(1).positions())
    assert api.validate("s3://api/stats.puffin", io=io, profile="java").findings == ()
    with pytest.raises(api.PuffinError) as caught:
        api.open_file("s3://api/missing.puffin", io=io)
    assert (caught.value.code, caught.value.path) == ("io.not-found", "s3://api/missing.puffin")
