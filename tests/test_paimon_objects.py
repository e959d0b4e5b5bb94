"""Paimon BLOB files in an S3-compatible object store (moto on loopback, behind a counting
proxy): the same output as for a local copy, metadata in one ranged request, rows streamed
from the object, and `write` to an object create-only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from paimon_files import PLAIN_ROWS, build, corruptions
from s3server import S3Server

from puffin_cli.format import paimon_blob as pb

BUCKET = "paimon-objects"
TIMEOUT = 120


def puffin(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], env=env,
                          capture_output=True, timeout=TIMEOUT, check=False)


@pytest.fixture(scope="module", name="tree")
def tree_fixture(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same .blob files in a local directory and under s3://BUCKET/t/."""
    root = tmp_path_factory.mktemp("blobs")
    rows = [*PLAIN_ROWS, pb.encode_array([b"a", None]), *[bytes([n]) * 3000 for n in range(40)]]
    files = {"t/ok.blob": build(rows), "t/sub/bad.blob": corruptions()[11].data,
             "t/sub/no-suffix": build([b"recognised by content"])}
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    for key, data in files.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_bytes(data)
        client.put_object(Bucket=BUCKET, Key=key, Body=data)
    return root


def same(remote: subprocess.CompletedProcess[bytes], local: subprocess.CompletedProcess[bytes],
         root: Path) -> None:
    def text(data: bytes) -> bytes:
        return data.replace(f"s3://{BUCKET}".encode(), str(root).encode())

    assert (remote.returncode, text(remote.stdout), text(remote.stderr)) == \
        (local.returncode, local.stdout, local.stderr)


@pytest.mark.parametrize("args", [("inspect", "--json", "t/ok.blob"),
                                  ("inspect", "--limit", "3", "t/ok.blob"),
                                  ("inspect", "--json", "t/sub/no-suffix"),
                                  ("validate", "--json", "t"),
                                  ("dump-blob", "t/ok.blob", "5"),
                                  ("dump-blob", "t/ok.blob", "1")])
def test_objects_read_as_local_files(tree: Path, s3_server: S3Server,
                                     args: tuple[str, ...]) -> None:
    command, *options, name = args
    remote = puffin(command, *options, f"s3://{BUCKET}/{name}", env=s3_server.env())
    local = puffin(command, *options, str(tree / name), env=s3_server.env())
    same(remote, local, tree)


def test_metadata_is_one_request_and_a_row_one_more(tree: Path, s3_server: S3Server) -> None:
    proxied = s3_server.env(s3_server.proxy_endpoint)
    s3_server.proxy.reset()
    done = puffin("inspect", "--json", "--no-decode", f"s3://{BUCKET}/t/ok.blob", env=proxied)
    assert done.returncode == 0, done.stderr
    assert [(r.method, r.range) for r in s3_server.proxy.requests] == \
        [("GET", "bytes=-65536")]
    s3_server.proxy.reset()
    done = puffin("dump-blob", f"s3://{BUCKET}/t/ok.blob", "0", env=proxied)
    assert done.stdout == b"hello"
    # the tail (index), then the whole record (framing and data: one request)
    assert [r.method for r in s3_server.proxy.requests] == ["GET", "GET"]


def test_write_to_an_object_is_create_only_and_reads_entries_from_objects(
        tree: Path, s3_server: S3Server, tmp_path: Path) -> None:
    env = s3_server.env()
    entry = tmp_path / "entry"
    entry.write_bytes(b"local entry")
    target = f"s3://{BUCKET}/out/written.blob"
    args = ["--entry", str(entry), "--entry", ":null",
            "--entry", f"s3://{BUCKET}/t/sub/no-suffix"]
    done = puffin("write", target, *args, env=env)
    assert done.returncode == 0, done.stderr
    expected = build([b"local entry", pb.Marker.NULL, (tree / "t/sub/no-suffix").read_bytes()])
    body = s3_server.client().get_object(Bucket=BUCKET, Key="out/written.blob")["Body"].read()
    assert body == expected
    again = puffin("write", target, *args, env=env)
    assert again.returncode == 1 and b"exists" in again.stderr
