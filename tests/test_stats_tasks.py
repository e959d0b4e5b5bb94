"""Iceberg's task groups (:mod:`puffin_cli.analysis.stats.task_groups`) and the delete files
Iceberg attaches to each data file (:mod:`puffin_cli.analysis.stats.delete_index`): the rules
on hand-made inputs, then the replay against Iceberg itself: tables built by Iceberg 1.10.2
under Spark 3.5 (tests/interop/spark_scripts/task_tables.py, cached by the script's hash)
whose Spark input partitions (files, row positions, order) were recorded, planned here for the
same parallelism (sparkenv's session: local[2], spark.sql.shuffle.partitions 2)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from interop.sparkenv import script_output
from tiers import needs

from puffin_cli.analysis.stats.delete_index import (
    can_contain_equality_deletes,
    referenced_data_file,
)
from puffin_cli.analysis.stats.files import (
    DELETE_FILE_PATH_ID,
    DataFile,
    DeletionVectorRef,
    EqualityDeleteFile,
    PositionDeleteFile,
)
from puffin_cli.analysis.stats.plan import StatsPlan, plan_snapshot, stats_snapshot
from puffin_cli.analysis.stats.task_groups import (
    MIN_SPLIT_SIZE,
    Split,
    TaskGroup,
    adjust_split_size,
    file_splits,
    merge,
    pack,
    plan_task_groups,
    split_size,
)
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import (
    CONTENT_DATA,
    CONTENT_EQUALITY_DELETES,
    CONTENT_POSITION_DELETES,
    ContentFile,
    ManifestFile,
    ManifestReader,
)
from puffin_cli.analysis.table.metadata import PathMapper, Snapshot, TableMetadata
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO

SCRIPT = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "task_tables.py"
MIB = 1024 * 1024

# --- hand-made plans --------------------------------------------------------------------------

FIELDS: list[dict[str, Any]] = [
    {"id": 1, "name": "id", "type": "int", "required": False},
    {"id": 2, "name": "cat", "type": "int", "required": True},
    {"id": 3, "name": "name", "type": "string", "required": False},
    {"id": 4, "name": "u", "type": "uuid", "required": False},
    {"id": 5, "name": "d", "type": "decimal(9,2)", "required": False}]
SPECS: dict[int, dict[str, Any]] = {
    0: {"spec-id": 0, "fields": []},
    1: {"spec-id": 1, "fields": [{"source-id": 2, "field-id": 1000, "name": "cat",
                                  "transform": "identity"}]}}


def metadata(properties: dict[str, str] | None = None) -> TableMetadata:
    return TableMetadata("/t/metadata/v1.metadata.json", 2, None, "/t", 7, 0,
                         {0: {"schema-id": 0, "type": "struct", "fields": FIELDS}}, SPECS,
                         (Snapshot(7, None, 5, 0, "/t/snap.avro", (), 0, "append"),), (), (),
                         {"properties": properties or {}})


def data_file(name: str, size: int, offsets: tuple[int, ...] | None = None, *,
              fmt: str = "parquet", **deletes: Any) -> DataFile:
    return DataFile(f"/t/{name}", f"/t/{name}", fmt, 10, 1, file_size=size,
                    split_offsets=offsets, **deletes)


def stats_plan(files: list[DataFile], properties: dict[str, str] | None = None) -> StatsPlan:
    meta = metadata(properties)
    table = Table(meta, Path(meta.path), Path("/t"), PathMapper(), FileIO())
    return StatsPlan(table, meta.snapshots[0], 0, (), (), tuple(files), (), ())


def layout(groups: list[TaskGroup]) -> list[list[tuple[str, int, int]]]:
    return [[(Path(s.file.location).name, s.start, s.length) for s in g.splits]
            for g in groups]


def test_adjust_split_size() -> None:
    # fewer expected splits than the parallelism: the scan spread over it, at least 16 MiB
    assert adjust_split_size(100 * MIB, 2, 128 * MIB) == 50 * MIB
    assert adjust_split_size(10 * MIB, 2, 128 * MIB) == MIN_SPLIT_SIZE
    assert adjust_split_size(0, 2, 128 * MIB) == MIN_SPLIT_SIZE
    assert adjust_split_size(900, 2, 1000) == 1000  # min(16 MiB, target) is the floor
    assert adjust_split_size(3001, 3, 1000) == 1000  # ceil(3001 / 1000) = 4 splits >= 3
    assert adjust_split_size(3000, 4, 1000) == 1000 and adjust_split_size(3000, 4, 999) == 999
    assert adjust_split_size(100 * MIB, 3, 64 * MIB) == 100 * MIB // 3
    assert adjust_split_size(40 * MIB, 3, 32 * MIB) == MIN_SPLIT_SIZE
    with pytest.raises(PuffinError) as caught:
        adjust_split_size(1, 0, 1000)
    assert str(caught.value) == "parallelism must be > 0, got 0"


def test_split_size_reads_the_table_properties() -> None:
    files = [data_file("a", 3 * MIB), data_file("b", 2 * MIB)]
    assert split_size(stats_plan(files), 2) == MIN_SPLIT_SIZE
    assert split_size(stats_plan(files), 200) == MIN_SPLIT_SIZE
    big = [data_file("a", 300 * MIB)]
    assert split_size(stats_plan(big), 2) == 128 * MIB  # 3 splits >= parallelism 2
    assert split_size(stats_plan(big), 4) == 75 * MIB
    assert split_size(stats_plan(files, {"read.split.target-size": "1000"}), 2) == 1000
    # the scan size counts the deletes attached to each file
    dv = DeletionVectorRef("/t/a", "/t/dv.puffin", 4, 40 * MIB, 3)
    with_dv = [data_file("a", 60 * MIB, deletion_vector=dv)]
    assert split_size(stats_plan(with_dv), 2) == 50 * MIB
    # Boolean.parseBoolean: only "true" (any case) enables the adjustment
    for text, expected in (("TRUE", MIN_SPLIT_SIZE), ("false", 128 * MIB),
                           ("yes", 128 * MIB)):
        props = {"read.split.adaptive-size.enabled": text}
        assert split_size(stats_plan(files, props), 2) == expected, text


@pytest.mark.parametrize(("name", "value", "minimum"), [
    ("read.split.target-size", "0", 1), ("read.split.target-size", "128m", 1),
    ("read.split.planning-lookback", "0", 1), ("read.split.open-file-cost", "-1", 0),
    ("read.split.open-file-cost", " 5", 0)])
def test_bad_split_properties(name: str, value: str, minimum: int) -> None:
    with pytest.raises(PuffinError) as caught:
        plan_task_groups(stats_plan([data_file("a", 10)], {name: value}), 2)
    assert caught.value.code == "stats.split-planning"
    assert str(caught.value) == (f"/t/metadata/v1.metadata.json: table property {name}="
                                 f"{value!r} is not an integer >= {minimum}")


def test_file_splits() -> None:
    def spans(f: DataFile, size: int) -> list[tuple[int, int]]:
        return [(s.start, s.length) for s in file_splits(f, size)]

    # well-defined offsets: one split per offset, whatever the split size
    assert spans(data_file("a", 100, (4, 30, 60)), 10) == [(4, 26), (30, 30), (60, 40)]
    assert spans(data_file("a", 100, (4,)), 10) == [(4, 96)]
    assert spans(data_file("a", 100, (4, 30), fmt="orc"), 1000) == [(4, 26), (30, 70)]
    # otherwise fixed-size splits from byte 0
    fixed = [(0, 40), (40, 40), (80, 20)]
    assert spans(data_file("a", 100), 40) == fixed
    assert spans(data_file("a", 100, ()), 40) == fixed
    assert spans(data_file("a", 100, (4, 100)), 40) == fixed  # last offset not below the size
    assert spans(data_file("a", 100, (4, 30, 30)), 40) == fixed  # not strictly ascending
    assert spans(data_file("a", 100, (30, 4)), 40) == fixed
    assert spans(data_file("a", 80), 40) == [(0, 40), (40, 40)]
    assert spans(data_file("a", 0), 40) == []  # an empty file makes no split
    # a format Iceberg does not split: the whole file
    assert spans(data_file("a", 100, (4, 30), fmt="puffin"), 40) == [(0, 100)]


def test_pack_largest_bin_first_with_lookback() -> None:
    items = [Split(data_file(str(i), 10), 0, w) for i, w in enumerate([6, 6, 5, 3, 9, 1])]
    weights = [s.length for s in items]
    bins = [[Path(s.file.location).name for s in b] for b in pack(items, weights, 10, 2)]
    # 5 opens a third bin: the heaviest (the first of the two 6s) goes; 9 opens another
    # third bin: [6, 3] (9) goes before [9] (first of equals); then the open bins in order.
    assert bins == [["0"], ["1", "3"], ["2", "5"], ["4"]]
    assert [[Path(s.file.location).name for s in b]
            for b in pack(items, weights, 10, 10)] == [["0", "3", "5"], ["1"], ["2"], ["4"]]
    # an item heavier than the target gets a bin of its own
    assert [len(b) for b in pack(items[:2], [50, 1], 10, 10)] == [1, 1]


def test_merge_adjacent_splits_of_one_file() -> None:
    a, b = data_file("a", 100), data_file("b", 100)
    merged = merge([Split(a, 0, 10), Split(a, 10, 20), Split(a, 40, 5), Split(b, 45, 5),
                    Split(a, 45, 5)])
    assert merged == (Split(a, 0, 30), Split(a, 40, 5), Split(b, 45, 5), Split(a, 45, 5))


def test_weights_count_the_attached_deletes() -> None:
    props = {"read.split.target-size": "1000", "read.split.open-file-cost": "100",
             "read.split.adaptive-size.enabled": "false"}
    pos = PositionDeleteFile("/t/p", "/t/p", "parquet", 1, 2, file_size=350)
    eq = EqualityDeleteFile("/t/e", "/t/e", "parquet", 1, 2, (), None, file_size=150)
    dv = DeletionVectorRef("/t/a", "/t/dv.puffin", 4, 500, 3)
    files = [data_file("a", 300, (4,), deletion_vector=dv, position_deletes=(pos,)),
             data_file("b", 100, (4,), equality_deletes=(eq,)),
             data_file("c", 20, (4,), position_deletes=(pos, pos)),
             data_file("d", 390, (4,)), data_file("e", 50, (4,))]
    # weights: a 296 + 500 (the DV, not the position file) = 796; b max(96 + 150, 200) = 246;
    # c max(16 + 700, 300) = 716; d 386; e max(46, 100) = 100
    assert layout(plan_task_groups(stats_plan(files, props), 2)) == [
        [("a", 4, 296), ("e", 4, 46)], [("b", 4, 96), ("c", 4, 16)], [("d", 4, 386)]]
    # a higher open-file cost: a 800 (2 files), b 800, c 1200 (3 files), d 400, e 400
    props["read.split.open-file-cost"] = "400"
    assert layout(plan_task_groups(stats_plan(files, props), 2)) == [
        [("a", 4, 296)], [("b", 4, 96)], [("c", 4, 16)], [("d", 4, 386), ("e", 4, 46)]]


def test_splits_of_a_file_packed_and_merged_back() -> None:
    props = {"read.split.target-size": "100", "read.split.open-file-cost": "1",
             "read.split.planning-lookback": "2"}
    files = [data_file("a", 250, (4, 50, 90, 130, 200)), data_file("b", 70)]
    # a's splits weigh 46, 40, 40, 70, 50; b (no offsets) splits at 100 bytes: one of 70.
    # [46, 40]; the next 40 opens [40]; 70 opens a third bin: the heaviest, [46, 40], goes
    # (merged into one split); 50 joins [40] (90); b's 70 opens a third bin again: [40, 50]
    # goes (not adjacent: two splits); then [70] and [b] in order.
    assert layout(plan_task_groups(stats_plan(files, props), 2)) == [
        [("a", 4, 86)], [("a", 90, 40), ("a", 200, 50)], [("a", 130, 70)], [("b", 0, 70)]]


# --- which deletes Iceberg attaches ------------------------------------------------------------


def content(path: str, kind: int, sequence: int, *, cat: int | None = 0, spec_id: int = 1,
            **fields: Any) -> ContentFile:
    return ContentFile(kind, path, fields.pop("file_format", "PARQUET"),
                       {} if spec_id == 0 else {"cat": cat}, spec_id, 10,
                       fields.pop("file_size", 100), sequence, None,
                       fields.pop("referenced_data_file", None), fields.pop("content_offset",
                                                                            None),
                       fields.pop("content_size", None), "m.avro", **fields)


class StubReader(ManifestReader):
    def __init__(self, files: list[ContentFile]) -> None:
        super().__init__(PathMapper(), FileIO())
        self.files = files

    def manifest_files(self, snapshot: Snapshot) -> list[ManifestFile]:
        return [ManifestFile("m.avro", 0, 1, 1, 7)]

    def live_files(self, manifest: ManifestFile) -> Iterator[ContentFile]:
        yield from self.files


def attached(files: list[ContentFile]) -> dict[str, list[str]]:
    meta = metadata()
    table = Table(meta, Path(meta.path), Path("/t"), PathMapper(), FileIO(),
                  manifest_reader=StubReader(files))
    plan = plan_snapshot(table, meta.snapshots[0], ["id"])
    out = {}
    for f in plan.data_files:
        names = [d.location for d in f.equality_deletes + f.position_deletes]
        if f.deletion_vector is not None:
            names.append(f"dv:{f.deletion_vector.puffin_local}")
        out[f.location] = sorted(names)
    return out


def path_bounds(path: str) -> dict[int, bytes]:
    return {DELETE_FILE_PATH_ID: path.encode()}


def test_position_deletes_attached_as_iceberg_does() -> None:
    found = attached([
        content("/t/d1", CONTENT_DATA, 2), content("/t/d2", CONTENT_DATA, 2),
        content("/t/d3", CONTENT_DATA, 5), content("/t/d4", CONTENT_DATA, 2, cat=1),
        # partition-scoped: every file of partition cat=0 at most as new
        content("/t/part", CONTENT_POSITION_DELETES, 3),
        content("/t/part-same-seq", CONTENT_POSITION_DELETES, 2, cat=1),
        # file-scoped by referenced_data_file, by equal file_path bounds
        content("/t/ref", CONTENT_POSITION_DELETES, 3, referenced_data_file="/t/d2"),
        content("/t/bounds", CONTENT_POSITION_DELETES, 6, lower_bounds=path_bounds("/t/d3"),
                upper_bounds=path_bounds("/t/d3")),
        # different bounds: partition-scoped; older than d3
        content("/t/range", CONTENT_POSITION_DELETES, 4, lower_bounds=path_bounds("/t/d1"),
                upper_bounds=path_bounds("/t/d2")),
        # a DV replaces d1's position delete files
        content("/t/dv.puffin", CONTENT_POSITION_DELETES, 3, file_format="PUFFIN",
                referenced_data_file="/t/d1", content_offset=4, content_size=40)])
    assert found == {"/t/d1": ["dv:/t/dv.puffin"], "/t/d2": ["/t/part", "/t/range", "/t/ref"],
                     "/t/d3": ["/t/bounds"], "/t/d4": ["/t/part-same-seq"]}


def test_referenced_data_file() -> None:
    assert referenced_data_file(content("p", CONTENT_POSITION_DELETES, 1,
                                        referenced_data_file="/t/x")) == "/t/x"
    assert referenced_data_file(content("p", CONTENT_POSITION_DELETES, 1,
                                        lower_bounds=path_bounds("/t/x"),
                                        upper_bounds=path_bounds("/t/x"))) == "/t/x"
    assert referenced_data_file(content("p", CONTENT_POSITION_DELETES, 1,
                                        lower_bounds=path_bounds("/t/x"))) is None
    assert referenced_data_file(content("p", CONTENT_POSITION_DELETES, 1)) is None


def le32(value: int) -> bytes:
    return value.to_bytes(4, "little", signed=True)


def test_equality_deletes_dropped_by_column_metrics() -> None:
    fields = {f["id"]: f for f in FIELDS}

    def check(data: dict[str, Any], delete: dict[str, Any], ids: tuple[int, ...] = (1,)) -> bool:
        return can_contain_equality_deletes(
            content("d", CONTENT_DATA, 1, **data),
            content("e", CONTENT_EQUALITY_DELETES, 2, equality_ids=ids, **delete), fields)

    def bounds(*columns: tuple[int, bytes, bytes]) -> dict[str, Any]:
        """Lower and upper bounds of columns without nulls."""
        return {"lower_bounds": {i: low for i, low, _ in columns},
                "upper_bounds": {i: high for i, _, high in columns},
                "null_value_counts": {i: 0 for i, _, _ in columns},
                "value_counts": {i: 5 for i, _, _ in columns}}

    def ints(low: int, high: int) -> dict[str, Any]:
        return bounds((1, le32(low), le32(high)))

    assert check(ints(0, 10), ints(10, 20)) and check(ints(0, 10), ints(-5, 0))
    assert not check(ints(0, 10), ints(11, 20)) and not check(ints(0, 10), ints(-5, -1))
    assert check({}, ints(11, 20))  # no metrics on the data file: may match
    assert check(ints(0, 10), {"lower_bounds": {1: le32(11)}})  # a bound missing
    # no null counts: both sides may hold nulls, which match each other
    assert check({**ints(0, 10), "null_value_counts": None}, {**ints(11, 20),
                                                             "null_value_counts": None})
    # nulls: data all null, deletes none -> no; deletes only null, data none -> no
    all_null = {"null_value_counts": {1: 5}, "value_counts": {1: 5}}
    assert not check(all_null, ints(0, 10)) and not check(ints(0, 10), all_null)
    assert check(all_null, all_null)
    # nulls on both sides: the ranges are not looked at
    some_null = {**ints(0, 10), "null_value_counts": {1: 1}}
    assert check(some_null, {**ints(50, 60), "null_value_counts": {1: 2}})
    # a required column never holds nulls: the null checks do not apply, ranges do
    assert not check({"lower_bounds": {2: le32(0)}, "upper_bounds": {2: le32(1)}},
                     {"lower_bounds": {2: le32(2)}, "upper_bounds": {2: le32(2)}}, (2,))
    # every equality column must overlap
    data = bounds((1, le32(0), le32(9)), (3, b"n1", b"n5"))
    assert not check(data, bounds((1, le32(3), le32(3)), (3, b"zzz", b"zzz")), (1, 3))
    assert check(data, bounds((1, le32(3), le32(3)), (3, b"n2", b"n2")), (1, 3))
    # strings by code point, uuids by signed halves, decimals by unscaled value
    assert not check(bounds((3, b"a", "\uffff".encode())),
                     bounds((3, "\U00010000".encode(), "\U00010000".encode())), (3,))
    assert check(bounds((3, b"a", "\U00010000".encode())),
                 bounds((3, "\uffff".encode(), "\uffff".encode())), (3,))
    low, high = bytes.fromhex("80" + "00" * 15), bytes.fromhex("7f" + "ff" * 15)
    assert not check(bounds((4, low, low)), bounds((4, bytes(16), high)), (4,))
    assert check(bounds((4, low, bytes(16))), bounds((4, bytes(16), high)), (4,))
    minus = (-5).to_bytes(2, "big", signed=True)
    assert not check(bounds((5, minus, minus)), bounds((5, b"\x01", b"\x02")), (5,))
    assert check(bounds((5, minus, b"\x01")), bounds((5, b"\x01", b"\x02")), (5,))
    # a column not in the current schema is taken to match
    assert check(ints(0, 1), bounds((9, b"x", b"x")), (9,))


# --- against Iceberg ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("spark")
def task_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (Iceberg's Spark layout)."""
    return script_output(SCRIPT, "task-tables", "build")


