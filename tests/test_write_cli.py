"""``puffin write``: byte-exact rewrites of Iceberg Java's files through --spec, the shortcuts
and their pairing, output, warnings and errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result
from helpers import SAMPLES

from puffin_cli import CREATED_BY
from puffin_cli.blobs.deletion_vector import decode_deletion_vector
from puffin_cli.cli.main import cli, main
from puffin_cli.format.reader import PuffinReader


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["write", *args])


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Through ``main`` (where library errors become one stderr line and an exit code)."""
    with pytest.raises(SystemExit) as caught:
        main(["write", *args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    assert isinstance(caught.value.code, int)
    return caught.value.code, out, err


def read(path: Path) -> list[tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return [(b, reader.read_blob(b)) for b in reader.metadata.blobs]


# --------------------------------------------------------------------------------------------
# Byte for byte what Iceberg Java wrote


@pytest.mark.parametrize("name", [
    "public/sample-metric-data-uncompressed.bin",
    "public/sample-metric-data-compressed-zstd.bin",
    "public/empty-puffin-uncompressed.bin",
    "iceberg-java/default-zstd.puffin",
    "iceberg-java/multi-blob-mixed.puffin",
])
def test_spec_rewrites_iceberg_java_files_byte_for_byte(tmp_path: Path, name: str) -> None:
    source = SAMPLES / name
    blobs = []
    with PuffinReader(source) as reader:
        metadata = reader.metadata
        for i, meta in enumerate(metadata.blobs):
            (tmp_path / f"blob{i}.bin").write_bytes(reader.read_blob(meta))
            blob: dict[str, Any] = {"type": meta.type, "fields": list(meta.fields),
                                    "snapshot-id": meta.snapshot_id,
                                    "sequence-number": meta.sequence_number,
                                    "payload": {"file": f"blob{i}.bin"}}
            if meta.properties:
                blob["properties"] = meta.properties
            if meta.compression_codec:
                blob["compression"] = meta.compression_codec
            blobs.append(blob)
    spec: dict[str, Any] = {"properties": metadata.properties, "blobs": blobs}
    if "created-by" not in metadata.properties:
        spec["created-by"] = None
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    out = tmp_path / "out.puffin"
    result = run(str(out), "--spec", str(tmp_path / "spec.json"))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == source.read_bytes()


# --------------------------------------------------------------------------------------------
# Shortcuts


def test_shortcuts_pair_in_command_line_order(tmp_path: Path) -> None:
    (tmp_path / "pos.txt").write_text("1\n5-9\n")
    (tmp_path / "vals.txt").write_text("a\nb\na\n")
    out = tmp_path / "out.puffin"
    zstd_sample = SAMPLES / "public" / "sample-metric-data-compressed-zstd.bin"
    result = run(str(out), "--dv", "a.parquet", "--positions", "0,2,4,10-20",
                 "--theta", "3", "--type", "string", "--values-file", str(tmp_path / "vals.txt"),
                 "--copy-blob", f"{zstd_sample}:1",
                 "--dv", "b.parquet", "--positions-file", str(tmp_path / "pos.txt"),
                 "--positions", "100", "--snapshot", "42", "--sequence-number", "3")
    assert result.exit_code == 0, result.output
    blobs = read(out)
    assert [(m.type, m.fields, m.snapshot_id, m.sequence_number, m.compression_codec)
            for m, _ in blobs] == [
        ("deletion-vector-v1", (2147483645,), -1, -1, None),
        ("apache-datasketches-theta-v1", (3,), 42, 3, "zstd"),
        ("some-other-blob", (2,), 2, 1, "zstd"),
        ("deletion-vector-v1", (2147483645,), -1, -1, None)]
    assert blobs[0][0].properties == {"referenced-data-file": "a.parquet", "cardinality": "14"}
    assert blobs[1][0].properties == {"ndv": "2"}
    assert sorted(decode_deletion_vector(blobs[3][1]).bitmap) == [1, 5, 6, 7, 8, 9, 100]
    assert result.stdout.splitlines() == [
        f"wrote {out}: {out.stat().st_size:,} bytes, footer "
        f"{out.stat().st_size - 4 - sum(m.length for m, _ in blobs):,} bytes (plain), 4 blobs",
        "  0  deletion-vector-v1  fields [2147483645]",
        f"     cardinality 14, {blobs[0][0].length} bytes",
        "     data file a.parquet",
        "  1  apache-datasketches-theta-v1  fields [3]",
        f"     ndv 2, {blobs[1][0].length} bytes zstd",
        "  2  some-other-blob  fields [2]",
        "     77 bytes zstd, copied as stored",
        "  3  deletion-vector-v1  fields [2147483645]",
        f"     cardinality 7, {blobs[3][0].length} bytes",
        "     data file b.parquet",
    ]


def test_from_parquet_columns_field_ids_and_json(tmp_path: Path) -> None:
    for i in range(2):
        table = pa.table({"id": pa.array([i * 10 + j for j in range(10)]),
                          "city": pa.array(["x", "y"] * 5), "n": pa.array([1.5] * 10)})
        pq.write_table(table, tmp_path / f"d{i}.parquet")
    out = tmp_path / "out.puffin"
    result = run(str(out), "--from-parquet", str(tmp_path / "d*.parquet"), "--columns",
                 "city,id", "--field-id", "id=1", "--field-id", "city=2", "--compress", "none",
                 "--property", "k=v=w", "--created-by", "me", "--json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert list(document) == ["schema-version", "command", "path", "file-size", "footer-size",
                              "footer-compressed", "properties", "blobs", "warnings"]
    assert document["properties"] == {"k": "v=w", "created-by": "me"}
    assert [(b["metadata"]["fields"], b["ndv"], b["metadata"]["compression-codec"], b["source"])
            for b in document["blobs"]] == [([2], 2, None, "parquet"),
                                            ([1], 20, None, "parquet")]
    assert list(document["blobs"][0]) == ["index", "metadata", "source", "ndv", "cardinality"]
    assert list(document["blobs"][0]["metadata"]) == [
        "type", "fields", "snapshot-id", "sequence-number", "offset", "length",
        "compression-codec", "properties", "extra"]
    assert document["file-size"] == out.stat().st_size


def test_lz4_is_allowed_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "v.txt").write_text("1\n")
    out = tmp_path / "out.puffin"
    result = run(str(out), "--theta", "1", "--type", "long", "--values-file",
                 str(tmp_path / "v.txt"), "--compress", "lz4", "--footer-compression", "lz4")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        "puffin: warning: the footer is LZ4-compressed: Iceberg Java cannot read it (its "
        "Puffin reader supports zstd only)",
        "puffin: warning: blob 0 is LZ4-compressed: Iceberg Java cannot read it (its Puffin "
        "reader supports zstd only)"]
    with PuffinReader(out) as reader:
        assert reader.footer.compressed
        assert reader.metadata.blobs[0].compression_codec == "lz4"
    copied = tmp_path / "copy.puffin"
    result = run(str(copied), "--copy-blob", f"{out}:0")
    assert result.exit_code == 0, result.output
    assert result.stderr == ("puffin: warning: blob 0 (copied) is LZ4-compressed: Iceberg Java "
                             "cannot read it (its Puffin reader supports zstd only)\n")


def test_nothing_to_write_gives_an_empty_file(tmp_path: Path) -> None:
    out = tmp_path / "empty.puffin"
    result = run(str(out))
    assert result.exit_code == 0, result.output
    payload = json.dumps({"blobs": [], "properties": {"created-by": CREATED_BY}},
                         separators=(",", ":")).encode()
    assert out.read_bytes() == (b"PFA1PFA1" + payload + len(payload).to_bytes(4, "little")
                                + bytes(4) + b"PFA1")


def test_spec_and_shortcuts_together(tmp_path: Path) -> None:
    spec = {"properties": {"a": "1"}, "created-by": None,
            "blobs": [{"type": "t", "fields": [1], "payload": {"text": "x"}}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out.puffin"
    result = run(str(out), "--dv", "f", "--positions", "3", "--spec",
                 str(tmp_path / "spec.json"), "--property", "b=2")
    assert result.exit_code == 0, result.output
    with PuffinReader(out) as reader:
        assert reader.metadata.properties == {"a": "1", "b": "2"}
        assert [b.type for b in reader.metadata.blobs] == ["t", "deletion-vector-v1"]


def test_existing_output_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.puffin"
    out.write_bytes(b"old")
    code, stdout, stderr = run_main(capsys, str(out), "--dv", "f", "--positions", "1")
    assert (code, stdout) == (1, "")
    assert stderr == f"puffin: error: {out}: exists; use --force to overwrite it\n"
    assert out.read_bytes() == b"old"
    code, _, _ = run_main(capsys, str(out), "--dv", "f", "--positions", "1", "--force")
    assert code == 0
    assert len(read(out)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.puffin"]


def test_bad_values_leave_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "v.txt").write_text("1\n2.5\n")
    out = tmp_path / "out.puffin"
    code, stdout, stderr = run_main(capsys, str(out), "--theta", "1", "--type", "long",
                                    "--values-file", str(tmp_path / "v.txt"))
    assert (code, stdout) == (1, "")
    assert stderr == (f"puffin: error: {tmp_path}/v.txt: line 2: '2.5' is not a valid long: "
                      "expected a decimal integer\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.txt"]


@pytest.mark.parametrize(("args", "message"), [
    (["--positions", "1"], "--positions 1: it must follow a --dv"),
    (["--theta", "1", "--positions", "1"], "--positions 1: it must follow a --dv"),
    (["--type", "long"], "--type long: it must follow a --theta"),
    (["--dv", "f"], "--dv f: give --positions or --positions-file after it"),
    (["--dv", "f", "--positions", "1,x"],
     "--positions '1,x': position list item 2: 'x' is not a position or a range "
     "START-END"),
    (["--theta", "x", "--type", "long"], "--theta 'x': expected a field ID (an integer)"),
    (["--theta", "1", "--type", "long"],
     "--theta 1: give exactly one --type and one --values-file after it"),
    (["--theta", "1", "--type", "number", "--values-file", "{spec}"],
     "--type: unknown Iceberg type 'number' (expected one of boolean, int, long, float, "
     "double, date, time, timestamp, timestamptz, timestamp_ns, timestamptz_ns, string, uuid, "
     "binary, decimal(P,S), fixed[L])"),
    (["-o", "other.puffin"], "name the Puffin file to write once: OUTPUT or -o/--output FILE"),
    (["--columns", "a"], "--columns, --field-id and --table go with --from-parquet"),
    (["--snapshot", "1", "--dv", "f", "--positions", "1"],
     "--snapshot and --sequence-number apply to Theta blobs from --theta or "
     "--from-parquet (deletion vectors always have -1; a spec sets its own)"),
    (["--compress", "gzip"],
     "invalid value for '--compress': 'gzip' is not one of 'lz4', 'zstd', 'none'"),
])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "spec.json").write_text("{}")
    args = [a.format(spec=tmp_path / "spec.json") for a in args]
    result = run(str(tmp_path / "out.puffin"), *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"puffin write: error: {message}",
                                          "Try 'puffin write --help' for help."]
    assert not (tmp_path / "out.puffin").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--copy-blob", "nocolon"],
     "puffin: error: --copy-blob 'nocolon': expected FILE:INDEX, e.g. stats.puffin:0"),
    (["--from-parquet", "{dir}/none-*.parquet"],
     "puffin: error: {dir}/none-*.parquet: no file matches this pattern"),
    (["--spec", "{dir}/missing.json"],
     "puffin: error: {dir}/missing.json: cannot open: No such file or directory"),
    (["--property", "novalue"], "puffin: error: --property: 'novalue' is not KEY=VALUE"),
])
def test_bad_inputs_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                           args: list[str], message: str) -> None:
    code, stdout, stderr = run_main(capsys, str(tmp_path / "out.puffin"),
                                    *[a.format(dir=tmp_path) for a in args])
    assert (code, stdout) == (1, "")
    assert stderr == message.format(dir=tmp_path) + "\n"


