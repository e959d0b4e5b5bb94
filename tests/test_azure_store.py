"""Commands on objects in Azure Blob Storage (Azurite, the emulator, on loopback) give the same
output as on a local copy of the same bytes; writes are create-only. The store is configured as
a user would: ``--io adls.connection-string=…`` for ``abfss://``, the standard
``AZURE_STORAGE_*`` variables for ``az://``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from azurite import ACCOUNT, KEY, Azurite
from outputs import same

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
CONTAINER = "warehouse"
ABFSS = f"abfss://{CONTAINER}@{ACCOUNT}.dfs.core.windows.net"
AZ = f"az://{CONTAINER}"
FILES = ["db0/deletion-vectors.puffin", "db0/lz4-footer.puffin", "db1/empty.puffin",
         "db1/stats.puffin"]
TIMEOUT = 120


@pytest.fixture(scope="module")
def tree(azurite: Azurite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local directory and the same files in the container (samples, in two levels)."""
    root = tmp_path_factory.mktemp("warehouse")
    azurite.create_container(CONTAINER)
    for name in FILES:
        data = (SAMPLES / Path(name).name).read_bytes()
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        azurite.put(CONTAINER, name, data)
    yield root


def puffin(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "AZURITE_"))}
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], env={**clean, **(env or {})},
                          capture_output=True, timeout=TIMEOUT, check=False)



@pytest.fixture
def io(azurite: Azurite) -> tuple[str, str]:
    return ("--io", f"adls.connection-string={azurite.connection_string}")


@pytest.mark.parametrize("name", FILES)
def test_inspect_abfss_object_equals_local(tree: Path, io: tuple[str, str], name: str) -> None:
    same(puffin("inspect", "--json", *io, f"{ABFSS}/{name}"),
         puffin("inspect", "--json", str(tree / name)), ABFSS, tree)


def test_inspect_and_dump_blob_az_with_the_standard_variables(tree: Path,
                                                              azurite: Azurite) -> None:
    env = {"AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT, "AZURE_STORAGE_ACCOUNT_KEY": KEY,
           "AZURE_STORAGE_USE_EMULATOR": "true",
           "AZURITE_BLOB_STORAGE_URL": f"http://127.0.0.1:{azurite.port}"}
    same(puffin("inspect", f"{AZ}/db0/deletion-vectors.puffin", env=env),
         puffin("inspect", str(tree / "db0/deletion-vectors.puffin")), AZ, tree)
    same(puffin("dump-blob", f"{AZ}/db1/stats.puffin", "1", "--raw", env=env),
         puffin("dump-blob", str(tree / "db1/stats.puffin"), "1", "--raw"), AZ, tree)


def test_an_http_endpoint_variable_needs_no_other_setting(tree: Path, azurite: Azurite) -> None:
    """AZURE_STORAGE_ENDPOINT pointing at a plain-HTTP endpoint (Azurite, like a local MinIO
    for S3) works as set, with no flag allowing HTTP."""
    env = {"AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT, "AZURE_STORAGE_ACCOUNT_KEY": KEY,
           "AZURE_STORAGE_ENDPOINT": f"http://127.0.0.1:{azurite.port}/{ACCOUNT}"}
    same(puffin("inspect", "--json", f"{AZ}/db1/stats.puffin", env=env),
         puffin("inspect", "--json", str(tree / "db1/stats.puffin")), AZ, tree)


def test_dump_blob_abfss_equals_local(tree: Path, io: tuple[str, str]) -> None:
    same(puffin("dump-blob", *io, f"{ABFSS}/db0/deletion-vectors.puffin", "0", "--as",
                "positions"),
         puffin("dump-blob", str(tree / "db0/deletion-vectors.puffin"), "0", "--as",
                "positions"), ABFSS, tree)


def test_validate_container_prefix_equals_local_directory(tree: Path,
                                                          io: tuple[str, str]) -> None:
    remote = puffin("validate", "--json", *io, ABFSS)
    same(remote, puffin("validate", "--json", str(tree)), ABFSS, tree)
    assert [r["path"] for r in json.loads(remote.stdout)["files"]] == \
        [f"{ABFSS}/{name}" for name in FILES]


def test_write_to_an_azure_object_is_create_only(tree: Path, io: tuple[str, str],
                                                 azurite: Azurite, tmp_path: Path) -> None:
    target = f"{ABFSS}/written/dv.puffin"
    args = ("--dv", "s3://b/data/f.parquet", "--positions", "1,5,7-9", "--created-by", "test")
    first = puffin("write", *io, target, *args)
    assert first.returncode == 0, first.stderr
    local = puffin("write", str(tmp_path / "dv.puffin"), *args)
    assert azurite.get(CONTAINER, "written/dv.puffin") == (tmp_path / "dv.puffin").read_bytes()
    assert first.stdout.replace(target.encode(), str(tmp_path / "dv.puffin").encode()) == \
        local.stdout
    again = puffin("write", *io, target, *args)
    assert (again.returncode, again.stderr) == (
        1, f"puffin: error: {target}: exists; use --force to overwrite it\n".encode())
    forced = puffin("write", *io, target, "--force", "--dv", "s3://b/data/f.parquet",
                    "--positions", "3")
    assert forced.returncode == 0, forced.stderr
    assert azurite.get(CONTAINER, "written/dv.puffin") != (tmp_path / "dv.puffin").read_bytes()
