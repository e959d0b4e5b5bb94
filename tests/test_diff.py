"""``puffin diff A B``: two Puffin files compared blob by blob, matched by what each blob is
about; sketches and deletion vectors by what they mean where their bytes differ."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from interop.fixtures import java_oracle_fixture  # noqa: F401  (fixture `java_oracle`)
from interop.oracle import JavaOracle

from puffin_cli.blobs.deletion_vector import DV_MAGIC
from puffin_cli.cli.main import cli, main
from puffin_cli.format.reader import PuffinReader

DATA = "s3://bucket/t/data/"


def diff(*args: str) -> Result:
    return CliRunner().invoke(cli, ["diff", *args])


def diff_json(a: Path, b: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = diff("--json", *extra, str(a), str(b))
    return result.exit_code, json.loads(result.stdout)


def write(path: Path, blobs: list[dict[str, Any]], **spec: Any) -> Path:
    spec_file = path.with_suffix(".json")
    spec_file.write_text(json.dumps({"blobs": blobs, **spec}))
    result = CliRunner().invoke(cli, ["write", str(path), "--spec", str(spec_file)])
    assert result.exit_code == 0, result.output
    return path


def dv(name: str, positions: Any) -> dict[str, Any]:
    return {"dv": {"referenced-data-file": DATA + name, "positions": positions}}


def theta(field: int, values: list[int]) -> dict[str, Any]:
    return {"theta": {"iceberg-type": "long", "values": values}, "fields": [field],
            "snapshot-id": 5, "sequence-number": 2}


def raw(blob_type: str, fields: list[int], payload: bytes, **extra: Any) -> dict[str, Any]:
    return {"type": blob_type, "fields": fields, "compression": "none",
            "payload": {"base64": base64.b64encode(payload).decode()}, **extra}


def test_same_blobs_in_another_order_are_the_same(tmp_path: Path) -> None:
    blobs = [dv("a.parquet", "0,2,4,10-20"), theta(1, list(range(100))),
             dv("b.parquet", [7, 1 << 33]), theta(2, [1, 2, 3])]
    a = write(tmp_path / "a.puffin", blobs)
    b = write(tmp_path / "b.puffin", blobs[::-1])
    code, doc = diff_json(a, b)
    assert code == 0
    assert doc["schema-version"] == 1 and doc["command"] == "diff"
    assert doc["same"] is True and doc["footer"] == []
    assert [(x["status"], x["index-a"], x["index-b"], x["content"]) for x in doc["blobs"]] == \
        [("same", 0, 3, "identical"), ("same", 1, 2, "identical"),
         ("same", 2, 1, "identical"), ("same", 3, 0, "identical")]
    # where the blobs are is layout, shown, not a difference
    assert [c["key"] for c in doc["blobs"][0]["layout"]] == ["offset"]
    human = diff(str(a), str(b))
    assert human.exit_code == 0
    assert human.stdout.splitlines()[-1] == "the same: 4 blobs (4 same)"


def test_deletion_vectors_differ_by_positions(tmp_path: Path) -> None:
    a = write(tmp_path / "a.puffin", [dv("a.parquet", "0-99,200,300-310")])
    b = write(tmp_path / "b.puffin", [dv("a.parquet", "0-49,60-99,200,400,500-501")])
    code, doc = diff_json(a, b, "--limit", "1")
    assert code == 1 and doc["same"] is False
    (blob,) = doc["blobs"]
    assert blob["status"] == "different" and blob["content"] == "different"
    assert blob["referenced-data-file"] == DATA + "a.parquet"
    assert blob["positions"] == {
        "cardinality-a": 112, "cardinality-b": 94, "only-in-a": 21, "only-in-b": 3,
        "only-in-a-ranges": [[50, 59]], "only-in-b-ranges": [[400, 400]],
        "only-in-a-ranges-total": 2, "only-in-b-ranges-total": 2}
    assert {"key": "properties.cardinality", "a": "112", "b": "94"} in blob["metadata"]
    human = diff("--limit", "1", str(a), str(b)).stdout
    assert "positions  112 in A, 94 in B; 21 only in A, 3 only in B" in human
    assert "only in A  50-59 (first 1 of 2 ranges; --limit shows more)" in human
    assert human.splitlines()[-1] == "different: 1 blob (1 different)"


def test_blobs_of_one_file_only_and_file_properties(tmp_path: Path) -> None:
    a = write(tmp_path / "a.puffin", [dv("a.parquet", "1"), dv("b.parquet", "2")],
              properties={"created-by": "engine 1", "note": "x"})
    b = write(tmp_path / "b.puffin", [dv("a.parquet", "1"), dv("c.parquet", "2")],
              properties={"created-by": "engine 2"})
    code, doc = diff_json(a, b)
    assert code == 1
    assert doc["footer"] == [{"key": "properties.created-by", "a": "engine 1", "b": "engine 2"},
                             {"key": "properties.note", "a": "x", "b": None}]
    assert [(x["status"], x["referenced-data-file"], x["index-a"], x["index-b"])
            for x in doc["blobs"]] == [("same", DATA + "a.parquet", 0, 0),
                                       ("only-in-a", DATA + "b.parquet", 1, None),
                                       ("only-in-b", DATA + "c.parquet", None, 1)]


def _unordered_sketch(values: range) -> tuple[bytes, bytes, int]:
    """One sketch serialized ordered and unordered (other bytes, the same hashes), and its NDV."""
    import datasketches

    sketch = datasketches.update_theta_sketch()
    for value in values:
        sketch.update(value)
    ordered, unordered = sketch.compact(True), sketch.compact(False)
    assert ordered.serialize() != unordered.serialize()
    return ordered.serialize(), unordered.serialize(), int(ordered.get_estimate())


def _bare_dv(bitmap: Any) -> bytes:
    """A DV blob whose vector is CRoaring's own serialization."""
    body = DV_MAGIC + bitmap.serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def test_equal_sketches_and_positions_in_other_bytes_are_the_same(tmp_path: Path) -> None:
    from pyroaring import BitMap64

    ordered, unordered, ndv = _unordered_sketch(range(50))
    props = {"ndv": str(ndv)}
    # CRoaring writes key 1's bitmap alone; Iceberg Java (and puffin write) an empty key 0 too
    bitmap = BitMap64([(1 << 32) + 5])
    dv_props = {"referenced-data-file": DATA + "a.parquet", "cardinality": "1"}
    a = write(tmp_path / "a.puffin", [
        raw("apache-datasketches-theta-v1", [1], ordered, properties=props),
        raw("deletion-vector-v1", [2147483645], _bare_dv(bitmap), properties=dv_props)])
    b = write(tmp_path / "b.puffin", [
        raw("apache-datasketches-theta-v1", [1], unordered, properties=props),
        dv("a.parquet", [(1 << 32) + 5])])
    assert a.read_bytes() != b.read_bytes()
    code, doc = diff_json(a, b)
    assert code == 0, doc
    sketch, positions = doc["blobs"]
    assert (sketch["status"], sketch["content"]) == ("same", "equivalent")
    assert sketch["sketch"]["same-hashes"] is True
    assert sketch["sketch"]["ndv-a"] == sketch["sketch"]["ndv-b"] == 50
    assert (positions["status"], positions["content"]) == ("same", "equivalent")
    assert positions["positions"]["only-in-a"] == positions["positions"]["only-in-b"] == 0
    # one value more: NDV, retained entries and the hashes show it; so does the ndv property
    _, more, ndv_more = _unordered_sketch(range(51))
    c = write(tmp_path / "c.puffin", [
        raw("apache-datasketches-theta-v1", [1], more, properties={"ndv": str(ndv_more)})])
    code, doc = diff_json(a, c)
    assert code == 1
    sketch = doc["blobs"][0]
    assert sketch["status"] == "different" and sketch["content"] == "different"
    assert (sketch["sketch"]["ndv-a"], sketch["sketch"]["ndv-b"], sketch["sketch"]["retained-a"],
            sketch["sketch"]["retained-b"], sketch["sketch"]["only-in-a"],
            sketch["sketch"]["only-in-b"]) == (50, 51, 50, 51, 0, 1)
    assert sketch["metadata"] == [{"key": "properties.ndv", "a": "50", "b": "51"}]
    assert doc["blobs"][1]["status"] == "only-in-a"


