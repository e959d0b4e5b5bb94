"""The suite's tiers: what a test needs beyond the venv, as pytest markers (registered in
pyproject.toml, selected with ``-m``; ``make check`` runs those in :data:`CHECK`).

A test gets its tiers three ways (tests/conftest.py): from the fixtures it uses (a fixture
function decorated with :func:`needs`), from ``pytestmark``/``@pytest.mark.<tier>``, and
``unit`` when it has no other. It cannot be mis-tiered silently: every helper that starts a
tier's resource calls :func:`need` (a JVM, the Spark venv, an emulator, Chromium...), which
fails the running test when it is not marked with that tier, and after each test conftest.py
checks the same of every fixture the test set up (also those it got through
``request.getfixturevalue`` or a session fixture set up earlier).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pytest itself only inside a test run: benchmarks use the helpers too
    import pytest

# tier -> what a test of it needs (pyproject.toml's markers say the same; test_tiers.py checks)
TIERS = {
    "unit": "nothing beyond the venv: units and the CLI in process or as a subprocess",
    "samples": "the Iceberg Java and Trino sample files copied under tests/data/foreign",
    "java": "Iceberg Java classes in a JVM (jars downloaded once into the interop cache)",
    "spark": "Spark: the PySpark 3.5 venv of the interop cache, or PySpark 4 of the venv (a JVM)",
    "objectstore": "an object-store emulator: moto S3, Azurite (npm), fake-gcs-server",
    "catalog": "an Iceberg catalog through pyiceberg (SQL on sqlite, or the REST server)",
    "paimon": "pypaimon in its own venv of the interop cache (downloaded once)",
    "browser": "`table --html` pages: headless Chromium (the Debian package), npm's uPlot",
    "install": "builds or installs the package in a fresh environment (downloads from PyPI)",
}
# the tiers `make check` runs: no JVM, no emulator, no download
CHECK = ("unit", "samples", "catalog")
# a test of the key tier has the value's resources too (Spark runs Iceberg Java in its JVM)
IMPLIES = {"spark": ("java",)}

_current: list[pytest.Item] = []  # the test running now (conftest.py sets it)

F = TypeVar("F", bound=Callable[..., Any])


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers the test is marked with, and those they imply."""
    marked = {mark.name for mark in item.iter_markers() if mark.name in TIERS}
    return marked.union(*(IMPLIES.get(tier, ()) for tier in marked))


def reads_samples(item: pytest.Item) -> bool:
    """Whether the test names the samples directory (helpers.SAMPLES) in its body or is
    parametrized with a file in it."""
    from helpers import SAMPLES

    function = getattr(item, "function", None)
    if function is not None and "SAMPLES" in function.__code__.co_names:
        return True
    callspec = getattr(item, "callspec", None)
    values = callspec.params.values() if callspec is not None else ()
    return any(str(value).startswith(str(SAMPLES)) for value in values)


def needs(*tiers: str) -> Callable[[F], F]:
    """Mark a fixture function (under ``@pytest.fixture``): every test using it has ``tiers``."""
    unknown = set(tiers) - TIERS.keys()
    if unknown:
        raise ValueError(f"unknown tier(s) {sorted(unknown)}; the tiers are {sorted(TIERS)}")

    def mark(function: F) -> F:
        function.tiers = tiers  # type: ignore[attr-defined]
        return function
    return mark


def fixture_tiers(function: object) -> tuple[str, ...]:
    return tuple(getattr(function, "tiers", ()))


def need(tier: str, what: str) -> None:
    """Called by the helper that starts ``what``, a resource of ``tier``: fails the running test
    (if any: helpers also run outside pytest) when it is not marked with ``tier``."""
    if tier not in TIERS:
        raise ValueError(f"unknown tier {tier!r}")
    if _current and tier not in tiers_of(_current[-1]):
        import pytest

        pytest.fail(f"{_current[-1].nodeid} starts {what} but is not marked "
                    f"@pytest.mark.{tier} (tests/tiers.py)", pytrace=False)
