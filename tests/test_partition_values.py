"""Partition values on tables Spark 3.5 + Iceberg 1.10.2 wrote with every transform over every
source type that allows it (tests/interop/spark_scripts/partition_tables.py, built once and
cached by the script's hash): every command and output form exits 0 or 1, never 3 (issue 32:
``table --json`` crashed on a date-valued partition with deletion vectors), and the partition
values in JSON and in human form are what Iceberg Java gives for the same files
(``SingleValueParser.toJson`` of the ``PartitionData``, ``PartitionSpec.partitionToPath``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from interop.sparkenv import script_output
from tiers import needs

from puffin_cli.analysis.table.live import LiveFiles
from puffin_cli.analysis.table.loading import Table
from puffin_cli.analysis.table.metadata import current_metadata_file
from puffin_cli.analysis.table.partitions import partition_tuple
from puffin_cli.cli.main import cli
from puffin_cli.storage import FileIO

SCRIPT = Path(__file__).resolve().parent / "interop" / "spark_scripts" / "partition_tables.py"
TABLES = ("issue32_v3", "matrix_v2", "matrix_v3")
HEX_FIELDS = ("bin", "fx", "bin_trunc")  # Iceberg Java writes hex in capitals, we in lowercase


@pytest.fixture(scope="session")
@needs("spark")
def partition_tables() -> Path:
    """OUT_DIR with warehouse/db/<table> and tables.json (Iceberg Java's view)."""
    return script_output(SCRIPT, "partition-tables", "build")


def java(tables: Path, name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((tables / "tables.json").read_text())["tables"][name]
    return found


def copy(tables: Path, name: str, tmp_path: Path) -> Path:
    """A private copy of table ``name`` (its metadata names the cache's location; the
    directory given is read instead)."""
    target = tmp_path / name
    shutil.copytree(tables / "warehouse" / "db" / name, target)
    return target


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def javas_json(files: list[dict[str, Any]], spec_fields: list[str], path: str) -> dict[str, Any]:
    """Iceberg Java's JSON partition of file ``path``, every spec field named (its
    ``SingleValueParser`` leaves null fields out), hex in lowercase."""
    (entry,) = {json.dumps(f["partition"], sort_keys=True): f for f in files
                if f["path"] == path}.values()
    values = {name: entry["partition"].get(name) for name in spec_fields}
    return {k: v.lower() if k in HEX_FIELDS and isinstance(v, str) else v
            for k, v in values.items()}


def test_issue_32_table_json_of_a_day_partitioned_table_with_dvs(partition_tables: Path) -> None:
    """The layout of issue 32 (format 3, bucket(4, id), days(ts), DELETE and UPDATE: DVs):
    `table --json` and `--all-snapshots --jsonl` exited 3 (date not JSON serializable)."""
    table = partition_tables / "warehouse" / "db" / "issue32_v3"
    done = invoke("table", str(table), "--json")
    assert done.exit_code == 0, done.output
    (report,) = json.loads(done.output)["tables"]
    dvs = report["snapshots"][0]["deletion-vectors"]
    assert dvs and all(set(dv["partition"]) == {"id_bucket", "ts_day"} for dv in dvs)
    assert {dv["partition"]["ts_day"] for dv in dvs} >= {"2024-02-29", "2024-03-01"}
    streamed = invoke("table", str(table), "--all-snapshots", "--jsonl")
    assert streamed.exit_code == 0, streamed.output
    records = [json.loads(line) for line in streamed.output.splitlines()]
    assert any(isinstance(r.get("partition"), dict) for r in records) or records


@pytest.mark.parametrize("name", TABLES)
def test_partition_tuples_equal_iceberg_javas(partition_tables: Path, name: str) -> None:
    """Every live data and delete file of every snapshot: the JSON values, the human values
    and the partition path are Iceberg Java's for the same file."""
    expected = java(partition_tables, name)["snapshots"]
    table = Table.load(partition_tables / "warehouse" / "db" / name, fileio=FileIO())
    metadata = table.metadata
    checked = 0
    for snapshot, live, _ in LiveFiles.walk(table.manifests, table.snapshots()):
        files = expected[str(snapshot.snapshot_id)]
        entries = [*live.data.values(), *live.delete_files]
        assert sorted(e.path for e in entries) == sorted(f["path"] for f in files)
        for entry in entries:
            ours = partition_tuple(metadata, entry.spec_id, entry.partition)
            names = [f.name for f in ours.fields]
            theirs = [f for f in files if f["path"] == entry.path
                      and f["partition-path"] == ours.path()]
            assert theirs, (entry.path, ours.path())
            assert ours.to_json() == javas_json(theirs, names, entry.path)
            assert {f.name: f.human for f in ours.fields} == theirs[0]["human"]
            assert ours.spec_id == theirs[0]["spec-id"]
            checked += 1
    assert checked > 10


def test_the_matrix_covers_every_transform_and_type(partition_tables: Path) -> None:
    """What the matrix holds (so that a change of the build script cannot drop a case
    unnoticed): both specs, every transform, identity on every type (fixed too: Iceberg Java
    writes its values unlike its manifests' schema says), null values, and DVs in the NULL
    partition."""
    table = Table.load(partition_tables / "warehouse" / "db" / "matrix_v3", fileio=FileIO())
    specs = table.metadata.specs
    assert sorted(specs) == [0, 1]
    transforms = {f["transform"].split("[")[0] for f in specs[0]["fields"]}
    assert transforms == {"identity", "bucket", "truncate", "year", "month", "day", "hour",
                          "void"}
    types = {f["id"]: f["type"] for f in table.metadata.schemas[0]["fields"]}
    identities = {types[f["source-id"]] for f in specs[0]["fields"]
                  if f["transform"] == "identity"}
    assert identities == {"int", "long", "string", "date", "timestamp", "timestamptz",
                          "decimal(9, 2)", "decimal(38, 0)", "binary", "fixed[4]", "uuid",
                          "boolean"}
    current_files = java(partition_tables, "matrix_v3")["snapshots"]
    assert {f["partition"].get("fx") for files in current_files.values() for f in files} \
        >= {"DEADBEEF", "00000000", None}
    current = java(partition_tables, "matrix_v3")
    files = current["snapshots"][str(current["current-snapshot-id"])]
    dvs = [f for f in files if f["content"] == "POSITION_DELETES"]
    assert {f["spec-id"] for f in dvs} == {0, 1}
    assert any(f["partition"].get("i") is None for f in dvs)  # the all-NULL partition
    ns = json.loads((partition_tables / "tables.json").read_text())["timestamp_ns"]
    assert ns["written"] is False and "timestamp_ns" in ns["error"]


def test_dv_partitions_in_table_json_are_their_data_files(partition_tables: Path) -> None:
    """`table --json --all-snapshots --limit N` lists every DV of every snapshot with its
    partition: Iceberg Java's for its referenced data file."""
    root = partition_tables / "warehouse" / "db" / "matrix_v3"
    done = invoke("table", str(root), "--json", "--all-snapshots", "--limit", "100000")
    assert done.exit_code == 0, done.output
    (report,) = json.loads(done.output)["tables"]
    expected = java(partition_tables, "matrix_v3")["snapshots"]
    seen = 0
    for snapshot in report["snapshots"]:
        files = expected[str(snapshot["snapshot-id"])]
        for dv in snapshot["deletion-vectors"]:
            assert dv["partition"] == javas_json(files, list(dv["partition"]), dv["data-file"])
            seen += 1
    assert seen >= 6


# Every command and output form, on every table: exit 0 or 1, never 3.
FORMS: dict[str, tuple[str, ...]] = {
    "table": ("table", "{t}"),
    "table-json": ("table", "{t}", "--json"),
    "table-jsonl": ("table", "{t}", "--jsonl"),
    "table-all": ("table", "{t}", "--all-snapshots", "--limit", "1000"),
    "table-all-json": ("table", "{t}", "--all-snapshots", "--limit", "1000", "--json"),
    "table-all-jsonl": ("table", "{t}", "--all-snapshots", "--jsonl"),
    "repair": ("repair", "{t}"),
    "repair-json": ("repair", "{t}", "--json"),
    "repair-apply": ("repair", "{t}", "--apply", "--json"),
    "stats-dry-run": ("stats", "compute", "{t}", "--dry-run", "--json"),
    "stats-compute": ("stats", "compute", "{t}", "--commit", "--json", "--master", "local[1]"),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", TABLES)
def test_every_command_exits_0(partition_tables: Path, tmp_path: Path, name: str,
                               form: str) -> None:
    """The tables are valid: every command exits 0 (not 1 with a false finding, as the
    fixed[4] identity partition gave when its manifests were read as their schema says)."""
    table = copy(partition_tables, name, tmp_path)
    args = [a.format(t=table) for a in FORMS[form]]
    done = invoke(*args)
    assert done.exit_code == 0, (done.exit_code, done.output[-2000:])


@pytest.fixture
@needs("catalog")
def sql_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Catalog ``test`` (pyiceberg's SQL catalog on sqlite), configured as a user would."""
    from pyiceberg.catalog import load_catalog

    properties = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db",
                  "warehouse": (tmp_path / "warehouse").as_uri()}
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    for key, value in properties.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__TEST__{key.upper()}", value)
    catalog = load_catalog("test", **properties)
    catalog.create_namespace("db")
    return catalog


def test_scan_catalog_of_every_layout(partition_tables: Path, sql_catalog: Any,
                                      tmp_path: Path) -> None:
    """`scan --catalog` over the tables registered in a catalog: exit 0, every deletion
    vector file of every snapshot (Iceberg Java's view) scanned, and `table --catalog --json`
    gives the partitions `table DIR --json` gives."""
    expected = set()
    for name in TABLES:
        table = copy(partition_tables, name, tmp_path)
        metadata = current_metadata_file(table, fileio=FileIO())
        sql_catalog.register_table(("db", name), str(metadata))
        for files in java(partition_tables, name)["snapshots"].values():
            expected |= {Path(f["path"]).name for f in files if f["path"].endswith(".puffin")}
        by_catalog = invoke("table", "--catalog", "test", f"db.{name}", "--json")
        by_dir = invoke("table", str(table), "--json")
        assert by_catalog.exit_code == by_dir.exit_code == 0, by_catalog.output[-2000:]
        (ours,), (theirs,) = (json.loads(d.output)["tables"] for d in (by_catalog, by_dir))
        assert [[dv["partition"] for dv in s["deletion-vectors"]] for s in ours["snapshots"]] \
            == [[dv["partition"] for dv in s["deletion-vectors"]] for s in theirs["snapshots"]]
    out = tmp_path / "findings.jsonl"
    done = invoke("scan", "--catalog", "test", "db", "--json", "--output", str(out))
    assert done.exit_code == 0, done.output[-2000:]
    doc = json.loads(done.output)
    assert (doc["tables"], doc["orphans"]) == (len(TABLES), [])
    scanned = {Path(json.loads(line)["path"]).name for line in out.read_text().splitlines()}
    assert expected and scanned == expected