def row_groups(local: str) -> list[tuple[int, range]]:
    """(midpoint, row positions) of each row group, the midpoint as parquet-mr's range filter
    computes it: the first column chunk's start plus half the row group's compressed size."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(local).metadata
    out, first = [], 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        column = group.column(0)
        start = column.data_page_offset
        if column.has_dictionary_page and column.dictionary_page_offset < start:
            start = column.dictionary_page_offset
        size = sum(group.column(j).total_compressed_size for j in range(group.num_columns))
        out.append((start + size // 2, range(first, first + group.num_rows)))
        first += group.num_rows
    return out


def expected_runs(group: TaskGroup) -> list[tuple[str, list[int]]]:
    """The runs of rows of one file that a task group reads, before deletes."""
    runs: list[tuple[str, list[int]]] = []
    for split in group.splits:
        rows = [p for mid, positions in row_groups(split.file.local)
                if split.start <= mid < split.start + split.length for p in positions]
        if not rows:  # no row group's midpoint in the split: it reads nothing
            continue
        if runs and runs[-1][0] == split.file.location:
            runs[-1][1].extend(rows)
        else:
            runs.append((split.file.location, rows))
    return runs


TABLES = ("t_default", "t_sizes", "t_part", "t_pos_file", "t_pos_part", "t_dv", "t_eq",
          "t_splits", "t_fixed")


@pytest.mark.parametrize("name", TABLES)
def test_task_groups_match_icebergs_spark_scan(task_tables: Path, name: str) -> None:
    expected = json.loads((task_tables / "tables.json").read_text())[name]
    table = Table.load(task_tables / "warehouse" / "db" / name, fileio=FileIO())
    plan = plan_snapshot(table, stats_snapshot(table, None), None)

    # the delete files attached to each data file, as Iceberg's scan planning attaches them
    def local(location: str) -> str:
        return os.path.abspath(table.resolve(location))

    ours = {f.location: sorted([d.local for d in f.equality_deletes + f.position_deletes]
                               + ([f.deletion_vector.puffin_local]
                                  if f.deletion_vector is not None else []))
            for f in plan.data_files}
    assert ours == {k: sorted(local(d) for d in v) for k, v in expected["deletes"].items()}
    has_deletes = any(expected["deletes"].values())
    assert has_deletes == (name in ("t_pos_file", "t_pos_part", "t_dv", "t_eq"))

    groups = plan_task_groups(plan, 2)
    recorded = expected["partitions"]
    assert len(groups) == len(recorded)
    for index, (group, partition) in enumerate(zip(groups, recorded, strict=True)):
        runs = expected_runs(group)
        assert [file for file, _ in runs] == [file for file, _ in partition], index
        for (file, rows), (_, positions) in zip(runs, partition, strict=True):
            if has_deletes:  # the live rows: in order, among the split's rows
                wanted = set(positions)
                assert [p for p in rows if p in wanted] == positions, (index, file)
            else:
                assert rows == positions, (index, file)
    if name in ("t_splits", "t_fixed"):  # files really split, over several task groups
        assert len(groups) > len({s.file.location for g in groups for s in g.splits})
