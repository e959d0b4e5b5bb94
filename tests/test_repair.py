"""``puffin repair`` (issue 20) on real tables: file-system tables on disk and in the test S3
server, and catalog tables (SQL on sqlite, REST with Iceberg Java's handlers). A plan writes
nothing; ``--apply`` commits one new metadata version after which ``puffin table`` finds no
error a repair covers, keeps a concurrent writer's change, and leaves nothing behind when it
fails. The broken tables Iceberg Java built, judged by Iceberg Java: tests/test_repair_java.py."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from s3server import S3Server
from tables.synthetic import TableBuilder, dv_table
from test_catalog import catalog, rest_catalog, sql_catalog  # noqa: F401  (fixtures)

from puffin_cli.analysis.table.commit import commit_statistics
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import StatisticsFileEntry
from puffin_cli.cli.main import cli
from puffin_cli.format.reader import PuffinReader
from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO

DAY = 86400.0


def broken_stats(root: Path, location: str | None = None) -> TableBuilder:
    """Two snapshots with a DV each and statistics: snapshot 1001's entry has a wrong file
    size, snapshot 1002's names a file that does not exist, and 1002's real file is also
    registered for snapshot 999, which the table does not have."""
    table = dv_table(root, snapshots=2, dvs_per_snapshot=1, carry=True, location=location)
    table.statistics_file(1001, {1: list(range(50))})
    table.statistics_file(1002, {1: list(range(100)), 4: [0, 1, 1, 2]})
    table.statistics[0]["file-size-in-bytes"] += 10
    table.statistics.append({**table.statistics[1], "snapshot-id": 999})
    table.statistics[1]["statistics-path"] = table.uri("metadata/gone.stats")
    table.finish()
    return table


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` and the SHA-256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def repair(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["repair", *args])
    return result.exit_code, result.output


def repair_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["repair", "--json", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def table_errors(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(cli, ["table", "--json", "--all-snapshots", *args])
    (doc,) = json.loads(result.stdout)["tables"]
    return [f for f in doc["findings"] if f["severity"] == "error"]


def raw(root: Path, version: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "metadata" / f"v{version}.metadata.json")
                                      .read_text())
    return data


def test_a_plan_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    broken_stats(tmp_path / "t")
    before = tree_digest(tmp_path)
    code, out = repair(str(tmp_path / "t"))
    assert tree_digest(tmp_path) == before
    assert code == 1
    t = tmp_path / "t"
    assert out.splitlines() == [  # files in the table named relative to it, as table does
        f"table {t} (metadata/v1.metadata.json)",
        "planned (3):",
        "  stats.correct  metadata/1001-stats.puffin: correct the entry from the file: "
        "file-size-in-bytes 646 -> 636 [table.stats.size]",
        "  stats.remove  metadata/gone.stats: remove the entry: the file does not exist; "
        "snapshot 1002 is left without statistics [table.stats.missing]",
        "  stats.remove  metadata/1002-stats.puffin: remove the entry: registered for "
        "snapshot 999, which the table does not have [table.stats.snapshot]",
        "then restore what the repair leaves without:",
        f"  puffin stats compute {t} --snapshot 1002 --commit    # snapshot 1002 has no "
        "statistics once its entry is removed",
        "3 repairs pending; run with --apply to carry them out in one commit",
    ]


def test_a_clean_table_needs_no_repair_and_gets_no_commit(tmp_path: Path) -> None:
    table = dv_table(tmp_path / "t", snapshots=2, dvs_per_snapshot=2, carry=True)
    table.statistics_file(1002, {1: list(range(10))})
    table.finish()
    before = tree_digest(tmp_path)
    assert repair(str(tmp_path / "t"))[0] == 0
    code, doc = repair_json("--apply", str(tmp_path / "t"))
    assert code == 0
    assert (doc["planned"], doc["applied"], doc["unrepairable"], doc["commit"]) == \
        ([], [], [], None)
    assert tree_digest(tmp_path) == before


def test_apply_commits_one_version_that_puffin_table_finds_clean(tmp_path: Path) -> None:
    root = tmp_path / "t"
    broken_stats(root)
    assert {f["code"] for f in table_errors(str(root))} == \
        {"table.stats.size", "table.stats.missing", "table.stats.snapshot"}
    before = tree_digest(tmp_path)
    code, doc = repair_json("--apply", str(root))
    assert code == 0
    assert doc["apply"] is True and doc["applied"] == doc["planned"]
    assert doc["commit"] == {"version": 2, "metadata-file": str(root / "metadata" /
                                                                   "v2.metadata.json"),
                             "attempts": 1, "replaced": []}
    after = tree_digest(tmp_path)
    # the new version and its hint (and the hint's lock); every other byte as it was
    assert set(after) - set(before) == {"t/metadata/v2.metadata.json",
                                        "t/metadata/version-hint.text",
                                        "t/metadata/.puffin-version-hint.lock"}
    assert {k: after[k] for k in before} == before
    assert table_errors(str(root)) == []
    old, new = raw(root, 1), raw(root, 2)
    assert new["snapshots"] == old["snapshots"]
    assert new["current-snapshot-id"] == old["current-snapshot-id"]
    (entry,) = new["statistics"]
    path = root / "metadata" / "1001-stats.puffin"
    with PuffinReader(path) as reader:
        footer = reader.footer.footer_size
        blobs = reader.metadata.blobs
    assert entry["file-size-in-bytes"] == path.stat().st_size
    assert entry["file-footer-size-in-bytes"] == footer
    assert entry["blob-metadata"] == [
        {"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
         "fields": list(b.fields), "properties": b.properties} for b in blobs]
    assert entry["blob-metadata"] == old["statistics"][0]["blob-metadata"]
    # and nothing is left to repair
    assert repair(str(root))[0] == 0


def test_a_concurrent_commit_keeps_both_changes(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Another writer registers new statistics for snapshot 1002 between our plan and our
    publish: the repair builds again on its version, corrects 1001's entry and leaves the
    other writer's 1002 entry (which it had planned to remove as missing) alone."""
    from puffin_cli.analysis.repair import plan as plans

    root = tmp_path / "t"
    broken_stats(root)
    theirs = StatisticsFileEntry.for_blobs(1002, str(root / "metadata" / "theirs.stats"), 10,
                                           5, [])
    real = plans.statistics_updates
    calls: list[int] = []

    def racing(base: Table, plan: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            commit_statistics(Table.load(root, fileio=FileIO()), theirs)
        return real(base, plan)

    monkeypatch.setattr(plans, "statistics_updates", racing)
    code, doc = repair_json("--apply", str(root))
    assert code == 0
    assert doc["commit"]["version"] == 3 and doc["commit"]["attempts"] == 2
    assert len(calls) == 2
    assert [r["kind"] for r in doc["applied"]] == ["stats.correct", "stats.remove"]
    assert [r["snapshot-id"] for r in doc["applied"]] == [1001, 999]
    final = raw(root, 3)
    assert {e["snapshot-id"]: e["statistics-path"] for e in final["statistics"]} == \
        {1001: str(root / "metadata" / "1001-stats.puffin"), 1002: theirs.path}
    assert {e["snapshot-id"]: e["statistics-path"] for e in raw(root, 2)["statistics"]}[1002] \
        == theirs.path  # the other writer's version


def test_a_failure_before_the_commit_leaves_the_table_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from puffin_cli.analysis.table import commit as commits
    from puffin_cli.cli.main import main
    from puffin_cli.storage import StorageError

    root = tmp_path / "t"
    broken_stats(root)
    before = tree_digest(tmp_path)

    def failing(self: Any, base: Any, change: Any) -> Any:
        raise StorageError("cannot write: disk full", code="io.write",
                           path=str(root / "metadata" / "v2.metadata.json"))

    monkeypatch.setattr(commits._FileSystem, "publish", failing)
    with pytest.raises(SystemExit) as exited:
        main(["repair", "--apply", "-q", str(root)])
    assert exited.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        f"puffin: error: {root}/metadata/v2.metadata.json: cannot write: disk full"]
    assert tree_digest(tmp_path) == before


