"""The task planning a statistics file records (``puffin-cli.task-planning``): the split
properties and parallelism its sketches' task groups were planned with, and the refresh that
replays the base's groups with them rather than with the inputs in force now (docs/spark.md,
"Incremental refresh", rule 8). Tables: pyiceberg's, in a SQL catalog (test_catalog.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from test_catalog import invoke, spark, sql_catalog  # noqa: F401
from test_stats_batch import run_no_spark

from puffin_cli.analysis.stats import steps
from puffin_cli.analysis.stats.incremental import decide_refresh
from puffin_cli.analysis.stats.task_groups import (
    TASK_PLANNING_PROPERTY,
    SplitPlanning,
    TaskPlanning,
    plan_task_groups,
    split_planning,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

ROWS = 10_000  # distinct values per file: a task of two files is in estimation mode
LOCAL_2 = TaskPlanning(SplitPlanning(), 200)  # local[2]: max(2, 200 shuffle partitions)


def rows(start: int) -> pa.Table:
    return pa.table({"k": pa.array(range(start, start + ROWS), pa.int64())})


def two_files(catalog: Any, properties: dict[str, str] | None = None) -> Any:
    """db.sk: two appends of 10,000 distinct keys; with the default split size (16 MiB for a
    table this small at parallelism 200) both files are one Spark task."""
    table = catalog.create_table("db.sk", schema=rows(0).schema, properties=properties or {})
    table.append(rows(0))
    table.append(rows(ROWS))
    return table


def load() -> Table:
    return Table.load("db.sk", fileio=FileIO(), catalog="test")


def file_blobs(path: str | Path) -> tuple[dict[str, str], dict[int, tuple[str, bytes]]]:
    with PuffinReader(str(path)) as reader:
        return reader.metadata.properties, {
            b.fields[0]: (b.properties["ndv"], reader.read_blob(b))
            for b in reader.metadata.blobs}


def compute(*args: str) -> dict[str, Any]:
    outcome = invoke("stats", "compute", "--catalog", "test", "db.sk", "--master", "local[2]",
                     "--json", "-q", *args)
    assert outcome.exit_code == 0, outcome.output
    doc: dict[str, Any] = json.loads(outcome.stdout)
    return doc


def test_a_changed_split_size_since_the_base_means_full(
        sql_catalog: Any, spark: Any, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The base computed in one task of both files; then read.split.target-size 1024 (one
    task per file) and a third file. Replanned with today's size, the base's groups would be
    two of the target's three: incremental, from a sketch of a task Iceberg's full compute
    no longer has. Replayed as recorded, the base's groups are not the target's: full,
    saying why, and the same bytes as --full."""
    table = two_files(sql_catalog)
    base = compute("--commit")
    assert base["mode"] == "full"
    properties, _ = file_blobs(base["statistics-path"])
    assert properties[TASK_PLANNING_PROPERTY] == (
        '{"target-size":134217728,"open-file-cost":4194304,"lookback":10,"adaptive":true,'
        '"parallelism":200}')
    assert TaskPlanning.from_property(properties[TASK_PLANNING_PROPERTY]) == LOCAL_2
    with table.transaction() as tx:
        tx.set_properties({"read.split.target-size": "1024"})
    sql_catalog.load_table("db.sk").append(rows(2 * ROWS))
    # k is in estimation mode (20,000 values in the base): full, whatever the new rows
    reason = ("the older files are read in other Spark tasks than the base's, so Iceberg "
              "would sketch them differently (the base was computed with "
              "read.split.target-size 134217728, now 1024: 1 of the base's 1 Spark task reads "
              "other splits at the target (3 tasks)), and the base's sketch is an estimate")

    monkeypatch.chdir(tmp_path)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db.sk",
                                            "--dry-run", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    [planned] = json.loads(out)["tables"]
    assert (planned["plan"]["mode"], planned["plan"]["mode-reason"]) == ("full", reason)
    assert [c["reason"] for c in planned["plan"]["columns"]] == [reason]

    real = compute("-o", str(tmp_path / "real.stats"))
    # a small table: full, and in this process (the sketcher is chosen by size)
    assert (real["mode"], real["mode-reason"], real["in-process"]) == ("full", reason, True)
    forced = compute("--full", "-o", str(tmp_path / "full.stats"))
    real_properties, real_blobs = file_blobs(tmp_path / "real.stats")
    forced_properties, forced_blobs = file_blobs(tmp_path / "full.stats")
    assert forced["mode-reason"] == "--full"
    assert real_blobs == forced_blobs
    assert real_blobs[1][0] == "29851"
    # both record the inputs in force now, which their groups were planned with
    now = TaskPlanning(SplitPlanning(target_size=1024), 200)
    for recorded in (real_properties, forced_properties):
        assert TaskPlanning.from_property(recorded[TASK_PLANNING_PROPERTY]) == now


