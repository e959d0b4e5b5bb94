"""Table findings carry their facts (the files involved, the snapshot, a typed detail) beside
the message rendered from them, so a script filters them by ``path`` or ``snapshot-id`` and
``puffin repair`` plans from them; on a moved table ``path`` is the location the metadata
names and ``local-path`` where the file was read. ``--snapshot`` takes a 64-bit snapshot ID
that a JSON tool rounded to a double (jq 1.6)."""

from __future__ import annotations

import decimal
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import run_main
from tables.synthetic import TableBuilder, data_entry, dv_entry

from puffin_cli.analysis.table.facts import DATA, DELETES, Duplicate, FileRef, Mismatch, Orphan
from puffin_cli.analysis.table.walk import analyze_path
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO

LOCATION = "s3://bucket/warehouse/db/t"


def _table_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["table", "--json", *args])
    assert result.exit_code in (0, 1), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _duplicate_dv_table(root: Path, location: str | None = None) -> tuple[TableBuilder, str]:
    """Snapshot 1001: one DV for data file a; 1002: a second DV for it, whose record_count
    (2) is not its bitmap's (1)."""
    table = TableBuilder(root, location=location)
    data = table.uri("data/a.parquet")
    data_manifest = table.manifest([data_entry(data, 0, 100)], 0)
    puffin, ((offset, length),) = table.puffin([(data, [1])])
    first = table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, 1)], 1)
    second = table.manifest([dv_entry(table.uri(puffin), data, 0, offset, length, 2)], 1)
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1)])
    table.snapshot([(data_manifest, 0, 1), (first, 1, 1), (second, 1, 2)])
    table.statistics.append({"snapshot-id": 1001, "statistics-path": table.uri("metadata/s.stats"),
                             "file-size-in-bytes": 10, "file-footer-size-in-bytes": 10,
                             "blob-metadata": []})
    return table, data


def test_findings_carry_typed_facts_and_messages_rendered_from_them(tmp_path: Path) -> None:
    table, data = _duplicate_dv_table(tmp_path / "t")
    table.finish()
    puffin = next(str(p) for p in (tmp_path / "t").rglob("*.puffin"))
    (report,) = analyze_path(table.root, all_snapshots=True, fileio=FileIO()).tables
    by_code = {f.code: f for f in report.findings}
    assert sorted(by_code) == ["table.dv.duplicate", "table.dv.record-count",
                               "table.stats.missing"]
    duplicate = by_code["table.dv.duplicate"].facts
    assert duplicate is not None and duplicate.detail == Duplicate(2)
    assert (duplicate.path, duplicate.snapshot_id) == (data, 1002)
    assert duplicate.files[0] == FileRef(DATA, data)
    assert [(f.content, f.path) for f in duplicate.files[1:]] == [(DELETES, puffin)] * 2
    count = by_code["table.dv.record-count"]
    assert count.facts is not None
    assert count.facts.detail == Mismatch("record_count", "bitmap", 2, 1)
    assert (count.facts.path, count.facts.snapshot_id, count.facts.data_file()) == \
        (puffin, 1002, data)
    assert count.message == count.facts.message() == (
        f"snapshot 1002: DV for {data} in {puffin}: record_count is 2, the bitmap holds 1 "
        "positions")
    missing = by_code["table.stats.missing"]
    assert missing.facts is not None and missing.facts.snapshot_id == 1001
    assert missing.message == (f"{table.uri('metadata/s.stats')}: statistics file for snapshot "
                               f"1001 does not exist ({table.uri('metadata/s.stats')})")


def test_a_script_filters_table_findings_by_path_and_snapshot_id(tmp_path: Path) -> None:
    table, data = _duplicate_dv_table(tmp_path / "t")
    table.finish()
    (doc,) = _table_json("--all-snapshots", str(table.root))["tables"]
    findings = doc["findings"]
    assert all({"path", "local-path", "snapshot-id", "files", "detail"} <= set(f)
               for f in findings)
    about_data = [f["code"] for f in findings if f["path"] == data]
    assert about_data == ["table.dv.duplicate"]
    in_1001 = [f["code"] for f in findings if f["snapshot-id"] == 1001]
    assert in_1001 == ["table.stats.missing"]
    (duplicate,) = [f for f in findings if f["detail"]["kind"] == "duplicate"]
    assert [f["content"] for f in duplicate["files"]] == ["data", "deletes", "deletes"]
    assert duplicate["detail"] == {"count": 2, "kind": "duplicate"}


