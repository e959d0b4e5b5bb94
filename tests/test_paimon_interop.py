"""Paimon BLOB files against pypaimon 2.1.0 itself (its own venv, tests/interop/paimonenv.py):
every variant its BlobFormatWriter writes is inspected and validated clean and dumped byte for
byte; `puffin write` output is byte-identical to its writer's and read back by its
FormatBlobReader; each corruption gets its finding, and the ones pypaimon reads without
complaint are the ones docs/validate.md says it would not notice."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import run_main
from interop.paimonenv import PaimonOracle, paimon_oracle
from paimon_files import corruptions
from tiers import needs

from puffin_cli.analysis.validate import validate_file
from puffin_cli.format import paimon_blob as pb
from puffin_cli.storage import FileIO


@pytest.fixture(scope="module", name="paimon")
@needs("paimon")
def paimon_fixture() -> Iterator[PaimonOracle]:
    yield paimon_oracle()


def _hex(n: int, seed: int) -> str:
    return bytes((seed + i * 7) % 256 for i in range(n)).hex()


# column, key type, rows (paimon_oracle.py's JSON form)
VARIANTS: dict[str, tuple[str, str, list[Any]]] = {
    "plain": ("blob", "STRING", [_hex(5, 1), None, "", "placeholder", _hex(300, 2),
                                 _hex(100_000, 3)]),
    "empty": ("blob", "STRING", []),
    "all-null": ("blob", "STRING", [None, None, None]),
    "placeholders": ("blob", "STRING", ["placeholder", None, "placeholder"]),
    "many": ("blob", "STRING", [_hex(i % 40, i) for i in range(3000)]),
    # an index over 64 KiB: decoded with numpy
    "large-index": ("blob", "STRING", [_hex(i % 3, i) if i % 5 else None
                                       for i in range(70_000)]),
    "array": ("array", "STRING", [[_hex(3, 1), None, ""], [], None, "placeholder",
                                  [_hex(70_000, 5)]]),
    "map-string": ("map", "STRING", [[["k1", _hex(2, 1)], ["k2", None], ["", _hex(4, 2)]],
                                     [], None, "placeholder"]),
    "map-int": ("map", "INT", [[[1, _hex(2, 3)], [None, _hex(1, 4)], [-7, None]],
                               [[3, None]]]),
    "map-bigint": ("map", "BIGINT", [[[1 << 40, _hex(9, 5)], [-1, ""]], None]),
    "array-of-nulls": ("array", "STRING", [[None, None], [None]]),
}


def _key(key: Any, key_type: str) -> bytes | None:
    if key is None:
        return None
    if key_type == "STRING":
        return key.encode()
    return struct.pack("<q" if key_type == "BIGINT" else "<i", key)


def expected_data(column: str, key_type: str, row: Any) -> bytes | None:
    """A row's data bytes as we encode them (None: a null or placeholder row)."""
    if row is None or row == "placeholder":
        return None
    if column == "blob":
        return bytes.fromhex(row)
    if column == "array":
        return pb.encode_array([None if e is None else bytes.fromhex(e) for e in row])
    return pb.encode_map([(_key(k, key_type), None if v is None else bytes.fromhex(v))
                          for k, v in row])


@pytest.fixture(scope="module", name="written")
def written_fixture(paimon: PaimonOracle, tmp_path_factory: pytest.TempPathFactory
                    ) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pypaimon")
    files = {name: folder / f"{name}.blob" for name in VARIANTS}
    results = paimon.run([{"op": "write", "path": str(files[name]), "column": column,
                           "key-type": key_type, "rows": rows}
                          for name, (column, key_type, rows) in VARIANTS.items()])
    assert all("error" not in result for result in results), results
    return files


@pytest.mark.parametrize("name", VARIANTS)
def test_pypaimon_files_validate_clean(written: dict[str, Path], name: str) -> None:
    report = validate_file(written[name], fileio=FileIO())
    assert report.findings == ()
    assert report.blob_count == len(VARIANTS[name][2])


