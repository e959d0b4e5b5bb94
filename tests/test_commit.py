"""The one commit path (analysis.table.commit) on file-system tables, hand-built: the
create-only protocol, the retry loop that builds again on the new version, and the cleanup of
files written for a commit that failed."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

from puffin_cli.analysis.table import commit as commit_mod
from puffin_cli.analysis.table.commit import commit, require_snapshot, table_requirements
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file, current_version, load_metadata
from puffin_cli.analysis.table.updates import (
    CommitResult,
    SetStatistics,
    StatisticsFileEntry,
    TableChange,
)
from puffin_cli.errors import PuffinError
from puffin_cli.storage import FileIO

SNAPSHOTS = [101, 102, 103, 104, 105, 106]


def make_table(root: Path, *, hint: int | None = 1, versions: int = 1) -> Path:
    table = root / "t"
    (table / "metadata").mkdir(parents=True)
    for version in range(1, versions + 1):
        doc = {
            "format-version": 2, "table-uuid": "9c1b7f3e-0000-4000-8000-000000000001",
            "location": str(table), "last-sequence-number": 1,
            "last-updated-ms": 1_700_000_000_000 + version, "last-column-id": 1,
            "current-schema-id": 0,
            "schemas": [{"type": "struct", "schema-id": 0,
                         "fields": [{"id": 1, "name": "x", "required": False, "type": "long"}]}],
            "current-snapshot-id": SNAPSHOTS[-1],
            "snapshots": [{"snapshot-id": s, "sequence-number": 1, "timestamp-ms": 1,
                           "manifest-list": f"{table}/metadata/snap-{s}.avro",
                           "summary": {"operation": "append"}} for s in SNAPSHOTS],
            "statistics": [], "metadata-log": [],
        }
        (table / "metadata" / f"v{version}.metadata.json").write_text(json.dumps(doc))
    if hint is not None:
        (table / "metadata" / "version-hint.text").write_text(f"{hint}\n")
    return table


def commit_statistics(table: Path | str, stats: StatisticsFileEntry,
                      max_attempts: int = commit_mod.DEFAULT_MAX_ATTEMPTS) -> CommitResult:
    return commit_mod.commit_statistics(Table.load(table, fileio=FileIO()), stats,
                                        max_attempts=max_attempts)


def entry(snapshot_id: int, name: str = "s.stats") -> StatisticsFileEntry:
    blob = {"type": "apache-datasketches-theta-v1", "snapshot-id": snapshot_id,
            "sequence-number": 1, "fields": [1], "properties": {"ndv": "7"}}
    return StatisticsFileEntry.for_blobs(snapshot_id, f"/x/{name}", 100, 40, [blob])


def raw(table: Path, version: int) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(
        (table / "metadata" / f"v{version}.metadata.json").read_text())
    return result


def digests(table: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (table / "metadata").glob("v*.metadata.json")}


def test_commit_writes_next_version_and_hint(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    before = digests(table)
    result = commit_statistics(table, entry(106))
    assert (result.version, result.attempts, result.replaced) == (2, 1, ())
    assert result.metadata_file == str(table / "metadata" / "v2.metadata.json")
    assert (table / "metadata" / "version-hint.text").read_text() == "2\n"
    new = raw(table, 2)
    assert new["statistics"] == [entry(106).to_json()]
    assert new["metadata-log"] == [{"timestamp-ms": 1_700_000_000_001,
                                    "metadata-file": f"{table}/metadata/v1.metadata.json"}]
    assert new["last-updated-ms"] > 1_700_000_000_001
    assert digests(table)["v1.metadata.json"] == before["v1.metadata.json"]
    # The table reader (and so `puffin table`) sees the new version.
    loaded = load_metadata(current_metadata_file(table, fileio=FileIO()), fileio=FileIO())
    assert [(s.snapshot_id, s.path) for s in loaded.statistics] == [(106, "/x/s.stats")]
    assert not [p for p in (table / "metadata").iterdir() if p.name.endswith(".tmp")]


def test_commit_replaces_older_statistics_of_the_same_snapshot(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    commit_statistics(table, entry(105, "a.stats"))
    commit_statistics(table, entry(106, "b.stats"))
    result = commit_statistics(table, entry(106, "c.stats"))
    assert (result.version, result.replaced) == (4, ("/x/b.stats",))
    assert [s["statistics-path"] for s in raw(table, 4)["statistics"]] == ["/x/a.stats",
                                                                           "/x/c.stats"]


def test_stale_hint_is_followed_forward(tmp_path: Path) -> None:
    table = make_table(tmp_path, hint=1, versions=3)
    assert current_version(str(table / "metadata"), fileio=FileIO())[0] == 3  # type: ignore[index]
    # the reader follows the same rule: the hint, then forward while v<N+1> exists
    assert current_metadata_file(str(table),
                                 fileio=FileIO()) == str(table / "metadata" / "v3.metadata.json")
    assert commit_statistics(table, entry(101)).version == 4
    assert (table / "metadata" / "version-hint.text").read_text() == "4\n"


def test_missing_hint_uses_highest_version(tmp_path: Path) -> None:
    table = make_table(tmp_path, hint=None, versions=2)
    assert commit_statistics(table, entry(101)).version == 3


def test_a_newer_hint_is_not_rolled_back(tmp_path: Path) -> None:
    table = make_table(tmp_path, versions=3)
    (table / "metadata" / "version-hint.text").write_text("3\n")
    commit_mod.update_hint(str(table / "metadata"), 2, FileIO())
    assert (table / "metadata" / "version-hint.text").read_text() == "3\n"
    (table / "metadata" / "version-hint.text").write_text("1\n")
    commit_mod.update_hint(str(table / "metadata"), 2, FileIO())  # v3 exists: the hint names it
    assert (table / "metadata" / "version-hint.text").read_text() == "3\n"


def _written(table: Path, name: str) -> str:
    path = table / "metadata" / name
    path.write_bytes(b"a manifest")
    return str(path)


def test_conflict_builds_again_on_the_new_version(tmp_path: Path) -> None:
    """Another writer publishes v2 between our build and our publish: the build runs again on
    v2, the file our first build wrote is removed, and both changes are in v3."""
    table = make_table(tmp_path)
    seen: list[int] = []

    def build(base: Table) -> TableChange:
        seen.append(len(base.metadata.statistics))
        written = _written(table, f"m{len(seen)}.avro")
        if len(seen) == 1:  # another writer publishes v2 while we prepare ours
            commit_statistics(table, entry(101, "other.stats"))
        return TableChange(table_requirements(base), (SetStatistics(entry(102)),), (written,))

    result = commit(Table.load(table, fileio=FileIO()), build)
    assert (result.version, Path(result.metadata_file).name, result.attempts) == \
        (3, "v3.metadata.json", 2)
    assert seen == [0, 1]  # the retry started from the other writer's v2
    assert [s["snapshot-id"] for s in raw(table, 3)["statistics"]] == [101, 102]
    assert [s["snapshot-id"] for s in raw(table, 2)["statistics"]] == [101]
    assert not (table / "metadata" / "m1.avro").exists()  # the failed attempt's file
    assert (table / "metadata" / "m2.avro").exists()  # the committed attempt's file


def test_gives_up_after_max_attempts_without_overwriting(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    before = _written(table, "s.stats")  # written before the commit, for it

    def build(base: Table) -> TableChange:
        written = _written(table, f"m{len(base.metadata.statistics)}.avro")
        commit_statistics(table, entry(101, "competitor.stats"))
        return TableChange(table_requirements(base), (SetStatistics(entry(102)),), (written,))

    with pytest.raises(PuffinError) as caught:
        commit(Table.load(table, fileio=FileIO()), build, max_attempts=3, written=[before])
    assert caught.value.code == "commit.conflict"
    assert str(caught.value) == (f"{table / 'metadata'}: gave up after 3 attempts: other "
                                 "writers committed a new metadata version each time; nothing "
                                 "was changed")
    # The competitor's three versions are intact; nothing of ours was published, and every
    # file written for our commit is gone.
    assert sorted(digests(table)) == [f"v{i}.metadata.json" for i in (1, 2, 3, 4)]
    for version in (2, 3, 4):
        assert [s["statistics-path"] for s in raw(table, version)["statistics"]] == \
            ["/x/competitor.stats"]
    assert not [p for p in (table / "metadata").iterdir()
                if p.name.endswith((".tmp", ".avro", ".stats"))]


def test_a_build_that_fails_removes_what_was_written(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    before = _written(table, "s.stats")

    def build(base: Table) -> TableChange:
        _written(table, "m.avro")
        require_snapshot(base, 999, "the delete files")
        raise AssertionError("not reached")

    with pytest.raises(PuffinError, match="snapshot 999 is no longer in the table"):
        commit(Table.load(table, fileio=FileIO()), build, written=[before])
    assert not (table / "metadata" / "s.stats").exists()
    assert sorted(p.name for p in (table / "metadata").iterdir()) == \
        ["m.avro", "v1.metadata.json", "version-hint.text"]  # not named in a TableChange


def test_snapshot_gone_fails_clearly(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    with pytest.raises(PuffinError) as caught:
        commit_statistics(table, entry(999))
    assert caught.value.code == "commit.snapshot"
    assert str(caught.value) == (f"{table}: snapshot 999 is no longer in the table (expired by "
                                 "another writer?); statistics not committed")
    assert sorted(digests(table)) == ["v1.metadata.json"]


def test_metastore_named_table_is_refused(tmp_path: Path) -> None:
    table = make_table(tmp_path, hint=None)
    (table / "metadata" / "v1.metadata.json").rename(
        table / "metadata" / "00001-9c1b7f3e-0000-4000-8000-000000000001.metadata.json")
    with pytest.raises(PuffinError) as caught:
        commit_statistics(table, entry(101))
    assert caught.value.code == "commit.not-file-system-table"
    assert str(caught.value) == (
        f"{table / 'metadata'}: no v<N>.metadata.json, so the table belongs to a catalog and "
        "only the catalog can commit to it: name it there, --catalog NAME NAMESPACE.TABLE")


def _racer(table: str, snapshot_id: int, barrier: Any, out: Any) -> None:
    barrier.wait()
    try:
        result = commit_statistics(table, entry(snapshot_id, f"{snapshot_id}.stats"),
                                   max_attempts=50)
        out.put((snapshot_id, result.version, None))
    except PuffinError as exc:
        out.put((snapshot_id, None, str(exc)))


def test_racing_commits_all_land_and_nothing_is_overwritten(tmp_path: Path) -> None:
    table = make_table(tmp_path)
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(len(SNAPSHOTS))
    out = ctx.Queue()
    racers = [ctx.Process(target=_racer, args=(str(table), s, barrier, out))
              for s in SNAPSHOTS]
    for p in racers:
        p.start()
    results = [out.get(timeout=60) for _ in racers]
    for p in racers:
        p.join(timeout=60)
    assert all(error is None for _, _, error in results), results
    versions = sorted(v for _, v, _ in results if v is not None)
    assert versions == list(range(2, 2 + len(SNAPSHOTS)))
    final = raw(table, 1 + len(SNAPSHOTS))
    assert sorted(s["snapshot-id"] for s in final["statistics"]) == SNAPSHOTS
    # Each version holds exactly its predecessor's entries plus the one its writer committed:
    # no version was written over, no commit was lost.
    claimed = {v: s for s, v, _ in results}
    for version in range(2, 2 + len(SNAPSHOTS)):
        ids = [s["snapshot-id"] for s in raw(table, version)["statistics"]]
        previous = [s["snapshot-id"] for s in raw(table, version - 1)["statistics"]]
        assert ids == [*previous, claimed[version]]
        assert raw(table, version)["metadata-log"][-1]["metadata-file"] == \
            f"{table}/metadata/v{version - 1}.metadata.json"
    assert (table / "metadata" / "version-hint.text").read_text() == f"{1 + len(SNAPSHOTS)}\n"
    assert not [p for p in os.listdir(table / "metadata") if p.endswith(".tmp")]