def _orphans(root: Path, now: float) -> dict[str, float]:
    """Orphan Puffin files under the table, aged (days) as named."""
    ages = {"data/old.puffin": 5.0, "data/young.puffin": 0.1, "metadata/old.stats": 30.0,
            "metadata/day.stats": 1.0}
    for relative, days in ages.items():
        with PuffinWriter(root / relative) as writer:
            writer.add_blob("opaque", b"x", fields=[1])
        os.utime(root / relative, (now - days * DAY, now - days * DAY))
    return ages


def test_orphans_are_deleted_only_when_asked_and_old_enough(tmp_path: Path) -> None:
    root = tmp_path / "t"
    dv_table(root, snapshots=2, dvs_per_snapshot=1, carry=False).finish()
    ages = _orphans(root, time.time())
    before = tree_digest(tmp_path)
    code, doc = repair_json(str(root))
    assert code == 0 and doc["planned"] == []
    assert {u["path"]: u["reason"] for u in doc["unrepairable"]} == {
        str(root / r): "kept: deleting orphans needs --delete-orphans" for r in ages}
    code, doc = repair_json("--delete-orphans", str(root))
    assert code == 1
    assert sorted(r["paths"][0] for r in doc["planned"]) == \
        [str(root / "data/old.puffin"), str(root / "metadata/old.stats")]
    assert {r["kind"] for r in doc["planned"]} == {"orphan.delete"}
    kept = {u["path"]: u["reason"] for u in doc["unrepairable"]}
    assert kept[str(root / "data/young.puffin")].startswith("kept: modified 2.4 hours ago, "
                                                            "not older than 3d")
    assert tree_digest(tmp_path) == before
    code, doc = repair_json("--apply", "--delete-orphans", "--older-than", "12h", str(root))
    assert code == 0 and doc["commit"] is None  # nothing to commit: no new version
    assert sorted(r["paths"][0] for r in doc["applied"]) == \
        [str(root / r) for r in ("data/old.puffin", "metadata/day.stats",
                                 "metadata/old.stats")]
    left = set(tree_digest(tmp_path))
    assert left == set(before) - {f"t/{r}" for r in ("data/old.puffin", "metadata/day.stats",
                                                     "metadata/old.stats")}
    assert (root / "data/young.puffin").exists()
    assert sorted(p.name for p in (root / "metadata").glob("v*.metadata.json")) == \
        ["v1.metadata.json"]


