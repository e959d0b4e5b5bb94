"""Every command on objects in a real S3-compatible server (moto, on loopback) gives the same
output as on a local copy of the same bytes; reads stay cheap (counted by a proxy in front of
the server, not by our code); writes are create-only; failures are one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from s3server import S3Server

from puffin_cli.format.writer import PuffinWriter
from puffin_cli.storage import FileIO

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
BUCKET = "puffin-objects"
PREFIX = f"s3://{BUCKET}/warehouse"
TIMEOUT = 120


def puffin(*args: str, env: dict[str, str], stdin: bytes | None = None
           ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "puffin_cli", *args], env=env, input=stdin,
                          capture_output=True, timeout=TIMEOUT, check=False)


@pytest.fixture(scope="module")
def tree(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A local directory and the same files under ``PREFIX`` (samples, in two levels)."""
    root = tmp_path_factory.mktemp("warehouse")
    client = s3_server.client()
    client.create_bucket(Bucket=BUCKET)
    for index, sample in enumerate(sorted(SAMPLES.glob("*.puffin"))):
        relative = f"db{index % 2}/{sample.name}"
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        data = sample.read_bytes()
        (root / relative).write_bytes(data)
        client.put_object(Bucket=BUCKET, Key=f"warehouse/{relative}", Body=data)
    yield root


@pytest.fixture
def env(s3_server: S3Server) -> dict[str, str]:
    return s3_server.env()


def same(remote: subprocess.CompletedProcess[bytes], local: subprocess.CompletedProcess[bytes],
         root: Path) -> None:
    """The runs agree once the object locations read as the local paths."""
    def text(data: bytes) -> bytes:
        return data.replace(PREFIX.encode(), str(root).encode())

    assert (remote.returncode, text(remote.stdout), text(remote.stderr)) == \
        (local.returncode, local.stdout, local.stderr)


FILES = ["db0/deletion-vectors.puffin", "db0/lz4-footer.puffin", "db1/empty.puffin",
         "db1/stats.puffin"]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("options", [(), ("--json",), ("--json", "--no-decode"),
                                     ("--limit", "3")])
def test_inspect_object_equals_local(tree: Path, env: dict[str, str], name: str,
                                     options: tuple[str, ...]) -> None:
    same(puffin("inspect", *options, f"{PREFIX}/{name}", env=env),
         puffin("inspect", *options, str(tree / name), env=env), tree)


@pytest.mark.parametrize("args", [
    ("db1/stats.puffin", "0"), ("db1/stats.puffin", "1", "--raw"),
    ("db1/stats.puffin", "2", "--as", "hex"), ("db1/stats.puffin", "0", "--json"),
    ("db1/stats.puffin", "0", "--as", "sketch"),
    ("db0/deletion-vectors.puffin", "0", "--as", "positions"),
    ("db0/deletion-vectors.puffin", "1", "--raw", "--as", "hex"),
    ("db0/deletion-vectors.puffin", "1", "--json"),
])
def test_dump_blob_object_equals_local(tree: Path, env: dict[str, str],
                                       args: tuple[str, ...]) -> None:
    name, *rest = args
    same(puffin("dump-blob", f"{PREFIX}/{name}", *rest, env=env),
         puffin("dump-blob", str(tree / name), *rest, env=env), tree)


@pytest.mark.parametrize("options", [("--json",), (), ("--strict",),
                                     ("--profile", "java", "--json")])
def test_validate_prefix_equals_local_directory(tree: Path, env: dict[str, str],
                                                options: tuple[str, ...]) -> None:
    remote = puffin("validate", *options, PREFIX, env=env)
    same(remote, puffin("validate", *options, str(tree), env=env), tree)
    if "--json" in options:
        assert [r["path"] for r in json.loads(remote.stdout)["files"]] == \
            [f"{PREFIX}/{n}" for n in FILES]


def test_validate_of_a_prefix_lists_it_once_and_reads_each_object_once(
        tree: Path, s3_server: S3Server) -> None:
    """One HEAD (is the location an object?), one LIST page, one suffix-range GET per object:
    counted by the proxy."""
    s3_server.proxy.reset()
    done = puffin("validate", "--json", PREFIX, env=s3_server.env(s3_server.proxy_endpoint))
    assert done.returncode == 0, done.stderr
    requests = [(r.method, r.path.partition("?")[0], r.range) for r in s3_server.proxy.requests]
    assert requests[:2] == [("HEAD", f"/{BUCKET}/warehouse", None), ("GET", f"/{BUCKET}", None)]
    assert sorted(requests[2:]) == [("GET", f"/{BUCKET}/warehouse/{name}", "bytes=-65536")
                                    for name in FILES]


