"""Make helper packages under tests/ (e.g. ``interop``) importable from test modules."""

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 and a counting proxy before it (tests/s3server.py),
    started once for the session and stopped at its end."""
    from s3server import served

    yield from served()
