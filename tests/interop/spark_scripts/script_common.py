"""The SparkSession of the table-building scripts in this directory (PySpark 3.5 venv)."""

from __future__ import annotations

from pyspark.sql import SparkSession


def session(app: str, conf: dict[str, str]) -> SparkSession:
    """A session named ``app`` configured by ``conf`` (tests/interop/sparkenv.py's conf)."""
    builder = SparkSession.builder.appName(app)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
