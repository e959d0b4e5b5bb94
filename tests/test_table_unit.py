"""``puffin table`` pieces on synthetic tables (fastavro-written, no Spark): discovery, metadata
versions, relocation, snapshot selection, field names, DV containers, the CLI."""

from __future__ import annotations

import gzip
import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyroaring import BitMap
from tables.synthetic import TableBuilder, dv_table

from puffin_cli.analysis import dv_containers
from puffin_cli.analysis.table.fields import FieldNames
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import (
    PathMapper,
    current_metadata_file,
)
from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.blobs.deletion_vector import encode_deletion_vector
from puffin_cli.cli.main import cli
from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Severity
from puffin_cli.storage import FileIO


def _table(tmp_path: Path, **kwargs: object) -> Path:
    root = tmp_path / "t"
    dv_table(root, snapshots=3, dvs_per_snapshot=2, carry=False, **kwargs).finish()  # type: ignore[arg-type]
    return root


def test_current_snapshot_reads_only_its_list_and_manifests(tmp_path: Path) -> None:
    root = _table(tmp_path)
    (report,) = analyze_path(root, fileio=FileIO()).tables
    assert report.manifests_read == 3  # its manifest list, one data and one delete manifest
    (view,) = report.snapshots
    assert view.snapshot_id == 1003 and view.current
    assert [dv.data_file for dv in view.deletion_vectors] == \
        [f"{root}/data/part=0/s3-f0.parquet", f"{root}/data/part=1/s3-f1.parquet"]
    assert view.totals.deletion_vectors == 2 and view.totals.dv_files == 1
    assert report.errors == 0 and report.findings == ()


def test_snapshot_selection(tmp_path: Path) -> None:
    root = _table(tmp_path)
    (report,) = analyze_path(root, snapshot_id=1001, fileio=FileIO()).tables
    assert [v.snapshot_id for v in report.snapshots] == [1001]
    (report,) = analyze_path(root, all_snapshots=True, fileio=FileIO()).tables
    assert [v.snapshot_id for v in report.snapshots] == [1001, 1002, 1003]
    assert report.manifests_read == 9
    with pytest.raises(PuffinError, match=r"no snapshot 7 \(latest snapshots: 1001, 1002, 1003\)"):
        analyze_path(root, snapshot_id=7, fileio=FileIO())


def test_orphans_everywhere_with_all_snapshots(tmp_path: Path) -> None:
    root = _table(tmp_path)
    stray = root / "data" / "stray.puffin"
    stray.write_bytes(b"PFA1")
    (default,) = analyze_path(root, fileio=FileIO()).tables
    assert default.orphans == ()  # only metadata/ is searched for one snapshot
    (everything,) = analyze_path(root, all_snapshots=True, fileio=FileIO()).tables
    assert everything.orphans == (str(stray),)
    assert [f.code for f in everything.findings] == ["table.orphan"]


def test_discovery_rules(tmp_path: Path) -> None:
    root = _table(tmp_path)
    meta = root / "metadata"
    body = (meta / "v1.metadata.json").read_text()
    (meta / "v2.metadata.json").write_text(body)
    (meta / "v10.metadata.json").write_text(body)
    assert Path(current_metadata_file(root, fileio=FileIO())).name == "v10.metadata.json"
    (meta / "version-hint.text").write_text("2\n")
    assert Path(current_metadata_file(root, fileio=FileIO())).name == "v2.metadata.json"
    for p in meta.glob("v*.metadata.json"):
        p.unlink()
    (meta / "version-hint.text").unlink()
    (meta / "00003-1b2c.metadata.json").write_text(body)
    (meta / "00012-9a8b.metadata.json").write_text(body)
    assert Path(current_metadata_file(root, fileio=FileIO())).name == "00012-9a8b.metadata.json"
    (meta / "00012-9a8b.metadata.json").unlink()
    (meta / "00013-77aa.gz.metadata.json").write_bytes(gzip.compress(body.encode()))
    (report,) = analyze_path(root, fileio=FileIO()).tables
    assert report.metadata_file.endswith("00013-77aa.gz.metadata.json")


