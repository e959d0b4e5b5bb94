"""``puffin table``'s human view on a hand-built report with 300-character paths: it fits 80
columns, folds paths after a '/' without losing a character, and keeps every key fact."""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from unittest import mock

import pytest
from rich.cells import cell_len
from rich.console import Console

from puffin_cli.analysis.table.partitions import PartitionTuple
from puffin_cli.analysis.table.report import (
    DeletionVector,
    SnapshotView,
    StatisticsBlob,
    StatisticsChoice,
    StatisticsFile,
    TableReport,
    TablesReport,
    Totals,
)
from puffin_cli.format.findings import Finding, Severity
from puffin_cli.render import console as consoles
from puffin_cli.render.table import render_human

LOCATION = "/warehouse/" + "/".join(f"level{i}-" + "w" * 24 for i in range(4)) + "/orders"
DATA = "data/" + "/".join(f"region_{i}=" + "r" * 24 for i in range(9)) + "/00000-26-data.parquet"
# One name longer than any line: it can only be split inside the name.
HUGE = "data/" + "n" * 120 + ".parquet"
ELSEWHERE = "s3://another-bucket/" + "/".join("e" * 40 for _ in range(6)) + "/f.parquet"
PUFFIN = "data/" + "/".join("p" * 50 for _ in range(4)) + "/00000-38-deletes.puffin"
STATS = "metadata/" + "/".join("s" * 60 for _ in range(4)) + "/5740748796-554e31ff.stats"
OLD_STATS = "metadata/" + "/".join("o" * 60 for _ in range(4)) + "/3003513566-10b07c7e.stats"
ORPHAN = "metadata/" + "/".join("q" * 60 for _ in range(4)) + "/orphan.stats"


def _dv(data_file: str, offset: int, length: int, rows: int) -> DeletionVector:
    return DeletionVector(data_file=data_file, path=f"{LOCATION}/{PUFFIN}", offset=offset,
                          length=length, record_count=rows, cardinality=rows,
                          container="puffin", spec_id=0, partition=PartitionTuple(0, ()),
                          sequence_number=2)


def _blob(field: int, column: str, ndv: int) -> StatisticsBlob:
    return StatisticsBlob(type="apache-datasketches-theta-v1", fields=(field,),
                          columns=(column,), snapshot_id=1001, sequence_number=1, ndv=ndv,
                          properties={"ndv": str(ndv)})


def _report() -> TablesReport:
    first = SnapshotView(
        snapshot_id=1001, parent_id=None, sequence_number=1, timestamp_ms=0,
        operation="append", current=False, schema_id=0,
        statistics=(StatisticsFile(1001, f"file:{LOCATION}/{OLD_STATS}", 33418, 523, 0,
                                   (_blob(1, "id", 7555), _blob(3, "customer.name", 97))),),
        statistics_used=StatisticsChoice(f"file:{LOCATION}/{OLD_STATS}",
                                         f"file:{LOCATION}/{OLD_STATS}", 1001),
        partition_statistics=(), deletion_vectors=(),
        totals=Totals(1, 2, 0, 0, 0, 0, 0))
    dvs = (_dv(f"{LOCATION}/{DATA}", 484, 482, 221), _dv(f"{LOCATION}/{HUGE}", 966, 480, 220),
           _dv(ELSEWHERE, 4, 240, 100))
    second = SnapshotView(
        snapshot_id=5740748796602300231, parent_id=1001, sequence_number=2, timestamp_ms=0,
        operation="delete", current=True, schema_id=0, statistics=(),
        statistics_used=StatisticsChoice(None, f"file:{LOCATION}/{OLD_STATS}", 1001),
        partition_statistics=(), deletion_vectors=dvs,
        totals=Totals(0, 0, 3, 1, 1202, 541, 0))
    findings = (
        Finding("table.orphan", Severity.INFO,
                f"{LOCATION}/{ORPHAN}: Puffin file referenced by no statistics entry"),
        Finding("table.dv.offset", Severity.ERROR,
                f"snapshot 5740748796602300231: DV for file:{LOCATION}/{DATA} in "
                f"file:{LOCATION}/{PUFFIN}: content_offset is 484, the blob is at 486"),
        Finding("dv.crc", Severity.WARNING, f"{LOCATION}/{PUFFIN}: CRC-32 is 0xa849fc16 "
                "(at byte 240)", offset=240, blob_index=0),
    )
    table = TableReport(
        path=LOCATION, metadata_file=f"{LOCATION}/metadata/v9.metadata.json",
        format_version=3, table_uuid=None, location=f"file:{LOCATION}", relocated=(),
        current_snapshot_id=5740748796602300231, snapshots=(first, second),
        orphans=(f"{LOCATION}/{ORPHAN}",), manifests_read=7, errors=1, warnings=1,
        findings=findings)
    return TablesReport((table,))


def _render(console: Console) -> list[str]:
    render_human(_report(), console)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue().splitlines()


def _narrow() -> list[str]:
    with mock.patch.dict(os.environ, {"COLUMNS": "80", "NO_COLOR": "1"}):
        return _render(consoles.console(io.StringIO()))


