"""Fuzzing the readers with hostile input: Puffin footers, blob payloads, table metadata
(metadata.json, manifest lists, manifests).

Every generated input goes through the CLI's own entry point in this process (fast): the exit
code is 0 or 1, stderr holds at most one line, and never a traceback or an internal error.
Then a corpus of the same kind of inputs runs in one subprocess whose peak memory must stay
under 512 MiB (tests/hostile.py).
"""

from __future__ import annotations

import json
import shutil
import signal
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
import zstandard
from helpers import blob_entry, puffin_bytes
from hostile import MEMORY_BOUND_MIB, assert_clean, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables.synthetic import dv_table, write_avro

from puffin_cli.cli.main import main

EXAMPLES = 150
THETA = "apache-datasketches-theta-v1"
DV = "deletion-vector-v1"


def fuzz(examples: int = EXAMPLES) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def keep_signal_handlers() -> Iterator[None]:
    """main() installs its SIGINT/SIGTERM handlers; give pytest its own back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    _out, err = capsys.readouterr()
    code = exc.value.code
    return (code if isinstance(code, int) else 0), [line for line in err.splitlines() if line]


def assert_bad_input_only(code: int, lines: list[str], *, max_lines: int = 1) -> None:
    """Exit 0 or 1; one ``puffin: error:`` line (inspect gives one per bad blob, so up to
    ``max_lines``), never a traceback or an internal error."""
    assert code in (0, 1), (code, lines)
    assert len(lines) <= max_lines, lines
    assert all(line.startswith("puffin: error: ") for line in lines), lines
    text = "\n".join(lines)
    assert "Traceback" not in text and "internal error" not in text, text


# --- values ---------------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), st.sampled_from(["\ud800", "x\udcff", "²", "١٢", "9" * 5000, ""]))
json_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, allow_nan=True)


# --- footers ----------------------------------------------------------------------------------

_BLOB_KEYS = ["type", "fields", "snapshot-id", "sequence-number", "offset", "length",
              "compression-codec", "properties"]


@st.composite
def footers(draw: st.DrawFn) -> bytes:
    data = draw(st.binary(max_size=64))
    entry: dict[str, Any] = blob_entry(4, len(data), type=draw(st.sampled_from(
        [THETA, DV, "t"])))
    for key in draw(st.lists(st.sampled_from(_BLOB_KEYS), max_size=3)):
        if draw(st.booleans()):
            entry[key] = draw(json_values)
        else:
            entry.pop(key, None)
    top: dict[str, Any] = {"blobs": [entry]}
    if draw(st.booleans()):
        top["properties"] = draw(json_values)
    if draw(st.booleans()):
        top["blobs"] = draw(st.one_of(json_values, st.just([entry, entry])))
    payload = _dumps(top).encode()
    if draw(st.booleans()):  # cut or splice the JSON text
        cut = draw(st.integers(0, len(payload)))
        payload = payload[:cut] + draw(st.binary(max_size=8)) + payload[cut:]
    flags = bytes(4)
    if draw(st.booleans()):
        payload = lz4.frame.compress(payload, store_size=True)
        flags = b"\x01\0\0\0"
    return puffin_bytes(payload, blob_data=data, flags=flags)


@fuzz()
@given(footers())
def test_footers(capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory,
                 data: bytes) -> None:
    path = tmp_path_factory.mktemp("footer") / "f.puffin"
    path.write_bytes(data)
    for command in (["inspect"], ["inspect", "--json"], ["validate"],
                    ["dump-blob", "--as", "hex"]):
        extra = ["0"] if command[0] == "dump-blob" else []
        code, lines = cli(capsys, *command, str(path), *extra)
        if command[0] == "dump-blob" and code == 2:  # no blob 0: a usage error, two lines
            assert len(lines) == 2 and lines[1].startswith("Try "), lines
            continue
        assert_bad_input_only(code, lines, max_lines=4 if command[0] == "inspect" else 1)


# --- blob payloads ----------------------------------------------------------------------------


def _dv(positions: list[int]) -> bytes:
    from pyroaring import BitMap64

    body = b"\xd1\xd3\x39\x64" + BitMap64(positions).serialize()
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _theta() -> bytes:
    from puffin_cli.blobs.theta import build_theta_blob

    return build_theta_blob("string", [f"v{i}" for i in range(50)])[0]


_SEEDS = [_dv([0, 2, 4, 2**33, 2**40 + 7]), _dv(list(range(0, 70000, 3))), _theta()]


@st.composite
def payloads(draw: st.DrawFn) -> tuple[str, bytes, str | None]:
    blob_type = draw(st.sampled_from([DV, THETA]))
    data = bytearray(draw(st.sampled_from(_SEEDS)))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        kind = draw(st.sampled_from(["flip", "word", "cut"]))
        if kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "word":
            word = draw(st.sampled_from([0xFFFFFFFF, 0x7FFFFFFF, 400_000_000, 0, 1 << 31]))
            data[at:at + 4] = struct.pack("<I", word)
        else:
            del data[at:]
    codec = draw(st.sampled_from([None, "zstd", "lz4"]))
    return blob_type, bytes(data), codec


@fuzz()
@given(payloads())
def test_blob_payloads(capsys: pytest.CaptureFixture[str],
                       tmp_path_factory: pytest.TempPathFactory,
                       blob: tuple[str, bytes, str | None]) -> None:
    blob_type, data, codec = blob
    stored = data
    if codec == "zstd":
        stored = zstandard.ZstdCompressor(write_content_size=True).compress(data)
    elif codec == "lz4":
        stored = lz4.frame.compress(data, store_size=True)
    entry = blob_entry(4, len(stored), type=blob_type, properties={
        "referenced-data-file": "f", "cardinality": "5", "ndv": "50"})
    if codec is not None:
        entry["compression-codec"] = codec
    path = tmp_path_factory.mktemp("blob") / "b.puffin"
    path.write_bytes(puffin_bytes(json.dumps({"blobs": [entry]}), blob_data=stored))
    form = "positions" if blob_type == DV else "sketch"
    for args in (["inspect", str(path)], ["validate", str(path)],
                 ["dump-blob", "--as", form, str(path), "0"], ["dump-blob", "--json", str(path),
                                                                "0"]):
        code, lines = cli(capsys, *args)
        assert_bad_input_only(code, lines)


# --- table metadata, manifest lists, manifests ---------------------------------------------------

_META_KEYS = ["format-version", "location", "schemas", "current-schema-id", "snapshots",
              "current-snapshot-id", "statistics", "partition-statistics", "table-uuid",
              "partition-specs", "properties", "schema", "partition-spec"]
_SNAPSHOT_KEYS = ["snapshot-id", "parent-snapshot-id", "sequence-number", "timestamp-ms",
                  "manifest-list", "manifests", "schema-id", "summary"]


@pytest.fixture(scope="module")
def base_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-table") / "base"
    dv_table(root, snapshots=2, dvs_per_snapshot=2, carry=True).finish()
    return root


def _copy(base: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    table = tmp_path_factory.mktemp("t") / "t"
    shutil.copytree(base, table)
    return table, json.loads((table / "metadata" / "v1.metadata.json").read_text())


@fuzz()
@given(st.lists(st.tuples(st.sampled_from(_META_KEYS + [f"snapshot.{k}" for k in _SNAPSHOT_KEYS]),
                          json_values), min_size=1, max_size=3))
def test_table_metadata(capsys: pytest.CaptureFixture[str],
                        tmp_path_factory: pytest.TempPathFactory, base_table: Path,
                        edits: list[tuple[str, Any]]) -> None:
    table, meta = _copy(base_table, tmp_path_factory)
    meta.setdefault("snapshots", [])
    for key, value in edits:
        if key.startswith("snapshot."):
            snapshots = meta["snapshots"] if isinstance(meta["snapshots"], list) else []
            for snapshot in snapshots:
                if isinstance(snapshot, dict):
                    snapshot[key.split(".", 1)[1]] = value
        else:
            meta[key] = value
    (table / "metadata" / "v1.metadata.json").write_text(_dumps(meta))
    for args in (["table", str(table)], ["table", "--json", "--all-snapshots", str(table)]):
        code, lines = cli(capsys, *args)
        assert_bad_input_only(code, lines)


_AVRO_VALUES = {"int": st.integers(-(2**31), 2**31 - 1), "long": st.integers(-(2**63), 2**63 - 1),
                "string": st.text(max_size=10), "boolean": st.booleans(),
                "double": st.floats(allow_nan=False), "bytes": st.binary(max_size=8)}
_LIST_FIELDS = ["manifest_path", "content", "partition_spec_id", "sequence_number",
                "added_snapshot_id"]
_ENTRY_FIELDS = ["status", "snapshot_id", "sequence_number"]
_FILE_FIELDS = ["content", "file_path", "file_format", "record_count", "file_size_in_bytes",
                "referenced_data_file", "content_offset", "content_size_in_bytes",
                "equality_ids", "split_offsets"]


@st.composite
def avro_records(draw: st.DrawFn, names: list[str]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    fields = []
    record: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(names), unique=True, min_size=1)):
        avro_type = draw(st.sampled_from(sorted(_AVRO_VALUES)))
        fields.append({"name": name, "type": avro_type})
        record[name] = draw(_AVRO_VALUES[avro_type])
    return fields, record


@fuzz()
@given(avro_records(_LIST_FIELDS), avro_records(_ENTRY_FIELDS), avro_records(_FILE_FIELDS),
       st.sampled_from(["list", "manifest"]), st.sampled_from(["null", "deflate"]))
def test_manifest_lists_and_manifests(capsys: pytest.CaptureFixture[str],
                                      tmp_path_factory: pytest.TempPathFactory,
                                      base_table: Path, listing: Any, entry: Any,
                                      data_file: Any, which: str, codec: str) -> None:
    import fastavro

    table, meta = _copy(base_table, tmp_path_factory)
    location = meta["snapshots"][-1]["manifest-list"]
    listed = table / location[len(meta["location"]) + 1:]
    if which == "list":
        fields, record = listing
        schema = {"type": "record", "name": "manifest_file", "fields": fields}
        with open(listed, "wb") as out:
            fastavro.writer(out, fastavro.parse_schema(schema), [record], codec=codec)
    else:
        with open(listed, "rb") as f:
            manifests = [r["manifest_path"] for r in fastavro.reader(f)]
        entry_fields, entry_record = entry
        file_fields, file_record = data_file
        schema = {"type": "record", "name": "e", "fields": [*entry_fields, {
            "name": "data_file", "type": {"type": "record", "name": "df",
                                          "fields": file_fields}}]}
        for manifest in manifests:
            write_avro(table / manifest[len(meta["location"]) + 1:], schema,
                       [{**entry_record, "data_file": file_record}])
    code, lines = cli(capsys, "table", str(table))
    assert_bad_input_only(code, lines)


# --- a corpus in one subprocess: bounded memory ----------------------------------------------


def test_a_corpus_of_hostile_footers_and_blobs_in_bounded_memory(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    bombs = [
        b'{"blobs":[],"x":[' + b"[]," * (2 << 20) + b"[]]}",
        b'{"blobs":[],"x":"' + b"\\ud800" * (1 << 20) + b'"}',
        b'{"blobs":[' + b'{"type":"t","fields":[1],"snapshot-id":1,"sequence-number":1,'
        b'"offset":4,"length":0},' * 200_000 + b'{}]}',
    ]
    for i, payload in enumerate(bombs):
        (corpus / f"bomb{i}.puffin").write_bytes(puffin_bytes(payload))
        (corpus / f"lz4-{i}.puffin").write_bytes(puffin_bytes(
            lz4.frame.compress(payload, store_size=True), flags=b"\x01\0\0\0"))
    zeros = zstandard.ZstdCompressor(write_content_size=True).compress(bytes(60 << 20))
    entry = blob_entry(4, len(zeros), type=THETA, compression_codec="zstd")
    (corpus / "zstd.puffin").write_bytes(puffin_bytes(json.dumps({"blobs": [entry]}),
                                                      blob_data=zeros))
    files = sorted(str(p) for p in corpus.iterdir())
    assert_clean(run("validate", corpus, timeout=300), 1)
    every = run("inspect", "--json", *files, timeout=300)  # one error line per bad file
    assert every.code == 1 and every.peak_mib < MEMORY_BOUND_MIB, (every.code, every.peak_mib)
    assert_bad_input_only(every.code, every.lines, max_lines=len(files))
