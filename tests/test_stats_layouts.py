"""The replay of Iceberg's task groups on tables of several layouts, against Iceberg 1.10.2
itself: the tables of tests/interop/spark_scripts/stats_tables.py (``wide_v2`` and the
``layout_*`` tables: data files per INSERT, delete files attached one, two or none per data
file, a file-scoped and a partition-scoped one, split properties, the session's parallelism),
each with the task groups Iceberg's Spark scan planned in the session that ran its
``compute_table_stats``, and that call's statistics file.

Two checks per layout, so that a layout the replay does not model cannot pass by chance: the
groups planned here are Iceberg's, split for split (the sketch bytes alone can agree for other
groups: ``m``'s sketch takes its theta from one task), and the sketches of those groups are
Iceberg's, byte for byte, ``m`` in estimation mode (where the groups decide the bytes).
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import chain, groupby, permutations
from pathlib import Path
from typing import Any

import pytest
from test_stats_spark import copy_table, iceberg_statistics, stats_tables  # noqa: F401  (session fixture)

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
