"""The broken tables ``puffin repair`` heals (issue 20), made by Iceberg Java itself
(tests/interop/spark_scripts/broken_tables.py): each is broken the way the engines say
(Iceberg Java, the judge; pyiceberg 0.12), ``puffin table`` reports what a repair would cover,
and a fresh copy of each (tests/interop/broken.py) is a table of its own that Java reads as it
read the original."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from interop.broken import (  # noqa: F401  (fixtures)
    DAY,
    NAMES,
    BrokenTable,
    broken_table_fixture,
    broken_tables_fixture,
    java_judge_fixture,
)
from interop.fixtures import java_oracle_fixture  # noqa: F401
from interop.judge import JavaJudge
from interop.oracle import JavaOracle

from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO

Make = Callable[[str], BrokenTable]


def _table(table: BrokenTable) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["table", "--json", "--all-snapshots", str(table.root)])
    (doc,) = json.loads(result.stdout)["tables"]
    return result.exit_code, doc


def _findings(doc: dict[str, Any], code: str) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["code"] == code]


def _java_ids(report: dict[str, Any]) -> list[int]:
    assert report["planning-error"] is None and report["read-error"] is None, report
    return [row[0] for row in report["rows"]]


def _pyiceberg_ids(table: BrokenTable) -> list[int]:
    from pyiceberg.table import StaticTable

    static = StaticTable.from_metadata(current_metadata_file(str(table.root), fileio=FileIO()))
    return sorted(static.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist())


@pytest.mark.parametrize("name", NAMES)
def test_a_copy_is_a_table_of_its_own_that_java_reads_as_the_original(
        broken_table: Make, java_judge: JavaJudge, name: str) -> None:
    table = broken_table(name)
    for path in table.root.rglob("*"):  # no file names the original (in the cache)
        assert path.is_dir() or b"/broken-tables/" not in path.read_bytes(), path
    report = java_judge.reads(table.root)
    assert report["location"] == str(table.root)
    assert _stable(report) == _stable(table.java)


def _stable(report: dict[str, Any]) -> dict[str, Any]:
    """The report without the order in which Java names two DVs of one data file (it
    varies from run to run)."""
    out = dict(report)
    for key in ("planning-error", "read-error"):
        if out[key] is not None:
            out[key] = out[key].split(": DV{")[0]
    return out


def test_two_live_dvs_for_one_data_file_fail_every_java_read(broken_table: Make) -> None:
    table = broken_table("dup_dv")
    built, java = table.built, table.java
    assert "Can't index multiple DVs for " + built["duplicated"] in java["planning-error"]
    assert "Can't index multiple DVs" in java["read-error"] and java["rows"] is None
    for dv in built["dvs"]:  # Java names both
        assert f"location={dv['path']}, offset={dv['offset']}" in java["planning-error"]
    first, second = built["dvs"]
    assert first["path"] != second["path"]
    assert built["shared-with"]  # the first Puffin file holds other data files' DVs too
    # pyiceberg applies both: the union of their deletes, what a repair must leave
    assert _pyiceberg_ids(table) == built["expected-ids"]
    code, doc = _table(table)
    assert code == 1
    (duplicate,) = _findings(doc, "table.dv.duplicate")
    assert duplicate["severity"] == "error"
    assert duplicate["path"] == built["duplicated"]
    assert duplicate["detail"] == {"kind": "duplicate", "count": 2}
    assert duplicate["files"][0] == {"content": "data", "path": built["duplicated"],
                                     "offset": None, "length": None}
    assert sorted((f["path"], f["offset"], f["length"]) for f in duplicate["files"][1:]) == \
        sorted((dv["path"], dv["offset"], dv["length"]) for dv in built["dvs"])
    assert {f["code"] for f in doc["findings"] if f["severity"] != "info"} == \
        {"table.dv.duplicate"}


def test_deleted_rows_of_two_dvs_sharing_positions_are_what_pyiceberg_deletes(
        broken_table: Make) -> None:
    """The two DVs of ``dup_dv`` share positions (ids divisible by 35): the table's deleted
    rows are the union's, the rows pyiceberg no longer reads, in the chart's snapshot too."""
    table = broken_table("dup_dv")
    built = table.built
    low = built["data-files"].index(built["duplicated"]) * 100
    assert [i for i in range(low, low + 100) if i % 35 == 0]  # deleted by both DVs
    read = _pyiceberg_ids(table)
    assert read == built["expected-ids"]
    _code, doc = _table(table)
    current = next(s for s in doc["snapshots"] if s["current"])
    assert current["totals"]["deleted-rows"] == 300 - len(read)
    assert current["totals"]["data-rows"] == 300


def test_bare_dv_blobs_read_in_java_but_not_as_puffin_nor_in_pyiceberg(
        broken_table: Make, java_oracle: JavaOracle) -> None:
    table = broken_table("bare_dv")
    built, java = table.built, table.java
    assert _java_ids(java) == built["expected-ids"]
    planned = {t["data-file"]: t["deletes"] for t in java["tasks"]}
    for bare in built["bare"]:
        assert planned[bare["referenced-data-file"]] == [dict(bare, format="puffin")]
        assert bare["offset"] == 0 and table.file(bare["path"]).stat().st_size == bare["length"]
        read = java_oracle.read(table.file(bare["path"]))
        assert read["java_accepted"] is False and read["java_errors"]
    with pytest.raises(ValueError, match="Incorrect magic bytes"):
        _pyiceberg_ids(table)
    code, doc = _table(table)
    found = _findings(doc, "table.dv.container")
    assert sorted(f["path"] for f in found) == sorted(b["path"] for b in built["bare"])
    assert all(f["detail"] == {"kind": "container", "container": "bare-dv", "problem": None}
               for f in found)
    # an error (the spec stores DVs in Puffin files); nothing else is wrong
    assert {f["severity"] for f in found} == {"error"}
    assert (code, doc["errors"]) == (1, len(found))


def test_a_dv_naming_a_moved_data_file_loses_deletes_in_pyiceberg_only(
        broken_table: Make) -> None:
    table = broken_table("moved_dv")
    built, java = table.built, table.java
    assert _java_ids(java) == built["expected-ids"]
    moved_files = {dv["referenced-data-file"] for dv in built["moved"]}
    rows = {row[0]: row[1] for row in java["rows"]}
    resurrected = sorted(i for i in range(300) if i % 7 == 0
                         and built["data-files"][i // 100] in moved_files)
    assert resurrected and not set(resurrected) & set(rows)
    assert _pyiceberg_ids(table) == sorted(built["expected-ids"] + resurrected)
    code, doc = _table(table)
    assert code == 1
    found = _findings(doc, "table.dv.referenced-file")
    assert sorted(next(r["path"] for r in f["files"] if r["content"] == "data")
                  for f in found) == sorted(moved_files)
    for f in found:
        detail = f["detail"]
        assert (detail["key"], detail["source"]) == ("referenced_data_file", "blob")
        assert detail["actual"] == built["old-location"] + \
            detail["expected"][len(str(table.root)):]
    assert {f["code"] for f in doc["findings"] if f["severity"] != "info"} == \
        {"table.dv.referenced-file"}


def test_wrong_statistics_entries_in_java_and_puffin_table(broken_table: Make) -> None:
    table = broken_table("bad_stats")
    built, java = table.built, table.java
    assert _java_ids(java) == built["expected-ids"]
    stats = {e["path"]: e for e in java["statistics"]}
    paths = built["statistics"]
    assert "Cannot seek after EOF" in stats[paths["size"]]["error"]
    assert stats[paths["footer-size"]]["error"] is not None
    assert "FileNotFound" in stats[paths["missing"]]["error"]
    unknown = stats[paths["unknown-snapshot"]]
    assert (unknown["snapshot-exists"], unknown["error"]) == (False, None)  # Java accepts it
    assert unknown["snapshot-id"] == built["unknown-snapshot-id"]
    fine = stats[paths["fine"]]
    assert fine["error"] is None and fine["blobs-read"] == 3
    partition = {e["path"]: e for e in java["partition-statistics"]}
    assert partition[built["partition-statistics"]["missing"]]["error"] is not None
    assert partition[built["partition-statistics"]["fine"]]["rows-read"] == 3
    code, doc = _table(table)
    assert code == 1
    by_path = {(f["code"], f["path"]) for f in doc["findings"] if f["severity"] == "error"}
    assert by_path == {("table.stats.size", paths["size"]),
                       ("table.stats.footer-size", paths["footer-size"]),
                       ("table.stats.missing", paths["missing"]),
                       ("table.stats.snapshot", paths["unknown-snapshot"]),
                       ("table.stats.missing", built["partition-statistics"]["missing"])}
    (partition_missing,) = [f for f in doc["findings"]
                            if f["path"] == built["partition-statistics"]["missing"]]
    assert partition_missing["files"][0]["content"] == "partition-statistics"


def test_orphans_carry_the_ages_the_copy_gave_them(broken_table: Make) -> None:
    before = time.time()
    table = broken_table("orphans")
    assert _java_ids(table.java) == table.built["expected-ids"]
    code, doc = _table(table)
    assert (code, doc["errors"]) == (0, 0)
    found = {f["local-path"] or f["path"]: f for f in _findings(doc, "table.orphan")}
    expected = {str(table.root / relative): days for relative, days in table.orphans.items()}
    assert set(found) == set(expected) == set(doc["orphans"])
    assert sorted(expected.values()) == [0.05, 1.0, 5.0, 10.0, 30.0]
    for path, days in expected.items():
        modified = found[path]["detail"]["modified"]
        assert abs(modified - (before - days * DAY)) < 600
        assert found[path]["detail"]["size"] == Path(path).stat().st_size
