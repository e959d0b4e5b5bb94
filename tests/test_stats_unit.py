"""Parts of the Spark pipeline that need no Spark."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from puffin_cli.errors import PuffinError
from puffin_cli.spark.session import get_session, ship_package


def test_missing_pyspark_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(PuffinError) as caught:
        get_session("local[1]")
    assert caught.value.code == "spark.missing"
    assert str(caught.value) == ("pyspark is not installed; install the spark extra: "
                                 "pip install 'puffin-cli[spark]' (PySpark 4.1 or newer)")


def test_spark_package_imports_no_pyspark() -> None:
    import subprocess

    code = ("import sys, puffin_cli.spark.stats, puffin_cli.spark.scan, puffin_cli.cli.stats, "
            "puffin_cli.analysis.stats.task_groups, puffin_cli.analysis.stats.sketch_task, "
            "puffin_cli.cli.scan, puffin_cli.analysis.table.commit; "
            "print(any(m.startswith('pyspark') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_ship_package_to_cluster_executors_once() -> None:
    """On a cluster, executors get a zip of this installation's puffin_cli (once per
    application); local mode adds nothing."""
    added: list[str] = []

    def session(master: str, app: str) -> SimpleNamespace:
        return SimpleNamespace(sparkContext=SimpleNamespace(
            master=master, applicationId=app, addPyFile=added.append))

    ship_package(session("local[2]", "app-local"))
    assert added == []
    ship_package(session("spark://host:7077", "app-1"))
    ship_package(session("spark://host:7077", "app-1"))
    assert len(added) == 1
    with zipfile.ZipFile(added[0]) as archive:
        names = set(archive.namelist())
    assert {"puffin_cli/__init__.py", "puffin_cli/analysis/stats/sketch_task.py",
            "puffin_cli/blobs/theta/sketches.py"} <= names
    assert Path(added[0]).name == "puffin_cli.zip"


def test_summary_counts_read_in_the_singular_and_rows_per_second_skip_spark_start() -> None:
    """Rows/s only for a sketching step that read enough rows to make it a rate (issue 28
    §3); why the sketcher, unless the work was small; a fresh snapshot's file named once."""
    from dataclasses import replace

    from puffin_cli.analysis.scan import ScanResult
    from puffin_cli.analysis.stats.result import Chosen, Mode, SketcherReason, StatsResult, Where
    from puffin_cli.render.stats import scan_lines, stats_lines

    result = StatsResult("t", 7, 1, 0, (), (), rows_read=1_000_000, data_files=1,
                         position_delete_files=1, deletion_vectors=0, statistics_path="s",
                         statistics_location="s", file_size=1, footer_size=1, seconds=12.0,
                         sketch_seconds=2.0, files_read=1, mode_reason="--full")
    assert stats_lines(result)[:3] == [
        "snapshot 7 (sequence 1): 1 data file, deletes: 1 position delete file",
        "full: read 1 data file, 1,000,000 live rows (--full)",
        "12.0 s; sketching 2.0 s on Spark, its start-up not counted, 500,000 rows/s"]
    forced = replace(result, sketcher=Chosen(Where.SPARK, SketcherReason.ROWS,
                                             "1,000,000 rows to read: more than 10"))
    assert stats_lines(forced)[2] == ("12.0 s; sketching 2.0 s on Spark (1,000,000 rows to "
                                      "read: more than 10), its start-up not counted, "
                                      "500,000 rows/s")
    incremental = replace(result, mode=Mode.INCREMENTAL, mode_reason="base snapshot 3",
                          in_process=True, rows_read=2000, files_read=2)
    assert stats_lines(incremental)[1:3] == [
        "incremental: read 2 data files, 2,000 live rows; base snapshot 3",
        "12.0 s; sketching 2.0 s in this process"]  # 2,000 rows: no rate
    fresh = replace(result, mode=Mode.FRESH, statistics_path="m/7-u.stats",
                    mode_reason="snapshot 7 already has statistics (m/7-u.stats)", rows_read=0)
    lines = stats_lines(fresh)
    assert lines[1] == "fresh: snapshot 7 has statistics of every column: m/7-u.stats"
    assert lines[-1] == "nothing written (--full recomputes)"
    assert "\n".join(lines).count("7-u.stats") == 1
    scan = ScanResult(1, 0, 0, 0, 0, 0, (), None, None, 1.0, catalog="c", tables=1)
    assert scan_lines(scan) == [
        "1 table of catalog c; 0 orphan Puffin files (under a table, referenced by none of "
        "its metadata)",
        "scanned 1 Puffin file in 1.0 s (1 file/s): 0 with errors, 0 with warnings; 0 errors, "
        "0 warnings, 0 info"]