def test_lines_for_a_pipe_are_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a terminal, no ``COLUMNS``: every path whole on its line, the bar of the
    evolution chart in its nominal 80 columns."""
    monkeypatch.delenv("COLUMNS", raising=False)
    lines = _render(consoles.console(io.StringIO()))
    for path in (DATA, ELSEWHERE, PUFFIN, OLD_STATS, HUGE):
        assert any(line.endswith(path) or f"{path} " in line for line in lines), path
    assert f"  deletion vectors in {PUFFIN}" in lines
    assert not any(line != line.rstrip() for line in lines)
    chart = lines.index("  deletes and statistics by snapshot, oldest first")
    assert all(cell_len(line) <= 80 for line in lines[chart:chart + 4])


def _folded(lines: list[str], path: str) -> list[str]:
    """The consecutive lines (stripped) that spell ``path`` exactly."""
    stripped = [line.strip() for line in lines]
    for start, line in enumerate(stripped):
        if not line or not path.startswith(line):
            continue
        parts: list[str] = []
        for piece in stripped[start:]:
            if not path.startswith("".join(parts) + piece):
                break
            parts.append(piece)
            if "".join(parts) == path:
                return parts
    raise AssertionError(f"{path} is not on consecutive lines of its own")


def test_fits_80_columns_without_escape_codes() -> None:
    lines = _narrow()
    assert max(cell_len(line) for line in lines) <= 80
    assert not any("\x1b" in line for line in lines)
    assert not any(line != line.rstrip() for line in lines)


def test_paths_fold_after_a_slash_and_stay_intact() -> None:
    lines = _narrow()
    for path in (DATA, ELSEWHERE, PUFFIN, OLD_STATS, LOCATION):
        parts = _folded(lines, path)
        assert len(parts) > 1
        assert all(part.endswith("/") for part in parts[:-1]), parts
    huge = _folded(lines, HUGE)
    assert huge[0] == "data/" and "".join(huge) == HUGE


def test_key_facts() -> None:
    lines = _narrow()
    text = "\n".join(lines)
    assert "snapshot 1001  sequence 1, append, schema 0" in lines
    assert "snapshot 5740748796602300231 (current)  sequence 2, delete, schema 0" in lines
    assert "  metadata         metadata/v9.metadata.json" in lines
    assert "  location         this directory" in lines
    assert re.search(r"^    apache-datasketches-theta-v1 +id +1 +7,555$", text, re.M)
    assert re.search(r"^    apache-datasketches-theta-v1 +customer\.name +3 +97$", text, re.M)
    assert "    33,418 bytes, footer 523 bytes" in lines
    # Both readers' answers, for each snapshot; the difference is spelled out.
    assert text.count("  Spark uses       this snapshot's file (above), if spark.sql.cbo.enabled\n"
                      "  Trino uses       the same file\n") == 1
    assert ("  statistics       none registered for this snapshot\n"
            "  Spark uses       none\n"
            "  Trino uses       ancestor 1001's file (differs from Spark)\n") in text
    # Each DV: its data file, then offset, length, rows and container aligned.
    assert lines.count("    data file") == 1
    assert lines.count("        offset  length  rows  container") == 1
    numbers = [line for line in lines if re.fullmatch(r" {8}[ \d,]+ puffin", line)]
    assert [line.split() for line in numbers] == [["484", "482", "221", "puffin"],
                                                  ["966", "480", "220", "puffin"],
                                                  ["4", "240", "100", "puffin"]]
    assert len({line.index("puffin") for line in numbers}) == 1
    assert ("  totals           0 live data file(s), 0 row(s)\n"
            "                   0 statistics file(s), 0 blob(s)\n"
            "                   3 deletion vector(s) in 1 file(s), 1,202 bytes\n"
            "                   541 deleted row(s)\n") in text
    # Findings: errors first, "severity code  message", further lines indented.
    error, warning, info = (next(i for i, line in enumerate(lines) if line.startswith(head))
                            for head in ("  error    ", "  warning  ", "  info     "))
    assert error < warning < info
    assert lines[error] == "  error    table.dv.offset  snapshot 5740748796602300231: DV for"
    assert lines[warning] == "  warning  dv.crc"
    assert lines[info] == "  info     table.orphan"
    assert all(line.startswith("    ") for line in lines[error + 1:warning] + lines[info + 1:-1])
    # The offset the message gives is not repeated.
    assert lines[warning + 5] == "    CRC-32 is 0xa849fc16 (at byte 240) (blob 0)"
    assert _folded(lines, f"{ORPHAN}:") == _folded(lines[info + 1:], f"{ORPHAN}:")
    assert lines[-1] == "  1 error(s), 1 warning(s); 7 manifest file(s) read"


def test_wide_console_shows_one_row_per_deletion_vector() -> None:
    console = Console(file=io.StringIO(), width=400, no_color=True, color_system=None,
                      highlight=False)
    lines = _render(console)
    assert max(cell_len(line) for line in lines) <= 400
    for path, numbers in ((DATA, r"484 +482 +221"), (HUGE, r"966 +480 +220"),
                          (ELSEWHERE, r"4 +240 +100")):
        assert any(re.fullmatch(rf"    {re.escape(path)} +{numbers}  puffin", line)
                   for line in lines), path
    assert f"  deletion vectors in {PUFFIN}" in lines
    assert f"  statistics file  {OLD_STATS}" in lines


def test_relative_table_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    orphan = Finding("table.orphan", Severity.INFO,
                     "db/orders/metadata/x.stats: Puffin file referenced by no snapshot")
    table = TableReport(
        path="db/orders", metadata_file="db/orders/metadata/v1.metadata.json",
        format_version=2, table_uuid=None, location=f"file://{tmp_path}/db/orders/",
        relocated=(), current_snapshot_id=None, snapshots=(),
        orphans=("db/orders/metadata/x.stats",), manifests_read=0, errors=0, warnings=0,
        findings=(orphan,))
    console = consoles.console(io.StringIO())
    render_human(TablesReport((table,)), console)
    assert isinstance(console.file, io.StringIO)
    lines = console.file.getvalue().splitlines()
    assert lines[:4] == ["db/orders", "  metadata         metadata/v1.metadata.json",
                         "  format           v2", "  location         this directory"]
    assert ("  info  table.orphan  metadata/x.stats: Puffin file referenced by no snapshot"
            in lines)