def test_validate_glob_over_objects(tree: Path, env: dict[str, str]) -> None:
    same(puffin("validate", "--json", f"{PREFIX}/**/s*.puffin", env=env),
         puffin("validate", "--json", f"{tree}/**/s*.puffin", env=env), tree)


def test_scan_prefix_equals_local(tree: Path, env: dict[str, str]) -> None:
    remote = puffin("scan", "--json", PREFIX, env=env)
    local = puffin("scan", "--json", str(tree), env=env)
    assert remote.returncode == local.returncode
    drop = ("seconds",)
    assert {k: v for k, v in json.loads(remote.stdout).items() if k not in drop} == \
        {k: v for k, v in json.loads(local.stdout).items() if k not in drop}


def test_write_to_an_object_is_create_only(tree: Path, env: dict[str, str],
                                           s3_server: S3Server, tmp_path: Path) -> None:
    target = f"s3://{BUCKET}/written/dv.puffin"
    args = ("--dv", "s3://b/data/f.parquet", "--positions", "1,5,7-9",
            "--created-by", "test")
    first = puffin("write", target, *args, env=env)
    assert first.returncode == 0, first.stderr
    local = puffin("write", str(tmp_path / "dv.puffin"), *args, env=env)
    body = s3_server.client().get_object(Bucket=BUCKET, Key="written/dv.puffin")["Body"].read()
    assert body == (tmp_path / "dv.puffin").read_bytes()
    assert first.stdout.replace(target.encode(), str(tmp_path / "dv.puffin").encode()) == \
        local.stdout
    again = puffin("write", target, *args, env=env)
    assert (again.returncode, again.stderr) == (
        1, f"puffin: error: {target}: exists; use --force to overwrite it\n".encode())
    forced = puffin("write", target, "--force", "--dv", "s3://b/data/f.parquet",
                    "--positions", "3", env=env)
    assert forced.returncode == 0, forced.stderr


def test_dump_blob_and_scan_outputs_to_objects(tree: Path, env: dict[str, str],
                                               s3_server: S3Server) -> None:
    out = f"s3://{BUCKET}/out/blob.bin"
    assert puffin("dump-blob", f"{PREFIX}/db1/stats.puffin", "0", "-o", out,
                  env=env).returncode == 0
    body = s3_server.client().get_object(Bucket=BUCKET, Key="out/blob.bin")["Body"].read()
    assert body == puffin("dump-blob", str(tree / "db1/stats.puffin"), "0", env=env).stdout
    refused = puffin("dump-blob", f"{PREFIX}/db1/stats.puffin", "1", "-o", out, env=env)
    assert (refused.returncode, refused.stderr) == (
        1, f"puffin: error: {out}: exists; use --force to overwrite it\n".encode())
    assert puffin("dump-blob", f"{PREFIX}/db1/stats.puffin", "1", "-o", out, "--force",
                  env=env).returncode == 0
    findings = f"s3://{BUCKET}/out/findings.jsonl"
    assert puffin("scan", PREFIX, "-o", findings, env=env).returncode == 0
    lines = s3_server.client().get_object(Bucket=BUCKET, Key="out/findings.jsonl")[
        "Body"].read().decode().splitlines()
    assert sorted(json.loads(line)["path"] for line in lines) == \
        sorted(f"{PREFIX}/{name}" for name in FILES)