def test_warehouse_finds_every_table(tmp_path: Path) -> None:
    for name in ("a", "b"):
        dv_table(tmp_path / "wh" / "db" / name, snapshots=1, dvs_per_snapshot=1,
                 carry=False).finish()
    report = analyze_path(tmp_path / "wh", fileio=FileIO())
    assert [Path(t.path).name for t in report.tables] == ["a", "b"]
    with pytest.raises(PuffinError, match="no Iceberg table found"):
        analyze_path(tmp_path / "wh" / "db" / "a" / "data", fileio=FileIO())


def test_moved_table_and_object_store_locations(tmp_path: Path) -> None:
    root = _table(tmp_path, location="s3://bucket/warehouse/db/t")
    (report,) = analyze_path(root, fileio=FileIO()).tables
    assert report.relocated == (("s3://bucket/warehouse/db/t", str(root.resolve())),)
    assert report.errors == 0 and len(report.snapshots[0].deletion_vectors) == 2
    moved = tmp_path / "moved"
    shutil.move(str(root), moved)
    (report,) = analyze_path(moved / "metadata" / "v1.metadata.json", fileio=FileIO()).tables
    assert report.relocated == (("s3://bucket/warehouse/db/t", str(moved.resolve())),)
    assert report.errors == 0
    with pytest.raises(PuffinError, match=r"/snap-1003-1-.*\.avro: cannot open: No such file"):
        analyze_path(moved, relocate=[("s3://bucket/warehouse", str(tmp_path / "x"))],
                     fileio=FileIO())


def test_path_mapper_and_relocate_option() -> None:
    mapper = PathMapper([("file:///old/wh", "/new/wh"), ("s3://b/wh", "/s3copy")])
    assert mapper.resolve("file:/old/wh/db/t/data/x.puffin") == "/new/wh/db/t/data/x.puffin"
    assert mapper.resolve("s3://b/wh/t/m.avro") == "/s3copy/t/m.avro"
    assert mapper.resolve("/elsewhere/f") == "/elsewhere/f"
    assert mapper.resolve("gs://x/y") == "gs://x/y"  # read where it is


def test_v1_inline_manifests(tmp_path: Path) -> None:
    root = _table(tmp_path)
    path = root / "metadata" / "v1.metadata.json"
    obj = json.loads(path.read_text())
    obj["format-version"] = 1
    obj["schema"] = obj.pop("schemas")[0]
    obj["partition-spec"] = obj.pop("partition-specs")[0]["fields"]
    for snap in obj["snapshots"]:
        snap.pop("manifest-list")
        snap["manifests"] = []
    path.write_text(json.dumps(obj))
    (report,) = analyze_path(root, fileio=FileIO()).tables
    assert report.format_version == 1 and report.manifests_read == 0
    assert report.snapshots[0].deletion_vectors == ()


def test_field_names(tmp_path: Path) -> None:
    root = _table(tmp_path)
    names = Table.load(root, fileio=FileIO()).field_names(None)
    assert [names.name(i) for i in (1, 2, 3, 4, 2147483645, 77)] == \
        ["id", "customer", "customer.name", "part", "_pos", None]
    nested = FieldNames({"schema-id": 5, "fields": [
        {"id": 1, "name": "tags", "type": {"type": "list", "element-id": 2,
                                           "element": "string"}},
        {"id": 3, "name": "attrs", "type": {"type": "map", "key-id": 4, "key": "string",
                                            "value-id": 5, "value": {
                                                "type": "struct", "fields": [
                                                    {"id": 6, "name": "v", "type": "int"}]}}}]})
    assert [nested.name(i) for i in range(1, 7)] == \
        ["tags", "tags.element", "attrs", "attrs.key", "attrs.value", "attrs.value.v"]
    assert nested.schema_id == 5 and 6 in nested and 7 not in nested


def _delta_native(positions: list[int]) -> bytes:
    bitmap = BitMap(positions).serialize()
    body = struct.pack("<i", 1681511376) + struct.pack("<i", 1) + \
        struct.pack("<i", len(bitmap)) + bitmap
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _paimon(positions: list[int]) -> bytes:
    body = struct.pack(">i", 1581511376) + BitMap(positions).serialize()
    return struct.pack(">I", len(body)) + body


