"""The snapshot writer (analysis.table.snapshot_writer) through the one commit path: a new
snapshot that replaces deletion vectors, on hand-built v3 tables (file-system, SQL and REST
catalogs) and, in the interop tier, on a table Spark + Iceberg Java built, read back by
Iceberg Java."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import fastavro
import pytest
from tables.synthetic import dv_table
from test_catalog import rest_catalog, sql_catalog  # noqa: F401  (fixtures)

from puffin_cli.analysis.table.commit import commit, commit_statistics
from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.manifests import ContentFile
from puffin_cli.analysis.table.metadata import Snapshot
from puffin_cli.analysis.table.snapshot_writer import DeleteFile, replace_delete_files
from puffin_cli.analysis.table.updates import StatisticsFileEntry, TableChange
from puffin_cli.blobs.deletion_vector.encoding import dv_blob_properties
from puffin_cli.errors import PuffinError
from puffin_cli.format.spec import ROW_POSITION_FIELD_ID
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO

DV = "deletion-vector-v1"


def rewrite_dv(table: Table, old: ContentFile, name: str) -> DeleteFile:
    """A new Puffin file holding ``old``'s DV with the same positions (its bytes copied by
    puffin-cli's writer), as the delete file that replaces ``old``."""
    assert old.content_offset is not None and old.content_size is not None
    source = table.fileio.new_input(table.resolve(old.path))
    data = source.read(old.content_offset, old.content_size)
    assert old.referenced_data_file is not None
    with PuffinWriter(f"{table.statistics_dir}/{name}", fileio=table.fileio) as writer:
        blob = writer.add_blob(DV, data, fields=[ROW_POSITION_FIELD_ID],
                               properties=dv_blob_properties(old.referenced_data_file,
                                                             old.record_count))
        written = writer.finish()
    return DeleteFile(path=table.statistics_location(name), file_format="puffin",
                      spec_id=old.spec_id, partition=old.partition,
                      record_count=old.record_count, file_size=written.file_size,
                      referenced_data_file=old.referenced_data_file,
                      content_offset=blob.offset, content_size=blob.length)


def live_dvs(table: Table) -> dict[str, ContentFile]:
    """Data file -> its live DV in the current snapshot."""
    snapshot = table.current_snapshot()
    assert snapshot is not None
    files = LiveFiles.of(table.manifests, snapshot)
    return {d.referenced_data_file or "": d for d in files.delete_files}


