"""Issue 28 §1 and §3, issue 27 §6: the sketcher chosen by the work (small tables never start
a JVM, in full or incrementally), and output that agrees with itself, on pyiceberg tables of
a SQL catalog (tests/test_catalog.py's ``db.events``: 1,000 rows, columns id and city). That
both sketchers give the same bytes, Iceberg Java's included, is in test_stats_spark.py,
test_stats_incremental.py, test_stats_heldout.py and the others (parametrized by
``SKETCHERS``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
from test_catalog import invoke, local_path, sql_catalog  # noqa: F401
from test_stats_batch import run_no_spark

from puffin_cli.analysis.stats.incremental import decide_refresh
from puffin_cli.analysis.stats.options import SketcherChoice, StatsOptions
from puffin_cli.analysis.stats.result import Mode, SketcherReason, Where
from puffin_cli.analysis.stats.sketcher import Planning, Work, choose_sketcher, groups_settled
from puffin_cli.analysis.table.loading import Table
from puffin_cli.format.reader import PuffinReader
from puffin_cli.storage import FileIO


def statistics_files(catalog: Any, identifier: str = "db.events") -> list[Path]:
    table = catalog.load_table(identifier)
    return sorted((local_path(table.location()) / "metadata").glob("*.stats"))


def test_a_small_table_is_sketched_in_process_in_full_and_incrementally(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """A full compute of 1,000 rows and then an increment of 200: no pyspark imported."""
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--commit", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    assert (doc["mode"], doc["in-process"], doc["rows-read"]) == ("full", True, 1000)
    table = catalog_table = sql_catalog.load_table("db.events")
    catalog_table.append(pa.table({"id": pa.array(range(1000, 1200), pa.int64()),
                                   "city": pa.array(["new"] * 200)}))
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--commit", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    # the new file shares the base's one Spark task, but id and city are exact (issue 28 §2):
    # incremental, the 200 new rows read, the bytes of a full compute
    assert (doc["in-process"], doc["mode"], doc["rows-read"]) == (True, "incremental", 200), doc
    assert doc["snapshot-id"] == table.refresh().metadata.current_snapshot_id
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--full", "-o",
                                            str(tmp_path / "full.stats"), cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    blobs = []
    for path in (local_path(doc["statistics-path"]), tmp_path / "full.stats"):
        with PuffinReader(path) as reader:
            blobs.append([reader.read_blob(b) for b in reader.metadata.blobs])
    assert blobs[0] == blobs[1] and len(blobs[0]) == 2


def test_a_namespace_of_small_tables_starts_no_spark(sql_catalog: Any,  # noqa: F811
                                                     tmp_path: Path) -> None:
    for name in ("a", "b"):
        rows = pa.table({"k": pa.array(range(50), pa.int64())})
        sql_catalog.create_table(f"db.{name}", schema=rows.schema).append(rows)
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test", "db",
                                            "--commit", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    lines = out.splitlines()
    assert lines[0].startswith("db.a: snapshot ") and ": full in process, 1 column computed" \
        in lines[0]
    assert lines[-1].startswith("3 tables: 3 computed, 0 fresh, 0 failed; ")
    assert lines[-1].endswith("(no Spark needed)")


def test_the_sketcher_is_chosen_by_the_work(sql_catalog: Any) -> None:  # noqa: F811
    """Rows (and bytes) to read under the threshold: this process, full or not; above it, or
    --spark: Spark; --in-process whatever the size. A cluster's parallelism is unknown
    without Spark: small work whose split size is at its floor for any parallelism of at
    least spark.sql.shuffle.partitions is still sketched here. Each choice has its reason's
    stable code and words."""
    table = Table.load("db.events", catalog="test", fileio=FileIO())
    decision = decide_refresh(table, None, None, full=True, parallelism=200)
    work = Work.of(decision)
    assert (work.files, work.rows) == (2, 1000) and work.bytes > 0
    local = Planning(200, 200)

    def chosen(planning: Planning = local, **options: Any) -> tuple[Where, SketcherReason]:
        choice = choose_sketcher(StatsOptions(**options), decision, work, planning)
        return choice.where, choice.reason

    assert chosen() == (Where.IN_PROCESS, SketcherReason.SMALL)
    assert chosen(in_process_rows=999) == (Where.SPARK, SketcherReason.ROWS)
    assert chosen(in_process_bytes=work.bytes - 1) == (Where.SPARK, SketcherReason.BYTES)
    assert chosen(sketcher=SketcherChoice.SPARK) == (Where.SPARK, SketcherReason.FORCED_SPARK)
    assert chosen(in_process_rows=0, sketcher=SketcherChoice.IN_PROCESS) == (
        Where.IN_PROCESS, SketcherReason.FORCED_IN_PROCESS)
    # a few KiB: 16 MiB splits at any parallelism of at least 2; at 1 the target size's
    assert groups_settled(decision.plan, 2) and not groups_settled(decision.plan, 1)
    assert chosen(Planning(None, 200)) == (Where.IN_PROCESS, SketcherReason.SMALL)
    # --conf spark.sql.shuffle.partitions=1 on a cluster
    assert chosen(Planning(None, 1)) == (Where.SPARK, SketcherReason.PARALLELISM)
    over = choose_sketcher(StatsOptions(in_process_rows=999), decision, work, local)
    assert over.text == "1,000 rows to read: more than --in-process-rows 999"
    fresh = replace(decision, columns=tuple(replace(c, mode=Mode.FRESH)
                                            for c in decision.columns))
    assert choose_sketcher(StatsOptions(sketcher=SketcherChoice.SPARK), fresh, Work.of(fresh),
                           local).reason is SketcherReason.FRESH


def test_the_dry_run_and_the_json_say_which_sketcher_and_why(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """The plan names the sketcher a run would use and, unless the work is simply small, why;
    the JSON has the reason's code and words; a run forced to Spark says so too (its
    sketcher is not started by a dry run)."""
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--dry-run", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    assert ": full in process, reads 2 data files, 1,000 rows of 2 files (" in out
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--dry-run", "--in-process-rows",
                                            "10", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    lines = out.splitlines()
    assert (": full on Spark (1,000 rows to read: more than --in-process-rows 10), reads 2 "
            "data files") in lines[0]
    assert lines[-1].endswith("; 1 would run on Spark; nothing computed, no Spark started")
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--dry-run", "--spark", "--json",
                                            cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    [outcome] = json.loads(out)["tables"]
    assert outcome["plan"]["sketcher"] == {"where": "spark", "reason": "forced-spark",
                                           "text": "--spark"}
    code, out, err, imported = run_no_spark("stats", "compute", "--catalog", "test",
                                            "db.events", "--json", cwd=tmp_path)
    assert (code, err, imported) == (0, "", False)
    doc = json.loads(out)
    assert doc["in-process"] is True and doc["sketcher"]["where"] == "in-process"
    assert doc["sketcher"]["reason"] == "small"
    assert doc["sketcher"]["text"].startswith("1,000 rows to read and ")


def test_columns_on_a_snapshot_without_statistics_then_the_rest(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """--columns city where the snapshot had no statistics: the output names the column the
    file lacks and the command that adds it, and `table` shows it; that command then says,
    one line per reason, which columns were computed and which kept as they were, counts
    what its lines say, names each file once and deletes the file its commit replaced."""
    first = invoke("stats", "compute", "--catalog", "test", "db.events", "--columns", "city",
                   "--commit")
    assert first.exit_code == 0, first.output
    lines = first.output.splitlines()
    assert lines[-1] == ("the new file has no statistics of 1 column (id): an engine planning "
                         "with it has none for them; `puffin stats compute --catalog test "
                         "db.events --commit` adds them (the sketches there kept)")
    assert lines[3].split() == ["column", "field", "ID", "type", "ndv", "sketch"]
    assert lines[2].endswith("s in this process")  # 1,000 rows: no rows/s
    [old] = statistics_files(sql_catalog)
    shown = invoke("table", "--catalog", "test", "db.events")
    assert shown.exit_code == 0, shown.output
    assert "  no statistics    id (puffin stats compute adds them)" in shown.output.splitlines()
    doc = json.loads(invoke("table", "--catalog", "test", "db.events", "--json").output)
    assert doc["tables"][0]["snapshots"][0]["columns-without-statistics"] == ["id"]

    second = invoke("stats", "compute", "--catalog", "test", "db.events", "--commit")
    assert second.exit_code == 0, second.output
    lines = second.output.splitlines()
    assert lines[1] == "full: read 2 data files, 1,000 live rows"
    assert "  full (id): no ancestor has statistics of this column" in lines
    assert "  fresh (city): the snapshot's own sketch, as it is" in lines
    summary = next(line for line in lines if line.startswith("the snapshot's statistics file"))
    assert summary.endswith(": 1 recomputed, 1 fresh (its sketch kept), 0 kept, 0 dropped")
    assert lines[-1] == ("deleted the snapshot's statistics file above, which the commit "
                         "replaced (no other entry names it)")
    assert second.output.count(old.name) == 1
    [new] = statistics_files(sql_catalog)
    assert new != old and not old.exists()
    shown = invoke("table", "--catalog", "test", "db.events")
    assert "no statistics" not in shown.output


def test_the_replaced_file_is_kept_while_another_entry_names_it(
        sql_catalog: Any, tmp_path: Path) -> None:  # noqa: F811
    """A statistics file registered for two snapshots (a writer that reused it): replacing
    one entry leaves it in place, and the JSON says nothing was deleted."""
    from puffin_cli.analysis.table.commit import commit_statistics
    from puffin_cli.analysis.table.updates import StatisticsFileEntry

    done = invoke("stats", "compute", "--catalog", "test", "db.events", "--commit", "--json")
    assert done.exit_code == 0, done.output
    first = json.loads(done.output)
    table = Table.load("db.events", catalog="test", fileio=FileIO())
    parent = table.metadata.snapshot(first["snapshot-id"]).parent_id
    assert parent is not None
    [entry] = table.metadata.statistics
    commit_statistics(table, StatisticsFileEntry.for_blobs(
        parent, entry.path, entry.file_size, entry.footer_size,
        [{"type": b.type, "snapshot-id": b.snapshot_id, "sequence-number": b.sequence_number,
          "fields": list(b.fields), "properties": dict(b.properties)} for b in entry.blobs]))
    again = invoke("stats", "compute", "--catalog", "test", "db.events", "--full", "--commit",
                   "--json")
    assert again.exit_code == 0, again.output
    doc = json.loads(again.output)
    assert doc["deleted-file"] is None and doc["kept-from"] == entry.path
    assert Path(first["statistics-path"]).exists()


def test_help_says_small_work_runs_in_process() -> None:
    top = invoke("--help")
    assert "small tables in this process" in " ".join(top.output.split())
    group = invoke("stats", "--help")
    assert "small work runs in this process" in " ".join(group.output.split())
    compute = " ".join(invoke("stats", "compute", "--help").output.split())
    assert "--in-process" in compute and "--spark" in compute