def test_a_moved_table_names_files_as_its_metadata_does_and_where_they_were_read(
        tmp_path: Path) -> None:
    root = tmp_path / "moved"
    table, _data = _duplicate_dv_table(root, location=LOCATION)
    table.finish()
    orphan = root / "metadata" / "left-behind.stats"
    orphan.write_bytes(b"PFA1")
    (doc,) = _table_json("--all-snapshots", str(root))["tables"]
    here = str(root.resolve())
    by_code = {f["code"]: f for f in doc["findings"]}
    missing = by_code["table.stats.missing"]
    assert (missing["path"], missing["local-path"]) == (f"{LOCATION}/metadata/s.stats",
                                                        f"{here}/metadata/s.stats")
    found = by_code["table.orphan"]
    assert (found["path"], found["local-path"]) == (f"{LOCATION}/metadata/left-behind.stats",
                                                    str(orphan))
    assert found["snapshot-id"] is None
    assert found["message"] == (f"{LOCATION}/metadata/left-behind.stats: Puffin file "
                                "referenced by no snapshot")
    assert found["detail"]["size"] == 4 and found["detail"]["modified"] == \
        orphan.stat().st_mtime
    assert doc["orphans"] == [str(orphan)]  # where they are, to remove


def test_orphan_facts_carry_the_file_age(tmp_path: Path) -> None:
    table, _data = _duplicate_dv_table(tmp_path / "t")
    table.finish()
    stray = tmp_path / "t" / "metadata" / "x.puffin"
    stray.write_bytes(b"")
    (report,) = analyze_path(table.root, fileio=FileIO()).tables
    (orphan,) = [f for f in report.findings if f.code == "table.orphan"]
    assert orphan.facts is not None
    assert orphan.facts.detail == Orphan("statistics entry", 0, stray.stat().st_mtime)
    assert (orphan.facts.path, orphan.facts.local_path) == (str(stray), None)


# --- snapshot IDs rounded by a JSON tool -------------------------------------------------------

BIG = 3246050701271133997  # not a double: it rounds to 3246050701271134208


def _jq16(snapshot_id: int) -> str:
    """How jq 1.6 prints a snapshot ID: the shortest decimal of its double, padded."""
    return str(int(decimal.Decimal(repr(float(snapshot_id)))))


def _renumbered(tmp_path: Path, ids: dict[int, int]) -> Path:
    table, _data = _duplicate_dv_table(tmp_path / "t")
    for snap in table.snapshots:
        snap["snapshot-id"] = ids.get(snap["snapshot-id"], snap["snapshot-id"])
        if snap.get("parent-snapshot-id") in ids:
            snap["parent-snapshot-id"] = ids[snap["parent-snapshot-id"]]
    table.statistics.clear()
    table.finish()
    path = table.root / "metadata" / "v1.metadata.json"
    meta = json.loads(path.read_text())
    meta["current-snapshot-id"] = ids.get(meta["current-snapshot-id"],
                                          meta["current-snapshot-id"])
    for ref in meta.get("refs", {}).values():
        ref["snapshot-id"] = ids.get(ref["snapshot-id"], ref["snapshot-id"])
    path.write_text(json.dumps(meta))
    return table.root


def test_a_snapshot_id_rounded_by_jq_names_its_snapshot(tmp_path: Path) -> None:
    root = _renumbered(tmp_path, {1002: BIG})
    pasted = _jq16(BIG)
    assert pasted == "3246050701271134000" and int(pasted) != BIG
    doc = _table_json(str(root))
    assert doc["tables"][0]["current-snapshot-id"] == BIG  # the number kept, not rounded
    (table,) = _table_json("--snapshot", pasted, str(root))["tables"]
    assert [v["snapshot-id"] for v in table["snapshots"]] == [BIG]
    (table,) = _table_json("--snapshot", str(int(float(BIG))), str(root))["tables"]
    assert [v["snapshot-id"] for v in table["snapshots"]] == [BIG]


def test_a_rounded_id_of_two_snapshots_is_an_error_naming_both(
        tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    root = _renumbered(tmp_path, {1001: BIG - 1, 1002: BIG})
    code, out, err = run_main(capsysbinary, "table", "--snapshot", _jq16(BIG), str(root))
    assert (code, out) == (1, b"")
    assert err.endswith(f"no snapshot 3246050701271134000; it is a rounded form of each of "
                        f"{BIG - 1}, {BIG}: name one exactly\n")
    code, _out, err = run_main(capsysbinary, "table", "--snapshot", "1003", str(root))
    assert code == 1 and "no snapshot 1003 (latest snapshots: " in err