@pytest.mark.parametrize("name", VARIANTS)
def test_pypaimon_files_inspect(written: dict[str, Path], name: str,
                                capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    column, key_type, rows = VARIANTS[name]
    code, out, _ = run_main(capsysbinary, "inspect", "--json", "--limit", "100000",
                          str(written[name]))
    assert code == 0
    (file,) = json.loads(out)["files"]
    assert file["row-count"] == len(rows)
    assert file["nulls"] == rows.count(None)
    assert file["placeholders"] == rows.count("placeholder")
    offset = 0
    for row, report in zip(rows, file["rows"], strict=True):
        data = expected_data(column, key_type, row)
        if data is None:
            assert report["kind"] == ("null" if row is None else "placeholder")
            continue
        assert (report["kind"], report["offset"], report["data-length"]) == \
            ("blob", offset, len(data))
        nested = report["nested"]
        if column == "blob":
            assert nested is None
        else:
            assert nested == {"kind": column, "version": 1, "count": len(row)}
        offset += len(data) + 16
    assert file["data-size"] == offset == file["index-offset"]


@pytest.mark.parametrize("name", VARIANTS)
def test_pypaimon_rows_dump_byte_exactly(written: dict[str, Path], name: str,
                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    column, key_type, rows = VARIANTS[name]
    for number, row in enumerate(rows[:200]):
        code, out, err = run_main(capsysbinary, "dump-blob", str(written[name]), str(number))
        data = expected_data(column, key_type, row)
        if data is None:
            assert (code, out) == (1, b"")
            assert ("null row" if row is None else "placeholder row") in err
        else:
            assert (code, out) == (0, data)


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v[0] == "blob"])
def test_puffin_write_is_pypaimons_file_and_it_reads_back(
        paimon: PaimonOracle, written: dict[str, Path], name: str, tmp_path: Path,
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    _, _, rows = VARIANTS[name]
    names = []
    for number, row in enumerate(rows):
        if row is None or row == "placeholder":
            names.append(":null" if row is None else ":placeholder")
        else:
            entry = tmp_path / f"e{number}"
            entry.write_bytes(bytes.fromhex(row))
            names.append(str(entry))
    listing = tmp_path / "entries.txt"
    listing.write_text("".join(f"{n}\n" for n in names))
    ours = tmp_path / "ours.blob"
    code, _, err = run_main(capsysbinary, "write", str(ours), "--entries-from", str(listing))
    assert code == 0, err
    assert ours.read_bytes() == written[name].read_bytes()
    assert paimon.read(ours, "blob") == rows


@pytest.mark.parametrize("name", [n for n, v in VARIANTS.items() if v[0] != "blob"])
def test_our_nested_payloads_are_pypaimons(paimon: PaimonOracle, written: dict[str, Path],
                                           name: str, tmp_path: Path) -> None:
    """Nested rows encoded by us, in a file written by us, are pypaimon's bytes and read back
    by it as the same arrays and maps."""
    column, key_type, rows = VARIANTS[name]
    sources: list[str | pb.Marker] = []
    for number, row in enumerate(rows):
        data = expected_data(column, key_type, row)
        if data is None:
            sources.append(pb.Marker.NULL if row is None else pb.Marker.PLACEHOLDER)
            continue
        entry = tmp_path / f"e{number}"
        entry.write_bytes(data)
        sources.append(str(entry))
    ours = tmp_path / "ours.blob"
    pb.write_blob_file(ours, sources, fileio=FileIO())
    assert ours.read_bytes() == written[name].read_bytes()
    back = paimon.read(ours, column, key_type)
    assert back == [r if r is None or r == "placeholder" or column == "array"
                    else [list(pair) for pair in r] for r in rows]


def test_corruptions_and_what_pypaimon_notices(paimon: PaimonOracle, tmp_path: Path) -> None:
    """Every corruption has its finding; pypaimon fails on exactly those marked as noticed
    (the others it reads as if nothing were wrong)."""
    cases = corruptions()
    jobs = []
    for number, corruption in enumerate(cases):
        path = tmp_path / f"bad-{number}.blob"
        path.write_bytes(corruption.data)
        codes = {finding.code for finding in validate_file(path, fileio=FileIO()).findings}
        assert corruption.code in codes, corruption.name
        jobs.append({"op": "read", "path": str(path), "column": corruption.column})
    noticed = {case.name: "error" in result
               for case, result in zip(cases, paimon.run(jobs), strict=True)}
    assert noticed == {case.name: case.paimon_notices for case in cases}