def test_write_copies_blobs_and_reads_inputs_from_objects(tree: Path, env: dict[str, str],
                                                          s3_server: S3Server,
                                                          tmp_path: Path) -> None:
    client = s3_server.client()
    client.put_object(Bucket=BUCKET, Key="inputs/positions.txt", Body=b"1\n3-5\n")
    client.put_object(Bucket=BUCKET, Key="inputs/values.txt", Body=b"a\nb\nc\n")
    spec: dict[str, Any] = {"blobs": [{"copy": {"file": f"{PREFIX}/db1/stats.puffin",
                                                  "index": 0}}]}
    client.put_object(Bucket=BUCKET, Key="inputs/spec.json", Body=json.dumps(spec).encode())
    inputs = f"s3://{BUCKET}/inputs"
    results = []
    for name, source in (("remote", inputs), ("local", None)):
        if source is None:
            for key in ("positions.txt", "values.txt"):
                (tmp_path / key).write_bytes(client.get_object(
                    Bucket=BUCKET, Key=f"inputs/{key}")["Body"].read())
            spec["blobs"][0]["copy"]["file"] = str(tree / "db1/stats.puffin")
            (tmp_path / "spec.json").write_text(json.dumps(spec))
            source = str(tmp_path)
            copy = f"{tree}/db1/stats.puffin:1"
        else:
            copy = f"{PREFIX}/db1/stats.puffin:1"
        done = puffin("write", str(tmp_path / f"{name}.puffin"), "--spec",
                      f"{source}/spec.json", "--copy-blob", copy, "--dv", "d.parquet",
                      "--positions-file", f"{source}/positions.txt", "--theta", "1", "--type",
                      "string", "--values-file", f"{source}/values.txt", "--created-by", "t",
                      env=env)
        assert done.returncode == 0, done.stderr
        results.append((tmp_path / f"{name}.puffin").read_bytes())
    assert results[0] == results[1]


def test_the_proxy_counts_a_request_before_answering_it(tree: Path, s3_server: S3Server) -> None:
    """The counts below are complete when the command returns: a request is in the proxy's
    list before the first byte of its answer leaves, here while the client has read one byte
    of an answer far larger than the loopback socket buffers (the proxy is still writing)."""
    size = 32 << 20
    s3_server.client().put_object(Bucket=BUCKET, Key="counted/large", Body=bytes(size))
    s3_server.proxy.reset()
    body = s3_server.client(s3_server.proxy_endpoint).get_object(
        Bucket=BUCKET, Key="counted/large")["Body"]
    try:
        assert body.read(1) == b"\0"
        assert [(r.method, r.path, r.status, r.body_bytes) for r in s3_server.proxy.requests] \
            == [("GET", f"/{BUCKET}/counted/large", 200, size)]
        assert len(body.read()) == size - 1
    finally:
        body.close()


def test_metadata_of_a_large_object_costs_one_request(tree: Path, tmp_path: Path,
                                                      s3_server: S3Server) -> None:
    """inspect of a 256 MiB object: requests and bytes counted by the proxy."""
    path = tmp_path / "big.puffin"
    with PuffinWriter(path, created_by="test") as writer:
        chunk = bytes(64 << 20)
        writer.add_blob("padding", chunk * 4, fields=[1])
        writer.add_blob("small", b"tail blob", fields=[2])
    size = path.stat().st_size
    assert size > 256 << 20
    s3_server.client().upload_file(str(path), BUCKET, "big/big.puffin")
    s3_server.proxy.reset()
    proxied = s3_server.env(s3_server.proxy_endpoint)
    done = puffin("inspect", "--json", "--no-decode", f"s3://{BUCKET}/big/big.puffin",
                  env=proxied)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["file-size"] == size
    requests = s3_server.proxy.requests
    assert [(r.method, r.range) for r in requests] == [("GET", "bytes=-65536")]
    footer = json.loads(done.stdout)["files"][0]["footer"]["footer-size"]
    assert sum(r.body_bytes for r in requests) <= (128 << 10) + footer

    s3_server.proxy.reset()
    exact = puffin("inspect", "--json", "--no-decode", "--footer-size", str(footer),
                   f"s3://{BUCKET}/big/big.puffin", env=proxied)
    assert exact.returncode == 0, exact.stderr
    assert [(r.method, r.range, r.body_bytes) for r in s3_server.proxy.requests] == [
        ("GET", f"bytes=-{footer}", footer)]

    s3_server.proxy.reset()
    blob = puffin("dump-blob", f"s3://{BUCKET}/big/big.puffin", "1", env=proxied)
    assert blob.stdout == b"tail blob"
    assert len(s3_server.proxy.requests) == 1  # the blob is inside the tail already read