def test_help_shows_examples_and_the_spec() -> None:
    result = CliRunner().invoke(cli, ["write", "--help"])
    assert result.exit_code == 0
    assert "puffin write dvs.puffin --dv s3://b/t/data/f1.parquet --positions 0,2,4,10-20" \
        in result.stdout
    assert "--from-parquet 'data/*.parquet'" in result.stdout
    assert '{"dv": {"referenced-data-file": "f1.parquet", "positions": "0,2,10-20"}}' \
        in result.stdout
    assert "docs/write.md" in result.stdout


def test_docs_examples_are_valid_specs(tmp_path: Path) -> None:
    """Every JSON block in docs/write.md is a spec that writes, given the files it names."""
    import datetime as dt

    docs = (Path(__file__).resolve().parents[1] / "docs" / "write.md").read_text()
    blocks = [b.split("```", 1)[0] for b in docs.split("```json\n")[1:]]
    assert len(blocks) == 3
    (tmp_path / "blob.bin").write_bytes(b"blob")
    (tmp_path / "prices.txt").write_text("12.30\n9.99\n")
    (tmp_path / "positions.txt").write_text("7\n100-200\n")
    (tmp_path / "old.puffin").write_bytes(
        (SAMPLES / "public" / "sample-metric-data-uncompressed.bin").read_bytes())
    (tmp_path / "data").mkdir()
    schema = pa.schema([pa.field("id", pa.int64(), metadata={b"PARQUET:field_id": b"1"}),
                        pa.field("ts", pa.timestamp("us", tz="UTC"))])
    pq.write_table(pa.table([pa.array([1, 2]),
                             pa.array([dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)] * 2,
                                      pa.timestamp("us", tz="UTC"))], schema=schema),
                   tmp_path / "data" / "part-0.parquet")
    for i, block in enumerate(blocks):
        (tmp_path / f"spec{i}.json").write_text(block)
        result = run(str(tmp_path / f"out{i}.puffin"), "--spec", str(tmp_path / f"spec{i}.json"))
        assert result.exit_code == 0, (block, result.output)