def test_orphans_and_snapshot_options_are_checked(tmp_path: Path) -> None:
    root = tmp_path / "t"
    dv_table(root, snapshots=1, dvs_per_snapshot=1, carry=False).finish()
    result = CliRunner().invoke(cli, ["repair", "--older-than", "3x", str(root)])
    assert result.exit_code == 2
    assert "'3x' is not an age like 3d, 12h or 30m" in result.stderr
    result = CliRunner().invoke(cli, ["repair", "--delete-orphans", "--snapshot", "1001",
                                      str(root)])
    assert result.exit_code == 2
    result = CliRunner().invoke(cli, ["repair", "--snapshot", "77", str(root)])
    assert result.exit_code == 1
    assert "no snapshot 77" in str(result.exception)


def test_snapshot_limits_the_repairs_to_that_snapshot(tmp_path: Path) -> None:
    root = tmp_path / "t"
    broken_stats(root)
    code, doc = repair_json("--snapshot", "1001", "--apply", str(root))
    assert code == 0
    assert [(r["kind"], r["snapshot-id"]) for r in doc["planned"]] == \
        [("stats.correct", 1001)]
    assert {f["code"] for f in table_errors(str(root))} == \
        {"table.stats.missing", "table.stats.snapshot"}


# --- an object store ------------------------------------------------------------------------


