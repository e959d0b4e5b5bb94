"""Parts of the Spark pipeline that need no Spark."""

from __future__ import annotations

import sys

import pytest

from puffin_cli.format.errors import PuffinError
from puffin_cli.spark.session import get_session


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
            "puffin_cli.cli.scan, puffin_cli.analysis.commit; "
            "print(any(m.startswith('pyspark') for m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
