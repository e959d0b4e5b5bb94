"""One scan of a snapshot's live files (:class:`LiveFiles`): the same DV rule for ``puffin table``
and ``puffin stats compute``, the changes between an ancestor and a later snapshot, and
``Table.ancestors`` (synthetic tables, no Spark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tables.synthetic import TableBuilder, data_entry, dv_entry

from puffin_cli.analysis.stats.plan import plan_snapshot, stats_snapshot
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO


def _dv_table(tmp_path: Path, *, duplicate: bool, dv_sequence: int | None) -> Path:
    """One data file (sequence 1) with a DV in snapshot 2 (a second one with ``duplicate``;
    the DV's data sequence number ``dv_sequence`` when given)."""
    table = TableBuilder(tmp_path / "t")
    data = table.uri("data/a.parquet")
    data_manifest = table.manifest([data_entry(data, 0, 100)], 0)
    table.snapshot([(data_manifest, 0, 1)])
    puffin, ((offset, length),) = table.puffin([(data, [1])])
    dvs = [dv_entry(table.uri(puffin), data, 0, offset, length, 1,
                    sequence_number=dv_sequence)] * (2 if duplicate else 1)
    table.snapshot([(data_manifest, 0, 1), (table.manifest(dvs, 1), 1, 2)])
    table.finish()
    return table.root


def _plan(root: Path) -> None:
    table = Table.load(root, fileio=FileIO())
    plan_snapshot(table, stats_snapshot(table, None), None)


def _table_errors(root: Path) -> list[str]:
    (report,) = analyze_path(root, fileio=FileIO()).tables
    return [f.code for f in report.findings if f.severity.name == "ERROR"]


def test_two_dvs_for_one_data_file_stop_stats_and_are_a_table_finding(tmp_path: Path) -> None:
    root = _dv_table(tmp_path, duplicate=True, dv_sequence=None)
    assert "table.dv.duplicate" in _table_errors(root)
    with pytest.raises(PuffinError) as caught:
        _plan(root)
    assert caught.value.code == "stats.dv"
    assert "2 deletion vectors for data file" in str(caught.value)
    assert "run `puffin table` to see the finding (table.dv.duplicate)" in str(caught.value)


def test_a_dv_older_than_its_data_file_stops_stats_and_is_a_table_finding(
        tmp_path: Path) -> None:
    # the DV's data sequence number 0 is below the data file's 1: Iceberg Java fails the scan
    root = _dv_table(tmp_path, duplicate=False, dv_sequence=0)
    assert _table_errors(root) == ["table.dv.sequence"]
    with pytest.raises(PuffinError) as caught:
        _plan(root)
    assert caught.value.code == "stats.dv"
    assert "has data sequence number 0, below the data file's 1" in str(caught.value)
    assert "(table.dv.sequence)" in str(caught.value)


def test_a_dv_as_new_as_its_data_file_applies(tmp_path: Path) -> None:
    root = _dv_table(tmp_path, duplicate=False, dv_sequence=1)
    assert _table_errors(root) == []
    table = Table.load(root, fileio=FileIO())
    plan = plan_snapshot(table, stats_snapshot(table, None), None)
    (data,) = plan.data_files
    assert data.deletion_vector is not None and data.deletion_vector.cardinality == 1


def test_changes_between_an_ancestor_and_a_later_snapshot(tmp_path: Path) -> None:
    table = TableBuilder(tmp_path / "t")
    a, b, c = (table.uri(f"data/{n}.parquet") for n in "abc")
    first = table.manifest([data_entry(a, 0, 10), data_entry(b, 0, 20)], 0)
    table.snapshot([(first, 0, 1)])
    # a manifest rewritten (b carried over as an existing entry), a removed, c added
    rewritten = table.manifest([data_entry(b, 0, 20, status=0, sequence_number=1),
                                data_entry(a, 0, 10, status=2, sequence_number=1)], 0)
    added = table.manifest([data_entry(c, 0, 30)], 0)
    puffin, ((offset, length),) = table.puffin([(b, [0, 1])])
    deletes = table.manifest([dv_entry(table.uri(puffin), b, 0, offset, length, 2)], 1)
    table.snapshot([(rewritten, 0, 2), (added, 0, 3), (deletes, 1, 3)])
    table.snapshot([(rewritten, 0, 2), (added, 0, 3), (deletes, 1, 3)])
    table.finish()
    loaded = Table.load(table.root, fileio=FileIO())
    base, middle, target = loaded.snapshots()
    changes = LiveFiles.between(loaded.manifests, base, target)
    assert [e.path for e in changes.data_added] == [c]
    assert [e.path for e in changes.data_removed] == [a]
    assert [(e.path, e.referenced_data_file) for _, e in changes.deletes_added] == [
        (table.uri(puffin), b)]
    assert changes.deletes_removed == ()
    live = LiveFiles.of(loaded.manifests, target)
    assert sorted(live.data) == [b, c] and live.data_rows == 50 and live.dv_count == 1
    assert LiveFiles.between(loaded.manifests, middle, target) == type(changes)()


def test_ancestors_follow_parents_and_stop_at_a_cycle(tmp_path: Path) -> None:
    table = TableBuilder(tmp_path / "t")
    manifest = table.manifest([data_entry(table.uri("data/a.parquet"), 0, 1)], 0)
    for _ in range(3):
        table.snapshot([(manifest, 0, 1)])
    path = table.finish()
    loaded = Table.load(table.root, fileio=FileIO())
    newest = loaded.snapshot(None)
    assert newest is not None
    assert [s.snapshot_id for s in loaded.ancestors(newest)] == [1003, 1002, 1001]
    doc = json.loads(path.read_text())
    doc["snapshots"][0]["parent-snapshot-id"] = 1003  # 1001 -> 1003 -> 1002 -> 1001
    path.write_text(json.dumps(doc))
    looped = Table.load(table.root, fileio=FileIO())
    newest = looped.snapshot(None)
    assert newest is not None
    assert [s.snapshot_id for s in looped.ancestors(newest)] == [1003, 1002, 1001]
