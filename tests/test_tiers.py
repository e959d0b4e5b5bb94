"""The suite's tiers (tests/tiers.py): registered, given to every test, enforced where a tier's
resource starts, and what `make check` leaves out."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import tiers
from azurite import start as start_azurite
from browser import dump_dom
from helpers import SAMPLE_FILES, SAMPLES
from interop.javaenv import java_env
from interop.paimonenv import paimon_oracle
from interop.sparkenv import spark_env
from restcatalog import rest_catalog
from s3server import start_server

REPO = Path(__file__).resolve().parent.parent


def test_the_tiers_are_pyprojects_markers() -> None:
    config = (REPO / "pyproject.toml").read_text().split("[tool.pytest.ini_options]")[1]
    listed = config.split("markers = [", 1)[1].split("\n]", 1)[0]
    markers = dict(re.findall(r'^    "([a-z]+): (.*)",$', listed, re.MULTILINE))
    assert markers == tiers.TIERS
    assert re.search(r'^addopts = ".*--strict-markers', config, re.MULTILINE)  # no misspelt tier


def test_make_check_leaves_out_every_tier_but_the_checks() -> None:
    [heavy] = re.findall(r"^HEAVY := (.*)$", (REPO / "Makefile").read_text(), re.MULTILINE)
    assert heavy.split(" or ") == [t for t in tiers.TIERS if t not in tiers.CHECK]


def test_every_collected_test_has_a_tier(request: pytest.FixtureRequest) -> None:
    untiered = [item.nodeid for item in request.session.items if not tiers.tiers_of(item)]
    assert untiered == []


@pytest.mark.parametrize(("start", "tier"), [
    (java_env, "java"),
    (spark_env, "spark"),
    (paimon_oracle, "paimon"),
    (start_server, "objectstore"),
    (start_azurite, "objectstore"),
    (lambda: dump_dom(Path("page.html")), "browser"),
    (lambda: rest_catalog(Path("warehouse")).__enter__(), "catalog"),
])
def test_a_unit_test_starting_a_tiers_resource_fails(start: object, tier: str) -> None:
    """Before anything starts: the helper's first step is the check."""
    assert callable(start)
    with pytest.raises(pytest.fail.Exception, match=rf"is not marked @pytest\.mark\.{tier} "):
        start()


@pytest.mark.spark
def test_a_spark_test_may_start_spark_and_iceberg_java() -> None:
    tiers.need("spark", "Spark")
    tiers.need("java", "Iceberg Java")  # Spark runs it in its JVM
    with pytest.raises(pytest.fail.Exception, match=r"is not marked @pytest\.mark\.paimon"):
        tiers.need("paimon", "pypaimon")


@pytest.mark.parametrize("sample", SAMPLE_FILES[:1])
def test_a_test_given_a_sample_is_of_the_samples_tier(sample: Path,
                                                      request: pytest.FixtureRequest) -> None:
    assert tiers.tiers_of(request.node) == {"samples"}


def test_a_test_naming_the_samples_is_of_the_samples_tier(request: pytest.FixtureRequest) -> None:
    assert SAMPLES.is_dir()
    assert tiers.tiers_of(request.node) == {"samples"}


def test_any_other_is_a_unit_test(request: pytest.FixtureRequest) -> None:
    assert tiers.tiers_of(request.node) == {"unit"}


def test_a_fixture_of_a_tier_set_up_for_an_unmarked_test_fails_it() -> None:
    """After the call, conftest.py checks every fixture the test set up (also one it got
    through ``request.getfixturevalue``, or a session fixture an earlier test set up)."""
    import conftest

    @tiers.needs("objectstore")
    def server() -> None: ...

    class Item:  # what the hook reads of a test
        nodeid = "tests/test_x.py::test_y"
        _request = SimpleNamespace(_fixture_defs={"server": SimpleNamespace(func=server)})

        def iter_markers(self) -> list[object]:
            return []

    item = Item()
    tiers._current.append(item)  # type: ignore[arg-type]
    try:
        hook = conftest.pytest_runtest_call(item)  # type: ignore[arg-type]
        next(hook)
        with pytest.raises(pytest.fail.Exception, match=r"test_y starts fixture 'server' but "
                           r"is not marked @pytest\.mark\.objectstore"):
            hook.send(None)
    finally:
        tiers._current.pop()


@pytest.mark.spark
def test_a_test_of_another_tier_runs_with_no_spark_session_active() -> None:
    """The session a spark test leaves active (a module's ``spark`` fixture, the CLI run with
    ``--spark``) is not active during a test of another tier, so a small `stats compute`
    there neither joins it nor asks its parallelism (before: it did, and failed the tier
    check after the spark tests only); it is active again after that test."""
    import conftest
    from pyspark.sql import SparkSession

    from puffin_cli.analysis.stats.sketcher import Planning
    from puffin_cli.spark.session import get_session
    from puffin_cli.spark.stats import SparkSketcher, local_parallelism

    spark = get_session("local[2]")

    class Item:  # what the hook reads of a test
        nodeid = "tests/test_x.py::test_y"

        def iter_markers(self) -> list[object]:
            return []

    hook = conftest.pytest_runtest_protocol(Item())  # type: ignore[arg-type]
    next(hook)
    try:
        assert SparkSession.getActiveSession() is None
        sketcher = SparkSketcher()
        assert sketcher.planning() == Planning(local_parallelism(None, None), 200)
        assert not sketcher.started
    finally:
        with pytest.raises(StopIteration):
            hook.send(None)
    active = SparkSession.getActiveSession()
    assert active is not None and active._jsparkSession.equals(spark._jsparkSession)