def test_transient_errors_are_retried(tree: Path, s3_server: S3Server) -> None:
    s3_server.proxy.reset()
    s3_server.proxy.failures.extend([503, 500])
    done = puffin("inspect", "--json", f"{PREFIX}/db1/stats.puffin",
                  env=s3_server.env(s3_server.proxy_endpoint))
    assert done.returncode == 0, done.stderr
    assert [r.status for r in s3_server.proxy.requests] == [503, 500, 206]


@pytest.mark.parametrize("location, message", [
    (f"s3://{BUCKET}/warehouse/nope.puffin", "no such object"),
    ("s3://no-such-bucket-here/x.puffin", "no such bucket or container: no-such-bucket-here"),
])
def test_missing_objects_are_one_line(tree: Path, env: dict[str, str], location: str,
                                      message: str) -> None:
    done = puffin("inspect", location, env=env)
    assert (done.returncode, done.stderr.decode()) == (
        1, f"puffin: error: {location}: {message}\n")


def test_access_denied_is_one_line(tree: Path, s3_server: S3Server) -> None:
    s3_server.proxy.reset()
    s3_server.proxy.failures.append((403, "AccessDenied"))
    location = f"{PREFIX}/db1/stats.puffin"
    done = puffin("inspect", location, env=s3_server.env(s3_server.proxy_endpoint))
    assert (done.returncode, done.stderr.decode()) == (
        1, f"puffin: error: {location}: access denied: the credentials may not read this "
           "location\n")
    assert [r.status for r in s3_server.proxy.requests] == [403]  # not retried


def test_no_credentials_names_the_variables(tree: Path, env: dict[str, str]) -> None:
    bare = {k: v for k, v in env.items() if k not in ("AWS_ACCESS_KEY_ID",
                                                       "AWS_SECRET_ACCESS_KEY")}
    bare["HOME"] = str(tree)  # no ~/.aws files
    done = puffin("inspect", f"{PREFIX}/db1/stats.puffin", env=bare)
    assert done.returncode == 1
    line = done.stderr.decode()
    assert line.count("\n") == 1
    assert line.startswith(f"puffin: error: {PREFIX}/db1/stats.puffin: no credentials: set "
                           "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")


class _Answering:
    """An instance metadata stand-in on 127.0.0.1 that answers every request with ``status``."""

    def __init__(self, status: int) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"no")

            do_GET = do_PUT = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("metadata", ["refused", "404", "500"])