def test_codec_is_blob_metadata_and_compared(tmp_path: Path) -> None:
    a = write(tmp_path / "a.puffin", [theta(1, [1, 2, 3])])
    b = write(tmp_path / "b.puffin", [{**theta(1, [1, 2, 3]), "compression": "none"}])
    code, doc = diff_json(a, b)
    assert code == 1
    assert doc["blobs"][0]["metadata"] == [{"key": "compression-codec", "a": "zstd",
                                            "b": None}]
    assert doc["blobs"][0]["content"] == "identical"  # decompressed


def test_huge_deletion_vectors_are_compared_by_ranges(tmp_path: Path) -> None:
    """Positions never become Python integers one by one: 2^31 positions per side."""
    a = write(tmp_path / "a.puffin", [dv("a.parquet", f"0-{(1 << 31) - 1}")])
    b = write(tmp_path / "b.puffin", [dv("a.parquet", f"1-{(1 << 31) - 1},{1 << 40}")])
    code, doc = diff_json(a, b)
    assert code == 1
    assert doc["blobs"][0]["positions"] == {
        "cardinality-a": 1 << 31, "cardinality-b": 1 << 31, "only-in-a": 1, "only-in-b": 1,
        "only-in-a-ranges": [[0, 0]], "only-in-b-ranges": [[1 << 40, 1 << 40]],
        "only-in-a-ranges-total": 1, "only-in-b-ranges-total": 1}


