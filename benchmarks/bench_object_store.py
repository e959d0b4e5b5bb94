"""Issue 11 figures: Puffin files in an object store (a moto S3 server on loopback) against the
same bytes on local disk, in the same run.

(a) `inspect --json --no-decode` of a 1 GiB object: requests and bytes as the server saw them
    (a counting proxy in front of it), and median wall time against the same command on the
    local copy;
(b) `validate` of 1,000 small objects under a prefix against the same files in a local
    directory (goal: at most 3x), and against the time the server itself takes to answer
    1,000 GETs from a plain HTTP client (moto is pure Python: its own time bounds the first
    ratio from below).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import PUFFIN, run_measured, sparse_puffin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from s3server import start_server

GIB = 1 << 30
BUCKET = "bench"
SMALL_FILES = 1000
REPEAT = 5


@contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    """Commands started meanwhile see ``env`` (the variables a user would set)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _median(argv: list[str], repeat: int = REPEAT) -> float:
    return statistics.median(run_measured(argv)[0] for _ in range(repeat))


def _plain_gets(endpoint: str, paths: list[str], workers: int) -> float:
    """Seconds for a plain HTTP client to GET the last 64 KiB of each path, ``workers`` at a
    time: what the server itself costs for the same requests."""
    import http.client
    from concurrent.futures import ThreadPoolExecutor
    from urllib.parse import urlparse

    url = urlparse(endpoint)

    def get(path: str) -> int:
        connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=120)
        connection.request("GET", path, headers={"Range": "bytes=-65536"})
        size = len(connection.getresponse().read())
        connection.close()
        return size

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(get, paths))
    return time.perf_counter() - started


def _small_files(root: Path, count: int) -> list[Path]:
    from puffin_cli.blobs.deletion_vector import (
        bitmap_from_ranges,
        dv_blob_properties,
        encode_deletion_vector,
    )
    from puffin_cli.format import PuffinWriter

    blob = encode_deletion_vector(bitmap_from_ranges([(0, 999), (5000, 5100)]))
    paths = []
    for i in range(count):
        path = root / f"part-{i // 100:02d}" / f"{i:05d}.puffin"
        path.parent.mkdir(parents=True, exist_ok=True)
        with PuffinWriter(path, created_by="bench") as writer:
            writer.add_stored_blob("deletion-vector-v1", blob, fields=[2147483645],
                                   properties=dv_blob_properties(f"s3://b/d/{i}.parquet", 1101))
        paths.append(path)
    return paths


def run(tmp: Path) -> list[tuple[str, float, str]]:
    rows: list[tuple[str, float, str]] = []
    server = start_server()
    try:
        client = server.client()
        client.create_bucket(Bucket=BUCKET)
        counted = server.env(server.proxy_endpoint)  # through the counting proxy
        direct = server.env()  # wall times without the proxy's own cost

        big = tmp / "big.puffin"
        sparse_puffin(big, GIB)
        started = time.perf_counter()
        client.upload_file(str(big), BUCKET, "big.puffin")
        rows.append(("upload of the 1 GiB object (setup)", time.perf_counter() - started, "s"))
        location = f"s3://{BUCKET}/big.puffin"
        argv = [*PUFFIN, "inspect", "--json", "--no-decode"]
        server.proxy.reset()
        with _environment(counted):
            run_measured([*argv, location])
        requests = list(server.proxy.requests)
        rows.append(("inspect 1 GiB object: requests seen by the server", len(requests), ""))
        rows.append(("inspect 1 GiB object: bytes sent by the server",
                     sum(r.body_bytes for r in requests), "B"))
        with _environment(direct):
            remote = _median([*argv, location])
            local = _median([*argv, str(big)])
        rows.append(("inspect 1 GiB object: wall (median)", remote * 1000, "ms"))
        rows.append(("inspect 1 GiB local file: wall (median)", local * 1000, "ms"))
        rows.append(("inspect object / local", remote / local, "x"))
        server_only = statistics.median(_plain_gets(server.endpoint, [f"/{BUCKET}/big.puffin"], 1)
                                        for _ in range(REPEAT))
        rows.append(("the same GET by a plain HTTP client (the server's own time)",
                     server_only * 1000, "ms"))

        root = tmp / "small"
        for path in _small_files(root, SMALL_FILES):
            client.put_object(Bucket=BUCKET, Key=f"small/{path.relative_to(root)}",
                              Body=path.read_bytes())
        server.proxy.reset()
        prefix = f"s3://{BUCKET}/small"
        validate = [*PUFFIN, "validate", "--quiet"]
        with _environment(counted):
            run_measured([*validate, prefix])
        requests = list(server.proxy.requests)
        rows.append((f"validate {SMALL_FILES} objects: requests seen by the server",
                     len(requests), ""))
        with _environment(direct):
            remote = _median([*validate, prefix], 3)
            local = _median([*validate, str(root)], 3)
        rows.append((f"validate {SMALL_FILES} objects under a prefix: wall (median)",
                     remote * 1000, "ms"))
        rows.append((f"validate {SMALL_FILES} local files: wall (median)", local * 1000, "ms"))
        rows.append(("validate prefix / local directory (goal <= 3)", remote / local, "x"))
        keys = [f"/{BUCKET}/small/{p.relative_to(root)}" for p in sorted(root.rglob("*.puffin"))]
        floor = _plain_gets(server.endpoint, keys, 16)
        rows.append((f"{SMALL_FILES} GETs by a plain HTTP client, 16 at a time (server's time)",
                     floor * 1000, "ms"))
        rows.append(("validate prefix / the server's time for as many GETs", remote / floor, "x"))
    finally:
        server.stop()
    return rows