def test_spec_from_stdin(tmp_path: Path) -> None:
    spec = {"blobs": [{"dv": {"referenced-data-file": "f.parquet", "positions": [3, [5, 6]]}}]}
    out = tmp_path / "out.puffin"
    result = CliRunner().invoke(cli, ["write", str(out), "--spec", "-", "--json"],
                                input=json.dumps(spec))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["blobs"][0]["cardinality"] == 3


def test_output_option_names_the_file(tmp_path: Path) -> None:
    target = tmp_path / "dv.puffin"
    result = CliRunner().invoke(cli, ["write", "--dv", "f.parquet", "--positions", "1-3", "-o",
                                      str(target)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"wrote {target}: ")
    assert target.exists()


def _plain_parquet_and_table(tmp_path: Path) -> tuple[Path, Path]:
    """A Parquet file without field IDs (id, part, extra) and a table whose schema names id
    (1) and part (4), current snapshot 1002 at sequence number 2."""
    from tables.synthetic import dv_table

    table = tmp_path / "t"
    dv_table(table, snapshots=2, dvs_per_snapshot=1, carry=True).finish()
    data = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"id": pa.array(range(50), pa.int64()),
                             "part": pa.array([1, 2] * 25, pa.int32()),
                             "extra": pa.array(["x"] * 50)}), data)
    return data, table


