"""Parts of the Spark pipeline that need no Spark."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from puffin_cli.format.errors import PuffinError
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
