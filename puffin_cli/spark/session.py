"""The SparkSession of the pipeline: created here only, quiet.

``--master`` picks the cluster (default ``local[*]``); under ``spark-submit`` the active session
is reused. Spark tasks run puffin_cli's own Python code: on a cluster its executors import it
from a zip of this installation (:func:`ship_package`). Errors reach the user as one line from
puffin itself, so Spark's own chatter is kept off the terminal: the driver JVM started here
gets ``/dev/null`` as its stderr (unless ``quiet=False``, e.g. with ``--debug``), PySpark's
error logger is silenced, and the console progress bar is off (puffin draws its own).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from puffin_cli.errors import PuffinError

DEFAULT_MASTER = "local[*]"
APP_NAME = "puffin-cli"
# Spark 4.1+: over TCP, each Python task waited about 40 ms on the socket (16 tasks that do
# nothing: 0.46 s a job on local[2], 0.14 s over Unix sockets).
UNIX_SOCKETS = "spark.python.unix.domain.socket.enabled"


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
    settings = conf or {}
    active = SparkSession.getActiveSession()
    if active is not None:
        for key, value in settings.items():
            if key.startswith("spark.sql."):  # the ones a running session can change
                active.conf.set(key, value)
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.appName(APP_NAME)
               .master(master or DEFAULT_MASTER)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false"))
    if hasattr(socket, "AF_UNIX"):  # the JVM and Python workers talk over Unix sockets
        builder = builder.config(UNIX_SOCKETS, "true")
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


_SHIPPED: set[str] = set()


def ship_package(spark: Any) -> None:
    """Let executors on other machines import puffin_cli: add a zip of this installation's
    package to the application, once (its dependencies, numpy, pyarrow and the rest, must be
    installed there). Local mode shares this machine's installation and needs nothing."""
    sc = spark.sparkContext
    if str(sc.master).startswith("local") or sc.applicationId in _SHIPPED:
        return
    import puffin_cli

    package = Path(puffin_cli.__file__).parent
    folder = tempfile.mkdtemp(prefix="puffin-cli-")
    archive = shutil.make_archive(os.path.join(folder, "puffin_cli"), "zip",
                                  root_dir=package.parent, base_dir=package.name)
    sc.addPyFile(archive)
    _SHIPPED.add(sc.applicationId)


def run_with_progress(spark: Any, action: Callable[[], Any],
                      progress: Callable[[int, int], None] | None, description: str) -> Any:
    """Run ``action`` (a Spark action) in a thread; report its tasks to ``progress`` as
    (completed tasks, tasks in all)."""
    if progress is None:
        return action()
    sc = spark.sparkContext
    group = f"puffin-{uuid.uuid4().hex}"
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            sc.setJobGroup(group, description, interruptOnCancel=True)
            box["value"] = action()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work, name="puffin-spark-job", daemon=True)
    thread.start()
    tracker = sc.statusTracker()
    try:
        while thread.is_alive():
            thread.join(0.25)
            done = total = 0
            for job_id in tracker.getJobIdsForGroup(group) or []:
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job is not None else ():
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:
                        done += stage.numCompletedTasks
                        total += stage.numTasks
            progress(done, total)
    except KeyboardInterrupt:
        sc.cancelJobGroup(group)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]