def test_from_parquet_without_field_ids_explains_the_ways(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, _ = _plain_parquet_and_table(tmp_path)
    code, _, stderr = run_main(capsys, str(tmp_path / "out.puffin"), "--from-parquet", str(data))
    assert code == 1
    assert stderr == (
        f"puffin: error: column 'id' in {data} has no field ID in its Parquet schema "
        "(PARQUET:field_id), as files not written by Iceberg usually have: name the Iceberg "
        "table they belong to with --table PATH (field IDs by column name from its schema), "
        "or give --field-id id=ID (repeatable) for each such column\n")


def test_from_parquet_field_ids_by_name_from_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, table = _plain_parquet_and_table(tmp_path)
    out = tmp_path / "out.puffin"
    result = run(str(out), "--from-parquet", str(data), "--table", str(table), "--columns",
                 "id,part", "--snapshot", "none", "--json")
    assert result.exit_code == 0, result.output
    blobs = json.loads(result.stdout)["blobs"]
    assert [(b["metadata"]["fields"], b["ndv"], b["metadata"]["snapshot-id"],
             b["metadata"]["sequence-number"]) for b in blobs] == [([1], 50, -1, -1),
                                                                  ([4], 2, -1, -1)]
    chosen = run(str(tmp_path / "o2.puffin"), "--from-parquet", str(data), "--table",
                 str(table), "--columns", "part", "--field-id", "part=9", "--snapshot", "-1",
                 "--json")
    assert [(b["metadata"]["fields"], b["metadata"]["snapshot-id"],
             b["metadata"]["sequence-number"]) for b in json.loads(chosen.stdout)["blobs"]] == \
        [([9], -1, -1)]
    code, _, stderr = run_main(capsys, str(tmp_path / "o3.puffin"), "--from-parquet", str(data),
                               "--table", str(table), "--snapshot", "NONE")
    assert code == 1
    assert "column 'extra' in" in stderr
    assert "the table's schema has no column of that name (its columns: customer, " \
        "customer.name, id, part)" in stderr
    assert run(str(tmp_path / "o4.puffin"), "--dv", "f", "--positions", "1", "--table",
               str(table)).exit_code == 2


# --------------------------------------------------------------------------------------------
# --from-parquet --table: blobs that claim a snapshot describe exactly its live rows


def _copy_on_write_table(tmp_path: Path) -> tuple[Any, Path]:
    """A pyiceberg v2 table appended three times, then two deletes that rewrite files
    (copy-on-write): 7 Parquet files under data/, 3 of them live."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo, LessThan

    catalog = SqlCatalog("t", uri=f"sqlite:///{tmp_path}/c.db",
                         warehouse=(tmp_path / "wh").as_uri())
    catalog.create_namespace("shop")
    rows = pa.table({"order_id": pa.array(range(3000), pa.int64()),
                     "country": pa.array(["de", "fr", "us", "uk", "jp"][i % 5]
                                         for i in range(3000))})
    table = catalog.create_table("shop.orders", schema=rows.schema)
    for i in range(3):
        table.append(rows.slice(i * 1000, 1000))
    table.delete(LessThan("order_id", 500))
    table.delete(EqualTo("country", "jp"))
    return table, tmp_path / "wh" / "shop" / "orders"


def _live_files(table: Any) -> list[str]:
    from urllib.parse import urlparse

    return sorted(urlparse(task.file.file_path).path for task in table.scan().plan_files())


def test_from_parquet_table_refuses_files_the_snapshot_no_longer_has(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table, root = _copy_on_write_table(tmp_path)
    snapshot = table.current_snapshot().snapshot_id
    assert len(list((root / "data").glob("*.parquet"))) == 7
    out = tmp_path / "stats.puffin"
    code, stdout, stderr = run_main(capsys, str(out), "--from-parquet", f"{root}/data/*.parquet",
                                    "--table", str(root))
    assert (code, stdout) == (1, "")
    assert stderr.startswith(f"puffin: error: 4 of the 7 file(s) --from-parquet matched are "
                             f"not live data files of snapshot {snapshot} ({root}/data/")
    assert stderr.endswith(f", …): its statistics would count rows it does not have; "
                           f"`puffin stats compute {root} --snapshot {snapshot}` computes a "
                           "snapshot's statistics; --snapshot none writes blobs that claim no "
                           "snapshot\n")
    assert stderr.count("\n") == 1 and not out.exists()
    # fewer files than the snapshot has: rows missing
    live = _live_files(table)
    code, _, stderr = run_main(capsys, str(out), "--from-parquet", live[0], "--table", str(root))
    assert code == 1 and not out.exists()
    assert f"2 of the 3 live data file(s) of snapshot {snapshot} are not among the files" \
        in stderr


def test_from_parquet_table_of_exactly_the_live_files(tmp_path: Path) -> None:
    table, root = _copy_on_write_table(tmp_path)
    snapshot = table.current_snapshot()
    args = [a for path in _live_files(table) for a in ("--from-parquet", path)]
    result = run(str(tmp_path / "s.puffin"), *args, "--table", str(root), "--json")
    assert result.exit_code == 0, result.output
    rows = table.scan().to_arrow()
    assert [(b["metadata"]["fields"], b["ndv"], b["metadata"]["snapshot-id"],
             b["metadata"]["sequence-number"]) for b in json.loads(result.stdout)["blobs"]] == [
        ([1], len(set(rows["order_id"].to_pylist())), snapshot.snapshot_id,
         snapshot.sequence_number),
        ([2], len(set(rows["country"].to_pylist())), snapshot.snapshot_id,
         snapshot.sequence_number)]
    assert len(set(rows["country"].to_pylist())) == 4
    # every file under data/, as the blobs of no snapshot: said explicitly
    anyway = run(str(tmp_path / "all.puffin"), "--from-parquet", f"{root}/data/*.parquet",
                 "--table", str(root), "--snapshot", "none", "--json")
    assert anyway.exit_code == 0, anyway.output
    assert [(b["ndv"], b["metadata"]["snapshot-id"], b["metadata"]["sequence-number"])
            for b in json.loads(anyway.stdout)["blobs"]] == [(3000, -1, -1), (5, -1, -1)]


def test_from_parquet_table_refuses_live_files_with_deleted_rows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tables.synthetic import dv_table

    root = tmp_path / "t"
    dv_table(root, snapshots=1, dvs_per_snapshot=1, carry=True).finish()
    data = root / "data" / "part=0" / "s1-f0.parquet"
    data.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64())}), data)
    code, _, stderr = run_main(capsys, str(tmp_path / "o.puffin"), "--from-parquet",
                               f"{root}/data/*/*.parquet", "--table", str(root))
    assert code == 1
    assert stderr == (
        f"puffin: error: 1 of the live data file(s) of snapshot 1001 have rows it deletes "
        "(deletion vectors, position or equality deletes) that --from-parquet does not apply "
        f"({data}); `puffin stats compute {root} --snapshot 1001` computes a snapshot's "
        "statistics; --snapshot none writes blobs that claim no snapshot\n")


