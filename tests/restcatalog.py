"""An Iceberg REST catalog server on loopback for the tests: Iceberg Java's own REST handlers
(tests/interop/java/PuffinRestCatalog.java, compiled with the interop oracle) over a catalog of
Iceberg's metastore classes, table files in a local warehouse."""

from __future__ import annotations

import selectors
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from interop.javaenv import java_env
from s3server import stop_process
from tiers import need

START_TIMEOUT = 60.0


@contextmanager
def rest_catalog(warehouse: Path, *vended: str) -> Iterator[str]:
    """Serve a REST catalog over ``warehouse``; yields its URI. Each ``KEY=VALUE`` of ``vended``
    is in every loadTable response's config, as a catalog vending FileIO properties sends it."""
    need("catalog", "the REST catalog server")
    warehouse.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(java_env().rest_catalog_command(warehouse, *vended),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + START_TIMEOUT
        line = ""
        while not line.startswith("PORT ") and time.monotonic() < deadline:
            if selector.select(timeout=max(deadline - time.monotonic(), 0)):
                line = process.stdout.readline()
                if not line:  # the server ended before it listened
                    break
        if not line.startswith("PORT "):
            raise RuntimeError("the REST catalog server did not start")
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        stop_process(process)