class Unreadable(TaskPlanning):
    """Inputs that a file records as text no reader can take."""

    def to_property(self) -> str:
        return '{"target-size": 1024'


def test_a_base_whose_recorded_planning_cannot_be_read_means_full(
        sql_catalog: Any) -> None:  # noqa: F811
    """Whatever the groups would be with today's inputs, the base's are unknown: full (an
    incremental refresh from it could be right only by chance)."""
    two_files(sql_catalog, {"read.split.target-size": "1024"})  # one task per file
    table = load()
    plan = steps.plan_statistics(table, None, None)
    planning = TaskPlanning(split_planning(plan), 200)
    for recorded, mode in ((planning, "incremental"), (Unreadable(planning.split, 200), "full")):
        sketches = steps.sketch_groups(plan, plan_task_groups(plan, 200))
        written = steps.write_statistics(plan, sketches, planning=recorded)
        steps.commit_statistics(plan, written)
        sql_catalog.load_table("db.sk").append(rows(2 * ROWS))  # appended: nothing fresh
        decision = decide_refresh(load(), None, None, parallelism=200)
        assert decision.mode == mode, decision.reason
        plan = steps.plan_statistics(load(), None, None)
    assert decision.reason == (
        f"statistics file {written.location} has a {TASK_PLANNING_PROPERTY} property that "
        "cannot be read (not JSON (Expecting ',' delimiter: line 1 column 21 (char 20))): the "
        "task groups of its sketches are unknown")


@pytest.mark.parametrize(("text", "why"), [
    ("[]", "not a JSON object"),
    ('{"target-size":0,"open-file-cost":0,"lookback":1,"parallelism":1,"adaptive":true}',
     "target-size is not an integer >= 1"),
    ('{"target-size":1,"open-file-cost":-1,"lookback":1,"parallelism":1,"adaptive":true}',
     "open-file-cost is not an integer >= 0"),
    ('{"target-size":1,"open-file-cost":0,"lookback":1.5,"parallelism":1,"adaptive":true}',
     "lookback is not an integer >= 1"),
    ('{"target-size":1,"open-file-cost":0,"lookback":1,"parallelism":true,"adaptive":true}',
     "parallelism is not an integer >= 1"),
    ('{"target-size":1,"open-file-cost":0,"lookback":1,"parallelism":1,"adaptive":"true"}',
     "adaptive is not true or false"),
])
def test_recorded_planning_is_checked(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="^" + why.replace("(", r"\(") + "$"):
        TaskPlanning.from_property(text)
    good = TaskPlanning(SplitPlanning(1, 1, 0, False), 7)
    assert TaskPlanning.from_property(good.to_property()) == good
    assert LOCAL_2.changes(good) == [
        "read.split.target-size 134217728, now 1", "read.split.open-file-cost 4194304, now 0",
        "read.split.planning-lookback 10, now 1",
        "read.split.adaptive-size.enabled true, now false",
        "the planning parallelism 200, now 7"]