def test_dv_containers_are_recognised_and_decoded() -> None:
    from pyroaring import BitMap64

    iceberg = encode_deletion_vector(BitMap64([1, 5, 9]))
    assert dv_containers.decode_range(iceberg, in_puffin=True) == \
        dv_containers.DecodedDV("puffin", 3, 9)
    assert dv_containers.decode_range(iceberg, in_puffin=False) == \
        dv_containers.DecodedDV("bare-dv", 3, 9)
    assert dv_containers.decode_range(_delta_native([0, 7]), in_puffin=False) == \
        dv_containers.DecodedDV("delta-native", 2, 7)
    assert dv_containers.decode_range(_paimon([3, 4, 100]), in_puffin=False) == \
        dv_containers.DecodedDV("paimon-bitmap", 3, 100)
    unknown = dv_containers.decode_range(b"\x00\x00\x00\x04ABCD", in_puffin=True)
    assert unknown == dv_containers.DecodedDV(
        "unknown", problem="no known deletion-vector magic after the length prefix (found "
        "41424344; expected d1d33964, d0d33964 or 5e43f2d0)")


def test_dv_container_damage_is_reported_not_raised() -> None:
    native = bytearray(_delta_native([0, 7]))
    native[-1] ^= 1
    bad = dv_containers.decode_range(bytes(native), in_puffin=False)
    assert bad.container == "delta-native" and bad.cardinality is None
    assert bad.problem is not None and bad.problem.startswith("delta-native: CRC-32 is ")
    short = dv_containers.decode_range(struct.pack(">I", 99) + struct.pack(">i", 1581511376),
                                       in_puffin=False)
    assert short.problem == "paimon-bitmap length prefix 99 runs past the 8-byte range"


def test_bare_dv_file_is_decoded_and_an_error(tmp_path: Path) -> None:
    root = _table(tmp_path)
    (report,) = analyze_path(root, fileio=FileIO()).tables
    puffin = Path(report.snapshots[0].deletion_vectors[0].path)
    data = puffin.read_bytes()
    puffin.write_bytes(b"XXXX" + data[4:])  # no leading magic: not a Puffin file any more
    (report,) = analyze_path(root, fileio=FileIO()).tables
    assert {dv.container for dv in report.snapshots[0].deletion_vectors} == {"bare-dv"}
    assert {(f.code, f.severity) for f in report.findings} == \
        {("table.dv.container", Severity.ERROR)}
    assert report.errors == len(report.findings)


def test_cli_human_and_json(tmp_path: Path) -> None:
    root = _table(tmp_path)
    runner = CliRunner()
    human = runner.invoke(cli, ["table", str(root)])
    assert human.exit_code == 0
    assert "snapshot 1003 (current)" in human.stdout
    assert "deletion vectors in data/" in human.stdout
    assert "no findings; 3 manifest file(s) read" in human.stdout
    result = runner.invoke(cli, ["table", "--json", "--snapshot", "1002", str(root)])
    doc = json.loads(result.stdout)
    assert doc["schema-version"] == 2
    assert doc["tables"][0]["snapshots"][0]["totals"]["deleted-rows"] == 6
    both = runner.invoke(cli, ["table", "--snapshot", "1", "--all-snapshots", str(root)])
    assert both.exit_code == 2
    assert "--snapshot and --all-snapshots exclude each other" in both.output


def test_builder_without_snapshots(tmp_path: Path) -> None:
    TableBuilder(tmp_path / "empty").finish()
    (report,) = analyze_path(tmp_path / "empty", fileio=FileIO()).tables
    assert report.snapshots == () and report.current_snapshot_id is None


@pytest.mark.parametrize("command", [["table"], ["stats", "compute"]])
def test_bad_relocate_is_a_usage_error(command: list[str], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from puffin_cli.cli.main import cli

    result = CliRunner().invoke(cli, [*command, "--relocate", "nope", str(tmp_path)])
    assert result.exit_code == 2
    assert ("invalid value for '--relocate': 'nope': expected FROM=TO (e.g. "
            "s3://bucket/warehouse=/data/warehouse)") in result.output


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard", "bzip2", "xz"])
def test_avro_container_reads_every_codec_as_fastavro_does(codec: str) -> None:
    """format/avro.py reads the blocks itself (bounded) and gives the records fastavro gives."""
    import io

    import fastavro

    from puffin_cli.errors import LimitError
    from puffin_cli.format.avro import AvroFile

    schema = {"type": "record", "name": "r", "fields": [
        {"name": "path", "type": "string"}, {"name": "n", "type": "long"},
        {"name": "m", "type": ["null", {"type": "map", "values": "bytes"}]}]}
    records = [{"path": f"s3://b/{i}.parquet", "n": i * 7, "m": {"k": bytes([i % 256])}}
               for i in range(3000)]
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec,
                    sync_interval=4096)
    data = out.getvalue()
    container = AvroFile(io.BytesIO(data), limit=1 << 20)
    assert list(container.records()) == records
    with pytest.raises(LimitError, match="more than the limit of 1,000 bytes"):
        list(AvroFile(io.BytesIO(data), limit=1000).records())