def test_no_credentials_whatever_the_metadata_endpoint_does(tree: Path, env: dict[str, str],
                                                            metadata: str) -> None:
    """No key and no AWS_EC2_METADATA_DISABLED: the credential chain asks the instance metadata
    service (here on 127.0.0.1: refusing, or answering errors) and the user reads the promised
    line, not the metadata request's error nor "endpoint unreachable" while S3 is up."""
    bare = {k: v for k, v in env.items() if k not in (
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_EC2_METADATA_DISABLED")}
    bare["HOME"] = str(tree)  # no ~/.aws files
    answering = None if metadata == "refused" else _Answering(int(metadata))
    if answering is not None:
        bare["AWS_METADATA_ENDPOINT"] = answering.url
    try:
        done = puffin("inspect", f"{PREFIX}/db1/stats.puffin", env=bare)
    finally:
        if answering is not None:
            answering.close()
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f"puffin: error: {PREFIX}/db1/stats.puffin: no credentials: set AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE, or --io "
        "s3.access-key-id=… --io s3.secret-access-key=…\n")


def test_unreachable_endpoint_is_one_line(env: dict[str, str]) -> None:
    from s3server import free_port

    closed = f"http://127.0.0.1:{free_port()}"
    done = puffin("inspect", f"s3://{BUCKET}/x.puffin", env={**env, "AWS_ENDPOINT_URL": closed})
    assert done.returncode == 1
    assert done.stderr.decode() == (
        f"puffin: error: s3://{BUCKET}/x.puffin: endpoint unreachable (s3.endpoint / "
        "AWS_ENDPOINT_URL); check the endpoint and the network\n")


def test_io_option_configures_the_endpoint(tree: Path, s3_server: S3Server) -> None:
    env = s3_server.env()
    del env["AWS_ENDPOINT_URL"]
    done = puffin("inspect", "--json", "--io", f"s3.endpoint={s3_server.endpoint}",
                  "--io", "s3.region=us-east-1", f"{PREFIX}/db1/stats.puffin", env=env)
    assert done.returncode == 0, done.stderr
    bad = puffin("inspect", "--io", "s3.endpoint", f"{PREFIX}/db1/stats.puffin", env=env)
    assert bad.returncode == 2
    assert b"expected KEY=VALUE" in bad.stderr


def test_aws_profile_files(tree: Path, s3_server: S3Server, tmp_path: Path) -> None:
    env = s3_server.env()
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        del env[key]
    (tmp_path / "credentials").write_text(
        "[dev]\naws_access_key_id = testing\naws_secret_access_key = testing\n")
    (tmp_path / "config").write_text("[profile dev]\nregion = us-east-1\n")
    env.update(AWS_PROFILE="dev", AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
               AWS_CONFIG_FILE=str(tmp_path / "config"))
    done = puffin("inspect", "--json", f"{PREFIX}/db1/stats.puffin", env=env)
    assert done.returncode == 0, done.stderr


def test_local_commands_never_import_obstore(tree: Path, env: dict[str, str]) -> None:
    probe = ("import sys; from puffin_cli.cli.main import main\n"
             "try: main(sys.argv[1:])\nexcept SystemExit: pass\n"
             "print('obstore' in sys.modules, file=sys.stderr)")
    for args in (("inspect", str(tree / "db1/stats.puffin")), ("validate", str(tree))):
        done = subprocess.run([sys.executable, "-c", probe, *args], env=env,
                              capture_output=True, timeout=TIMEOUT, check=False)
        assert done.stderr.decode().splitlines()[-1] == "False"


def _upload_tree(s3_server: S3Server, root: Path, prefix: str) -> None:
    client = s3_server.client()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            client.put_object(Bucket=BUCKET, Key=f"{prefix}/{path.relative_to(root)}",
                              Body=path.read_bytes())


def _table_in_store(s3_server: S3Server, tmp_path: Path, key: str, *, snapshots: int,
                    carry: bool) -> tuple[str, Path]:
    """A synthetic table (two DVs a snapshot) written locally for the location
    ``s3://BUCKET/<key>`` and uploaded there: (its location, the local copy)."""
    from tables.synthetic import dv_table

    location = f"s3://{BUCKET}/{key}"
    root = tmp_path / "t"
    dv_table(root, snapshots=snapshots, dvs_per_snapshot=2, carry=carry,
             location=location).finish()
    _upload_tree(s3_server, root, key)
    return location, root


def test_table_in_an_object_store_equals_local(tree: Path, env: dict[str, str],
                                               s3_server: S3Server, tmp_path: Path) -> None:
    location, root = _table_in_store(s3_server, tmp_path, "tables/db/t", snapshots=2,
                                     carry=True)
    for options in ((), ("--all-snapshots", "--limit", "100")):
        remote = puffin("table", "--json", *options, location, env=env)
        local = puffin("table", "--json", *options, str(root), env=env)
        assert remote.returncode == local.returncode == 0, remote.stderr
        remote_doc, local_doc = json.loads(remote.stdout), json.loads(local.stdout)
        (remote_table,), (local_table,) = remote_doc["tables"], local_doc["tables"]
        assert remote_table.pop("relocated") == []
        assert local_table.pop("relocated") == [[location, str(root.resolve())]]
        as_remote = json.loads(json.dumps(local_table).replace(str(root.resolve()), location)
                               .replace(str(root), location))
        assert remote_table == as_remote
        assert sum(len(s["deletion-vectors"]) for s in remote_table["snapshots"]) >= 2
    warehouse = puffin("table", "--json", f"s3://{BUCKET}/tables", env=env)
    assert [t["path"] for t in json.loads(warehouse.stdout)["tables"]] == [location]


def test_dvs_of_a_table_in_an_object_store_cost_a_few_requests(
        tree: Path, s3_server: S3Server, tmp_path: Path) -> None:
    """40 DVs in one Puffin file (240 KB, more than a footer read): a few GETs of the file,
    not one or two per DV (tests/test_table_dv_reads.py counts the same locally)."""
    from tables.synthetic import one_puffin_table

    key = "tables/db/many_dvs"
    location = f"s3://{BUCKET}/{key}"
    root = tmp_path / "t"
    _table, name = one_puffin_table(root, dvs=40, positions=list(range(0, 9000, 3)),
                                    location=location)
    _upload_tree(s3_server, root, key)
    s3_server.proxy.reset()
    done = puffin("table", "--json", "--limit", "100", location,
                  env=s3_server.env(s3_server.proxy_endpoint))
    assert done.returncode == 0, done.stderr
    (table,) = json.loads(done.stdout)["tables"]
    assert [dv["cardinality"] for dv in table["snapshots"][0]["deletion-vectors"]] == [3000] * 40
    gets = [r for r in s3_server.proxy.requests
            if r.method == "GET" and r.path.partition("?")[0] == f"/{BUCKET}/{key}/{name}"]
    assert 1 <= len(gets) <= 6


def test_commit_to_a_table_in_an_object_store(tree: Path, s3_server: S3Server,
                                              tmp_path: Path) -> None:
    from tables.synthetic import dv_table

    from puffin_cli.analysis.table.commit import commit_statistics
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.metadata import current_metadata_file, load_metadata
    from puffin_cli.analysis.table.updates import StatisticsFileEntry
    from puffin_cli.storage import FileIO

    location = f"s3://{BUCKET}/commits/t"
    dv_table(tmp_path / "t", snapshots=1, dvs_per_snapshot=1, carry=False,
             location=location).finish()
    _upload_tree(s3_server, tmp_path / "t", "commits/t")
    properties = _io(s3_server.endpoint)
    fileio = FileIO(properties)
    entry = StatisticsFileEntry.for_blobs(1001, f"{location}/metadata/s.stats", 10, 5, [])
    first = commit_statistics(Table.load(location, io_properties=properties,
                                         fileio=FileIO()), entry)
    second = commit_statistics(Table.load(location, io_properties=properties,
                                          fileio=FileIO()), entry)
    assert (first.version, second.version) == (2, 3)
    assert second.replaced == (f"{location}/metadata/s.stats",)
    current = current_metadata_file(location, fileio)
    assert current == f"{location}/metadata/v3.metadata.json"
    assert load_metadata(current, fileio).statistics[0].path == entry.path
    hint = s3_server.client().get_object(Bucket=BUCKET, Key="commits/t/metadata/"
                                         "version-hint.text")["Body"].read()
    assert hint == b"3\n"


def test_delete_an_object(s3_server: S3Server) -> None:
    from puffin_cli.storage import FileIO, StorageError

    fileio = FileIO(_io(s3_server.endpoint))
    client = s3_server.client()
    client.put_object(Bucket=BUCKET, Key="deletes/a.avro", Body=b"x")
    client.put_object(Bucket=BUCKET, Key="deletes/b.avro", Body=b"y")
    fileio.delete(f"s3://{BUCKET}/deletes/a.avro")
    fileio.delete(f"s3://{BUCKET}/deletes/a.avro")  # already gone: no error
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix="deletes/")["Contents"]
    assert [o["Key"] for o in listed] == ["deletes/b.avro"]
    with pytest.raises(StorageError) as caught:
        fileio.delete(f"s3://{BUCKET}/deletes/")  # a prefix is not an object
    assert caught.value.code == "io.delete"


