"""The SparkSession of the pipeline: created here only, quiet, UTC, Parquet field IDs on.

``--master`` picks the cluster (default ``local[*]``); under ``spark-submit`` the active session
is reused, with the SQL settings below applied to it. Errors reach the user as one line from
puffin itself, so Spark's own chatter is kept off the terminal: the driver JVM started here
gets ``/dev/null`` as its stderr (unless ``quiet=False``, e.g. with ``--debug``), PySpark's
error logger is silenced, and the console progress bar is off (puffin draws its own).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from puffin_cli.format.errors import PuffinError

DEFAULT_MASTER = "local[*]"
APP_NAME = "puffin-cli"

# Settings the pipeline relies on (also applied to a reused session).
SQL_CONF = {
    "spark.sql.parquet.fieldId.read.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    # CAST(BIGINT AS BINARY) (the decimal sketch input) is refused in ANSI mode; no
    # expression of the pipeline can overflow or meet an invalid cast.
    "spark.sql.ansi.enabled": "false",
}


def get_session(master: str | None = None, conf: dict[str, str] | None = None, *,
                quiet: bool = True) -> Any:
    """The active SparkSession, or a new one on ``master`` (default ``local[*]``)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise PuffinError("pyspark is not installed; install the spark extra: "
                          "pip install 'puffin-cli[spark]' (PySpark 4.1 or newer)",
                          code="spark.missing") from None

    if quiet:
        # PySpark logs every SQL error with its query context before raising it.
        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
            logging.getLogger(name).disabled = True
    settings = {**SQL_CONF, **(conf or {})}
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in settings.items():
            if key.startswith("spark.sql."):
                active.conf.set(key, value)
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.appName(APP_NAME)
               .master(master or DEFAULT_MASTER)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false"))
    for key, value in settings.items():
        builder = builder.config(key, value)
    saved = None
    if quiet:
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    try:
        session = builder.getOrCreate()
    finally:
        if saved is not None:
            os.dup2(saved, 2)
            os.close(saved)
    session.sparkContext.setLogLevel("ERROR")
    return session
