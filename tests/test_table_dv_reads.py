"""``puffin table`` reads the deletion vectors of a Puffin file with a few range reads (the
footer's neighbouring DV blobs in one), not one or two per DV; what it reports stays each
entry's own (a damaged neighbour no entry names is no finding of the table's). On an object
store: tests/test_object_store.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import record_local_reads
from tables.synthetic import one_puffin_table

from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.storage import FileIO

DVS = 40
# An array container of 6,000 bytes each: 240 KB of DVs, more than one footer read.
POSITIONS = list(range(0, 9000, 3))


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, int]]:
    return record_local_reads(monkeypatch)


def reads_of(reads: list[tuple[str, int, int]], path: Path) -> int:
    return sum(1 for location, _offset, _length in reads if location == str(path))


@pytest.mark.parametrize("validate", [True, False])
def test_dvs_of_a_puffin_file_cost_a_few_reads(tmp_path: Path, reads: list[tuple[str, int, int]],
                                               validate: bool) -> None:
    root = tmp_path / "t"
    _table, name = one_puffin_table(root, dvs=DVS, positions=POSITIONS)
    (report,) = analyze_path(root, fileio=FileIO(), validate=validate).tables
    (view,) = report.snapshots
    assert report.findings == ()
    assert [dv.cardinality for dv in view.deletion_vectors] == [len(POSITIONS)] * DVS
    # the magic, the footer and the DVs (validate: the footer and the blobs again); before,
    # one read per DV (two when validating)
    assert reads_of(reads, root / name) <= (6 if validate else 3)


def test_a_damaged_neighbour_no_entry_names_is_not_a_table_finding(
        tmp_path: Path, reads: list[tuple[str, int, int]]) -> None:
    root = tmp_path / "t"
    _table, name = one_puffin_table(root, dvs=DVS, positions=POSITIONS, unnamed_bad_blob=True)
    (report,) = analyze_path(root, fileio=FileIO(), validate=False).tables
    assert report.findings == ()
    assert reads_of(reads, root / name) <= 3
    (report,) = analyze_path(root, fileio=FileIO(), validate=True).tables
    assert [(f.code, f.blob_index) for f in report.findings] == [("dv.crc", DVS)]


def test_partition_tuples_are_shared_by_equal_values_of_one_type(tmp_path: Path) -> None:
    from puffin_cli.analysis.table.checks import TableChecks
    from puffin_cli.analysis.table.partitions import partition_tuple
    from puffin_cli.analysis.table.walk import load_tables

    root = tmp_path / "t"
    one_puffin_table(root, dvs=1, positions=[0])
    (table,) = load_tables(root, fileio=FileIO())
    checks = TableChecks(table, validate=False)
    for values in ({"part": 1}, {"part": True}, {"part": 1.0}, {"part": None}, {"part": [1]}):
        assert checks.partition(0, values) == partition_tuple(table.metadata, 0, values)
    assert checks.partition(0, {"part": 7}) is checks.partition(0, {"part": 7})