def test_commit_conflict_in_an_object_store_builds_again(tree: Path, s3_server: S3Server,
                                                         tmp_path: Path) -> None:
    """Another writer publishes the next version between our build and our publish: the
    create-only PUT refuses ours, the manifest our first build wrote is deleted, and the
    second build (on the other writer's version) is committed with both changes."""
    from tables.synthetic import dv_table

    from puffin_cli.analysis.table.commit import commit, commit_statistics, table_requirements
    from puffin_cli.analysis.table.loading import Table
    from puffin_cli.analysis.table.metadata import current_metadata_file, load_metadata
    from puffin_cli.analysis.table.updates import SetStatistics, StatisticsFileEntry, TableChange

    location = f"s3://{BUCKET}/commits/race"
    dv_table(tmp_path / "t", snapshots=2, dvs_per_snapshot=1, carry=False,
             location=location).finish()
    _upload_tree(s3_server, tmp_path / "t", "commits/race")
    properties = _io(s3_server.endpoint)
    table = Table.load(location, io_properties=properties, fileio=FileIO())
    first, second = (s.snapshot_id for s in table.snapshots())
    attempts: list[str] = []

    def build(base: Table) -> TableChange:
        manifest = f"{location}/metadata/ours-{len(attempts)}.avro"
        with base.fileio.new_output(manifest).create() as out:
            out.write(b"manifest bytes")
        attempts.append(manifest)
        if len(attempts) == 1:
            commit_statistics(Table.load(location, io_properties=properties,
                                         fileio=FileIO()),
                              StatisticsFileEntry.for_blobs(first, f"{location}/a.stats", 1, 1,
                                                            []))
        entry = StatisticsFileEntry.for_blobs(second, f"{location}/b.stats", 1, 1, [])
        return TableChange(table_requirements(base), (SetStatistics(entry),), (manifest,))

    result = commit(table, build)
    assert (result.version, result.attempts) == (3, 2)
    current = load_metadata(current_metadata_file(location, table.fileio), table.fileio)
    assert sorted(s.snapshot_id for s in current.statistics) == sorted([first, second])
    keys = [o["Key"] for o in s3_server.client().list_objects_v2(
        Bucket=BUCKET, Prefix="commits/race/metadata/ours-")["Contents"]]
    assert keys == ["commits/race/metadata/ours-1.avro"]


