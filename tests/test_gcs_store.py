"""Commands on objects in Google Cloud Storage (fake-gcs-server, an emulator, on loopback) give
the same output as on a local copy of the same bytes. The store is configured as a user would
point it at an emulator: ``--io gcs.service.host=… --io gcs.anonymous=true``. Reads only:
this emulator has no XML API upload (``PUT /bucket/key`` answers 400 "invalid uploadType"),
which is what obstore writes with, so ``write gs://…`` cannot be tested against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from outputs import same

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
BUCKET = "warehouse"
PREFIX = f"gs://{BUCKET}"
FILES = ["db0/deletion-vectors.puffin", "db0/lz4-footer.puffin", "db1/empty.puffin",
         "db1/stats.puffin"]
TIMEOUT = 120


def _post(url: str, body: bytes, content_type: str) -> None:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": content_type})
    urllib.request.urlopen(request, timeout=30).close()


@pytest.fixture(scope="module")
def tree(gcs_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local directory and the same objects in the bucket, uploaded with the emulator's JSON
    API (not through the code under test)."""
    root = tmp_path_factory.mktemp("warehouse")
    _post(f"{gcs_server}/storage/v1/b?project=test", json.dumps({"name": BUCKET}).encode(),
          "application/json")
    for name in FILES:
        data = (SAMPLES / Path(name).name).read_bytes()
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        _post(f"{gcs_server}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name="
              f"{urllib.parse.quote(name, safe='')}", data, "application/octet-stream")
    yield root


@pytest.fixture
def io(gcs_server: str) -> tuple[str, ...]:
    return ("--io", f"gcs.service.host={gcs_server}", "--io", "gcs.anonymous=true")


def puffin(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS")}
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], env=env,
                          capture_output=True, timeout=TIMEOUT, check=False)



@pytest.mark.parametrize("name", FILES)
def test_inspect_gs_object_equals_local(tree: Path, io: tuple[str, ...], name: str) -> None:
    same(puffin("inspect", "--json", *io, f"{PREFIX}/{name}"),
         puffin("inspect", "--json", str(tree / name)), PREFIX, tree)


def test_inspect_and_dump_blob_gs_equal_local(tree: Path, io: tuple[str, ...]) -> None:
    same(puffin("inspect", *io, f"{PREFIX}/db1/stats.puffin"),
         puffin("inspect", str(tree / "db1/stats.puffin")), PREFIX, tree)
    same(puffin("dump-blob", *io, f"{PREFIX}/db1/stats.puffin", "1", "--raw"),
         puffin("dump-blob", str(tree / "db1/stats.puffin"), "1", "--raw"), PREFIX, tree)
    same(puffin("dump-blob", *io, f"{PREFIX}/db0/deletion-vectors.puffin", "0", "--as",
                "positions"),
         puffin("dump-blob", str(tree / "db0/deletion-vectors.puffin"), "0", "--as",
                "positions"), PREFIX, tree)


def test_validate_bucket_prefix_equals_local_directory(tree: Path, io: tuple[str, ...]) -> None:
    remote = puffin("validate", "--json", *io, PREFIX)
    same(remote, puffin("validate", "--json", str(tree)), PREFIX, tree)
    assert [r["path"] for r in json.loads(remote.stdout)["files"]] == \
        [f"{PREFIX}/{name}" for name in FILES]
