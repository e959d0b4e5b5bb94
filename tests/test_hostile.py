"""Issue 14: hostile and unlucky input, one test per class.

Every test runs the real CLI in a subprocess (tests/hostile.py) and asserts the exit code, the
one line on stderr (no traceback) and, for the resource classes, that peak memory stayed under
512 MiB with the default limits. Nothing here asserts a duration.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
import zstandard
from helpers import SAMPLES, blob_entry, puffin_bytes
from hostile import assert_clean, assert_one_line, assert_usage, run, write
from tables.synthetic import MANIFEST_FILE, dv_table, write_avro

from puffin_cli.format.avro import long_bytes

REPO = Path(__file__).resolve().parents[1]
STATS = REPO / "samples" / "stats.puffin"
DVS = REPO / "samples" / "deletion-vectors.puffin"
THETA = "apache-datasketches-theta-v1"
DV = "deletion-vector-v1"
BIG_INT = "9" * 5000


def footer_file(tmp_path: Path, payload: str | bytes, name: str = "f.puffin",
                **parts: Any) -> Path:
    return write(tmp_path / name, puffin_bytes(payload, **parts))


def one_blob(tmp_path: Path, data: bytes, name: str = "b.puffin", **entry: Any) -> Path:
    payload = json.dumps({"blobs": [blob_entry(4, len(data), **entry)],
                          "properties": {"created-by": "hostile"}})
    return write(tmp_path / name, puffin_bytes(payload, blob_data=data))


# --- a table to break -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile") / "base"
    dv_table(root, snapshots=2, dvs_per_snapshot=2, carry=True).finish()
    return root


def table_copy(base: Path, target: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copytree(base, target)
    meta = json.loads((target / "metadata" / "v1.metadata.json").read_text())
    return target, meta


def local(table: Path, meta: dict[str, Any], location: str) -> Path:
    return table / location[len(meta["location"]) + 1:]


def save(table: Path, meta: dict[str, Any]) -> None:
    (table / "metadata" / "v1.metadata.json").write_text(json.dumps(meta))


# --- exit 3 on input that is merely bad --------------------------------------------------------


def test_int_string_limit_everywhere(tmp_path: Path, base_table: Path) -> None:
    footer = footer_file(tmp_path, '{"blobs":[{"type":"t","fields":[1],"snapshot-id":'
                         + BIG_INT + ',"sequence-number":1,"offset":4,"length":0}]}')
    assert_one_line(run("inspect", footer), 1, "footer payload is not usable JSON")
    assert_clean(run("validate", footer), 1)
    table, meta = table_copy(base_table, tmp_path / "t")
    (table / "metadata" / "v1.metadata.json").write_text(
        json.dumps(meta)[:-1] + ', "x": ' + BIG_INT + "}")
    assert_one_line(run("table", table), 1, "table metadata is not usable JSON")
    save(table, meta)
    (table / "metadata" / "version-hint.text").write_text(BIG_INT)
    assert_clean(run("table", table), 0)
    assert_usage(run("inspect", "--max-blob-size", BIG_INT, STATS), "not a size")
    assert_usage(run("write", tmp_path / "o.puffin", "--dv", "f", "--positions", BIG_INT),
                 "--positions")
    values = write(tmp_path / "values.txt", BIG_INT.encode() + b"\n")
    assert_one_line(run("write", tmp_path / "o.puffin", "--theta", "1", "--type", "long",
                        "--values-file", values), 1, "values.txt")
    positions = write(tmp_path / "positions.txt", BIG_INT.encode() + b"\n")
    assert_clean(run("write", tmp_path / "o.puffin", "--dv", "f", "--positions-file",
                     positions), 1, 2)
    ndv = one_blob(tmp_path, b"", type="t", properties={"ndv": BIG_INT})
    assert_clean(run("validate", ndv))
    spec = write(tmp_path / "spec.json", b'{"blobs":[{"dv":{"referenced-data-file":"f",'
                 b'"positions":"1"},"snapshot-id":' + BIG_INT.encode() + b"}]}")
    assert_one_line(run("write", tmp_path / "s.puffin", "--spec", spec), 1, "spec")


def test_lone_surrogates_and_non_utf8_names_are_shown_escaped(tmp_path: Path) -> None:
    path = footer_file(tmp_path, '{"blobs":[{"type":"t\\udcff","fields":[1],"snapshot-id":1,'
                       '"sequence-number":1,"offset":4,"length":0,"properties":'
                       '{"k\\ud800":"v\\ud800"}}],"properties":{"created-by":"\\ud800x"}}')
    human = run("inspect", path)
    assert_clean(human, 0)
    assert b"\\ud800x" in human.stdout
    as_json = run("inspect", "--json", path)
    assert_clean(as_json, 0)
    json.loads(as_json.stdout)  # still one JSON document
    assert_clean(run("validate", path), 0)
    assert_clean(run("validate", "--json", path), 0)
    directory = tmp_path / "scan"
    directory.mkdir()
    odd = os.fsencode(directory) + b"/\xff\xfe.puffin"
    shutil.copyfile(STATS, odd)
    listed = run("validate", "--json", directory)
    assert_clean(listed, 0)
    assert b"\\udcff\\udcfe.puffin" in listed.stdout
    out = tmp_path / "out.jsonl"
    assert_clean(run("scan", directory, "-o", out), 0)
    assert "\\udcff" in out.read_text(encoding="utf-8")
    assert_one_line(run("write", tmp_path / "w.puffin", "--dv", "f", "--positions", "1",
                        "--property", "k=\udcff"), 2, "not valid Unicode")
    assert not (tmp_path / "w.puffin").exists()


def test_table_views_escape_lone_surrogates(tmp_path: Path, base_table: Path) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    meta["snapshots"][-1]["summary"]["operation"] = "app\udcffend"
    save(table, meta)
    for args in ((), ("--json",)):
        outcome = run("table", *args, table)
        assert_clean(outcome, 0)


@pytest.mark.parametrize(("key", "value"), [
    ("format-version", "3"), ("schemas", {}), ("schemas", [1]), ("schemas", [{"schema-id": "x"}]),
    ("current-schema-id", 1.5), ("snapshots", [None]), ("location", None), ("location", []),
    ("snapshots", [{"snapshot-id": 1, "sequence-number": "x"}]),
    ("snapshots", [{"snapshot-id": True}]), ("partition-specs", [3]),
    ("statistics", [{"snapshot-id": 1, "blob-metadata": [5]}]),
    ("statistics", [{"snapshot-id": 1, "statistics-path": 1, "file-size-in-bytes": 1,
                     "file-footer-size-in-bytes": -1}]),
    ("partition-statistics", [5]), ("current-snapshot-id", "x"), ("table-uuid", 5),
])
def test_wrong_json_types_in_table_metadata(tmp_path: Path, base_table: Path, key: str,
                                            value: Any) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    meta[key] = value
    save(table, meta)
    assert_one_line(run("table", table), 1, "v1.metadata.json", f"'{key}'"
                    if isinstance(value, (str, float, dict)) or value is None else "")


@pytest.mark.parametrize(("field", "value"), [
    ("manifest-list", 5), ("timestamp-ms", "x"), ("schema-id", "x"), ("summary", []),
    ("parent-snapshot-id", 1.5), ("manifests", [1]),
])
def test_wrong_json_types_in_snapshots(tmp_path: Path, base_table: Path, field: str,
                                       value: Any) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    for snapshot in meta["snapshots"]:
        snapshot[field] = value
    save(table, meta)
    assert_one_line(run("table", table), 1, f"'{field}'")


def _rewrite_list(table: Path, meta: dict[str, Any], schema: dict[str, Any],
                  records: list[dict[str, Any]], codec: str = "null") -> Path:
    listing = local(table, meta, meta["snapshots"][-1]["manifest-list"])
    import fastavro

    with open(listing, "wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec)
    return listing


def test_wrong_avro_types_in_manifest_lists_and_manifests(tmp_path: Path,
                                                          base_table: Path) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    _rewrite_list(table, meta, {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "long"}, {"name": "content", "type": "string"}]},
        [{"manifest_path": 5, "content": "x"}])
    assert_one_line(run("table", table), 1, "'manifest_path' must be a string")
    table, meta = table_copy(base_table, tmp_path / "u")
    import fastavro

    listing = local(table, meta, meta["snapshots"][-1]["manifest-list"])
    with open(listing, "rb") as f:
        manifests = [r["manifest_path"] for r in fastavro.reader(f)]
    entry = {"type": "record", "name": "e", "fields": [
        {"name": "status", "type": "int"},
        {"name": "data_file", "type": {"type": "record", "name": "df", "fields": [
            {"name": "content", "type": "int"}, {"name": "file_path", "type": "string"},
            {"name": "file_format", "type": "string"}, {"name": "record_count", "type": "string"},
            {"name": "lower_bounds", "type": {"type": "array", "items": "int"}}]}}]}
    for manifest in manifests:
        write_avro(local(table, meta, manifest), entry, [{"status": 1, "data_file": {
            "content": 0, "file_path": "x", "file_format": "PARQUET", "record_count": "many",
            "lower_bounds": [1]}}])
    assert_one_line(run("table", table), 1, "'record_count' must be an integer")


def test_self_listing_manifest_list(tmp_path: Path, base_table: Path) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    listing = meta["snapshots"][-1]["manifest-list"]
    import fastavro

    with open(local(table, meta, listing), "rb") as f:
        records = list(fastavro.reader(f))
    records.append(dict(records[0], manifest_path=listing))
    write_avro(local(table, meta, listing), MANIFEST_FILE, records)
    assert_one_line(run("table", table), 1, "lists itself")


@pytest.mark.parametrize("codec", ["deflate", "zstandard"])
def test_corrupt_compressed_avro_blocks(tmp_path: Path, base_table: Path, codec: str) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    import fastavro

    listing = local(table, meta, meta["snapshots"][-1]["manifest-list"])
    with open(listing, "rb") as f:
        records = list(fastavro.reader(f))
    _rewrite_list(table, meta, MANIFEST_FILE, records * 20, codec)
    data = bytearray(listing.read_bytes())
    for i in range(len(data) - 80, len(data) - 20):
        data[i] ^= 0x5A
    listing.write_bytes(bytes(data))
    assert_one_line(run("table", table), 1, listing.name)


def _avro_container(codec: str, count: int, stored: bytes, size: int | None = None) -> bytes:
    """An Avro container of the manifest-list schema with one block of ``count`` records:
    ``stored`` as its bytes, ``size`` its declared size (default: their length)."""
    sync = bytes(range(16))
    header = b"Obj\x01" + long_bytes(2)
    for key, value in ((b"avro.schema", json.dumps(MANIFEST_FILE).encode()),
                       (b"avro.codec", codec.encode())):
        header += long_bytes(len(key)) + key + long_bytes(len(value)) + value
    return (header + long_bytes(0) + sync + long_bytes(count)
            + long_bytes(len(stored) if size is None else size) + stored + sync)


def _bomb(codec: str, size: int) -> bytes:
    """``size`` zero bytes compressed as an Avro block of ``codec``, built 1 MiB at a time.
    Deflate: one MiB compressed and full-flushed (the dictionary reset), so that every further
    MiB compresses to the same bytes: repeated, not recompressed (7 s less on a loaded core)."""
    chunk = bytes(1 << 20)
    if codec == "deflate":
        deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
        one_mib = deflater.compress(chunk) + deflater.flush(zlib.Z_FULL_FLUSH)
        return one_mib * (size >> 20) + deflater.flush()
    compressor = zstandard.ZstdCompressor().compressobj()  # no content size, as Java writes
    out = b"".join(compressor.compress(chunk) for _ in range(size >> 20))
    return out + compressor.flush()


@pytest.mark.parametrize("codec", ["deflate", "zstandard"])
def test_avro_blocks_that_inflate_without_bound(tmp_path: Path, base_table: Path,
                                                codec: str) -> None:
    """A manifest list whose one block inflates to 2 GiB (a few MiB stored), or declares a
    block of 1 TiB: refused at the fixed block limit, one line, memory bounded."""
    table, meta = table_copy(base_table, tmp_path / "t")
    listing = local(table, meta, meta["snapshots"][-1]["manifest-list"])
    listing.write_bytes(_avro_container(codec, 1000, _bomb(codec, 2 << 30)))
    for args in ((), ("--json",), ("--all-snapshots",)):
        assert_one_line(run("table", *args, table), 1, listing.name,
                        f"a {codec} block inflates to more than the limit")
    listing.write_bytes(_avro_container(codec, 1, b"x" * 100, size=1 << 40))
    assert_one_line(run("table", table), 1, listing.name,
                    "a stored block of 1,099,511,627,776 bytes is more than the limit")


def test_non_ascii_digits(tmp_path: Path, base_table: Path) -> None:
    assert_usage(run("inspect", "--max-blob-size", "1²", STATS), "not a size")
    assert_usage(run("write", tmp_path / "o.puffin", "--theta", "²", "--type", "long",
                        "--values-file", write(tmp_path / "v.txt", b"1\n")), "--theta")
    assert_usage(run("write", tmp_path / "o.puffin", "--dv", "f", "--positions", "1²"),
                 "--positions")
    superscript = write(tmp_path / "s.txt", "1²\n".encode())
    assert_one_line(run("write", tmp_path / "o.puffin", "--theta", "1", "--type", "long",
                        "--values-file", superscript), 1, "s.txt")
    assert_clean(run("write", tmp_path / "o.puffin", "--dv", "f", "--positions-file",
                     superscript), 1, 2)
    assert_clean(run("write", tmp_path / "o.puffin", "--copy-blob", f"{STATS}:²"), 1, 2)
    table, _ = table_copy(base_table, tmp_path / "t")
    for hint in ("²", "١"):
        (table / "metadata" / "version-hint.text").write_text(hint)
        assert_clean(run("table", table), 0)


def test_output_problems(tmp_path: Path) -> None:
    assert_one_line(run("dump-blob", STATS, "0", "-o", tmp_path / "missing" / "x.bin"), 1,
                    "missing")
    with open("/dev/full", "wb") as full:
        assert_one_line(run("inspect", STATS, stdout=full), 1, "No space left on device")
        assert_one_line(run("dump-blob", "--as", "positions", DVS, "1", stdout=full), 1,
                        "No space left on device")


def test_corrupt_gzip_metadata(tmp_path: Path, base_table: Path) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    data = bytearray(gzip.compress(json.dumps(meta).encode()))
    data[20:40] = bytes(20)
    (table / "metadata" / "v1.metadata.json").write_bytes(bytes(data))
    assert_one_line(run("table", table), 1, "gzip")


# --- unbounded memory or time -------------------------------------------------------------------


def test_positions_that_never_end_or_expand_without_bound(tmp_path: Path) -> None:
    out = tmp_path / "o.puffin"
    for spec in ("0-1000000000000", f"0-{(1 << 63) - 1}", f"{(1 << 62)}-{(1 << 63) - 1}"):
        assert_one_line(run("write", out, "--dv", "f", "--positions", spec), 1,
                        "--max-blob-size")
    assert_one_line(run("write", out, "--dv", "f", "--positions-file", "/dev/zero"), 1)
    ranges = write(tmp_path / "r.txt", b"".join(b"%d-%d\n" % (k << 32, (k << 32) + 65535)
                                                for k in range(0, 1 << 20, 3)))
    assert_clean(run("write", out, "--dv", "f", "--positions-file", ranges), 0, 1)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(("command", "option"), [
    (("scan",), "--files-from"), (("write", "out.blob"), "--entries-from")])
def test_lists_that_never_end(tmp_path: Path, command: tuple[str, ...], option: str) -> None:
    """A --…-from list bounds its lines, its entries and its bytes: /dev/zero (one line that
    never ends), a million and more short lines, an endless stream of blank lines."""
    args = [tmp_path / part if part.endswith(".blob") else part for part in command]
    assert_one_line(run(*args, option, "/dev/zero"), 1, f"{option} /dev/zero",
                    "longer than 65,536 bytes")
    many = write(tmp_path / "many.txt", b"a\n" * 1_000_001)
    assert_one_line(run(*args, option, many), 1, option, "more than 1,000,000 entries")
    # lines that are no entries (blank) until the byte bound: long ones, so that reaching
    # 64 MiB takes a thousand lines rather than 64 million (the bound is what is checked)
    with subprocess.Popen(["yes", " " * 65_000], stdout=subprocess.PIPE) as endless:
        outcome = run(*args, option, "-" if option == "--files-from" else "/dev/stdin",
                      stdin=endless.stdout)
        endless.kill()
    assert_one_line(outcome, 1, option, "more than 64 MiB")
    assert not (tmp_path / "out.blob").exists()


def test_footer_bombs(tmp_path: Path) -> None:
    lists = footer_file(tmp_path, b'{"blobs":[],"x":[' + b"[]," * (3 << 20) + b"[]]}")
    assert_one_line(run("inspect", lists), 1, "JSON values", "--max-blob-size")
    assert_clean(run("validate", lists), 1)
    huge = lz4.frame.compress(b'{"blobs":[],"x":"' + b"a" * (600 << 20) + b'"}',
                              store_size=True)
    lz4_bomb = footer_file(tmp_path, huge, "lz4.puffin", flags=b"\x01\0\0\0")
    assert_one_line(run("inspect", lz4_bomb), 1, "--max-blob-size")
    # the worst a footer within the default limits can do: just under the value budget
    near = footer_file(tmp_path, b'{"blobs":[],"x":[' + b"[]," * 500_000 + b"[]],"
                       b'"y":"' + b"z" * (50 << 20) + b'"}', "near.puffin")
    for command in (("inspect",), ("inspect", "--json"), ("validate",)):
        assert_clean(run(*command, near), 0)


def test_compressed_blob_bombs(tmp_path: Path) -> None:
    bomb = zstandard.ZstdCompressor().compress(bytes(500 << 20))
    path = one_blob(tmp_path, bomb, type=THETA, compression_codec="zstd")
    for args in (("inspect",), ("validate",), ("dump-blob", "--as", "hex")):
        outcome = run(*args, path, *(("0",) if args[0] == "dump-blob" else ()))
        assert_clean(outcome, 1)
    assert_one_line(run("inspect", path), 1, "--max-blob-size")
    # within the limit: a blob that decompresses to just under 64 MiB
    inside = zstandard.ZstdCompressor().compress(bytes((64 << 20) - 1))
    path = one_blob(tmp_path, inside, "inside.puffin", type=THETA, compression_codec="zstd")
    for command in ("inspect", "validate"):
        assert_clean(run(command, path), 1)


def test_theta_header_claiming_huge_entry_counts(tmp_path: Path) -> None:
    for count in (400_000_000, 0x7FFFFFFF, 0xFFFFFFFF):
        preamble = (bytes([3, 3, 3, 0, 0, 0x1A, 0xCC, 0x93]) + struct.pack("<I", count)
                    + struct.pack("<f", 1.0) + struct.pack("<Q", (1 << 63) - 1) + b"\1" * 64)
        path = one_blob(tmp_path, preamble, f"t{count}.puffin", type=THETA)
        for args in (("inspect",), ("validate",), ("dump-blob", "--as", "sketch")):
            assert_clean(run(*args, path, *(("0",) if args[0] == "dump-blob" else ())), 1)


def test_table_metadata_bombs(tmp_path: Path, base_table: Path) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    metadata = table / "metadata" / "v1.metadata.json"
    with gzip.open(metadata, "wb", compresslevel=1) as out:
        for _ in range(1500):
            out.write(b" " * (1 << 20))
    assert_one_line(run("table", table), 1, "--max-blob-size")
    save(table, meta)
    with open(metadata, "r+b") as f:
        f.truncate(3 << 30)
    assert_one_line(run("table", table), 1, "--max-blob-size")


def test_dv_of_millions_of_empty_bitmaps(tmp_path: Path) -> None:
    data = _empty_bitmaps_dv(3_000_000)
    path = one_blob(tmp_path, data, type=DV, fields=[2147483645], snapshot_id=-1,
                    sequence_number=-1,
                    properties={"referenced-data-file": "x", "cardinality": "0"})
    for args in (("inspect",), ("validate",), ("dump-blob", "--as", "positions"),
                 ("dump-blob", "--json")):
        assert_clean(run(*args, path, *(("0",) if args[0] == "dump-blob" else ()),
                         timeout=300))


def test_dv_of_millions_of_tiny_bitmaps(tmp_path: Path) -> None:
    count = 2_900_000  # one position per 32-bit bitmap: ~60 MiB, within --max-blob-size
    one = struct.pack("<IIHHIH", 12346, 1, 0, 0, 16, 7)
    vector = struct.pack("<Q", count) + b"".join(struct.pack("<I", k) + one
                                                 for k in range(count))
    body = b"\xd1\xd3\x39\x64" + vector
    data = struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))
    path = one_blob(tmp_path, data, type=DV, fields=[2147483645], snapshot_id=-1,
                    sequence_number=-1,
                    properties={"referenced-data-file": "x", "cardinality": str(count)})
    assert_one_line(run("inspect", path, timeout=300), 1, "non-empty 32-bit bitmaps")
    assert_clean(run("validate", path, timeout=300), 1)


def test_table_dvs_are_read_within_max_blob_size(tmp_path: Path, base_table: Path) -> None:
    table, _ = table_copy(base_table, tmp_path / "t")
    outcome = run("table", "--max-blob-size", "16", table)
    assert_clean(outcome, 1)
    assert b"--max-blob-size" in outcome.stdout


@pytest.mark.parametrize("where", ["property", "codec", "type"])
def test_one_megabyte_tokens_in_puffin_files(tmp_path: Path, where: str) -> None:
    token = "x" * (1 << 20)
    entry = blob_entry(4, 0)
    if where == "property":
        entry["properties"] = {"k": token}
    elif where == "codec":
        entry["compression-codec"] = token
    else:
        entry["type"] = token
    path = footer_file(tmp_path, json.dumps({"blobs": [entry]}))
    for args in (("inspect",), ("validate",), ("inspect", "--json")):
        assert_clean(run(*args, path, timeout=60))


@pytest.mark.parametrize("where", ["operation", "data-file", "property"])
def test_one_megabyte_tokens_in_tables(tmp_path: Path, base_table: Path, where: str) -> None:
    table, meta = table_copy(base_table, tmp_path / "t")
    token = "y" * (1 << 20)
    if where == "operation":
        meta["snapshots"][-1]["summary"]["operation"] = token
    elif where == "property":
        meta["properties"] = {"k": token}
    else:
        meta["snapshots"][-1]["summary"]["added-files"] = token
    save(table, meta)
    for args in ((), ("--json",)):
        assert_clean(run("table", *args, table, timeout=60))


def _empty_bitmaps_dv(count: int) -> bytes:
    empty = struct.pack("<II", 12346, 0)
    vector = struct.pack("<Q", count) + b"".join(struct.pack("<I", k) + empty
                                                 for k in range(count))
    body = b"\xd1\xd3\x39\x64" + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))



# --- the process contract -------------------------------------------------------------------


def _pipeline(args: list[str]) -> tuple[int, bytes]:
    command = [sys.executable, "-m", "puffin_cli", *args]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read()
        return proc.wait(timeout=60), err


@pytest.mark.parametrize("args", [
    ["dump-blob", "--as", "positions", str(DVS), "1"],
    ["inspect", str(STATS), str(DVS), str(STATS)],
    ["validate", str(STATS), str(DVS), str(STATS), str(DVS)],
    ["dump-blob", "--as", "hex", str(STATS), "0"],
])
def test_head_exits_zero_quietly(args: list[str]) -> None:
    code, err = _pipeline(args)
    assert (code, err) == (0, b"")


def _slow_reader(tmp_path: Path, extra: list[str]) -> subprocess.Popen[bytes]:
    fifo = tmp_path / "slow"
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "puffin_cli", "write", str(tmp_path / "out.puffin"),
               *extra, "--dv", "f", "--positions-file", str(fifo)]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE)
    writer = os.open(fifo, os.O_WRONLY)  # the CLI is now blocked reading the pipe
    os.write(writer, b"1\n2\n")
    proc.writer_fd = writer  # type: ignore[attr-defined]
    return proc


@pytest.mark.parametrize(("signum", "code", "line"), [
    (signal.SIGINT, 130, b"puffin: interrupted"), (signal.SIGTERM, 143, b"puffin: terminated")])
def test_signals_during_a_blocked_read(tmp_path: Path, signum: int, code: int,
                                       line: bytes) -> None:
    target = tmp_path / "out.puffin"
    target.write_bytes(b"old")
    proc = _slow_reader(tmp_path, ["--force"])
    time.sleep(0.5)
    proc.send_signal(signum)
    assert proc.wait(timeout=30) == code
    os.close(proc.writer_fd)  # type: ignore[attr-defined]
    assert proc.stderr is not None
    assert proc.stderr.read().strip() == line
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.puffin", "slow"]


def test_kill_9_leaves_old_or_new(tmp_path: Path) -> None:
    target = tmp_path / "out.puffin"
    target.write_bytes(b"old")
    proc = _slow_reader(tmp_path, ["--force"])
    time.sleep(0.5)
    proc.kill()
    proc.wait(timeout=30)
    os.close(proc.writer_fd)  # type: ignore[attr-defined]
    assert target.read_bytes() == b"old"


@pytest.mark.parametrize("args", [["inspect", "--bogus"], ["bogus"], ["inspect"],
                                  ["inspect", "--limit", "x", str(STATS)],
                                  ["dump-blob", str(STATS), "²"]])
def test_usage_errors_are_two_lines(args: list[str]) -> None:
    outcome = run(*args)
    assert outcome.code == 2
    assert len(outcome.lines) == 2 and outcome.lines[1].startswith("Try '"), outcome.lines


def test_samples_are_still_fine() -> None:
    for sample in (STATS, DVS, *sorted(SAMPLES.glob("*/*.puffin"))):
        assert_clean(run("inspect", sample), 0)




# --- lone surrogates through every command and output form ------------------------------------

SURROGATE = "\ud800"


def _valid_text(outcome: Any, form: str) -> None:
    """Exit 0 or 1 with no internal error, stdout strict UTF-8 (lone surrogates escaped) and,
    for the machine forms, parseable."""
    assert_clean(outcome)
    if form == "bytes":
        return
    text = outcome.stdout.decode("utf-8")  # strict: an unescaped surrogate cannot be here
    if form == "json":
        json.loads(text)
    elif form == "jsonl":
        for line in text.splitlines():
            json.loads(line)


def _surrogate_puffin(path: Path) -> Path:
    """A Puffin file with a theta sketch, a deletion vector and an opaque blob, lone surrogates
    in its types, property keys and values and its created-by."""
    from puffin_cli.format.reader import PuffinReader

    with PuffinReader(str(STATS)) as reader:
        theta_meta = reader.metadata.blobs[0]
        theta = reader.read_raw(theta_meta)
    with PuffinReader(str(DVS)) as reader:
        dv_meta = reader.metadata.blobs[0]
        dv = reader.read_raw(dv_meta)
    odd = {f"k{SURROGATE}": f"v{SURROGATE}", "x": "\udcff"}
    blobs = [
        blob_entry(4, len(theta), type=THETA, compression_codec=theta_meta.compression_codec,
                   properties={**theta_meta.properties, **odd}),
        blob_entry(4 + len(theta), len(dv), type=DV, fields=[2147483645], snapshot_id=-1,
                   sequence_number=-1, properties={**dv_meta.properties, **odd}),
        blob_entry(4 + len(theta) + len(dv), 3, type=f"t{SURROGATE}", properties=odd),
    ]
    payload = json.dumps({"blobs": blobs, "properties": {"created-by": f"{SURROGATE}x", **odd}})
    return write(path, puffin_bytes(payload, blob_data=theta + dv + b"abc"))


def test_lone_surrogates_in_every_command_and_output_form(tmp_path: Path,
                                                          base_table: Path) -> None:
    directory = tmp_path / "dir"
    named = Path(os.fsdecode(os.fsencode(directory) + b"/odd\xff.puffin"))
    path = _surrogate_puffin(named)
    for form, args in (("human", ()), ("json", ("--json",)), ("human", ("--no-decode",))):
        _valid_text(run("inspect", *args, path), form)
    for index, forms in ((0, ("bytes", "hex", "sketch")), (1, ("bytes", "hex", "positions")),
                         (2, ("bytes", "hex"))):
        for as_form in forms:
            _valid_text(run("dump-blob", path, str(index), "--as", as_form), "bytes")
        _valid_text(run("dump-blob", path, str(index), "--json"), "json")
        out = tmp_path / f"blob{index}.json"
        assert_clean(run("dump-blob", path, str(index), "--json", "-o", out))
        json.loads(out.read_text(encoding="utf-8"))
    for form, args in (("human", ()), ("json", ("--json",)), ("human", ("--github",)),
                       ("human", ("--strict",))):
        _valid_text(run("validate", *args, path), form)
        _valid_text(run("validate", *args, directory), form)
    listing = tmp_path / "scan.jsonl"
    _valid_text(run("scan", directory, "-o", listing, "--json"), "json")
    for line in listing.read_text(encoding="utf-8").splitlines():
        json.loads(line)
    # write's summary names its output; a footer it would write with a surrogate is refused
    target = Path(os.fsdecode(os.fsencode(tmp_path) + b"/w\xfe.puffin"))
    for form, args in (("human", ()), ("json", ("--json",))):
        target.unlink(missing_ok=True)
        _valid_text(run("write", target, "--copy-blob", f"{STATS}:0", *args), form)
    assert_one_line(run("write", tmp_path / "w.puffin", "--copy-blob", f"{path}:2"), 2,
                    "not valid Unicode")
    # Paimon: a BLOB file and its rows named by files that are not UTF-8
    entry = write(Path(os.fsdecode(os.fsencode(tmp_path) + b"/row\xfd.bin")), b"row")
    paimon = Path(os.fsdecode(os.fsencode(tmp_path) + b"/p\xfc.blob"))
    for form, args in (("human", ()), ("json", ("--json",))):
        paimon.unlink(missing_ok=True)
        _valid_text(run("write", paimon, "--entry", entry, *args), form)
        _valid_text(run("inspect", *args, paimon), form)
    _valid_text(run("dump-blob", paimon, "0", "--json"), "json")
    # a table: surrogates in its summary and properties, a statistics file with an odd name
    table, meta = table_copy(base_table, tmp_path / "t")
    meta["snapshots"][-1]["summary"]["operation"] = f"app{SURROGATE}end"
    meta["properties"] = {f"k{SURROGATE}": f"v{SURROGATE}"}
    shutil.copyfile(path, os.fsencode(table) + b"/metadata/s\xff.puffin")
    meta["statistics"] = [{"snapshot-id": meta["current-snapshot-id"],
                           "statistics-path": f"{meta['location']}/metadata/s\udcff.puffin",
                           "file-size-in-bytes": path.stat().st_size,
                           "file-footer-size-in-bytes": 10, "blob-metadata": []}]
    save(table, meta)
    for form, args in (("human", ()), ("json", ("--json",)), ("jsonl", ("--jsonl",)),
                       ("jsonl", ("--jsonl", "--all-snapshots"))):
        _valid_text(run("table", *args, table), form)
    _valid_text(run("inspect", "--table", table, path), "human")


@pytest.mark.parametrize("where", ["statistics", "partition-statistics", "manifest-list",
                                   "manifests", "location"])
@pytest.mark.parametrize(("character", "what"), [(SURROGATE, "lone surrogate"), ("\0", "NUL")])
def test_locations_no_file_name_can_hold(tmp_path: Path, base_table: Path, where: str,
                                         character: str, what: str) -> None:
    """A location in table metadata with a lone surrogate (from a ``\\ud800`` escape) or a
    NUL, which no file name can hold, is a bad table, named on one line; never exit 3."""
    table, meta = table_copy(base_table, tmp_path / "t")
    bad = f"{meta['location']}/metadata/x{character}.avro"
    key = "statistics-path"
    if where in ("statistics", "partition-statistics"):
        meta[where] = [{"snapshot-id": meta["current-snapshot-id"], "statistics-path": bad,
                        "file-size-in-bytes": 10, "file-footer-size-in-bytes": 4,
                        "blob-metadata": []}]
    elif where == "manifest-list":
        meta["snapshots"][-1]["manifest-list"] = bad
        key = "manifest-list"
    elif where == "manifests":
        del meta["snapshots"][-1]["manifest-list"]
        meta["snapshots"][-1]["manifests"] = [bad]
        key = "manifests"
    else:
        meta["location"] = character
        key = "location"
    save(table, meta)
    for args in ((), ("--json",), ("--jsonl", "--all-snapshots")):
        assert_one_line(run("table", *args, table), 1, f"'{key}'", what)