def test_parquet_inputs_in_an_object_store(tree: Path, env: dict[str, str],
                                           s3_server: S3Server, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i in range(2):
        table = pa.table({"id": pa.array(range(i * 500, i * 500 + 1000), pa.int64())})
        pq.write_table(table, tmp_path / f"d{i}.parquet")
        s3_server.client().put_object(Bucket=BUCKET, Key=f"parquet/d{i}.parquet",
                                      Body=(tmp_path / f"d{i}.parquet").read_bytes())
    args = ("--field-id", "id=1", "--created-by", "t")
    remote = puffin("write", str(tmp_path / "r.puffin"), "--from-parquet",
                    f"s3://{BUCKET}/parquet/*.parquet", *args, env=env)
    local = puffin("write", str(tmp_path / "l.puffin"), "--from-parquet",
                   str(tmp_path / "*.parquet"), *args, env=env)
    assert remote.returncode == local.returncode == 0, remote.stderr
    assert (tmp_path / "r.puffin").read_bytes() == (tmp_path / "l.puffin").read_bytes()


def readme_scripts(heading: str) -> list[str]:
    """The ``sh`` blocks of the README section ``### heading`` (up to the next heading)."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = re.split(r"\n##+ ", readme.split(f"### {heading}\n", 1)[1], maxsplit=1)[0]
    return re.findall(r"^```sh\n(.*?)^```", section, re.MULTILINE | re.DOTALL)


README_PORT = "5055"  # the S3 server's port in the README's examples


def run_readme_script(script: str, cwd: Path, env: dict[str, str],
                      timeout: float) -> tuple[str, int]:
    """Run README ``sh`` code as written, but for the port of its S3 server (a free one, so
    that another run of the suite on this machine cannot take it away mid-example), in a
    process group of its own; then stop what it left running in the background and wait, at
    most 10 s, until that is gone."""
    import signal
    import time

    from s3server import free_port

    assert README_PORT in script
    script = script.replace(README_PORT, str(free_port()))

    process = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        deadline = time.monotonic() + 10
        try:
            os.killpg(process.pid, signal.SIGTERM)
            while time.monotonic() < deadline:
                os.killpg(process.pid, 0)  # raises once no process of the group is left
                time.sleep(0.05)
        except ProcessLookupError:
            pass
    return output, process.returncode


@pytest.mark.objectstore  # the README's script starts moto itself
def test_readme_object_store_example(tmp_path: Path) -> None:
    """The README's "Object stores" example, run as written (its own server, on a free port)
    from a folder holding the samples, with this checkout's commands on PATH."""
    import shutil

    (script,) = readme_scripts("Object stores")
    shutil.copytree(SAMPLES, tmp_path / "samples")
    bin_dir = str(Path(sys.executable).parent)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "GOOGLE_"))}
    env = {**keep, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "80", "NO_COLOR": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    output, returncode = run_readme_script(script, tmp_path, env, TIMEOUT)
    lines = output.splitlines()
    assert "4 files checked (profile spec): 4 passed, 0 failed; 0 errors, 1 warning, 0 info" \
        in lines, output
    assert lines[-1] == ("puffin: error: s3://demo/out/dv.puffin: exists; use --force to "
                         "overwrite it"), output
    assert returncode == 1
    assert "file size        50,584 bytes" in output
    wrote = next(i for i, line in enumerate(lines)
                 if line.startswith("wrote s3://demo/out/dv.puffin: "))
    assert lines[wrote - 3:wrote] == ["0", "2", "4"]  # dump-blob ... | head -3


def test_inspect_with_a_table_in_an_object_store(tree: Path, env: dict[str, str],
                                                 s3_server: S3Server, tmp_path: Path) -> None:
    location, root = _table_in_store(s3_server, tmp_path, "inspected/t", snapshots=1,
                                     carry=False)
    (dv,) = sorted((root / "data").glob("*.puffin"))
    name = dv.relative_to(root).as_posix()
    remote = puffin("inspect", "--json", "--table", location, f"{location}/{name}", env=env)
    local = puffin("inspect", "--json", "--table", str(root), str(dv), env=env)
    assert remote.returncode == local.returncode == 0, remote.stderr
    remote_doc, local_doc = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_doc["files"][0].pop("path") == f"{location}/{name}"
    assert local_doc["files"][0].pop("path") == str(dv)
    assert remote_doc == local_doc
    assert {c for f in json.loads(remote.stdout)["files"] for b in f["blobs"]
            for c in b["columns"]} == {"_pos"}


def _io(endpoint: str) -> dict[str, str]:
    from s3server import ACCESS_KEY, REGION, SECRET_KEY

    return {"s3.endpoint": endpoint, "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY, "s3.region": REGION}


def _read_every_dv(table: Any) -> int:
    """Read each DV of every snapshot of ``table`` as ``stats compute``'s tasks do (through
    a slice spec carrying the table's FileIO); the number of deleted positions read."""
    from puffin_cli.analysis.stats.data_files import SliceSpec
    from puffin_cli.analysis.stats.files import DeletionVectorRef
    from puffin_cli.analysis.stats.row_deletes import RowDeletes

    deleted = 0
    for snapshot in table.snapshots():
        for manifest in table.manifests.manifest_files(snapshot):
            for entry in table.manifests.live_files(manifest):
                if not entry.is_dv:
                    continue
                assert entry.content_offset is not None and entry.content_size is not None
                ref = DeletionVectorRef(entry.referenced_data_file or "", entry.path,
                                        entry.content_offset, entry.content_size,
                                        entry.record_count)
                data_file = entry.referenced_data_file or ""
                spec = SliceSpec(data_file, data_file, "parquet", 0, 0, deletion_vector=ref,
                                 fileio=table.fileio)
                deleted += len(RowDeletes().positions(spec))
    return deleted


def test_two_tables_in_one_process_are_each_read_with_their_own_fileio(
        tree: Path, s3_server: S3Server, tmp_path: Path) -> None:
    """Two tables loaded with different FileIO properties (here: endpoints, one through the
    counting proxy) are each read, metadata to deletion vectors, with their own: no request
    of the direct table goes through the proxy, and all of the proxied table's do."""
    from puffin_cli.analysis.table.loading import Table

    direct_at, _ = _table_in_store(s3_server, tmp_path / "a", "io/direct", snapshots=2,
                                   carry=False)
    proxied_at, _ = _table_in_store(s3_server, tmp_path / "b", "io/proxied", snapshots=2,
                                    carry=False)
    s3_server.proxy.reset()
    direct = Table.load(direct_at, io_properties=_io(s3_server.endpoint), fileio=FileIO())
    assert direct.fileio is direct.fileio  # built once, with its client cache
    assert _read_every_dv(direct) > 0
    assert s3_server.proxy.requests == []
    proxied = Table.load(proxied_at, io_properties=_io(s3_server.proxy_endpoint),
                         fileio=FileIO())
    assert _read_every_dv(proxied) > 0
    assert _read_every_dv(direct) > 0  # still its own, after the other table's
    paths = [request.path for request in s3_server.proxy.requests]
    assert any(".puffin" in path for path in paths)
    assert all("io/proxied" in path or "io%2Fproxied" in path for path in paths), paths
