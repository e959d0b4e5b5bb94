"""Interop: what ``puffin table`` and ``puffin repair`` say about statistics is true (issue 27),
on the broken tables Iceberg Java built (tests/interop/broken.py), judged by Iceberg Java.

- A statistics file whose blobs were computed for another snapshot is an error of ``table``
  (``table.stats.blob-snapshot``), and ``repair`` removes its entry (with the ``stats compute``
  that restores it) instead of rewriting the entry to claim what its blobs do not describe.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from interop.broken import (  # noqa: F401  (fixtures)
    BrokenTable,
    broken_table_fixture,
    broken_tables_fixture,
    java_judge_fixture,
)
from interop.judge import JavaJudge
from test_repair_java import _java_reads, _repair, _table

from puffin_cli.analysis.table.commit import commit_statistics
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.updates import StatisticsFileEntry
from puffin_cli.cli.main import cli
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO

Make = Callable[[str], BrokenTable]


def _theta_file(tmp_path: Path, snapshot_id: int) -> Path:
    """``puffin write other.stats --theta 1 ... --snapshot ID``: a sketch of ids 0-99 that
    claims snapshot ``snapshot_id``."""
    values = tmp_path / "ids.txt"
    values.write_text("".join(f"{i}\n" for i in range(100)))
    out = tmp_path / "other.stats"
    result = CliRunner().invoke(cli, ["write", str(out), "--theta", "1", "--type", "long",
                                      "--values-file", str(values), "--snapshot",
                                      str(snapshot_id), "--sequence-number", "1"])
    assert result.exit_code == 0, result.output
    return out


def _errors(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in doc["findings"] if f["severity"] == "error"]


def _judged_statistics(java_judge: JavaJudge, table: BrokenTable) -> list[dict[str, Any]]:
    """Java's statistics entries after a repair: each read without error, and every blob (as
    registered and as in the file) computed for the entry's snapshot."""
    entries: list[dict[str, Any]] = _java_reads(java_judge, table)["statistics"]
    for entry in entries:
        assert entry["error"] is None, entry
        assert set(entry["blob-snapshot-ids"]) <= {entry["snapshot-id"]}, entry
        assert set(entry["blob-metadata-snapshot-ids"]) <= {entry["snapshot-id"]}, entry
    return entries


def test_a_file_of_another_snapshot_copied_over_the_registered_one_is_removed(
        broken_table: Make, java_judge: JavaJudge, tmp_path: Path) -> None:
    """The issue's case: snapshot B's statistics file copied over the current snapshot's.
    Before, ``repair`` "corrected" the entry to the file's blobs (snapshot-id, ndv), and Spark
    planned the current snapshot with snapshot B's NDV."""
    table = broken_table("bad_stats")
    root, built = table.root, table.built
    first, *_, current = built["snapshots"]
    fine = built["statistics"]["fine"]
    shutil.copyfile(_theta_file(tmp_path, first), table.file(fine))
    code, doc = _table(root, "--all-snapshots")
    assert code == 1
    found = [f for f in doc["findings"] if f["code"] == "table.stats.blob-snapshot"]
    assert [(f["severity"], f["path"], f["snapshot-id"], f["detail"], f["blob-index"])
            for f in found] == [
        ("error", fine, current,
         {"kind": "other-snapshot", "blob-indexes": [0], "snapshot-ids": [first]}, 0)]
    assert found[0]["message"] == (
        f"{fine}: blob 0 was computed for snapshot {first}, not for snapshot {current}, "
        "which the entry registers the file for")
    code, plan = _repair(str(root))
    assert code == 1
    about = [(r["kind"], r["finding-codes"]) for r in plan["planned"] if r["paths"] == [fine]]
    assert len(about) == 1 and about[0][0] == "stats.remove"
    assert "table.stats.blob-snapshot" in about[0][1]
    assert [f["command"] for f in plan["follow-ups"]] == \
        [f"puffin stats compute {root} --snapshot {current} --commit"]
    code, done = _repair("--apply", str(root))
    assert code == 0 and done["applied"] == plan["planned"]
    entries = _judged_statistics(java_judge, table)
    assert current not in {e["snapshot-id"] for e in entries}
    code, doc = _table(root, "--all-snapshots", "--strict")
    assert (code, _errors(doc)) == (0, [])


def test_an_entry_repointed_at_a_newer_snapshot_is_an_error_and_removed(
        broken_table: Make, java_judge: JavaJudge) -> None:
    """An entry for the current snapshot naming an older snapshot's file, its blob-metadata
    equal to the file's: the entry and the file agree, and both say another snapshot."""
    table = broken_table("bad_stats")
    root, built = table.root, table.built
    older, current = built["snapshots"][1], built["snapshots"][-1]
    path = built["statistics"]["footer-size"]  # snapshot 2's file (its entry's footer size)
    local = table.file(path)
    with PuffinReader(local) as reader:
        footer, blobs = reader.footer.footer_size, reader.metadata.blobs
    assert {b.snapshot_id for b in blobs} == {older}
    commit_statistics(Table.load(root, fileio=FileIO()), StatisticsFileEntry.for_blobs(
        current, path, local.stat().st_size, footer,
        [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
          "fields": list(b.fields), "properties": dict(b.properties)} for b in blobs]))
    code, doc = _table(root)
    assert code == 1
    assert [f["code"] for f in _errors(doc) if f["path"] == path] == \
        ["table.stats.blob-snapshot"]
    code, plan = _repair(str(root))
    removed = [r for r in plan["planned"] if r["snapshot-id"] == current]
    assert [(r["kind"], r["paths"], r["finding-codes"]) for r in removed] == \
        [("stats.remove", [path], ["table.stats.blob-snapshot"])]
    assert _repair("--apply", str(root))[0] == 0
    entries = _judged_statistics(java_judge, table)
    assert {e["snapshot-id"]: e["path"] for e in entries}[older] == path  # its own, kept
    assert current not in {e["snapshot-id"] for e in entries}
    code, doc = _table(root, "--all-snapshots")
    assert (code, _errors(doc)) == (0, [])
