"""The replay of Iceberg's task groups on tables of several layouts, against Iceberg 1.10.2
itself: the tables of tests/interop/spark_scripts/stats_tables.py (``wide_v2`` and the
``layout_*`` tables: data files per INSERT, delete files attached one, two or none per data
file, a file-scoped and a partition-scoped one, split properties, the session's parallelism),
each with the task groups Iceberg's Spark scan planned in the session that ran its
``compute_table_stats``, and that call's statistics file.

Two checks per layout, so that a layout the replay does not model cannot pass by chance: the
groups planned here are Iceberg's, split for split (the sketch bytes alone can agree for other
groups: ``m``'s sketch takes its theta from one task), and the sketches of those groups are
Iceberg's, byte for byte, ``m`` in estimation mode (where the groups decide the bytes); and
the layout's group sizes the same in every order of its data manifests (so that no build passes
or fails by the order their random names give). On ``groups_v2``, whose append regroups the
base's tasks: exact columns within the nominal entries union to Iceberg's target sketch, and
``stats compute`` refreshes them incrementally (the estimation-mode column in full, its reason
said once), every blob Iceberg's.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import chain, groupby, permutations
from pathlib import Path
from typing import Any

import pytest
from stats_compute import SKETCHERS
from test_stats_spark import (  # noqa: F401  (stats_tables: session fixture)
    copy_table,
    iceberg_statistics,
    read_blobs,
    stats_tables,
)

from puffin_cli.analysis.stats import steps
from puffin_cli.analysis.stats.task_groups import plan_task_groups
from puffin_cli.analysis.table.loading import Table
from puffin_cli.storage import FileIO

# layout -> the number of data files in each of Iceberg's tasks, and the delete files attached
# to each data file: what the build is meant to give (a build giving another layout fails here)
LAYOUTS: dict[str, tuple[list[int], set[int]]] = {
    "wide_v2": ([2, 2, 2, 2], {1}),  # 8 MiB a file (open cost 4 MiB x 2)
    "layout_1_file": ([2, 2], {1}),  # each task holds files of two INSERTs (manifests)
    "layout_2_none": ([4, 4], {0}),
    # 8, 8 and 4 MiB in every INSERT: 8+8 and 4+8+4 MiB tasks, whatever the manifests' order
    "layout_3_some": ([3, 3, 2, 2, 2], {0, 1}),
    "layout_2_two": ([1] * 8, {2}),  # a file-scoped and a partition-scoped delete file
    "layout_2_cost": ([8], {1}),  # open cost 1 MiB, lookback 2, parallelism 8
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_layout_groups_and_sketches_are_icebergs(
        name: str, stats_tables: Path, tmp_path: Path) -> None:  # noqa: F811
    table = copy_table(stats_tables, name, tmp_path)
    doc: dict[str, Any] = json.loads((stats_tables / "tables.json").read_text())[name]
    plan = steps.plan_statistics(Table.load(table, fileio=FileIO()), None, None)
    groups = plan_task_groups(plan, doc["parallelism"])
    ours = [[[s.file.location, s.start, s.length] for s in g.splits] for g in groups]
    assert ours == doc["groups"]
    sizes, attached = LAYOUTS[name]
    assert sorted((len(g) for g in ours), reverse=True) == sizes
    assert {len(f.position_deletes) for f in plan.data_files} == attached
    # the sizes are the layout's, not the build's: in every order of the data manifests (one
    # per INSERT; Iceberg's order is their random names', manifest_order.py) they are the same
    inserts = [tuple(files) for _, files in groupby(plan.data_files,
                                                   key=lambda f: f.sequence_number)]
    assert len(inserts) == 4
    for order in permutations(inserts):
        other = plan_task_groups(replace(plan, data_files=tuple(chain(*order))),
                                 doc["parallelism"])
        assert sorted((len(g.splits) for g in other), reverse=True) == sizes, order

    sketches = steps.sketch_groups(plan, groups)
    assert sketches.rows == doc["live-rows"]
    _, iceberg = iceberg_statistics(table)
    by_name = {c.name: (c, s) for c, s in zip(plan.columns, sketches.sketches, strict=True)}
    assert sorted(iceberg) == sorted(c.field_id for c, _ in by_name.values())
    for column, sketch in by_name.values():
        assert sketch.to_bytes() == iceberg[column.field_id][1], column.name
    assert by_name["m"][1].theta_long < 2**63 - 1  # estimation mode: the groups matter


def test_exact_columns_union_to_icebergs_sketch_though_the_groups_differ(
        stats_tables: Path, tmp_path: Path) -> None:  # noqa: F811
    """groups_v2: the append's file shares Iceberg's one target task with the base's two files.
    The premise of issue 28 §2, by hand: for the columns whose base sketch is exact and whose
    base retained entries plus the new rows stay within the nominal 4,096 (city, n), the base
    sketch unioned with the new file's is Iceberg's target sketch byte for byte. The decision
    takes every exact column (city, n, n4) as incremental on the condition that its union stay
    exact, and id, in estimation mode, as full for the groups' reason."""
    from puffin_cli.analysis.stats.incremental import FULL, INCREMENTAL, decide_refresh
    from puffin_cli.blobs.theta.compact import MAX_THETA, compact_from_bytes
    from puffin_cli.blobs.theta.sketches import NOMINAL_ENTRIES, ThetaAccumulator

    table = copy_table(stats_tables, "groups_v2", tmp_path)
    doc = json.loads((stats_tables / "tables.json").read_text())["groups_v2"]
    loaded = Table.load(table, fileio=FileIO())
    decision = decide_refresh(loaded, doc["target"], None, parallelism=2)  # the build's local[2]
    assert {c.name: (c.mode, c.base_snapshot_id) for c in decision.columns} == {
        "id": (FULL, None), "city": (INCREMENTAL, doc["base"]),
        "n": (INCREMENTAL, doc["base"]), "n4": (INCREMENTAL, doc["base"])}
    assert decision.columns[0].reason == GROUPS_REASON
    assert {c.if_inexact for c in decision.columns[1:]} == {GROUPS_REASON.replace(
        "the base's sketch is an estimate",
        "the base's sketch with the new rows' holds more than 4,096 hashes (an estimate)")}

    plan = steps.plan_statistics(loaded, doc["target"], None)
    base_files = {f.location for f in steps.plan_statistics(loaded, doc["base"], None).data_files}
    new_plan = replace(plan, data_files=tuple(f for f in plan.data_files
                                              if f.location not in base_files))
    new_rows = sum(f.record_count for f in new_plan.data_files)
    new = steps.sketch_groups(new_plan, plan_task_groups(new_plan, 2))
    [base_entry] = [s for s in loaded.metadata.statistics if s.snapshot_id == doc["base"]]
    base = read_blobs(table / "metadata" / Path(base_entry.path).name)
    oracle = read_blobs(table / "metadata" / doc["oracle"])
    within = set()
    for column, sketch in zip(plan.columns, new.sketches, strict=True):
        base_sketch = compact_from_bytes(base[column.field_id][1])
        if (base_sketch.theta_long == MAX_THETA
                and base_sketch.retained + new_rows <= NOMINAL_ENTRIES):
            within.add(column.name)
            union = ThetaAccumulator()
            union.add(base_sketch)
            union.add(sketch)
            assert union.result().to_bytes() == oracle[column.field_id][1], column.name
    assert within == {"city", "n"}