def avro(path: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    with open(path, "rb") as handle:
        reader = fastavro.reader(handle)
        metadata = {k: v.decode() if isinstance(v, bytes) else v
                    for k, v in reader.metadata.items()}
        return metadata, list(reader)


def replace_first_dv(table: Table, name: str) -> tuple[Snapshot, ContentFile, DeleteFile]:
    """Replace the DV of the first data file (by location) of ``table``'s current snapshot
    by a new Puffin file ``name`` with its positions: (the parent, the old DV, the new one)."""
    parent = table.current_snapshot()
    assert parent is not None
    dvs = live_dvs(table)
    old = dvs[sorted(dvs)[0]]
    new = rewrite_dv(table, old, name)
    result = commit(table, lambda base: replace_delete_files(base, [old], [new]))
    assert result.attempts == 1
    return parent, old, new


def test_replace_a_dv_keeps_other_manifests_and_numbers(tmp_path: Path) -> None:
    dv_table(tmp_path / "t", snapshots=2, dvs_per_snapshot=2, carry=True).finish()
    table = Table.load(tmp_path / "t", fileio=FileIO())
    before = live_dvs(table)
    parent, old, new = replace_first_dv(table, "repaired.puffin")
    target = old.referenced_data_file

    after_table = Table.load(tmp_path / "t", fileio=FileIO())
    after = live_dvs(after_table)
    assert sorted(after) == sorted(before)  # one DV per data file, as before
    assert after[target].path == new.path
    assert (after[target].content_offset, after[target].content_size) == \
        (new.content_offset, new.content_size)
    # the other DVs are untouched (one moved to the rewritten manifest, as EXISTING)
    assert {k: v.replace(manifest="") for k, v in after.items() if k != target} == \
        {k: v.replace(manifest="") for k, v in before.items() if k != target}
    snapshot = after_table.current_snapshot()
    assert snapshot is not None and snapshot.parent_id == parent.snapshot_id
    assert (snapshot.sequence_number, snapshot.operation) == (parent.sequence_number + 1,
                                                               "delete")
    raw = after_table.metadata.raw
    assert raw["next-row-id"] == table.metadata.raw.get("next-row-id", 0)
    entry = raw["snapshots"][-1]
    assert (entry["first-row-id"], entry["added-rows"]) == (raw["next-row-id"], 0)
    assert entry["summary"]["added-dvs"] == entry["summary"]["removed-dvs"] == "1"
    assert raw["refs"]["main"] == {"snapshot-id": snapshot.snapshot_id, "type": "branch"}

    # The manifest list: the new delete manifest first, the rewritten one, the rest by
    # reference (the same paths the parent lists).
    assert snapshot.manifest_list is not None and parent.manifest_list is not None
    list_meta, listed = avro(snapshot.manifest_list)
    _, parent_listed = avro(parent.manifest_list)
    assert list_meta["first-row-id"] == str(raw["next-row-id"])
    assert list_meta["parent-snapshot-id"] == str(parent.snapshot_id)
    new_paths = {m["manifest_path"] for m in listed} - {m["manifest_path"]
                                                         for m in parent_listed}
    assert len(new_paths) == 2 and len(listed) == len(parent_listed) + 1
    added, rewritten = listed[0], listed[1]
    assert (added["added_files_count"], added["existing_files_count"],
            added["deleted_files_count"]) == (1, 0, 0)
    assert (added["sequence_number"], added["min_sequence_number"]) == \
        (snapshot.sequence_number,) * 2
    assert (rewritten["added_files_count"], rewritten["existing_files_count"],
            rewritten["deleted_files_count"]) == (0, 1, 1)
    assert rewritten["min_sequence_number"] == old.sequence_number
    _, entries = avro(rewritten["manifest_path"])
    by_target = {e["data_file"]["referenced_data_file"]: e for e in entries}
    gone = by_target[target]
    assert (gone["status"], gone["snapshot_id"], gone["sequence_number"],
            gone["file_sequence_number"]) == (2, snapshot.snapshot_id, old.sequence_number,
                                              old.sequence_number)
    [kept] = [e for e in entries if e["status"] == 0]
    assert kept["snapshot_id"] is not None and kept["sequence_number"] is not None
    meta, [added_entry] = avro(added["manifest_path"])
    assert (meta["content"], meta["format-version"]) == ("deletes", "3")
    assert (added_entry["status"], added_entry["sequence_number"],
            added_entry["file_sequence_number"]) == (1, None, None)
    assert added_entry["data_file"]["referenced_data_file"] == target


def test_a_concurrent_commit_builds_the_snapshot_again(tmp_path: Path) -> None:
    """Another writer commits between our build and our publish: the snapshot is built again
    on its version (the other writer's change kept), the first attempt's manifests are
    removed; a DV that the other writer already replaced cannot be replaced again."""
    dv_table(tmp_path / "t", snapshots=1, dvs_per_snapshot=2, carry=True).finish()
    table = Table.load(tmp_path / "t", fileio=FileIO())
    dvs = live_dvs(table)
    first, second = (dvs[k] for k in sorted(dvs))
    new_first = rewrite_dv(table, first, "first.puffin")
    new_second = rewrite_dv(table, second, "second.puffin")
    attempts: list[TableChange] = []

    def build(base: Table) -> TableChange:
        change = replace_delete_files(base, [first], [new_first])
        attempts.append(change)
        if len(attempts) == 1:  # the other writer replaces the other DV meanwhile
            commit(Table.load(tmp_path / "t", fileio=FileIO()),
                   lambda other: replace_delete_files(other, [second], [new_second]))
        return change

    result = commit(table, build)
    assert result.attempts == 2
    assert not any(Path(p).exists() for p in attempts[0].written)
    assert all(Path(p).exists() for p in attempts[1].written)
    final = Table.load(tmp_path / "t", fileio=FileIO())
    assert {k: v.path for k, v in live_dvs(final).items()} == \
        {first.referenced_data_file: new_first.path, second.referenced_data_file: new_second.path}
    assert len(final.snapshots()) == 3

    with pytest.raises(Exception, match="is not live in snapshot"):
        commit(final, lambda base: replace_delete_files(base, [second], [new_second]))


def test_a_statistics_commit_meanwhile_keeps_both(tmp_path: Path) -> None:
    dv_table(tmp_path / "t", snapshots=1, dvs_per_snapshot=1, carry=True).finish()
    table = Table.load(tmp_path / "t", fileio=FileIO())
    [old] = live_dvs(table).values()
    new = rewrite_dv(table, old, "new.puffin")
    parent = table.current_snapshot()
    assert parent is not None
    calls: list[int] = []

    def build(base: Table) -> TableChange:
        calls.append(1)
        if len(calls) == 1:
            entry = StatisticsFileEntry.for_blobs(parent.snapshot_id, "/x/s.stats", 1, 1, [])
            commit_statistics(Table.load(tmp_path / "t", fileio=FileIO()), entry)
        return replace_delete_files(base, [old], [new])

    commit(table, build)
    final = Table.load(tmp_path / "t", fileio=FileIO())
    assert [s.path for s in final.metadata.statistics] == ["/x/s.stats"]
    assert live_dvs(final)[old.referenced_data_file or ""].path == new.path


def _registered_dv_table(catalog: Any, tmp_path: Path) -> tuple[Table, ContentFile, DeleteFile]:
    root = tmp_path / "dvs"
    dv_table(root, snapshots=1, dvs_per_snapshot=2, carry=True).finish()
    metadata = sorted((root / "metadata").glob("v*.metadata.json"))[-1]
    doc = json.loads(metadata.read_text())
    doc["next-row-id"] = 1000  # the v3 field Iceberg Java's parser requires
    metadata.write_text(json.dumps(doc))
    catalog.register_table(("db", "dvs"), str(metadata))
    table = Table.load("db.dvs", catalog="test", fileio=FileIO())
    dvs = live_dvs(table)
    old = dvs[sorted(dvs)[0]]
    return table, old, rewrite_dv(table, old, "catalog.puffin")


@pytest.mark.catalog
@pytest.mark.java
def test_replace_a_dv_through_a_rest_catalog(tmp_path: Path,
                                             request: pytest.FixtureRequest) -> None:
    """The same snapshot committed through the REST catalog (Iceberg Java's handlers): the
    server checks the requirements and applies add-snapshot and set-snapshot-ref."""
    catalog = request.getfixturevalue("rest_catalog")
    table, old, new = _registered_dv_table(catalog, tmp_path)
    result = commit(table, lambda base: replace_delete_files(base, [old], [new]))
    loaded = catalog.load_table(("db", "dvs"))
    assert str(loaded.metadata_location).endswith(Path(result.metadata_file).name)
    current = Table.load("db.dvs", catalog="test", fileio=FileIO())
    assert loaded.metadata.current_snapshot_id == current.metadata.current_snapshot_id
    assert current.metadata.current_snapshot_id != table.metadata.current_snapshot_id
    assert live_dvs(current)[old.referenced_data_file or ""].path == new.path


@pytest.mark.catalog
def test_a_sql_catalog_refuses_v3_metadata_in_one_line(tmp_path: Path,
                                                        request: pytest.FixtureRequest) -> None:
    """pyiceberg 0.12's SQL catalog cannot write format-version 3 metadata: one line, and the
    table is as it was."""
    catalog = request.getfixturevalue("sql_catalog")
    table, old, new = _registered_dv_table(catalog, tmp_path)
    before = catalog.load_table(("db", "dvs")).metadata_location
    with pytest.raises(PuffinError) as caught:
        commit(table, lambda base: replace_delete_files(base, [old], [new]))
    assert str(caught.value).startswith("catalog test: cannot commit to db.dvs: Writing V3 is "
                                        "not yet supported")
    assert "\n" not in str(caught.value)
    assert catalog.load_table(("db", "dvs")).metadata_location == before


@pytest.mark.spark
def test_iceberg_java_reads_the_replaced_dv(tmp_path: Path) -> None:
    """Interop: on a v3 table Spark + Iceberg Java built (several DVs in shared Puffin files),
    one DV is replaced by a new Puffin file with the same positions. Iceberg Java then plans
    the new file for that data file (and the old ones for the others) and Spark reads exactly
    the rows it read before."""
    from interop.sparkenv import spark_env
    from tables.fixtures import generated_tables, table_dir

    warehouse = tmp_path / "warehouse"
    shutil.copytree(table_dir(generated_tables(), "dv_v3"), warehouse / "db" / "dv_v3")
    parent, old, new = replace_first_dv(Table.load(warehouse / "db" / "dv_v3", fileio=FileIO()),
                                        "replacement-dv.puffin")
    target = old.referenced_data_file
    current = Table.load(warehouse / "db" / "dv_v3", fileio=FileIO()).current_snapshot()
    assert current is not None

    env = spark_env()
    script = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "read_table.py"
    output = env.run(script, "dv_v3", json.dumps(env.session_conf(warehouse)),
                     str(parent.snapshot_id), str(current.snapshot_id))
    doc = json.loads(output.strip().splitlines()[-1])
    assert doc["current-snapshot-id"] == current.snapshot_id
    before, after = (doc["snapshots"][str(s)] for s in (parent.snapshot_id,
                                                          current.snapshot_id))
    assert after["ids"] == before["ids"] and len(after["ids"]) > 0
    planned_before = {t["data-file"]: t["deletes"] for t in before["planned"]}
    planned_after = {t["data-file"]: t["deletes"] for t in after["planned"]}
    assert sorted(planned_after) == sorted(planned_before)
    [replaced] = planned_after[target]
    assert (replaced["path"], replaced["format"], replaced["offset"], replaced["length"],
            replaced["record-count"]) == (new.path, "puffin", new.content_offset,
                                          new.content_size, old.record_count)
    assert [d["path"] for d in planned_before[target]] == [old.path]
    assert {k: v for k, v in planned_after.items() if k != target} == \
        {k: v for k, v in planned_before.items() if k != target}