def test_usage_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = write(tmp_path / "a.puffin", [dv("a.parquet", "1")])
    assert diff(str(a)).exit_code == 2
    assert diff(str(a), str(a), str(a)).exit_code == 2
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(b"PFA1 not a footer")
    with pytest.raises(SystemExit) as caught:
        main(["diff", str(a), str(bad)])
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.puffin" in err and "footer" in err


# --------------------------------------------------------------------------------------------
# Against the files Iceberg Java writes for the same input (tests/interop/)


def test_ours_and_iceberg_javas_files_for_the_same_input_are_the_same(
        java_oracle: JavaOracle, tmp_path: Path) -> None:
    """DVs through Iceberg's ``BaseDVFileWriter`` (Spark's DELETE) and a Theta sketch built by
    Iceberg's ``ThetaSketchAgg`` written by its ``PuffinWriter``, against ``puffin write`` of
    the same positions and values (in another blob order): the same; one position more, and
    one value more, are the difference shown."""
    dvs = {DATA + "a.parquet": ([3, 9], [[100, 5000]]),
           DATA + "b.parquet": ([1 << 33], [[0, 70_000]]),
           DATA + "c.parquet": ([42], [])}
    java_dvs = tmp_path / "java-dvs.puffin"
    java_oracle.write({"dv-file-writer": True, "dvs": [
        {"referenced-data-file": f, "positions": p, "ranges": r}
        for f, (p, r) in dvs.items()]}, java_dvs)
    with PuffinReader(java_dvs) as reader:
        created_by = reader.metadata.properties["created-by"]
        assert created_by.startswith("Apache Iceberg")

    def ours(name: str, extra: dict[str, list[int]]) -> Path:
        blobs = [{"dv": {"referenced-data-file": f, "positions": [
            *p, *([s, e - 1] for s, e in r), *extra.get(f, [])]}}
            for f, (p, r) in reversed(dvs.items())]
        return write(tmp_path / name, blobs, **{"created-by": created_by})

    code, doc = diff_json(ours("ours-dvs.puffin", {}), java_dvs)
    assert code == 0, doc
    assert [b["status"] for b in doc["blobs"]] == ["same"] * 3
    code, doc = diff_json(ours("one-more.puffin", {DATA + "b.parquet": [80_000]}), java_dvs)
    assert code == 1
    changed = [b for b in doc["blobs"] if b["status"] != "same"]
    assert [(b["referenced-data-file"], b["positions"]["only-in-a"],
             b["positions"]["only-in-b"], b["positions"]["only-in-a-ranges"]) for b in changed] \
        == [(DATA + "b.parquet", 1, 0, [[80_000, 80_000]])]

    values = list(range(-500, 20_000, 3))
    serialized = java_oracle.serialize("long", [str(v) for v in values])
    sketch = tmp_path / "sketch.bin"
    built = java_oracle.theta_build_file([v for v in serialized if v is not None], sketch)
    assert built["theta"]["is_estimation_mode"]
    java_theta = tmp_path / "java-theta.puffin"
    java_oracle.write({"properties": {"created-by": "x"}, "blobs": [{
        "type": "apache-datasketches-theta-v1", "fields": [7], "snapshot-id": 11,
        "sequence-number": 3, "codec": "zstd", "payload-file": str(sketch),
        "properties": {"ndv": str(built["theta"]["estimate_long"])}}]}, java_theta)

    def our_theta(name: str, ours_values: list[int]) -> Path:
        return write(tmp_path / name, [{"theta": {"iceberg-type": "long", "values": ours_values},
                                        "fields": [7], "snapshot-id": 11,
                                        "sequence-number": 3}], **{"created-by": "x"})

    code, doc = diff_json(our_theta("ours-theta.puffin", values), java_theta)
    assert code == 0, doc
    assert doc["blobs"][0]["content"] == "identical"
    code, doc = diff_json(our_theta("more-theta.puffin", [*values, *range(0, 90, 3)]), java_theta)
    assert code == 1
    compared = doc["blobs"][0]["sketch"]
    assert compared["same-hashes"] is False
    # B's values are a subset of A's: below A's theta every hash of B is one of A's
    assert compared["only-in-a"] >= 1 and compared["only-in-b"] == 0