# groups_v2's id: full because its new rows share the base's Spark task (in estimation mode)
GROUPS_REASON = (
    "new rows share a Spark task with older files, so Iceberg would sketch them differently "
    "(1 of the base's 1 Spark task reads other splits at the target (1 task)), and the base's "
    "sketch is an estimate; setting the table property read.split.open-file-cost=16777216 "
    "(this snapshot's split size) gives every file a Spark task of its own (run once with "
    "--full after setting it)")


@pytest.mark.parametrize("sketcher", SKETCHERS)
def test_a_refresh_whose_groups_differ_is_icebergs_full_file(
        stats_tables: Path, tmp_path: Path, sketcher: str) -> None:  # noqa: F811
    """groups_v2 refreshed by the pipeline, from either sketcher: city, n and n4 (4,000 values
    in the base, the new rows' among them: the union stays exact) incremental, id full; every
    blob byte for byte Iceberg Java's compute_table_stats of the target. With --columns of the
    exact ones the refresh is incremental and reads the new file alone."""
    from stats_compute import compute_stats

    table = copy_table(stats_tables, "groups_v2", tmp_path)
    doc = json.loads((stats_tables / "tables.json").read_text())["groups_v2"]
    oracle = read_blobs(table / "metadata" / doc["oracle"])
    result = compute_stats(table, sketcher=sketcher, output=str(tmp_path / "all.stats"))
    assert {c.name: c.mode for c in result.columns} == {
        "id": "full", "city": "incremental", "n": "incremental", "n4": "incremental"}
    assert (result.mode, result.files_read) == ("full", 3)
    ours = read_blobs(tmp_path / "all.stats")
    assert sorted(ours) == sorted(oracle)
    for fid, (_, data) in ours.items():
        assert data == oracle[fid][1], fid

    exact = compute_stats(table, sketcher=sketcher, output=str(tmp_path / "exact.stats"),
                          columns=["city", "n", "n4"])
    assert (exact.mode, exact.base_snapshot_id, exact.files_read, exact.rows_read) == (
        "incremental", doc["base"], 1, 300)
    assert all(c.exact for c in exact.columns)
    for fid, (_, data) in read_blobs(tmp_path / "exact.stats").items():
        assert data == oracle[fid][1], fid


def test_the_human_view_says_once_why_the_groups_make_a_column_full(
        stats_tables: Path, tmp_path: Path) -> None:  # noqa: F811
    """The run's and the plan's lines on groups_v2: the groups' reason once, for id alone, in a
    user's words with the table property that would change it; the exact columns' line."""
    from test_stats_batch import run_no_spark

    table = copy_table(stats_tables, "groups_v2", tmp_path)
    doc = json.loads((stats_tables / "tables.json").read_text())["groups_v2"]
    [base_entry] = [s for s in Table.load(table, fileio=FileIO()).metadata.statistics
                    if s.snapshot_id == doc["base"]]
    exact = (f"  incremental (city, n, n4): base snapshot {doc['base']} ({base_entry.path}) "
             "and 1 new task; exact sketches, the same for any Spark tasks while their union "
             "holds at most 4,096 hashes")
    code, out, err, imported = run_no_spark("stats", "compute", str(table), "-o",
                                            str(tmp_path / "out.stats"), "--master", "local[2]",
                                            cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    lines = out.splitlines()
    assert lines[1] == "full: read 3 data files, 6,300 live rows"
    assert lines[4:10] == [
        "  id             1  long                      6,303  estimate (4096 hashes)",
        "  city           2  string                       40  exact",
        "  n              3  int                       1,000  exact",
        "  n4             4  int                       4,000  exact",
        f"  full (id): {GROUPS_REASON}",
        exact]
    assert out.count("new rows share a Spark task") == 1
    code, out, err, imported = run_no_spark("stats", "compute", str(table), "--dry-run",
                                            "--master", "local[2]", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    assert out.splitlines()[1:3] == [f"  full (id): {GROUPS_REASON}", exact]