# A manifest entry's shape around a partition of two identity fields on fixed[4] columns (the
# second names the first's type), as Iceberg Java declares it.
FIXED_ENTRY = {"type": "record", "name": "entry", "fields": [
    {"name": "path", "type": "string"},
    {"name": "partition", "type": {"type": "record", "name": "r102", "fields": [
        {"name": "fx", "type": ["null", {"type": "fixed", "name": "fixed_4", "size": 4}]},
        {"name": "fy", "type": ["null", "fixed_4"]},
        {"name": "dec", "type": ["null", {"type": "fixed", "name": "fixed_9", "size": 9,
                                          "logicalType": "decimal", "precision": 20,
                                          "scale": 2}]}]}},
    {"name": "record_count", "type": "long"}, {"name": "file_size", "type": "long"},
    {"name": "bounds", "type": ["null", {"type": "map", "values": "bytes"}]}]}
FIXED_VALUES = [b"\xde\xad\xbe\xef", b"\x08\x01\x02\x03", b"\x08\x08\x08\x08", None,
                b"\x00\x00\x00\x00", b"\x7f\x00\x00\x01"]


def _fixed_entries() -> list[dict[str, object]]:
    from decimal import Decimal

    return [{"path": f"data/{i}.parquet",
             "partition": {"fx": v, "fy": FIXED_VALUES[-1 - i], "dec": Decimal("-12.30")},
             "record_count": 3 + i, "file_size": 4096 * (i + 1), "bounds": {"1": b"\x02"}}
            for i, v in enumerate(FIXED_VALUES)]


def _container(schema: dict[str, object], body: bytes, count: int) -> bytes:
    """An uncompressed Avro container of one block: ``body`` holding ``count`` records,
    under the header's ``schema`` (not necessarily the one the body was written with)."""
    from puffin_cli.format.avro import MAGIC, long_bytes

    text = json.dumps(schema).encode()
    sync = bytes(range(16))
    return b"".join((MAGIC, long_bytes(1), long_bytes(11), b"avro.schema",
                     long_bytes(len(text)), text, long_bytes(0), sync, long_bytes(count),
                     long_bytes(len(body)), body, sync))


def test_avro_fixed_partition_values_as_iceberg_java_writes_them() -> None:
    """Iceberg Java (1.10.2, 1.11) writes a fixed[N] partition value as Avro ``bytes`` (its
    length first) under a schema that declares ``fixed`` (apache/iceberg#17501); read as
    declared, the entry shifts by a byte and still decodes, to a record_count of -312 (issue
    32's fixed-identity table). Such a block is read as Java wrote it; decimals (a ``fixed``
    with a logical type) are written as declared and stay so."""
    import io

    import fastavro

    from puffin_cli.format.avro import AvroFile

    java = json.loads(json.dumps(FIXED_ENTRY).replace(
        '{"type": "fixed", "name": "fixed_4", "size": 4}', '"bytes"').replace(
        '"fixed_4"', '"bytes"'))
    records = _fixed_entries()
    body = io.BytesIO()
    for record in records:
        fastavro.schemaless_writer(body, fastavro.parse_schema(java), record)
    data = _container(FIXED_ENTRY, body.getvalue(), len(records))
    assert list(AvroFile(io.BytesIO(data), limit=1 << 20).records()) == records


def test_avro_fixed_values_written_as_the_spec_says_are_read_as_declared() -> None:
    """The same entries written as the Avro specification says (N bytes; fastavro, pyiceberg),
    values beginning with the byte Java's length would be (0x08 for 4) included, in blocks of
    every size: read as declared."""
    import io

    import fastavro

    from puffin_cli.format.avro import AvroFile

    records = _fixed_entries()
    for interval in (1, 64, 1 << 20):
        out = io.BytesIO()
        fastavro.writer(out, fastavro.parse_schema(FIXED_ENTRY), records, codec="null",
                        sync_interval=interval)
        assert list(AvroFile(io.BytesIO(out.getvalue()), limit=1 << 20).records()) == records
