"""``stats compute`` over several tables in one run, its ``--dry-run`` (no Spark), and what it
leaves in a table: the other columns' blobs kept, no file without ``--commit``, a commit that
cannot succeed refused before any work. Tables: the Spark-built ones of tests/tables."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tables.fixtures import spark_tables, table_dir  # noqa: F401
from tiers import needs

from puffin_cli.analysis.table.metadata import current_metadata_file, load_metadata
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

ROOT = Path(__file__).resolve().parents[1]
# Runs the CLI and says whether pyspark was imported (the last line of stdout).
NO_SPARK = ("import sys\nfrom puffin_cli.cli.main import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit as e:\n    code = e.code\nprint('pyspark' in sys.modules)\n"
            "sys.exit(code)\n")


def copy(tables: Path, name: str, tmp_path: Path, as_name: str | None = None) -> Path:
    target = tmp_path / "db" / (as_name or name)
    shutil.copytree(table_dir(tables, name), target)
    return target


def listing(table: Path) -> list[str]:
    return sorted(p.name for p in (table / "metadata").iterdir())


def run_no_spark(*args: str, cwd: Path) -> tuple[int, str, str, bool]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", NO_SPARK, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    *out, imported = done.stdout.splitlines()
    return done.returncode, "\n".join(out), done.stderr, imported == "True"


def test_dry_run_plans_every_table_from_metadata_without_spark(spark_tables: Path,  # noqa: F811
                                                               tmp_path: Path) -> None:
    tables = [copy(spark_tables, n, tmp_path) for n in ("stats_v1", "stats_v2", "dv_v3")]
    before = [listing(t) for t in tables]
    code, out, err, imported = run_no_spark("stats", "compute", *map(str, tables),
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    assert doc["command"] == "stats compute" and doc["dry-run"] is True
    plans = {t["table"]: t for t in doc["tables"]}
    assert list(plans) == ["stats_v1", "stats_v2", "dv_v3"]
    for outcome in plans.values():
        assert outcome["status"] == "planned" and outcome["error"] is None
    dv = plans["dv_v3"]["plan"]
    # Iceberg's statistics of the current snapshot cover id and part: Spark uses that file
    assert dv["spark-uses"].endswith(".stats")
    modes = {c["name"]: c["mode"] for c in dv["columns"]}
    assert modes["id"] == modes["part"] == "fresh" and modes["name"] == "full"
    assert (dv["mode"], dv["files-to-read"], dv["data-files"]) == ("full", 10, 10)
    assert dv["rows-to-read"] == dv["rows"] > 0
    assert doc["summary"] == {**doc["summary"], "tables": 3, "planned": 3, "failed": 0,
                              "spark-started": False}
    assert [listing(t) for t in tables] == before
    assert list(tmp_path.glob("*.stats")) == []
    code, out, _err, imported = run_no_spark("stats", "compute", str(tables[2]), "--dry-run",
                                             "--columns", "id,part", cwd=tmp_path)
    assert (code, imported) == (0, False)
    assert out.splitlines()[0].startswith("dv_v3: snapshot ")
    assert "fresh; Spark uses: " in out.splitlines()[0]
    assert out.splitlines()[-1] == "plan for 1 table: 1 fresh; nothing computed, no Spark started"


def test_commit_to_a_catalog_named_table_by_path_fails_before_any_work(
        spark_tables: Path, tmp_path: Path) -> None:  # noqa: F811
    """Metadata named as a catalog names it (<N>-<uuid>.metadata.json, as the SQL catalog
    writes it): only the catalog may commit; refused in one line naming --catalog, before
    Spark starts, and nothing is written."""
    table = copy(spark_tables, "stats_v2", tmp_path)
    current = Path(current_metadata_file(table, fileio=FileIO()))
    renamed = current.with_name("00009-5d1c9f0e-aaaa-4bbb-8ccc-000000000001.metadata.json")
    for f in (table / "metadata").glob("v*.metadata.json"):
        f.unlink() if f != current else f.rename(renamed)
    (table / "metadata" / "version-hint.text").unlink()
    before = listing(table)
    code, out, err, imported = run_no_spark("stats", "compute", str(renamed), "--commit",
                                            cwd=tmp_path)
    assert (code, out, imported) == (1, "", False)
    assert err.count("\n") == 1 and "--catalog NAME NAMESPACE.TABLE" in err
    assert listing(table) == before


@pytest.fixture(scope="module")
@needs("spark")
def spark() -> Any:
    from puffin_cli.spark.session import get_session

    return get_session("local[2]")


def blobs(path: Path | str) -> dict[int, tuple[Any, bytes]]:
    with PuffinReader(path) as reader:
        return {b.fields[0]: (b, reader.read_raw(b)) for b in reader.metadata.blobs}


def test_columns_keep_the_other_blobs_and_no_file_in_the_table_without_commit(
        spark_tables: Path, spark: Any, tmp_path: Path) -> None:  # noqa: F811
    from puffin_cli.cli.main import cli

    table = copy(spark_tables, "dv_v3", tmp_path)
    metadata = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    icebergs = next(s for s in metadata.statistics
                    if s.snapshot_id == metadata.current_snapshot_id)
    theirs = blobs(table / "metadata" / Path(icebergs.path).name)
    assert sorted(theirs) == [1, 8]  # id, part
    before = listing(table)
    out = tmp_path / "out.stats"
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "id,name",
                                       "--master", "local[2]", "-q", "-o", str(out), "--json"])
    assert outcome.exit_code == 0, outcome.output
    doc = json.loads(outcome.stdout)
    assert listing(table) == before  # nothing in the table
    assert (doc["statistics-path"], doc["in-table"]) == (str(out), False)
    assert [(o["name"], o["kept"], o["reason"]) for o in doc["other-columns"]] == \
        [("part", True, None)]
    ours = blobs(out)
    assert sorted(ours) == [1, 2, 8]
    assert ours[8][1] == theirs[8][1]  # copied as stored
    assert ours[8][0].properties == theirs[8][0].properties
    # human view: kept named; the file's place and that no engine sees it
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "id,name",
                                       "--master", "local[2]", "--commit"])
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.output.splitlines()
    assert "  kept part (apache-datasketches-theta-v1, ndv 7)" in lines
    assert any(line.endswith("1 kept, 0 dropped") for line in lines)
    after = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    entry = next(s for s in after.statistics if s.snapshot_id == after.current_snapshot_id)
    assert sorted(f for b in entry.blobs for f in b.fields) == [1, 2, 8]
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(table), "--columns", "name",
                                       "--full", "--master", "local[2]",
                                       "-o", str(tmp_path / "b.stats")])
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.output.splitlines()
    assert lines[-2] == ("not registered in the table: no engine uses it until it is "
                         "committed (--commit)")
    # the other columns: not in this file, and the command that gives a file with all
    assert lines[-1].startswith("the new file has no statistics of ")
    assert lines[-1].endswith(f"`puffin stats compute {table}` adds them")


def test_one_run_over_several_tables_one_broken(spark_tables: Path, spark: Any,  # noqa: F811
                                                tmp_path: Path) -> None:
    """One broken table (its manifest list is gone) among good ones: exit 1, the good ones
    computed and committed, one Spark session, a summary."""
    from puffin_cli.cli.main import cli

    good = [copy(spark_tables, n, tmp_path) for n in ("stats_v1", "stats_v2")]
    broken = copy(spark_tables, "stats_v2", tmp_path, "broken")
    metadata = load_metadata(current_metadata_file(broken, fileio=FileIO()), fileio=FileIO())
    current = next(s for s in metadata.snapshots if s.snapshot_id == metadata.current_snapshot_id)
    (broken / "metadata" / Path(current.manifest_list).name).unlink()
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(good[0]), str(broken),
                                       str(good[1]), "--commit", "--full", "--master",
                                       "local[2]", "--json", "-q"])
    assert outcome.exit_code == 1, outcome.output
    doc = json.loads(outcome.stdout)
    status = {t["table"]: t["status"] for t in doc["tables"]}
    assert status == {"stats_v1": "computed", "broken": "failed", "stats_v2": "computed"}
    failed = next(t for t in doc["tables"] if t["table"] == "broken")
    assert failed["error"]["message"].count("\n") == 0 and failed["result"] is None
    assert doc["summary"] == {**doc["summary"], "tables": 3, "computed": 2, "failed": 1,
                              "spark-started": True}
    for table in good:
        after = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
        entry = next(s for s in after.statistics if s.snapshot_id == after.current_snapshot_id)
        assert entry.path.rsplit("/", 1)[-1] in listing(table)
    # the human view: one line per table, then the summary
    outcome = CliRunner().invoke(cli, ["stats", "compute", str(good[0]), str(broken),
                                       "--commit", "--master", "local[2]"])
    assert outcome.exit_code == 1
    lines = outcome.output.splitlines()
    assert lines[0].startswith("stats_v1: snapshot ") and "fresh, left as it is" in lines[0]
    assert lines[1].startswith("broken: failed: ")
    assert lines[-1].startswith("2 tables: 0 computed, 1 fresh, 1 failed;")
