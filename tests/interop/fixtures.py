"""Session-scoped pytest fixtures for the interop tier.

Use from a test module with ``from interop.fixtures import java_oracle_fixture  # noqa: F401``
(the fixture is named ``java_oracle``), or
register for all tests with ``pytest_plugins = ["interop.fixtures"]`` in tests/conftest.py.
Setup errors propagate (the test errors), so a missing jar fails CI instead of skipping.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tiers import needs

from interop.oracle import JavaOracle


@pytest.fixture(scope="session", name="java_oracle")
@needs("java")
def java_oracle_fixture() -> Iterator[JavaOracle]:
    oracle = JavaOracle()
    try:
        yield oracle
    finally:
        oracle.close()