def test_repair_a_table_in_an_object_store(s3_server: S3Server, tmp_path: Path) -> None:
    bucket, key = "repairs", "db/t"
    location = f"s3://{bucket}/{key}"
    client = s3_server.client()
    client.create_bucket(Bucket=bucket)
    root = tmp_path / "t"
    broken_stats(root, location=location)
    for path in sorted(root.rglob("*")):
        if path.is_file():
            client.put_object(Bucket=bucket, Key=f"{key}/{path.relative_to(root)}",
                              Body=path.read_bytes())

    def puffin(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "puffin_cli", *args], env=s3_server.env(),
                              capture_output=True, text=True, timeout=120, check=False)

    def objects() -> dict[str, str]:
        listed = client.list_objects_v2(Bucket=bucket, Prefix=f"{key}/")["Contents"]
        return {o["Key"]: o["ETag"] for o in listed}

    before = objects()
    planned = puffin("repair", location)
    assert planned.returncode == 1, planned.stderr
    assert objects() == before
    applied = puffin("repair", "--apply", "--json", location)
    assert applied.returncode == 0, applied.stderr
    doc = json.loads(applied.stdout)
    assert doc["commit"]["metadata-file"] == f"{location}/metadata/v2.metadata.json"
    assert len(doc["applied"]) == 3
    after = objects()
    assert set(after) - set(before) == {f"{key}/metadata/v2.metadata.json",
                                        f"{key}/metadata/version-hint.text"}
    assert {k: after[k] for k in before} == before
    shown = puffin("table", "--json", "--all-snapshots", location)
    (table,) = json.loads(shown.stdout)["tables"]
    assert shown.returncode == 0 and table["errors"] == 0, shown.stdout


# --- catalogs ---------------------------------------------------------------------------------


def test_repair_a_catalog_table(catalog: Any) -> None:  # noqa: F811
    """A statistics file registered through the catalog with a wrong size and footer size is
    corrected through the catalog (SQL or REST), in one commit."""
    from puffin_cli.storage import os_path

    loaded = Table.load("db.events", catalog="test", fileio=FileIO())
    snapshot_id = loaded.metadata.current_snapshot_id
    assert snapshot_id is not None
    path = f"{loaded.metadata.location}/metadata/{snapshot_id}-repair.stats"
    with PuffinWriter(os_path(path)) as writer:
        writer.add_blob("apache-datasketches-theta-v1", b"not a sketch", fields=[1],
                        snapshot_id=snapshot_id, sequence_number=2)
    wrong = StatisticsFileEntry.for_blobs(snapshot_id, path, 7, 3, [
        {"type": "apache-datasketches-theta-v1", "snapshot-id": snapshot_id,
         "sequence-number": 2, "fields": [1]}])
    commit_statistics(loaded, wrong)
    codes = {f["code"] for f in table_errors("--catalog", "test", "db.events")}
    assert {"table.stats.size", "table.stats.footer-size"} <= codes
    code, doc = repair_json("--catalog", "test", "db.events")
    assert code == 1
    (planned,) = [r for r in doc["planned"] if r["kind"] == "stats.correct"]
    assert set(planned["finding-codes"]) == {"table.stats.size", "table.stats.footer-size"}
    code, doc = repair_json("--catalog", "test", "db.events", "--apply")
    # the file's sketch is no sketch: an error no repair covers, so exit 1, with what to do
    assert code == 1, doc
    (left,) = doc["unrepairable"]
    assert (left["finding-code"], left["severity"]) == ("theta.serial-version", "error")
    assert left["reason"].endswith(": puffin stats compute --catalog test db.events "
                                   f"--snapshot {snapshot_id} --commit")
    after = catalog.load_table("db.events")
    assert after.metadata_location == doc["commit"]["metadata-file"]
    (stats,) = after.metadata.statistics
    assert stats.file_size_in_bytes == Path(os_path(path)).stat().st_size
    with PuffinReader(os_path(path)) as reader:
        assert stats.file_footer_size_in_bytes == reader.footer.footer_size
    codes = {f["code"] for f in table_errors("--catalog", "test", "db.events")}
    assert not codes & {"table.stats.size", "table.stats.footer-size"}
