"""``puffin scan``: the validation of `puffin validate`, run on Spark executors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tiers import needs

from puffin_cli.analysis.validate import validate_file
from puffin_cli.cli.main import cli
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.render.jsonout import to_jsonable
from puffin_cli.spark.scan import scan
from puffin_cli.storage import FileIO


@pytest.fixture(scope="module")
@needs("spark")
def spark() -> Any:
    from puffin_cli.spark.session import get_session

    return get_session("local[2]")


def make_tree(root: Path) -> list[Path]:
    """Three good files in nested directories, one truncated, one with a bad reserved flag,
    and a file that is not Puffin (skipped by discovery)."""
    files = []
    for index, sub in enumerate(("a", "a/b", "c")):
        directory = root / sub
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"f{index}.puffin"
        with PuffinWriter(path) as writer:
            writer.add_blob("some-blob", b"x" * (index + 1), fields=[index + 1])
        files.append(path)
    truncated = root / "c" / "truncated.puffin"
    truncated.write_bytes(files[0].read_bytes()[:-5])
    flagged = root / "a" / "flag.stats"
    data = bytearray(files[1].read_bytes())
    data[-6] |= 0x80  # a reserved flag bit
    flagged.write_bytes(bytes(data))
    (root / "notes.txt").write_text("not puffin")
    return sorted([*files, truncated, flagged])


def test_spark_scan_equals_validate(tmp_path: Path, spark: Any) -> None:
    files = make_tree(tmp_path / "tree")
    out = tmp_path / "findings.jsonl"
    result = scan([str(f) for f in files], master="local[2]", max_blob_size=1 << 20,
                  output=str(out), fileio=FileIO())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    expected = [to_jsonable(validate_file(f, max_blob_size=1 << 20,
                                          fileio=FileIO())) for f in files]
    assert sorted(records, key=lambda r: r["path"]) == sorted(expected, key=lambda r: r["path"])
    assert (result.files, result.files_with_errors) == (5, 2)
    assert result.errors == sum(r["errors"] for r in expected) >= 2
    assert result.failed
    codes = dict(result.codes)
    assert sum(codes.values()) == sum(len(r["findings"]) for r in expected)
    local = scan([str(f) for f in files], max_blob_size=1 << 20, use_spark=False,
                 fileio=FileIO())
    assert (local.files, local.errors, local.warnings, local.codes) == \
        (result.files, result.errors, result.warnings, result.codes)


def test_cli_parquet_output_and_exit_code(tmp_path: Path, spark: Any) -> None:
    import pyarrow.parquet as pq

    files = make_tree(tmp_path / "tree")
    out = tmp_path / "findings.parquet"
    outcome = CliRunner().invoke(cli, ["scan", str(tmp_path / "tree"), "--spark", "--master",
                                       "local[2]", "--output", str(out)])
    assert outcome.exit_code == 1, outcome.output
    lines = outcome.output.splitlines()
    reports = [validate_file(f, fileio=FileIO()) for f in files]
    errors = sum(r.errors for r in reports)
    infos = sum(r.infos for r in reports)
    assert lines[:3] == ["failed (2):", f"  {tmp_path}/tree/a/flag.stats",
                         f"  {tmp_path}/tree/c/truncated.puffin"]
    assert lines[-1].startswith("scanned 5 Puffin files in ")
    assert lines[-1].endswith(f": 2 with errors, 0 with warnings; {errors} errors, 0 warnings, "
                              f"{infos} info")
    assert lines[-2] == f"findings written to {out} (parquet)"
    table = pq.read_table(out).to_pylist()
    assert sorted(r["path"] for r in table) == sorted(str(f) for f in files)
    by_path = {r["path"]: r for r in table}
    truncated = by_path[str(tmp_path / "tree" / "c" / "truncated.puffin")]
    report = validate_file(tmp_path / "tree" / "c" / "truncated.puffin", fileio=FileIO())
    assert truncated["errors"] == report.errors > 0
    assert [f["code"] for f in truncated["findings"]] == [f.code for f in report.findings]


def test_cli_files_from_and_json(tmp_path: Path, spark: Any) -> None:
    files = make_tree(tmp_path / "tree")
    good = [f for f in files if f.suffix == ".puffin" and f.stem[1:].isdigit()]
    listing = tmp_path / "list.txt"
    listing.write_text("".join(f"{f}\n" for f in good) + "\n")
    outcome = CliRunner().invoke(cli, ["scan", "--files-from", str(listing), "--spark",
                                       "--json"])
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.output)
    assert (doc["files"], doc["errors"], doc["files-with-errors"]) == (3, 0, 0)
    assert doc["output"] is None


def test_cli_names_the_failed_files_and_takes_validates_ci_options(tmp_path: Path) -> None:
    files = make_tree(tmp_path / "tree")
    warned = tmp_path / "tree" / "lz4.puffin"
    warned.write_bytes((Path(__file__).parents[1] / "samples" / "lz4-footer.puffin").read_bytes())
    truncated, flagged = str(files[-1]), str(tmp_path / "tree" / "a" / "flag.stats")
    outcome = CliRunner().invoke(cli, ["scan", str(tmp_path / "tree")])
    assert outcome.exit_code == 1
    lines = outcome.stdout.splitlines()
    assert lines[:3] == ["failed (2):", f"  {flagged}", f"  {truncated}"]
    assert lines[-1].startswith("scanned 6 Puffin files in ")
    assert "(1 files/s)" not in outcome.stdout
    strict = CliRunner().invoke(cli, ["scan", "--strict", "--json", str(warned)])
    assert strict.exit_code == 1
    doc = json.loads(strict.stdout)
    assert (doc["strict"], doc["files-failed"], [r["path"] for r in doc["failures"]]) == \
        (True, 1, [str(warned)])
    assert CliRunner().invoke(cli, ["scan", "-q", str(warned)]).exit_code == 0
    github = CliRunner().invoke(cli, ["scan", "--github", str(tmp_path / "tree")])
    assert github.exit_code == 1
    annotations = github.stdout.splitlines()
    assert annotations[0].startswith(f"::error file={flagged},title=")
    assert any(a.startswith(f"::error file={truncated},title=") for a in annotations)
    assert not any(str(warned) in a for a in annotations)  # it did not fail
    assert annotations[-1].startswith("scanned 6 Puffin files in ")
    one = CliRunner().invoke(cli, ["scan", str(files[0])])
    assert one.stdout.splitlines()[-1].startswith("scanned 1 Puffin file in ")


def test_cli_needs_a_path(tmp_path: Path) -> None:
    outcome = CliRunner().invoke(cli, ["scan", "--spark"])
    assert outcome.exit_code == 2
    assert "give a PATH or --files-from FILE" in outcome.output
